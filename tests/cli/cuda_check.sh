#!/usr/bin/env bash
# ctest entry "cli_cuda_check": backplane cuda-check as the offline answer to
# "would this build run on that GPU?" (issue 11 part 5). The decision itself
# is table-tested in test_cuda_cc.c; these check the command line: spellings
# accepted, what is assumed and said, help, exit codes.
# usage: cuda_check.sh PATH/TO/backplane
set -u
bp=$1
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
  echo "not ok - $name: exit $got, wanted $want"; sed 's/^/    stdout: /' "$tmp/out" | head -3
  sed 's/^/    stderr: /' "$tmp/err" | head -3
  fail=$((fail + 1))
  return 1
}
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; sed 's/^/    stdout: /' "$tmp/out" | head -3; fail=$((fail + 1)); }
stdout_has() { grep -q -- "$1" "$tmp/out"; }
stderr_has() { grep -q -- "$1" "$tmp/err"; }

rt="--runtime 13.0"

check without_driver_it_says_what_it_assumed 0 "$bp" cuda-check --cc 9.0 --sass 90 --ptx "" $rt &&
  { stdout_has "^native" && stdout_has "driver assumed to support CUDA 13.0" &&
    ok without_driver_it_says_what_it_assumed || bad without_driver_it_says_what_it_assumed; }

for d in 13000 13.0; do
  check "driver_${d}_is_read_as_cuda_13_0" 0 "$bp" cuda-check --cc 9.0 --sass 90 --ptx "" --driver $d $rt &&
    { stdout_has "^native" && ! stdout_has "assumed" && ok "driver_${d}_is_read_as_cuda_13_0" ||
      bad "driver_${d}_is_read_as_cuda_13_0"; }
done

check driver_12_8_as_nvidia_smi_prints_it_is_older_than_the_runtime 1 \
  "$bp" cuda-check --cc 9.0 --sass 90 --ptx "" --driver 12.8 $rt &&
  { stdout_has "CUDA 12.8 (12080)" && stdout_has "from 11.8 to 12.8" &&
    ok driver_12_8_as_nvidia_smi_prints_it_is_older_than_the_runtime ||
    bad driver_12_8_as_nvidia_smi_prints_it_is_older_than_the_runtime; }

check a_driver_release_number_is_refused_with_what_to_give 2 "$bp" cuda-check --cc 9.0 --driver 575.57.08 &&
  { stderr_has "driver release" && stderr_has "CUDA Version" &&
    ok a_driver_release_number_is_refused_with_what_to_give ||
    bad a_driver_release_number_is_refused_with_what_to_give; }

for a in 120 sm_120 compute_120 120-real 120a; do
  check "sass_spelled_${a}_is_accepted" 0 "$bp" cuda-check --cc 12.0 --sass $a --ptx "" --driver 13.0 $rt &&
    { stdout_has "^native" && ok "sass_spelled_${a}_is_accepted" || bad "sass_spelled_${a}_is_accepted"; }
done

check ptx_spelled_compute_90_is_jit_compiled_on_12_0 0 \
  "$bp" cuda-check --cc 12.0 --sass "" --ptx compute_90 --driver 13.0 $rt &&
  { stdout_has "^jit" && ok ptx_spelled_compute_90_is_jit_compiled_on_12_0 ||
    bad ptx_spelled_compute_90_is_jit_compiled_on_12_0; }

check a_bad_spelling_names_the_entry_and_the_accepted_ones 2 "$bp" cuda-check --cc 12.0 --sass sm_12x &&
  { stderr_has "'12x'" && stderr_has "120-real" &&
    ok a_bad_spelling_names_the_entry_and_the_accepted_ones ||
    bad a_bad_spelling_names_the_entry_and_the_accepted_ones; }

check the_remedy_names_the_cmake_spelling_and_the_toolkit 1 \
  "$bp" cuda-check --cc 12.0 --sass 90 --ptx "" --driver 13.0 $rt &&
  { stdout_has "CMAKE_CUDA_ARCHITECTURES including 120-real" && stdout_has "120-virtual" &&
    stdout_has "sm_120 needs CUDA 12.8 or newer" &&
    ok the_remedy_names_the_cmake_spelling_and_the_toolkit ||
    bad the_remedy_names_the_cmake_spelling_and_the_toolkit; }

check cuda_13_is_not_offered_for_sm_70 1 "$bp" cuda-check --cc 7.0 --sass 80 --ptx "" --driver 13.0 $rt &&
  { stdout_has "CUDA 13 builds nothing below sm_75" && ! stdout_has "rebuild with CMAKE" &&
    ok cuda_13_is_not_offered_for_sm_70 || bad cuda_13_is_not_offered_for_sm_70; }

check help_tells_how_to_read_the_cc_and_quotes_the_error 0 "$bp" cuda-check --help &&
  { stdout_has "nvidia-smi --query-gpu=compute_cap --format=csv" &&
    stdout_has "no kernel image is available for execution" && stdout_has "CUDA Version" &&
    ok help_tells_how_to_read_the_cc_and_quotes_the_error ||
    bad help_tells_how_to_read_the_cc_and_quotes_the_error; }

echo "# cuda-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
