/* Transfers you can see and avoid, on the device-like test
 * backend (tests/devsim): ops are queued and return at once, only reads and
 * bp_synchronize wait, errors found on the device surface at the next wait,
 * and every transfer and wait is counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h" /* before criterion/redirect.h, which needs criterion.h first */

#include <criterion/redirect.h>

static bp_context *ctx;
static bp_backend *dev, *cpu;

/* devsim in hold mode: nothing it queues runs until a call waits for it. */
static void setup(void)
{
    static char path[] = "/tmp/bpt_transfers_XXXXXX";
    strcpy(path, "/tmp/bpt_transfers_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("[backplane]\nlog_level = error\n[backend.devsim]\nhold = true\n", f);
    fclose(f);
    BPT_OK(bp_context_create(path, &ctx));
    unlink(path);
    BPT_OK(bp_backend_get(ctx, BPT_DEVSIM_PATH, &dev));
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
}
/* also called by a test that runs setup itself (its own .init): the suite's
 * .fini then comes second and must not destroy the context again */
static void teardown(void)
{
    bp_context_destroy(ctx);
    ctx = NULL;
}

TestSuite(transfers, .init = setup, .fini = teardown);

/* Items waiting in devsim's queue (its device detail says). */
static long queued(void)
{
    bp_device_info info = {.struct_size = sizeof info};
    BPT_OK(bp_backend_device_info(dev, &info));
    const char *at = strstr(info.detail, " items queued");
    cr_assert_not_null(at, "%s", info.detail);
    while (at > info.detail && at[-1] >= '0' && at[-1] <= '9')
        at--;
    return atol(at);
}

static bp_stats stats_of(bp_backend *be)
{
    bp_stats s = {.struct_size = sizeof s};
    BPT_OK(bp_backend_stats(be, &s));
    return s;
}

static bp_tensor *f32(bp_backend *be, int64_t n, const float *v)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(be, BP_F32, 1, &n, v, &t));
    return t;
}

Test(transfers, ops_on_a_device_backend_return_before_they_run)
{
    bp_tensor *a = f32(dev, 3, (float[]){1, 2, 3}), *b = NULL;
    BPT_OK(bp_neg(a, &b));
    cr_assert_eq(queued(), 2, "the write and the op are still queued");
    float out[3];
    BPT_OK(bp_tensor_to_host(b, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){-1, -2, -3}), sizeof out);
    cr_assert_eq(queued(), 0);
    bp_tensor_release(a);
    bp_tensor_release(b);
}

Test(transfers, gather_on_device_backend_does_not_synchronise)
{
    bp_tensor *x = f32(dev, 4, (float[]){10, 20, 30, 40}), *idx = NULL, *g = NULL;
    BPT_OK(bp_tensor_from_host(dev, BP_I64, 1, (int64_t[]){2}, (int64_t[]){3, -4}, &idx));
    bp_stats s0 = stats_of(dev);
    BPT_OK(bp_gather(x, idx, 0, &g));
    bp_stats s1 = stats_of(dev);
    cr_assert_eq(s1.sync_reads, s0.sync_reads, "bp_gather waited for the device");
    cr_assert_eq(queued(), 3, "the two writes and the gather are still queued");
    float out[2];
    BPT_OK(bp_tensor_to_host(g, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){40, 10}), sizeof out);
    bp_tensor_release(x);
    bp_tensor_release(idx);
    bp_tensor_release(g);
}

Test(transfers, out_of_range_gather_index_is_reported_at_next_read)
{
    bp_tensor *x = f32(dev, 4, (float[]){10, 20, 30, 40}), *idx = NULL, *g = NULL;
    BPT_OK(bp_tensor_from_host(dev, BP_I32, 1, (int64_t[]){3}, (int32_t[]){1, 7, 9}, &idx));
    BPT_OK(bp_gather(x, idx, 0, &g)); /* queued: the device finds the bad index */
    bp_tensor *y = NULL;
    BPT_OK(bp_neg(x, &y)); /* work queued after the failed gather */
    float out[4];
    BPT_FAILS(BP_ERR_INDEX, bp_tensor_to_host(y, out, sizeof out));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "devsim:0") && strstr(e, "gather") && strstr(e, "axis 0") &&
                  strstr(e, "indices[1]") && strstr(e, "is 7") &&
                  strstr(e, "bp_tensor_to_host"),
              "%s", e);
    BPT_OK(bp_tensor_to_host(x, out, sizeof out)); /* reported once, then cleared */
    cr_assert_arr_eq(out, ((float[]){10, 20, 30, 40}), sizeof out);
    bp_tensor_release(x);
    bp_tensor_release(y);
    bp_tensor_release(idx);
    bp_tensor_release(g);
}

Test(transfers, a_read_waits_only_for_the_work_that_produces_it)
{
    bp_tensor *a = f32(dev, 2, (float[]){1, 2}), *b = f32(dev, 2, (float[]){3, 4}), *c = NULL;
    BPT_OK(bp_add(a, b, &c));
    cr_assert_eq(queued(), 3);
    float out[2];
    BPT_OK(bp_tensor_to_host(a, out, sizeof out)); /* needs only a's write */
    cr_assert_arr_eq(out, ((float[]){1, 2}), sizeof out);
    cr_assert_eq(queued(), 2, "reading a ran work that a does not depend on");
    BPT_OK(bp_synchronize(dev));
    cr_assert_eq(queued(), 0);
    bp_tensor_release(a);
    bp_tensor_release(b);
    bp_tensor_release(c);
}

Test(transfers, copies_to_and_from_a_device_stage_through_host_and_are_counted)
{
    bp_tensor *h = f32(cpu, 3, (float[]){1.5f, -2, 3}), *d = NULL, *back = NULL;
    bp_stats c0 = stats_of(cpu), d0 = stats_of(dev);
    BPT_OK(bp_backend_copy(h, dev, &d));
    BPT_OK(bp_backend_copy(d, cpu, &back));
    bp_stats c1 = stats_of(cpu), d1 = stats_of(dev);
    cr_assert_eq(d1.copies_in - d0.copies_in, 1);
    cr_assert_eq(d1.copies_out - d0.copies_out, 1);
    cr_assert_eq(c1.copies_out - c0.copies_out, 1);
    cr_assert_eq(c1.copies_in - c0.copies_in, 1);
    cr_assert_eq(d1.sync_reads - d0.sync_reads, 1, "copying off the device waits for it");
    float out[3];
    BPT_OK(bp_tensor_to_host(back, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){1.5f, -2, 3}), sizeof out);
    bp_tensor *again = NULL;
    BPT_OK(bp_backend_copy(h, dev, &again));
    cr_assert_eq(again, d, "a parameter copied to the device again costs nothing");
    bp_tensor_release(again);
    bp_tensor_release(h);
    bp_tensor_release(d);
    bp_tensor_release(back);
}

Test(transfers, each_synchronising_read_logs_one_debug_line_naming_the_call,
     .init = cr_redirect_stderr)
{
    setup();
    bp_context *c = NULL;
    char path[] = "/tmp/bpt_transfers_dbg_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("[backplane]\nlog_level = debug\n", f);
    fclose(f);
    BPT_OK(bp_context_create(path, &c));
    unlink(path);
    bp_backend *be = NULL;
    BPT_OK(bp_backend_get(c, BPT_DEVSIM_PATH, &be));
    bp_tensor *x = f32(be, 1, (float[]){2}), *s = NULL;
    BPT_OK(bp_sum(x, 0, NULL, false, &s));
    double v;
    BPT_OK(bp_item_f64(s, &v));
    cr_assert_eq(v, 2.0);
    bp_tensor_release(x);
    bp_tensor_release(s);
    bp_context_destroy(c);
    teardown();
    fflush(stderr);
    char log[8192] = "";
    size_t n = fread(log, 1, sizeof log - 1, cr_get_redirected_stderr());
    log[n] = '\0';
    cr_assert(strstr(log, "bp_item_f64: synchronising read of 4 bytes from devsim:0"), "%s", log);
}

/* ---- the op entry of ABI 1.4 on the device-like backend ----------------------- */

Test(transfers, ops_of_abi_1_4_are_queued_and_return_before_they_run)
{
    bp_tensor *x = f32(dev, 4, (float[]){3, 1, 4, 1}), *cs = NULL, *v = NULL, *i = NULL;
    bp_stats s0 = stats_of(dev);
    BPT_OK(bp_cumsum(x, 0, false, false, &cs));
    BPT_OK(bp_topk(x, 2, 0, true, true, &v, &i));
    cr_assert_eq(stats_of(dev).sync_reads, s0.sync_reads, "an op of ABI 1.4 waited");
    cr_assert_eq(queued(), 3, "the write, cumsum and topk are still queued");
    /* topk's second output alone: its read waits for the topk */
    int64_t idx[2];
    BPT_OK(bp_tensor_to_host(i, idx, sizeof idx));
    cr_assert(idx[0] == 2 && idx[1] == 0, "topk indices %lld %lld", (long long)idx[0],
              (long long)idx[1]);
    float out[4];
    BPT_OK(bp_tensor_to_host(cs, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){3, 4, 8, 9}), sizeof out);
    bp_tensor_release(x), bp_tensor_release(cs), bp_tensor_release(v), bp_tensor_release(i);
}

Test(transfers, scatter_and_gather_elements_do_not_synchronise_and_defer_a_bad_index)
{
    bp_tensor *x = f32(dev, 4, (float[]){10, 20, 30, 40}), *u = f32(dev, 2, (float[]){1, 2});
    bp_tensor *idx = NULL, *bad = NULL, *s = NULL, *g = NULL;
    BPT_OK(bp_tensor_from_host(dev, BP_I64, 1, (int64_t[]){2}, (int64_t[]){3, 3}, &idx));
    BPT_OK(bp_tensor_from_host(dev, BP_I32, 1, (int64_t[]){2}, (int32_t[]){0, 4}, &bad));
    bp_stats s0 = stats_of(dev);
    BPT_OK(bp_scatter_elements(x, idx, u, 0, BP_SCATTER_ADD, &s));
    BPT_OK(bp_gather_elements(x, bad, 0, &g)); /* queued: the device finds the bad index */
    cr_assert_eq(stats_of(dev).sync_reads, s0.sync_reads, "the index ops waited for the device");
    float out[4];
    BPT_FAILS(BP_ERR_INDEX, bp_tensor_to_host(g, out, 2 * sizeof(float)));
    const char *e = bp_last_error();
    cr_assert(strstr(e, "devsim:0") && strstr(e, "gather_elements") && strstr(e, "indices[1]") &&
                  strstr(e, "is 4") && strstr(e, "axis 0"),
              "%s", e);
    BPT_OK(bp_tensor_to_host(s, out, sizeof out)); /* reported once, then cleared */
    cr_assert_arr_eq(out, ((float[]){10, 20, 30, 43}), sizeof out);
    bp_tensor_release(x), bp_tensor_release(u), bp_tensor_release(idx), bp_tensor_release(bad);
    bp_tensor_release(s), bp_tensor_release(g);
}
