/* Opening a safetensors file: read and validate the whole header before
 * anything is loaded, so that a truncated download or a hand-edited header
 * is a clear BP_ERR_FORMAT naming what is wrong and where, never a crash or
 * a tensor of garbage. The JSON is parsed by cJSON; a parse that fails on
 * well-formed JSON (safetensors_json.c) ran out of memory.
 *
 * The header and the copying loads read the file with pread, so a file
 * rewritten or truncated while it is open is an error (BP_ERR_IO), never a
 * SIGBUS; only bp_safetensors_load_mapped touches the mapping. */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors_internal.h"

/* The reference implementation's limit: a header above this is refused. */
#define ST_MAX_HEADER ((uint64_t)100000000)

void bp__st_map_release(void *ctx)
{
    bp__st_map *m = ctx;
    if (atomic_fetch_sub(&m->refs, 1) != 1)
        return;
    if (m->size)
        munmap((void *)m->base, m->size);
    free(m);
}

static const struct {
    const char *name;
    int32_t dtype;           /* -1: a safetensors dtype backplane lacks */
    uint32_t size;
} st_dtypes[] = {
    {"BOOL", BP_BOOL, 1}, {"U8", BP_U8, 1},     {"I8", BP_I8, 1},       {"I16", BP_I16, 2},
    {"U16", BP_U16, 2},   {"F16", BP_F16, 2},   {"BF16", BP_BF16, 2},   {"I32", BP_I32, 4},
    {"U32", BP_U32, 4},   {"F32", BP_F32, 4},   {"F64", BP_F64, 8},     {"I64", BP_I64, 8},
    {"U64", BP_U64, 8},     {"F8_E4M3", -1, 1},   {"F8_E5M2", -1, 1},     {"C64", -1, 8},
};

const char *bp__st_dtype_name(bp_dtype dt)
{
    for (size_t i = 0; i < sizeof st_dtypes / sizeof st_dtypes[0]; i++)
        if (st_dtypes[i].dtype == (int32_t)dt)
            return st_dtypes[i].name;
    return NULL;
}

/* ---- errors ------------------------------------------------------------------ */

static bp_status st_format(const char *path, const char *fmt, ...) BP__PRINTF(2, 3);
static bp_status st_format(const char *path, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return bp__error(BP_ERR_FORMAT, "bp_safetensors_open: %s is not a valid safetensors file: %s",
                     path, what);
}

void bp__st_free(bp_safetensors *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->entries[i].name);
        free(f->entries[i].shape);
    }
    free(f->entries);
    for (size_t i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->meta_keys);
    free(f->meta_values);
    if (f->map)
        bp__st_map_release(f->map);
    if (f->fd >= 0)
        close(f->fd);
    free(f->path);
    free(f);
}

bp_status bp__st_read(const bp_safetensors *f, const char *fn, void *dst, size_t len,
                      uint64_t at, const char *what)
{
    char *d = dst;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(f->fd, d + done, len - done, (off_t)(at + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            char eb[128];
            return bp__error(BP_ERR_IO, "%s: cannot read %s of %s: %s", fn, what, f->path,
                             strerror_r(errno, eb, sizeof eb));
        }
        if (r == 0)
            return bp__error(BP_ERR_IO,
                             "%s: %s of %s ends at file byte %llu, before byte %llu: the file "
                             "shrank after it was opened (rewritten or truncated?); open it "
                             "again",
                             fn, what, f->path, (unsigned long long)(at + done),
                             (unsigned long long)(at + len));
        done += (size_t)r;
    }
    return BP_OK;
}

/* ---- the header ----------------------------------------------------------------- */

/* A JSON number that is a whole number in [0, 2^53] (exact in a double). */
static bool st_count(const cJSON *v, uint64_t *out)
{
    if (!cJSON_IsNumber(v))
        return false;
    double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return true;
}

static bp_status st_parse_entry(bp_safetensors *f, const cJSON *item, st_entry *e)
{
    const char *name = item->string;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsObject(item))
        return st_format(f->path, "tensor '%s': its entry is not a JSON object", name);
    if (!cJSON_IsString(dt))
        return st_format(f->path, "tensor '%s': \"dtype\" is missing or not a string", name);
    size_t k = 0, nd = sizeof st_dtypes / sizeof st_dtypes[0];
    while (k < nd && strcmp(st_dtypes[k].name, dt->valuestring) != 0)
        k++;
    if (k == nd)
        return st_format(f->path, "tensor '%s': dtype \"%.40s\" is not a safetensors dtype", name,
                         dt->valuestring);
    e->dtype_name = st_dtypes[k].name;
    e->dtype = st_dtypes[k].dtype;
    if (!cJSON_IsArray(shape))
        return st_format(f->path, "tensor '%s': \"shape\" is missing or not an array", name);
    int rank = cJSON_GetArraySize(shape);
    e->rank = rank;
    e->shape = calloc((size_t)(rank > 0 ? rank : 1), sizeof *e->shape);
    if (!e->shape)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    /* element count and bytes, refusing overflow as bp__shape_check does */
    uint64_t numel = 1, limit = UINT64_MAX / 8;
    bool empty = false;
    int j = 0;
    for (const cJSON *d = shape->child; d; d = d->next, j++) {
        uint64_t v;
        if (!st_count(d, &v))
            return st_format(f->path, "tensor '%s': shape[%d] is not a whole number >= 0", name, j);
        e->shape[j] = (int64_t)v;
        if (v == 0) {
            empty = true;
        } else if (numel > limit / v) {
            return st_format(f->path, "tensor '%s': its shape's element count overflows", name);
        } else {
            numel *= v;
        }
    }
    uint64_t want = empty ? 0 : numel * st_dtypes[k].size;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        return st_format(f->path, "tensor '%s': \"data_offsets\" is not an array of two numbers",
                         name);
    uint64_t b, end;
    if (!st_count(offs->child, &b) || !st_count(offs->child->next, &end) || end < b)
        return st_format(f->path, "tensor '%s': data_offsets are not whole numbers with "
                         "begin <= end", name);
    if (end - b != want)
        return st_format(f->path, "tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but "
                         "its shape and dtype %s need %llu",
                         name, (unsigned long long)b, (unsigned long long)end,
                         (unsigned long long)(end - b), e->dtype_name, (unsigned long long)want);
    e->offset = b;
    e->nbytes = end - b;
    e->name = strdup(name);
    return e->name ? BP_OK : bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
}

static bp_status st_metadata(bp_safetensors *f, const cJSON *meta)
{
    if (!cJSON_IsObject(meta))
        return st_format(f->path, "\"__metadata__\" is not an object of strings");
    size_t n = (size_t)cJSON_GetArraySize(meta);
    f->meta_keys = calloc(n ? n : 1, sizeof *f->meta_keys);
    f->meta_values = calloc(n ? n : 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    for (const cJSON *m = meta->child; m; m = m->next) {
        if (!cJSON_IsString(m))
            return st_format(f->path, "\"__metadata__\": the value of '%s' is not a string",
                             m->string);
        size_t i = f->n_meta;
        f->meta_keys[i] = strdup(m->string);
        f->meta_values[i] = strdup(m->valuestring);
        f->n_meta++; /* counted before the check: freed either way */
        if (!f->meta_keys[i] || !f->meta_values[i])
            return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    }
    return BP_OK;
}

static int st_by_offset(const void *a, const void *b)
{
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset ? 1
         : x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static int st_by_name(const void *a, const void *b)
{
    return strcmp((*(const st_entry *const *)a)->name, (*(const st_entry *const *)b)->name);
}

/* The tensors tile the data exactly: no gap, no overlap, no byte left over;
 * and no name twice (JSON allows it, safetensors does not). */
static bp_status st_layout(bp_safetensors *f, uint64_t data_size)
{
    if (f->n == 0)
        return data_size == 0 ? BP_OK
                              : st_format(f->path, "%llu bytes of data follow a header that "
                                          "lists no tensor", (unsigned long long)data_size);
    st_entry **order = malloc(f->n * sizeof *order);
    if (!order)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    for (size_t i = 0; i < f->n; i++)
        order[i] = &f->entries[i];
    bp_status st = BP_OK;
    qsort(order, f->n, sizeof *order, st_by_name);
    for (size_t i = 1; i < f->n && st == BP_OK; i++)
        if (strcmp(order[i]->name, order[i - 1]->name) == 0)
            st = st_format(f->path, "tensor '%s' appears twice in the header", order[i]->name);
    qsort(order, f->n, sizeof *order, st_by_offset);
    uint64_t at = 0;
    for (size_t i = 0; i < f->n && st == BP_OK; i++) {
        const st_entry *e = order[i];
        if (e->offset != at)
            st = st_format(f->path, "tensor '%s' starts at data byte %llu but the previous "
                           "tensor ends at %llu: tensors must be contiguous, without gaps or "
                           "overlaps", e->name, (unsigned long long)e->offset,
                           (unsigned long long)at);
        at = e->offset + e->nbytes;
    }
    if (st == BP_OK && at != data_size)
        st = st_format(f->path, "the tensors end at data byte %llu but the file holds %llu bytes "
                       "of data (%s)", (unsigned long long)at, (unsigned long long)data_size,
                       at > data_size ? "truncated" : "bytes left over");
    free(order);
    return st;
}

static bp_status st_header(bp_safetensors *f, const char *json, size_t len, uint64_t data_size)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, false);
    if (!root) {
        /* cJSON says the same for text it cannot parse and for memory it
         * could not allocate */
        if (bp__st_json_well_formed(json, len))
            return bp__error(BP_ERR_OUT_OF_MEMORY,
                             "bp_safetensors_open: out of memory parsing the %zu-byte header "
                             "of %s; free memory and open it again", len, f->path);
        /* (end, not cJSON_GetErrorPtr(): that is one for the whole process) */
        size_t off = end && end >= json && end <= json + len ? (size_t)(end - json) : 0;
        return st_format(f->path, "the header is not well-formed JSON (at header byte %zu, file "
                         "byte %zu)", off, off + 8);
    }
    for (; end && end < json + len; end++) /* the writer pads with spaces */
        if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r') {
            cJSON_Delete(root);
            return st_format(f->path, "unexpected bytes after the header's JSON (header byte "
                             "%zu)", (size_t)(end - json));
        }
    bp_status st = BP_OK;
    if (!cJSON_IsObject(root))
        st = st_format(f->path, "the header is not a JSON object");
    size_t n = 0;
    for (const cJSON *c = root->child; st == BP_OK && c; c = c->next)
        n += strcmp(c->string, "__metadata__") != 0;
    if (st == BP_OK && !(f->entries = calloc(n ? n : 1, sizeof *f->entries)))
        st = bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    for (const cJSON *c = root->child; st == BP_OK && c; c = c->next) {
        if (strcmp(c->string, "__metadata__") == 0) {
            st = st_metadata(f, c);
            continue;
        }
        st = st_parse_entry(f, c, &f->entries[f->n]);
        f->n++; /* counted before the check: freed either way */
    }
    cJSON_Delete(root);
    return st == BP_OK ? st_layout(f, data_size) : st;
}

/* ---- the file --------------------------------------------------------------------- */

static bp_status st_map(bp_safetensors *f, int fd, uint64_t size)
{
    f->map = calloc(1, sizeof *f->map);
    if (!f->map)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    atomic_init(&f->map->refs, 1);
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        char eb[128];
        return bp__error(BP_ERR_IO, "bp_safetensors_open: cannot map %s: %s", f->path,
                         strerror_r(errno, eb, sizeof eb));
    }
    f->map->base = p;
    f->map->size = (size_t)size;
    return BP_OK;
}

static bp_status st_open(bp_safetensors *f)
{
    static const char fn[] = "bp_safetensors_open";
    char eb[128];
    f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return bp__error(BP_ERR_IO, "%s: cannot open %s: %s", fn, f->path,
                         strerror_r(errno, eb, sizeof eb));
    struct stat sb;
    if (fstat(f->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return bp__error(BP_ERR_IO, "%s: %s is not a regular file", fn, f->path);
    uint64_t size = (uint64_t)sb.st_size;
    if (size < 8)
        return st_format(f->path, "%llu bytes: shorter than the 8-byte header length",
                         (unsigned long long)size);
    unsigned char b[8];
    BP__TRY(bp__st_read(f, fn, b, sizeof b, 0, "the header length"));
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | b[i]; /* little-endian, whatever this machine is */
    if (n < 2 || n > ST_MAX_HEADER || n > size - 8)
        return st_format(f->path, "the header length is %llu but the file has %llu bytes after "
                         "it (a header is 2 to %llu bytes)",
                         (unsigned long long)n, (unsigned long long)(size - 8),
                         (unsigned long long)ST_MAX_HEADER);
    char *json = malloc((size_t)n);
    if (!json)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory for the %llu-byte header of %s",
                         fn, (unsigned long long)n, f->path);
    bp_status st = bp__st_read(f, fn, json, (size_t)n, 8, "the header");
    if (st == BP_OK && json[0] != '{')
        st = st_format(f->path, "the header does not start with '{' (file byte 8)");
    if (st == BP_OK)
        st = st_header(f, json, (size_t)n, size - 8 - n);
    free(json);
    if (st == BP_OK)
        st = st_map(f, f->fd, size);
    if (st != BP_OK)
        return st;
    f->data_offset = 8 + n;
    f->data = (const char *)f->map->base + 8 + n;
    return BP_OK;
}

bp_status bp_safetensors_open(const char *path, bp_safetensors **out)
{
    if (!out)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_safetensors_open: out is NULL");
    *out = NULL;
    if (!path)
        return bp__error(BP_ERR_INVALID_ARGUMENT, "bp_safetensors_open: path is NULL");
    bp_safetensors *f = calloc(1, sizeof *f);
    if (f)
        f->fd = -1;
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "bp_safetensors_open: out of memory");
    }
    bp_status st = st_open(f);
    if (st != BP_OK) {
        bp__st_free(f);
        return st;
    }
    *out = f;
    return BP_OK;
}

void bp_safetensors_close(bp_safetensors *f) { bp__st_free(f); }
