#!/usr/bin/env bash
# Build and run the libFuzzer harnesses (docs/reliability.md).
#
#   tests/fuzz/run.sh                    CI: each harness for a fixed number of runs
#   tests/fuzz/run.sh 600                each harness for 600 seconds
#   tests/fuzz/run.sh -runs=200000       each harness for that many runs
#   tests/fuzz/run.sh --long 14400       hours: fork mode, keeps going after a
#                                        crash, then groups the crashes (triage.sh)
#   tests/fuzz/run.sh ... fuzz_api       only the named harness(es)
# Options: --build-dir DIR (default: build-fuzz, or $BP_FUZZ_BUILD_DIR),
#          --no-build (use DIR as it is).
# The committed seeds (tests/fuzz/corpus/HARNESS) are only read; what the
# fuzzer learns goes to DIR/fuzz/HARNESS/corpus, crashes to DIR/fuzz/HARNESS/.
# A crash is reproduced with: DIR/bin/HARNESS CRASH_FILE (FZ_TRACE=1 prints
# each call of fuzz_api, fuzz_comm and fuzz_graph).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BP_FUZZ_BUILD_DIR:-$root/build-fuzz}
do_build=1 long=0 budget="" harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    --long) long=1 ;;
    -runs=*|[0-9]*) budget=$1 ;;
    fuzz_*) harnesses+=("$1") ;;
    *) echo "usage: $0 [--build-dir DIR] [--no-build] [--long] [SECONDS|-runs=N] [HARNESS...]" >&2; exit 2 ;;
  esac
  shift
done
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_config fuzz_api fuzz_safetensors fuzz_comm fuzz_graph)

if [ $do_build = 1 ]; then
  command -v clang >/dev/null || { echo "run.sh: clang is needed (apt-get install clang)" >&2; exit 2; }
  cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBP_FUZZ=ON -DBP_WITH_CUDA=OFF -DBP_BUILD_TESTS=OFF -DBP_WERROR=ON >/dev/null
  cmake --build "$build" -j "${BP_JOBS:-$(nproc)}" --target "${harnesses[@]}" >/dev/null
fi

# Leaks are findings; a huge allocation the library asks for must come back
# NULL (its out-of-memory path) rather than abort the run.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}

# CI budgets: about a minute each on a 2-core machine.
declare -A ci_runs=([fuzz_config]=500000 [fuzz_api]=40000 [fuzz_safetensors]=200000
                   [fuzz_comm]=100000 [fuzz_graph]=30000)
status=0
for h in "${harnesses[@]}"; do
  work=$build/fuzz/$h
  mkdir -p "$work/corpus"
  args=(-timeout=30 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/")
  [ -f "$here/$h.dict" ] && args+=(-dict="$here/$h.dict")
  if [ $long = 1 ]; then
    args+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="${budget:-3600}")
  elif [[ "$budget" == -runs=* ]]; then
    args+=("$budget" -seed=1)
  elif [ -n "$budget" ]; then
    args+=(-max_total_time="$budget")
  else
    args+=(-runs="${ci_runs[$h]}" -seed=1)
  fi
  echo "== $h ${args[*]}"
  touch "$work/.started" # crash files of earlier runs are not this run's
  start=$(date +%s)
  set +e
  (cd "$work" && "$build/bin/$h" "${args[@]}" "$work/corpus" "$here/corpus/$h" 2>&1) |
    grep -vE '^#[0-9]+.*(NEW|REDUCE|pulse)|^INFO: (Loaded|Running|Seed|-max_len)' | tail -n 60
  rc=${PIPESTATUS[0]}
  set -e
  echo "== $h: exit $rc after $(( $(date +%s) - start ))s"
  found=()
  while IFS= read -r c; do found+=("$c"); done < <(find "$work" -maxdepth 1 -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -newer "$work/.started")
  if [ $long = 1 ] && [ ${#found[@]} -gt 0 ]; then
    echo "== $h: ${#found[@]} crash file(s), grouped:"
    "$here/triage.sh" "$build/bin/$h" "${found[@]}"
  fi
  if [ $rc != 0 ] || [ ${#found[@]} -gt 0 ]; then
    status=1
    if [ $long = 0 ]; then
      for c in "${found[@]}"; do echo "== $h: reproduce with: $build/bin/$h $c"; done
    else
      echo "== $h: the crash files are in $work; reproduce one with: $build/bin/$h FILE"
    fi
  fi
done
exit $status
