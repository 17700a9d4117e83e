/* fuzz_api: ranks, shapes and host data read from the input (the readers
 * are shared: fz_bytes.c, fz_data.c). */
#include "fa_state.h"
#include "fz_data.h"

int32_t fa_rank(fa_state *s) { return fz_rank(&s->in); }

const int64_t *fa_shape(fa_state *s, int32_t rank, int64_t *buf)
{
    return fz_shape(&s->in, rank, buf);
}

void *fa_host_data(fa_state *s, int dtype, int64_t numel)
{
    return fz_host_data(&s->in, dtype, numel);
}
