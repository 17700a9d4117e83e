/* Optimizers (optim.h): PyTorch's SGD, Adam and AdamW, and clipping by the
 * global norm, written with the public ops so that one update runs eagerly
 * on concrete tensors or records onto the graph of symbolic ones. The step
 * counter is a tensor of the state (Adam's bias correction reads it), so a
 * compiled step never bakes the step number into its plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- a straight line of ops, its temporaries released together ---------------- */

typedef struct line {
    bp_status st;
    bp_tensor **t;
    int32_t n, cap;
} line;

static const bp_tensor *keep(line *l, bp_status st, bp_tensor *t)
{
    if (l->st != BP_OK) {
        bp_tensor_release(t);
        return NULL;
    }
    if (st != BP_OK) {
        l->st = st;
        return NULL;
    }
    if (l->n == l->cap) {
        int32_t cap = l->cap ? 2 * l->cap : 32;
        bp_tensor **p = realloc(l->t, (size_t)cap * sizeof *p);
        if (!p) {
            bp_tensor_release(t);
            l->st = bp__error(BP_ERR_OUT_OF_MEMORY, "bp_optim_step: out of memory");
            return NULL;
        }
        l->t = p;
        l->cap = cap;
    }
    l->t[l->n++] = t;
    return t;
}

static void line_clear(line *l)
{
    for (int32_t i = 0; i < l->n; i++)
        bp_tensor_release(l->t[i]);
    l->n = 0;
}

static void line_free(line *l)
{
    line_clear(l);
    free(l->t);
}

static const bp_tensor *bin(line *l, bp_op op, const bp_tensor *a, const bp_tensor *b)
{
    if (l->st != BP_OK || !a || !b)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st_ = bp_binary(op, a, b, &t);
    return keep(l, st_, t);
}

static const bp_tensor *un(line *l, bp_op op, const bp_tensor *x)
{
    if (l->st != BP_OK || !x)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st_ = bp_unary(op, x, &t);
    return keep(l, st_, t);
}

/* A 0-d constant of like's dtype on like's backend. */
static const bp_tensor *num(line *l, const bp_tensor *like, double v)
{
    if (l->st != BP_OK || !like)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st_ = bp_full(bp_tensor_backend(like), like->dtype, 0, NULL, v, &t);
    return keep(l, st_, t);
}

static const bp_tensor *cast(line *l, const bp_tensor *x, bp_dtype dt)
{
    if (l->st != BP_OK || !x)
        return NULL;
    if (x->dtype == dt)
        return x;
    bp_tensor *t = NULL;
    bp_status st_ = bp_cast(x, dt, &t);
    return keep(l, st_, t);
}

static const bp_tensor *sum_all(line *l, const bp_tensor *x)
{
    if (l->st != BP_OK || !x)
        return NULL;
    bp_tensor *t = NULL;
    bp_status st_ = bp_sum(x, 0, NULL, false, &t);
    return keep(l, st_, t);
}

#define ADD(a, b) bin(l, BP_OP_ADD, a, b)
#define SUB(a, b) bin(l, BP_OP_SUB, a, b)
#define MUL(a, b) bin(l, BP_OP_MUL, a, b)
#define DIV(a, b) bin(l, BP_OP_DIV, a, b)

/* ---- checks ---------------------------------------------------------------------- */

static bool is_float(bp_dtype d) { return d == BP_F16 || d == BP_BF16 || d == BP_F32 || d == BP_F64; }

static bp_status read_opt(const char *fn, const bp_optimizer *in, bp_optimizer *o)
{
    if (!in)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: opt is NULL (start from "
                         "BP_OPTIMIZER_SGD_INIT, _ADAM_INIT or _ADAMW_INIT)", fn);
    bp_optimizer d = BP_OPTIMIZER_SGD_INIT;
    *o = d;
    BP__TRY(bp__struct_in(fn, "bp_optimizer", "BP_OPTIMIZER_SGD_INIT", in, sizeof(bp_optimizer),
                          o, sizeof *o));
    const char *bad = NULL;
    if (o->kind != BP_OPTIM_SGD && o->kind != BP_OPTIM_ADAM && o->kind != BP_OPTIM_ADAMW)
        bad = "kind is not BP_OPTIM_SGD, BP_OPTIM_ADAM or BP_OPTIM_ADAMW";
    else if (!(o->lr >= 0) || !isfinite(o->lr))
        bad = "lr must be a finite number >= 0";
    else if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
        bad = "weight_decay must be a finite number >= 0";
    else if (!(o->max_grad_norm >= 0) || !isfinite(o->max_grad_norm))
        bad = "max_grad_norm must be a finite number >= 0 (0: no clipping)";
    else if (o->kind == BP_OPTIM_SGD && (!(o->momentum >= 0) || !isfinite(o->momentum)))
        bad = "momentum must be a finite number >= 0";
    else if (o->kind == BP_OPTIM_SGD && !(o->dampening >= 0 && o->dampening <= 1))
        bad = "dampening must be in [0, 1]";
    else if (o->kind == BP_OPTIM_SGD && o->nesterov && (o->momentum <= 0 || o->dampening != 0))
        bad = "nesterov needs momentum > 0 and dampening 0 (as PyTorch's SGD)";
    else if (o->kind != BP_OPTIM_SGD && !(o->beta1 >= 0 && o->beta1 < 1 && o->beta2 >= 0 &&
                                          o->beta2 < 1))
        bad = "beta1 and beta2 must be in [0, 1)";
    else if (o->kind != BP_OPTIM_SGD && (!(o->eps >= 0) || !isfinite(o->eps)))
        bad = "eps must be a finite number >= 0";
    if (bad)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s", fn, bad);
    return BP_OK;
}

static int32_t per_param(const bp_optimizer *o)
{
    return o->kind == BP_OPTIM_SGD ? (o->momentum > 0 ? 1 : 0) : 2;
}

int32_t bp_optim_state_count(const bp_optimizer *opt, int32_t n)
{
    bp_optimizer o;
    if (n < 1 || read_opt("bp_optim_state_count", opt, &o) != BP_OK)
        return -1;
    return 1 + n * per_param(&o);
}

static bp_status check_params(const char *fn, int32_t n, const bp_tensor *const *params,
                              const bp_tensor *const *grads)
{
    if (n < 1 || !params)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: give n >= 1 parameters (n %d%s)", fn,
                         (int)n, params ? "" : ", params NULL");
    if (grads == NULL && strcmp(fn, "bp_optim_step") == 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: grads is NULL", fn);
    char name[32], a[BP__SHAPE_STR_CAP], b[BP__SHAPE_STR_CAP];
    for (int32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "params[%d]", (int)i);
        BP__TRY(bp__check_input(fn, name, params[i]));
        if (!is_float(params[i]->dtype))
            return bp__error(BP_ERR_DTYPE, "%s: %s is %s; parameters are float tensors", fn,
                             name, bp_dtype_name(params[i]->dtype));
        if (!grads)
            continue;
        snprintf(name, sizeof name, "grads[%d]", (int)i);
        BP__TRY(bp__check_input(fn, name, grads[i]));
        const bp_tensor *p = params[i], *g = grads[i];
        if (g->dtype != p->dtype)
            return bp__error(BP_ERR_DTYPE, "%s: %s is %s but params[%d] is %s", fn, name,
                             bp_dtype_name(g->dtype), (int)i, bp_dtype_name(p->dtype));
        bool same = g->rank == p->rank;
        for (int32_t k = 0; same && k < p->rank; k++)
            same = g->shape[k] == p->shape[k];
        if (!same)
            return bp__error(BP_ERR_SHAPE, "%s: %s has shape %s but params[%d] has shape %s",
                             fn, name, BP__SHAPE_STR(a, g->rank, g->shape), (int)i,
                             BP__SHAPE_STR(b, p->rank, p->shape));
    }
    return BP_OK;
}

/* The step counter's dtype: the first parameter's, f32 for the half types
 * (whose integers stop being exact at 2048 / 256). */
static bp_dtype counter_dtype(bp_dtype d) { return d == BP_F16 || d == BP_BF16 ? BP_F32 : d; }

bp_status bp_optim_init(const bp_optimizer *opt, int32_t n, const bp_tensor *const *params,
                        bp_tensor **state)
{
    static const char fn[] = "bp_optim_init";
    bp_optimizer o;
    BP__TRY(read_opt(fn, opt, &o));
    BP__TRY(check_params(fn, n, params, NULL));
    if (!state)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: state is NULL", fn);
    int32_t k = per_param(&o), total = 1 + n * k;
    for (int32_t i = 0; i < total; i++)
        state[i] = NULL;
    bp_backend *be = bp_tensor_backend(params[0]);
    bp_status st = bp_zeros(be, counter_dtype(params[0]->dtype), 0, NULL, &state[0]);
    for (int32_t i = 0; i < n && st == BP_OK; i++)
        for (int32_t j = 0; j < k && st == BP_OK; j++)
            st = bp_zeros(bp_tensor_backend(params[i]), params[i]->dtype, params[i]->rank,
                          params[i]->shape, &state[1 + i * k + j]);
    if (st != BP_OK)
        for (int32_t i = 0; i < total; i++) {
            bp_tensor_release(state[i]);
            state[i] = NULL;
        }
    return st;
}

/* The factor that scales every gradient to a global norm of at most max:
 * min(1, max / (norm + 1e-6)), PyTorch's clip_grad_norm_. */
static const bp_tensor *clip_factor(line *l, double max, int32_t n, const bp_tensor *const *grads,
                                    const bp_tensor *t)
{
    const bp_tensor *sq = NULL;
    for (int32_t i = 0; i < n; i++) {
        const bp_tensor *s = cast(l, sum_all(l, MUL(grads[i], grads[i])), t->dtype);
        sq = sq ? ADD(sq, s) : s;
    }
    const bp_tensor *norm = un(l, BP_OP_SQRT, sq);
    return bin(l, BP_OP_MINIMUM, num(l, t, 1.0), DIV(num(l, t, max), ADD(norm, num(l, t, 1e-6))));
}

static bp_status retain_into(line *l, const bp_tensor *t, bp_tensor **out)
{
    if (l->st != BP_OK)
        return l->st;
    bp_tensor_retain((bp_tensor *)t);
    *out = (bp_tensor *)t;
    return BP_OK;
}

/* One parameter's update; its new state into ns[0 .. per_param). */
static bp_status update_one(line *l, const bp_optimizer *o, const bp_tensor *p,
                            const bp_tensor *g, const bp_tensor *const *s, const bp_tensor *t1,
                            const bp_tensor *clip, bp_tensor **np, bp_tensor **ns)
{
    if (clip)
        g = MUL(g, cast(l, clip, g->dtype));
    if (o->weight_decay > 0 && o->kind != BP_OPTIM_ADAMW)
        g = ADD(g, MUL(num(l, p, o->weight_decay), p));
    const bp_tensor *lr = num(l, p, o->lr), *next = NULL;
    if (o->kind == BP_OPTIM_SGD) {
        const bp_tensor *d = g;
        if (o->momentum > 0) {
            /* buf = g on the first step, then momentum buf + (1 - dampening) g */
            const bp_tensor *first = bin(l, BP_OP_EQ, t1, num(l, t1, 1.0));
            const bp_tensor *later = ADD(MUL(num(l, p, o->momentum), s[0]),
                                         MUL(num(l, p, 1.0 - o->dampening), g));
            const bp_tensor *buf = NULL;
            if (l->st == BP_OK) {
                bp_tensor *w = NULL;
                bp_status st_ = bp_where(first, g, later, &w);
                buf = keep(l, st_, w);
            }
            d = o->nesterov ? ADD(g, MUL(num(l, p, o->momentum), buf)) : buf;
            BP__TRY(retain_into(l, buf, &ns[0]));
        }
        next = SUB(p, MUL(lr, d));
    } else {
        if (o->kind == BP_OPTIM_ADAMW && o->weight_decay > 0)
            p = MUL(p, num(l, p, 1.0 - o->lr * o->weight_decay));
        const bp_tensor *m = ADD(MUL(num(l, p, o->beta1), s[0]), MUL(num(l, p, 1 - o->beta1), g));
        const bp_tensor *v = ADD(MUL(num(l, p, o->beta2), s[1]),
                                 MUL(num(l, p, 1 - o->beta2), MUL(g, g)));
        /* PyTorch's arrangement: p - lr / bc1 m / (sqrt(v) / sqrt(bc2) + eps) */
        const bp_tensor *bc1 = SUB(num(l, t1, 1.0), bin(l, BP_OP_POW, num(l, t1, o->beta1), t1));
        const bp_tensor *bc2 = SUB(num(l, t1, 1.0), bin(l, BP_OP_POW, num(l, t1, o->beta2), t1));
        const bp_tensor *step = cast(l, DIV(num(l, t1, o->lr), bc1), p->dtype);
        const bp_tensor *denom = ADD(DIV(un(l, BP_OP_SQRT, v),
                                         cast(l, un(l, BP_OP_SQRT, bc2), p->dtype)),
                                     num(l, p, o->eps));
        next = SUB(p, MUL(step, DIV(m, denom)));
        BP__TRY(retain_into(l, m, &ns[0]));
        BP__TRY(retain_into(l, v, &ns[1]));
    }
    return retain_into(l, next, np);
}

bp_status bp_optim_step(const bp_optimizer *opt, int32_t n, const bp_tensor *const *params,
                        const bp_tensor *const *grads, const bp_tensor *const *state,
                        bp_tensor **new_params, bp_tensor **new_state)
{
    static const char fn[] = "bp_optim_step";
    bp_optimizer o;
    BP__TRY(read_opt(fn, opt, &o));
    BP__TRY(check_params(fn, n, params, grads));
    if (!state || !new_params || !new_state)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !state ? "state" : !new_params ? "new_params" : "new_state");
    int32_t k = per_param(&o), total = 1 + n * k;
    for (int32_t i = 0; i < n; i++)
        new_params[i] = NULL;
    for (int32_t i = 0; i < total; i++)
        new_state[i] = NULL;
    char name[32], a[BP__SHAPE_STR_CAP], b[BP__SHAPE_STR_CAP];
    for (int32_t i = 0; i < total; i++) {
        snprintf(name, sizeof name, "state[%d]", (int)i);
        BP__TRY(bp__check_input(fn, name, state[i]));
        const bp_tensor *s = state[i], *like = i == 0 ? NULL : params[(i - 1) / k];
        bool ok = i == 0 ? s->numel == 1 && is_float(s->dtype) : s->dtype == like->dtype;
        if (!ok)
            return bp__error(BP_ERR_SHAPE, "%s: %s does not match this optimizer and these "
                             "parameters (make the state with bp_optim_init for them; it holds "
                             "%d tensors: the step counter, then %d per parameter)",
                             fn, name, (int)total, (int)k);
        if (i == 0)
            continue;
        bool same = s->rank == like->rank;
        for (int32_t d = 0; same && d < s->rank; d++)
            same = s->shape[d] == like->shape[d];
        if (!same)
            return bp__error(BP_ERR_SHAPE, "%s: %s has shape %s but params[%d], whose state it "
                             "is, has shape %s; each state tensor after the step counter has "
                             "the same shape as its parameter (make the state with "
                             "bp_optim_init for these parameters)",
                             fn, name, BP__SHAPE_STR(a, s->rank, s->shape), (int)((i - 1) / k),
                             BP__SHAPE_STR(b, like->rank, like->shape));
    }
    line lines = {0}, *l = &lines;
    const bp_tensor *t1 = ADD(state[0], num(l, state[0], 1.0));
    bp_status st = retain_into(l, t1, &new_state[0]);
    const bp_tensor *clip = NULL;
    if (st == BP_OK && o.max_grad_norm > 0) {
        clip = clip_factor(l, o.max_grad_norm, n, grads, state[0]);
        st = l->st;
    }
    /* each parameter's temporaries go before the next one's are made */
    line each = {0};
    for (int32_t i = 0; i < n && st == BP_OK; i++) {
        st = update_one(&each, &o, params[i], grads[i], state + 1 + i * k, t1, clip,
                        &new_params[i], new_state + 1 + i * k);
        line_clear(&each);
    }
    line_free(&each);
    line_free(l);
    if (st != BP_OK) {
        for (int32_t i = 0; i < n; i++) {
            bp_tensor_release(new_params[i]);
            new_params[i] = NULL;
        }
        for (int32_t i = 0; i < total; i++) {
            bp_tensor_release(new_state[i]);
            new_state[i] = NULL;
        }
    }
    return st;
}
