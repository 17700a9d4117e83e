/* fuzz_api: copies and transfers between backends, reads, lifetimes,
 * introspection, guard bytes. */
#include <stdint.h>
#include <string.h>

#include "fa_state.h"
#include "fz_oracle.h"

void fa_act_copy(fa_state *s)
{
    bool transfer = fz_bool(&s->in);
    int x = fa_slot_pick(s), to = fa_backend_pick(s), dst = fa_slot_pick(s);
    bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    if (!s->be[to])
        fa_invalid(&e, "the destination backend is NULL");
    else if (t && s->slot[x].ctx_id != s->ctx_id[to / 2])
        fa_invalid(&e, "the destination backend belongs to another context");
    e.backend = s->be[to];
    e.be_id = s->be_id[to];
    e.ctx_id = s->ctx_id[to / 2];
    if (t)
        fa_predict(&e, bp_tensor_dtype(t), bp_tensor_rank(t), bp_tensor_shape(t));
    /* A handle held elsewhere too (another slot, an export) is only copied:
     * the other holders keep it (tensor.h's bp_backend_transfer). */
    int holders = fa_lend_holds(s, t);
    for (int i = 0; i < FA_SLOTS; i++)
        holders += t && s->slot[i].t == t;
    bp_tensor *out = FA_GARBAGE;
    fz_mark();
    bp_status st = transfer ? bp_backend_transfer(t, s->be[to], &out)
                            : bp_backend_copy(t, s->be[to], &out);
    bool given_away = transfer && st == BP_OK && holders == 1;
    fa_finish(s, transfer ? "bp_backend_transfer" : "bp_backend_copy", st, out, &e, dst, -1);
    if (given_away) /* the handle, wherever it is held; views stay valid */
        for (int i = 0; i < FA_SLOTS; i++)
            if (s->slot[i].t == t && t)
                s->slot[i].gone = true;
}

void fa_act_read(fa_state *s)
{
    static _Alignas(64) unsigned char host[FA_CAP_BYTES + 64];
    int x = fa_slot_pick(s);
    unsigned how = fz_pick(&s->in, 8);
    const bp_tensor *t = fa_tensor(s, x);
    fa_expect e = fa_expect_valid();
    fa_expect_input(s, &e, x);
    size_t nbytes = bp_tensor_nbytes(t);
    bp_status st;
    const char *call;
    if (how < 5) {
        size_t sizes[] = {nbytes, nbytes - 1, 0, SIZE_MAX, nbytes + 1};
        size_t cap = sizes[how];
        bool null_dst = fz_u8(&s->in) == 0xff;
        if (cap < nbytes)
            fa_invalid(&e, "the destination is too small");
        if (null_dst && nbytes > 0)
            fa_invalid(&e, "dst is NULL");
        call = "bp_tensor_to_host";
        fz_mark();
        st = bp_tensor_to_host(t, null_dst ? NULL : host, cap);
    } else {
        bool null_out = fz_u8(&s->in) == 0xff;
        double d;
        int64_t i;
        bool b;
        if (bp_tensor_numel(t) != 1)
            fa_invalid(&e, "not exactly one element");
        if (null_out)
            fa_invalid(&e, "out is NULL");
        call = how == 5 ? "bp_item_f64" : how == 6 ? "bp_item_i64" : "bp_item_bool";
        fz_mark();
        st = how == 5   ? bp_item_f64(t, null_out ? NULL : &d)
             : how == 6 ? bp_item_i64(t, null_out ? NULL : &i)
                        : bp_item_bool(t, null_out ? NULL : &b);
    }
    fz_status(call, st);
    if (e.verdict == FA_INVALID && st == BP_OK)
        fz_fail("%s succeeded, but the contract says it must fail (%s)", call, e.why);
    if (e.verdict == FA_VALID && st != BP_OK && st != BP_ERR_BACKEND)
        fz_fail("%s failed on a valid call: %s", call, bp_last_error());
}

void fa_act_lifetime(fa_state *s)
{
    int a = fa_slot_pick(s), b = fa_slot_pick(s);
    switch (fz_pick(&s->in, 4)) {
    case 0:
        fa_slot_clear(s, a);
        break;
    case 1: /* a second handle on the same tensor */
        if (a != b && s->slot[a].t) {
            fa_slot_clear(s, b);
            bp_tensor_retain(s->slot[a].t);
            s->slot[b] = s->slot[a];
        }
        break;
    case 2:
        bp_tensor_retain(s->slot[a].t);
        bp_tensor_release(s->slot[a].t);
        break;
    default:
        bp_tensor_retain(NULL);
        bp_tensor_release(NULL);
        break;
    }
}

/* Calls that must refuse a NULL out pointer (and not crash). */
static void fa_null_outs(fa_state *s, const bp_tensor *t)
{
    bp_backend *be = s->be[0];
    int64_t shape[1] = {2};
    struct {
        const char *call;
        bp_status st;
    } r[] = {
        {"bp_unary", bp_unary(BP_OP_NEG, t, NULL)},
        {"bp_binary", bp_binary(BP_OP_ADD, t, t, NULL)},
        {"bp_matmul", bp_matmul(t, t, NULL)},
        {"bp_transpose", bp_transpose(t, NULL, NULL)},
        {"bp_cast", bp_cast(t, BP_F32, NULL)},
        {"bp_reshape", bp_reshape(t, 0, NULL, NULL)},
        {"bp_unsqueeze", bp_unsqueeze(t, 0, NULL)},
        {"bp_sum", bp_sum(t, 0, NULL, false, NULL)},
        {"bp_softmax", bp_softmax(t, 0, NULL)},
        {"bp_zeros", bp_zeros(be, BP_F32, 1, shape, NULL)},
        {"bp_tensor_from_host", bp_tensor_from_host(be, BP_F32, 0, NULL, NULL, NULL)},
        {"bp_backend_copy", bp_backend_copy(t, be, NULL)},
        {"bp_context_create", bp_context_create(s->config[0], NULL)},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        if (r[i].st == BP_OK)
            fz_fail("%s accepted a NULL out pointer", r[i].call);
        if (strcmp(bp_status_string(r[i].st), "BP_UNKNOWN_STATUS") == 0)
            fz_fail("%s returned unknown status %d", r[i].call, (int)r[i].st);
    }
}

void fa_act_inspect(fa_state *s)
{
    int i = fa_backend_pick(s), x = fa_slot_pick(s);
    bp_backend *be = s->be[i];
    bp_status st;
    switch (fz_pick(&s->in, 6)) {
    case 0:
        (void)bp_backend_supports(be, (bp_op)(int)fz_u32(&s->in) % 80, (bp_dtype)fz_dtype(&s->in));
        break;
    case 1: {
        bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
        bool null = fz_bool(&s->in);
        fz_mark();
        st = bp_backend_memory_info(be, null ? NULL : &mi);
        fz_status("bp_backend_memory_info", st);
        if (st == BP_OK && (null || !be))
            fz_fail("bp_backend_memory_info accepted a NULL argument");
        break;
    }
    case 2: {
        bp_device_info di = {.struct_size = sizeof(bp_device_info)};
        fz_mark();
        st = bp_backend_device_info(be, &di);
        fz_status("bp_backend_device_info", st);
        if (st == BP_OK && (!be || memchr(di.name, 0, sizeof di.name) == NULL ||
                            memchr(di.detail, 0, sizeof di.detail) == NULL))
            fz_fail("bp_backend_device_info: NULL backend accepted or unterminated text");
        break;
    }
    case 3:
        fz_mark();
        st = bp_backend_synchronize(be);
        fz_status("bp_backend_synchronize", st);
        if (!be && st == BP_OK)
            fz_fail("bp_backend_synchronize(NULL) succeeded");
        break;
    case 4: {
        const bp_tensor *t = fa_tensor(s, x);
        if (!t && (bp_tensor_rank(t) != 0 || bp_tensor_numel(t) != 0 || bp_tensor_shape(t) ||
                   bp_tensor_backend(t) || bp_tensor_is_valid(t)))
            fz_fail("metadata of a NULL tensor is not 0 / NULL / false");
        if (!be && (strcmp(bp_backend_name(be), "") != 0 || strcmp(bp_backend_plugin_name(be), "") != 0))
            fz_fail("the name of a NULL backend is not \"\"");
        fa_null_outs(s, t);
        break;
    }
    default: {
        bp_context *ctx = s->ctx[fz_pick(&s->in, 2)];
        bp_plugin_record rec = {.struct_size = sizeof(bp_plugin_record)};
        size_t n = bp_context_plugin_count(ctx), k = fz_u8(&s->in);
        fz_mark();
        st = bp_context_plugin(ctx, k, &rec);
        fz_status("bp_context_plugin", st);
        if ((st == BP_OK) != (ctx && k < n))
            fz_fail("bp_context_plugin(%zu) of %zu returned %s", k, n, bp_status_string(st));
        (void)strlen(bp_context_default_reason(ctx));
        break;
    }
    }
}

void fa_act_guards(fa_state *s)
{
    static const size_t sizes[] = {0, 8, 16, 64, 7, 1, 4096, (size_t)1 << 20,
                                   ((size_t)1 << 20) + 1, SIZE_MAX};
    int c = (int)fz_pick(&s->in, 2);
    size_t bytes = sizes[fz_pick(&s->in, sizeof sizes / sizeof sizes[0])];
    fz_mark();
    bp_status st = bp_context_set_debug_guards(s->ctx[c], bytes);
    fz_status("bp_context_set_debug_guards", st);
    if (st == BP_OK && (!s->ctx[c] || bytes > ((size_t)1 << 20)))
        fz_fail("bp_context_set_debug_guards(%s, %zu) succeeded", s->ctx[c] ? "ctx" : "NULL", bytes);
    for (int i = 0; i < FA_SLOTS; i++) {
        if (!s->slot[i].t)
            continue;
        fz_mark();
        st = bp_tensor_check_guards(s->slot[i].t);
        fz_status("bp_tensor_check_guards", st);
        bool gone = s->slot[i].gone;
        if (gone ? st == BP_OK : st != BP_OK)
            fz_fail("bp_tensor_check_guards returned %s for a %s tensor: %s", bp_status_string(st),
                    gone ? "given-away" : "live", bp_last_error());
    }
}

void fa_teardown(fa_state *s)
{
    for (int i = 0; i < FA_SLOTS; i++)
        fa_slot_clear(s, i);
    fa_lends_end(s);
    for (int i = 0; i < FA_BACKENDS; i++) {
        bp_memory_info mi = {.struct_size = sizeof(bp_memory_info)};
        if (!s->be[i])
            continue;
        fz_mark();
        bp_status st = bp_backend_memory_info(s->be[i], &mi);
        fz_status("bp_backend_memory_info", st);
        if (st == BP_OK && mi.used != 0)
            fz_fail("backend %s still has %llu bytes in use after every tensor was released",
                    bp_backend_name(s->be[i]), (unsigned long long)mi.used);
    }
    for (int c = 0; c < 2; c++)
        bp_context_destroy(s->ctx[c]);
}
