/* backplane inspect: what a safetensors checkpoint holds, without loading
 * it: every tensor's name, dtype, shape, bytes and offset, and the metadata;
 * with --values, each tensor's values too, loaded onto the binary backend and
 * printed as bp_tensor_print prints them. The file is validated as
 * bp_safetensors_open validates it, so a broken file is reported with what
 * is wrong and where. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "inspect";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane inspect FILE.safetensors [--values] [--json]\n"
            "\n"
            "List the tensors of a safetensors checkpoint (name, dtype, shape, bytes,\n"
            "offset in the data) and its metadata, after validating the whole header.\n"
            "Dtypes backplane does not have (I16, U32, F8_E4M3...) are listed too.\n"
            "\n"
            "options:\n"
            "  --values    also print each tensor's values, as bp_tensor_print does (as\n"
            "              NumPy prints arrays; large tensors summarised with ...)\n"
            "  --json      print one JSON object instead of text (with --values, each\n"
            "              tensor's printed values as \"values\")\n"
            "  -h, --help  show this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if the file cannot be read or is not valid\n"
            "safetensors (the reason is on stderr), 2 for a usage error.\n");
}

static const char *shape_text(const bp_safetensors_entry *e, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "(");
    for (int32_t k = 0; k < e->rank && used < cap; k++)
        used += (size_t)snprintf(buf + used, cap - used, k ? ", %" PRId64 : "%" PRId64,
                                 e->shape[k]);
    if (used < cap)
        snprintf(buf + used, cap - used, e->rank == 1 ? ",)" : ")");
    return buf;
}

/* What --values needs: a context and its binary backend. */
typedef struct values_backend {
    bp_context *ctx;
    bp_backend *be;
} values_backend;

/* Tensor name of f as bp_tensor_print prints it, malloc'ed (no trailing
 * newline); NULL with *why set when it cannot be shown. */
static char *values_text(const bp_safetensors *f, const bp_safetensors_entry *e,
                         const values_backend *vb, char *why, size_t cap)
{
    if (e->dtype < 0) {
        snprintf(why, cap, "values not shown: %s is a dtype backplane does not have",
                 e->dtype_name);
        return NULL;
    }
    bp_tensor *t = NULL;
    bp_status st = bp_safetensors_load(f, e->name, vb->be, &t);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = st == BP_OK ? open_memstream(&text, &len) : NULL;
    if (st == BP_OK && !mem)
        st = BP_ERR_OUT_OF_MEMORY;
    if (mem) {
        st = bp_tensor_print(t, mem);
        if (fclose(mem) != 0 && st == BP_OK)
            st = BP_ERR_OUT_OF_MEMORY;
    }
    bp_tensor_release(t);
    if (st != BP_OK) {
        snprintf(why, cap, "values not shown: %s: %s", bp_status_string(st), bp_last_error());
        free(text);
        return NULL;
    }
    while (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    return text;
}

static void print_values(const bp_safetensors *f, const values_backend *vb)
{
    for (size_t i = 0; i < bp_safetensors_count(f); i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        if (bp_safetensors_entry_at(f, i, &e) != BP_OK)
            continue;
        char why[1200];
        char *text = values_text(f, &e, vb, why, sizeof why);
        printf("\n%s: %s\n", e.name, text ? text : why);
        free(text);
    }
}

static void print_text(const char *path, const bp_safetensors *f)
{
    size_t n = bp_safetensors_count(f);
    uint64_t total = 0;
    int wname = 4;
    for (size_t i = 0; i < n; i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        if (bp_safetensors_entry_at(f, i, &e) == BP_OK) {
            total += e.nbytes;
            if ((int)strlen(e.name) > wname)
                wname = (int)strlen(e.name);
        }
    }
    char b[32], s[256];
    printf("%s: %zu tensor%s, %s of data\n", path, n, n == 1 ? "" : "s",
           cli_format_bytes(total, b, sizeof b));
    if (n)
        printf("  %-*s  %-7s  %-20s  %10s  %12s\n", wname, "name", "dtype", "shape", "bytes",
               "offset");
    for (size_t i = 0; i < n; i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        if (bp_safetensors_entry_at(f, i, &e) != BP_OK)
            continue;
        printf("  %-*s  %-7s  %-20s  %10s  %12" PRIu64 "%s\n", wname, e.name, e.dtype_name,
               shape_text(&e, s, sizeof s), cli_format_bytes(e.nbytes, b, sizeof b), e.offset,
               e.dtype < 0 ? "  (a dtype backplane does not have)" : "");
    }
    size_t m = bp_safetensors_metadata_count(f);
    printf("metadata: %s\n", m ? "" : "none");
    for (size_t i = 0; i < m; i++) {
        const char *k, *v;
        if (bp_safetensors_metadata_at(f, i, &k, &v) == BP_OK)
            printf("  %s = %s\n", k, v);
    }
}

static void print_json(const char *path, const bp_safetensors *f, const values_backend *vb)
{
    printf("{\"file\": ");
    cli_json_string(stdout, path);
    printf(", \"tensors\": [");
    size_t n = bp_safetensors_count(f);
    for (size_t i = 0; i < n; i++) {
        bp_safetensors_entry e = {.struct_size = sizeof e};
        if (bp_safetensors_entry_at(f, i, &e) != BP_OK)
            continue;
        printf("%s\n  {\"name\": ", i ? "," : "");
        cli_json_string(stdout, e.name);
        printf(", \"dtype\": ");
        cli_json_string(stdout, e.dtype_name);
        printf(", \"supported\": %s, \"shape\": [", e.dtype < 0 ? "false" : "true");
        for (int32_t k = 0; k < e.rank; k++)
            printf(k ? ", %" PRId64 : "%" PRId64, e.shape[k]);
        printf("], \"bytes\": %" PRIu64 ", \"offset\": %" PRIu64, e.nbytes, e.offset);
        if (vb) {
            char why[1200];
            char *text = values_text(f, &e, vb, why, sizeof why);
            printf(", \"%s\": ", text ? "values" : "values_error");
            cli_json_string(stdout, text ? text : why);
            free(text);
        }
        printf("}");
    }
    printf("%s], \"metadata\": {", n ? "\n" : "");
    for (size_t i = 0; i < bp_safetensors_metadata_count(f); i++) {
        const char *k, *v;
        if (bp_safetensors_metadata_at(f, i, &k, &v) != BP_OK)
            continue;
        printf("%s", i ? ", " : "");
        cli_json_string(stdout, k);
        printf(": ");
        cli_json_string(stdout, v);
    }
    printf("}}\n");
}

int cli_inspect(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false, values = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--values") == 0) {
            values = true;
        } else if (argv[i][0] == '-') {
            return cli_usage_error(CMD, "unknown option '%s'", argv[i]);
        } else if (path) {
            return cli_usage_error(CMD, "one file at a time ('%s' and '%s')", path, argv[i]);
        } else {
            path = argv[i];
        }
    }
    if (!path)
        return cli_usage_error(CMD, "name a .safetensors file");
    bp_safetensors *f = NULL;
    bp_status st = bp_safetensors_open(path, &f);
    if (st != BP_OK)
        return cli_fail(CMD, "cannot read the checkpoint", st);
    values_backend vb = {NULL, NULL};
    if (values) {
        st = bp_context_create(NULL, &vb.ctx);
        if (st == BP_OK)
            st = bp_backend_get(vb.ctx, "binary", &vb.be);
        if (st != BP_OK) {
            int rc = cli_fail(CMD, "--values: cannot open the binary backend", st);
            bp_context_destroy(vb.ctx);
            bp_safetensors_close(f);
            return rc;
        }
    }
    if (json) {
        print_json(path, f, values ? &vb : NULL);
    } else {
        print_text(path, f);
        if (values)
            print_values(f, &vb);
    }
    bp_safetensors_close(f);
    bp_context_destroy(vb.ctx);
    fflush(stdout);
    return ferror(stdout) ? cli_error(CMD, "cannot write to standard output") : CLI_EXIT_OK;
}
