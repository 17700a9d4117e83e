/* The op table's schema (opcodes.h's BP_OP_SCHEMA): the build's proof that
 * every op has exactly one row, at its op's position, and the reader of its
 * domains (bp_op_domain). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Every schema row names an op (else BP_OP_<NAME> is undeclared) at that
 * op's position, and there are as many rows as ops: each op has one. */
#define BP__SCHEMA_POS(NAME, NAMES, SIGNATURE, DOMAINS) BP__SCHEMA_##NAME,
enum { BP_OP_SCHEMA(BP__SCHEMA_POS) BP__SCHEMA_COUNT };
#undef BP__SCHEMA_POS
_Static_assert((int)BP__SCHEMA_COUNT == (int)BP_OP_COUNT,
               "BP_OP_SCHEMA needs one row per row of BP_OP_TABLE (opcodes.h)");
#define BP__SCHEMA_AT(NAME, NAMES, SIGNATURE, DOMAINS)                                           \
    _Static_assert((int)BP__SCHEMA_##NAME == (int)BP_OP_##NAME,                                  \
                   "BP_OP_SCHEMA's row " #NAME " is not where BP_OP_TABLE has " #NAME);
BP_OP_SCHEMA(BP__SCHEMA_AT)
#undef BP__SCHEMA_AT

static const char *skip_spaces(const char *s)
{
    while (*s == ' ')
        s++;
    return s;
}

/* "[lo, hi]" at s into lo, hi; the end, or NULL if s holds none. */
static const char *interval(const char *s, double *lo, double *hi)
{
    char *end;
    s = skip_spaces(s);
    if (*s != '[')
        return NULL;
    *lo = strtod(s + 1, &end);
    s = skip_spaces(end);
    if (*s != ',')
        return NULL;
    *hi = strtod(s + 1, &end);
    s = skip_spaces(end);
    return *s == ']' && *lo <= *hi ? s + 1 : NULL;
}

/* The entry "name: ..." or "name = ..." of a domains string: what follows
 * its ':' or '=', with *is_value set for '='; NULL if there is none. */
static const char *entry(const char *domains, const char *name, bool *is_value)
{
    size_t n = strlen(name);
    for (const char *s = domains; s && *s;) {
        s = skip_spaces(s);
        const char *after = skip_spaces(s + n);
        if (strncmp(s, name, n) == 0 && (*after == ':' || *after == '=')) {
            *is_value = *after == '=';
            return after + 1;
        }
        s = strchr(s, ';');
        s = s ? s + 1 : NULL;
    }
    return NULL;
}

static bp_status bad_domain(bp_op op, const char *name)
{
    return bp__error(BP_ERR_INVALID_ARGUMENT,
                     "bp_op_domain: %s's domain of '%s' (opcodes.h's BP_OP_SCHEMA) is not "
                     "\"[lo, hi]\", \"int[lo, hi]\", \"[lo, hi] ints [lo, hi]\" or \"= value\"",
                     bp_op_name(op), name);
}

bp_status bp_op_domain(bp_op op, const char *name, bp_dtype dtype, double *lo, double *hi,
                       bool *integral)
{
    const bp_op_schema *row = bp_op_schema_of(op);
    if (!row || !name || !lo || !hi || !integral)
        return bp__error(BP_ERR_INVALID_ARGUMENT,
                         "bp_op_domain: %s", row ? "name, lo, hi and integral must not be NULL"
                                                 : "op is no code of opcodes.h");
    bool is_value = false;
    const char *s = *name ? entry(row->domains, name, &is_value) : NULL;
    if (!s)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_op_domain: %s's schema gives '%s' no domain",
                         bp_op_name(op), name);
    *integral = false;
    if (is_value) {
        char *end;
        *lo = *hi = strtod(s, &end);
        return end != s && isfinite(*lo) ? BP_OK : bad_domain(op, name);
    }
    s = skip_spaces(s);
    if (strncmp(s, "int[", 4) == 0) {
        *integral = true;
        s += 3;
    }
    if (!(s = interval(s, lo, hi)))
        return bad_domain(op, name);
    s = skip_spaces(s);
    if (strncmp(s, "ints", 4) == 0) {
        double ilo, ihi;
        if (!interval(s + 4, &ilo, &ihi))
            return bad_domain(op, name);
        if (!bp_dtype_is_float(dtype))
            *lo = ilo, *hi = ihi;
    }
    return BP_OK;
}
