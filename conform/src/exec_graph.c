/* --graph: a case that passed eagerly, recorded on a graph, compiled and
 * run (graph.h). A plan runs every node through the eager op path, so its
 * results must be eager's bit for bit: the check is byte for byte, no
 * tolerance. The first result is also recorded through a chain of two
 * neighbours that give it back bit for bit (neg twice; logical_not twice
 * for bool), so that on a backend that fuses elementwise chains the op
 * runs inside a fused group too, and that group must give eager's bytes
 * (but for the sign and payload of a NaN made from two NaNs: same_result). The op-table and composed cases come here from exec.c, nn.h's
 * from exec_nn.c. Creation ops (no tensor operand) are not recorded here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { MAX_IN = 8, MAX_OUT = 4 };

/* The recording of one case: freed whatever happened. */
typedef struct recording {
    bp_graph *g;
    bp_graph_exec *exe;
    bp_tensor *sym[MAX_IN];                /* the symbolic operands (NULL: left out) */
    bp_tensor *sout[MAX_OUT];              /* the symbolic results */
    bp_tensor *gout[MAX_OUT + 1];          /* what the plan returned */
    bp_tensor *chain[2];                   /* output 0 negated, and back */
} recording;

static void recording_free(recording *rec)
{
    for (int k = 0; k < MAX_IN; k++)
        bp_tensor_release(rec->sym[k]);
    for (int k = 0; k < MAX_OUT; k++)
        bp_tensor_release(rec->sout[k]);
    for (int k = 0; k < MAX_OUT + 1; k++)
        bp_tensor_release(rec->gout[k]);
    bp_tensor_release(rec->chain[0]);
    bp_tensor_release(rec->chain[1]);
    bp_graph_exec_release(rec->exe);
    bp_graph_release(rec->g);
}

/* Graph result k against eager's: dtype, shape, then every byte. */
static bool same_result(const cf_case *c, const bp_tensor *eager, const bp_tensor *graph,
                        const char *what, bool fused, cf_result *r)
{
    const char *dt = bp_dtype_name(c->dtype);
    int32_t rank = bp_tensor_rank(eager);
    if (bp_tensor_dtype(graph) != bp_tensor_dtype(eager) || bp_tensor_rank(graph) != rank ||
        memcmp(bp_tensor_shape(graph), bp_tensor_shape(eager), (size_t)rank * sizeof(int64_t))) {
        CF_MSG(r, "%s [%s] %s: graph: %s's dtype or shape differs from eager's (%s rank "
               "%d, eager %s rank %d)", c->name, dt, c->label, what,
               bp_dtype_name(bp_tensor_dtype(graph)), (int)bp_tensor_rank(graph),
               bp_dtype_name(bp_tensor_dtype(eager)), (int)rank);
        return false;
    }
    size_t bytes = bp_tensor_nbytes(eager);
    unsigned char *a = malloc(bytes ? bytes : 1), *b = malloc(bytes ? bytes : 1);
    bool same = false;
    bp_status st = BP_ERR_OUT_OF_MEMORY;
    if (a && b && (st = bp_tensor_to_host(eager, a, bytes)) == BP_OK)
        st = bp_tensor_to_host(graph, b, bytes);
    if (st != BP_OK) {
        CF_MSG(r, "%s [%s] %s: graph: reading %s failed: %s: %s", c->name, dt, c->label,
               what, bp_status_string(st), bp_last_error());
    } else if (memcmp(a, b, bytes) == 0) {
        same = true;
    } else {
        size_t esize = bp_dtype_size(bp_tensor_dtype(eager)), at = 0;
        cf_array ea = {0}, ga = {0};
        bool decoded = cf_array_init(&ea, bp_tensor_dtype(eager), rank, bp_tensor_shape(eager)) &&
                       cf_array_init(&ga, bp_tensor_dtype(eager), rank, bp_tensor_shape(eager));
        if (decoded) {
            cf_decode(&ea, a);
            cf_decode(&ga, b);
        }
        /* In a fused group an op runs its kernel's dense loop where eager may
         * have run the strided one: a NaN made from two NaNs (IEEE 754
         * leaves its sign and payload open) may come out as the other
         * operand's. Any other difference fails. */
        int64_t elem = 0, n_elem = esize ? (int64_t)(bytes / esize) : 0;
        for (; elem < n_elem; elem++) {
            at = (size_t)elem * esize;
            if (memcmp(a + at, b + at, esize) == 0)
                continue;
            double x = decoded ? cf_get_f(&ea, elem) : 0, y = decoded ? cf_get_f(&ga, elem) : 0;
            if (!(fused && decoded && bp_dtype_is_float(bp_tensor_dtype(eager)) && x != x &&
                  y != y))
                break;
        }
        same = elem == n_elem;
        if (!same && decoded) {
            CF_MSG(r, "%s [%s] %s: graph: %s element %lld is %.17g, eager gave %.17g "
                   "(bit for bit expected)", c->name, dt, c->label, what, (long long)elem,
                   cf_get_f(&ga, elem), cf_get_f(&ea, elem));
        } else if (!same) {
            CF_MSG(r, "%s [%s] %s: graph: %s element %lld differs from eager's", c->name,
                   dt, c->label, what, (long long)elem);
        }
        cf_array_free(&ea);
        cf_array_free(&ga);
    }
    free(a);
    free(b);
    return same;
}

/* y through two neighbours that give it back: neg twice, or logical_not
 * twice for bool. false (nothing recorded to compare) where the backend
 * refuses the op for y's dtype. */
static bool chain_back(const bp_tensor *y, bp_tensor **chain)
{
    bool is_bool = bp_tensor_dtype(y) == BP_BOOL;
    bp_status st = is_bool ? bp_logical_not(y, &chain[0]) : bp_neg(y, &chain[0]);
    if (st == BP_OK)
        st = is_bool ? bp_logical_not(chain[0], &chain[1]) : bp_neg(chain[0], &chain[1]);
    return st == BP_OK;
}

/* Record, compile and run; r->status stays CF_PASS when the graph agrees. */
static void record_and_run(const cf_worker_env *env, const cf_case *c, int n_in,
                           bp_tensor *const *in, int n_out, bp_tensor *const *eager,
                           cf_graph_call call, const void *ctx, recording *rec, cf_result *r)
{
    const char *dt = bp_dtype_name(c->dtype);
    bp_tensor *concrete[MAX_IN];
    int32_t n_graph_in = 0;
    bp_status st = bp_graph_create(env->be, &rec->g);
    for (int k = 0; st == BP_OK && k < n_in; k++) {
        if (!in[k])
            continue;
        st = bp_graph_input(rec->g, bp_tensor_dtype(in[k]), bp_tensor_rank(in[k]),
                            bp_tensor_shape(in[k]), &rec->sym[k]);
        concrete[n_graph_in++] = in[k];
    }
    r->status = CF_FAIL;
    if (st != BP_OK) {
        CF_MSG(r, "%s [%s] %s: graph: making the graph's inputs failed: %s: %s", c->name, dt,
               c->label, bp_status_string(st), bp_last_error());
        return;
    }
    st = call(c, ctx, rec->sym, rec->sout);
    if (st != BP_OK) {
        CF_MSG(r, "%s [%s] %s: graph: recording failed with %s where eager succeeded: %s", c->name,
               dt, c->label, bp_status_string(st), bp_last_error());
        return;
    }
    for (int k = 0; k < MAX_OUT; k++)
        if (!rec->sout[k] != (k >= n_out || !eager[k])) {
            CF_MSG(r, "%s [%s] %s: graph: recording %s output %d, eager %s", c->name, dt,
                   c->label, rec->sout[k] ? "gave" : "did not give", k,
                   rec->sout[k] ? "did not" : "did");
            return;
        }
    int32_t n_marked = 0;
    const char *step = "marking the outputs";
    for (int k = 0; st == BP_OK && k < n_out; k++)
        if (rec->sout[k] && (st = bp_graph_output(rec->g, rec->sout[k])) == BP_OK)
            n_marked++;
    bool chained = st == BP_OK && rec->sout[0] && chain_back(rec->sout[0], rec->chain);
    if (chained && (st = bp_graph_output(rec->g, rec->chain[1])) == BP_OK)
        n_marked++;
    if (st == BP_OK) {
        step = "compiling";
        st = bp_graph_compile(rec->g, NULL, &rec->exe);
    }
    if (st == BP_OK) {
        step = "running the plan";
        st = bp_graph_run(rec->exe, n_graph_in, concrete, n_marked, rec->gout);
    }
    if (st != BP_OK) {
        CF_MSG(r, "%s [%s] %s: graph: %s failed with %s: %s", c->name, dt, c->label, step,
               bp_status_string(st), bp_last_error());
        return;
    }
    bp_graph_stats gs = {.struct_size = sizeof gs};
    bool fused = bp_graph_exec_stats(rec->exe, &gs) == BP_OK && gs.fused_groups > 0;
    int m = 0;
    for (int k = 0; k < n_out; k++) {
        char what[32];
        snprintf(what, sizeof what, "output %d", k);
        if (eager[k] && !same_result(c, eager[k], rec->gout[m++], what, fused, r))
            return;
    }
    if (chained &&
        !same_result(c, eager[0], rec->gout[m], "output 0 through neg(neg(...))", fused, r))
        return;
    r->status = CF_PASS;
}

void cf_graph_replay(const cf_worker_env *env, const cf_case *c, int n_in, bp_tensor *const *in,
                     int n_out, bp_tensor *const *eager, cf_graph_call call, const void *ctx,
                     cf_result *r)
{
    bool any_tensor = false;
    for (int k = 0; k < n_in; k++)
        any_tensor = any_tensor || in[k] != NULL;
    if (!any_tensor) /* creation ops: nothing symbolic to record them with here */
        return;
    if (n_in > MAX_IN || n_out > MAX_OUT) {
        r->status = CF_FAIL;
        CF_MSG(r, "%s: graph: more operands than conform's graph check holds (a bug in conform)",
               c->name);
        return;
    }
    recording rec;
    memset(&rec, 0, sizeof rec);
    record_and_run(env, c, n_in, in, n_out, eager, call, ctx, &rec, r);
    recording_free(&rec);
}

/* The op-table and composed cases: cf_call_op on the symbolic operands. */
typedef struct op_call {
    const cf_inputs *in;
    bp_backend *be;
} op_call;

static bp_status call_op(const cf_case *c, const void *ctx, bp_tensor *const *sym,
                         bp_tensor **outs)
{
    const cf_inputs *in = ((const op_call *)ctx)->in;
    cf_operand ops[CF_MAX_OPERANDS];
    memset(ops, 0, sizeof ops);
    for (int k = 0; k < in->n; k++) {
        ops[k].t = sym[k];
        ops[k].a = in->ops[k].a; /* the call reads parameters only, never these */
    }
    return cf_call_op(((const op_call *)ctx)->be, c, ops, in->n, &outs[0], &outs[1]);
}

void cf_graph_check(const cf_worker_env *env, const cf_case *c, const cf_inputs *in,
                    bp_tensor *out, bp_tensor *out2, cf_result *r)
{
    bp_tensor *t[CF_MAX_OPERANDS] = {0};
    for (int k = 0; k < in->n; k++)
        t[k] = in->ops[k].t;
    bp_tensor *eager[2] = {out, out2};
    op_call call = {in, env->be};
    cf_graph_replay(env, c, in->n, t, 2, eager, call_op, &call, r);
}
