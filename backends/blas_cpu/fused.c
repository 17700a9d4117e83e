/* A compiled graph's fused groups (plugin.h's bp_fused_group): the group's
 * elements are cut into blocks of BPC_FUSE_BLOCK, and each block goes
 * through every step of the group while it is in L1/L2, as numexpr does.
 * Each step runs the kernel its eager call runs (bpc_elementwise_block: the
 * level's vector kernels, the reference loops) on a block of elements, so
 * the results have eager's bits; what fusion saves is the memory traffic
 * of every intermediate (and its buffer). Blocks are grouped into chunks
 * that the pool hands out, as bpc_split's slabs.
 *
 * A group that ends in a reduction (plugin ABI 1.12) over rows of at most
 * BPC_FUSE_BLOCK elements (the trailing axes' extents) takes blocks of
 * whole rows: the elementwise steps fill the block, and the reduction's
 * kernel (a slab of its eager call's) reduces its rows into the out view,
 * with eager's bits. Longer rows (a whole vector's mean, say) are taken for
 * the sum, mean, max and min of f32 and f64: each block folds its part of a
 * row into a double per chunk, and the chunks' partials are combined in
 * chunk order, then rounded once, as the eager sum of a long vector does
 * (blocks of its threads, in double): the sums agree with eager's to the
 * rounding of a double's association (~1e-16 relative), so the rounded
 * results are equal or one ulp apart. Other long-row reductions are
 * declined: the core then fuses the elementwise steps alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas_cpu.h"
#include "vmath.h"

/* Elements per block: the scratch blocks of a group (8 bytes an element:
 * 64 KiB each) stay in L2 while every step passes over them. Measured on a
 * 2-core Zen 3 against 4096: a call of a block costs enough that fewer,
 * larger blocks ran a 4-op group of 2^16 f32 about 10% faster. */
#define BPC_FUSE_BLOCK 8192
/* Scratch blocks for the values a group keeps to itself. */
#define BPC_FUSE_REGS 8

enum { FORM_DENSE, FORM_ONE, FORM_GATHER };

typedef struct fuse_plan {
    int32_t reg[BP_FUSED_MAX_STEPS];    /* per step: its scratch block, or -1 */
    int32_t out_of[BP_FUSED_MAX_STEPS]; /* per step: the out view it fills, or -1 */
    bool defer[BP_FUSED_MAX_STEPS];     /* an out view written at the block's end */
    int32_t form[BP_FUSED_MAX_STEPS * BP_FUSED_MAX_ARGS]; /* per in view */
    int32_t scratch_of[BP_FUSED_MAX_STEPS * BP_FUSED_MAX_ARGS]; /* gathered: its block */
    int32_t n_scratch;                  /* blocks a chunk needs */
    int32_t red;                        /* the reduction's step, or -1 */
    int64_t row;                        /* its rows' length (reduced elements) */
    int64_t block;                      /* elements a block takes: whole rows */
    bool long_rows;                     /* rows past a block: partials per chunk */
} fuse_plan;

static int32_t form_of(const bp_view *v)
{
    bool zero = true;
    for (int32_t k = 0; k < v->rank; k++)
        zero = zero && (v->strides[k] == 0 || v->shape[k] == 1);
    return zero ? FORM_ONE : bpk_view_dense(v) ? FORM_DENSE : FORM_GATHER;
}

/* Whether out shares a buffer with an in view (a donated input: plugin.h
 * allows it where the geometry is the same). NULL out: asked at compile
 * time, before the memory is chosen, so assume it does. */
static bool shares(const bp_fused_group *g, const bp_view *const *in, const bp_view *out)
{
    for (int32_t k = 0; out && k < g->n_in; k++)
        if (in[k]->buffer == out->buffer)
            return true;
    return !out;
}

/* The group's elementwise shape: its in views' (the core's) or out views'. */
static int64_t group_numel(const bp_view *const *in, const bp_view *const *out,
                           const fuse_plan *p)
{
    return p->red >= 0 ? bpk_numel(in[0]) : bpk_numel(out[0]);
}

/* A reduction ends the group (ABI 1.12): its step, its rows, the block of
 * whole rows; false if it is one this plugin does not run. */
static bool plan_reduction(const bp_fused_group *g, const bp_view *const *in, fuse_plan *p)
{
    p->red = -1;
    p->row = 0;
    p->block = BPC_FUSE_BLOCK;
    p->long_rows = false;
    for (int32_t s = 0; s < g->n_steps; s++) {
        const bp_fused_step *st = &g->steps[s];
        if (bp_op_kind_of(st->op) != BP_KIND_REDUCE)
            continue;
        if (s != g->n_steps - 1 || st->n_args != 1 || st->arg[0] < 0 || g->n_in < 1)
            return false;
        bp_op_params tmp;
        const bp_op_params *q = bp_op_params_get(st->params, &tmp);
        const bp_view *v = in[0];
        if (q->i[0] < 1 || q->i[0] > v->rank)
            return false;
        int64_t row = 1;
        for (int32_t k = v->rank - (int32_t)q->i[0]; k < v->rank; k++)
            row *= v->shape[k];
        if (row < 1)
            return false;
        p->red = s;
        p->row = row;
        if (row <= BPC_FUSE_BLOCK) {
            p->block = BPC_FUSE_BLOCK / row * row;
            continue;
        }
        bool folds = st->op == BP_OP_SUM || st->op == BP_OP_MEAN || st->op == BP_OP_MAX ||
                     st->op == BP_OP_MIN;
        if (!folds || (st->dtype != BP_F32 && st->dtype != BP_F64))
            return false;
        p->long_rows = true;
    }
    return true;
}

/* Scratch blocks by liveness inside the group: a value keeps its block
 * until the last step that reads it has run (a step never writes over
 * what it reads: the kernels' pointers are restrict). A result whose out
 * view shares memory with an in view keeps its block to the end of the
 * block and is copied out then, after every step has read its inputs. */
static bool plan(const bp_fused_group *g, const bp_view *const *in, const bp_view *const *out,
                 fuse_plan *p)
{
    int32_t last_read[BP_FUSED_MAX_STEPS], holder[BPC_FUSE_REGS];
    int32_t n_regs = 0;
    if (g->n_steps < 1 || g->n_steps > BP_FUSED_MAX_STEPS || g->n_out < 1 ||
        g->n_in > BP_FUSED_MAX_STEPS * BP_FUSED_MAX_ARGS)
        return false;
    for (int32_t s = 0; s < g->n_steps; s++) {
        last_read[s] = -1;
        p->out_of[s] = -1;
        for (int32_t a = 0; a < g->steps[s].n_args; a++)
            if (g->steps[s].arg[a] >= 0)
                last_read[g->steps[s].arg[a]] = s;
    }
    for (int32_t s = 0; s < g->n_steps; s++)
        p->defer[s] = false;
    if (!plan_reduction(g, in, p))
        return false;
    for (int32_t k = 0; k < g->n_out; k++) {
        int32_t s = g->out_step[k];
        p->out_of[s] = k;
        p->defer[s] = s != p->red && shares(g, in, out ? out[k] : NULL);
        if (p->defer[s])
            last_read[s] = g->n_steps;
    }
    if (p->red >= 0 && p->out_of[p->red] < 0)
        return false; /* a reduction nobody reads */
    for (int32_t s = 0; s < g->n_steps; s++) {
        p->reg[s] = -1;
        for (int32_t r = 0; r < n_regs; r++)
            if (holder[r] >= 0 && last_read[holder[r]] < s)
                holder[r] = -1;
        if (p->out_of[s] >= 0 && !p->defer[s])
            continue;
        int32_t r = 0;
        while (r < n_regs && holder[r] >= 0)
            r++;
        if (r == n_regs && n_regs++ == BPC_FUSE_REGS)
            return false;
        holder[r] = s;
        p->reg[s] = r;
    }
    p->n_scratch = n_regs;
    for (int32_t k = 0; k < g->n_in; k++) {
        p->form[k] = form_of(in[k]);
        p->scratch_of[k] = p->form[k] == FORM_GATHER ? p->n_scratch++ : -1;
    }
    return true;
}

bool bpc_fused_takes(void *dev, const bp_fused_group *g, const bp_view *const *in,
                     const bp_view *const *out)
{
    (void)dev;
    fuse_plan p;
    for (int32_t k = 0; k < g->n_out; k++)
        if (!bpk_view_dense(out[k]))
            return false;
    if (!plan(g, in, NULL, &p))
        return false;
    /* the reduction's out view holds one element per row */
    return p.red < 0 || bpk_numel(out[p.out_of[p.red]]) * p.row == group_numel(in, out, &p);
}

static bp_view flat(void *buffer, int64_t offset, bp_dtype dt, int64_t n, int64_t stride)
{
    bp_view v = {.struct_size = sizeof v, .buffer = buffer, .offset = offset, .dtype = dt,
                 .rank = 1};
    v.shape[0] = n;
    v.strides[0] = stride;
    return v;
}

/* dst = run elements from src, s_in elements apart: a copy at stride 1, a
 * fill at stride 0 (a broadcast operand: magika's one-hot compares each byte
 * with 257 classes), typed loads otherwise (an element-sized memcpy with a
 * size known only at run time was a call per element: 19% of magika). */
#define GATHER_RUN(T)                                                                  \
    do {                                                                               \
        T *d = (T *)(void *)dst, e;                                                    \
        if (s_in == 0) {                                                               \
            memcpy(&e, src, sizeof e);                                                 \
            for (int64_t i = 0; i < run; i++)                                          \
                d[i] = e;                                                              \
        } else {                                                                       \
            for (int64_t i = 0; i < run; i++)                                          \
                memcpy(&d[i], src + i * s_in * (int64_t)sizeof e, sizeof e);          \
        }                                                                              \
    } while (0)

static void gather_run(char *dst, const char *src, int64_t run, int64_t s_in, size_t esz)
{
    if (s_in == 1) {
        memcpy(dst, src, (size_t)run * esz);
        return;
    }
    switch (esz) {
    case 1: GATHER_RUN(uint8_t); break;
    case 2: GATHER_RUN(uint16_t); break;
    case 4: GATHER_RUN(uint32_t); break;
    default: GATHER_RUN(uint64_t); break;
    }
}

/* dst = the n elements of v from flat (row-major) position at on. */
static void gather(const bp_view *v, int64_t at, int64_t n, char *dst)
{
    int32_t r = v->rank;
    int64_t idx[BP_MAX_RANK];
    for (int32_t k = r - 1; k >= 0; k--) {
        idx[k] = at % v->shape[k];
        at /= v->shape[k];
    }
    size_t esz = bp_dtype_size(v->dtype);
    const char *base = bpk_base(v);
    int64_t s_in = v->strides[r - 1];
    while (n > 0) {
        int64_t off = 0;
        for (int32_t k = 0; k < r; k++)
            off += idx[k] * v->strides[k];
        int64_t run = v->shape[r - 1] - idx[r - 1];
        run = run < n ? run : n;
        gather_run(dst, base + off * (int64_t)esz, run, s_in, esz);
        dst += run * (int64_t)esz;
        n -= run;
        idx[r - 1] += run;
        for (int32_t k = r - 1; k > 0 && idx[k] == v->shape[k]; k--) {
            idx[k] = 0;
            idx[k - 1]++;
        }
    }
}

typedef struct fuse_job {
    bpc_dev *d;
    const bp_fused_group *g;
    const bp_view *const *in, *const *out;
    const fuse_plan *p;
    int64_t n, chunk;
    bp_status *st;
    double *part;  /* long rows: per chunk, `parts` partials from its first row on */
    int64_t parts;
} fuse_job;

/* The identity of a long-row fold. */
static double fold_start(bp_op op)
{
    return op == BP_OP_MAX ? -INFINITY : op == BP_OP_MIN ? INFINITY : 0.0;
}

/* acc folded with v: a sum, or an extreme that a NaN takes over */
static inline double fold(bp_op op, double acc, double v)
{
    if (op == BP_OP_SUM || op == BP_OP_MEAN)
        return acc + v;
    if (acc != acc || v != v)
        return NAN;
    return op == BP_OP_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
}

/* x's n >= 1 elements (f32 or f64) folded by the level's vector kernels:
 * sums in double, extremes exact (NaN if any is NaN) */
static double fold_run(const bpc_vmath *vm, bp_op op, bp_dtype dt, const char *x, int64_t n)
{
    if (op == BP_OP_SUM || op == BP_OP_MEAN)
        return dt == BP_F32 ? vm->sum_f32((const float *)x, n) : vm->sum_f64((const double *)x, n);
    bool mx = op == BP_OP_MAX;
    return dt == BP_F32 ? (double)vm->extreme_f32((const float *)x, n, mx)
                        : vm->extreme_f64((const double *)x, n, mx);
}

/* The block's parts of its rows into the chunk's partials (chunk t). */
static void fold_block(const fuse_job *j, const bp_view *x, int64_t t, int64_t at, int64_t len)
{
    const fuse_plan *p = j->p;
    bp_op op = j->g->steps[p->red].op;
    size_t esz = bp_dtype_size(x->dtype);
    double *part = j->part + t * j->parts;
    int64_t first_row = t * j->chunk / p->row;
    for (int64_t pos = at; pos < at + len;) {
        int64_t r = pos / p->row, end = (r + 1) * p->row < at + len ? (r + 1) * p->row : at + len;
        double v = fold_run(j->d->vm, op, x->dtype, bpk_base(x) + (pos - at) * (int64_t)esz,
                            end - pos);
        part[r - first_row] = fold(op, part[r - first_row], v);
        pos = end;
    }
}

/* Elements [at, at + len) through every step; scratch holds the plan's
 * blocks, blk bytes each. */
static bp_status run_block(const fuse_job *j, char *scratch, size_t blk, int64_t t, int64_t at,
                           int64_t len)
{
    const bp_fused_group *g = j->g;
    const fuse_plan *p = j->p;
    bp_view iv[BP_FUSED_MAX_STEPS * BP_FUSED_MAX_ARGS], rv[BP_FUSED_MAX_STEPS];
    for (int32_t k = 0; k < g->n_in; k++) {
        const bp_view *v = j->in[k];
        int64_t esz = (int64_t)bp_dtype_size(v->dtype);
        if (p->form[k] == FORM_DENSE) {
            iv[k] = flat(v->buffer, v->offset + at * esz, v->dtype, len, 1);
        } else if (p->form[k] == FORM_ONE) {
            iv[k] = flat(v->buffer, v->offset, v->dtype, len, 0);
        } else {
            char *dst = scratch + (size_t)p->scratch_of[k] * blk;
            gather(v, at, len, dst);
            iv[k] = flat(dst, 0, v->dtype, len, 1);
        }
    }
    for (int32_t s = 0; s < g->n_steps; s++) {
        const bp_fused_step *st = &g->steps[s];
        const bp_view *args[BP_FUSED_MAX_ARGS];
        for (int32_t a = 0; a < st->n_args; a++)
            args[a] = st->arg[a] >= 0 ? &rv[st->arg[a]] : &iv[-1 - st->arg[a]];
        bp_op_params tmp;
        const bp_op_params *q = bp_op_params_get(st->params, &tmp);
        if (s == p->red && p->long_rows) {
            fold_block(j, args[0], t, at, len);
            continue;
        }
        if (s == p->red) { /* the block's rows, each to its element of out */
            const bp_view *o = j->out[p->out_of[s]];
            int64_t rows = len / p->row;
            bp_view x = *args[0];
            x.rank = 2;
            x.shape[0] = rows, x.shape[1] = p->row;
            x.strides[0] = p->row, x.strides[1] = 1;
            rv[s] = flat(o->buffer, o->offset + at / p->row * (int64_t)bp_dtype_size(o->dtype),
                         o->dtype, rows, 1);
            bp_op_params one = *q;
            one.i[0] = 1;
            bp_status e = bpc_reduce_block(j->d, st->op, &one, &x, &rv[s]);
            if (e != BP_OK)
                return e;
            continue;
        }
        if (p->out_of[s] >= 0 && !p->defer[s]) {
            const bp_view *o = j->out[p->out_of[s]];
            rv[s] = flat(o->buffer, o->offset + at * (int64_t)bp_dtype_size(o->dtype), o->dtype,
                         len, 1);
        } else {
            rv[s] = flat(scratch + (size_t)p->reg[s] * blk, 0, st->dtype, len, 1);
        }
        bp_status e = bpc_elementwise_block(j->d, st->op, q, args, &rv[s]);
        if (e != BP_OK)
            return e;
    }
    for (int32_t s = 0; s < g->n_steps; s++)
        if (p->defer[s]) {
            const bp_view *o = j->out[p->out_of[s]];
            size_t esz = bp_dtype_size(o->dtype);
            memcpy(bpk_base(o) + at * (int64_t)esz, bpk_base(&rv[s]), (size_t)len * esz);
        }
    return BP_OK;
}

static void fuse_item(void *ctx, int64_t t)
{
    const fuse_job *j = ctx;
    int64_t lo = t * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
    int64_t block = j->p->block;
    /* blocks as long as this chunk needs: a small group's scratch is on the
     * stack (a malloc of a whole block would be most of its time) */
    size_t blk = (size_t)(hi - lo < block ? hi - lo : block) * 8;
    size_t bytes = (size_t)j->p->n_scratch * blk;
    _Alignas(64) char small[4096];
    char *scratch = bytes <= sizeof small ? small : malloc(bytes);
    if (!scratch) {
        j->st[t] = BP_ERR_OUT_OF_MEMORY;
        return;
    }
    bp_status st = BP_OK;
    for (int64_t at = lo; st == BP_OK && at < hi; at += block)
        st = run_block(j, scratch, blk, t, at, hi - at < block ? hi - at : block);
    if (scratch != small)
        free(scratch);
    j->st[t] = st;
}

/* Long rows: each row's partials combined in chunk order, rounded once. */
static bp_status finish_long_rows(const fuse_job *j, int ns)
{
    const fuse_plan *p = j->p;
    bp_op op = j->g->steps[p->red].op;
    const bp_view *o = j->out[p->out_of[p->red]];
    int64_t rows = j->n / p->row;
    double *acc = malloc((size_t)rows * sizeof *acc);
    if (!acc)
        return BP_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < rows; r++)
        acc[r] = fold_start(op);
    for (int64_t t = 0; t < ns; t++) {
        int64_t lo = t * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        for (int64_t r = lo / p->row; r <= (hi - 1) / p->row; r++)
            acc[r] = fold(op, acc[r], j->part[t * j->parts + r - lo / p->row]);
    }
    for (int64_t r = 0; r < rows; r++) {
        double v = op == BP_OP_MEAN ? acc[r] / (double)p->row : acc[r];
        if (o->dtype == BP_F32)
            ((float *)bpk_base(o))[r] = (float)v;
        else
            ((double *)bpk_base(o))[r] = v;
    }
    free(acc);
    return BP_OK;
}

bp_status bpc_fused_run(void *dev, const bp_fused_group *g, const bp_view *const *in,
                        const bp_view *const *out)
{
    bpc_dev *d = dev;
    fuse_plan p;
    if (!plan(g, in, out, &p))
        return bpk_fail(d, BP_ERR_UNSUPPORTED_OP,
                        "blas_cpu: a fused group of %d steps it did not accept",
                        (int)g->n_steps);
    int64_t n = group_numel(in, out, &p), work = 0;
    for (int32_t s = 0; s < g->n_steps; s++)
        work += n * bpc_elementwise_weight(g->steps[s].op, g->steps[s].dtype);
    int64_t blocks = (n + p.block - 1) / p.block;
    int team = bpc_team(d, work);
    int ns = team > 1 ? bpc_slabs(team, blocks, work) : 1;
    bp_status st[BPC_MAX_SLABS];
    fuse_job j = {.d = d, .g = g, .in = in, .out = out, .p = &p, .n = n,
                  .chunk = (blocks + ns - 1) / ns * p.block, .st = st};
    ns = (int)((n + j.chunk - 1) / j.chunk);
    if (p.long_rows) {
        j.parts = j.chunk / p.row + 2; /* the rows a chunk touches */
        j.part = malloc((size_t)ns * (size_t)j.parts * sizeof *j.part);
        if (!j.part)
            return bpk_fail(d, BP_ERR_OUT_OF_MEMORY,
                            "blas_cpu: out of memory for a fused reduction's partials");
        for (int64_t k = 0; k < ns * j.parts; k++)
            j.part[k] = fold_start(g->steps[p.red].op);
    }
    if (ns <= 1)
        fuse_item(&j, 0);
    else
        bpc_pool_run(d->pool, team, ns, fuse_item, &j);
    bp_status failed = BP_OK;
    for (int t = 0; t < ns; t++)
        if (st[t] != BP_OK && failed == BP_OK)
            failed = st[t];
    if (failed == BP_OK && p.long_rows)
        failed = finish_long_rows(&j, ns);
    free(j.part);
    if (failed != BP_OK)
        return bpk_fail(d, failed, "blas_cpu: a fused group of %d steps failed%s",
                        (int)g->n_steps, failed == BP_ERR_OUT_OF_MEMORY ? ": out of memory" : "");
    return BP_OK;
}
