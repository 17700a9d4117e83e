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

# Debian packages: compiler and build tools, inih, cJSON (checkpoint headers,
# conform's JSON lines), DLPack's header, Criterion, OpenBLAS, NumPy (for the
# benchmark comparison), venv (the tests' Python reference implementations),
# Open MPI (the collective engines, and mpirun for their tests).
packages=(build-essential cmake pkg-config libinih-dev libcjson-dev libdlpack-dev libcriterion-dev
          libopenblas-dev python3-numpy python3-venv libopenmpi-dev openmpi-bin)
# The test job also runs ONNX's backend node tests (tests/onnx/): ONNX's
# Python package and its test data, both from Debian, read by Debian's python3.
if [ "$job" = test ]; then
  packages+=(python3-onnx libonnx-testdata)
fi
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

# The tests' reference implementations (safetensors, NumPy, ml_dtypes) live in
# a virtual environment of the build; without network the tests that need
# them are reported as skipped.
venv_args=()
if [ "$job" = test ]; then
  venv=$build/venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import safetensors, numpy, ml_dtypes' 2>/dev/null; then
    echo "bootstrap: setting up $venv (safetensors, numpy, ml_dtypes)" >&2
    python3 -m venv "$venv" >&2 &&
      "$venv/bin/pip" install -q --disable-pip-version-check safetensors numpy ml_dtypes >&2 ||
      echo "bootstrap: could not install the Python reference packages; their tests will be skipped" >&2
  fi
  # The ONNX node tests need python3-onnx, which only Debian's own python3
  # imports (the venv above does not see the system's packages).
  venv_args=(-DBP_TEST_PYTHON="$venv/bin/python" -DBP_ONNX_PYTHON=/usr/bin/python3)
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBP_SANITIZE="${BP_SANITIZE:-OFF}" -DBP_WERROR="${BP_WERROR:-OFF}" "${venv_args[@]}" \
  ${BP_CMAKE_ARGS:-} >&2
cmake --build "$build" -j "$(nproc)" >&2

case "$job" in
  demo)  exec "$build/bin/backplane" demo "$@" ;;
  test)  cd "$build" && exec ctest --output-on-failure "$@" ;;
  build) ;;
  *) echo "usage: tools/bootstrap.sh demo|test|build [args]" >&2; exit 2 ;;
esac
