/* The argument checks every op shares before it reaches a backend, and the
 * shape notation of their messages. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

bp_status bp__check_out(const char *fn, bp_tensor **out)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: the out pointer is NULL", fn);
    *out = NULL;
    return BP_OK;
}

bp_status bp__check_outs(const char *fn, bp_tensor **out, size_t n_opt, bp_tensor **const *opt)
{
    for (size_t i = 0; i < n_opt; i++)
        if (opt[i])
            *opt[i] = NULL;
    return bp__check_out(fn, out);
}

bp_status bp__check_input(const char *fn, const char *arg, const bp_tensor *t)
{
    if (!t)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
    if (atomic_load(&t->given_away))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: %s was given away (by bp_backend_transfer, or donated to "
                         "bp_graph_run_donating) and holds no data; use the tensor that call "
                         "returned (and release this one)",
                         fn, arg);
    return BP_OK;
}

const char *bp__arg_name(const char *const *args, size_t i, char *buf)
{
    if (args)
        return args[i];
    snprintf(buf, BP__ARG_NAME_CAP, "xs[%zu]", i);
    return buf;
}

/* The tensors ts[0 .. n) of one op (NULLs skipped) on one backend, *be set
 * to it: the one place that decides whether tensors of two backends may
 * meet. With a symbolic tensor among them it is bp__graph_join's question
 * (a concrete tensor of the graph's backend is captured, and *be is the
 * recording backend); else BP_ERR_BACKEND_MISMATCH names the first pair
 * that differs. */
static bp_status one_backend(const char *fn, size_t n, const bp_tensor *const *ts,
                             const char *const *args, bp_backend **be)
{
    size_t f = n;
    for (size_t i = 0; i < n; i++) {
        if (!ts[i])
            continue;
        if (bp__backend_of(ts[i])->graph)
            return bp__graph_join(fn, be, ts, n, args);
        if (f == n)
            f = i;
    }
    if (f == n)
        return BP_OK;
    const bp_backend *first = *be = bp__backend_of(ts[f]);
    for (size_t i = f + 1; i < n; i++) {
        if (!ts[i])
            continue;
        const bp_backend *b = bp__backend_of(ts[i]);
        if (b == first)
            continue;
        char fbuf[BP__ARG_NAME_CAP], ibuf[BP__ARG_NAME_CAP];
        const char *fname = bp__arg_name(args, f, fbuf), *iname = bp__arg_name(args, i, ibuf);
        if (b->ctx != first->ctx)
            /* bp_backend_copy refuses to cross contexts: say what works */
            return bp__error(BP_ERR_BACKEND_MISMATCH,
                             "%s: %s is on backend %s and %s on backend %s of another "
                             "bp_context; tensors never move implicitly, and not between "
                             "contexts at all: read %s with bp_tensor_to_host and make it again "
                             "with bp_tensor_from_host on %s (or use one context for both)",
                             fn, fname, first->name, iname, b->name, iname, first->name);
        return bp__error(BP_ERR_BACKEND_MISMATCH,
                         "%s: %s is on backend %s but %s is on backend %s; tensors never "
                         "move implicitly. Copy one explicitly, e.g. "
                         "bp_backend_copy(<the %s tensor>, <backend %s>, &copy)",
                         fn, fname, first->name, iname, b->name, iname, first->name);
    }
    return BP_OK;
}

bp_status bp__check_same_backend(const char *fn, size_t n, const bp_tensor *const *ts,
                                 const char *const *args)
{
    bp_backend *be = NULL;
    return one_backend(fn, n, ts, args, &be);
}

const char *bp__format_shape(int32_t rank, const int64_t *shape, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int32_t k = 0; k < rank && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, k ? ", %lld" : "%lld", (long long)shape[k]);
    if (used < cap)
        snprintf(buf + used, cap - used, rank == 1 ? ",)" : ")");
    return buf;
}

bp_status bp__broadcast_shapes(const char *fn, int32_t ra, const int64_t *sa, int32_t rb,
                               const int64_t *sb, int32_t *rank, int64_t *shape)
{
    int32_t r = ra > rb ? ra : rb;
    for (int32_t k = 0; k < r; k++) {
        int64_t da = k < r - ra ? 1 : sa[k - (r - ra)];
        int64_t db = k < r - rb ? 1 : sb[k - (r - rb)];
        if (da != db && da != 1 && db != 1) {
            char a[160], b[160];
            bp__format_shape(ra, sa, a, sizeof a);
            bp__format_shape(rb, sb, b, sizeof b);
            return bp__error(BP_ERR_SHAPE,
                             "%s: shapes %s and %s do not broadcast (axis %d: %lld vs %lld)", fn,
                             a, b, k, (long long)da, (long long)db);
        }
        shape[k] = da == 1 ? db : da;
    }
    *rank = r;
    return BP_OK;
}

bp_status bp__normalize_axis(const char *fn, int32_t axis, int32_t rank, int32_t *out)
{
    if (axis < -rank || axis >= rank || rank == 0)
        return bp__error(BP_ERR_SHAPE, "%s: axis %d is out of range for rank %d (valid: %d..%d)",
                         fn, axis, rank, -rank, rank - 1);
    *out = axis < 0 ? axis + rank : axis;
    return BP_OK;
}

bp_status bp__require_op(const bp_backend *b, bp_op op, bp_dtype dtype, bool has_entry)
{
    if (has_entry && b->vt->abi_minor < bp_op_since(op))
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "backend %s does not support %s: the plugin was built for plugin ABI "
                         "%u.%u, and %s arrived in ABI 1.%u; rebuild it against a newer plugin.h "
                         "and implement it, or run it on a backend that has it",
                         b->name, bp_op_name(op), b->vt->abi_major, b->vt->abi_minor,
                         bp_op_name(op), bp_op_since(op));
    if (!bp__abi_has_dtype(b->vt->abi_minor, dtype))
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "backend %s does not support %s for %s: the plugin was built for "
                         "plugin ABI %u.%u, and %s arrived in ABI 1.%u; bp_cast to a dtype it "
                         "has (i32, i64, f64) or run it on a backend that has it",
                         b->name, bp_op_name(op), bp_dtype_name(dtype), b->vt->abi_major,
                         b->vt->abi_minor, bp_dtype_name(dtype), bp__dtype_since(dtype));
    if (has_entry && (!BP__HAS(b->vt, supports) || b->vt->supports(b->dev, op, dtype)))
        return BP_OK;
    return bp__error(BP_ERR_UNSUPPORTED_OP,
                     "backend %s does not support %s for %s%s; run it on a backend that does "
                     "(bp_backend_copy the inputs there) or bp_cast to a supported dtype",
                     b->name, bp_op_name(op), bp_dtype_name(dtype),
                     has_entry ? "" : " (the plugin has no entry for this op family)");
}

const char *bp__op_fn(bp_op op)
{
    /* made by the op table at compile time: this runs on every op's path,
     * where formatting it cost ~600 instructions (snprintf) and then ~65
     * (a copy) of a 4-element add's ~2,900 (docs/performance.md) */
    static const char *const names[] = {
#define BP__OP_FN(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST) "bp_" #name,
        BP_OP_TABLE(BP__OP_FN)
#undef BP__OP_FN
    };
    return (unsigned)op < (unsigned)BP_OP_COUNT ? names[op] : "bp_?";
}

static bool bp__class_accepts(bp_op_dtypes cls, bp_dtype dt)
{
    switch (cls) {
    case BP_DTYPES_ANY: return true;
    case BP_DTYPES_NUMERIC: return dt != BP_BOOL;
    case BP_DTYPES_FLOAT: return bp_dtype_is_float(dt);
    case BP_DTYPES_BOOL: return dt == BP_BOOL;
    case BP_DTYPES_INTEGER: return bp_dtype_is_int(dt);
    }
    return false;
}

static const char *bp__class_name(bp_op_dtypes cls)
{
    switch (cls) {
    case BP_DTYPES_ANY: return "every dtype";
    case BP_DTYPES_NUMERIC: return "numeric dtypes (u8, i8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64; not bool)";
    case BP_DTYPES_FLOAT: return "float dtypes (f16, bf16, f32, f64)";
    case BP_DTYPES_BOOL: return "bool only";
    case BP_DTYPES_INTEGER: return "integer dtypes (u8, i8, i16, u16, i32, u32, i64, u64)";
    }
    return "?";
}

bp_status bp__check_dtype(const char *fn, const char *op_name, const char *arg, bp_dtype dt,
                          bp_op_dtypes cls)
{
    if (bp__class_accepts(cls, dt))
        return BP_OK;
    return bp__error(BP_ERR_DTYPE, "%s: %s is %s but %s accepts %s; convert it with bp_cast first",
                     fn, arg, bp_dtype_name(dt), op_name, bp__class_name(cls));
}

/* ---- an op's operands, from its row of the op table ----------------------- */

bp_status bp__op_begin(const char *fn, bp_op op, const bp_tensor *const *in, bp_backend **be)
{
    const bp_op_info *row = bp_op_info_of(op);
    const bp__op_sig *sig = bp__op_sig_of(op);
    int32_t first = -1;
    char name[32];
    bool mixed = false;        /* two backends among the inputs: one_backend decides */
    int32_t upto = sig->n_in;  /* ... on in[0 .. upto) */
    *be = NULL;
    for (int32_t k = 0; k < sig->n_in; k++) {
        const bp_tensor *t = in[k];
        if (!t && (sig->optional_in >> k & 1u))
            continue;
        if (!t || atomic_load(&t->given_away))
            return bp__check_input(fn, bp_op_arg_name(row->in, k, name, sizeof name), t);
        if (first < 0) {
            first = k;
            *be = bp__backend_of(t);
        } else if (bp__backend_of(t) != *be) {
            mixed = true;
            if (!bp__backends_joinable(*be, bp__backend_of(t))) {
                /* two devices (concrete, or a graph's and a tensor of
                 * another): reported at once, recording as eagerly, before
                 * a later operand that is NULL or given away */
                upto = k + 1;
                break;
            }
        }
    }
    if (mixed) {
        char names[BP__GRAPH_MAX_IO][32];
        const char *args[BP__GRAPH_MAX_IO];
        int32_t n = upto < BP__GRAPH_MAX_IO ? upto : BP__GRAPH_MAX_IO;
        for (int32_t k = 0; k < n; k++)
            args[k] = bp_op_arg_name(row->in, k, names[k], sizeof names[k]);
        BP__TRY(one_backend(fn, (size_t)n, in, args, be));
    }
    if (row->typed >= 0 && in[row->typed] &&
        !bp__class_accepts(row->dtypes, in[row->typed]->dtype))
        return bp__check_dtype(fn, row->name,
                               bp_op_arg_name(row->in, row->typed, name, sizeof name),
                               in[row->typed]->dtype, row->dtypes);
    return BP_OK;
}

bp_status bp__op_require(const bp_backend *be, bp_op op, bp_dtype dtype)
{
    if (be->graph) /* recorded: checked against the device that will run it */
        be = bp__backend_real((bp_backend *)be);
    return bp__require_op(be, op, dtype, bp__op_has_entry(be, op));
}

bp_status bp__op_into_new(const char *fn, bp_backend *be, bp_op op, const bp_op_params *p,
                          const bp_view *const *in, bp_dtype dtype, int32_t rank,
                          const int64_t *shape, bp_tensor **out)
{
    bp_tensor *res = NULL;
    BP__TRY(bp__tensor_new(fn, be, dtype, rank, shape, &res));
    bp_view vo;
    bp__view_dense(res, &vo);
    return bp__deliver(res, bp__op_run(be, op, p, in, (const bp_view *[]){&vo}), out);
}

bp_status bp__op_same_dtype(const char *fn, bp_op op, const bp_tensor *const *in, int32_t j,
                            int32_t k)
{
    const bp_tensor *a = in[j], *b = in[k];
    if (!a || !b || atomic_load(&a->given_away) || atomic_load(&b->given_away) ||
        !bp__backends_joinable(bp__backend_of(a), bp__backend_of(b)) || a->dtype == b->dtype)
        return BP_OK; /* bp__op_begin reports the rest */
    const char *names = bp_op_info_of(op)->in;
    char an[32], bn[32];
    return bp__error(BP_ERR_DTYPE,
                     "%s: %s is %s but %s is %s; operands must share a dtype (no implicit "
                     "promotion): convert one with bp_cast first",
                     fn, bp_op_arg_name(names, j, an, sizeof an), bp_dtype_name(a->dtype),
                     bp_op_arg_name(names, k, bn, sizeof bn), bp_dtype_name(b->dtype));
}
