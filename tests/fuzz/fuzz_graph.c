/* fuzz_graph: random graphs (graph.h), recorded, compiled and run, against
 * the same calls made eagerly.
 *
 * Each input builds one graph on binary or blas_cpu: 1 to 3 symbolic
 * inputs (bp_graph_input) of small shapes and a float dtype, then up to
 * FG_STEPS actions: an op of the op table on values of the graph (through
 * tests/support/op_args.c, its arguments small and valid or fuzzed as
 * fuzz_api fuzzes them: fz_op_args.c), creation ops on the recording
 * backend, reshape / squeeze / unsqueeze, concrete tensors mixed in (made
 * from host data, or over the harness's memory through DLPack, or on the
 * other backend), convolutions as networks have them (rank-4 values,
 * captured weights, 3x3, strided, dilated, 1x1 and depthwise windows, then
 * a residual add and a relu: the nodes blas_cpu prepares, with the
 * epilogues it takes), ops that must fail for their shapes, outputs marked (on
 * concrete tensors too, which must be refused), symbolic tensors read,
 * ops mixing two graphs, a captured tensor's handle transferred away, a
 * plan compiled half way. Every op is also called eagerly on concrete
 * tensors standing for the symbolic ones.
 *
 * Then the graph is compiled (with or without merging), and the plan runs
 * with wrong inputs (shape, dtype, backend, symbolic, NULL, counts: each
 * must fail with its status and set no output), with the inputs the eager
 * calls had, twice, and, half the time, with new inputs after the DLPack
 * constants' memory was rewritten (the eager calls are replayed on them).
 * The graph, its symbolic tensors and the plans are released in random
 * orders, some before the plans run.
 *
 * Oracles (fz_oracle.h for statuses and messages; a violation traps):
 *  - recording checks as eager calls do: the same status, and the same
 *    message (a tensor of another backend aside, whose message names the
 *    graph), except the ops the core refuses while recording because it
 *    checks index values on the host (docs/graphs.md);
 *  - a recorded result is symbolic, with eager's dtype and shape;
 *  - bp_graph_output refuses concrete tensors, tensors of another graph;
 *    compiling a graph without outputs is refused; the plan's statistics
 *    hang together;
 *  - a run's outputs are eager's tensors bit for bit (dtype, shape, every
 *    byte), on every run, after the graph and its tensors are gone, and on
 *    new inputs and rewritten constants (a recorded op whose eager twin now
 *    fails, while the plan runs it, is a finding); a plan with prepared
 *    nodes (within the op's tolerance of eager, not its bits) gives the
 *    same bits on its second run of the same inputs as on its first;
 *  - a run refused sets no output and leaves the backend's memory as it
 *    was;
 *  - at the end, with everything released, the backends hold no bytes,
 *    every DLPack deleter ran exactly once, nothing reached stdout, and
 *    LeakSanitizer finds no leak.
 *
 * Decoding (fz_bytes.h): the first bytes choose the backend and the inputs,
 * then each action starts with a byte picking it (0xff: no more actions),
 * then fg_finish reads how to compile, run and release. Seeds:
 * tests/fuzz/corpus/fuzz_graph, written by make_graph_seeds.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg_state.h"
#include "fz_anchor.h"
#include "fz_data.h"
#include "fz_oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fg_config[600];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = fz_setup();
    snprintf(fg_config, sizeof fg_config, "%s/graph.ini", dir);
    FILE *f = fopen(fg_config, "w");
    if (!f || fputs("[backplane]\nlog_level = off\n[backend.blas_cpu]\nthreads = 2\n", f) < 0 ||
        fclose(f) != 0)
        fz_fail("cannot write %s", fg_config);
    fz_anchor(dir);
    return 0;
}

/* ---- values ------------------------------------------------------------------ */

int fg_value_add(fg_state *s, fg_origin origin, bp_tensor *sym, bp_tensor *eager)
{
    if (s->n_values >= FG_VALUES) {
        bp_tensor_release(sym);
        bp_tensor_release(eager);
        return -1;
    }
    fg_value *v = &s->v[s->n_values];
    memset(v, 0, sizeof *v);
    v->origin = origin;
    v->sym = sym;
    v->eager = eager;
    v->input = v->step = v->out = -1;
    return s->n_values++;
}

bp_tensor *fg_sym(const fg_state *s, int i) { return i < 0 ? NULL : s->v[i].sym; }

bp_tensor *fg_eager(const fg_state *s, int i)
{
    if (i < 0)
        return NULL;
    const fg_value *v = &s->v[i];
    return v->origin == FG_INPUT || v->origin == FG_STEP ? v->eager : v->sym;
}

int fg_value_pick(fg_state *s)
{
    if (s->n_values == 0)
        return -1;
    uint8_t b = fz_u8(&s->in);
    if (b == 0xff)
        return -1;
    /* the recent values most of the time: graphs grow deep, not wide */
    if (b < 128 && s->n_values > 4)
        return s->n_values - 1 - (int)(b % 4);
    return (int)(b % (unsigned)s->n_values);
}

/* Extents 1..3 mostly, 0 and 4 sometimes; rank 0..3; or an image batch
 * (N, C, H, W) as convolutions take it (fg_act_conv): 1 or 2 images of 1
 * to 4 channels, 3, 4, 6 or 1 rows of 3, 5, 9 or 20. */
int32_t fg_small_shape(fg_state *s, int64_t *shape)
{
    static const int32_t ranks[] = {1, 2, 2, 3, 0, 1, 2, 3, 4};
    int32_t rank = ranks[fz_pick(&s->in, 9)];
    if (rank == 4) {
        static const int64_t rows[] = {3, 4, 6, 1}, cols[] = {3, 5, 9, 20};
        shape[0] = 1 + (int64_t)fz_pick(&s->in, 2);
        shape[1] = 1 + (int64_t)fz_pick(&s->in, 4);
        shape[2] = rows[fz_pick(&s->in, 4)];
        shape[3] = cols[fz_pick(&s->in, 4)];
        return rank;
    }
    for (int32_t k = 0; k < rank; k++) {
        static const int64_t ext[] = {1, 2, 3, 2, 3, 1, 4, 0};
        shape[k] = ext[fz_pick(&s->in, 8)];
    }
    return rank;
}

bp_status fg_from_host(fg_state *s, bp_backend *be, bp_dtype dt, int32_t rank,
                       const int64_t *shape, bp_tensor **out)
{
    int64_t numel = 1;
    for (int32_t k = 0; k < rank; k++)
        numel *= shape[k];
    static _Alignas(64) unsigned char buf[FG_CAP_ELEMS * 8];
    if (numel > FG_CAP_ELEMS)
        fz_fail("fg_from_host: %lld elements", (long long)numel);
    fz_fill(&s->in, (int)dt, numel, buf);
    *out = FG_GARBAGE;
    fz_mark();
    bp_status st = bp_tensor_from_host(be, dt, rank, shape, buf, out);
    fz_result("bp_tensor_from_host", st, *out);
    if (st != BP_OK)
        fz_fail("bp_tensor_from_host of a small tensor failed: %s", bp_last_error());
    return st;
}

/* A float dtype for the graph's inputs. */
static bp_dtype fg_float(fg_state *s)
{
    static const bp_dtype f[] = {BP_F32, BP_F32, BP_F64, BP_F16, BP_BF16};
    return f[fz_pick(&s->in, 5)];
}

/* ---- constants ---------------------------------------------------------------- */

static void fg_const_deleter(DLManagedTensor *m)
{
    fg_const *c = m->manager_ctx;
    c->deleted++;
}

static bool fg_dl_dtype(bp_dtype dt, DLDataType *out)
{
    switch (dt) {
    case BP_BOOL: *out = (DLDataType){6, 8, 1}; return true; /* kDLBool (DLPack 0.8) */
    case BP_U8: *out = (DLDataType){kDLUInt, 8, 1}; return true;
    case BP_I8: *out = (DLDataType){kDLInt, 8, 1}; return true;
    case BP_I32: *out = (DLDataType){kDLInt, 32, 1}; return true;
    case BP_I64: *out = (DLDataType){kDLInt, 64, 1}; return true;
    case BP_F16: *out = (DLDataType){kDLFloat, 16, 1}; return true;
    case BP_BF16: *out = (DLDataType){kDLBfloat, 16, 1}; return true;
    case BP_F32: *out = (DLDataType){kDLFloat, 32, 1}; return true;
    case BP_F64: *out = (DLDataType){kDLFloat, 64, 1}; return true;
    case BP_I16: *out = (DLDataType){kDLInt, 16, 1}; return true;
    case BP_U16: *out = (DLDataType){kDLUInt, 16, 1}; return true;
    case BP_U32: *out = (DLDataType){kDLUInt, 32, 1}; return true;
    case BP_U64: *out = (DLDataType){kDLUInt, 64, 1}; return true;
    }
    return false;
}

/* Index values for an index constant: in 0..2, so that gathers and
 * scatters on small shapes often succeed. */
static void fg_small_indices(fg_state *s, bp_dtype dt, int64_t numel, unsigned char *dst)
{
    for (int64_t i = 0; i < numel; i++) {
        int64_t v = (int64_t)fz_pick(&s->in, 4) - (fz_u8(&s->in) == 0xff ? 3 : 0);
        if (dt == BP_I32) {
            int32_t w = (int32_t)v;
            memcpy(dst + 4 * i, &w, 4);
        } else {
            memcpy(dst + 8 * i, &v, 8);
        }
    }
}

/* A concrete tensor: of a float dtype, an index dtype or bool; shaped like
 * a value of the graph (so that it broadcasts) or small; on the graph's
 * backend (made from host data, or over the harness's memory through
 * DLPack), or on the other backend (every op mixing it in must refuse). */
static void fg_act_const(fg_state *s)
{
    static const bp_dtype dts[] = {BP_F32, BP_F32, BP_F64, BP_F16, BP_BF16, BP_I64, BP_I64,
                                   BP_I32, BP_BOOL, BP_U8, BP_I16, BP_U16, BP_U32, BP_U64};
    int like = fg_value_pick(s);
    uint8_t how = fz_u8(&s->in);
    bp_dtype dt = how < 128 && like >= 0 ? bp_tensor_dtype(fg_sym(s, like))
                                         : dts[fz_pick(&s->in, sizeof dts / sizeof dts[0])];
    int64_t shape[BP_MAX_RANK];
    int32_t rank;
    if (like >= 0 && fz_u8(&s->in) < 192) {
        rank = bp_tensor_rank(fg_sym(s, like));
        memcpy(shape, bp_tensor_shape(fg_sym(s, like)), (size_t)rank * sizeof *shape);
        if (rank > 0 && fz_u8(&s->in) < 64)
            shape[fz_pick(&s->in, (unsigned)rank)] = 1; /* broadcasts along that axis */
    } else {
        rank = fg_small_shape(s, shape);
    }
    int64_t numel = 1;
    for (int32_t k = 0; k < rank; k++)
        numel *= shape[k];
    if (numel > FG_CAP_ELEMS)
        return;
    bool index = dt == BP_I64 || dt == BP_I32;
    uint8_t where = fz_u8(&s->in);
    bp_backend *be = where < 224 ? s->be : s->other;
    bp_tensor *t = FG_GARBAGE;
    if (where < 96 && s->n_consts < FG_CONSTS &&
        (size_t)numel * bp_dtype_size(dt) <= FG_CONST_BYTES) {
        fg_const *c = &s->c[s->n_consts];
        memset(c, 0, sizeof *c);
        c->dtype = dt;
        c->numel = numel;
        memcpy(c->shape, shape, (size_t)rank * sizeof *shape);
        if (index)
            fg_small_indices(s, dt, numel, c->bytes);
        else
            fz_fill(&s->in, (int)dt, numel, c->bytes);
        c->m.dl_tensor.data = c->bytes;
        c->m.dl_tensor.device = (DLDevice){kDLCPU, 0};
        c->m.dl_tensor.ndim = rank;
        fg_dl_dtype(dt, &c->m.dl_tensor.dtype);
        c->m.dl_tensor.shape = c->shape;
        c->m.manager_ctx = c;
        c->m.deleter = fg_const_deleter;
        fz_mark();
        bp_status st = bp_tensor_from_dlpack(be, &c->m, &t);
        fz_result("bp_tensor_from_dlpack", st, t);
        if (st != BP_OK)
            fz_fail("bp_tensor_from_dlpack of harness memory failed: %s", bp_last_error());
        c->lent = true;
        s->n_consts++;
    } else if (index) {
        static _Alignas(64) unsigned char buf[FG_CAP_ELEMS * 8];
        fg_small_indices(s, dt, numel, buf);
        fz_mark();
        bp_status st = bp_tensor_from_host(be, dt, rank, shape, buf, &t);
        fz_result("bp_tensor_from_host", st, t);
        if (st != BP_OK)
            fz_fail("bp_tensor_from_host of a small tensor failed: %s", bp_last_error());
    } else {
        fg_from_host(s, be, dt, rank, shape, &t);
    }
    fg_value_add(s, FG_CONST, t, NULL);
}

/* A constant's handle given away by bp_backend_transfer. If the graph
 * captured it, the graph's reference makes the transfer a copy; if not, the
 * handle is gone and both sides' later ops must refuse it alike. */
static void fg_act_transfer(fg_state *s)
{
    int i = fg_value_pick(s);
    if (i < 0 || s->v[i].origin != FG_CONST || !bp_tensor_is_valid(s->v[i].sym))
        return;
    bp_tensor *out = FG_GARBAGE;
    fz_mark();
    bp_status st = bp_backend_transfer(s->v[i].sym, fz_bool(&s->in) ? s->other : s->be, &out);
    fz_result("bp_backend_transfer", st, out);
    bp_tensor_release(out);
}

/* Symbolic tensors cannot be read; ops of two graphs never meet; the graph
 * functions refuse what is not theirs. */
static void fg_act_misuse(fg_state *s)
{
    int i = fg_value_pick(s);
    bp_tensor *t = fg_sym(s, i);
    bool symbolic = t && bp_tensor_backend(t) == s->rec && s->rec;
    bp_status st;
    switch (fz_pick(&s->in, 6)) {
    case 0: { /* read */
        if (!symbolic)
            return;
        static unsigned char buf[FG_CAP_ELEMS * 8];
        fz_mark();
        st = bp_tensor_to_host(t, buf, sizeof buf);
        fz_status("bp_tensor_to_host", st);
        if (st != BP_ERR_INVALID_ARGUMENT || !strstr(bp_last_error(), "symbolic"))
            fz_fail("bp_tensor_to_host of a symbolic tensor: %s: %s", bp_status_string(st),
                    bp_last_error());
        double d;
        fz_mark();
        st = bp_item_f64(t, &d);
        fz_status("bp_item_f64", st);
        if (st == BP_OK)
            fz_fail("bp_item_f64 of a symbolic tensor succeeded");
        return;
    }
    case 1: { /* a second graph's input meets this value */
        bp_graph *g2 = NULL;
        bp_tensor *x2 = NULL, *y = FG_GARBAGE;
        if (!t || !bp_tensor_is_valid(t) || bp_tensor_dtype(t) == BP_BOOL)
            return;
        fz_mark();
        st = bp_graph_create(s->be, &g2);
        fz_status("bp_graph_create", st);
        if (st != BP_OK)
            fz_fail("bp_graph_create: %s", bp_last_error());
        fz_mark();
        st = bp_graph_input(g2, bp_tensor_dtype(t), bp_tensor_rank(t), bp_tensor_shape(t), &x2);
        fz_result("bp_graph_input", st, x2);
        fz_mark();
        st = bp_add(t, x2, &y);
        fz_result("bp_add", st, y);
        bool concrete = bp_tensor_backend(t) == s->be;
        if (symbolic && st != BP_ERR_INVALID_ARGUMENT)
            fz_fail("an op on symbolic tensors of two graphs: %s", bp_status_string(st));
        if (concrete && st != BP_OK)
            fz_fail("a concrete tensor of the graph's backend was not captured by a second "
                    "graph: %s: %s", bp_status_string(st), bp_last_error());
        if (s->g) {
            fz_mark();
            st = bp_graph_output(s->g, x2);
            fz_status("bp_graph_output", st);
            if (st != BP_ERR_INVALID_ARGUMENT)
                fz_fail("bp_graph_output took another graph's tensor: %s", bp_status_string(st));
        }
        bp_tensor_release(y);
        if (fz_bool(&s->in)) { /* either order */
            bp_graph_release(g2);
            bp_tensor_release(x2);
        } else {
            bp_tensor_release(x2);
            bp_graph_release(g2);
        }
        return;
    }
    case 2: { /* graph functions given what is not theirs */
        bp_graph *g = (bp_graph *)FG_GARBAGE;
        fz_mark();
        st = bp_graph_create(s->rec ? s->rec : NULL, &g);
        fz_status("bp_graph_create", st);
        if (st != BP_ERR_INVALID_ARGUMENT || g != NULL)
            fz_fail("bp_graph_create(recording backend or NULL): %s", bp_status_string(st));
        bp_tensor *x = FG_GARBAGE;
        fz_mark();
        st = bp_graph_input(NULL, BP_F32, 0, NULL, &x);
        fz_result("bp_graph_input", st, x);
        if (st != BP_ERR_INVALID_ARGUMENT)
            fz_fail("bp_graph_input(NULL): %s", bp_status_string(st));
        fz_mark();
        st = bp_graph_output(NULL, t);
        fz_status("bp_graph_output", st);
        if (st != BP_ERR_INVALID_ARGUMENT)
            fz_fail("bp_graph_output(NULL graph): %s", bp_status_string(st));
        return;
    }
    case 3: { /* inputs of shapes and dtypes no tensor has */
        if (!s->g || s->syms_released)
            return;
        int32_t rank = fz_rank(&s->in);
        int64_t buf[BP_MAX_RANK];
        const int64_t *shape = fz_shape(&s->in, rank, buf);
        int dt = fz_dtype(&s->in);
        bool zero = false;
        for (int32_t k = 0; shape && k < rank && k < BP_MAX_RANK; k++)
            zero = zero || shape[k] == 0;
        int64_t numel = 0;
        bool bad = rank < 0 || rank > BP_MAX_RANK || (rank > 0 && !shape) || !bp_dtype_valid(dt);
        if (!bad && !fz_numel(rank, shape, bp_dtype_size((bp_dtype)dt), &numel)) {
            bool negative = false;
            for (int32_t k = 0; k < rank; k++)
                negative = negative || shape[k] < 0;
            bad = negative || !zero; /* zero elements, absurd extents: either answer */
        }
        if (!bad)
            return; /* a valid input would change the plan's inputs */
        bp_tensor *x = FG_GARBAGE;
        fz_mark();
        st = bp_graph_input(s->g, (bp_dtype)dt, rank, shape, &x);
        fz_result("bp_graph_input", st, x);
        if (st == BP_OK)
            fz_fail("bp_graph_input accepted dtype %d, rank %d%s", dt, (int)rank,
                    shape ? "" : ", shape NULL");
        return;
    }
    case 4: { /* NULL graphs, plans and outs */
        bp_graph_exec *exe = (bp_graph_exec *)FG_GARBAGE;
        fz_mark();
        st = bp_graph_compile(NULL, NULL, &exe);
        fz_status("bp_graph_compile", st);
        if (st != BP_ERR_INVALID_ARGUMENT || exe != NULL)
            fz_fail("bp_graph_compile(NULL graph): %s", bp_status_string(st));
        if (s->g) {
            fz_mark();
            st = bp_graph_compile(s->g, NULL, NULL);
            fz_status("bp_graph_compile", st);
            if (st != BP_ERR_INVALID_ARGUMENT)
                fz_fail("bp_graph_compile(NULL exe): %s", bp_status_string(st));
        }
        bp_graph_stats stats = {.struct_size = sizeof stats};
        fz_mark();
        st = bp_graph_exec_stats(NULL, &stats);
        fz_status("bp_graph_exec_stats", st);
        if (st != BP_ERR_INVALID_ARGUMENT)
            fz_fail("bp_graph_exec_stats(NULL plan): %s", bp_status_string(st));
        bp_tensor *out = FG_GARBAGE;
        fz_mark();
        st = bp_graph_run(NULL, 0, NULL, 1, &out);
        fz_status("bp_graph_run", st);
        if (st != BP_ERR_INVALID_ARGUMENT || (out != NULL && out != FG_GARBAGE))
            fz_fail("bp_graph_run(NULL plan): %s", bp_status_string(st));
        bp_graph_release(NULL);
        bp_graph_exec_release(NULL);
        return;
    }
    default: { /* outputs marked on what is not a symbolic tensor of the graph */
        if (!s->g || (symbolic && s->n_outputs >= FG_OUTPUTS))
            return;
        fz_mark();
        st = bp_graph_output(s->g, t);
        fz_status("bp_graph_output", st);
        if (!symbolic && st != BP_ERR_INVALID_ARGUMENT)
            fz_fail("bp_graph_output took a %s: %s", t ? "concrete tensor" : "NULL tensor",
                    bp_status_string(st));
        if (symbolic && st == BP_OK)
            s->output_value[s->n_outputs++] = i;
        return;
    }
    }
}

/* ---- the input --------------------------------------------------------------------- */

typedef struct fg_action {
    void (*run)(fg_state *s);
    const char *name;
} fg_action;

#define FG_ACT(name) {fg_act_##name, #name}
static const fg_action fg_actions[] = {
    FG_ACT(op),     FG_ACT(op),       FG_ACT(op),         FG_ACT(op),     FG_ACT(op),
    FG_ACT(op),     FG_ACT(view),     FG_ACT(const),      FG_ACT(const),  FG_ACT(output),
    FG_ACT(output), FG_ACT(bad_shapes), FG_ACT(transfer), FG_ACT(misuse), FG_ACT(compile_early),
    FG_ACT(conv),
};

static void fg_inputs(fg_state *s)
{
    int n = 1 + (int)fz_pick(&s->in, FG_INPUTS);
    int64_t first[BP_MAX_RANK];
    int32_t first_rank = 0;
    for (int k = 0; k < n; k++) {
        bp_dtype dt = k > 0 && fz_u8(&s->in) < 160 ? bp_tensor_dtype(s->v[s->input_value[0]].sym)
                                                   : fg_float(s);
        int64_t shape[BP_MAX_RANK];
        int32_t rank;
        uint8_t how = fz_u8(&s->in);
        if (k > 0 && how < 128) { /* input 0's shape, or its trailing axes: it broadcasts */
            rank = first_rank - (int32_t)(how % 2 && first_rank > 0);
            memcpy(shape, first + (first_rank - rank), (size_t)rank * sizeof *shape);
        } else {
            rank = fg_small_shape(s, shape);
        }
        if (k == 0) {
            first_rank = rank;
            memcpy(first, shape, (size_t)rank * sizeof *shape);
        }
        bp_tensor *x = FG_GARBAGE, *e = NULL;
        fz_mark();
        bp_status st = bp_graph_input(s->g, dt, rank, shape, &x);
        fz_result("bp_graph_input", st, x);
        if (st != BP_OK)
            fz_fail("bp_graph_input of a small shape failed: %s", bp_last_error());
        s->rec = bp_tensor_backend(x);
        fg_from_host(s, s->be, dt, rank, shape, &e);
        int i = fg_value_add(s, FG_INPUT, x, e);
        s->v[i].input = k;
        s->input_value[k] = i;
        s->n_inputs = k + 1;
    }
}

static void fg_teardown(fg_state *s)
{
    for (int i = 0; i < s->n_values; i++) {
        bp_tensor_release(s->v[i].sym);
        bp_tensor_release(s->v[i].eager);
        s->v[i].sym = s->v[i].eager = NULL;
    }
    bp_graph_exec_release(s->early.exe);
    s->early.exe = NULL;
    bp_graph_release(s->g);
    s->g = NULL;
    for (int k = 0; k < s->n_consts; k++)
        if (s->c[k].deleted != 1)
            fz_fail("DLPack constant %d: its deleter ran %d times once every tensor was released",
                    k, s->c[k].deleted);
    bp_backend *bes[2] = {s->be, s->other};
    for (int i = 0; i < 2; i++) {
        bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
        fz_mark();
        bp_status st = bp_backend_memory_info(bes[i], &mi);
        fz_status("bp_backend_memory_info", st);
        if (st == BP_OK && mi.used != 0)
            fz_fail("backend %s still has %llu bytes in use after every tensor, graph and plan "
                    "was released", bp_backend_name(bes[i]), (unsigned long long)mi.used);
    }
    bp_context_destroy(s->ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fg_state s;
    memset(&s, 0, sizeof s);
    s.in.p = data;
    s.in.n = size;
    s.early.exe = NULL;
    fz_mark();
    bp_status st = bp_context_create(fg_config, &s.ctx);
    fz_status("bp_context_create", st);
    if (st != BP_OK)
        fz_fail("bp_context_create(%s): %s", fg_config, bp_last_error());
    uint8_t b = fz_u8(&s.in);
    bp_backend *bin = NULL, *blas = NULL;
    if (bp_backend_get(s.ctx, "binary", &bin) != BP_OK ||
        bp_backend_get(s.ctx, "blas_cpu", &blas) != BP_OK)
        fz_fail("the binary and blas_cpu backends: %s", bp_last_error());
    s.be = b % 4 == 3 ? blas : bin;
    s.other = s.be == bin ? blas : bin;
    if (b >= 0xf0) { /* guard bytes around every tensor (not the graph's tokens) */
        fz_mark();
        st = bp_context_set_debug_guards(s.ctx, 64);
        fz_status("bp_context_set_debug_guards", st);
    }
    fz_mark();
    st = bp_graph_create(s.be, &s.g);
    fz_status("bp_graph_create", st);
    if (st != BP_OK)
        fz_fail("bp_graph_create: %s", bp_last_error());
    fg_inputs(&s);
    for (int a = 0; a < FG_STEPS && !fz_done(&s.in); a++) {
        uint8_t pick = fz_u8(&s.in);
        if (pick == 0xff)
            break; /* the rest is read by fg_finish */
        const fg_action *act = &fg_actions[pick % (sizeof fg_actions / sizeof fg_actions[0])];
        fz_trace("action %d: %s", a, act->name);
        act->run(&s);
    }
    fg_finish(&s);
    fg_teardown(&s);
    fz_stdout_check();
    return 0;
}
