#!/usr/bin/env bash
# blas_cpu built against PyPI's OpenBLAS (scipy-openblas32, the one NumPy's
# wheels ship), the build that `backplane info` tells users to make when the
# system's OpenBLAS does not know their CPU. Its symbols carry a prefix
# (scipy_cblas_sgemm): a call that openblas.h does not map fails this build
# only, never the default one, so CI builds it too, with warnings as errors,
# and runs the plugin's own tests and the conformance suite on it.
#
#   tests/openblas/run.sh [--build-dir DIR] [--no-build]   (default: build-openblas)
# Needs a Python whose pip reaches PyPI: build/venv's (tools/bootstrap.sh
# makes it) or, when missing, a venv made here in DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-openblas
do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --no-build) do_build=0 ;;
    *) echo "usage: $0 [--build-dir DIR] [--no-build]" >&2; exit 2 ;;
  esac
  shift
done
tests=(test_blas_cpu test_blas_cpu_openblas test_graph_prepare test_ops_gemm test_ops_matmul
       test_nn_conv)
if [ $do_build = 1 ]; then
  py=$root/build/venv/bin/python
  if [ ! -x "$py" ]; then
    python3 -m venv "$build/venv"
    py=$build/venv/bin/python
  fi
  "$py" -c 'import scipy_openblas32' 2>/dev/null ||
    "$py" -m pip install -q --disable-pip-version-check scipy-openblas32
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBP_WITH_CUDA=OFF \
    -DBP_WERROR=ON -DBP_OPENBLAS=scipy-openblas32 -DBP_OPENBLAS_PYTHON="$py" >/dev/null
  cmake --build "$build" -j "${BP_JOBS:-$(nproc)}" \
    --target bp_binary bp_blas_cpu backplane_cli "${tests[@]}" >/dev/null
fi
export BP_CONFIG= BP_PLUGIN_PATH= BP_DEFAULT_BACKEND= BP_LOG_LEVEL=
"$build/bin/backplane" info | grep -E "^  blas_cpu|OpenBLAS [0-9]" | sed 's/^ *//' | cut -c1-160
status=0
for t in "${tests[@]}"; do
  "$build/bin/$t" --jobs 2 >"$build/$t.log" 2>&1 || { status=1; tail -20 "$build/$t.log"; }
  echo "$t: $(grep -h 'Synthesis' "$build/$t.log" | sed 's/.*Synthesis: //')"
done
"$build/bin/backplane" conform --backend blas_cpu >"$build/conform.log" 2>&1 ||
  { status=1; tail -20 "$build/conform.log"; }
echo "conform: $(tail -1 "$build/conform.log")"
exit $status
