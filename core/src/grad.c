/* Reverse mode on a graph: bp_graph_vjp and bp_graph_grad append to the
 * graph the nodes that compute vector-Jacobian products, so gradients
 * compile, plan memory and run like any other nodes, on any backend.
 *
 * The pass works on values (a graph's slots), each with an adjoint: a flat
 * tensor with one element per element of the value, or none (zero). It walks
 * the nodes recorded before the call backwards; for a node with an output
 * whose adjoint is not zero it reads each output's gradient through the
 * output's view, asks the op's rule (the op table's gradient column,
 * grad_table.c) for the gradients of the inputs in the shape of their views,
 * and adds them to the inputs' adjoints through those views: a repeated
 * (stride 0) axis is summed, a view that is not the whole value dense (a
 * part of a concat, a slice, a transpose) is written into zeros of the
 * value's size. A node that reads a value a later node overwrites, or
 * writes over another's output, is refused rather than guessed at. */
#include <stdlib.h>
#include <string.h>

#include "grad_internal.h"

typedef struct bp__grad_state {
    const char *fn;
    bp_graph *g;
    bp_backend *rec;
    int32_t n_nodes, n_slots, n_caps;
    bp__gnode *nodes;      /* what was recorded before the call */
    size_t *bytes;         /* per slot */
    void **token;          /* per slot */
    bp_tensor **caps;      /* the graph's captured tensors (borrowed) */
    bool *dep;             /* per slot: depends on a wrt through differentiable inputs */
    int32_t *writers;      /* per slot: nodes writing it */
    int32_t *last_writer;  /* per slot: the last node writing it, or -1 */
    bp_tensor **adj;       /* per slot: its adjoint (flat), NULL: zero */
    bp_tensor **base;      /* per slot: a handle on its token, made when first read */
} bp__grad_state;

/* ---- views ------------------------------------------------------------------ */

/* A repeated axis (stride 0) of extent > 1 becomes extent 1. */
static void view_compact(bp_view *v)
{
    for (int32_t k = 0; k < v->rank; k++)
        if (v->strides[k] == 0)
            v->shape[k] = 1;
}

/* No two elements of v (compact) at one address: sorted by |stride|, each
 * axis steps past everything the smaller ones reach. */
static bool view_injective(const bp_view *v)
{
    int32_t ax[BP_MAX_RANK], n = 0;
    for (int32_t k = 0; k < v->rank; k++)
        if (v->shape[k] > 1)
            ax[n++] = k;
    for (int32_t i = 1; i < n; i++)
        for (int32_t j = i; j > 0 && llabs(v->strides[ax[j]]) < llabs(v->strides[ax[j - 1]]); j--) {
            int32_t t = ax[j];
            ax[j] = ax[j - 1];
            ax[j - 1] = t;
        }
    int64_t reach = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t s = llabs(v->strides[ax[i]]);
        if (s <= reach)
            return false;
        reach += s * (v->shape[ax[i]] - 1);
    }
    return true;
}

/* The bytes [lo, hi) a view touches. */
static void view_span(const bp_view *v, int64_t *lo, int64_t *hi)
{
    int64_t item = (int64_t)bp_dtype_size(v->dtype), a = v->offset, b = v->offset;
    for (int32_t k = 0; k < v->rank; k++) {
        if (v->shape[k] == 0) {
            *lo = *hi = v->offset;
            return;
        }
        int64_t d = v->strides[k] * (v->shape[k] - 1) * item;
        if (d < 0)
            a += d;
        else
            b += d;
    }
    *lo = a;
    *hi = b + item;
}

/* Whether views a and b of one value can share no element: their byte
 * spans do not meet, or both are boxes of one layout (the same positive
 * strides, each dividing the next larger, and every coordinate of both
 * views below the radix that gives) that are apart on some axis, or in the
 * residue below the smallest stride. Concat's parts and slices of one
 * value are such boxes. */
static bool views_disjoint(const bp_view *a, const bp_view *b)
{
    int64_t lo, hi, la, ha;
    view_span(a, &lo, &hi);
    view_span(b, &la, &ha);
    if (!(la < hi && lo < ha && lo < hi && la < ha))
        return true;
    int64_t item = (int64_t)bp_dtype_size(a->dtype);
    if (a->rank != b->rank || a->dtype != b->dtype || a->offset % item || b->offset % item)
        return false;
    int32_t ord[BP_MAX_RANK], n = 0;
    for (int32_t k = 0; k < a->rank; k++) {
        if (a->strides[k] != b->strides[k])
            return false;
        if (a->shape[k] == 1 && b->shape[k] == 1)
            continue;
        if (a->strides[k] <= 0)
            return false;
        int32_t j = n++; /* insertion by descending stride */
        for (; j > 0 && a->strides[ord[j - 1]] < a->strides[k]; j--)
            ord[j] = ord[j - 1];
        ord[j] = k;
    }
    int64_t ra = a->offset / item, rb = b->offset / item;
    bool apart = false;
    for (int32_t i = 0; i < n; i++) {
        int32_t k = ord[i];
        int64_t st = a->strides[k], ca = ra / st, cb = rb / st;
        ra %= st, rb %= st;
        if (i > 0) {
            int64_t up = a->strides[ord[i - 1]];
            if (up % st || ca + a->shape[k] > up / st || cb + b->shape[k] > up / st)
                return false;
        }
        apart = apart || ca + a->shape[k] <= cb || cb + b->shape[k] <= ca;
    }
    return apart || ra != rb;
}

/* The first node after node i that writes into value s where view v sees
 * it, or -1. */
static int32_t later_writer(const bp__grad_state *gs, int32_t i, int32_t s, const bp_view *v)
{
    if (gs->last_writer[s] <= i)
        return -1;
    for (int32_t j = i + 1; j < gs->n_nodes; j++) {
        const bp__gnode *m = &gs->nodes[j];
        for (int32_t q = m->n_in; q < m->n_in + m->n_out; q++)
            if (m->ref[q] == s && !views_disjoint(v, &m->view[q]))
                return j;
    }
    return -1;
}

/* ---- reading values and adjoints through views ----------------------------- */

/* A tensor of (v's dtype and shape, compacted if asked) holding what v views
 * in base's storage, where byte 0 of v's offsets is base byte `origin`: a
 * handle on the same storage where the view is dense, else a recorded copy. */
static bp_status read_view(bp__grad_state *gs, const bp_tensor *base, int64_t origin,
                           const bp_view *v, bool compact, bp_tensor **out)
{
    bp_view src = *v;
    if (compact)
        view_compact(&src);
    src.buffer = base->storage->buffer;
    src.offset = origin + v->offset;
    if (bp__view_is_dense(&src))
        return bp__tensor_alias_at(base, src.offset, src.dtype, src.rank, src.shape, out);
    bp_op_params p = bp__params();
    return bp__op_into_new(gs->fn, gs->rec, BP_OP_COPY, &p, (const bp_view *[]){&src}, src.dtype,
                           src.rank, src.shape, out);
}

static bp_status slot_base(bp__grad_state *gs, int32_t s, const bp_tensor **base)
{
    if (!gs->base[s])
        BP__TRY(bp__tensor_on_token(gs->rec, gs->token[s], gs->bytes[s], &gs->base[s]));
    *base = gs->base[s];
    return BP_OK;
}

/* The forward value node i saw through its view k (a captured tensor or a
 * value of the graph), compacted. Refused when a later node overwrote it. */
static bp_status read_forward(bp__grad_state *gs, int32_t i, int32_t k, bp_tensor **out)
{
    const bp__gnode *n = &gs->nodes[i];
    int32_t ref = n->ref[k];
    if (BP__GREF_IS_CAP(ref))
        return read_view(gs, gs->caps[BP__GREF_CAP_INDEX(ref)], 0, &n->view[k], true, out);
    if (later_writer(gs, i, ref, &n->view[k]) >= 0)
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "%s: %s (node %d) reads a value that a later op of the graph "
                         "overwrites in place, so its gradient cannot read what it saw; "
                         "record the computation without writing over values",
                         gs->fn, bp_op_name(n->op), (int)i);
    const bp_tensor *base;
    BP__TRY(slot_base(gs, ref, &base));
    return read_view(gs, base, base->offset, &n->view[k], true, out);
}

/* ---- accumulating into adjoints --------------------------------------------- */

/* adj[s] += g seen through view v of value s (g shaped as v, or compacted). */
static bp_status accumulate(bp__grad_state *gs, int32_t s, const bp_view *v, const bp_tensor *g)
{
    bp_view c = *v;
    view_compact(&c);
    if (g->rank != c.rank || g->dtype != c.dtype)
        return bp__error(BP_ERR_BACKEND,
                         "%s: a gradient rule gave %s rank %d for a %s rank %d view (a defect "
                         "in the core's gradient rules)",
                         gs->fn, bp_dtype_name(g->dtype), (int)g->rank, bp_dtype_name(c.dtype),
                         (int)c.rank);
    bp_tensor *own[3] = {NULL, NULL, NULL};
    const bp_tensor *t = g;
    int32_t axes[BP_MAX_RANK], n_axes = 0;
    bool bcast = false;
    for (int32_t k = 0; k < c.rank; k++) {
        if (c.shape[k] == 1 && t->shape[k] != 1)
            axes[n_axes++] = k;
        else if (t->shape[k] != c.shape[k])
            bcast = true;
    }
    bp_status st = BP_OK;
    if (n_axes > 0 && (st = bp_sum(t, n_axes, axes, true, &own[0])) == BP_OK)
        t = own[0];
    if (st == BP_OK && bcast && (st = bp_broadcast_to(t, c.rank, c.shape, &own[1])) == BP_OK)
        t = own[1];
    size_t item = bp_dtype_size(c.dtype);
    int64_t n_el = (int64_t)(gs->bytes[s] / item);
    bp_tensor *contrib = NULL;
    if (st != BP_OK) {
        /* reported */
    } else if (c.offset == 0 && bp__view_is_dense(&c) && bp__view_numel(&c) == n_el) {
        st = bp_reshape(t, 1, &n_el, &contrib);
    } else if (!view_injective(&c)) {
        st = bp__error(BP_ERR_UNSUPPORTED_OP,
                       "%s: an op of the graph reads a value through a view that sees some "
                       "elements twice (overlapping strides); its gradient is not supported",
                       gs->fn);
    } else if ((st = bp_zeros(gs->rec, c.dtype, 1, &n_el, &contrib)) == BP_OK) {
        bp_view src, dst = c;
        bp__view_dense(t, &src);
        dst.buffer = contrib->storage->buffer;
        dst.offset = contrib->offset + c.offset;
        bp_op_params p = bp__params();
        st = bp__op_run(gs->rec, BP_OP_COPY, &p, (const bp_view *[]){&src},
                        (const bp_view *[]){&dst});
    }
    if (st == BP_OK && gs->adj[s] && gs->adj[s]->dtype != contrib->dtype)
        st = bp__error(BP_ERR_UNSUPPORTED_OP,
                       "%s: a value of the graph is read as both %s and %s; its gradient is "
                       "not supported",
                       gs->fn, bp_dtype_name(gs->adj[s]->dtype), bp_dtype_name(contrib->dtype));
    if (st == BP_OK && gs->adj[s]) {
        st = bp_add(gs->adj[s], contrib, &own[2]);
        bp_tensor_release(contrib);
        contrib = NULL;
        if (st == BP_OK) {
            bp_tensor_release(gs->adj[s]);
            gs->adj[s] = own[2];
            own[2] = NULL;
        }
    } else if (st == BP_OK) {
        gs->adj[s] = contrib;
        contrib = NULL;
    }
    bp_tensor_release(contrib);
    for (int32_t k = 0; k < 3; k++)
        bp_tensor_release(own[k]);
    return st;
}

/* ---- the rules' helpers (grad_internal.h) ------------------------------------ */

const bp_tensor *bp__e_keep(bp__vjp *c, bp_status st, bp_tensor *t)
{
    if (st != BP_OK) {
        c->st = st;
        return NULL;
    }
    if (c->n_temps == BP__VJP_TEMPS) {
        bp_tensor_release(t);
        c->st = bp__error(BP_ERR_BACKEND, "%s's gradient rule needs more than %d temporaries "
                          "(a defect in the core)", bp_op_name(c->n->op), BP__VJP_TEMPS);
        return NULL;
    }
    c->temps[c->n_temps++] = t;
    return t;
}

#define E_GUARD(...)                                                                            \
    do {                                                                                        \
        if (c->st != BP_OK)                                                                     \
            return NULL;                                                                        \
        const bp_tensor *args_[] = {__VA_ARGS__};                                               \
        for (size_t a_ = 0; a_ < sizeof args_ / sizeof args_[0]; a_++)                          \
            if (!args_[a_]) {                                                                   \
                c->st = bp__error(BP_ERR_BACKEND, "%s's gradient rule: a missing operand (a "  \
                                  "defect in the core)", bp_op_name(c->n->op));                \
                return NULL;                                                                    \
            }                                                                                   \
    } while (0)

const bp_tensor *bp__e_un(bp__vjp *c, bp_op op, const bp_tensor *x)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_unary(op, x, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_unp(bp__vjp *c, bp_op op, const bp_tensor *x, double f0, double f1)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_unary_params(op, x, f0, f1, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_bin(bp__vjp *c, bp_op op, const bp_tensor *a, const bp_tensor *b)
{
    E_GUARD(a, b);
    bp_tensor *t = NULL;
    bp_status st = bp_binary(op, a, b, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_where(bp__vjp *c, const bp_tensor *cond, const bp_tensor *a,
                             const bp_tensor *b)
{
    E_GUARD(cond, a, b);
    bp_tensor *t = NULL;
    bp_status st = bp_where(cond, a, b, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_const(bp__vjp *c, const bp_tensor *like, double value)
{
    E_GUARD(like);
    bp_tensor *t = NULL;
    bp_status st = bp_full(c->rec, like->dtype, 0, NULL, value, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_reduce_last(bp__vjp *c, bp_op op, const bp_tensor *x, int32_t n)
{
    E_GUARD(x);
    int32_t axes[BP_MAX_RANK];
    for (int32_t k = 0; k < n; k++)
        axes[k] = x->rank - n + k;
    bp_tensor *t = NULL;
    bp_status st = bp_reduce(op, x, n, axes, true, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_expand(bp__vjp *c, const bp_tensor *x, int32_t rank, const int64_t *shape)
{
    E_GUARD(x);
    int64_t s[BP_MAX_RANK];
    for (int32_t k = 0; k < rank; k++)
        s[k] = k < x->rank ? x->shape[k] : 1;
    bp_tensor *r = NULL, *t = NULL;
    bp_status st = bp_reshape(x, rank, s, &r);
    if (st == BP_OK)
        st = bp_broadcast_to(r, rank, shape, &t);
    bp_tensor_release(r);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_matmul(bp__vjp *c, const bp_tensor *a, const bp_tensor *b)
{
    E_GUARD(a, b);
    bp_tensor *t = NULL;
    bp_status st = bp_matmul(a, b, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_mT(bp__vjp *c, const bp_tensor *x)
{
    E_GUARD(x);
    int32_t perm[BP_MAX_RANK];
    for (int32_t k = 0; k < x->rank; k++)
        perm[k] = k;
    perm[x->rank - 2] = x->rank - 1;
    perm[x->rank - 1] = x->rank - 2;
    bp_tensor *t = NULL;
    bp_status st = bp_transpose(x, perm, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_reshape(bp__vjp *c, const bp_tensor *x, int32_t rank,
                              const int64_t *shape)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_reshape(x, rank, shape, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_cast(bp__vjp *c, const bp_tensor *x, bp_dtype dtype)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_cast(x, dtype, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_cumsum_last(bp__vjp *c, const bp_tensor *x, bool exclusive, bool reverse)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_cumsum(x, -1, exclusive, reverse, &t);
    return bp__e_keep(c, st, t);
}

const bp_tensor *bp__e_cumprod_last(bp__vjp *c, const bp_tensor *x, bool exclusive, bool reverse)
{
    E_GUARD(x);
    bp_tensor *t = NULL;
    bp_status st = bp_cumprod(x, -1, exclusive, reverse, &t);
    return bp__e_keep(c, st, t);
}

typedef struct vjp_full {
    bp__vjp c;
    const bp_tensor *fwd[2 * BP__GRAPH_MAX_IO]; /* read when first asked, kept in temps */
} vjp_full;

static const bp_tensor *forward(bp__vjp *c, int32_t k)
{
    vjp_full *f = (vjp_full *)(void *)c;
    if (c->st != BP_OK)
        return NULL;
    if (c->n->ref[k] == BP__GREF_NONE) {
        c->st = bp__error(BP_ERR_BACKEND, "%s's gradient rule reads a view the op was not "
                          "given (a defect in the core)", bp_op_name(c->n->op));
        return NULL;
    }
    if (!f->fwd[k]) {
        bp_tensor *t = NULL;
        bp_status st = read_forward(c->gs, c->node, k, &t);
        f->fwd[k] = bp__e_keep(c, st, t);
    }
    return f->fwd[k];
}

const bp_tensor *bp__vjp_in(bp__vjp *c, int32_t k) { return forward(c, k); }
const bp_tensor *bp__vjp_out(bp__vjp *c, int32_t k) { return forward(c, c->n->n_in + k); }

/* ---- the pass ------------------------------------------------------------------ */

static void state_free(bp__grad_state *gs)
{
    for (int32_t s = 0; s < gs->n_slots; s++) {
        if (gs->adj)
            bp_tensor_release(gs->adj[s]);
        if (gs->base)
            bp_tensor_release(gs->base[s]);
    }
    free(gs->nodes), free(gs->bytes), free(gs->token), free(gs->caps), free(gs->dep);
    free(gs->writers), free(gs->last_writer), free(gs->adj), free(gs->base);
}

static bp_status state_init(bp__grad_state *gs, bp_graph *g, const char *fn)
{
    memset(gs, 0, sizeof *gs);
    gs->fn = fn;
    gs->g = g;
    gs->rec = &g->rec;
    pthread_mutex_lock(&g->lock);
    int32_t nn = g->n_nodes, ns = g->n_slots, nc = g->n_caps;
    gs->nodes = malloc(((size_t)nn + 1) * sizeof *gs->nodes);
    gs->bytes = malloc(((size_t)ns + 1) * sizeof *gs->bytes);
    gs->token = malloc(((size_t)ns + 1) * sizeof *gs->token);
    gs->caps = malloc(((size_t)nc + 1) * sizeof *gs->caps);
    bool ok = gs->nodes && gs->bytes && gs->token && gs->caps;
    if (ok) {
        if (nn > 0) /* a graph with no node, or no capture, has NULL arrays */
            memcpy(gs->nodes, g->nodes, (size_t)nn * sizeof *gs->nodes);
        if (nc > 0)
            memcpy(gs->caps, g->caps, (size_t)nc * sizeof *gs->caps);
        for (int32_t s = 0; s < ns; s++) {
            gs->bytes[s] = g->slots[s].bytes;
            gs->token[s] = g->slots[s].token;
        }
    }
    pthread_mutex_unlock(&g->lock);
    gs->n_nodes = nn, gs->n_slots = ns, gs->n_caps = nc;
    size_t s1 = (size_t)ns + 1;
    gs->dep = calloc(s1, sizeof *gs->dep);
    gs->writers = calloc(s1, sizeof *gs->writers);
    gs->last_writer = malloc(s1 * sizeof *gs->last_writer);
    gs->adj = calloc(s1, sizeof *gs->adj);
    gs->base = calloc(s1, sizeof *gs->base);
    if (!ok || !gs->dep || !gs->writers || !gs->last_writer || !gs->adj || !gs->base) {
        state_free(gs);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    for (int32_t s = 0; s < ns; s++)
        gs->last_writer[s] = -1;
    for (int32_t i = 0; i < nn; i++) {
        const bp__gnode *n = &gs->nodes[i];
        for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++)
            if (n->ref[k] >= 0) {
                gs->writers[n->ref[k]]++;
                gs->last_writer[n->ref[k]] = i;
            }
    }
    return BP_OK;
}

static bool is_float(bp_dtype d) { return d == BP_F16 || d == BP_BF16 || d == BP_F32 || d == BP_F64; }

/* Which values depend on a wrt: forward through the inputs a gradient flows
 * to (an op without a gradient passes the mark on, to be refused if the
 * reverse pass reaches it). */
static void mark_dependents(bp__grad_state *gs)
{
    for (int32_t i = 0; i < gs->n_nodes; i++) {
        const bp__gnode *n = &gs->nodes[i];
        bool dep = false;
        for (int32_t k = 0; k < n->n_in && !dep; k++)
            dep = n->ref[k] >= 0 && gs->dep[n->ref[k]] && bp__grad_diff_input(n->op, k);
        if (dep)
            for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++)
                if (n->ref[k] >= 0)
                    gs->dep[n->ref[k]] = true;
    }
}

static bp_status arg_name(bp_op op, int32_t k, char *buf, size_t cap)
{
    bp_op_arg_name(bp_op_info_of(op)->in, k, buf, cap);
    return BP_OK;
}

/* Writing over another node's output: the earlier one's gradient would need
 * the overwritten part masked out. */
static bp_status check_writes(bp__grad_state *gs, int32_t i)
{
    const bp__gnode *n = &gs->nodes[i];
    for (int32_t k = n->n_in; k < n->n_in + n->n_out; k++) {
        int32_t s = n->ref[k], j = s >= 0 ? later_writer(gs, i, s, &n->view[k]) : -1;
        if (j >= 0)
            return bp__error(BP_ERR_UNSUPPORTED_OP,
                             "%s: %s (node %d) writes over part of what %s (node %d) wrote; "
                             "the gradient of a value written twice is not supported",
                             gs->fn, bp_op_name(gs->nodes[j].op), (int)j, bp_op_name(n->op),
                             (int)i);
    }
    return BP_OK;
}

static bp_status run_rule(bp__grad_state *gs, int32_t i, vjp_full *f)
{
    bp__vjp *c = &f->c;
    const bp__gnode *n = c->n;
    const bp__grad_row *row = bp__grad_row_of(n->op);
    char name[32];
    for (int32_t k = 0; k < n->n_in; k++) {
        if (!c->want[k])
            continue;
        if (!is_float(n->view[k].dtype)) {
            arg_name(n->op, k, name, sizeof name);
            return bp__error(BP_ERR_UNSUPPORTED_OP,
                             "%s: the gradient reaches %s's input %s (node %d), which is %s: "
                             "integer and bool values have no gradient; cast to a float dtype "
                             "before the op, or take the gradient through another path",
                             gs->fn, bp_op_name(n->op), name, (int)i,
                             bp_dtype_name(n->view[k].dtype));
        }
    }
    if (row->is == BP__GRAD_IS_ZERO)
        return BP_OK;
    if (row->is != BP__GRAD_HAS_RULE)
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "%s: the gradient reaches %s (node %d), which %s; take the gradient "
                         "through another path, or record that part outside the "
                         "differentiated computation",
                         gs->fn, bp_op_name(n->op), (int)i,
                         row->is == BP__GRAD_IS_TODO ? "has no gradient rule yet (it is "
                                                       "differentiable: listed as not done "
                                                       "in docs/gradients.md)"
                                                     : "has no gradient");
    BP__TRY(check_writes(gs, i));
    bp_status st = row->rule(c);
    if (st == BP_OK)
        st = c->st;
    for (int32_t k = 0; st == BP_OK && k < n->n_in; k++)
        if (c->want[k] && c->gx[k])
            st = accumulate(gs, n->ref[k], &n->view[k], c->gx[k]);
    return st;
}

static bp_status backward_node(bp__grad_state *gs, int32_t i)
{
    const bp__gnode *n = &gs->nodes[i];
    vjp_full f;
    memset(&f, 0, sizeof f);
    bp__vjp *c = &f.c;
    c->gs = gs;
    c->node = i;
    c->n = n;
    c->rec = gs->rec;
    bool any_gy = false, any_want = false;
    bp_status st = BP_OK;
    for (int32_t k = 0; k < n->n_in; k++) {
        int32_t r = n->ref[k];
        c->want[k] = r >= 0 && gs->dep[r] && bp__grad_diff_input(n->op, k);
        any_want = any_want || c->want[k];
    }
    for (int32_t k = 0; k < n->n_out; k++) {
        int32_t r = n->ref[n->n_in + k];
        if (r >= 0 && gs->adj[r])
            any_gy = true;
    }
    if (!any_gy || !any_want)
        return BP_OK;
    for (int32_t k = 0; k < n->n_out && st == BP_OK; k++) {
        int32_t r = n->ref[n->n_in + k];
        if (r < 0 || !gs->adj[r])
            continue;
        bp_tensor *t = NULL;
        st = read_view(gs, gs->adj[r], gs->adj[r]->offset, &n->view[n->n_in + k], false, &t);
        c->gy[k] = bp__e_keep(c, st, t);
        st = c->st;
    }
    if (st == BP_OK)
        st = run_rule(gs, i, &f);
    for (int32_t k = 0; k < c->n_temps; k++)
        bp_tensor_release(c->temps[k]);
    return st;
}

static bp_status check_symbolic(const char *fn, bp_graph *g, const char *what, int32_t k,
                                const bp_tensor *t)
{
    char name[48];
    if (k < 0)
        snprintf(name, sizeof name, "%s", what);
    else
        snprintf(name, sizeof name, "%s[%d]", what, (int)k);
    BP__TRY(bp__check_input(fn, name, t));
    if (bp__backend_of(t) != &g->rec)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: %s is %s; it must be a symbolic tensor of this graph (%s)", fn,
                         name,
                         bp__backend_of(t)->graph ? "a symbolic tensor of another graph"
                                                  : "a concrete tensor",
                         strcmp(what, "wrt") == 0
                             ? "to differentiate with respect to a parameter, pass it as a "
                               "bp_graph_input"
                             : "a result of ops recorded on it");
    if (!is_float(t->dtype))
        return bp__error(BP_ERR_DTYPE,
                         "%s: %s is %s; gradients are taken of and with respect to float "
                         "tensors (f16, bf16, f32, f64): cast it first",
                         fn, name, bp_dtype_name(t->dtype));
    return BP_OK;
}

static int32_t slot_of(const bp_tensor *t) { return ((const bp__gtoken *)t->storage->buffer)->slot; }

static void dense_view_of(const bp_tensor *t, bp_view *v)
{
    bp__view_dense(t, v);
    v->buffer = NULL;
}

static bp_status vjp(const char *fn, bp_graph *g, int32_t n_out, const bp_tensor *const *outputs,
                     const bp_tensor *const *seeds, int32_t n, const bp_tensor *const *wrt,
                     bp_tensor **grads)
{
    bp__grad_state gs;
    BP__TRY(state_init(&gs, g, fn));
    for (int32_t k = 0; k < n; k++)
        gs.dep[slot_of(wrt[k])] = true;
    mark_dependents(&gs);
    bp_status st = BP_OK;
    for (int32_t o = 0; o < n_out && st == BP_OK; o++) {
        bp_view v;
        dense_view_of(outputs[o], &v);
        v.offset = outputs[o]->offset;
        st = accumulate(&gs, slot_of(outputs[o]), &v, seeds[o]);
    }
    for (int32_t i = gs.n_nodes - 1; i >= 0 && st == BP_OK; i--)
        st = backward_node(&gs, i);
    for (int32_t k = 0; k < n && st == BP_OK; k++) {
        int32_t s = slot_of(wrt[k]);
        if (!gs.adj[s]) {
            st = bp_zeros(gs.rec, wrt[k]->dtype, wrt[k]->rank, wrt[k]->shape, &grads[k]);
            continue;
        }
        bp_view v;
        dense_view_of(wrt[k], &v);
        v.offset = wrt[k]->offset;
        st = read_view(&gs, gs.adj[s], gs.adj[s]->offset, &v, false, &grads[k]);
    }
    state_free(&gs);
    return st;
}

bp_status bp_graph_vjp(bp_graph *g, int32_t n_out, const bp_tensor *const *outputs,
                       const bp_tensor *const *seeds, int32_t n, const bp_tensor *const *wrt,
                       bp_tensor **grads)
{
    static const char fn[] = "bp_graph_vjp";
    for (int32_t k = 0; grads && k < n; k++)
        grads[k] = NULL; /* a failure leaves none set */
    if (!g)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: g is NULL", fn);
    if (n < 0 || (n > 0 && (!wrt || !grads)) || n_out < 1 || !outputs || !seeds)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: give n_out >= 1 outputs with as many seeds, and n >= 0 wrt "
                         "tensors with room for as many grads (n_out %d, n %d%s%s%s%s)",
                         fn, (int)n_out, (int)n, outputs ? "" : ", outputs NULL",
                         seeds ? "" : ", seeds NULL", n > 0 && !wrt ? ", wrt NULL" : "",
                         n > 0 && !grads ? ", grads NULL" : "");
    for (int32_t k = 0; k < n; k++)
        grads[k] = NULL;
    for (int32_t k = 0; k < n; k++)
        BP__TRY(check_symbolic(fn, g, "wrt", k, wrt[k]));
    char a[BP__SHAPE_STR_CAP], b[BP__SHAPE_STR_CAP];
    bp_tensor *sym[BP__GRAPH_MAX_IO * 4] = {NULL};
    if (n_out > (int32_t)(sizeof sym / sizeof sym[0]))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: at most %d outputs at once", fn,
                         (int)(sizeof sym / sizeof sym[0]));
    bp_status st = BP_OK;
    for (int32_t o = 0; o < n_out && st == BP_OK; o++) {
        st = check_symbolic(fn, g, "outputs", o, outputs[o]);
        char sname[32];
        snprintf(sname, sizeof sname, "seeds[%d]", (int)o);
        if (st == BP_OK)
            st = bp__check_input(fn, sname, seeds[o]);
        if (st != BP_OK)
            break;
        const bp_tensor *out = outputs[o], *seed = seeds[o];
        bool same = seed->rank == out->rank && seed->dtype == out->dtype;
        for (int32_t d = 0; same && d < out->rank; d++)
            same = seed->shape[d] == out->shape[d];
        if (!same) {
            st = bp__error(BP_ERR_SHAPE,
                           "%s: %s is %s %s but outputs[%d] is %s %s; a seed has its output's "
                           "dtype and shape",
                           fn, sname, bp_dtype_name(seed->dtype),
                           BP__SHAPE_STR(a, seed->rank, seed->shape), (int)o,
                           bp_dtype_name(out->dtype), BP__SHAPE_STR(b, out->rank, out->shape));
            break;
        }
        /* a concrete seed joins the graph as a captured tensor: an explicit
         * copy of it is the symbolic seed */
        bp_backend *be = NULL;
        st = bp__graph_join(fn, &be, (const bp_tensor *const[]){out, seed}, 2,
                            (const char *const[]){"outputs", sname});
        if (st == BP_OK && bp__backend_of(seed) != &g->rec) {
            bp_view src;
            bp__view_dense(seed, &src);
            bp_op_params p = bp__params();
            st = bp__op_into_new(fn, &g->rec, BP_OP_COPY, &p, (const bp_view *[]){&src},
                                 seed->dtype, seed->rank, seed->shape, &sym[o]);
        }
    }
    const bp_tensor *use[BP__GRAPH_MAX_IO * 4];
    for (int32_t o = 0; o < n_out && st == BP_OK; o++)
        use[o] = sym[o] ? sym[o] : seeds[o];
    if (st == BP_OK)
        st = vjp(fn, g, n_out, outputs, use, n, wrt, grads);
    for (int32_t o = 0; o < n_out; o++)
        bp_tensor_release(sym[o]);
    if (st != BP_OK)
        for (int32_t k = 0; k < n; k++) {
            bp_tensor_release(grads[k]);
            grads[k] = NULL;
        }
    return st;
}

bp_graph *bp_tensor_graph(const bp_tensor *t)
{
    return t && t->storage ? bp__backend_of(t)->graph : NULL;
}

bp_status bp_graph_grad(bp_graph *g, const bp_tensor *loss, int32_t n, const bp_tensor *const *wrt,
                        bp_tensor **grads)
{
    static const char fn[] = "bp_graph_grad";
    for (int32_t k = 0; grads && k < n; k++)
        grads[k] = NULL; /* a failure leaves none set */
    if (!g)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: g is NULL", fn);
    if (n < 0 || (n > 0 && (!wrt || !grads)))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: give n >= 0 wrt tensors with room for as many grads (n %d%s%s)",
                         fn, (int)n, n > 0 && !wrt ? ", wrt NULL" : "",
                         n > 0 && !grads ? ", grads NULL" : "");
    BP__TRY(bp__check_input(fn, "loss", loss));
    if (loss->numel != 1)
        return bp__error(BP_ERR_SHAPE,
                         "%s: loss has %lld elements; bp_graph_grad differentiates a scalar "
                         "(reduce it first, e.g. bp_sum or bp_mean), or give a seed per element "
                         "with bp_graph_vjp",
                         fn, (long long)loss->numel);
    if (bp__backend_of(loss) != &g->rec || !is_float(loss->dtype))
        return check_symbolic(fn, g, "loss", -1, loss);
    bp_tensor *seed = NULL;
    BP__TRY(bp_ones(&g->rec, loss->dtype, loss->rank, loss->shape, &seed));
    bp_status st = bp_graph_vjp(g, 1, &loss, (const bp_tensor *const *)&seed, n, wrt, grads);
    bp_tensor_release(seed);
    return st;
}
