/* fuzz_api: contexts, backends and the creation ops. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fa_state.h"
#include "fz_anchor.h"
#include "fz_oracle.h"

/* ---- backends and contexts ------------------------------------------------ */

void fa_act_backend(fa_state *s)
{
    static const struct {
        const char *name;
        int plugin; /* 0 binary, 1 blas_cpu, -1 must fail */
    } names[] = {
        {"binary", 0}, {"blas_cpu", 1}, {"binary:0", 0}, {"blas_cpu:0", 1}, {"default", 2},
        {"binary:1", -1}, {"nosuch", -1}, {"", -1}, {"binary:", -1}, {":0", -1},
        {"binary:-1", -1}, {"binary:99999999999", -1}, {"BINARY", -1}, {"bp_nosuch.so", -1},
        {"/nonexistent/bp_x.so", -1}, {NULL, -1}, {"blas_cpu:2147483648", -1}, {"binary:0x1", -1},
        {"(the built-in binary plugin's file)", 0}, {"(the built-in blas_cpu plugin's file)", 1},
    };
    int c = (int)fz_pick(&s->in, 2);
    unsigned i = fz_pick(&s->in, sizeof names / sizeof names[0]);
    const char *name = names[i].name;
    if (name && name[0] == '(') /* by path: the same file the context found */
        name = fz_plugin_file(names[i].plugin ? "blas_cpu" : "binary");
    bool null_out = fz_u8(&s->in) == 0xff;
    bp_backend *b = (bp_backend *)(uintptr_t)0x10;
    fz_mark();
    bp_status st = names[i].plugin == 2
                       ? bp_backend_default(s->ctx[c], null_out ? NULL : &b)
                       : bp_backend_get(s->ctx[c], name, null_out ? NULL : &b);
    fz_trace("  %s(ctx %d, \"%s\") -> %s", names[i].plugin == 2 ? "bp_backend_default" : "bp_backend_get",
             c, name ? name : "(null)", bp_status_string(st));
    fz_status("bp_backend_get", st);
    bool must_fail = !s->ctx[c] || null_out || names[i].plugin < 0;
    if (must_fail && st == BP_OK)
        fz_fail("bp_backend_get(%s, \"%s\", %s) succeeded", s->ctx[c] ? "ctx" : "NULL",
                name ? name : "(null)", null_out ? "NULL" : "&out");
    if (null_out)
        return;
    if ((st == BP_OK) != (b != NULL))
        fz_fail("bp_backend_get returned %s with backend %p", bp_status_string(st), (void *)b);
    if (!must_fail && st != BP_OK && st != BP_ERR_OUT_OF_MEMORY)
        fz_fail("bp_backend_get(\"%s\") failed: %s: %s", name, bp_status_string(st),
                bp_last_error());
    if (st == BP_OK)
        fa_backend_store(s, c, b);
}

void fa_act_context(fa_state *s)
{
    int c = (int)fz_pick(&s->in, 2);
    if (s->ctx[c]) {
        /* Tensors of this context may still be alive: they keep it, and stay
         * usable; only its backend handles may no longer be used. */
        bp_context_destroy(s->ctx[c]);
        s->ctx[c] = NULL;
        s->be[2 * c] = s->be[2 * c + 1] = NULL;
        return;
    }
    fz_mark();
    bp_status st = bp_context_create(s->config[c], &s->ctx[c]);
    s->ctx_id[c] = ++s->ctx_ids;
    fz_status("bp_context_create", st);
    if (st != BP_OK && st != BP_ERR_OUT_OF_MEMORY)
        fz_fail("bp_context_create(%s) failed: %s", s->config[c], bp_last_error());
}

/* ---- creation -------------------------------------------------------------- */

/* Backend checks shared by the creation ops; returns the backend (maybe NULL). */
static bp_backend *fa_creation_backend(fa_state *s, fa_expect *e)
{
    int i = fa_backend_pick(s);
    if (!s->be[i])
        fa_invalid(e, "the backend is NULL");
    e->backend = s->be[i];
    e->be_id = s->be_id[i];
    e->ctx_id = s->ctx_id[i / 2];
    return s->be[i];
}

static void fa_expect_dtype(fa_expect *e, int dtype)
{
    if (!bp_dtype_valid(dtype))
        fa_invalid(e, "not a dtype");
}

void fa_act_from_host(fa_state *s)
{
    fa_expect e = fa_expect_valid();
    bp_backend *b = fa_creation_backend(s, &e);
    int dtype = fz_dtype(&s->in);
    int32_t rank = fa_rank(s);
    int64_t buf[BP_MAX_RANK];
    const int64_t *shape = fa_shape(s, rank, buf);
    fa_expect_dtype(&e, dtype);
    fa_predict(&e, dtype, rank, shape);
    void *data = fa_host_data(s, dtype, e.known ? e.numel : -1);
    if (e.known && e.numel > 0 && !data)
        fa_invalid(&e, "data is NULL");
    int dst = fa_slot_pick(s);
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = bp_tensor_from_host(b, (bp_dtype)dtype, rank, shape, data, &out);
    fa_finish(s, "bp_tensor_from_host", st, out, &e, dst, -1);
}

void fa_act_fill(fa_state *s)
{
    fa_expect e = fa_expect_valid();
    unsigned kind = fz_pick(&s->in, 3);
    bp_backend *b = fa_creation_backend(s, &e);
    int dtype = fz_dtype(&s->in);
    int32_t rank = fa_rank(s);
    int64_t buf[BP_MAX_RANK];
    const int64_t *shape = fa_shape(s, rank, buf);
    double value = fz_double(&s->in);
    int dst = fa_slot_pick(s);
    fa_expect_dtype(&e, dtype);
    fa_predict(&e, dtype, rank, shape);
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = kind == 0   ? bp_full(b, (bp_dtype)dtype, rank, shape, value, &out)
                   : kind == 1 ? bp_zeros(b, (bp_dtype)dtype, rank, shape, &out)
                               : bp_ones(b, (bp_dtype)dtype, rank, shape, &out);
    fa_finish(s, kind == 0 ? "bp_full" : kind == 1 ? "bp_zeros" : "bp_ones", st, out, &e, dst, -1);
}

void fa_act_arange_eye(fa_state *s)
{
    fa_expect e = fa_expect_valid();
    bool eye = fz_bool(&s->in);
    bp_backend *b = fa_creation_backend(s, &e);
    int dtype = fz_dtype(&s->in);
    int dst = fa_slot_pick(s);
    fa_expect_dtype(&e, dtype);
    bp_tensor *out = FA_GARBAGE;
    bp_status st;
    if (eye) {
        int64_t shape[2] = {fz_extent(&s->in), fz_extent(&s->in)};
        fa_predict(&e, dtype, 2, shape);
        if (!fa_affordable(&e))
            return;
        fz_mark();
        st = bp_eye(b, (bp_dtype)dtype, shape[0], shape[1], &out);
    } else {
        double start = fz_double(&s->in), stop = fz_double(&s->in), step = fz_double(&s->in);
        if (dtype == BP_BOOL)
            fa_invalid(&e, "arange of bool");
        if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || step == 0.0)
            fa_invalid(&e, "start, stop or step not finite, or step 0");
        double q = ceil((stop - start) / step);
        if (!isfinite(q) || !(q < 9223372036854775808.0))
            fa_invalid(&e, "more elements than int64 holds");
        int64_t n = e.verdict == FA_INVALID ? 0 : q > 0 ? (int64_t)q : 0;
        fa_predict(&e, dtype, 1, &n);
        if (!fa_affordable(&e))
            return;
        fz_mark();
        st = bp_arange(b, (bp_dtype)dtype, start, stop, step, &out);
    }
    fa_finish(s, eye ? "bp_eye" : "bp_arange", st, out, &e, dst, -1);
}

void fa_act_random(fa_state *s)
{
    fa_expect e = fa_expect_valid();
    bool uniform = fz_bool(&s->in);
    bp_backend *b = fa_creation_backend(s, &e);
    int dtype = fz_dtype(&s->in);
    int32_t rank = fa_rank(s);
    int64_t buf[BP_MAX_RANK];
    const int64_t *shape = fa_shape(s, rank, buf);
    uint64_t seed = fz_u64(&s->in), offset = fz_u8(&s->in) == 0xff ? UINT64_MAX - 3 : fz_u64(&s->in);
    double p0 = fz_double(&s->in), p1 = fz_double(&s->in);
    int dst = fa_slot_pick(s);
    fa_expect_dtype(&e, dtype);
    if (bp_dtype_valid(dtype) && !bp_dtype_is_float((bp_dtype)dtype))
        fa_invalid(&e, "random numbers of a non-float dtype");
    if (!isfinite(p0) || !isfinite(p1) || (uniform && p0 > p1) || (!uniform && p1 < 0))
        fa_invalid(&e, "bad distribution parameters");
    fa_predict(&e, dtype, rank, shape);
    if (!fa_affordable(&e))
        return;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = uniform ? bp_random_uniform(b, (bp_dtype)dtype, rank, shape, seed, offset, p0, p1, &out)
                           : bp_random_normal(b, (bp_dtype)dtype, rank, shape, seed, offset, p0, p1, &out);
    fa_finish(s, uniform ? "bp_random_uniform" : "bp_random_normal", st, out, &e, dst, -1);
}
