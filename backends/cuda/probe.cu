/* The probe: one thread writes a known value that the host reads back,
 * proving that a device the compute-capability check accepted really runs
 * this build's kernels. Called by open() under its bpcu_ctx_guard. */
#include <stdio.h>

#include "open.h"

__global__ void bpcu_k_probe(int *p) { *p = 0x62706375; /* "bpcu" */ }

cudaError_t bpcu_probe(int ordinal, const bpcu_decision *dec, char *buf, size_t size)
{
    buf[0] = '\0';
    int *p = NULL, v = 0;
    cudaError_t e = cudaSetDevice(ordinal);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&p, sizeof *p);
    if (e == cudaSuccess) {
        e = bpcu_launch(0, 1, 1, 0, bpcu_k_probe, p);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e == cudaSuccess)
            e = cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost);
        cudaFree(p);
    }
    if (e == cudaErrorNoKernelImageForDevice) {
        snprintf(buf, size,
                 "the probe kernel found no kernel image for this device "
                 "(cudaErrorNoKernelImageForDevice) although the check decided %s (%s): %s",
                 bpcu_verdict_name(dec->verdict), dec->image[0] ? dec->image : "no image",
                 dec->verdict == BPCU_FORCED ? "the forced device cannot run this build"
                                             : "a build defect, please report it");
    } else if (e != cudaSuccess) {
        snprintf(buf, size, "the probe kernel failed: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
    } else if (v != 0x62706375) {
        snprintf(buf, size, "the probe kernel ran but wrote a wrong value (0x%x)", (unsigned)v);
    }
    return e;
}

void bpcu_probe_remedy(cudaError_t e, int xy, char *buf, size_t size)
{
    if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage ||
        e == cudaErrorInvalidPtx || e == cudaErrorUnsupportedPtxVersion ||
        e == cudaErrorJitCompilerNotFound || e == cudaSuccess)
        snprintf(buf, size, "rebuild with CMAKE_CUDA_ARCHITECTURES including %d-real (or update "
                 "the driver if only PTX fits), or choose another backend", xy);
    else
        snprintf(buf, size, "check the device with nvidia-smi (busy in exclusive-process mode, "
                 "out of memory, or in an error state), or choose another backend");
}
