/* bp_template: a complete backplane backend plugin in one file, to copy.
 *
 * One device, the host; buffers are plain host memory. It computes a few
 * element-wise ops for f32 and f64 and moves elements of every dtype
 * (transpose, slice, concat, broadcast_to, pad and their fill); supports()
 * declares everything else unsupported, which `backplane conform` reports as
 * UNSUPPORTED rather than FAIL. Every op reaches it through one entry, op:
 * the op table (opcodes.h) gives each op's kind, and tpl_op routes by kind.
 *
 * It includes only <backplane/plugin.h> and never links libbackplane: the
 * core hands it a bp_host_api for logging, configuration and error detail.
 * See plugins/README.md for the rules this file follows. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <backplane/plugin.h>

#define TPL_NAME "template"

/* ---- state: one per open(), one per device_open() ----------------------- */

typedef struct tpl_state {
    const bp_host_api *host; /* valid until close() returns */
    size_t alignment;        /* [backend.template] alignment */
} tpl_state;

typedef tpl_state tpl_device; /* one device: it needs nothing of its own */

/* The keys of [backend.template]; any other key there is a config error. */
static const bp_config_key tpl_keys[] = {
    {"alignment", "byte alignment of every buffer: a power of two, 8 to 4096", "64"},
    {NULL, NULL, NULL},
};

/* Report why an entry fails (the core prefixes backend and op) and return code. */
#define TPL_FAIL(st, code, ...) ((st)->host->set_error((st)->host->host, __VA_ARGS__), (code))

/* ---- lifecycle ---------------------------------------------------------- */

static bp_status tpl_open(const bp_host_api *host, void **state)
{
    size_t alignment = 64;
    const char *v = host->config_get(host->host, "alignment");
    if (v) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(v, &end, 10);
        if (errno || end == v || *end || n < 8 || n > 4096 || (n & (n - 1)))
            return host->config_error(host->host, "alignment",
                                      "'%s' is not a power of two from 8 to 4096", v);
        alignment = n;
    }
    tpl_state *st = malloc(sizeof *st);
    if (!st) {
        host->set_error(host->host, "out of memory");
        return BP_ERR_OUT_OF_MEMORY;
    }
    st->host = host;
    st->alignment = alignment;
    host->log(host->host, BP_LOG_DEBUG, "opened; buffers aligned to %zu bytes", alignment);
    *state = st;
    return BP_OK;
}

static void tpl_close(void *state) { free(state); }

static int32_t tpl_device_count(void *state) { return 1; }

static bp_status tpl_device_info(void *state, int32_t index, bp_device_info *info)
{
    /* The core asks only for 0 <= index < device_count(). */
    strcpy(info->name, "host CPU (template plugin)");
    strcpy(info->detail, "plugins/template: a few f32/f64 ops and movement, one thread");
    info->host_addressable = true; /* so the core may use host_ptr() */
    return BP_OK;
}

static bp_status tpl_device_open(void *state, int32_t index, void **dev)
{
    *dev = state;
    return BP_OK;
}

static void tpl_device_close(void *dev) {}

/* ---- buffers ------------------------------------------------------------ */

static bp_status tpl_alloc(void *dev, size_t bytes, void **buffer)
{
    tpl_device *d = dev;
    /* aligned_alloc wants a multiple of the alignment; rounding up past
     * `bytes` also gives a 0-byte buffer a unique non-NULL handle */
    size_t a = d->alignment, size = bytes / a * a + a;
    if (bytes > SIZE_MAX - a || !(*buffer = aligned_alloc(a, size)))
        return TPL_FAIL(d, BP_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes", bytes);
    return BP_OK;
}

static void tpl_free(void *dev, void *buffer) { free(buffer); }

static bp_status tpl_write(void *dev, void *buffer, size_t offset, const void *src, size_t bytes)
{
    if (bytes) /* src may be NULL when there is nothing to copy */
        memcpy((char *)buffer + offset, src, bytes);
    return BP_OK;
}

static bp_status tpl_read(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes)
{
    if (bytes)
        memcpy(dst, (const char *)buffer + offset, bytes);
    return BP_OK;
}

static void *tpl_host_ptr(void *dev, void *buffer) { return buffer; }

/* ---- walking views ------------------------------------------------------ */

/* Visits the elements of up to 3 views of one shape in row-major order,
 * keeping each view's element offset (strides are in elements; 0 repeats an
 * element, negative ones walk backwards):
 *
 *     tpl_walk w;
 *     for (tpl_walk_init(&w, 2, (const bp_view *[]){out, x}); w.left; tpl_walk_next(&w))
 *         out_base[w.at[0]] = f(x_base[w.at[1]]);
 *
 * A view with zero elements is never touched; rank 0 is one element. */
typedef struct tpl_walk {
    int n;
    const bp_view *v[3];
    int64_t left;               /* elements still to visit */
    int64_t idx[BP_MAX_RANK];   /* index of the current element */
    int64_t at[3];              /* its offset in each view, in elements */
} tpl_walk;

static void tpl_walk_init(tpl_walk *w, int n, const bp_view *const *v)
{
    w->n = n;
    w->left = 1;
    for (int32_t k = 0; k < v[0]->rank; k++) {
        w->left *= v[0]->shape[k];
        w->idx[k] = 0;
    }
    for (int j = 0; j < n; j++) {
        w->v[j] = v[j];
        w->at[j] = 0;
    }
}

static void tpl_walk_next(tpl_walk *w)
{
    w->left--;
    for (int32_t k = w->v[0]->rank - 1; k >= 0; k--) {
        for (int j = 0; j < w->n; j++)
            w->at[j] += w->v[j]->strides[k];
        if (++w->idx[k] < w->v[0]->shape[k])
            return;
        for (int j = 0; j < w->n; j++) /* carry: back to the start of axis k */
            w->at[j] -= w->v[j]->strides[k] * w->v[0]->shape[k];
        w->idx[k] = 0;
    }
}

/* Address of element (0, ..., 0): the view's byte offset into its buffer. */
static char *tpl_base(const bp_view *v) { return (char *)v->buffer + v->offset; }

/* f32 and f64 elements as double. Computing in double and rounding once to
 * f32 gives the correctly rounded f32 result for + - * / and sqrt (53 >=
 * 2 * 24 + 2 bits), and is exact for neg, abs, relu, maximum, minimum and
 * comparisons. */
static double tpl_load(bp_dtype dt, const char *base, int64_t i)
{
    return dt == BP_F32 ? (double)((const float *)base)[i] : ((const double *)base)[i];
}

static void tpl_store(bp_dtype dt, char *base, int64_t i, double v)
{
    if (dt == BP_F32)
        ((float *)base)[i] = (float)v;
    else
        ((double *)base)[i] = v;
}

/* ---- ops: what this plugin declares -------------------------------------- */

static bool tpl_is_f32_f64(bp_dtype dt) { return dt == BP_F32 || dt == BP_F64; }

/* The core asks before every op, with the input's dtype (for CAST also the
 * target's). Keep this and the entries below in step: `backplane conform`
 * checks that each true answer is backed by a result and each false by
 * BP_ERR_UNSUPPORTED_OP. */
static bool tpl_supports(void *dev, bp_op op, bp_dtype dtype)
{
    switch (op) {
    case BP_OP_NEG: case BP_OP_ABS: case BP_OP_SQRT: case BP_OP_EXP: case BP_OP_RELU:
    case BP_OP_ADD: case BP_OP_SUB: case BP_OP_MUL: case BP_OP_DIV:
    case BP_OP_MAXIMUM: case BP_OP_MINIMUM:
    case BP_OP_EQ: case BP_OP_NE: case BP_OP_LT: case BP_OP_LE: case BP_OP_GT: case BP_OP_GE:
        return tpl_is_f32_f64(dtype);
    case BP_OP_COPY: case BP_OP_TRANSPOSE: case BP_OP_SLICE: case BP_OP_CONCAT:
    case BP_OP_BROADCAST_TO: case BP_OP_PAD: case BP_OP_FILL:
        return true; /* raw element moves: every dtype */
    default:
        return false; /* CAST, the other unary/binary ops, and families left NULL */
    }
}

/* One element of each op, in double. maximum/minimum: a NaN on either side
 * wins (NumPy), else b on ties; relu keeps NaN and gives +0 for -0, exactly
 * like the reference backend. Comparisons give 1 or 0. */
static double tpl_unary_op(bp_op op, double v)
{
    switch (op) {
    case BP_OP_NEG: return -v;
    case BP_OP_ABS: return fabs(v);
    case BP_OP_SQRT: return sqrt(v);
    case BP_OP_EXP: return exp(v);
    default: return (v > 0 || v != v) ? v : 0.0; /* RELU */
    }
}

static double tpl_binary_op(bp_op op, double p, double q)
{
    switch (op) {
    case BP_OP_ADD: return p + q;
    case BP_OP_SUB: return p - q;
    case BP_OP_MUL: return p * q;
    case BP_OP_DIV: return p / q;
    case BP_OP_MAXIMUM: return (p > q || p != p) ? p : q;
    case BP_OP_MINIMUM: return (p < q || p != p) ? p : q;
    case BP_OP_EQ: return p == q;
    case BP_OP_NE: return p != q;
    case BP_OP_LT: return p < q;
    case BP_OP_LE: return p <= q;
    case BP_OP_GT: return p > q;
    default: return p >= q; /* GE */
    }
}

/* x and out have the same shape and dtype; either may be strided. */
static bp_status tpl_unary(void *dev, bp_op op, const bp_view *x, const bp_view *out)
{
    bp_dtype dt = x->dtype;
    if (!tpl_supports(dev, op, dt)) /* the core asked already; cheap to be sure */
        return TPL_FAIL((tpl_device *)dev, BP_ERR_UNSUPPORTED_OP, "%s is not implemented for %s",
                        bp_op_name(op), bp_dtype_name(dt));
    const char *xb = tpl_base(x);
    char *ob = tpl_base(out);
    tpl_walk w;
    for (tpl_walk_init(&w, 2, (const bp_view *[]){out, x}); w.left; tpl_walk_next(&w))
        tpl_store(dt, ob, w.at[0], tpl_unary_op(op, tpl_load(dt, xb, w.at[1])));
    return BP_OK;
}

/* a and b share a dtype and arrive broadcast to out's shape (stride 0 on
 * broadcast axes); comparisons write bool (one byte, 0 or 1). */
static bp_status tpl_binary(void *dev, bp_op op, const bp_view *a, const bp_view *b,
                            const bp_view *out)
{
    bp_dtype dt = a->dtype;
    if (!tpl_supports(dev, op, dt))
        return TPL_FAIL((tpl_device *)dev, BP_ERR_UNSUPPORTED_OP, "%s is not implemented for %s",
                        bp_op_name(op), bp_dtype_name(dt));
    const char *ab = tpl_base(a), *bb = tpl_base(b);
    char *ob = tpl_base(out);
    tpl_walk w;
    for (tpl_walk_init(&w, 3, (const bp_view *[]){out, a, b}); w.left; tpl_walk_next(&w)) {
        double r = tpl_binary_op(op, tpl_load(dt, ab, w.at[1]), tpl_load(dt, bb, w.at[2]));
        if (out->dtype == BP_BOOL)
            ((uint8_t *)ob)[w.at[0]] = r != 0;
        else
            tpl_store(dt, ob, w.at[0], r);
    }
    return BP_OK;
}

/* Every movement op is this one strided copy: the core has already turned
 * transpose, slice (negative steps too), broadcast_to and the pieces of
 * concat and pad into a source view of out's shape. Elements move as raw
 * bytes, so it works for every dtype; CAST (dtypes differ) is declared
 * unsupported above. */
static bp_status tpl_copy(void *dev, bp_op op, const bp_view *src, const bp_view *out)
{
    if (op == BP_OP_CAST && src->dtype != out->dtype)
        return TPL_FAIL((tpl_device *)dev, BP_ERR_UNSUPPORTED_OP, "cast is not implemented");
    size_t es = bp_dtype_size(out->dtype);
    const char *sb = tpl_base(src);
    char *ob = tpl_base(out);
    tpl_walk w;
    for (tpl_walk_init(&w, 2, (const bp_view *[]){out, src}); w.left; tpl_walk_next(&w))
        memcpy(ob + w.at[0] * (int64_t)es, sb + w.at[1] * (int64_t)es, es);
    return BP_OK;
}

/* value is one element of out's dtype; out may be strided (pad fills first,
 * then copies the input into a window of the result). */
static bp_status tpl_fill(void *dev, const bp_view *out, const void *value)
{
    size_t es = bp_dtype_size(out->dtype);
    unsigned char v[8];
    memcpy(v, value, es);
    if (out->dtype == BP_BOOL)
        v[0] = v[0] != 0; /* bool is stored as 0 or 1 */
    char *ob = tpl_base(out);
    tpl_walk w;
    for (tpl_walk_init(&w, 1, (const bp_view *[]){out}); w.left; tpl_walk_next(&w))
        memcpy(ob + w.at[0] * (int64_t)es, v, es);
    return BP_OK;
}

/* ---- the op entry: every op, routed by its kind ------------------------------ */

/* in[] and out[] are the views the op's row in opcodes.h names (fill has no
 * input: its value is the element whose bytes start params->i[0]). The core
 * asked supports() first, so an op of another kind never arrives; refusing
 * it anyway costs nothing. */
static bp_status tpl_op(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                        const bp_view *const *in, int32_t n_out, const bp_view *const *out)
{
    bp_op_params p; /* in this file's layout, whichever core sent it */
    bp_op_params_read(params, &p);
    switch (bp_op_kind_of(op)) {
    case BP_KIND_UNARY: return tpl_unary(dev, op, in[0], out[0]);
    case BP_KIND_BINARY: return tpl_binary(dev, op, in[0], in[1], out[0]);
    case BP_KIND_MOVEMENT: return tpl_copy(dev, op, in[0], out[0]);
    case BP_KIND_FILL: return tpl_fill(dev, out[0], &p.i[0]);
    default:
        return TPL_FAIL((tpl_device *)dev, BP_ERR_UNSUPPORTED_OP, "%s is not implemented",
                        bp_op_name(op));
    }
}

/* ---- fused groups (optional, ABI 1.9): a graph's elementwise chains ---------- */

/* Which groups this plugin runs in one call: chains of the f32/f64
 * arithmetic above, one dtype throughout. Asked once, when a graph is
 * compiled; anything else runs op by op through tpl_op. */
static bool tpl_fused_takes(void *dev, const bp_fused_group *g, const bp_view *const *in,
                            const bp_view *const *out)
{
    bp_dtype dt = out[0]->dtype;
    for (int32_t s = 0; s < g->n_steps; s++) {
        bp_op op = g->steps[s].op;
        bp_op_kind kind = bp_op_kind_of(op);
        if ((kind != BP_KIND_UNARY && kind != BP_KIND_BINARY) || op == BP_OP_EQ ||
            op == BP_OP_NE || op == BP_OP_LT || op == BP_OP_LE || op == BP_OP_GT ||
            op == BP_OP_GE || g->steps[s].dtype != dt || !tpl_supports(dev, op, dt))
            return false;
    }
    for (int32_t k = 0; k < g->n_in; k++)
        if (in[k]->dtype != dt)
            return false;
    return true;
}

/* Element by element: every step in double, then the stores. Reading every
 * input of an element before storing any of its outputs is what lets an
 * out view be a donated in view (plugin.h). A real plugin runs blocks of
 * elements through each step instead (blas_cpu's fused.c). */
static bp_status tpl_fused_run(void *dev, const bp_fused_group *g, const bp_view *const *in,
                               const bp_view *const *out)
{
    (void)dev;
    const bp_view *o0 = out[0];
    int64_t n = 1;
    for (int32_t k = 0; k < o0->rank; k++)
        n *= o0->shape[k];
    double r[BP_FUSED_MAX_STEPS];
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[BP_MAX_RANK], rest = i;
        for (int32_t k = o0->rank - 1; k >= 0; k--) {
            idx[k] = rest % o0->shape[k];
            rest /= o0->shape[k];
        }
        for (int32_t s = 0; s < g->n_steps; s++) {
            const bp_fused_step *st = &g->steps[s];
            double a[2];
            for (int32_t j = 0; j < st->n_args && j < 2; j++) {
                if (st->arg[j] >= 0) {
                    a[j] = r[st->arg[j]];
                    continue;
                }
                const bp_view *v = in[-1 - st->arg[j]];
                int64_t at = 0;
                for (int32_t k = 0; k < v->rank; k++)
                    at += idx[k] * v->strides[k];
                a[j] = tpl_load(v->dtype, tpl_base(v), at);
            }
            double y = st->n_args == 1 ? tpl_unary_op(st->op, a[0])
                                       : tpl_binary_op(st->op, a[0], a[1]);
            /* round to the step's dtype, as the op would store it */
            r[s] = st->dtype == BP_F32 ? (double)(float)y : y;
        }
        for (int32_t k = 0; k < g->n_out; k++)
            tpl_store(out[k]->dtype, tpl_base(out[k]), i, r[g->out_step[k]]);
    }
    return BP_OK;
}

/* ---- the descriptor: the one exported symbol returns it ------------------- */

static const bp_plugin tpl_plugin = {
    .struct_size = sizeof(bp_plugin), /* first, always: the ABI this file was built against */
    .abi_major = BP_ABI_MAJOR,
    .abi_minor = BP_ABI_MINOR,
    .name = TPL_NAME, /* bp_backend_get(ctx, "template", ...); file bp_template.so */
    .version = "0.1.0",
    .description = "template plugin: f32/f64 element-wise ops and movement on host memory",
    .config_keys = tpl_keys,
    .config_key_size = sizeof(bp_config_key),
    .open = tpl_open,
    .close = tpl_close,
    .device_count = tpl_device_count,
    .device_info = tpl_device_info,
    .device_open = tpl_device_open,
    .device_close = tpl_device_close,
    .alloc = tpl_alloc,
    .free = tpl_free,
    .write = tpl_write,
    .read = tpl_read,
    .host_ptr = tpl_host_ptr,
    .synchronize = NULL, /* optional: every op here finishes before it returns */
    .memory_info = NULL, /* optional */
    .supports = tpl_supports,
    /* unary .. random: the typed entries of ABI 1.0, for plugins built before
     * 1.6; left NULL here: every op comes through op */
    .op = tpl_op,
    .fused_takes = tpl_fused_takes, /* optional (ABI 1.9): a graph's elementwise chains */
    .fused_run = tpl_fused_run,
};

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);

BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void) { return &tpl_plugin; }
