#!/usr/bin/env bash
# ctest entry "readme_snippets": every ```c block of README.md compiles
# against the built library and runs to a zero exit, so the examples a new
# user copies never rot. A block without main() is wrapped in one: its
# #include lines stay at file scope, the rest becomes main's body.
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
[ "$count" -gt 0 ] || { echo "not ok - README.md has no \`\`\`c block"; exit 1; }
echo "readme: $count snippets, $failed failed"
[ "$failed" -eq 0 ]
