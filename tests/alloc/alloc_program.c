/* The program the allocation-failure sweep runs (tests/alloc/run.sh): a
 * representative use of backplane, from bp_context_create to
 * bp_context_destroy (collectives on a job of one process included, where
 * the mpi engine is built), in which every call is checked. Under the fail_shim
 * one allocation made by backplane fails; the program must then see a
 * failure with a known bp_status, a non-empty bp_last_error() and *out left
 * NULL, clean up everything it made and exit 0. AddressSanitizer and
 * LeakSanitizer check that nothing crashed and nothing leaked.
 *
 * usage: alloc_program CONFIG.ini
 * exit: 0 clean (whether or not a call failed), 1 a failure broke the
 * contract (unknown status, no message, *out not NULL), 2 usage. */
#include <dlpack/dlpack.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <backplane/backplane.h>

#include "op_args.h"

#define NT 128

static bp_context *ctx;
static bp_comm *comm;
static bp_graph *graph;
static bp_graph_exec *plan;
static bp_tensor *t[NT];
static int nt;
static int broken;

/* A call failed: say which, and check the failure's contract. */
static void failed(const char *call, bp_status st, const void *out)
{
    const char *name = bp_status_string(st), *msg = bp_last_error();
    fprintf(stderr, "alloc_program: %s -> %s: %s\n", call, name, msg ? msg : "(null)");
    if (strcmp(name, "BP_UNKNOWN_STATUS") == 0) {
        fprintf(stderr, "alloc_program: BROKEN: %s returned unknown status %d\n", call, (int)st);
        broken = 1;
    }
    if (!msg || !*msg) {
        fprintf(stderr, "alloc_program: BROKEN: %s failed with an empty bp_last_error()\n", call);
        broken = 1;
    }
    if (out) {
        fprintf(stderr, "alloc_program: BROKEN: %s failed but left *out = %p\n", call, out);
        broken = 1;
    }
}

/* Run a call making a tensor (written through OUT) into slot; on failure,
 * clean up and stop. OUT starts as garbage that a failure must clear. */
#define OUT (&o_)
#define T(call, slot)                                                      \
    do {                                                                   \
        bp_tensor *o_ = (bp_tensor *)(uintptr_t)0x10;                      \
        bp_status st_ = (call);                                            \
        if (st_ != BP_OK) {                                                \
            failed(#call, st_, o_);                                        \
            goto cleanup;                                                  \
        }                                                                  \
        (slot) = o_;                                                       \
        t[nt++] = o_;                                                      \
    } while (0)
/* Run any other call; on failure, clean up and stop. */
#define C(call)                                                            \
    do {                                                                   \
        bp_status st_ = (call);                                            \
        if (st_ != BP_OK) {                                                \
            failed(#call, st_, NULL);                                      \
            goto cleanup;                                                  \
        }                                                                  \
    } while (0)

/* Whether comm_NAME.so lies beside the plugin of backend `beside` (where
 * the build puts the collective engines). */
static bool engine_installed(const char *beside, const char *name)
{
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++) {
        bp_plugin_record rec = {.struct_size = sizeof rec};
        if (bp_context_plugin(ctx, i, &rec) != BP_OK || strcmp(rec.name, beside) != 0)
            continue;
        const char *slash = strrchr(rec.path, '/');
        char path[1024];
        snprintf(path, sizeof path, "%.*s/comm_%s.so", slash ? (int)(slash - rec.path) : 1,
                 slash ? rec.path : ".", name);
        return access(path, F_OK) == 0;
    }
    return false;
}

/* Every op of the op table on be, with small valid operands and arguments
 * (tests/support/op_args.c). false after a failure (reported), with
 * everything it made released. */
static bool table_walk(bp_backend *be)
{
    for (int op = 0; op < BP_OP_COUNT; op++) {
        const bp_op_info *row = bp_op_info_of((bp_op)op);
        bp_dtype dt = row->dtypes == BP_DTYPES_BOOL ? BP_BOOL
                      : row->dtypes == BP_DTYPES_INTEGER ? BP_I32 : BP_F32;
        bp_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL};
        bp_tensor *o1 = (bp_tensor *)(uintptr_t)0x10, *o2 = (bp_tensor *)(uintptr_t)0x10;
        bp_status st = bpt_op_operands(be, (bp_op)op, dt, in);
        if (st != BP_OK) {
            failed("bpt_op_operands", st, NULL);
            return false;
        }
        bpt_op_args args;
        bpt_op_args_default((bp_op)op, be, dt, &args);
        if (!bpt_op_invoke((bp_op)op, in, &args, &o1, &o2, &st)) {
            fprintf(stderr, "alloc_program: BROKEN: no call for %s\n", row->name);
            broken = 1;
            st = BP_ERR_INVALID_ARGUMENT;
        }
        for (int k = 0; k < 5; k++)
            bp_tensor_release(in[k]);
        bool two = bp_op_arity(row->out, NULL) > 1;
        if (st != BP_OK) {
            failed(row->name, st, o1);
            if (two && o2 != (bp_tensor *)(uintptr_t)0x10 && o2) {
                fprintf(stderr, "alloc_program: BROKEN: %s failed but left its second output\n",
                        row->name);
                broken = 1;
            }
            return false;
        }
        bp_tensor_release(o1);
        if (o2 != (bp_tensor *)(uintptr_t)0x10)
            bp_tensor_release(o2);
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: alloc_program CONFIG.ini\n");
        return 2;
    }
    bp_backend *bin = NULL, *blas = NULL, *def = NULL;
    bp_tensor *a, *b, *idx, *gi, *s, *m, *r, *x, *y, *z, *moved, *gone = NULL;
    float av[6] = {1, 2, 3, 4, 5, 6}, bv[12] = {1, 0, 2, 0, 1, 3, 0, 1, 1, 2, 2, 1}, host[12];
    int64_t iv[2] = {2, 0};
    double item;
    bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};

    C(bp_context_create(argv[1], &ctx));
    C(bp_backend_get(ctx, "binary", &bin));
    C(bp_backend_get(ctx, "blas_cpu", &blas));
    C(bp_backend_default(ctx, &def));
    T(bp_tensor_from_host(bin, BP_F32, 2, (int64_t[]){2, 3}, av, OUT), a);
    T(bp_tensor_from_host(bin, BP_F32, 2, (int64_t[]){3, 4}, bv, OUT), b);
    T(bp_tensor_from_host(bin, BP_I64, 1, (int64_t[]){2}, iv, OUT), idx);
    /* a dozen ops on the reference backend */
    T(bp_add(a, a, OUT), x);
    T(bp_matmul(a, b, OUT), m);
    T(bp_sum(m, 1, (int32_t[]){1}, false, OUT), s);
    T(bp_softmax(m, -1, OUT), x);
    T(bp_transpose(a, NULL, OUT), x);
    T(bp_concat(2, (const bp_tensor *const[]){a, a}, 0, OUT), x);
    T(bp_gather(a, idx, 1, OUT), x);
    T(bp_cast(a, BP_F64, OUT), x);
    T(bp_slice(b, (int64_t[]){0, 3}, NULL, (int64_t[]){2, -1}, OUT), x);
    T(bp_pad(a, (int64_t[]){1, 0}, (int64_t[]){0, 2}, -1.0, OUT), x);
    T(bp_exp(a, OUT), x);
    T(bp_reshape(a, 1, (int64_t[]){-1}, OUT), x);
    T(bp_random_uniform(bin, BP_F32, 1, (int64_t[]){5}, 1, 0, 0.0, 1.0, OUT), x);
    T(bp_eye(bin, BP_F64, 3, 3, OUT), x);
    T(bp_gt(a, a, OUT), y);
    T(bp_where(y, a, a, OUT), x);
    T(bp_broadcast_to(idx, 2, (int64_t[]){3, 2}, OUT), x);
    T(bp_argmax(m, 0, NULL, false, OUT), x);
    T(bp_arange(bin, BP_I32, 0.0, 5.0, 2.0, OUT), x);
    T(bp_unsqueeze(a, 0, OUT), x);
    T(bp_squeeze(x, 0, NULL, OUT), x);
    /* across backends: copy, compute there (OpenBLAS), copy back */
    T(bp_backend_copy(a, blas, OUT), y);
    T(bp_backend_copy(b, blas, OUT), z);
    T(bp_matmul(y, z, OUT), r);
    T(bp_reduce(BP_OP_MAX, r, 0, NULL, true, OUT), x);
    C(bp_item_f64(x, &item));
    T(bp_backend_copy(r, bin, OUT), x);
    /* a heavy op on 2^16 half floats: blas_cpu makes the op's table */
    T(bp_full(blas, BP_F16, 1, (int64_t[]){65536}, 0.5, OUT), y);
    T(bp_exp(y, OUT), x);
    /* a convolution over one position (blas_cpu gathers the window first) */
    T(bp_tensor_from_host(blas, BP_F32, 3, (int64_t[]){1, 2, 3}, av, OUT), y);
    T(bp_conv(y, y, NULL, NULL, OUT), x);
    /* every op of the op table, on both backends */
    if (!table_walk(bin) || !table_walk(blas))
        goto cleanup;
    /* a graph: recorded (captured tensors in it, gathers by captured and by
     * symbolic indices, a random draw), differentiated, compiled (drawing
     * afresh each run), run twice, then once with
     * an index out of range, which the run refuses (BP_ERR_INDEX) leaving no
     * output (the gradient alone is the output, so the forward gathers are
     * dropped and the gradient's scatters meet the index first) */
    {
        bp_graph *g_ = (bp_graph *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_create(bin, &g_);
        if (st_ != BP_OK) {
            failed("bp_graph_create", st_, g_);
            goto cleanup;
        }
        graph = g_;
    }
    T(bp_graph_input(graph, BP_F32, 2, (int64_t[]){2, 3}, OUT), x);
    T(bp_graph_input(graph, BP_I64, 1, (int64_t[]){2}, OUT), gi);
    /* x scaled by a random draw, which each run draws afresh */
    T(bp_random_uniform(bp_tensor_backend(x), BP_F32, 2, (int64_t[]){2, 3}, 5, 0, 0.5, 1.5, OUT),
      r);
    T(bp_mul(x, r, OUT), y);
    T(bp_mul(y, a, OUT), y);
    T(bp_tanh(y, OUT), z);
    T(bp_tanh(y, OUT), r); /* merged with z */
    T(bp_add(z, r, OUT), y);
    T(bp_matmul(y, b, OUT), z);
    T(bp_gather(z, idx, 1, OUT), y);
    T(bp_gather(z, gi, 1, OUT), r);
    T(bp_add(y, r, OUT), z);
    /* its gradient with respect to x, appended to it: the plan's output
     * (through the gathers: scatters by the same indices) */
    T(bp_sum(z, 0, NULL, false, OUT), r);
    T(bp_graph_grad(graph, r, 1, (const bp_tensor *const[]){x}, OUT), z);
    C(bp_graph_output(graph, z));
    {
        bp_graph_exec *e_ = (bp_graph_exec *)(uintptr_t)0x10;
        bp_graph_options opt_ = BP_GRAPH_OPTIONS_INIT;
        opt_.fresh_draws = 1;
        bp_status st_ = bp_graph_compile(graph, &opt_, &e_);
        if (st_ != BP_OK) {
            failed("bp_graph_compile", st_, e_);
            goto cleanup;
        }
        plan = e_;
    }
    bp_graph_release(graph); /* the plan does not need it */
    graph = NULL;
    for (int rep = 0; rep < 2; rep++)
        T(bp_graph_run(plan, 2, (bp_tensor *const[]){a, idx}, 1, OUT), x);
    /* a profiled run: the profile's arrays made at its start */
    C(bp_graph_exec_profile(plan, 1));
    T(bp_graph_run(plan, 2, (bp_tensor *const[]){a, idx}, 1, OUT), x);
    C(bp_graph_exec_profile(plan, 0));
    /* donating a copy of a: the output may take its memory; the copy is
     * given up either way and released with the rest */
    T(bp_neg(a, OUT), y);
    T(bp_graph_run_donating(plan, 2, (bp_tensor *const[]){y, idx}, (const bool[]){true, false}, 1,
                            OUT),
      x);
    T(bp_tensor_from_host(bin, BP_I64, 1, (int64_t[]){2}, (int64_t[]){0, 4}, OUT), gi);
    {
        bp_tensor *o_ = (bp_tensor *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_run(plan, 2, (bp_tensor *const[]){a, gi}, 1, &o_);
        if (st_ == BP_OK) {
            fprintf(stderr, "alloc_program: BROKEN: a plan ran a gather by index 4 of 4\n");
            broken = 1;
            t[nt++] = o_;
            goto cleanup;
        }
        if (st_ != BP_ERR_INDEX) { /* an allocation failed first */
            failed("bp_graph_run", st_, o_);
            goto cleanup;
        }
        if (o_ || !strstr(bp_last_error(), "is 4, out of range")) {
            fprintf(stderr, "alloc_program: BROKEN: a run refused for its index left *out = "
                            "%p, or said: %s\n", (void *)o_, bp_last_error());
            broken = 1;
        }
    }
    /* an optimizer step (Adam, clipped by the global norm) with that gradient */
    {
        bp_optimizer o = BP_OPTIMIZER_ADAM_INIT;
        o.max_grad_norm = 1.0;
        bp_tensor *st3[3] = {(bp_tensor *)(uintptr_t)0x10}, *np = (bp_tensor *)(uintptr_t)0x10;
        bp_tensor *ns[3] = {(bp_tensor *)(uintptr_t)0x10};
        bp_status st_ = bp_optim_init(&o, 1, (const bp_tensor *const[]){a}, st3);
        if (st_ != BP_OK) {
            failed("bp_optim_init", st_, st3[0]);
            goto cleanup;
        }
        for (int k = 0; k < 3; k++)
            t[nt++] = st3[k];
        st_ = bp_optim_step(&o, 1, (const bp_tensor *const[]){a}, (const bp_tensor *const[]){x},
                            (const bp_tensor *const *)st3, &np, ns);
        if (st_ != BP_OK) {
            failed("bp_optim_step", st_, np ? (void *)np : (void *)ns[0]);
            goto cleanup;
        }
        t[nt++] = np;
        for (int k = 0; k < 3; k++)
            t[nt++] = ns[k];
    }
    /* a plan on blas_cpu, whose chain of elementwise ops is one fused group
     * (its scratch blocks allocated by the plugin) followed by a softmax
     * pattern (rewritten into the op), run, then run donating its input */
    bp_graph_exec_release(plan);
    plan = NULL;
    {
        bp_graph *g_ = (bp_graph *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_create(blas, &g_);
        if (st_ != BP_OK) {
            failed("bp_graph_create", st_, g_);
            goto cleanup;
        }
        graph = g_;
    }
    T(bp_graph_input(graph, BP_F32, 1, (int64_t[]){20000}, OUT), x);
    T(bp_full(blas, BP_F32, 0, NULL, 0.5, OUT), r);
    T(bp_mul(x, x, OUT), y);
    T(bp_tanh(y, OUT), z);
    T(bp_add(z, r, OUT), y);
    /* then softmax written with primitives: rewritten into one softmax node */
    T(bp_max(y, 0, NULL, true, OUT), r);
    T(bp_sub(y, r, OUT), z);
    T(bp_exp(z, OUT), r);
    T(bp_sum(r, 0, NULL, true, OUT), z);
    T(bp_div(r, z, OUT), y);
    C(bp_graph_output(graph, y));
    {
        bp_graph_exec *e_ = (bp_graph_exec *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_compile(graph, NULL, &e_);
        if (st_ != BP_OK) {
            failed("bp_graph_compile", st_, e_);
            goto cleanup;
        }
        plan = e_;
    }
    bp_graph_release(graph);
    graph = NULL;
    T(bp_full(blas, BP_F32, 1, (int64_t[]){20000}, 0.25, OUT), x);
    T(bp_graph_run(plan, 1, (bp_tensor *const[]){x}, 1, OUT), y);
    T(bp_neg(x, OUT), z);
    T(bp_graph_run_donating(plan, 1, (bp_tensor *const[]){z}, (const bool[]){true}, 1, OUT), y);
    /* a plan on blas_cpu whose 3x3 convolution reads captured weights, which
     * the plugin reorders when the plan compiles (conv_direct.c: where the
     * CPU has fma), with a residual add and a Relu after it that it
     * computes as it stores (an epilogue chain), run, its weights replaced
     * by a bind, run again (each node alone) */
    bp_graph_exec_release(plan);
    plan = NULL;
    {
        bp_graph *g_ = (bp_graph *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_create(blas, &g_);
        if (st_ != BP_OK) {
            failed("bp_graph_create", st_, g_);
            goto cleanup;
        }
        graph = g_;
    }
    T(bp_full(blas, BP_F32, 4, (int64_t[]){17, 2, 3, 3}, 0.125, OUT), r);
    T(bp_graph_input(graph, BP_F32, 4, (int64_t[]){1, 2, 5, 5}, OUT), x);
    T(bp_graph_input(graph, BP_F32, 4, (int64_t[]){1, 17, 5, 5}, OUT), m);
    T(bp_conv(x, r, NULL, &(bp_window){.struct_size = sizeof(bp_window), .pads = {1, 1, 1, 1}},
              OUT),
      y);
    T(bp_add(y, m, OUT), y);
    T(bp_relu(y, OUT), y);
    C(bp_graph_output(graph, y));
    {
        bp_graph_exec *e_ = (bp_graph_exec *)(uintptr_t)0x10;
        bp_status st_ = bp_graph_compile(graph, NULL, &e_);
        if (st_ != BP_OK) {
            failed("bp_graph_compile", st_, e_);
            goto cleanup;
        }
        plan = e_;
    }
    bp_graph_release(graph);
    graph = NULL;
    T(bp_full(blas, BP_F32, 4, (int64_t[]){1, 2, 5, 5}, 0.5, OUT), x);
    T(bp_full(blas, BP_F32, 4, (int64_t[]){1, 17, 5, 5}, -0.5, OUT), m);
    T(bp_graph_run(plan, 2, (bp_tensor *const[]){x, m}, 1, OUT), y);
    T(bp_full(blas, BP_F32, 4, (int64_t[]){17, 2, 3, 3}, -0.25, OUT), z);
    C(bp_graph_exec_bind(plan, r, z));
    T(bp_graph_run(plan, 2, (bp_tensor *const[]){x, m}, 1, OUT), y);
    /* DLPack: lent, taken back on both backends, lent again and taken back */
    struct DLManagedTensor *lent = NULL;
    C(bp_tensor_to_dlpack(a, &lent));
    {
        bp_status st_ = bp_tensor_from_dlpack(blas, lent, &y);
        if (st_ != BP_OK) {
            lent->deleter(lent); /* refused: still ours */
            failed("bp_tensor_from_dlpack", st_, y);
            goto cleanup;
        }
        t[nt++] = y;
    }
    C(bp_tensor_to_dlpack(y, &lent));
    {
        bp_status st_ = bp_tensor_from_dlpack(bin, lent, &z);
        if (st_ != BP_OK) {
            lent->deleter(lent);
            failed("bp_tensor_from_dlpack", st_, z);
            goto cleanup;
        }
        t[nt++] = z;
    }
    T(bp_add(z, a, OUT), x);
    /* a checkpoint written, read back (a copy and a mapped tensor), and lent */
    char path[64];
    snprintf(path, sizeof path, "/tmp/bp_alloc_sweep_%ld.safetensors", (long)getpid());
    C(bp_save_safetensors(path, 2, (const char *const[]){"a", "b"},
                          (const bp_tensor *const[]){a, b}, NULL));
    bp_safetensors *file = NULL;
    {
        bp_status st_ = bp_safetensors_open(path, &file);
        unlink(path); /* the mapping keeps the bytes */
        if (st_ != BP_OK) {
            failed("bp_safetensors_open", st_, file);
            goto cleanup;
        }
        st_ = bp_safetensors_load(file, "a", bin, &x);
        if (st_ != BP_OK) {
            bp_safetensors_close(file);
            failed("bp_safetensors_load", st_, x);
            goto cleanup;
        }
        t[nt++] = x;
        st_ = bp_safetensors_load_mapped(file, "b", bin, &x);
        bp_safetensors_close(file);
        if (st_ != BP_OK) {
            failed("bp_safetensors_load_mapped", st_, x);
            goto cleanup;
        }
        t[nt++] = x;
    }
    C(bp_tensor_to_dlpack(x, &lent));
    {
        bp_status st_ = bp_tensor_from_dlpack(bin, lent, &y);
        if (st_ != BP_OK) {
            lent->deleter(lent);
            failed("bp_tensor_from_dlpack", st_, y);
            goto cleanup;
        }
        t[nt++] = y;
    }
    T(bp_matmul(a, y, OUT), x);
    /* collectives on a job of one process, with the mpi engine where it is
     * built (the engine is MPI's, and uncounted; the core around it counts) */
    {
        bp_comm_options co = BP_COMM_OPTIONS_INIT;
        co.engine = "mpi";
        bp_comm *c_ = (bp_comm *)(uintptr_t)0x10;
        bp_status st_ = bp_comm_create(bin, &co, &c_);
        if (st_ == BP_ERR_NOT_FOUND && !engine_installed("binary", "mpi")) {
            c_ = NULL; /* not built here: nothing to sweep */
        } else if (st_ != BP_OK) {
            failed("bp_comm_create", st_, c_);
            if (st_ == BP_ERR_NOT_FOUND) {
                fprintf(stderr, "alloc_program: BROKEN: bp_comm_create says the installed mpi "
                                "engine is not installed\n");
                broken = 1;
            }
            goto cleanup;
        }
        comm = c_;
    }
    if (comm) {
        T(bp_all_reduce(comm, a, BP_REDUCE_SUM, OUT), x);
        T(bp_broadcast(comm, a, 0, OUT), x);
        T(bp_all_gather(comm, a, 1, OUT), x);
        T(bp_reduce_scatter(comm, b, BP_REDUCE_MAX, 1, OUT), x);
        C(bp_barrier(comm));
        bp_comm_destroy(comm);
        comm = NULL;
    }
    /* a transfer gives the source away: using it must fail cleanly */
    T(bp_backend_transfer(s, blas, OUT), moved);
    gone = s;
    C(bp_tensor_to_host(moved, host, sizeof host));
    if (bp_tensor_to_host(gone, host, sizeof host) != BP_ERR_INVALID_ARGUMENT) {
        fprintf(stderr, "alloc_program: BROKEN: a given-away tensor was read\n");
        broken = 1;
    }
    C(bp_backend_memory_info(blas, &mi));
    /* guard bytes around new buffers */
    C(bp_context_set_debug_guards(ctx, 64));
    T(bp_full(blas, BP_I32, 1, (int64_t[]){7}, 3.0, OUT), x);
    C(bp_tensor_check_guards(x));
    /* the context goes first; its tensors keep it alive */
    bp_context_destroy(ctx);
    ctx = NULL;
    T(bp_neg(x, OUT), y);

cleanup:
    (void)def, (void)item, (void)mi;
    bp_comm_destroy(comm);
    bp_graph_exec_release(plan);
    bp_graph_release(graph);
    for (int i = nt - 1; i >= 0; i--)
        bp_tensor_release(t[i]);
    bp_context_destroy(ctx);
    return broken;
}
