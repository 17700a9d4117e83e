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

Test(dlpack, an_empty_tensor_with_null_data_imports_as_an_empty_tensor)
{
    /* PyTorch hands out empty tensors with data NULL, on the host and on CUDA */
    const int kinds[] = {kDLCPU, kDLCUDA};
    bp_backend *backends[] = {cpu, dev};
    for (size_t k = 0; k < 2; k++)
        for (size_t b = 0; b < 2; b++) {
            foreign f;
            make_foreign(&f, kinds[k], false);
            f.shape[0] = 0;
            f.m.dl_tensor.data = NULL;
            f.m.dl_tensor.byte_offset = 64;
            bp_tensor *t = NULL;
            bp_status st = bp_tensor_from_dlpack(backends[b], &f.m, &t);
            cr_assert_eq(st, BP_OK, "memory kind %d onto %s: %s: %s", kinds[k],
                         bp_backend_name(backends[b]), bp_status_string(st), bp_last_error());
            cr_assert_eq(f.deleted, 1, "nothing was used: the foreign tensor is released at once");
            cr_assert_eq(bp_tensor_rank(t), 2);
            cr_assert(bp_tensor_shape(t)[0] == 0 && bp_tensor_shape(t)[1] == 4);
            cr_assert_eq(bp_tensor_numel(t), 0);
            bp_tensor *s = NULL;
            BPT_OK(bp_sum(t, 0, NULL, false, &s));
            double total;
            BPT_OK(bp_item_f64(s, &total));
            cr_assert_eq(total, 0.0);
            bp_tensor_release(s);
            bp_tensor_release(t);
        }
}

Test(dlpack, a_tensor_with_elements_and_null_data_is_refused)
{
    foreign f;
    make_foreign(&f, kDLCPU, false);
    f.m.dl_tensor.data = NULL;
    bp_tensor *t = (bp_tensor *)&t;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_null(t);
    cr_assert_eq(f.deleted, 0, "on failure the caller keeps the tensor");
    cr_assert(strstr(bp_last_error(), "8 elements") && strstr(bp_last_error(), "NULL"), "%s",
              bp_last_error());
}

Test(dlpack, a_byte_offset_that_wraps_around_the_address_space_is_refused)
{
    foreign f;
    make_foreign(&f, kDLCPU, false);
    /* data + byte_offset wraps to 16 bytes below data: aligned, and not the tensor's */
    f.m.dl_tensor.byte_offset = UINT64_MAX - 15;
    bp_tensor *t = (bp_tensor *)&t;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_null(t);
    cr_assert_eq(f.deleted, 0);
    cr_assert(strstr(bp_last_error(), "byte_offset") && strstr(bp_last_error(), "address space"),
              "%s", bp_last_error());
    /* and data whose last byte would lie past the end */
    make_foreign(&f, kDLCPU, false);
    f.m.dl_tensor.data = (void *)(UINTPTR_MAX - 15);
    f.m.dl_tensor.byte_offset = 0;
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_null(t);
    cr_assert_eq(f.deleted, 0);
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
    f.m.dl_tensor.dtype = (DLDataType){kDLComplex, 64, 1};
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_DTYPE, bp_tensor_from_dlpack(cpu, &f.m, &t));
    cr_assert_eq(f.deleted, 0);
}

/* ---- the same memory taken more than once ------------------------------- */

/* The host backends that can use memory in place: binary, and blas_cpu
 * where it was built (its buffer cache would recycle a block freed too
 * early under a live tensor). */
static size_t host_backends(bp_backend **out)
{
    size_t n = 0;
    out[n++] = cpu;
    bp_backend *blas = NULL;
    if (bp_backend_get(ctx, "blas_cpu", &blas) == BP_OK)
        out[n++] = blas;
    return n;
}

/* Memory of another library on the heap, freed by its deleter: a use of it
 * after the deleter ran is a heap-use-after-free under ASan. */
typedef struct lender {
    DLManagedTensor m;
    int64_t shape[1];
    int *deleted;
} lender;

static void lender_delete(DLManagedTensor *self)
{
    lender *l = self->manager_ctx;
    (*l->deleted)++;
    free(l);
}

/* A DLPack tensor of 6 floats at data, whose deleter counts into *deleted. */
static DLManagedTensor *lend(float *data, int *deleted)
{
    lender *l = calloc(1, sizeof *l);
    cr_assert_not_null(l);
    l->shape[0] = 6;
    l->deleted = deleted;
    DLTensor *d = &l->m.dl_tensor;
    d->data = data;
    d->device = (DLDevice){kDLCPU, 0};
    d->ndim = 1;
    d->dtype = (DLDataType){kDLFloat, 32, 1};
    d->shape = l->shape;
    l->m.manager_ctx = l;
    l->m.deleter = lender_delete;
    return &l->m;
}

static void expect_values(const bp_tensor *t, const float *want)
{
    float got[6];
    BPT_OK(bp_tensor_to_host(t, got, sizeof got));
    cr_assert_arr_eq(got, want, sizeof got);
}

static uint64_t bytes_in_use(bp_backend *b)
{
    bp_stats s = {.struct_size = sizeof s};
    BPT_OK(bp_backend_stats(b, &s));
    return s.bytes_in_use;
}

/* The second import shares the first's buffer, so the first import's
 * memory is given back when neither import's tensors remain; the second's
 * as soon as its own tensors are gone. Never the other import's deleter,
 * never twice, never under a live tensor. */
Test(dlpack, memory_taken_twice_is_given_back_once_by_each_import_and_never_under_a_live_tensor)
{
    bp_backend *bes[2];
    size_t n = host_backends(bes);
    for (size_t i = 0; i < n; i++) {
        for (int first = 0; first < 2; first++) {
            float *data = malloc(6 * sizeof *data);
            cr_assert_not_null(data);
            for (int k = 0; k < 6; k++)
                data[k] = (float)(k + 1);
            int deleted[2] = {0, 0};
            bp_tensor *t[2] = {NULL, NULL};
            BPT_OK(bp_tensor_from_dlpack(bes[i], lend(data, &deleted[0]), &t[0]));
            BPT_OK(bp_tensor_from_dlpack(bes[i], lend(data, &deleted[1]), &t[1]));
            cr_assert_eq(deleted[0] + deleted[1], 0, "%s: an import gave its memory back while "
                         "its tensor lives", bp_backend_name(bes[i]));
            bp_tensor_release(t[first]);
            cr_assert_eq(deleted[1 - first], 0, "%s: releasing one import ran the other's deleter",
                         bp_backend_name(bes[i]));
            if (first == 1)
                cr_assert_eq(deleted[1], 1, "%s: the second import's deleter did not run when its "
                             "tensor went", bp_backend_name(bes[i]));
            expect_values(t[1 - first], data);
            bp_tensor_release(t[1 - first]);
            cr_assert(deleted[0] == 1 && deleted[1] == 1, "%s: deleters ran %d and %d times, want "
                      "once each", bp_backend_name(bes[i]), deleted[0], deleted[1]);
            cr_assert_eq(bytes_in_use(bes[i]), 0);
            free(data);
        }
    }
}

Test(dlpack, an_imported_tensor_exported_and_taken_back_releases_its_memory_once_unused)
{
    bp_backend *bes[2];
    size_t n = host_backends(bes);
    for (size_t i = 0; i < n; i++) {
        for (int first = 0; first < 2; first++) {
            float *data = malloc(6 * sizeof *data);
            cr_assert_not_null(data);
            const float want[6] = {1, 2, 3, 4, 5, 6};
            memcpy(data, want, sizeof want);
            int deleted = 0;
            bp_tensor *t[2] = {NULL, NULL};
            BPT_OK(bp_tensor_from_dlpack(bes[i], lend(data, &deleted), &t[0]));
            DLManagedTensor *m = NULL;
            BPT_OK(bp_tensor_to_dlpack(t[0], &m));
            BPT_OK(bp_tensor_from_dlpack(bes[i], m, &t[1]));
            bp_tensor_release(t[first]);
            cr_assert_eq(deleted, 0, "%s: the memory went back while a tensor uses it",
                         bp_backend_name(bes[i]));
            expect_values(t[1 - first], want);
            bp_tensor_release(t[1 - first]);
            cr_assert_eq(deleted, 1, "%s: the memory was given back %d times, want once",
                         bp_backend_name(bes[i]), deleted);
            cr_assert_eq(bytes_in_use(bes[i]), 0, "%s: a tensor outlived its handles",
                         bp_backend_name(bes[i]));
            free(data);
        }
    }
}

Test(dlpack, a_backend_tensor_exported_and_taken_back_twice_shares_its_memory)
{
    bp_backend *bes[2];
    size_t n = host_backends(bes);
    for (size_t i = 0; i < n; i++) {
        const float want[6] = {1, 2, 3, 4, 5, 6};
        bp_tensor *t = NULL, *back[2] = {NULL, NULL};
        BPT_OK(bp_tensor_from_host(bes[i], BP_F32, 1, (int64_t[]){6}, want, &t));
        DLManagedTensor *m[2] = {NULL, NULL};
        BPT_OK(bp_tensor_to_dlpack(t, &m[0]));
        BPT_OK(bp_tensor_to_dlpack(t, &m[1]));
        void *where = m[0]->dl_tensor.data;
        BPT_OK(bp_tensor_from_dlpack(bes[i], m[0], &back[0]));
        BPT_OK(bp_tensor_from_dlpack(bes[i], m[1], &back[1]));
        uint64_t in_use = bytes_in_use(bes[i]);
        cr_assert_eq(in_use, sizeof want, "%s: %llu bytes in use, want one buffer's %zu",
                     bp_backend_name(bes[i]), (unsigned long long)in_use, sizeof want);
        bp_tensor_release(t);
        bp_tensor_release(back[1]);
        DLManagedTensor *again = NULL;
        BPT_OK(bp_tensor_to_dlpack(back[0], &again));
        cr_assert_eq(again->dl_tensor.data, where, "copied instead of shared");
        again->deleter(again);
        expect_values(back[0], want);
        bp_tensor_release(back[0]);
        cr_assert_eq(bytes_in_use(bes[i]), 0);
    }
}
