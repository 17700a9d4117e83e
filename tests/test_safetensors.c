/* Checkpoints: safetensors files written from and loaded onto any backend,
 * validated up front, loaded as copies (or, asked for, in place where the
 * backend allows). The
 * reference implementation's view is tests/checkpoint/check_reference.py. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "bpt.h"
#include "expect.h"

static char dir[64];

static void setup(void)
{
    strcpy(dir, "/tmp/bpt_st_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    setenv("BP_LOG_LEVEL", "error", 1);
}

TestSuite(safetensors, .init = setup);

static const char *file_in_dir(const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* A file of an 8-byte length, header text, then data bytes. */
static const char *raw_file(const char *header, const void *data, size_t n)
{
    const char *path = file_in_dir("raw.safetensors");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    uint64_t len = strlen(header);
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(len >> (8 * i));
    fwrite(le, 1, 8, f);
    fwrite(header, 1, len, f);
    if (n)
        fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

Test(safetensors, saved_tensors_load_back_exactly_on_every_backend)
{
    bp_context *ctx = bpt_context();
    bp_backend *be;
    BPT_FOR_EACH_BACKEND(ctx, be) {
        bp_tensor *ts[9];
        const char *names[9];
        for (int d = 0; d < 9; d++) {
            bp_dtype dt = cf_all_dtypes[d];
            int64_t shape[2] = {2, 3};
            double v[6] = {0, 1, -2.5, 100, 0.125, -0.0};
            ts[d] = bpt_tensor(be, dt, 2, shape, v);
            names[d] = bp_dtype_name(dt);
        }
        const char *path = file_in_dir("all.safetensors");
        BPT_OK(bp_save_safetensors(path, 9, names, (const bp_tensor *const *)ts,
                                   (const char *const[]){"k", "v", NULL}));
        bp_safetensors *f = NULL;
        BPT_OK(bp_safetensors_open(path, &f));
        cr_assert_eq(bp_safetensors_count(f), 9);
        const char *k, *v;
        BPT_OK(bp_safetensors_metadata_at(f, 0, &k, &v));
        cr_assert(strcmp(k, "k") == 0 && strcmp(v, "v") == 0);
        for (int d = 0; d < 9; d++) {
            for (int mapped = 0; mapped < 2; mapped++) {
                bp_tensor *back = NULL;
                BPT_OK(mapped ? bp_safetensors_load_mapped(f, names[d], be, &back)
                              : bp_safetensors_load(f, names[d], be, &back));
                size_t nb = bp_tensor_nbytes(ts[d]);
                unsigned char a[64], b[64];
                BPT_OK(bp_tensor_to_host(ts[d], a, sizeof a));
                BPT_OK(bp_tensor_to_host(back, b, sizeof b));
                cr_assert_eq(memcmp(a, b, nb), 0, "%s on %s%s", names[d], bp_backend_name(be),
                             mapped ? ", mapped" : "");
                cr_assert_eq(bp_tensor_dtype(back), cf_all_dtypes[d]);
                bp_tensor_release(back);
            }
            bp_tensor_release(ts[d]);
        }
        bp_safetensors_close(f);
    }
    bp_context_destroy(ctx);
}

/* A checkpoint of one f32 tensor "w" = 0, 1, ... 1023 at path, on cpu. */
static void save_counting(bp_backend *cpu, const char *path, float big[1024])
{
    for (int i = 0; i < 1024; i++)
        big[i] = (float)i;
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_F32, 1, (int64_t[]){1024}, big, &t));
    BPT_OK(bp_save_safetensors(path, 1, (const char *const[]){"w"}, (const bp_tensor *const *)&t,
                               NULL));
    bp_tensor_release(t);
}

static int64_t host_transfers(bp_backend *be)
{
    bp_stats st = {.struct_size = sizeof st};
    BPT_OK(bp_backend_stats(be, &st));
    return (int64_t)st.h2d_calls;
}

Test(safetensors, load_copies_so_truncating_the_file_leaves_the_tensor_intact)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    float big[1024];
    const char *path = file_in_dir("copied.safetensors");
    save_counting(cpu, path, big);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    int64_t h0 = host_transfers(cpu);
    bp_tensor *w = NULL, *w2 = NULL;
    BPT_OK(bp_safetensors_load(f, "w", cpu, &w));
    BPT_OK(bp_safetensors_load_expect(f, "w", cpu, BP_F32, 1, (int64_t[]){1024}, &w2));
    cr_assert_eq(host_transfers(cpu) - h0, 2, "a load is one host -> backend write");
    /* truncated in place while the tensors (and the open file) live */
    int fd = open(path, O_WRONLY | O_TRUNC);
    cr_assert_geq(fd, 0);
    close(fd);
    float out[1024];
    BPT_OK(bp_tensor_to_host(w, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big);
    BPT_OK(bp_tensor_to_host(w2, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big);
    bp_safetensors_close(f);
    BPT_OK(bp_tensor_to_host(w, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big);
    bp_tensor_release(w);
    bp_tensor_release(w2);
    bp_context_destroy(ctx);
}

/* Before, the copying load read the mapped pages: a file truncated between
 * open and load killed the process with SIGBUS. */
Test(safetensors, a_file_truncated_after_open_is_an_io_error_at_load_not_a_crash)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    float big[1024];
    const char *path = file_in_dir("shrinks.safetensors");
    save_counting(cpu, path, big);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    /* cut inside the data: the header is intact, the tensor's bytes are not */
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    static char whole[8192];
    cr_assert_leq(sb.st_size, (off_t)sizeof whole);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pread(fd, whole, (size_t)sb.st_size, 0), sb.st_size);
    cr_assert_eq(ftruncate(fd, sb.st_size - 2048), 0);
    bp_tensor *w = NULL;
    BPT_FAILS(BP_ERR_IO, bp_safetensors_load(f, "w", cpu, &w));
    cr_assert_null(w);
    const char *msg = bp_last_error();
    cr_assert(strstr(msg, "tensor 'w'") && strstr(msg, path) &&
                  strstr(msg, "shrank after it was opened") && strstr(msg, "open it again"),
              "%s", msg);
    BPT_FAILS(BP_ERR_IO,
              bp_safetensors_load_expect(f, "w", cpu, BP_F32, 1, (int64_t[]){1024}, &w));
    /* written back in place: the same open file loads it again */
    cr_assert_eq(pwrite(fd, whole, (size_t)sb.st_size, 0), sb.st_size);
    close(fd);
    BPT_OK(bp_safetensors_load(f, "w", cpu, &w));
    float out[1024];
    BPT_OK(bp_tensor_to_host(w, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big);
    bp_tensor_release(w);
    bp_safetensors_close(f);
    bp_context_destroy(ctx);
}

Test(safetensors, load_mapped_on_a_host_backend_uses_the_mapped_file_without_copying)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    float big[1024];
    const char *path = file_in_dir("big.safetensors");
    save_counting(cpu, path, big);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    bp_memory_info m0 = {.struct_size = sizeof m0}, m1 = {.struct_size = sizeof m1};
    BPT_OK(bp_backend_memory_info(cpu, &m0));
    int64_t h0 = host_transfers(cpu);
    bp_tensor *w = NULL;
    BPT_OK(bp_safetensors_load_mapped(f, "w", cpu, &w));
    BPT_OK(bp_backend_memory_info(cpu, &m1));
    cr_assert_eq(m1.used, m0.used, "the backend allocated %llu bytes for a mapped tensor",
                 (unsigned long long)(m1.used - m0.used));
    cr_assert_eq(host_transfers(cpu), h0, "a mapped tensor was written to the backend");
    /* it shares the pages: rewriting the file in place shows through (the
     * hazard its contract states), while a copy keeps the old bytes */
    bp_tensor *copy = NULL;
    BPT_OK(bp_safetensors_load(f, "w", cpu, &copy));
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0);
    unsigned char le[8];
    cr_assert_eq(pread(fd, le, 8, 0), 8);
    uint64_t header = 0;
    for (int i = 7; i >= 0; i--)
        header = header << 8 | le[i];
    const float minus_one = -1.0f; /* over w[0] */
    cr_assert_eq(pwrite(fd, &minus_one, sizeof minus_one, (off_t)(8 + header)), 4);
    close(fd);
    float out[1024];
    BPT_OK(bp_tensor_to_host(w, out, sizeof out));
    cr_assert(out[0] == -1.0f && out[1] == 1.0f, "the mapped tensor is not the file's pages");
    BPT_OK(bp_tensor_to_host(copy, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big, "the copy changed with the file");
    bp_tensor_release(copy);
    big[0] = -1.0f;
    bp_safetensors_close(f); /* the tensor keeps the mapping */
    BPT_OK(bp_tensor_to_host(w, out, sizeof out));
    cr_assert_arr_eq(out, big, sizeof big);
    bp_tensor *y = NULL;
    BPT_OK(bp_neg(w, &y)); /* ops read it like any other tensor */
    bp_tensor_release(y);
    bp_tensor_release(w);
    bp_context_destroy(ctx);
}

Test(safetensors, load_mapped_copies_misaligned_data_instead)
{
    /* one byte of u8 first: the f32 after it is not 4-byte aligned */
    unsigned char data[1 + 8] = {7};
    float v[2] = {1.5f, -3};
    memcpy(data + 1, v, sizeof v);
    const char *path = raw_file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]}}",
                                data, sizeof data);
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    bp_tensor *b = NULL;
    BPT_OK(bp_safetensors_load_mapped(f, "b", cpu, &b));
    float out[2];
    BPT_OK(bp_tensor_to_host(b, out, sizeof out));
    cr_assert_arr_eq(out, v, sizeof v);
    bp_tensor_release(b);
    bp_safetensors_close(f);
    bp_context_destroy(ctx);
}

/* cJSON's allocations, failing the fail_at-th (cJSON_InitHooks: this test's
 * process is its own). */
static long json_allocs, json_fail_at;

static void *failing_json_malloc(size_t n)
{
    return ++json_allocs == json_fail_at ? NULL : malloc(n);
}

Test(safetensors, open_reports_out_of_memory_when_the_json_parser_cannot_allocate)
{
    float v[3] = {1, 2, 3};
    const char *path = raw_file("{\"__metadata__\":{\"format\":\"pt\"},"
                                "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                                v, sizeof v);
    long k = 1;
    for (;; k++) {
        json_allocs = 0;
        json_fail_at = k;
        cJSON_InitHooks(&(cJSON_Hooks){failing_json_malloc, free});
        bp_safetensors *f = NULL;
        bp_status st = bp_safetensors_open(path, &f);
        cJSON_InitHooks(NULL);
        if (json_allocs < k) { /* every allocation of the parse has failed once */
            cr_assert_eq(st, BP_OK, "%s: %s", bp_status_string(st), bp_last_error());
            bp_safetensors_close(f);
            break;
        }
        cr_assert_eq(st, BP_ERR_OUT_OF_MEMORY, "allocation %ld of cJSON failed: %s: %s", k,
                     bp_status_string(st), bp_last_error());
        cr_assert_null(f);
        cr_assert(strstr(bp_last_error(), "out of memory") && strstr(bp_last_error(), path),
                  "%s", bp_last_error());
        cr_assert(k < 1000, "runaway");
    }
    cr_assert_gt(k, 10, "the parse made only %ld allocations: the hooks did not reach it", k - 1);
}

typedef struct bad_file {
    const char *header;
    size_t data;        /* bytes of data after the header */
    const char *want;   /* in the message */
} bad_file;

Test(safetensors, header_violations_are_format_errors_naming_what_and_where)
{
    static const bad_file cases[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", 8, "not well-formed JSON"},
        {"[1,2]", 0, "does not start with '{'"},
        {"{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "'a': \"dtype\" is missing"},
        {"{\"a\":{\"dtype\":\"Q9\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "\"Q9\" is not a safetensors dtype"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, "shape[0] is not a whole number"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,8]}}", 8, "shape[0] is not a whole number"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", 8, "overflows"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, "begin <= end"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "need 12"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "starts at data byte 4"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "contiguous"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, "bytes left over"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, "truncated"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "appears twice"},
        {"{\"__metadata__\":{\"k\":3}}", 0, "value of 'k' is not a string"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8, "unexpected bytes"},
        /* JSON that cJSON refuses: never mistaken for a parser out of memory */
        {"{\"\\udc00\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"\\ud800x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"\\q\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,],\"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2] \"data_offsets\":[0,8]}}", 8, "not well-formed JSON"},
        {"{\"a\":nul}", 0, "not well-formed JSON"},
        {"{\"a\" 1}", 0, "not well-formed JSON"},
        {"{\"a", 0, "not well-formed JSON"},
    };
    unsigned char zeros[16] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = raw_file(cases[i].header, zeros, cases[i].data);
        bp_safetensors *f = NULL;
        bp_status st = bp_safetensors_open(path, &f);
        cr_assert_eq(st, BP_ERR_FORMAT, "case %zu (%s) -> %s", i, cases[i].want,
                     bp_status_string(st));
        cr_assert_null(f);
        cr_assert(strstr(bp_last_error(), cases[i].want) && strstr(bp_last_error(), path),
                  "case %zu: %s", i, bp_last_error());
    }
    /* nested deeper than cJSON goes */
    char deep[2 * 1100 + 32];
    size_t at = (size_t)snprintf(deep, sizeof deep, "{\"__metadata__\":");
    for (int i = 0; i < 1100; i++)
        deep[at++] = '[';
    for (int i = 0; i < 1100; i++)
        deep[at++] = ']';
    strcpy(deep + at, "}");
    bp_safetensors *deep_f = NULL;
    BPT_FAILS(BP_ERR_FORMAT, bp_safetensors_open(raw_file(deep, NULL, 0), &deep_f));
    cr_assert(strstr(bp_last_error(), "not well-formed JSON"), "%s", bp_last_error());
    /* shorter than the length field, and a length beyond the file */
    const char *path = file_in_dir("short.safetensors");
    FILE *fp = fopen(path, "wb");
    fwrite("\x05\0\0", 1, 3, fp);
    fclose(fp);
    bp_safetensors *f = NULL;
    BPT_FAILS(BP_ERR_FORMAT, bp_safetensors_open(path, &f));
    fp = fopen(path, "wb");
    fwrite("\xff\xff\0\0\0\0\0\0{}", 1, 10, fp);
    fclose(fp);
    BPT_FAILS(BP_ERR_FORMAT, bp_safetensors_open(path, &f));
    cr_assert(strstr(bp_last_error(), "header length is 65535"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_IO, bp_safetensors_open(file_in_dir("absent.safetensors"), &f));
}

Test(safetensors, a_dtype_backplane_lacks_is_listed_and_refused_at_load)
{
    unsigned char data[2] = {0x38, 0x40};
    const char *path = raw_file("{\"h\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}",
                                data, sizeof data);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    bp_safetensors_entry e = {.struct_size = sizeof e};
    BPT_OK(bp_safetensors_entry_at(f, 0, &e));
    cr_assert_str_eq(e.dtype_name, "F8_E4M3");
    cr_assert_eq(e.dtype, -1);
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_DTYPE, bp_safetensors_load(f, "h", cpu, &t));
    cr_assert(strstr(bp_last_error(), "'h'") && strstr(bp_last_error(), "F8_E4M3"), "%s",
              bp_last_error());
    bp_safetensors_close(f);
    bp_context_destroy(ctx);
}

Test(safetensors, load_expect_names_the_tensor_and_both_shapes)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    bp_tensor *w = NULL;
    BPT_OK(bp_zeros(cpu, BP_F32, 2, (int64_t[]){8, 32}, &w));
    const char *path = file_in_dir("model.safetensors");
    BPT_OK(bp_save_safetensors(path, 1, (const char *const[]){"layer1.weight"},
                               (const bp_tensor *const *)&w, NULL));
    bp_tensor_release(w);
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f));
    bp_tensor *t = NULL;
    BPT_FAILS(BP_ERR_SHAPE, bp_safetensors_load_expect(f, "layer1.weight", cpu, BP_F32, 2,
                                                       (int64_t[]){8, 64}, &t));
    cr_assert_null(t);
    const char *e = bp_last_error();
    cr_assert(strstr(e, "'layer1.weight'") && strstr(e, "expected F32 (8, 64)") &&
                  strstr(e, "stored F32 (8, 32)"),
              "%s", e);
    BPT_FAILS(BP_ERR_DTYPE, bp_safetensors_load_expect(f, "layer1.weight", cpu, BP_F64, 2,
                                                       (int64_t[]){8, 32}, &t));
    BPT_OK(bp_safetensors_load_expect(f, "layer1.weight", cpu, BP_F32, 2, (int64_t[]){8, 32}, &t));
    bp_tensor_release(t);
    BPT_FAILS(BP_ERR_NOT_FOUND, bp_safetensors_load(f, "layer2.weight", cpu, &t));
    bp_safetensors_close(f);
    bp_context_destroy(ctx);
}

static int files_in_dir(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.' || strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

Test(safetensors, a_failed_save_leaves_the_old_file_and_no_temporary_file)
{
    setenv("BP_PLUGIN_PATH", BPT_PLUGIN_DIR, 1);
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL, *gone = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    BPT_OK(bp_backend_get(ctx, "read_fails", &gone));
    bp_tensor *good = NULL, *bad = NULL;
    BPT_OK(bp_ones(cpu, BP_F32, 1, (int64_t[]){4}, &good));
    BPT_OK(bp_tensor_from_host(gone, BP_F32, 1, (int64_t[]){2}, (float[]){1, 2}, &bad));
    const char *path = file_in_dir("ckpt.safetensors");
    BPT_OK(bp_save_safetensors(path, 1, (const char *const[]){"a"},
                               (const bp_tensor *const *)&good, NULL));
    int before = files_in_dir();
    BPT_FAILS(BP_ERR_BACKEND, bp_save_safetensors(path, 2, (const char *const[]){"a", "b"},
                                                  (const bp_tensor *const[]){good, bad}, NULL));
    cr_assert(strstr(bp_last_error(), "the device is gone"), "%s", bp_last_error());
    cr_assert_eq(files_in_dir(), before, "a temporary file was left behind");
    bp_safetensors *f = NULL;
    BPT_OK(bp_safetensors_open(path, &f)); /* the old checkpoint, whole */
    cr_assert_eq(bp_safetensors_count(f), 1);
    bp_safetensors_close(f);
    bp_tensor_release(good);
    bp_tensor_release(bad);
    bp_context_destroy(ctx);
}

Test(safetensors, save_refuses_empty_duplicate_or_reserved_names)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    bp_tensor *t = NULL;
    BPT_OK(bp_ones(cpu, BP_U8, 1, (int64_t[]){1}, &t));
    const char *path = file_in_dir("x.safetensors");
    const bp_tensor *two[] = {t, t};
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
              bp_save_safetensors(path, 2, (const char *const[]){"a", "a"}, two, NULL));
    cr_assert(strstr(bp_last_error(), "'a' is given twice"), "%s", bp_last_error());
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
              bp_save_safetensors(path, 1, (const char *const[]){""}, two, NULL));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT,
              bp_save_safetensors(path, 1, (const char *const[]){"__metadata__"}, two, NULL));
    BPT_FAILS(BP_ERR_INVALID_ARGUMENT, bp_save_safetensors(path, 1, (const char *const[]){"a"}, two,
                                                           (const char *const[]){"key", NULL}));
    BPT_FAILS(BP_ERR_IO, bp_save_safetensors("/nonexistent/dir/x.safetensors", 1,
                                             (const char *const[]){"a"}, two, NULL));
    cr_assert_eq(access(path, F_OK), -1, "nothing was written");
    bp_tensor_release(t);
    bp_context_destroy(ctx);
}

/* A mapped tensor lent through DLPack and taken back shares the mapping:
 * releasing either keeps the file mapped for the other (a second buffer on
 * the same address once gave the mapping back under the first). The same
 * tensor loaded twice likewise. */
Test(safetensors, a_mapped_tensor_taken_back_through_dlpack_keeps_the_mapping_for_both)
{
    bp_context *ctx = bpt_context();
    bp_backend *cpu = NULL;
    BPT_OK(bp_backend_get(ctx, "binary", &cpu));
    float big[1024];
    for (int i = 0; i < 1024; i++)
        big[i] = (float)i;
    bp_tensor *t = NULL;
    BPT_OK(bp_tensor_from_host(cpu, BP_F32, 1, (int64_t[]){1024}, big, &t));
    const char *path = file_in_dir("lent.safetensors");
    BPT_OK(bp_save_safetensors(path, 1, (const char *const[]){"w"}, (const bp_tensor *const *)&t,
                               NULL));
    bp_tensor_release(t);
    for (int first = 0; first < 2; first++) {
        bp_safetensors *f = NULL;
        BPT_OK(bp_safetensors_open(path, &f));
        bp_tensor *w[3] = {NULL, NULL, NULL};
        BPT_OK(bp_safetensors_load_mapped(f, "w", cpu, &w[0]));
        BPT_OK(bp_safetensors_load_mapped(f, "w", cpu, &w[2]));
        bp_safetensors_close(f); /* the tensors keep the mapping */
        struct DLManagedTensor *m = NULL;
        BPT_OK(bp_tensor_to_dlpack(w[0], &m));
        BPT_OK(bp_tensor_from_dlpack(cpu, m, &w[1]));
        bp_tensor_release(w[first]);
        bp_tensor_release(w[2]);
        float out[1024];
        BPT_OK(bp_tensor_to_host(w[1 - first], out, sizeof out));
        cr_assert_arr_eq(out, big, sizeof big);
        bp_tensor_release(w[1 - first]);
    }
    bp_context_destroy(ctx);
}
