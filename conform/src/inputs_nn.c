/* The operands of an nn case, made on the host from the case's seed with the
 * oracle's Philox (every backend gets the same values) and written to the
 * backend: x, then what the op takes beside it (w and bias; the norms'
 * per-channel or trailing operands, variances kept positive; labels in
 * [0, C), every third one ignore_index -1 when the spec asks; class weights). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn_cases.h"

/* Values in [lo, hi) (integers: whole numbers in [lo, hi]) as dt stores them. */
static void fill(cf_array *a, uint64_t seed, double lo, double hi)
{
    for (int64_t k = 0; k < a->n; k++) {
        double u = cf_philox_uniform01(seed, (uint64_t)k);
        if (cf_is_float(a->dt))
            a->f[k] = cf_round(a->dt, lo + u * (hi - lo));
        else
            cf_set_i(a, k, (int64_t)floor(lo + u * (hi - lo + 1.0)));
    }
}

/* NaN, +inf and -inf in a fixed pattern among x's values. */
static void specials(cf_array *a)
{
    static const double v[3] = {NAN, INFINITY, -INFINITY};
    for (int64_t k = 0; k < a->n; k++)
        if (k % 7 == 0 || k % 7 == 3 || k % 7 == 5)
            a->f[k] = v[(k % 7) / 2];
}

static bool add(cf_nn_inputs *in, bp_dtype dt, int32_t rank, const int64_t *shape, bool given)
{
    int k = in->n++;
    in->given[k] = given;
    return !given || cf_array_init(&in->a[k], dt, rank, shape);
}

/* The shapes and dtypes of the operands after x. */
static bool layout(const cf_case *c, const cf_nn_spec *s, cf_nn_inputs *in)
{
    const bp_dtype dt = c->dtype;
    const int64_t C = s->x[1], groups = s->win.groups ? s->win.groups : 1;
    int32_t ax = s->axis < 0 ? s->axis + s->rank : s->axis;
    switch (s->op) {
    case BP_OP_CONV: case BP_OP_CONV_TRANSPOSE: {
        int64_t m = s->op == BP_OP_CONV ? s->w[0] : s->w[1] * groups;
        return add(in, dt, s->rank, s->w, true) && add(in, dt, 1, &m, s->extra);
    }
    case BP_OP_BATCH_NORM:
        for (int k = 0; k < 4; k++)
            if (!add(in, dt, 1, &C, true))
                return false;
        return true;
    case BP_OP_INSTANCE_NORM:
        return add(in, dt, 1, &C, true) && add(in, dt, 1, &C, true);
    case BP_OP_LAYER_NORM:
        return add(in, dt, s->rank - ax, s->x + ax, true) &&
               add(in, dt, s->rank - ax, s->x + ax, s->extra);
    case BP_OP_RMS_NORM:
        return add(in, dt, s->rank - ax, s->x + ax, s->extra);
    case BP_OP_NLL_LOSS: case BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS: {
        int64_t ls[4] = {s->x[0]};
        for (int32_t d = 2; d < s->rank; d++)
            ls[d - 1] = s->x[d];
        return add(in, c->seed % 2 ? BP_I32 : BP_I64, s->rank - 1, ls, true) &&
               add(in, dt, 1, &C, s->extra);
    }
    default:
        return true;
    }
}

/* The values: x by the op's habits, the rest by their roles. */
static void values(const cf_case *c, const cf_nn_spec *s, cf_nn_inputs *in)
{
    const uint64_t seed = c->seed * 16u;
    cf_array *x = &in->a[0];
    if (!cf_is_float(x->dt))
        fill(x, seed, x->dt == BP_U8 ? 0 : -100, 100);
    else if (s->op == BP_OP_NLL_LOSS)
        fill(x, seed, -5, 0);
    else if (s->op == BP_OP_CONV || s->op == BP_OP_CONV_TRANSPOSE)
        fill(x, seed, -1, 1);
    else
        fill(x, seed, -3, 3);
    if (s->specials)
        specials(x);
    bool loss = s->op == BP_OP_NLL_LOSS || s->op == BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS;
    for (int k = 1; k < in->n; k++) {
        cf_array *a = &in->a[k];
        if (!in->given[k])
            continue;
        if (loss && k == 1) { /* labels */
            for (int64_t i = 0; i < a->n; i++) {
                double u = cf_philox_uniform01(seed + 1u, (uint64_t)i);
                int64_t t = (int64_t)floor(u * (double)s->x[1]);
                a->i[i] = s->ignore && i % 3 == 1 ? -1 : t;
            }
        } else if (loss || (s->op == BP_OP_BATCH_NORM && k == 4)) { /* weights, var */
            fill(a, seed + (uint64_t)k, 0.1, 2);
        } else {
            fill(a, seed + (uint64_t)k, -1, 1);
        }
    }
}

bool cf_nn_make_inputs(const cf_worker_env *env, const cf_case *c, cf_nn_inputs *in,
                       cf_result *r)
{
    const cf_nn_spec *s = cf_nn_spec_of(c);
    memset(in, 0, sizeof *in);
    bool ok = add(in, c->dtype, s->rank, s->x, true) && layout(c, s, in);
    if (ok)
        values(c, s, in);
    for (int k = 0; ok && k < in->n; k++) {
        if (!in->given[k])
            continue;
        size_t bytes = (size_t)in->a[k].n * bp_dtype_size(in->a[k].dt);
        void *raw = malloc(bytes ? bytes : 1);
        if (!raw) {
            ok = false;
            break;
        }
        cf_encode(&in->a[k], raw);
        bp_status st = bp_tensor_from_host(env->be, in->a[k].dt, in->a[k].rank, in->a[k].shape,
                                           raw, &in->t[k]);
        free(raw);
        if (st != BP_OK) {
            CF_MSG(r, "%s: bp_tensor_from_host(%s) failed: %s: %s", c->name,
                   bp_dtype_name(in->a[k].dt), bp_status_string(st), bp_last_error());
            cf_nn_inputs_free(in);
            return false;
        }
    }
    if (!ok) {
        CF_MSG(r, "%s: out of host memory", c->name);
        cf_nn_inputs_free(in);
    }
    return ok;
}

void cf_nn_inputs_free(cf_nn_inputs *in)
{
    for (int k = 0; k < CF_NN_MAX_IN; k++) {
        bp_tensor_release(in->t[k]);
        cf_array_free(&in->a[k]);
        in->t[k] = NULL;
    }
    in->n = 0;
}
