/* How far blas_cpu's f32 vector math lies from the reference, over every
 * float (or every STEP-th bit pattern): for each instruction level this CPU
 * runs and each f32 unary op with a vmath kernel, the count of results
 * equal to the reference kernel's (backends/kernels, the binary backend's
 * arithmetic), one ulp apart, and further apart, with the first few of
 * those. NaN against NaN counts as equal. Exit status 1 if any result is
 * more than one ulp away (or a zero of the wrong sign): the bound vmath.h
 * documents.
 *
 * pow (two operands) is swept the same way against a few fixed exponents,
 * then a few fixed bases.
 *
 * usage: bp_vmath_ulp [--level NAME] [--op NAME] [--step N]
 * A full run (step 1) takes a minute or two per op and level: the reference
 * calls libm once per float. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "vmath.h"

enum { BLOCK = 1 << 20 };

static bp_view dense(float *p, int64_t n)
{
    bp_view v = {.struct_size = sizeof v, .buffer = p, .dtype = BP_F32, .rank = 1};
    v.shape[0] = n;
    v.strides[0] = 1;
    return v;
}

/* ulps between two floats (across zero too); zeros of opposite signs count
 * as further apart than any bound */
static uint64_t ulps(float a, float b)
{
    if (a == 0 && b == 0 && signbit(a) != signbit(b))
        return UINT32_MAX;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t ka = ia < 0 ? (int64_t)INT32_MIN - ia : ia; /* monotone in the value */
    int64_t kb = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return (uint64_t)(ka > kb ? ka - kb : kb - ka);
}

/* pow: one of the bases or exponents below against every float */
static const float pow_fixed[] = {-3.0f, -2.5f, -1.0f, -0.5f, 0.333333343f, 0.5f, 2.0f, 3.7f,
                                  7.0f, 10.1f, 0.9f, 1.1f, 100.0f};
#define N_POW_FIXED (sizeof pow_fixed / sizeof pow_fixed[0])

/* got and want for x[0..n): a unary op, or pow with the fixed value k as the
 * exponent (k < N_POW_FIXED) or as the base (k >= N_POW_FIXED) */
static void run(const bpc_vmath *vm, bp_op op, size_t k, float *x, float *got, float *want,
                float *other, int64_t n)
{
    bpk_dev dev = {0};
    const bp_op_params none = {.struct_size = sizeof none};
    bp_view xv = dense(x, n), ov = dense(want, n);
    if (op != BP_OP_POW) {
        bpk_unary(&dev, op, &none, &xv, &ov);
        vm->unary(op, BP_F32, x, got, n);
        return;
    }
    float fixed = pow_fixed[k % N_POW_FIXED];
    for (int64_t i = 0; i < n; i++)
        other[i] = fixed;
    bp_view fv = dense(other, n);
    if (k < N_POW_FIXED) { /* x ^ fixed, the exponent broadcast */
        fv.strides[0] = 0;
        bpk_binary(&dev, op, &none, &xv, &fv, &ov);
        vm->pow_f32(x, other, 0, got, n);
    } else { /* fixed ^ x, both dense */
        bpk_binary(&dev, op, &none, &fv, &xv, &ov);
        vm->pow_f32(other, x, 1, got, n);
    }
}

static int check(const bpc_vmath *vm, bp_op op, size_t k, uint64_t step)
{
    float *x = malloc(BLOCK * sizeof *x), *got = malloc(BLOCK * sizeof *got),
          *want = malloc(BLOCK * sizeof *want), *other = malloc(BLOCK * sizeof *other);
    if (!x || !got || !want || !other) {
        fprintf(stderr, "vmath_ulp: out of memory\n");
        exit(2);
    }
    uint64_t n_all = 0, n_one = 0, n_more = 0, worst = 0;
    char what[32] = "";
    if (op == BP_OP_POW)
        snprintf(what, sizeof what, k < N_POW_FIXED ? " ^ %g" : " %g ^ x",
                 (double)pow_fixed[k % N_POW_FIXED]);
    for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)BLOCK * step) {
        int64_t n = 0;
        for (uint64_t b = base; n < BLOCK && b < (1ull << 32); b += step, n++) {
            uint32_t u = (uint32_t)b;
            memcpy(&x[n], &u, 4);
        }
        run(vm, op, k, x, got, want, other, n);
        for (int64_t i = 0; i < n; i++) {
            n_all++;
            if (got[i] != got[i] && want[i] != want[i])
                continue;
            uint64_t d = ulps(got[i], want[i]);
            worst = d > worst ? d : worst;
            n_one += d == 1;
            if (d > 1 && n_more++ < 5)
                printf("  %s %s x = %a (%.9g)%s: %a, reference %a (%" PRIu64 " ulp)\n",
                       vm->level, bp_op_name(op), x[i], x[i], what, got[i], want[i], d);
        }
    }
    printf("%-8s %-8s%-16s %12" PRIu64 " floats: %10" PRIu64 " one ulp apart (%.3f%%), %" PRIu64
           " further (worst %" PRIu64 " ulp)\n",
           vm->level, bp_op_name(op), what, n_all, n_one, 100.0 * (double)n_one / (double)n_all, n_more,
           worst);
    fflush(stdout);
    free(x), free(got), free(want), free(other);
    return n_more != 0;
}

int main(int argc, char **argv)
{
    const char *level = NULL, *op_name = NULL;
    uint64_t step = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--level") == 0 && i + 1 < argc)
            level = argv[++i];
        else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
            op_name = argv[++i];
        else if (strcmp(argv[i], "--step") == 0 && i + 1 < argc)
            step = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bp_vmath_ulp [--level NAME] [--op NAME] [--step N]\n");
            return 2;
        }
    }
    if (step < 1)
        step = 1;
    int count, bad = 0;
    const bpc_vmath *const *levels = bpc_vmath_levels(&count);
    for (int l = 0; l < count; l++) {
        const bpc_vmath *vm = levels[l];
        if (level && strcmp(level, vm->level) != 0)
            continue;
        if (!bpc_vmath_cpu_runs(vm)) {
            printf("%-8s skipped: this CPU cannot run it (%s)\n", vm->level, vm->isa);
            continue;
        }
        for (int k = 0; k < BP_OP_COUNT; k++) {
            bp_op op = (bp_op)k;
            if (bp_op_kind_of(op) != BP_KIND_UNARY || !vm->unary(op, BP_F32, NULL, NULL, 0))
                continue;
            if (op_name && strcmp(op_name, bp_op_name(op)) != 0)
                continue;
            bad |= check(vm, op, 0, step);
        }
        for (size_t k = 0; k < 2 * N_POW_FIXED; k++)
            if (!op_name || strcmp(op_name, "pow") == 0)
                bad |= check(vm, BP_OP_POW, k, step);
    }
    return bad;
}
