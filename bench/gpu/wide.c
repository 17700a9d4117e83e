/* The wide table's rows (wide.h): parsing bench/gpu/ops.txt, making each
 * row's inputs and calling its op. torch_bench.py reads the same file and
 * must agree with this one op for op: OPS there, wide_ops here (the test
 * tests/test_cuda_bench_table.c compares both sides' --list). */
#define _POSIX_C_SOURCE 200809L
#include "wide.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ops ---------------------------------------------------------------------------------
 * Each input's kind: f data of the row's dtype, uniform in [-1, 1); v data
 * in [0.5, 1.5) (a variance); b bool (about half true); i i64 indices into
 * input 0's axis; l i64 labels in [0, input 0's extent 1). Inputs past the
 * kinds string repeat its last kind. */
typedef struct wide_op {
    const char *name, *kinds;
    int min_in, max_in;
    const char *needs;             /* parameters it must have: a axis, t to, p perm, k window */
} wide_op;

static const wide_op wide_ops[] = {
    {"add", "ff", 2, 2, ""},          {"mul", "ff", 2, 2, ""},
    {"where", "bff", 3, 3, ""},       {"gelu", "f", 1, 1, ""},
    {"tanh", "f", 1, 1, ""},          {"silu", "f", 1, 1, ""},
    {"relu", "f", 1, 1, ""},          {"exp", "f", 1, 1, ""},
    {"sigmoid", "f", 1, 1, ""},       {"cast", "f", 1, 1, "t"},
    {"sum", "f", 1, 1, ""},           {"mean", "f", 1, 1, "a"},
    {"max", "f", 1, 1, "a"},          {"argmax", "f", 1, 1, "a"},
    {"softmax", "f", 1, 1, ""},       {"log_softmax", "f", 1, 1, ""},
    {"layer_norm", "fff", 3, 3, ""},  {"rms_norm", "ff", 2, 2, ""},
    {"batch_norm", "ffffv", 5, 5, ""}, {"cross_entropy", "fl", 2, 2, ""},
    {"matmul", "ff", 2, 2, ""},       {"transpose", "f", 1, 1, "p"},
    {"concat", "f", 2, WIDE_MAX_IN, "a"}, {"gather", "fi", 2, 2, "a"},
    {"cumsum", "f", 1, 1, "a"},       {"sort", "f", 1, 1, "a"},
    {"conv", "fff", 2, 3, "k"},       {"conv_transpose", "fff", 2, 3, "k"},
    {"max_pool", "f", 1, 1, "k"},     {"avg_pool", "f", 1, 1, "k"},
};
#define WIDE_NOPS (sizeof wide_ops / sizeof wide_ops[0])

static const wide_op *op_of(const char *name)
{
    for (size_t k = 0; k < WIDE_NOPS; k++)
        if (strcmp(wide_ops[k].name, name) == 0)
            return &wide_ops[k];
    return NULL;
}

static char kind_of(const wide_op *o, int i)
{
    size_t n = strlen(o->kinds);
    return o->kinds[(size_t)i < n ? (size_t)i : n - 1];
}

static bool dtype_of(const char *s, bp_dtype *dt)
{
    static const bp_dtype all[] = {BP_BOOL, BP_U8, BP_I8, BP_I32, BP_I64,
                                   BP_F16, BP_BF16, BP_F32, BP_F64};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (strcmp(bp_dtype_name(all[k]), s) == 0) {
            *dt = all[k];
            return true;
        }
    return false;
}

/* ---- parsing ----------------------------------------------------------------------------------- */

#define FAIL(...) (snprintf(err, errsz, "%s:%d: ", path, line),                              \
                   snprintf(err + strlen(err), errsz - strlen(err), __VA_ARGS__), false)

/* "4096x16384" -> rank and extents */
static bool dims_of(const char *s, int32_t *rank, int64_t *shape)
{
    *rank = 0;
    while (*s) {
        if (*rank >= BP_MAX_RANK || !isdigit((unsigned char)*s))
            return false;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || v < 1)
            return false;
        shape[(*rank)++] = v;
        s = end;
        if (*s == 'x')
            s++;
        else if (*s)
            return false;
    }
    return *rank > 0;
}

/* "7x7" or "7" -> two extents */
static bool pair_of(const char *s, int64_t *v)
{
    int32_t n;
    int64_t d[BP_MAX_RANK];
    if (!dims_of(s, &n, d) || n > 2)
        return false;
    v[0] = d[0], v[1] = n == 2 ? d[1] : d[0];
    return true;
}

/* perm=0.2.1 -> r->perm */
static bool parse_perm(const char *path, int line, const char *val, wide_row *r, char *err,
                       size_t errsz)
{
    char *end;
    for (const char *p = val; *p;) {
        long v = strtol(p, &end, 10);
        if (end == p || r->nperm >= BP_MAX_RANK || v < 0 || v >= BP_MAX_RANK)
            return FAIL("perm '%s' is not axes joined by '.'", val);
        r->perm[r->nperm++] = (int32_t)v;
        p = *end == '.' ? end + 1 : end;
        if (*end && *end != '.')
            return FAIL("perm '%s' is not axes joined by '.'", val);
    }
    return true;
}

/* One NAME=VALUE field of a row into r; *has_to and *has_k say which were given. */
static bool parse_param(const char *path, int line, const char *name, const char *val,
                        wide_row *r, bool *has_to, bool *has_k, char *err, size_t errsz)
{
    char *end;
    if (strcmp(name, "axis") == 0) {
        long v = strtol(val, &end, 10);
        if (*end || v < -BP_MAX_RANK || v >= BP_MAX_RANK)
            return FAIL("axis '%s' is not an axis", val);
        r->has_axis = true, r->axis = (int32_t)v;
    } else if (strcmp(name, "to") == 0) {
        if (!dtype_of(val, &r->to))
            return FAIL("to '%s' is not a dtype", val);
        *has_to = true;
    } else if (strcmp(name, "perm") == 0) {
        return parse_perm(path, line, val, r, err, errsz);
    } else if (strcmp(name, "k") == 0 || strcmp(name, "s") == 0 || strcmp(name, "p") == 0) {
        int64_t *dst = name[0] == 'k' ? r->k : name[0] == 's' ? r->s : r->p;
        if (!pair_of(val, dst))
            return FAIL("%s '%s' is not AxB", name, val);
        *has_k = *has_k || name[0] == 'k';
    } else if (strcmp(name, "bw") == 0 || strcmp(name, "tf32") == 0) {
        if (strcmp(val, "1") != 0 && strcmp(val, "0") != 0)
            return FAIL("%s is 0 or 1", name);
        *(name[0] == 'b' ? &r->bw : &r->tf32) = val[0] == '1';
    } else {
        return FAIL("unknown parameter '%s' (axis, to, perm, k, s, p, bw, tf32)", name);
    }
    return true;
}

/* KEY FAMILY OP DTYPE SHAPES: the row's first five fields; *op its op. */
static bool parse_head(const char *path, int line, char **tok, wide_row *r, const wide_op **op,
                       char *err, size_t errsz)
{
    if (strlen(tok[0]) >= sizeof r->key || strlen(tok[1]) >= sizeof r->family ||
        strlen(tok[2]) >= sizeof r->op)
        return FAIL("key, family or op too long");
    strcpy(r->key, tok[0]), strcpy(r->family, tok[1]), strcpy(r->op, tok[2]);
    const wide_op *o = op_of(r->op);
    if (!o) {
        char known[512] = "";
        for (size_t k = 0; k < WIDE_NOPS; k++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? " " : "",
                     wide_ops[k].name);
        return FAIL("unknown op '%s' (known: %s)", r->op, known);
    }
    if (!dtype_of(tok[3], &r->dt) || !bp_dtype_is_float(r->dt))
        return FAIL("'%s' is not a float dtype (f16, bf16, f32, f64)", tok[3]);
    char *ssave = NULL;
    for (char *s = strtok_r(tok[4], ",", &ssave); s; s = strtok_r(NULL, ",", &ssave)) {
        if (r->nin >= WIDE_MAX_IN)
            return FAIL("more than %d inputs", WIDE_MAX_IN);
        if (!dims_of(s, &r->rank[r->nin], r->shape[r->nin]))
            return FAIL("'%s' is not a shape (extents >= 1 joined by x, at most %d)", s,
                        BP_MAX_RANK);
        r->nin++;
    }
    if (r->nin < o->min_in || r->nin > o->max_in)
        return FAIL("%s takes %d to %d inputs, not %d", r->op, o->min_in, o->max_in, r->nin);
    *op = o;
    return true;
}

static bool parse_line(const char *path, int line, char *text, wide_row *r, char *err,
                       size_t errsz)
{
    char *tok[32], *save = NULL;
    int nt = 0;
    for (char *t = strtok_r(text, " \t\r\n", &save); t && nt < 32; t = strtok_r(NULL, " \t\r\n", &save))
        tok[nt++] = t;
    if (nt < 5)
        return FAIL("a row needs KEY FAMILY OP DTYPE SHAPES (found %d fields)", nt);
    memset(r, 0, sizeof *r);
    r->line = line;
    const wide_op *o = NULL;
    if (!parse_head(path, line, tok, r, &o, err, errsz))
        return false;
    bool has_to = false, has_k = false;
    for (int t = 5; t < nt; t++) {
        char *eq = strchr(tok[t], '=');
        if (!eq)
            return FAIL("'%s' is not NAME=VALUE", tok[t]);
        *eq = 0;
        if (!parse_param(path, line, tok[t], eq + 1, r, &has_to, &has_k, err, errsz))
            return false;
    }
    if (strchr(o->needs, 'a') && !r->has_axis)
        return FAIL("%s needs axis=", r->op);
    if (strchr(o->needs, 't') && !has_to)
        return FAIL("%s needs to=", r->op);
    if (strchr(o->needs, 'p') && r->nperm != r->rank[0])
        return FAIL("%s needs perm= with %d axes", r->op, (int)r->rank[0]);
    if (strchr(o->needs, 'k') && !has_k)
        return FAIL("%s needs k=", r->op);
    return true;
}

bool wide_parse(const char *path, wide_row **rows, int *n, char *err, size_t errsz)
{
    int line = 0;
    *rows = NULL, *n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return FAIL("cannot open: %s", strerror(errno));
    char buf[1024];
    int cap = 0;
    bool ok = true;
    while (ok && fgets(buf, sizeof buf, f)) {
        line++;
        char *s = buf;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            wide_row *grown = realloc(*rows, (size_t)cap * sizeof **rows);
            if (!grown) {
                ok = FAIL("out of memory");
                break;
            }
            *rows = grown;
        }
        ok = parse_line(path, line, s, &(*rows)[*n], err, errsz);
        for (int k = 0; ok && k < *n; k++)
            if (strcmp((*rows)[k].key, (*rows)[*n].key) == 0)
                ok = FAIL("key '%s' already used on line %d", (*rows)[k].key, (*rows)[k].line);
        if (ok)
            (*n)++;
    }
    fclose(f);
    if (ok && *n == 0)
        ok = FAIL("no rows");
    if (!ok) {
        free(*rows);
        *rows = NULL, *n = 0;
    }
    return ok;
}

void wide_describe(const wide_row *r, char *buf, size_t size)
{
    size_t at = 0;
#define PUT(...) (at += (size_t)snprintf(buf + at, at < size ? size - at : 0, __VA_ARGS__))
    PUT("%s %s %s %s ", r->key, r->family, r->op, bp_dtype_name(r->dt));
    for (int i = 0; i < r->nin; i++)
        for (int32_t k = 0; k < r->rank[i]; k++)
            PUT("%s%lld", k ? "x" : i ? "," : "", (long long)r->shape[i][k]);
    if (r->has_axis)
        PUT(" axis=%d", (int)r->axis);
    if (strcmp(r->op, "cast") == 0)
        PUT(" to=%s", bp_dtype_name(r->to));
    for (int k = 0; k < r->nperm; k++)
        PUT("%s%d", k ? "." : " perm=", (int)r->perm[k]);
    if (r->k[0])
        PUT(" k=%lldx%lld", (long long)r->k[0], (long long)r->k[1]);
    if (r->s[0])
        PUT(" s=%lldx%lld", (long long)r->s[0], (long long)r->s[1]);
    if (r->p[0] || r->p[1])
        PUT(" p=%lldx%lld", (long long)r->p[0], (long long)r->p[1]);
    if (r->bw)
        PUT(" bw=1");
    if (r->tf32)
        PUT(" tf32=1");
#undef PUT
}

/* ---- inputs ----------------------------------------------------------------------------------- */

void wide_release(bp_tensor **in, int n)
{
    for (int i = 0; i < n; i++) {
        bp_tensor_release(in[i]);
        in[i] = NULL;
    }
}

/* uniform draws in [lo, hi) of dt, or integers in [0, hi) (through f64, whose
 * draws stay below hi, and a truncating cast) */
static bp_status draw(bp_backend *b, bp_dtype dt, int32_t rank, const int64_t *shape, uint64_t seed,
                      double lo, double hi, bp_tensor **out)
{
    if (bp_dtype_is_float(dt))
        return bp_random_uniform(b, dt, rank, shape, seed, 0, lo, hi, out);
    bp_tensor *u = NULL;
    bp_status st = bp_random_uniform(b, BP_F64, rank, shape, seed, 0, lo, hi, &u);
    if (st == BP_OK)
        st = bp_cast(u, dt, out);
    bp_tensor_release(u);
    return st;
}

bp_status wide_inputs(const wide_row *r, bp_backend *b, int64_t cap, bp_tensor **in)
{
    const wide_op *o = op_of(r->op);
    int64_t shape[WIDE_MAX_IN][BP_MAX_RANK];
    for (int i = 0; i < r->nin; i++)
        for (int32_t k = 0; k < r->rank[i]; k++)
            shape[i][k] = cap > 0 && r->shape[i][k] > cap ? cap : r->shape[i][k];
    for (int i = 0; i < r->nin; i++)
        in[i] = NULL;
    bp_status st = BP_OK;
    for (int i = 0; i < r->nin && st == BP_OK; i++) {
        const uint64_t seed = 1000 + (uint64_t)i;
        const int32_t n = r->rank[i];
        switch (kind_of(o, i)) {
        case 'v': st = draw(b, r->dt, n, shape[i], seed, 0.5, 1.5, &in[i]); break;
        case 'b': {
            bp_tensor *t = NULL;
            st = draw(b, BP_I32, n, shape[i], seed, 0, 2, &t);
            if (st == BP_OK)
                st = bp_cast(t, BP_BOOL, &in[i]);
            bp_tensor_release(t);
            break;
        }
        case 'i': {
            const int32_t ax = r->axis < 0 ? r->axis + r->rank[0] : r->axis;
            st = draw(b, BP_I64, n, shape[i], seed, 0, (double)shape[0][ax], &in[i]);
            break;
        }
        case 'l': st = draw(b, BP_I64, n, shape[i], seed, 0, (double)shape[0][1], &in[i]); break;
        default: st = draw(b, r->dt, n, shape[i], seed, -1.0, 1.0, &in[i]); break;
        }
    }
    if (st != BP_OK)
        wide_release(in, r->nin);
    return st;
}

/* ---- calls ------------------------------------------------------------------------------------- */

static bp_window window_of(const wide_row *r, bool conv)
{
    bp_window w = BP_WINDOW_INIT;
    for (int k = 0; k < 2; k++) {
        if (!conv)
            w.kernel[k] = r->k[k];
        w.strides[k] = r->s[k] ? r->s[k] : 1;
        w.pads[k] = w.pads[2 + k] = r->p[k];
    }
    return w;
}

bp_status wide_call(const wide_row *r, bp_tensor **in)
{
    const char *op = r->op;
    bp_tensor *y = NULL, *y2 = NULL;
    bp_status st;
    const int32_t *axes = r->has_axis ? &r->axis : NULL;
    const int32_t n_axes = r->has_axis ? 1 : 0;
    const int32_t axis = r->has_axis ? r->axis : -1;
    if (strcmp(op, "add") == 0)
        st = bp_add(in[0], in[1], &y);
    else if (strcmp(op, "mul") == 0)
        st = bp_mul(in[0], in[1], &y);
    else if (strcmp(op, "where") == 0)
        st = bp_where(in[0], in[1], in[2], &y);
    else if (strcmp(op, "gelu") == 0)
        st = bp_gelu(in[0], &y);
    else if (strcmp(op, "tanh") == 0)
        st = bp_tanh(in[0], &y);
    else if (strcmp(op, "silu") == 0)
        st = bp_silu(in[0], &y);
    else if (strcmp(op, "relu") == 0)
        st = bp_relu(in[0], &y);
    else if (strcmp(op, "exp") == 0)
        st = bp_exp(in[0], &y);
    else if (strcmp(op, "sigmoid") == 0)
        st = bp_sigmoid(in[0], &y);
    else if (strcmp(op, "cast") == 0)
        st = bp_cast(in[0], r->to, &y);
    else if (strcmp(op, "sum") == 0)
        st = bp_sum(in[0], n_axes, axes, false, &y);
    else if (strcmp(op, "mean") == 0)
        st = bp_mean(in[0], n_axes, axes, false, &y);
    else if (strcmp(op, "max") == 0)
        st = bp_max(in[0], n_axes, axes, false, &y);
    else if (strcmp(op, "argmax") == 0)
        st = bp_argmax(in[0], n_axes, axes, false, &y);
    else if (strcmp(op, "softmax") == 0)
        st = bp_softmax(in[0], axis, &y);
    else if (strcmp(op, "log_softmax") == 0)
        st = bp_log_softmax(in[0], axis, &y);
    else if (strcmp(op, "layer_norm") == 0)
        st = bp_layer_norm(in[0], -1, in[1], in[2], 1e-5, &y, NULL, NULL);
    else if (strcmp(op, "rms_norm") == 0)
        st = bp_rms_norm(in[0], -1, in[1], 1e-6, &y);
    else if (strcmp(op, "batch_norm") == 0)
        st = bp_batch_norm(in[0], in[1], in[2], in[3], in[4], 1e-5, &y);
    else if (strcmp(op, "cross_entropy") == 0)
        st = bp_softmax_cross_entropy_loss(in[0], in[1], NULL, BP_LOSS_MEAN, NULL, &y, NULL);
    else if (strcmp(op, "matmul") == 0)
        st = bp_matmul(in[0], in[1], &y);
    else if (strcmp(op, "transpose") == 0)
        st = bp_transpose(in[0], r->perm, &y);
    else if (strcmp(op, "concat") == 0)
        st = bp_concat(r->nin, (const bp_tensor *const *)in, axis, &y);
    else if (strcmp(op, "gather") == 0)
        st = bp_gather(in[0], in[1], axis, &y);
    else if (strcmp(op, "cumsum") == 0)
        st = bp_cumsum(in[0], axis, false, false, &y);
    else if (strcmp(op, "sort") == 0)
        st = bp_sort(in[0], axis, false, &y, &y2);
    else if (strcmp(op, "conv") == 0 || strcmp(op, "conv_transpose") == 0) {
        bp_window w = window_of(r, true);
        const bp_tensor *bias = r->nin > 2 ? in[2] : NULL;
        st = op[4] ? bp_conv_transpose(in[0], in[1], bias, &w, &y)
                   : bp_conv(in[0], in[1], bias, &w, &y);
    } else if (strcmp(op, "max_pool") == 0) {
        bp_window w = window_of(r, false);
        st = bp_max_pool(in[0], &w, &y, NULL);
    } else if (strcmp(op, "avg_pool") == 0) {
        bp_window w = window_of(r, false);
        st = bp_average_pool(in[0], &w, &y);
    } else {
        st = BP_ERR_INVALID_ARGUMENT; /* wide_parse admits only wide_ops */
    }
    bp_tensor_release(y);
    bp_tensor_release(y2);
    return st;
}

/* ---- bytes moved --------------------------------------------------------------------------------- */

static double numel(const wide_row *r, int i)
{
    double n = 1;
    for (int32_t k = 0; k < r->rank[i]; k++)
        n *= (double)r->shape[i][k];
    return n;
}

double wide_bytes(const wide_row *r)
{
    const double es = (double)bp_dtype_size(r->dt);
    const char *op = r->op;
    double in = 0, out = 0, biggest = 0;
    for (int i = 0; i < r->nin; i++) {
        const double n = numel(r, i);
        biggest = n > biggest ? n : biggest;
    }
    if (strcmp(op, "gather") == 0) { /* the rows read, the indices, the rows written */
        const int32_t ax = r->axis < 0 ? r->axis + r->rank[0] : r->axis;
        const double row = numel(r, 0) / (double)r->shape[0][ax];
        return 2 * numel(r, 1) * row * es + numel(r, 1) * 8;
    }
    for (int i = 0; i < r->nin; i++)
        in += numel(r, i) * (strcmp(op, "where") == 0 && i == 0 ? 1 : es);
    if (strcmp(op, "cross_entropy") == 0)
        in = numel(r, 0) * es + numel(r, 1) * 8;
    if (strcmp(op, "cast") == 0)
        out = biggest * (double)bp_dtype_size(r->to);
    else if (strcmp(op, "sum") == 0 || strcmp(op, "mean") == 0 || strcmp(op, "max") == 0 ||
             strcmp(op, "argmax") == 0) {
        const double kept = r->has_axis ? biggest / (double)r->shape[0][r->axis < 0 ? r->axis + r->rank[0] : r->axis] : 1;
        out = kept * (strcmp(op, "argmax") == 0 ? 8 : es);
    } else if (strcmp(op, "cross_entropy") == 0)
        out = es;
    else if (strcmp(op, "max_pool") == 0 || strcmp(op, "avg_pool") == 0) {
        double o = numel(r, 0) / ((double)r->shape[0][2] * (double)r->shape[0][3]);
        for (int k = 0; k < 2; k++) {
            const int64_t s = r->s[k] ? r->s[k] : 1;
            o *= (double)((r->shape[0][2 + k] + 2 * r->p[k] - r->k[k]) / s + 1);
        }
        out = o * es;
    } else if (strcmp(op, "concat") == 0)
        out = in;
    else
        out = biggest * es; /* elementwise (broadcast to the largest), norms, moves, scans */
    if (strcmp(op, "layer_norm") == 0 || strcmp(op, "rms_norm") == 0 ||
        strcmp(op, "batch_norm") == 0)
        in = numel(r, 0) * es; /* the parameters are a rounding error */
    return in + out;
}
