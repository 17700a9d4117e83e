#!/usr/bin/env bash
# Group crash files by what went wrong, so that a long run's findings can be
# read at a glance:  tests/fuzz/triage.sh HARNESS CRASH_FILE...
# For each file, the harness runs it once; the signature is the first line
# that names the problem (sanitizer report, or the harness's "fuzz oracle:"
# line) plus the first stack frame inside backplane (core/ or backends/).
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 HARNESS CRASH_FILE..." >&2; exit 2; }
harness=$1
shift
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
declare -A count example
for f in "$@"; do
  out=$(timeout 60 "$harness" "$f" 2>&1)
  # numbers in the message vary from input to input: N (file:line:col stays)
  what=$(grep -m1 -E "runtime error:|ERROR: (Address|Leak)Sanitizer|fuzz oracle:|ERROR: libFuzzer" <<<"$out" |
         sed -E 's/^==[0-9]+==//; s/0x[0-9a-f]+/ADDR/g; s/ (on|at) address .*//' |
         sed -E ':a; s/(error:.*[^0-9:])[0-9]+([^0-9:]|$)/\1N\2/; ta')
  where=$(grep -m1 -E "^ +#[0-9]+ .*(/core/|/backends/)" <<<"$out" | sed -E 's/^ +#[0-9]+ 0x[0-9a-f]+ in //')
  [ -n "$what" ] || what="(no report: exit status or timeout)"
  key="$what | $where"
  count[$key]=$(( ${count[$key]:-0} + 1 ))
  [ -n "${example[$key]:-}" ] || example[$key]=$f
done
for key in "${!count[@]}"; do
  printf '%5d  %s\t(e.g. %s)\n' "${count[$key]}" "$key" "${example[$key]}"
done | sort -rn | tr '\t' '\n'

