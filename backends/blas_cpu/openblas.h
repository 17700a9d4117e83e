/* OpenBLAS as blas_cpu calls it, whichever build it links (CMake's
 * BP_OPENBLAS). The system's OpenBLAS (Debian's libopenblas-dev) exports
 * cblas_sgemm and openblas_*; PyPI's scipy-openblas32 (the OpenBLAS of
 * NumPy's wheels) exports the same functions with a prefix
 * (scipy_cblas_sgemm, scipy_openblas_get_config), declares only those names
 * in its cblas.h, and its build defines BLAS_SYMBOL_PREFIX=scipy_ (as its
 * pkg-config file says). The plugin's sources include this header instead
 * of <cblas.h> and keep the plain names: a call this list misses is an
 * implicit declaration, an error under -Werror, never a silent link to
 * another OpenBLAS. */
#ifndef BPC_OPENBLAS_H
#define BPC_OPENBLAS_H

#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>

#include "backplane/dtype.h"

#ifdef BLAS_SYMBOL_PREFIX
#define BPC_BLAS_CAT_(a, b) a##b
#define BPC_BLAS_CAT(a, b) BPC_BLAS_CAT_(a, b)
#define BPC_BLAS(name) BPC_BLAS_CAT(BLAS_SYMBOL_PREFIX, name)
#define cblas_sgemm BPC_BLAS(cblas_sgemm)
#define cblas_dgemm BPC_BLAS(cblas_dgemm)
#define cblas_sgemv BPC_BLAS(cblas_sgemv)
#define cblas_dgemv BPC_BLAS(cblas_dgemv)
#define openblas_set_num_threads BPC_BLAS(openblas_set_num_threads)
#define openblas_get_config BPC_BLAS(openblas_get_config)
#define openblas_get_corename BPC_BLAS(openblas_get_corename)
#endif

/* C = alpha op(A) op(B) + beta C, cblas's row-major arguments, f32 or f64
 * (alpha and beta go to sgemm as floats), on the device's pool: blocks of
 * C's longer side, one single-threaded OpenBLAS call each (gemm.c); with
 * d NULL (a caller already on the pool), one call on this thread. */
struct bpc_dev;
void bpc_gemm_on_pool(struct bpc_dev *d, bp_dtype dt, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,
                      int64_t m, int64_t n, int64_t k, double alpha, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c, int64_t ldc);

/* A product with one row or one column of C (m or n is 1) as one
 * single-threaded cblas_?gemv, which packs nothing (sgemm packed all of the
 * other matrix on every call: an LSTM step's 1 x 128 by 128 x 512, a
 * convolution with one output position); false, doing nothing, otherwise. */
bool bpc_gemm_as_gemv(bp_dtype dt, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                      int64_t k, double alpha, const void *a, int64_t lda, const void *b,
                      int64_t ldb, double beta, void *c, int64_t ldc);

/* Which OpenBLAS this build links, for `backplane info` (set by CMake). */
#ifndef BPC_OPENBLAS_FROM
#define BPC_OPENBLAS_FROM "unknown"
#endif

#endif
