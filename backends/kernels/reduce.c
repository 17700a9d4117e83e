/* Reductions over the trailing n_reduce axes of x: every op of the REDUCE
 * kind.
 *
 * Each output element walks its reduced elements in row-major order (so a
 * running count is the ARG* index), one run of the innermost collapsed axis at
 * a time. A run is converted into a small double (or int64) buffer by one
 * typed loop and consumed by one loop per op, so nothing switches on the
 * dtype per element; f32/f64 sums skip the buffer altogether. Floats
 * accumulate in double, integers in uint64_t (wrapping, never UB). */
#include <math.h>
#include <stdlib.h>

#include "kernels.h"

#define CHUNK 256

/* Running state of one output element. For floats `v` is the sum, product,
 * extreme or (LOGSUMEXP) the running max, with `s` the sum of exp(x - v). */
typedef struct run_acc {
    double v, s;
    uint64_t u;          /* integer sum / product */
    int64_t best;        /* integer extreme */
    int64_t idx, seen;   /* ARG* winner, elements consumed so far */
    bool nan, pinf;
} run_acc;

typedef struct rctx {
    bp_op op;
    bp_dtype dt;
    size_t esz;
    bpk_iter rit;        /* over the reduced axes; copied per output */
    bool one_run;        /* the reduced axes collapse to a single run */
} rctx;

/* Eight independent accumulators: vectorisable without -ffast-math, and
 * summing in eight interleaved partial sums is also a little more accurate. */
#define SUM_RUN(p, n, stride)                                             \
    do {                                                                  \
        double part[8] = {0};                                             \
        int64_t i = 0;                                                    \
        if (stride == 1)                                                  \
            for (; i + 8 <= n; i += 8)                                    \
                for (int j = 0; j < 8; j++)                               \
                    part[j] += (double)p[i + j];                          \
        for (; i < n; i++)                                                \
            part[i & 7] += (double)p[i * stride];                         \
        sum = ((part[0] + part[1]) + (part[2] + part[3])) +               \
              ((part[4] + part[5]) + (part[6] + part[7]));                \
    } while (0)

static double sum_f32(const float *p, int64_t n, int64_t stride)
{
    double sum;
    SUM_RUN(p, n, stride);
    return sum;
}

static double sum_f64(const double *p, int64_t n, int64_t stride)
{
    double sum;
    SUM_RUN(p, n, stride);
    return sum;
}

/* u64 in an int64 accumulator: its bits, which sums and products need; for
 * the ops that order (max, min, argmax, argmin) its bits with the top one
 * flipped, which orders as signed int64 exactly as the values do unsigned. */
#define U64_ORDER_KEY ((uint64_t)1 << 63)
static bool orders(bp_op op)
{
    return op == BP_OP_MAX || op == BP_OP_MIN || op == BP_OP_ARGMAX || op == BP_OP_ARGMIN;
}

/* n integers as int64 (key: u64's order key, above) */
static void load_i(bp_dtype dt, const char *p, int64_t stride, int64_t n, int64_t *out, bool key)
{
#define LOAD_AS_I64(T)                                                                  \
    for (int64_t i = 0; i < n; i++)                                                     \
        out[i] = ((const T *)p)[i * stride];                                            \
    break
    switch (dt) {
    case BP_U64: {
        uint64_t flip = key ? U64_ORDER_KEY : 0;
        for (int64_t i = 0; i < n; i++)
            out[i] = (int64_t)(((const uint64_t *)p)[i * stride] ^ flip);
        break;
    }
    case BP_U8: LOAD_AS_I64(uint8_t);
    case BP_I8: LOAD_AS_I64(int8_t);
    case BP_I16: LOAD_AS_I64(int16_t);
    case BP_U16: LOAD_AS_I64(uint16_t);
    case BP_I32: LOAD_AS_I64(int32_t);
    case BP_U32: LOAD_AS_I64(uint32_t);
    default: LOAD_AS_I64(int64_t);
    }
#undef LOAD_AS_I64
}

static void feed_f(bp_op op, run_acc *a, const double *x, int64_t n)
{
    switch (op) {
    case BP_OP_SUM:
    case BP_OP_MEAN:
        a->v += sum_f64(x, n, 1);
        break;
    case BP_OP_PROD:
        for (int64_t i = 0; i < n; i++)
            a->v *= x[i];
        break;
    case BP_OP_MAX:
    case BP_OP_MIN: {
        double m = a->v;
        bool nan = false;
        if (op == BP_OP_MAX)
            for (int64_t i = 0; i < n; i++)
                m = x[i] > m ? x[i] : m, nan |= x[i] != x[i];
        else
            for (int64_t i = 0; i < n; i++)
                m = x[i] < m ? x[i] : m, nan |= x[i] != x[i];
        a->v = m;
        a->nan |= nan;
        break;
    }
    case BP_OP_ARGMAX:
    case BP_OP_ARGMIN:
        /* a NaN wins over any number, and the first NaN stays */
        for (int64_t i = 0; i < n && !a->nan; i++) {
            double v = x[i];
            bool better = op == BP_OP_ARGMAX ? v > a->v : v < a->v;
            if (a->seen + i == 0 || better || v != v)
                a->v = v, a->idx = a->seen + i, a->nan = v != v;
        }
        break;
    default: { /* LOGSUMEXP, one pass: rescale the running sum per chunk */
        double m = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            if (x[i] != x[i])
                a->nan = true;
            else if (x[i] > m)
                m = x[i];
        }
        if (m == INFINITY)
            a->pinf = true;
        if (a->nan || a->pinf || m == -INFINITY)
            break;
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += exp(x[i] - m);
        if (m > a->v)
            a->s = a->s * exp(a->v - m) + s, a->v = m;
        else
            a->s += s * exp(m - a->v);
        break;
    }
    }
    a->seen += n;
}

static void feed_i(bp_op op, run_acc *a, const int64_t *x, int64_t n)
{
    uint64_t u = a->u;
    int64_t m = a->best;
    switch (op) {
    case BP_OP_SUM:
        for (int64_t i = 0; i < n; i++)
            u += (uint64_t)x[i];
        break;
    case BP_OP_PROD:
        for (int64_t i = 0; i < n; i++)
            u *= (uint64_t)x[i];
        break;
    case BP_OP_MAX:
        for (int64_t i = 0; i < n; i++)
            m = x[i] > m ? x[i] : m;
        break;
    case BP_OP_MIN:
        for (int64_t i = 0; i < n; i++)
            m = x[i] < m ? x[i] : m;
        break;
    default: /* ARGMAX, ARGMIN: strict comparison keeps the first on ties */
        for (int64_t i = 0; i < n; i++) {
            bool better = op == BP_OP_ARGMAX ? x[i] > m : x[i] < m;
            if (a->seen + i == 0 || better)
                m = x[i], a->idx = a->seen + i;
        }
        break;
    }
    a->u = u;
    a->best = m;
    a->seen += n;
}

static void feed_run(const rctx *c, run_acc *a, const char *p, int64_t n, int64_t stride)
{
    bool is_float = bp_dtype_is_float(c->dt);
    if (is_float && (c->op == BP_OP_SUM || c->op == BP_OP_MEAN) &&
        (c->dt == BP_F32 || c->dt == BP_F64)) {
        a->v += c->dt == BP_F32 ? sum_f32((const float *)p, n, stride)
                                : sum_f64((const double *)p, n, stride);
        a->seen += n;
        return;
    }
    double fbuf[CHUNK];
    int64_t ibuf[CHUNK];
    for (int64_t i = 0; i < n; i += CHUNK) {
        int64_t len = n - i < CHUNK ? n - i : CHUNK;
        const char *q = p + i * stride * (int64_t)c->esz;
        if (is_float) {
            bpk_load_row_f64(c->dt, q, stride, len, fbuf);
            feed_f(c->op, a, fbuf, len);
        } else {
            load_i(c->dt, q, stride, len, ibuf, orders(c->op));
            feed_i(c->op, a, ibuf, len);
        }
    }
}

static int64_t low_bits_signed(uint64_t u, int bits)
{
    uint64_t sign = (uint64_t)1 << (bits - 1);
    u &= bits == 64 ? ~(uint64_t)0 : (sign << 1) - 1;
    return (u & sign) ? (int64_t)(u - sign) - (int64_t)(sign - 1) - 1 : (int64_t)u;
}

static void store(const rctx *c, const run_acc *a, char *p)
{
    bp_op op = c->op;
    if (op == BP_OP_ARGMAX || op == BP_OP_ARGMIN) {
        *(int64_t *)p = a->idx;
        return;
    }
    if (bp_dtype_is_float(c->dt)) {
        double r = a->v;
        if (op == BP_OP_MEAN)
            r = a->v / (double)a->seen; /* 0/0: NaN for an empty mean */
        else if ((op == BP_OP_MAX || op == BP_OP_MIN) && a->nan)
            r = NAN;
        else if (op == BP_OP_LOGSUMEXP)
            r = a->nan ? NAN : a->pinf ? INFINITY : a->s == 0 ? -INFINITY : a->v + log(a->s);
        switch (c->dt) {
        case BP_F32: *(float *)p = (float)r; break;
        case BP_F64: *(double *)p = r; break;
        default: bp_elem_store_f64(c->dt, p, r); break;
        }
        return;
    }
    /* integers keep the low bits (wrapping), like C unsigned arithmetic */
    uint64_t u = op == BP_OP_SUM || op == BP_OP_PROD ? a->u : (uint64_t)a->best;
    if (c->dt == BP_U64 && orders(op))
        u ^= U64_ORDER_KEY; /* back from the order key */
    switch (c->dt) {
    case BP_U8: *(uint8_t *)p = (uint8_t)u; break;
    case BP_I8: *(int8_t *)p = (int8_t)low_bits_signed(u, 8); break;
    case BP_I32: *(int32_t *)p = (int32_t)low_bits_signed(u, 32); break;
    case BP_I16: *(int16_t *)p = (int16_t)low_bits_signed(u, 16); break;
    case BP_U16: *(uint16_t *)p = (uint16_t)u; break;
    case BP_U32: *(uint32_t *)p = (uint32_t)u; break;
    case BP_U64: *(uint64_t *)p = u; break;
    default: *(int64_t *)p = low_bits_signed(u, 64); break;
    }
}

static void reduce_one(const rctx *c, const char *x, char *out)
{
    run_acc a = {.v = 0, .s = 0, .u = 0, .best = 0};
    switch (c->op) {
    case BP_OP_PROD: a.v = 1, a.u = 1; break;
    case BP_OP_MAX: a.v = -INFINITY, a.best = INT64_MIN; break;
    case BP_OP_MIN: a.v = INFINITY, a.best = INT64_MAX; break;
    case BP_OP_LOGSUMEXP: a.v = -INFINITY; break;
    default: break;
    }
    if (c->one_run) {
        if (!c->rit.done)
            feed_run(c, &a, x, c->rit.inner, c->rit.inner_stride[0]);
    } else {
        bpk_iter it = c->rit;
        int64_t pos[1];
        while (bpk_iter_next(&it, pos))
            feed_run(c, &a, x + pos[0] * (int64_t)c->esz, it.inner, it.inner_stride[0]);
    }
    store(c, &a, out);
}

/* Column mode: when consecutive outputs are adjacent in x (reducing a leading
 * or middle axis of a row-major tensor), walking one output at a time would
 * stride through memory. Instead a block of up to COLS outputs advances
 * together: each reduced position contributes one contiguous row to COLS
 * accumulators, in the reduced positions' row-major order, so every output
 * sees its elements in the same order as reduce_one would (the same sums,
 * bit for bit). A block is as wide as the rows allow (up to COLS): a row
 * then streams through memory instead of restarting the prefetchers every
 * few KiB. f32/f64 rows are consumed in place by the typed loops below
 * (multiversioned: AVX2 where the CPU has it); other float dtypes are widened
 * into a double row first, integers into an int64 row. */
#define COLS 8192

/* v[j] op= x[j] over one row; MAX/MIN keep a NaN once seen (F_MAX's rule),
 * ARG* take the row index r where x[j] beats best[j] or is the first NaN. */
#define COL_LOOPS(SFX, T)                                                                     \
    BPK_CLONES static void col_sum_##SFX(double *restrict v, const T *restrict x, int64_t n)  \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++)                                                       \
            v[j] += (double)x[j];                                                             \
    }                                                                                         \
    BPK_CLONES static void col_prod_##SFX(double *restrict v, const T *restrict x, int64_t n) \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++)                                                       \
            v[j] *= (double)x[j];                                                             \
    }                                                                                         \
    BPK_CLONES static void col_max_##SFX(double *restrict v, const T *restrict x, int64_t n)  \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                     \
            double a = (double)x[j], m = v[j];                                                \
            v[j] = (a > m || a != a) ? a : m;                                                 \
        }                                                                                     \
    }                                                                                         \
    BPK_CLONES static void col_min_##SFX(double *restrict v, const T *restrict x, int64_t n)  \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                     \
            double a = (double)x[j], m = v[j];                                                \
            v[j] = (a < m || a != a) ? a : m;                                                 \
        }                                                                                     \
    }                                                                                         \
    BPK_CLONES static void col_argmax_##SFX(double *restrict best, int64_t *restrict idx,     \
                                            const T *restrict x, int64_t n, int64_t r)        \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                     \
            double a = (double)x[j], b = best[j];                                             \
            bool take = a > b || (a != a && b == b);                                          \
            best[j] = take ? a : b;                                                           \
            idx[j] = take ? r : idx[j];                                                       \
        }                                                                                     \
    }                                                                                         \
    BPK_CLONES static void col_argmin_##SFX(double *restrict best, int64_t *restrict idx,     \
                                            const T *restrict x, int64_t n, int64_t r)        \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++) {                                                     \
            double a = (double)x[j], b = best[j];                                             \
            bool take = a < b || (a != a && b == b);                                          \
            best[j] = take ? a : b;                                                           \
            idx[j] = take ? r : idx[j];                                                       \
        }                                                                                     \
    }                                                                                         \
    static void col_row_##SFX(bp_op op, double *v, int64_t *idx, const T *x, int64_t n,       \
                              int64_t r)                                                      \
    {                                                                                         \
        switch (op) {                                                                         \
        case BP_OP_SUM: case BP_OP_MEAN: col_sum_##SFX(v, x, n); break;                       \
        case BP_OP_PROD: col_prod_##SFX(v, x, n); break;                                      \
        case BP_OP_MAX: col_max_##SFX(v, x, n); break;                                        \
        case BP_OP_MIN: col_min_##SFX(v, x, n); break;                                        \
        case BP_OP_ARGMAX: col_argmax_##SFX(v, idx, x, n, r); break;                          \
        default: col_argmin_##SFX(v, idx, x, n, r); break;                                    \
        }                                                                                     \
    }
COL_LOOPS(f32, float)
COL_LOOPS(f64, double)

/* Four rows at once for sum and product: v[j] takes x0[j], x1[j], x2[j],
 * x3[j] one after another, the order of four calls of the loops above (the
 * same bits), with a quarter of their loads and stores of v: a block of 4096
 * double accumulators fills L1 by itself, so one row at a time spent more on
 * v than on x. */
#define COL4_LOOPS(SFX, T)                                                                    \
    BPK_CLONES static void col4_sum_##SFX(double *restrict v, const T *restrict x0,          \
                                          const T *restrict x1, const T *restrict x2,        \
                                          const T *restrict x3, int64_t n)                   \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++)                                                       \
            v[j] = (((v[j] + (double)x0[j]) + (double)x1[j]) + (double)x2[j]) + (double)x3[j]; \
    }                                                                                         \
    BPK_CLONES static void col4_prod_##SFX(double *restrict v, const T *restrict x0,         \
                                           const T *restrict x1, const T *restrict x2,       \
                                           const T *restrict x3, int64_t n)                  \
    {                                                                                         \
        for (int64_t j = 0; j < n; j++)                                                       \
            v[j] = (((v[j] * (double)x0[j]) * (double)x1[j]) * (double)x2[j]) * (double)x3[j]; \
    }
COL4_LOOPS(f32, float)
COL4_LOOPS(f64, double)

/* f32 MAX/MIN/ARG* keep float accumulators (exact: nothing is rounded), half
 * the bytes of double ones and twice the lanes */
BPK_CLONES static void colf_extreme(float *restrict v, const float *restrict x, int64_t n, bool mx)
{
    if (mx)
        for (int64_t j = 0; j < n; j++) {
            float a = x[j], m = v[j];
            v[j] = (a > m || a != a) ? a : m;
        }
    else
        for (int64_t j = 0; j < n; j++) {
            float a = x[j], m = v[j];
            v[j] = (a < m || a != a) ? a : m;
        }
}
BPK_CLONES static void colf_arg(float *restrict best, int64_t *restrict idx, const float *restrict x,
                                int64_t n, int64_t r, bool mx)
{
    if (mx)
        for (int64_t j = 0; j < n; j++) {
            float a = x[j], b = best[j];
            bool take = a > b || (a != a && b == b);
            best[j] = take ? a : b;
            idx[j] = take ? r : idx[j];
        }
    else
        for (int64_t j = 0; j < n; j++) {
            float a = x[j], b = best[j];
            bool take = a < b || (a != a && b == b);
            best[j] = take ? a : b;
            idx[j] = take ? r : idx[j];
        }
}

/* colf_extreme over four rows, each step the same select in the same order */
#define EXT4(SEL) \
    for (int64_t j = 0; j < n; j++) {                                        \
        float m = v[j], a;                                                   \
        a = x0[j], m = (SEL) ? a : m;                                        \
        a = x1[j], m = (SEL) ? a : m;                                        \
        a = x2[j], m = (SEL) ? a : m;                                        \
        a = x3[j], m = (SEL) ? a : m;                                        \
        v[j] = m;                                                            \
    }
BPK_CLONES static void colf4_extreme(float *restrict v, const float *restrict x0,
                                     const float *restrict x1, const float *restrict x2,
                                     const float *restrict x3, int64_t n, bool mx)
{
    if (mx)
        EXT4(a > m || a != a)
    else
        EXT4(a < m || a != a)
}
#undef EXT4

static void col_row_int(bp_op op, int64_t *w, int64_t *idx, const int64_t *x, int64_t n, int64_t r)
{
    switch (op) {
    case BP_OP_SUM:
        for (int64_t j = 0; j < n; j++) w[j] = (int64_t)((uint64_t)w[j] + (uint64_t)x[j]);
        break;
    case BP_OP_PROD:
        for (int64_t j = 0; j < n; j++) w[j] = (int64_t)((uint64_t)w[j] * (uint64_t)x[j]);
        break;
    case BP_OP_MAX:
        for (int64_t j = 0; j < n; j++) w[j] = x[j] > w[j] ? x[j] : w[j];
        break;
    case BP_OP_MIN:
        for (int64_t j = 0; j < n; j++) w[j] = x[j] < w[j] ? x[j] : w[j];
        break;
    case BP_OP_ARGMAX: /* strict: the first index stays on ties */
        for (int64_t j = 0; j < n; j++) {
            bool take = x[j] > w[j];
            w[j] = take ? x[j] : w[j];
            idx[j] = take ? r : idx[j];
        }
        break;
    default:
        for (int64_t j = 0; j < n; j++) {
            bool take = x[j] < w[j];
            w[j] = take ? x[j] : w[j];
            idx[j] = take ? r : idx[j];
        }
        break;
    }
}

/* The accumulators of a block of n columns, in one allocation. */
typedef struct col_scratch {
    double *v, *fbuf;
    int64_t *w, *ibuf, *idx;
} col_scratch;

static bool col_scratch_alloc(col_scratch *cs, int64_t n)
{
    cs->v = malloc((size_t)n * (2 * sizeof(double) + 3 * sizeof(int64_t)));
    if (!cs->v)
        return false;
    cs->fbuf = cs->v + n;
    cs->w = (int64_t *)(cs->fbuf + n);
    cs->ibuf = cs->w + n;
    cs->idx = cs->ibuf + n;
    return true;
}

/* A block of n columns being reduced: its accumulators and what the op is. */
typedef struct col_block {
    const rctx *c;
    const col_scratch *cs;
    int64_t n;
    bool is_float, is_arg, maxish, f32x; /* f32x: f32 MAX/MIN/ARG*, in float */
} col_block;

/* Fold one row q (the r-th reduced position) into the block. */
static void fold_row(const col_block *b, const char *q, int64_t r)
{
    const col_scratch *cs = b->cs;
    float *vf = (float *)cs->fbuf;
    bp_op op = b->c->op;
    bp_dtype dt = b->c->dt;
    int64_t n = b->n;
    if (b->f32x && b->is_arg) {
        colf_arg(vf, cs->idx, (const float *)q, n, r, b->maxish);
    } else if (b->f32x) {
        colf_extreme(vf, (const float *)q, n, b->maxish);
    } else if (dt == BP_F32) {
        col_row_f32(op, cs->v, cs->idx, (const float *)q, n, r);
    } else if (dt == BP_F64) {
        col_row_f64(op, cs->v, cs->idx, (const double *)q, n, r);
    } else if (b->is_float) {
        bpk_load_row_f64(dt, q, 1, n, cs->fbuf);
        col_row_f64(op, cs->v, cs->idx, cs->fbuf, n, r);
    } else {
        load_i(dt, q, 1, n, cs->ibuf, orders(op));
        col_row_int(op, cs->w, cs->idx, cs->ibuf, n, r);
    }
}

/* Whether the op folds four rows per pass (fold_rows4): sums, products and
 * f32 extremes of f32/f64. */
static bool folds_by_four(const col_block *b)
{
    bp_op op = b->c->op;
    if (b->f32x)
        return !b->is_arg;
    return (b->c->dt == BP_F32 || b->c->dt == BP_F64) &&
           (op == BP_OP_SUM || op == BP_OP_MEAN || op == BP_OP_PROD);
}

/* Fold four consecutive rows, as four fold_row calls would (the same bits). */
static void fold_rows4(const col_block *b, const char *const q[4])
{
    double *v = b->cs->v;
    bool prod = b->c->op == BP_OP_PROD;
    int64_t n = b->n;
    if (b->f32x) {
        colf4_extreme((float *)b->cs->fbuf, (const float *)q[0], (const float *)q[1],
                      (const float *)q[2], (const float *)q[3], n, b->maxish);
    } else if (b->c->dt == BP_F32) {
        const float *x0 = (const float *)q[0], *x1 = (const float *)q[1],
                    *x2 = (const float *)q[2], *x3 = (const float *)q[3];
        if (prod)
            col4_prod_f32(v, x0, x1, x2, x3, n);
        else
            col4_sum_f32(v, x0, x1, x2, x3, n);
    } else {
        const double *x0 = (const double *)q[0], *x1 = (const double *)q[1],
                     *x2 = (const double *)q[2], *x3 = (const double *)q[3];
        if (prod)
            col4_prod_f64(v, x0, x1, x2, x3, n);
        else
            col4_sum_f64(v, x0, x1, x2, x3, n);
    }
}

static void reduce_block(const rctx *c, const col_scratch *cs, const char *x, int64_t n,
                         char *out, int64_t ostride, size_t osz)
{
    double *v = cs->v;
    float *vf = (float *)cs->fbuf; /* f32 MAX/MIN/ARG*: float accumulators */
    int64_t *w = cs->w, *idx = cs->idx; /* integers: sum/product bits, extreme */
    bp_op op = c->op;
    bool maxish = op == BP_OP_MAX || op == BP_OP_ARGMAX, minish = op == BP_OP_MIN || op == BP_OP_ARGMIN;
    col_block b = {.c = c, .cs = cs, .n = n, .is_float = bp_dtype_is_float(c->dt),
                   .is_arg = op == BP_OP_ARGMAX || op == BP_OP_ARGMIN, .maxish = maxish,
                   .f32x = c->dt == BP_F32 && (maxish || minish)};
    double v0 = op == BP_OP_PROD ? 1 : maxish ? -INFINITY : minish ? INFINITY : 0;
    int64_t w0 = op == BP_OP_PROD ? 1 : maxish ? INT64_MIN : minish ? INT64_MAX : 0;
    for (int64_t j = 0; j < n; j++)
        v[j] = v0, w[j] = w0, idx[j] = 0, vf[j] = (float)v0;
    bpk_iter it = c->rit;
    int64_t pos[1], seen = 0;
    bool by4 = folds_by_four(&b);
    const char *q4[4];
    int held = 0;
    while (bpk_iter_next(&it, pos))
        for (int64_t r = 0; r < it.inner; r++, seen++) {
            const char *q = x + (pos[0] + r * it.inner_stride[0]) * (int64_t)c->esz;
            if (!by4) {
                fold_row(&b, q, seen);
                continue;
            }
            q4[held++] = q;
            if (held == 4) {
                fold_rows4(&b, q4);
                held = 0;
            }
        }
    for (int k = 0; k < held; k++) /* the last rows, fewer than four */
        fold_row(&b, q4[k], seen - held + k);
    for (int64_t j = 0; j < n && b.f32x; j++)
        v[j] = vf[j];
    for (int64_t j = 0; j < n; j++) {
        run_acc a = {.v = v[j], .u = (uint64_t)w[j], .best = w[j], .idx = idx[j], .seen = seen,
                 .nan = !b.is_arg && v[j] != v[j]};
        store(c, &a, out + j * ostride * (int64_t)osz);
    }
}

/* The reductions a running accumulator folds in one streaming pass (by
 * runs, or by blocks of columns when the kept axes are innermost). */
static bp_status fold_reduce(void *dev, bp_op op, const bp_view *x, int32_t n_reduce,
                             const bp_view *out)
{
    if (bpk_numel(out) == 0)
        return BP_OK;
    rctx c = {.op = op, .dt = x->dtype, .esz = bp_dtype_size(x->dtype)};
    int32_t keep = x->rank - n_reduce;

    bp_view red = *x; /* the reduced axes alone */
    red.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        red.shape[k] = x->shape[keep + k], red.strides[k] = x->strides[keep + k];
    bpk_iter_init(&c.rit, 1, (const bp_view *[]){&red});
    c.one_run = c.rit.rank == 1;

    bp_view xo = *out; /* x's kept axes, walked alongside out */
    for (int32_t k = 0; k < keep; k++)
        xo.strides[k] = x->strides[k];
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&xo, out});
    size_t osz = bp_dtype_size(out->dtype);
    bool column = it.inner_stride[0] == 1 && c.rit.inner_stride[0] != 1 && !c.rit.done &&
                  op != BP_OP_LOGSUMEXP;
    col_scratch cs = {0};
    int64_t width = it.inner < COLS ? it.inner : COLS;
    if (column && !col_scratch_alloc(&cs, width))
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY, "reduce: no memory for %lld accumulators",
                        (long long)width);
    while (bpk_iter_next(&it, pos)) {
        for (int64_t i = 0; column && i < it.inner; i += COLS)
            reduce_block(&c, &cs, bpk_base(x) + (pos[0] + i) * (int64_t)c.esz,
                         it.inner - i < COLS ? it.inner - i : COLS,
                         bpk_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz,
                         it.inner_stride[1], osz);
        for (int64_t i = 0; !column && i < it.inner; i++)
            reduce_one(&c, bpk_base(x) + (pos[0] + i * it.inner_stride[0]) * (int64_t)c.esz,
                       bpk_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz);
    }
    free(cs.v);
    return BP_OK;
}

/* ---- l1, l2, sum_square, log_sum, var, std, any, all, and argmax/argmin
 * with the last index on ties ---------------------------------------------------
 * Floats accumulate in double (ops.h) and round once; integers wrap in 64
 * bits; var and std take two passes (the mean, then the squared deviations). */

typedef struct red {
    bp_op op;
    bp_dtype dt;
    size_t esz;
    double correction;
    bpk_iter rit; /* over the reduced axes; copied per output */
} red;

/* One pass over the reduced elements of the output whose terms start at x. */
#define FOR_TERMS(R, X, P)                                                               \
    for (bpk_iter it_ = (R)->rit; bpk_iter_next(&it_, pos_);)                            \
        for (int64_t i_ = 0; i_ < it_.inner; i_++)                                       \
            for (const char *P = (X) + (pos_[0] + i_ * it_.inner_stride[0]) * (int64_t)(R)->esz; \
                 P; P = NULL)

static void reduce_int(const red *r, const char *x, char *out)
{
    int64_t pos_[1];
    uint64_t acc = 0;
    FOR_TERMS(r, x, p) {
        int64_t v = bp_elem_load_i64(r->dt, p);
        if (r->op == BP_OP_REDUCE_L1) /* a u64 is never below zero */
            acc += v < 0 && r->dt != BP_U64 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        else /* SUM_SQUARE */
            acc += (uint64_t)v * (uint64_t)v;
    }
    bp_elem_store_i64(r->dt, out, bpk_wrap_int(r->dt, acc));
}

static double reduce_float(const red *r, const char *x)
{
    int64_t pos_[1], n = 0;
    double acc = 0;
    FOR_TERMS(r, x, p) {
        double v = bp_elem_load_f64(r->dt, p);
        switch (r->op) {
        case BP_OP_REDUCE_L1: acc += fabs(v); break;
        case BP_OP_REDUCE_L2: case BP_OP_REDUCE_SUM_SQUARE: acc += v * v; break;
        default: acc += v; break; /* LOG_SUM, and the mean of VAR/STD */
        }
        n++;
    }
    switch (r->op) {
    case BP_OP_REDUCE_L2: return sqrt(acc);
    case BP_OP_REDUCE_LOG_SUM: return log(acc);
    case BP_OP_REDUCE_VAR: case BP_OP_REDUCE_STD: break;
    default: return acc;
    }
    double mean = acc / (double)n, dev = 0;
    FOR_TERMS(r, x, p) {
        double d = bp_elem_load_f64(r->dt, p) - mean;
        dev += d * d;
    }
    double div = (double)n - r->correction;
    double var = div > 0 ? dev / div : NAN;
    return r->op == BP_OP_REDUCE_STD ? sqrt(var) : var;
}

static void reduce_bool(const red *r, const char *x, char *out)
{
    int64_t pos_[1];
    bool all = r->op == BP_OP_REDUCE_ALL, acc = all;
    FOR_TERMS(r, x, p) {
        bool v = *(const uint8_t *)p != 0;
        acc = all ? acc && v : acc || v;
    }
    *(uint8_t *)out = acc;
}

/* The last extreme; a NaN wins over any number, the last NaN over the others. */
static int64_t arg_last(const red *r, const char *x)
{
    int64_t pos_[1], at = -1, k = 0;
    bool max = r->op == BP_OP_ARGMAX_LAST, is_float = bp_dtype_is_float(r->dt);
    double bf = 0;
    int64_t bi = 0;
    FOR_TERMS(r, x, p) {
        if (is_float) {
            double v = bp_elem_load_f64(r->dt, p);
            bool take = at < 0 || v != v || (bf == bf && (max ? v >= bf : v <= bf));
            if (take)
                bf = v, at = k;
        } else {
            int64_t v = bp_elem_load_i64(r->dt, p);
            if (r->dt == BP_U64)
                v = (int64_t)((uint64_t)v ^ U64_ORDER_KEY);
            if (at < 0 || (max ? v >= bi : v <= bi))
                bi = v, at = k;
        }
        k++;
    }
    return at;
}

/* The others, one output element at a time over its terms. */
static bp_status term_reduce(bp_op op, const bp_view *x, int32_t n_reduce, double correction,
                             const bp_view *out)
{
    int32_t keep = x->rank - n_reduce;
    if (bpk_numel(out) == 0)
        return BP_OK;
    red r = {.op = op, .dt = x->dtype, .esz = bp_dtype_size(x->dtype), .correction = correction};
    bp_view rv = *x; /* the reduced axes alone */
    rv.rank = n_reduce;
    for (int32_t k = 0; k < n_reduce; k++)
        rv.shape[k] = x->shape[keep + k], rv.strides[k] = x->strides[keep + k];
    bpk_iter_init(&r.rit, 1, (const bp_view *[]){&rv});

    bp_view xo = *out; /* x's kept axes, walked alongside out */
    for (int32_t k = 0; k < keep; k++)
        xo.strides[k] = x->strides[k];
    size_t osz = bp_dtype_size(out->dtype);
    bpk_iter it;
    int64_t pos[2];
    bpk_iter_init(&it, 2, (const bp_view *[]){&xo, out});
    bool is_float = bp_dtype_is_float(x->dtype);
    while (bpk_iter_next(&it, pos))
        for (int64_t i = 0; i < it.inner; i++) {
            const char *xs = bpk_base(x) + (pos[0] + i * it.inner_stride[0]) * (int64_t)r.esz;
            char *o = bpk_base(out) + (pos[1] + i * it.inner_stride[1]) * (int64_t)osz;
            if (op == BP_OP_ARGMAX_LAST || op == BP_OP_ARGMIN_LAST)
                *(int64_t *)o = arg_last(&r, xs);
            else if (op == BP_OP_REDUCE_ANY || op == BP_OP_REDUCE_ALL)
                reduce_bool(&r, xs, o);
            else if (is_float)
                bp_elem_store_f64(out->dtype, o, reduce_float(&r, xs));
            else
                reduce_int(&r, xs, o);
        }
    return BP_OK;
}

bp_status bpk_reduce(void *dev, bp_op op, const bp_op_params *p, const bp_view *x,
                     const bp_view *out)
{
    int32_t n_reduce = (int32_t)p->i[0];
    switch (op) {
    case BP_OP_SUM: case BP_OP_PROD: case BP_OP_MEAN: case BP_OP_MAX: case BP_OP_MIN:
    case BP_OP_ARGMAX: case BP_OP_ARGMIN: case BP_OP_LOGSUMEXP:
        return fold_reduce(dev, op, x, n_reduce, out);
    default: return term_reduce(op, x, n_reduce, p->f[0], out); /* var, std: f[0] the correction */
    }
}
