/* choose_backend: pick the backend from an ini file, say which one won and
 * why, and run on it.
 *
 *   choose_backend [FILE.ini]     e.g. backends.ini beside this file. Without
 *                                 FILE.ini: the layered configuration, as
 *                                 bp_context_create(NULL) reads it ($BP_CONFIG,
 *                                 ~/.config/backplane/backplane.ini,
 *                                 /etc/backplane/backplane.ini, else the
 *                                 built-in defaults) */
#include <stdio.h>

#include <backplane/backplane.h>

int main(int argc, char **argv)
{
    const char *ini = argc > 1 ? argv[1] : NULL; /* NULL: the layered defaults */
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    if (bp_context_create(ini, &ctx) != BP_OK) {
        fprintf(stderr, "choose_backend: %s\n", bp_last_error());
        return 1;
    }
    if (bp_backend_default(ctx, &be) != BP_OK) {
        fprintf(stderr, "choose_backend: %s\n", bp_last_error());
        bp_context_destroy(ctx);
        return 1;
    }
    printf("chosen: %s\nhow:\n%s", bp_backend_name(be), bp_context_default_reason(ctx));
    bp_tensor *x = NULL, *s = NULL;
    double sum = 0;
    if (bp_arange(be, BP_F64, 1, 101, 1, &x) != BP_OK ||
        bp_sum(x, 0, NULL, false, &s) != BP_OK || bp_item_f64(s, &sum) != BP_OK) {
        fprintf(stderr, "choose_backend: %s\n", bp_last_error());
        return 1;
    }
    printf("1 + 2 + ... + 100 = %.0f on %s\n", sum, bp_backend_name(be));
    bp_tensor_release(x);
    bp_tensor_release(s);
    bp_context_destroy(ctx);
    return 0;
}
