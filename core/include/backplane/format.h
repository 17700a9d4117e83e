/* backplane: printing tensors, in NumPy's style.
 *
 *   tensor (2, 3) f32 on binary:0
 *   [[ 1.5 -2.   3. ]
 *    [ 4.   5.   6. ]]
 *
 * A header line (shape, dtype, backend), then the values as NumPy prints
 * them: brackets per axis, columns aligned on the decimal point, scientific
 * notation when magnitudes call for it, and tensors larger than the
 * threshold summarised with their edge items around "...". Printing reads
 * the tensor to the host once (a synchronising read, counted in the stats). */
#ifndef BACKPLANE_FORMAT_H
#define BACKPLANE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "export.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bp_format_options {
    uint32_t struct_size;    /* sizeof(bp_format_options) */
    int32_t precision;       /* most digits after the point (NumPy's 8); 0..17 */
    int64_t threshold;       /* summarise above this many elements (1000) */
    int32_t edgeitems;       /* items kept at each end of a summarised axis (3) */
    int32_t linewidth;       /* wrap rows longer than this (75) */
} bp_format_options;

/* NumPy's defaults: precision 8, threshold 1000, edgeitems 3, linewidth 75. */
BP_API bp_format_options bp_format_defaults(void);

/* The text into buf (size bytes, always NUL-terminated when size > 0).
 * options NULL: the defaults. BP_ERR_INVALID_ARGUMENT if the text does not
 * fit (buf then holds its beginning, and the message says how many bytes it
 * needs) or an option is out of range; backend errors of the read. */
BP_API bp_status bp_tensor_format(const bp_tensor *t, char *buf, size_t size,
                                  const bp_format_options *options);

/* The text, with the defaults and a final newline, to f. */
BP_API bp_status bp_tensor_print(const bp_tensor *t, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
