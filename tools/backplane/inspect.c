/* backplane inspect: what a safetensors checkpoint holds, without loading
 * it: every tensor's name, dtype, shape, bytes and offset, and the metadata.
 * The file is validated as bp_safetensors_open validates it, so a broken
 * file is reported with what is wrong and where. */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

static const char *const CMD = "inspect";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane inspect FILE.safetensors [--json]\n"
            "\n"
            "List the tensors of a safetensors checkpoint (name, dtype, shape, bytes,\n"
            "offset in the data) and its metadata, after validating the whole header.\n"
            "Dtypes backplane does not have (I16, U32, F8_E4M3...) are listed too.\n"
            "\n"
            "options:\n"
            "  --json      print one JSON object instead of text\n"
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

static void print_json(const char *path, const bp_safetensors *f)
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
        printf("], \"bytes\": %" PRIu64 ", \"offset\": %" PRIu64 "}", e.nbytes, e.offset);
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
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
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
    if (json)
        print_json(path, f);
    else
        print_text(path, f);
    bp_safetensors_close(f);
    fflush(stdout);
    return ferror(stdout) ? cli_error(CMD, "cannot write to standard output") : CLI_EXIT_OK;
}
