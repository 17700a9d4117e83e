/* What each stress-test thread does (st_work.h). */
#include "st_work.h"

#include <dlpack/dlpack.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "op_args.h"
#include "st_check.h"

static _Atomic(bp_backend *) st_seen[3];

static bp_backend *st_get(bp_context *ctx, int which)
{
    static const char *const names[2] = {"binary", "blas_cpu"};
    bp_backend *b = NULL;
    if (which == 2)
        ST_OK(bp_backend_default(ctx, &b));
    else
        ST_OK(bp_backend_get(ctx, names[which], &b));
    return b;
}

void st_open_backends(bp_context *ctx, int id)
{
    for (int k = 0; k < 3; k++) {
        int which = (k + id) % 3; /* not all in the same order */
        bp_backend *b = st_get(ctx, which), *expected = NULL;
        if (b && !atomic_compare_exchange_strong(&st_seen[which], &expected, b) && expected != b)
            st_report("thread %d got backend %p for #%d, another thread %p", id, (void *)b, which,
                      (void *)expected);
    }
}

void st_open_backends_private(bp_context *ctx, int id)
{
    for (int k = 0; k < 3; k++)
        (void)st_get(ctx, (k + id) % 3);
}

/* Read a one-element tensor and compare. */
static void st_expect_item(const char *what, const bp_tensor *t, double want, int id)
{
    double got = 0;
    ST_OK(bp_item_f64(t, &got));
    if (got != want)
        st_report("thread %d: %s is %g, expected %g", id, what, got, want);
}

/* An error only this thread (and this iteration) causes; the message must
 * still be this thread's after the others have failed in between. */
static void st_own_error(bp_context *ctx, int id, int it, bp_tensor *x)
{
    char name[64], marker[64];
    snprintf(name, sizeof name, "nosuch_t%d_i%d", id, it);
    snprintf(marker, sizeof marker, "'%s'", name);
    bp_backend *b = NULL;
    bp_status st = st_check("bp_backend_get", bp_backend_get(ctx, name, &b));
    if (st == BP_OK || b)
        st_report("thread %d: bp_backend_get(%s) succeeded", id, name);
    for (int i = 0; i < 3; i++) {
        sched_yield();
        bp_tensor *y = NULL;
        ST_OK(bp_neg(x, &y)); /* successful calls leave the message alone */
        bp_tensor_release(y);
    }
    if (!strstr(bp_last_error(), marker))
        st_report("thread %d: bp_last_error() is not its own: \"%.200s\" (wanted %s)", id,
                  bp_last_error(), marker);
}

/* Large enough for blas_cpu to split the work across its thread pool, from
 * several submitting threads at once. */
static void st_big(bp_backend *blas, int id)
{
    bp_tensor *a = NULL, *b = NULL, *e = NULL, *s = NULL, *h = NULL, *he = NULL, *hm = NULL;
    ST_OK(bp_full(blas, BP_F32, 2, (int64_t[]){256, 512}, 0.5, &a));
    ST_OK(bp_add(a, a, &b));                        /* 1.0 */
    ST_OK(bp_exp(b, &e));
    ST_OK(bp_mean(b, 0, NULL, false, &s));
    if (s)
        st_expect_item("mean(big)", s, 1.0, id);
    /* 2^17 half floats: the threads race to make the device's exp table */
    ST_OK(bp_cast(b, id % 2 ? BP_F16 : BP_BF16, &h));
    if (h)
        ST_OK(bp_exp(h, &he));
    if (he)
        ST_OK(bp_reduce(BP_OP_MAX, he, 0, NULL, false, &hm));
    if (hm)
        st_expect_item("max(exp(half 1))", hm, 2.71875, id); /* e rounded to f16 and bf16 */
    /* a matrix product and a convolution big enough that blas_cpu cuts
     * them into blocks for its pool, from several threads at once (each
     * block a single-threaded OpenBLAS call) */
    bp_tensor *ma = NULL, *mb = NULL, *mp = NULL, *ms = NULL, *cx = NULL, *cw = NULL,
              *cy = NULL, *cs = NULL;
    ST_OK(bp_full(blas, BP_F32, 2, (int64_t[]){256, 96}, 0.5, &ma));
    ST_OK(bp_ones(blas, BP_F32, 2, (int64_t[]){96, 120}, &mb));
    if (ma && mb)
        ST_OK(bp_matmul(ma, mb, &mp)); /* 256 x 120, every element 48 */
    if (mp)
        ST_OK(bp_sum(mp, 0, NULL, false, &ms));
    if (ms)
        st_expect_item("sum(matmul in blocks)", ms, 256.0 * 120 * 48, id);
    ST_OK(bp_ones(blas, BP_F32, 4, (int64_t[]){1, 16, 20, 20}, &cx));
    ST_OK(bp_full(blas, BP_F32, 4, (int64_t[]){24, 16, 3, 3}, 0.25, &cw));
    const bp_window win = {.struct_size = sizeof(bp_window)};
    if (cx && cw)
        ST_OK(bp_conv(cx, cw, NULL, &win, &cy)); /* (1, 24, 18, 18), every element 36 */
    if (cy)
        ST_OK(bp_sum(cy, 0, NULL, false, &cs));
    if (cs)
        st_expect_item("sum(conv in tiles)", cs, 24.0 * 18 * 18 * 36, id);
    bp_tensor *all[] = {a, b, e, s, h, he, hm, ma, mb, mp, ms, cx, cw, cy, cs};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

/* One op of the op table (every op over BP_OP_COUNT rounds of a thread),
 * with small valid operands (tests/support/op_args.c). */
static void st_table_op(bp_backend *be, int id, int it)
{
    bp_op op = (bp_op)((it * 7 + id) % BP_OP_COUNT);
    const bp_op_info *row = bp_op_info_of(op);
    bp_dtype dt = row->dtypes == BP_DTYPES_BOOL ? BP_BOOL
                  : row->dtypes == BP_DTYPES_INTEGER ? BP_I32 : BP_F32;
    bp_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL}, *o1 = NULL, *o2 = NULL;
    ST_OK(bpt_op_operands(be, op, dt, in));
    bpt_op_args args;
    bpt_op_args_default(op, be, dt, &args);
    bp_status st = BP_OK;
    if (!bpt_op_invoke(op, in, &args, &o1, &o2, &st))
        st_report("thread %d: no call for %s", id, row->name);
    else if (st_check(row->name, st) != BP_OK)
        st_report("thread %d: %s failed: %s", id, row->name, bp_last_error());
    for (int k = 0; k < 5; k++)
        bp_tensor_release(in[k]);
    bp_tensor_release(o1);
    bp_tensor_release(o2);
}

/* a lent through DLPack and taken back onto `to`, twice: every thread
 * shares the backends' exchange lists (core/src/exchange.c). */
static void st_lend(const bp_tensor *a, bp_backend *to, int id, double want)
{
    bp_tensor *back[2] = {NULL, NULL}, *s = NULL;
    for (int k = 0; k < 2; k++) {
        struct DLManagedTensor *m = NULL;
        ST_OK(bp_tensor_to_dlpack(a, &m));
        if (m && st_check("bp_tensor_from_dlpack", bp_tensor_from_dlpack(to, m, &back[k])) != BP_OK)
            m->deleter(m);
    }
    if (back[1]) {
        ST_OK(bp_sum(back[1], 0, NULL, false, &s));
        if (s)
            st_expect_item("sum(lent)", s, want, id);
    }
    bp_tensor_release(back[0]);
    bp_tensor_release(s);
    bp_tensor_release(back[1]);
}

void st_iteration(bp_context *ctx, int id, int it)
{
    bp_backend *bin = st_get(ctx, 0), *blas = st_get(ctx, 1);
    if (!bin || !blas)
        return;
    double v = id + 1;
    bp_tensor *a = NULL, *b = NULL, *c = NULL, *m = NULL, *s = NULL, *x = NULL, *y = NULL,
              *moved = NULL, *idx = NULL, *g = NULL, *j = NULL;
    ST_OK(bp_full(bin, BP_F32, 2, (int64_t[]){4, 8}, v, &a));
    ST_OK(bp_ones(blas, BP_F32, 2, (int64_t[]){8, 3}, &b));
    ST_OK(bp_backend_copy(a, blas, &c));
    ST_OK(bp_matmul(c, b, &m));                     /* every element 8 * v */
    ST_OK(bp_sum(m, 0, NULL, false, &s));
    if (s)
        st_expect_item("sum(matmul)", s, 4 * 3 * 8 * v, id);
    ST_OK(bp_softmax(a, -1, &x));                   /* every element 1/8 */
    ST_OK(bp_reduce(BP_OP_MAX, x, 0, NULL, false, &y));
    if (y)
        st_expect_item("max(softmax)", y, 0.125, id);
    ST_OK(bp_arange(bin, BP_I64, 3, -1, -1, &idx)); /* 3 2 1 0 */
    ST_OK(bp_gather(a, idx, 0, &g));
    ST_OK(bp_concat(2, (const bp_tensor *const[]){a, g}, 1, &j));
    /* a transfer gives m away: m must be refused from now on */
    ST_OK(bp_backend_transfer(m, bin, &moved));
    bp_tensor *bad = NULL;
    if (m && st_check("bp_neg", bp_neg(m, &bad)) != BP_ERR_INVALID_ARGUMENT)
        st_report("thread %d: a tensor given away by transfer was used", id);
    if (a)
        st_own_error(ctx, id, it, a);
    bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
    ST_OK(bp_backend_memory_info(blas, &mi));
    bp_plugin_record rec = {.struct_size = sizeof(bp_plugin_record)};
    for (size_t i = 0; i < bp_context_plugin_count(ctx); i++)
        ST_OK(bp_context_plugin(ctx, i, &rec));
    if (it % 8 == id % 8)
        st_big(blas, id);
    st_table_op(it % 2 ? blas : bin, id, it);
    if (a)
        st_lend(a, it % 2 ? blas : bin, id, 32 * v);
    bp_tensor *all[] = {a, b, c, m, s, x, y, moved, idx, g, j, bad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bp_tensor_release(all[i]);
}

bp_tensor *st_make_kept(bp_context *ctx, int id)
{
    bp_tensor *t = NULL;
    ST_OK(bp_full(st_get(ctx, id % 2), BP_F64, 1, (int64_t[]){16}, id, &t));
    return t;
}

void st_use_kept(bp_tensor *t, int id)
{
    if (!t)
        return;
    for (int i = 0; i < 10; i++) {
        bp_tensor *n = NULL, *s = NULL;
        ST_OK(bp_neg(t, &n));
        ST_OK(bp_sum(n, 0, NULL, false, &s));
        if (s)
            st_expect_item("sum(kept)", s, -16.0 * id, id);
        bp_tensor_release(s);
        bp_tensor_release(n);
    }
}

void st_default_nothing_opens(bp_context *ctx, int id)
{
    bp_backend *b = NULL;
    bp_status st = st_check("bp_backend_default", bp_backend_default(ctx, &b));
    if (st == BP_OK || b)
        st_report("thread %d: bp_backend_default succeeded where nothing opens", id);
    const char *reason = bp_context_default_reason(ctx);
    if (!reason || strlen(reason) > 100000)
        st_report("thread %d: bp_context_default_reason is unreadable", id);
}
