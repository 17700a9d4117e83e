#!/usr/bin/env bash
# backplane demo --data-parallel under mpirun -np N trains the MLP with each
# process on 1/N of every batch: its loss at every step must be the
# one-process full-batch run's within 1e-5 relative (f32).
#   demo_data_parallel.sh BACKPLANE_CLI NP MPIEXEC [MPIEXEC_ARGS...]
set -euo pipefail
bp=$1 np=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bp" demo --loss-log "$tmp/one.txt" > "$tmp/one.out"
"$@" -n "$np" "$bp" demo --data-parallel --loss-log "$tmp/dp.txt" > "$tmp/dp.out"
grep -q "data-parallel: $np processes" "$tmp/dp.out" ||
  { echo "FAIL: the data-parallel run does not say it ran on $np processes:"; cat "$tmp/dp.out"; exit 1; }
awk -v np="$np" '
  NR == FNR { one[$1] = $2; n++; next }
  {
    m++
    if (!($1 in one)) { printf "FAIL: step %s is not in the one-process log\n", $1; bad = 1; next }
    d = $2 - one[$1]; if (d < 0) d = -d
    r = one[$1] != 0 ? d / (one[$1] < 0 ? -one[$1] : one[$1]) : d
    if (r > worst) { worst = r; at = $1 }
    if (r > 1e-5) { printf "FAIL: step %s: loss %s on %d processes, %s on one (%.3g relative)\n", $1, $2, np, one[$1], r; bad = 1 }
  }
  END {
    if (m != n || n < 2) { printf "FAIL: %d steps logged on one process, %d on %d\n", n, m, np; bad = 1 }
    if (!bad) printf "ok demo_data_parallel_loss_equals_the_one_process_loss (%d steps, %d processes, worst %.3g relative at step %s)\n", n, np, worst, at
    exit bad
  }' "$tmp/one.txt" "$tmp/dp.txt"
