/* [backend.cuda]: the keys the cuda plugin accepts and their parsed values
 * (plain C, config.c). Parsed at open, before the driver is asked, so a bad
 * value is reported on machines without a GPU too. */
#ifndef BPCU_CONFIG_H
#define BPCU_CONFIG_H

#include <stdbool.h>

#include <backplane/plugin.h>

#include "cc_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin ABI the cuda plugin implements: 1.9. The dtypes of 1.10 (i16,
 * u16, u32) and 1.11 (u64) have no cuda kernels yet, so the core makes no
 * tensor of them on cuda (a clear BP_ERR_DTYPE naming bp_cast). */
#define BPCU_ABI_MINOR 9

#define BPCU_MAX_DEVICES 64

typedef struct bpcu_config {
    bool all_devices;              /* devices = all (the default) */
    int ndev;
    int devices[BPCU_MAX_DEVICES]; /* else these CUDA device numbers */
    double memory_fraction;        /* cap of each device's pool, (0, 1] */
    bool tf32;                     /* f32 matmul may use TF32 */
    bool jit;                      /* allow_ptx_jit */
    unsigned long long pool_keep_mb; /* bp_backend_synchronize trims the pool to this */
    int staging_threads;           /* threads copying through pinned staging */
    bool cudnn;                    /* cudnn = auto: convolutions may use cuDNN */
    bpcu_cc_list allow, deny;      /* allow_cc, deny_cc */
} bpcu_config;

/* The keys, NULL-terminated, for the descriptor's config_keys. */
extern const bp_config_key bpcu_config_keys[];

/* Read every key through h into *c (defaults for unset ones). A bad value is
 * reported with h->config_error and returns BP_ERR_CONFIG. */
bp_status bpcu_read_config(const bp_host_api *h, bpcu_config *c);

#ifdef __cplusplus
}
#endif
#endif
