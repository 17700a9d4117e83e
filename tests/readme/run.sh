#!/usr/bin/env bash
# ctest entry "readme_snippets": what README.md tells a new user to copy
# works, so it never rots.
#  1. Every ```c block compiles against the built library and runs to a zero
#     exit. A block without main() is wrapped in one: its #include lines stay
#     at file scope, the rest becomes main's body.
#  2. The walk-through runs verbatim, from a copy of README.md: a block after
#     "<!-- readme-test: file NAME -->" is saved as NAME, and each ```sh block
#     after "<!-- readme-test: run -->" runs, in order, with bash -e, in a
#     folder that stands for the source folder (its build/ is BUILD_DIR) and
#     with a HOME of its own (so an install into $HOME stays in the test).
#     The program must print what README says it prints.
# usage: run.sh SOURCE_DIR BUILD_DIR [SANITIZE]
set -euo pipefail
src=$1 build=$2 sanitize=${3:-OFF}
san=""
[ "$sanitize" = ON ] && san="-fsanitize=address,undefined" # the ASan runtime first
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^```c[[:space:]]*$/ { n++; inside = 1; file = sprintf("%s/snippet%d.c", dir, n); next }
  /^```/ && inside { inside = 0; close(file); next }
  inside { print > file }
' "$src/README.md"
count=0 failed=0
for f in "$tmp"/snippet*.c; do
  [ -e "$f" ] || continue
  count=$((count + 1))
  prog="$f.main.c"
  if grep -q 'main *(' "$f"; then
    cp "$f" "$prog"
  else
    { grep '^#include' "$f"; echo 'int main(void)'; echo '{'; grep -v '^#include' "$f"; echo '    return 0;'; echo '}'; } >"$prog"
  fi
  if ! cc $san -std=c11 -Wall -Werror=implicit-function-declaration -Werror=incompatible-pointer-types \
       -Werror=int-conversion -I"$src/core/include" "$prog" -o "$f.bin" \
       -L"$build/lib" -lbackplane -Wl,-rpath,"$build/lib" 2>"$f.err"; then
    echo "not ok - README snippet $count does not compile:"; sed 's/^/    /' "$f.err" | head -20
    failed=$((failed + 1)); continue
  fi
  if ! "$f.bin" >"$f.out" 2>&1; then
    echo "not ok - README snippet $count fails when run:"; sed 's/^/    /' "$f.out" | head -10
    failed=$((failed + 1)); continue
  fi
  echo "ok - README snippet $count compiles and runs"
done
[ "$count" -gt 0 ] || { echo "not ok - README.md has no \`\`\`c block"; failed=$((failed + 1)); }

# ---- 2. the walk-through, verbatim ------------------------------------------
work=$tmp/walk
mkdir -p "$work/home" "$work/bin"
cp "$src/README.md" "$work/README.copy.md"
ln -s "$(cd "$build" && pwd)" "$work/build"
if [ -n "$san" ]; then # a sanitized libbackplane needs a sanitized program
  real_cc=$(command -v cc)
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$real_cc" "$san" >"$work/bin/cc"
  chmod +x "$work/bin/cc"
fi
awk -v dir="$work" '
  /^<!-- readme-test: file [^ ]+ -->$/ { want = "file"; name = $4; next }
  /^<!-- readme-test: run -->$/ { want = "run"; next }
  /^```/ && !inside && want != "" {
    inside = 1
    if (want == "file") out = dir "/" name
    else { runs++; out = sprintf("%s/run%d.sh", dir, runs) }
    printf "" > out
    next
  }
  /^```/ && inside { inside = 0; want = ""; close(out); next }
  inside && out != "" { print >> out }
  !inside && want != "" && !/^[[:space:]]*$/ { want = "" } # the marker stands right above its block
' "$work/README.copy.md"
walked=0
for f in $(ls "$work"/run*.sh 2>/dev/null | sort -V); do
  walked=$((walked + 1))
  if (cd "$work" && unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR &&
      HOME="$work/home" PATH="$work/bin:$PATH" bash -euo pipefail "$f") >"$f.out" 2>&1; then
    if grep -q '^a @ a.T on [a-z_]*:0: 14 32 32 77$' "$f.out" &&
       grep -q '^ \[32\. 77\.\]\]$' "$f.out"; then
      echo "ok - README walk-through block $walked runs and prints what README says"
    else
      echo "not ok - README walk-through block $walked ran but printed:"; sed 's/^/    /' "$f.out" | head -10
      failed=$((failed + 1))
    fi
  else
    echo "not ok - README walk-through block $walked fails:"; sed 's/^/    /' "$f" "$f.out" | head -20
    failed=$((failed + 1))
  fi
done
if [ ! -s "$work/first.c" ] || [ "$walked" -lt 2 ]; then
  echo "not ok - README.md lacks the walk-through (a file block and the build-tree and install blocks)"
  failed=$((failed + 1))
fi
echo "readme: $count snippets, $walked walk-through blocks, $failed failed"
[ "$failed" -eq 0 ]
