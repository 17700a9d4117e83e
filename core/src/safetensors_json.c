/* Whether a safetensors header is well-formed JSON, decided without
 * allocating: cJSON returns NULL both for text it cannot parse and for an
 * allocation that failed, and only this tells the two apart.
 *
 * The check is RFC 8259 made stricter wherever cJSON is: strings with the
 * escapes cJSON takes and no lone UTF-16 surrogate, numbers of at most 63
 * characters (cJSON 1.7.15 reads no more), nesting far shallower than
 * cJSON's limit. So text it calls well-formed is text cJSON parses when
 * memory allows, and a NULL from cJSON on such text was out of memory. It
 * may also refuse text cJSON would take (control characters in strings,
 * 63-character numbers, deep nesting, whitespace beyond space, tab, CR and
 * LF): a header such as that which also met a failed allocation is then
 * reported as not well-formed, which no safetensors writer produces. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "safetensors_internal.h"

/* A safetensors header nests three deep (header, entry, shape). */
#define ST_JSON_MAX_DEPTH 64
/* cJSON 1.7.15 copies at most 63 characters of a number for strtod. */
#define ST_JSON_MAX_NUMBER 63

typedef struct {
    const unsigned char *p, *end;
} st_text;

static void st_ws(st_text *t)
{
    while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\n' || *t->p == '\r'))
        t->p++;
}

static bool st_lit(st_text *t, const char *word)
{
    for (; *word; word++, t->p++)
        if (t->p >= t->end || *t->p != (unsigned char)*word)
            return false;
    return true;
}

static bool st_digits(st_text *t)
{
    const unsigned char *start = t->p;
    while (t->p < t->end && *t->p >= '0' && *t->p <= '9')
        t->p++;
    return t->p > start;
}

static bool st_number(st_text *t)
{
    const unsigned char *start = t->p;
    if (t->p < t->end && *t->p == '-')
        t->p++;
    if (t->p < t->end && *t->p == '0')
        t->p++;
    else if (!st_digits(t))
        return false;
    if (t->p < t->end && *t->p == '.') {
        t->p++;
        if (!st_digits(t))
            return false;
    }
    if (t->p < t->end && (*t->p == 'e' || *t->p == 'E')) {
        t->p++;
        if (t->p < t->end && (*t->p == '+' || *t->p == '-'))
            t->p++;
        if (!st_digits(t))
            return false;
    }
    return t->p - start <= ST_JSON_MAX_NUMBER;
}

/* Four hex digits after "\u"; -1 when they are not. */
static long st_hex4(st_text *t)
{
    if (t->end - t->p < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++, t->p++) {
        unsigned char c = *t->p;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static bool st_string(st_text *t)
{
    if (t->p >= t->end || *t->p != '"')
        return false;
    t->p++;
    while (t->p < t->end) {
        unsigned char c = *t->p++;
        if (c == '"')
            return true;
        if (c < 0x20)
            return false;
        if (c != '\\')
            continue;
        if (t->p >= t->end)
            return false;
        c = *t->p++;
        if (c == 'u') {
            long u = st_hex4(t);
            if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
                return false; /* not hex, or a low surrogate first */
            if (u >= 0xD800 && u <= 0xDBFF) { /* a high one: its low one must follow */
                if (!st_lit(t, "\\u"))
                    return false;
                long lo = st_hex4(t);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return false;
            }
        } else if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' &&
                   c != 'r' && c != 't') {
            return false;
        }
    }
    return false;
}

static bool st_value(st_text *t, int depth);

/* An array or object: the opening bracket is at t->p. */
static bool st_container(st_text *t, int depth)
{
    if (depth >= ST_JSON_MAX_DEPTH)
        return false;
    bool object = *t->p == '{';
    unsigned char close = object ? '}' : ']';
    t->p++;
    st_ws(t);
    if (t->p < t->end && *t->p == close) {
        t->p++;
        return true;
    }
    for (;;) {
        if (object) {
            if (!st_string(t))
                return false;
            st_ws(t);
            if (t->p >= t->end || *t->p != ':')
                return false;
            t->p++;
            st_ws(t);
        }
        if (!st_value(t, depth + 1))
            return false;
        st_ws(t);
        if (t->p >= t->end)
            return false;
        unsigned char c = *t->p++;
        if (c == close)
            return true;
        if (c != ',')
            return false;
        st_ws(t);
    }
}

static bool st_value(st_text *t, int depth)
{
    if (t->p >= t->end)
        return false;
    switch (*t->p) {
    case '{':
    case '[':
        return st_container(t, depth);
    case '"':
        return st_string(t);
    case 't':
        return st_lit(t, "true");
    case 'f':
        return st_lit(t, "false");
    case 'n':
        return st_lit(t, "null");
    default:
        return st_number(t);
    }
}

bool bp__st_json_well_formed(const char *json, size_t len)
{
    st_text t = {(const unsigned char *)json, (const unsigned char *)json + len};
    st_ws(&t);
    return st_value(&t, 0);
}
