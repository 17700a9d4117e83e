#!/usr/bin/env bash
# Set up a fresh Debian machine, build backplane, and run one job:
#   tools/bootstrap.sh demo [demo options]   train the demo MLP on the default backend
#   tools/bootstrap.sh test                  run the whole test suite (ctest)
#   tools/bootstrap.sh build                 only install and build
# Environment: BP_BUILD_DIR (default build), BP_SANITIZE=ON for an
# AddressSanitizer + UndefinedBehaviorSanitizer build, BP_WERROR=ON to make
# warnings errors, BP_CMAKE_ARGS for anything else.
set -euo pipefail

job=${1:-demo}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BP_BUILD_DIR:-$root/build}

# Debian packages: compiler and build tools, inih, cJSON (conform's JSON lines),
# Criterion, OpenBLAS, NumPy (for the benchmark comparison).
packages=(build-essential cmake pkg-config libinih-dev libcjson-dev libcriterion-dev libopenblas-dev python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBP_SANITIZE="${BP_SANITIZE:-OFF}" -DBP_WERROR="${BP_WERROR:-OFF}" ${BP_CMAKE_ARGS:-} >&2
cmake --build "$build" -j "$(nproc)" >&2

case "$job" in
  demo)  exec "$build/bin/backplane" demo "$@" ;;
  test)  cd "$build" && exec ctest --output-on-failure "$@" ;;
  build) ;;
  *) echo "usage: tools/bootstrap.sh demo|test|build [args]" >&2; exit 2 ;;
esac
