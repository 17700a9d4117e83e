/* The MPI engine's arithmetic: combining the ranks' values in rank order. */
#ifndef BP_COMM_REDUCE_H
#define BP_COMM_REDUCE_H

#include <stddef.h>

#include "backplane/comm.h"
#include "backplane/dtype.h"

/* dst[i] = parts[0][i] op parts[1][i] op ... op parts[n-1][i], left to right,
 * for i < count. Floats accumulate in double and are rounded once to dt
 * (AVG divides the double sum by n first); integers wrap (SUM, PROD) in 64
 * bits, then to dt's width; MAX and MIN give NaN if any part is NaN. Every
 * part and dst hold count elements of dt, aligned to its size; dst may be
 * one of the parts. dt is not bool; AVG only for floats. */
void reduce_in_rank_order(bp_dtype dt, bp_reduce_op op, const void *const *parts, int n,
                          void *dst, size_t count);

#endif
