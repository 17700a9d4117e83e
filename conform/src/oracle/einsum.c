/* einsum by its definition: every output element is the sum, over all
 * values of the letters that are not in the output, of the product of the
 * operands' elements those letters address. Written from the notation (not
 * from the core's transposes and batched matmul, which it checks): one or
 * two operands, letters only, an explicit "->" output or NumPy's implicit
 * one (the letters used once, in ASCII order). Floats in double with
 * *scale = sum |products| and *k = the number of terms; integers wrap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "independent.h"

typedef struct spec {
    int n_terms;
    char term[2][BP_MAX_RANK + 1];
    char out[BP_MAX_RANK + 1];
    char all[2 * BP_MAX_RANK + 1]; /* the output letters first, then the summed */
    int n_all, n_out;
    int64_t extent[128];
} spec;

static void parse(const char *eq, spec *s)
{
    memset(s, 0, sizeof *s);
    int t = 0, n = 0;
    const char *c = eq;
    for (; *c && !(c[0] == '-' && c[1] == '>'); c++) {
        if (*c == ',') {
            s->term[t][n] = '\0';
            t++;
            n = 0;
        } else if (*c != ' ') {
            s->term[t][n++] = *c;
        }
    }
    s->term[t][n] = '\0';
    s->n_terms = t + 1;
    int count[128] = {0};
    for (int k = 0; k < s->n_terms; k++)
        for (const char *p = s->term[k]; *p; p++)
            count[(int)*p]++;
    n = 0;
    if (*c) { /* explicit */
        for (c += 2; *c; c++)
            if (*c != ' ')
                s->out[n++] = *c;
    } else {
        for (int l = 0; l < 128; l++)
            if (count[l] == 1)
                s->out[n++] = (char)l;
    }
    s->out[n] = '\0';
    s->n_out = n;
    memcpy(s->all, s->out, (size_t)n);
    s->n_all = n;
    for (int l = 0; l < 128; l++)
        if (count[l] && !strchr(s->out, l))
            s->all[s->n_all++] = (char)l;
}

/* The flat index into operand t at the letters' values v (indexed like all). */
static int64_t offset(const spec *s, int t, const cf_array *x, const int64_t *v)
{
    int64_t at = 0;
    for (int d = 0; s->term[t][d]; d++) {
        int pos = (int)(strchr(s->all, s->term[t][d]) - s->all);
        at = at * x->shape[d] + v[pos];
    }
    return at;
}

bool cf_oracle_einsum(const char *equation, int32_t n, const cf_array *const *xs,
                      cf_array *want, double **scale, int64_t *k)
{
    spec s;
    parse(equation, &s);
    for (int t = 0; t < n; t++)
        for (int d = 0; s.term[t][d]; d++)
            s.extent[(int)s.term[t][d]] = xs[t]->shape[d];
    int64_t shape[BP_MAX_RANK], sum_shape[2 * BP_MAX_RANK];
    for (int d = 0; d < s.n_out; d++)
        shape[d] = s.extent[(int)s.out[d]];
    int n_sum = s.n_all - s.n_out;
    for (int d = 0; d < n_sum; d++)
        sum_shape[d] = s.extent[(int)s.all[s.n_out + d]];
    int64_t terms = cf_numel(n_sum, sum_shape);
    if (scale)
        *scale = NULL;
    if (k)
        *k = terms;
    if (!cf_array_init(want, xs[0]->dt, s.n_out, shape))
        return false;
    double *sc = calloc((size_t)(want->n > 0 ? want->n : 1), sizeof *sc);
    if (!sc)
        return false;
    int64_t v[2 * BP_MAX_RANK];
    for (int64_t o = 0; o < want->n; o++) {
        cf_unravel(s.n_out, shape, o, v);
        double f = 0, mag = 0;
        uint64_t u = 0;
        for (int64_t r = 0; r < terms; r++) {
            cf_unravel(n_sum, sum_shape, r, v + s.n_out);
            if (want->f) {
                double p = 1;
                for (int t = 0; t < n; t++)
                    p *= xs[t]->f[offset(&s, t, xs[t], v)];
                f += p;
                mag += fabs(p);
            } else {
                uint64_t p = 1;
                for (int t = 0; t < n; t++)
                    p *= (uint64_t)xs[t]->i[offset(&s, t, xs[t], v)];
                u += p;
            }
        }
        if (want->f) {
            want->f[o] = f;
            sc[o] = mag;
        } else {
            want->i[o] = cf_wrap(want->dt, (int64_t)u);
        }
    }
    if (scale)
        *scale = sc;
    else
        free(sc);
    return true;
}
