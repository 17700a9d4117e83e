/* Fuzzed op arguments (fz_op_args.h), decoded as fuzz_api has always
 * decoded them: its seeds stay valid. */
#include "fz_op_args.h"

#include <string.h>

static int64_t pick_i64(fz_in *in, const int64_t *v, unsigned n) { return v[fz_pick(in, n)]; }

static void fuzz_window(fz_in *in, bp_window *w)
{
    static const int64_t kern[] = {1, 2, 3, 0, -1, INT64_MAX};
    static const int64_t stride[] = {1, 2, 3, 0, -2, INT64_MAX};
    static const int64_t pad[] = {0, 1, 2, -1, INT64_MAX, INT64_MIN};
    static const int64_t outs[] = {0, 1, 5, -3, INT64_MAX};
    memset(w, 0, sizeof *w);
    uint8_t b = fz_u8(in);
    w->struct_size = b == 0xff ? 4 : b == 0xfe ? (uint32_t)sizeof *w + 64 : (uint32_t)sizeof *w;
    for (int j = 0; j < 3; j++) {
        w->kernel[j] = pick_i64(in, kern, 6);
        w->strides[j] = pick_i64(in, stride, 6);
        w->dilations[j] = pick_i64(in, stride, 6);
        w->pads[j] = pick_i64(in, pad, 6);
        w->pads[3 + j] = pick_i64(in, pad, 6);
        w->output_padding[j] = pick_i64(in, pad, 4);
        w->output_shape[j] = pick_i64(in, outs, 5);
    }
    w->auto_pad = (bp_auto_pad)fz_pick(in, 6);
    w->groups = pick_i64(in, stride, 6);
    w->ceil_mode = fz_bool(in);
    w->count_include_pad = fz_bool(in);
    w->storage_order = (int32_t)fz_pick(in, 3);
}

void fz_op_args(fz_in *in, bp_op op, bpt_op_args *a, fz_op_store *store)
{
    bp_window *w = &store->window;
    bp_resize_options *ro = &store->resize;
    int64_t *buf = store->buf, *ignore = &store->ignore;
    int32_t *axes = store->axes;
    double *scales = store->scales;
    static const int64_t small[] = {1, 2, 3, 0, 16, -1, INT64_MAX, INT64_MIN};
    static const double reals[] = {0.5, 3.0, 0.0, 1.0, 0.25, 4.0, -1.0, 1e-300, 1e300};
    /* slices, pads and shapes: 8 values each from the extents' edges */
    for (int k = 0; k < 4 * BP_MAX_RANK; k++)
        buf[k] = fz_u8(in) < 200 ? (int64_t)fz_pick(in, 4) - 1 : fz_extent(in);
    a->n_axes = (int32_t)fz_pick(in, 4);
    for (int k = 0; k < 3; k++)
        axes[k] = fz_axis(in);
    a->axes = fz_u8(in) == 0xff ? NULL : axes;
    a->keepdims = fz_bool(in);
    a->axis = fz_axis(in);
    a->k = pick_i64(in, small, 8);
    a->flag0 = fz_bool(in);
    a->flag1 = fz_bool(in);
    a->f0 = fz_double(in);
    a->f1 = fz_double(in);
    a->f2 = fz_double(in);
    if (op == BP_OP_ARANGE) /* a count of (stop - start) / step: kept within the caps */
        a->f0 = (double)fz_pick(in, 9) - 4, a->f1 = (double)fz_pick(in, 64),
        a->f2 = reals[fz_pick(in, 9)];
    a->dtype = (bp_dtype)fz_dtype(in);
    a->rank = fz_rank(in);
    a->shape = fz_u8(in) == 0xff ? NULL : buf + 3 * BP_MAX_RANK;
    for (int k = 0; k < BP_MAX_RANK; k++) /* creation and broadcast_to shapes: small */
        buf[3 * BP_MAX_RANK + k] = fz_u8(in) < 240 ? (int64_t)fz_pick(in, 5) : -1;
    a->perm = fz_u8(in) < 128 ? NULL : axes;
    a->starts = buf;
    a->stops = fz_u8(in) == 0xff ? NULL : buf + BP_MAX_RANK;
    a->steps = fz_u8(in) < 200 ? NULL : buf + 2 * BP_MAX_RANK;
    a->before = fz_u8(in) == 0xff ? NULL : buf;
    a->after = buf + BP_MAX_RANK;
    a->n_concat = (int32_t)fz_pick(in, 5) - 1;
    fuzz_window(in, w);
    a->window = fz_u8(in) == 0xff ? NULL : w;
    a->reduction = (int32_t)fz_pick(in, 7) - 1;
    *ignore = (int64_t)fz_pick(in, 4) - 2;
    a->ignore_index = fz_bool(in) ? ignore : NULL;
    for (int k = 0; k < BP_MAX_RANK; k++)
        scales[k] = reals[fz_pick(in, 9)];
    a->scales = fz_u8(in) < 200 ? scales : NULL;
    a->sizes = a->scales && fz_u8(in) < 230 ? NULL : buf + 3 * BP_MAX_RANK;
    *ro = (bp_resize_options)BP_RESIZE_OPTIONS_INIT;
    ro->mode = (bp_resize_mode)fz_pick(in, 4);
    ro->coordinates = (bp_resize_coordinates)fz_pick(in, 7);
    ro->nearest = (bp_resize_nearest)fz_pick(in, 5);
    ro->cubic_coeff_a = fz_double(in);
    ro->exclude_outside = fz_bool(in);
    if (fz_u8(in) == 0xff)
        ro->struct_size = 2;
    a->resize = fz_bool(in) ? ro : NULL;
    a->seed = fz_u64(in);
    a->offset = fz_u64(in);
}

bool fz_op_dtype_in_class(bp_op_dtypes cls, bp_dtype dt)
{
    switch (cls) {
    case BP_DTYPES_NUMERIC: return dt != BP_BOOL;
    case BP_DTYPES_FLOAT: return bp_dtype_is_float(dt);
    case BP_DTYPES_BOOL: return dt == BP_BOOL;
    case BP_DTYPES_INTEGER: return bp_dtype_is_int(dt);
    default: return true;
    }
}

