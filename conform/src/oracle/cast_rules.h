/* The cast rules as the oracle states them (see cast_rules.c): independent of
 * the library's <backplane/cast.h>, which they check. */
#ifndef BP_CONFORM_CAST_RULES_H
#define BP_CONFORM_CAST_RULES_H

#include <stdint.h>

#include <backplane/dtype.h>

double cf_round(bp_dtype dt, double v);          /* v stored in float dt, as a double */
int64_t cf_int_of_f64(bp_dtype dt, double v);    /* float -> int/bool */
int64_t cf_int_of_i64(bp_dtype dt, int64_t v);   /* int -> int/bool, saturating */
double cf_round_i64(bp_dtype dt, int64_t v);     /* int -> float dt, rounded once */
int64_t cf_wrap(bp_dtype dt, int64_t v);         /* modular reduction */
int64_t cf_int_min(bp_dtype dt);
int64_t cf_int_max(bp_dtype dt);
double cf_ulp(bp_dtype dt, double v);            /* spacing of dt's values at |v| */
double cf_eps(bp_dtype dt);                      /* machine epsilon of a float dtype */
uint16_t cf_f16_bits(double v);                  /* round to nearest even */
double cf_f16_value(uint16_t bits);
uint16_t cf_bf16_bits(double v);
double cf_bf16_value(uint16_t bits);

#endif
