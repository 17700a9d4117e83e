/* The public headers as a reader meets them: every generated function has
 * a written-out declaration, and the lists that generate things agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpt.h"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

static bool has_function(bp_op_family f)
{
    return f == BP_FAMILY_UNARY || f == BP_FAMILY_BINARY || f == BP_FAMILY_REDUCE ||
           f == BP_FAMILY_SOFTMAX;
}

Test(api, ops_h_declares_every_generated_op_function_in_writing)
{
    char *text = read_text(BPT_SOURCE_DIR "/core/include/backplane/ops.h");
    int generated = 0;
    for (int op = 0; op < BP_OP_COUNT; op++) {
        if (!has_function(bp_op_family_of((bp_op)op)))
            continue;
        generated++;
        char decl[96];
        snprintf(decl, sizeof decl, "BP_API bp_status bp_%s(", bp_op_name((bp_op)op));
        cr_assert_not_null(strstr(text, decl), "ops.h has no written declaration '%s'", decl);
        /* and a contract comment right above it */
        const char *at = strstr(text, decl);
        cr_assert(at - text > 4 && strncmp(at - 4, " */\n", 4) == 0,
                  "'%s' has no contract comment right above it", decl);
    }
    cr_assert_gt(generated, 40);
    cr_assert_null(strstr(text, "BP_OP_LIST(BP__DECL"), "ops.h still generates declarations");
    free(text);
}

/* Each generated definition has the written signature: these assignments
 * stop the build if a declaration is missing or differs. */
#define BPT_ADDR(NAME, name, FAMILY) BPT_ADDR_##FAMILY(name)
#define BPT_ADDR_UNARY(name) {#name, (void (*)(void))(bp_status (*)(const bp_tensor *, bp_tensor **))bp_##name},
#define BPT_ADDR_BINARY(name)                                                                 \
    {#name, (void (*)(void))(bp_status (*)(const bp_tensor *, const bp_tensor *, bp_tensor **))bp_##name},
#define BPT_ADDR_REDUCE(name)                                                                 \
    {#name, (void (*)(void))(bp_status (*)(const bp_tensor *, int32_t, const int32_t *, bool,  \
                                           bp_tensor **))bp_##name},
#define BPT_ADDR_SOFTMAX(name)                                                                \
    {#name, (void (*)(void))(bp_status (*)(const bp_tensor *, int32_t, bp_tensor **))bp_##name},
#define BPT_ADDR_WHERE(name)
#define BPT_ADDR_MATMUL(name)
#define BPT_ADDR_MOVEMENT(name)
#define BPT_ADDR_GATHER(name)
#define BPT_ADDR_CREATION(name)
#define BPT_ADDR_RANDOM(name)

static const struct {
    const char *name;
    void (*fn)(void);
} generated[] = {BP_OP_LIST(BPT_ADDR)};

Test(api, every_declared_op_function_is_defined_by_the_op_list)
{
    size_t n = sizeof generated / sizeof generated[0];
    for (size_t i = 0; i < n; i++)
        cr_assert_not_null(generated[i].fn, "%s", generated[i].name);
    cr_assert_gt(n, 40);
}

Test(api, dtype_count_comes_from_the_dtype_list)
{
    cr_assert_eq(BP_DTYPE_COUNT, 9);
    for (int d = 0; d < BP_DTYPE_COUNT; d++) {
        cr_assert(bp_dtype_valid(d));
        cr_assert_str_neq(bp_dtype_name((bp_dtype)d), "?");
        cr_assert_gt(bp_dtype_size((bp_dtype)d), 0);
    }
    cr_assert_not(bp_dtype_valid(BP_DTYPE_COUNT));
}
