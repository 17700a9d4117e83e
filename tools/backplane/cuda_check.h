/* backplane cuda-check: "would this build run on that GPU?", answered without
 * one, by the cuda backend's compute-capability decision (bp_cuda_cc). */
#ifndef BACKPLANE_CLI_CUDA_CHECK_H
#define BACKPLANE_CLI_CUDA_CHECK_H

/* argv[0] is the command's name ("cuda-check"). Prints one line beginning
 * with the verdict word (native, jit, forced, unsupported), then the reason
 * and the remedy. Exit status: 0 when the device could run this build, 1 when
 * not, 2 on a usage error. */
int cli_cuda_check(int argc, char **argv);

#endif
