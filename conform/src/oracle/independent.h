/* Included last by every oracle source file. The oracle checks the library's
 * own conversions and generator (<backplane/cast.h>, the inline conversions
 * of <backplane/dtype.h>, <backplane/philox.h>): it must never call them, so
 * the build refuses their names here. Its own statements are cast_rules.c
 * and philox.c. */
#ifndef BP_CONFORM_ORACLE_INDEPENDENT_H
#define BP_CONFORM_ORACLE_INDEPENDENT_H

#if defined(__GNUC__)
#pragma GCC poison bp_elem_load_f64 bp_elem_store_f64 bp_elem_load_i64 bp_elem_store_i64
#pragma GCC poison bp_sat_f64 bp_clamp_i64
#pragma GCC poison bp_f16_to_f32 bp_f32_to_f16 bp_bf16_to_f32 bp_f32_to_bf16 bp_f64_to_f16
#pragma GCC poison bp_f64_to_bf16 bp_i64_to_f16 bp_i64_to_bf16
#pragma GCC poison bp_philox4x32_10 bp_philox_uniform01 bp_philox_normal01
#endif

#endif
