/* DLPack exchange: lending tensors and taking other libraries' tensors,
 * zero-copy where the memory kinds match (NumPy's side of it is
 * tests/dlpack/check_numpy.py). */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"

static bp_context *ctx;
static bp_backend *cpu, *dev;

static void setup(void)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    ctx = bpt_context();
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    BPT_OK(bp_backend_get(ctx, BPT_DEVSIM_PATH, &dev));
}
static void teardown(void) { bp_context_destroy(ctx); }
TestSuite(dlpack, .init = setup, .fini = teardown);

/* A DLPack tensor made here, as another library would, whose deleter
 * counts its calls. */
typedef struct foreign {
    DLManagedTensor m;
    int64_t shape[2], strides[2];
    float data[8];
    int deleted;
} foreign;

static void foreign_delete(DLManagedTensor *self) { ((foreign *)self->manager_ctx)->deleted++; }

static void make_foreign(foreign *f, int device_type, bool transposed)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 8; i++)
        f->data[i] = (float)i;
    f->shape[0] = 2;
    f->shape[1] = 4;
    DLTensor *d = &f->m.dl_tensor;
    d->data = f->data;
    d->device = (DLDevice){(DLDeviceType)device_type, 0};
    d->ndim = 2;
    d->dtype = (DLDataType){kDLFloat, 32, 1};
    d->shape = f->shape;
    if (transposed) { /* a (4, 2) view of the same memory: column-major */
        f->shape[0] = 4;
        f->shape[1] = 2;
        f->strides[0] = 1;
        f->strides[1] = 4;
        d->strides = f->strides;
    }
    f->m.manager_ctx = f;
    f->m.deleter = foreign_delete;
}

Test(dlpack, a_lent_tensor_is_its_memory_and_keeps_it_alive)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_I32, 2, (int64_t[]){2, 3}, (int32_t[]){1, 2, 3, 4, 5, 6}, &t));
    DLManagedTensor *m = NULL;
    BPT_OK(bp_tensor_to_dlpack(t, &m));
    bp_tensor_release(t); /* the DLPack tensor still holds it */
    cr_assert_eq(m->dl_tensor.ndim, 2);
    cr_assert_eq(m->dl_tensor.shape[1], 3);
    cr_assert_eq(m->dl_tensor.device.device_type, kDLCPU);
    cr_assert(m->dl_tensor.dtype.code == kDLInt && m->dl_tensor.dtype.bits == 32);
    cr_assert_null(m->dl_tensor.strides);
    const int32_t *v = (const int32_t *)((const char *)m->dl_tensor.data + m->dl_tensor.byte_offset);
    cr_assert_eq(v[5], 6);
    m->deleter(m);
}

Test(dlpack, a_round_trip_through_dlpack_shares_memory_on_a_host_backend)
{
    bp_tensor *t = NULL, *back = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_F64, 1, (int64_t[]){3}, (double[]){1, 2, 3}, &t));
    DLManagedTensor *m = NULL, *m2 = NULL;
    BPT_OK(bp_tensor_to_dlpack(t, &m));
    BPT_OK(bp_tensor_from_dlpack(cpu, m, &back)); /* now owns m */
    BPT_OK(bp_tensor_to_dlpack(back, &m2));
    cr_assert_eq(m2->dl_tensor.data, m->dl_tensor.data, "copied instead of shared");
    m2->deleter(m2);
    double out[3];
    BPT_OK(bp_tensor_to_host(back, out, sizeof out));
    cr_assert_arr_eq(out, ((double[]){1, 2, 3}), sizeof out);
    bp_tensor_release(back); /* calls m's deleter, which releases t's last reference */
    bp_tensor_release(t);
}

Test(dlpack, a_foreign_tensor_is_released_once_when_the_tensor_goes)
{
    foreign f;
    make_foreign(&f, kDLCPU, false);
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_eq(f.deleted, 0, "released while the tensor uses it");
    bp_tensor *s = NULL;
    BPT_OK(bp_sum(t, 0, NULL, false, &s));
    double total;
    BPT_OK(bp_item_f64(s, &total));
    cr_assert_eq(total, 28.0);
    bp_tensor_release(s);
    bp_tensor_release(t);
    cr_assert_eq(f.deleted, 1);
}

Test(dlpack, a_strided_foreign_tensor_is_copied_into_a_dense_one)
{
    foreign f;
    make_foreign(&f, kDLCPU, true);
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_eq(f.deleted, 1, "copied: the foreign memory is released at once");
    float out[8];
    BPT_OK(bp_tensor_to_host(t, out, sizeof out));
    cr_assert_arr_eq(out, ((float[]){0, 4, 1, 5, 2, 6, 3, 7}), sizeof out);
    bp_tensor_release(t);
}

Test(dlpack, host_memory_goes_to_a_device_backend_by_copy)
{
    foreign f;
    make_foreign(&f, kDLCPU, false);
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_dlpack(dev, &f.m, &t));
    cr_assert_eq(f.deleted, 1);
    float out[8];
    BPT_OK(bp_tensor_to_host(t, out, sizeof out));
    cr_assert_arr_eq(out, f.data, sizeof out);
    bp_tensor_release(t);
}

Test(dlpack, device_memory_for_a_host_backend_is_a_mismatch_naming_the_fix)
{
    foreign f;
    make_foreign(&f, kDLCUDA, false);
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_BACKEND_MISMATCH, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_null(t);
    cr_assert_eq(f.deleted, 0, "on failure the caller keeps the tensor");
    cr_assert(strstr(bp_last_error(), "CUDA device") && strstr(bp_last_error(), "t.cpu()"), "%s",
              bp_last_error());
}

Test(dlpack, a_private_memory_backend_says_to_copy_to_a_host_backend_first)
{
    bp_tensor *t = NULL;
    BPT_OK(bp_ones(dev, BP_F32, 1, (int64_t[]){2}, &t));
    DLManagedTensor *m = NULL;
    BPT_FAILS(BP_ERR_UNSUPPORTED_OP, bp_tensor_to_dlpack(t, &m));
    cr_assert_null(m);
    cr_assert(strstr(bp_last_error(), "bp_backend_copy"), "%s", bp_last_error());
    bp_tensor_release(t);
}

Test(dlpack, dtypes_map_both_ways_and_others_are_refused)
{
    for (int d = 0; d < BP_DTYPE_COUNT; d++) {
        bp_tensor *t = NULL, *back = NULL;
        BPT_OK(bp_zeros(cpu, (bp_dtype)d, 1, (int64_t[]){2}, &t));
        DLManagedTensor *m = NULL;
        BPT_OK(bp_tensor_to_dlpack(t, &m));
        BPT_OK(bp_tensor_from_dlpack(cpu, m, &back));
        cr_assert_eq(bp_tensor_dtype(back), (bp_dtype)d);
        bp_tensor_release(back);
        bp_tensor_release(t);
    }
    foreign f;
    make_foreign(&f, kDLCPU, false);
    f.m.dl_tensor.dtype = (DLDataType){kDLInt, 16, 1};
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_DTYPE, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_eq(f.deleted, 0);
}
