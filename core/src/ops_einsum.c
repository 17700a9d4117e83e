/* backplane core: einsum for one or two operands, as sums, transposes and
 * one batched matmul. The equation is parsed and checked here; what those
 * ops cannot express (diagonals, ellipses, three operands) is refused with
 * the reason, before any work. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define EIN_MAX_TERMS 2

typedef struct ein_eq {
    int32_t n_terms;
    char term[EIN_MAX_TERMS][BP_MAX_RANK + 1];
    char out[BP_MAX_RANK + 1];
    int64_t extent[128]; /* per letter; -1 while unseen */
} ein_eq;

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Copies the letters of [s, end) into dst (cap BP_MAX_RANK), refusing what
 * the equation language has but these ops cannot do. */
static bp_status read_term(const char *fn, const char *s, const char *end, char *dst,
                           const char *what)
{
    int32_t n = 0;
    for (const char *c = s; c < end; c++) {
        if (*c == ' ')
            continue;
        if (*c == '.')
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: ellipses ('...') are not supported; "
                             "name every axis with a letter", fn);
        if (!is_letter(*c))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: '%c' in %s is not a letter; axes "
                             "are named a-z, A-Z", fn, *c, what);
        if (memchr(dst, *c, (size_t)n))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: letter '%c' appears twice in %s; "
                             "diagonals (repeated letters in one term) are not supported", fn,
                             *c, what);
        if (n == BP_MAX_RANK)
            return bp__error(BP_ERR_SHAPE, "%s: %s names more than %d axes", fn, what,
                             BP_MAX_RANK);
        dst[n++] = *c;
    }
    dst[n] = '\0';
    return BP_OK;
}

static bp_status parse(const char *fn, const char *eq, int32_t n, ein_eq *e)
{
    memset(e, 0, sizeof *e);
    for (int c = 0; c < 128; c++)
        e->extent[c] = -1;
    const char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + strlen(eq);
    const char *s = eq;
    while (s <= lhs_end) {
        const char *comma = memchr(s, ',', (size_t)(lhs_end - s));
        const char *end = comma ? comma : lhs_end;
        if (e->n_terms == EIN_MAX_TERMS)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: \"%s\" has more than %d operands; "
                             "contract two at a time", fn, eq, EIN_MAX_TERMS);
        char what[24];
        snprintf(what, sizeof what, "operand %d", (int)e->n_terms);
        BP__TRY(read_term(fn, s, end, e->term[e->n_terms], what));
        e->n_terms++;
        s = end + 1;
    }
    if (e->n_terms != n)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: \"%s\" names %d operands but %d were "
                         "given", fn, eq, (int)e->n_terms, (int)n);
    if (arrow) {
        if (strstr(arrow + 2, "->"))
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: \"%s\" has two arrows", fn, eq);
        return read_term(fn, arrow + 2, arrow + 2 + strlen(arrow + 2), e->out, "the output");
    }
    /* Implicit output: the letters used once, in ASCII order (NumPy). */
    int32_t used[128] = {0}, k = 0;
    for (int32_t t = 0; t < e->n_terms; t++)
        for (const char *c = e->term[t]; *c; c++)
            used[(int)*c]++;
    for (int c = 0; c < 128; c++)
        if (used[c] == 1) {
            if (k == BP_MAX_RANK)
                return bp__error(BP_ERR_SHAPE, "%s: the output would have more than %d axes",
                                 fn, BP_MAX_RANK);
            e->out[k++] = (char)c;
        }
    e->out[k] = '\0';
    return BP_OK;
}

/* Every term matches its operand's rank, every letter has one extent, every
 * output letter comes from an operand. */
static bp_status bind(const char *fn, ein_eq *e, const bp_tensor *const *xs)
{
    for (int32_t t = 0; t < e->n_terms; t++) {
        char arg[16];
        snprintf(arg, sizeof arg, "xs[%d]", (int)t);
        BP__TRY(bp__check_input(fn, arg, xs[t]));
        BP__TRY(bp__check_dtype(fn, "einsum", arg, xs[t]->dtype, BP_DTYPES_NUMERIC));
        if ((int32_t)strlen(e->term[t]) != xs[t]->rank)
            return bp__error(BP_ERR_SHAPE, "%s: term \"%s\" names %d axes but xs[%d] has rank %d",
                             fn, e->term[t], (int)strlen(e->term[t]), (int)t, (int)xs[t]->rank);
        for (int32_t k = 0; k < xs[t]->rank; k++) {
            int c = e->term[t][k];
            if (e->extent[c] >= 0 && e->extent[c] != xs[t]->shape[k])
                return bp__error(BP_ERR_SHAPE, "%s: letter '%c' has extent %lld in one operand "
                                 "and %lld in xs[%d]", fn, c, (long long)e->extent[c],
                                 (long long)xs[t]->shape[k], (int)t);
            e->extent[c] = xs[t]->shape[k];
        }
    }
    for (const char *c = e->out; *c; c++)
        if (e->extent[(int)*c] < 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: output letter '%c' names no axis of "
                             "the operands", fn, *c);
    if (e->n_terms == 2) {
        BP__TRY(bp__check_same_backend(fn, 2, xs, (const char *const[]){"xs[0]", "xs[1]"}));
        if (xs[0]->dtype != xs[1]->dtype)
            return bp__error(BP_ERR_DTYPE, "%s: xs[0] is %s but xs[1] is %s; operands must "
                             "share a dtype: convert one with bp_cast first", fn,
                             bp_dtype_name(xs[0]->dtype), bp_dtype_name(xs[1]->dtype));
    }
    return BP_OK;
}

/* x (labelled *labels) with the axes whose letters keep() rejects summed
 * away; *labels loses them too. A fresh reference either way. */
static bp_status sum_away(const bp_tensor *x, char *labels, const char *keep_a,
                          const char *keep_b, bp_tensor **out)
{
    int32_t axes[BP_MAX_RANK], n = 0, m = 0;
    for (int32_t k = 0; labels[k]; k++) {
        bool keep = strchr(keep_a, labels[k]) || (keep_b && strchr(keep_b, labels[k]));
        if (keep)
            labels[m++] = labels[k];
        else
            axes[n++] = k;
    }
    labels[m] = '\0';
    if (n == 0) {
        bp_tensor_retain((bp_tensor *)x);
        *out = (bp_tensor *)x;
        return BP_OK;
    }
    return bp_sum(x, n, axes, false, out);
}

/* x (labelled from) with its axes put in the order of to (same letters). */
static bp_status reorder(const bp_tensor *x, const char *from, const char *to, bp_tensor **out)
{
    int32_t perm[BP_MAX_RANK], r = (int32_t)strlen(to);
    bool identity = true;
    for (int32_t k = 0; k < r; k++) {
        perm[k] = (int32_t)(strchr(from, to[k]) - from);
        identity = identity && perm[k] == k;
    }
    if (identity) {
        bp_tensor_retain((bp_tensor *)x);
        *out = (bp_tensor *)x;
        return BP_OK;
    }
    return bp_transpose(x, perm, out);
}

/* The product of the extents of letters. */
static int64_t extent_of(const ein_eq *e, const char *letters)
{
    int64_t n = 1;
    for (const char *c = letters; *c; c++)
        n *= e->extent[(int)*c];
    return n;
}

/* a (la) and b (lb), each summed down to letters the other or the output
 * has: batch letters (both, output), kept letters (one, output), contracted
 * ones (both, not output). */
static bp_status contract(const ein_eq *e, const bp_tensor *a, const char *la, const bp_tensor *b,
                          const char *lb, bp_tensor **out, char *lout)
{
    char batch[BP_MAX_RANK + 1] = "", ka[BP_MAX_RANK + 1] = "", kb[BP_MAX_RANK + 1] = "",
         con[BP_MAX_RANK + 1] = "";
    size_t nb = 0, na = 0, nk = 0, nc = 0;
    for (const char *c = la; *c; c++) {
        bool in_b = strchr(lb, *c), in_out = strchr(e->out, *c);
        if (in_b && in_out)
            batch[nb++] = *c;
        else if (in_b)
            con[nc++] = *c;
        else
            ka[na++] = *c;
    }
    for (const char *c = lb; *c; c++)
        if (!strchr(la, *c))
            kb[nk++] = *c;
    char order_a[BP_MAX_RANK + 1], order_b[BP_MAX_RANK + 1];
    snprintf(order_a, sizeof order_a, "%s%s%s", batch, ka, con);
    snprintf(order_b, sizeof order_b, "%s%s%s", batch, con, kb);
    snprintf(lout, BP_MAX_RANK + 1, "%s%s%s", batch, ka, kb);
    const int64_t bt = extent_of(e, batch), m = extent_of(e, ka), k = extent_of(e, con),
                  n = extent_of(e, kb);
    int64_t shape[BP_MAX_RANK];
    int32_t rank = 0;
    for (const char *c = lout; *c; c++)
        shape[rank++] = e->extent[(int)*c];
    bp_tensor *ta = NULL, *tb = NULL, *ra = NULL, *rb = NULL, *prod = NULL;
    bp_status st = reorder(a, la, order_a, &ta);
    if (st == BP_OK)
        st = reorder(b, lb, order_b, &tb);
    if (st == BP_OK)
        st = bp_reshape(ta, 3, (const int64_t[]){bt, m, k}, &ra);
    if (st == BP_OK)
        st = bp_reshape(tb, 3, (const int64_t[]){bt, k, n}, &rb);
    if (st == BP_OK)
        st = bp_matmul(ra, rb, &prod);
    if (st == BP_OK)
        st = bp_reshape(prod, rank, shape, out);
    bp_tensor_release(ta);
    bp_tensor_release(tb);
    bp_tensor_release(ra);
    bp_tensor_release(rb);
    bp_tensor_release(prod);
    return st;
}

bp_status bp_einsum(const char *equation, int32_t n, const bp_tensor *const *xs, bp_tensor **out)
{
    static const char fn[] = "bp_einsum";
    BP__TRY(bp__check_out(fn, out));
    if (!equation || !xs)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         equation ? "xs" : "equation");
    ein_eq e;
    BP__TRY(parse(fn, equation, n, &e));
    BP__TRY(bind(fn, &e, xs));
    char la[BP_MAX_RANK + 1], lb[BP_MAX_RANK + 1], lr[BP_MAX_RANK + 1];
    memcpy(la, e.term[0], sizeof la);
    memcpy(lb, e.term[e.n_terms - 1], sizeof lb);
    bp_tensor *sa = NULL, *sb = NULL, *res = NULL;
    bp_status st;
    if (e.n_terms == 1) {
        st = sum_away(xs[0], la, e.out, NULL, &res);
        memcpy(lr, la, sizeof lr);
    } else {
        st = sum_away(xs[0], la, e.out, e.term[1], &sa);
        if (st == BP_OK)
            st = sum_away(xs[1], lb, e.out, e.term[0], &sb);
        if (st == BP_OK)
            st = contract(&e, sa, la, sb, lb, &res, lr);
    }
    bp_tensor_release(sa);
    bp_tensor_release(sb);
    if (st == BP_OK) {
        /* The result is the caller's own: copy even when nothing moved. */
        bool fresh = res != xs[0] && (e.n_terms == 1 || res != xs[1]);
        int32_t perm[BP_MAX_RANK];
        for (int32_t k = 0; k < res->rank; k++)
            perm[k] = (int32_t)(strchr(lr, e.out[k]) - lr);
        bool identity = true;
        for (int32_t k = 0; k < res->rank; k++)
            identity = identity && perm[k] == k;
        if (fresh && identity) {
            *out = res;
            return BP_OK;
        }
        st = bp_transpose(res, perm, out);
    }
    bp_tensor_release(res);
    return st;
}
