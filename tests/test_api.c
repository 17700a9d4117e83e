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

/* Ops whose function is named otherwise: copy is bp_cast to x's own dtype,
 * fill is bp_full. */
static bool named_otherwise(bp_op op) { return op == BP_OP_COPY || op == BP_OP_FILL; }

Test(api, every_op_of_the_table_has_a_written_declaration_named_after_it)
{
    char *ops = read_text(BPT_SOURCE_DIR "/core/include/backplane/ops.h");
    char *nn = read_text(BPT_SOURCE_DIR "/core/include/backplane/nn.h");
    for (int op = 0; op < BP_OP_COUNT; op++) {
        if (named_otherwise((bp_op)op))
            continue;
        char decl[96];
        snprintf(decl, sizeof decl, "BP_API bp_status bp_%s(", bp_op_name((bp_op)op));
        const char *text = strstr(ops, decl) ? ops : nn;
        const char *at = strstr(text, decl);
        cr_assert_not_null(at, "neither ops.h nor nn.h declares '%s'", decl);
        /* and a contract comment right above it, or above the group of
         * declarations it belongs to (lines of declarations, no blank line) */
        const char *line = at;
        while (line - text > 4 && strncmp(line - 4, " */\n", 4) != 0) {
            const char *prev = line - 1; /* the '\n' ending the line before */
            while (prev > text && prev[-1] != '\n')
                prev--;
            if (prev == line - 1 || prev[0] == '/' || (prev[0] == ' ' && prev[1] == '*'))
                break; /* a blank line, or a comment not ending there */
            line = prev;
        }
        cr_assert(line - text > 4 && strncmp(line - 4, " */\n", 4) == 0,
                  "'%s' has no contract comment above it or its group", decl);
    }
    cr_assert_null(strstr(ops, "BP_OP_TABLE(BP__DECL"), "ops.h generates declarations");
    free(ops);
    free(nn);
}

/* The binary ops' definitions are generated from the op table: these
 * assignments stop the build if a declaration is missing or differs. */
#define BPT_ADDR(NAME, name, KIND, SINCE, IN, OUT, TYPED, DTYPES, RESULT, COST) \
    BPT_ADDR_##KIND(name)
#define BPT_ADDR_BINARY(name)                                                                 \
    {#name, (void (*)(void))(bp_status (*)(const bp_tensor *, const bp_tensor *, bp_tensor **))bp_##name},
#define BPT_ADDR_UNARY(name)
#define BPT_ADDR_WHERE(name)
#define BPT_ADDR_REDUCE(name)
#define BPT_ADDR_MATMUL(name)
#define BPT_ADDR_MOVEMENT(name)
#define BPT_ADDR_GATHER(name)
#define BPT_ADDR_SOFTMAX(name)
#define BPT_ADDR_FILL(name)
#define BPT_ADDR_ARANGE(name)
#define BPT_ADDR_RANDOM(name)
#define BPT_ADDR_CLIP(name)
#define BPT_ADDR_HARDMAX(name)
#define BPT_ADDR_SCAN(name)
#define BPT_ADDR_SORT(name)
#define BPT_ADDR_TRILU(name)
#define BPT_ADDR_ONE_HOT(name)
#define BPT_ADDR_INDEX(name)
#define BPT_ADDR_SCATTER(name)
#define BPT_ADDR_GEMM(name)
#define BPT_ADDR_CONV(name)
#define BPT_ADDR_POOL(name)
#define BPT_ADDR_LRN(name)
#define BPT_ADDR_NORM(name)
#define BPT_ADDR_LOSS(name)
#define BPT_ADDR_RESIZE(name)

static const struct {
    const char *name;
    void (*fn)(void);
} generated[] = {BP_OP_TABLE(BPT_ADDR)};

Test(api, every_binary_op_function_is_defined_from_the_op_table)
{
    size_t n = sizeof generated / sizeof generated[0];
    for (size_t i = 0; i < n; i++)
        cr_assert_not_null(generated[i].fn, "%s", generated[i].name);
    cr_assert_eq(n, 24);
}

Test(api, dtype_count_comes_from_the_dtype_list)
{
    cr_assert_eq(BP_DTYPE_COUNT, 13);
    for (int d = 0; d < BP_DTYPE_COUNT; d++) {
        cr_assert(bp_dtype_valid(d));
        cr_assert_str_neq(bp_dtype_name((bp_dtype)d), "?");
        cr_assert_gt(bp_dtype_size((bp_dtype)d), 0);
    }
    cr_assert_not(bp_dtype_valid(BP_DTYPE_COUNT));
}
