/* Whether OpenBLAS's kernels are as new as this CPU (openblas_check.h). */
#include "openblas_check.h"

#include <stdio.h>
#include <strings.h>

/* OpenBLAS's x86-64 core names (driver/others/dynamic.c, and the TARGET
 * names of a fixed build) and the instruction set their kernels use. A
 * name is in the table only when OpenBLAS picks it for a CPU of that
 * generation, so that the CPU's own kernels never read as "older":
 * Excavator has AVX2, Steamroller has not. */
static const struct {
    const char *name;
    bpc_isa isa;
} core_isa[] = {
    {"Katmai", BPC_ISA_SSE},      {"Coppermine", BPC_ISA_SSE},  {"Northwood", BPC_ISA_SSE},
    {"Prescott", BPC_ISA_SSE},    {"Banias", BPC_ISA_SSE},      {"Atom", BPC_ISA_SSE},
    {"Core2", BPC_ISA_SSE},       {"Penryn", BPC_ISA_SSE},      {"Dunnington", BPC_ISA_SSE},
    {"Nehalem", BPC_ISA_SSE},     {"Athlon", BPC_ISA_SSE},      {"Opteron", BPC_ISA_SSE},
    {"Opteron_SSE3", BPC_ISA_SSE}, {"Barcelona", BPC_ISA_SSE},  {"Nano", BPC_ISA_SSE},
    {"Bobcat", BPC_ISA_SSE},      {"Sandybridge", BPC_ISA_AVX}, {"Bulldozer", BPC_ISA_AVX},
    {"Piledriver", BPC_ISA_AVX},  {"Steamroller", BPC_ISA_AVX}, {"Excavator", BPC_ISA_AVX2},
    {"Haswell", BPC_ISA_AVX2},    {"Zen", BPC_ISA_AVX2},        {"SkylakeX", BPC_ISA_AVX512},
    {"Cooperlake", BPC_ISA_AVX512}, {"SapphireRapids", BPC_ISA_AVX512},
};

bpc_isa bpc_isa_of_core(const char *corename)
{
    if (!corename)
        return BPC_ISA_UNKNOWN;
    for (size_t i = 0; i < sizeof core_isa / sizeof core_isa[0]; i++)
        if (strcasecmp(corename, core_isa[i].name) == 0)
            return core_isa[i].isa;
    return BPC_ISA_UNKNOWN;
}

bpc_isa bpc_isa_of_cpu(const bpc_cpu_features *cpu)
{
    if (!cpu->x86_64)
        return BPC_ISA_UNKNOWN;
    /* OpenBLAS's SkylakeX kernels need all five AVX-512 subsets; a Xeon Phi
     * (F and CD alone) runs the Haswell ones. */
    if (cpu->avx2 && cpu->fma && cpu->avx512f && cpu->avx512cd && cpu->avx512bw &&
        cpu->avx512dq && cpu->avx512vl)
        return BPC_ISA_AVX512;
    if (cpu->avx2 && cpu->fma)
        return BPC_ISA_AVX2;
    if (cpu->avx)
        return BPC_ISA_AVX;
    return BPC_ISA_SSE;
}

bool bpc_kernels_narrower_than_avx512(bpc_isa kernels)
{
    return kernels == BPC_ISA_SSE || kernels == BPC_ISA_AVX || kernels == BPC_ISA_AVX2;
}

bool bpc_cpu_splits_512_bit_fma(const bpc_cpu_features *cpu)
{
    return cpu->x86_64 && cpu->amd && cpu->family == 0x19 && cpu->avx512f;
}

bool bpc_in_place_direct_auto(bool block512, bpc_isa kernels, const bpc_cpu_features *cpu)
{
    return block512 && (bpc_kernels_narrower_than_avx512(kernels) || bpc_cpu_splits_512_bit_fma(cpu));
}

bool bpc_in_place_grouped_direct_auto(bool block512, bpc_isa kernels)
{
    return block512 && bpc_kernels_narrower_than_avx512(kernels);
}

const char *bpc_isa_name(bpc_isa isa)
{
    switch (isa) {
    case BPC_ISA_SSE: return "SSE";
    case BPC_ISA_AVX: return "AVX";
    case BPC_ISA_AVX2: return "AVX2";
    case BPC_ISA_AVX512: return "AVX-512";
    case BPC_ISA_UNKNOWN: break;
    }
    return "unknown";
}

/* The core type whose kernels match the CPU's instruction set: the
 * baseline of that generation, which every CPU of it runs. */
static const char *suggested_core(bpc_isa cpu, bool amd)
{
    switch (cpu) {
    case BPC_ISA_AVX512: return "SkylakeX";
    case BPC_ISA_AVX2: return amd ? "Zen" : "Haswell";
    case BPC_ISA_AVX: return "Sandybridge";
    default: return NULL;
    }
}

bpc_kernels_decision bpc_kernels_decide(const char *corename, const bpc_cpu_features *cpu,
                                        const char *user_coretype)
{
    bpc_kernels_decision d = {BPC_KERNELS_OK, bpc_isa_of_core(corename), bpc_isa_of_cpu(cpu),
                              NULL};
    if (user_coretype && *user_coretype) {
        d.verdict = BPC_KERNELS_USER_SET;
        return d;
    }
    if (d.kernels != BPC_ISA_UNKNOWN && d.cpu != BPC_ISA_UNKNOWN && d.kernels < d.cpu) {
        d.verdict = BPC_KERNELS_OLDER;
        d.suggest = suggested_core(d.cpu, cpu->amd);
    }
    return d;
}

int bpc_kernels_summary(char *buf, size_t cap, const bpc_kernels_decision *d,
                        const char *corename, const char *user_coretype)
{
    const char *core = corename && *corename ? corename : "unknown";
    switch (d->verdict) {
    case BPC_KERNELS_USER_SET:
        return snprintf(buf, cap, "OpenBLAS kernels %s, chosen by OPENBLAS_CORETYPE=%s (set by "
                        "the user; not compared with this CPU)",
                        core, user_coretype);
    case BPC_KERNELS_OLDER:
        return snprintf(buf, cap,
                        "OpenBLAS kernels %s (%s), older than this CPU (%s): use a newer OpenBLAS "
                        "(scipy-openblas32) or set OPENBLAS_CORETYPE=%s",
                        core, bpc_isa_name(d->kernels), bpc_isa_name(d->cpu),
                        d->suggest ? d->suggest : "?");
    case BPC_KERNELS_OK: break;
    }
    if (d->kernels == BPC_ISA_UNKNOWN || d->cpu == BPC_ISA_UNKNOWN)
        return snprintf(buf, cap, "OpenBLAS kernels %s", core);
    return snprintf(buf, cap, "OpenBLAS kernels %s (%s), as new as this CPU (%s)", core,
                    bpc_isa_name(d->kernels), bpc_isa_name(d->cpu));
}

int bpc_kernels_warning(char *buf, size_t cap, const bpc_kernels_decision *d,
                        const char *corename, const char *cpu_name)
{
    if (d->verdict != BPC_KERNELS_OLDER)
        return snprintf(buf, cap, "%s", "");
    char cpu[192];
    if (cpu_name && *cpu_name)
        snprintf(cpu, sizeof cpu, "%s, %s", cpu_name, bpc_isa_name(d->cpu));
    else
        snprintf(cpu, sizeof cpu, "%s", bpc_isa_name(d->cpu));
    return snprintf(buf, cap,
                    "OpenBLAS runs its %s kernels (%s), older than this CPU (%s): this "
                    "OpenBLAS does not know the CPU, and matrix products run several times "
                    "slower than they could. Use a newer OpenBLAS: build backplane with "
                    "-DBP_OPENBLAS=scipy-openblas32 (the OpenBLAS of NumPy's wheels, from "
                    "PyPI); or, if you trust this OpenBLAS build on this CPU, set "
                    "OPENBLAS_CORETYPE=%s yourself",
                    corename, bpc_isa_name(d->kernels), cpu, d->suggest ? d->suggest : "?");
}
