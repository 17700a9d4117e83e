#!/usr/bin/env bash
# The demo's models take their gradients from bp_graph_grad; the loss at each
# of the first 100 steps must be the hand-written gradients' loss (recorded in
# MODEL_hand_written_loss.txt before they were replaced) within 1e-5 relative
# (f32; binary and blas_cpu agreed to 1e-7 (mlp) and 1e-6 (cnn) when it was
# recorded).
#   loss_curve.sh BACKPLANE_CLI BACKEND MODEL
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bp=$1 backend=$2 model=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bp" demo --model "$model" --backend "$backend" --steps 100 --loss-log "$tmp/loss.txt" > "$tmp/out"
awk -v be="$backend" -v model="$model" '
  NR == FNR { want[$1] = $2; n++; next }
  {
    m++
    if (!($1 in want)) { printf "FAIL: step %s is not in the recorded curve\n", $1; bad = 1; next }
    d = $2 - want[$1]; if (d < 0) d = -d
    r = want[$1] != 0 ? d / (want[$1] < 0 ? -want[$1] : want[$1]) : d
    if (r > worst) { worst = r; at = $1 }
    if (r > 1e-5) { printf "FAIL: step %s: loss %s with bp_graph_grad, %s hand-written (%.3g relative)\n", $1, $2, want[$1], r; bad = 1 }
  }
  END {
    if (m != n || n < 100) { printf "FAIL: %d steps recorded, %d logged\n", n, m; bad = 1 }
    if (!bad) printf "ok demo_%s_autograd_loss_equals_the_hand_written_loss on %s (%d steps, worst %.3g relative at step %s)\n", model, be, n, worst, at
    exit bad
  }' "$here/${model}_hand_written_loss.txt" "$tmp/loss.txt"
