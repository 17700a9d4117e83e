/* The elementwise functions of two tensors of ABI 1.4: fmod, prelu, the
 * bitwise ops and the bit shifts (ops.h). Floats compute in double and
 * round once (fmod is exact; prelu's product is rounded once). Integers are
 * exact in int64, wrapped to the dtype (two's complement). */
#include <math.h>

#include "binary.h"

static inline int dtype_bits(bp_dtype dt) { return (int)bp_dtype_size(dt) * 8; }

/* a % b truncating (C), with x % 0 and x % -1 (MIN % -1 overflows in C) 0. */
static inline int64_t fmod_i(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }

static inline int64_t shift_left(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0 || b >= dtype_bits(dt))
        return 0;
    return bpb_wrap_int(dt, (uint64_t)a << b);
}

/* Arithmetic for signed values (ones shifted in), spelled without relying on
 * the implementation-defined >> of a negative number. */
static inline int64_t shift_right(bp_dtype dt, int64_t a, int64_t b)
{
    if (b < 0 || b >= dtype_bits(dt))
        return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;
}

static int64_t int_op(bp_op op, bp_dtype dt, int64_t a, int64_t b)
{
    switch (op) {
    case BP_OP_FMOD: return fmod_i(a, b);
    case BP_OP_PRELU: return a < 0 ? bpb_wrap_int(dt, (uint64_t)a * (uint64_t)b) : a;
    case BP_OP_BITWISE_AND: return a & b;
    case BP_OP_BITWISE_OR: return a | b;
    case BP_OP_BITWISE_XOR: return bpb_wrap_int(dt, (uint64_t)(a ^ b));
    case BP_OP_BITSHIFT_LEFT: return shift_left(dt, a, b);
    default: return shift_right(dt, a, b);
    }
}

static double float_op(bp_op op, double a, double b)
{
    if (op == BP_OP_FMOD)
        return fmod(a, b);
    return a < 0 ? a * b : a; /* PRELU */
}

bp_status bpb_op_binary(void *dev, bp_op op, const bp_op_params *p, int32_t n_in,
                        const bp_view *const *in, int32_t n_out, const bp_view *const *out_v)
{
    (void)p, (void)n_in, (void)n_out;
    const bp_view *a = in[0], *b = in[1], *out = out_v[0];
    bp_dtype dt = a->dtype;
    bool is_float = bp_dtype_is_float(dt);
    if (is_float && op != BP_OP_FMOD && op != BP_OP_PRELU)
        return bpb_fail(dev, BP_ERR_UNSUPPORTED_OP, "binary: %s not implemented for %s",
                        bp_op_name(op), bp_dtype_name(dt));
    size_t es = bp_dtype_size(dt);
    bpb_iter it;
    int64_t pos[3];
    bpb_iter_init(&it, 3, (const bp_view *[]){out, a, b});
    while (bpb_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *pa = bpb_base(a) + (pos[1] + i * it.inner_stride[1]) * (int64_t)es;
            const char *pb = bpb_base(b) + (pos[2] + i * it.inner_stride[2]) * (int64_t)es;
            char *po = bpb_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)es;
            if (is_float)
                bp_elem_store_f64(dt, po, float_op(op, bp_elem_load_f64(dt, pa),
                                                   bp_elem_load_f64(dt, pb)));
            else
                bp_elem_store_i64(dt, po, int_op(op, dt, bp_elem_load_i64(dt, pa),
                                                  bp_elem_load_i64(dt, pb)));
        }
    return BP_OK;
}
