/* TOPK by partial selection: each row keeps its best k candidates in a
 * binary heap whose root is the worst of them, so an element is looked at
 * once and most are rejected by one comparison with the root: O(n log k)
 * instead of the reference's full sort, with the rows cut across threads.
 * The k kept are then sorted (k log k), which gives exactly the reference's
 * result whatever `sorted` says.
 *
 * Order: each value becomes an unsigned key that orders as the values do
 * (floats by their bits with the sign folded, -0 made +0 so they tie, every
 * NaN the largest key: ONNX TopK counts NaN above any number; integers with
 * the sign bit flipped); for the k smallest the key is inverted. A candidate
 * beats another with a larger key, or the same key and a lower index: ties
 * go to the lower index. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"

typedef struct cand {
    uint64_t key;
    int64_t at;
} cand;

static inline bool beats(const cand *a, const cand *b)
{
    return a->key > b->key || (a->key == b->key && a->at < b->at);
}

static inline uint64_t float_key(double v)
{
    if (v != v)
        return UINT64_MAX;
    if (v == 0)
        v = 0.0; /* -0 ties with +0 */
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (u >> 63) ? ~u : u | ((uint64_t)1 << 63);
}

static inline uint64_t int_key(int64_t v) { return (uint64_t)v ^ ((uint64_t)1 << 63); }

/* Sift the root of heap h[0..n) (worst at the root) down. */
static void sift_down(cand *h, int64_t n, int64_t i)
{
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && beats(&h[w], &h[l]))
            w = l;
        if (r < n && beats(&h[w], &h[r]))
            w = r;
        if (w == i)
            return;
        cand t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void sift_up(cand *h, int64_t i)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!beats(&h[parent], &h[i]))
            return;
        cand t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

static int best_first(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    return beats(a, b) ? -1 : beats(b, a) ? 1 : 0;
}

typedef struct row_job {
    bp_dtype dt;
    uint64_t flip; /* 0 for the largest, all ones for the smallest */
    int64_t n, k, sx;
} row_job;

/* The key of element i of the row at p. */
static inline uint64_t key_at(const row_job *j, const char *p, int64_t i)
{
    switch (j->dt) {
    case BP_F32: return float_key(((const float *)p)[i * j->sx]) ^ j->flip;
    case BP_F64: return float_key(((const double *)p)[i * j->sx]) ^ j->flip;
    case BP_I32: return int_key(((const int32_t *)p)[i * j->sx]) ^ j->flip;
    case BP_I64: return int_key(((const int64_t *)p)[i * j->sx]) ^ j->flip;
    case BP_U64: return ((const uint64_t *)p)[i * j->sx] ^ j->flip; /* its own order */
    default: break;
    }
    size_t es = bp_dtype_size(j->dt);
    const char *e = p + i * j->sx * (int64_t)es;
    uint64_t key = bp_dtype_is_float(j->dt) ? float_key(bp_elem_load_f64(j->dt, e))
                                            : int_key(bp_elem_load_i64(j->dt, e));
    return key ^ j->flip;
}

/* The best k of one row into h[0..k), best first. */
static void select_row(const row_job *j, const char *row, cand *h)
{
    int64_t size = 0;
    for (int64_t i = 0; i < j->n; i++) {
        cand c = {key_at(j, row, i), i};
        if (size < j->k) {
            h[size] = c;
            sift_up(h, size++);
        } else if (beats(&c, &h[0])) {
            h[0] = c;
            sift_down(h, size, 0);
        }
    }
    qsort(h, (size_t)size, sizeof *h, best_first);
}

static bp_status topk_slab(bpc_dev *d, const void *args, const bp_view *v, int64_t lo,
                           int64_t hi)
{
    (void)lo, (void)hi;
    const bpc_op_call *call = args;
    const bp_view *vals = &v[0], *idx = &v[1], *x = &v[2];
    int32_t last = x->rank - 1;
    row_job j = {.dt = x->dtype, .flip = call->p->i[0] ? 0 : UINT64_MAX, .n = x->shape[last],
                 .k = vals->shape[last], .sx = x->strides[last]};
    if (bpk_numel(vals) == 0)
        return BP_OK;
    cand *h = malloc((size_t)j.k * sizeof *h);
    if (!h)
        return bpk_fail(d, BP_ERR_OUT_OF_MEMORY, "topk: no memory for %lld candidates",
                        (long long)j.k);
    size_t es = bp_dtype_size(x->dtype);
    int64_t sv = vals->strides[last], si = idx->strides[last];
    bpk_rows r;
    bpk_rows_init(&r, 3, (const bp_view *[]){x, vals, idx});
    while (bpk_rows_next(&r)) {
        const char *row = bpk_base(x) + r.at[0] * (int64_t)es;
        select_row(&j, row, h);
        char *vrow = bpk_base(vals) + r.at[1] * (int64_t)es;
        int64_t *irow = (int64_t *)bpk_base(idx) + r.at[2];
        for (int64_t i = 0; i < j.k; i++) {
            memcpy(vrow + i * sv * (int64_t)es, row + h[i].at * j.sx * (int64_t)es, es);
            irow[i * si] = h[i].at;
        }
    }
    free(h);
    return BP_OK;
}

bp_status bpc_topk(bpc_dev *d, const bpc_op_call *call)
{
    const bp_view *x = call->in[0], *vals = call->out[0], *idx = call->out[1];
    int32_t last = x->rank - 1;
    int64_t n = x->shape[last], k = vals->shape[last];
    /* work per row ~ n + k log k; log k ~ 8 for the comparisons */
    int64_t rows = n ? bpk_numel(x) / n : 0, work = rows * (n + 8 * k) * 2;
    return bpc_split(d, 3, (const bp_view *[]){vals, idx, x}, last, NULL, false, work, topk_slab,
                     call);
}
