/* Error reporting, lost devices, and what every entry does first and last.
 *
 * The caller's CUDA state is the caller's. An application may use CUDA
 * itself on the same thread, on another device or with its own context, and
 * may have an error pending in the runtime's per-thread last-error slot. So
 * every entry (bpcu_scope, and bpcu_ctx_guard for the lifecycle ones):
 *
 *   - saves the thread's current context and makes the device's primary
 *     context current only if it is not already, and on return puts the
 *     saved one back exactly (NULL included) with the driver API:
 *     cudaGetDevice/cudaSetDevice cannot say or restore "no context", and
 *     cudaSetDevice(0) on the way out would create a context on device 0
 *     that the caller never asked for;
 *   - never calls cudaGetLastError while an error of the caller's may be
 *     pending, since that would consume it. Each of the plugin's own calls
 *     is checked by its return value (kernels are launched with
 *     cudaLaunchKernelEx, which returns the launch's status, instead of
 *     <<<>>> + cudaGetLastError). cudaPeekAtLastError, which does not
 *     reset, tells on entry whether the slot was clean; if it was and one of
 *     the entry's calls failed, the entry clears that error before it
 *     returns, so the caller finds the slot as it left it. If the caller had
 *     one pending and a call of ours failed too, the runtime keeps only the
 *     latest (ours) and offers no way to put the caller's back: the entry
 *     then leaves the slot alone. cuBLAS may read the slot itself; that is
 *     outside the plugin's control.
 *
 * Lost devices: errors that CUDA documents as leaving the context unusable
 * ("any further CUDA work will return the same error", driver_types.h) are
 * returned by every later call. The first one seen marks the device lost;
 * the message names the entry it surfaced in (the first failing op) and the
 * ops queued since the last successful synchronisation (the faulting kernel
 * is one of them, since errors of asynchronous work surface later), and
 * every later entry fails at once with it instead of reporting the same
 * fault as its own. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bpcu.h"

/* The op of the entry running on this thread, for the lost-device report. */
static thread_local const char *current_op = "";

/* ---- the driver calls (through the runtime: no libcuda link) -------------------- */

static bpcu_driver driver_api;
static std::once_flag driver_once;

template <class F> static void find(const char *name, F *fn)
{
    void *p = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        p = NULL;
    memcpy(fn, &p, sizeof p);
}

const bpcu_driver *bpcu_driver_api(void)
{
    std::call_once(driver_once, [] {
        find("cuCtxGetCurrent", &driver_api.ctx_get);
        find("cuCtxSetCurrent", &driver_api.ctx_set);
        find("cuDeviceGet", &driver_api.device_get);
        find("cuDevicePrimaryCtxRetain", &driver_api.primary_retain);
        find("cuDevicePrimaryCtxRelease", &driver_api.primary_release);
    });
    return &driver_api;
}

/* ---- errors ------------------------------------------------------------------------ */

bp_status bpcu_fail(bpcu_device *d, bp_status code, const char *fmt, ...)
{
    const bp_host_api *host = d ? d->host : NULL;
    if (host && host->set_error) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        host->set_error(host->host, "%s", msg);
    }
    return code;
}

/* The errors driver_types.h documents as leaving the process's context
 * unusable (numbers, so that an older toolkit's header still compiles). */
static bool sticky(cudaError_t e)
{
    static const int codes[] = {
        226, /* cudaErrorContained */           700, /* cudaErrorIllegalAddress */
        702, /* cudaErrorLaunchTimeout */       710, /* cudaErrorAssert */
        714, /* cudaErrorHardwareStackError */  715, /* cudaErrorIllegalInstruction */
        716, /* cudaErrorMisalignedAddress */   717, /* cudaErrorInvalidAddressSpace */
        718, /* cudaErrorInvalidPc */           719, /* cudaErrorLaunchFailure */
        721, /* cudaErrorTensorMemoryLeak */    810, /* cudaErrorMpsClientTerminated */
        911, /* cudaErrorExternalDevice */
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if ((int)e == codes[i])
            return true;
    return false;
}

/* Mark d lost by e (the first time only). */
static void lose(bpcu_device *d, cudaError_t e)
{
    std::lock_guard<std::mutex> lock(d->lost_mu);
    if (!d->lost.load()) {
        char ops[256] = "";
        uint64_t n = d->nrecent, first = n > BPCU_RECENT ? n - BPCU_RECENT : 0;
        for (uint64_t i = first; i < n; i++) {
            size_t len = strlen(ops);
            snprintf(ops + len, sizeof ops - len, "%s%s", i > first ? ", " : "",
                     d->recent[i % BPCU_RECENT]);
        }
        snprintf(d->lost_msg, sizeof d->lost_msg,
                 "cuda: device lost: cuda:%d (CUDA device %d) failed with %s (%s), first seen "
                 "by %s; the fault is in that op or in one queued before it since the last "
                 "successful synchronisation (%llu op%s%s%s%s); CUDA cannot recover the context "
                 "after this error, so every later call on this device fails with this message; "
                 "remedy: save what you can from other backends and restart the process; to "
                 "find the op, run with CUDA_LAUNCH_BLOCKING=1",
                 d->ordinal, d->ordinal, cudaGetErrorName(e), cudaGetErrorString(e),
                 current_op[0] ? current_op : "an entry", (unsigned long long)n,
                 n == 1 ? "" : "s", n ? ": " : "", n > BPCU_RECENT ? "the last ones " : "", ops);
        d->lost.store(true);
    }
}

bool bpcu_note_lost(bpcu_device *d, cudaError_t e)
{
    if (!sticky(e))
        return false;
    lose(d, e);
    return true;
}

bp_status bpcu_cuda_fail(bpcu_device *d, cudaError_t e, const char *fmt, ...)
{
    if (bpcu_note_lost(d, e)) {
        std::lock_guard<std::mutex> lock(d->lost_mu);
        return bpcu_fail(d, BP_ERR_BACKEND, "%s", d->lost_msg);
    }
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return bpcu_fail(d, e == cudaErrorMemoryAllocation ? BP_ERR_OUT_OF_MEMORY : BP_ERR_BACKEND,
                     "cuda: %s on device %d: %s (%s)", what, d->ordinal, cudaGetErrorString(e),
                     cudaGetErrorName(e));
}

void bpcu_synced(bpcu_device *d)
{
    std::lock_guard<std::mutex> lock(d->lost_mu);
    d->nrecent = 0;
}

static void record(bpcu_device *d, const char *op)
{
    std::lock_guard<std::mutex> lock(d->lost_mu);
    d->recent[d->nrecent++ % BPCU_RECENT] = op;
}

/* ---- entries ---------------------------------------------------------------------- */

bpcu_ctx_guard::bpcu_ctx_guard() : saved_(NULL), have_(false), clean_(false)
{
    clean_ = cudaPeekAtLastError() == cudaSuccess;
    const bpcu_driver *drv = bpcu_driver_api();
    have_ = drv->ctx_get && drv->ctx_set && drv->ctx_get(&saved_) == CUDA_SUCCESS;
}

bpcu_ctx_guard::~bpcu_ctx_guard()
{
    const bpcu_driver *drv = bpcu_driver_api();
    CUcontext now = NULL;
    if (have_ && drv->ctx_get(&now) == CUDA_SUCCESS && now != saved_)
        drv->ctx_set(saved_);
    if (clean_ && cudaPeekAtLastError() != cudaSuccess)
        (void)cudaGetLastError(); /* ours: the caller's slot was clean */
}

bpcu_scope::bpcu_scope(bpcu_device *d, const char *op, bool queues)
    : status(BP_OK), d_(d), outs_{NULL, NULL, NULL}, saved_(NULL), switched_(false),
      clean_(false), outer_op_(current_op)
{
    enter(op, queues);
}

bpcu_scope::bpcu_scope(bpcu_device *d, const char *op, const bp_view *out,
                       std::initializer_list<const bp_view *> inputs, const bp_view *out2,
                       const bp_view *out3)
    : status(BP_OK), d_(d), outs_{NULL, NULL, NULL}, saved_(NULL), switched_(false),
      clean_(false), outer_op_(current_op)
{
    enter(op, true);
    /* inputs were written or produced before, so they have memory; a
     * buffer that never was (its contents undefined) gets some rather than
     * a NULL pointer in a kernel */
    for (const bp_view *v : inputs)
        if (status == BP_OK && v)
            status = bpcu_materialize(d, (bpcu_buf *)v->buffer, d->stream);
    const bp_view *outs[3] = {out, out2, out3};
    for (int k = 0; k < 3; k++)
        if (status == BP_OK && outs[k]) {
            status = bpcu_materialize(d, (bpcu_buf *)outs[k]->buffer, d->stream);
            if (status == BP_OK)
                outs_[k] = (bpcu_buf *)outs[k]->buffer;
        }
}

void bpcu_scope::enter(const char *op, bool queues)
{
    bpcu_device *d = d_;
    if (d->lost.load()) {
        std::lock_guard<std::mutex> lock(d->lost_mu);
        status = bpcu_fail(d, BP_ERR_BACKEND, "%s", d->lost_msg);
        return;
    }
    current_op = op;
    clean_ = cudaPeekAtLastError() == cudaSuccess;
    const bpcu_driver *drv = bpcu_driver_api();
    CUresult r = drv->ctx_get(&saved_);
    if (r == CUDA_SUCCESS && saved_ != d->ctx) {
        r = drv->ctx_set(d->ctx);
        switched_ = r == CUDA_SUCCESS;
    }
    if (r != CUDA_SUCCESS) {
        status = bpcu_fail(d, BP_ERR_BACKEND, "cuda: cannot make device %d's context current "
                           "(driver error %d)", d->ordinal, (int)r);
        return;
    }
    if (queues)
        record(d, op);
}

bpcu_scope::~bpcu_scope()
{
    /* behind whatever the op queued (nothing, if it failed before) */
    for (int k = 0; k < 3; k++) {
        if (!outs_[k])
            continue;
        cudaError_t e = bpcu_mark_written(d_, outs_[k], d_->stream);
        if (e != cudaSuccess)
            bpcu_note_lost(d_, e);
    }
    if (clean_ && cudaPeekAtLastError() != cudaSuccess)
        (void)cudaGetLastError(); /* ours: the caller's slot was clean */
    if (switched_)
        bpcu_driver_api()->ctx_set(saved_);
    current_op = outer_op_;
}
