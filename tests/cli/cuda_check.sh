#!/usr/bin/env bash
# ctest entry "cli_cuda_check": backplane cuda-check as the answer to "would
# this build run on that GPU?", offline with --cc, and on this machine's GPUs
# without it. The decision itself is table-tested in test_cuda_cc.c; these
# check the command line: spellings accepted, what is assumed and said, help,
# exit codes. FAKE_CUDA_DIR holds a stand-in libcuda.so.1 (fake_libcuda.c)
# that describes the GPUs its environment names.
# usage: cuda_check.sh PATH/TO/backplane FAKE_CUDA_DIR
set -u
bp=$1 fake_cuda=$2
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
stdout_empty() { [ ! -s "$tmp/out" ]; }

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
  { stdout_has "the driver supports CUDA 12.8 but this build's runtime is CUDA 13.0" &&
    stdout_has "from 11.8 to 12.8" &&
    ok driver_12_8_as_nvidia_smi_prints_it_is_older_than_the_runtime ||
    bad driver_12_8_as_nvidia_smi_prints_it_is_older_than_the_runtime; }

# A driver is named by the CUDA version it supports and by its own release,
# never by CUDA's integer passed off as a driver version.
check a_driver_is_never_named_by_cuda_s_integer 1 \
  "$bp" cuda-check --cc 12.0 --sass 120 --ptx "" --driver 12.8 $rt &&
  { ! stdout_has 13000 && ! stdout_has 12080 && ! stdout_has "driver version" &&
    stdout_has "supports CUDA 13.0 or newer (release 580.65.06 or newer)" &&
    stdout_has "build with CUDA 12.8 and" && ! stdout_has "from 12.8 to 12.8" &&
    ok a_driver_is_never_named_by_cuda_s_integer || bad a_driver_is_never_named_by_cuda_s_integer; }

for drv in 575.57.08 575; do
  check "driver_release_${drv}_is_read_as_cuda_12_9" 0 \
    "$bp" cuda-check --cc 12.0 --sass 120 --ptx "" --driver $drv --runtime 12.8 &&
    { stdout_has "^native" && stdout_has "driver release $drv supports CUDA 12.9" &&
      ok "driver_release_${drv}_is_read_as_cuda_12_9" || bad "driver_release_${drv}_is_read_as_cuda_12_9"; }
done
check driver_release_575_is_older_than_a_cuda_13_runtime 1 \
  "$bp" cuda-check --cc 12.0 --sass 120 --ptx "" --driver 575.57.08 $rt &&
  { stdout_has "the driver supports CUDA 12.9 but" &&
    ok driver_release_575_is_older_than_a_cuda_13_runtime ||
    bad driver_release_575_is_older_than_a_cuda_13_runtime; }

check a_driver_release_is_no_runtime 2 "$bp" cuda-check --cc 9.0 --runtime 575.57.08 &&
  { stderr_has "driver release" && ok a_driver_release_is_no_runtime || bad a_driver_release_is_no_runtime; }

# An RTX 5090 (12.0) and a build of sm_120 made with CUDA 12.6: no such build
# exists (sm_120 needs 12.8), so it is not native.
check sm_120_from_cuda_12_6_is_not_native 1 \
  "$bp" cuda-check --cc 12.0 --sass 120 --ptx "" --runtime 12.6 --driver 12.9 &&
  { stdout_has "^unsupported: sm_120 needs CUDA 12.8 or newer" && stdout_has "rebuild with CUDA 12.8" &&
    ok sm_120_from_cuda_12_6_is_not_native || bad sm_120_from_cuda_12_6_is_not_native; }

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

# Without --cc: this machine's GPUs, as the driver describes them (here the
# stand-in driver library).
local_gpus() { env LD_LIBRARY_PATH="$fake_cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
check without_cc_it_checks_each_local_gpu 1 local_gpus FAKE_CUDA_DRIVER=12090 \
  FAKE_CUDA_DEVICES="12.0:NVIDIA GeForce RTX 5090,7.0:Tesla V100" \
  "$bp" cuda-check --sass 120 --ptx "" --runtime 12.8 &&
  { grep -q "^native: GPU 0 (NVIDIA GeForce RTX 5090, compute capability 12.0, .*CUDA 12.9)" "$tmp/out" &&
    grep -q "^unsupported: GPU 1 (Tesla V100, compute capability 7.0" "$tmp/out" &&
    [ "$(wc -l <"$tmp/out")" -eq 2 ] &&
    ok without_cc_it_checks_each_local_gpu || bad without_cc_it_checks_each_local_gpu; }
check a_local_gpu_that_runs_exits_0 0 local_gpus FAKE_CUDA_DRIVER=13000 FAKE_CUDA_DEVICES=9.0 \
  "$bp" cuda-check --sass 90 --ptx "" $rt &&
  { stdout_has "^native: GPU 0 (Fake GPU, compute capability 9.0" && ok a_local_gpu_that_runs_exits_0 ||
    bad a_local_gpu_that_runs_exits_0; }
check the_local_driver_can_be_overridden 1 local_gpus FAKE_CUDA_DRIVER=13000 FAKE_CUDA_DEVICES=9.0 \
  "$bp" cuda-check --sass 90 --ptx "" $rt --driver 12.8 &&
  { stdout_has "the driver supports CUDA 12.8" && ok the_local_driver_can_be_overridden ||
    bad the_local_driver_can_be_overridden; }
check without_a_gpu_it_says_so_and_how_to_ask_about_another 1 local_gpus FAKE_CUDA_DRIVER=13000 \
  FAKE_CUDA_DEVICES= "$bp" cuda-check &&
  { stdout_empty && stderr_has "no NVIDIA GPU to check" && stderr_has "sees no GPU" && stderr_has "--cc X.Y" &&
    ok without_a_gpu_it_says_so_and_how_to_ask_about_another ||
    bad without_a_gpu_it_says_so_and_how_to_ask_about_another; }
check without_a_driver_it_says_so 1 local_gpus FAKE_CUDA_DRIVER=0 FAKE_CUDA_DEVICES=9.0 "$bp" cuda-check &&
  { stderr_has "no usable CUDA driver" && ok without_a_driver_it_says_so || bad without_a_driver_it_says_so; }

echo "# cuda-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
