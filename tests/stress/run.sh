#!/usr/bin/env bash
# The ThreadSanitizer stress test (docs/reliability.md).
#
#   tests/stress/run.sh             build (build-tsan) and run once
#   tests/stress/run.sh 200         200 iterations per thread (default 40)
#   tests/stress/run.sh --repeat 20 run 20 times (races are timing-dependent)
# Options: --build-dir DIR (default: build-tsan, or $BP_TSAN_BUILD_DIR),
#          --no-build.
# Exit 0 only when every run's checks held and ThreadSanitizer reported
# nothing. Suppressions: tests/stress/tsan.supp (third-party code only).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BP_TSAN_BUILD_DIR:-$root/build-tsan}
do_build=1 iterations=40 repeat=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    --repeat) repeat=$2; shift ;;
    [0-9]*) iterations=$1 ;;
    *) echo "usage: $0 [--build-dir DIR] [--no-build] [--repeat N] [ITERATIONS]" >&2; exit 2 ;;
  esac
  shift
done
if [ $do_build = 1 ]; then
  command -v clang >/dev/null || { echo "run.sh: clang is needed (apt-get install clang)" >&2; exit 2; }
  cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBP_TSAN=ON -DBP_WITH_CUDA=OFF -DBP_BUILD_TESTS=OFF -DBP_WERROR=ON >/dev/null
  cmake --build "$build" -j "${BP_JOBS:-$(nproc)}" --target stress bp_binary bp_blas_cpu >/dev/null
fi
export BP_CONFIG= BP_PLUGIN_PATH= BP_DEFAULT_BACKEND= BP_LOG_LEVEL=
export TSAN_OPTIONS="suppressions=$here/tsan.supp halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4 ${TSAN_OPTIONS:-}"
status=0
for r in $(seq 1 "$repeat"); do
  log=$build/stress-$r.log
  rc=0
  start=$(date +%s)
  "$build/bin/stress" "$here/stress.ini" "$here/nothing_opens.ini" "$iterations" >"$log" 2>&1 || rc=$?
  reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
  echo "== stress run $r: exit $rc, $reports ThreadSanitizer report(s), $(( $(date +%s) - start ))s ($log)"
  if [ $rc != 0 ]; then
    status=1
    grep -E '^stress: |^SUMMARY: ThreadSanitizer' "$log" | sort | uniq -c | sort -rn | head -20
  fi
done
exit $status
