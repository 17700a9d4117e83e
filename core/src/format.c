/* Printing tensors the way NumPy prints arrays (format.h): one read to the
 * host, then every shown element formatted alike (fixed or scientific by
 * the magnitudes, as NumPy decides), aligned on the decimal point, nested in
 * brackets, summarised with "..." beyond the threshold. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bp_format_options bp_format_defaults(void)
{
    return (bp_format_options){sizeof(bp_format_options), 8, 1000, 3, 75};
}

/* ---- one element's text ----------------------------------------------------- */

typedef struct fmt_state {
    FILE *out;
    const bp_tensor *t;
    const unsigned char *data;   /* the tensor's bytes, read once */
    bp_format_options opt;
    bool summarise;
    bool sci;                    /* floats: scientific notation */
    /* Widths shared by every element. Integers and bools: int_w only.
     * Floats, as NumPy's FloatingFormat: int_w characters before the point
     * (pad_left), frac_w digits after it (pad_right), and in scientific
     * notation exactly sci_digits digits after the point (the exact value's,
     * NumPy's min_digits) and exp_digits digits in the exponent. */
    int int_w, frac_w, sci_digits, exp_digits;
    bool any_nonfinite, any_neginf;
    int width;                   /* of one element, set once measured */
} fmt_state;

static double fmt_f(const fmt_state *s, int64_t i)
{
    return bp_elem_load_f64(s->t->dtype, s->data + (size_t)i * bp_dtype_size(s->t->dtype));
}

static int64_t fmt_i(const fmt_state *s, int64_t i)
{
    return bp_elem_load_i64(s->t->dtype, s->data + (size_t)i * bp_dtype_size(s->t->dtype));
}

/* Whether text reads back as v in dtype dt: the round trip that makes the
 * digits enough (NumPy's unique representation). */
static bool fmt_round_trips(bp_dtype dt, const char *text, double v)
{
    double r = strtod(text, NULL);
    switch (dt) {
    case BP_F16: return bp_f64_to_f16(r) == bp_f64_to_f16(v);
    case BP_BF16: return bp_f64_to_bf16(r) == bp_f64_to_bf16(v);
    case BP_F32: return (float)r == (float)v;
    default: return r == v;
    }
}

/* A finite float as text: the fewest digits after the point (at most
 * `precision`) that read back as the same value of its dtype, as NumPy's
 * default does ("2.", "1.5", "0.5488135" for an f32, "1.25e-05"). */
static void fmt_float_text(bp_dtype dt, double v, int precision, bool sci, char *buf, size_t cap)
{
    for (int p = 0; p <= precision; p++) {
        snprintf(buf, cap, sci ? "%.*e" : "%.*f", p, v);
        if (fmt_round_trips(dt, buf, v))
            break;
    }
    char *dot = strchr(buf, '.');
    if (dot) { /* trailing zeros go, the point stays (NumPy's trim='.') */
        char *e = strchr(buf, 'e'), *end = e ? e : buf + strlen(buf), *z = end;
        while (z > dot + 1 && z[-1] == '0')
            z--;
        memmove(z, end, strlen(end) + 1);
    }
    if (!strchr(buf, '.')) { /* keep the point: "2." as NumPy does, "2.e+03" */
        char *e = strchr(buf, 'e');
        size_t at = e ? (size_t)(e - buf) : strlen(buf);
        if (strlen(buf) + 2 <= cap) {
            memmove(buf + at + 1, buf + at, strlen(buf + at) + 1);
            buf[at] = '.';
        }
    }
}

/* A 0-d float as NumPy's str() prints it, which is its scalar's str():
 * the fewest digits that read back as the value, positional with ".0" for
 * a whole number ("0.0", "123456789.0") from 1e-4 up to a bound where the
 * dtype runs out of digits (1e3 for f16 and bf16, 1e6 for f32, 1e16 for
 * f64), scientific outside it ("1e-05", "1.5e+08"). */
static void fmt_scalar_text(bp_dtype dt, double v, char *buf, size_t cap)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    double a = fabs(v);
    double hi = dt == BP_F64 ? 1e16 : dt == BP_F32 ? 1e6 : 1e3;
    bool sci = a != 0 && (a < 1e-4 || a >= hi);
    for (int p = 0; p <= 20; p++) {
        snprintf(buf, cap, sci ? "%.*e" : "%.*f", p, v);
        if (fmt_round_trips(dt, buf, v))
            break;
    }
    if (!sci && !strchr(buf, '.') && strlen(buf) + 3 <= cap)
        strcat(buf, ".0");
}

/* A float's text in parts: characters before the point, digits after it,
 * digits of the exponent (after "e+"). */
static void fmt_parts(const char *txt, int *ip, int *fp, int *ed)
{
    const char *dot = strchr(txt, '.'), *e = strchr(txt, 'e');
    size_t len = strlen(txt), end = e ? (size_t)(e - txt) : len;
    *ip = (int)(dot ? (size_t)(dot - txt) : end);
    *fp = dot ? (int)(end - (size_t)(dot - txt) - 1) : 0;
    *ed = e ? (int)(len - end - 2) : 0;
}

static int fmt_max(int a, int b) { return a > b ? a : b; }

/* An integer or a bool as text. */
static void fmt_int_text(const fmt_state *s, int64_t i, char *buf, size_t cap)
{
    if (s->t->dtype == BP_BOOL)
        snprintf(buf, cap, "%s", fmt_i(s, i) ? "True" : "False");
    else
        snprintf(buf, cap, s->t->dtype == BP_U64 ? "%llu" : "%lld", /* u64: its bits */
                 (unsigned long long)fmt_i(s, i));
}

/* A finite float in scientific notation as NumPy prints it in an array:
 * exactly sci_digits digits after the point (digits of the exact value
 * beyond the unique ones, not zeros: f16's 0.1 is 9.998e-02 beside 1.003e+02),
 * the point kept, the exponent zero-padded to exp_digits digits. */
static void fmt_sci_text(const fmt_state *s, double v, char *buf, size_t cap)
{
    char m[40]; /* "%.17e" at most: 24 characters */
    snprintf(m, sizeof m, "%.*e", s->sci_digits, v);
    char *e = strchr(m, 'e');
    if (!e) { /* cannot happen for a finite value */
        snprintf(buf, cap, "%s", m);
        return;
    }
    *e = '\0';
    int exponent = atoi(e + 1);
    snprintf(buf, cap, "%s%se%c%0*d", m, s->sci_digits == 0 ? "." : "", exponent < 0 ? '-' : '+',
             s->exp_digits, exponent < 0 ? -exponent : exponent);
}

/* Element i padded to the common width: integers and bools right-aligned;
 * floats aligned on the point (the integer part right-aligned, the digits
 * after the point padded with spaces), nan and inf right-aligned. The
 * spaces after a float's digits are left to the caller (*pad): NumPy drops
 * them where a row wraps. */
static void fmt_element(const fmt_state *s, int64_t i, int *pad)
{
    *pad = 0;
    char txt[64];
    if (!bp_dtype_is_float(s->t->dtype)) {
        fmt_int_text(s, i, txt, sizeof txt);
        fprintf(s->out, "%*s", s->width, txt);
        return;
    }
    double v = fmt_f(s, i);
    if (!isfinite(v)) {
        fprintf(s->out, "%*s", s->width, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    if (s->sci)
        fmt_sci_text(s, v, txt, sizeof txt);
    else
        fmt_float_text(s->t->dtype, v, s->opt.precision, false, txt, sizeof txt);
    int ip, fp, ed;
    fmt_parts(txt, &ip, &fp, &ed);
    fprintf(s->out, "%*s%s", fmt_max(s->int_w - ip, 0), "", txt);
    *pad = s->sci ? 0 : fmt_max(s->frac_w - fp, 0);
}

/* ---- which elements show ------------------------------------------------------ */

static bool fmt_axis_cut(const fmt_state *s, int32_t axis)
{
    return s->summarise && s->t->shape[axis] > 2 * (int64_t)s->opt.edgeitems;
}

/* Call fn on every shown flat index (row-major), for measuring. */
static void fmt_each_shown(const fmt_state *s, int32_t axis, int64_t base,
                           void (*fn)(fmt_state *, int64_t), fmt_state *m)
{
    const bp_tensor *t = s->t;
    if (axis == t->rank) {
        fn(m, base);
        return;
    }
    int64_t n = t->shape[axis], stride = 1;
    for (int32_t k = axis + 1; k < t->rank; k++)
        stride *= t->shape[k];
    bool cut = fmt_axis_cut(s, axis);
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == s->opt.edgeitems)
            i = n - s->opt.edgeitems;
        fmt_each_shown(s, axis + 1, base + i * stride, fn, m);
    }
}

/* ---- the layout -------------------------------------------------------------------- */

/* Widen the layout for element i (every shown element passes here before
 * anything is printed). */
static void fmt_measure_one(fmt_state *s, int64_t i)
{
    char txt[64];
    if (!bp_dtype_is_float(s->t->dtype)) {
        fmt_int_text(s, i, txt, sizeof txt);
        s->int_w = fmt_max(s->int_w, (int)strlen(txt));
        if (s->t->dtype == BP_BOOL && s->t->rank > 0)
            s->int_w = 5; /* NumPy: " True" beside "False" even when all are true */
        return;
    }
    double v = fmt_f(s, i);
    if (!isfinite(v)) { /* their width is settled once the finite ones are known */
        s->any_nonfinite = true;
        s->any_neginf = s->any_neginf || (isinf(v) && v < 0);
        return;
    }
    fmt_float_text(s->t->dtype, v, s->opt.precision, s->sci, txt, sizeof txt);
    int ip, fp, ed;
    fmt_parts(txt, &ip, &fp, &ed);
    s->int_w = fmt_max(s->int_w, ip);
    if (s->sci) {
        s->sci_digits = fmt_max(s->sci_digits, fp);
        s->exp_digits = fmt_max(s->exp_digits, ed);
    } else {
        s->frac_w = fmt_max(s->frac_w, fp);
    }
}

/* The element width, once every shown element was measured. As NumPy: in
 * scientific notation everything after the point counts as the fraction;
 * nan and inf widen the integer part if they do not fit. */
static void fmt_settle(fmt_state *s)
{
    if (!bp_dtype_is_float(s->t->dtype)) {
        s->width = s->int_w;
        return;
    }
    if (s->sci)
        s->frac_w = s->sci_digits + 2 + s->exp_digits; /* digits, 'e', sign, exponent */
    if (s->any_nonfinite)
        s->int_w = fmt_max(s->int_w, 3 + (s->any_neginf ? 1 : 0) - (s->frac_w + 1));
    s->width = s->int_w + 1 + s->frac_w;
}

/* A magnitude rounded to the tensor's dtype, as NumPy computes in it. */
static double fmt_in_dtype(bp_dtype dt, double v)
{
    switch (dt) {
    case BP_F16: return bp_f16_to_f32(bp_f64_to_f16(v));
    case BP_F32: return (float)v;
    default: return v;
    }
}

/* Scientific or fixed, from the shown finite non-zero magnitudes, as NumPy
 * 2 decides: the largest at or above 10^min(8, decimal digits of the dtype)
 * (1e3 for f16, 1e6 for f32, 1e8 for f64), the smallest below 1e-4, or the
 * ratio above 1e3, each compared in the dtype. bf16, which NumPy does not
 * format as a float, takes f64's rule. */
static void fmt_decide(fmt_state *s)
{
    bp_dtype dt = s->t->dtype;
    if (!bp_dtype_is_float(dt))
        return;
    double lo = INFINITY, hi = 0.0;
    /* every element is at most 1000 (summarised) or all of them: a plain walk */
    int64_t idx[BP_MAX_RANK] = {0};
    const bp_tensor *t = s->t;
    for (int64_t i = 0; i < t->numel; i++) {
        bool shown = true;
        for (int32_t k = 0; k < t->rank && shown; k++)
            shown = !fmt_axis_cut(s, k) ||
                    idx[k] < s->opt.edgeitems || idx[k] >= t->shape[k] - s->opt.edgeitems;
        if (shown) {
            double a = fabs(fmt_f(s, i));
            if (isfinite(a) && a != 0.0) {
                lo = a < lo ? a : lo;
                hi = a > hi ? a : hi;
            }
        }
        for (int32_t k = t->rank - 1; k >= 0 && ++idx[k] == t->shape[k]; k--)
            idx[k] = 0;
    }
    double cutoff = dt == BP_F16 ? 1e3 : dt == BP_F32 ? 1e6 : 1e8;
    s->sci = hi > 0.0 && (hi >= cutoff || lo < fmt_in_dtype(dt, 1e-4) ||
                          fmt_in_dtype(dt, hi / lo) > 1e3);
}

/* The next word of a row at *col: after a space, or on a new line indented
 * under the bracket when it would reach past the row's limit (NumPy's
 * _extendLine: the limit leaves room for the closing bracket of each level;
 * the spaces that padded the last word of a line are dropped). The first
 * word of a line never wraps. *pad: the previous word's padding, not yet
 * written. */
static void fmt_word_start(const fmt_state *s, int indent, int len, bool first, int *col, int *pad)
{
    if (first)
        return;
    int limit = s->opt.linewidth - 1 - indent;
    if (*col + 1 + len > limit && *col > indent + 1) {
        fprintf(s->out, "\n%*s", indent + 1, "");
        *col = indent + 1;
    } else {
        fprintf(s->out, "%*s ", *pad, "");
        (*col)++;
    }
    *pad = 0;
}

/* The last axis: elements (and "..." where summarised), wrapped. */
static void fmt_row(fmt_state *s, int64_t base, int indent)
{
    const bp_tensor *t = s->t;
    int64_t n = t->shape[t->rank - 1];
    bool cut = fmt_axis_cut(s, t->rank - 1);
    int col = indent + 1, pad = 0;
    fputc('[', s->out);
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == s->opt.edgeitems) {
            fmt_word_start(s, indent, 3, false, &col, &pad);
            fputs("...", s->out);
            col += 3;
            i = n - s->opt.edgeitems;
        }
        fmt_word_start(s, indent, s->width, i == 0, &col, &pad);
        fmt_element(s, base + i, &pad);
        col += s->width;
    }
    fprintf(s->out, "%*s]", pad, "");
}

static void fmt_block(fmt_state *s, int32_t axis, int64_t base, int indent)
{
    const bp_tensor *t = s->t;
    if (axis == t->rank - 1) {
        fmt_row(s, base, indent);
        return;
    }
    FILE *out = s->out;
    int64_t n = t->shape[axis], stride = 1;
    for (int32_t k = axis + 1; k < t->rank; k++)
        stride *= t->shape[k];
    bool cut = fmt_axis_cut(s, axis);
    fputc('[', out);
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == s->opt.edgeitems) {
            /* NumPy sets "..." apart as it does a row: by as many newlines
             * as the axes below this one, before and after. */
            for (int32_t k = axis; k < t->rank - 1; k++)
                fputc('\n', out);
            fprintf(out, "%*s...", indent + 1, "");
            for (int32_t k = axis; k < t->rank - 1; k++)
                fputc('\n', out);
            fprintf(out, "%*s", indent + 1, "");
            i = n - s->opt.edgeitems;
        } else if (i > 0) {
            for (int32_t k = axis; k < t->rank - 1; k++)
                fputc('\n', out);
            fprintf(out, "%*s", indent + 1, "");
        }
        fmt_block(s, axis + 1, base + i * stride, indent + 1);
    }
    fputc(']', out);
}

static bp_status fmt_write(const bp_tensor *t, const bp_format_options *opt, FILE *out)
{
    char shape[BP__SHAPE_STR_CAP];
    bp__format_shape(t->rank, t->shape, shape, sizeof shape);
    fprintf(out, "tensor %s %s on %s\n", shape, bp_dtype_name(t->dtype),
            bp__backend_of(t)->name);
    unsigned char *data = malloc(t->nbytes ? t->nbytes : 1);
    if (!data)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_tensor_format: no host memory for %zu bytes",
                         t->nbytes);
    bp_status st = bp_tensor_to_host(t, data, t->nbytes);
    if (st == BP_OK) {
        fmt_state s = {.out = out, .t = t, .data = data, .opt = *opt,
                       .summarise = t->numel > opt->threshold};
        fmt_decide(&s);
        if (t->numel == 0) {
            fputs("[]", out); /* NumPy prints every empty array so */
        } else if (t->rank == 0 && bp_dtype_is_float(t->dtype)) {
            char buf[64];
            fmt_scalar_text(t->dtype, fmt_f(&s, 0), buf, sizeof buf);
            fputs(buf, out);
        } else if (t->rank == 0) {
            fmt_measure_one(&s, 0);
            fmt_settle(&s);
            int pad;
            fmt_element(&s, 0, &pad);
        } else {
            fmt_each_shown(&s, 0, 0, fmt_measure_one, &s);
            fmt_settle(&s);
            fmt_block(&s, 0, 0, 0);
        }
    }
    free(data);
    return st;
}

static bp_status fmt_options(const bp_format_options *in, bp_format_options *opt)
{
    *opt = bp_format_defaults();
    if (in) {
        if (in->struct_size < sizeof *opt)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "bp_tensor_format: options->struct_size is %u; start from "
                             "bp_format_defaults()", (unsigned)in->struct_size);
        *opt = *in;
    }
    if (opt->precision < 0 || opt->precision > 17 || opt->edgeitems < 1 || opt->threshold < 0 ||
        opt->linewidth < 10)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "bp_tensor_format: options out of range (precision 0..17, edgeitems >= "
                         "1, threshold >= 0, linewidth >= 10)");
    return BP_OK;
}

/* The whole text in a malloc'ed string. */
static bp_status fmt_string(const bp_tensor *t, const bp_format_options *options, char **text,
                            size_t *len)
{
    BP__TRY(bp__check_input("bp_tensor_format", "t", t));
    bp_format_options opt;
    BP__TRY(fmt_options(options, &opt));
    FILE *mem = open_memstream(text, len);
    if (!mem)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_tensor_format: out of memory");
    bp_status st = fmt_write(t, &opt, mem);
    if (fclose(mem) != 0 && st == BP_OK)
        st = bp__error(BP_ERR_OUT_OF_MEMORY, "bp_tensor_format: out of memory");
    if (st != BP_OK) {
        free(*text);
        *text = NULL;
    }
    return st;
}

bp_status bp_tensor_format(const bp_tensor *t, char *buf, size_t size,
                           const bp_format_options *options)
{
    if (!buf && size > 0)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_tensor_format: buf is NULL");
    char *text = NULL;
    size_t len = 0;
    BP__TRY(fmt_string(t, options, &text, &len));
    bp_status st = BP_OK;
    if (size > 0) {
        size_t n = len < size ? len : size - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
    }
    if (len >= size)
        st = bp__error(BP_ERR_INVALID_ARGUMENT,
                       "bp_tensor_format: the text needs %zu bytes, the buffer holds %zu", len + 1,
                       size);
    free(text);
    return st;
}

bp_status bp_tensor_print(const bp_tensor *t, FILE *f)
{
    if (!f)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_tensor_print: f is NULL");
    char *text = NULL;
    size_t len = 0;
    BP__TRY(fmt_string(t, NULL, &text, &len));
    bool ok = fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF;
    free(text);
    return ok ? BP_OK : bp__error(BP_ERR_IO, "bp_tensor_print: cannot write the text");
}
