/* Reading one ini file: the lexing half of the configuration.
 *
 * inih parses the file, but it does not tell its handler the line number,
 * does not report sections that hold no key, truncates section names, and
 * silently reads an indented line as the continuation of the previous value.
 * So this file feeds inih through its own line reader, which counts lines
 * and classifies each line as inih is about to (comment, section header,
 * key = value, malformed). Every callback then knows its line, empty
 * sections are seen, and indented lines (which inih reads as a key, a
 * section or the continuation of the previous value, depending on where
 * they are), NUL bytes and over-long lines become errors instead of
 * surprises. The reader stops at the first error,
 * so the first problem in the file is the one reported. What the sections
 * and keys mean is config.c's business. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define INI_SNIPPET 60 /* characters of a bad line quoted in messages */

typedef struct ini_lex {
    const bp__ini_sink *sink;
    const char *file;      /* for messages */
    FILE *fp;
    int line;              /* number of the line being parsed */
    char *buf;             /* getline buffer */
    size_t buf_size;
    char *section;         /* current section, untruncated; NULL before the first */
    bp_status status;      /* first error; parsing stops there */
    int error_line;
} ini_lex;

static bool lex_fail(ini_lex *p, bp_status st)
{
    p->status = st;
    p->error_line = p->line;
    return false;
}

/* inih's lskip / rstrip / find_chars_or_comment, same rules. */
static char *ini_lskip(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

static void ini_rstrip(char *s)
{
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
}

static char *ini_find_chars_or_comment(char *s, const char *chars)
{
#if INI_ALLOW_INLINE_COMMENTS
    bool was_space = false;
    while (*s && (!chars || !strchr(chars, *s)) &&
           !(was_space && strchr(INI_INLINE_COMMENT_PREFIXES, *s))) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
#else
    while (*s && (!chars || !strchr(chars, *s)))
        s++;
#endif
    return s;
}

static bool lex_section(ini_lex *p, const char *name)
{
    bp_status st = p->sink->section(p->sink->user, name, p->line);
    if (st != BP_OK)
        return lex_fail(p, st);
    char *dup = strdup(name);
    if (!dup)
        return lex_fail(p, bp__error(BP_ERR_OUT_OF_MEMORY,
                                     "out of memory while reading the configuration file"));
    free(p->section);
    p->section = dup;
    return true;
}

/* Classify a line the way inih will, and check what inih cannot tell us.
 * line is a scratch copy (modified). False (error set) to stop parsing. */
static bool lex_classify(ini_lex *p, char *line)
{
    char *s = line;
    size_t bom = 0;
#if INI_ALLOW_BOM
    if (p->line == 1 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
        (unsigned char)s[2] == 0xBF)
        bom = 3;
#endif
    s = ini_lskip(s + bom);
    ini_rstrip(s);

    if (*s == '\0' || strchr(INI_START_COMMENT_PREFIXES, *s))
        return true; /* blank or comment */
    if (s > line + bom) {
        /* Wherever it is: right after a section header inih would take an
         * indented key as a key, after a key as more of that key's value. */
        bp__error(BP_ERR_CONFIG,
                  "%s:%d: indented line '%.*s': backplane does not accept indented keys or "
                  "sections (in ini syntax an indented line may continue the previous value); "
                  "remove the indentation",
                  p->file, p->line, INI_SNIPPET, s);
        return lex_fail(p, BP_ERR_CONFIG);
    }
    if (*s == '[') {
        char *end = ini_find_chars_or_comment(s + 1, "]");
        if (*end != ']') {
            bp__error(BP_ERR_CONFIG, "%s:%d: syntax error: section header '%.*s' has no closing ']'",
                      p->file, p->line, INI_SNIPPET, s);
            return lex_fail(p, BP_ERR_CONFIG);
        }
        *end = '\0';
        return lex_section(p, s + 1);
    }
    char *end = ini_find_chars_or_comment(s, "=:");
    if (*end != '=' && *end != ':') {
        bp__error(BP_ERR_CONFIG,
                  "%s:%d: syntax error: '%.*s' is not a [section] header, a 'key = value' line "
                  "or a comment (comments start with ';' or '#')",
                  p->file, p->line, INI_SNIPPET, s);
        return lex_fail(p, BP_ERR_CONFIG);
    }
    *end = '\0';
    ini_rstrip(s);
    if (*s == '\0') {
        bp__error(BP_ERR_CONFIG, "%s:%d: syntax error: no key name before '='", p->file, p->line);
        return lex_fail(p, BP_ERR_CONFIG);
    }
    return true;
}

/* inih's reader: one physical line per call, so p->line is the line number
 * of everything inih does until the next call. NULL ends the parse. */
static char *lex_reader(char *str, int num, void *stream)
{
    ini_lex *p = stream;
    if (p->status != BP_OK)
        return NULL;
    errno = 0;
    ssize_t n = getline(&p->buf, &p->buf_size, p->fp);
    if (n < 0) {
        int err = errno;
        if (err == ENOMEM) {
            p->status = bp__error(BP_ERR_OUT_OF_MEMORY,
                                  "out of memory while reading the configuration file");
            p->error_line = p->line + 1;
        } else if (ferror(p->fp)) {
            char eb[128];
            p->status = bp__error(BP_ERR_IO, "cannot read config file '%s' (line %d): %s",
                                  p->file, p->line + 1, strerror_r(err ? err : EIO, eb, sizeof eb));
            p->error_line = p->line + 1;
        }
        return NULL;
    }
    p->line++;
    if (memchr(p->buf, '\0', (size_t)n)) {
        bp__error(BP_ERR_CONFIG, "%s:%d: the line contains a NUL byte (not a text file?)",
                  p->file, p->line);
        lex_fail(p, BP_ERR_CONFIG);
        return NULL;
    }
    if (num < 2 || (size_t)n > (size_t)num - 1) {
        bp__error(BP_ERR_CONFIG, "%s:%d: the line is longer than %d characters, the ini "
                  "parser's limit; shorten it",
                  p->file, p->line, num > 2 ? num - 2 : 0);
        lex_fail(p, BP_ERR_CONFIG);
        return NULL;
    }
    memcpy(str, p->buf, (size_t)n + 1);
    if (!lex_classify(p, p->buf))
        return NULL;
    return str;
}

/* inih's handler: one key = value of the current line. Its section argument
 * is ignored: ours is untruncated (inih cuts it at 49 characters). */
static int lex_handler(void *user, const char *section, const char *name, const char *value)
{
    ini_lex *p = user;
    (void)section;
    if (p->status != BP_OK)
        return 0;
    bp_status st = p->sink->key(p->sink->user, p->section, name, value, p->line);
    if (st != BP_OK) {
        lex_fail(p, st);
        return 0;
    }
    return 1;
}

bp_status bp__ini_read(FILE *fp, const char *file, const bp__ini_sink *sink)
{
    ini_lex p = {0};
    p.sink = sink;
    p.file = file;
    p.fp = fp;
    p.status = BP_OK;
    int rc = ini_parse_stream(lex_reader, &p, lex_handler, &p);
    free(p.buf);
    free(p.section);

    if (rc > 0 && (p.status == BP_OK || rc < p.error_line)) {
        /* inih saw a problem before ours (the classification above should
         * prevent this) */
        return bp__error(BP_ERR_CONFIG,
                         "%s:%d: syntax error: expected a [section] header, 'key = value' or a "
                         "comment",
                         file, rc);
    }
    if (p.status != BP_OK)
        return p.status;
    if (rc == -2)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "out of memory while reading the configuration file");
    if (rc < 0)
        return bp__error(BP_ERR_IO, "cannot read config file '%s'", file);
    return BP_OK;
}
