#!/usr/bin/env bash
# ctest entry "install": install the build into a temporary prefix, then build
# and run a consumer with find_package(backplane) and with pkg-config, and a
# conformance runner of its own linked against backplane::conform.
set -euo pipefail
build=$1 sanitize=${2:-OFF} src=$(cd "$(dirname "$0")" && pwd)
# A sanitized libbackplane needs a sanitized consumer (the ASan runtime first).
san=""
[ "$sanitize" = ON ] && san="-fsanitize=address,undefined"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# The built-in preference list (cuda, blas_cpu, binary) picks the first that
# opens: cuda where it is installed and nvidia-smi sees a GPU, else blas_cpu if
# installed, else binary.
be=binary
[ -n "$(find "$tmp/prefix" -name bp_blas_cpu.so)" ] && be=blas_cpu
if [ -n "$(find "$tmp/prefix" -name bp_cuda.so)" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  be=cuda
fi
want="$be:0 14 32 32 77"

cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$san" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
got=$("$tmp/cmake/consumer")
[ "$got" = "$want" ] || { echo "find_package consumer printed '$got', wanted '$want'"; exit 1; }

libdir=$(dirname "$(find "$tmp/prefix" -name backplane.pc)")
export PKG_CONFIG_PATH=$libdir
cc -std=c11 $san $(pkg-config --cflags backplane) "$src/consumer.c" -o "$tmp/pc-consumer" \
   $(pkg-config --libs backplane) -Wl,-rpath,"$(pkg-config --variable=libdir backplane)"
got=$("$tmp/pc-consumer")
[ "$got" = "$want" ] || { echo "pkg-config consumer printed '$got', wanted '$want'"; exit 1; }
ls "$(pkg-config --variable=plugindir backplane)/bp_binary.so" >/dev/null
echo "install: find_package and pkg-config consumers both print '$want'"

# The build tree's pkg-config file (pkg-config's -uninstalled convention):
# `pkg-config backplane` with build/lib/pkgconfig on the path names folders
# that exist, and a program linked with it runs from the build tree.
uninstalled="$build/lib/pkgconfig/backplane-uninstalled.pc"
[ -f "$uninstalled" ] || { echo "no $uninstalled"; exit 1; }
[ -z "$(find "$build" -name backplane.pc -path '*/pkgconfig/*')" ] ||
  { echo "a backplane.pc in a pkgconfig folder of the build tree: $(find "$build" -name backplane.pc -path '*/pkgconfig/*')"; exit 1; }
export PKG_CONFIG_PATH=$build/lib/pkgconfig
for d in $(pkg-config --cflags-only-I backplane | sed 's/-I//g') $(pkg-config --libs-only-L backplane | sed 's/-L//g'); do
  [ -d "$d" ] || { echo "the build tree's backplane.pc names $d, which does not exist"; exit 1; }
done
[ -f "$(pkg-config --variable=includedir backplane)/backplane/backplane.h" ] ||
  { echo "the build tree's includedir has no backplane/backplane.h"; exit 1; }
cc -std=c11 $san $(pkg-config --cflags backplane) "$src/consumer.c" -o "$tmp/tree-consumer" $(pkg-config --libs backplane)
got=$(env -u LD_LIBRARY_PATH "$tmp/tree-consumer")
[ "$got" = "$want" ] || { echo "build-tree pkg-config consumer printed '$got', wanted '$want'"; exit 1; }
echo "install: the build tree's backplane-uninstalled.pc builds a consumer that runs from the build tree"

# libbackplane_conform: it exports bp_conform_* and nothing else, and a
# consumer linked against backplane::conform runs the suite on the binary
# backend (add and the contract.* rows).
lib=$(find "$tmp/prefix" -name 'libbackplane_conform.so' -print -quit)
[ -n "$lib" ] || { echo "libbackplane_conform.so was not installed"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^bp_conform_' || true)
[ -z "$exported" ] || { echo "libbackplane_conform.so exports more than bp_conform_*: $exported"; exit 1; }
got=$("$tmp/cmake/conform_consumer" 2>/dev/null)
case $got in
  "binary:0 "*" 0 0") echo "install: the conform consumer ran the suite on binary ($got)" ;;
  *) echo "conform consumer printed '$got', wanted 'binary:0 N 0 0'"; exit 1 ;;
esac
