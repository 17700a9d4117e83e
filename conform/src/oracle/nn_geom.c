/* The window geometry, from ONNX's operator texts:
 *   Conv / MaxPool / AveragePool: O = floor((D + pads - ((K - 1) dilation
 *     + 1)) / stride + 1), ceil with ceil_mode, where a last window starting
 *     in the end padding is not counted (onnx/onnx#5741); auto_pad SAME_*:
 *     O = ceil(D / stride), the padding (O - 1) stride + (K - 1) dilation + 1
 *     - D (at least 0) split with the odd one at the end (UPPER) or start
 *     (LOWER); VALID: no padding.
 *   ConvTranspose: O = stride (D - 1) + output_padding + (K - 1) dilation + 1
 *     - pads; SAME_*: O = output_shape, else D stride, and the padding T =
 *     natural - O split with floor division (Python's //), the odd one at the
 *     end for UPPER; output_shape without SAME: pads 0 and the output cut or
 *     extended at the end, as onnx/reference/ops/op_conv_transpose.py
 *     computes it. */
#include "nn_geom.h"

#include <string.h>

#include "independent.h"

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static void defaults(const cf_array *x, const bp_window *w, const int64_t *kernel, cf_geom *g)
{
    g->s = x->rank - 2;
    for (int j = 0; j < 3; j++) {
        bool on = j < g->s;
        g->in[j] = on ? x->shape[2 + j] : 1;
        g->k[j] = on ? kernel[j] : 1;
        g->st[j] = on && w && w->strides[j] ? w->strides[j] : 1;
        g->dl[j] = on && w && w->dilations[j] ? w->dilations[j] : 1;
        g->pb[j] = on && w ? w->pads[j] : 0;
        g->pe[j] = on && w ? w->pads[g->s + j] : 0;
        g->out[j] = 1;
    }
}

void cf_geom_forward(const cf_array *x, const bp_window *w, const int64_t *kernel, cf_geom *g)
{
    defaults(x, w, kernel, g);
    bp_auto_pad ap = w ? w->auto_pad : BP_AUTO_PAD_NOTSET;
    for (int j = 0; j < g->s; j++) {
        const int64_t eff = (g->k[j] - 1) * g->dl[j] + 1, d = g->in[j];
        if (ap == BP_AUTO_PAD_SAME_UPPER || ap == BP_AUTO_PAD_SAME_LOWER) {
            int64_t o = (d + g->st[j] - 1) / g->st[j];
            int64_t t = (o - 1) * g->st[j] + eff - d;
            t = t > 0 ? t : 0;
            g->pb[j] = ap == BP_AUTO_PAD_SAME_UPPER ? t / 2 : t - t / 2;
            g->pe[j] = t - g->pb[j];
        } else if (ap == BP_AUTO_PAD_VALID) {
            g->pb[j] = g->pe[j] = 0;
        }
        int64_t span = d + g->pb[j] + g->pe[j] - eff;
        bool ceil_mode = w && w->ceil_mode;
        int64_t o = (ceil_mode ? -floor_div(-span, g->st[j]) : floor_div(span, g->st[j])) + 1;
        if (ceil_mode && (o - 1) * g->st[j] >= d + g->pb[j])
            o--;
        g->out[j] = o;
    }
}

void cf_geom_transpose(const cf_array *x, const bp_window *w, const int64_t *kernel, cf_geom *g)
{
    defaults(x, w, kernel, g);
    bp_auto_pad ap = w ? w->auto_pad : BP_AUTO_PAD_NOTSET;
    bool same = ap == BP_AUTO_PAD_SAME_UPPER || ap == BP_AUTO_PAD_SAME_LOWER;
    bool given = w && w->output_shape[0];
    for (int j = 0; j < g->s; j++) {
        const int64_t d = g->in[j], op = w ? w->output_padding[j] : 0;
        const int64_t natural = g->st[j] * (d - 1) + op + (g->k[j] - 1) * g->dl[j] + 1;
        if (same) {
            int64_t o = given ? w->output_shape[j] : d * g->st[j];
            int64_t t = natural - o, half = floor_div(t, 2);
            g->pb[j] = ap == BP_AUTO_PAD_SAME_UPPER ? half : t - half;
            g->pe[j] = t - g->pb[j];
            g->out[j] = o;
        } else if (given) {
            g->pb[j] = 0;
            g->pe[j] = natural - w->output_shape[j];
            g->out[j] = w->output_shape[j];
        } else {
            g->out[j] = natural - g->pb[j] - g->pe[j];
        }
        if (d == 0 && !given)
            g->out[j] = 0;
    }
}

void cf_geom_unravel(const int64_t *e, int64_t i, int64_t *o)
{
    o[2] = i % e[2];
    o[1] = i / e[2] % e[1];
    o[0] = i / (e[1] * e[2]);
}
