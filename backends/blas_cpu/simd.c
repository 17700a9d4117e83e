/* Which instruction level's vector kernels a device runs (vmath.h).
 *
 * The build compiles the kernels once per level (BPC_X86_LEVELS: AVX-512,
 * AVX2 and the x86-64 baseline; otherwise the baseline alone). At open the
 * device takes the widest level this CPU runs, or the one the `simd` key
 * names; a level the CPU cannot run is refused (it would die of an illegal
 * instruction), never replaced by another. */
#include <stdio.h>
#include <string.h>

#include "vmath.h"

extern const bpc_vmath bpc_vmath_baseline;
#if BPC_X86_LEVELS
extern const bpc_vmath bpc_vmath_avx512, bpc_vmath_avx2;
static const bpc_vmath *const levels[] = {&bpc_vmath_avx512, &bpc_vmath_avx2,
                                          &bpc_vmath_baseline};
#else
static const bpc_vmath *const levels[] = {&bpc_vmath_baseline};
#endif
#define N_LEVELS ((int)(sizeof levels / sizeof levels[0]))

const bpc_vmath *const *bpc_vmath_levels(int *count)
{
    *count = N_LEVELS;
    return levels;
}

bool bpc_vmath_cpu_runs(const bpc_vmath *vm)
{
#if BPC_X86_LEVELS
    /* What -march=x86-64-v3 and -v4 let the compiler use; every CPU with
     * AVX2 and BMI2 also has F16C, LZCNT and MOVBE. libgcc's (and
     * compiler-rt's) checks include the OS's support for the wide
     * registers (XCR0), and valgrind hides AVX-512 from them. */
    __builtin_cpu_init();
    bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
              __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
              __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
              __builtin_cpu_supports("avx512vl");
    if (vm == &bpc_vmath_avx512)
        return v4;
    if (vm == &bpc_vmath_avx2)
        return v3;
#endif
    return vm == &bpc_vmath_baseline;
}

const bpc_vmath *bpc_vmath_pick(const char *want, char *why, size_t cap)
{
    const bpc_vmath *widest = &bpc_vmath_baseline;
    for (int i = N_LEVELS - 1; i >= 0; i--)
        if (bpc_vmath_cpu_runs(levels[i]))
            widest = levels[i];
    if (!want || strcmp(want, "auto") == 0)
        return widest;
    for (int i = 0; i < N_LEVELS; i++) {
        if (strcmp(want, levels[i]->level) != 0)
            continue;
        if (bpc_vmath_cpu_runs(levels[i]))
            return levels[i];
        snprintf(why, cap, "this CPU cannot run the %s kernels (%s); the widest it runs is %s",
                 levels[i]->level, levels[i]->isa, widest->level);
        return NULL;
    }
    int n = snprintf(why, cap, "expected auto");
    for (int i = 0; i < N_LEVELS && n > 0 && (size_t)n < cap; i++)
        n += snprintf(why + n, cap - (size_t)n, ", %s", levels[i]->level);
    if (n > 0 && (size_t)n < cap)
        snprintf(why + n, cap - (size_t)n, " (the levels this build has)");
    return NULL;
}
