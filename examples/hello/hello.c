/* hello: the smallest complete program. A matrix times its transpose on the
 * default backend (the best one installed), printed NumPy-style. */
#include <stdio.h>

#include <backplane/backplane.h>

int main(void)
{
    bp_context *ctx = NULL;
    bp_backend *be = NULL;
    bp_tensor *a = NULL, *at = NULL, *c = NULL;
    float data[6] = {1, 2, 3, 4, 5, 6};
    if (bp_context_create(NULL, &ctx) != BP_OK || bp_backend_default(ctx, &be) != BP_OK ||
        bp_tensor_from_host(be, BP_F32, 2, (int64_t[]){2, 3}, data, &a) != BP_OK ||
        bp_transpose(a, NULL, &at) != BP_OK || bp_matmul(a, at, &c) != BP_OK ||
        bp_tensor_print(c, stdout) != BP_OK) {
        fprintf(stderr, "hello: %s\n", bp_last_error());
        return 1;
    }
    bp_tensor_release(a);
    bp_tensor_release(at);
    bp_tensor_release(c);
    bp_context_destroy(ctx);
    return 0;
}
