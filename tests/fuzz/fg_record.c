/* fuzz_graph: recording. Every call is made twice, on the graph's values
 * (symbolic, or concrete ones that get captured) and eagerly on the
 * concrete twins, and the two must agree: the same status and message at
 * record time (index values aside: they are checked when the plan runs),
 * eager's dtype and shape for the symbolic result. */
#include <stdio.h>
#include <string.h>

#include "fg_state.h"
#include "fz_oracle.h"

/* Results larger than this are dropped (the graph keeps the node, and
 * compiling drops it unless an output needs it). */
#define FG_KEEP_ELEMS (4 * FG_CAP_ELEMS)

typedef struct fg_call {
    bp_status st;
    bp_tensor *o[2];
    char msg[1024];
} fg_call;

/* The op's outputs by its row: 1 or 2. */
static int fg_n_out(bp_op op) { return bp_op_arity(bp_op_info_of(op)->out, NULL) > 1 ? 2 : 1; }

static void fg_call_check(const char *what, const char *fn, bp_op op, fg_call *c)
{
    fz_trace("  %s %s -> %s%s%s", what, fn, bp_status_string(c->st), c->st ? ": " : "",
             c->st ? bp_last_error() : "");
    fz_status(fn, c->st);
    snprintf(c->msg, sizeof c->msg, "%s", c->st ? bp_last_error() : "");
    int n = fg_n_out(op);
    if (n == 1) {
        if (c->o[1] != FG_GARBAGE)
            fz_fail("%s set a second output it does not have", fn);
        c->o[1] = NULL;
    }
    for (int k = 0; k < n; k++) {
        if (c->st != BP_OK && c->o[k] != NULL)
            fz_fail("%s failed with %s but left output %d set", fn, bp_status_string(c->st), k);
        if (c->st == BP_OK && !c->o[k])
            fz_fail("%s returned BP_OK without output %d", fn, k);
        if (c->st == BP_OK) {
            fz_tensor_sane(fn, c->o[k]);
            char shape[160] = "";
            int m = 0;
            for (int32_t d = 0; d < bp_tensor_rank(c->o[k]) && m < 140; d++)
                m += snprintf(shape + m, sizeof shape - (size_t)m, "%s%lld", d ? ", " : "",
                              (long long)bp_tensor_shape(c->o[k])[d]);
            fz_trace("    = %s (%s)", bp_dtype_name(bp_tensor_dtype(c->o[k])), shape);
        }
    }
}

/* Step k's call on the given operands (the graph's, or the eager twins). */
static void fg_invoke(const fg_step *k, bp_tensor *const *in, bp_backend *creation, fg_call *c)
{
    c->o[0] = c->o[1] = FG_GARBAGE;
    c->st = BP_OK;
    fz_mark();
    switch (k->kind) {
    case FG_RESHAPE: c->st = bp_reshape(in[0], k->rank, k->shape, &c->o[0]); break;
    case FG_SQUEEZE:
        c->st = bp_squeeze(in[0], k->n_axes, k->n_axes ? k->axes : NULL, &c->o[0]);
        break;
    case FG_UNSQUEEZE: c->st = bp_unsqueeze(in[0], k->axis, &c->o[0]); break;
    case FG_OP: {
        bpt_op_args a = k->a;
        a.backend = creation;
        if (!bpt_op_invoke(k->op, in, &a, &c->o[0], &c->o[1], &c->st))
            fz_fail("op_args.c has no call for op %d", (int)k->op);
        break;
    }
    }
}

static const char *fg_step_name(const fg_step *k)
{
    switch (k->kind) {
    case FG_RESHAPE: return "bp_reshape";
    case FG_SQUEEZE: return "bp_squeeze";
    case FG_UNSQUEEZE: return "bp_unsqueeze";
    default: return bp_op_name(k->op);
    }
}

static bp_op fg_step_op(const fg_step *k) { return k->kind == FG_OP ? k->op : BP_OP_NEG; }

bp_tensor *fg_stand_in(fg_state *s, const bp_tensor *t)
{
    bp_tensor *z = NULL;
    fz_mark();
    bp_status st = bp_zeros(s->be, bp_tensor_dtype(t), bp_tensor_rank(t), bp_tensor_shape(t), &z);
    fz_status("bp_zeros", st);
    if (st != BP_OK)
        fz_fail("zeros like a recorded result: %s", bp_last_error());
    return z;
}

bp_status fg_step_eager(fg_state *s, int i, bp_tensor **o1, bp_tensor **o2)
{
    const fg_step *k = &s->step[i];
    bp_tensor *in[5];
    for (int j = 0; j < 5; j++)
        in[j] = fg_eager(s, k->in[j]);
    fg_call c;
    fg_invoke(k, in, s->be, &c);
    fg_call_check("replayed", fg_step_name(k), fg_step_op(k), &c);
    *o1 = c.o[0];
    *o2 = c.o[1];
    return c.st;
}

static bool fg_same_meta(const bp_tensor *a, const bp_tensor *b)
{
    return bp_tensor_dtype(a) == bp_tensor_dtype(b) && bp_tensor_rank(a) == bp_tensor_rank(b) &&
           memcmp(bp_tensor_shape(a), bp_tensor_shape(b),
                  (size_t)bp_tensor_rank(a) * sizeof(int64_t)) == 0;
}

/* Whether a call's results hold more than FG_EAGER_BYTES. */
#define FG_EAGER_BYTES ((int64_t)64 << 20)
static bool fg_too_big(const fg_call *g)
{
    for (int o = 0; o < 2; o++) {
        int64_t bytes = 0;
        if (g->st != BP_OK || !g->o[o])
            continue;
        if (__builtin_mul_overflow(bp_tensor_numel(g->o[o]),
                                   (int64_t)bp_dtype_size(bp_tensor_dtype(g->o[o])), &bytes) ||
            bytes > FG_EAGER_BYTES)
            return true;
    }
    return false;
}

/* A step on concrete operands only: an eager call, whose results are
 * constants. Not made with fuzzed arguments: eagerly a result's size is not
 * known before it is made (fuzz_api predicts it). */
static void fg_eager_only(fg_state *s, fg_step *k, bp_tensor *const *in)
{
    if (k->fuzzed_args)
        return;
    fg_call g;
    fg_invoke(k, in, s->be, &g);
    fg_call_check("eager-only", fg_step_name(k), fg_step_op(k), &g);
    for (int o = 0; o < 2; o++)
        if (g.st == BP_OK && g.o[o]) {
            if (bp_tensor_numel(g.o[o]) > FG_KEEP_ELEMS)
                bp_tensor_release(g.o[o]);
            else
                fg_value_add(s, FG_EAGER, g.o[o], NULL);
        }
}

/* Record step s->step[s->n_steps] (filled in by the caller): call it on
 * both sides, compare, and keep its results as values. */
static void fg_record(fg_state *s)
{
    fg_step *k = &s->step[s->n_steps];
    const char *fn = fg_step_name(k);
    bp_op op = fg_step_op(k);
    bp_tensor *gi[5], *ei[5];
    bool recorded = k->on_rec;
    for (int j = 0; j < 5; j++) {
        gi[j] = fg_sym(s, k->in[j]);
        ei[j] = fg_eager(s, k->in[j]);
        if (k->in[j] >= 0 && (s->v[k->in[j]].origin == FG_INPUT || s->v[k->in[j]].origin == FG_STEP))
            recorded = true;
        if (gi[j] && bp_tensor_numel(gi[j]) > FG_CAP_ELEMS)
            return;
    }
    if (!recorded) {
        fg_eager_only(s, k, gi);
        return;
    }
    fg_call g, e;
    fg_invoke(k, gi, k->on_rec ? s->rec : s->be, &g);
    fg_call_check("recorded", fn, op, &g);
    if (fg_too_big(&g)) {
        /* recording allocates nothing; the eager twin would make it (big
         * host blocks are mapped by the backend, past ASan's allocation
         * limit, and filled) */
        fz_trace("  too big to make eagerly: skipped");
        for (int o = 0; o < 2; o++)
            bp_tensor_release(g.o[o]);
        return;
    }
    fg_invoke(k, ei, s->be, &e);
    fg_call_check("eager", fn, op, &e);
    /* Index values are checked when the plan runs (docs/graphs.md): an
     * eager refusal for them poisons the recorded result, as a poisoned
     * operand (whose twin is a stand-in) does. */
    bool poisoned = g.st == BP_OK && e.st == BP_ERR_INDEX;
    for (int j = 0; j < 5; j++)
        poisoned = poisoned || (k->in[j] >= 0 && s->v[k->in[j]].poisoned);
    if (poisoned && g.st == BP_OK && e.st == BP_ERR_INDEX) {
        fz_trace("  poisoned: the plan must refuse the index values when it runs");
        e.st = BP_OK;
        for (int o = 0; o < 2; o++)
            e.o[o] = g.o[o] ? fg_stand_in(s, g.o[o]) : NULL;
    }
    if (e.st == BP_ERR_OUT_OF_MEMORY || g.st == BP_ERR_OUT_OF_MEMORY) {
        /* a huge result (fuzzed pads, sizes): recording allocates nothing */
        for (int o = 0; o < 2; o++) {
            bp_tensor_release(g.o[o]);
            bp_tensor_release(e.o[o]);
        }
        return;
    }
    if (g.st != e.st)
        fz_fail("%s: recorded on a graph it returns %s (%s), eagerly %s (%s)", fn,
                bp_status_string(g.st), g.msg, bp_status_string(e.st), e.msg);
    /* The same message too, but for a tensor of another backend: the graph's
     * refusal names the graph (graph_record.c, bp__graph_join). */
    if (g.st != BP_OK && g.st != BP_ERR_BACKEND_MISMATCH && strcmp(g.msg, e.msg) != 0)
        fz_fail("%s: recording and eager fail with %s but different messages:\n  graph: %s\n  "
                "eager: %s", fn, bp_status_string(g.st), g.msg, e.msg);
    if (g.st != BP_OK)
        return;
    bool keep = s->n_steps < FG_STEPS;
    for (int o = 0; o < 2; o++) {
        if (!g.o[o])
            continue;
        if (bp_tensor_backend(g.o[o]) != s->rec)
            fz_fail("%s on symbolic operands made a concrete tensor (on %s)", fn,
                    bp_backend_name(bp_tensor_backend(g.o[o])));
        if (!fg_same_meta(g.o[o], e.o[o]))
            fz_fail("%s: the recorded output %d is %s of rank %d, eager's %s of rank %d", fn, o,
                    bp_dtype_name(bp_tensor_dtype(g.o[o])), (int)bp_tensor_rank(g.o[o]),
                    bp_dtype_name(bp_tensor_dtype(e.o[o])), (int)bp_tensor_rank(e.o[o]));
        keep = keep && bp_tensor_numel(e.o[o]) <= FG_KEEP_ELEMS;
    }
    if (!keep) {
        for (int o = 0; o < 2; o++) {
            bp_tensor_release(g.o[o]);
            bp_tensor_release(e.o[o]);
        }
        return;
    }
    for (int o = 0; o < 2; o++) {
        if (!g.o[o])
            continue;
        int i = fg_value_add(s, FG_STEP, g.o[o], e.o[o]);
        k->out[o] = i;
        if (i >= 0) {
            s->v[i].step = s->n_steps;
            s->v[i].out = o;
            s->v[i].poisoned = poisoned;
        }
    }
    s->n_steps++;
}

static fg_step *fg_step_new(fg_state *s, fg_kind kind)
{
    if (s->syms_released || s->n_steps >= FG_STEPS)
        return NULL;
    fg_step *k = &s->step[s->n_steps];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    for (int j = 0; j < 5; j++)
        k->in[j] = -1;
    k->out[0] = k->out[1] = -1;
    return k;
}

/* Arguments close to the defaults, which are valid for (2, 3) operands:
 * axes and flags varied within what small shapes take, shapes made from
 * the operand's. */
static void fg_mild_args(fg_state *s, bp_op op, const bp_tensor *x, fg_step *k)
{
    static const int32_t axes[] = {-1, 0, 1, -2, 0, 2};
    bpt_op_args *a = &k->a;
    int32_t rank = bp_tensor_rank(x);
    a->axis = axes[fz_pick(&s->in, 6)];
    a->keepdims = fz_bool(&s->in);
    a->n_axes = (int32_t)fz_pick(&s->in, 3);
    k->store.axes[0] = axes[fz_pick(&s->in, 6)];
    k->store.axes[1] = axes[fz_pick(&s->in, 6)];
    a->axes = k->store.axes;
    if (fz_bool(&s->in))
        a->flag0 = !a->flag0;
    if (fz_bool(&s->in))
        a->flag1 = !a->flag1;
    if (op == BP_OP_TOPK || op == BP_OP_TRILU)
        a->k = (int64_t)fz_pick(&s->in, 4) - (op == BP_OP_TRILU);
    if (op == BP_OP_CAST) {
        static const bp_dtype to[] = {BP_F32, BP_F64, BP_F16, BP_BF16, BP_I32, BP_I64, BP_BOOL,
                                      BP_U8, BP_I8, BP_I16, BP_U16, BP_U32, BP_U64};
        a->dtype = to[fz_pick(&s->in, sizeof to / sizeof to[0])];
    }
    if (op == BP_OP_BROADCAST_TO && x && rank < BP_MAX_RANK) { /* x's shape, an axis in front */
        k->store.buf[3 * BP_MAX_RANK] = 1 + (int64_t)fz_pick(&s->in, 3);
        memcpy(&k->store.buf[3 * BP_MAX_RANK + 1], bp_tensor_shape(x), (size_t)rank * sizeof(int64_t));
        a->rank = rank + 1;
        a->shape = &k->store.buf[3 * BP_MAX_RANK];
    }
    if (op == BP_OP_TRANSPOSE && x && rank > 1 && fz_bool(&s->in)) { /* rotate the axes */
        for (int32_t d = 0; d < rank; d++)
            k->store.axes[d] = (d + 1) % rank;
        a->perm = k->store.axes;
    }
    if (op == BP_OP_SLICE && x && rank > 0) { /* from 1 (or 0) to the end, step 1 or 2 */
        for (int32_t d = 0; d < rank; d++) {
            k->store.buf[d] = fz_pick(&s->in, 2);
            k->store.buf[BP_MAX_RANK + d] = bp_tensor_shape(x)[d];
            k->store.buf[2 * BP_MAX_RANK + d] = 1 + fz_pick(&s->in, 2);
        }
        a->starts = k->store.buf;
        a->stops = k->store.buf + BP_MAX_RANK;
        a->steps = k->store.buf + 2 * BP_MAX_RANK;
    }
}

void fg_act_op(fg_state *s)
{
    fg_step *k = fg_step_new(s, FG_OP);
    if (!k)
        return;
    bp_op op = (bp_op)fz_pick(&s->in, BP_OP_COUNT);
    const bp_op_info *row = bp_op_info_of(op);
    uint32_t optional = 0;
    int32_t n_in = bp_op_arity(row->in, &optional);
    k->op = op;
    for (int32_t j = 0; j < n_in && j < 5; j++) {
        int v = fg_value_pick(s);
        if ((optional >> j & 1u) && fz_bool(&s->in))
            v = -1; /* an optional input left out */
        k->in[j] = v;
    }
    const bp_tensor *typed = row->typed >= 0 ? fg_sym(s, k->in[row->typed]) : NULL;
    bp_dtype dt = typed ? bp_tensor_dtype(typed) : BP_F32;
    bpt_op_args_default(op, s->be, dt, &k->a);
    uint8_t mode = fz_u8(&s->in);
    if (mode < 176)
        fg_mild_args(s, op, fg_sym(s, k->in[0]), k);
    else if (mode >= 232)
        fz_op_args(&s->in, op, &k->a, &k->store);
    k->fuzzed_args = mode >= 232;
    if (n_in == 0) {
        k->on_rec = s->rec && fz_u8(&s->in) < 200;
        int64_t numel = 1;
        for (int32_t d = 0; k->a.shape && d < k->a.rank && d < BP_MAX_RANK; d++)
            numel *= k->a.shape[d] > 0 && k->a.shape[d] < 1024 ? k->a.shape[d] : 1;
        if (numel > FG_KEEP_ELEMS)
            return;
    }
    fz_trace("  %s on values %d %d %d%s, %s arguments", row->name, k->in[0], k->in[1], k->in[2],
             k->on_rec ? ", on the recording backend" : "",
             mode < 176 ? "mild" : mode < 232 ? "default" : "fuzzed");
    fg_record(s);
}

void fg_act_view(fg_state *s)
{
    fg_step *k = fg_step_new(s, (fg_kind)(FG_RESHAPE + fz_pick(&s->in, 3)));
    if (!k)
        return;
    int i = fg_value_pick(s);
    k->in[0] = i;
    const bp_tensor *x = fg_sym(s, i);
    int32_t rank = bp_tensor_rank(x);
    uint8_t b = fz_u8(&s->in);
    switch (k->kind) {
    case FG_RESHAPE:
        if (b < 96) { /* flatten */
            k->rank = 1;
            k->shape[0] = -1;
        } else if (b < 192 && x) { /* split the first axis, or add a 1 */
            k->rank = rank + 1 < BP_MAX_RANK ? rank + 1 : rank;
            k->shape[0] = 1;
            memcpy(k->shape + 1, bp_tensor_shape(x), (size_t)(k->rank - 1) * sizeof(int64_t));
            if (fz_bool(&s->in))
                k->shape[fz_pick(&s->in, (unsigned)k->rank)] = -1;
        } else { /* anything */
            k->rank = (int32_t)fz_pick(&s->in, 4);
            for (int32_t d = 0; d < k->rank; d++)
                k->shape[d] = (int64_t)fz_pick(&s->in, 6) - 1;
        }
        break;
    case FG_SQUEEZE:
        k->n_axes = (int32_t)fz_pick(&s->in, 3);
        for (int32_t d = 0; d < k->n_axes; d++)
            k->axes[d] = (int32_t)fz_pick(&s->in, 7) - 3;
        break;
    default:
        k->axis = (int32_t)fz_pick(&s->in, 9) - 4;
        break;
    }
    fg_record(s);
}

/* An add that must fail for its shapes: x and a constant of x's dtype whose
 * extent on one axis neither equals x's nor is 1 (nor is x's 1). The
 * constant stays as a value. */
void fg_act_bad_shapes(fg_state *s)
{
    int i = fg_value_pick(s);
    const bp_tensor *x = fg_sym(s, i);
    if (!x || !bp_tensor_is_valid(x) || bp_tensor_rank(x) == 0 || bp_tensor_dtype(x) == BP_BOOL ||
        bp_tensor_numel(x) > FG_CAP_ELEMS / 4 ||
        (bp_tensor_backend(x) != s->be && bp_tensor_backend(x) != s->rec))
        return;
    int32_t rank = bp_tensor_rank(x), ax = (int32_t)fz_pick(&s->in, (unsigned)rank);
    int64_t shape[BP_MAX_RANK];
    memcpy(shape, bp_tensor_shape(x), (size_t)rank * sizeof *shape);
    if (shape[ax] == 1)
        return; /* every extent broadcasts against 1 */
    shape[ax] = shape[ax] == 0 ? 2 : shape[ax] + 1;
    bp_tensor *c = NULL;
    fg_from_host(s, s->be, bp_tensor_dtype(x), rank, shape, &c);
    bp_tensor *gi[2] = {fg_sym(s, i), c}, *ei[2] = {fg_eager(s, i), c};
    bool symbolic = s->v[i].origin == FG_INPUT || s->v[i].origin == FG_STEP;
    bool swap = fz_bool(&s->in);
    fg_call g, e;
    g.o[0] = e.o[0] = FG_GARBAGE;
    fz_mark();
    g.st = swap ? bp_sub(gi[1], gi[0], &g.o[0]) : bp_add(gi[0], gi[1], &g.o[0]);
    g.o[1] = FG_GARBAGE;
    fg_call_check(symbolic ? "recorded" : "eager-only", swap ? "bp_sub" : "bp_add", BP_OP_ADD, &g);
    if (g.st != BP_ERR_SHAPE)
        fz_fail("an add of shapes that do not broadcast returned %s", bp_status_string(g.st));
    if (symbolic) {
        fz_mark();
        e.st = swap ? bp_sub(ei[1], ei[0], &e.o[0]) : bp_add(ei[0], ei[1], &e.o[0]);
        e.o[1] = FG_GARBAGE;
        fg_call_check("eager", swap ? "bp_sub" : "bp_add", BP_OP_ADD, &e);
        if (e.st != g.st || strcmp(e.msg, g.msg) != 0)
            fz_fail("an add of shapes that do not broadcast: recorded %s (%s), eager %s (%s)",
                    bp_status_string(g.st), g.msg, bp_status_string(e.st), e.msg);
    }
    fg_value_add(s, FG_CONST, c, NULL);
}

/* A value of the graph with the dtype and shape of t's (but t's own), or
 * -1: an operand for a residual add. */
static int fg_value_like(const fg_state *s, int not, const bp_tensor *t)
{
    for (int i = s->n_values - 1; i >= 0; i--) {
        const bp_tensor *v = fg_sym(s, i);
        if (i != not && v && bp_tensor_is_valid(v) && fg_same_meta(v, t))
            return i;
    }
    return -1;
}

/* A step of op on values a and b (b -1: unary) with default arguments,
 * recorded; the value it made, or -1. */
static int fg_record_on(fg_state *s, bp_op op, int a, int b)
{
    fg_step *k = fg_step_new(s, FG_OP);
    if (!k || a < 0)
        return -1;
    k->op = op;
    k->in[0] = a;
    k->in[1] = b;
    bpt_op_args_default(op, s->be, bp_tensor_dtype(fg_sym(s, a)), &k->a);
    fz_trace("  %s on values %d %d", bp_op_name(op), a, b);
    fg_record(s);
    return k->out[0];
}

/* A convolution as networks have them, where a backend may prepare it (a
 * plan's convolution whose weights are captured tensors of the library's
 * memory: blas_cpu's direct, depthwise and GEMM kernels with the epilogues
 * they take, docs/graphs.md): x a value of rank 4 (N, C, H, W), the
 * weights and (half the time) the bias made from host data, a 3x3 window
 * padded by 1 (or at stride 2, or dilated by 2), a 1x1 window, or a 3x1
 * one; 1 to 20 filters, or one per channel (depthwise); then, sometimes,
 * a residual add of another value of the output's shape (or a new
 * constant of it), and a relu, as a residual block ends. Random ops
 * reach none of these: they need a 2-D window of captured weights over
 * more than 8 positions. */
void fg_act_conv(fg_state *s)
{
    int xi = fg_value_pick(s);
    const bp_tensor *x = fg_sym(s, xi);
    uint8_t how = fz_u8(&s->in), tail = fz_u8(&s->in);
    if (!x || !bp_tensor_is_valid(x) || bp_tensor_rank(x) != 4 || s->syms_released)
        return;
    bp_dtype dt = bp_tensor_dtype(x);
    if (dt != BP_F32 && dt != BP_F64 && dt != BP_F16 && dt != BP_BF16)
        return;
    const int64_t C = bp_tensor_shape(x)[1];
    /* kind: 3x3 (0 and 1), at stride 2, dilated, 1x1, 3x1; how & 32: a bias */
    const int kind = how % 6;
    const bool depthwise = C > 0 && how >= 192 && kind != 4;
    const int64_t M = depthwise ? C : 1 + (int64_t)fz_pick(&s->in, 20);
    int64_t wshape[4] = {M, depthwise ? 1 : C, kind == 4 ? 1 : 3, kind == 4 ? 1 : 3};
    if (kind == 5)
        wshape[3] = 1;
    bp_tensor *w = NULL, *bias = NULL;
    if (M * wshape[1] * wshape[2] * wshape[3] > FG_CAP_ELEMS)
        return;
    fg_from_host(s, s->be, dt, 4, wshape, &w);
    int wi = fg_value_add(s, FG_CONST, w, NULL), bi = -1;
    if (wi >= 0 && how & 32) {
        fg_from_host(s, s->be, dt, 1, &M, &bias);
        bi = fg_value_add(s, FG_CONST, bias, NULL);
    }
    fg_step *k = fg_step_new(s, FG_OP);
    if (!k || wi < 0)
        return;
    k->op = BP_OP_CONV;
    k->in[0] = xi;
    k->in[1] = wi;
    k->in[2] = bi;
    bpt_op_args_default(BP_OP_CONV, s->be, dt, &k->a);
    k->store.window = (bp_window)BP_WINDOW_INIT;
    bp_window *win = &k->store.window;
    win->groups = depthwise ? C : 1;
    if (kind != 4) /* "same" padding along the axes the window spans */
        win->pads[0] = win->pads[2] = 1;
    if (kind != 4 && kind != 5)
        win->pads[1] = win->pads[3] = 1;
    if (kind == 2)
        win->strides[0] = win->strides[1] = 2;
    if (kind == 3) {
        win->dilations[0] = win->dilations[1] = 2;
        win->pads[0] = win->pads[1] = win->pads[2] = win->pads[3] = 2;
    }
    k->a.window = win;
    fz_trace("  conv on value %d: %lld filters of (%lld, %lld, %lld)%s%s", xi, (long long)M,
             (long long)wshape[1], (long long)wshape[2], (long long)wshape[3],
             depthwise ? ", depthwise" : "", bi >= 0 ? ", bias" : "");
    fg_record(s);
    int y = k->out[0];
    if (y < 0 || tail >= 224)
        return;
    if (tail < 128) { /* the residual: another value of y's shape, or a new constant */
        int r = tail < 64 ? fg_value_like(s, y, fg_sym(s, y)) : -1;
        if (r < 0 && bp_tensor_numel(fg_sym(s, y)) <= FG_CAP_ELEMS) {
            bp_tensor *c = NULL;
            fg_from_host(s, s->be, dt, 4, bp_tensor_shape(fg_sym(s, y)), &c);
            r = fg_value_add(s, FG_CONST, c, NULL);
        }
        y = r < 0 ? -1 : fg_record_on(s, BP_OP_ADD, tail & 1 ? r : y, tail & 1 ? y : r);
    }
    if (y >= 0 && tail < 192)
        fg_record_on(s, BP_OP_RELU, y, -1);
}
