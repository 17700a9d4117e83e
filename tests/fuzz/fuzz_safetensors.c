/* fuzz_safetensors: the input is a .safetensors file. bp_safetensors_open
 * must either refuse it (a known status, a message, no handle; never out of
 * memory, which a file this small cannot exhaust) or give a
 * handle whose every entry is consistent with the file's bytes: in bounds,
 * its size the product of its shape and dtype, found by its name, and loaded
 * onto the binary backend, both copied and mapped (bp_safetensors_load and
 * _load_mapped), with exactly the bytes the file holds there. Each
 * mapped tensor is also lent through DLPack and taken back, onto
 * binary and onto blas_cpu, with the same bytes; the capsule's deleter runs
 * exactly once, and after every tensor is released the backends hold no
 * bytes. The handle is closed before or after the loaded tensors are
 * released, and the originals go before or after the ones taken back (a
 * loaded tensor keeps the mapping alive). Seeds:
 * tests/fuzz/corpus/fuzz_safetensors (files written by Python's safetensors,
 * made by make_safetensors_seeds.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include <backplane/backplane.h>

#include "fz_anchor.h"
#include "fz_oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_path[600];
static bp_context *ctx;
static bp_backend *binary, *blas;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = fz_setup();
    snprintf(fz_path, sizeof fz_path, "%s/input.safetensors", dir);
    ctx = fz_anchor(dir);
    if (bp_backend_get(ctx, "binary", &binary) != BP_OK)
        fz_fail("the binary backend: %s", bp_last_error());
    if (bp_backend_get(ctx, "blas_cpu", &blas) != BP_OK)
        blas = binary; /* built without OpenBLAS */
    return 0;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

/* Entry i against the file: returns the tensor loaded from it, or NULL. */
static bp_tensor *check_entry(bp_safetensors *f, size_t i, const uint8_t *data, uint64_t base,
                              uint64_t data_size)
{
    bp_safetensors_entry e = {.struct_size = sizeof e};
    fz_mark();
    bp_status st = bp_safetensors_entry_at(f, i, &e);
    fz_status("bp_safetensors_entry_at", st);
    if (st != BP_OK)
        fz_fail("entry %zu of %zu cannot be read: %s", i, bp_safetensors_count(f), bp_last_error());
    if (!e.name || !e.dtype_name || (e.rank > 0 && !e.shape) || e.rank < 0)
        fz_fail("entry %zu has a NULL name, dtype or shape, or rank %d", i, (int)e.rank);
    if (e.offset > data_size || e.nbytes > data_size - e.offset)
        fz_fail("entry '%s' lies outside the data: [%llu, +%llu) of %llu", e.name,
                (unsigned long long)e.offset, (unsigned long long)e.nbytes,
                (unsigned long long)data_size);
    size_t at = SIZE_MAX;
    fz_mark();
    st = bp_safetensors_find(f, e.name, &at);
    fz_status("bp_safetensors_find", st);
    if (st != BP_OK || at != i)
        fz_fail("entry '%s' (index %zu) is found at %zu (%s)", e.name, i, at,
                bp_status_string(st));
    if (e.dtype < 0 || e.rank > BP_MAX_RANK)
        return NULL; /* a dtype backplane lacks, or too many axes: load refuses it */
    int64_t numel = 1;
    for (int32_t k = 0; k < e.rank; k++)
        numel *= e.shape[k]; /* validated by open: no overflow */
    if ((uint64_t)numel * bp_dtype_size((bp_dtype)e.dtype) != e.nbytes)
        fz_fail("entry '%s': %lld elements of %s but %llu bytes", e.name, (long long)numel,
                e.dtype_name, (unsigned long long)e.nbytes);
    void *host = malloc(e.nbytes ? e.nbytes : 1);
    if (!host)
        fz_fail("out of memory");
    bp_tensor *t = NULL;
    for (int mapped = 0; mapped < 2; mapped++) {
        const char *fn = mapped ? "bp_safetensors_load_mapped" : "bp_safetensors_load";
        t = (bp_tensor *)(uintptr_t)0x10;
        fz_mark();
        st = mapped ? bp_safetensors_load_mapped(f, e.name, binary, &t)
                    : bp_safetensors_load(f, e.name, binary, &t);
        fz_result(fn, st, t);
        if (st != BP_OK) {
            free(host);
            return NULL;
        }
        fz_mark();
        st = bp_tensor_to_host(t, host, e.nbytes);
        fz_status("bp_tensor_to_host", st);
        if (st == BP_OK && memcmp(host, data + base + e.offset, e.nbytes) != 0)
            fz_fail("entry '%s' loaded (%s) other bytes than the file holds", e.name, fn);
        if (!mapped)
            bp_tensor_release(t); /* the copy: read, then gone */
    }
    free(host);
    return t;
}

/* A library's DLPack export, wrapped so that its deleter is counted. */
typedef struct counted {
    DLManagedTensor m;
    DLManagedTensor *inner;
    int deleted;
} counted;

static void counted_delete(DLManagedTensor *self)
{
    counted *c = self->manager_ctx;
    c->deleted++;
    c->inner->deleter(c->inner);
}

/* t lent through DLPack and taken back onto be: the same bytes. */
static bp_tensor *take_back(bp_tensor *t, bp_backend *be, counted *c)
{
    memset(c, 0, sizeof *c);
    fz_mark();
    bp_status st = bp_tensor_to_dlpack(t, &c->inner);
    fz_status("bp_tensor_to_dlpack", st);
    if (st != BP_OK)
        fz_fail("a loaded tensor cannot be lent: %s", bp_last_error());
    c->m.dl_tensor = c->inner->dl_tensor;
    c->m.manager_ctx = c;
    c->m.deleter = counted_delete;
    bp_tensor *back = (bp_tensor *)(uintptr_t)0x10;
    fz_mark();
    st = bp_tensor_from_dlpack(be, &c->m, &back);
    fz_result("bp_tensor_from_dlpack", st, back);
    if (st != BP_OK) {
        c->m.deleter(&c->m); /* refused: still ours */
        return NULL;
    }
    size_t nb = bp_tensor_nbytes(t);
    unsigned char *a = malloc(nb ? nb : 1), *b = malloc(nb ? nb : 1);
    if (!a || !b)
        fz_fail("out of memory");
    if (bp_tensor_to_host(t, a, nb) != BP_OK || bp_tensor_to_host(back, b, nb) != BP_OK)
        fz_fail("reading a tensor taken back: %s", bp_last_error());
    if (memcmp(a, b, nb) != 0)
        fz_fail("a tensor taken back through DLPack holds other bytes");
    free(a);
    free(b);
    return back;
}

static void no_bytes_in_use(bp_backend *be)
{
    bp_stats st = {.struct_size = sizeof st};
    if (bp_backend_stats(be, &st) != BP_OK || st.bytes_in_use != 0)
        fz_fail("backend %s holds %llu bytes after every tensor was released",
                bp_backend_name(be), (unsigned long long)st.bytes_in_use);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *out = fopen(fz_path, "wb");
    if (!out || fwrite(data, 1, size, out) != size || fclose(out) != 0)
        fz_fail("cannot write %s", fz_path);
    bp_safetensors *f = (bp_safetensors *)(uintptr_t)0x10;
    fz_mark();
    bp_status st = bp_safetensors_open(fz_path, &f);
    fz_status("bp_safetensors_open", st);
    if (st != BP_OK) {
        if (f)
            fz_fail("bp_safetensors_open failed but left *out = %p", (void *)f);
        if (st != BP_ERR_FORMAT && st != BP_ERR_IO && st != BP_ERR_OUT_OF_MEMORY)
            fz_fail("bp_safetensors_open refused a file with %s", bp_status_string(st));
        /* no input this small exhausts memory: out of memory here is JSON that
         * cJSON refused and the well-formedness check passed (safetensors_json.c) */
        if (st == BP_ERR_OUT_OF_MEMORY && size < ((size_t)1 << 20))
            fz_fail("bp_safetensors_open says out of memory for a %zu-byte file: %s", size,
                    bp_last_error());
        fz_stdout_check();
        return 0;
    }
    if (!f || size < 8)
        fz_fail("bp_safetensors_open accepted %zu bytes without a handle or a header", size);
    const uint64_t header = le64(data);
    if (header > size - 8)
        fz_fail("bp_safetensors_open accepted a header of %llu bytes in a %zu-byte file",
                (unsigned long long)header, size);
    const uint64_t base = 8 + header, data_size = size - base;
    for (size_t i = 0; i < bp_safetensors_metadata_count(f); i++) {
        const char *k = NULL, *v = NULL;
        if (bp_safetensors_metadata_at(f, i, &k, &v) != BP_OK || !k || !v)
            fz_fail("metadata %zu cannot be read", i);
        (void)strlen(k);
        (void)strlen(v);
    }
    size_t n = bp_safetensors_count(f);
    bp_tensor *loaded[64] = {NULL};
    for (size_t i = 0; i < n; i++) {
        bp_tensor *t = check_entry(f, i, data, base, data_size);
        if (t && i < 64)
            loaded[i] = t;
        else
            bp_tensor_release(t);
    }
    static counted lent[64][2];
    bp_tensor *back[64][2] = {{NULL}};
    for (size_t i = 0; i < 64; i++)
        for (int j = 0; loaded[i] && j < 2; j++)
            back[i][j] = take_back(loaded[i], j ? blas : binary, &lent[i][j]);
    bool close_first = size % 2 == 0; /* the mapping must outlive the handle */
    bool originals_first = size % 3 == 0;
    if (close_first)
        bp_safetensors_close(f);
    for (size_t i = 0; i < 64; i++) {
        if (loaded[i] && close_first) { /* read again: the pages must still be mapped */
            size_t nb = bp_tensor_nbytes(loaded[i]);
            void *host = malloc(nb ? nb : 1);
            if (!host)
                fz_fail("out of memory");
            if (bp_tensor_to_host(loaded[i], host, nb) != BP_OK)
                fz_fail("a tensor loaded from a closed file cannot be read: %s", bp_last_error());
            free(host);
        }
        if (originals_first)
            bp_tensor_release(loaded[i]);
        bp_tensor_release(back[i][0]);
        bp_tensor_release(back[i][1]);
        if (!originals_first)
            bp_tensor_release(loaded[i]);
    }
    if (!close_first)
        bp_safetensors_close(f);
    for (size_t i = 0; i < 64; i++)
        for (int j = 0; loaded[i] && j < 2; j++)
            if (lent[i][j].inner && lent[i][j].deleted != 1)
                fz_fail("the DLPack deleter of a lent tensor ran %d times, want once",
                        lent[i][j].deleted);
    no_bytes_in_use(binary);
    no_bytes_in_use(blas);
    fz_stdout_check();
    return 0;
}
