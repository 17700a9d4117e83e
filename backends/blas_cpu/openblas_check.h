/* Whether OpenBLAS runs kernels as new as this CPU: a pure function (no
 * OpenBLAS, no cpuid, no I/O; bpc_cpu_probe below is the one exception,
 * apart in cpu_probe.c), shared by the blas_cpu plugin (at open) and
 * tested table-driven on any machine (tests/test_blas_cpu_openblas.c).
 *
 * An OpenBLAS build picks its kernels at load time by the CPU's model
 * number. A build older than the CPU does not know the model and falls
 * back to old kernels: Debian 12's OpenBLAS 0.3.21 runs its SSE3
 * `Prescott` kernels on a Sapphire Rapids Xeon, and a matrix product is
 * several times slower than NumPy's on the same machine. The decision
 * compares the instruction set of the kernels that OpenBLAS reports
 * (openblas_get_corename) with the widest one the CPU runs:
 *   - kernels of an older instruction set than the CPU's: OLDER, with the
 *     OPENBLAS_CORETYPE that would match and the remedy;
 *   - the same or newer, or a core name not in the table (another
 *     architecture, a build of a later OpenBLAS): OK, never a false alarm;
 *   - OPENBLAS_CORETYPE set by the user: USER_SET, never a warning (some
 *     machines set it on purpose, because an old build computes wrong
 *     results with the kernels it would pick). */
#ifndef BPC_OPENBLAS_CHECK_H
#define BPC_OPENBLAS_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* Instruction sets, oldest first. */
typedef enum bpc_isa {
    BPC_ISA_UNKNOWN = 0, /* not an x86-64 kernel set this table knows */
    BPC_ISA_SSE = 1,     /* SSE2 / SSE3 / SSE4 kernels (Prescott ... Nehalem) */
    BPC_ISA_AVX = 2,     /* AVX (Sandybridge, Bulldozer) */
    BPC_ISA_AVX2 = 3,    /* AVX2 + FMA (Haswell, Zen) */
    BPC_ISA_AVX512 = 4   /* AVX-512 F/CD/BW/DQ/VL (SkylakeX and later) */
} bpc_isa;

/* What the CPU runs (with the operating system's support for the
 * registers), as __builtin_cpu_supports reports it. */
typedef struct bpc_cpu_features {
    bool x86_64;                  /* false elsewhere: nothing to compare */
    bool amd;                     /* vendor, for the suggested core type */
    int family;                   /* cpuid's family (base + extended): 0x19 is AMD's Zen 3 and 4 */
    bool avx, avx2, fma;
    bool avx512f, avx512cd, avx512bw, avx512dq, avx512vl;
} bpc_cpu_features;

typedef enum bpc_kernels_verdict {
    BPC_KERNELS_OK = 0,       /* as new as the CPU, or nothing known to compare */
    BPC_KERNELS_OLDER = 1,    /* older than the CPU: a warning with the remedy */
    BPC_KERNELS_USER_SET = 2  /* OPENBLAS_CORETYPE chose them: reported, never warned */
} bpc_kernels_verdict;

typedef struct bpc_kernels_decision {
    bpc_kernels_verdict verdict;
    bpc_isa kernels;              /* the kernels' instruction set (UNKNOWN: not in the table) */
    bpc_isa cpu;                  /* the widest this CPU runs */
    const char *suggest;          /* OLDER: the OPENBLAS_CORETYPE matching this CPU; else NULL */
} bpc_kernels_decision;

/* This CPU's features (cpu_probe.c: cpuid, the one function declared here
 * that reads the machine). */
void bpc_cpu_probe(bpc_cpu_features *f);

/* The instruction set of OpenBLAS's core name (either spelling: the
 * DYNAMIC_ARCH name "SkylakeX" or a fixed build's "SKYLAKEX"). */
bpc_isa bpc_isa_of_core(const char *corename);

/* The widest instruction set of the OpenBLAS kernels this CPU runs. */
bpc_isa bpc_isa_of_cpu(const bpc_cpu_features *cpu);

/* Whether OpenBLAS's kernels are known to be of 256-bit vectors or
 * narrower (SSE, AVX, AVX2): a GEMM that a 512-bit direct kernel beats on
 * 1x1 convolutions (conv_direct.c). False for AVX-512 kernels and for a
 * core name the table does not know (a newer OpenBLAS's: likely as wide as
 * the CPU), where the GEMM stays. */
bool bpc_kernels_narrower_than_avx512(bpc_isa kernels);

/* Whether the CPU runs its 512-bit fmas as two 256-bit halves, as AMD's
 * Zen 4 does (family 0x19 with AVX-512F): there OpenBLAS's AVX-512 sgemm
 * kernels (Cooperlake, SkylakeX: written for Intel's 512-bit units) reached
 * 77-91% of the core's fma rate on ResNet-50's 1x1 layers, and blas_cpu's
 * direct block 96-100% (bench/conv_layout.c, docs/performance.md). */
bool bpc_cpu_splits_512_bit_fma(const bpc_cpu_features *cpu);

/* Where blas_cpu's `conv_in_place = auto` runs the convolutions whose
 * product reads x in place (1x1 kernels, kernels along one axis): direct
 * (true) with a vector level that has the 512-bit block (block512), where
 * OpenBLAS's kernels are narrower than AVX-512 or the CPU splits its
 * 512-bit fmas; on OpenBLAS's product (false) elsewhere. */
bool bpc_in_place_direct_auto(bool block512, bpc_isa kernels, const bpc_cpu_features *cpu);

/* Whether those of more than one group go direct too: only against
 * OpenBLAS kernels narrower than AVX-512 (on a Zen 4 against AVX-512
 * kernels ShuffleNet's grouped 1x1s ran 0.80-0.87x direct). */
bool bpc_in_place_grouped_direct_auto(bool block512, bpc_isa kernels);

/* "SSE", "AVX", "AVX2", "AVX-512" or "unknown". */
const char *bpc_isa_name(bpc_isa isa);

/* The decision. corename: openblas_get_corename() (NULL: unknown);
 * user_coretype: $OPENBLAS_CORETYPE (NULL or "": not set). */
bpc_kernels_decision bpc_kernels_decide(const char *corename, const bpc_cpu_features *cpu,
                                        const char *user_coretype);

/* One line for the device's detail in `backplane info`: the kernels and
 * how they compare with this CPU, e.g. "OpenBLAS kernels Zen (AVX2), as
 * new as this CPU (AVX2)". Returns what snprintf returns. */
int bpc_kernels_summary(char *buf, size_t cap, const bpc_kernels_decision *d,
                        const char *corename, const char *user_coretype);

/* The warning for OLDER, naming the kernels, the CPU and the remedy:
 * a newer OpenBLAS (the scipy-openblas32 build option), or
 * OPENBLAS_CORETYPE=<suggest> for a user who trusts the installed build on
 * this CPU. cpu_name: the CPU's model name (NULL: not known). */
int bpc_kernels_warning(char *buf, size_t cap, const bpc_kernels_decision *d,
                        const char *corename, const char *cpu_name);

#endif
