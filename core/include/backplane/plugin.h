/* backplane: the whole plugin ABI. A backend plugin includes only this header.
 *
 * A plugin is a shared object exporting one symbol,
 *
 *     BP_PLUGIN_EXPORT const bp_plugin *bp_plugin_entry(void);
 *
 * returning a descriptor that lives as long as the object stays loaded. A
 * plugin never links libbackplane: what it needs from the core (logging, its
 * own [backend.NAME] configuration keys, error detail) comes in bp_host_api.
 *
 * Versioning (see the PJRT C API and sqlite3_io_methods): every struct that
 * crosses the boundary starts with uint32_t struct_size. Members are only
 * ever appended, with a minor bump. The loader refuses a different major or a
 * descriptor smaller than the v1.0 layout; the core calls an appended member
 * only when struct_size covers it and the pointer is non-NULL.
 *
 * What the core guarantees before any op entry is called, so a plugin need not
 * check: every view's dtype is valid and one the op accepts (and that
 * supports() accepted), shapes agree (operands are presented already broadcast
 * to the output's shape, stride 0 on broadcast dimensions), axes and indices
 * are in range, every buffer was allocated by this same device, outputs are
 * freshly allocated and never alias inputs, element counts and byte sizes do
 * not overflow. Views may have zero elements; the entry must then succeed
 * without touching memory (an op whose every view is empty is not called).
 *
 * Threads: entries may be called from several threads at once, on the same
 * device, for different outputs. A plugin guards any state it shares.
 *
 * Errors: an entry returns a bp_status; for anything but BP_OK it should call
 * host->set_error() first with what went wrong (the core adds the backend and
 * op names). A plugin never aborts, never exits and never writes to stdout. */
#ifndef BACKPLANE_PLUGIN_H
#define BACKPLANE_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "export.h"
#include "opcodes.h"
#include "philox.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* History (members are only appended; a plugin built for an older minor
 * loads unchanged, and the core calls nothing it lacks):
 *   1.0  the descriptor up to `random`.
 *   1.1  config_key_size: bp_config_key may grow (its array is walked with the
 *        plugin's element size).
 *   1.2  deferred_error: errors found while running queued work (an index
 *        out of range in a gather) are reported at the next synchronising
 *        call; a plugin with it checks gather's indices itself.
 *   1.3  wrap and buffer_address: zero-copy exchange (a mapped checkpoint,
 *        DLPack tensors of other libraries).
 *   1.4  op: every op added since (the op table's rows with SINCE 4) comes
 *        through this one entry, with bp_op_params; a plugin built for an
 *        older minor is never asked for one.
 *   1.5  the neural-network ops (the op table's rows with SINCE 5: conv ..
 *        resize), and bp_op_params holds 16 integers and 16 reals where
 *        1.4's held 6 of each. A 1.4 plugin is handed its own layout
 *        (bp_op_params_1_4, below), so the reals of its ops (elu's alpha,
 *        gemm's beta) arrive where it reads them.
 *   1.6  every op comes through `op`, the ops of 1.0 too, their parameters
 *        in bp_op_params as opcodes.h's bp_op_kind lays them out (a
 *        reduction's n_reduce in i[0], fill's element in i[0]'s bytes,
 *        arange's start and step in f[0], f[1] ...). The typed entries of
 *        1.0 (unary .. random) are called only for plugins built before
 *        1.6, which keep working unchanged; a plugin of 1.6 leaves them
 *        NULL. No member was added: only what the core sends changed.
 *   1.7  celu (the op table's rows with SINCE 7). No member was added.
 *   1.8  mish (the op table's rows with SINCE 8). No member was added.
 *   1.9  fused_takes and fused_run: a compiled graph's chains of elementwise
 *        ops (bp_fused_group) in one call, where the plugin takes them.
 *   1.10 the dtypes i16, u16 and u32 (dtype.h). No member was added: the
 *        core makes no tensor of them on a plugin built before 1.10, and a
 *        plugin of 1.10 that lacks them for an op says so in supports().
 *   1.11 the dtype u64 (dtype.h), on the same terms as 1.10's.
 *   1.12 a fused group's last step may be a reduction (bp_fused_group). No
 *        member was added: the core sends such groups only to plugins
 *        built for 1.12 or later, whose fused_takes may decline them.
 *   1.13 prepare, prepared_op and prepared_free: a compiled plan's nodes
 *        that read constants, prepared once at compile. The core calls
 *        them only where the plugin's struct_size holds all three. (The
 *        members arrived with the minor left at 12; plugins built then
 *        report 1.12 and are still prepared, by their struct_size.)
 *   1.14 prepare_epilogue: a prepared node that also applies the
 *        elementwise op after it (a convolution's Relu) as it writes its
 *        output. The core asks only where the plugin's struct_size holds
 *        it.
 *   1.15 prepare_epilogues and bp_epilogue_step: a prepared node that
 *        also applies a chain of elementwise ops after it, binary ones
 *        with an operand the plan holds (a residual network's add, then
 *        its Relu). The core asks only where the plugin's struct_size
 *        holds it. */
#define BP_ABI_MAJOR 1
#define BP_ABI_MINOR 15

/* Memory kinds, numbered as DLPack numbers device types (DLDeviceType), so
 * that exchange needs no translation. */
#define BP_MEMORY_HOST 1       /* kDLCPU: plain host memory */
#define BP_MEMORY_CUDA 2       /* kDLCUDA: CUDA device memory */
#define BP_MEMORY_CUDA_HOST 3  /* kDLCUDAHost: pinned host memory */

typedef enum bp_log_level {
    BP_LOG_DEBUG = 0,
    BP_LOG_INFO = 1,
    BP_LOG_WARN = 2,
    BP_LOG_ERROR = 3,
    BP_LOG_OFF = 4
} bp_log_level;

/* A strided window onto one backend buffer. Element (i0, ..., i_{r-1}) is at
 * byte  offset + (sum_k i_k * strides[k]) * dtype_size  of buffer. */
typedef struct bp_view {
    uint32_t struct_size;          /* sizeof(bp_view) as the core knows it */
    void *buffer;                  /* a handle from this device's alloc() */
    int64_t offset;                /* byte offset of element (0, ..., 0) */
    bp_dtype dtype;                /* element type */
    int32_t rank;                  /* 0 .. BP_MAX_RANK; 0 is one element */
    int64_t shape[BP_MAX_RANK];    /* extents, >= 0 */
    int64_t strides[BP_MAX_RANK];  /* in elements; 0 broadcasts; may be negative */
} bp_view;

/* One key a plugin accepts in its [backend.NAME] section. The descriptor's
 * config_keys array is walked with its config_key_size (ABI 1.1; 1.0 plugins:
 * the three members below), so members are only appended here. */
typedef struct bp_config_key {
    const char *name;              /* key, e.g. "threads"; NULL ends the list */
    const char *help;              /* one line for `backplane info` and docs */
    const char *default_value;     /* (optional) shown when the key is unset */
    /* Members above are valid for ABI 1.0. */
} bp_config_key;

/* What the core offers a plugin. Valid from open() until close() returns. */
typedef struct bp_host_api {
    uint32_t struct_size;
    uint32_t abi_major, abi_minor; /* the core's ABI version */
    void *host;                    /* pass back as the first argument below */
    /* Log at a level; dropped below the configured level. No trailing newline. */
    void (*log)(void *host, bp_log_level level, const char *fmt, ...);
    /* Value of `key` in this plugin's [backend.NAME] section, or NULL if unset. */
    const char *(*config_get)(void *host, const char *key);
    /* Report a bad value for `key`: the core names the file and line. Returns
     * BP_ERR_CONFIG for the plugin to return from open(). */
    bp_status (*config_error)(void *host, const char *key, const char *fmt, ...);
    /* Set the detail for the error the current entry is about to return. */
    void (*set_error)(void *host, const char *fmt, ...);
} bp_host_api;

typedef struct bp_device_info {
    uint32_t struct_size;
    char name[128];                /* human name, e.g. "NVIDIA H100 80GB HBM3" */
    char detail[512];              /* one line: capability, versions, threads... */
    bool host_addressable;         /* buffers are plain host memory (see host_ptr) */
} bp_device_info;

typedef struct bp_memory_info {
    uint32_t struct_size;
    uint64_t used;                 /* bytes held by live buffers */
    uint64_t reserved;             /* bytes held by the plugin's pool/cache */
    uint64_t device_free;          /* bytes free on the device (0 if unknown) */
    uint64_t device_total;         /* bytes on the device (0 if unknown) */
} bp_memory_info;

/* The parameters of an op beyond its views (ABI 1.4; widened in 1.5). What
 * each op reads is written with its kind (bp_op_kind) and beside its row in
 * opcodes.h; the rest is zero. */
typedef struct bp_op_params {
    uint32_t struct_size;          /* sizeof(bp_op_params) as the core knows it */
    int64_t i[16];                 /* integer parameters (axis, k, flags, modes, windows) */
    double f[16];                  /* real parameters (alpha, beta, epsilon, scales) */
} bp_op_params;

/* bp_op_params as ABI 1.4 laid it out: what the core hands the op entry of
 * a plugin whose abi_minor is 4 (the ops of 1.4 read at most i[1] and f[1]).
 * A plugin built for 1.5 or later never sees it. */
typedef struct bp_op_params_1_4 {
    uint32_t struct_size;          /* sizeof(bp_op_params_1_4) */
    int64_t i[6];
    double f[6];
} bp_op_params_1_4;

/* A fused group (ABI 1.9): consecutive elementwise ops of a compiled graph
 * (the UNARY, BINARY and WHERE kinds, and CAST), every one over the same
 * shape, handed to a plugin as one small program so that it can run them in
 * one pass over memory (in cache-sized blocks on a CPU, one kernel on a
 * GPU). Step s computes
 *
 *     r_s = op_s(operands)   where operand j is  arg[j] >= 0 ? r_arg[j]
 *                                                          : in[-1 - arg[j]]
 *
 * element by element, as the op entry would with views of the group's shape
 * (inputs broadcast as there, stride 0), its parameters `params` and its
 * result of dtype `dtype`; arg[j] >= 0 names an earlier step. The results
 * named by out_step go to the out views; every other r_s lives only inside
 * the call. Each op's row and the core's guarantees for it hold per step
 * (dtypes the op accepts, shapes); the out views are dense (row-major) and
 * never overlap an in view. A plugin's result must be one the ops run one by
 * one could give: blas_cpu's is bit for bit the same.
 *
 * From ABI 1.12 the last step may be an op of the REDUCE kind (sum, mean,
 * max, argmax, var, ...) of an earlier step's result: its one arg names
 * that step, its params.i[0] counts the reduced axes, which are the
 * trailing axes of the group's shape (the in views' shape), and its out
 * view is the reduced value. The group's other steps keep the group's
 * shape. A plugin that does not run reductions in a group declines the
 * group in fused_takes; the core then offers the group without it. */
#define BP_FUSED_MAX_STEPS 32
#define BP_FUSED_MAX_ARGS 3
typedef struct bp_fused_step {
    bp_op op;
    int32_t n_args;                     /* the op's inputs: 1 .. 3 */
    int32_t arg[BP_FUSED_MAX_ARGS];     /* >= 0: an earlier step; < 0: in[-1 - arg] */
    bp_dtype dtype;                     /* the result's dtype */
    const bp_op_params *params;         /* as the op entry gets them */
} bp_fused_step;

typedef struct bp_fused_group {
    uint32_t struct_size;               /* sizeof(bp_fused_group) as the core knows it */
    int32_t n_steps;                    /* 2 .. BP_FUSED_MAX_STEPS */
    const bp_fused_step *steps;
    int32_t n_in;                       /* in views */
    int32_t n_out;                      /* out views, >= 1 */
    const int32_t *out_step;            /* per out view: the step whose result it gets */
} bp_fused_group;

/* One step of a prepared node's epilogue chain (prepare_epilogues, ABI
 * 1.15): an elementwise op of the UNARY or BINARY kind applied to the value
 * so far, v = op(v) or, BINARY, v = op(v, operand) (operand_first: op(operand,
 * v)), each rounded to the dtype as the op entry would round it, so that a
 * result is one the nodes run one by one could give. A BINARY step's
 * operand has v's shape and dtype (never broadcast here) and is the next
 * of the operands after the node's inputs. */
#define BP_EPILOGUE_MAX_STEPS 4
typedef struct bp_epilogue_step {
    uint32_t struct_size;               /* sizeof(bp_epilogue_step) as the core knows it */
    bp_op op;
    const bp_op_params *params;         /* as the op entry gets them */
    bool operand_first;                 /* BINARY: the operand is the op's first input */
} bp_epilogue_step;

/* What a plugin's op entry does first: *out = the parameters the core sent,
 * in this header's layout. A core older than this header sends a smaller
 * struct (what it lacks reads as 0); a core of ABI 1.4 sends 1.4's layout,
 * recognised by its struct_size. params may be NULL (all zero). */
static inline void bp_op_params_read(const bp_op_params *params, bp_op_params *out)
{
    size_t k;
    uint32_t n;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (!params)
        return;
    memcpy(&n, params, sizeof n); /* as bytes: the struct may be 1.4's, smaller than ours */
    if (n > sizeof(bp_op_params_1_4)) {
        memcpy(out, params, n < sizeof *out ? n : sizeof *out);
    } else {
        bp_op_params_1_4 old;
        memset(&old, 0, sizeof old);
        memcpy(&old, params, n);
        for (k = 0; k < 6; k++) {
            out->i[k] = old.i[k];
            out->f[k] = old.f[k];
        }
    }
    out->struct_size = sizeof *out; /* the copy brought the core's */
}

/* The same parameters without the copy where none is needed: params itself
 * when the core sent this header's layout, else *scratch, filled by
 * bp_op_params_read. (The copy is a few hundred bytes, on every op.) */
static inline const bp_op_params *bp_op_params_get(const bp_op_params *params,
                                                   bp_op_params *scratch)
{
    uint32_t n = 0;
    if (params)
        memcpy(&n, params, sizeof n);
    if (n == sizeof *params)
        return params;
    bp_op_params_read(params, scratch);
    return scratch;
}

/* The descriptor. `dev` below is a handle from device_open(). */
typedef struct bp_plugin {
    uint32_t struct_size;          /* sizeof(bp_plugin) as the plugin was built */
    uint32_t abi_major;            /* BP_ABI_MAJOR the plugin was built against */
    uint32_t abi_minor;            /* BP_ABI_MINOR the plugin was built against */
    const char *name;              /* backend name: [a-z0-9_]+, e.g. "binary" */
    const char *version;           /* the plugin's own version, e.g. "0.1.0" */
    const char *description;       /* one line */
    const bp_config_key *config_keys; /* (optional) keys of [backend.NAME], NULL-terminated */

    /* -- lifecycle -- */
    /* Read config, find devices. On failure set_error() says why (shown by
     * `backplane info` and when the preference list skips this backend). */
    bp_status (*open)(const bp_host_api *host, void **state);
    void (*close)(void *state);                       /* after every device_close */
    int32_t (*device_count)(void *state);             /* devices exposed, >= 0 */
    bp_status (*device_info)(void *state, int32_t index, bp_device_info *info);
    bp_status (*device_open)(void *state, int32_t index, void **dev);
    void (*device_close)(void *dev);                  /* after every buffer is freed */

    /* -- buffers (owned by the backend; the core keeps metadata/refcounts) -- */
    bp_status (*alloc)(void *dev, size_t bytes, void **buffer); /* bytes may be 0 */
    void (*free)(void *dev, void *buffer);
    /* Host -> buffer. May return before the copy ends only if src may be reused. */
    bp_status (*write)(void *dev, void *buffer, size_t offset, const void *src, size_t bytes);
    /* Buffer -> host; waits for pending work on the buffer (synchronises). */
    bp_status (*read)(void *dev, const void *buffer, size_t offset, void *dst, size_t bytes);
    void *(*host_ptr)(void *dev, void *buffer);       /* (optional) host address if host-addressable */
    bp_status (*synchronize)(void *dev);              /* (optional) wait for all queued work */
    bp_status (*memory_info)(void *dev, bp_memory_info *info); /* (optional) */

    /* -- ops: a plugin built for ABI 1.6 or later takes every op through
     * `op` (below) and leaves the typed entries from unary to random NULL;
     * the core calls them only for a plugin built before 1.6. Each is
     * optional: NULL means every op of the family is unsupported. -- */
    /* (optional) false if the op is unsupported for this input dtype (the
     * dtype of the input its op table row types it by); NULL: every op whose
     * entry is non-NULL is supported for every dtype the core accepts. For
     * CAST it is asked for both the source and the target. */
    bool (*supports)(void *dev, bp_op op, bp_dtype dtype);
    /* UNARY: out[i] = f(x[i]); x and out have the same shape. */
    bp_status (*unary)(void *dev, bp_op op, const bp_view *x, const bp_view *out);
    /* BINARY: out[i] = f(a[i], b[i]); a, b broadcast to out's shape. */
    bp_status (*binary)(void *dev, bp_op op, const bp_view *a, const bp_view *b, const bp_view *out);
    /* WHERE: out[i] = cond[i] ? a[i] : b[i]; all broadcast to out's shape. */
    bp_status (*where)(void *dev, const bp_view *cond, const bp_view *a, const bp_view *b,
                       const bp_view *out);
    /* REDUCE: x's last n_reduce axes are reduced (the core moves them there);
     * out has x's leading rank - n_reduce axes. n_reduce >= 0; a reduction over
     * zero elements gives the identity (sum 0, prod 1, max/min/argmax/argmin
     * are refused by the core, mean NaN, logsumexp -inf). ARGMAX/ARGMIN give
     * the row-major index within the reduced axes (i64), first on ties, a NaN
     * wins over any number. out's dtype is x's (i64 for ARG*). Floats
     * accumulate in f64, integers in 64 bits (wrapping, never UB). */
    bp_status (*reduce)(void *dev, bp_op op, const bp_view *x, int32_t n_reduce, const bp_view *out);
    /* MATMUL: a [..., M, K] x b [..., K, N] -> out [..., M, N]; a, b, out have
     * the same rank >= 2 and batch dims already broadcast (stride 0). */
    bp_status (*matmul)(void *dev, const bp_view *a, const bp_view *b, const bp_view *out);
    /* MOVEMENT: out[i] = convert(src[i]) over out's shape; src has the same
     * shape, any strides. dtypes differ only when op is CAST (see the cast
     * rules of cast.h: NaN -> 0, saturate, f -> bool is x != 0). */
    bp_status (*copy)(void *dev, bp_op op, const bp_view *src, const bp_view *out);
    /* GATHER: out = x.take(indices, axis) (ONNX Gather). indices is i32 or i64;
     * negative ones count from the end. out shape = x[:axis] + indices +
     * x[axis+1:]. The core has checked that every index lies in [-dim, dim),
     * unless the plugin has deferred_error (below): then it must check them
     * itself and defer an error for an index out of range. */
    bp_status (*gather)(void *dev, const bp_view *x, const bp_view *indices, int32_t axis,
                        const bp_view *out);
    /* SOFTMAX / LOG_SOFTMAX over the last axis of x (the core moves it there);
     * out has x's shape. Numerically stable (subtract the max). */
    bp_status (*softmax)(void *dev, bp_op op, const bp_view *x, const bp_view *out);
    /* FILL: every element of out (any strides) = *value, one element of out's dtype. */
    bp_status (*fill)(void *dev, const bp_view *out, const void *value);
    /* ARANGE: out is rank 1; out[i] = start + i * step in double, then cast. */
    bp_status (*arange)(void *dev, double start, double step, const bp_view *out);
    /* RANDOM_UNIFORM (p0 = low, p1 = high) / RANDOM_NORMAL (p0 = mean,
     * p1 = stddev), exactly as philox.h defines; out is a float dtype. */
    bp_status (*random)(void *dev, bp_op op, uint64_t seed, uint64_t offset, double p0, double p1,
                        const bp_view *out);
    /* Members above are valid for ABI 1.0. */

    /* sizeof(bp_config_key) as the plugin was built (0: the 1.0 layout). */
    uint32_t config_key_size;
    /* Members above are valid for ABI 1.1. */

    /* (optional) Take the error found while running queued work, if any: BP_OK
     * when there is none; else its status (BP_ERR_INDEX for a gather index out
     * of range) after set_error() with a message that names the op and what
     * was wrong (for gather: the axis, the first bad index and its flat
     * position). The error is then cleared. The core asks after every
     * synchronising call on the device (read, synchronize), so an error
     * surfaces at the first call that waited for the failing work (a read of
     * its output or of anything queued after it). A plugin with this entry checks
     * gather's indices itself, on the device: the core then never reads them
     * to the host first, which would synchronise. */
    bp_status (*deferred_error)(void *dev);
    /* Members above are valid for ABI 1.2. */

    /* (optional) A buffer that is existing memory rather than new memory: the
     * pages of a mapped checkpoint, another library's tensor. `memory` is
     * `bytes` bytes of the given kind (BP_MEMORY_*) on this device, aligned
     * to at least the element size of the tensor that will use it, and
     * readable until release is called. The core never writes to such a
     * buffer (tensors are immutable; outputs are always new buffers). free()
     * of it must not free the memory: it calls release(release_ctx) exactly
     * once, from any thread, after any queued work using the buffer ended.
     * BP_ERR_UNSUPPORTED_OP when this device cannot use memory of that kind:
     * the core then copies instead. */
    bp_status (*wrap)(void *dev, int32_t kind, void *memory, size_t bytes,
                      void (*release)(void *release_ctx), void *release_ctx, void **buffer);
    /* (optional) Where a buffer's bytes are, for handing them to another
     * library without a copy: the kind (BP_MEMORY_*), the device's index for
     * that kind, the address of byte 0. Host-addressable backends need not
     * have it (the core uses host_ptr: BP_MEMORY_HOST, device 0). */
    bp_status (*buffer_address)(void *dev, void *buffer, int32_t *kind, int32_t *device_id,
                                void **address);
    /* Members above are valid for ABI 1.3. */

    /* (optional) Every op of the op table (opcodes.h; for a plugin built
     * before ABI 1.6 only those of 1.4 and later): in[0 .. n_in) and
     * out[0 .. n_out) are the views its row's IN and OUT name, in that
     * order; an optional one that was not given is NULL. params as
     * opcodes.h's bp_op_kind and the row say. The core's guarantees above
     * hold for each (dtypes the op accepts, shapes, fresh outputs, indices
     * in range unless the plugin has deferred_error). */
    bp_status (*op)(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                    const bp_view *const *in, int32_t n_out, const bp_view *const *out);
    /* Members above are valid for ABI 1.4. */

    /* (optional, with fused_run) Whether this device runs group g in one
     * call, asked once when a graph is compiled: the views are the ones
     * fused_run will get, their buffers NULL (the memory is not chosen yet).
     * false: the core runs the group's ops one by one through `op`. */
    bool (*fused_takes)(void *dev, const bp_fused_group *g, const bp_view *const *in,
                        const bp_view *const *out);
    /* (optional) Run a group that fused_takes accepted, at the point of the
     * plan where its ops would run. Errors as an op entry's. */
    bp_status (*fused_run)(void *dev, const bp_fused_group *g, const bp_view *const *in,
                           const bp_view *const *out);
    /* Members above are valid for ABI 1.9. */

    /* (optional, with prepared_op and prepared_free) The work of a compiled
     * graph's node that depends only on its constants (tensors the graph
     * captured: a model's weights), done once when the plan compiles
     * instead of at every run: a convolution's weights reordered for the
     * kernel, an algorithm chosen. Asked once for each node that the plan
     * runs alone (not in a fused group), whose views are not empty and
     * that reads at least one constant, with the views and parameters its
     * op entry would get: a constant's view has its buffer (readable
     * during the call; the constant never changes while the plan holds
     * it), every other view a NULL buffer. BP_OK with *prepared NULL:
     * nothing to prepare, the node runs through `op`. Otherwise the node
     * runs through prepared_op with *prepared, for as long as the plan
     * reads the constants it was prepared with (a node whose constant was
     * replaced by bp_graph_exec_bind runs through `op` again). Its result
     * is one the op's row allows (the conformance tolerances), not
     * necessarily op's bits. A failure (out of memory) fails the compile. */
    bp_status (*prepare)(void *dev, bp_op op, const bp_op_params *params, int32_t n_in,
                         const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                         void **prepared);
    /* Run a prepared node: as `op`, with what prepare made. Runs of the plan
     * may call it from several threads at once with the same *prepared. */
    bp_status (*prepared_op)(void *dev, void *prepared, bp_op op, const bp_op_params *params,
                             int32_t n_in, const bp_view *const *in, int32_t n_out,
                             const bp_view *const *out);
    /* Free what prepare made: once, when the plan is released (every run of
     * it has ended). */
    void (*prepared_free)(void *dev, void *prepared);
    /* Members above are valid for ABI 1.13. */

    /* (optional, with prepare) prepare for a node whose one output only
     * the node right after it reads: an elementwise op of the UNARY kind
     * (`epilogue`, with its parameters) over the whole value, writing a
     * dense one of the same shape and dtype. BP_OK with *prepared set: the
     * node runs through prepared_op with it, and writes epilogue(op(...))
     * where that call's output view points (the epilogue node's output,
     * which then does not run); once a bind replaces a constant, both run
     * through `op` again. BP_OK with *prepared NULL: not taken, and the
     * core asks prepare. A failure (out of memory) fails the compile. */
    bp_status (*prepare_epilogue)(void *dev, bp_op op, const bp_op_params *params,
                                  int32_t n_in, const bp_view *const *in, int32_t n_out,
                                  const bp_view *const *out, bp_op epilogue,
                                  const bp_op_params *epilogue_params, void **prepared);
    /* Members above are valid for ABI 1.14. */

    /* (optional, with prepare) prepare for a node whose one output only
     * the first of the n_steps nodes after it reads, each of which reads
     * only the value the one before it wrote (and, a BINARY one, an
     * operand the plan holds), writing a dense value of the same shape and
     * dtype: steps[k] (bp_epilogue_step) says each one's op. BP_OK with
     * *prepared set: the node runs through prepared_op with it, its `in`
     * followed by the steps' operands in the order of the steps (n_in
     * counts them), and writes the last step's value where that call's
     * output view points (the last step's output; the steps do not run).
     * operands[] are their views (dtype, shape, strides; the buffer NULL
     * unless the operand is a constant). Once a bind replaces a constant,
     * the node and its steps run through `op` again. BP_OK with *prepared
     * NULL: not taken (the core may then fuse the steps otherwise). Asked
     * when the plan compiles, before it fuses; a failure (out of memory)
     * fails the compile. */
    bp_status (*prepare_epilogues)(void *dev, bp_op op, const bp_op_params *params,
                                   int32_t n_in, const bp_view *const *in, int32_t n_out,
                                   const bp_view *const *out, int32_t n_steps,
                                   const bp_epilogue_step *steps,
                                   const bp_view *const *operands, void **prepared);
    /* Members above are valid for ABI 1.15. */
} bp_plugin;

/* The one symbol a plugin exports. */
typedef const bp_plugin *(*bp_plugin_entry_fn)(void);
#define BP_PLUGIN_ENTRY_SYMBOL "bp_plugin_entry"

#ifdef __cplusplus
}
#endif
#endif
