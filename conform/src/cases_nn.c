/* The nn cases (nn_cases.h): one spec per geometry or option set, each run
 * on every dtype its op accepts. Shapes hit the edges: 1 to 3 spatial axes,
 * an empty batch, odd extents, padding on one side, windows that are only
 * padding, ceil_mode windows in the padding, conv_transpose outputs cut and
 * extended by output_shape, sizes past blas_cpu's threading grain and its
 * gemm and fused-row paths, and NaN / +-inf among the values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_cases.h"

#define F CF_NN_FLOATS
#define NUM CF_NN_NUMERIC
#define RO(m, c, n, a, ex) {.mode = (m), .coordinates = (c), .nearest = (n), .cubic_coeff_a = (a), \
                            .exclude_outside = (ex)}
#define NEAREST(c, n, ...) {.op = BP_OP_RESIZE, .set = NUM, .rank = 4, .x = {1, 2, 4, 5},        \
                            .ro = RO(BP_RESIZE_NEAREST, c, n, -0.75, false), __VA_ARGS__,       \
                            .what = " " #c " " #n}
#define NEAREST4(c)                                                                              \
    NEAREST(c, BP_NEAREST_ROUND_PREFER_FLOOR, .scales = {1, 1, 2.5, 1.6}),                       \
    NEAREST(c, BP_NEAREST_ROUND_PREFER_CEIL, .scales = {1, 1, 2.5, 1.6}),                        \
    NEAREST(c, BP_NEAREST_FLOOR, .scales = {1, 1, 0.5, 0.6}),                                    \
    NEAREST(c, BP_NEAREST_CEIL, .sizes = {1, 2, 7, 3})
#define SMOOTH(m, c, a, ex, ...) {.op = BP_OP_RESIZE, .set = F, .rank = 4, .x = {2, 1, 5, 6},     \
                                  .ro = RO(m, c, BP_NEAREST_ROUND_PREFER_FLOOR, a, ex),         \
                                  __VA_ARGS__, .what = " " #m " " #c}
#define SMOOTH3(m, c, a, ex)                                                                     \
    SMOOTH(m, c, a, ex, .scales = {1, 1, 2, 1.5}), SMOOTH(m, c, a, ex, .scales = {1, 1, 0.6, 0.5}), \
    SMOOTH(m, c, a, ex, .sizes = {2, 1, 9, 4})

const cf_nn_spec cf_nn_specs[] = {
    /* ---- conv ---- */
    {.op = BP_OP_CONV, .set = F, .rank = 3, .x = {2, 3, 9}, .w = {4, 3, 3}, .extra = true,
     .win = {.strides = {2}, .pads = {1, 1}}, .what = " 1-D stride 2"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {2, 4, 7, 6}, .w = {6, 2, 3, 2},
     .win = {.groups = 2, .pads = {1, 0, 1, 1}, .dilations = {1, 2}}, .what = " groups 2 dilated"},
    {.op = BP_OP_CONV, .set = F, .rank = 5, .x = {1, 2, 4, 5, 3}, .w = {3, 2, 2, 3, 2}, .extra = true,
     .what = " 3-D"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {1, 3, 7, 7}, .w = {4, 3, 3, 3},
     .win = {.strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER}, .what = " SAME_UPPER"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {1, 3, 6, 7}, .w = {2, 3, 4, 2},
     .win = {.strides = {2, 3}, .auto_pad = BP_AUTO_PAD_SAME_LOWER}, .what = " SAME_LOWER"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {2, 2, 5, 5}, .w = {2, 2, 2, 2},
     .win = {.auto_pad = BP_AUTO_PAD_VALID}, .what = " VALID"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {2, 6, 8, 8}, .w = {6, 1, 3, 3}, .extra = true,
     .win = {.groups = 6, .pads = {1, 1, 1, 1}}, .what = " depthwise"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {2, 16, 20, 20}, .w = {16, 16, 3, 3},
     .extra = true, .win = {.pads = {1, 1, 1, 1}}, .what = " gemm-sized"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {2, 8, 17, 15}, .w = {8, 8, 3, 3},
     .win = {.strides = {2, 2}, .pads = {1, 0, 0, 1}}, .what = " gemm-sized strided"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {4, 16, 9, 9}, .w = {8, 16, 1, 1}, .extra = true,
     .what = " 1x1"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {0, 3, 4, 4}, .w = {2, 3, 3, 3}, .extra = true,
     .what = " empty batch"},
    {.op = BP_OP_CONV, .set = F, .rank = 4, .x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .specials = true,
     .win = {.pads = {1, 1, 1, 1}}, .what = " NaN and inf"},
    /* ---- conv_transpose ---- */
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 3, .x = {2, 3, 5}, .w = {3, 2, 3}, .extra = true,
     .win = {.strides = {2}}, .what = " 1-D stride 2"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {1, 4, 4, 5}, .w = {4, 3, 3, 2},
     .extra = true, .win = {.groups = 2, .strides = {3, 2}, .dilations = {2, 1},
                            .pads = {1, 2, 2, 0}, .output_padding = {1, 1}},
     .what = " groups dilations pads output_padding"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 5, .x = {1, 2, 3, 2, 3}, .w = {2, 3, 2, 2, 2},
     .win = {.strides = {1, 2, 1}}, .what = " 3-D"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {1, 2, 4, 4}, .w = {2, 1, 3, 3},
     .win = {.strides = {2, 2}, .output_shape = {7, 8}}, .what = " output_shape cut"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {1, 1, 3, 3}, .w = {1, 2, 3, 3},
     .extra = true, .win = {.strides = {3, 2}, .output_shape = {10, 8}},
     .what = " output_shape extended"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {1, 1, 3, 3}, .w = {1, 2, 3, 3},
     .win = {.strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER}, .what = " SAME_UPPER"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {1, 1, 3, 3}, .w = {1, 2, 3, 3},
     .win = {.strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_LOWER}, .what = " SAME_LOWER"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {2, 16, 8, 8}, .w = {16, 8, 3, 3},
     .win = {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .output_padding = {1, 1}},
     .what = " gemm-sized"},
    /* windows that tile the output (kernel = stride, no padding): each output
     * element has one tap (U-Net's up-sampling; the cuda plugin's product path) */
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 4, .x = {2, 16, 5, 6}, .w = {16, 8, 2, 2},
     .extra = true, .win = {.strides = {2, 2}}, .what = " tiling windows 2x2"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 3, .x = {3, 5, 7}, .w = {5, 2, 4},
     .win = {.strides = {4}}, .what = " tiling windows 1-D"},
    {.op = BP_OP_CONV_TRANSPOSE, .set = F, .rank = 5, .x = {2, 4, 2, 3, 2}, .w = {4, 3, 1, 2, 3},
     .extra = true, .win = {.strides = {1, 2, 3}}, .what = " tiling windows 3-D"},
    /* ---- max_pool (indices too) ---- */
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 3, .x = {2, 3, 9},
     .win = {.kernel = {3}, .strides = {2}}, .what = " 1-D"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {2, 3, 7, 6},
     .win = {.kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}}, .what = " padded"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 5, .x = {1, 2, 4, 5, 3},
     .win = {.kernel = {2, 3, 2}, .pads = {1, 1, 0, 0, 1, 1}}, .what = " 3-D"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {1, 2, 8, 7},
     .win = {.kernel = {3, 2}, .strides = {2, 2}, .pads = {0, 1, 1, 0}, .ceil_mode = true},
     .what = " ceil_mode"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 3, .x = {1, 2, 4},
     .win = {.kernel = {2}, .strides = {2}, .pads = {0, 1}, .ceil_mode = true},
     .what = " ceil_mode window in the padding"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {1, 2, 9, 8},
     .win = {.kernel = {3, 2}, .dilations = {2, 3}, .pads = {2, 1, 1, 1}}, .what = " dilated"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {2, 2, 5, 4},
     .win = {.kernel = {2, 2}, .strides = {1, 2}, .storage_order = 1}, .what = " storage_order 1"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {1, 2, 7, 6},
     .win = {.kernel = {3, 2}, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_UPPER},
     .what = " SAME_UPPER"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 4, .x = {4, 16, 32, 32},
     .win = {.kernel = {2, 2}, .strides = {2, 2}}, .what = " threaded"},
    {.op = BP_OP_MAX_POOL, .set = NUM, .rank = 3, .x = {1, 1, 1},
     .win = {.kernel = {2}, .dilations = {2}, .pads = {1, 1}}, .what = " window of padding only"},
    {.op = BP_OP_MAX_POOL, .set = F, .rank = 4, .x = {1, 1, 4, 6}, .specials = true,
     .win = {.kernel = {2, 2}, .strides = {1, 2}}, .what = " NaN and inf"},
    /* ---- average_pool ---- */
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 3, .x = {2, 3, 9},
     .win = {.kernel = {3}, .strides = {2}}, .what = " 1-D"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 4, .x = {2, 3, 7, 6},
     .win = {.kernel = {3, 2}, .strides = {2, 1}, .pads = {1, 0, 1, 1}}, .what = " padded"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 5, .x = {1, 2, 4, 5, 3},
     .win = {.kernel = {2, 3, 2}}, .what = " 3-D"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 4, .x = {1, 2, 5, 5},
     .win = {.kernel = {3, 3}, .pads = {1, 1, 1, 1}, .count_include_pad = true},
     .what = " count_include_pad"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 4, .x = {1, 1, 6, 7},
     .win = {.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 0, 1, 0}, .ceil_mode = true,
             .count_include_pad = true}, .what = " ceil_mode count_include_pad"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 4, .x = {1, 2, 7, 6},
     .win = {.kernel = {3, 3}, .strides = {2, 2}, .auto_pad = BP_AUTO_PAD_SAME_LOWER},
     .what = " SAME_LOWER"},
    {.op = BP_OP_AVERAGE_POOL, .set = F, .rank = 4, .x = {4, 16, 32, 32},
     .win = {.kernel = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}}, .what = " threaded"},
    /* ---- global pools (composed in the core) ---- */
    {.op = CF_OP_NN_GLOBAL_MAX_POOL, .set = F, .rank = 3, .x = {2, 3, 7}},
    {.op = CF_OP_NN_GLOBAL_MAX_POOL, .set = F, .rank = 5, .x = {1, 2, 3, 4, 5}, .specials = true,
     .what = " NaN and inf"},
    {.op = CF_OP_NN_GLOBAL_AVERAGE_POOL, .set = F, .rank = 4, .x = {2, 3, 5, 7}},
    {.op = CF_OP_NN_GLOBAL_AVERAGE_POOL, .set = F, .rank = 4, .x = {2, 8, 64, 64},
     .what = " threaded"},
    /* ---- lrn (axis: size) ---- */
    {.op = BP_OP_LRN, .set = F, .rank = 4, .x = {2, 7, 3, 2}, .axis = 1, .p = {1e-4, 0.75, 1},
     .what = " size 1"},
    {.op = BP_OP_LRN, .set = F, .rank = 4, .x = {2, 7, 3, 2}, .axis = 3, .p = {0.5, 0.75, 2},
     .what = " size 3"},
    {.op = BP_OP_LRN, .set = F, .rank = 4, .x = {2, 7, 3, 2}, .axis = 4, .p = {0.5, 0.6, 1.5},
     .what = " size 4"},
    {.op = BP_OP_LRN, .set = F, .rank = 2, .x = {3, 5}, .axis = 5, .p = {1, 1, 1},
     .what = " rank 2 size 5"},
    {.op = BP_OP_LRN, .set = F, .rank = 4, .x = {4, 32, 16, 16}, .axis = 5, .p = {1e-4, 0.75, 1},
     .what = " threaded"},
    /* ---- normalisation (p[0]: epsilon) ---- */
    {.op = BP_OP_BATCH_NORM, .set = F, .rank = 2, .x = {5, 3}, .p = {1e-5}},
    {.op = BP_OP_BATCH_NORM, .set = F, .rank = 4, .x = {2, 3, 4, 5}, .p = {1e-3}},
    {.op = BP_OP_BATCH_NORM, .set = F, .rank = 3, .x = {0, 2, 3}, .p = {1e-5}, .what = " empty"},
    {.op = BP_OP_BATCH_NORM, .set = F, .rank = 4, .x = {8, 16, 32, 32}, .p = {1e-5},
     .what = " threaded"},
    {.op = BP_OP_INSTANCE_NORM, .set = F, .rank = 3, .x = {2, 3, 17}, .p = {1e-5}},
    {.op = BP_OP_INSTANCE_NORM, .set = F, .rank = 4, .x = {2, 2, 5, 6}, .p = {1e-3}},
    {.op = BP_OP_INSTANCE_NORM, .set = F, .rank = 5, .x = {1, 2, 3, 2, 4}, .p = {1e-5}},
    {.op = BP_OP_INSTANCE_NORM, .set = F, .rank = 4, .x = {4, 8, 64, 64}, .p = {1e-5},
     .what = " threaded"},
    {.op = BP_OP_LAYER_NORM, .set = F, .rank = 2, .x = {5, 7}, .axis = -1, .extra = true,
     .p = {1e-5}, .what = " axis -1"},
    {.op = BP_OP_LAYER_NORM, .set = F, .rank = 3, .x = {2, 3, 4}, .axis = 1, .extra = true,
     .p = {1e-5}, .what = " axis 1"},
    {.op = BP_OP_LAYER_NORM, .set = F, .rank = 3, .x = {2, 3, 4}, .axis = 0, .p = {1e-3},
     .what = " axis 0"},
    {.op = BP_OP_LAYER_NORM, .set = F, .rank = 2, .x = {64, 1024}, .axis = -1, .extra = true,
     .p = {1e-5}, .what = " fused rows"},
    {.op = BP_OP_LAYER_NORM, .set = F, .rank = 2, .x = {4, 33}, .axis = 1, .extra = true,
     .p = {1e-5}, .specials = true, .what = " NaN and inf"},
    {.op = BP_OP_RMS_NORM, .set = F, .rank = 2, .x = {5, 7}, .axis = -1, .extra = true,
     .p = {1e-5}, .what = " axis -1"},
    {.op = BP_OP_RMS_NORM, .set = F, .rank = 3, .x = {2, 3, 4}, .axis = 1, .p = {1e-5},
     .what = " axis 1 no scale"},
    {.op = BP_OP_RMS_NORM, .set = F, .rank = 2, .x = {64, 1024}, .axis = -1, .extra = true,
     .p = {1e-6}, .what = " fused rows"},
    /* ---- losses ---- */
    {.op = BP_OP_NLL_LOSS, .set = F, .rank = 2, .x = {6, 4}, .reduction = BP_LOSS_NONE,
     .what = " none"},
    {.op = BP_OP_NLL_LOSS, .set = F, .rank = 2, .x = {6, 4}, .reduction = BP_LOSS_SUM,
     .extra = true, .ignore = true, .what = " sum weights ignore_index"},
    {.op = BP_OP_NLL_LOSS, .set = F, .rank = 4, .x = {2, 3, 2, 3}, .reduction = BP_LOSS_MEAN,
     .extra = true, .what = " mean weights (N, C, d1, d2)"},
    {.op = BP_OP_NLL_LOSS, .set = F, .rank = 3, .x = {3, 5, 4}, .reduction = BP_LOSS_MEAN,
     .ignore = true, .what = " mean ignore_index (N, C, d)"},
    {.op = BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, .set = F, .rank = 2, .x = {6, 4},
     .reduction = BP_LOSS_NONE, .what = " none"},
    {.op = BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, .set = F, .rank = 2, .x = {7, 5},
     .reduction = BP_LOSS_SUM, .extra = true, .ignore = true, .what = " sum weights ignore_index"},
    {.op = BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, .set = F, .rank = 4, .x = {2, 3, 2, 3},
     .reduction = BP_LOSS_MEAN, .extra = true, .what = " mean weights (N, C, d1, d2)"},
    {.op = BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, .set = F, .rank = 2, .x = {300, 1000},
     .reduction = BP_LOSS_MEAN, .extra = true, .ignore = true, .what = " fused rows"},
    {.op = BP_OP_SOFTMAX_CROSS_ENTROPY_LOSS, .set = F, .rank = 2, .x = {4, 5},
     .reduction = BP_LOSS_NONE, .specials = true, .what = " NaN and inf"},
    /* ---- dropout (p[0]: ratio; composed in the core) ---- */
    {.op = CF_OP_NN_DROPOUT, .set = F, .rank = 3, .x = {3, 17, 11}, .p = {0.5}, .training = true,
     .what = " ratio 0.5"},
    {.op = CF_OP_NN_DROPOUT, .set = F, .rank = 1, .x = {65537}, .p = {0.3}, .training = true,
     .what = " ratio 0.3 threaded"},
    {.op = CF_OP_NN_DROPOUT, .set = F, .rank = 2, .x = {4, 9}, .p = {0.5}, .what = " inference"},
    /* ---- resize ---- */
    NEAREST4(BP_RESIZE_HALF_PIXEL),
    NEAREST4(BP_RESIZE_ASYMMETRIC),
    NEAREST4(BP_RESIZE_ALIGN_CORNERS),
    NEAREST4(BP_RESIZE_PYTORCH_HALF_PIXEL),
    NEAREST4(BP_RESIZE_TF_HALF_PIXEL_FOR_NN),
    SMOOTH3(BP_RESIZE_LINEAR, BP_RESIZE_HALF_PIXEL, -0.75, false),
    SMOOTH3(BP_RESIZE_LINEAR, BP_RESIZE_ASYMMETRIC, -0.75, false),
    SMOOTH3(BP_RESIZE_LINEAR, BP_RESIZE_ALIGN_CORNERS, -0.75, false),
    SMOOTH3(BP_RESIZE_LINEAR, BP_RESIZE_PYTORCH_HALF_PIXEL, -0.75, false),
    SMOOTH3(BP_RESIZE_CUBIC, BP_RESIZE_HALF_PIXEL, -0.75, false),
    SMOOTH3(BP_RESIZE_CUBIC, BP_RESIZE_ALIGN_CORNERS, -0.5, false),
    SMOOTH3(BP_RESIZE_CUBIC, BP_RESIZE_HALF_PIXEL, -0.5, true),
    SMOOTH3(BP_RESIZE_CUBIC, BP_RESIZE_ASYMMETRIC, -0.75, true),
    {.op = BP_OP_RESIZE, .set = F, .rank = 4, .x = {2, 8, 64, 64},
     .ro = RO(BP_RESIZE_LINEAR, BP_RESIZE_HALF_PIXEL, 0, -0.75, false), .scales = {1, 1, 2, 2},
     .what = " linear threaded"},
};
const size_t cf_nn_n_specs = sizeof cf_nn_specs / sizeof cf_nn_specs[0];

static const char *name_of(int op)
{
    switch (op) {
    case CF_OP_NN_DROPOUT: return "dropout";
    case CF_OP_NN_GLOBAL_MAX_POOL: return "global_max_pool";
    case CF_OP_NN_GLOBAL_AVERAGE_POOL: return "global_average_pool";
    default: return bp_op_name((bp_op)op);
    }
}

bool cf_is_nn_case(const cf_case *c)
{
    return c->op >= CF_OP_NN_DROPOUT ||
           (c->op >= (int)BP_OP_CONV && c->op <= (int)BP_OP_RESIZE);
}

const cf_nn_spec *cf_nn_spec_of(const cf_case *c) { return &cf_nn_specs[c->variant]; }

static bool push(cf_case **v, size_t *n, size_t *cap, const cf_nn_spec *s, size_t idx,
                 bp_dtype dt)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        cf_case *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return false;
        *v = nv;
        *cap = nc;
    }
    cf_case *c = &(*v)[(*n)++];
    memset(c, 0, sizeof *c);
    c->op = s->op;
    c->name = name_of(s->op);
    c->dtype = c->dtype2 = dt;
    c->n_in = 1;
    c->rank[0] = s->rank;
    memcpy(c->shape[0], s->x, sizeof s->x);
    c->data = s->specials ? CF_SPECIAL : CF_RANDOM;
    c->variant = (int)idx;
    c->seed = 0x7e570000u + (uint64_t)*n;
    size_t used = (size_t)snprintf(c->label, sizeof c->label, "(");
    for (int32_t d = 0; d < s->rank && used < sizeof c->label; d++)
        used += (size_t)snprintf(c->label + used, sizeof c->label - used, d ? ",%lld" : "%lld",
                                 (long long)s->x[d]);
    if (used < sizeof c->label)
        snprintf(c->label + used, sizeof c->label - used, s->rank == 1 ? ",)%s" : ")%s",
                 s->what ? s->what : "");
    return true;
}

bool cf_nn_cases_append(cf_case **v, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < cf_nn_n_specs; i++) {
        const cf_nn_spec *s = &cf_nn_specs[i];
        const bp_dtype *dts = s->set == CF_NN_NUMERIC ? cf_numeric_dtypes : cf_float_dtypes;
        int ndt = s->set == CF_NN_NUMERIC ? CF_COUNT(cf_numeric_dtypes) : CF_COUNT(cf_float_dtypes);
        for (int d = 0; d < ndt; d++)
            if (!push(v, n, cap, s, i, dts[d]))
                return false;
    }
    return true;
}
