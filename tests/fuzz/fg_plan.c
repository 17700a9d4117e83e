/* fuzz_graph: outputs, compiling and running. A plan's outputs must be the
 * eager twins' bytes, run after run, on new inputs too; a run refused for
 * its inputs sets no output. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/cast.h>

#include "fg_state.h"
#include "fz_data.h"
#include "fz_oracle.h"

/* Element i of a and b (dtype dt) both NaN. */
static bool both_nan(bp_dtype dt, const unsigned char *a, const unsigned char *b)
{
    if (!bp_dtype_is_float(dt))
        return false;
    double x = bp_elem_load_f64(dt, a), y = bp_elem_load_f64(dt, b);
    return x != x && y != y;
}

void fg_same(const char *what, const bp_tensor *plan, const bp_tensor *eager, bool fused,
             bool prepared)
{
    fz_tensor_sane(what, plan);
    if (bp_tensor_dtype(plan) != bp_tensor_dtype(eager) ||
        bp_tensor_rank(plan) != bp_tensor_rank(eager) ||
        memcmp(bp_tensor_shape(plan), bp_tensor_shape(eager),
               (size_t)bp_tensor_rank(plan) * sizeof(int64_t)) != 0)
        fz_fail("%s: the plan gave a %s tensor of rank %d, eager a %s tensor of rank %d", what,
                bp_dtype_name(bp_tensor_dtype(plan)), (int)bp_tensor_rank(plan),
                bp_dtype_name(bp_tensor_dtype(eager)), (int)bp_tensor_rank(eager));
    size_t n = bp_tensor_nbytes(eager);
    unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
    if (!a || !b)
        fz_fail("out of memory in the harness");
    bp_status st;
    fz_mark();
    if ((st = bp_tensor_to_host(plan, a, n)) != BP_OK || (st = bp_tensor_to_host(eager, b, n)) != BP_OK)
        fz_fail("%s: reading a result failed: %s: %s", what, bp_status_string(st), bp_last_error());
    /* A fused group computes each element as its op does, but through the
     * kernel's dense loop where eager may have run its strided one: a NaN
     * made from two NaNs (IEEE 754 leaves its sign and payload open) may
     * then come out as the other operand's. Every other element is the
     * same bits. */
    bp_dtype dt = bp_tensor_dtype(eager);
    size_t es = bp_dtype_size(dt);
    /* A node the backend prepared (plugin.h's prepare: blas_cpu's direct
     * convolutions of captured weights) gives a result within the op's
     * tolerance of eager's, not its bits; conform --graph and
     * tests/test_graph_prepare.c check those against the oracle. Such a
     * plan's outputs are checked here for dtype, shape and guards only:
     * an output of any dtype computed from a prepared node's result (a
     * comparison, an argmax, a cast to an integer) may differ as well. */
    if (prepared)
        n = 0;
    for (size_t i = 0; memcmp(a, b, n) != 0 && i < n / (es ? es : 1); i++) {
        if (memcmp(a + i * es, b + i * es, es) == 0 || (fused && both_nan(dt, a + i * es, b + i * es)))
            continue;
        double x = bp_elem_load_f64(dt, a + i * es);
        double y = bp_elem_load_f64(dt, b + i * es);
        fz_fail("%s: element %zu of the plan's %s output is %.17g, eager gave %.17g (not the "
                "same bits)", what, i, bp_dtype_name(dt), x, y);
    }
    free(a);
    free(b);
    if (bp_tensor_check_guards(plan) != BP_OK)
        fz_fail("%s: the guard bytes around the plan's output are damaged: %s", what,
                bp_last_error());
}

void fg_act_output(fg_state *s)
{
    int i = fg_value_pick(s);
    if (i < 0 || !s->g || s->syms_released || s->n_outputs >= FG_OUTPUTS)
        return;
    const fg_value *v = &s->v[i];
    bool symbolic = v->origin == FG_INPUT || v->origin == FG_STEP;
    fz_mark();
    bp_status st = bp_graph_output(s->g, v->sym);
    fz_trace("  bp_graph_output(value %d) -> %s", i, bp_status_string(st));
    fz_status("bp_graph_output", st);
    if (symbolic && st != BP_OK)
        fz_fail("bp_graph_output refused a symbolic tensor of the graph: %s", bp_last_error());
    if (!symbolic && st != BP_ERR_INVALID_ARGUMENT)
        fz_fail("bp_graph_output of a concrete tensor returned %s", bp_status_string(st));
    if (st == BP_OK)
        s->output_value[s->n_outputs++] = i;
}

/* bp_graph_compile, with options read from the input: NULL, merging or
 * not, drawing afresh each run or not, a struct_size that must be refused,
 * one larger than the struct. */
static bp_status fg_compile(fg_state *s, bp_graph_exec **exe, bool *no_merge, bool *fresh)
{
    union {
        bp_graph_options o;
        unsigned char bytes[sizeof(bp_graph_options) + 16];
    } opt;
    memset(&opt, 0, sizeof opt);
    uint8_t b = fz_u8(&s->in);
    /* the full struct, the first layout (no_merge only), too small, larger */
    const size_t first = offsetof(bp_graph_options, no_fuse);
    opt.o.struct_size = b < 224   ? sizeof(bp_graph_options)
                        : b < 240 ? (uint32_t)first
                        : b < 248 ? 4
                                  : sizeof opt;
    opt.o.no_merge = b % 3 == 1;
    opt.o.fresh_draws = b / 3 % 2;
    bool null_opt = b % 3 == 2;
    *no_merge = !null_opt && opt.o.no_merge;
    *fresh = !null_opt && opt.o.struct_size >= sizeof(bp_graph_options) && opt.o.fresh_draws;
    *exe = (bp_graph_exec *)FG_GARBAGE;
    fz_mark();
    bp_status st = bp_graph_compile(s->g, null_opt ? NULL : &opt.o, exe);
    fz_trace("  bp_graph_compile(%d outputs%s%s) -> %s", s->n_outputs,
             null_opt ? "" : opt.o.no_merge ? ", no_merge" : ", merging",
             *fresh ? ", fresh_draws" : "", bp_status_string(st));
    fz_status("bp_graph_compile", st);
    if (st != BP_OK && *exe)
        fz_fail("bp_graph_compile failed but left *exe set");
    bool bad = s->n_outputs == 0 || (!null_opt && opt.o.struct_size < first);
    if (bad && st != BP_ERR_INVALID_ARGUMENT)
        fz_fail("bp_graph_compile must refuse (%s) but returned %s",
                s->n_outputs ? "options too small" : "no output", bp_status_string(st));
    if (!bad && st != BP_OK && st != BP_ERR_OUT_OF_MEMORY)
        fz_fail("bp_graph_compile failed: %s: %s", bp_status_string(st), bp_last_error());
    if (st != BP_OK)
        return st;
    bp_graph_stats gs = {.struct_size = sizeof gs};
    fz_mark();
    st = bp_graph_exec_stats(*exe, &gs);
    fz_status("bp_graph_exec_stats", st);
    if (st != BP_OK)
        fz_fail("bp_graph_exec_stats: %s", bp_last_error());
    if (gs.nodes_planned > gs.nodes_live || gs.nodes_live > gs.nodes_recorded ||
        gs.nodes_planned < 0 || gs.buffers < 0 || gs.peak_bytes < 0 ||
        gs.peak_bytes > gs.sum_bytes || (*no_merge && gs.nodes_planned != gs.nodes_live))
        fz_fail("the plan's statistics do not hang together: recorded %lld, live %lld, planned "
                "%lld, %lld buffers of %lld bytes (sum %lld)%s",
                (long long)gs.nodes_recorded, (long long)gs.nodes_live,
                (long long)gs.nodes_planned, (long long)gs.buffers, (long long)gs.peak_bytes,
                (long long)gs.sum_bytes, *no_merge ? ", no_merge" : "");
    return BP_OK;
}

void fg_act_compile_early(fg_state *s)
{
    if (s->early.exe || !s->g || s->n_outputs == 0)
        return;
    bool no_merge;
    if (fg_compile(s, &s->early.exe, &no_merge, &s->early.fresh) == BP_OK)
        s->early.n_out = s->n_outputs;
    else
        s->early.exe = NULL;
}

/* The eager inputs, in the plan's order. */
static void fg_run_inputs(const fg_state *s, bp_tensor **in)
{
    for (int k = 0; k < s->n_inputs; k++)
        in[k] = s->v[s->input_value[k]].eager;
}

static size_t fg_used(const fg_state *s)
{
    bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
    if (bp_backend_memory_info(s->be, &mi) != BP_OK)
        fz_fail("bp_backend_memory_info: %s", bp_last_error());
    return (size_t)mi.used;
}

/* A new tensor on s->be holding t's bytes (its own memory: no copy cache). */
static bp_tensor *fg_fresh_copy(const fg_state *s, const bp_tensor *t)
{
    size_t n = bp_tensor_nbytes(t);
    unsigned char *b = malloc(n + 1);
    bp_tensor *c = NULL;
    if (!b)
        fz_fail("out of memory in the harness");
    fz_mark();
    if (bp_tensor_to_host(t, b, n) != BP_OK ||
        bp_tensor_from_host(s->be, bp_tensor_dtype(t), bp_tensor_rank(t), bp_tensor_shape(t), b,
                            &c) != BP_OK)
        fz_fail("copying an input to donate it: %s", bp_last_error());
    free(b);
    return c;
}

/* A run that must fail with `want`: it sets no output and keeps no memory. */
static void fg_run_bad(fg_state *s, bp_graph_exec *exe, int32_t n_in, bp_tensor *const *in,
                       int32_t n_out, bool null_out, bp_status want, const char *why)
{
    bp_tensor *out[FG_OUTPUTS + 1];
    for (int o = 0; o <= FG_OUTPUTS; o++)
        out[o] = FG_GARBAGE;
    size_t used = fg_used(s);
    fz_mark();
    bp_status st = bp_graph_run(exe, n_in, in, n_out, null_out ? NULL : out);
    fz_trace("  bp_graph_run (%s) -> %s: %s", why, bp_status_string(st),
             st ? bp_last_error() : "");
    fz_status("bp_graph_run", st);
    if (st != want)
        fz_fail("bp_graph_run with %s returned %s, not %s: %s", why, bp_status_string(st),
                bp_status_string(want), st ? bp_last_error() : "");
    for (int o = 0; o <= FG_OUTPUTS; o++)
        if (out[o] != NULL && out[o] != FG_GARBAGE)
            fz_fail("bp_graph_run with %s failed but set outputs[%d]", why, o);
    if (fg_used(s) != used)
        fz_fail("bp_graph_run with %s failed but left %zu bytes in use (%zu before)", why,
                fg_used(s), used);
}

/* After one profiled run of exe (nodes: its planned nodes, -1 unknown):
 * every step taken once, in run order, none overlapping the next, within
 * the plan, and the listing saying so. */
static void fg_check_profile(const bp_graph_exec *exe, int64_t nodes)
{
    int32_t n = bp_graph_exec_profile_count(exe), end = 0;
    if (nodes > 0 && n == 0)
        fz_fail("a profiled run of a plan of %lld nodes timed no step", (long long)nodes);
    for (int32_t i = 0; i < n; i++) {
        bp_graph_step_time t = {.struct_size = sizeof t};
        if (bp_graph_exec_profile_step(exe, i, &t) != BP_OK)
            fz_fail("bp_graph_exec_profile_step(%d of %d) failed: %s", (int)i, (int)n,
                    bp_last_error());
        if (t.runs != 1 || t.node < end || t.nodes < 1 || t.seconds < 0 ||
            (nodes >= 0 && t.node + t.nodes > nodes))
            fz_fail("profile step %d: node %d, %d nodes, %lld runs, %g s (after node %d, of "
                    "%lld)",
                    (int)i, (int)t.node, (int)t.nodes, (long long)t.runs, t.seconds,
                    (int)end, (long long)nodes);
        end = t.node + t.nodes;
    }
    char buf[64];
    size_t need = 0;
    bp_graph_exec_format(exe, buf, sizeof buf, &need);
    char *text = need ? malloc(need) : NULL;
    if (text && bp_graph_exec_format(exe, text, need, NULL) == BP_OK && n > 0 &&
        !strstr(text, "profile: 1 run(s)"))
        fz_fail("the listing of a plan profiled once does not say so:\n%s", text);
    free(text);
}

/* A plan with prepared nodes, whose outputs are not eager's bits: each
 * output's bytes on its first run, which its second run (the same inputs)
 * must give again, bit for bit (the kernels are deterministic: the same
 * work cut the same way, whatever thread takes each piece). */
#define FG_OUT_BYTES (4 * FG_CAP_ELEMS * 8) /* a value holds at most FG_KEEP_ELEMS */
static unsigned char fg_first_bytes[FG_OUTPUTS][FG_OUT_BYTES];
static size_t fg_first_n[FG_OUTPUTS];

static void fg_same_as_first(int o, const bp_tensor *t, bool first)
{
    static unsigned char now[FG_OUT_BYTES];
    size_t n = bp_tensor_nbytes(t);
    if (n > FG_OUT_BYTES) {
        fg_first_n[o] = SIZE_MAX;
        return;
    }
    unsigned char *dst = first ? fg_first_bytes[o] : now;
    fz_mark();
    bp_status st = bp_tensor_to_host(t, dst, n);
    fz_status("bp_tensor_to_host", st);
    if (st != BP_OK)
        fz_fail("reading output %d of a plan with prepared nodes failed: %s", o, bp_last_error());
    if (first) {
        fg_first_n[o] = n;
        return;
    }
    if (fg_first_n[o] == SIZE_MAX)
        return;
    if (fg_first_n[o] != n)
        fz_fail("output %d of a plan with prepared nodes has %zu bytes on its second run, %zu on "
                "its first", o, n, fg_first_n[o]);
    for (size_t i = 0; i < n; i++)
        if (now[i] != fg_first_bytes[o][i])
            fz_fail("output %d of a plan with prepared nodes: byte %zu is %#x on the second run "
                    "of the same inputs, %#x on the first (a kernel read memory it did not "
                    "write, or cut its work another way)", o, i, now[i], fg_first_bytes[o][i]);
}

/* Run plan on the current eager inputs; its outputs must equal the eager
 * twins of the values marked, or, when one of them is poisoned (an op that
 * makes it reads index values out of range), the run must fail with
 * BP_ERR_INDEX, saying the plan was running, and return no output. */
static void fg_run_ok(fg_state *s, bp_graph_exec *exe, bool fresh, int n_out, const char *what)
{
    bp_graph_stats gs = {.struct_size = sizeof gs};
    bool stats = bp_graph_exec_stats(exe, &gs) == BP_OK;
    bool fused = stats && gs.fused_groups > 0, prepared = stats && gs.nodes_prepared > 0;
    if (stats && prepared)
        fz_trace("  the plan has %lld prepared nodes, %lld relus computed inside them",
                 (long long)gs.nodes_prepared, (long long)gs.epilogues_fused);
    bp_tensor *in[FG_INPUTS], *out[FG_OUTPUTS];
    fg_run_inputs(s, in);
    bool poisoned = false;
    for (int o = 0; o < n_out; o++)
        poisoned = poisoned || s->v[s->output_value[o]].poisoned;
    if (poisoned) {
        char why[96];
        snprintf(why, sizeof why, "index values out of range (%s)", what);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_INDEX, why);
        if (!strstr(bp_last_error(), "running the plan"))
            fz_fail("bp_graph_run refused index values without saying the plan was running: %s",
                    bp_last_error());
        return;
    }
    for (int o = 0; o < FG_OUTPUTS; o++)
        out[o] = FG_GARBAGE;
    /* a plan drawing afresh each run draws eager's values on its run 0 */
    fz_mark();
    bp_status sought = bp_graph_exec_seek_draws(exe, 0);
    fz_status("bp_graph_exec_seek_draws", sought);
    if (sought != (fresh ? BP_OK : BP_ERR_INVALID_ARGUMENT))
        fz_fail("bp_graph_exec_seek_draws on a plan compiled %s fresh_draws returned %s",
                fresh ? "with" : "without", bp_status_string(sought));
    /* the second run donates fresh copies of every input: the outputs may
     * take their memory, and must still be eager's bits */
    bool donating = strcmp(what, "second run") == 0;
    bool donate[FG_INPUTS];
    for (int k = 0; donating && k < s->n_inputs; k++) {
        in[k] = fg_fresh_copy(s, in[k]);
        donate[k] = true;
    }
    /* the first run is profiled: same bits, and its steps cover the plan */
    bool profiled = strcmp(what, "first run") == 0;
    if (profiled) {
        fz_mark();
        bp_status pst = bp_graph_exec_profile(exe, 1);
        fz_status("bp_graph_exec_profile", pst);
        if (pst != BP_OK)
            fz_fail("bp_graph_exec_profile(exe, 1) failed: %s", bp_last_error());
    }
    fz_mark();
    bp_status st = donating ? bp_graph_run_donating(exe, s->n_inputs, in, donate, n_out, out)
                            : bp_graph_run(exe, s->n_inputs, in, n_out, out);
    if (profiled) {
        fg_check_profile(exe, stats ? gs.nodes_planned : -1);
        bp_graph_exec_profile(exe, 0);
    }
    fz_trace("  bp_graph_run%s (%s) -> %s", donating ? "_donating" : "", what,
             bp_status_string(st));
    fz_status("bp_graph_run", st);
    if (st != BP_OK)
        fz_fail("bp_graph_run (%s) failed: %s: %s", what, bp_status_string(st), bp_last_error());
    for (int k = 0; donating && k < s->n_inputs; k++) {
        if (bp_tensor_is_valid(in[k]))
            fz_fail("bp_graph_run_donating left donated inputs[%d] valid", k);
        bp_tensor_release(in[k]);
    }
    for (int o = 0; o < n_out; o++) {
        char name[96];
        const fg_value *v = &s->v[s->output_value[o]];
        snprintf(name, sizeof name, "%s, output %d (value %d, %s)", what, o, s->output_value[o],
                 v->origin == FG_INPUT ? "an input"
                 : s->step[v->step].kind == FG_OP ? bp_op_name(s->step[v->step].op)
                                                  : "a view");
        fg_same(name, out[o], v->eager, fused, prepared);
        if (prepared && (profiled || donating))
            fg_same_as_first(o, out[o], profiled);
    }
    for (int o = n_out; o < FG_OUTPUTS; o++)
        if (out[o] != FG_GARBAGE)
            fz_fail("bp_graph_run wrote outputs[%d], past the %d it was given", o, n_out);
    for (int o = 0; o < n_out; o++)
        bp_tensor_release(out[o]);
}

/* Runs that must be refused for their inputs or counts. */
static void fg_wrong_inputs(fg_state *s, bp_graph_exec *exe, int n_out)
{
    bp_tensor *in[FG_INPUTS + 1];
    fg_run_inputs(s, in);
    in[s->n_inputs] = NULL;
    int k = (int)fz_pick(&s->in, (unsigned)s->n_inputs);
    const bp_tensor *x = in[k];
    bp_tensor *bad = NULL;
    int32_t rank = bp_tensor_rank(x);
    int64_t shape[BP_MAX_RANK + 1];
    memcpy(shape, bp_tensor_shape(x), (size_t)rank * sizeof *shape);
    bp_dtype dt = bp_tensor_dtype(x);
    char why[96];
    switch (fz_pick(&s->in, 8)) {
    case 0: /* another shape: one extent changed, or one axis more */
        if (rank > 0 && fz_bool(&s->in))
            shape[rank - 1] = shape[rank - 1] == 3 ? 1 : shape[rank - 1] + 1;
        else
            shape[rank++] = 1;
        fg_from_host(s, s->be, dt, rank, shape, &bad);
        in[k] = bad;
        snprintf(why, sizeof why, "inputs[%d] of another shape", k);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_SHAPE, why);
        break;
    case 1: { /* another dtype */
        static const bp_dtype others[] = {BP_F32, BP_F64, BP_F16, BP_BF16, BP_I32, BP_BOOL};
        bp_dtype to = others[fz_pick(&s->in, 6)];
        if (to == dt)
            to = dt == BP_F64 ? BP_F32 : BP_F64;
        fg_from_host(s, s->be, to, rank, shape, &bad);
        in[k] = bad;
        snprintf(why, sizeof why, "inputs[%d] of another dtype", k);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_DTYPE, why);
        break;
    }
    case 2: /* the other backend */
        fg_from_host(s, s->other, dt, rank, shape, &bad);
        in[k] = bad;
        snprintf(why, sizeof why, "inputs[%d] on another backend", k);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_BACKEND_MISMATCH, why);
        break;
    case 3: /* a symbolic tensor */
        if (s->syms_released)
            return;
        in[k] = s->v[s->input_value[k]].sym;
        snprintf(why, sizeof why, "a symbolic tensor as inputs[%d]", k);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_INVALID_ARGUMENT, why);
        break;
    case 4:
        in[k] = NULL;
        snprintf(why, sizeof why, "inputs[%d] NULL", k);
        fg_run_bad(s, exe, s->n_inputs, in, n_out, false, BP_ERR_INVALID_ARGUMENT, why);
        break;
    case 5: { /* counts */
        int32_t n_in = fz_bool(&s->in) ? s->n_inputs - 1 : s->n_inputs + 1;
        fg_run_bad(s, exe, n_in, in, n_out, false, BP_ERR_INVALID_ARGUMENT,
                   "the wrong number of inputs");
        break;
    }
    case 6:
        fg_run_bad(s, exe, s->n_inputs, in, fz_bool(&s->in) ? n_out - 1 : n_out + 1, false,
                   BP_ERR_INVALID_ARGUMENT, "room for the wrong number of outputs");
        break;
    default: {
        bool null_in = fz_bool(&s->in);
        fg_run_bad(s, exe, s->n_inputs, null_in ? NULL : in, n_out, !null_in,
                   BP_ERR_INVALID_ARGUMENT, null_in ? "inputs NULL" : "outputs NULL");
        break;
    }
    }
    bp_tensor_release(bad);
}

/* New inputs, the DLPack constants' memory rewritten, every recorded step
 * called again eagerly: the eager twins of the new inputs (poisoned where
 * an eager call now refuses index values, or where an operand is). */
static void fg_new_inputs(fg_state *s)
{
    for (int k = 0; k < s->n_inputs; k++) {
        fg_value *v = &s->v[s->input_value[k]];
        const bp_tensor *x = v->eager;
        bp_tensor *t = NULL;
        fg_from_host(s, s->be, bp_tensor_dtype(x), bp_tensor_rank(x), bp_tensor_shape(x), &t);
        bp_tensor_release(v->eager);
        v->eager = t;
    }
    for (int k = 0; k < s->n_consts; k++) {
        fg_const *c = &s->c[k];
        if (fz_bool(&s->in))
            fz_fill(&s->in, (int)c->dtype, c->numel, c->bytes);
    }
    for (int k = 0; k < s->n_steps; k++) {
        fg_step *st = &s->step[k];
        bool poisoned = false;
        for (int j = 0; j < 5; j++)
            poisoned = poisoned || (st->in[j] >= 0 && s->v[st->in[j]].poisoned);
        bp_tensor *o1 = NULL, *o2 = NULL;
        bp_status r = fg_step_eager(s, k, &o1, &o2);
        if (r != BP_OK && r != BP_ERR_INDEX)
            fz_fail("%s, recorded and compiled, now fails eagerly on the new values (%s: %s), "
                    "which only index values may do", st->kind == FG_OP ? bp_op_name(st->op)
                                                                        : "a view",
                    bp_status_string(r), bp_last_error());
        poisoned = poisoned || r == BP_ERR_INDEX;
        bp_tensor *o[2] = {o1, o2};
        for (int j = 0; j < 2; j++) {
            if (st->out[j] < 0) {
                bp_tensor_release(o[j]);
                continue;
            }
            fg_value *v = &s->v[st->out[j]];
            if (!o[j]) /* refused: a stand-in like the twin it replaces */
                o[j] = fg_stand_in(s, v->eager);
            bp_tensor_release(v->eager);
            v->eager = o[j];
            v->poisoned = poisoned;
        }
    }
}

/* The symbolic tensors go (their values' graph side is then gone). */
static void fg_release_syms(fg_state *s)
{
    for (int i = 0; i < s->n_values; i++)
        if (s->v[i].origin == FG_INPUT || s->v[i].origin == FG_STEP) {
            bp_tensor_release(s->v[i].sym);
            s->v[i].sym = NULL;
        }
    s->syms_released = true;
}

/* A graph that marked no output gets the newest symbolic values as outputs
 * (most of the time: without one, compiling must be refused). */
static void fg_default_outputs(fg_state *s)
{
    uint8_t b = fz_u8(&s->in);
    if (s->n_outputs > 0 || b >= 240)
        return;
    int want = 1 + b % 3;
    for (int i = s->n_values - 1; i >= 0 && s->n_outputs < want; i--) {
        const fg_value *v = &s->v[i];
        if (v->origin != FG_INPUT && v->origin != FG_STEP)
            continue;
        fz_mark();
        bp_status st = bp_graph_output(s->g, v->sym);
        fz_status("bp_graph_output", st);
        if (st != BP_OK)
            fz_fail("bp_graph_output refused a symbolic tensor of the graph: %s", bp_last_error());
        s->output_value[s->n_outputs++] = i;
    }
}

void fg_finish(fg_state *s)
{
    fg_default_outputs(s);
    uint8_t order = fz_u8(&s->in);
    if (order % 4 == 0) /* the graph must compile from what it holds */
        fg_release_syms(s);
    bp_graph_exec *exe = NULL;
    bool no_merge = false, fresh = false;
    bp_status st = fg_compile(s, &exe, &no_merge, &fresh);
    if (st != BP_OK && s->n_outputs > 0) { /* refused for its options: the defaults */
        fresh = false;
        fz_mark();
        st = bp_graph_compile(s->g, NULL, &exe);
        fz_status("bp_graph_compile", st);
        if (st != BP_OK)
            fz_fail("bp_graph_compile with default options: %s", bp_last_error());
    }
    if (st != BP_OK)
        return; /* no outputs: nothing to run */
    if (order % 3 == 0) { /* the plan holds what it needs */
        if (!s->syms_released && fz_bool(&s->in))
            fg_release_syms(s);
        bp_graph_release(s->g);
        s->g = NULL;
    }
    int wrong = (int)fz_pick(&s->in, 3);
    for (int w = 0; w < wrong; w++)
        fg_wrong_inputs(s, exe, s->n_outputs);
    fg_run_ok(s, exe, fresh, s->n_outputs, "first run");
    fg_run_ok(s, exe, fresh, s->n_outputs, "second run");
    if (s->early.exe)
        fg_run_ok(s, s->early.exe, s->early.fresh, s->early.n_out, "the plan compiled half way");
    if (fz_bool(&s->in)) {
        fg_new_inputs(s);
        fg_run_ok(s, exe, fresh, s->n_outputs, "a run on new inputs");
        if (s->early.exe)
            fg_run_ok(s, s->early.exe, s->early.fresh, s->early.n_out,
                      "the plan compiled half way, new inputs");
    }
    bp_graph_exec_release(exe); /* before the graph, unless the graph went first above */
}
