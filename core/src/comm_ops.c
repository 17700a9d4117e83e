/* The collectives (comm.h): the checks every op makes, the record each rank
 * sends before any data moves, the buffers an engine reads and writes, and
 * the layouts engines do not know (an axis other than 0 for all_gather and
 * reduce_scatter, composed here from bp_transpose and bp_reshape; f16 and
 * bf16 sums widened with bp_cast for an engine that cannot accumulate them
 * wide). The arithmetic is the engine's. */
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"

/* ---- checks ------------------------------------------------------------------ */

/* x and out NULL: a call without tensors (bp_barrier). */
static bp_status comm_begin(const char *fn, bp_comm *comm, const bp_tensor *x, bp_tensor **out,
                            bool tensors)
{
    if (tensors)
        BP__TRY(bp__check_out(fn, out));
    if (!comm)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
    if (comm->failed)
        return bp__error(BP_ERR_BACKEND,
                         "%s: this communicator failed earlier (%s) and cannot be used again; "
                         "destroy it with bp_comm_destroy (usually, end the job)",
                         fn, comm->failure ? comm->failure : "a fault");
    if (!tensors)
        return BP_OK;
    BP__TRY(bp__check_input(fn, "x", x));
    bp_backend *b = bp__backend_of(x);
    if (b->graph)
        return bp__error(BP_ERR_UNSUPPORTED_OP,
                         "%s: x is a symbolic tensor of a graph; collectives are not recorded in "
                         "graphs: run the collective on the tensor that bp_graph_run returns",
                         fn);
    if (b != comm->backend)
        return bp__error(BP_ERR_BACKEND_MISMATCH,
                         "%s: x is on backend %s but the communicator carries tensors of backend "
                         "%s; copy it first: bp_backend_copy(x, <backend %s>, &copy), or make a "
                         "communicator for %s",
                         fn, b->name, comm->backend->name, comm->backend->name, b->name);
    return BP_OK;
}

static bp_status comm_check_op(const char *fn, bp_dtype dt, bp_reduce_op op)
{
    if ((int)op < BP_REDUCE_SUM || (int)op > BP_REDUCE_AVG)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "%s: op %d is not a bp_reduce_op (BP_REDUCE_SUM, _PROD, _MAX, _MIN, "
                         "_AVG)", fn, (int)op);
    if (dt == BP_BOOL)
        return bp__error(BP_ERR_DTYPE,
                         "%s: a bool tensor cannot be reduced with %s; cast it first "
                         "(bp_cast(x, BP_U8, &u)): max over ranks is then 'any', min 'all'",
                         fn, bp_reduce_op_name(op));
    if (op == BP_REDUCE_AVG && !bp_dtype_is_float(dt))
        return bp__error(BP_ERR_DTYPE,
                         "%s: BP_REDUCE_AVG takes float tensors, not %s; cast first "
                         "(bp_cast(x, BP_F32, &f)) or use BP_REDUCE_SUM",
                         fn, bp_dtype_name(dt));
    return BP_OK;
}

/* x's record; `dtype` is what the caller passed (x's, unless x was widened
 * for the engine), so that ranks that passed different dtypes disagree. */
static bp_comm_record comm_record(bp_comm *comm, int32_t collective, const bp_tensor *x,
                                  int32_t dtype, int32_t op, int32_t root, int32_t axis)
{
    bp_comm_record r;
    memset(&r, 0, sizeof r); /* padding too: records are compared bytewise */
    r.seq = ++comm->seq;
    r.collective = collective;
    r.dtype = dtype;
    r.op = op;
    r.root = root;
    r.axis = axis;
    r.rank = x ? x->rank : 0;
    for (int32_t k = 0; x && k < x->rank; k++)
        r.shape[k] = x->shape[k];
    return r;
}

/* ---- the buffers an engine reads and writes ------------------------------------ */

/* Where t's bytes are in the engine's memory kind; NULL when the backend
 * cannot say (or, for a tensor of no bytes, may have no address). */
static void *comm_address(bp_comm *comm, const bp_tensor *t)
{
    bp_backend *b = comm->backend;
    void *base = NULL;
    if (comm->memory_kind == BP_MEMORY_HOST) {
        base = b->vt->host_ptr(b->dev, t->storage->buffer);
    } else {
        int32_t kind = 0, device = 0;
        bp__call_begin();
        if (b->vt->buffer_address(b->dev, t->storage->buffer, &kind, &device, &base) != BP_OK)
            base = NULL;
    }
    return base ? (char *)base + t->offset : NULL;
}

/* The work that makes x done, then where its bytes are (a host copy when
 * staged: *staging, for the caller to free). */
static bp_status comm_source(bp_comm *comm, const char *fn, const bp_tensor *x, const void **src,
                             void **staging)
{
    bp_backend *b = comm->backend;
    *src = NULL;
    *staging = NULL;
    if (comm->staged) {
        void *host = malloc(x->nbytes ? x->nbytes : 1);
        if (!host)
            return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory to stage %zu bytes", fn,
                             x->nbytes);
        bp_status st = x->nbytes
                           ? bp__device_read(b, fn, x->storage->buffer, (size_t)x->offset, host,
                                             x->nbytes)
                           : BP_OK;
        if (st != BP_OK) {
            free(host);
            return st;
        }
        *src = host;
        *staging = host;
        return BP_OK;
    }
    bp__count_sync(b);
    if (BP__HAS(b->vt, synchronize))
        BP__TRY(BP__CALL0(b, fn, synchronize));
    BP__TRY(bp__deferred_check(b, fn));
    *src = comm_address(comm, x);
    if (!*src && x->nbytes)
        return bp__error(BP_ERR_BACKEND, "%s: backend %s cannot say where x's memory is: %s", fn,
                         b->name, bp__plugin_detail());
    return BP_OK;
}

/* Where the result goes: a fresh tensor, or a host buffer when staged. */
typedef struct comm_result {
    bp_tensor *t;
    void *staging;
    void *dst;
    int32_t rank;
    int64_t shape[BP_MAX_RANK];
    bp_dtype dtype;
} comm_result;

static bp_status comm_result_new(bp_comm *comm, const char *fn, bp_dtype dt, int32_t rank,
                                 const int64_t *shape, comm_result *r)
{
    memset(r, 0, sizeof *r);
    r->dtype = dt;
    r->rank = rank;
    memcpy(r->shape, shape, (size_t)rank * sizeof *shape);
    if (comm->staged) {
        int64_t numel;
        size_t nbytes;
        BP__TRY(bp__shape_check(fn, dt, rank, shape, &numel, &nbytes));
        r->staging = malloc(nbytes ? nbytes : 1);
        if (!r->staging)
            return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory to stage %zu bytes", fn,
                             nbytes);
        r->dst = r->staging;
        return BP_OK;
    }
    BP__TRY(bp__tensor_new(fn, comm->backend, dt, rank, shape, &r->t));
    if (comm->memory_kind != BP_MEMORY_HOST && BP__HAS(comm->backend->vt, synchronize)) {
        /* a device may allocate in its stream's order: the engine writes the
         * buffer from a stream of its own, so the allocation must be done */
        bp_status st = BP__CALL0(comm->backend, fn, synchronize);
        if (st != BP_OK) {
            bp_tensor_release(r->t);
            r->t = NULL;
            return st;
        }
    }
    r->dst = comm_address(comm, r->t);
    if (!r->dst && r->t->nbytes) {
        bp_tensor_release(r->t);
        r->t = NULL;
        return bp__error(BP_ERR_BACKEND, "%s: backend %s cannot say where a new tensor's memory "
                         "is: %s", fn, comm->backend->name, bp__plugin_detail());
    }
    return BP_OK;
}

/* After the engine: hand the result over (made from the staging buffer when
 * staged), or, when the engine faulted, keep what its transfers may still
 * touch until bp_comm_destroy. */
static bp_status comm_finish(bp_comm *comm, const char *fn, bp_status st, const bp_tensor *x,
                             void *src_staging, comm_result *r, bp_tensor **out)
{
    if (st != BP_OK && comm->failed) {
        bp__comm_keep(comm, (bp_tensor *)x, src_staging);
        bp__comm_keep(comm, r->t, r->staging);
        bp_tensor_release(r->t);
        return st;
    }
    free(src_staging);
    if (st != BP_OK) {
        bp_tensor_release(r->t);
        free(r->staging);
        return st;
    }
    if (comm->staged) {
        bp_status made = bp_tensor_from_host(comm->backend, r->dtype, r->rank, r->shape,
                                             r->staging, out);
        free(r->staging);
        return made;
    }
    *out = r->t;
    return BP_OK;
}

static bp_comm_record *comm_records(bp_comm *comm, const char *fn)
{
    bp_comm_record *all = calloc((size_t)comm->size, sizeof *all);
    if (!all)
        bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    return all;
}

/* ---- all_reduce ------------------------------------------------------------------ */

static bp_status comm_all_reduce(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                                 int32_t declared, bp_tensor **out);
static bp_status comm_reduce_scatter(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                                     int32_t axis, int32_t declared, bp_tensor **out);

/* f16 / bf16 through f32 for an engine that would accumulate them narrow;
 * the record still says x's dtype. */
static bp_status comm_widened(bp_comm *comm, const bp_tensor *x, bp_reduce_op op, int32_t axis,
                              bool scatter, bp_tensor **out)
{
    bp_tensor *wide = NULL, *sum = NULL;
    bp_status st = bp_cast(x, BP_F32, &wide);
    if (st == BP_OK)
        st = scatter ? comm_reduce_scatter(comm, wide, op, axis, (int32_t)x->dtype, &sum)
                     : comm_all_reduce(comm, wide, op, (int32_t)x->dtype, &sum);
    if (st == BP_OK)
        st = bp_cast(sum, x->dtype, out);
    bp_tensor_release(wide);
    bp_tensor_release(sum);
    return st;
}

static bool comm_needs_widening(bp_comm *comm, bp_dtype dt, bp_reduce_op op)
{
    return (dt == BP_F16 || dt == BP_BF16) && !comm->vt->supports(comm->state, dt, (int32_t)op);
}

static bp_status comm_unsupported(bp_comm *comm, const char *fn, bp_dtype dt, int32_t op)
{
    if (op < 0)
        return bp__error(BP_ERR_UNSUPPORTED_OP, "%s: the %s engine cannot carry %s tensors", fn,
                         comm->engine, bp_dtype_name(dt));
    return bp__error(BP_ERR_UNSUPPORTED_OP, "%s: the %s engine cannot reduce %s tensors with %s",
                     fn, comm->engine, bp_dtype_name(dt), bp_reduce_op_name((bp_reduce_op)op));
}

bp_status bp_all_reduce(bp_comm *comm, const bp_tensor *x, bp_reduce_op op, bp_tensor **out)
{
    static const char fn[] = "bp_all_reduce";
    BP__TRY(comm_begin(fn, comm, x, out, true));
    BP__TRY(comm_check_op(fn, x->dtype, op));
    if (comm_needs_widening(comm, x->dtype, op))
        return comm_widened(comm, x, op, 0, false, out);
    return comm_all_reduce(comm, x, op, (int32_t)x->dtype, out);
}

static bp_status comm_all_reduce(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                                 int32_t declared, bp_tensor **out)
{
    static const char fn[] = "bp_all_reduce";
    if (!comm->vt->supports(comm->state, x->dtype, (int32_t)op))
        return comm_unsupported(comm, fn, x->dtype, (int32_t)op);
    bp_comm_record *all = comm_records(comm, fn);
    if (!all)
        return BP_ERR_OUT_OF_MEMORY;
    const void *src;
    void *staging;
    comm_result r;
    bp_status st = comm_source(comm, fn, x, &src, &staging);
    if (st == BP_OK) {
        st = comm_result_new(comm, fn, x->dtype, x->rank, x->shape, &r);
        if (st != BP_OK)
            free(staging);
    }
    if (st == BP_OK) {
        bp_comm_record rec = comm_record(comm, BP_COMM_ALL_REDUCE, x, declared, (int32_t)op, -1, -1);
        bp__call_begin();
        st = comm->vt->all_reduce(comm->state, &rec, all, src, r.dst, (size_t)x->numel,
                                  x->dtype, op);
        st = bp__comm_outcome(comm, fn, st, all);
        st = comm_finish(comm, fn, st, x, staging, &r, out);
    }
    free(all);
    return st;
}

/* ---- broadcast --------------------------------------------------------------------- */

bp_status bp_broadcast(bp_comm *comm, const bp_tensor *x, int32_t root, bp_tensor **out)
{
    static const char fn[] = "bp_broadcast";
    BP__TRY(comm_begin(fn, comm, x, out, true));
    if (root < 0 || root >= comm->size)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: root %d is not a rank of this "
                         "communicator (0 .. %d)", fn, (int)root, (int)comm->size - 1);
    if (!comm->vt->supports(comm->state, x->dtype, -1))
        return comm_unsupported(comm, fn, x->dtype, -1);
    bp_comm_record *all = comm_records(comm, fn);
    if (!all)
        return BP_ERR_OUT_OF_MEMORY;
    const void *src = NULL;
    void *staging = NULL;
    comm_result r;
    /* Only the root's values count: the others' are never read. */
    bp_status st = comm->rank == root ? comm_source(comm, fn, x, &src, &staging) : BP_OK;
    if (st == BP_OK) {
        st = comm_result_new(comm, fn, x->dtype, x->rank, x->shape, &r);
        if (st != BP_OK)
            free(staging);
    }
    if (st == BP_OK) {
        bp_comm_record rec = comm_record(comm, BP_COMM_BROADCAST, x, (int32_t)x->dtype, -1, root, -1);
        bp__call_begin();
        st = comm->vt->broadcast(comm->state, &rec, all, src, r.dst, x->nbytes, root);
        st = bp__comm_outcome(comm, fn, st, all);
        st = comm_finish(comm, fn, st, x, staging, &r, out);
    }
    free(all);
    return st;
}

/* ---- all_gather ----------------------------------------------------------------------- */

/* The engine's gathered [size, x...] laid out as the concatenation on axis
 * (> 0): [x0 .. x_{axis-1}, size, x_axis ..] by a transpose, then axes
 * `axis` and `axis + 1` merged (metadata only). */
static bp_status comm_gathered_to_axis(const bp_tensor *g, int32_t axis, bp_tensor **out)
{
    int32_t perm[BP_MAX_RANK + 1];
    int32_t r = g->rank; /* x's rank + 1 */
    for (int32_t k = 0; k < axis; k++)
        perm[k] = k + 1;
    perm[axis] = 0;
    for (int32_t k = axis + 1; k < r; k++)
        perm[k] = k;
    bp_tensor *t = NULL;
    BP__TRY(bp_transpose(g, perm, &t));
    int64_t shape[BP_MAX_RANK];
    for (int32_t k = 0, j = 0; k < r; k++) {
        int64_t e = t->shape[k];
        if (k == axis + 1)
            shape[j - 1] *= e;
        else
            shape[j++] = e;
    }
    bp_status st = bp_reshape(t, r - 1, shape, out);
    bp_tensor_release(t);
    return st;
}

bp_status bp_all_gather(bp_comm *comm, const bp_tensor *x, int32_t axis, bp_tensor **out)
{
    static const char fn[] = "bp_all_gather";
    BP__TRY(comm_begin(fn, comm, x, out, true));
    if (x->rank == 0)
        return bp__error(BP_ERR_SHAPE, "%s: x is a scalar, which has no axis to concatenate on; "
                         "bp_unsqueeze(x, 0, &v) first", fn);
    int32_t ax;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    if (!comm->vt->supports(comm->state, x->dtype, -1))
        return comm_unsupported(comm, fn, x->dtype, -1);
    if (ax > 0 && x->rank + 1 > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE,
                         "%s: gathering a rank-%d tensor on axis %d needs a rank-%d "
                         "intermediate, more than %d; gather on axis 0, or reshape first",
                         fn, (int)x->rank, (int)ax, (int)x->rank + 1, BP_MAX_RANK);
    /* The result's shape first, so that a refusal names it (not the
     * engine's layout below, which holds the same elements). */
    int64_t shape[BP_MAX_RANK + 1];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    if (x->shape[ax] > INT64_MAX / comm->size)
        return bp__error(BP_ERR_SHAPE, "%s: the gathered extent overflows", fn);
    shape[ax] = x->shape[ax] * comm->size;
    int64_t numel;
    size_t nbytes;
    BP__TRY(bp__shape_check(fn, x->dtype, x->rank, shape, &numel, &nbytes));
    /* The engine's layout: [size, x's shape...], which for axis 0 already is
     * the result, as it is when there are no elements to move (the layout
     * could then even be too large where the result is not). */
    bool direct = ax == 0 || numel == 0;
    int32_t rank = direct ? x->rank : x->rank + 1;
    if (!direct) {
        shape[0] = comm->size;
        memcpy(shape + 1, x->shape, (size_t)x->rank * sizeof *shape);
    }
    bp_comm_record *all = comm_records(comm, fn);
    if (!all)
        return BP_ERR_OUT_OF_MEMORY;
    const void *src;
    void *staging;
    comm_result r;
    bp_status st = comm_source(comm, fn, x, &src, &staging);
    if (st == BP_OK) {
        st = comm_result_new(comm, fn, x->dtype, rank, shape, &r);
        if (st != BP_OK)
            free(staging);
    }
    bp_tensor *gathered = NULL;
    if (st == BP_OK) {
        bp_comm_record rec = comm_record(comm, BP_COMM_ALL_GATHER, x, (int32_t)x->dtype, -1, -1, ax);
        bp__call_begin();
        st = comm->vt->all_gather(comm->state, &rec, all, src, r.dst, x->nbytes);
        st = bp__comm_outcome(comm, fn, st, all);
        st = comm_finish(comm, fn, st, x, staging, &r, &gathered);
    }
    free(all);
    if (st != BP_OK || direct) {
        *out = gathered;
        return st;
    }
    st = comm_gathered_to_axis(gathered, ax, out);
    bp_tensor_release(gathered);
    return st;
}

/* ---- reduce_scatter --------------------------------------------------------------------- */

/* x with the `size` parts along axis (> 0) made contiguous blocks:
 * [size, x0 .. x_axis / size ..]. */
static bp_status comm_parts_first(const bp_tensor *x, int32_t axis, int32_t size, bp_tensor **out)
{
    int64_t split[BP_MAX_RANK + 1];
    int32_t r = x->rank + 1;
    for (int32_t k = 0, j = 0; k < x->rank; k++) {
        if (k == axis) {
            split[j++] = size;
            split[j++] = x->shape[k] / size;
        } else {
            split[j++] = x->shape[k];
        }
    }
    bp_tensor *v = NULL;
    BP__TRY(bp_reshape(x, r, split, &v));
    int32_t perm[BP_MAX_RANK + 1];
    perm[0] = axis;
    for (int32_t k = 1, j = 0; k < r; j++) {
        if (j == axis)
            continue;
        perm[k++] = j;
    }
    bp_status st = bp_transpose(v, perm, out);
    bp_tensor_release(v);
    return st;
}

bp_status bp_reduce_scatter(bp_comm *comm, const bp_tensor *x, bp_reduce_op op, int32_t axis,
                            bp_tensor **out)
{
    static const char fn[] = "bp_reduce_scatter";
    BP__TRY(comm_begin(fn, comm, x, out, true));
    BP__TRY(comm_check_op(fn, x->dtype, op));
    if (x->rank == 0)
        return bp__error(BP_ERR_SHAPE, "%s: x is a scalar, which has no axis to scatter on; "
                         "bp_unsqueeze(x, 0, &v) first", fn);
    int32_t ax;
    BP__TRY(bp__normalize_axis(fn, axis, x->rank, &ax));
    if (x->shape[ax] % comm->size != 0)
        return bp__error(BP_ERR_SHAPE,
                         "%s: axis %d of x has extent %lld, which the %d ranks cannot share "
                         "equally; pad or slice it to a multiple of %d",
                         fn, (int)ax, (long long)x->shape[ax], (int)comm->size, (int)comm->size);
    if (ax > 0 && x->rank + 1 > BP_MAX_RANK)
        return bp__error(BP_ERR_SHAPE,
                         "%s: scattering a rank-%d tensor on axis %d needs a rank-%d "
                         "intermediate, more than %d; scatter on axis 0, or reshape first",
                         fn, (int)x->rank, (int)ax, (int)x->rank + 1, BP_MAX_RANK);
    if (comm_needs_widening(comm, x->dtype, op))
        return comm_widened(comm, x, op, ax, true, out);
    return comm_reduce_scatter(comm, x, op, ax, (int32_t)x->dtype, out);
}

/* x checked, ax normalised. */
static bp_status comm_reduce_scatter(bp_comm *comm, const bp_tensor *x, bp_reduce_op op,
                                     int32_t ax, int32_t declared, bp_tensor **out)
{
    static const char fn[] = "bp_reduce_scatter";
    if (!comm->vt->supports(comm->state, x->dtype, (int32_t)op))
        return comm_unsupported(comm, fn, x->dtype, (int32_t)op);
    int64_t shape[BP_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    shape[ax] /= comm->size;

    /* The engine's layout: the parts as contiguous blocks. Zero elements
     * need no layout (whose extents, size among them, could even be too
     * large where x's are not). */
    bp_tensor *blocks = NULL;
    if (ax > 0 && x->numel > 0)
        BP__TRY(comm_parts_first(x, ax, comm->size, &blocks));
    const bp_tensor *in = blocks ? blocks : x;
    bp_comm_record *all = comm_records(comm, fn);
    bp_status st = all ? BP_OK : BP_ERR_OUT_OF_MEMORY;
    const void *src;
    void *staging;
    comm_result r;
    if (st == BP_OK)
        st = comm_source(comm, fn, in, &src, &staging);
    if (st == BP_OK) {
        st = comm_result_new(comm, fn, x->dtype, x->rank, shape, &r);
        if (st != BP_OK)
            free(staging);
    }
    if (st == BP_OK) {
        bp_comm_record rec = comm_record(comm, BP_COMM_REDUCE_SCATTER, x, declared, (int32_t)op, -1, ax);
        bp__call_begin();
        st = comm->vt->reduce_scatter(comm->state, &rec, all, src, r.dst,
                                      (size_t)(x->numel / comm->size), x->dtype, op);
        st = bp__comm_outcome(comm, fn, st, all);
        st = comm_finish(comm, fn, st, in, staging, &r, out);
    }
    free(all);
    bp_tensor_release(blocks);
    return st;
}

/* ---- barrier ------------------------------------------------------------------------------ */

bp_status bp_barrier(bp_comm *comm)
{
    static const char fn[] = "bp_barrier";
    BP__TRY(comm_begin(fn, comm, NULL, NULL, false));
    bp_comm_record *all = comm_records(comm, fn);
    if (!all)
        return BP_ERR_OUT_OF_MEMORY;
    bp_comm_record rec = comm_record(comm, BP_COMM_BARRIER, NULL, -1, -1, -1, -1);
    bp__call_begin();
    bp_status st = comm->vt->barrier(comm->state, &rec, all);
    st = bp__comm_outcome(comm, fn, st, all);
    free(all);
    return st;
}
