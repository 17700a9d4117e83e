/* The merged matrix (bp_conform_merge_matrix, `backplane conform
 * --matrix-from`) rewrites docs/conformance.md but keeps the sections other
 * tools write below it (tests/onnx/doc.py's ONNX node tests). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <backplane/conform.h>

#include "bpt.h"

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot read %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* JSON lines of one tiny run on the binary backend. */
static void one_run(char *json)
{
    const char *ops[] = {"contract.abi"};
    bp_conform_options o = {.struct_size = sizeof o, .ops = ops, .n_ops = 1};
    bp_conform_results *res = NULL;
    BPT_OK(bp_conform_run("binary", &o, &res));
    int fd = mkstemp(json);
    cr_assert_geq(fd, 0);
    close(fd);
    BPT_OK(bp_conform_write_json(res, json));
    bp_conform_free(res);
}

static const char KEPT[] = "<!-- kept by backplane conform: a section of another tool -->\n\n"
                           "## Another tool\n\n| a | b |\n";

Test(conform_matrix, rewriting_keeps_the_section_below_the_mark_byte_for_byte)
{
    char json[] = "/tmp/bpt_jsonXXXXXX", md[] = "/tmp/bpt_mdXXXXXX";
    one_run(json);
    int fd = mkstemp(md);
    cr_assert_geq(fd, 0);
    close(fd);
    char old[512];
    snprintf(old, sizeof old, "# an old matrix\n\n| stale | row |\n\n%s", KEPT);
    spit(md, old);
    const char *files[] = {json};
    BPT_OK(bp_conform_merge_matrix(files, 1, md));
    const char *text = slurp(md);
    cr_expect(strstr(text, "stale") == NULL, "the old matrix is replaced:\n%s", text);
    cr_expect(strstr(text, "| contract.abi | binary:0 |") != NULL, "%s", text);
    const char *kept = strstr(text, KEPT);
    cr_expect(kept != NULL && strlen(kept) == strlen(KEPT), "kept once, at the end:\n%s", text);
    /* ... and again: regenerating is stable. */
    char first[1 << 16];
    snprintf(first, sizeof first, "%s", text);
    BPT_OK(bp_conform_merge_matrix(files, 1, md));
    cr_expect_str_eq(slurp(md), first);
    unlink(json);
    unlink(md);
}

Test(conform_matrix, a_file_without_the_mark_is_overwritten_whole)
{
    char json[] = "/tmp/bpt_jsonXXXXXX", md[] = "/tmp/bpt_mdXXXXXX";
    one_run(json);
    int fd = mkstemp(md);
    cr_assert_geq(fd, 0);
    close(fd);
    spit(md, "# old\n\n<!-- an ordinary comment -->\nkept? no\n");
    const char *files[] = {json};
    BPT_OK(bp_conform_merge_matrix(files, 1, md));
    const char *text = slurp(md);
    cr_expect(strstr(text, "kept? no") == NULL, "%s", text);
    cr_expect(strncmp(text, "# Conformance matrix\n", 21) == 0, "%.40s", text);
    unlink(json);
    unlink(md);
}
