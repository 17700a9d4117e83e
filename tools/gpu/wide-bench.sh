#!/bin/bash
# tools/gpu/wide-bench.sh: the wide table against PyTorch (bench/gpu,
# docs/gpu.md) in one device call. On the GPU machine, from the project's
# root, with the kit (.gpu/: ../shared/gpu/prepare.sh, then
# tools/gpu/kit-extras.sh, on the build machine) sent along:
#
#   bash tools/gpu/wide-bench.sh [BUILD_DIR]      (default build)
#
# configures a Release build for the GPU's own architecture, builds only what
# the benchmark needs (the core, the binary and cuda plugins, bp_gpu_bench),
# and runs bench/gpu/run.sh: the tables on stdout and in $OUT/wide-table.txt,
# the build's log in $OUT/wide-build.log. About 1 minute of build on 16 cores
# and 3 of measuring on an H100; the run is cut at WIDE_BENCH_TIMEOUT seconds
# (default 300). Exit status: 0; 1 when a step failed (named on stderr) or a
# row failed; 2 on a usage error.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
build=${1:-build}
die() { echo "wide-bench.sh: FAILED: $*" >&2; exit 1; }
if [ ! -f CMakeLists.txt ] || [ ! -f bench/gpu/ops.txt ]; then
    echo "wide-bench.sh: run me from the project's root" >&2
    exit 2
fi
mkdir -p "$OUT" || die "cannot create $OUT"
[ -f .gpu/device-run.sh ] || die "no .gpu/ kit here: run ../shared/gpu/prepare.sh and tools/gpu/kit-extras.sh on the build machine, and send .gpu/ along"
env_lines=$(bash .gpu/device-run.sh --env) || die "the kit's environment (bash .gpu/device-run.sh --env)"
eval "$env_lines"
command -v nvidia-smi > /dev/null || die "no nvidia-smi: this is not a GPU machine"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
[ -n "$cc" ] || die "nvidia-smi names no GPU"
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null) || die "no nvcc on PATH or in /usr/local/cuda/bin"
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
t0=$SECONDS
if ! cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DBP_WITH_CUDA=ON \
        "-DCMAKE_CUDA_ARCHITECTURES=${cc}-real" "-DCMAKE_CUDA_COMPILER=$nvcc" \
        > "$OUT/wide-build.log" 2>&1; then
    tail -n 40 "$OUT/wide-build.log"
    die "configure (log: $OUT/wide-build.log)"
fi
if ! cmake --build "$build" -j "$(nproc)" --target bp_gpu_bench >> "$OUT/wide-build.log" 2>&1; then
    tail -n 40 "$OUT/wide-build.log"
    die "build (log: $OUT/wide-build.log)"
fi
echo "wide-bench.sh: configured and built for ${cc}-real in $((SECONDS - t0)) s"
timeout "${WIDE_BENCH_TIMEOUT:-300}" bash bench/gpu/run.sh "$build" 2>&1 | tee "$OUT/wide-table.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 124 ] && die "bench/gpu/run.sh ran past ${WIDE_BENCH_TIMEOUT:-300} s (what it printed is in $OUT/wide-table.txt)"
[ "$rc" = 0 ] || die "bench/gpu/run.sh (exit status $rc; $OUT/wide-table.txt)"
echo "wide-bench.sh: done in $((SECONDS - t0)) s; $OUT/wide-table.txt"
