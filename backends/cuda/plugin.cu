/* The cuda implementation's descriptor (bpcu_device.so): which file holds
 * each entry is in bpcu.h. The core never loads this file itself: bp_cuda.so
 * (front.c) loads it once a driver and a device exist, and forwards. */
#include <string.h>

#include "open.h"

static bool cuda_supports(void *dev, bp_op op, bp_dtype dtype)
{
    return bpcu_op_supported(op, dtype); /* the op table's dtypes, less support.c's gaps */
}

static bp_plugin make_descriptor(void)
{
    bp_plugin p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof(bp_plugin);
    p.abi_major = BP_ABI_MAJOR;
    p.abi_minor = BPCU_ABI_MINOR;
    p.name = "cuda";
    p.version = "0.1.0";
    p.description = "NVIDIA GPUs: CUDA runtime, cuBLAS and own kernels; checks each device's "
                    "compute capability against this build at load";
    p.config_keys = bpcu_config_keys;
    p.open = bpcu_open;
    p.close = bpcu_close;
    p.device_count = bpcu_device_count;
    p.device_info = bpcu_device_info;
    p.device_open = bpcu_device_open;
    p.device_close = bpcu_device_close;
    p.alloc = bpcu_alloc;
    p.free = bpcu_free;
    p.write = bpcu_write;
    p.read = bpcu_read;
    p.host_ptr = NULL;
    p.synchronize = bpcu_synchronize;
    p.memory_info = bpcu_memory_info;
    p.supports = cuda_supports;
    /* the typed entries of ABI 1.0 stay NULL: every op comes through op */
    p.deferred_error = bpcu_deferred_error;
    p.wrap = bpcu_wrap;
    p.buffer_address = bpcu_buffer_address;
    p.op = bpcu_op;
    return p;
}

static const bp_plugin cuda_plugin = make_descriptor();

extern "C" BP_PLUGIN_EXPORT const bp_plugin *bpcu_device_entry(void);
extern "C" BP_PLUGIN_EXPORT const bp_plugin *bpcu_device_entry(void) { return &cuda_plugin; }
