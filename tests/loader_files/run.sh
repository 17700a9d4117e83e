#!/usr/bin/env bash
# Broken files in a plugin directory (docs/reliability.md): a directory, an
# empty file, text, links to /dev/zero, dangling and looping links, plugins
# truncated in their headers and in half, a FIFO, a socket, each named
# bp_*.so in a plugin_path directory. Each must be rejected with a reason,
# without a crash or a hang, and the binary backend must still open.
#
#   tests/loader_files/run.sh [CASE...]
# Options: --build-dir DIR (default: build-asan, or $BP_LOADER_BUILD_DIR; a
#          BP_SANITIZE=ON build), --no-build.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BP_LOADER_BUILD_DIR:-$root/build-asan}
do_build=1 cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    -*) echo "usage: $0 [--build-dir DIR] [--no-build] [CASE...]" >&2; exit 2 ;;
    *) cases+=("$1") ;;
  esac
  shift
done
if [ $do_build = 1 ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_SANITIZE=ON \
    -DBP_WERROR=ON -DBP_WITH_CUDA=OFF -DBP_LOADER_FILES=ON >/dev/null
  cmake --build "$build" -j "${BP_JOBS:-$(nproc)}" --target broken_files bp_binary >/dev/null
fi
export BP_CONFIG= BP_PLUGIN_PATH= BP_DEFAULT_BACKEND= BP_LOG_LEVEL= XDG_CONFIG_HOME=/nonexistent HOME=/nonexistent
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exec "$build/bin/broken_files" "${cases[@]}"
