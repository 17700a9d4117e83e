/* sort, argsort and topk along one axis. Each row's order comes from qsort
 * with a total order: the value (NaN above every number, NaNs equal, -0
 * equal to +0), ascending or descending, then the position, ascending. That
 * is what a stable sort gives (ties keep their order: topk's "ties go to the
 * lower index"), reached another way than the plugins' merge sort. topk's
 * k largest are the first k of the descending order, its k smallest of the
 * ascending one: sorted, whatever `sorted` says (a backend may return an
 * unsorted topk; the caller compares it in this order). */
#include <math.h>
#include <stdlib.h>

#include "oracle.h"
#include "independent.h"

typedef struct item {
    double f;
    int64_t i, at;
    bool is_float, descending;
} item;

/* -1 when a's value goes first by value alone, 1 when b's, 0 when equal. */
static int by_value(const item *a, const item *b)
{
    int c;
    if (a->is_float) {
        bool na = isnan(a->f), nb = isnan(b->f);
        c = na || nb ? (na && nb ? 0 : na ? 1 : -1) : a->f < b->f ? -1 : a->f > b->f;
    } else {
        c = a->i < b->i ? -1 : a->i > b->i;
    }
    return a->descending ? -c : c;
}

static int compare(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    int c = by_value(a, b);
    return c ? c : a->at < b->at ? -1 : a->at > b->at;
}

/* values (x's dtype, NULL: unwanted) and indices (i64) of x's shape with the
 * axis' extent k: the first k of each row's order. */
static bool ordered(const cf_array *x, int32_t axis, bool descending, int64_t k, cf_array *values,
                    cf_array *indices)
{
    *indices = (cf_array){.dt = BP_I64};
    if (values)
        *values = (cf_array){.dt = x->dt};
    if (axis < 0)
        axis += x->rank;
    int64_t shape[BP_MAX_RANK], n = x->shape[axis], inner = 1;
    for (int32_t d = 0; d < x->rank; d++)
        shape[d] = d == axis ? k : x->shape[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        inner *= x->shape[d];
    if (values && !cf_array_init(values, x->dt, x->rank, shape))
        return false;
    if (!cf_array_init(indices, BP_I64, x->rank, shape))
        return false;
    item *row = malloc((size_t)(n > 0 ? n : 1) * sizeof *row);
    if (!row)
        return false;
    int64_t outer = n && inner ? x->n / (n * inner) : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            for (int64_t j = 0; j < n; j++) {
                int64_t at = (o * n + j) * inner + in;
                row[j] = (item){.f = x->f ? x->f[at] : 0, .i = x->i ? x->i[at] : 0, .at = j,
                                .is_float = x->f != NULL, .descending = descending};
            }
            qsort(row, (size_t)n, sizeof *row, compare);
            for (int64_t j = 0; j < k; j++) {
                int64_t dst = (o * k + j) * inner + in;
                indices->i[dst] = row[j].at;
                if (values && values->f)
                    values->f[dst] = row[j].f;
                else if (values)
                    values->i[dst] = row[j].i;
            }
        }
    free(row);
    return true;
}

bool cf_oracle_sort(const cf_array *x, int32_t axis, bool descending, cf_array *values,
                    cf_array *indices)
{
    return ordered(x, axis, descending, x->shape[axis < 0 ? axis + x->rank : axis], values,
                   indices);
}

bool cf_oracle_argsort(const cf_array *x, int32_t axis, bool descending, cf_array *indices)
{
    return ordered(x, axis, descending, x->shape[axis < 0 ? axis + x->rank : axis], NULL,
                   indices);
}

bool cf_oracle_topk(const cf_array *x, int64_t k, int32_t axis, bool largest, bool sorted,
                    cf_array *values, cf_array *indices)
{
    (void)sorted;
    return ordered(x, axis, largest, k, values, indices);
}
