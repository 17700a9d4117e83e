/* backplane core: private declarations shared between core/src files.
 * Nothing here is API. Cross-file internals are named bp__. */
#ifndef BP_INTERNAL_H
#define BP_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "backplane/backplane.h"
#include "backplane/cast.h"
#include "backplane/plugin.h"

#if defined(__GNUC__)
#define BP__PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#else
#define BP__PRINTF(fmt_idx, args_idx)
#endif

/* Evaluate a bp_status expression; return it from the caller if not BP_OK. */
#define BP__TRY(expr)                   \
    do {                                \
        bp_status bp__st_ = (expr);     \
        if (bp__st_ != BP_OK)           \
            return bp__st_;             \
    } while (0)

/* True if the plugin's descriptor is large enough to hold `member` and the
 * member is set: the only way the core ever calls an optional entry. */
#define BP__HAS(desc, member)                                                          \
    ((desc)->struct_size >= offsetof(bp_plugin, member) + sizeof((desc)->member) && \
     (desc)->member != NULL)

/* ---- errors (error.c) ---------------------------------------------------- */
/* Set this thread's last error to the formatted message; return code. */
bp_status bp__error(bp_status code, const char *fmt, ...) BP__PRINTF(2, 3);
/* The detail a plugin set with host->set_error during the current call ("" if
 * none; bp__call_begin clears it). */
const char *bp__plugin_detail(void);
void bp__plugin_detail_set(const char *fmt, va_list ap);
void bp__plugin_detail_setf(const char *fmt, ...) BP__PRINTF(1, 2);

/* A malloc'ed formatted string, or NULL when out of memory (error.c). */
char *bp__aprintf(const char *fmt, ...) BP__PRINTF(1, 2);

/* ---- calling a plugin (plugin_call.c) -------------------------------------
 * Every call of a device entry goes through BP__CALL, so that each failure
 * names the backend, the entry and what was being done, and a value that is
 * not a bp_status never reaches the caller (it becomes BP_ERR_BACKEND):
 *
 *     st = BP__CALL(be, "add", binary, op, &va, &vb, &vo);
 *
 * `what` is the operation as the user knows it ("add", "read for
 * bp_tensor_to_host"); entry is the plugin.h member; the device handle is
 * passed first. */
#define BP__CALL(b, what, entry, ...)                                                   \
    bp__call_end((b), (what), #entry, (bp__call_begin(), (b)->vt->entry((b)->dev, __VA_ARGS__)))
#define BP__CALL0(b, what, entry) \
    bp__call_end((b), (what), #entry, (bp__call_begin(), (b)->vt->entry((b)->dev)))
/* An op entry: counted in the backend's stats, then called as BP__CALL. */
#define BP__OP_CALL(b, what, entry, ...) \
    (bp__count_op(b), BP__CALL(b, what, entry, __VA_ARGS__))
/* Clear the plugin's error detail: before every entry. */
void bp__call_begin(void);
/* BP_OK; or st with "backend B failed in WHAT: detail"; or BP_ERR_BACKEND when
 * st is not a bp_status, naming the entry, the raw value and the plugin. */
bp_status bp__call_end(const bp_backend *b, const char *what, const char *entry, bp_status st);
/* For the entries called on a plugin rather than a device (open,
 * device_info, device_open): st if it is a bp_status, else BP_ERR_BACKEND with
 * the plugin detail set to a note naming the entry and the raw value. */
bp_status bp__plugin_entry_status(const char *entry, bp_status st);
/* Whether v is one of BP_STATUS_LIST's codes. */
bool bp__status_known(int v);

/* ---- waiting for a device (sync.c) -----------------------------------------
 * Every read of a device buffer by the host goes through bp__device_read: it
 * is a synchronising call, so it is counted, logged at debug level naming the
 * public call, and followed by the device's deferred error, if any. */
bp_status bp__device_read(bp_backend *b, const char *fn, const void *buffer, size_t offset,
                          void *dst, size_t bytes);
/* After a synchronising call: the error queued work left behind, if any. */
bp_status bp__deferred_check(bp_backend *b, const char *fn);

/* ---- structs with a struct_size (struct_size.c) -----------------------------
 * Copy min(out->struct_size, full_size) bytes of full into out, leaving
 * out->struct_size as the caller set it; BP_ERR_INVALID_ARGUMENT naming fn and
 * type if the caller's struct_size is below min_size (the first layout that
 * had a struct_size). */
bp_status bp__struct_out(const char *fn, const char *type, void *out, size_t min_size,
                         const void *full, size_t full_size);
/* The caller's struct in (struct_size set by the INIT macro init) into copy
 * (full_size bytes): the members it lacks are zero. BP_ERR_INVALID_ARGUMENT
 * naming init if its struct_size is below min_size. */
bp_status bp__struct_in(const char *fn, const char *type, const char *init, const void *in,
                        size_t min_size, void *copy, size_t full_size);

/* ---- logging (log.c) ----------------------------------------------------- */
void bp__log(const bp_context *ctx, bp_log_level level, const char *fmt, ...) BP__PRINTF(3, 4);
void bp__vlog(const bp_context *ctx, bp_log_level level, const char *prefix, const char *fmt,
              va_list ap);
/* "debug" | "info" | "warn" | "error" | "off" (case-insensitive). */
bool bp__log_level_parse(const char *s, bp_log_level *out);
const char *bp__log_level_name(bp_log_level level);

/* ---- configuration (config.c) -------------------------------------------- */
typedef struct bp__setting {
    char *section;  /* "backplane" or "backend.NAME" */
    char *key;
    char *value;
    char *origin;   /* "default", "env BP_LOG_LEVEL", "FILE:LINE" */
    char *file;     /* file it came from, NULL for defaults/env */
    int line;       /* line in file, 0 if none */
} bp__setting;

typedef struct bp__config {
    char *path;           /* file that was read, NULL for built-in defaults */
    bp__setting *items;   /* effective settings, one per (section, key) */
    size_t count, cap;
} bp__config;

/* Read one ini file with inih (config_ini.c), calling section() for every
 * [section] header (empty sections too; the name untruncated) and key() for
 * every key = value, each with its line; section is NULL before the first
 * header. The first error (a callback's, or a line inih would misread:
 * indentation, NUL bytes, over-long lines, malformed lines) stops the read
 * and is returned, its message naming file and line. */
typedef struct bp__ini_sink {
    bp_status (*section)(void *user, const char *name, int line);
    bp_status (*key)(void *user, const char *section, const char *name, const char *value,
                     int line);
    void *user;
} bp__ini_sink;
bp_status bp__ini_read(FILE *fp, const char *file, const bp__ini_sink *sink);

/* Load layered config (see bp_context_create). explicit_path may be NULL.
 * Validates [backplane] keys and values; [backend.NAME] keys are validated
 * later against each plugin's declared keys (bp__config_check_backend). */
bp_status bp__config_load(const char *explicit_path, bp__config *cfg);
void bp__config_free(bp__config *cfg);
const bp__setting *bp__config_find(const bp__config *cfg, const char *section, const char *key);
const char *bp__config_get(const bp__config *cfg, const char *section, const char *key);
/* BP_ERR_CONFIG naming file, line and key for a key in [backend.NAME] that the
 * plugin does not declare. keys may be NULL (no keys accepted). */
bp_status bp__config_check_backend(const bp__config *cfg, const char *name,
                                   const bp_config_key *keys);
/* Comma-separated list helper: split `list` into trimmed, non-empty items.
 * Calls fn(item, user) for each; stops and returns fn's status if not BP_OK. */
bp_status bp__list_foreach(const char *list, bp_status (*fn)(const char *item, void *user),
                           void *user);
/* backplane's own backends: the built-in default_backend, and the names that
 * a preference list may name on a machine where they are not installed. */
#define BP__OWN_BACKENDS "cuda, blas_cpu, binary"

/* ---- plugins ----------------------------------------------------------------
 * A plugin's life: found by its file name at bp_context_create (plugin_find.c,
 * nothing is opened), loaded the first time it is needed (plugin_load.c: the
 * file is checked, dlopen'ed and its descriptor checked), opened right after
 * (plugin_open.c: its config keys checked, open(), device_count()), closed
 * and unloaded at the context's end. Every step's failure stays on the record
 * with its reason (plugin_record.c), and one broken plugin never stops the
 * others. ctx->lock is held for all of it. */
typedef struct bp__plugin {
    bp_context *ctx;
    char *name;             /* backend name: from the file name (bp_NAME.so), the
                               descriptor once loaded, else the file's name */
    bool named_by_file;     /* name came from a bp_NAME.so file name */
    char *path;             /* file */
    void *dl;               /* dlopen handle, NULL if not loaded */
    const bp_plugin *vt;    /* descriptor, NULL if not loaded */
    bp_config_key *keys;    /* its config keys in this library's layout (see
                               config_key_size), NULL-terminated; NULL if none */
    bool load_tried;        /* loading was attempted (it happens once) */
    bool loaded;            /* passed every load-time check */
    bool open_tried, opened;
    bp_status status;       /* why not loaded / not opened */
    char *message;          /* the reason, "" if none */
    char **retired;         /* earlier names and messages: records handed out
                               stay valid for the context's life */
    size_t n_retired;
    void *state;            /* from vt->open */
    int32_t device_count;   /* -1 until opened */
    bp_host_api host;       /* host->host points back to this struct */
} bp__plugin;

/* One directory (or file) the loader searched, for messages and info. */
typedef struct bp__search_dir {
    char *path;
    const char *origin;     /* "$BP_PLUGIN_PATH", "plugin_path", "built-in" */
    bool exists;
} bp__search_dir;

/* Whether path is a file dlopen can map safely: a regular, readable ELF
 * shared object for this machine, none of whose segments lies past the end
 * of the file. Else false with the reason in why (elf_check.c). */
bool bp__elf_check(const char *path, char *why, size_t cap);

/* plugin_record.c: a record for the file at path, pushed onto ctx->plugins
 * (name NULL: the file name's). Rejecting keeps the record with the reason. */
bp_status bp__record_add(bp_context *ctx, const char *path, const char *name, bool named_by_file,
                         bp__plugin **out);
void bp__record_free(bp__plugin *p);
void bp__record_reject(bp__plugin *p, bp_status st, char *message);
/* Replace *slot (the record's name or message) with fresh, which this takes;
 * the old string lives on until the context goes. */
void bp__record_set(bp__plugin *p, char **slot, char *fresh);
/* The host API table a plugin is given (plugin_host.c). */
void bp__host_init(bp__plugin *p);

/* plugin_find.c: find every bp_*.so of $BP_PLUGIN_PATH, plugin_path and the
 * directory beside libbackplane, without opening any; warn about missing
 * directories and [backend.NAME] sections that name no installed plugin. */
bp_status bp__plugins_find(bp_context *ctx);
/* Edit distance between two names, for "did you mean" (names longer than 63
 * characters are 64 from everything), and whether a name that far from
 * `name` is close enough to suggest. */
size_t bp__edit_distance(const char *a, const char *b);
bool bp__close_enough(const char *name, size_t distance);
/* The names of the installed plugins (found by file name and not rejected),
 * ", "-separated into list, and the closest to `name` if one is close enough
 * to suggest (else NULL). ctx->lock held. */
void bp__plugins_installed(const bp_context *ctx, const char *name, char *list, size_t cap,
                           const char **closest);
/* The record providing backend `name`, loading files whose name says nothing
 * (listed explicitly) if need be; NULL (error set, listing every directory
 * searched and any near-miss file names) if there is none. */
bp__plugin *bp__plugin_lookup(bp_context *ctx, const char *name);
/* Whether a file name is "bp_NAME.so" with a valid backend NAME
 * (plugin_lookup.c). */
bool bp__named_file(const char *base);
/* The record for a plugin named by path (added and loaded on first use). A
 * bare file name means the file in the current directory. */
bp_status bp__plugin_by_path(bp_context *ctx, const char *path, bp__plugin **out);
/* Close, unload and free every record and the search list (every backend
 * must be closed first). */
void bp__plugins_unload_all(bp_context *ctx);

/* plugin_load.c: load once (idempotent); BP_OK or the record's reason. */
bp_status bp__plugin_load(bp__plugin *p);
/* plugin_open.c: load, check its config keys, open once (idempotent). */
bp_status bp__plugin_open(bp__plugin *p);

/* ---- context and backends (context.c) ------------------------------------ */
/* The counters of stats.h (stats.c). */
typedef struct bp__counters {
    atomic_uint_fast64_t ops, h2d_calls, h2d_bytes, d2h_calls, d2h_bytes;
    atomic_uint_fast64_t copies_in, copies_in_bytes, copies_out, copies_out_bytes;
    atomic_uint_fast64_t copy_hits, sync_reads, allocs, peak;
} bp__counters;

struct bp_backend {
    bp_context *ctx;
    bp__plugin *plugin;
    const bp_plugin *vt;
    void *dev;                   /* from vt->device_open */
    int32_t index;
    bool host_addressable;
    char name[96];               /* "binary:0" */
    atomic_llong live_tensors;   /* storages alive on this backend */
    atomic_llong live_bytes;
    bp__counters stats;
    pthread_mutex_t exchange_lock; /* guards the exchange list (exchange.c) */
    struct bp__storage **listed;   /* storages other libraries can see */
    size_t n_listed, cap_listed;
    struct bp_graph *graph;        /* non-NULL: this is that graph's recording
                                      backend (graph_record.c), not a device */
};

void bp__count_op(bp_backend *b);
void bp__count_h2d(bp_backend *b, uint64_t bytes);
void bp__count_d2h(bp_backend *b, uint64_t bytes);
void bp__count_sync(bp_backend *b);
void bp__count_hit(bp_backend *b);
void bp__count_copy(bp_backend *from, bp_backend *to, uint64_t bytes);
/* A buffer of `bytes` came to life / went away (live_bytes and the peak). */
void bp__count_alloc(bp_backend *b, uint64_t bytes);
void bp__count_free(bp_backend *b, uint64_t bytes);

struct bp_context {
    atomic_long refs;            /* the caller's 1 + one per live storage */
    atomic_bool destroyed;       /* bp_context_destroy was called */
    pthread_mutex_t lock;        /* guards plugins' open state and backends */
    bp__config config;
    bp_log_level log_level;
    bp__plugin **plugins;
    size_t n_plugins;
    bp__search_dir *search;      /* every directory searched, in order */
    size_t n_search;
    pthread_mutex_t copy_lock;   /* guards every tensor's copies / copy_of links */
    bp_backend **backends;
    size_t n_backends;
    pthread_mutex_t default_lock; /* serialises resolving the preference list */
    bool default_resolved;        /* resolved once per context (under default_lock) */
    char *_Atomic default_reason; /* how it was resolved; published once, immutable */
    bp_backend *default_backend;  /* the winner, or NULL if none opened */
    bp_status default_status;     /* why there is none: NOT_FOUND, or CONFIG */
    atomic_size_t guard_bytes;   /* bp_context_set_debug_guards */
};

void bp__context_retain(bp_context *ctx);
void bp__context_release(bp_context *ctx); /* frees when refs reach 0 */

/* ---- tensors (tensor.c) --------------------------------------------------- */
typedef struct bp__storage {
    atomic_long refs;            /* one per tensor handle on it */
    bp_backend *backend;
    void *buffer;                /* NULL once a transfer freed it early */
    size_t bytes;                /* payload, without guards */
    size_t guard;                /* guard bytes on each side of the payload */
    /* Seen by other libraries (exchange.c): listed in the backend's
     * exchange list with where its memory is (byte 0, span bytes). */
    bool listed;
    int32_t kind;                /* BP_MEMORY_* */
    const void *address;
    size_t span;
    /* An import of memory that a listed storage (lender) already holds:
     * buffer is the lender's; release(release_ctx) runs when this storage
     * goes, then the lender is released. NULL for every other storage. */
    struct bp__storage *lender;
    void (*release)(void *);
    void *release_ctx;
    /* The storage and its first handle are one allocation (tensor.c's
     * bp__tensor_block): 2 at birth, one for each of the two still alive;
     * the block is freed when both are gone. */
    atomic_int block_parts;
} bp__storage;

/* ---- memory exchanged with other libraries (exchange.c) -------------------- */
/* List s (its memory of the given kind at address, span bytes) as seen by
 * other libraries; idempotent. Without memory to grow the list, s simply
 * stays unlisted (a later import of it is then copied, never wrong). */
void bp__exchange_list(bp__storage *s, int32_t kind, const void *address, size_t span);
/* Take s off the list, if on it: before its buffer is freed. */
void bp__exchange_unlist(bp__storage *s);
/* A listed storage of b whose memory holds [address, address + bytes), with
 * one more reference, and the import's byte offset in it; NULL if none. */
bp__storage *bp__exchange_find(bp_backend *b, int32_t kind, const void *address, size_t bytes,
                               int64_t *offset);
/* Give back s's data now (its buffer freed, or for a borrower its release
 * run and its lender released): a transfer that took the last handle, and
 * the storage's end. */
void bp__storage_drop_data(bp__storage *s);
/* Drop one reference to s; the last one gives back its data and frees it. */
void bp__storage_release(bp__storage *s);

/* A copy of a tensor kept for reuse (transfer.c): copying the same tensor to
 * the same backend again, while this copy lives, returns it. */
typedef struct bp__copy_link {
    bp_backend *to;
    bp_tensor *copy;
    struct bp__copy_link *next;
} bp__copy_link;

struct bp_tensor {
    atomic_long refs;
    atomic_bool given_away;      /* bp_backend_transfer took this handle's data */
    atomic_bool cached;          /* ever linked in a copy cache (then release locks) */
    bp__copy_link *copies;       /* copies made from this handle (ctx->copy_lock) */
    bp_tensor *copy_of;          /* the handle this is a kept copy of (ctx->copy_lock) */
    bp__storage *storage;
    int64_t offset;              /* byte offset into storage (the guard size) */
    bp_dtype dtype;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    int64_t numel;
    size_t nbytes;
};

/* Check a shape: rank 0..8, extents >= 0, numel * dtype size fits size_t and
 * int64. fn names the public call for the message. */
bp_status bp__shape_check(const char *fn, bp_dtype dtype, int32_t rank, const int64_t *shape,
                          int64_t *numel, size_t *nbytes);
/* A fresh tensor (uninitialised contents) on backend. */
bp_status bp__tensor_new(const char *fn, bp_backend *backend, bp_dtype dtype, int32_t rank,
                         const int64_t *shape, bp_tensor **out);
/* A tensor whose buffer is existing memory of the given kind (plugin.h's
 * wrap): nothing is copied; release(release_ctx) runs when the buffer is
 * freed. BP_ERR_UNSUPPORTED_OP, with no error set, when the backend cannot
 * (no wrap entry, debug guards on, memory of another kind): copy instead.
 * On any failure release is not called. */
bp_status bp__tensor_wrap(const char *fn, bp_backend *b, bp_dtype dtype, int32_t rank,
                          const int64_t *shape, int32_t kind, void *memory,
                          void (*release)(void *), void *release_ctx, bp_tensor **out);
/* A new handle sharing t's storage with another shape (same numel). */
bp_status bp__tensor_alias(const bp_tensor *t, int32_t rank, const int64_t *shape, bp_tensor **out);
/* A new handle on src's storage viewing (dtype, rank, shape) from byte
 * offset (of the storage, as t->offset counts it). */
bp_status bp__tensor_alias_at(const bp_tensor *src, int64_t offset, bp_dtype dtype, int32_t rank,
                             const int64_t *shape, bp_tensor **out);
/* A tensor (u8, bytes long) of a graph's recording backend rec on an
 * existing value token of it: a second handle on a value its first holder
 * may have released (the graph keeps every token). */
bp_status bp__tensor_on_token(bp_backend *rec, void *token, size_t bytes, bp_tensor **out);
/* Take one more reference unless the count already reached zero (a handle
 * being released): false then. For the copy cache's weak links. */
bool bp__tensor_try_retain(bp_tensor *t);
/* Unlink a dying or given-away handle from every copy-cache link (the
 * caller holds ctx->copy_lock). */
void bp__copy_unlink(bp_tensor *t);
static inline bp_backend *bp__backend_of(const bp_tensor *t) { return t->storage->backend; }
/* ---- graphs (graph_record.c) ------------------------------------------------
 * A symbolic tensor is a tensor of a graph's recording backend, whose
 * buffers are value tokens and whose op entry appends a node: every op's
 * eager checks and output allocation run unchanged. */
/* The backend an op on ts runs on: the recording backend if one of ts
 * (NULLs skipped) is symbolic, else the first one's. */
/* The most views (inputs or outputs) one op of the table has: a node's capacity. */
#define BP__GRAPH_MAX_IO 8
bp_backend *bp__backend_of_all(size_t n, const bp_tensor *const *ts);
/* t (on backend b, not *be) joins an op whose tensors so far are on *be,
 * one of the two a recording backend: t is captured (retained by the graph)
 * when it is a concrete tensor of the graph's backend, and *be becomes the
 * recording backend; else BP_ERR_BACKEND_MISMATCH (another backend) or
 * BP_ERR_INVALID_ARGUMENT (two graphs), naming first_arg and arg. The
 * concrete tensors among ts[0 .. n) are captured too. args as
 * bp__check_same_backend's (NULL: xs[0], xs[1], ...). */
bp_status bp__graph_join(const char *fn, bp_backend **be, const bp_tensor *const *ts, size_t n,
                         const char *const *args);
/* Whether tensors of a and b may meet in one op (equal, or a graph's
 * recording backend and that graph's backend). */
bool bp__backends_joinable(const bp_backend *a, const bp_backend *b);
/* The device behind b: b itself, or a recording backend's graph's backend. */
bp_backend *bp__backend_real(bp_backend *b);
/* The plugin ABI minor a dtype arrived in (the dtypes are appended): i16,
 * u16 and u32 in 1.10, u64 in 1.11, the first nine with the ABI. */
static inline uint32_t bp__dtype_since(bp_dtype dtype)
{
    return (int)dtype >= (int)BP_U64 ? 11u : (int)dtype >= (int)BP_I16 ? 10u : 0u;
}
/* Whether a plugin built for ABI 1.abi_minor may be handed dtype. */
static inline bool bp__abi_has_dtype(uint32_t abi_minor, bp_dtype dtype)
{
    return abi_minor >= bp__dtype_since(dtype);
}
/* BP_ERR_DTYPE (naming the fix) when dtype is one that b's plugin predates
 * (bp__dtype_since); else BP_OK. */
bp_status bp__dtype_on_backend(const char *fn, bp_backend *b, bp_dtype dtype);
/* BP_ERR_INVALID_ARGUMENT: fn cannot read a symbolic tensor of b. */
bp_status bp__graph_read_error(const char *fn, const bp_backend *b);
/* The recording backend's op entry (rec, that backend), with the index
 * rule (index_check.c) that the node carries, or NULL: what bp__op_run's
 * call of the entry does, plus the rule. */
struct bp__index_rule;
bp_status bp__graph_record_op(bp_backend *rec, bp_op op, const bp_op_params *p, int32_t n_in,
                              const bp_view *const *in, int32_t n_out, const bp_view *const *out,
                              const struct bp__index_rule *rule);
/* A storage of a recording backend was born / released (the graph lives
 * while they do). */
void bp__graph_retain(struct bp_graph *g);
void bp__graph_unref(struct bp_graph *g);
/* Hand a fresh result to the caller through out, or release it if st failed.
 * Returns st. */
bp_status bp__deliver(bp_tensor *res, bp_status st, bp_tensor **out);

/* ---- argument checks shared by every op (checks.c) ------------------------ */
/* NULL tensor or one given away by transfer: BP_ERR_INVALID_ARGUMENT naming
 * fn and arg. */
bp_status bp__check_input(const char *fn, const char *arg, const bp_tensor *t);
/* NULL out pointer: BP_ERR_INVALID_ARGUMENT. Also sets *out = NULL. */
bp_status bp__check_out(const char *fn, bp_tensor **out);
/* The same for an op with optional outputs too: each of opt[0 .. n_opt)
 * that is not NULL is cleared first, so a failure (a NULL out included)
 * never leaves one of them set. */
bp_status bp__check_outs(const char *fn, bp_tensor **out, size_t n_opt, bp_tensor **const *opt);
/* All of ts on one backend, else BP_ERR_BACKEND_MISMATCH naming fn, the two
 * arguments and backends, and the bp_backend_copy call that fixes it.
 * args[i] names ts[i]; args NULL names them xs[0], xs[1], ... (an n-ary
 * op's list, of any length: formatted only when a message needs it). */
bp_status bp__check_same_backend(const char *fn, size_t n, const bp_tensor *const *ts,
                                 const char *const *args);
/* args[i], or "xs[i]" written into buf (BP__ARG_NAME_CAP bytes) when args
 * is NULL: what the messages of the checks above call ts[i]. */
enum { BP__ARG_NAME_CAP = 32 };
const char *bp__arg_name(const char *const *args, size_t i, char *buf);
/* NumPy broadcasting of two shapes; BP_ERR_SHAPE naming both. */
bp_status bp__broadcast_shapes(const char *fn, int32_t ra, const int64_t *sa, int32_t rb,
                               const int64_t *sb, int32_t *rank, int64_t *shape);
/* axis in [-rank, rank) -> [0, rank); BP_ERR_SHAPE otherwise. */
bp_status bp__normalize_axis(const char *fn, int32_t axis, int32_t rank, int32_t *out);
/* BP_ERR_UNSUPPORTED_OP naming backend, op and dtype, if the family entry is
 * NULL (has_entry false) or supports(op, dtype) is false. */
bp_status bp__require_op(const bp_backend *b, bp_op op, bp_dtype dtype, bool has_entry);
/* BP_ERR_DTYPE naming fn, the argument, its dtype and what op accepts. */
bp_status bp__check_dtype(const char *fn, const char *op_name, const char *arg, bp_dtype dt,
                          bp_op_dtypes cls);
/* "(2, 3)", "(3,)", "()" into buf; returns buf. BP__SHAPE_STR_CAP holds any. */
#define BP__SHAPE_STR_CAP 200
const char *bp__format_shape(int32_t rank, const int64_t *shape, char *buf, size_t cap);
#define BP__SHAPE_STR(buf, rank, shape) bp__format_shape((rank), (shape), (buf), BP__SHAPE_STR_CAP)
/* "bp_add" for BP_OP_ADD: the public call named in messages ("bp_?" for a
 * code the table does not have). A static string. */
const char *bp__op_fn(bp_op op);

/* ---- planning reductions (reduce_plan.c) --------------------------------------- */
typedef struct bp__reduce_plan {
    int32_t perm[BP_MAX_RANK];       /* kept axes first, then the reduced ones */
    int32_t n_kept, n_reduce, out_rank;
    int64_t kept_shape[BP_MAX_RANK], out_shape[BP_MAX_RANK];
    int64_t kept_count, reduce_count; /* elements kept / reduced per output */
} bp__reduce_plan;
/* n_axes == 0 (axes NULL): every axis; negative axes count from the end; no
 * axis twice. */
bp_status bp__reduce_plan_make(const char *fn, const bp_tensor *x, int32_t n_axes,
                               const int32_t *axes, bool keepdims, bp__reduce_plan *pl);
/* The views a reduce entry takes: x permuted, res without keepdims' axes. */
void bp__reduce_plan_views(const bp__reduce_plan *pl, const bp_tensor *x, const bp_tensor *res,
                           bp_view *vx, bp_view *vo);
/* The permutation moving axis last (the others in order). */
void bp__axis_last_perm(int32_t rank, int32_t axis, int32_t *perm);

/* ---- index tensors (index_check.c) -------------------------------------------
 * The index values of gather, gather_elements, gather_nd, the scatters and
 * the losses' labels are checked on the host before the op runs, except on
 * a device backend that checks (and defers) on the device. Eagerly the
 * check is made at once. While a graph records the op there are no values
 * yet (symbolic indices, or captured ones read only when the plan runs):
 * the same check is then described by a rule that the node carries, and
 * bp_graph_run makes it just before the node runs (graph_run.c). */
typedef enum bp__index_kind {
    BP__INDEX_BOUNDS = 1,      /* every index in [-dims[j], dims[j]) */
    BP__INDEX_LABELS = 2       /* every label in [0, dims[0]), or ignore_index */
} bp__index_kind;
typedef struct bp__index_rule {
    int32_t input;             /* the op's input view k holding the values; -1: none */
    int32_t kind;              /* a bp__index_kind */
    int32_t m;                 /* bounds: components per index (j = flat position % m) */
    int32_t first_axis;        /* bounds: dims[j] is the extent of axis first_axis + j */
    int64_t dims[BP_MAX_RANK]; /* bounds: the extents; labels: dims[0], the class count */
    int64_t has_ignore;        /* labels: ignore_index given */
    int64_t ignore_index;
} bp__index_rule;
/* Every index lies in [-dims[j], dims[j]) (j the index's position modulo m;
 * m = 1: one bound; gather_nd: one per component of an index tuple, for
 * the axes first_axis, first_axis + 1, ...): BP_ERR_INDEX naming the first
 * bad one. indices is the op's input view k; op_be the backend the op
 * runs on (bp__backend_of_all over all its operands, so a graph's when any
 * operand is symbolic). *rule: rule->input -1 when the check is done (or
 * nothing is checked here); while a graph records the op, the rule the node
 * carries instead (pass it to bp__op_run_checked). */
bp_status bp__check_index_bounds(const char *fn, const bp_tensor *indices,
                                 const bp_backend *op_be, int32_t k, int32_t m,
                                 int32_t first_axis, const int64_t *dims,
                                 bp__index_rule *rule);
/* Class labels of a loss (the op's input view k): each in [0, classes) or
 * equal to *ignore_index (NULL: none). *rule as above. */
bp_status bp__check_class_labels(const char *fn, const bp_tensor *labels,
                                 const bp_backend *op_be, int32_t k, int64_t classes,
                                 const int64_t *ignore_index,
                                 bp__index_rule *rule);
/* A plan's run: rule checked against the values of view v (a dense view on
 * be, the graph's backend, read in place or read and so waited for) with
 * the eager check's status and message, that message prefixed by fn and
 * followed by note. */
bp_status bp__check_index_rule(const char *fn, const bp__index_rule *rule, bp_backend *be,
                               const bp_view *v, const char *note);

/* ---- the one op path (plugin_call.c, plugin_compat.c, checks.c) -------------
 * Every op, whatever its kind, is checked against its row of the op table
 * (opcodes.h) by bp__op_begin, then by its kind's own rules, then run by
 * bp__op_run: the one function through which an op reaches a plugin. */
typedef struct bp__op_sig {
    int32_t n_in, n_out;            /* views the op entry receives */
    uint32_t optional_in, optional_out; /* bit k: view k may be absent (NULL) */
} bp__op_sig;
/* The op's arity, from its row (parsed once). */
const bp__op_sig *bp__op_sig_of(bp_op op);
/* The input tensors of op (its row's IN, in order) checked: each one the
 * row does not mark optional is given (BP_ERR_INVALID_ARGUMENT naming it),
 * none was given away, all are on one backend (BP_ERR_BACKEND_MISMATCH
 * naming two), and the typed one has a dtype of the row's class
 * (BP_ERR_DTYPE). *be: their backend (NULL for an op with no inputs). */
bp_status bp__op_begin(const char *fn, bp_op op, const bp_tensor *const *in, bp_backend **be);
/* BP_ERR_DTYPE naming both when inputs j and k of op are given, on one
 * backend, and of two dtypes: called before bp__op_begin, so that the
 * message names the pair rather than the class of one. */
bp_status bp__op_same_dtype(const char *fn, bp_op op, const bp_tensor *const *in, int32_t j,
                            int32_t k);
/* BP_ERR_UNSUPPORTED_OP naming backend, op and dtype unless be has the op
 * for dtype: an entry that takes it, and supports() agrees. */
bp_status bp__op_require(const bp_backend *be, bp_op op, bp_dtype dtype);
/* Whether be's plugin has an entry that takes op (the op entry; before ABI
 * 1.6, for an op of 1.0, its family's typed entry). */
bool bp__op_has_entry(const bp_backend *b, bp_op op);
/* Run op on be: in[] and out[] are the views its row lists (an absent
 * optional one NULL), p its parameters as opcodes.h lays them out. */
bp_status bp__op_run(bp_backend *be, bp_op op, const bp_op_params *p, const bp_view *const *in,
                     const bp_view *const *out);
/* bp__op_run, for an op whose index values were checked by rule
 * (index_check.c): on a graph's recording backend the node carries the rule
 * (rule->input >= 0), so that the plan's run checks the values first;
 * anywhere else the rule was already applied and this is bp__op_run. */
bp_status bp__op_run_checked(bp_backend *be, bp_op op, const bp_op_params *p,
                             const bp_view *const *in, const bp_view *const *out,
                             const bp__index_rule *rule);
/* A compiled graph's prepared node (graph_prepare.c) through the plugin's
 * prepared_op with what its prepare made: counted and reported as an op. */
bp_status bp__op_run_prepared(bp_backend *be, void *prepared, bp_op op, const bp_op_params *p,
                              const bp_view *const *in, const bp_view *const *out);
/* The same for a node prepared with an epilogue chain (prepare_epilogues):
 * its inputs followed by the chain's n_operands operands. */
bp_status bp__op_run_prepared_chain(bp_backend *be, void *prepared, bp_op op,
                                    const bp_op_params *p, int32_t n_operands,
                                    const bp_view *const *in, const bp_view *const *out);
/* The typed entries of a plugin built before ABI 1.6, for the ops of 1.0
 * (plugin_compat.c). */
bool bp__compat_has_entry(const bp_backend *b, bp_op op);
bp_status bp__compat_run(bp_backend *be, bp_op op, const bp_op_params *p, const bp_view *const *in,
                         const bp_view *const *out);
/* Zeroed parameters with their struct_size (inline: every op's path builds
 * one, and out of line the 264 bytes were zeroed and then copied). */
static inline bp_op_params bp__params(void)
{
    bp_op_params p = {0};
    p.struct_size = sizeof p;
    return p;
}
/* Every element of v (a view of a tensor of be) = value in v's dtype: the
 * FILL op (ops_creation.c). */
bp_status bp__fill_view(bp_backend *be, const bp_view *v, double value);
/* A new tensor of (dtype, rank, shape) on be as op's only output, the op
 * run on in[] with p: delivered through out, or released on failure. */
bp_status bp__op_into_new(const char *fn, bp_backend *be, bp_op op, const bp_op_params *p,
                          const bp_view *const *in, bp_dtype dtype, int32_t rank,
                          const int64_t *shape, bp_tensor **out);

/* ---- windows: conv, conv_transpose, pools (window.c) ------------------------- */
/* A bp_window resolved for x's s spatial axes. */
typedef struct bp__window_plan {
    int32_t s;                                   /* spatial axes, 1..3 */
    int64_t kernel[3], stride[3], dilation[3];
    int64_t pad_begin[3], pad_end[3];
    int64_t out[3];                              /* the output's spatial extents */
} bp__window_plan;
/* The caller's window (NULL: defaults) checked for x (rank 3..5) and copied,
 * with strides, dilations and groups of 0 made 1. */
bp_status bp__window_read(const char *fn, const bp_tensor *x, const bp_window *w,
                          bp_window *copy);
/* A forward window (conv, pools) of the given kernel over x's spatial axes:
 * auto_pad resolved, output extents computed (ceil for a ceil_mode pool). */
bp_status bp__window_forward(const char *fn, const bp_tensor *x, const bp_window *w,
                             const int64_t *kernel, bp__window_plan *pl);
/* The plan's window into p.i (opcodes.h's layout for the window ops). */
void bp__window_params(const bp__window_plan *pl, bp_op_params *p);

/* ---- views handed to a backend (views.c) ------------------------------------ */
/* Dense row-major view of t. */
void bp__view_dense(const bp_tensor *t, bp_view *v);
/* View of t broadcast to (rank, shape): t's shape must broadcast to it. */
void bp__view_broadcast(const bp_tensor *t, int32_t rank, const int64_t *shape, bp_view *v);
/* Permute a view's axes in place: new axis k is old axis perm[k]. */
void bp__view_permute(bp_view *v, const int32_t *perm);
/* Row-major strides for (rank, shape), replacing v's geometry (same buffer). */
void bp__view_set_dense(bp_view *v, int32_t rank, const int64_t *shape);
/* Whether v is row-major and gap-free from its offset (the strides of axes
 * of extent 1 do not matter). */
bool bp__view_is_dense(const bp_view *v);
/* The elements v spans: the product of its extents. */
int64_t bp__view_numel(const bp_view *v);
/* v, a dense view of a (rank, shape) tensor, right-aligned onto (out_rank,
 * out_shape): missing leading axes and extended size-1 axes get stride 0. */
void bp__view_broadcast_as(bp_view *v, int32_t rank, const int64_t *shape, int32_t out_rank,
                           const int64_t *out_shape);

#endif
