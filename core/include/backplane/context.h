/* backplane: contexts and backends.
 *
 * A bp_context owns the configuration, the loaded plugins and their backends.
 * There is no global state: two contexts never see each other. A context and
 * its backends may be used from several threads at once. */
#ifndef BACKPLANE_CONTEXT_H
#define BACKPLANE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "export.h"
#include "opcodes.h"
#include "plugin.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_context bp_context;
typedef struct bp_backend bp_backend; /* one device of one plugin, owned by its context */

/* Create a context from an ini file. With path NULL the layers are, first
 * found wins: $BP_CONFIG, $XDG_CONFIG_HOME/backplane/backplane.ini (or
 * ~/.config/...), /etc/backplane/backplane.ini, built-in defaults. Then
 * $BP_DEFAULT_BACKEND and $BP_LOG_LEVEL override. Plugins are found by file
 * name (bp_NAME.so) but none is opened: each is loaded and opened the first
 * time it is needed, so a program pays only for the backends it uses. A
 * missing plugin_path entry, or a [backend.NAME] section naming no installed
 * plugin, is a warning.
 * Errors: BP_ERR_CONFIG (file, line, key in bp_last_error), BP_ERR_IO (file
 * named but unreadable), BP_ERR_OUT_OF_MEMORY. */
BP_API bp_status bp_context_create(const char *config_path, bp_context **out);

/* Release the caller's hold on the context. If tensors are still alive, a
 * warning gives their count, bytes and backends, and the context lives on
 * until the last of them is released (so no tensor ever dangles). NULL is a
 * no-op. */
BP_API void bp_context_destroy(bp_context *ctx);

/* The first backend of the default_backend preference list that opens (built
 * in: "cuda, blas_cpu, binary"), resolved once per context. Each one skipped
 * is logged with its reason (at info for the built-in list, warn for one the
 * user wrote). BP_ERR_NOT_FOUND lists them all; a configuration error of a
 * backend on the list (BP_ERR_CONFIG) stops the list there: it never falls
 * through to the next backend. */
BP_API bp_status bp_backend_default(bp_context *ctx, bp_backend **out);

/* A backend by name: "binary", "cuda:1" (no index means device 0). Opens the
 * plugin on first use. BP_ERR_NOT_FOUND or the plugin's reason if unavailable. */
BP_API bp_status bp_backend_get(bp_context *ctx, const char *name, bp_backend **out);

/* "binary:0" etc. Valid while the context lives. */
BP_API const char *bp_backend_name(const bp_backend *backend);
/* Plugin name only: "binary". */
BP_API const char *bp_backend_plugin_name(const bp_backend *backend);

/* Whether the backend implements op for inputs of dtype (no error is set). */
BP_API bool bp_backend_supports(const bp_backend *backend, bp_op op, bp_dtype dtype);

/* Wait for all work queued on the backend. Besides the reads
 * (bp_tensor_to_host, bp_item_*), this is the only call that waits: ops may
 * return before the device has run them. An error the device found while
 * running them (BP_ERR_INDEX for a gather index out of range) is returned
 * here, or by whichever waiting call comes first, naming the op. */
BP_API bp_status bp_synchronize(bp_backend *backend);
/* The same as bp_synchronize (its earlier name). */
BP_API bp_status bp_backend_synchronize(bp_backend *backend);

/* Device memory use; BP_ERR_UNSUPPORTED_OP if the plugin cannot tell. Set
 * out->struct_size = sizeof *out first (see bp_plugin_record). */
BP_API bp_status bp_backend_memory_info(bp_backend *backend, bp_memory_info *out);

/* Device name and detail, as the plugin reports them. Set out->struct_size
 * first. */
BP_API bp_status bp_backend_device_info(bp_backend *backend, bp_device_info *out);

/* ---- introspection (used by `backplane info`) ------------------------- */

/* The context's effective log level. */
BP_API bp_log_level bp_context_log_level(const bp_context *ctx);

/* Write message to the library's log, as the library writes its own
 * warnings: one line "backplane: <level>: <message>" on stderr (never
 * stdout), only when level is at or above the context's log level (a NULL
 * ctx: the default level, warn). For a binding or a library built on
 * backplane that has something the user should see where backplane's own
 * messages go (Python's jit warns of recompilation storms here too). */
BP_API void bp_context_log(const bp_context *ctx, bp_log_level level, const char *message);

/* Structs the library fills for the caller start with struct_size: set it to
 * sizeof the struct before the call. The library writes only what both sides
 * know and never changes struct_size, so members can be appended without
 * breaking callers built against an older header. */

/* One plugin the loader found, loaded or not. */
typedef struct bp_plugin_record {
    uint32_t struct_size;    /* set by the caller: sizeof(bp_plugin_record) */
    const char *name;        /* backend name (from the file name bp_NAME.so until
                                loaded), or the file's name if that says none */
    const char *path;        /* the file that was (or failed to be) loaded */
    const char *version;     /* "" if not loaded */
    bool loaded;             /* dlopen + entry + ABI checks passed; false before
                                the plugin was first needed (see load_tried) */
    bool opened;             /* open() succeeded (tried on first use or by info) */
    bp_status status;        /* why not, if !loaded or open failed */
    const char *message;     /* the full reason ("" if none) */
    uint32_t abi_major, abi_minor;
    int32_t device_count;    /* -1 if not opened */
    const bp_config_key *config_keys; /* the [backend.NAME] keys it accepts, NULL-terminated; NULL if none or not loaded */
    bool load_tried;         /* loading was attempted: plugins are found by file
                                name at bp_context_create and loaded only when
                                first needed (bp_backend_get, the preference
                                list, bp_context_plugin_open) */
} bp_plugin_record;

/* Number of plugin records; record i (valid while the context lives). */
BP_API size_t bp_context_plugin_count(const bp_context *ctx);
BP_API bp_status bp_context_plugin(bp_context *ctx, size_t i, bp_plugin_record *out);

/* Load and open plugin i now (idempotent); the record then tells the outcome. */
BP_API bp_status bp_context_plugin_open(bp_context *ctx, size_t i);

/* One effective setting and where it came from. */
typedef struct bp_setting {
    uint32_t struct_size;    /* set by the caller: sizeof(bp_setting) */
    const char *section;     /* "backplane" or "backend.NAME" */
    const char *key;
    const char *value;
    const char *origin;      /* "default", "env BP_LOG_LEVEL", "/path/file.ini:12" */
    bool used;               /* [backplane] keys: always; [backend.NAME] keys: a loaded
                                plugin NAME declares the key (false: no effect) */
} bp_setting;

BP_API size_t bp_context_setting_count(const bp_context *ctx);
BP_API bp_status bp_context_setting(bp_context *ctx, size_t i, bp_setting *out);

/* The config file that was read, or NULL if built-in defaults were used. */
BP_API const char *bp_context_config_path(const bp_context *ctx);

/* How the default backend was chosen (one line per candidate), or "" before
 * bp_backend_default was called. */
BP_API const char *bp_context_default_reason(const bp_context *ctx);

/* Library version, e.g. "0.1.0". */
BP_API const char *bp_version(void);

#ifdef __cplusplus
}
#endif
#endif
