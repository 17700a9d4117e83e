/* backplane info: what the library sees: version, configuration and where
 * each setting came from, every plugin (loaded or rejected, and why), each
 * opened plugin's devices, and the default backend. --json gives the same as
 * one JSON object. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const CMD = "info";

/* The environment variables the library reads, shown when set. */
static const char *const ENV_VARS[] = {"BP_CONFIG", "BP_DEFAULT_BACKEND", "BP_LOG_LEVEL",
                                       "BP_PLUGIN_PATH", "XDG_CONFIG_HOME"};
#define N_ENV_VARS (sizeof ENV_VARS / sizeof ENV_VARS[0])

static void usage(FILE *f)
{
    fprintf(f,
            "usage: backplane info [--config FILE] [--json]\n"
            "\n"
            "Show the library version and plugin ABI, the configuration file used and\n"
            "where every setting came from, every plugin found (loaded or rejected, and\n"
            "why), the devices of each plugin that opens, and the default backend.\n"
            "\n"
            "options:\n"
            "  --config FILE  read FILE instead of the layered defaults\n"
            "                 ($BP_CONFIG, $XDG_CONFIG_HOME/backplane/backplane.ini,\n"
            "                 /etc/backplane/backplane.ini, built-in defaults)\n"
            "  --json         print one JSON object instead of text\n"
            "  -h, --help     show this help and exit\n"
            "\n"
            "Exit status: 0 on success (even if some plugin cannot load or open here: the\n"
            "report says why), 1 if the configuration cannot be read or has an error\n"
            "that a plugin or default_backend found (the reason stands beside the key\n"
            "and goes to stderr), 2 for a usage error.\n");
}

/* Everything is gathered first, then printed as text or JSON. Strings from
 * bp_last_error() are copied (it is overwritten by the next failure); record
 * and setting strings stay valid while the context lives. */
typedef struct device_entry {
    char backend[160];         /* "binary:0", the name passed to bp_backend_get */
    bp_status get_status;      /* bp_backend_get */
    char *get_error;
    const char *lib_name;      /* bp_backend_name() once opened */
    bp_status info_status;     /* bp_backend_device_info */
    char *info_error;
    bp_device_info info;
    bp_status mem_status;      /* bp_backend_memory_info; UNSUPPORTED_OP: not reported */
    char *mem_error;
    bp_memory_info mem;
} device_entry;

typedef struct plugin_entry {
    bp_plugin_record rec;
    bp_status rec_status;      /* bp_context_plugin */
    char *rec_error;
    int crash_signal;          /* opening or querying it killed a probe process */
    int32_t n_devices;
    device_entry *devices;
} plugin_entry;

typedef struct report {
    const char *config_path;
    bp_log_level log_level;
    size_t n_settings;
    bp_setting *settings;
    size_t n_plugins;
    plugin_entry *plugins;
    bp_status default_status;
    int default_crash_signal;  /* resolving the preference list killed a probe */
    char *default_error;
    const char *default_name;
    const char *default_reason;
} report;

static char *dup_str(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static const char *log_level_name(bp_log_level level)
{
    switch (level) {
    case BP_LOG_DEBUG: return "debug";
    case BP_LOG_INFO: return "info";
    case BP_LOG_WARN: return "warn";
    case BP_LOG_ERROR: return "error";
    case BP_LOG_OFF: return "off";
    }
    return "?";
}

static void report_free(report *r)
{
    free(r->settings);
    for (size_t i = 0; i < r->n_plugins; i++) {
        plugin_entry *p = &r->plugins[i];
        free(p->rec_error);
        for (int32_t d = 0; d < p->n_devices; d++) {
            free(p->devices[d].get_error);
            free(p->devices[d].info_error);
            free(p->devices[d].mem_error);
        }
        free(p->devices);
    }
    free(r->plugins);
    free(r->default_error);
}

static void gather_device(bp_context *ctx, const char *plugin, int32_t index, device_entry *d)
{
    bp_backend *be = NULL;
    snprintf(d->backend, sizeof d->backend, "%s:%d", plugin, (int)index);
    d->info_status = d->mem_status = BP_ERR_NOT_FOUND;
    d->get_status = bp_backend_get(ctx, d->backend, &be);
    if (d->get_status != BP_OK) {
        d->get_error = dup_str(bp_last_error());
        return;
    }
    d->lib_name = bp_backend_name(be);
    d->info.struct_size = sizeof d->info;
    d->info_status = bp_backend_device_info(be, &d->info);
    if (d->info_status != BP_OK)
        d->info_error = dup_str(bp_last_error());
    d->mem.struct_size = sizeof d->mem;
    d->mem_status = bp_backend_memory_info(be, &d->mem);
    if (d->mem_status != BP_OK && d->mem_status != BP_ERR_UNSUPPORTED_OP)
        d->mem_error = dup_str(bp_last_error());
}

/* What a probe process does for plugin i: open it and query every device. */
typedef struct probe_arg {
    bp_context *ctx;
    size_t index;
} probe_arg;

static void probe_plugin(void *arg)
{
    probe_arg *a = arg;
    (void)bp_context_plugin_open(a->ctx, a->index);
    bp_plugin_record rec = {.struct_size = sizeof rec};
    if (bp_context_plugin(a->ctx, a->index, &rec) != BP_OK || !rec.opened)
        return;
    for (int32_t d = 0; d < rec.device_count; d++) {
        device_entry e;
        memset(&e, 0, sizeof e);
        gather_device(a->ctx, rec.name, d, &e);
    }
}

static void probe_default(void *arg)
{
    bp_backend *be = NULL;
    (void)bp_backend_default(arg, &be);
}

static bp_status gather_settings(bp_context *ctx, report *r)
{
    r->n_settings = bp_context_setting_count(ctx);
    if (r->n_settings) {
        r->settings = calloc(r->n_settings, sizeof *r->settings);
        if (!r->settings)
            return BP_ERR_OUT_OF_MEMORY;
    }
    size_t kept = 0;
    for (size_t i = 0; i < r->n_settings; i++) {
        r->settings[kept].struct_size = sizeof r->settings[kept];
        bp_status st = bp_context_setting(ctx, i, &r->settings[kept]);
        if (st == BP_OK)
            kept++;
        else
            cli_fail(CMD, "bp_context_setting", st); /* reported, not fatal */
    }
    r->n_settings = kept;
    return BP_OK;
}

/* Plugin i's record, and its devices once it opens. */
static bp_status gather_plugin(bp_context *ctx, size_t i, plugin_entry *p)
{
    p->rec.struct_size = sizeof p->rec;
    p->rec_status = bp_context_plugin(ctx, i, &p->rec);
    if (p->rec_status != BP_OK) {
        p->rec_error = dup_str(bp_last_error());
        return BP_OK;
    }
    if (p->rec.load_tried && !p->rec.loaded)
        return BP_OK;
    /* A plugin that crashes while opening would end `info` too: try it in a
     * child process first, and never open it here if it crashed. */
    p->crash_signal = cli_isolated_signal(probe_plugin, &(probe_arg){ctx, i});
    if (p->crash_signal)
        return BP_OK;
    /* The outcome (opened, device_count, or why not) lands in the record, so
     * the status itself needs no separate report. */
    (void)bp_context_plugin_open(ctx, i);
    p->rec_status = bp_context_plugin(ctx, i, &p->rec);
    if (p->rec_status != BP_OK) {
        p->rec_error = dup_str(bp_last_error());
        return BP_OK;
    }
    if (!p->rec.opened || p->rec.device_count <= 0)
        return BP_OK;
    p->devices = calloc((size_t)p->rec.device_count, sizeof *p->devices);
    if (!p->devices)
        return BP_ERR_OUT_OF_MEMORY;
    p->n_devices = p->rec.device_count;
    for (int32_t d = 0; d < p->n_devices; d++)
        gather_device(ctx, p->rec.name, d, &p->devices[d]);
    return BP_OK;
}

static void gather_default(bp_context *ctx, report *r)
{
    bp_backend *def = NULL;
    /* Every plugin that survived its probe is open by now, so resolving the
     * preference list can only crash on one that did not: probe it then. */
    bool any_crash = false;
    for (size_t i = 0; i < r->n_plugins; i++)
        any_crash = any_crash || r->plugins[i].crash_signal;
    r->default_crash_signal = any_crash ? cli_isolated_signal(probe_default, ctx) : 0;
    if (r->default_crash_signal) {
        r->default_status = BP_ERR_BACKEND;
        r->default_error = dup_str("resolving the preference list crashed a probe process "
                                   "(a plugin on the list crashes when opened)");
        return;
    }
    r->default_status = bp_backend_default(ctx, &def);
    if (r->default_status == BP_OK)
        r->default_name = bp_backend_name(def);
    else
        r->default_error = dup_str(bp_last_error());
    r->default_reason = bp_context_default_reason(ctx);
}

/* Returns BP_OK or BP_ERR_OUT_OF_MEMORY (host allocation); every library
 * failure is recorded in the report instead. */
static bp_status gather(bp_context *ctx, report *r)
{
    r->config_path = bp_context_config_path(ctx);
    r->log_level = bp_context_log_level(ctx);
    r->n_plugins = bp_context_plugin_count(ctx);
    if (r->n_plugins) {
        r->plugins = calloc(r->n_plugins, sizeof *r->plugins);
        if (!r->plugins)
            return BP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < r->n_plugins; i++)
        if (gather_plugin(ctx, i, &r->plugins[i]) != BP_OK)
            return BP_ERR_OUT_OF_MEMORY;
    /* settings after the plugins: whether a plugin reads a key is known once
     * it is loaded (bp_setting.used) */
    if (gather_settings(ctx, r) != BP_OK)
        return BP_ERR_OUT_OF_MEMORY;
    gather_default(ctx, r);
    return BP_OK;
}

/* ---- text ----------------------------------------------------------------- */

static void text_header(const report *r)
{
    printf("backplane %s (plugin ABI %d.%d)\n", bp_version(), BP_ABI_MAJOR, BP_ABI_MINOR);
    printf("config:    %s\n", r->config_path ? r->config_path : "built-in defaults");
    printf("log level: %s\n", log_level_name(r->log_level));
    for (size_t i = 0; i < N_ENV_VARS; i++) {
        const char *v = getenv(ENV_VARS[i]);
        if (v)
            printf("env:       %s=%s\n", ENV_VARS[i], v);
    }
}

/* The plugin entry named name, or NULL. */
static const plugin_entry *plugin_named(const report *r, const char *name)
{
    for (size_t i = 0; i < r->n_plugins; i++)
        if (r->plugins[i].rec_status == BP_OK && r->plugins[i].rec.name &&
            strcmp(r->plugins[i].rec.name, name) == 0)
            return &r->plugins[i];
    return NULL;
}

/* Whether a plugin refused its configuration. */
static bool plugin_config_error(const report *r)
{
    for (size_t i = 0; i < r->n_plugins; i++)
        if (r->plugins[i].rec_status == BP_OK && r->plugins[i].rec.status == BP_ERR_CONFIG)
            return true;
    return false;
}

/* The line of message that concerns setting s (one naming its origin
 * "FILE:LINE:" or its key in quotes), copied into buf; false if none. */
static bool line_about(const char *message, const bp_setting *s, char *buf, size_t cap)
{
    char origin[300], key[140];
    snprintf(origin, sizeof origin, "%s:", s->origin);
    snprintf(key, sizeof key, "'%s'", s->key);
    for (const char *p = message; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strstr(line, origin) || strstr(line, key)) {
            snprintf(buf, cap, "%s", line);
            return true;
        }
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

/* What to say beside setting s, if anything: "" when all is well. A key of
 * [backend.NAME] that plugin NAME refused (its open failed with
 * BP_ERR_CONFIG) gets the plugin's reason; a key nothing read, why not. *error
 * is set when the reason is a configuration error. */
static void setting_note(const report *r, const bp_setting *s, char *buf, size_t cap, bool *error)
{
    *error = false;
    buf[0] = '\0';
    if (strcmp(s->section, "backplane") == 0 && strcmp(s->key, "default_backend") == 0 &&
        r->default_status == BP_ERR_CONFIG && !plugin_config_error(r)) {
        /* the list itself is wrong (a name no backend has): its note says so */
        static const char stop[] = ": configuration error, which stops the list: ";
        const char *at = r->default_reason ? strstr(r->default_reason, stop) : NULL;
        if (at) {
            const char *nl = strchr(at, '\n');
            at += sizeof stop - 1;
            *error = true;
            snprintf(buf, cap, "ERROR: %.*s", (int)(nl ? (size_t)(nl - at) : strlen(at)), at);
        }
        return;
    }
    const char *name = strncmp(s->section, "backend.", 8) == 0 ? s->section + 8 : NULL;
    const plugin_entry *p = name ? plugin_named(r, name) : NULL;
    if (p && p->rec.status == BP_ERR_CONFIG) {
        char line[1024];
        if (line_about(p->rec.message, s, line, sizeof line)) {
            *error = true;
            snprintf(buf, cap, "ERROR: %s", line);
            return;
        }
        if (!s->used)
            snprintf(buf, cap, "UNUSED: the %s plugin stopped at a configuration error before "
                     "reading it (see the plugin below)", name);
        return;
    }
    if (s->used)
        return;
    if (!name)
        snprintf(buf, cap, "UNUSED: nothing reads this key");
    else if (!p)
        snprintf(buf, cap, "UNUSED: no plugin named '%s' is installed", name);
    else if (!p->rec.loaded)
        snprintf(buf, cap, "UNUSED: the %s plugin did not load (see the plugin below)", name);
    else if (!p->rec.opened)
        snprintf(buf, cap, "UNUSED: the %s plugin did not open (see the plugin below)", name);
    else
        snprintf(buf, cap, "UNUSED: the %s plugin does not read this key", name);
}

/* One setting per line, origins aligned (up to a point). */
static void text_settings(const report *r)
{
    printf("\nsettings (%zu):\n", r->n_settings);
    int width = 0;
    for (size_t i = 0; i < r->n_settings; i++) {
        const bp_setting *s = &r->settings[i];
        int w = (int)(strlen(s->section) + strlen(s->key) + strlen(s->value) + 6);
        if (!s->value[0])
            w += 2; /* shown as "" */
        if (w > width)
            width = w;
    }
    if (width > 56)
        width = 56;
    for (size_t i = 0; i < r->n_settings; i++) {
        const bp_setting *s = &r->settings[i];
        const char *value = s->value[0] ? s->value : "\"\"";
        int w = (int)(strlen(s->section) + strlen(s->key) + strlen(value) + 6);
        char note[1100];
        bool error;
        setting_note(r, s, note, sizeof note, &error);
        printf("  [%s] %s = %s%*s  (%s)%s%s\n", s->section, s->key, value,
               w < width ? width - w : 0, "", s->origin, note[0] ? "  " : "", note);
    }
}

static void text_memory(const device_entry *dv)
{
    char b1[32], b2[32], b3[32], b4[32];
    if (dv->mem_status == BP_OK) {
        printf("      memory: %s in use, %s reserved", cli_format_bytes(dv->mem.used, b1, sizeof b1),
               cli_format_bytes(dv->mem.reserved, b2, sizeof b2));
        if (dv->mem.device_total)
            printf(", %s free of %s", cli_format_bytes(dv->mem.device_free, b3, sizeof b3),
                   cli_format_bytes(dv->mem.device_total, b4, sizeof b4));
        printf("\n");
    } else if (dv->mem_status == BP_ERR_UNSUPPORTED_OP) {
        printf("      memory: not reported by this backend\n");
    } else {
        printf("      memory: %s: %s\n", bp_status_string(dv->mem_status),
               dv->mem_error ? dv->mem_error : "");
    }
}

static void text_device(const device_entry *dv)
{
    printf("    device %s", dv->backend);
    if (dv->get_status != BP_OK) {
        printf(": unavailable (%s)\n", bp_status_string(dv->get_status));
        cli_print_block(stdout, dv->get_error, "      ");
        return;
    }
    if (dv->info_status == BP_OK) {
        printf(": %s%s\n", dv->info.name, dv->info.host_addressable ? " (host-addressable)" : "");
        if (dv->info.detail[0])
            printf("      %s\n", dv->info.detail);
    } else {
        printf(": device info failed: %s: %s\n", bp_status_string(dv->info_status),
               dv->info_error ? dv->info_error : "");
    }
    text_memory(dv);
}

/* "name version (ABI x.y): state" */
static void text_plugin_state(const plugin_entry *p)
{
    const bp_plugin_record *rec = &p->rec;
    printf("  %s", rec->name);
    if (rec->version && rec->version[0])
        printf(" %s", rec->version);
    if (rec->loaded)
        printf(" (ABI %u.%u)", (unsigned)rec->abi_major, (unsigned)rec->abi_minor);
    if (p->crash_signal)
        printf(": CRASHED while loading or opening (signal %d, %s); not opened here",
               p->crash_signal, cli_signal_name(p->crash_signal));
    else if (!rec->loaded)
        printf(": rejected");
    else if (!rec->opened)
        printf(": loaded, failed to open");
    else
        printf(": loaded, opened, %d device%s", (int)rec->device_count,
               rec->device_count == 1 ? "" : "s");
}

static void text_plugin(size_t i, const plugin_entry *p)
{
    if (p->rec_status != BP_OK) {
        printf("  #%zu: record unavailable: %s: %s\n", i, bp_status_string(p->rec_status),
               p->rec_error ? p->rec_error : "");
        return;
    }
    const bp_plugin_record *rec = &p->rec;
    text_plugin_state(p);
    printf("\n    file:   %s\n", rec->path ? rec->path : "?");
    for (const bp_config_key *k = rec->config_keys; k && k->name; k++)
        printf("    key [backend.%s] %s: %s (default: %s)\n", rec->name, k->name,
               k->help ? k->help : "", k->default_value ? k->default_value : "unset");
    if (!rec->loaded || (!rec->opened && !p->crash_signal)) {
        printf("    reason: %s\n", bp_status_string(rec->status));
        cli_print_block(stdout, rec->message, "      ");
    }
    for (int32_t d = 0; d < p->n_devices; d++)
        text_device(&p->devices[d]);
}

static void text_default(const report *r)
{
    printf("\ndefault backend: ");
    if (r->default_status == BP_OK) {
        printf("%s\n", r->default_name ? r->default_name : "?");
        cli_print_block(stdout, r->default_reason, "  ");
        return;
    }
    /* The error already carries the reason for each candidate. */
    printf("none (%s)\n", bp_status_string(r->default_status));
    cli_print_block(stdout, r->default_error, "  ");
    if (r->default_reason && r->default_error && !strstr(r->default_error, r->default_reason))
        cli_print_block(stdout, r->default_reason, "  ");
}

static void print_text(const report *r)
{
    text_header(r);
    text_settings(r);
    printf("\nplugins (%zu):\n", r->n_plugins);
    if (r->n_plugins == 0)
        printf("  none found\n");
    for (size_t i = 0; i < r->n_plugins; i++)
        text_plugin(i, &r->plugins[i]);
    text_default(r);
}

/* ---- JSON ----------------------------------------------------------------- */

/* "key": "BP_X" and, when not BP_OK, "key_error": "...". */
static void json_status(const char *key, bp_status st, const char *error)
{
    printf("\"%s\": ", key);
    cli_json_string(stdout, bp_status_string(st));
    if (st != BP_OK) {
        printf(", \"%s_error\": ", key);
        cli_json_string(stdout, error ? error : "");
    }
}

/* ", \"key\": " then the string value. */
static void json_member(const char *key, const char *value)
{
    printf(", \"%s\": ", key);
    cli_json_string(stdout, value);
}

static void json_environment(void)
{
    printf(",\n  \"environment\": {");
    bool first = true;
    for (size_t i = 0; i < N_ENV_VARS; i++) {
        const char *v = getenv(ENV_VARS[i]);
        if (!v)
            continue;
        printf("%s", first ? "" : ", ");
        first = false;
        cli_json_string(stdout, ENV_VARS[i]);
        printf(": ");
        cli_json_string(stdout, v);
    }
    printf("}");
}

static void json_settings(const report *r)
{
    printf(",\n  \"settings\": [");
    for (size_t i = 0; i < r->n_settings; i++) {
        const bp_setting *s = &r->settings[i];
        printf("%s\n    {\"section\": ", i ? "," : "");
        cli_json_string(stdout, s->section);
        json_member("key", s->key);
        json_member("value", s->value);
        json_member("origin", s->origin);
        printf(", \"used\": %s", s->used ? "true" : "false");
        char note[1100];
        bool error;
        setting_note(r, s, note, sizeof note, &error);
        if (error)
            json_member("error", note + strlen("ERROR: "));
        printf("}");
    }
    printf("%s]", r->n_settings ? "\n  " : "");
}

static void json_device(const device_entry *dv, bool first)
{
    printf("%s\n       {\"backend\": ", first ? "" : ",");
    cli_json_string(stdout, dv->backend);
    printf(", ");
    json_status("status", dv->get_status, dv->get_error);
    if (dv->get_status == BP_OK) {
        printf(",\n        \"info\": ");
        if (dv->info_status == BP_OK) {
            printf("{\"name\": ");
            cli_json_string(stdout, dv->info.name);
            json_member("detail", dv->info.detail);
            printf(", \"host_addressable\": %s}", dv->info.host_addressable ? "true" : "false");
        } else {
            printf("null, ");
            json_status("info_status", dv->info_status, dv->info_error);
        }
        printf(",\n        \"memory\": ");
        if (dv->mem_status == BP_OK) {
            printf("{\"used\": %" PRIu64 ", \"reserved\": %" PRIu64 ", \"device_free\": %" PRIu64
                   ", \"device_total\": %" PRIu64 "}",
                   dv->mem.used, dv->mem.reserved, dv->mem.device_free, dv->mem.device_total);
        } else {
            printf("null, ");
            json_status("memory_status", dv->mem_status,
                        dv->mem_error ? dv->mem_error : "not reported by this backend");
        }
    }
    printf("}");
}

static void json_config_keys(const bp_plugin_record *rec)
{
    printf(",\n     \"config_keys\": [");
    for (const bp_config_key *k = rec->config_keys; k && k->name; k++) {
        printf("%s{\"name\": ", k == rec->config_keys ? "" : ", ");
        cli_json_string(stdout, k->name);
        json_member("help", k->help ? k->help : "");
        json_member("default", k->default_value ? k->default_value : "");
        printf("}");
    }
    printf("]");
}

static void json_plugin(const plugin_entry *p, bool first)
{
    const bp_plugin_record *rec = &p->rec;
    printf("%s\n    {", first ? "" : ",");
    if (p->rec_status != BP_OK) {
        json_status("record", p->rec_status, p->rec_error);
        printf("}");
        return;
    }
    printf("\"name\": ");
    cli_json_string(stdout, rec->name);
    json_member("path", rec->path);
    json_member("version", rec->version);
    printf(",\n     \"loaded\": %s, \"opened\": %s", rec->loaded ? "true" : "false",
           rec->opened ? "true" : "false");
    if (p->crash_signal) {
        printf(", \"crashed\": {\"signal\": %d, \"name\": ", p->crash_signal);
        cli_json_string(stdout, cli_signal_name(p->crash_signal));
        printf("}");
    }
    json_member("status", bp_status_string(rec->status));
    json_member("message", rec->message ? rec->message : "");
    printf(",\n     \"abi\": {\"major\": %u, \"minor\": %u}, \"device_count\": %d",
           (unsigned)rec->abi_major, (unsigned)rec->abi_minor, (int)rec->device_count);
    json_config_keys(rec);
    printf(",\n     \"devices\": [");
    for (int32_t d = 0; d < p->n_devices; d++)
        json_device(&p->devices[d], d == 0);
    printf("%s]}", p->n_devices ? "\n     " : "");
}

static void json_default(const report *r)
{
    printf(",\n  \"default_backend\": ");
    if (r->default_status == BP_OK) {
        printf("{\"name\": ");
        cli_json_string(stdout, r->default_name);
        printf(", \"status\": \"BP_OK\"}");
    } else {
        printf("{\"name\": null, ");
        json_status("status", r->default_status, r->default_error);
        printf("}");
    }
    printf(",\n  \"default_reason\": ");
    cli_json_string(stdout, r->default_reason ? r->default_reason : "");
}

static void print_json(const report *r)
{
    printf("{\n  \"version\": ");
    cli_json_string(stdout, bp_version());
    printf(",\n  \"abi\": {\"major\": %d, \"minor\": %d}", BP_ABI_MAJOR, BP_ABI_MINOR);
    printf(",\n  \"config\": ");
    cli_json_string(stdout, r->config_path); /* null: built-in defaults */
    printf(",\n  \"log_level\": ");
    cli_json_string(stdout, log_level_name(r->log_level));
    json_environment();
    json_settings(r);
    printf(",\n  \"plugins\": [");
    for (size_t i = 0; i < r->n_plugins; i++)
        json_plugin(&r->plugins[i], i == 0);
    printf("%s]", r->n_plugins ? "\n  " : "");
    json_default(r);
    printf("\n}\n");
}

/* A configuration error a plugin or the preference list found: each on
 * stderr; true if there was one. */
static bool config_errors(const report *r)
{
    bool any = false;
    for (size_t i = 0; i < r->n_plugins; i++) {
        const plugin_entry *p = &r->plugins[i];
        if (p->rec_status != BP_OK || p->rec.status != BP_ERR_CONFIG)
            continue;
        fprintf(stderr, "backplane info: configuration error for the %s plugin:\n", p->rec.name);
        cli_print_block(stderr, p->rec.message, "  ");
        any = true;
    }
    if (r->default_status == BP_ERR_CONFIG && !any) {
        fprintf(stderr, "backplane info: configuration error in default_backend:\n");
        cli_print_block(stderr, r->default_error, "  ");
        any = true;
    }
    return any;
}

int cli_info(int argc, char **argv)
{
    const char *config = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int m;
        if (cli_is_help(arg)) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if ((m = cli_option_value(CMD, argc, argv, &i, "--config", &config)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--json") == 0) {
            json = true;
        } else if (arg[0] == '-') {
            return cli_usage_error(CMD, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(CMD, "unexpected argument '%s'", arg);
        }
    }

    bp_context *ctx = NULL;
    bp_status st = bp_context_create(config, &ctx);
    if (st != BP_OK) {
        const char *detail = bp_last_error();
        fprintf(stderr, "backplane info: cannot create the context%s%s: %s\n",
                config ? " from " : "", config ? config : "", bp_status_string(st));
        cli_print_block(stderr, detail, "  ");
        return CLI_EXIT_FAILURE;
    }

    report r;
    memset(&r, 0, sizeof r);
    int rc = CLI_EXIT_OK;
    st = gather(ctx, &r);
    if (st != BP_OK) {
        rc = cli_error(CMD, "out of memory");
    } else {
        if (json)
            print_json(&r);
        else
            print_text(&r);
        fflush(stdout);
        if (ferror(stdout))
            rc = cli_error(CMD, "cannot write to standard output");
        else if (config_errors(&r))
            rc = CLI_EXIT_FAILURE;
    }
    report_free(&r);
    bp_context_destroy(ctx);
    return rc;
}
