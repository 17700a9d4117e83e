/* What this CPU runs, read with cpuid (openblas_check.h's bpc_cpu_probe):
 * the one function beside the pure checks that looks at the machine, shared
 * by the blas_cpu plugin (at open) and the tests that check its choices. */
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

#include "openblas_check.h"

void bpc_cpu_probe(bpc_cpu_features *f)
{
    memset(f, 0, sizeof *f);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* libgcc's checks include the operating system's support for the wide
     * registers (XCR0), as OpenBLAS's own do. */
    __builtin_cpu_init();
    f->x86_64 = true;
    f->amd = __builtin_cpu_is("amd");
    f->avx = __builtin_cpu_supports("avx");
    f->avx2 = __builtin_cpu_supports("avx2");
    f->fma = __builtin_cpu_supports("fma");
    f->avx512f = __builtin_cpu_supports("avx512f");
    f->avx512cd = __builtin_cpu_supports("avx512cd");
    f->avx512bw = __builtin_cpu_supports("avx512bw");
    f->avx512dq = __builtin_cpu_supports("avx512dq");
    f->avx512vl = __builtin_cpu_supports("avx512vl");
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        const int base = (int)((a >> 8) & 0xf);
        f->family = base == 0xf ? base + (int)((a >> 20) & 0xff) : base;
    }
#endif
}
