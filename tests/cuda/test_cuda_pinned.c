/* The cuda backend's direct path for page-locked host memory
 * (backends/cuda/transfer.cu): writes from and reads into memory from
 * cudaMallocHost are one DMA instead of staging, and must move the same
 * bytes as the staged path. Skipped where no CUDA device opens. Built only
 * with the cuda plugin; linked against the CUDA runtime for cudaMallocHost. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bpt.h"

/* 4 MiB + 12 bytes of f32: over the direct path's 1 MiB threshold, not a
 * multiple of the staging chunk. */
#define N ((int64_t)(1 << 20) + 3)

static bp_backend *cuda_or_skip(bp_context *ctx)
{
    bp_backend *b = NULL;
    if (bp_backend_get(ctx, "cuda", &b) != BP_OK)
        cr_skip_test("no usable CUDA device: %s", bp_last_error());
    return b;
}

static void fill(float *p, int64_t n, float base)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = base + (float)i * 0.5f;
}

Test(cuda_pinned, writes_from_and_reads_into_page_locked_memory_byte_for_byte)
{
    bp_context *ctx = bpt_context();
    bp_backend *b = cuda_or_skip(ctx);
    size_t bytes = (size_t)N * sizeof(float);
    float *pinned = NULL, *pageable = malloc(bytes);
    cr_assert_not_null(pageable);
    cr_assert_eq(cudaMallocHost((void **)&pinned, bytes), cudaSuccess);
    int64_t n = N;

    /* pinned -> device -> pageable (direct write, staged read) */
    fill(pinned, N, 1.0f);
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(b, BP_F32, 1, &n, pinned, &t));
    memset(pinned, 0xff, bytes); /* the write has returned: the source is free */
    BPT_OK(bp_tensor_to_host(t, pageable, bytes));
    for (int64_t i = 0; i < N; i++)
        cr_assert_eq(pageable[i], 1.0f + (float)i * 0.5f, "element %lld", (long long)i);

    /* device -> pinned (direct read) */
    BPT_OK(bp_tensor_to_host(t, pinned, bytes));
    cr_assert_eq(memcmp(pinned, pageable, bytes), 0);
    bp_tensor_release(t);

    /* pageable -> device -> pinned (staged write, direct read) */
    fill(pageable, N, -7.0f);
    BPT_OK(bp_tensor_from_host(b, BP_F32, 1, &n, pageable, &t));
    BPT_OK(bp_tensor_to_host(t, pinned, bytes));
    cr_assert_eq(memcmp(pinned, pageable, bytes), 0);
    bp_tensor_release(t);

    cudaFreeHost(pinned);
    free(pageable);
    bp_context_destroy(ctx);
}
