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
    int int_w, frac_w, exp_w;    /* widths shared by every element */
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

/* Split "−12.5e+03" into the widths that alignment needs. */
static void fmt_measure(const char *txt, int *int_w, int *frac_w, int *exp_w)
{
    const char *dot = strchr(txt, '.'), *e = strchr(txt, 'e');
    size_t len = strlen(txt);
    size_t ip = dot ? (size_t)(dot - txt) : e ? (size_t)(e - txt) : len;
    size_t fp = dot ? (e ? (size_t)(e - dot) : len - (size_t)(dot - txt)) : 0;
    size_t ep = e ? len - (size_t)(e - txt) : 0;
    if ((int)ip > *int_w)
        *int_w = (int)ip;
    if ((int)fp > *frac_w)
        *frac_w = (int)fp;
    if ((int)ep > *exp_w)
        *exp_w = (int)ep;
}

static void fmt_text(const fmt_state *s, int64_t i, char *buf, size_t cap)
{
    bp_dtype dt = s->t->dtype;
    if (dt == BP_BOOL) {
        snprintf(buf, cap, "%s", fmt_i(s, i) ? "True" : "False");
    } else if (!bp_dtype_is_float(dt)) {
        snprintf(buf, cap, "%lld", (long long)fmt_i(s, i));
    } else {
        double v = fmt_f(s, i);
        if (isnan(v))
            snprintf(buf, cap, "nan");
        else if (isinf(v))
            snprintf(buf, cap, v < 0 ? "-inf" : "inf");
        else
            fmt_float_text(dt, v, s->opt.precision, s->sci, buf, cap);
    }
}

/* Element i padded to the common width: integer part right-aligned, the
 * fraction and exponent left-aligned (NumPy's alignment on the point). */
static void fmt_element(const fmt_state *s, int64_t i)
{
    char txt[64];
    fmt_text(s, i, txt, sizeof txt);
    int iw = 0, fw = 0, ew = 0;
    fmt_measure(txt, &iw, &fw, &ew);
    bool plain = !strchr(txt, '.') && bp_dtype_is_float(s->t->dtype); /* nan, inf */
    if (plain) { /* right-align nan/inf in the whole width */
        fprintf(s->out, "%*s", s->int_w + s->frac_w + s->exp_w, txt);
        return;
    }
    if (s->sci) { /* scientific: the fraction padded with zeros, as NumPy does */
        const char *e = strchr(txt, 'e');
        fprintf(s->out, "%*s%.*s", s->int_w - iw, "", (int)(e - txt), txt);
        for (int z = fw; z < s->frac_w; z++)
            fputc('0', s->out);
        fprintf(s->out, "%s%*s", e, s->exp_w - ew, "");
        return;
    }
    fprintf(s->out, "%*s%s%*s", s->int_w - iw, "", txt, s->frac_w - fw + s->exp_w - ew, "");
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

static void fmt_measure_one(fmt_state *s, int64_t i)
{
    char txt[64];
    fmt_text(s, i, txt, sizeof txt);
    if (bp_dtype_is_float(s->t->dtype) && !strchr(txt, '.')) { /* nan, inf: width only */
        int w = (int)strlen(txt);
        if (w > s->int_w + s->frac_w + s->exp_w)
            s->int_w += w - (s->int_w + s->frac_w + s->exp_w);
        return;
    }
    fmt_measure(txt, &s->int_w, &s->frac_w, &s->exp_w);
}

/* Scientific or fixed, from the shown finite non-zero magnitudes. */
static void fmt_decide(fmt_state *s)
{
    if (!bp_dtype_is_float(s->t->dtype))
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
    s->sci = hi > 0.0 && (hi >= 1e8 || lo < 1e-4 || hi / lo > 1e3);
}

static void fmt_block(fmt_state *s, int32_t axis, int64_t base, int indent)
{
    const bp_tensor *t = s->t;
    FILE *out = s->out;
    int64_t n = t->shape[axis], stride = 1;
    for (int32_t k = axis + 1; k < t->rank; k++)
        stride *= t->shape[k];
    bool cut = fmt_axis_cut(s, axis);
    int width = s->int_w + s->frac_w + s->exp_w;
    fputc('[', out);
    int col = indent + 1;
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == s->opt.edgeitems) {
            if (axis == t->rank - 1) {
                fputs(" ...", out);
                col += 4;
            } else {
                fprintf(out, "\n%*s...", indent + 1, "");
                for (int32_t k = axis; k < t->rank - 1; k++)
                    fputc('\n', out);
                fprintf(out, "%*s", indent + 1, "");
            }
            i = n - s->opt.edgeitems;
        }
        if (axis == t->rank - 1) {
            if (i > 0 && !(cut && i == n - s->opt.edgeitems)) {
                if (col + 1 + width > s->opt.linewidth) { /* wrap the row */
                    fprintf(out, "\n%*s", indent + 1, "");
                    col = indent + 1;
                } else {
                    fputc(' ', out);
                    col++;
                }
            } else if (i > 0) {
                fputc(' ', out);
                col++;
            }
            fmt_element(s, base + i * stride);
            col += width;
        } else {
            if (i > 0 && !(cut && i == n - s->opt.edgeitems)) {
                for (int32_t k = axis; k < t->rank - 1; k++)
                    fputc('\n', out);
                fprintf(out, "%*s", indent + 1, "");
            }
            fmt_block(s, axis + 1, base + i * stride, indent + 1);
        }
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
        fmt_state s = {out, t, data, *opt, t->numel > opt->threshold, false, 0, 0, 0};
        fmt_decide(&s);
        if (t->numel == 0) {
            fputs("[]", out); /* NumPy prints every empty array so */
        } else if (t->rank == 0) {
            fmt_measure_one(&s, 0);
            fmt_element(&s, 0);
        } else {
            fmt_each_shown(&s, 0, 0, fmt_measure_one, &s);
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
