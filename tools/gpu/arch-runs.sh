#!/bin/bash
# tools/gpu/arch-runs.sh: on the GPU machine, after .gpu/device-run.sh (whose
# environment it reuses), build the cuda plugin for architectures that exclude
# the device and show what the cuda plugin must do with them:
#   refusal  80-real only (no code an sm_90 can run): `backplane info` and
#            bp_backend_get (through `backplane demo --backend cuda`) refuse
#            the device at open with the reason and the remedy, and nothing
#            reaches "no kernel image is available";
#   ptx      80-virtual only (PTX, JIT-compiled by the driver): `info` shows
#            the jit decision and its warning, and conform passes.
# Usage: bash tools/gpu/arch-runs.sh [refusal] [ptx]   (default both);
# logs to $OUT/arch-<name>.log and a verdict line each on stdout.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
eval "$(bash .gpu/device-run.sh --env)"
runs=("$@"); [ ${#runs[@]} -eq 0 ] && runs=(refusal ptx)
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)

build() { # DIR ARCHS
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$2" \
        -DCMAKE_CUDA_COMPILER="$nvcc" &&
  ninja -C "$1" backplane_cli bp_binary bp_cuda bpcu_device
}

for r in "${runs[@]}"; do
  log=$OUT/arch-$r.log
  case $r in
    refusal) dir=build-80 archs=80-real ;;
    ptx) dir=build-ptx archs=80-virtual ;;
    *) echo "arch-runs.sh: unknown run '$r'" >&2; exit 2 ;;
  esac
  {
    echo "== $r: CMAKE_CUDA_ARCHITECTURES=$archs"
    t0=$(date +%s)
    build "$dir" "$archs" > "$OUT/arch-$r-build.txt" 2>&1 || { tail -30 "$OUT/arch-$r-build.txt"; echo "BUILD FAILED"; }
    echo "built in $(( $(date +%s) - t0 ))s"
    bp=$dir/bin/backplane
    echo "+ backplane info"; "$bp" info 2>&1
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1)
    echo "+ backplane cuda-check --cc $cc"; "$bp" cuda-check --cc "$cc" 2>&1
    if [ $r = refusal ]; then
      echo "+ backplane demo --backend cuda --steps 1   (bp_backend_get)"; "$bp" demo --backend cuda --steps 1 2>&1
      echo "exit status: $?"
    else
      echo "+ backplane conform --backend cuda --timeout 120   (the first use of each kernel is JIT-compiled)"; "$bp" conform --backend cuda --timeout 120 2>&1 | tail -25
      echo "+ backplane demo --backend cuda --steps 50"; "$bp" demo --backend cuda --steps 50 2>&1 | tail -3
    fi
    rm -f "$OUT/arch-$r-build.txt"
  } > "$log" 2>&1
  if grep -qi "no kernel image" "$log"; then v="FAIL: 'no kernel image' reached"; else v="no 'no kernel image' anywhere"; fi
  echo "arch-runs $r: $v; decision: $(grep -m1 -o 'compute capability 9.0[^;]*' "$log")"
done
