/* The tolerance table: conform/tolerances.txt (embedded in the
 * library at build time, so nothing needs a data file), or a file given at
 * run time. One line per entry:
 *   OPS DTYPES KIND VALUE [atol=X] [when=tf32] | reason
 * OPS and DTYPES are comma-separated fnmatch globs; the first matching entry
 * wins; every entry must give its reason. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { MAX_ENTRIES = 128 };

typedef struct tol_entry {
    char ops[128], dtypes[64];
    bool tf32_only;
    cf_tol tol;
    char reason[256];
} tol_entry;

struct cf_tol_table {
    tol_entry entries[MAX_ENTRIES];
    int n_entries;
};

/* "a,b*,c" matches s if any comma-separated fnmatch pattern does. */
static bool glob_any(const char *globs, const char *s)
{
    char buf[128];
    const char *p = globs;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len >= sizeof buf)
            len = sizeof buf - 1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (fnmatch(buf, s, 0) == 0)
            return true;
        p += len;
        if (*p == ',')
            p++;
    }
    return false;
}

/* The entry's fields (s: the text before '|') into e; false with the reason
 * in why. */
static bool parse_fields(char *s, tol_entry *e, char *why, size_t cap)
{
    char kind[16] = "", extra[2][32] = {"", ""};
    double value = 0;
    int got = sscanf(s, "%127s %63s %15s %lf %31s %31s", e->ops, e->dtypes, kind, &value,
                     extra[0], extra[1]);
    if (got < 4) {
        snprintf(why, cap, "expected OPS DTYPES KIND VALUE [atol=X] [when=tf32] | reason");
        return false;
    }
    if (strcmp(kind, "exact") == 0)
        e->tol.kind = CF_TOL_EXACT;
    else if (strcmp(kind, "ulp") == 0)
        e->tol.kind = CF_TOL_ULP;
    else if (strcmp(kind, "norm") == 0)
        e->tol.kind = CF_TOL_NORM;
    else {
        snprintf(why, cap, "kind '%s' is not exact, ulp or norm", kind);
        return false;
    }
    e->tol.value = value;
    for (int k = 0; k < got - 4; k++) {
        char *end = NULL;
        if (strncmp(extra[k], "atol=", 5) == 0)
            e->tol.atol = strtod(extra[k] + 5, &end);
        else if (strcmp(extra[k], "when=tf32") == 0)
            e->tf32_only = true;
        else {
            snprintf(why, cap, "unknown option '%s'", extra[k]);
            return false;
        }
        if (end && *end) {
            snprintf(why, cap, "bad %s", extra[k]);
            return false;
        }
    }
    return true;
}

/* One line that is not blank or a comment into e; false with the reason in
 * why. */
static bool parse_entry(char *s, tol_entry *e, char *why, size_t cap)
{
    char *bar = strchr(s, '|');
    if (!bar) {
        snprintf(why, cap, "no reason: every entry needs '| reason'");
        return false;
    }
    *bar = '\0';
    char *reason = bar + 1;
    while (*reason == ' ' || *reason == '\t')
        reason++;
    if (!*reason) {
        snprintf(why, cap, "empty reason");
        return false;
    }
    memset(e, 0, sizeof *e);
    if (!parse_fields(s, e, why, cap))
        return false;
    size_t rl = strlen(reason);
    while (rl > 0 && (reason[rl - 1] == ' ' || reason[rl - 1] == '\t' || reason[rl - 1] == '\r'))
        reason[--rl] = '\0';
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    return true;
}

/* Parse text into t; false with a message naming origin and the line. */
static bool parse_table(cf_tol_table *t, const char *text, const char *origin, char *err,
                        size_t err_size)
{
    int line = 0;
    const char *p = text;
    char why[200];
    while (*p) {
        line++;
        size_t len = strcspn(p, "\n");
        char buf[512];
        if (len >= sizeof buf) {
            snprintf(err, err_size, "%s:%d: line too long", origin, line);
            return false;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (p[len] == '\n');
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0' || *s == '#')
            continue;
        tol_entry e;
        if (!parse_entry(s, &e, why, sizeof why)) {
            snprintf(err, err_size, "%s:%d: %s", origin, line, why);
            return false;
        }
        if (t->n_entries == MAX_ENTRIES) {
            snprintf(err, err_size, "%s:%d: more than %d entries", origin, line, MAX_ENTRIES);
            return false;
        }
        tol_entry *kept = &t->entries[t->n_entries++];
        *kept = e;
        kept->tol.line = line;
        kept->tol.reason = kept->reason; /* the table's own copy */
    }
    return true;
}

cf_tol cf_tol_find(const cf_tol_table *t, const char *op, bp_dtype dt, bool tf32)
{
    const char *dn = (int)dt >= 0 ? bp_dtype_name(dt) : "-";
    for (int i = 0; i < t->n_entries; i++) {
        const tol_entry *e = &t->entries[i];
        if (e->tf32_only && !tf32)
            continue;
        if (glob_any(e->ops, op) && glob_any(e->dtypes, dn))
            return e->tol;
    }
    return (cf_tol){CF_TOL_EXACT, 0, 0, 0, "no entry: exact"};
}

/* The whole file as a string (malloc'd), or NULL. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (buf && failed) {
        free(buf);
        return NULL;
    }
    if (buf)
        buf[n] = '\0';
    return buf;
}

cf_tol_table *cf_tol_load(const char *path, bp_status *status, char *err, size_t err_size)
{
    cf_tol_table *t = calloc(1, sizeof *t);
    if (!t) {
        *status = BP_ERR_OUT_OF_MEMORY;
        snprintf(err, err_size, "out of memory loading the tolerance table");
        return NULL;
    }
    char *text = NULL;
    if (path) {
        text = read_text(path);
        if (!text) {
            *status = BP_ERR_IO;
            snprintf(err, err_size, "cannot read the tolerance file %s", path);
            free(t);
            return NULL;
        }
    }
    bool ok = parse_table(t, text ? text : cf_tolerance_text,
                          path ? path : "conform/tolerances.txt", err, err_size);
    free(text);
    if (!ok) {
        *status = BP_ERR_FORMAT;
        free(t);
        return NULL;
    }
    *status = BP_OK;
    return t;
}

void cf_tol_free(cf_tol_table *t)
{
    free(t);
}
