#!/usr/bin/env bash
# ctest entry "examples": install the build into a temporary prefix, build
# examples/ against it with find_package(backplane), and run every example.
# usage: run.sh SOURCE_DIR BUILD_DIR [SANITIZE] [PYTHON]
set -euo pipefail
src=$1 build=$2 sanitize=${3:-OFF} python=${4:-}
san=""
[ "$sanitize" = ON ] && san="-fsanitize=address,undefined"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/examples" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$san" \
  -DCMAKE_BUILD_RPATH="$tmp/prefix/lib" >/dev/null
cmake --build "$tmp/build" >/dev/null
fail=0
run() { # NAME CMD...
  local name=$1; shift
  if (cd "$tmp" && "$@") >"$tmp/$name.out" 2>&1; then
    echo "ok - $name"; sed 's/^/    /' "$tmp/$name.out"
  else
    echo "not ok - $name"; sed 's/^/    /' "$tmp/$name.out"; fail=1
  fi
}
run hello "$tmp/build/hello"
run choose_backend "$tmp/build/choose_backend" "$src/examples/choose_backend/backends.ini"
# Without a file it reads the layered configuration, as its comment says
# (here: no $BP_CONFIG and an empty home, so the built-in defaults).
run choose_backend_layered "$tmp/build/choose_backend"
grep -q "(the built-in default)" "$tmp/choose_backend_layered.out" ||
  { echo "not ok - choose_backend without a file did not use the built-in defaults"; fail=1; }
run checkpoint "$tmp/build/checkpoint" "$tmp/mlp.safetensors"
lib=$(find "$tmp/prefix" -name 'libbackplane.so' | head -n 1)
if [ "$sanitize" = ON ]; then
  echo "skip - numpy_dlpack: an AddressSanitizer build cannot load into Python"
elif [ -n "$python" ] && "$python" -c 'import numpy' 2>/dev/null; then
  run numpy_dlpack "$python" "$src/examples/numpy_dlpack/exchange.py" "$lib"
else
  echo "skip - numpy_dlpack: no Python with NumPy (tools/bootstrap.sh test makes one)"
fi
exit $fail
