/* The cuda plugin's nn ops (nn.h) on a GPU: small cases whose
 * answers are written out by hand (or computed here in double), so that
 * they hold whatever the other backends do; the conformance suite compares
 * every case with the reference. Every test is skipped where the cuda
 * backend does not open (no driver, no device, not built). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpt.h"
#include "expect.h"

/* A default context and its cuda backend, or skip the test. */
static bp_context *cuda(bp_backend **be)
{
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = bpt_context();
    if (bp_backend_get(ctx, "cuda", be) != BP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", bp_last_error());
        bp_context_destroy(ctx);
        cr_skip_test("the cuda backend is not available here: %s", why);
    }
    return ctx;
}

static const bp_dtype floats[4] = {BP_F32, BP_F64, BP_F16, BP_BF16};

/* Small integers and halves: exact in every float dtype, and so are these
 * sums, so every dtype must give them exactly (cuBLAS included). */
Test(cuda_nn, grouped_padded_conv_with_bias_in_every_float_dtype)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sx[3] = {1, 2, 4}, sw[3] = {2, 1, 2}, sb[1] = {2}, sy[3] = {1, 2, 4};
    const double xv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, wv[4] = {1, -2, 2, 0.5}, bv[2] = {10, 20};
    /* y[0] = 10 + x0[o-1] - 2 x0[o], y[1] = 20 + 2 x1[o-1] + 0.5 x1[o] (pad 1 before) */
    const double want[8] = {8, 7, 6, 5, 22.5, 33, 35.5, 38};
    bp_window win = BP_WINDOW_INIT;
    win.groups = 2;
    win.pads[0] = 1; /* before; pads[1] (after) 0 */
    for (int k = 0; k < 4; k++) {
        bp_tensor *x = bpt_tensor(be, floats[k], 3, sx, xv), *w = bpt_tensor(be, floats[k], 3, sw, wv);
        bp_tensor *b = bpt_tensor(be, floats[k], 1, sb, bv), *y = NULL;
        BPT_OK(bp_conv(x, w, b, &win, &y));
        bpt_expect("conv", y, floats[k], 3, sy, want, bpt_exact());
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

Test(cuda_nn, strided_conv_transpose_scatters_each_input_through_the_kernel)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sx[3] = {1, 1, 3}, sw[3] = {1, 1, 2}, sb[1] = {1}, sy[3] = {1, 1, 6};
    const double xv[3] = {1, 2, 3}, wv[2] = {1, 10}, bv[1] = {0.5};
    const double want[6] = {1.5, 10.5, 2.5, 20.5, 3.5, 30.5};
    bp_window win = BP_WINDOW_INIT;
    win.strides[0] = 2;
    for (int k = 0; k < 4; k++) {
        bp_tensor *x = bpt_tensor(be, floats[k], 3, sx, xv), *w = bpt_tensor(be, floats[k], 3, sw, wv);
        bp_tensor *b = bpt_tensor(be, floats[k], 1, sb, bv), *y = NULL;
        BPT_OK(bp_conv_transpose(x, w, b, &win, &y));
        bpt_expect("conv_transpose", y, floats[k], 3, sy, want, bpt_exact());
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

/* Small integers in [-2, 2]: every sum below is an integer of magnitude under 64,
 * exact in every float dtype (bf16 included), so every dtype must match the
 * double oracle exactly whatever order cuBLAS sums in. */
static double small_int(int64_t i, int64_t mul) { return (double)((i * mul) % 5) - 2.0; }

/* 2-D, two images, two groups of two input and two output channels: unlike
 * the 1-D case above (one channel per group, one output channel), every
 * cuBLAS dimension (m, n, k), leading dimension and group stride is > 1 here,
 * so a swapped operand, transpose flag, lda/ldb or batch stride shows. */
Test(cuda_nn, grouped_2d_conv_with_strides_dilations_and_pads_over_two_images)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    enum { N = 2, C = 4, M = 4, G = 2, H = 5, W = 6, KH = 2, KW = 2 };
    const int64_t st[2] = {1, 2}, dl[2] = {2, 1}, pb[2] = {1, 0}, pe[2] = {0, 1};
    const int64_t OH = (H + pb[0] + pe[0] - dl[0] * (KH - 1) - 1) / st[0] + 1;
    const int64_t OW = (W + pb[1] + pe[1] - dl[1] * (KW - 1) - 1) / st[1] + 1;
    const int64_t sx[4] = {N, C, H, W}, sw[4] = {M, C / G, KH, KW}, sb[1] = {M};
    const int64_t sy[4] = {N, M, OH, OW};
    double xv[N * C * H * W], wv[M * (C / G) * KH * KW], bv[M], want[N * M * 4 * 3];
    cr_assert(OH == 4 && OW == 3);
    for (int64_t i = 0; i < N * C * H * W; i++)
        xv[i] = small_int(i, 7);
    for (int64_t i = 0; i < M * (C / G) * KH * KW; i++)
        wv[i] = small_int(i, 3);
    for (int64_t m = 0; m < M; m++)
        bv[m] = (double)m - 1.0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double v = bv[m];
                    for (int64_t ci = 0; ci < C / G; ci++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t ih = oh * st[0] + kh * dl[0] - pb[0];
                                const int64_t iw = ow * st[1] + kw * dl[1] - pb[1];
                                const int64_t c = m / (M / G) * (C / G) + ci;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    v += wv[((m * (C / G) + ci) * KH + kh) * KW + kw] *
                                         xv[((n * C + c) * H + ih) * W + iw];
                            }
                    want[((n * M + m) * OH + oh) * OW + ow] = v;
                }
    bp_window win = BP_WINDOW_INIT;
    win.groups = G;
    for (int j = 0; j < 2; j++) {
        win.strides[j] = st[j];
        win.dilations[j] = dl[j];
        win.pads[j] = pb[j];
        win.pads[2 + j] = pe[j];
    }
    for (int k = 0; k < 4; k++) {
        bp_tensor *x = bpt_tensor(be, floats[k], 4, sx, xv), *w = bpt_tensor(be, floats[k], 4, sw, wv);
        bp_tensor *b = bpt_tensor(be, floats[k], 1, sb, bv), *y = NULL;
        BPT_OK(bp_conv(x, w, b, &win, &y));
        bpt_expect("conv 2-D grouped", y, floats[k], 4, sy, want, bpt_exact());
        bp_tensor_release(y);
        BPT_OK(bp_conv(x, w, NULL, &win, &y)); /* no bias */
        double nb[N * M * 4 * 3];
        for (int64_t i = 0; i < N * M * OH * OW; i++)
            nb[i] = want[i] - bv[i / (OH * OW) % M];
        bpt_expect("conv 2-D grouped, no bias", y, floats[k], 4, sy, nb, bpt_exact());
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

/* conv_transpose's oracle: y[n, m, o] = bias[m] + the sum over m's group's
 * channels c, taps k and inputs j with o = j st + k dl - pb of w[c, m % mg, k]
 * x[n, c, j]. */
static void transpose_oracle(const double *xv, const double *wv, const double *bv, int64_t N,
                             int64_t C, int64_t M, int64_t G, const int64_t *in,
                             const int64_t *kern, const int64_t *st, const int64_t *dl,
                             const int64_t *pb, const int64_t *out, double *want)
{
    const int64_t cg = C / G, mg = M / G;
    for (int64_t i = 0; i < N * M * out[0] * out[1]; i++)
        want[i] = bv[i / (out[0] * out[1]) % M];
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t mi = 0; mi < mg; mi++)
                for (int64_t jh = 0; jh < in[0]; jh++)
                    for (int64_t jw = 0; jw < in[1]; jw++)
                        for (int64_t kh = 0; kh < kern[0]; kh++)
                            for (int64_t kw = 0; kw < kern[1]; kw++) {
                                const int64_t oh = jh * st[0] + kh * dl[0] - pb[0];
                                const int64_t ow = jw * st[1] + kw * dl[1] - pb[1];
                                const int64_t m = c / cg * mg + mi;
                                if (oh < 0 || oh >= out[0] || ow < 0 || ow >= out[1])
                                    continue;
                                want[((n * M + m) * out[0] + oh) * out[1] + ow] +=
                                    wv[((c * mg + mi) * kern[0] + kh) * kern[1] + kw] *
                                    xv[((n * C + c) * in[0] + jh) * in[1] + jw];
                            }
}

/* As the grouped 2-D conv above, for conv_transpose (w (C, M/g, k...) used
 * transposed by cuBLAS): output_padding, then output_shape past the natural
 * extent (a negative end pad). */
Test(cuda_nn, grouped_2d_conv_transpose_with_output_padding_and_a_negative_end_pad)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    enum { N = 2, C = 4, M = 4, G = 2, H = 3, W = 2, KH = 2, KW = 3 };
    const int64_t in[2] = {H, W}, kern[2] = {KH, KW}, st[2] = {2, 1}, dl[2] = {1, 2};
    const int64_t pb[2] = {0, 1}, pe[2] = {1, 0}, op[2] = {1, 0};
    int64_t out[2];
    for (int j = 0; j < 2; j++)
        out[j] = st[j] * (in[j] - 1) + op[j] + dl[j] * (kern[j] - 1) + 1 - pb[j] - pe[j];
    cr_assert(out[0] == 6 && out[1] == 5);
    const int64_t sx[4] = {N, C, H, W}, sw[4] = {C, M / G, KH, KW}, sb[1] = {M};
    double xv[N * C * H * W], wv[C * (M / G) * KH * KW], bv[M], want[N * M * 8 * 7];
    for (int64_t i = 0; i < N * C * H * W; i++)
        xv[i] = small_int(i, 7);
    for (int64_t i = 0; i < C * (M / G) * KH * KW; i++)
        wv[i] = small_int(i, 3);
    for (int64_t m = 0; m < M; m++)
        bv[m] = (double)m - 1.0;
    bp_window win = BP_WINDOW_INIT;
    win.groups = G;
    for (int j = 0; j < 2; j++) {
        win.strides[j] = st[j];
        win.dilations[j] = dl[j];
        win.pads[j] = pb[j];
        win.pads[2 + j] = pe[j];
        win.output_padding[j] = op[j];
    }
    /* output_shape (8, 7) past the natural (6, 6): end pads 6 - 8 = -2 and 6 - 7 = -1 */
    bp_window big = BP_WINDOW_INIT;
    big.groups = G;
    int64_t bout[2] = {8, 7}, bpb[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
        big.strides[j] = st[j];
        big.dilations[j] = dl[j];
        big.output_shape[j] = bout[j];
    }
    for (int k = 0; k < 4; k++) {
        bp_tensor *x = bpt_tensor(be, floats[k], 4, sx, xv), *w = bpt_tensor(be, floats[k], 4, sw, wv);
        bp_tensor *b = bpt_tensor(be, floats[k], 1, sb, bv), *y = NULL;
        const int64_t sy[4] = {N, M, out[0], out[1]}, sby[4] = {N, M, bout[0], bout[1]};
        transpose_oracle(xv, wv, bv, N, C, M, G, in, kern, st, dl, pb, out, want);
        BPT_OK(bp_conv_transpose(x, w, b, &win, &y));
        bpt_expect("conv_transpose 2-D grouped", y, floats[k], 4, sy, want, bpt_exact());
        bp_tensor_release(y);
        transpose_oracle(xv, wv, bv, N, C, M, G, in, kern, st, dl, bpb, bout, want);
        BPT_OK(bp_conv_transpose(x, w, b, &big, &y));
        bpt_expect("conv_transpose 2-D grouped, output_shape", y, floats[k], 4, sby, want,
                   bpt_exact());
        bp_tensor_release(y);
        bp_tensor_release(x);
        bp_tensor_release(w);
        bp_tensor_release(b);
    }
    bp_context_destroy(ctx);
}

Test(cuda_nn, max_pool_gives_the_first_maximum_and_its_index_in_either_order)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sx[4] = {1, 1, 2, 3}, sy[4] = {1, 1, 1, 2};
    const double xv[6] = {1, 5, 2, 4, 5, 0}, want[2] = {5, 5};
    const int64_t row_major[2] = {1, 1}, column_major[2] = {2, 2}; /* (h 0, w 1): w H + h */
    const bp_dtype dts[2] = {BP_F32, BP_I32};
    for (int k = 0; k < 2; k++)
        for (int order = 0; order < 2; order++) {
            bp_window win = BP_WINDOW_INIT;
            win.kernel[0] = win.kernel[1] = 2;
            win.storage_order = order;
            bp_tensor *x = bpt_tensor(be, dts[k], 4, sx, xv), *y = NULL, *idx = NULL;
            BPT_OK(bp_max_pool(x, &win, &y, &idx));
            bpt_expect("max_pool", y, dts[k], 4, sy, want, bpt_exact());
            bpt_expect_i64("max_pool indices", idx, BP_I64, 4, sy, order ? column_major : row_major);
            bp_tensor_release(y);
            bp_tensor_release(idx);
            bp_tensor_release(x);
        }
    bp_context_destroy(ctx);
}

Test(cuda_nn, average_pool_divides_by_the_taps_inside_or_with_the_padding)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sx[3] = {1, 1, 3}, sy[3] = {1, 1, 4};
    const double xv[3] = {1, 2, 3}, inside[4] = {1, 1.5, 2.5, 3}, padded[4] = {0.5, 1.5, 2.5, 1.5};
    bp_window win = BP_WINDOW_INIT;
    win.kernel[0] = 2;
    win.pads[0] = win.pads[1] = 1;
    bp_tensor *x = bpt_tensor(be, BP_F32, 3, sx, xv), *y = NULL;
    BPT_OK(bp_average_pool(x, &win, &y));
    bpt_expect("average_pool", y, BP_F32, 3, sy, inside, bpt_exact());
    bp_tensor_release(y);
    win.count_include_pad = true;
    BPT_OK(bp_average_pool(x, &win, &y));
    bpt_expect("average_pool count_include_pad", y, BP_F32, 3, sy, padded, bpt_exact());
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(cuda_nn, lrn_batch_norm_instance_norm)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s121[3] = {1, 2, 1}, s122[3] = {1, 2, 2}, s2[1] = {2}, s112[3] = {1, 1, 2};
    const int64_t s1[1] = {1};
    const double lx[2] = {1, 2}, lw[2] = {1 / 3.5, 2.0 / 3};
    bp_tensor *x = bpt_tensor(be, BP_F64, 3, s121, lx), *y = NULL;
    BPT_OK(bp_lrn(x, 2, 1.0, 1.0, 1.0, &y)); /* channels c .. c + 1: sums of squares 5, 4 */
    bpt_expect("lrn", y, BP_F64, 3, s121, lw, (bpt_tol){1e-15, 0, 0});
    bp_tensor_release(y);
    bp_tensor_release(x);
    const double bx[4] = {1, 2, 3, 4}, sc[2] = {1, 2}, bi[2] = {0, 1}, mu[2] = {1, 3}, va[2] = {4, 1};
    const double bw[4] = {0, 0.5, 1, 3};
    x = bpt_tensor(be, BP_F32, 3, s122, bx);
    bp_tensor *ts = bpt_tensor(be, BP_F32, 1, s2, sc), *tb = bpt_tensor(be, BP_F32, 1, s2, bi);
    bp_tensor *tm = bpt_tensor(be, BP_F32, 1, s2, mu), *tv = bpt_tensor(be, BP_F32, 1, s2, va);
    BPT_OK(bp_batch_norm(x, ts, tb, tm, tv, 0.0, &y));
    bpt_expect("batch_norm", y, BP_F32, 3, s122, bw, bpt_exact());
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_tensor_release(ts);
    bp_tensor_release(tb);
    bp_tensor_release(tm);
    bp_tensor_release(tv);
    const double ix[2] = {1, 3}, is[1] = {2}, ib[1] = {1}, iw[2] = {-1, 3}; /* mean 2, var 1 */
    x = bpt_tensor(be, BP_F32, 3, s112, ix);
    ts = bpt_tensor(be, BP_F32, 1, s1, is);
    tb = bpt_tensor(be, BP_F32, 1, s1, ib);
    BPT_OK(bp_instance_norm(x, ts, tb, 0.0, &y));
    bpt_expect("instance_norm", y, BP_F32, 3, s112, iw, bpt_exact());
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_tensor_release(ts);
    bp_tensor_release(tb);
    bp_context_destroy(ctx);
}

Test(cuda_nn, layer_norm_returns_its_statistics_and_rms_norm_its_scale)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s24[2] = {2, 4}, s4[1] = {4}, s21[2] = {2, 1}, s12[2] = {1, 2};
    const double xv[8] = {1, 2, 3, 4, 2, 2, 2, 2}, sv[4] = {1, 1, 1, 2}, eps = 0.25;
    double want[8], mean[2] = {2.5, 2}, inv[2] = {1 / sqrt(1.25 + eps), 1 / sqrt(eps)};
    for (int i = 0; i < 8; i++)
        want[i] = (xv[i] - mean[i / 4]) * inv[i / 4] * sv[i % 4];
    bp_tensor *x = bpt_tensor(be, BP_F64, 2, s24, xv), *s = bpt_tensor(be, BP_F64, 1, s4, sv);
    bp_tensor *y = NULL, *m = NULL, *r = NULL;
    BPT_OK(bp_layer_norm(x, -1, s, NULL, eps, &y, &m, &r));
    bpt_expect("layer_norm", y, BP_F64, 2, s24, want, (bpt_tol){1e-15, 1e-15, 0});
    bpt_expect("layer_norm mean", m, BP_F64, 2, s21, mean, (bpt_tol){1e-15, 0, 0});
    bpt_expect("layer_norm inv_std", r, BP_F64, 2, s21, inv, (bpt_tol){1e-15, 0, 0});
    bp_tensor_release(y);
    bp_tensor_release(m);
    bp_tensor_release(r);
    bp_tensor_release(x);
    bp_tensor_release(s);
    const double rx[2] = {3, 4}, rw[2] = {3 / sqrt(12.5), 4 / sqrt(12.5)};
    x = bpt_tensor(be, BP_F64, 2, s12, rx);
    BPT_OK(bp_rms_norm(x, -1, NULL, 0.0, &y));
    bpt_expect("rms_norm", y, BP_F64, 2, s12, rw, (bpt_tol){1e-15, 0, 0});
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

Test(cuda_nn, losses_weigh_ignore_and_reduce)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t s32[2] = {3, 2}, s3[1] = {3}, s2[1] = {2}, s12[2] = {1, 2}, s1[1] = {1};
    const double lp[6] = {-1, -2, -0.5, -3, -4, -0.25}, wv[2] = {2, 3};
    const int64_t tv[3] = {1, 0, -100}, ignore = -100;
    bp_tensor *x = bpt_tensor(be, BP_F32, 2, s32, lp), *w = bpt_tensor(be, BP_F32, 1, s2, wv);
    bp_tensor *t = bpt_tensor_i64(be, BP_I64, 1, s3, tv), *o = NULL;
    const double none[3] = {6, 1, 0}, sum[1] = {7}, mean[1] = {1.4};
    BPT_OK(bp_nll_loss(x, t, w, BP_LOSS_NONE, &ignore, &o));
    bpt_expect("nll_loss none", o, BP_F32, 1, s3, none, bpt_exact());
    bp_tensor_release(o);
    BPT_OK(bp_nll_loss(x, t, w, BP_LOSS_SUM, &ignore, &o));
    bpt_expect("nll_loss sum", o, BP_F32, 0, NULL, sum, bpt_exact());
    bp_tensor_release(o);
    BPT_OK(bp_nll_loss(x, t, w, BP_LOSS_MEAN, &ignore, &o));
    bpt_expect("nll_loss mean", o, BP_F32, 0, NULL, mean, bpt_exact());
    bp_tensor_release(o);
    bp_tensor_release(x);
    bp_tensor_release(w);
    bp_tensor_release(t);
    const double sv[2] = {0, 0}, lpw[2] = {-log(2.0), -log(2.0)}, lw[1] = {log(2.0)};
    const int64_t one[1] = {1};
    x = bpt_tensor(be, BP_F64, 2, s12, sv);
    t = bpt_tensor_i64(be, BP_I32, 1, s1, one);
    bp_tensor *l = NULL;
    BPT_OK(bp_softmax_cross_entropy_loss(x, t, NULL, BP_LOSS_NONE, NULL, &o, &l));
    bpt_expect("softmax_cross_entropy_loss", o, BP_F64, 1, s1, lw, (bpt_tol){1e-15, 0, 0});
    bpt_expect("softmax_cross_entropy_loss log_prob", l, BP_F64, 2, s12, lpw,
               (bpt_tol){1e-15, 0, 0});
    bp_tensor_release(o);
    bp_tensor_release(l);
    bp_tensor_release(x);
    bp_tensor_release(t);
    bp_context_destroy(ctx);
}

Test(cuda_nn, resize_linear_half_pixel_and_nearest_on_integers)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t sx[3] = {1, 1, 2}, sy[3] = {1, 1, 4};
    const double xv[2] = {0, 4}, lin[4] = {0, 1, 3, 4}, near[4] = {0, 0, 4, 4};
    const double scales[3] = {1, 1, 2};
    bp_resize_options o = BP_RESIZE_OPTIONS_INIT;
    o.mode = BP_RESIZE_LINEAR;
    bp_tensor *x = bpt_tensor(be, BP_F32, 3, sx, xv), *y = NULL;
    BPT_OK(bp_resize(x, scales, NULL, &o, &y));
    bpt_expect("resize linear", y, BP_F32, 3, sy, lin, bpt_exact());
    bp_tensor_release(y);
    bp_tensor_release(x);
    x = bpt_tensor(be, BP_U8, 3, sx, xv);
    BPT_OK(bp_resize(x, scales, NULL, NULL, &y)); /* nearest, round_prefer_floor */
    bpt_expect("resize nearest", y, BP_U8, 3, sy, near, bpt_exact());
    bp_tensor_release(y);
    bp_tensor_release(x);
    bp_context_destroy(ctx);
}

/* ---- the fast paths: cuDNN's convolutions, rows and planes in packs, 2-D pools ------------
 * The convolutions run twice, through cuDNN (where the machine has it; the
 * built-in path otherwise) and with `cudnn = off` (the im2col path), each
 * against a double oracle computed here within conform's norm bound (K eps
 * sum |w x|); the cases take cuDNN (symmetric pads, 1 to 3 spatial axes,
 * groups, strides, dilations, output padding) and leave it (asymmetric and
 * negative pads, f64). */

static int64_t count(int32_t rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++)
        n *= shape[k];
    return n;
}

/* Multiples of 1/4 in [-4, 4]: exact in every float dtype. */
static double *quarters(int64_t n, int64_t salt)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    cr_assert_not_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (double)(((i + salt) * 7919 + 3) % 33 - 16) * 0.25;
    return v;
}

/* A context whose cuda backend has `cudnn = off`, or skip. */
static bp_context *cuda_without_cudnn(bp_backend **be)
{
    char path[] = "/tmp/bpt_cudnn_off_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs("[backend.cuda]\ncudnn = off\n", f);
    fclose(f);
    setenv("BP_LOG_LEVEL", "error", 1);
    bp_context *ctx = NULL;
    bp_status st = bp_context_create(path, &ctx);
    remove(path);
    cr_assert_eq(st, BP_OK, "%s", bp_last_error());
    if (bp_backend_get(ctx, "cuda", be) != BP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", bp_last_error());
        bp_context_destroy(ctx);
        cr_skip_test("the cuda backend is not available here: %s", why);
    }
    return ctx;
}

/* A convolution's geometry over 1 to 3 spatial axes. */
typedef struct cgeo {
    int32_t s;                     /* spatial axes */
    int64_t N, C, M, G;
    int64_t in[3], k[3], st[3], dl[3], pb[3], pe[3], op[3];
    bool bias, transpose;
} cgeo;

static int64_t prod3(const int64_t *e, int32_t s)
{
    int64_t n = 1;
    for (int32_t a = 0; a < s; a++)
        n *= e[a];
    return n;
}

/* The output extents. */
static void cgeo_out(const cgeo *g, int64_t *out)
{
    for (int32_t a = 0; a < g->s; a++) {
        const int64_t span = g->dl[a] * (g->k[a] - 1) + 1;
        out[a] = g->transpose ? g->st[a] * (g->in[a] - 1) + g->op[a] + span - g->pb[a] - g->pe[a]
                              : (g->in[a] + g->pb[a] + g->pe[a] - span) / g->st[a] + 1;
    }
}

/* The oracle: y in double and, per output, sum |terms| (bias included) */
static void host_conv(const cgeo *g, const double *x, const double *w, const double *b, double *y,
                      double *mag)
{
    int64_t out[3] = {1, 1, 1}, ins[3] = {1, 1, 1}, ks[3] = {1, 1, 1};
    cgeo_out(g, out);
    for (int32_t a = 0; a < g->s; a++)
        ins[a] = g->in[a], ks[a] = g->k[a];
    const int64_t nin = prod3(ins, 3), nout = prod3(out, 3), nk = prod3(ks, 3);
    const int64_t cg = g->C / g->G, mg = g->M / g->G;
    for (int64_t i = 0; i < g->N * g->M * nout; i++)
        y[i] = 0, mag[i] = 0;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++)
            for (int64_t jf = 0; jf < nin; jf++)
                for (int64_t kf = 0; kf < nk; kf++) {
                    const int64_t j[3] = {jf / (ins[1] * ins[2]), jf / ins[2] % ins[1], jf % ins[2]};
                    const int64_t k[3] = {kf / (ks[1] * ks[2]), kf / ks[2] % ks[1], kf % ks[2]};
                    const int64_t grp = c / cg;
                    for (int64_t mm = 0; mm < mg; mm++) {
                        const int64_t m = grp * mg + mm;
                        int64_t of = 0;
                        bool hit = true;
                        for (int32_t a = 0; a < 3; a++) {
                            const int64_t e = a < g->s ? a : 0;
                            if (a >= g->s)
                                continue;
                            int64_t o;
                            if (g->transpose) {
                                o = j[a] * g->st[e] + k[a] * g->dl[e] - g->pb[e];
                            } else { /* x position j = o st + k dl - pb: solve for o */
                                const int64_t t = j[a] + g->pb[e] - k[a] * g->dl[e];
                                if (t < 0 || t % g->st[e]) {
                                    hit = false;
                                    break;
                                }
                                o = t / g->st[e];
                            }
                            if (o < 0 || o >= out[a]) {
                                hit = false;
                                break;
                            }
                            of = of * out[a] + o;
                        }
                        if (!hit)
                            continue;
                        const double wv = g->transpose ? w[(c * mg + mm) * nk + kf]
                                                       : w[(m * cg + (c - grp * cg)) * nk + kf];
                        const double t = wv * x[(n * g->C + c) * nin + jf];
                        y[(n * g->M + m) * nout + of] += t;
                        mag[(n * g->M + m) * nout + of] += fabs(t);
                    }
                }
    if (g->bias)
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t m = 0; m < g->M; m++)
                for (int64_t o = 0; o < nout; o++) {
                    y[(n * g->M + m) * nout + o] += b[m];
                    mag[(n * g->M + m) * nout + o] += fabs(b[m]);
                }
}

/* conform's norm bound: |got - want| - 1 ulp <= 2 K eps sum |terms| */
static void expect_conv(const char *what, const bp_tensor *t, bp_dtype dt, const double *want,
                        const double *mag, int64_t n, int64_t K)
{
    const double eps = dt == BP_F32 ? 0x1p-24 : dt == BP_F16 ? 0x1p-11 : dt == BP_BF16 ? 0x1p-8 : 0x1p-53;
    double *got = bpt_read(t);
    for (int64_t i = 0; i < n; i++) {
        const double ulp = fabs(want[i]) * 2 * eps + 1e-300;
        cr_assert(fabs(got[i] - want[i]) <= ulp + 2.0 * (double)K * eps * mag[i],
                  "%s: element %lld is %.9g, the oracle's %.9g (sum |terms| %.3g)", what,
                  (long long)i, got[i], want[i], mag[i]);
    }
    free(got);
}

static void run_conv_case(bp_backend *be, const cgeo *g, bp_dtype dt, const char *path)
{
    int64_t sx[5] = {g->N, g->C}, sw[5], sb[1] = {g->M}, sy[5] = {g->N, g->M}, out[3];
    cgeo_out(g, out);
    if (g->transpose)
        sw[0] = g->C, sw[1] = g->M / g->G;
    else
        sw[0] = g->M, sw[1] = g->C / g->G;
    for (int32_t a = 0; a < g->s; a++)
        sx[2 + a] = g->in[a], sw[2 + a] = g->k[a], sy[2 + a] = out[a];
    const int32_t r = g->s + 2;
    const int64_t nx = count(r, sx), nw = count(r, sw), ny = count(r, sy);
    double *xv = malloc((size_t)nx * 8), *wv = malloc((size_t)nw * 8), bv[64];
    double *want = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
    cr_assert(xv && wv && want && mag && g->M <= 64);
    bpt_fill_random(xv, nx, 11, -1, 1);
    bpt_fill_random(wv, nw, 12, -1, 1);
    bpt_fill_random(bv, g->M, 13, -1, 1);
    bp_tensor *x = bpt_tensor(be, dt, r, sx, xv), *w = bpt_tensor(be, dt, r, sw, wv);
    bp_tensor *b = g->bias ? bpt_tensor(be, dt, 1, sb, bv) : NULL, *y = NULL;
    /* the oracle takes the values as the dtype holds them */
    double *xr = bpt_read(x), *wr = bpt_read(w), *br = b ? bpt_read(b) : NULL;
    host_conv(g, xr, wr, br, want, mag);
    bp_window win = BP_WINDOW_INIT;
    win.groups = g->G;
    for (int32_t a = 0; a < g->s; a++) {
        win.strides[a] = g->st[a], win.dilations[a] = g->dl[a];
        win.pads[a] = g->pb[a], win.pads[g->s + a] = g->pe[a];
        win.output_padding[a] = g->op[a];
    }
    BPT_OK(g->transpose ? bp_conv_transpose(x, w, b, &win, &y) : bp_conv(x, w, b, &win, &y));
    bpt_expect_meta(path, y, dt, r, sy);
    const int64_t K = (g->transpose ? g->C / g->G : g->C / g->G) * prod3(g->k, g->s) + 1;
    char what[160];
    snprintf(what, sizeof what, "%s, %s, %dd%s", path, bp_dtype_name(dt), (int)g->s,
             g->transpose ? " transposed" : "");
    expect_conv(what, y, dt, want, mag, ny, K);
    bp_tensor_release(y), bp_tensor_release(x), bp_tensor_release(w), bp_tensor_release(b);
    free(xr), free(wr), free(br), free(xv), free(wv), free(want), free(mag);
}

static const cgeo conv_cases[] = {
    /* cuDNN: symmetric pads (a ResNet-like 3x3 with bias; strided, dilated,
     * grouped; 1x1), 1-D (as 2-D), 3-D */
    {2, 2, 4, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, true, false},
    {2, 2, 4, 6, 2, {11, 10}, {3, 3}, {2, 2}, {2, 1}, {2, 1}, {2, 1}, {0}, true, false},
    {2, 3, 8, 16, 1, {5, 5}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {0}, false, false},
    {1, 2, 3, 5, 1, {17}, {5}, {1}, {1}, {2}, {2}, {0}, true, false},
    {3, 1, 2, 3, 1, {5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0}, true, false},
    /* without a bias, f16 and bf16 windows over channels in eights take
     * cuDNN's execution plan (dnn.cu): a padded 3x3 and a strided one; a
     * padded 3x3 over 4 channels, the legacy call; pointwise f16 and bf16
     * (1x1, stride 1, no pad, one group) over 1024 positions or more take
     * one cuBLAS product (conv.cu), with and without a bias, 2-D and 1-D;
     * fewer positions, cuDNN */
    {2, 2, 8, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, false, false},
    {2, 3, 16, 6, 1, {11, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {0}, false, false},
    {2, 2, 4, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0}, false, false},
    {2, 2, 8, 16, 1, {32, 33}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {0}, true, false},
    {1, 2, 5, 3, 1, {1100}, {1}, {1}, {1}, {0}, {0}, {0}, false, false},
    {2, 3, 8, 16, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {0}, true, false},
    /* the im2col path: asymmetric pads */
    {2, 2, 4, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 0}, {0, 1}, {0}, true, false},
    /* transposed: cuDNN's backward data (k 2 s 2; k 3 s 2 pad 1 output padding 1;
     * groups), then an asymmetric pad (im2col) */
    {2, 2, 4, 6, 1, {5, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {0, 0}, true, true},
    {2, 2, 4, 6, 1, {5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, true},
    {2, 1, 4, 6, 2, {4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, true},
    {2, 1, 4, 6, 1, {4, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, {0, 0}, true, true},
};

Test(cuda_nn, convolutions_through_cudnn_and_im2col_agree_with_the_oracle)
{
    const bp_dtype dts[4] = {BP_F32, BP_F16, BP_BF16, BP_F64};
    for (int path = 0; path < 2; path++) {
        bp_backend *be;
        bp_context *ctx = path ? cuda_without_cudnn(&be) : cuda(&be);
        for (size_t c = 0; c < sizeof conv_cases / sizeof conv_cases[0]; c++)
            for (int d = 0; d < 4; d++) {
                char what[64];
                snprintf(what, sizeof what, "case %zu (%s)", c, path ? "cudnn = off" : "cudnn = auto");
                run_conv_case(be, &conv_cases[c], dts[d], what);
            }
        bp_context_destroy(ctx);
    }
}

/* layer_norm / rms_norm over rows of L, in double, as nn_norm.c */
static void host_row_norm(const double *x, const double *sc, const double *bi, double *y,
                          double *mean, double *inv, int64_t R, int64_t L, double eps, bool rms)
{
    for (int64_t r = 0; r < R; r++) {
        const double *p = x + r * L;
        double s = 0, q = 0, m = 0;
        for (int64_t i = 0; i < L; i++)
            s += rms ? p[i] * p[i] : p[i];
        if (!rms) {
            m = s / (double)L;
            for (int64_t i = 0; i < L; i++)
                q += (p[i] - m) * (p[i] - m);
        }
        const double iv = 1.0 / sqrt((rms ? s : q) / (double)L + eps);
        for (int64_t i = 0; i < L; i++)
            y[r * L + i] = (p[i] - m) * iv * (sc ? sc[i] : 1) + (bi ? bi[i] : 0);
        if (mean)
            mean[r] = m, inv[r] = iv;
    }
}

Test(cuda_nn, layer_and_rms_norm_rows_in_shared_memory_match_the_host)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* rows of 4096 (packs), 4099 (elements), 70000 (f32: too long for shared
     * memory, the kernel of before), 32 (short rows) */
    const int64_t lens[4] = {4096, 4099, 70000, 32};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_BF16};
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < 3; d++) {
            const int64_t L = lens[c], R = 5, s[2] = {R, L}, sr[2] = {R, 1};
            if (L == 70000 && dts[d] != BP_F32)
                continue;
            double *xv = malloc((size_t)(R * L) * 8), *sv = malloc((size_t)L * 8);
            double *bv = malloc((size_t)L * 8), *want = malloc((size_t)(R * L) * 8);
            cr_assert(xv && sv && bv && want);
            bpt_fill_random(xv, R * L, 21 + (uint64_t)c, -3, 3);
            bpt_fill_random(sv, L, 22, 0.5, 1.5);
            bpt_fill_random(bv, L, 23, -1, 1);
            bp_tensor *x = bpt_tensor(be, dts[d], 2, s, xv), *sc = bpt_tensor(be, dts[d], 1, &L, sv);
            bp_tensor *bi = bpt_tensor(be, dts[d], 1, &L, bv), *y = NULL, *mt = NULL, *it = NULL;
            double *xr = bpt_read(x), *sr_ = bpt_read(sc), *br = bpt_read(bi), mean[5], inv[5];
            const bpt_tol tol = {1e-5, 1e-5, 1};
            const bp_dtype st = BP_F32; /* the statistics: x's dtype, f32 for the halves */
            host_row_norm(xr, sr_, br, want, mean, inv, R, L, 1e-5, false);
            BPT_OK(bp_layer_norm(x, -1, sc, bi, 1e-5, &y, &mt, &it));
            bpt_expect("layer_norm", y, dts[d], 2, s, want, tol);
            bpt_expect("layer_norm mean", mt, st, 2, sr, mean, tol);
            bpt_expect("layer_norm inv_std", it, st, 2, sr, inv, tol);
            bp_tensor_release(y), bp_tensor_release(mt), bp_tensor_release(it);
            host_row_norm(xr, sr_, NULL, want, NULL, NULL, R, L, 1e-6, true);
            BPT_OK(bp_rms_norm(x, -1, sc, 1e-6, &y));
            bpt_expect("rms_norm", y, dts[d], 2, s, want, tol);
            bp_tensor_release(y);
            host_row_norm(xr, NULL, NULL, want, NULL, NULL, R, L, 1e-6, true);
            BPT_OK(bp_rms_norm(x, -1, NULL, 1e-6, &y)); /* no scale */
            bpt_expect("rms_norm without scale", y, dts[d], 2, s, want, tol);
            bp_tensor_release(y);
            bp_tensor_release(x), bp_tensor_release(sc), bp_tensor_release(bi);
            free(xr), free(sr_), free(br), free(xv), free(sv), free(bv), free(want);
        }
    bp_context_destroy(ctx);
}

Test(cuda_nn, batch_norm_planes_in_packs_and_elements)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    const int64_t shapes[2][4] = {{2, 3, 8, 8}, {2, 3, 5, 5}}, sc3[1] = {3};
    const bp_dtype dts[3] = {BP_F32, BP_F16, BP_BF16};
    const double scv[3] = {1.5, -0.5, 2}, biv[3] = {0.25, 0, -1}, mv[3] = {0.5, -0.25, 0};
    const double vv[3] = {1, 0.25, 4};
    for (int c = 0; c < 2; c++)
        for (int d = 0; d < 3; d++) {
            const int64_t *s = shapes[c], n = count(4, s), S = s[2] * s[3];
            double *xv = quarters(n, 3), *want = malloc((size_t)n * 8);
            cr_assert_not_null(want);
            for (int64_t i = 0; i < n; i++) {
                const int64_t ch = i / S % 3;
                want[i] = (xv[i] - mv[ch]) * (1.0 / sqrt(vv[ch] + 1e-5)) * scv[ch] + biv[ch];
            }
            bp_tensor *x = bpt_tensor(be, dts[d], 4, s, xv), *y = NULL;
            bp_tensor *a = bpt_tensor(be, dts[d], 1, sc3, scv), *b = bpt_tensor(be, dts[d], 1, sc3, biv);
            bp_tensor *m = bpt_tensor(be, dts[d], 1, sc3, mv), *v = bpt_tensor(be, dts[d], 1, sc3, vv);
            BPT_OK(bp_batch_norm(x, a, b, m, v, 1e-5, &y));
            bpt_expect("batch_norm", y, dts[d], 4, s, want, bpt_exact()); /* rounded once */
            bp_tensor_release(y), bp_tensor_release(x), bp_tensor_release(a);
            bp_tensor_release(b), bp_tensor_release(m), bp_tensor_release(v);
            free(xv), free(want);
        }
    bp_context_destroy(ctx);
}

/* 2-D max and average pools on the host, as nn_pool.c */
static void host_pool2(const double *x, int64_t NC, int64_t H, int64_t W, const int64_t *k,
                       const int64_t *st, const int64_t *pb, const int64_t *pe, bool max,
                       bool include_pad, bool column_major, double *y, int64_t *idx)
{
    const int64_t OH = (H + pb[0] + pe[0] - k[0]) / st[0] + 1, OW = (W + pb[1] + pe[1] - k[1]) / st[1] + 1;
    for (int64_t p = 0; p < NC; p++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double best = 0, sum = 0;
                int64_t bi = -1, inside = 0, padded = 0;
                for (int64_t i = 0; i < k[0]; i++)
                    for (int64_t j = 0; j < k[1]; j++) {
                        const int64_t h = oh * st[0] + i - pb[0], w = ow * st[1] + j - pb[1];
                        padded += h >= -pb[0] && h < H + pe[0] && w >= -pb[1] && w < W + pe[1];
                        if (h < 0 || h >= H || w < 0 || w >= W)
                            continue;
                        const double v = x[(p * H + h) * W + w];
                        sum += v, inside++;
                        if (bi < 0 || v > best || (v != v && best == best))
                            best = v, bi = column_major ? w * H + h : h * W + w;
                    }
                const int64_t o = (p * OH + oh) * OW + ow;
                y[o] = max ? (bi < 0 ? -INFINITY : best) : sum / (double)(include_pad ? padded : inside);
                if (idx)
                    idx[o] = bi < 0 ? -1 : p * H * W + bi;
            }
}

Test(cuda_nn, two_d_pools_unrolled_and_general_windows_match_the_host)
{
    bp_backend *be;
    bp_context *ctx = cuda(&be);
    /* 2x2 stride 2 and 3x3 stride 2 pad 1 (unrolled), 5x4 stride 1 pad (2, 1)
     * (any size), 3x3 with an uneven end pad */
    const int64_t ks[4][2] = {{2, 2}, {3, 3}, {5, 4}, {3, 3}}, sts[4][2] = {{2, 2}, {2, 2}, {1, 1}, {2, 2}};
    const int64_t pbs[4][2] = {{0, 0}, {1, 1}, {2, 1}, {1, 0}}, pes[4][2] = {{0, 0}, {1, 1}, {2, 1}, {0, 1}};
    const bp_dtype dts[4] = {BP_F32, BP_F16, BP_BF16, BP_F64};
    const int64_t s[4] = {2, 3, 9, 8}, NC = 6, H = 9, W = 8, n = 2 * 3 * 9 * 8;
    double *xv = quarters(n, 7), *want = malloc(n * 8);
    int64_t *widx = malloc(n * sizeof *widx);
    cr_assert(want && widx);
    xv[5] = NAN;                   /* a NaN wins its windows */
    xv[100] = xv[101] = 4;         /* ties: the first wins */
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < 4; d++)
            for (int mode = 0; mode < 3; mode++) { /* max (row-major indices), max (column), average */
                const bool max = mode < 2, incl = c % 2 == 1;
                bp_window win = BP_WINDOW_INIT;
                for (int a = 0; a < 2; a++) {
                    win.kernel[a] = ks[c][a], win.strides[a] = sts[c][a];
                    win.pads[a] = pbs[c][a], win.pads[2 + a] = pes[c][a];
                }
                win.storage_order = mode == 1;
                win.count_include_pad = incl && !max; /* average_pool's alone (max_pool refuses it) */
                host_pool2(xv, NC, H, W, ks[c], sts[c], pbs[c], pes[c], max, incl, mode == 1, want,
                           widx);
                const int64_t sy[4] = {2, 3, (H + pbs[c][0] + pes[c][0] - ks[c][0]) / sts[c][0] + 1,
                                       (W + pbs[c][1] + pes[c][1] - ks[c][1]) / sts[c][1] + 1};
                bp_tensor *x = bpt_tensor(be, dts[d], 4, s, xv), *y = NULL, *iy = NULL;
                char what[64];
                snprintf(what, sizeof what, "pool case %d mode %d %s", c, mode, bp_dtype_name(dts[d]));
                if (max) {
                    BPT_OK(bp_max_pool(x, &win, &y, &iy));
                    bpt_expect(what, y, dts[d], 4, sy, want, bpt_exact());
                    bpt_expect_i64(what, iy, BP_I64, 4, sy, widx);
                } else {
                    BPT_OK(bp_average_pool(x, &win, &y));
                    const bpt_tol tol = {1e-15, 0, 0}; /* one division, rounded once */
                    bpt_expect(what, y, dts[d], 4, sy, want, tol);
                }
                bp_tensor_release(y), bp_tensor_release(iy), bp_tensor_release(x);
            }
    free(xv), free(want), free(widx);
    bp_context_destroy(ctx);
}
