/* The cuda plugin's nn ops (nn.h, issue 16) on a GPU: small cases whose
 * answers are written out by hand (or computed here in double), so that
 * they hold whatever the other backends do; the conformance suite compares
 * every case with the reference. Every test is skipped where the cuda
 * backend does not open (no driver, no device, not built). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
