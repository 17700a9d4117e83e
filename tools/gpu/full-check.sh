#!/bin/bash
# tools/gpu/full-check.sh: the whole GPU check in one device call, from a
# build made beforehand on the build machine (no compiling on the device).
#
# On the build machine, from the project's root:
#   bash ../shared/gpu/prepare.sh && bash tools/gpu/kit-extras.sh
#   bash tools/gpu/full-check.sh --stage     # builds build-gpu (90-real) and
#                                            # build-ptx (80-virtual), copies
#                                            # what runs into .gpu-build/build.tgz
# then one device call with carry [".gpu", ".gpu-build"]:
#   bash tools/gpu/full-check.sh [correct] [bench] [demo]   (default all three)
#
# The builds embed absolute paths (the tests find their files by them), so on
# the device /work/main is made to point at the checkout's copy and
# the build is unpacked into build-gpu (the PTX plugin in build-gpu/ptx/lib/backplane). Stages:
#   correct  at once, side by side: ctest's suites (every op suite runs on
#            cuda too; the Python, packaging and CPU-only conformance entries
#            left out), conform --backend cuda (JSON kept), conform --graph,
#            conform under PTX JIT (the 80-virtual plugin), compute-sanitizer
#            memcheck over the cuda suites and 20 demo steps;
#   bench    alone: bench/gpu/run.sh against PyTorch (the classic rows, the
#            wide table of bench/gpu/ops.txt, startup);
#   demo     backplane demo --backend cuda and info.
# Everything goes to $OUT/summary.txt (verdicts, counts and the tables) and
# $OUT/logs.tar.gz (every log); stage limits: FULL_CHECK_CORRECT_S (170),
# FULL_CHECK_BENCH_S (220).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
stage_here() {
    local nvcc=${NVCC:-/usr/local/cuda/bin/nvcc} gen=()
    command -v ninja > /dev/null && gen=(-G Ninja)
    [ -f .gpu/KIT.txt ] || { echo "full-check.sh: run ../shared/gpu/prepare.sh and tools/gpu/kit-extras.sh first" >&2; exit 1; }
    [ "$(pwd -P)" = /work/main ] || echo "full-check.sh: warning: the build's paths will be $(pwd -P), the device links /work/main" >&2
    cmake -S . -B build-gpu "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DBP_WITH_CUDA=ON -DBP_WERROR=ON \
          -DCMAKE_CUDA_ARCHITECTURES=90-real "-DCMAKE_CUDA_COMPILER=$nvcc" > /dev/null &&
        cmake --build build-gpu -j "$(nproc)" || exit 1
    # FULL_CHECK_STAGE_PTX=0: the PTX plugin as last built (a call without the ptx check)
    if [ "${FULL_CHECK_STAGE_PTX:-1}" != 0 ]; then
        cmake -S . -B build-ptx "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DBP_WITH_CUDA=ON \
              -DCMAKE_CUDA_ARCHITECTURES=80-virtual "-DCMAKE_CUDA_COMPILER=$nvcc" > /dev/null &&
            cmake --build build-ptx -j "$(nproc)" --target bp_cuda bpcu_device || exit 1
    fi
    grep -qx '/.gpu-build/' .git/info/exclude 2>/dev/null || echo '/.gpu-build/' >> .git/info/exclude
    # ONNX's node tests for the onnx check: the device's onnx wheel ships no test data, so
    # Debian's (libonnx-testdata, ONNX 1.12's 932 node tests, 4 MiB gzipped) travel along.
    rm -f .gpu-build/onnx-node.tgz
    local td=/usr/share/libonnx-testdata/data
    if [ -d $td/node ]; then
        mkdir -p .gpu-build && tar -C $td -czf .gpu-build/onnx-node.tgz node || exit 1
    else
        echo "full-check.sh: no $td/node (apt-get install libonnx-testdata): the onnx check will look for the wheel's data" >&2
    fi
    local st
    st=$(mktemp -d) || exit 1
    mkdir -p "$st/ptx/lib/backplane" || exit 1
    # What runs: executables, libraries, plugins, the ctest files; no objects.
    tar -C build-gpu --exclude='*.o' --exclude='*.a' --exclude=CMakeFiles --exclude='*.ninja' \
        --exclude=.ninja_log --exclude=.ninja_deps --exclude=CMakeCache.txt --exclude=./venv -cf - . |
        tar -C "$st" -xf - || exit 1
    # bp_cuda.so loads bpcu_device.so (the device code) from its own folder.
    cp build-ptx/lib/backplane/bp_cuda.so build-ptx/lib/backplane/bpcu_device.so "$st/ptx/lib/backplane/" || exit 1
    # One gzipped archive: the unpacked build is over half of what may travel.
    mkdir -p .gpu-build && rm -f .gpu-build/build.tgz && tar -C "$st" -czf .gpu-build/build.tgz . || exit 1
    rm -rf "$st"
    du -sh .gpu-build .gpu
}
if [ "${1:-}" = --stage ]; then stage_here; exit 0; fi

mkdir -p "$OUT/logs" || exit 1
L=$OUT/logs
S=$OUT/summary.txt
: > "$S"
say() { echo "$*" | tee -a "$S"; }
root=$(pwd -P)
if [ "$root" != /work/main ]; then
    if [ -e /work/main ] && [ ! -L /work/main ]; then
        say "full-check.sh: /work/main exists here and is another checkout: the build's paths would run it, not this one"
        exit 1
    else
        mkdir -p /work && ln -sfn "$root" /work/main
    fi
fi
cd /work/main || exit 1
[ -f .gpu-build/build.tgz ] || { say "full-check.sh: no .gpu-build/build.tgz (run --stage on the build machine; carry .gpu-build)"; exit 1; }
if [ "${FULL_CHECK_LOCAL:-0}" = 1 ]; then
    say "full-check.sh: FULL_CHECK_LOCAL=1: the build-gpu here, as it is (a test of this script)"
elif [ -f build-gpu/CMakeCache.txt ]; then
    say "full-check.sh: build-gpu/ here is a build folder (this is the build machine?): not replacing it"; exit 1
else
    rm -rf build-gpu && mkdir build-gpu && tar -C build-gpu -xzf .gpu-build/build.tgz ||
        { say "full-check.sh: unpacking the build failed"; exit 1; }
fi
eval "$(bash .gpu/device-run.sh --env)" || say "full-check.sh: the kit's environment failed"
B=/work/main/build-gpu
BP=$B/bin/backplane
stages=("$@"); [ ${#stages[@]} -eq 0 ] && stages=(correct bench demo)
t0=$SECONDS
say "full-check.sh: $(date -u +%FT%TZ) stages ${stages[*]}"
say "$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1)"
"$BP" info > "$L/info.log" 2>&1; say "info: exit $? $(grep -m1 'cuda:0' "$L/info.log")"
# The PTX plugin beside a copy of the core: the core opens the plugins of its own folder.
cp -a $B/lib/libbackplane.so* $B/ptx/lib/ 2>/dev/null
PTX_LDP=$B/ptx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
LD_LIBRARY_PATH=$PTX_LDP "$BP" info > "$L/info-ptx.log" 2>&1
say "info (PTX plugin): $(grep -m1 'cuda:0' "$L/info-ptx.log")"

for s in "${stages[@]}"; do
  case $s in
  correct)
    # FULL_CHECK_PARTS: which checks (default all); FULL_CHECK_CTEST_R: only the ctest entries
    # matching this regex. Every check writes its own log (no pipes: a killed sanitizer's
    # children must not hold a reader open).
    lim=${FULL_CHECK_CORRECT_S:-170}
    parts=" ${FULL_CHECK_PARTS:-ctest conform graph ptx memcheck onnx dlpack} "
    has() { case "$parts" in *" $1 "*) return 0 ;; esac; return 1; }
    pids=()
    excl='^(python|onnx|onnx_models|install|bootstrap_demo|readme_snippets|examples|docs_speak_to_users|alloc_failure|checkpoint|dlpack|conformance|conformance_graph|conform_plugins|bench|comm)\.|^(python|install|bootstrap_demo|readme_snippets|examples|docs_speak_to_users|alloc_failure)$|^demo_loss_curve'
    if has ctest; then
      ( cd $B && timeout -k 5 $lim ctest -j 8 --timeout $((lim - 10)) -E "$excl" \
          ${FULL_CHECK_CTEST_R:+-R "$FULL_CHECK_CTEST_R"} --output-on-failure ) > "$L/ctest.log" 2>&1 &
      pids+=($!)
    fi
    has conform && { timeout -k 5 $lim "$BP" conform --backend cuda --json "$L/conform-cuda.json" > "$L/conform.log" 2>&1 & pids+=($!); }
    has graph && { timeout -k 5 $lim "$BP" conform --backend cuda --graph > "$L/conform-graph.log" 2>&1 & pids+=($!); }
    has ptx && { LD_LIBRARY_PATH=$PTX_LDP timeout -k 5 $lim "$BP" conform --backend cuda --timeout 60 > "$L/conform-ptx.log" 2>&1 & pids+=($!); }
    if has memcheck; then
      for t in test_cuda_ops test_cuda_nn; do
        timeout -k 5 $lim compute-sanitizer --tool memcheck --target-processes all --print-limit 20 \
          "$B/bin/$t" --jobs 4 > "$L/memcheck-$t.log" 2>&1 &
        pids+=($!)
      done
      timeout -k 5 $lim compute-sanitizer --tool memcheck --print-limit 20 "$BP" demo --backend cuda --steps 20 \
        > "$L/memcheck-demo.log" 2>&1 &
      pids+=($!)
    fi
    if has onnx; then
      # ONNX's node tests on cuda and, for comparison, on blas_cpu: Debian's data carried
      # from the build machine, else the onnx wheel's there (which had none on an H200).
      if [ -f .gpu-build/onnx-node.tgz ] && mkdir -p /tmp/onnx-data && tar -C /tmp/onnx-data -xzf .gpu-build/onnx-node.tgz; then
        nodes=/tmp/onnx-data/node   # Debian's ONNX 1.12 data, carried (the wheel has none)
      else
        nodes=$(python3 -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/node"))' 2>/dev/null)
      fi
      for be in cuda blas_cpu; do
        timeout -k 5 $lim python3 tests/onnx/run.py --backend $be --package $B/python --testdata "$nodes" \
          --quiet --timeout 30 --json "$L/onnx-$be.json" > "$L/onnx-$be.log" 2>&1 &
        pids+=($!)
      done
    fi
    has dlpack && { timeout -k 5 60 python3 tests/dlpack/check_torch.py $B/lib/libbackplane.so.0.1.0 OFF > "$L/dlpack-torch.log" 2>&1 & pids+=($!); }
    for p in "${pids[@]}"; do wait "$p"; done
    if has ctest; then
      say "ctest: $(grep -E '^[0-9]+% tests passed' "$L/ctest.log")"
      grep -E '^ *[0-9]+/[0-9]+ Test' "$L/ctest.log" | grep -v Passed | tee -a "$S"
      grep -E '^\[----\] +[^ ]|^\[FAIL\]|^\[ERR' "$L/ctest.log" | grep -v 'Assertion Failed' | head -40 | tee -a "$S"
    fi
    for c in conform graph ptx; do
      has $c || continue
      f=$L/conform.log; [ $c = graph ] && f=$L/conform-graph.log; [ $c = ptx ] && f=$L/conform-ptx.log
      say "conform cuda ($c): $(grep -E '^[0-9]+ passed, ' "$f" | tail -n1)"
      grep -E '^(FAIL|CRASH|TIMEOUT)' "$f" | head -20 | tee -a "$S"
    done
    if has onnx; then
      for be in cuda blas_cpu; do
        say "onnx node tests ($nodes) on $be: $(grep -E '^ +(PASS|FAIL) ' "$L/onnx-$be.log" | tr -s ' ' | paste -sd' ')"
        grep -E '^FAIL ' "$L/onnx-$be.log" | cut -c1-160 | head -25 | tee -a "$S"
      done
    fi
    has dlpack && say "dlpack with torch: $(tail -n 1 "$L/dlpack-torch.log")"
    if has memcheck; then
      for f in "$L"/memcheck-*.log; do say "$(basename "$f"): $(grep -E 'ERROR SUMMARY|Synthesis' "$f" | tail -n 2 | paste -sd' ')"; done
    fi
    say "[correct: $((SECONDS - t0)) s so far]" ;;
  bench)
    BP_GPU_BENCH_PREBUILT=1 timeout -k 5 ${FULL_CHECK_BENCH_S:-220} bash bench/gpu/run.sh $B > "$L/bench.log" 2>&1
    say "bench: exit $?"
    grep -vE '^\s*$' "$L/bench.log" | grep -v '^bench/gpu/run.sh: PyTorch' >> "$S"
    say "[bench: $((SECONDS - t0)) s so far]" ;;
  demo)
    timeout -k 5 60 "$BP" demo --backend cuda > "$L/demo.log" 2>&1
    say "demo: exit $?; $(grep -E '^final:' "$L/demo.log" | tail -n1)"
    tail -n 5 "$L/demo.log" >> "$S" ;;
  *) say "full-check.sh: unknown stage '$s'" ;;
  esac
done
say "full-check.sh: done in $((SECONDS - t0)) s"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$L"
