/* A stand-in for libnccl.so.2 with every function the nccl engine looks
 * up, each failing: lets test_comm reach the engine's check for a GPU on a
 * machine without NCCL. Never installed. */
#include <stddef.h>

#define FAIL_FN(name, ...) int name(__VA_ARGS__); int name(__VA_ARGS__) { return 3; }

int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
    *version = 22809;
    return 0;
}
const char *ncclGetErrorString(int result);
const char *ncclGetErrorString(int result)
{
    (void)result;
    return "fake NCCL";
}
FAIL_FN(ncclGetUniqueId, void *id)
FAIL_FN(ncclCommInitRank, void *comm, int n, int rank)
FAIL_FN(ncclCommDestroy, void *comm)
FAIL_FN(ncclCommAbort, void *comm)
FAIL_FN(ncclCommGetAsyncError, void *comm, int *result)
FAIL_FN(ncclAllReduce, void *a)
FAIL_FN(ncclBroadcast, void *a)
FAIL_FN(ncclAllGather, void *a)
FAIL_FN(ncclReduceScatter, void *a)
