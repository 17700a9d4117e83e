/* Threads by splitting views (see bpc_split in blas_cpu.h).
 *
 * The cut: slabs of (nearly) equal extent along one output axis, a few per
 * thread, handed out one at a time by the pool: on a shared machine a thread
 * that loses its core for a while then holds up the call by one small slab,
 * not by half of the work. The axis is the outermost one that divides evenly
 * or is long enough (>= 8 per thread) for the remainder not to matter, else
 * the outermost one of extent > 1 (the team shrinks to its extent if need
 * be). Each slab is a plain bp_view (offset moved by lo * stride * element
 * size, extent hi - lo), valid for any strides, broadcast (stride 0)
 * included. */
#include "blas_cpu.h"

/* The axis to cut, or -1; *team may shrink to the chosen axis's extent. */
static int32_t pick_axis(const bp_view *out, int32_t n_axes, bool leading, int *team)
{
    int32_t fallback = -1;
    for (int32_t k = 0; k < n_axes && k < out->rank; k++) {
        int64_t e = out->shape[k];
        if (e == 1)
            continue;
        if (e >= *team && (e % *team == 0 || e >= 8 * (int64_t)*team))
            return k;
        if (fallback < 0 && e >= 2)
            fallback = k;
        if (leading)
            break;
    }
    if (fallback >= 0 && out->shape[fallback] < *team)
        *team = (int)out->shape[fallback];
    return fallback;
}

static void cut(int n, const bp_view *const *v, const int32_t (*vax)[BP_MAX_RANK], int32_t axis,
                int64_t lo, int64_t hi, bp_view *slab)
{
    for (int j = 0; j < n; j++) {
        slab[j] = *v[j];
        int32_t a = vax ? vax[j][axis] : axis;
        if (a < 0)
            continue;
        slab[j].offset += lo * slab[j].strides[a] * (int64_t)bp_dtype_size(slab[j].dtype);
        slab[j].shape[a] = hi - lo;
    }
}

typedef struct split_job {
    bpc_dev *dev;
    int n, ns;
    const bp_view *const *v;
    const int32_t (*vax)[BP_MAX_RANK];
    int32_t axis;
    int64_t extent;
    bpc_slab_fn fn;
    const void *args;
    bp_status st[BPC_MAX_SLABS];
} split_job;

static void split_item(void *ctx, int64_t t)
{
    split_job *j = ctx;
    bp_view s[BPC_MAX_VIEWS];
    int64_t lo = j->extent * t / j->ns, hi = j->extent * (t + 1) / j->ns;
    cut(j->n, j->v, j->vax, j->axis, lo, hi, s);
    j->st[t] = j->fn(j->dev, j->args, s, lo, hi);
}

bp_status bpc_split(bpc_dev *dev, int n, const bp_view *const *v, int32_t n_axes,
                    const int32_t (*vax)[BP_MAX_RANK], bool leading, int64_t work, bpc_slab_fn fn,
                    const void *args)
{
    bp_view slab[BPC_MAX_VIEWS];
    int team = bpc_team(dev, work);
    int32_t axis = -1;
    if (team > 1)
        axis = pick_axis(v[0], n_axes, leading, &team);
    if (axis < 0 || team <= 1) {
        cut(n, v, NULL, -1, 0, 0, slab);
        return fn(dev, args, slab, 0, 0);
    }
    split_job j = {.dev = dev, .n = n, .v = v, .vax = vax, .axis = axis,
                   .extent = v[0]->shape[axis], .fn = fn, .args = args};
    j.ns = bpc_slabs(team, j.extent, work);
    bpc_pool_run(dev->pool, team, j.ns, split_item, &j);
    for (int t = 0; t < j.ns; t++)
        if (j.st[t] != BP_OK) {
            /* the failing kernel set its message on a worker thread: ask the
             * same question again here, on an empty slab (no memory touched) */
            cut(n, v, vax, axis, 0, 0, slab);
            bp_status again = fn(dev, args, slab, 0, 0);
            if (again != BP_OK)
                return again;
            return bpk_fail(dev, j.st[t], "blas_cpu: a worker thread failed%s",
                            j.st[t] == BP_ERR_OUT_OF_MEMORY ? ": out of memory" : "");
        }
    return BP_OK;
}

int bpc_team(const bpc_dev *dev, int64_t work)
{
    int team = dev->threads < BPC_MAX_TEAM ? dev->threads : BPC_MAX_TEAM;
    if (work / BPC_GRAIN < team)
        team = (int)(work / BPC_GRAIN);
    return team > 1 ? team : 1;
}

int bpc_slabs(int team, int64_t extent, int64_t work)
{
    int64_t ns = (int64_t)team * BPC_SLABS_PER_THREAD;
    if (ns > work / BPC_GRAIN)
        ns = work / BPC_GRAIN;
    if (ns > extent)
        ns = extent;
    if (ns > BPC_MAX_SLABS)
        ns = BPC_MAX_SLABS;
    return ns < team ? team : (int)ns;
}
