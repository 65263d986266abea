/* Conv, ConvTranspose and pools against values published with the ONNX
 * operator definitions (onnx/backend/test/case/node), so that the engine and
 * its plain-C reference are checked against ONNX itself, not only against
 * each other; plus a chained conv → depthwise → pool whose intermediates never
 * leave the GPU. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "open_ctx.h"
#include "tensors.h"
#include "texel.h"

static tx_ctx *g_ctx;

static tx_tensor tensor4(int64_t n, int64_t c, int64_t h, int64_t w, const float *data) {
    return tx_test_tensor(g_ctx, 4, (int64_t[]){n, c, h, w}, TX_DTYPE_FLOAT32, data);
}

/* Checks y's shape and its first n values (repeated `reps` times: ONNX's
 * examples repeat one plane over output channels). */
static void expect_values(tx_tensor y, const int64_t shape[4], const float *want, int n, int reps) {
    int rank = 0;
    int64_t s[TX_MAX_RANK] = {0};
    CHECK(!tx_tensor_shape(g_ctx, y, &rank, s, NULL), "%s", tx_last_error(g_ctx));
    CHECK(rank == 4 && s[0] == shape[0] && s[1] == shape[1] && s[2] == shape[2] && s[3] == shape[3],
          "shape [%lld, %lld, %lld, %lld]", (long long)s[0], (long long)s[1], (long long)s[2],
          (long long)s[3]);
    float got[256];
    if (tx_t.cur_failed || n * reps > 256)
        return;
    CHECK(!tx_tensor_read(g_ctx, y, got, sizeof(float) * (size_t)(n * reps)), "read");
    for (int i = 0; i < n * reps; i++)
        CHECK(fabsf(got[i] - want[i % n]) <= 1e-4f, "[%d] = %g, want %g", i, (double)got[i],
              (double)want[i % n]);
}

/* One ConvTranspose case of ONNX's, named call<pass + 1>/<name>: x and w
 * under d give `shape`, the n values of want twice (one per channel). */
static void conv_transpose_case(int pass, const char *name, tx_tensor x, tx_tensor w,
                                tx_conv_desc d, const int64_t shape[4], const float *want, int n) {
    char full[64];
    snprintf(full, sizeof full, "call%d/%s", pass + 1, name);
    if (!tx_test_begin(full))
        return;
    tx_tensor y;
    CHECK(!tx_conv_transpose(g_ctx, x, w, &d, &y), "%s", tx_last_error(g_ctx));
    expect_values(y, shape, want, n, 2);
    tx_tensor_destroy(g_ctx, y);
    tx_test_end();
}

/* A conv by the definition: x [1, C, H, W], w [M, C / groups, k, k], stride 1,
 * pads p on every side. */
static void naive_conv(const float *x, const float *w, int C, int H, int W, int M, int groups,
                       int k, int p, float *y) {
    int cg = C / groups, mg = M / groups, ho = H + 2 * p - k + 1, wo = W + 2 * p - k + 1;
    for (int m = 0; m < M; m++)
        for (int oy = 0; oy < ho; oy++)
            for (int ox = 0; ox < wo; ox++) {
                float acc = 0;
                for (int c = 0; c < cg; c++)
                    for (int ky = 0; ky < k; ky++)
                        for (int kx = 0; kx < k; kx++) {
                            int iy = oy - p + ky, ix = ox - p + kx, ci = m / mg * cg + c;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                acc +=
                                    w[((m * cg + c) * k + ky) * k + kx] * x[(ci * H + iy) * W + ix];
                        }
                y[(m * ho + oy) * wo + ox] = acc;
            }
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_host *host;
    g_ctx = tx_test_open_ctx((tx_ctx_desc){.specialize_after = 1}, &host);
    const float x9[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    float ones[18];
    for (int i = 0; i < 18; i++)
        ones[i] = 1;
    tx_tensor x = tensor4(1, 1, 3, 3, x9), w = tensor4(1, 2, 3, 3, ones), y;
    /* Each case runs twice (k = 1): the first call uses the generic
     * programs, the second the specialized ones where they have linked. */
    for (int pass = 0; pass < 2; pass++) {
        static const float pads[21] = {1, 1, 3, 1, 1,  3, 7,  4,  9, 7, 4,
                                       9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
        conv_transpose_case(pass, "convtranspose_pads", x, w,
                            (tx_conv_desc){.strides = {3, 2}, .pads = {1, 2, 1, 2}},
                            (int64_t[]){1, 2, 7, 3}, pads, 21);
        static const float oshape[80] = {
            0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3,  2, 2,  0, 0, 0, 1, 1, 3, 2, 2, 0,  3, 3,  7,
            4, 9, 5, 5, 0,  3, 3,  7, 4, 9, 5, 5, 0,  3, 3,  7, 4, 9, 5, 5, 0, 6, 6, 13, 7, 15, 8,
            8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 6, 6, 13, 7, 15, 8, 8, 0, 0, 0, 0, 0, 0, 0,  0, 0};
        conv_transpose_case(pass, "convtranspose_output_shape", x, w,
                            (tx_conv_desc){.strides = {3, 2}, .output_shape = {10, 8}},
                            (int64_t[]){1, 2, 10, 8}, oshape, 80);
        static const float same[36] = {0, 0, 1, 1, 3, 2, 0, 0, 1,  1,  3,  2,  3, 3, 8,  5, 12, 7,
                                       3, 3, 7, 4, 9, 5, 9, 9, 20, 11, 24, 13, 6, 6, 13, 7, 15, 8};
        conv_transpose_case(pass, "convtranspose_autopad_same", x, w,
                            (tx_conv_desc){.strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_UPPER},
                            (int64_t[]){1, 2, 6, 6}, same, 36);
        if (tx_test_begin(pass ? "call2/pools_2d_ceil" : "call1/pools_2d_ceil")) {
            float v[16];
            for (int i = 0; i < 16; i++)
                v[i] = (float)(i + 1);
            tx_tensor x4 = tensor4(1, 1, 4, 4, v);
            tx_pool_desc d = {.kernel_shape = {3, 3}, .strides = {2, 2}, .ceil_mode = true};
            CHECK(!tx_pooling(g_ctx, TX_OP_AVERAGEPOOL, x4, &d, &y), "%s", tx_last_error(g_ctx));
            expect_values(y, (int64_t[]){1, 1, 2, 2}, (float[]){6, 7.5f, 12, 13.5f}, 4, 1);
            tx_tensor_destroy(g_ctx, y);
            CHECK(!tx_pooling(g_ctx, TX_OP_MAXPOOL, x4, &d, &y), "%s", tx_last_error(g_ctx));
            expect_values(y, (int64_t[]){1, 1, 2, 2}, (float[]){11, 12, 15, 16}, 4, 1);
            TX_DESTROY(g_ctx, y, x4);
            tx_test_end();
        }
        if (tx_test_begin(pass ? "call2/conv_with_strides_padding"
                               : "call1/conv_with_strides_padding")) {
            float v[35];
            for (int i = 0; i < 35; i++)
                v[i] = (float)i;
            tx_tensor x57 = tensor4(1, 1, 7, 5, v), w33 = tensor4(1, 1, 3, 3, ones);
            static const float want[12] = {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124};
            CHECK(!tx_conv(g_ctx, x57, w33,
                           &(tx_conv_desc){.strides = {2, 2}, .pads = {1, 1, 1, 1}}, &y),
                  "%s", tx_last_error(g_ctx));
            expect_values(y, (int64_t[]){1, 1, 4, 3}, want, 12, 1);
            TX_DESTROY(g_ctx, y, x57, w33);
            tx_test_end();
        }
    }
    if (tx_test_begin("chained conv -> depthwise -> maxpool: only the result is read")) {
        /* All-ones input and weights: every value is a count of taps. */
        static float buf[1 * 8 * 8 * 8];
        for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++)
            buf[i] = 1;
        tx_tensor xin = tensor4(1, 4, 8, 8, buf), w1 = tensor4(8, 4, 1, 1, buf);
        tx_tensor w2 = tensor4(8, 1, 3, 3, buf), a, b, c;
        tx_stats s0, s1;
        tx_ctx_stats(g_ctx, &s0);
        CHECK(!tx_conv(g_ctx, xin, w1, &(tx_conv_desc){.activation = TX_OP_RELU}, &a), "%s",
              tx_last_error(g_ctx));
        CHECK(!tx_conv(g_ctx, a, w2, &(tx_conv_desc){.group = 8, .pads = {1, 1, 1, 1}}, &b), "%s",
              tx_last_error(g_ctx));
        CHECK(!tx_pooling(g_ctx, TX_OP_MAXPOOL, b,
                          &(tx_pool_desc){.kernel_shape = {2, 2}, .strides = {2, 2}}, &c),
              "%s", tx_last_error(g_ctx));
        tx_ctx_stats(g_ctx, &s1);
        CHECK(s1.bytes_downloaded == s0.bytes_downloaded, "an intermediate was read back");
        /* 1x1 conv: 4 everywhere; depthwise 3x3 of 4s: 36 inside, 24 on the
         * edges, 16 in the corners; every 2x2 window holds an inside cell. */
        float out[8 * 4 * 4];
        CHECK(!tx_tensor_read(g_ctx, c, out, sizeof out), "read");
        for (int ch = 0; ch < 8 && !tx_t.cur_failed; ch++)
            for (int i = 0; i < 16; i++)
                CHECK(out[ch * 16 + i] == 36.0f, "channel %d [%d] = %g", ch, i,
                      (double)out[ch * 16 + i]);
        TX_DESTROY(g_ctx, xin, w1, w2, a, b, c);
        tx_test_end();
    }
    if (tx_test_begin("2x2 stride-2 pools on the CPU and the GPU: NaN ignored, -inf kept, "
                      "averages of whole windows")) {
        /* 2 x 20: ten windows (the CPU takes four at a time, then a tail) */
        const float nan = NAN, inf = INFINITY;
        const float row0[20] = {nan,  1, nan, nan, -inf, -inf, inf, nan, -3, -5,
                                0.5f, 8, 1,   2,   nan,  -1,   7,   7,   -2, 4};
        const float row1[20] = {2,     nan, nan, nan, -inf, -inf, nan, nan, -4, -1,
                                0.25f, -8,  3,   4,   -2,   nan,  7,   7,   1,  0};
        const float want_max[10] = {2, -inf, -inf, inf, -1, 8, 4, -1, 7, 4};
        float xv[40];
        memcpy(xv, row0, sizeof row0);
        memcpy(xv + 20, row1, sizeof row1);
        for (int dev = 0; dev < 2; dev++) {
            tx_device d = dev ? TX_DEVICE_CPU : TX_DEVICE_GPU;
            tx_tensor x, ym, ya;
            float got[10], avg[10];
            CHECK(
                !tx_tensor_create(
                    g_ctx,
                    &(tx_tensor_desc){.rank = 4, .shape = {1, 1, 2, 20}, .data = xv, .device = d},
                    &x) &&
                    !tx_pooling(g_ctx, TX_OP_MAXPOOL, x,
                                &(tx_pool_desc){.kernel_shape = {2, 2}, .strides = {2, 2}}, &ym) &&
                    !tx_pooling(g_ctx, TX_OP_AVERAGEPOOL, x,
                                &(tx_pool_desc){.kernel_shape = {2, 2}, .strides = {2, 2}}, &ya) &&
                    !tx_tensor_read(g_ctx, ym, got, sizeof got) &&
                    !tx_tensor_read(g_ctx, ya, avg, sizeof avg),
                "%s", tx_last_error(g_ctx));
            for (int i = 0; i < 10; i++) {
                CHECK(got[i] == want_max[i], "%s max [%d] = %g, want %g", dev ? "cpu" : "gpu", i,
                      (double)got[i], (double)want_max[i]);
                float a = row0[2 * i], b = row0[2 * i + 1], c = row1[2 * i], e = row1[2 * i + 1];
                float want = (a + b + c + e) / 4;
                CHECK(isnan(want) ? isnan(avg[i]) : avg[i] == want, "%s average [%d] = %g, want %g",
                      dev ? "cpu" : "gpu", i, (double)avg[i], (double)want);
            }
            TX_DESTROY(g_ctx, x, ym, ya);
        }
        tx_test_end();
    }
    if (tx_test_begin("packed weights: packed once per weights, again after a write; freed "
                      "with them")) {
        static float xv[1 * 4 * 6 * 6], wv[8 * 4 * 3 * 3];
        for (size_t i = 0; i < sizeof xv / sizeof xv[0]; i++)
            xv[i] = (float)(i % 7) - 3;
        for (size_t i = 0; i < sizeof wv / sizeof wv[0]; i++)
            wv[i] = 1;
        tx_stats s0, s1, s2, s3, s4;
        tx_ctx_stats(g_ctx, &s0);
        tx_tensor xin = tensor4(1, 4, 6, 6, xv), wt = tensor4(8, 4, 3, 3, wv), y;
        const tx_conv_desc d = {.pads = {1, 1, 1, 1}};
        /* every output: the sum of x over the 3x3 window and the 4 channels,
         * times the weight value */
        float want[8 * 36], got[8 * 36];
        for (int o = 0; o < 36; o++) {
            int oy = o / 6, ox = o % 6;
            float acc = 0;
            for (int c = 0; c < 4; c++)
                for (int ky = -1; ky <= 1; ky++)
                    for (int kx = -1; kx <= 1; kx++)
                        if (oy + ky >= 0 && oy + ky < 6 && ox + kx >= 0 && ox + kx < 6)
                            acc += xv[c * 36 + (oy + ky) * 6 + ox + kx];
            for (int m = 0; m < 8; m++)
                want[m * 36 + o] = acc;
        }
        uint64_t draws[4];
        for (int call = 0; call < 4; call++) {
            if (call == 2) { /* new weight values: the packed copy is stale */
                for (size_t i = 0; i < sizeof wv / sizeof wv[0]; i++)
                    wv[i] = 2;
                CHECK(!tx_tensor_write(g_ctx, wt, wv, sizeof wv), "%s", tx_last_error(g_ctx));
            }
            tx_ctx_stats(g_ctx, &s1);
            CHECK(!tx_conv(g_ctx, xin, wt, &d, &y), "%s", tx_last_error(g_ctx));
            tx_ctx_stats(g_ctx, &s2);
            draws[call] = s2.draws - s1.draws;
            CHECK(!tx_tensor_read(g_ctx, y, got, sizeof got), "read");
            for (int i = 0; i < 8 * 36 && !tx_t.cur_failed; i++)
                CHECK(got[i] == want[i] * (call >= 2 ? 2 : 1), "call %d [%d] = %g, want %g", call,
                      i, (double)got[i], (double)(want[i] * (call >= 2 ? 2 : 1)));
            tx_tensor_destroy(g_ctx, y);
        }
        CHECK(draws[0] == 4 && draws[1] == 3 && draws[2] == 4 && draws[3] == 3,
              "draws per call %llu %llu %llu %llu", (unsigned long long)draws[0],
              (unsigned long long)draws[1], (unsigned long long)draws[2],
              (unsigned long long)draws[3]);
        tx_ctx_stats(g_ctx, &s3);
        TX_DESTROY(g_ctx, xin, wt);
        tx_ctx_stats(g_ctx, &s4);
        CHECK(s4.live_texture_bytes == s0.live_texture_bytes, "live texture bytes %llu, were %llu",
              (unsigned long long)s4.live_texture_bytes, (unsigned long long)s0.live_texture_bytes);
        CHECK(s3.live_texture_bytes > s4.live_texture_bytes, "no texture held");
        tx_test_end();
    }
    if (tx_test_begin("a 1x1 conv's row tiles: read in place by a depthwise conv, made rows for "
                      "a read, a view, another op, a dense conv, a resize's residual, a write")) {
        /* 2 images, 8 -> 16 channels at 4x8 (16 rows: the 8-row tiles where
         * the device has 8 draw buffers, else 4) with a bias, then each
         * consumer of its output; small integers, so every value is exact */
        enum { N = 2, C = 8, M = 16, H = 4, W = 8, P = H * W };
        static float xv[N * C * P], w1v[M * C], bv[M], wdv[M * 9], w3v[4 * M * 9];
        for (size_t i = 0; i < sizeof xv / sizeof xv[0]; i++)
            xv[i] = (float)((int)(i * 7 % 11) - 5);
        for (size_t i = 0; i < sizeof w1v / sizeof w1v[0]; i++)
            w1v[i] = (float)((int)(i * 5 % 7) - 3);
        for (int i = 0; i < M; i++)
            bv[i] = (float)(i % 5);
        for (size_t i = 0; i < sizeof wdv / sizeof wdv[0]; i++)
            wdv[i] = (float)((int)(i % 5) - 2);
        for (size_t i = 0; i < sizeof w3v / sizeof w3v[0]; i++)
            w3v[i] = (float)((int)(i * 3 % 5) - 2);
        static float y1[N * M * P], dw1[N * M * P], d3[N * 4 * P], got[N * M * P];
        for (int n = 0; n < N; n++)
            for (int m = 0; m < M; m++)
                for (int p = 0; p < P; p++) {
                    float acc = bv[m];
                    for (int c = 0; c < C; c++)
                        acc += w1v[m * C + c] * xv[(n * C + c) * P + p];
                    y1[(n * M + m) * P + p] = acc;
                }
        for (int n = 0; n < N; n++) {
            naive_conv(y1 + n * M * P, wdv, M, H, W, M, M, 3, 1, dw1 + n * M * P);
            naive_conv(y1 + n * M * P, w3v, M, H, W, 4, 1, 3, 1, d3 + n * 4 * P);
        }
        tx_tensor x = tx_test_tensor(g_ctx, 4, (int64_t[]){N, C, H, W}, TX_DTYPE_FLOAT32, xv),
                  w1 = tensor4(M, C, 1, 1, w1v), wd = tensor4(M, 1, 3, 3, wdv),
                  w3 = tensor4(4, M, 3, 3, w3v),
                  b1 = tx_test_tensor(g_ctx, 1, (int64_t[]){M}, TX_DTYPE_FLOAT32, bv), y, z;
        tx_conv_desc d1 = {.bias = b1};
        /* Compares the n values of t with want (stride s over H x W planes
         * of `planes` planes, s 1: as they are). */
#define EXPECT_PLANES(t, want, planes, s, what)                                                    \
    do {                                                                                           \
        int64_t cnt_ = (int64_t)(planes) * (H / (s)) * (W / (s));                                  \
        CHECK(!tx_tensor_read(g_ctx, t, got, (size_t)cnt_ * sizeof(float)), "%s: read: %s", what,  \
              tx_last_error(g_ctx));                                                               \
        for (int64_t i_ = 0; i_ < cnt_ && !tx_t.cur_failed; i_++) {                                \
            int64_t pl_ = i_ / ((H / (s)) * (W / (s))), r_ = i_ % ((H / (s)) * (W / (s)));         \
            float w_ = (want)[pl_ * P + (r_ / (W / (s))) * (s)*W + (r_ % (W / (s))) * (s)];        \
            CHECK(got[i_] == w_, "%s [%lld] = %g, want %g", what, (long long)i_, (double)got[i_],  \
                  (double)w_);                                                                     \
        }                                                                                          \
    } while (0)
        /* the matmul's first calls write rows; from the third its tiles stay */
        for (int call = 0; call < 3; call++) {
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y), "%s", tx_last_error(g_ctx));
            EXPECT_PLANES(y, y1, N * M, 1, "1x1 read");
            tx_tensor_destroy(g_ctx, y);
        }
        for (int s = 1; s <= 2; s++) { /* depthwise: no interleaving pass */
            tx_conv_desc dd = {.group = M, .strides = {s, s}, .pads = {1, 1, 1, 1}};
            for (int call = 0; call < 3; call++) {
                tx_stats a, b;
                tx_ctx_stats(g_ctx, &a);
                CHECK(!tx_conv(g_ctx, x, w1, &d1, &y) && !tx_conv(g_ctx, y, wd, &dd, &z), "%s",
                      tx_last_error(g_ctx));
                tx_ctx_stats(g_ctx, &b);
                if (call > 0) /* the matmul's one draw and the depthwise conv's */
                    CHECK(b.draws - a.draws == 2, "stride %d call %d: %llu draws", s, call,
                          (unsigned long long)(b.draws - a.draws));
                EXPECT_PLANES(z, dw1, N * M, s, s == 1 ? "depthwise" : "depthwise stride 2");
                TX_DESTROY(g_ctx, y, z);
            }
        }
        { /* a read: the interleaving pass, once */
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y), "%s", tx_last_error(g_ctx));
            tx_stats a, b;
            tx_ctx_stats(g_ctx, &a);
            EXPECT_PLANES(y, y1, N * M, 1, "rows for a read");
            EXPECT_PLANES(y, y1, N * M, 1, "rows read again");
            tx_ctx_stats(g_ctx, &b);
            CHECK(b.draws - a.draws == 1, "two reads: %llu draws",
                  (unsigned long long)(b.draws - a.draws));
            tx_tensor_destroy(g_ctx, y);
        }
        { /* a view, read */
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y) &&
                      !tx_tensor_reshape(g_ctx, y, 2, (int64_t[]){N * M, P}, &z),
                  "%s", tx_last_error(g_ctx));
            tx_tensor_destroy(g_ctx, y);
            EXPECT_PLANES(z, y1, N * M, 1, "a view");
            tx_tensor_destroy(g_ctx, z);
        }
        { /* another op's input */
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y) && !tx_binary(g_ctx, TX_OP_ADD, y, y, &z), "%s",
                  tx_last_error(g_ctx));
            static float twice[N * M * P];
            for (int i = 0; i < N * M * P; i++)
                twice[i] = 2 * y1[i];
            EXPECT_PLANES(z, twice, N * M, 1, "y + y");
            TX_DESTROY(g_ctx, y, z);
        }
        { /* a dense conv (packing passes) */
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y) &&
                      !tx_conv(g_ctx, y, w3, &(tx_conv_desc){.pads = {1, 1, 1, 1}}, &z),
                  "%s", tx_last_error(g_ctx));
            EXPECT_PLANES(z, d3, N * 4, 1, "dense 3x3");
            TX_DESTROY(g_ctx, y, z);
        }
        { /* a resize's residual (a feature pyramid's top-down Add, fused) */
            static float topv[N * M * P / 4], up[N * M * P];
            for (int i = 0; i < N * M * P / 4; i++)
                topv[i] = (float)(i % 9) - 4;
            for (int nm = 0; nm < N * M; nm++)
                for (int p = 0; p < P; p++)
                    up[nm * P + p] =
                        topv[(nm * (H / 2) + p / W / 2) * (W / 2) + p % W / 2] + y1[nm * P + p];
            tx_tensor top =
                tx_test_tensor(g_ctx, 4, (int64_t[]){N, M, H / 2, W / 2}, TX_DTYPE_FLOAT32, topv);
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y), "%s", tx_last_error(g_ctx));
            tx_resize_desc rd = {.scales = {1, 1, 2, 2}, .residual = y};
            CHECK(!tx_resize(g_ctx, top, &rd, &z), "%s", tx_last_error(g_ctx));
            EXPECT_PLANES(z, up, N * M, 1, "resize + residual");
            TX_DESTROY(g_ctx, top, y, z);
        }
        { /* overwritten whole */
            CHECK(!tx_conv(g_ctx, x, w1, &d1, &y), "%s", tx_last_error(g_ctx));
            CHECK(!tx_tensor_write(g_ctx, y, dw1, sizeof dw1), "%s", tx_last_error(g_ctx));
            EXPECT_PLANES(y, dw1, N * M, 1, "written");
            tx_tensor_destroy(g_ctx, y);
        }
#undef EXPECT_PLANES
        TX_DESTROY(g_ctx, x, w1, wd, w3, b1);
        tx_test_end();
    }
    if (tx_test_begin("routes: a 1x1 conv is a matmul (no pack or unpack draw), a depthwise conv "
                      "over whole-texel rows one draw once its taps are packed")) {
        /* 1x1: 8 -> 16 channels at 4x8 with a bias; depthwise: 8 channels,
         * 3x3, pads 1, stride 2, at 8x16 (W and Wo multiples of 4) */
        static float xv[8 * 4 * 8], w1v[16 * 8], bv[16], xdv[8 * 8 * 16], wdv[8 * 9];
        for (size_t i = 0; i < sizeof xv / sizeof xv[0]; i++)
            xv[i] = (float)((int)(i * 7 % 11) - 5);
        for (size_t i = 0; i < sizeof w1v / sizeof w1v[0]; i++)
            w1v[i] = (float)((int)(i * 5 % 7) - 3);
        for (int i = 0; i < 16; i++)
            bv[i] = (float)i;
        for (size_t i = 0; i < sizeof xdv / sizeof xdv[0]; i++)
            xdv[i] = (float)((int)(i * 3 % 13) - 6);
        for (size_t i = 0; i < sizeof wdv / sizeof wdv[0]; i++)
            wdv[i] = (float)((int)(i % 5) - 2);
        tx_tensor x1 = tensor4(1, 8, 4, 8, xv), w1 = tensor4(16, 8, 1, 1, w1v),
                  b1 = tx_test_tensor(g_ctx, 1, (int64_t[]){16}, TX_DTYPE_FLOAT32, bv),
                  xd = tensor4(1, 8, 8, 16, xdv), wd = tensor4(8, 1, 3, 3, wdv), y;
        float got[16 * 32], want[16 * 32];
        for (int m = 0; m < 16; m++)
            for (int p = 0; p < 32; p++) {
                float acc = bv[m];
                for (int c = 0; c < 8; c++)
                    acc += w1v[m * 8 + c] * xv[c * 32 + p];
                want[m * 32 + p] = acc;
            }
        for (int call = 0; call < 3; call++) {
            tx_stats a, b;
            tx_ctx_stats(g_ctx, &a);
            CHECK(!tx_conv(g_ctx, x1, w1, &(tx_conv_desc){.bias = b1}, &y), "%s",
                  tx_last_error(g_ctx));
            tx_ctx_stats(g_ctx, &b);
            /* a matmul: 1 draw (1-row tiles) or 2 (row tiles + interleave) */
            CHECK(b.draws - a.draws <= 2, "1x1 call %d: %llu draws", call,
                  (unsigned long long)(b.draws - a.draws));
            CHECK(!tx_tensor_read(g_ctx, y, got, sizeof got), "read");
            for (int i = 0; i < 16 * 32 && !tx_t.cur_failed; i++)
                CHECK(got[i] == want[i], "1x1 [%d] = %g, want %g", i, (double)got[i],
                      (double)want[i]);
            tx_tensor_destroy(g_ctx, y);
        }
        float dgot[8 * 4 * 8], dwant[8 * 4 * 8];
        for (int c = 0; c < 8; c++)
            for (int oy = 0; oy < 4; oy++)
                for (int ox = 0; ox < 8; ox++) {
                    float acc = 0;
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                            if (iy >= 0 && iy < 8 && ix >= 0 && ix < 16)
                                acc += wdv[c * 9 + ky * 3 + kx] * xdv[(c * 8 + iy) * 16 + ix];
                        }
                    dwant[(c * 4 + oy) * 8 + ox] = acc;
                }
        for (int call = 0; call < 3; call++) {
            tx_stats a, b;
            tx_ctx_stats(g_ctx, &a);
            CHECK(!tx_conv(g_ctx, xd, wd,
                           &(tx_conv_desc){.group = 8, .strides = {2, 2}, .pads = {1, 1, 1, 1}},
                           &y),
                  "%s", tx_last_error(g_ctx));
            tx_ctx_stats(g_ctx, &b);
            CHECK(b.draws - a.draws == (call == 0 ? 2u : 1u), "depthwise call %d: %llu draws", call,
                  (unsigned long long)(b.draws - a.draws));
            CHECK(!tx_tensor_read(g_ctx, y, dgot, sizeof dgot), "read");
            for (int i = 0; i < 8 * 32 && !tx_t.cur_failed; i++)
                CHECK(dgot[i] == dwant[i], "depthwise [%d] = %g, want %g", i, (double)dgot[i],
                      (double)dwant[i]);
            tx_tensor_destroy(g_ctx, y);
        }
        TX_DESTROY(g_ctx, x1, w1, b1, xd, wd);
        tx_test_end();
    }
    if (tx_test_begin("residual: added before the activation on every route, without a draw or "
                      "CPU op of its own; a wrong shape or dtype is refused")) {
        /* 1x1 (the matmul route), depthwise over whole-texel rows (one pass)
         * and 3x3 (pack / compute / unpack), no bias: y = relu(conv(x, w) + r)
         * against the plain conv's values, exactly (small integers) */
        static float xv[8 * 8 * 16], w1v[16 * 8], wdv[8 * 9], w3v[4 * 8 * 9], rv[16 * 8 * 16];
        for (size_t i = 0; i < sizeof xv / sizeof xv[0]; i++)
            xv[i] = (float)((int)(i * 7 % 11) - 5);
        for (size_t i = 0; i < sizeof w1v / sizeof w1v[0]; i++)
            w1v[i] = (float)((int)(i * 5 % 7) - 3);
        for (size_t i = 0; i < sizeof wdv / sizeof wdv[0]; i++)
            wdv[i] = (float)((int)(i % 5) - 2);
        for (size_t i = 0; i < sizeof w3v / sizeof w3v[0]; i++)
            w3v[i] = (float)((int)(i * 3 % 5) - 2);
        for (size_t i = 0; i < sizeof rv / sizeof rv[0]; i++)
            rv[i] = (float)((int)(i * 13 % 17) - 8);
        tx_tensor x8 = tensor4(1, 8, 8, 16, xv);
        struct {
            const char *name;
            tx_tensor w;
            tx_conv_desc d;
            int64_t m, ho, wo;
        } routes[] = {
            {"1x1", tensor4(16, 8, 1, 1, w1v), {.group = 1}, 16, 8, 16},
            {"depthwise", tensor4(8, 1, 3, 3, wdv), {.group = 8, .pads = {1, 1, 1, 1}}, 8, 8, 16},
            {"3x3", tensor4(4, 8, 3, 3, w3v), {.strides = {2, 2}, .pads = {1, 1, 1, 1}}, 4, 4, 8},
        };
        static float base[16 * 8 * 16], got[16 * 8 * 16];
        for (size_t k = 0; k < sizeof routes / sizeof routes[0] && !tx_t.cur_failed; k++) {
            int64_t n = routes[k].m * routes[k].ho * routes[k].wo;
            tx_tensor r = tensor4(1, routes[k].m, routes[k].ho, routes[k].wo, rv), y;
            for (int call = 0; call < 3 && !tx_t.cur_failed; call++) {
                tx_stats a, b, c;
                tx_ctx_stats(g_ctx, &a);
                CHECK(!tx_conv(g_ctx, x8, routes[k].w, &routes[k].d, &y), "%s: %s", routes[k].name,
                      tx_last_error(g_ctx));
                CHECK(!tx_tensor_read(g_ctx, y, base, (size_t)n * sizeof(float)), "read");
                tx_tensor_destroy(g_ctx, y);
                tx_ctx_stats(g_ctx, &b);
                tx_conv_desc d = routes[k].d;
                d.residual = r;
                d.activation = TX_OP_RELU;
                CHECK(!tx_conv(g_ctx, x8, routes[k].w, &d, &y), "%s + residual: %s", routes[k].name,
                      tx_last_error(g_ctx));
                CHECK(!tx_tensor_read(g_ctx, y, got, (size_t)n * sizeof(float)), "read");
                tx_tensor_destroy(g_ctx, y);
                tx_ctx_stats(g_ctx, &c);
                if (call > 0) /* both variants steady: the same draws (CPU ops) */
                    CHECK(c.draws - b.draws == b.draws - a.draws &&
                              c.cpu_ops - b.cpu_ops == b.cpu_ops - a.cpu_ops,
                          "%s call %d: %llu draws, %llu CPU ops with the residual, %llu, %llu "
                          "without",
                          routes[k].name, call, (unsigned long long)(c.draws - b.draws),
                          (unsigned long long)(c.cpu_ops - b.cpu_ops),
                          (unsigned long long)(b.draws - a.draws),
                          (unsigned long long)(b.cpu_ops - a.cpu_ops));
                for (int64_t i = 0; i < n && !tx_t.cur_failed; i++) {
                    float want = base[i] + rv[i] > 0 ? base[i] + rv[i] : 0.0f;
                    CHECK(got[i] == want, "%s call %d [%lld] = %g, want %g", routes[k].name, call,
                          (long long)i, (double)got[i], (double)want);
                }
            }
            tx_tensor_destroy(g_ctx, r);
        }
        /* a residual of another shape (even one that would broadcast), or int32 */
        tx_tensor r_small = tensor4(1, 16, 1, 16, rv), y = {0};
        CHECK(tx_conv(g_ctx, x8, routes[0].w, &(tx_conv_desc){.residual = r_small}, &y) ==
                      TX_STATUS_SHAPE_MISMATCH &&
                  strstr(tx_last_error(g_ctx), "residual [1, 16, 1, 16]") &&
                  strstr(tx_last_error(g_ctx), "[1, 16, 8, 16]") && y.id == 0,
              "%s", tx_last_error(g_ctx));
        tx_tensor r_int =
            tx_test_tensor(g_ctx, 4, (int64_t[]){1, 16, 8, 16}, TX_DTYPE_INT32, (int32_t[2048]){0});
        CHECK(tx_conv(g_ctx, x8, routes[0].w, &(tx_conv_desc){.residual = r_int}, &y) != 0 &&
                  strstr(tx_last_error(g_ctx), "residual") && y.id == 0,
              "%s", tx_last_error(g_ctx));
        /* a residual on the other device: named before its shape */
        tx_device dev;
        tx_tensor r_other = {0};
        tx_tensor_device(g_ctx, x8, &dev);
        CHECK(!tx_tensor_to(g_ctx, r_small, dev == TX_DEVICE_GPU ? TX_DEVICE_CPU : TX_DEVICE_GPU,
                            &r_other),
              "%s", tx_last_error(g_ctx));
        CHECK(tx_conv(g_ctx, x8, routes[0].w, &(tx_conv_desc){.residual = r_other}, &y) ==
                      TX_STATUS_DEVICE_MISMATCH &&
                  strstr(tx_last_error(g_ctx), "conv: the residual is on the") && y.id == 0,
              "%s", tx_last_error(g_ctx));
        tx_tensor_destroy(g_ctx, r_other);
        TX_DESTROY(g_ctx, r_small, r_int, x8, routes[0].w, routes[1].w, routes[2].w);
        tx_test_end();
    }
    if (tx_test_begin("residual on a matmul: no draw or CPU op of its own; a wrong shape or "
                      "dtype refused")) {
        /* 16x12 x 12x20 (8-row tiles) and 5x12 x 12x20 (1-row tiles) */
        static float av[16 * 12], bv[12 * 20], rv[16 * 20], base[16 * 20], got[16 * 20];
        for (int i = 0; i < 16 * 12; i++)
            av[i] = (float)((i * 7 % 11) - 5);
        for (int i = 0; i < 12 * 20; i++)
            bv[i] = (float)((i * 5 % 7) - 3);
        for (int i = 0; i < 16 * 20; i++)
            rv[i] = (float)((i * 13 % 17) - 8);
        tx_tensor b = tx_test_tensor(g_ctx, 2, (int64_t[]){12, 20}, TX_DTYPE_FLOAT32, bv), y;
        for (int64_t m = 16; m >= 5 && !tx_t.cur_failed; m -= 11) {
            tx_tensor a = tx_test_tensor(g_ctx, 2, (int64_t[]){m, 12}, TX_DTYPE_FLOAT32, av),
                      r = tx_test_tensor(g_ctx, 2, (int64_t[]){m, 20}, TX_DTYPE_FLOAT32, rv);
            size_t bytes = (size_t)(m * 20) * sizeof(float);
            for (int call = 0; call < 3 && !tx_t.cur_failed; call++) {
                tx_stats s0, s1, s2;
                tx_ctx_stats(g_ctx, &s0);
                CHECK(!tx_matmul(g_ctx, a, b, NULL, &y) && !tx_tensor_read(g_ctx, y, base, bytes),
                      "%s", tx_last_error(g_ctx));
                tx_tensor_destroy(g_ctx, y);
                tx_ctx_stats(g_ctx, &s1);
                CHECK(!tx_matmul(g_ctx, a, b,
                                 &(tx_matmul_desc){.residual = r, .activation = TX_OP_RELU}, &y) &&
                          !tx_tensor_read(g_ctx, y, got, bytes),
                      "%s", tx_last_error(g_ctx));
                tx_tensor_destroy(g_ctx, y);
                tx_ctx_stats(g_ctx, &s2);
                if (call > 0)
                    CHECK(s2.draws - s1.draws == s1.draws - s0.draws &&
                              s2.cpu_ops - s1.cpu_ops == s1.cpu_ops - s0.cpu_ops,
                          "M %lld call %d: %llu draws, %llu CPU ops with the residual, %llu, %llu "
                          "without",
                          (long long)m, call, (unsigned long long)(s2.draws - s1.draws),
                          (unsigned long long)(s2.cpu_ops - s1.cpu_ops),
                          (unsigned long long)(s1.draws - s0.draws),
                          (unsigned long long)(s1.cpu_ops - s0.cpu_ops));
                for (int64_t i = 0; i < m * 20 && !tx_t.cur_failed; i++) {
                    float want = base[i] + rv[i] > 0 ? base[i] + rv[i] : 0.0f;
                    CHECK(got[i] == want, "M %lld [%lld] = %g, want %g", (long long)m, (long long)i,
                          (double)got[i], (double)want);
                }
            }
            tx_tensor r_row = tx_test_tensor(g_ctx, 1, (int64_t[]){20}, TX_DTYPE_FLOAT32, rv),
                      r_int = tx_test_tensor(g_ctx, 2, (int64_t[]){m, 20}, TX_DTYPE_INT32,
                                             (int32_t[16 * 20]){0});
            y = (tx_tensor){0};
            CHECK(tx_matmul(g_ctx, a, b, &(tx_matmul_desc){.residual = r_row}, &y) ==
                          TX_STATUS_SHAPE_MISMATCH &&
                      strstr(tx_last_error(g_ctx), "matmul: residual [20] must have y's shape") &&
                      y.id == 0,
                  "%s", tx_last_error(g_ctx));
            CHECK(tx_matmul(g_ctx, a, b, &(tx_matmul_desc){.residual = r_int}, &y) != 0 &&
                      strstr(tx_last_error(g_ctx), "residual") && y.id == 0,
                  "%s", tx_last_error(g_ctx));
            TX_DESTROY(g_ctx, a, r, r_row, r_int);
        }
        tx_tensor_destroy(g_ctx, b);
        tx_test_end();
    }
    TX_DESTROY(g_ctx, x, w);
    tx_stats st;
    tx_ctx_stats(g_ctx, &st);
    if (tx_test_begin("programs: the pack and unpack passes serve both tiles")) {
        /* generic programs only; at 5x7 (no whole-texel rows) every conv runs
         * pack, weights, compute and unpack passes: a depthwise 3x3 compiles
         * four, a dense 3x3 (4 positions x 4 channels a fragment) four more,
         * then a 1x1 (4 x 8, not a matmul here) only its compute pass: the
         * packs do not depend on the tile, the unpack takes it as parameters */
        tx_host *h2;
        tx_ctx *c2 = tx_test_open_ctx((tx_ctx_desc){.specialize_after = TX_SPECIALIZE_NEVER}, &h2);
        tx_ctx *keep = g_ctx;
        g_ctx = c2;
        static float xv[8 * 5 * 7], wdv[8 * 9], w3v[8 * 8 * 9], w1v[16 * 8], got[16 * 35],
            want[16 * 35];
        for (size_t i = 0; i < sizeof xv / sizeof xv[0]; i++)
            xv[i] = (float)((int)(i * 7 % 11) - 5);
        for (size_t i = 0; i < sizeof w3v / sizeof w3v[0]; i++)
            w3v[i] = (float)((int)(i * 5 % 9) - 4);
        memcpy(wdv, w3v, sizeof wdv);
        memcpy(w1v, w3v, sizeof w1v);
        tx_tensor x = tensor4(1, 8, 5, 7, xv), wd = tensor4(8, 1, 3, 3, wdv),
                  w3 = tensor4(8, 8, 3, 3, w3v), w1 = tensor4(16, 8, 1, 1, w1v), y;
        struct {
            const char *what;
            tx_tensor w;
            const float *wv;
            int m, groups, k, pad;
            uint64_t programs;
        } cases[3] = {{"depthwise 3x3", wd, wdv, 8, 8, 3, 1, 4},
                      {"dense 3x3", w3, w3v, 8, 1, 3, 1, 4},
                      {"1x1", w1, w1v, 16, 1, 1, 0, 1}};
        for (int ci = 0; ci < 3; ci++) {
            tx_stats a, b;
            tx_ctx_stats(c2, &a);
            CHECK(!tx_conv(c2, x, cases[ci].w,
                           &(tx_conv_desc){.group = cases[ci].groups,
                                           .pads = {cases[ci].pad, cases[ci].pad, cases[ci].pad,
                                                    cases[ci].pad}},
                           &y),
                  "%s: %s", cases[ci].what, tx_last_error(c2));
            tx_ctx_stats(c2, &b);
            CHECK(b.generic_compiles - a.generic_compiles == cases[ci].programs,
                  "%s: %llu new programs, want %llu", cases[ci].what,
                  (unsigned long long)(b.generic_compiles - a.generic_compiles),
                  (unsigned long long)cases[ci].programs);
            CHECK(b.draws - a.draws == 4, "%s: %llu draws", cases[ci].what,
                  (unsigned long long)(b.draws - a.draws));
            int n = cases[ci].m * 35;
            naive_conv(xv, cases[ci].wv, 8, 5, 7, cases[ci].m, cases[ci].groups, cases[ci].k,
                       cases[ci].pad, want);
            CHECK(!tx_tensor_read(c2, y, got, sizeof(float) * (size_t)n), "read");
            for (int i = 0; i < n && !tx_t.cur_failed; i++)
                CHECK(got[i] == want[i], "%s [%d] = %g, want %g", cases[ci].what, i, (double)got[i],
                      (double)want[i]);
            tx_tensor_destroy(c2, y);
        }
        TX_DESTROY(c2, x, wd, w3, w1);
        g_ctx = keep;
        tx_host_close(h2, c2);
        tx_test_end();
    }

    if (tx_test_begin("variants and leaks")) {
        CHECK(st.specialized_runs > 0, "no specialized run");
        tx_test_expect_clean(g_ctx);
        tx_test_end();
    }
    tx_host_close(host, g_ctx);
    return tx_test_finish();
}
