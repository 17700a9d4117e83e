/* A stand-in for the CUDA driver's libcuda.so.1, for `backplane cuda-check`
 * without arguments on machines without a GPU (tests/cli/cuda_check.sh puts
 * its folder first on LD_LIBRARY_PATH). It describes the GPUs the
 * environment names:
 *   FAKE_CUDA_DRIVER   the CUDA version the driver supports, CUDA's integer
 *                      (12090); 0 or unset: cuDriverGetVersion fails
 *   FAKE_CUDA_DEVICES  "12.0:NVIDIA GeForce RTX 5090,9.0:NVIDIA H100"; empty:
 *                      cuInit says CUDA_ERROR_NO_DEVICE
 * Only the calls cuda-check makes, with the driver API's signatures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NO_DEVICE 100
#define MAX_FAKE 8

typedef struct fake_gpu {
    int major, minor;
    char name[96];
} fake_gpu;

static int fake_devices(fake_gpu *out)
{
    const char *s = getenv("FAKE_CUDA_DEVICES");
    int n = 0;
    while (s && *s && n < MAX_FAKE) {
        size_t len = strcspn(s, ",");
        char entry[128];
        snprintf(entry, sizeof entry, "%.*s", (int)len, s);
        char *colon = strchr(entry, ':');
        if (sscanf(entry, "%d.%d", &out[n].major, &out[n].minor) == 2) {
            snprintf(out[n].name, sizeof out[n].name, "%s", colon ? colon + 1 : "Fake GPU");
            n++;
        }
        s += len + (s[len] == ',');
    }
    return n;
}

FAKE_EXPORT int cuDriverGetVersion(int *v);
FAKE_EXPORT int cuInit(unsigned flags);
FAKE_EXPORT int cuDeviceGetCount(int *n);
FAKE_EXPORT int cuDeviceGet(int *dev, int ordinal);
FAKE_EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev);
FAKE_EXPORT int cuDeviceGetName(char *name, int len, int dev);

int cuDriverGetVersion(int *v)
{
    const char *s = getenv("FAKE_CUDA_DRIVER");
    *v = s ? atoi(s) : 0;
    return *v > 0 ? 0 : CUDA_ERROR_INVALID_VALUE;
}

int cuInit(unsigned flags)
{
    fake_gpu g[MAX_FAKE];
    (void)flags;
    return fake_devices(g) > 0 ? 0 : CUDA_ERROR_NO_DEVICE;
}

int cuDeviceGetCount(int *n)
{
    fake_gpu g[MAX_FAKE];
    *n = fake_devices(g);
    return 0;
}

int cuDeviceGet(int *dev, int ordinal)
{
    fake_gpu g[MAX_FAKE];
    if (ordinal < 0 || ordinal >= fake_devices(g))
        return CUDA_ERROR_INVALID_VALUE;
    *dev = ordinal;
    return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    fake_gpu g[MAX_FAKE];
    if (dev < 0 || dev >= fake_devices(g) || (attr != 75 && attr != 76))
        return CUDA_ERROR_INVALID_VALUE;
    *v = attr == 75 ? g[dev].major : g[dev].minor; /* COMPUTE_CAPABILITY_MAJOR / _MINOR */
    return 0;
}

int cuDeviceGetName(char *name, int len, int dev)
{
    fake_gpu g[MAX_FAKE];
    if (dev < 0 || dev >= fake_devices(g) || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", g[dev].name);
    return 0;
}
