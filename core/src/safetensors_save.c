/* Saving tensors as a safetensors file, atomically: everything goes to a
 * temporary file in the same directory, which is flushed to disk and then
 * renamed over the target (and the directory flushed), so a crash at any
 * point leaves either the old file or the complete new one. The header is
 * written with cJSON; each tensor is read to the host once and streamed. */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors_internal.h"

static const char fn[] = "bp_save_safetensors";

static bp_status sv_io(const char *what, const char *path, int err)
{
    char eb[128];
    return bp__error(BP_ERR_IO, "%s: cannot %s %s: %s", fn, what, path,
                     strerror_r(err, eb, sizeof eb));
}

static bp_status sv_check(const char *path, size_t n, const char *const *names,
                          const bp_tensor *const *tensors, const char *const *metadata)
{
    if (!path || (n > 0 && (!names || !tensors)))
        return bp__error(BP_ERR_INVALID_ARGUMENT, "%s: path, names or tensors is NULL", fn);
    for (size_t i = 0; i < n; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "tensors[%zu]", i);
        BP__TRY(bp__check_input(fn, arg, tensors[i]));
        if (!names[i] || !names[i][0] || strcmp(names[i], "__metadata__") == 0)
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: names[%zu] is %s; every tensor needs a non-empty name other "
                             "than __metadata__",
                             fn, i, names[i] ? "not usable" : "NULL");
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return bp__error(BP_ERR_INVALID_ARGUMENT,
                                 "%s: the name '%s' is given twice (names[%zu] and names[%zu])",
                                 fn, names[i], j, i);
    }
    for (size_t i = 0; metadata && metadata[i]; i += 2)
        if (!metadata[i + 1])
            return bp__error(BP_ERR_INVALID_ARGUMENT,
                             "%s: metadata key '%s' has no value (metadata alternates keys and "
                             "values and ends with NULL)", fn, metadata[i]);
    return BP_OK;
}

/* The JSON header, padded with spaces to a multiple of 8 bytes after the
 * length field (as the reference writer does), so the data starts aligned. */
static char *sv_header(size_t n, const char *const *names, const bp_tensor *const *tensors,
                       const char *const *metadata, size_t *len)
{
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    if (ok && metadata && metadata[0]) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        ok = meta != NULL;
        for (size_t i = 0; ok && metadata[i]; i += 2)
            ok = cJSON_AddStringToObject(meta, metadata[i], metadata[i + 1]) != NULL;
    }
    uint64_t at = 0;
    for (size_t i = 0; ok && i < n; i++) {
        const bp_tensor *t = tensors[i];
        cJSON *e = cJSON_AddObjectToObject(root, names[i]);
        cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = shape ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        ok = offs && cJSON_AddStringToObject(e, "dtype", bp__st_dtype_name(t->dtype));
        for (int32_t k = 0; ok && k < t->rank; k++)
            ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[k]));
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
        at += t->nbytes;
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!json)
        return NULL;
    size_t raw = strlen(json), padded = (raw + 7) & ~(size_t)7;
    char *out = realloc(json, padded + 1);
    if (!out) {
        cJSON_free(json);
        return NULL;
    }
    memset(out + raw, ' ', padded - raw);
    out[padded] = '\0';
    *len = padded;
    return out;
}

/* One tensor's bytes to fp: straight from host memory, else read once. */
static bp_status sv_tensor(FILE *fp, const char *tmp, const bp_tensor *t)
{
    if (t->nbytes == 0)
        return BP_OK;
    bp_backend *b = bp__backend_of(t);
    const void *src;
    void *copy = NULL;
    if (b->host_addressable) {
        BP__TRY(bp_synchronize(b)); /* the host memory must hold the finished values */
        bp__count_d2h(b, t->nbytes);
        src = (const char *)b->vt->host_ptr(b->dev, t->storage->buffer) + t->offset;
    } else {
        if (!(copy = malloc(t->nbytes)))
            return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: no host memory for %zu bytes", fn,
                             t->nbytes);
        bp__count_d2h(b, t->nbytes);
        bp_status st = bp__device_read(b, fn, t->storage->buffer, (size_t)t->offset, copy,
                                       t->nbytes);
        if (st != BP_OK) {
            free(copy);
            return st;
        }
        src = copy;
    }
    bool ok = fwrite(src, 1, t->nbytes, fp) == t->nbytes;
    int err = errno;
    free(copy);
    return ok ? BP_OK : sv_io("write", tmp, err);
}

static bp_status sv_write(FILE *fp, const char *tmp, const char *header, size_t len, size_t n,
                          const bp_tensor *const *tensors)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)((uint64_t)len >> (8 * i));
    if (fwrite(le, 1, 8, fp) != 8 || fwrite(header, 1, len, fp) != len)
        return sv_io("write", tmp, errno);
    for (size_t i = 0; i < n; i++)
        BP__TRY(sv_tensor(fp, tmp, tensors[i]));
    if (fflush(fp) != 0 || fsync(fileno(fp)) != 0)
        return sv_io("flush", tmp, errno);
    return BP_OK;
}

/* Flush the directory entry of a rename (best effort where unsupported). */
static bp_status sv_sync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bp_status st = BP_OK;
    if (fd >= 0) {
        if (fsync(fd) != 0 && errno != EINVAL)
            st = sv_io("flush the directory of", path, errno);
        close(fd);
    }
    free(copy);
    return st;
}

bp_status bp_save_safetensors(const char *path, size_t n, const char *const *names,
                              const bp_tensor *const *tensors, const char *const *metadata)
{
    BP__TRY(sv_check(path, n, names, tensors, metadata));
    size_t len = 0;
    char *header = sv_header(n, names, tensors, metadata, &len);
    if (!header)
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory writing the header", fn);
    char *dir = strdup(path), *base = strdup(path);
    char *tmp = dir && base ? bp__aprintf("%s/.%s.tmp.XXXXXX", dirname(dir), basename(base)) : NULL;
    free(dir);
    free(base);
    if (!tmp) {
        free(header);
        return bp__error(BP_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    bp_status st = BP_OK;
    int fd = mkstemp(tmp);
    if (fd >= 0) { /* mkstemp makes it 0600: give it the old file's mode, or 0644 */
        struct stat old;
        fchmod(fd, stat(path, &old) == 0 ? (old.st_mode & 07777) : 0644);
    }
    FILE *fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!fp) {
        st = sv_io("create a temporary file for", path, errno);
        if (fd >= 0)
            close(fd);
    } else {
        st = sv_write(fp, tmp, header, len, n, tensors);
        if (fclose(fp) != 0 && st == BP_OK)
            st = sv_io("close", tmp, errno);
        if (st == BP_OK && rename(tmp, path) != 0)
            st = sv_io("rename the temporary file over", path, errno);
        if (st == BP_OK)
            st = sv_sync_dir(path);
    }
    if (st != BP_OK && fd >= 0)
        unlink(tmp); /* the old file, if any, is untouched */
    free(tmp);
    free(header);
    return st;
}
