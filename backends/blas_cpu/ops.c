/* The op entries: the reference kernels (kernels.h) run over slabs of the
 * views (bpc_split), plus the vmath overrides where blas_cpu computes
 * differently (f32 EXP, f32 SOFTMAX, f32 POW, a dense f32/f64 SUM/MEAN to
 * one value).
 * Every other result is bit-identical to the binary backend's, because it is
 * computed by the same code: cutting a view changes which thread computes an
 * element, never how. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas_cpu.h"
#include "vmath.h"

/* Cost of one element in BPC_GRAIN units, from the op table's cost class: a
 * libm call (or a Philox draw) costs about BPC_HEAVY simple ones; a cheap
 * op on a half type about 4 (the conversions). pow is a log, an exp and
 * more: four heavy elements (its f32 kernel takes ~1.3 ns an element, exp's
 * ~0.3), so that 4096 elements are worth the second thread. */
static int64_t weight(bp_op op, bp_dtype dt)
{
    const bp_op_info *info = bp_op_info_of(op);
    if (op == BP_OP_POW)
        return 4 * BPC_HEAVY;
    if (!info || info->cost == BP_COST_HEAVY)
        return BPC_HEAVY;
    return dt == BP_F16 || dt == BP_BF16 ? 4 : 1;
}

/* ---- elementwise -------------------------------------------------------- */

typedef struct op_args {
    bp_op op;
    const bp_op_params *p;      /* unary, binary, reduce: the op's parameters */
    const uint16_t *table;      /* unary on a half type: the op's results by input bits */
    const void *value;          /* fill */
    uint64_t seed, offset;      /* random */
    double p0, p1;
    int64_t row;                /* random: elements per unit of the cut axis */
    int32_t axis, n_reduce;     /* gather, reduce */
} op_args;

/* f32/f64 ops with a vmath kernel (the level's unary) on dense runs; everything
 * else, and strided runs, by the reference. */
static bool has_vunary(const bpc_dev *d, bp_op op, bp_dtype dt)
{
    return d->vm->unary(op, dt, NULL, NULL, 0);
}

/* Heavy f16 ops through the level's f32 kernel (vmath.h's f16_unary), a
 * chunk of each dense run at a time; the elements it is unsure of (about 1
 * in 900 of uniform data, and zeros) take the reference one by one. So the
 * bits are the binary backend's, at f32 speed instead of a libm call an
 * element. */
static bp_status f16_by_reference(bpc_dev *d, bp_op op, const bp_op_params *p,
                                  const bp_view *x, const bp_view *out, int64_t xi, int64_t oi)
{
    bp_view x1 = *x, o1 = *out;
    x1.rank = o1.rank = 1;
    x1.shape[0] = o1.shape[0] = 1;
    x1.strides[0] = o1.strides[0] = 1;
    x1.offset += xi * (int64_t)sizeof(uint16_t);
    o1.offset += oi * (int64_t)sizeof(uint16_t);
    return bpk_unary(d, op, p, &x1, &o1);
}

static bool f16_unary(bpc_dev *d, bp_op op, const bp_op_params *p, const bp_view *x,
                      const bp_view *out, bp_status *st)
{
    if (x->dtype != BP_F16 || bp_op_info_of(op)->cost != BP_COST_HEAVY ||
        !has_vunary(d, op, BP_F32))
        return false;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    if (it.inner_stride[0] != 1 || it.inner_stride[1] != 1)
        return false;
    unsigned char unsure[BPC_F16_CHUNK];
    *st = BP_OK;
    while (*st == BP_OK && bpk_iter_next(&it, pos)) {
        const uint16_t *px = (const uint16_t *)(void *)bpk_base(x) + pos[1];
        uint16_t *po = (uint16_t *)(void *)bpk_base(out) + pos[0];
        for (int64_t c = 0; *st == BP_OK && c < it.inner; c += BPC_F16_CHUNK) {
            int64_t len = it.inner - c < BPC_F16_CHUNK ? it.inner - c : BPC_F16_CHUNK;
            int64_t n_unsure = d->vm->f16_unary(op, px + c, po + c, len, unsure);
            for (int64_t i = 0; n_unsure > 0 && *st == BP_OK && i < len; i++)
                if (unsure[i])
                    *st = f16_by_reference(d, op, p, x, out, pos[1] + c + i, pos[0] + c + i);
        }
    }
    return true;
}

/* o = table[x] along the views, any strides */
static void half_lookup(const uint16_t *table, const bp_view *x, const bp_view *out)
{
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    const uint16_t *px = (const uint16_t *)(void *)bpk_base(x);
    uint16_t *po = (uint16_t *)(void *)bpk_base(out);
    int64_t so = it.inner_stride[0], sx = it.inner_stride[1];
    while (bpk_iter_next(&it, pos)) {
        const uint16_t *xi = px + pos[1];
        uint16_t *oi = po + pos[0];
        for (int64_t i = 0; i < it.inner; i++)
            oi[i * so] = table[xi[i * sx]];
    }
}

/* x's op into out: a half table, the f16 path, the level's vector kernel
 * over dense runs (at once for one dense run, as a fused group's blocks
 * are), else the reference loops. */
static bp_status unary_views(bpc_dev *d, const op_args *a, const bp_view *x, const bp_view *out)
{
    bp_status st;
    if (a->table) {
        half_lookup(a->table, x, out);
        return BP_OK;
    }
    if (f16_unary(d, a->op, a->p, x, out, &st))
        return st;
    if (!has_vunary(d, a->op, x->dtype))
        return bpk_unary(d, a->op, a->p, x, out);
    size_t esz = bp_dtype_size(x->dtype);
    /* one dense run of more than one element: what the iterator would find
     * (a single element goes to the reference, as through the iterator) */
    if (x->rank == 1 && out->rank == 1 && out->shape[0] > 1 && x->strides[0] == 1 &&
        out->strides[0] == 1) {
        d->vm->unary(a->op, x->dtype, bpk_base(x), bpk_base(out), out->shape[0]);
        return BP_OK;
    }
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){out, x});
    if (it.inner_stride[0] != 1 || it.inner_stride[1] != 1)
        return bpk_unary(d, a->op, a->p, x, out);
    while (bpk_iter_next(&it, pos))
        d->vm->unary(a->op, x->dtype, bpk_base(x) + pos[1] * (int64_t)esz,
                     bpk_base(out) + pos[0] * (int64_t)esz, it.inner);
    return BP_OK;
}

static bp_status unary_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                            int64_t hi)
{
    return unary_views(d, args, &v[1], &v[0]);
}

/* Heavy unary ops on f16 and bf16 by table. Such an op has only 65536
 * inputs: once a device has been asked for BPC_HALF_TABLE_AFTER elements of
 * one (this call's included), it computes the op for every input with the
 * kernels it would use anyway (so the reference's bits: the f16 path above,
 * the reference for bf16) into a table of 128 KiB, kept until the device
 * closes, and every element from then on is a lookup. Two threads may both
 * make it; the first to publish wins. NULL (compute directly) before that,
 * for other ops and types, for an op with parameters (its table would hold
 * one choice of them), and when the table cannot be made (no memory). */
static const uint16_t *half_table(bpc_dev *d, bp_op op, const bp_view *x, const bp_view *out)
{
    const bp_op_info *info = bp_op_info_of(op);
    double defaults[2];
    if ((x->dtype != BP_F16 && x->dtype != BP_BF16) || out->dtype != x->dtype || !info ||
        info->cost != BP_COST_HEAVY || bp_op_param_defaults(op, defaults) > 0)
        return NULL;
    int t = x->dtype == BP_BF16;
    uint16_t *table = atomic_load_explicit(&d->half_table[t][op], memory_order_acquire);
    if (table)
        return table;
    if (atomic_fetch_add_explicit(&d->half_seen[t][op], bpk_numel(out), memory_order_relaxed) +
            bpk_numel(out) < BPC_HALF_TABLE_AFTER)
        return NULL;
    enum { N = 1 << 16 };
    uint16_t *in = malloc(N * sizeof *in);
    table = malloc(N * sizeof *table);
    bp_view vi = {.struct_size = sizeof vi, .buffer = in, .dtype = x->dtype, .rank = 1};
    vi.shape[0] = N;
    vi.strides[0] = 1;
    bp_view vo = vi;
    vo.buffer = table;
    const bp_op_params no_params = {.struct_size = sizeof no_params};
    op_args a = {.op = op, .p = &no_params};
    bp_status st = BP_ERR_OUT_OF_MEMORY;
    if (in && table) {
        for (int32_t i = 0; i < N; i++)
            in[i] = (uint16_t)i;
        st = bpc_split(d, 2, (const bp_view *[]){&vo, &vi}, 1, NULL, false,
                       (int64_t)N * weight(op, x->dtype), unary_slab, &a);
    }
    free(in);
    uint16_t *none = NULL;
    if (st != BP_OK ||
        !atomic_compare_exchange_strong_explicit(&d->half_table[t][op], &none, table,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        free(table); /* failed, or another thread's table was first: that one */
        return st == BP_OK ? none : NULL;
    }
    return table;
}

void bpc_half_tables_free(bpc_dev *d)
{
    for (int t = 0; t < 2; t++)
        for (int op = 0; op < BP_OP_COUNT; op++)
            free(atomic_load_explicit(&d->half_table[t][op], memory_order_relaxed));
}

bp_status bpc_unary(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                    const bp_view *out)
{
    const uint16_t *table = half_table(dev, op, x, out);
    if (table) {
        op_args a = {.op = op, .p = p, .table = table};
        return bpc_split(dev, 2, (const bp_view *[]){out, x}, out->rank, NULL, false,
                         bpk_numel(out), unary_slab, &a);
    }
    op_args a = {.op = op, .p = p};
    return bpc_split(dev, 2, (const bp_view *[]){out, x}, out->rank, NULL, false,
                     bpk_numel(out) * weight(op, x->dtype), unary_slab, &a);
}

/* f32 pow by the vmath pow_f32 where the output and the base run densely and the
 * exponent densely or as one value; everything else by the reference. */
static bool vpow_slab(const bpc_dev *d, const bp_view *a, const bp_view *b, const bp_view *out)
{
    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){out, a, b});
    if (it.inner_stride[0] != 1 || it.inner_stride[1] != 1 ||
        (it.inner_stride[2] != 1 && it.inner_stride[2] != 0))
        return false;
    const float *pa = (const float *)bpk_base(a), *pb = (const float *)bpk_base(b);
    float *po = (float *)bpk_base(out);
    while (bpk_iter_next(&it, pos))
        d->vm->pow_f32(pa + pos[1], pb + pos[2], it.inner_stride[2], po + pos[0], it.inner);
    return true;
}

static bp_status binary_views(bpc_dev *d, const op_args *a, const bp_view *x, const bp_view *y,
                              const bp_view *out)
{
    if (a->op == BP_OP_POW && x->dtype == BP_F32 && vpow_slab(d, x, y, out))
        return BP_OK;
    return bpk_binary(d, a->op, a->p, x, y, out);
}

static bp_status binary_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                             int64_t hi)
{
    return binary_views(d, args, &v[1], &v[2], &v[0]);
}

bp_status bpc_binary(void *dev, bp_op op, const bp_op_params *p, const bp_view *a,
                     const bp_view *b, const bp_view *out)
{
    op_args g = {.op = op, .p = p};
    return bpc_split(dev, 3, (const bp_view *[]){out, a, b}, out->rank, NULL, false,
                     bpk_numel(out) * weight(op, a->dtype), binary_slab, &g);
}

static bp_status where_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                            int64_t hi)
{
    return bpk_where(d, &v[1], &v[2], &v[3], &v[0]);
}

bp_status bpc_where(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                    const bp_view *out)
{
    return bpc_split(dev, 4, (const bp_view *[]){out, cond, a, b}, out->rank, NULL, false,
                     bpk_numel(out), where_slab, NULL);
}

static bp_status copy_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo, int64_t hi)
{
    return bpk_copy(d, ((const op_args *)args)->op, &v[1], &v[0]);
}

bp_status bpc_elementwise_block(bpc_dev *d, bp_op op, const bp_op_params *p,
                                const bp_view *const *in, const bp_view *out)
{
    op_args a = {.op = op, .p = p};
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return unary_views(d, &a, in[0], out);
    case BP_KIND_BINARY: return binary_views(d, &a, in[0], in[1], out);
    case BP_KIND_WHERE: return bpk_where(d, in[0], in[1], in[2], out);
    default: return bpk_copy(d, op, in[0], out);
    }
}

int64_t bpc_elementwise_weight(bp_op op, bp_dtype dt) { return weight(op, dt); }

bp_status bpc_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    op_args a = {.op = op};
    return bpc_split(dev, 2, (const bp_view *[]){out, src}, out->rank, NULL, false,
                     bpk_numel(out) * weight(op, src->dtype), copy_slab, &a);
}

static bp_status fill_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo, int64_t hi)
{
    return bpk_fill(d, &v[0], ((const op_args *)args)->value);
}

bp_status bpc_fill(void *dev, const bp_view *out, const void *value)
{
    op_args a = {.value = value};
    return bpc_split(dev, 1, (const bp_view *[]){out}, out->rank, NULL, false, bpk_numel(out),
                     fill_slab, &a);
}

/* A slab of rows [lo, hi) of the first axis of extent > 1 (bpc_split's
 * `leading`) is the row-major range starting at element lo * row: its
 * stream positions start there. */
static bp_status random_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                             int64_t hi)
{
    const op_args *a = args;
    return bpk_random(d, a->op, a->seed, a->offset + (uint64_t)(lo * a->row), a->p0, a->p1, &v[0]);
}

bp_status bpc_random(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                     const bp_view *out)
{
    op_args a = {.op = op, .seed = seed, .offset = offset, .p0 = p0, .p1 = p1, .row = 1};
    /* the leading cut is the first axis of extent > 1: row = the rest */
    int32_t k = 0;
    while (k < out->rank && out->shape[k] == 1)
        k++;
    for (int32_t j = k + 1; j < out->rank; j++)
        a.row *= out->shape[j];
    return bpc_split(dev, 1, (const bp_view *[]){out}, out->rank, NULL, true,
                     bpk_numel(out) * BPC_HEAVY, random_slab, &a);
}

/* ---- gather: out = x[:axis] + indices + x[axis+1:] ---------------------- */

static bp_status gather_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                             int64_t hi)
{
    return bpk_gather(d, &v[1], &v[2], ((const op_args *)args)->axis, &v[0]);
}

bp_status bpc_gather(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                     const bp_view *out)
{
    /* output axis k runs along: x's axis k before `axis`, indices' axis
     * k - axis within the index axes, x's axis k - rank(indices) + 1 after */
    int32_t vax[3][BP_MAX_RANK], ir = indices->rank;
    for (int32_t k = 0; k < out->rank; k++) {
        bool in_idx = k >= axis && k < axis + ir;
        vax[0][k] = k;
        vax[1][k] = k < axis ? k : in_idx ? -1 : k - ir + 1;
        vax[2][k] = in_idx ? k - axis : -1;
    }
    op_args a = {.axis = axis};
    return bpc_split(dev, 3, (const bp_view *[]){out, x, indices}, out->rank,
                     (const int32_t(*)[BP_MAX_RANK])vax, false, bpk_numel(out), gather_slab, &a);
}

/* ---- reductions: split over the kept (output) axes ---------------------- */

/* Dense f32/f64 rows (the reduced axes one contiguous run) for the ops with
 * a vmath row kernel: SUM/MEAN (the reference's own summation order, so the
 * same bits), MAX/MIN/ARG* (exact), LOGSUMEXP (two passes) and PROD (eight
 * partial products), the last two within the ops' tolerances. False: the
 * reference does the slab. */
static bool row_op(bp_op op)
{
    return op == BP_OP_SUM || op == BP_OP_MEAN || op == BP_OP_MAX || op == BP_OP_MIN ||
           op == BP_OP_ARGMAX || op == BP_OP_ARGMIN || op == BP_OP_LOGSUMEXP || op == BP_OP_PROD;
}

static void row_store(const bpc_vmath *vm, bp_op op, bp_dtype dt, const char *p, int64_t n, char *o)
{
    bool f32 = dt == BP_F32, is_max = op == BP_OP_MAX || op == BP_OP_ARGMAX;
    double r;
    switch (op) {
    case BP_OP_ARGMAX:
    case BP_OP_ARGMIN:
        *(int64_t *)o = f32 ? vm->arg_f32((const float *)p, n, is_max)
                            : vm->arg_f64((const double *)p, n, is_max);
        return;
    case BP_OP_MAX:
    case BP_OP_MIN:
        if (f32)
            *(float *)o = vm->extreme_f32((const float *)p, n, is_max);
        else
            *(double *)o = vm->extreme_f64((const double *)p, n, is_max);
        return;
    case BP_OP_LOGSUMEXP:
        r = f32 ? vm->logsumexp_f32((const float *)p, n) : vm->logsumexp_f64((const double *)p, n);
        break;
    case BP_OP_PROD:
        r = f32 ? vm->prod_f32((const float *)p, n) : vm->prod_f64((const double *)p, n);
        break;
    default:
        r = f32 ? vm->sum_f32((const float *)p, n) : vm->sum_f64((const double *)p, n);
        if (op == BP_OP_MEAN)
            r /= (double)n;
        break;
    }
    if (f32)
        *(float *)o = (float)r;
    else
        *(double *)o = r;
}

static bool reduce_rows(const bpc_vmath *vm, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out)
{
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || !row_op(op) || n_reduce < 1)
        return false;
    int32_t keep = x->rank - n_reduce;
    bp_view red = *x; /* the reduced axes alone */
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[keep + k], red.strides[k] = x->strides[keep + k];
    bpk_iter rit;
    bpk_iter_init(&rit, 1, (const bp_view *[]){&red});
    if (rit.done || rit.rank != 1 || (rit.inner_stride[0] != 1 && rit.inner > 1))
        return false;
    bp_view xo = *out; /* x's kept axes, walked alongside out */
    for (int32_t k = 0; k < keep; k++)
        xo.strides[k] = x->strides[k];
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&xo, out});
    size_t esz = bp_dtype_size(x->dtype), osz = bp_dtype_size(out->dtype);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++)
            row_store(vm, op, x->dtype, bpk_base(x) + (pos[0] + i * it.inner_stride[0]) * (int64_t)esz,
                      rit.inner, bpk_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz);
    return true;
}

/* LOGSUMEXP of f32/f64 columns (the kept axes innermost and dense, the
 * reduced ones one run): bpc_logsumexp_cols over blocks of columns, which
 * streams whole rows (the reference walks each output's column alone). */
static bool logsumexp_columns(const bpc_vmath *vm, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out)
{
    int32_t keep = x->rank - n_reduce;
    if (op != BP_OP_LOGSUMEXP || (x->dtype != BP_F32 && x->dtype != BP_F64) || keep < 1 ||
        n_reduce < 1 || x->strides[keep - 1] != 1 || x->shape[keep - 1] < 2)
        return false;
    bp_view red = *x;
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[keep + k], red.strides[k] = x->strides[keep + k];
    bpk_iter rit;
    bpk_iter_init(&rit, 1, (const bp_view *[]){&red});
    if (rit.done || rit.rank != 1 || rit.inner_stride[0] == 1)
        return false;
    int64_t n = rit.inner, sx = rit.inner_stride[0], k = x->shape[keep - 1];
    int64_t so = out->strides[keep - 1];
    bp_view lead[2] = {*out, *x}; /* the kept axes before the columns */
    lead[0].rank = lead[1].rank = keep - 1;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&lead[0], &lead[1]});
    double r[BPC_COLS];
    bool f32 = x->dtype == BP_F32;
    size_t esz = bp_dtype_size(x->dtype);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++)
            for (int64_t c0 = 0; c0 < k; c0 += BPC_COLS) {
                int64_t kc = k - c0 < BPC_COLS ? k - c0 : BPC_COLS;
                const char *p = bpk_base(x) + (pos[1] + i * it.inner_stride[1] + c0) * (int64_t)esz;
                char *o = bpk_base(out) + (pos[0] + i * it.inner_stride[0] + c0 * so) * (int64_t)esz;
                if (f32)
                    vm->logsumexp_cols_f32((const float *)p, sx, n, kc, r);
                else
                    vm->logsumexp_cols_f64((const double *)p, sx, n, kc, r);
                for (int64_t c = 0; c < kc; c++) {
                    if (f32)
                        ((float *)o)[c * so] = (float)r[c];
                    else
                        ((double *)o)[c * so] = r[c];
                }
            }
    return true;
}

/* Bytes of one output block's rows below which column_folds holds strips
 * of columns in registers through every row (the block stays in L2 while
 * its strips go by); larger blocks go to the reference, whose rows of up to
 * 8192 columns four at a time stream through memory instead. */
#define FOLD_BLOCK_BYTES ((int64_t)1 << 20)

/* SUM, MEAN and PROD of f32/f64 columns where the reference folds rows in
 * column mode (reduce.c: the kept axes innermost and dense, the reduced ones
 * strided) over one run of rows: the level's cols_fold, the same sequence
 * of double operations per column (so the same bits), then the reference's
 * store (MEAN: the sum over the count, rounded once). */
static bool column_folds(const bpc_vmath *vm, bp_op op, const bp_view *x, int32_t n_reduce,
                         const bp_view *out)
{
    int32_t keep = x->rank - n_reduce;
    if ((op != BP_OP_SUM && op != BP_OP_MEAN && op != BP_OP_PROD) ||
        (x->dtype != BP_F32 && x->dtype != BP_F64) || keep < 1 || n_reduce < 1)
        return false;
    bp_view red = *x;
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[keep + k], red.strides[k] = x->strides[keep + k];
    bpk_iter rit;
    bpk_iter_init(&rit, 1, (const bp_view *[]){&red});
    bp_view xo = *out; /* x's kept axes, walked alongside out (as the reference) */
    for (int32_t k = 0; k < keep; k++)
        xo.strides[k] = x->strides[k];
    bpk_iter it;
    bpk_iter_init(&it, 2, (const bp_view *[]){&xo, out});
    size_t esz = bp_dtype_size(x->dtype), osz = bp_dtype_size(out->dtype);
    int64_t n = rit.inner, sx = rit.inner_stride[0];
    if (rit.done || rit.rank != 1 || sx == 1 || it.inner_stride[0] != 1 || it.done ||
        sx < it.inner || n * sx * (int64_t)esz > FOLD_BLOCK_BYTES)
        return false;
    bool prod = op == BP_OP_PROD, f32 = x->dtype == BP_F32;
    double v[BPC_COLS];
    int64_t pos[2];
    while (bpk_iter_next(&it, pos))
        for (int64_t c0 = 0; c0 < it.inner; c0 += BPC_COLS) {
            int64_t k = it.inner - c0 < BPC_COLS ? it.inner - c0 : BPC_COLS;
            const char *p = bpk_base(x) + (pos[0] + c0) * (int64_t)esz;
            for (int64_t c = 0; c < k; c++)
                v[c] = prod ? 1.0 : 0.0;
            if (f32)
                vm->cols_fold_f32(prod, (const float *)p, sx, n, k, v);
            else
                vm->cols_fold_f64(prod, (const double *)p, sx, n, k, v);
            char *o = bpk_base(out) + (pos[1] + c0 * it.inner_stride[1]) * (int64_t)osz;
            for (int64_t c = 0; c < k; c++) {
                double r = op == BP_OP_MEAN ? v[c] / (double)n : v[c];
                if (f32)
                    ((float *)o)[c * it.inner_stride[1]] = (float)r;
                else
                    ((double *)o)[c * it.inner_stride[1]] = r;
            }
        }
    return true;
}

static bp_status reduce_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                             int64_t hi)
{
    const op_args *a = args;
    if (reduce_rows(d->vm, a->op, &v[1], a->n_reduce, &v[0]) ||
        column_folds(d->vm, a->op, &v[1], a->n_reduce, &v[0]) ||
        logsumexp_columns(d->vm, a->op, &v[1], a->n_reduce, &v[0]))
        return BP_OK;
    return bpk_reduce(d, a->op, a->p, &v[1], &v[0]);
}

bp_status bpc_reduce_block(bpc_dev *d, bp_op op, const bp_op_params *p, const bp_view *x,
                           const bp_view *out)
{
    op_args a = {.op = op, .p = p, .n_reduce = (int32_t)p->i[0]};
    const bp_view v[2] = {*out, *x};
    return reduce_slab(d, &a, v, 0, bpk_numel(out));
}

/* A SUM/MEAN of one dense f32/f64 run to a single value: the run is cut in
 * chunks, each summed by the vmath sum (8 lanes), then the partials are added in
 * chunk order. Deterministic for a given thread count (the chunks do not
 * depend on which thread takes them); it differs from the reference's
 * one-pass order only by the rounding of a different association (relative
 * ~1e-16 in the double accumulator, far inside f32). */
typedef struct sum_job {
    const bpc_vmath *vm;
    const char *p;
    bp_op op;
    bp_dtype dt;
    int64_t n, ns;
    double part[BPC_MAX_SLABS]; /* per chunk: sum, extreme, or log-sum-exp */
    int64_t idx[BPC_MAX_SLABS]; /* ARG*: the chunk's winner */
} sum_job;

static void sum_item(void *ctx, int64_t t)
{
    sum_job *j = ctx;
    const bpc_vmath *vm = j->vm;
    int64_t n8 = j->n / 8;
    int64_t lo = n8 * t / j->ns * 8, hi = t + 1 == j->ns ? j->n : n8 * (t + 1) / j->ns * 8;
    bool f32 = j->dt == BP_F32, is_max = j->op == BP_OP_MAX || j->op == BP_OP_ARGMAX;
    const float *pf = (const float *)j->p + lo;
    const double *pd = (const double *)j->p + lo;
    switch (j->op) {
    case BP_OP_ARGMAX:
    case BP_OP_ARGMIN:
        j->idx[t] = lo + (f32 ? vm->arg_f32(pf, hi - lo, is_max) : vm->arg_f64(pd, hi - lo, is_max));
        j->part[t] = f32 ? (double)((const float *)j->p)[j->idx[t]] : ((const double *)j->p)[j->idx[t]];
        break;
    case BP_OP_MAX:
    case BP_OP_MIN:
        j->part[t] = f32 ? (double)vm->extreme_f32(pf, hi - lo, is_max) : vm->extreme_f64(pd, hi - lo, is_max);
        break;
    case BP_OP_LOGSUMEXP:
        j->part[t] = f32 ? vm->logsumexp_f32(pf, hi - lo) : vm->logsumexp_f64(pd, hi - lo);
        break;
    case BP_OP_PROD:
        j->part[t] = f32 ? vm->prod_f32(pf, hi - lo) : vm->prod_f64(pd, hi - lo);
        break;
    default:
        j->part[t] = f32 ? vm->sum_f32(pf, hi - lo) : vm->sum_f64(pd, hi - lo);
        break;
    }
}

/* The chunks' results in chunk order: the first winner on ties and the first
 * NaN, as one pass would; log-sum-exp of the chunks' log-sum-exps. */
static double combine(sum_job *j, int64_t *idx)
{
    const bpc_vmath *vm = j->vm;
    bp_op op = j->op;
    double s = j->part[0];
    *idx = j->idx[0];
    if (op == BP_OP_SUM || op == BP_OP_MEAN) {
        for (int64_t t = 1; t < j->ns; t++)
            s += j->part[t];
        return op == BP_OP_MEAN ? s / (double)j->n : s;
    }
    if (op == BP_OP_PROD) {
        for (int64_t t = 1; t < j->ns; t++)
            s *= j->part[t];
        if (isfinite(s))
            return s;
        /* chunks out of range (one at 0, another at inf): one pass, the
         * reference's order (the vmath prod redoes a non-finite result so) */
        return j->dt == BP_F32 ? vm->prod_f32((const float *)j->p, j->n)
                               : vm->prod_f64((const double *)j->p, j->n);
    }
    if (op == BP_OP_LOGSUMEXP) {
        double m = -INFINITY;
        for (int64_t t = 0; t < j->ns; t++) {
            if (j->part[t] != j->part[t])
                return NAN;
            m = j->part[t] > m ? j->part[t] : m;
        }
        if (m == INFINITY || m == -INFINITY)
            return m;
        double e = 0;
        for (int64_t t = 0; t < j->ns; t++)
            e += exp(j->part[t] - m);
        return m + log(e);
    }
    bool is_max = op == BP_OP_MAX || op == BP_OP_ARGMAX;
    for (int64_t t = 1; t < j->ns && s == s; t++) {
        double v = j->part[t];
        if (v != v || (is_max ? v > s : v < s))
            s = v, *idx = j->idx[t];
    }
    return s;
}

/* One dense f32/f64 run reduced to a single value (every axis): cut into
 * chunks (8 per thread), each reduced by its vmath row kernel, the chunks
 * then combined in order. SUM/MEAN: deterministic for a given thread count
 * (the chunks do not depend on which thread takes them); it differs from the
 * reference's one-pass order only by the rounding of a different
 * association (relative ~1e-16 in the double accumulator, far inside f32).
 * MAX/MIN/ARG*: exact. LOGSUMEXP and PROD: within the op's tolerance (a
 * PROD that is not finite is redone in one pass). */
static bool dense_scalar(bpc_dev *d, bp_op op, const bp_view *x, int32_t n_reduce,
                         const bp_view *out)
{
    if (!row_op(op) || (x->dtype != BP_F32 && x->dtype != BP_F64) || bpk_numel(out) != 1 ||
        n_reduce != x->rank)
        return false;
    bpk_iter it;
    bpk_iter_init(&it, 1, (const bp_view *[]){x});
    sum_job j = {.vm = d->vm, .p = bpk_base(x), .op = op, .dt = x->dtype, .n = bpk_numel(x)};
    int team = bpc_team(d, j.n * weight(op, x->dtype));
    if (it.rank != 1 || it.inner_stride[0] != 1 || team < 2)
        return false;
    j.ns = bpc_slabs(team, j.n / 8, j.n);
    bpc_pool_run(d->pool, team, j.ns, sum_item, &j);
    int64_t idx;
    double s = combine(&j, &idx);
    if (op == BP_OP_ARGMAX || op == BP_OP_ARGMIN)
        *(int64_t *)bpk_base(out) = idx;
    else if (op == BP_OP_MAX || op == BP_OP_MIN)
        memcpy(bpk_base(out), x->dtype == BP_F32 ? (void *)&(float){(float)(s == s ? s : NAN)}
                                                 : (void *)&(double){s == s ? s : NAN},
               bp_dtype_size(x->dtype));
    else if (x->dtype == BP_F32)
        *(float *)bpk_base(out) = (float)s;
    else
        *(double *)bpk_base(out) = s;
    return true;
}

bp_status bpc_reduce(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                     const bp_view *out)
{
    int32_t n_reduce = (int32_t)p->i[0];
    if (dense_scalar(dev, op, x, n_reduce, out))
        return BP_OK;
    op_args a = {.op = op, .p = p, .n_reduce = n_reduce};
    int64_t work = bpk_numel(x) * weight(op, x->dtype);

    /* columns (the reference's column mode: the kept axes innermost): only
     * the outer kept axes are cut, never the columns. A block as wide as the
     * rows streams through memory; cutting the columns among threads cuts
     * every row into short pieces, and two threads were measured 2x slower
     * than one (docs/performance.md). */
    int32_t keep = x->rank - n_reduce, r = x->rank, n_axes = out->rank;
    if (keep >= 1 && n_reduce >= 1 && x->strides[keep - 1] == 1 && x->shape[keep - 1] > 1 &&
        x->strides[r - 1] != 1 && x->shape[r - 1] > 1)
        n_axes = keep - 1;
    return bpc_split(dev, 2, (const bp_view *[]){out, x}, n_axes, NULL, false, work,
                     reduce_slab, &a);
}

/* ---- softmax: rows split across threads --------------------------------- */

/* Columns: f32 x whose softmax axis is strided while the axis before it is
 * dense in x and out (softmax over a leading or middle axis, which the core
 * hands over as a strided last axis): bpc_softmax_cols_f32 over blocks of
 * columns, streaming whole rows; a column whose max is not finite goes to
 * the reference alone. */
static bool softmax_columns(bpc_dev *d, bp_op op, const bp_view *x, const bp_view *out,
                            bp_status *st)
{
    int32_t r = x->rank;
    if (x->dtype != BP_F32 || r < 2 || x->strides[r - 1] == 1 || x->strides[r - 2] != 1 ||
        out->strides[r - 2] != 1 || x->shape[r - 2] < 2)
        return false;
    int64_t n = x->shape[r - 1], k = x->shape[r - 2];
    int64_t sx = x->strides[r - 1], so = out->strides[r - 1];
    bool bad[BPC_COLS];
    bp_view lead[2] = {*out, *x}; /* the axes before the columns */
    lead[0].rank = lead[1].rank = r - 2;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&lead[0], &lead[1]});
    *st = BP_OK;
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++)
            for (int64_t c0 = 0; c0 < k; c0 += BPC_COLS) {
                int64_t kc = k - c0 < BPC_COLS ? k - c0 : BPC_COLS;
                float *o = (float *)bpk_base(out) + pos[0] + i * it.inner_stride[0] + c0;
                const float *p = (const float *)bpk_base(x) + pos[1] + i * it.inner_stride[1] + c0;
                d->vm->softmax_cols_f32(op == BP_OP_LOG_SOFTMAX, p, sx, o, so, n, kc, bad);
                for (int64_t c = 0; c < kc; c++) {
                    if (!bad[c])
                        continue;
                    bp_view xc = *x, oc = *out; /* this column alone, by the reference */
                    xc.rank = oc.rank = 1;
                    xc.shape[0] = oc.shape[0] = n;
                    xc.strides[0] = sx, oc.strides[0] = so;
                    xc.offset = (int64_t)((const char *)(p + c) - (const char *)x->buffer);
                    oc.offset = (int64_t)((char *)(o + c) - (char *)out->buffer);
                    if ((*st = bpk_softmax(d, op, &xc, &oc)) != BP_OK)
                        return true;
                }
            }
    return true;
}

/* f32 and f64 SOFTMAX and LOG_SOFTMAX on dense rows: the fused vmath rows (one pass
 * for the max, one for exp and its sum, one to scale or subtract); strided
 * rows by columns (above); other dtypes, and rows whose max is not finite,
 * go to the reference, one row (or the whole slab) at a time. */
static bp_status softmax_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                              int64_t hi)
{
    const op_args *a = args;
    const bp_view *x = &v[1], *out = &v[0];
    int32_t r = x->rank;
    bp_status st;
    if (softmax_columns(d, a->op, x, out, &st))
        return st;
    if ((x->dtype != BP_F32 && x->dtype != BP_F64) || r == 0 || x->strides[r - 1] != 1 ||
        out->strides[r - 1] != 1)
        return bpk_softmax(d, a->op, x, out);
    int64_t n = x->shape[r - 1];
    bp_view rows[2] = {*out, *x};
    rows[0].rank = rows[1].rank = r - 1;
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&rows[0], &rows[1]});
    if (n == 0)
        return BP_OK;
    bool log = a->op == BP_OP_LOG_SOFTMAX, f32 = x->dtype == BP_F32;
    size_t esz = bp_dtype_size(x->dtype);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            char *o = bpk_base(out) + (pos[0] + i * it.inner_stride[0]) * (int64_t)esz;
            const char *p = bpk_base(x) + (pos[1] + i * it.inner_stride[1]) * (int64_t)esz;
            if (f32 ? (log ? d->vm->log_softmax_row_f32((const float *)p, (float *)o, n)
                           : d->vm->softmax_row_f32((const float *)p, (float *)o, n))
                    : d->vm->softmax_row_f64(log, (const double *)p, (double *)o, n))
                continue;
            bp_view xr = *x, orow = *out; /* this row alone, by the reference */
            xr.rank = orow.rank = 1;
            xr.shape[0] = orow.shape[0] = n;
            xr.strides[0] = orow.strides[0] = 1;
            xr.offset = (int64_t)((const char *)p - (const char *)x->buffer);
            orow.offset = (int64_t)((char *)o - (char *)out->buffer);
            bp_status st2 = bpk_softmax(d, a->op, &xr, &orow);
            if (st2 != BP_OK)
                return st2;
        }
    return BP_OK;
}

bp_status bpc_softmax(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    op_args a = {.op = op};
    int32_t r = x->rank, n_axes = r > 0 ? r - 1 : 0;
    /* columns (softmax_columns): cut only the axes before them, as for
     * reductions over leading axes */
    if (x->dtype == BP_F32 && r >= 2 && x->strides[r - 1] != 1 && x->strides[r - 2] == 1 &&
        out->strides[r - 2] == 1)
        n_axes = r - 2;
    return bpc_split(dev, 2, (const bp_view *[]){out, x}, n_axes, NULL, false,
                     bpk_numel(x) * BPC_HEAVY, softmax_slab, &a);
}
