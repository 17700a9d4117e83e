#!/usr/bin/env bash
# ctest conform_plugins.*: run `backplane conform --plugin` on one plugin and
# check the verdict.
#   expect.sh CLI PLUGIN.so pass               exit 0, nothing failed or crashed
#   expect.sh CLI PLUGIN.so OP STATUS-REGEX    exit 1; every FAIL/CRASH/TIMEOUT
#                                              line is STATUS-REGEX and names OP;
#                                              other cases still passed (OP's
#                                              and a few other ops' cases run)
set -uo pipefail
cli=$1 plugin=$2 op=$3 want=${4:-}
# A wrong plugin is the template with one bug (the template's own run,
# 'pass', covers every op): its run takes the wrong op and a handful of
# others, which must still pass, instead of the whole suite again (each
# whole run took 25 s, 50 s under ASan).
ops=()
[ "$op" = pass ] || ops=(--op "$op" --op add --op mul --op neg --op sum --op matmul --op 'contract.*')
out=$("$cli" conform --plugin "$plugin" "${ops[@]}" 2>/dev/null)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
name=$(basename "$plugin")
fail() { echo "expect.sh: $name: $*" >&2; exit 1; }

totals=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed, [0-9]+ unsupported, [0-9]+ crashed' | tail -n 1)
[ -n "$totals" ] || fail "no totals line ('N passed, N failed, N unsupported, N crashed'); exit status $rc"
read -r passed failed unsupported crashed < <(printf '%s\n' "$totals" |
  sed -E 's/.*\b([0-9]+) passed, ([0-9]+) failed, ([0-9]+) unsupported, ([0-9]+) crashed.*/\1 \2 \3 \4/')
bad=$(printf '%s\n' "$out" | grep -E '\b(FAIL|CRASH|TIMEOUT)\b' | grep -v -E '[0-9]+ passed, [0-9]+ failed' || true)

if [ "$op" = pass ]; then
  [ "$rc" -eq 0 ] || fail "exit status $rc, wanted 0"
  [ "$failed" -eq 0 ] && [ "$crashed" -eq 0 ] || fail "totals: $totals"
  [ "$passed" -gt 0 ] || fail "nothing passed: $totals"
  echo "expect.sh: $name: conform passes ($totals)"
  exit 0
fi

[ "$rc" -eq 1 ] || fail "exit status $rc, wanted 1 (the $op bug must fail the run)"
[ -n "$bad" ] || fail "no FAIL/CRASH/TIMEOUT line at all"
# (no grep -q in these pipelines: with pipefail, its early exit can SIGPIPE the writer)
named=$(printf '%s\n' "$bad" | grep -E "\b($want)\b" | grep -w -- "$op" || true)
[ -n "$named" ] || fail "no $want line names '$op'"
stray=$(printf '%s\n' "$bad" | grep -v -w -- "$op" || true)
[ -z "$stray" ] || fail "lines that do not name '$op' (the plugin's other ops are the template's):
$stray"
[ $((failed + crashed)) -gt 0 ] || fail "totals show nothing failed or crashed: $totals"
[ "$passed" -gt 0 ] || fail "no case passed, so the suite did not keep going: $totals"
echo "expect.sh: $name: conform caught $op ($want) and kept going ($totals)"
