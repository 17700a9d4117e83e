/* The BINARY kind's kernel, bpk_binary: its loops are elementwise_loops.h's. */
#include "elementwise_loops.h"

/* ---- binary ------------------------------------------------------------- */

/* Arithmetic on every numeric dtype. FEXPR computes in CT (float for
 * f16/bf16/f32, double for f64); IFN is the integer helper's stem. */
#define NUMERIC_BIN_L(LOOP, FEXPR, IFN)                                                 \
    switch (dt) {                                                                       \
    case BP_F64: LOOP(double, double, ID, double, ID, FEXPR); return BP_OK;            \
    case BP_F32: LOOP(float, float, ID, float, ID, FEXPR); return BP_OK;                \
    case BP_F16: BIN_LOOP_S(uint16_t, float, F16_F, uint16_t, F_F16, FEXPR); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, float, BF16_F, uint16_t, F_BF16, FEXPR); return BP_OK; \
    case BP_I64: LOOP(int64_t, int64_t, ID, int64_t, ID, IFN##_i64(p, q)); return BP_OK; \
    case BP_I32: LOOP(int32_t, int32_t, ID, int32_t, ID, IFN##_i32(p, q)); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int8_t, ID, int8_t, ID, IFN##_i8(p, q)); return BP_OK;   \
    case BP_U8: BIN_LOOP_S(uint8_t, uint8_t, ID, uint8_t, ID, IFN##_u8(p, q)); return BP_OK; \
    case BP_I16: BIN_LOOP_S(int16_t, int16_t, ID, int16_t, ID, IFN##_i16(p, q)); return BP_OK; \
    case BP_U16: BIN_LOOP_S(uint16_t, uint16_t, ID, uint16_t, ID, IFN##_u16(p, q)); return BP_OK; \
    case BP_U32: BIN_LOOP_S(uint32_t, uint32_t, ID, uint32_t, ID, IFN##_u32(p, q)); return BP_OK; \
    case BP_U64: LOOP(uint64_t, uint64_t, ID, uint64_t, ID, IFN##_u64(p, q)); return BP_OK; \
    default: break;                                                                     \
    }                                                                                   \
    break
#define NUMERIC_BIN(FEXPR, IFN) NUMERIC_BIN_L(BIN_LOOP, FEXPR, IFN)

/* The float dtypes' cases: EXPR of double p and q, rounded once; f64 and
 * f32 by LOOP (BIN_LOOP has the broadcast fast paths), f16 and bf16 by
 * BIN_LOOP_S. */
#define FLOAT_CASES_D(LOOP, EXPR)                                                       \
    case BP_F64: LOOP(double, double, ID, double, ID, EXPR); return BP_OK;             \
    case BP_F32: LOOP(float, double, TO_F64, float, TO_F32, EXPR); return BP_OK;       \
    case BP_F16: BIN_LOOP_S(uint16_t, double, F16_F, uint16_t, F_F16, EXPR); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, double, BF16_F, uint16_t, F_BF16, EXPR); return BP_OK;

/* As NUMERIC_BIN, but floats compute in double and round once. */
#define NUMERIC_BIN_D(FEXPR, IFN)                                                       \
    switch (dt) {                                                                       \
    FLOAT_CASES_D(BIN_LOOP_S, FEXPR)                                                    \
    default: NUMERIC_BIN_L(BIN_LOOP_S, FEXPR, IFN);                                     \
    }                                                                                   \
    break

/* Comparisons on every dtype -> bool; integers compare exactly in their own
 * type, bool compares as 0/1, f16/bf16 exactly as float. */
#define COMPARE_BIN(OPR)                                                                \
    switch (dt) {                                                                       \
    case BP_BOOL: BIN_LOOP_S(uint8_t, int, NZ, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_U8: BIN_LOOP_S(uint8_t, uint8_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int8_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I32: BIN_LOOP(int32_t, int32_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I64: BIN_LOOP(int64_t, int64_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F16: BIN_LOOP_S(uint16_t, float, F16_F, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_BF16: BIN_LOOP_S(uint16_t, float, BF16_F, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F32: BIN_LOOP(float, float, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_F64: BIN_LOOP(double, double, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_I16: BIN_LOOP_S(int16_t, int16_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_U16: BIN_LOOP_S(uint16_t, uint16_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_U32: BIN_LOOP_S(uint32_t, uint32_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    case BP_U64: BIN_LOOP(uint64_t, uint64_t, ID, uint8_t, ID, (uint8_t)(p OPR q)); return BP_OK; \
    }                                                                                   \
    break

#define LOGICAL_BIN(EXPR)                                                               \
    if (dt != BP_BOOL)                                                                  \
        break;                                                                          \
    BIN_LOOP_S(uint8_t, int, NZ, uint8_t, ID, (uint8_t)(EXPR));                           \
    return BP_OK

#define max_i64(p, q) (p > q ? p : q)
#define max_i32 max_i64
#define max_i8 max_i64
#define max_u8 max_i64
#define max_i16 max_i64
#define max_u16 max_i64
#define max_u32 max_i64
#define max_u64 max_i64
#define min_i64(p, q) (p < q ? p : q)
#define min_i32 min_i64
#define min_i8 min_i64
#define min_u8 min_i64
#define min_i16 min_i64
#define min_u16 min_i64
#define min_u32 min_i64
#define min_u64 min_i64

/* ---- integer helpers of fmod, prelu, the bitwise ops and the bit shifts:
 * exact in int64, wrapped to the dtype (two's complement). A u64 operand is
 * its bits in the int64: the helpers that depend on the sign or the order
 * (fmod, prelu, the right shift) compute it unsigned. -------------------- */

static inline int dtype_bits(bp_dtype dt) { return (int)bp_dtype_size(dt) * 8; }

/* a % b truncating (C), with x % 0 and x % -1 (MIN % -1 overflows in C) 0. */
static inline int64_t fmod_i(bp_dtype dt, int64_t a, int64_t b)
{
    if (dt == BP_U64)
        return b == 0 ? 0 : (int64_t)((uint64_t)a % (uint64_t)b);
    return b == 0 || b == -1 ? 0 : a % b;
}

/* prelu: x below zero times the slope (an unsigned x never is) */
static inline int64_t prelu_i(bp_dtype dt, int64_t p, int64_t q)
{
    return p < 0 && dt != BP_U64 ? bpk_wrap_int(dt, (uint64_t)p * (uint64_t)q) : p;
}

static inline int64_t shift_left(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0 || b >= dtype_bits(dt))
        return 0;
    return bpk_wrap_int(dt, (uint64_t)a << b);
}

/* Arithmetic for signed values (ones shifted in), spelled without relying on
 * the implementation-defined >> of a negative number. */
static inline int64_t shift_right(bp_dtype dt, int64_t a, int64_t b)
{
    if (dt == BP_U64) /* zeros shifted in; b is an unsigned count */
        return (uint64_t)b >= 64 ? 0 : (int64_t)((uint64_t)a >> b);
    if (b < 0 || b >= dtype_bits(dt))
        return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;
}

#define TO_I64(v) ((int64_t)(v))
#define TO_I32(v) ((int32_t)(v))
#define TO_I8(v) ((int8_t)(v))
#define TO_U8(v) ((uint8_t)(v))
#define TO_I16(v) ((int16_t)(v))
#define TO_U16(v) ((uint16_t)(v))
#define TO_U32(v) ((uint32_t)(v))
#define TO_U64(v) ((uint64_t)(v))

/* EXPR of int64 p and q on every integer dtype; EXPR's value is already in
 * the dtype's range. */
#define INT_CASES(EXPR)                                                                 \
    case BP_I64: BIN_LOOP(int64_t, int64_t, ID, int64_t, ID, EXPR); return BP_OK;      \
    case BP_I32: BIN_LOOP(int32_t, int64_t, TO_I64, int32_t, TO_I32, EXPR); return BP_OK; \
    case BP_I8: BIN_LOOP_S(int8_t, int64_t, TO_I64, int8_t, TO_I8, EXPR); return BP_OK; \
    case BP_U8: BIN_LOOP_S(uint8_t, int64_t, TO_I64, uint8_t, TO_U8, EXPR); return BP_OK; \
    case BP_I16: BIN_LOOP_S(int16_t, int64_t, TO_I64, int16_t, TO_I16, EXPR); return BP_OK; \
    case BP_U16: BIN_LOOP_S(uint16_t, int64_t, TO_I64, uint16_t, TO_U16, EXPR); return BP_OK; \
    case BP_U32: BIN_LOOP_S(uint32_t, int64_t, TO_I64, uint32_t, TO_U32, EXPR); return BP_OK; \
    case BP_U64: BIN_LOOP(uint64_t, int64_t, TO_I64, uint64_t, TO_U64, EXPR); return BP_OK;
#define INT_BIN(EXPR)                                                                   \
    switch (dt) {                                                                       \
    INT_CASES(EXPR)                                                                     \
    default: break;                                                                     \
    }                                                                                   \
    break

/* FEXPR of double p and q on every float dtype, rounded once; IEXPR as
 * INT_BIN's. */
#define FLOAT_D_INT_BIN(FEXPR, IEXPR)                                                   \
    switch (dt) {                                                                       \
    FLOAT_CASES_D(BIN_LOOP, FEXPR)                                                      \
    INT_CASES(IEXPR)                                                                    \
    default: break;                                                                     \
    }                                                                                   \
    break

/* One typed loop per op and dtype (the op and the dtype chosen once, not per
 * element), so that the cheap ones vectorise. Each op is a function of its
 * own, compiled per ISA level: one function holding every op's loops took
 * the compiler minutes (its cost grows faster than the function). An op
 * answers BP_ERR_UNSUPPORTED_OP for a dtype it does not compute. */
#define BIN_OP(NAME, ...)                                                               \
    BPK_CLONES static bp_status NAME(bp_dtype dt, const bp_view *a, const bp_view *b,   \
                                     const bp_view *out)                                \
    {                                                                                   \
        do {                                                                            \
            __VA_ARGS__;                                                                \
        } while (0);                                                                    \
        return BP_ERR_UNSUPPORTED_OP;                                                   \
    }

BIN_OP(bin_add, NUMERIC_BIN(F_OF(add, p)(p, q), add))
BIN_OP(bin_sub, NUMERIC_BIN(F_OF(sub, p)(p, q), sub))
BIN_OP(bin_mul, NUMERIC_BIN(F_OF(mul, p)(p, q), mul))
BIN_OP(bin_div, NUMERIC_BIN(F_OF(div, p)(p, q), div))
BIN_OP(bin_maximum, NUMERIC_BIN(F_OF(maximum, p)(p, q), max))
BIN_OP(bin_minimum, NUMERIC_BIN(F_OF(minimum, p)(p, q), min))
BIN_OP(bin_pow, NUMERIC_BIN_D(bpf_pow(p, q), pow))
BIN_OP(bin_mod, NUMERIC_BIN_L(BIN_LOOP_S, F_OF(mod, p)(p, q), mod))
BIN_OP(bin_fmod, FLOAT_D_INT_BIN(bpf_fmod(p, q), fmod_i(dt, p, q)))
BIN_OP(bin_prelu, FLOAT_D_INT_BIN(bpf_prelu(p, q), prelu_i(dt, p, q)))
BIN_OP(bin_eq, COMPARE_BIN(==))
BIN_OP(bin_ne, COMPARE_BIN(!=))
BIN_OP(bin_lt, COMPARE_BIN(<))
BIN_OP(bin_le, COMPARE_BIN(<=))
BIN_OP(bin_gt, COMPARE_BIN(>))
BIN_OP(bin_ge, COMPARE_BIN(>=))
BIN_OP(bin_logical_and, LOGICAL_BIN(p && q))
BIN_OP(bin_logical_or, LOGICAL_BIN(p || q))
BIN_OP(bin_logical_xor, LOGICAL_BIN(p != q))
BIN_OP(bin_bitwise_and, INT_BIN(p & q))
BIN_OP(bin_bitwise_or, INT_BIN(p | q))
BIN_OP(bin_bitwise_xor, INT_BIN(bpk_wrap_int(dt, (uint64_t)(p ^ q))))
BIN_OP(bin_shift_left, INT_BIN(shift_left(dt, p, q)))
BIN_OP(bin_shift_right, INT_BIN(shift_right(dt, p, q)))

typedef bp_status (*bin_fn)(bp_dtype, const bp_view *, const bp_view *, const bp_view *);

/* Each op's function by its code; NULL for the codes of other kinds. */
static const bin_fn bin_kernels[BP_OP_COUNT] = {
    [BP_OP_ADD] = bin_add,
    [BP_OP_SUB] = bin_sub,
    [BP_OP_MUL] = bin_mul,
    [BP_OP_DIV] = bin_div,
    [BP_OP_MAXIMUM] = bin_maximum,
    [BP_OP_MINIMUM] = bin_minimum,
    [BP_OP_POW] = bin_pow,
    [BP_OP_MOD] = bin_mod,
    [BP_OP_FMOD] = bin_fmod,
    [BP_OP_PRELU] = bin_prelu,
    [BP_OP_EQ] = bin_eq,
    [BP_OP_NE] = bin_ne,
    [BP_OP_LT] = bin_lt,
    [BP_OP_LE] = bin_le,
    [BP_OP_GT] = bin_gt,
    [BP_OP_GE] = bin_ge,
    [BP_OP_LOGICAL_AND] = bin_logical_and,
    [BP_OP_LOGICAL_OR] = bin_logical_or,
    [BP_OP_LOGICAL_XOR] = bin_logical_xor,
    [BP_OP_BITWISE_AND] = bin_bitwise_and,
    [BP_OP_BITWISE_OR] = bin_bitwise_or,
    [BP_OP_BITWISE_XOR] = bin_bitwise_xor,
    [BP_OP_BITSHIFT_LEFT] = bin_shift_left,
    [BP_OP_BITSHIFT_RIGHT] = bin_shift_right,
};

/* Binary ops take no parameters today; p is the op entry's, for the first
 * that will. */
bp_status bpk_binary(void *dev, bp_op op, const bp_op_params *p_, const bp_view *a,
                     const bp_view *b, const bp_view *out)
{
    (void)p_;
    bin_fn fn = (unsigned)op < (unsigned)BP_OP_COUNT ? bin_kernels[op] : NULL;
    bp_status st = fn ? fn(a->dtype, a, b, out) : BP_ERR_UNSUPPORTED_OP;
    if (st == BP_ERR_UNSUPPORTED_OP)
        return bpk_fail(dev, st, "binary: binary op %s not implemented for %s", bp_op_name(op),
                        bp_dtype_name(a->dtype));
    return st;
}
