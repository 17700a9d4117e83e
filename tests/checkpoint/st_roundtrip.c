/* st_roundtrip IN OUT [BACKEND]: load every tensor of the safetensors file
 * IN onto BACKEND (default binary; a name or a plugin path) and save them all,
 * with IN's metadata, to OUT. The reference-implementation test
 * (check_reference.py) writes IN with Python's safetensors and reads OUT
 * back with it, comparing bits. Errors go to stderr; exit 1. */
#include <stdio.h>
#include <stdlib.h>

#include <backplane/backplane.h>

static int fail(const char *what)
{
    fprintf(stderr, "st_roundtrip: %s: %s\n", what, bp_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: st_roundtrip IN OUT [BACKEND]\n");
        return 2;
    }
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    bp_safetensors *f = NULL;
    if (bp_context_create(NULL, &ctx) != BP_OK)
        return fail("bp_context_create");
    if (bp_backend_get(ctx, argc > 3 ? argv[3] : "binary", &be) != BP_OK)
        return fail("bp_backend_get");
    if (bp_safetensors_open(argv[1], &f) != BP_OK)
        return fail("bp_safetensors_open");
    size_t n = bp_safetensors_count(f), nm = bp_safetensors_metadata_count(f);
    const char **names = calloc(n + 1, sizeof *names);
    bp_tensor **ts = calloc(n + 1, sizeof *ts);
    const char **meta = calloc(2 * nm + 1, sizeof *meta);
    if (!names || !ts || !meta)
        return fprintf(stderr, "st_roundtrip: out of memory\n"), 1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        if (bp_safetensors_entry_at(f, i, &e) != BP_OK ||
            bp_safetensors_load(f, e.name, be, &ts[i]) != BP_OK)
            rc = fail("loading a tensor");
        names[i] = e.name;
    }
    for (size_t i = 0; i < nm && rc == 0; i++)
        if (bp_safetensors_metadata_at(f, i, &meta[2 * i], &meta[2 * i + 1]) != BP_OK)
            rc = fail("bp_safetensors_metadata_at");
    if (rc == 0 && bp_save_safetensors(argv[2], n, names, (const bp_tensor *const *)ts,
                                       nm ? meta : NULL) != BP_OK)
        rc = fail("bp_save_safetensors");
    for (size_t i = 0; i < n; i++)
        bp_tensor_release(ts[i]);
    bp_safetensors_close(f); /* after the save: the names live in it */
    free(names);
    free(ts);
    free(meta);
    bp_context_destroy(ctx);
    return rc;
}
