#!/bin/bash
# tools/gpu/kit-extras.sh: add to the GPU kit (.gpu/, made by
# ../shared/gpu/prepare.sh) the build dependencies it does not pack: cJSON
# (libcjson-dev: the core and conform parse JSON) and DLPack's header
# (libdlpack-dev: <dlpack/dlpack.h>). Run from the project's root after
# prepare.sh. On the GPU machine, before .gpu/device-run.sh:
#   export CPATH=$PWD/.gpu/include
# so that the compilers find dlpack/dlpack.h (CMake looks it up nowhere);
# libcjson is found through the kit's PKG_CONFIG_PATH like inih.
set -euo pipefail
kit=.gpu
die() { echo "kit-extras.sh: $*" >&2; exit 1; }
[ -f "$kit/KIT.txt" ] || die "no $kit/KIT.txt here: run 'bash ../shared/gpu/prepare.sh' first"
pc_inc=$(pkg-config --variable=includedir libcjson) ||
  die "cJSON is not installed here (apt-get install libcjson-dev)"
[ -f "$pc_inc/cjson/cJSON.h" ] || die "$pc_inc/cjson/cJSON.h not found"
lib=$(readlink -f "$(pkg-config --variable=libdir libcjson)/libcjson.so") ||
  die "libcjson.so not found (apt-get install libcjson-dev)"
so=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2; exit }')
[ -n "$so" ] || die "$lib has no SONAME"
cp -f "$lib" "$kit/lib/$so"
ln -sfn "$so" "$kit/lib/libcjson.so"
mkdir -p "$kit/include/cjson" "$kit/include/dlpack"
cp -f "$pc_inc/cjson/cJSON.h" "$kit/include/cjson/"
ver=$(pkg-config --modversion libcjson)
{ printf '# libcjson, written by tools/gpu/kit-extras.sh; paths are relative to this file.\n'
  printf 'prefix=${pcfiledir}/../..\nlibdir=${prefix}/lib\nincludedir=${prefix}/include\n\n'
  printf 'Name: libcjson\nDescription: Ultralightweight JSON parser in ANSI C\nVersion: %s\n' "$ver"
  printf 'Libs: -L${libdir} -lcjson\nCflags: -I${includedir} -I${includedir}/cjson\n'
} > "$kit/lib/pkgconfig/libcjson.pc"
[ -f /usr/include/dlpack/dlpack.h ] || die "dlpack/dlpack.h not found (apt-get install libdlpack-dev)"
cp -f /usr/include/dlpack/dlpack.h "$kit/include/dlpack/"
echo "kit-extras.sh: added cJSON $ver ($so) and dlpack/dlpack.h to $kit" >&2
