#!/bin/bash
# tools/gpu/kernels.sh: what the slow rows of the wide table are made of, on
# both sides (docs/gpu.md). Run after tools/gpu/full-check.sh in the same
# device call (it uses the build that script unpacked and the kit's
# environment); stage the cuDNN diagnostic first, here on the build machine:
#
#   bash tools/gpu/kernels.sh --stage          # .gpu-build/dnn_algos (sm_90)
#   bash tools/gpu/kernels.sh [KEY...]         # on the device; default: the slow rows
#
# For each row: backplane's kernels (ncu over the row's first 40 kernel
# launches, names and times, --clock-control none) and PyTorch's
# (torch.profiler, torch_bench.py --kernels). Then, for the convolution
# rows, every cuDNN algorithm's time in NCHW and NHWC and the v7 ranking
# (bench/gpu/dnn_algos.cu), with the toolkit's cuDNN and with PyTorch's,
# and backplane's conv rows timed again with PyTorch's cuDNN (KERNELS_DNN=0
# leaves this part out). Output: stdout and $OUT/kernels.txt.
set -uo pipefail
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ "${1:-}" = --stage ]; then
    mkdir -p .gpu-build || exit 1
    "$nvcc" -O2 -arch=sm_90 -Werror all-warnings -o .gpu-build/dnn_algos bench/gpu/dnn_algos.cu \
        -L/usr/local/cuda/lib64 -lcudnn || exit 1
    echo "kernels.sh: .gpu-build/dnn_algos built"
    exit 0
fi
OUT=${OUT:-/tmp/gpu-out}
T=$OUT/kernels.txt
B=/work/main/build-gpu
table=bench/gpu/ops.txt
[ -x $B/bin/bp_gpu_bench ] || { echo "kernels.sh: no $B/bin/bp_gpu_bench (run tools/gpu/full-check.sh first)" >&2; exit 1; }
eval "$(bash .gpu/device-run.sh --env)" || echo "kernels.sh: the kit's environment failed" >&2
keys=("$@")
[ ${#keys[@]} -eq 0 ] && keys=(r50_l1_1x1_reduce_f16 r50_l1_3x3_f16 relu_f16_2p26 gelu_f32_2p26
    layer_norm_f16 softmax_vocab_f16 cross_entropy_vocab_f32 sum_ax1_f16 sort_ax1_f32)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=python3
[ -x /opt/torch/.venv/bin/python ] && py=/opt/torch/.venv/bin/python
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
{
echo "== kernels.sh $(date -u +%FT%TZ)"
echo "== PyTorch's kernels (torch.profiler, mean over 20 calls)"
env -u LD_LIBRARY_PATH timeout -k 5 90 "$py" bench/gpu/torch_bench.py --table $table --kernels "${keys[@]}" 2>&1
echo "== backplane's kernels (ncu, the first 40 launches of each row: input fills, warm-up, timed calls)"
for k in "${keys[@]}"; do
    grep -E "^$k[[:space:]]" $table > "$tmp/row.txt" || { echo "no row $k"; continue; }
    if [ -z "$ncu" ]; then echo "no ncu here"; break; fi
    timeout -k 5 40 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv -c 40 \
        $B/bin/bp_gpu_bench --no-classic --table "$tmp/row.txt" > "$tmp/ncu.csv" 2> "$tmp/ncu.err"
    echo "k.$k (ncu exit $?):"
    # CSV: "ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name","Metric Unit","Metric Value"
    "$py" - "$tmp/ncu.csv" <<'EOF'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
if not rows or "Kernel Name" not in rows[0]:
    print("    (no ncu rows)"); sys.exit()
h = rows[0]; ki, ui, vi = h.index("Kernel Name"), h.index("Metric Unit"), h.index("Metric Value")
agg = collections.OrderedDict()
for r in rows[1:]:
    try:
        v = float(r[vi].replace(",", ""))
    except ValueError:
        continue
    unit = r[ui].strip().lower()
    v = v / 1000 if unit in ("ns", "nsecond") else v * 1000 if unit in ("ms", "msecond") else v
    n, t, lo = agg.get(r[ki], (0, 0.0, 1e30))
    agg[r[ki]] = (n + 1, t + v, min(lo, v))
for name, (n, t, lo) in agg.items():
    print(f"    {n:3d}x  mean {t / n:9.1f} us  min {lo:9.1f} us  {name[:150]}")
EOF
    tail -n 3 "$tmp/ncu.err" | sed 's/^/    ncu: /'
done
if [ "${KERNELS_DNN:-1}" = 0 ]; then echo "== kernels.sh done (KERNELS_DNN=0: no cuDNN diagnostic)"; exit 0; fi
echo "== cuDNN's algorithms for the conv rows (toolkit's cuDNN first)"
timeout -k 5 120 .gpu-build/dnn_algos $table 2>&1
tcudnn=$(env -u LD_LIBRARY_PATH "$py" -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null)
if [ -n "$tcudnn" ] && [ -d "$tcudnn" ]; then
    echo "== the same with PyTorch's cuDNN ($tcudnn), f16 rows"
    LD_LIBRARY_PATH=$tcudnn:${LD_LIBRARY_PATH:-} timeout -k 5 60 .gpu-build/dnn_algos $table \
        r50_l1_1x1_reduce_f16 r50_l1_3x3_f16 r50_l4_1x1_expand_f16 2>&1
    echo "== backplane's conv rows with PyTorch's cuDNN"
    grep -E '^(r50_|conv_)' $table > "$tmp/conv.txt"
    LD_LIBRARY_PATH=$tcudnn:${LD_LIBRARY_PATH:-} timeout -k 5 90 $B/bin/bp_gpu_bench --no-classic \
        --table "$tmp/conv.txt" 2>&1 | grep -E 'r50_|conv_|cuDNN'
else
    echo "== no PyTorch cuDNN found (nvidia.cudnn)"
fi
echo "== kernels.sh done"
} 2>&1 | tee "$T"
