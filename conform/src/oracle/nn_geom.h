/* The oracle's window geometry (nn_geom.c), shared by its conv and pool
 * files: ONNX's shape rules applied to a bp_window, padded to three spatial
 * axes (missing ones: extent 1, kernel 1, stride 1, dilation 1, no pads). */
#ifndef BP_CONFORM_ORACLE_NN_GEOM_H
#define BP_CONFORM_ORACLE_NN_GEOM_H

#include "oracle.h"

typedef struct cf_geom {
    int32_t s;
    int64_t in[3], out[3], k[3], st[3], dl[3], pb[3], pe[3];
} cf_geom;

/* Conv and the pools: kernel the window's extents (w's for conv). */
void cf_geom_forward(const cf_array *x, const bp_window *window, const int64_t *kernel,
                     cf_geom *g);
/* ConvTranspose, kernel w's extents. */
void cf_geom_transpose(const cf_array *x, const bp_window *window, const int64_t *kernel,
                       cf_geom *g);
/* Spatial index (o0, o1, o2) of flat position i over extents e. */
void cf_geom_unravel(const int64_t *e, int64_t i, int64_t *o);

#endif
