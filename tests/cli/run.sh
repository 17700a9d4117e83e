#!/usr/bin/env bash
# ctest entry "cli": the backplane command line as a user meets it.
# usage: run.sh PATH/TO/backplane [TEST_PLUGIN_DIR]
set -u
bp=$1
test_plugins=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# check NAME WANT_EXIT CMD...: runs CMD with stdout/stderr captured in $tmp.
check() {
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then
    return 0
  fi
  echo "not ok - $name: exit $got, wanted $want"; sed 's/^/    stderr: /' "$tmp/err" | head -5
  fail=$((fail + 1))
  return 1
}
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; fail=$((fail + 1)); }
stdout_has() { grep -q -- "$1" "$tmp/out"; }
stderr_has() { grep -q -- "$1" "$tmp/err"; }
stderr_empty() { [ ! -s "$tmp/err" ]; }
# Nothing on stderr but blas_cpu's warning that this machine's OpenBLAS runs
# kernels older than its CPU (a real condition of the machine, which the
# plugin must report: test_blas_cpu_openblas.c).
stderr_quiet() { ! grep -v -- "blas_cpu: OpenBLAS runs its" "$tmp/err" | grep -q .; }
stdout_empty() { [ ! -s "$tmp/out" ]; }

check help_lists_every_command 0 "$bp" --help &&
  { stdout_has info && stdout_has demo && stdout_has bench && stdout_has cuda-check && stderr_empty &&
    ok help_lists_every_command || bad "help_lists_every_command: missing a command or wrote to stderr"; }
check help_names_both_demo_models 0 "$bp" --help &&
  { grep -q "^  demo .*MLP.*CNN" "$tmp/out" && ok help_names_both_demo_models ||
    bad "help_names_both_demo_models: $(grep demo "$tmp/out")"; }

for cmd in info demo inspect bench cuda-check; do
  check "${cmd}_has_help" 0 "$bp" "$cmd" --help &&
    { stdout_has usage && stderr_empty && ok "${cmd}_has_help" || bad "${cmd}_has_help: no usage on stdout"; }
done

check unknown_command_is_a_usage_error_on_stderr 2 "$bp" frobnicate &&
  { stdout_empty && stderr_has frobnicate && ok unknown_command_is_a_usage_error_on_stderr ||
    bad "unknown_command_is_a_usage_error_on_stderr: output on stdout or command not named"; }

check unknown_option_is_a_usage_error 2 "$bp" info --colour && ok unknown_option_is_a_usage_error

check version_names_library_and_abi 0 "$bp" --version &&
  { stdout_has "plugin ABI" && ok version_names_library_and_abi || bad "version_names_library_and_abi"; }

check info_json_is_valid_json 0 "$bp" info --json &&
  { python3 -m json.tool "$tmp/out" >/dev/null && ok info_json_is_valid_json || bad "info_json_is_valid_json: does not parse"; }

check info_shows_plugins_and_default_backend 0 "$bp" info &&
  { stdout_has "bp_binary.so" && stdout_has "default backend: \(cuda\|blas_cpu\|binary\):0" &&
    stdout_has "the built-in default" &&
    ok info_shows_plugins_and_default_backend || bad "info_shows_plugins_and_default_backend"; }

printf '[backplane]\nlog_level = loud\n' >"$tmp/bad.ini"
check bad_config_fails_naming_file_line_and_key 1 "$bp" info --config "$tmp/bad.ini" &&
  { stderr_has "$tmp/bad.ini:2" && stderr_has log_level && ok bad_config_fails_naming_file_line_and_key ||
    bad "bad_config_fails_naming_file_line_and_key: $(head -c 300 "$tmp/err")"; }

# A key the plugin refuses: info exits 1, and the plugin's reason stands beside
# the key (not "UNUSED"), and goes to stderr.
printf '[backend.binary]\nthread = 4\n' >"$tmp/plugin_key.ini"
check info_fails_on_a_plugin_config_error_with_the_reason_beside_the_key 1 \
  "$bp" info --config "$tmp/plugin_key.ini" &&
  { grep -q "thread = 4 .*(.*plugin_key.ini:2)  ERROR: .*unknown key 'thread'" "$tmp/out" &&
    ! stdout_has UNUSED && stderr_has "unknown key 'thread'" &&
    ok info_fails_on_a_plugin_config_error_with_the_reason_beside_the_key ||
    bad "info_fails_on_a_plugin_config_error_with_the_reason_beside_the_key: $(grep thread "$tmp/out")"; }
check info_json_gives_the_error_of_the_setting 1 "$bp" info --config "$tmp/plugin_key.ini" --json &&
  { python3 -c 'import json,sys; s=[x for x in json.load(open(sys.argv[1]))["settings"] if x["key"]=="thread"][0]; sys.exit("unknown key" not in s["error"])' "$tmp/out" &&
    ok info_json_gives_the_error_of_the_setting || bad info_json_gives_the_error_of_the_setting; }
check info_fails_on_a_default_backend_that_names_no_backend 1 \
  env BP_DEFAULT_BACKEND=binry "$bp" info &&
  { grep -q "default_backend = binry .*ERROR: .*did you mean 'binary'" "$tmp/out" &&
    stderr_has "did you mean 'binary'" &&
    ok info_fails_on_a_default_backend_that_names_no_backend ||
    bad "info_fails_on_a_default_backend_that_names_no_backend: $(grep default_backend "$tmp/out")"; }
printf '[backend.nosuch]\nx = 1\n' >"$tmp/no_plugin.ini"
check info_says_why_a_key_is_unused 0 "$bp" info --config "$tmp/no_plugin.ini" &&
  { stdout_has "UNUSED: no plugin named 'nosuch' is installed" && ok info_says_why_a_key_is_unused ||
    bad "info_says_why_a_key_is_unused: $(grep nosuch "$tmp/out")"; }

# learned NAME: the demo just run (check) ended above 90% accuracy (chance is
# 25%) with nothing on stderr.
learned() {
  local acc
  acc=$(sed -n 's/^final: .*accuracy \([0-9.]*\)%.*/\1/p' "$tmp/out")
  if [ -n "$acc" ] && awk "BEGIN{exit !($acc > 90)}" && stderr_quiet; then ok "$1 ($acc%)";
  else bad "$1: accuracy '$acc', stderr: $(head -c 300 "$tmp/err")"; fi
}
check demo_learns_well_above_chance 0 "$bp" demo --steps 150 && learned demo_learns_well_above_chance
# On the default backend, then on the reference (the CNN learns on every CPU backend).
check demo_cnn_learns_well_above_chance 0 "$bp" demo --model cnn --steps 30 &&
  learned demo_cnn_learns_well_above_chance
check demo_cnn_learns_on_the_reference_backend 0 "$bp" demo --model cnn --steps 30 --backend binary &&
  learned demo_cnn_learns_on_the_reference_backend

check demo_prints_what_training_moved_and_waited_for 0 "$bp" demo --steps 20 &&
  { stdout_has "synchronising reads" && stdout_has "host -> backend" &&
    ok demo_prints_what_training_moved_and_waited_for ||
    bad "demo_prints_what_training_moved_and_waited_for: $(tail -c 400 "$tmp/out")"; }

check demo_on_an_unknown_backend_fails_with_the_reason 1 "$bp" demo --backend nosuch &&
  { stderr_has nosuch && ok demo_on_an_unknown_backend_fails_with_the_reason ||
    bad demo_on_an_unknown_backend_fails_with_the_reason; }

check demo_rejects_a_bad_step_count 2 "$bp" demo --steps -3 && ok demo_rejects_a_bad_step_count

v="--driver 13000 --runtime 13000"
check cuda_check_native_for_a_built_architecture 0 "$bp" cuda-check --cc 9.0 --sass 80,90 --ptx 90 $v &&
  { stdout_has "^native" && ok cuda_check_native_for_a_built_architecture || bad cuda_check_native_for_a_built_architecture; }
check cuda_check_jit_from_ptx_on_a_newer_major 0 "$bp" cuda-check --cc 12.0 --sass 90 --ptx 90 $v &&
  { stdout_has "^jit" && ok cuda_check_jit_from_ptx_on_a_newer_major || bad cuda_check_jit_from_ptx_on_a_newer_major; }
check cuda_check_unsupported_names_the_rebuild_remedy 1 "$bp" cuda-check --cc 12.0 --sass 90a --ptx "" $v &&
  { stdout_has "^unsupported" && stdout_has CMAKE_CUDA_ARCHITECTURES &&
    ok cuda_check_unsupported_names_the_rebuild_remedy || bad cuda_check_unsupported_names_the_rebuild_remedy; }
check cuda_check_without_a_driver_is_unsupported 1 "$bp" cuda-check --cc 9.0 --sass 90 --ptx "" --driver 0 --runtime 13000 &&
  { stdout_has "no CUDA driver" && ok cuda_check_without_a_driver_is_unsupported || bad cuda_check_without_a_driver_is_unsupported; }
check cuda_check_rejects_a_malformed_cc 2 "$bp" cuda-check --cc nine && ok cuda_check_rejects_a_malformed_cc

if [ -n "$test_plugins" ]; then
  crash_dir="$test_plugins/isolated/bp_crash_open"
  check info_survives_a_plugin_that_crashes_in_open 0 env BP_PLUGIN_PATH="$crash_dir" "$bp" info &&
    { stdout_has "crash_open.*CRASHED while loading or opening (signal 11, SIGSEGV)" && stdout_has "bp_binary.so" &&
      stdout_has "default backend: \(cuda\|blas_cpu\|binary\):0" &&
      ok info_survives_a_plugin_that_crashes_in_open ||
      bad "info_survives_a_plugin_that_crashes_in_open: $(head -c 600 "$tmp/out")"; }
  check info_json_reports_the_crash_signal 0 env BP_PLUGIN_PATH="$crash_dir" "$bp" info --json &&
    { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
p=[p for p in d["plugins"] if p["name"]=="crash_open"][0]
assert p["crashed"]["signal"]==11 and p["crashed"]["name"]=="SIGSEGV", p
assert any(p["name"]=="binary" and p["opened"] for p in d["plugins"])' "$tmp/out" &&
      ok info_json_reports_the_crash_signal || bad info_json_reports_the_crash_signal; }
  check info_survives_a_crashing_plugin_on_the_preference_list 0 \
    env BP_PLUGIN_PATH="$crash_dir" BP_DEFAULT_BACKEND="crash_open, binary" "$bp" info &&
    { stdout_has "crashed a probe process" && ok info_survives_a_crashing_plugin_on_the_preference_list ||
      bad "info_survives_a_crashing_plugin_on_the_preference_list: $(tail -c 400 "$tmp/out")"; }
fi

# inspect: a checkpoint written by hand (82-byte header, one f32 tensor)
printf '\x52\x00\x00\x00\x00\x00\x00\x00{"__metadata__":{"step":"7"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}' >"$tmp/ck.safetensors"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40' >>"$tmp/ck.safetensors"
check inspect_lists_tensors_and_metadata 0 "$bp" inspect "$tmp/ck.safetensors" &&
  { stdout_has "1 tensor" && stdout_has "w  *F32  *(2,)" && stdout_has "step = 7" &&
    ok inspect_lists_tensors_and_metadata || bad "inspect_lists_tensors_and_metadata: $(cat "$tmp/out")"; }
check inspect_json_is_valid_json 0 "$bp" inspect "$tmp/ck.safetensors" --json &&
  { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tensors"][0]["shape"]==[2] and d["metadata"]=={"step":"7"}' "$tmp/out" &&
    ok inspect_json_is_valid_json || bad "inspect_json_is_valid_json: $(cat "$tmp/out")"; }
check inspect_values_prints_each_tensor_as_bp_tensor_print_does 0 "$bp" inspect "$tmp/ck.safetensors" --values &&
  { stdout_has "^w: tensor (2,) f32 on binary:0$" && stdout_has '^\[1\. 2\.\]$' &&
    ok inspect_values_prints_each_tensor_as_bp_tensor_print_does ||
    bad "inspect_values_prints_each_tensor_as_bp_tensor_print_does: $(cat "$tmp/out")"; }
check inspect_values_in_json 0 "$bp" inspect "$tmp/ck.safetensors" --values --json &&
  { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["tensors"][0]["values"].endswith("[1. 2.]")' "$tmp/out" &&
    ok inspect_values_in_json || bad "inspect_values_in_json: $(cat "$tmp/out")"; }
printf 'not a checkpoint' >"$tmp/bad.safetensors"
check inspect_reports_a_broken_file_with_the_reason 1 "$bp" inspect "$tmp/bad.safetensors" &&
  { stderr_has "not a valid safetensors file" && stdout_empty &&
    ok inspect_reports_a_broken_file_with_the_reason || bad inspect_reports_a_broken_file_with_the_reason; }

if [ -n "$test_plugins" ]; then
  sim="$test_plugins/devsim/bp_devsim.so"
  per_step() { sed -n "s/^  synchronising reads *[0-9]* *\([0-9.]*\) per step/\1/p" "$tmp/out"; }
  check demo_sync_every_one_waits_for_the_device_every_step 0 "$bp" demo --steps 100 --backend "$sim" --sync-every 1 &&
    { waits=$(per_step)
      if [ -n "$waits" ] && awk "BEGIN{exit !($waits >= 2)}"; then
        ok "demo_sync_every_one_waits_for_the_device_every_step ($waits per step)"
      else bad "demo_sync_every_one_waits_for_the_device_every_step: '$waits'"; fi; }
  check demo_without_sync_every_waits_only_when_reporting 0 "$bp" demo --steps 100 --backend "$sim" &&
    { waits=$(per_step)
      if [ -n "$waits" ] && awk "BEGIN{exit !($waits < 1)}"; then
        ok "demo_without_sync_every_waits_only_when_reporting ($waits per step)"
      else bad "demo_without_sync_every_waits_only_when_reporting: '$waits'"; fi; }
fi

# conform's output. Off a terminal (here: a file) the progress is a line per
# tenth of the rows, the last "[N/N] 100%" with N every row the totals count.
check conform_progress_is_a_line_per_tenth_off_a_terminal 0 \
  "$bp" conform --backend binary --op add --op 'contract.*' &&
  { lines=$(grep -c '^conform: \[' "$tmp/err")
    last=$(grep '^conform: \[' "$tmp/err" | tail -1)
    total=$(awk '/passed, .* failed, .* unsupported, .* crashed$/ {print $1 + $3 + $5 + $7}' "$tmp/out")
    if [ "$lines" -le 11 ] && [ "$lines" -ge 2 ] && [[ "$last" == "conform: [$total/$total] 100% "* ]]; then
      ok "conform_progress_is_a_line_per_tenth_off_a_terminal ($lines lines, $total rows)"
    else bad "conform_progress_is_a_line_per_tenth_off_a_terminal: $lines lines, last '$last', total '$total'"; fi; }
# On a terminal, one line rewritten in place (script(1) gives the command one).
if command -v script >/dev/null; then
  script -qec "'$bp' conform --backend binary --op add >/dev/null" /dev/null >"$tmp/tty" 2>&1
  newlines=$(tr -cd '\n' <"$tmp/tty" | wc -c)
  if grep -q $'\rconform: \\[' "$tmp/tty" && [ "$newlines" -eq 1 ] && grep -q "done in" "$tmp/tty"; then
    ok conform_progress_on_a_terminal_is_one_line_rewritten_in_place
  else bad "conform_progress_on_a_terminal_is_one_line_rewritten_in_place: $newlines newlines: $(head -c 300 "$tmp/tty" | od -c | head -5)"; fi
else
  echo "ok - conform_progress_on_a_terminal_is_one_line_rewritten_in_place # SKIP no script(1)"
fi
# The summary's columns line up whatever the op names' lengths.
check conform_summary_columns_line_up 0 "$bp" conform --backend binary --op 'softmax*' &&
  { widths=$(sed -n '/^  op  /,/ passed, /p' "$tmp/out" | sed '$d' | awk '{print length($0)}' | sort -u | wc -l)
    stdout_has "softmax_cross_entropy_loss" && [ "$widths" -eq 1 ] && ok conform_summary_columns_line_up ||
      bad "conform_summary_columns_line_up: $(sed -n '/^  op  /,/ passed, /p' "$tmp/out")"; }
# An unknown backend's error keeps its lines (the places searched, one a line).
check conform_an_unknown_backend_keeps_the_lines_of_its_error 1 "$bp" conform --backend nosuch &&
  { grep -q "^backplane conform: cannot open backend nosuch: .*Searched, in order:$" "$tmp/err" &&
    grep -q "^    built-in: " "$tmp/err" && grep -q "^  Plugins found:" "$tmp/err" &&
    ok conform_an_unknown_backend_keeps_the_lines_of_its_error ||
    bad "conform_an_unknown_backend_keeps_the_lines_of_its_error: $(head -c 400 "$tmp/err")"; }

# bench times every op of a unary, binary or reduce kind of the op table,
# each in a dtype it accepts by default (bitwise_and: i32), and refuses the
# rest by name.
check bench_times_every_unary_binary_and_reduce_op 0 "$bp" bench --backend binary \
  --op celu --op bitwise_and --op reduce_l2 --op logical_xor --size 64 --json --min-time 0.001 --min-reps 1 &&
  { python3 -c 'import json, sys; rows = json.load(open(sys.argv[1]))
assert [r["op"] for r in rows] == ["celu", "bitwise_and", "reduce_l2", "logical_xor"], rows
assert all(r["median_s"] > 0 for r in rows), rows' "$tmp/out" &&
    ok bench_times_every_unary_binary_and_reduce_op ||
    bad "bench_times_every_unary_binary_and_reduce_op: $(head -c 400 "$tmp/out")"; }
check bench_refuses_an_op_it_cannot_time_by_name 2 "$bp" bench --op one_hot &&
  { stderr_has "one_hot" && ok bench_refuses_an_op_it_cannot_time_by_name ||
    bad "bench_refuses_an_op_it_cannot_time_by_name: $(head -c 300 "$tmp/err")"; }

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
