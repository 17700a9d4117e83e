/* A plugin author's test runner in miniature: links only the installed
 * libbackplane_conform (backplane::conform) and runs part of the suite on
 * the binary backend found beside the installed libbackplane. Prints
 * "BACKEND PASSED FAILED CRASHED"; exits 1 on any failure. */
#include <stdio.h>

#include <backplane/conform.h>

int main(void)
{
    const char *ops[] = {"add", "contract.*"};
    bp_conform_options opt = {.struct_size = sizeof opt, .ops = ops, .n_ops = 2};
    bp_conform_results *res = NULL;
    bp_conform_totals t = {.struct_size = sizeof t};
    if (bp_conform_run("binary", &opt, &res) != BP_OK ||
        bp_conform_get_totals(res, &t) != BP_OK) {
        fprintf(stderr, "conform_consumer: %s\n", bp_conform_last_error());
        bp_conform_free(res);
        return 1;
    }
    printf("%s %zu %zu %zu\n", t.backend, t.passed, t.failed, t.crashed);
    bp_conform_free(res);
    return t.failed || t.crashed || t.passed == 0;
}
