/* backplane conform: tolerances (the data file tests/conformance/tolerances.txt,
 * embedded in the CLI at build time) and the comparison of a result with the
 * oracle. */
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

enum { MAX_ENTRIES = 128 };

typedef struct tol_entry {
    char ops[128], dtypes[64];
    bool tf32_only;
    cf_tol tol;
    char reason[256];
} tol_entry;

static tol_entry entries[MAX_ENTRIES];
static int n_entries;

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

bool cf_tol_load(const char *text, const char *origin, char *err, size_t err_size)
{
    n_entries = 0;
    if (!text)
        text = cf_tolerance_text;
    int line = 0;
    const char *p = text;
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
        p += len;
        if (*p == '\n')
            p++;
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0' || *s == '#')
            continue;
        char *bar = strchr(s, '|');
        if (!bar) {
            snprintf(err, err_size, "%s:%d: no reason: every entry needs '| reason'", origin, line);
            return false;
        }
        *bar = '\0';
        char *reason = bar + 1;
        while (*reason == ' ' || *reason == '\t')
            reason++;
        if (!*reason) {
            snprintf(err, err_size, "%s:%d: empty reason", origin, line);
            return false;
        }
        if (n_entries == MAX_ENTRIES) {
            snprintf(err, err_size, "%s:%d: more than %d entries", origin, line, MAX_ENTRIES);
            return false;
        }
        tol_entry *e = &entries[n_entries];
        memset(e, 0, sizeof *e);
        char kind[16] = "", extra[2][32] = {"", ""};
        double value = 0;
        int got = sscanf(s, "%127s %63s %15s %lf %31s %31s", e->ops, e->dtypes, kind, &value,
                         extra[0], extra[1]);
        if (got < 4) {
            snprintf(err, err_size, "%s:%d: expected OPS DTYPES KIND VALUE [atol=X] [when=tf32] | reason",
                     origin, line);
            return false;
        }
        if (strcmp(kind, "exact") == 0)
            e->tol.kind = CF_TOL_EXACT;
        else if (strcmp(kind, "ulp") == 0)
            e->tol.kind = CF_TOL_ULP;
        else if (strcmp(kind, "norm") == 0)
            e->tol.kind = CF_TOL_NORM;
        else {
            snprintf(err, err_size, "%s:%d: kind '%s' is not exact, ulp or norm", origin, line, kind);
            return false;
        }
        e->tol.value = value;
        for (int k = 0; k < got - 4; k++) {
            if (strncmp(extra[k], "atol=", 5) == 0) {
                char *end;
                e->tol.atol = strtod(extra[k] + 5, &end);
                if (*end) {
                    snprintf(err, err_size, "%s:%d: bad %s", origin, line, extra[k]);
                    return false;
                }
            } else if (strcmp(extra[k], "when=tf32") == 0) {
                e->tf32_only = true;
            } else {
                snprintf(err, err_size, "%s:%d: unknown option '%s'", origin, line, extra[k]);
                return false;
            }
        }
        size_t rl = strlen(reason);
        while (rl > 0 && (reason[rl - 1] == ' ' || reason[rl - 1] == '\t' || reason[rl - 1] == '\r'))
            reason[--rl] = '\0';
        snprintf(e->reason, sizeof e->reason, "%s", reason);
        e->tol.line = line;
        e->tol.reason = e->reason;
        n_entries++;
    }
    return true;
}

cf_tol cf_tol_find(const char *op, bp_dtype dt, bool tf32)
{
    const char *dn = (int)dt >= 0 ? bp_dtype_name(dt) : "-";
    for (int i = 0; i < n_entries; i++) {
        if (entries[i].tf32_only && !tf32)
            continue;
        if (glob_any(entries[i].ops, op) && glob_any(entries[i].dtypes, dn))
            return entries[i].tol;
    }
    return (cf_tol){CF_TOL_EXACT, 0, 0, 0, "no entry: exact"};
}

static bool is_float(bp_dtype dt) { return dt == BP_F16 || dt == BP_BF16 || dt == BP_F32 || dt == BP_F64; }

bool cf_compare(const cf_array *got, const cf_array *want, const double *scale, int64_t k,
                cf_tol tol, bool tf32, double *max_error, double *tolerance, int64_t *first_bad,
                char *msg, size_t msg_size)
{
    bp_dtype dt = want->dt;
    double eps = cf_eps(dt);
    if (tf32 && dt == BP_F32 && tol.kind == CF_TOL_NORM)
        eps = ldexp(1.0, -10);
    double bound = tol.kind == CF_TOL_ULP ? tol.value
                   : tol.kind == CF_TOL_NORM ? tol.value * (double)(k > 1 ? k : 1) * eps
                                             : 0.0;
    *tolerance = bound;
    *max_error = 0;
    *first_bad = -1;
    msg[0] = '\0';
    int64_t bad = 0;
    for (int64_t i = 0; i < want->n; i++) {
        bool ok;
        double err = 0;
        char why[200] = "";
        if (!is_float(dt)) {
            int64_t g = got->i[i], w = want->i[i];
            ok = g == w;
            err = ok ? 0 : fabs((double)g - (double)w);
            if (!ok)
                snprintf(why, sizeof why, "got %lld, want %lld", (long long)g, (long long)w);
        } else {
            double g = got->f[i], w = want->f[i], wr = cf_round(dt, w);
            if (isnan(w) || isnan(wr)) {
                ok = isnan(g);
                if (!ok)
                    snprintf(why, sizeof why, "got %.9g, want NaN", g);
            } else if (isnan(g)) {
                ok = false;
                snprintf(why, sizeof why, "got NaN, want %.9g", wr);
            } else if (isinf(w) || (isinf(wr) && tol.kind == CF_TOL_EXACT)) {
                ok = g == wr;
                if (!ok)
                    snprintf(why, sizeof why, "got %.9g, want %g (infinity sign)", g, wr);
            } else if (isinf(g)) {
                ok = isinf(wr) && g == wr;
                if (!ok)
                    snprintf(why, sizeof why, "got %g, want finite %.17g", g, wr);
            } else if (tol.kind == CF_TOL_EXACT) {
                ok = g == wr;
                err = fabs(g - wr);
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g (oracle %.17g)", g, wr, w);
            } else if (tol.kind == CF_TOL_ULP) {
                double d = fabs(g - w) - tol.atol;
                err = d > 0 ? d / cf_ulp(dt, w) : 0;
                ok = err <= bound;
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g: %.3g ulp", g, w, err);
            } else {
                double d = fabs(g - w) - cf_ulp(dt, w);
                double s = scale ? scale[i] : fabs(w);
                err = d <= 0 ? 0 : s > 0 ? d / s : INFINITY;
                ok = err <= bound;
                if (!ok)
                    snprintf(why, sizeof why, "got %.17g, want %.17g: error %.3g of sum|terms| %.3g",
                             g, w, err, s);
            }
        }
        if (err > *max_error && isfinite(err))
            *max_error = err;
        if (!ok) {
            if (!isfinite(err) || err == 0)
                *max_error = INFINITY;
            if (bad++ == 0) {
                *first_bad = i;
                snprintf(msg, msg_size, "element %lld: %s", (long long)i, why);
            }
        }
    }
    if (bad > 1) {
        size_t used = strlen(msg);
        snprintf(msg + used, msg_size - used, " (%lld of %lld elements wrong)", (long long)bad,
                 (long long)want->n);
    }
    return bad == 0;
}
