/* JSON lines: one object per result, written and read back with cJSON (no
 * hand-written JSON here). A line looks like
 *   {"backend":"binary:0","plugin_version":"0.1.0","op":"add","dtype":"f32",
 *    "shape":"(7,),(7,)","status":"PASS","max_error":0,"tolerance":0,"message":""}
 * (one line each). Numbers keep 6 significant digits; non-finite ones are
 * null. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "internal.h"

/* v to 6 significant digits (the files stay short and stable), or null. */
static bool add_number(cJSON *o, const char *key, double v)
{
    if (!isfinite(v))
        return cJSON_AddNullToObject(o, key) != NULL;
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    return cJSON_AddNumberToObject(o, key, strtod(buf, NULL)) != NULL;
}

/* The result as one line of JSON (malloc'd by cJSON; free with cJSON_free),
 * or NULL when out of memory. */
static char *result_line(const cf_run *run, const cf_result *r)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o && cJSON_AddStringToObject(o, "backend", run->backend_name) &&
              cJSON_AddStringToObject(o, "plugin_version", run->plugin_version) &&
              cJSON_AddStringToObject(o, "op", r->op) &&
              cJSON_AddStringToObject(o, "dtype", r->dtype) &&
              cJSON_AddStringToObject(o, "shape", r->shape) &&
              cJSON_AddStringToObject(o, "status", cf_status_name(r->status)) &&
              add_number(o, "max_error", r->max_error) &&
              add_number(o, "tolerance", r->tolerance) &&
              cJSON_AddStringToObject(o, "message", r->message);
    char *line = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return line;
}

bool cf_write_json(const char *path, const cf_run *run)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = true;
    for (size_t i = 0; ok && i < run->n_results; i++) {
        char *line = result_line(run, &run->results[i]);
        ok = line && fputs(line, f) >= 0 && fputc('\n', f) != EOF;
        cJSON_free(line);
    }
    return fclose(f) == 0 && ok;
}

/* Copy the string member key of o into out; false if it is missing or not a
 * string. */
static bool get_string(const cJSON *o, const char *key, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || !v->valuestring)
        return false;
    snprintf(out, cap, "%s", v->valuestring);
    return true;
}

bool cf_json_parse_row(const char *line, cf_json_row *row)
{
    cJSON *o = cJSON_Parse(line);
    memset(row, 0, sizeof *row);
    bool ok = cJSON_IsObject(o) && get_string(o, "backend", row->backend, sizeof row->backend) &&
              get_string(o, "op", row->op, sizeof row->op) &&
              get_string(o, "dtype", row->dtype, sizeof row->dtype) &&
              get_string(o, "status", row->status, sizeof row->status);
    if (ok)
        get_string(o, "plugin_version", row->plugin_version, sizeof row->plugin_version);
    cJSON_Delete(o);
    return ok;
}
