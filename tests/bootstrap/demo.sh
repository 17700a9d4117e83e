#!/usr/bin/env bash
# ctest entry "bootstrap_demo": README's first command as a new user runs it,
# in a build folder of its own: `tools/bootstrap.sh demo` builds only what
# the demo needs (no test, no cuda plugin unless nvidia-smi shows a GPU, and
# then for its architecture alone), says so on one line with how to build the
# rest, and reaches the demo's last line. (How long it takes is measured, not
# asserted: see the lead's report; a timed test would only measure the
# machine's load.) Skipped in a sanitizer build: it tests a script, and
# builds without sanitizers anyway.
# usage: demo.sh SOURCE_DIR [SANITIZE]
set -u
src=$1 sanitize=${2:-OFF}
if [ "$sanitize" = ON ]; then
  echo "skip: the sanitizer pass does not build the demo again"; exit 77
fi
command -v dpkg-query >/dev/null || { echo "skip: not a Debian machine (no dpkg-query)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }

b=$tmp/build
env BP_BUILD_DIR="$b" BP_CMAKE_ARGS= BP_SANITIZE=OFF "$src/tools/bootstrap.sh" demo --steps 20 \
  >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^final: ' "$tmp/out" && tail -1 "$tmp/out" | grep -q '^  memory '; then
  ok "the demo ran to its last line"
else
  bad "the demo did not finish (exit $rc):"; tail -5 "$tmp/out" "$tmp/err" | sed 's/^/    /'
fi

said=$(grep '^bootstrap: building' "$tmp/err")
if [ "$(printf '%s\n' "$said" | grep -c .)" -eq 1 ] && [[ "$said" == *"for the demo only"* ]] &&
   [[ "$said" == *"no tests"* ]] && [[ "$said" == *"'tools/bootstrap.sh build' builds the rest"* ]]; then
  ok "one line says what is built and how to build the rest: $said"
else
  bad "the line saying what is built: '$said'"
fi

tests_built=$(find "$b/bin" -name 'test_*' -type f -perm -u+x 2>/dev/null | head -3) # the suites' programs
[ -z "$tests_built" ] && [ ! -e "$b/tests" ] && ok "no test was built or configured" ||
  bad "tests were built: $tests_built"

gpu_archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
              tr -d ' .' | grep -E '^[0-9]+$' | sort -u | sed 's/$/-real/' | paste -sd';')
cached=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:STRING=//p' "$b/CMakeCache.txt")
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  [ -z "$(find "$b" -name 'bp_cuda.so' -o -name 'bpcu_device.so')" ] && [[ "$said" == *"no GPU here"* ]] &&
    ok "no GPU: no cuda plugin" || bad "no GPU, yet a cuda plugin was built or the line says otherwise"
elif [ -n "$gpu_archs" ]; then
  [ "$cached" = "$gpu_archs" ] && ok "the cuda plugin is built for this GPU only ($cached)" ||
    bad "CMAKE_CUDA_ARCHITECTURES is '$cached', not this GPU's '$gpu_archs'"
fi

# The folder remembers that the demo left things out, so that test and build
# (which configure with everything) put them back.
[ -f "$b/.bootstrap-demo-only" ] && ok "the build folder is marked as the demo's" ||
  bad "no .bootstrap-demo-only in the build folder"

echo "bootstrap_demo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
