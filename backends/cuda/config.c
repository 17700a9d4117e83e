/* [backend.cuda] (config.h): one parser per kind of value. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

const bp_config_key bpcu_config_keys[] = {
    {"devices", "CUDA device numbers to expose, e.g. \"0, 2\", or \"all\"", "all"},
    {"memory_fraction", "cap on each device's memory pool, a fraction of its memory in (0, 1]",
     "0.9"},
    {"tf32", "let f32 matmul use TF32 tensor cores (faster, ~10-bit mantissa)", "false"},
    {"allow_ptx_jit", "run devices that only this build's PTX fits, JIT-compiled by the driver",
     "true"},
    {"allow_cc", "compute capabilities to try even when no image fits, e.g. \"12.0, 8.6\"", ""},
    {"deny_cc", "compute capabilities never to use, e.g. \"7.5\"", ""},
    {"pool_keep_mb", "MiB of freed memory the pool keeps cached after bp_backend_synchronize "
     "(the rest goes back to the device)", "0"},
    {"staging_threads", "host threads copying through the pinned staging buffers, 1..16", "4"},
    {"cudnn", "convolutions through cuDNN when " "libcudnn.so.9" " loads at the first one (auto), "
     "or always the built-in im2col + cuBLAS path (off)", "auto"},
    {NULL, NULL, NULL},
};

static bool parse_bool(const char *s, bool *out)
{
    static const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, t[i]) == 0)
            return *out = true, true;
        if (strcmp(s, f[i]) == 0)
            return *out = false, true;
    }
    return false;
}

static bool is_sep(char ch) { return ch == ',' || ch == ' ' || ch == '\t'; }

/* "all", or CUDA device numbers separated by commas or blanks. */
static bp_status parse_devices(const bp_host_api *h, const char *v, bpcu_config *c)
{
    if (strcmp(v, "all") == 0)
        return BP_OK;
    c->all_devices = false;
    for (const char *p = v; *p;) {
        while (is_sep(*p))
            p++;
        if (!*p)
            break;
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 0 || n >= BPCU_MAX_DEVICES || c->ndev == BPCU_MAX_DEVICES ||
            (*end && !is_sep(*end)))
            return h->config_error(h->host, "devices",
                                   "'%s' is not \"all\" or a list of CUDA device numbers "
                                   "such as \"0, 1\"", v);
        c->devices[c->ndev++] = (int)n;
        p = end;
    }
    if (c->ndev == 0)
        return h->config_error(h->host, "devices", "empty list: name devices or use \"all\"");
    return BP_OK;
}

static bp_status parse_fraction(const bp_host_api *h, const char *v, double *out)
{
    char *end;
    double f = strtod(v, &end);
    if (end == v || *end || !(f > 0.0 && f <= 1.0))
        return h->config_error(h->host, "memory_fraction",
                               "'%s' is not a fraction in (0, 1], e.g. 0.9", v);
    *out = f;
    return BP_OK;
}

static bp_status bool_key(const bp_host_api *h, const char *key, bool *out)
{
    const char *v = h->config_get(h->host, key);
    if (v && !parse_bool(v, out))
        return h->config_error(h->host, key, "'%s' is not true or false", v);
    return BP_OK;
}

static bp_status cc_list_key(const bp_host_api *h, const char *key, bpcu_cc_list *out)
{
    char err[256];
    const char *v = h->config_get(h->host, key);
    if (v && !bpcu_parse_cc_list(v, out, err, sizeof err))
        return h->config_error(h->host, key, "%s", err);
    return BP_OK;
}

/* An integer key in [lo, hi]. */
static bp_status int_key(const bp_host_api *h, const char *key, long long lo, long long hi,
                         long long *out)
{
    const char *v = h->config_get(h->host, key);
    if (!v)
        return BP_OK;
    char *end;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end || n < lo || n > hi)
        return h->config_error(h->host, key, "'%s' is not a whole number in %lld..%lld", v, lo,
                               hi);
    *out = n;
    return BP_OK;
}

bp_status bpcu_read_config(const bp_host_api *h, bpcu_config *c)
{
    memset(c, 0, sizeof *c);
    c->all_devices = true;
    c->memory_fraction = 0.9;
    c->jit = true;
    c->cudnn = true;
    bp_status st = BP_OK;
    const char *v;
    if ((v = h->config_get(h->host, "devices")))
        st = parse_devices(h, v, c);
    if (st == BP_OK && (v = h->config_get(h->host, "memory_fraction")))
        st = parse_fraction(h, v, &c->memory_fraction);
    if (st == BP_OK)
        st = bool_key(h, "tf32", &c->tf32);
    if (st == BP_OK)
        st = bool_key(h, "allow_ptx_jit", &c->jit);
    if (st == BP_OK)
        st = cc_list_key(h, "allow_cc", &c->allow);
    if (st == BP_OK)
        st = cc_list_key(h, "deny_cc", &c->deny);
    long long keep = 0, threads = 4;
    if (st == BP_OK)
        st = int_key(h, "pool_keep_mb", 0, 1LL << 30, &keep);
    if (st == BP_OK)
        st = int_key(h, "staging_threads", 1, 16, &threads);
    if (st == BP_OK && (v = h->config_get(h->host, "cudnn"))) {
        if (strcmp(v, "auto") == 0)
            c->cudnn = true;
        else if (strcmp(v, "off") == 0)
            c->cudnn = false;
        else
            st = h->config_error(h->host, "cudnn", "'%s' is not auto or off", v);
    }
    c->pool_keep_mb = (unsigned long long)keep;
    c->staging_threads = (int)threads;
    return st;
}
