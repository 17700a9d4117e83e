/* Uses only the installed headers and library; the binary plugin must be
 * found beside the installed libbackplane. Prints the product it computes. */
#include <stdio.h>

#include <backplane/backplane.h>

int main(void)
{
    bp_context *ctx = NULL;
    bp_backend *cpu = NULL;
    bp_tensor *a = NULL, *at = NULL, *c = NULL;
    float data[6] = {1, 2, 3, 4, 5, 6}, out[4];
    if (bp_context_create(NULL, &ctx) != BP_OK || bp_backend_default(ctx, &cpu) != BP_OK ||
        bp_tensor_from_host(cpu, BP_F32, 2, (int64_t[]){2, 3}, data, &a) != BP_OK ||
        bp_transpose(a, NULL, &at) != BP_OK || bp_matmul(a, at, &c) != BP_OK ||
        bp_tensor_to_host(c, out, sizeof out) != BP_OK) {
        fprintf(stderr, "consumer: %s\n", bp_last_error());
        return 1;
    }
    printf("%s %g %g %g %g\n", bp_backend_name(cpu), out[0], out[1], out[2], out[3]);
    bp_tensor_release(a);
    bp_tensor_release(at);
    bp_tensor_release(c);
    bp_context_destroy(ctx);
    return 0;
}
