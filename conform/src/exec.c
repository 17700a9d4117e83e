/* One case, run in the worker process against the backend
 * under test. Inputs are made (special values, or random data drawn with the
 * library's keyed generator on the backend itself), the op is called, every
 * tensor's guard bytes are checked, and the output is compared with the
 * oracle computed from the inputs as the backend holds them. */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MSG(r, ...) snprintf((r)->message, sizeof (r)->message, __VA_ARGS__)

/* ---- special values ------------------------------------------------------- */

static int float_specials(bp_dtype dt, double *v)
{
    double tiny = dt == BP_F16 ? ldexp(1.0, -24) : dt == BP_BF16 ? ldexp(1.0, -133)
                  : dt == BP_F32 ? ldexp(1.0, -149) : ldexp(1.0, -1074);
    double minn = dt == BP_F16 ? ldexp(1.0, -14) : dt == BP_F64 ? ldexp(1.0, -1022) : ldexp(1.0, -126);
    double maxf = dt == BP_F16 ? 65504.0 : dt == BP_BF16 ? ldexp(255.0, 120)
                  : dt == BP_F32 ? ldexp(16777215.0, 104) : 1.7976931348623157e308;
    double list[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, -1, 0.5, -0.5, 1.5, 2.5,
                     -2.5, 3, 0.1, 1e-3, 100, -100, 7, tiny, -tiny, minn, -minn, maxf, -maxf,
                     3 * tiny};
    int n = (int)(sizeof list / sizeof list[0]);
    memcpy(v, list, sizeof list);
    return n;
}

static int int_specials(bp_dtype dt, int64_t *v)
{
    if (dt == BP_BOOL) {
        v[0] = 0;
        v[1] = 1;
        return 2;
    }
    static const int64_t mid[] = {-100, -7, -2, -1, 0, 1, 2, 3, 7, 100};
    return (int)cf_int_edges(dt, mid, sizeof mid / sizeof mid[0], v);
}

/* The k-th special value of dt (cyclic), set into a[i]. */
static void set_special(cf_array *a, int64_t i, int64_t k)
{
    if (cf_is_float(a->dt)) {
        double v[32];
        int n = float_specials(a->dt, v);
        a->f[i] = v[k % n];
    } else {
        int64_t v[32];
        int n = int_specials(a->dt, v);
        a->i[i] = v[k % n];
    }
}

static int n_specials(bp_dtype dt)
{
    double f[32];
    int64_t i[32];
    return cf_is_float(dt) ? float_specials(dt, f) : int_specials(dt, i);
}

/* ---- inputs --------------------------------------------------------------- */

typedef struct operand {
    bp_tensor *t;
    cf_array a;
} operand;

static void fill_host_random(cf_array *a, uint64_t seed, double lo, double hi, bool integral)
{
    for (int64_t k = 0; k < a->n; k++) {
        double u = cf_philox_uniform01(seed, 1000u + (uint64_t)k);
        if (a->dt == BP_BOOL) {
            a->i[k] = u < 0.5;
        } else if (!cf_is_float(a->dt) || integral) {
            double v = floor(lo + u * (hi - lo + 1.0));
            if (v > hi)
                v = hi;
            cf_set_f(a, k, v);
            if (a->f)
                a->f[k] = cf_round(a->dt, a->f[k]);
        } else {
            a->f[k] = cf_round(a->dt, lo + u * (hi - lo));
        }
    }
}

/* Make an operand tensor of dt and shape from a's values (already set, or
 * random here). Random floats come from bp_random_uniform on the backend
 * under test when it supports it; the values it holds are read back. */
static bool make_operand(const cf_worker_env *env, const cf_case *c, operand *op, bp_dtype dt,
                         int32_t rank, const int64_t *shape, int which, bool values_set,
                         cf_result *r)
{
    if (!values_set && !cf_array_init(&op->a, dt, rank, shape)) {
        MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    uint64_t seed = c->seed * 7u + (uint64_t)which;
    bp_status st;
    size_t bytes = (size_t)op->a.n * bp_dtype_size(dt);
    void *raw = malloc(bytes ? bytes : 1);
    if (!raw) {
        MSG(r, "%s: out of host memory", c->name);
        return false;
    }
    if (!values_set && cf_is_float(dt) && c->data == CF_RANDOM &&
        bp_backend_supports(env->be, BP_OP_RANDOM_UNIFORM, dt)) {
        st = bp_random_uniform(env->be, dt, rank, shape, seed, 1000u, c->lo[which], c->hi[which],
                               &op->t);
        if (st == BP_OK)
            st = bp_tensor_to_host(op->t, raw, bytes);
        if (st != BP_OK) {
            MSG(r, "%s: could not draw the random input with bp_random_uniform(%s): %s: %s",
                c->name, bp_dtype_name(dt), bp_status_string(st), bp_last_error());
            free(raw);
            return false;
        }
        cf_decode(&op->a, raw);
        free(raw);
        return true;
    }
    if (!values_set)
        fill_host_random(&op->a, seed, c->lo[which], c->hi[which], c->data == CF_RANGE);
    cf_encode(&op->a, raw);
    cf_decode(&op->a, raw); /* the oracle sees exactly the stored values */
    st = bp_tensor_from_host(env->be, dt, rank, shape, raw, &op->t);
    free(raw);
    if (st != BP_OK) {
        MSG(r, "%s: bp_tensor_from_host(%s) failed: %s: %s", c->name, bp_dtype_name(dt),
            bp_status_string(st), bp_last_error());
        return false;
    }
    return true;
}

/* Fill the special-value layouts (see conform_cases.c); returns the shapes. */
static void special_layout(const cf_case *c, int n_in, bp_dtype *dts, int32_t *ranks,
                           int64_t (*shapes)[BP_MAX_RANK], cf_array *arrays, bool *ok)
{
    int n = n_specials(c->dtype);
    bp_op_family fam = bp_op_family_of((bp_op)c->op);
    for (int k = 0; k < n_in; k++)
        ranks[k] = 1;
    if (c->op >= BP_OP_COUNT) {
        shapes[0][0] = n;
    } else if (fam == BP_FAMILY_BINARY) {
        ranks[0] = ranks[1] = 2;
        shapes[0][0] = n; shapes[0][1] = 1;
        shapes[1][0] = 1; shapes[1][1] = n;
    } else if (fam == BP_FAMILY_REDUCE) {
        ranks[0] = 2;
        shapes[0][0] = n;
        shapes[0][1] = 5;
    } else if (fam == BP_FAMILY_SOFTMAX) {
        ranks[0] = 2;
        shapes[0][0] = 5;
        shapes[0][1] = 5;
    } else if (fam == BP_FAMILY_MATMUL) {
        ranks[0] = ranks[1] = 2;
        shapes[0][0] = 5; shapes[0][1] = 4;
        shapes[1][0] = 4; shapes[1][1] = 6;
    } else if (fam == BP_FAMILY_WHERE) {
        shapes[0][0] = shapes[1][0] = shapes[2][0] = n;
    } else {
        shapes[0][0] = n;
    }
    for (int k = 0; k < n_in; k++) {
        if (!cf_array_init(&arrays[k], dts[k], ranks[k], shapes[k])) {
            *ok = false;
            return;
        }
    }
    if (fam == BP_FAMILY_REDUCE && c->op < BP_OP_COUNT) {
        /* row r: {special_r, 1, special_r, -2, 0}: ties and NaN/inf placement */
        for (int64_t row = 0; row < n; row++) {
            int64_t b = row * 5;
            set_special(&arrays[0], b, row);
            cf_set_f(&arrays[0], b + 1, 1);
            set_special(&arrays[0], b + 2, row);
            cf_set_i(&arrays[0], b + 3, -2);
            cf_set_f(&arrays[0], b + 4, 0);
        }
    } else if (fam == BP_FAMILY_SOFTMAX && c->op < BP_OP_COUNT) {
        static const double rows[5][5] = {
            {1, -INFINITY, 2, -INFINITY, 0.5}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY},
            {NAN, 1, 2, 3, 4}, {INFINITY, 1, 2, 3, 4}, {-0.0, 0.0, 1e-30, -1e-30, 1e-3},
        };
        for (int64_t k = 0; k < 25; k++)
            arrays[0].f[k] = rows[k / 5][k % 5];
    } else if (fam == BP_FAMILY_WHERE && c->op < BP_OP_COUNT) {
        for (int64_t k = 0; k < n; k++) {
            arrays[0].i[k] = (k % 3) != 1;
            set_special(&arrays[1], k, k);
            set_special(&arrays[2], k, n - 1 - k);
        }
    } else {
        for (int k = 0; k < n_in; k++)
            for (int64_t i = 0; i < arrays[k].n; i++)
                set_special(&arrays[k], i, i + (int64_t)k * 3);
    }
}

/* ---- checks ------------------------------------------------------------------ */

static bool check_guards(const cf_case *c, bp_tensor *t, const char *what, cf_result *r)
{
    if (!t)
        return true;
    bp_status st = bp_tensor_check_guards(t);
    if (st == BP_OK)
        return true;
    MSG(r, "%s: guard damage around the %s: %s", c->name, what, bp_last_error());
    return false;
}

static void shape_text(char *buf, size_t cap, int32_t rank, const int64_t *shape)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int32_t k = 0; k < rank && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, k ? ",%lld" : "%lld", (long long)shape[k]);
    if (used < cap)
        snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
}

/* Compare metadata and values of out with want. */
static void check_output(const cf_worker_env *env, const cf_case *c, bp_tensor *out,
                         const cf_array *want, const double *scale, int64_t k,
                         const operand *ops, int n_in, cf_result *r)
{
    char gs[96], ws[96];
    shape_text(gs, sizeof gs, bp_tensor_rank(out), bp_tensor_shape(out));
    shape_text(ws, sizeof ws, want->rank, want->shape);
    if (bp_tensor_dtype(out) != want->dt) {
        r->status = CF_FAIL;
        MSG(r, "%s: result dtype %s, want %s", c->name, bp_dtype_name(bp_tensor_dtype(out)),
            bp_dtype_name(want->dt));
        return;
    }
    if (strcmp(gs, ws) != 0) {
        r->status = CF_FAIL;
        MSG(r, "%s: result shape %s, want %s", c->name, gs, ws);
        return;
    }
    size_t bytes = (size_t)want->n * bp_dtype_size(want->dt);
    void *raw = malloc(bytes ? bytes : 1);
    cf_array got;
    if (!raw || !cf_array_init(&got, want->dt, want->rank, want->shape)) {
        free(raw);
        r->status = CF_FAIL;
        MSG(r, "%s: out of host memory", c->name);
        return;
    }
    bp_status st = bp_tensor_to_host(out, raw, bytes);
    if (st != BP_OK) {
        r->status = CF_FAIL;
        MSG(r, "%s: reading the result failed: %s: %s", c->name, bp_status_string(st),
            bp_last_error());
        free(raw);
        cf_array_free(&got);
        return;
    }
    cf_decode(&got, raw);
    free(raw);
    cf_tol tol = cf_tol_find(env->tols, c->name, c->dtype, env->tf32);
    int64_t bad;
    char why[400];
    bool ok = cf_compare(&got, want, scale, k, tol, env->tf32, &r->max_error, &r->tolerance, &bad,
                         why, sizeof why);
    if (ok) {
        r->status = CF_PASS;
    } else {
        r->status = CF_FAIL;
        char inputs[160] = "";
        bp_op_family fam = bp_op_family_of((bp_op)c->op);
        bool elementwise = fam == BP_FAMILY_UNARY || c->op == BP_OP_CAST || c->op == BP_OP_COPY;
        if (elementwise && bad >= 0 && bad < ops[0].a.n)
            snprintf(inputs, sizeof inputs, "; input %.17g", cf_get_f(&ops[0].a, bad));
        else if (fam == BP_FAMILY_BINARY && n_in == 2 && ops[0].a.n == want->n &&
                 ops[1].a.n == want->n && bad >= 0)
            snprintf(inputs, sizeof inputs, "; inputs %.17g, %.17g", cf_get_f(&ops[0].a, bad),
                     cf_get_f(&ops[1].a, bad));
        MSG(r, "%s [%s] %s: %s%s (tolerance: %s %g, tolerances.txt line %d)", c->name,
            bp_dtype_name(c->dtype), c->label, why, inputs,
            tol.kind == CF_TOL_EXACT ? "exact" : tol.kind == CF_TOL_ULP ? "ulp" : "norm",
            r->tolerance, tol.line);
    }
    cf_array_free(&got);
}

/* ---- the op call ---------------------------------------------------------------- */

static bool declared(const cf_worker_env *env, const cf_case *c)
{
    bp_backend *be = env->be;
    bp_op op = (bp_op)c->op;
    switch (op) {
    case BP_OP_CAST:
        return bp_backend_supports(be, op, c->dtype) && bp_backend_supports(be, op, c->dtype2);
    case BP_OP_PAD:
        return bp_backend_supports(be, op, c->dtype) && bp_backend_supports(be, BP_OP_FILL, c->dtype);
    default:
        return bp_backend_supports(be, op, c->dtype);
    }
}

static bp_status call_op(const cf_worker_env *env, const cf_case *c, operand *ops, int n_in,
                         bp_tensor **out)
{
    bp_op op = (bp_op)c->op;
    bp_backend *be = env->be;
    switch (op) {
    case BP_OP_WHERE: return bp_where(ops[0].t, ops[1].t, ops[2].t, out);
    case BP_OP_MATMUL: return bp_matmul(ops[0].t, ops[1].t, out);
    case BP_OP_TRANSPOSE: return bp_transpose(ops[0].t, cf_transpose_perm(c), out);
    case BP_OP_SLICE: {
        int64_t a[BP_MAX_RANK], b[BP_MAX_RANK], s[BP_MAX_RANK];
        bool has_stops;
        cf_slice_params(c, a, b, s, &has_stops);
        return bp_slice(ops[0].t, a, has_stops ? b : NULL, s, out);
    }
    case BP_OP_CONCAT: {
        const bp_tensor *xs[CF_MAX_OPERANDS];
        for (int k = 0; k < n_in; k++)
            xs[k] = ops[k].t;
        return bp_concat(n_in, xs, cf_axis_param(c), out);
    }
    case BP_OP_BROADCAST_TO: {
        int32_t rank;
        int64_t shape[BP_MAX_RANK];
        cf_broadcast_target(c, &rank, shape);
        return bp_broadcast_to(ops[0].t, rank, shape, out);
    }
    case BP_OP_PAD: {
        int64_t b[BP_MAX_RANK], a[BP_MAX_RANK];
        double v;
        cf_pad_params(c, b, a, &v);
        return bp_pad(ops[0].t, b, a, v, out);
    }
    case BP_OP_COPY: return bp_cast(ops[0].t, c->dtype, out);
    case BP_OP_CAST: return bp_cast(ops[0].t, c->dtype2, out);
    case BP_OP_GATHER: return bp_gather(ops[0].t, ops[1].t, cf_axis_param(c), out);
    case BP_OP_FILL:
        if (c->variant >= 100)
            return bp_eye(be, c->dtype, c->shape[0][0], c->shape[0][1], out);
        return bp_full(be, c->dtype, c->rank[0], c->shape[0], cf_fill_value(c), out);
    case BP_OP_ARANGE: {
        double a, b, s;
        cf_arange_params(c, &a, &b, &s);
        return bp_arange(be, c->dtype, a, b, s, out);
    }
    case BP_OP_RANDOM_UNIFORM:
        return bp_random_uniform(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                 c->hi[0], out);
    case BP_OP_RANDOM_NORMAL:
        return bp_random_normal(be, c->dtype, c->rank[0], c->shape[0], c->seed, 1000u, c->lo[0],
                                c->hi[0], out);
    default: break;
    }
    switch (bp_op_family_of(op)) {
    case BP_FAMILY_UNARY: return bp_unary(op, ops[0].t, out);
    case BP_FAMILY_BINARY: return bp_binary(op, ops[0].t, ops[1].t, out);
    case BP_FAMILY_REDUCE: {
        int32_t n_axes, axes[BP_MAX_RANK];
        bool keepdims;
        cf_reduce_axes(c, &n_axes, axes, &keepdims);
        return bp_reduce(op, ops[0].t, n_axes, n_axes ? axes : NULL, keepdims, out);
    }
    case BP_FAMILY_SOFTMAX:
        return op == BP_OP_SOFTMAX ? bp_softmax(ops[0].t, cf_axis_param(c), out)
                                   : bp_log_softmax(ops[0].t, cf_axis_param(c), out);
    default: return BP_ERR_INVALID_ARGUMENT;
    }
}

/* ---- contract rows -------------------------------------------------------------- */

static void contract_abi(const cf_worker_env *env, const cf_case *c, cf_result *r)
{
    r->status = CF_FAIL;
    if (!env->plugin_path) {
        MSG(r, "%s: the plugin file of this backend was not found among the context's plugins",
            c->name);
        return;
    }
    void *h = dlopen(env->plugin_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        MSG(r, "%s: dlopen(%s): %s", c->name, env->plugin_path, dlerror());
        return;
    }
    void *sym = dlsym(h, BP_PLUGIN_ENTRY_SYMBOL);
    bp_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    const bp_plugin *d = entry ? entry() : NULL;
    /* the 1.0 layout ends with the random entry */
    size_t v10 = offsetof(bp_plugin, random) + sizeof(void *);
    if (!entry)
        MSG(r, "%s: %s does not export %s", c->name, env->plugin_path, BP_PLUGIN_ENTRY_SYMBOL);
    else if (!d)
        MSG(r, "%s: %s() returned NULL", c->name, BP_PLUGIN_ENTRY_SYMBOL);
    else if (d->struct_size < v10)
        MSG(r, "%s: struct_size %u is smaller than the ABI 1.0 descriptor (%zu bytes)", c->name,
            d->struct_size, v10);
    else if (d->abi_major != BP_ABI_MAJOR)
        MSG(r, "%s: abi_major %u, this core speaks %d", c->name, d->abi_major, BP_ABI_MAJOR);
    else if (!d->name || !d->name[0] || strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
                                            strlen(d->name))
        MSG(r, "%s: name '%s' is not [a-z0-9_]+", c->name, d->name ? d->name : "(null)");
    else if (!d->version || !d->version[0])
        MSG(r, "%s: version is not set", c->name);
    else if (!d->description)
        MSG(r, "%s: description is NULL", c->name);
    else if (!d->open || !d->close || !d->device_count || !d->device_info || !d->device_open ||
             !d->device_close || !d->alloc || !d->free || !d->write || !d->read)
        MSG(r, "%s: a required lifecycle or buffer entry is NULL", c->name);
    else {
        r->status = CF_PASS;
        MSG(r, "name %s, version %s, ABI %u.%u, struct_size %u", d->name, d->version,
            d->abi_major, d->abi_minor, d->struct_size);
    }
    dlclose(h);
}

static void contract_roundtrip(const cf_worker_env *env, const cf_case *c, const operand *op,
                               cf_result *r)
{
    size_t bytes = (size_t)op->a.n * bp_dtype_size(c->dtype);
    void *want = malloc(bytes ? bytes : 1), *got = malloc(bytes + 64);
    if (!want || !got) {
        free(want);
        free(got);
        r->status = CF_FAIL;
        MSG(r, "%s: out of host memory", c->name);
        return;
    }
    cf_encode(&op->a, want);
    memset(got, 0xA5, bytes + 64);
    bp_status st = bp_tensor_to_host(op->t, got, bytes + 64);
    (void)env;
    r->status = CF_FAIL;
    if (st != BP_OK)
        MSG(r, "%s [%s]: bp_tensor_to_host failed: %s: %s", c->name, bp_dtype_name(c->dtype),
            bp_status_string(st), bp_last_error());
    else if (memcmp(want, got, bytes) != 0) {
        size_t at = 0;
        while (at < bytes && ((char *)want)[at] == ((char *)got)[at])
            at++;
        MSG(r, "%s [%s] %s: byte %zu differs after write and read back", c->name,
            bp_dtype_name(c->dtype), c->label, at);
    } else {
        bool tail_ok = true;
        for (size_t i = bytes; i < bytes + 64; i++)
            tail_ok = tail_ok && ((unsigned char *)got)[i] == 0xA5;
        if (!tail_ok)
            MSG(r, "%s [%s]: read wrote past the tensor's bytes into the host buffer", c->name,
                bp_dtype_name(c->dtype));
        else
            r->status = CF_PASS;
    }
    free(want);
    free(got);
}

/* ---- one case -------------------------------------------------------------------- */

void cf_exec_case(const cf_worker_env *env, const cf_case *c, cf_result *r)
{
    r->status = CF_FAIL;
    r->max_error = 0;
    r->tolerance = 0;
    r->message[0] = '\0';
    if (c->op == CF_OP_CONTRACT_ABI) {
        contract_abi(env, c, r);
        return;
    }
    operand ops[CF_MAX_OPERANDS];
    memset(ops, 0, sizeof ops);
    int n_in = c->n_in;
    bp_op_family fam = c->op < BP_OP_COUNT ? bp_op_family_of((bp_op)c->op) : BP_FAMILY_MOVEMENT;
    if (fam == BP_FAMILY_CREATION || fam == BP_FAMILY_RANDOM)
        n_in = 0;
    if (c->op == BP_OP_BROADCAST_TO)
        n_in = 1;
    bp_dtype dts[CF_MAX_OPERANDS] = {c->dtype, c->dtype, c->dtype};
    if (c->op == BP_OP_WHERE)
        dts[0] = BP_BOOL;
    if (c->op == BP_OP_GATHER)
        dts[1] = c->dtype2;
    int32_t ranks[CF_MAX_OPERANDS];
    int64_t shapes[CF_MAX_OPERANDS][BP_MAX_RANK];
    memcpy(ranks, c->rank, sizeof ranks);
    memcpy(shapes, c->shape, sizeof shapes);
    bool values_set = false, ok = true;
    cf_array pre[CF_MAX_OPERANDS];
    memset(pre, 0, sizeof pre);
    if (c->data == CF_SPECIAL) {
        special_layout(c, n_in, dts, ranks, shapes, pre, &ok);
        values_set = true;
    } else if (c->op == BP_OP_GATHER) {
        /* indices in [-dim, dim) */
        int32_t axis = cf_axis_param(c);
        int64_t dim = shapes[0][axis];
        ok = cf_array_init(&pre[1], dts[1], ranks[1], shapes[1]);
        for (int64_t k = 0; ok && k < pre[1].n; k++) {
            double u = cf_philox_uniform01(c->seed, 77u + (uint64_t)k);
            pre[1].i[k] = (int64_t)floor(u * 2.0 * (double)dim) - dim;
        }
    }
    for (int k = 0; ok && k < n_in; k++) {
        bool set = values_set || (c->op == BP_OP_GATHER && k == 1);
        if (set)
            ops[k].a = pre[k];
        ok = make_operand(env, c, &ops[k], dts[k], ranks[k], shapes[k], k, set, r);
    }
    if (!ok) {
        for (int k = 0; k < CF_MAX_OPERANDS; k++) {
            bp_tensor_release(ops[k].t);
            if (ops[k].a.f != pre[k].f || ops[k].a.i != pre[k].i)
                cf_array_free(&pre[k]);
            cf_array_free(&ops[k].a);
        }
        if (!r->message[0])
            MSG(r, "%s: could not make the inputs", c->name);
        return;
    }
    if (c->op == CF_OP_CONTRACT_ROUNDTRIP) {
        contract_roundtrip(env, c, &ops[0], r);
        if (r->status == CF_PASS && !check_guards(c, ops[0].t, "written buffer", r))
            r->status = CF_FAIL;
        bp_tensor_release(ops[0].t);
        cf_array_free(&ops[0].a);
        return;
    }

    bool says = declared(env, c);
    bp_tensor *out = NULL;
    bp_status st = call_op(env, c, ops, n_in, &out);
    if (!says) {
        if (st == BP_ERR_UNSUPPORTED_OP) {
            r->status = CF_UNSUPPORTED;
            MSG(r, "%s [%s]: declared unsupported", c->name, bp_dtype_name(c->dtype));
        } else if (st == BP_OK) {
            r->status = CF_FAIL;
            r->supports_mismatch = true;
            MSG(r, "%s [%s]: supports lies: supports() said false but the op succeeded", c->name,
                bp_dtype_name(c->dtype));
        } else {
            r->status = CF_FAIL;
            MSG(r, "%s [%s]: supports() said false, yet the op failed with %s instead of "
                "BP_ERR_UNSUPPORTED_OP: %s", c->name, bp_dtype_name(c->dtype),
                bp_status_string(st), bp_last_error());
        }
    } else if (st == BP_ERR_UNSUPPORTED_OP) {
        r->status = CF_FAIL;
        r->supports_mismatch = true;
        MSG(r, "%s [%s]: refused with BP_ERR_UNSUPPORTED_OP although supports() said yes: %s",
            c->name, bp_dtype_name(c->dtype), bp_last_error());
    } else if (st != BP_OK) {
        r->status = CF_FAIL;
        MSG(r, "%s [%s] %s: failed with %s: %s", c->name, bp_dtype_name(c->dtype), c->label,
            bp_status_string(st), bp_last_error());
    } else if (!out) {
        r->status = CF_FAIL;
        MSG(r, "%s: returned BP_OK without a result", c->name);
    } else {
        bool guards = check_guards(c, out, "result", r);
        for (int k = 0; guards && k < n_in; k++)
            guards = check_guards(c, ops[k].t, "input", r);
        if (guards) {
            cf_array want;
            double *scale = NULL;
            int64_t kdim = 1;
            memset(&want, 0, sizeof want);
            cf_array ins[CF_MAX_OPERANDS];
            for (int k = 0; k < CF_MAX_OPERANDS; k++)
                ins[k] = ops[k].a;
            if (!cf_case_oracle(c, ins, n_in, &want, &scale, &kdim)) {
                r->status = CF_FAIL;
                MSG(r, "%s: the oracle does not know this case (a bug in conform)", c->name);
            } else {
                check_output(env, c, out, &want, scale, kdim, ops, n_in, r);
            }
            cf_array_free(&want);
            free(scale);
        } else {
            r->status = CF_FAIL;
        }
    }
    bp_tensor_release(out);
    for (int k = 0; k < n_in; k++) {
        bp_tensor_release(ops[k].t);
        cf_array_free(&ops[k].a);
    }
}
