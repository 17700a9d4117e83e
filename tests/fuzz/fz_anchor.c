/* The context that keeps the plugins mapped (fz_anchor.h). */
#include "fz_anchor.h"

#include <stdio.h>
#include <string.h>

#include "fz_oracle.h"

static bp_context *anchor;

const char *fz_plugin_file(const char *name)
{
    bp_plugin_record r = {.struct_size = sizeof(bp_plugin_record)};
    for (size_t i = 0; i < bp_context_plugin_count(anchor); i++)
        if (bp_context_plugin(anchor, i, &r) == BP_OK && strcmp(r.name, name) == 0)
            return r.path;
    return "";
}

bp_context *fz_anchor(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/anchor.ini", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs("[backplane]\nlog_level = off\n", f) < 0 || fclose(f) != 0)
        fz_fail("cannot write %s", path);
    if (bp_context_create(path, &anchor) != BP_OK)
        fz_fail("the anchor context: %s", bp_last_error());
    bp_backend *b;
    if (bp_backend_get(anchor, "binary", &b) != BP_OK ||
        bp_backend_get(anchor, "blas_cpu", &b) != BP_OK)
        fz_fail("the harnesses need the binary and blas_cpu plugins: %s", bp_last_error());
    return anchor;
}
