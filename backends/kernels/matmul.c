/* Matrix multiply: a [..., M, K] x b [..., K, N] -> out [..., M, N].
 *
 * Floats follow the GotoBLAS scheme. B is packed into KC x NC panels and A
 * into MC x KC panels, laid out exactly as the micro-kernel reads them
 * (NR-wide / MR-tall slivers, zero padded at the edges), so the hot loop runs
 * on aligned unit-stride data whatever the operands' strides are: transposed
 * and broadcast views need no special case. The micro-kernel is plain C that
 * GCC vectorises at -O3 for the baseline ISA (SSE2 on x86-64, no -march): a
 * 4x8 tile keeps its accumulators in the 16 vector registers, bigger tiles
 * spill (measured on Zen 3: 4x8 f32 ~31 GFLOP/s in cache, 6x16 ~3).
 *
 * f16/bf16 are converted to f32 while packing and accumulate into an f32
 * scratch matrix, so partial sums never round to 16 bits between K blocks.
 * Integers are rare here: a simple i-k-j loop in 64-bit wrapping arithmetic. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

/* A 2-D operand of one batch: element (i, j) at p + (i * rs + j * cs) * esz. */
typedef struct mat2 {
    char *p;
    int64_t rs, cs;
    size_t esz;
    bp_dtype dt;
} mat2;

static inline char *mat_at(const mat2 *m, int64_t i, int64_t j)
{
    return m->p + (i * m->rs + j * m->cs) * (int64_t)m->esz;
}

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Packing loads: the f32 path also reads f16/bf16 (one switch per element is
 * noise next to the O(MNK) kernel, and -O3 unswitches it anyway). */
static inline float ld_f32(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_F16: return bp_f16_to_f32(*(const uint16_t *)p);
    case BP_BF16: return bp_bf16_to_f32(*(const uint16_t *)p);
    default: return *(const float *)p;
    }
}
static inline double ld_f64(bp_dtype dt, const char *p) { (void)dt; return *(const double *)p; }

static void *alloc_aligned(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

/* GEMM_DEFINE(T, SFX, MR, NR, KC, MC, NC) defines gemm_SFX(A, B, C, ...):
 * C (T elements, strides rsc/csc) = A (M x K) * B (K x N), with scratch
 * panels ap (MC*KC) and bp (KC*NC) supplied by the caller. */
#define GEMM_DEFINE(T, SFX, MR, NR, KC, MC, NC)                                               \
    static void kern_##SFX(int64_t kc, const T *restrict a, const T *restrict b, T *c,        \
                           int64_t rsc, int64_t csc, int64_t mr, int64_t nr, int first)       \
    {                                                                                         \
        T acc[MR][NR] = {{0}};                                                                \
        for (int64_t p = 0; p < kc; p++)                                                      \
            for (int i = 0; i < MR; i++)                                                      \
                for (int j = 0; j < NR; j++)                                                  \
                    acc[i][j] += a[p * MR + i] * b[p * NR + j];                               \
        for (int64_t i = 0; i < mr; i++)                                                      \
            for (int64_t j = 0; j < nr; j++) {                                                \
                T *dst = c + i * rsc + j * csc;                                               \
                *dst = first ? acc[i][j] : *dst + acc[i][j];                                  \
            }                                                                                 \
    }                                                                                         \
    /* rows i0.. of A, columns k0..: MR-tall slivers, each kc x MR, row p contiguous */       \
    static void pack_a_##SFX(const mat2 *A, int64_t i0, int64_t mc, int64_t k0, int64_t kc,   \
                             T *restrict dst)                                                 \
    {                                                                                         \
        for (int64_t ir = 0; ir < mc; ir += MR, dst += kc * MR)                               \
            for (int64_t i = 0; i < MR; i++) {                                                \
                if (ir + i >= mc) {                                                           \
                    for (int64_t p = 0; p < kc; p++)                                          \
                        dst[p * MR + i] = 0;                                                  \
                    continue;                                                                 \
                }                                                                             \
                const char *src = mat_at(A, i0 + ir + i, k0);                                 \
                int64_t step = A->cs * (int64_t)A->esz;                                       \
                for (int64_t p = 0; p < kc; p++)                                              \
                    dst[p * MR + i] = ld_##SFX(A->dt, src + p * step);                        \
            }                                                                                 \
    }                                                                                         \
    /* rows k0.. of B, columns j0..: NR-wide slivers, each kc x NR */                         \
    static void pack_b_##SFX(const mat2 *B, int64_t k0, int64_t kc, int64_t j0, int64_t nc,   \
                             T *restrict dst)                                                 \
    {                                                                                         \
        for (int64_t jr = 0; jr < nc; jr += NR, dst += kc * NR) {                             \
            int64_t nr = min64(NR, nc - jr);                                                  \
            int64_t step = B->cs * (int64_t)B->esz;                                           \
            for (int64_t p = 0; p < kc; p++) {                                                \
                const char *src = mat_at(B, k0 + p, j0 + jr);                                 \
                int64_t j = 0;                                                                \
                for (; j < nr; j++)                                                           \
                    dst[p * NR + j] = ld_##SFX(B->dt, src + j * step);                        \
                for (; j < NR; j++)                                                           \
                    dst[p * NR + j] = 0;                                                      \
            }                                                                                 \
        }                                                                                     \
    }                                                                                         \
    static void gemm_##SFX(const mat2 *A, const mat2 *B, T *c, int64_t rsc, int64_t csc,      \
                           int64_t M, int64_t N, int64_t K, T *ap, T *bp)                     \
    {                                                                                         \
        for (int64_t jc = 0; jc < N; jc += NC) {                                              \
            int64_t nc = min64(NC, N - jc);                                                   \
            for (int64_t pc = 0; pc < K; pc += KC) {                                          \
                int64_t kc = min64(KC, K - pc);                                               \
                pack_b_##SFX(B, pc, kc, jc, nc, bp);                                          \
                for (int64_t ic = 0; ic < M; ic += MC) {                                      \
                    int64_t mc = min64(MC, M - ic);                                           \
                    pack_a_##SFX(A, ic, mc, pc, kc, ap);                                      \
                    for (int64_t jr = 0; jr < nc; jr += NR)                                   \
                        for (int64_t ir = 0; ir < mc; ir += MR)                               \
                            kern_##SFX(kc, ap + ir * kc, bp + jr * kc,                        \
                                       c + (ic + ir) * rsc + (jc + jr) * csc, rsc, csc,       \
                                       min64(MR, mc - ir), min64(NR, nc - jr), pc == 0);      \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    }

/* Tile 4x8 for both (see the top). Panels: A's MC x KC stays in L2, B's
 * KC x NC in L3: about 128 KiB and 2 MiB. */
#define MR 4
#define NR 8
#define KC 256
#define MC_F32 128
#define NC_F32 2048
#define MC_F64 64
#define NC_F64 1024
GEMM_DEFINE(float, f32, MR, NR, KC, MC_F32, NC_F32)
GEMM_DEFINE(double, f64, MR, NR, KC, MC_F64, NC_F64)

/* ---- integers: 64-bit wrapping, stored back as the low bits ---- */

static int64_t ld_int(bp_dtype dt, const char *p)
{
    switch (dt) {
    case BP_U8: return *(const uint8_t *)p;
    case BP_I8: return *(const int8_t *)p;
    case BP_I32: return *(const int32_t *)p;
    case BP_I16: return *(const int16_t *)p;
    case BP_U16: return *(const uint16_t *)p;
    case BP_U32: return *(const uint32_t *)p;
    case BP_U64: return (int64_t)*(const uint64_t *)p; /* its bits: the sums wrap alike */
    default: return *(const int64_t *)p;
    }
}

/* Two's-complement reinterpretation of the low `bits` bits, without relying
 * on implementation-defined unsigned-to-signed conversion. */
static int64_t low_bits_signed(uint64_t u, int bits)
{
    uint64_t sign = (uint64_t)1 << (bits - 1);
    u &= bits == 64 ? ~(uint64_t)0 : (sign << 1) - 1;
    return (u & sign) ? (int64_t)(u - sign) - (int64_t)(sign - 1) - 1 : (int64_t)u;
}

static void st_int_wrap(bp_dtype dt, char *p, uint64_t v)
{
    switch (dt) {
    case BP_U8: *(uint8_t *)p = (uint8_t)v; break;
    case BP_I8: *(int8_t *)p = (int8_t)low_bits_signed(v, 8); break;
    case BP_I32: *(int32_t *)p = (int32_t)low_bits_signed(v, 32); break;
    case BP_I16: *(int16_t *)p = (int16_t)low_bits_signed(v, 16); break;
    case BP_U16: *(uint16_t *)p = (uint16_t)v; break;
    case BP_U32: *(uint32_t *)p = (uint32_t)v; break;
    case BP_U64: *(uint64_t *)p = v; break;
    default: *(int64_t *)p = low_bits_signed(v, 64); break;
    }
}

/* bscr: K*N int64 (B made dense), arow: K, acc: N. */
static void gemm_int(const mat2 *A, const mat2 *B, const mat2 *C, int64_t M, int64_t N, int64_t K,
                     int64_t *bscr, int64_t *arow, uint64_t *acc)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            bscr[k * N + j] = ld_int(B->dt, mat_at(B, k, j));
    for (int64_t i = 0; i < M; i++) {
        for (int64_t k = 0; k < K; k++)
            arow[k] = ld_int(A->dt, mat_at(A, i, k));
        memset(acc, 0, (size_t)N * sizeof *acc);
        for (int64_t k = 0; k < K; k++) {
            uint64_t aik = (uint64_t)arow[k];
            const int64_t *brow = bscr + k * N;
            for (int64_t j = 0; j < N; j++)
                acc[j] += aik * (uint64_t)brow[j];
        }
        for (int64_t j = 0; j < N; j++)
            st_int_wrap(C->dt, mat_at(C, i, j), acc[j]);
    }
}

/* ---- the entry ---- */

static void zero_fill(const mat2 *C, int64_t M, int64_t N)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            memset(mat_at(C, i, j), 0, C->esz); /* all-zero bits is 0 in every dtype */
}

bp_status bpk_matmul(void *dev, const bp_view *a, const bp_view *b, const bp_view *out)
{
    int32_t r = out->rank;
    int64_t M = out->shape[r - 2], N = out->shape[r - 1], K = a->shape[r - 1];
    bp_dtype dt = out->dtype;
    if (bpk_numel(out) == 0)
        return BP_OK;

    /* batch dims: one iterator over the three views' leading axes */
    bp_view bv[3] = {*out, *a, *b};
    for (int v = 0; v < 3; v++) {
        bv[v].rank = r - 2;
        for (int32_t k = 0; k < r - 2; k++)
            bv[v].shape[k] = out->shape[k];
    }
    mat2 A = {bpk_base(a), a->strides[r - 2], a->strides[r - 1], bp_dtype_size(dt), dt};
    mat2 B = {bpk_base(b), b->strides[r - 2], b->strides[r - 1], bp_dtype_size(dt), dt};
    mat2 C = {bpk_base(out), out->strides[r - 2], out->strides[r - 1], bp_dtype_size(dt), dt};

    /* scratch: packed panels for floats (plus an f32 C for f16/bf16), dense
     * B, one A row and one accumulator row for integers */
    bool is_f32 = dt == BP_F32 || dt == BP_F16 || dt == BP_BF16, is_float = is_f32 || dt == BP_F64;
    size_t n1 = 0, n2 = 0, n3 = 0;
    if (K > 0 && is_float) {
        size_t esz = is_f32 ? sizeof(float) : sizeof(double);
        int64_t mc = min64(M, is_f32 ? MC_F32 : MC_F64), nc = min64(N, is_f32 ? NC_F32 : NC_F64);
        int64_t kc = min64(K, KC);
        n1 = (size_t)((mc + MR - 1) / MR * MR * kc) * esz;
        n2 = (size_t)((nc + NR - 1) / NR * NR * kc) * esz;
        n3 = dt == BP_F16 || dt == BP_BF16 ? (size_t)(M * N) * sizeof(float) : 0;
    } else if (K > 0) {
        n1 = (size_t)(K * N) * sizeof(int64_t);
        n2 = (size_t)K * sizeof(int64_t);
        n3 = (size_t)N * sizeof(uint64_t);
    }
    void *s1 = n1 ? alloc_aligned(n1) : NULL, *s2 = n2 ? alloc_aligned(n2) : NULL;
    void *s3 = n3 ? alloc_aligned(n3) : NULL;
    if ((n1 && !s1) || (n2 && !s2) || (n3 && !s3)) {
        free(s1), free(s2), free(s3);
        return bpk_fail(dev, BP_ERR_OUT_OF_MEMORY,
                        "matmul: no memory for %zu bytes of scratch (M=%lld N=%lld K=%lld)",
                        n1 + n2 + n3, (long long)M, (long long)N, (long long)K);
    }

    bpk_iter it;
    int64_t pos[3];
    bpk_iter_init(&it, 3, (const bp_view *[]){&bv[0], &bv[1], &bv[2]});
    while (bpk_iter_next(&it, pos)) {
        for (int64_t t = 0; t < it.inner; t++) {
            mat2 Ab = A, Bb = B, Cb = C;
            Cb.p += (pos[0] + t * it.inner_stride[0]) * (int64_t)C.esz;
            Ab.p += (pos[1] + t * it.inner_stride[1]) * (int64_t)A.esz;
            Bb.p += (pos[2] + t * it.inner_stride[2]) * (int64_t)B.esz;
            if (K == 0) {
                zero_fill(&Cb, M, N);
            } else if (dt == BP_F32) {
                gemm_f32(&Ab, &Bb, (float *)Cb.p, Cb.rs, Cb.cs, M, N, K, s1, s2);
            } else if (dt == BP_F64) {
                gemm_f64(&Ab, &Bb, (double *)Cb.p, Cb.rs, Cb.cs, M, N, K, s1, s2);
            } else if (is_f32) {
                float *tmp = s3;
                gemm_f32(&Ab, &Bb, tmp, N, 1, M, N, K, s1, s2);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        uint16_t h = dt == BP_F16 ? bp_f32_to_f16(tmp[i * N + j])
                                                  : bp_f32_to_bf16(tmp[i * N + j]);
                        *(uint16_t *)mat_at(&Cb, i, j) = h;
                    }
            } else {
                gemm_int(&Ab, &Bb, &Cb, M, N, K, s1, s2, s3);
            }
        }
    }
    free(s1), free(s2), free(s3);
    return BP_OK;
}
