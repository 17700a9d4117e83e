#!/bin/bash
# bench/gpu/run.sh [BUILD_DIR]: build bp_gpu_bench in BUILD_DIR (default
# build; configured with the cuda plugin), time PyTorch's side with a Python
# whose torch sees CUDA ($TORCH_PYTHON, /opt/torch/.venv's, python3), and
# print the tables (docs/gpu.md): the classic rows (cuBLAS, the copy
# bandwidth, transfers, PyTorch), the wide table of bench/gpu/ops.txt, and
# the startup costs, each side's in a fresh process. Run from the project
# root. Fails loudly: every failed step is named on stderr and in the exit
# status (1; 2 for a table that does not parse), and the rows that did run
# are still printed. No PyTorch is a failure too (the table is a comparison).
set -uo pipefail
build=${1:-build}
here=$(dirname "$0")
table=$here/ops.txt
fail=0
say() { echo "bench/gpu/run.sh: $*" >&2; }
loud() { say "FAILED: $*"; fail=1; }
# BP_GPU_BENCH_PREBUILT=1: a build made elsewhere and copied here (tools/gpu/full-check.sh), used as is.
if [ "${BP_GPU_BENCH_PREBUILT:-0}" != 1 ]; then
    cmake --build "$build" --target bp_gpu_bench >&2 || { say "FAILED: building bp_gpu_bench in $build (configured with -DBP_WITH_CUDA=ON?)"; exit 1; }
fi
bench=$build/bin/bp_gpu_bench
[ -x "$bench" ] || { say "FAILED: no $bench after the build"; exit 1; }
"$bench" --table "$table" --list > /dev/null || { say "FAILED: $table does not parse (above)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=
for cand in "${TORCH_PYTHON:-}" /opt/torch/.venv/bin/python python3; do
    if [ -n "$cand" ] && "$cand" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
        py=$cand
        break
    fi
done
# PyTorch finds its own CUDA libraries (its wheels'); the kit's LD_LIBRARY_PATH names the
# toolkit's cuDNN, older than the one PyTorch was built against (seen on an H200: 9.14 found,
# 9.19 wanted, and torch.backends.cudnn.version() refused to run).
torch_py() { env -u LD_LIBRARY_PATH "$py" "$@"; }
if [ -n "$py" ]; then
    say "PyTorch $(torch_py -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())') ($py)"
    torch_py "$here/torch_bench.py" --startup > "$tmp/torch.txt" || loud "PyTorch's startup measurement"
    torch_py "$here/torch_bench.py" --table "$table" >> "$tmp/torch.txt" || loud "PyTorch's side (the rows named above have no PyTorch time)"
else
    loud "no Python with a CUDA-enabled torch (set TORCH_PYTHON): the PyTorch columns say n/a"
fi
"$bench" --startup > "$tmp/bp_startup.txt" || loud "backplane's startup measurement"
"$bench" --torch "$tmp/torch.txt" --table "$table" --bp-startup "$tmp/bp_startup.txt" || loud "backplane's side (rows marked FAILED above)"
[ $fail = 0 ] || say "one or more steps FAILED (above); the tables hold what did run"
exit $fail
