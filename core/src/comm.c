/* Communicators: finding and opening a collective engine, the calls every
 * collective shares after its engine entry (the verdict on a call the ranks
 * disagree about, a fault that fails the communicator), and their end.
 *
 * Engines are shared objects named comm_NAME.so in the directories the
 * backend plugins are searched in ($BP_PLUGIN_PATH, plugin_path, the
 * directory beside libbackplane), opened at bp_comm_create only. They are
 * opened RTLD_NODELETE and never unloaded: an engine that initialised MPI
 * finalises it at process exit, and MPI cannot be initialised twice. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm_internal.h"

#define BP__COMM_DEFAULT_TIMEOUT_S 300.0
/* More processes than this is an engine defect, not a job: every collective
 * sizes a table of records by it. */
#define BP__COMM_MAX_SIZE (1 << 24)
/* The first bp_comm_engine: up to barrier. */
#define BP__COMM_ENGINE_V1_SIZE \
    (offsetof(bp_comm_engine, barrier) + sizeof(((bp_comm_engine *)0)->barrier))

const char *bp_reduce_op_name(bp_reduce_op op)
{
    switch (op) {
    case BP_REDUCE_SUM: return "sum";
    case BP_REDUCE_PROD: return "prod";
    case BP_REDUCE_MAX: return "max";
    case BP_REDUCE_MIN: return "min";
    case BP_REDUCE_AVG: return "avg";
    }
    return "?";
}

const char *bp__comm_fn(int32_t collective)
{
    switch (collective) {
    case BP_COMM_ALL_REDUCE: return "bp_all_reduce";
    case BP_COMM_BROADCAST: return "bp_broadcast";
    case BP_COMM_ALL_GATHER: return "bp_all_gather";
    case BP_COMM_REDUCE_SCATTER: return "bp_reduce_scatter";
    case BP_COMM_BARRIER: return "bp_barrier";
    }
    return "an unknown collective";
}

/* ---- the host table an engine gets ------------------------------------------- */

static void bp__comm_host_log(void *host, bp_log_level level, const char *fmt, ...)
{
    bp_comm *c = host;
    char prefix[64];
    snprintf(prefix, sizeof prefix, "comm engine %s: ", c->engine);
    va_list ap;
    va_start(ap, fmt);
    bp__vlog(c->ctx, level, prefix, fmt, ap);
    va_end(ap);
}

static void bp__comm_host_set_error(void *host, const char *fmt, ...)
{
    (void)host;
    va_list ap;
    va_start(ap, fmt);
    bp__plugin_detail_set(fmt, ap);
    va_end(ap);
}

/* ---- finding and loading an engine ------------------------------------------- */

static bool bp__engine_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(((bp_comm *)0)->engine))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* The engine's file in the first plugin directory that has one (*out, to
 * free); BP_ERR_NOT_FOUND naming every directory searched when none has. */
static bp_status bp__engine_find(bp_context *ctx, const char *fn, const char *name, char **out)
{
    char dirs[1024] = "";
    size_t used = 0;
    char *found = NULL;
    bool oom = false;
    pthread_mutex_lock(&ctx->lock);
    for (size_t i = 0; i < ctx->n_search && !found && !oom; i++) {
        const bp__search_dir *d = &ctx->search[i];
        struct stat sb;
        if (stat(d->path, &sb) != 0 || !S_ISDIR(sb.st_mode))
            continue; /* files name plugins, not engines */
        if (used < sizeof dirs)
            used += (size_t)snprintf(dirs + used, sizeof dirs - used, "%s%s (%s)",
                                     used ? ", " : "", d->path, d->origin);
        char *path = bp__aprintf("%s/comm_%s.so", d->path, name);
        if (!path)
            oom = true;
        else if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            found = path;
        else
            free(path);
    }
    pthread_mutex_unlock(&ctx->lock);
    *out = found;
    if (oom)
        return bp__error(BP_ERR_OUT_OF_MEMORY,
                         "%s: out of memory looking for the collective engine '%s'", fn, name);
    if (!found)
        return bp__error(BP_ERR_NOT_FOUND,
                         "%s: no collective engine '%s' is installed: comm_%s.so is in none of "
                         "%s. The engines are built when their libraries are found (mpi: Open "
                         "MPI, apt-get install libopenmpi-dev openmpi-bin, then rebuild); "
                         "engines: mpi, nccl",
                         fn, name, name, used ? dirs : "the plugin directories (there are none)");
    return BP_OK;
}

static bp_status bp__engine_load(bp_comm *c, const char *fn)
{
    char why[256];
    if (!bp__elf_check(c->path, why, sizeof why))
        return bp__error(BP_ERR_PLUGIN, "%s: the collective engine %s cannot be loaded: %s", fn,
                         c->path, why);
    dlerror();
    c->dl = dlopen(c->path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!c->dl) {
        const char *e = dlerror();
        return bp__error(BP_ERR_PLUGIN,
                         "%s: the collective engine %s cannot be loaded: %s (a library it needs "
                         "is missing: for mpi, apt-get install openmpi-bin)",
                         fn, c->path, e ? e : "dlopen failed");
    }
    bp_comm_engine_entry_fn entry;
    void *sym = dlsym(c->dl, BP_COMM_ENGINE_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry);
    const bp_comm_engine *vt = entry ? entry() : NULL;
    if (!vt)
        return bp__error(BP_ERR_PLUGIN, "%s: %s exports no %s (or it returned NULL): not a "
                         "collective engine", fn, c->path, BP_COMM_ENGINE_ENTRY_SYMBOL);
    if (vt->struct_size < BP__COMM_ENGINE_V1_SIZE || vt->abi_major != BP_COMM_ENGINE_ABI_MAJOR)
        return bp__error(BP_ERR_PLUGIN,
                         "%s: the collective engine %s is for engine ABI %u.%u (descriptor of "
                         "%u bytes); this library speaks %d.%d: rebuild the engine",
                         fn, c->path, (unsigned)vt->abi_major, (unsigned)vt->abi_minor,
                         (unsigned)vt->struct_size, BP_COMM_ENGINE_ABI_MAJOR,
                         BP_COMM_ENGINE_ABI_MINOR);
    if (!vt->name || strcmp(vt->name, c->engine) != 0 || !vt->open || !vt->close || !vt->rank ||
        !vt->size || !vt->supports || !vt->all_reduce || !vt->broadcast || !vt->all_gather ||
        !vt->reduce_scatter || !vt->barrier)
        return bp__error(BP_ERR_PLUGIN,
                         "%s: the collective engine %s is incomplete (its name is '%s', not "
                         "'%s', or an entry is NULL)",
                         fn, c->path, vt->name ? vt->name : "(none)", c->engine);
    c->vt = vt;
    return BP_OK;
}

/* ---- where a backend's memory is ------------------------------------------------ */

/* BP_MEMORY_HOST for host-addressable backends; otherwise what the backend
 * says of a one-byte buffer (CUDA and its device), or 0 when it keeps its
 * memory private. */
static bp_status bp__comm_memory_of(bp_backend *b, const char *fn, int32_t *kind, int32_t *device)
{
    *kind = 0;
    *device = 0;
    if (b->host_addressable) {
        *kind = BP_MEMORY_HOST;
        return BP_OK;
    }
    if (!BP__HAS(b->vt, buffer_address))
        return BP_OK;
    void *buf = NULL;
    BP__TRY(BP__CALL(b, "alloc of a probe buffer for bp_comm_create", alloc, 1, &buf));
    void *addr = NULL;
    bp_status st = BP__CALL(b, "buffer_address for bp_comm_create", buffer_address, buf, kind,
                            device, &addr);
    b->vt->free(b->dev, buf);
    (void)fn;
    return st;
}

/* ---- create / destroy ------------------------------------------------------------- */

static bp_status bp__comm_timeout(bp_context *ctx, const char *fn, const bp_comm_options *o,
                                  double *out)
{
    if (o->timeout_s != 0.0) {
        if (!(o->timeout_s > 0.0) || !isfinite(o->timeout_s))
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: options->timeout_s is %g; give a positive number of seconds "
                             "(0: [comm] timeout_s of the configuration, default %g)",
                             fn, o->timeout_s, BP__COMM_DEFAULT_TIMEOUT_S);
        *out = o->timeout_s;
        return BP_OK;
    }
    const char *v = bp__config_get(&ctx->config, "comm", "timeout_s");
    *out = v ? strtod(v, NULL) : BP__COMM_DEFAULT_TIMEOUT_S; /* validated by config.c */
    if (!(*out > 0.0))
        *out = BP__COMM_DEFAULT_TIMEOUT_S;
    return BP_OK;
}

static void bp__comm_free(bp_comm *c)
{
    for (size_t i = 0; i < c->n_kept; i++)
        bp_tensor_release(c->kept[i]);
    free(c->kept);
    for (size_t i = 0; i < c->n_kept_memory; i++)
        free(c->kept_memory[i]);
    free(c->kept_memory);
    if (c->dl)
        dlclose(c->dl); /* RTLD_NODELETE: it stays mapped */
    bp__context_release(c->ctx);
    free(c->failure);
    free(c->path);
    free(c);
}

bp_status bp_comm_create(bp_backend *backend, const bp_comm_options *options, bp_comm **out)
{
    static const char fn[] = "bp_comm_create";
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!backend)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: backend is NULL", fn);
    if (backend->graph)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: backend is a graph's recording backend (bp_tensor_backend of a "
                         "symbolic tensor), whose tensors hold no data to communicate; pass the "
                         "backend the graph runs on, and run collectives on the tensors that "
                         "bp_graph_run returns",
                         fn);
    bp_comm_options o;
    memset(&o, 0, sizeof o);
    if (options)
        BP__TRY(bp__struct_in(fn, "bp_comm_options", "BP_COMM_OPTIONS_INIT", options, sizeof o,
                              &o, sizeof o));
    double timeout_s = BP__COMM_DEFAULT_TIMEOUT_S;
    BP__TRY(bp__comm_timeout(backend->ctx, fn, &o, &timeout_s));
    if (o.engine && !bp__engine_name_valid(o.engine))
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: options->engine '%.40s' is not an engine name (mpi or nccl; a "
                         "name is a-z, 0-9 and _)", fn, o.engine);

    int32_t kind, device;
    BP__TRY(bp__comm_memory_of(backend, fn, &kind, &device));
    const char *engine = o.engine ? o.engine : kind == BP_MEMORY_CUDA ? "nccl" : "mpi";
    bool nccl = strcmp(engine, "nccl") == 0;
    if (nccl && kind != BP_MEMORY_CUDA)
        return bp__error(BP_ERR_UNSUPPORTED_DEVICE,
                         "%s: the nccl engine moves CUDA device memory, and backend %s's memory "
                         "is %s; use the mpi engine (options->engine = \"mpi\", or NULL to let "
                         "the backend choose)",
                         fn, backend->name, kind == BP_MEMORY_HOST ? "host memory" : "private");
    bool staged = !nccl && kind != BP_MEMORY_HOST;

    bp_comm *c = calloc(1, sizeof *c);
    if (!c)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    bp__context_retain(backend->ctx);
    c->ctx = backend->ctx;
    c->backend = backend;
    snprintf(c->engine, sizeof c->engine, "%s", engine);
    c->memory_kind = staged ? BP_MEMORY_HOST : kind;
    c->staged = staged;
    c->timeout_s = timeout_s;
    c->host.struct_size = sizeof c->host;
    c->host.host = c;
    c->host.log = bp__comm_host_log;
    c->host.set_error = bp__comm_host_set_error;
    bp_status st = bp__engine_find(c->ctx, fn, engine, &c->path);
    if (st == BP_OK)
        st = bp__engine_load(c, fn);
    if (st == BP_OK) {
        bp_comm_engine_args args = {.struct_size = sizeof args,
                                    .memory_kind = c->memory_kind,
                                    .device = staged ? 0 : device,
                                    .mpi_comm = o.mpi_comm,
                                    .timeout_s = timeout_s};
        bp__call_begin();
        st = c->vt->open(&c->host, &args, &c->state);
        if (st != BP_OK) {
            st = bp__plugin_entry_status("open", st);
            const char *d = bp__plugin_detail();
            bp__error(st, "%s: the %s engine (%s) cannot serve backend %s: %s", fn, engine,
                      c->path, backend->name, *d ? d : bp_status_message(st));
        }
    }
    if (st != BP_OK) {
        bp__comm_free(c);
        return st;
    }
    c->rank = c->vt->rank(c->state);
    c->size = c->vt->size(c->state);
    if (c->size < 1 || c->size > BP__COMM_MAX_SIZE || c->rank < 0 || c->rank >= c->size) {
        c->vt->close(c->state);
        st = bp__error(BP_ERR_PLUGIN,
                       "%s: the collective engine %s reports rank %ld of a job of %ld "
                       "processes, which no job has (a size in 1..%d and a rank in 0..size-1): "
                       "a defect in the engine; rebuild it against this library or choose "
                       "another (options->engine)",
                       fn, c->path, (long)c->rank, (long)c->size, BP__COMM_MAX_SIZE);
        bp__comm_free(c);
        return st;
    }
    bp__log(c->ctx, BP_LOG_INFO, "%s: rank %d of %d on the %s engine (%s), backend %s%s", fn,
            (int)c->rank, (int)c->size, engine, c->vt->description ? c->vt->description : "",
            backend->name, staged ? ", its memory staged through host buffers" : "");
    *out = c;
    return BP_OK;
}

int32_t bp_comm_rank(const bp_comm *comm) { return comm ? comm->rank : -1; }
int32_t bp_comm_size(const bp_comm *comm) { return comm ? comm->size : -1; }

void bp_comm_destroy(bp_comm *comm)
{
    if (!comm)
        return;
    comm->vt->close(comm->state); /* before what its stranded transfers may touch */
    bp__comm_free(comm);
}

/* ---- after an engine entry ------------------------------------------------------- */

void bp__comm_keep(bp_comm *comm, bp_tensor *t, void *memory)
{
    if (t) {
        bp_tensor **grown = realloc(comm->kept, (comm->n_kept + 1) * sizeof *grown);
        if (grown) {
            comm->kept = grown;
            bp_tensor_retain(t);
            comm->kept[comm->n_kept++] = t;
        } else {
            bp_tensor_retain(t); /* no room to remember it: never released, on purpose */
        }
    }
    if (memory) {
        void **grown = realloc(comm->kept_memory, (comm->n_kept_memory + 1) * sizeof *grown);
        if (grown) {
            comm->kept_memory = grown;
            comm->kept_memory[comm->n_kept_memory++] = memory;
        } /* else leaked on purpose: a transfer may still write into it */
    }
}

/* The first field in which rank k's record differs from rank 0's, worded. */
static bp_status bp__comm_disagreement(const bp_comm_record *r0, const bp_comm_record *rk,
                                       int32_t k, char *buf, size_t cap)
{
    char s0[BP__SHAPE_STR_CAP], sk[BP__SHAPE_STR_CAP];
    if (rk->seq != r0->seq) {
        snprintf(buf, cap,
                 "rank %d is at its collective #%llu on this communicator where rank 0 is at "
                 "#%llu: a rank skipped or repeated a call",
                 (int)k, (unsigned long long)rk->seq, (unsigned long long)r0->seq);
        return BP_ERR_INVALID_ARGUMENT;
    }
    if (rk->collective != r0->collective) {
        snprintf(buf, cap, "rank %d called %s where rank 0 called %s", (int)k,
                 bp__comm_fn(rk->collective), bp__comm_fn(r0->collective));
        return BP_ERR_INVALID_ARGUMENT;
    }
    if (rk->dtype != r0->dtype) {
        snprintf(buf, cap, "rank %d passed a %s tensor where rank 0 passed %s", (int)k,
                 bp_dtype_name((bp_dtype)rk->dtype), bp_dtype_name((bp_dtype)r0->dtype));
        return BP_ERR_DTYPE;
    }
    if (rk->rank != r0->rank || memcmp(rk->shape, r0->shape, sizeof rk->shape) != 0) {
        /* (a record from another build could hold anything: never read past shape) */
        int32_t rr = rk->rank >= 0 && rk->rank <= BP_MAX_RANK ? rk->rank : 0;
        int32_t r0r = r0->rank >= 0 && r0->rank <= BP_MAX_RANK ? r0->rank : 0;
        snprintf(buf, cap, "rank %d passed shape %s where rank 0 passed %s", (int)k,
                 BP__SHAPE_STR(sk, rr, rk->shape), BP__SHAPE_STR(s0, r0r, r0->shape));
        return BP_ERR_SHAPE;
    }
    if (rk->op != r0->op) {
        snprintf(buf, cap, "rank %d asked for op %s where rank 0 asked for %s", (int)k,
                 bp_reduce_op_name((bp_reduce_op)rk->op), bp_reduce_op_name((bp_reduce_op)r0->op));
        return BP_ERR_INVALID_ARGUMENT;
    }
    if (rk->root != r0->root) {
        snprintf(buf, cap, "rank %d named root %d where rank 0 named %d", (int)k, (int)rk->root,
                 (int)r0->root);
        return BP_ERR_INVALID_ARGUMENT;
    }
    snprintf(buf, cap, "rank %d named axis %d where rank 0 named %d", (int)k, (int)rk->axis,
             (int)r0->axis);
    return BP_ERR_INVALID_ARGUMENT;
}

bp_status bp__comm_outcome(bp_comm *comm, const char *fn, bp_status st,
                           const bp_comm_record *all)
{
    if (st == BP_OK)
        return BP_OK;
    const char *detail = bp__plugin_detail();
    if (st == BP_ERR_SHAPE && all) {
        for (int32_t k = 1; k < comm->size; k++) {
            if (memcmp(&all[k], &all[0], sizeof all[0]) == 0)
                continue;
            char why[512];
            bp_status code = bp__comm_disagreement(&all[0], &all[k], k, why, sizeof why);
            return bp__error(code,
                             "%s: the ranks were not asked the same: %s (this is rank %d of %d); "
                             "no data moved, every rank fails this call alike, and the "
                             "communicator stays usable",
                             fn, why, (int)comm->rank, (int)comm->size);
        }
    }
    if (st == BP_ERR_BACKEND) {
        comm->failed = true;
        free(comm->failure);
        comm->failure = bp__aprintf("%s: %s", fn, *detail ? detail : "the engine failed");
        return bp__error(st,
                         "%s (rank %d of %d, %s engine): %s; this communicator can no longer be "
                         "used: destroy it with bp_comm_destroy (usually, end the job)",
                         fn, (int)comm->rank, (int)comm->size, comm->engine,
                         *detail ? detail : "the engine failed");
    }
    st = bp__plugin_entry_status(fn, st);
    return bp__error(st, "%s (rank %d of %d, %s engine): %s", fn, (int)comm->rank,
                     (int)comm->size, comm->engine, *detail ? detail : bp_status_message(st));
}
