/* Reading one ini file: the lexing half of the configuration.
 *
 * inih parses the file, through its stream interface: ini_parse_stream
 * with a reader of ours and a handler. inih does not tell its handler the
 * line number, does not report sections that hold no key, truncates section
 * names, and silently reads an indented line as the continuation of the
 * previous value; its options for these are compile-time ones or, in
 * Debian's build, process-wide globals that a library must not set. So the
 * reader hands inih one physical line per call (every callback then knows
 * its line), refuses NUL bytes, over-long lines, indented lines and lines
 * that are no ini, and reports section headers itself; inih parses the
 * key = value lines and calls the handler. The reader stops at the first
 * error, so the first problem in the file is the one reported. What the
 * sections and keys mean is config.c's business. */
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

static bool lex_section(ini_lex *p, const char *name, size_t len)
{
    char *dup = strndup(name, len);
    if (!dup)
        return lex_fail(p, bp__error(BP_ERR_OUT_OF_MEMORY,
                                     "out of memory while reading the configuration file"));
    bp_status st = p->sink->section(p->sink->user, dup, p->line);
    if (st != BP_OK) {
        free(dup);
        return lex_fail(p, st);
    }
    free(p->section);
    p->section = dup;
    return true;
}

/* A line refused: what is wrong, the line (quoted, cut), the remedy. */
static bool lex_refuse(ini_lex *p, const char *what, const char *text, size_t len,
                       const char *remedy)
{
    bp__error(BP_ERR_CONFIG, "%s:%d: %s '%.*s'%s", p->file, p->line, what,
              (int)(len < INI_SNIPPET ? len : INI_SNIPPET), text, remedy);
    return lex_fail(p, BP_ERR_CONFIG);
}

/* What inih does not say about the line it is about to parse: an indented
 * line (inih reads it as a key, a section or the continuation of the
 * previous value, depending on where it is), a line that is no ini at all,
 * and a section header (inih calls nothing for a section without keys and
 * cuts long names). Blank lines and comments, indented or not, are inih's
 * to skip; a key = value line is inih's to parse and hand to lex_handler. */
static bool lex_classify(ini_lex *p, const char *line)
{
    const char *s = line;
    if (p->line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3; /* a UTF-8 byte order mark, which inih skips too */
    size_t indent = strspn(s, " \t\v\f");
    const char *text = s + indent;
    size_t len = strcspn(text, "\r\n");
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    if (len == 0 || *text == ';' || *text == '#')
        return true;
    if (indent > 0)
        return lex_refuse(p, "indented line", text, len,
                          ": backplane does not accept indented keys or sections (in ini "
                          "syntax an indented line may continue the previous value); remove "
                          "the indentation");
    if (*text == '[') {
        const char *end = memchr(text, ']', len);
        if (!end)
            return lex_refuse(p, "syntax error: this section header has no closing ']':", text,
                              len, "");
        return lex_section(p, text + 1, (size_t)(end - text - 1));
    }
    size_t key = strcspn(text, "=:");
    if (key >= len)
        return lex_refuse(p, "syntax error: this line is not a [section] header, a 'key = value' "
                             "line or a comment (comments start with ';' or '#'):", text, len, "");
    if (strspn(text, " \t") == key)
        return lex_refuse(p, "syntax error: no key name before '=' in", text, len, "");
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
