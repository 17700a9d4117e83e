/* backplane core: layered configuration.
 *
 * Layers, each overriding the one before:
 *   1. built-in defaults ([backplane] default_backend, plugin_path, log_level;
 *      [comm] timeout_s);
 *   2. one ini file, the first found of: the explicit path, $BP_CONFIG,
 *      $XDG_CONFIG_HOME/backplane/backplane.ini (or
 *      $HOME/.config/backplane/backplane.ini), /etc/backplane/backplane.ini;
 *   3. $BP_DEFAULT_BACKEND and $BP_LOG_LEVEL.
 * An empty environment variable counts as unset. A file that was named (the
 * explicit path or $BP_CONFIG) must exist; the user and system files are
 * optional.
 *
 * The file is read by config_ini.c (inih, fed one line at a time so that
 * every message has a file and line); this file gives the sections and keys
 * their meaning: which sections exist, which keys [backplane] has, which
 * values they take.
 *
 * Duplicate keys in one section of the file are an error naming both lines. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "internal.h"

#define CFG_MAIN_SECTION "backplane"
#define CFG_BACKEND_PREFIX "backend."
#define CFG_BACKEND_PREFIX_LEN (sizeof(CFG_BACKEND_PREFIX) - 1)
#define CFG_KNOWN_KEYS "default_backend, plugin_path, log_level"
#define CFG_COMM_SECTION "comm"          /* collectives across processes (comm.h) */
#define CFG_COMM_TIMEOUT_DEFAULT "300"   /* seconds a collective waits for a rank */
#define CFG_COMM_TIMEOUT_MAX 1e7
#define CFG_LOG_LEVELS "debug, info, warn, error, off"
#define CFG_BACKEND_EXAMPLE "\"cuda:0, blas_cpu, binary\""
#define CFG_NAME_MAX 63      /* longest backend name accepted in a list */
#define CFG_INDEX_DIGITS 9   /* ":N" device index fits an int32 */
#define CFG_SNIPPET 60       /* characters of a bad value quoted in messages */

/* The [backplane] keys with their built-in defaults, in display order. */
static const struct {
    const char *key;
    const char *value;
} cfg_defaults[] = {
    {"default_backend", BP__OWN_BACKENDS}, /* the best that opens */
    {"plugin_path", ""},
    {"log_level", "warn"},
};

/* Environment overrides of [backplane] keys. */
static const struct {
    const char *var;
    const char *key;
    const char *origin;
} cfg_env[] = {
    {"BP_DEFAULT_BACKEND", "default_backend", "env BP_DEFAULT_BACKEND"},
    {"BP_LOG_LEVEL", "log_level", "env BP_LOG_LEVEL"},
};

/* ---- small helpers --------------------------------------------------------- */

/* Thread-safe strerror (the GNU strerror_r; the library builds with _GNU_SOURCE). */
static const char *cfg_errtext(int err, char *buf, size_t n)
{
    return strerror_r(err, buf, n);
}

static bool cfg_is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* A getenv that treats an empty value as unset. */
static const char *cfg_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bp_status cfg_oom(const char *what)
{
    return bp__error(BP_ERR_OUT_OF_MEMORY, "out of memory while %s", what);
}

/* NAME of [backend.NAME] and of backend lists: [a-z0-9_]+. */
static bool cfg_valid_name(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

/* ---- the settings table ---------------------------------------------------- */

static void cfg_setting_free(bp__setting *s)
{
    free(s->section);
    free(s->key);
    free(s->value);
    free(s->origin);
    free(s->file);
    memset(s, 0, sizeof *s);
}

/* Set (section, key) to value. origin is used as given when file is NULL,
 * otherwise it becomes "FILE:LINE". All-or-nothing on allocation failure. */
static bp_status cfg_set(bp__config *cfg, const char *section, const char *key, const char *value,
                         const char *origin, const char *file, int line)
{
    bp__setting fresh = {0};
    fresh.value = strdup(value);
    fresh.origin = file ? bp__aprintf("%s:%d", file, line) : strdup(origin);
    fresh.file = file ? strdup(file) : NULL;
    fresh.line = file ? line : 0;
    if (!fresh.value || !fresh.origin || (file && !fresh.file)) {
        cfg_setting_free(&fresh);
        return cfg_oom("storing a configuration setting");
    }

    bp__setting *old = (bp__setting *)bp__config_find(cfg, section, key);
    if (old) {
        free(old->value);
        free(old->origin);
        free(old->file);
        old->value = fresh.value;
        old->origin = fresh.origin;
        old->file = fresh.file;
        old->line = fresh.line;
        return BP_OK;
    }

    fresh.section = strdup(section);
    fresh.key = strdup(key);
    if (!fresh.section || !fresh.key) {
        cfg_setting_free(&fresh);
        return cfg_oom("storing a configuration setting");
    }
    if (cfg->count == cfg->cap) {
        size_t cap = cfg->cap ? cfg->cap * 2 : 8;
        bp__setting *items = realloc(cfg->items, cap * sizeof *items);
        if (!items) {
            cfg_setting_free(&fresh);
            return cfg_oom("storing a configuration setting");
        }
        cfg->items = items;
        cfg->cap = cap;
    }
    cfg->items[cfg->count++] = fresh;
    return BP_OK;
}

/* ---- values ------------------------------------------------------------- */

typedef struct cfg_list_check {
    char *why;
    size_t why_size;
    size_t items;
} cfg_list_check;

static bp_status cfg_check_backend_item(const char *item, void *user)
{
    cfg_list_check *c = user;
    c->items++;
    const char *colon = strchr(item, ':');
    size_t name_len = colon ? (size_t)(colon - item) : strlen(item);
    bool ok = cfg_valid_name(item, name_len) && name_len <= CFG_NAME_MAX;
    if (ok && colon) {
        const char *d = colon + 1;
        size_t nd = strlen(d);
        ok = nd >= 1 && nd <= CFG_INDEX_DIGITS;
        for (size_t i = 0; ok && i < nd; i++)
            ok = d[i] >= '0' && d[i] <= '9';
    }
    if (!ok) {
        snprintf(c->why, c->why_size,
                 "'%.*s' is not a backend name (a name is a-z, 0-9 and _, at most %d "
                 "characters, optionally followed by ':N' for device N; e.g. %s)",
                 CFG_SNIPPET, item, CFG_NAME_MAX, CFG_BACKEND_EXAMPLE);
        return BP_ERR_CONFIG;
    }
    return BP_OK;
}

/* Check a [backplane] value. BP_OK; BP_ERR_CONFIG with the reason in why (no
 * error set yet: the caller says where the value came from); or
 * BP_ERR_OUT_OF_MEMORY (error set). */
static bp_status cfg_check_value(const char *key, const char *value, char *why, size_t why_size)
{
    if (strcmp(key, "log_level") == 0) {
        bp_log_level level;
        if (!bp__log_level_parse(value, &level)) {
            snprintf(why, why_size, "not a log level (accepted: " CFG_LOG_LEVELS ")");
            return BP_ERR_CONFIG;
        }
        return BP_OK;
    }
    if (strcmp(key, "default_backend") == 0) {
        cfg_list_check c = {why, why_size, 0};
        bp_status st = bp__list_foreach(value, cfg_check_backend_item, &c);
        if (st != BP_OK)
            return st;
        if (c.items == 0) {
            snprintf(why, why_size,
                     "the list is empty (give backend names in order of preference, e.g. %s)",
                     CFG_BACKEND_EXAMPLE);
            return BP_ERR_CONFIG;
        }
        return BP_OK;
    }
    return BP_OK; /* plugin_path: any directories */
}

static bool cfg_known_key(const char *key)
{
    for (size_t i = 0; i < sizeof cfg_defaults / sizeof cfg_defaults[0]; i++)
        if (strcmp(cfg_defaults[i].key, key) == 0)
            return true;
    return false;
}

/* ---- the file's meaning ------------------------------------------------------ */

typedef struct cfg_file {
    bp__config *cfg;
    const char *file;
} cfg_file;

static bp_status cfg_section(void *user, const char *name, int line)
{
    cfg_file *f = user;
    if (strcmp(name, CFG_MAIN_SECTION) == 0 || strcmp(name, CFG_COMM_SECTION) == 0)
        return BP_OK;
    if (strncmp(name, CFG_BACKEND_PREFIX, CFG_BACKEND_PREFIX_LEN) == 0) {
        const char *bn = name + CFG_BACKEND_PREFIX_LEN;
        if (cfg_valid_name(bn, strlen(bn)))
            return BP_OK;
        return bp__error(BP_ERR_CONFIG,
                         "%s:%d: bad backend name in section [%.*s]: NAME in [backend.NAME] is "
                         "made of a-z, 0-9 and _ (e.g. [backend.blas_cpu])",
                         f->file, line, CFG_SNIPPET, name);
    }
    return bp__error(BP_ERR_CONFIG,
                     "%s:%d: unknown section [%.*s] (known: [backplane], [comm] and "
                     "[backend.NAME] for the backend plugin NAME)",
                     f->file, line, CFG_SNIPPET, name);
}

static bp_status cfg_key(void *user, const char *section, const char *name, const char *value,
                         int line)
{
    cfg_file *f = user;
    if (!section)
        return bp__error(BP_ERR_CONFIG,
                         "%s:%d: key '%s' comes before any section; put it under [backplane] "
                         "(known keys: " CFG_KNOWN_KEYS ") or [backend.NAME]",
                         f->file, line, name);
    if (strcmp(section, CFG_MAIN_SECTION) == 0) {
        if (!cfg_known_key(name))
            return bp__error(BP_ERR_CONFIG,
                             "%s:%d: unknown key '%s' in [backplane] (known: " CFG_KNOWN_KEYS ")",
                             f->file, line, name);
        char why[512];
        bp_status st = cfg_check_value(name, value, why, sizeof why);
        if (st == BP_ERR_CONFIG)
            bp__error(BP_ERR_CONFIG, "%s:%d: bad value '%.*s' for %s in [backplane]: %s", f->file,
                      line, CFG_SNIPPET, value, name, why);
        if (st != BP_OK)
            return st;
    }
    if (strcmp(section, CFG_COMM_SECTION) == 0) {
        if (strcmp(name, "timeout_s") != 0)
            return bp__error(BP_ERR_CONFIG,
                             "%s:%d: unknown key '%s' in [comm] (known: timeout_s)", f->file,
                             line, name);
        char *end = NULL;
        double v = strtod(value, &end);
        while (end && cfg_is_space(*end))
            end++;
        if (end == value || !end || *end || !(v > 0.0) || !(v <= CFG_COMM_TIMEOUT_MAX))
            return bp__error(BP_ERR_CONFIG,
                             "%s:%d: bad value '%.*s' for timeout_s in [comm]: give the seconds a "
                             "collective waits for a missing rank, a number above 0 and at most "
                             "%g (default " CFG_COMM_TIMEOUT_DEFAULT ")",
                             f->file, line, CFG_SNIPPET, value, CFG_COMM_TIMEOUT_MAX);
    }
    const bp__setting *prev = bp__config_find(f->cfg, section, name);
    if (prev && prev->file)
        return bp__error(BP_ERR_CONFIG,
                         "%s:%d: key '%s' in [%s] is set twice (first on line %d); keep one",
                         f->file, line, name, section, prev->line);
    return cfg_set(f->cfg, section, name, value, NULL, f->file, line);
}

/* Does path exist? BP_OK with *exists; BP_ERR_IO if it cannot be told. */
static bp_status cfg_exists(const char *path, bool *exists)
{
    struct stat sb;
    if (stat(path, &sb) == 0) {
        *exists = true;
        return BP_OK;
    }
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
        *exists = false;
        return BP_OK;
    }
    char eb[128];
    return bp__error(BP_ERR_IO, "cannot access config file '%s': %s", path,
                     cfg_errtext(err, eb, sizeof eb));
}

/* Read one ini file into cfg. named_by says why this file (for messages). */
static bp_status cfg_read_file(bp__config *cfg, const char *path, const char *named_by)
{
    char eb[128];
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int err = errno;
        return bp__error(BP_ERR_IO, "cannot open config file '%s' (%s): %s", path, named_by,
                         cfg_errtext(err, eb, sizeof eb));
    }
    if (S_ISDIR(sb.st_mode))
        return bp__error(BP_ERR_IO, "cannot read config file '%s' (%s): it is a directory", path,
                         named_by);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int err = errno;
        return bp__error(BP_ERR_IO, "cannot open config file '%s' (%s): %s", path, named_by,
                         cfg_errtext(err, eb, sizeof eb));
    }
    cfg->path = strdup(path);
    if (!cfg->path) {
        fclose(fp);
        return cfg_oom("reading the configuration file");
    }

    cfg_file f = {cfg, cfg->path};
    bp__ini_sink sink = {cfg_section, cfg_key, &f};
    bp_status st = bp__ini_read(fp, cfg->path, &sink);
    fclose(fp);
    return st;
}

/* Choose the file and read it (if any). */
static bp_status cfg_load_file(bp__config *cfg, const char *explicit_path)
{
    if (explicit_path)
        return cfg_read_file(cfg, explicit_path, "the path given to bp_context_create");
    const char *env = cfg_getenv("BP_CONFIG");
    if (env)
        return cfg_read_file(cfg, env, "named by $BP_CONFIG");

    char *user = NULL;
    const char *xdg = cfg_getenv("XDG_CONFIG_HOME");
    const char *home = cfg_getenv("HOME");
    if (xdg)
        user = bp__aprintf("%s/backplane/backplane.ini", xdg);
    else if (home)
        user = bp__aprintf("%s/.config/backplane/backplane.ini", home);
    if ((xdg || home) && !user)
        return cfg_oom("looking for the configuration file");
    if (user) {
        bool exists = false;
        bp_status st = cfg_exists(user, &exists);
        if (st == BP_OK && exists)
            st = cfg_read_file(cfg, user, "the user's config file");
        free(user);
        if (st != BP_OK || exists)
            return st;
    }

    static const char system_path[] = "/etc/backplane/backplane.ini";
    bool exists = false;
    BP__TRY(cfg_exists(system_path, &exists));
    if (exists)
        return cfg_read_file(cfg, system_path, "the system config file");
    return BP_OK; /* built-in defaults only */
}

static bp_status cfg_load_env(bp__config *cfg)
{
    for (size_t i = 0; i < sizeof cfg_env / sizeof cfg_env[0]; i++) {
        const char *raw = cfg_getenv(cfg_env[i].var);
        if (!raw)
            continue;
        const char *b = raw, *e = raw + strlen(raw);
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        char *value = strndup(b, (size_t)(e - b));
        if (!value)
            return cfg_oom("reading the environment");
        char why[512];
        bp_status st = cfg_check_value(cfg_env[i].key, value, why, sizeof why);
        if (st == BP_ERR_CONFIG)
            bp__error(BP_ERR_CONFIG,
                      "environment variable %s='%.*s' is not a valid %s: %s; fix or unset the "
                      "variable",
                      cfg_env[i].var, CFG_SNIPPET, raw, cfg_env[i].key, why);
        if (st == BP_OK)
            st = cfg_set(cfg, CFG_MAIN_SECTION, cfg_env[i].key, value, cfg_env[i].origin, NULL, 0);
        free(value);
        if (st != BP_OK)
            return st;
    }
    return BP_OK;
}

/* ---- API --------------------------------------------------------------------- */

bp_status bp__config_load(const char *explicit_path, bp__config *cfg)
{
    if (!cfg)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp__config_load: cfg is NULL");
    memset(cfg, 0, sizeof *cfg);

    bp_status st = BP_OK;
    for (size_t i = 0; st == BP_OK && i < sizeof cfg_defaults / sizeof cfg_defaults[0]; i++)
        st = cfg_set(cfg, CFG_MAIN_SECTION, cfg_defaults[i].key, cfg_defaults[i].value, "default",
                     NULL, 0);
    if (st == BP_OK)
        st = cfg_set(cfg, CFG_COMM_SECTION, "timeout_s", CFG_COMM_TIMEOUT_DEFAULT, "default",
                     NULL, 0);
    if (st == BP_OK)
        st = cfg_load_file(cfg, explicit_path);
    if (st == BP_OK)
        st = cfg_load_env(cfg);
    if (st != BP_OK)
        bp__config_free(cfg);
    return st;
}

void bp__config_free(bp__config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->count; i++)
        cfg_setting_free(&cfg->items[i]);
    free(cfg->items);
    free(cfg->path);
    memset(cfg, 0, sizeof *cfg);
}

const bp__setting *bp__config_find(const bp__config *cfg, const char *section, const char *key)
{
    if (!cfg || !section || !key)
        return NULL;
    for (size_t i = 0; i < cfg->count; i++)
        if (strcmp(cfg->items[i].section, section) == 0 && strcmp(cfg->items[i].key, key) == 0)
            return &cfg->items[i];
    return NULL;
}

const char *bp__config_get(const bp__config *cfg, const char *section, const char *key)
{
    const bp__setting *s = bp__config_find(cfg, section, key);
    return s ? s->value : NULL;
}

bp_status bp__config_check_backend(const bp__config *cfg, const char *name,
                                   const bp_config_key *keys)
{
    if (!cfg || !name)
        return BP_OK;
    for (size_t i = 0; i < cfg->count; i++) {
        const bp__setting *s = &cfg->items[i];
        if (strncmp(s->section, CFG_BACKEND_PREFIX, CFG_BACKEND_PREFIX_LEN) != 0 ||
            strcmp(s->section + CFG_BACKEND_PREFIX_LEN, name) != 0)
            continue;
        bool declared = false;
        for (const bp_config_key *k = keys; k && k->name && !declared; k++)
            declared = strcmp(k->name, s->key) == 0;
        if (declared)
            continue;

        char accepted[512];
        size_t used = 0;
        accepted[0] = '\0';
        for (const bp_config_key *k = keys; k && k->name; k++) {
            int w = snprintf(accepted + used, sizeof accepted - used, "%s%s",
                             used ? ", " : "", k->name);
            if (w < 0 || (size_t)w >= sizeof accepted - used) {
                snprintf(accepted + (sizeof accepted - 5), 5, ", ..");
                break;
            }
            used += (size_t)w;
        }
        if (accepted[0])
            return bp__error(BP_ERR_CONFIG,
                             "%s: unknown key '%s' in [%s] (the %s plugin accepts: %s)", s->origin,
                             s->key, s->section, name, accepted);
        return bp__error(BP_ERR_CONFIG,
                         "%s: unknown key '%s' in [%s] (the %s plugin accepts no keys; remove "
                         "the section)",
                         s->origin, s->key, s->section, name);
    }
    return BP_OK;
}

bp_status bp__list_foreach(const char *list, bp_status (*fn)(const char *item, void *user),
                           void *user)
{
    if (!list || !fn)
        return BP_OK;
    char *copy = strdup(list);
    if (!copy)
        return cfg_oom("splitting a list");
    bp_status st = BP_OK;
    char *p = copy;
    while (st == BP_OK) {
        char *comma = strchr(p, ',');
        char *end = comma ? comma : p + strlen(p);
        char *b = p;
        while (b < end && cfg_is_space(*b))
            b++;
        char *e = end;
        while (e > b && cfg_is_space(e[-1]))
            e--;
        *e = '\0';
        if (b < e)
            st = fn(b, user);
        if (!comma)
            break;
        p = comma + 1;
    }
    free(copy);
    return st;
}
