/* What open() found: the backend's state and each exposed device's record
 * (open.cu fills them; device.cu opens a device from its record), and the
 * probe that proves a device can run this build (probe.cu). */
#ifndef BPCU_OPEN_H
#define BPCU_OPEN_H

#include "bpcu.h"
#include "config.h"

typedef struct bpcu_devrec {
    int ordinal;
    char name[128];
    int major, minor;
    uint64_t total;
    bpcu_decision dec;
} bpcu_devrec;

typedef struct bpcu_state {
    const bp_host_api *host;
    int driver, runtime;
    double memory_fraction;
    bool tf32;
    uint64_t pool_keep;            /* bytes */
    int staging_threads;
    bool cudnn;                    /* convolutions may use cuDNN (dnn.cu) */
    int count;                     /* exposed devices */
    bpcu_devrec dev[BPCU_MAX_DEVICES];
} bpcu_state;

/* lifecycle entries (plugin.h): open.cu, device.cu */
bp_status bpcu_open(const bp_host_api *host, void **state);
void bpcu_close(void *state);
int32_t bpcu_device_count(void *state);
bp_status bpcu_device_info(void *state, int32_t index, bp_device_info *info);
bp_status bpcu_device_open(void *state, int32_t index, void **dev);
void bpcu_device_close(void *dev);

/* Launch the probe kernel on ordinal; "" in buf on success, else why. Returns
 * the CUDA error (cudaSuccess also when the kernel wrote a wrong value). */
cudaError_t bpcu_probe(int ordinal, const bpcu_decision *dec, char *buf, size_t size);

/* The remedy for a device whose probe failed with e; xy is its CC as in sm_XY. */
void bpcu_probe_remedy(cudaError_t e, int xy, char *buf, size_t size);

#endif
