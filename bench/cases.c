#include "cases.h"

#include <stdlib.h>
#include <string.h>

void tx_bench_fill(float *v, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

static tx_status run_matmul(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_matmul(ctx, in[0], in[1], NULL, out);
}
static int ref_matmul(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_matmul(in, 2, NULL, out);
}
static tx_status run_add(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_binary(ctx, TX_OP_ADD, in[0], in[1], out);
}
static int ref_add(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_add(in, 2, NULL, out);
}
static tx_status run_relu(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_unary(ctx, TX_OP_RELU, in[0], out);
}
static int ref_relu(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_relu(in, 1, NULL, out);
}

static tx_status run_conv(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_conv(ctx, in[0], in[1],
                   &(tx_conv_desc){.pads = {1, 1, 1, 1}, .bias = in[2], .activation = TX_OP_RELU},
                   out);
}
static int ref_conv(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_op_attrs a = {.conv = {.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU}};
    return tx_ref_conv(in, 3, &a, out);
}
static tx_status run_depthwise(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_conv(
        ctx, in[0], in[1],
        &(tx_conv_desc){.group = 32, .pads = {1, 1, 1, 1}, .bias = in[2], .activation = TX_OP_RELU},
        out);
}
static int ref_depthwise(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_op_attrs a = {.conv = {.group = 32, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU}};
    return tx_ref_conv(in, 3, &a, out);
}
static tx_status run_pointwise(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_conv(ctx, in[0], in[1], &(tx_conv_desc){.bias = in[2], .activation = TX_OP_RELU6},
                   out);
}
static int ref_pointwise(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_op_attrs a = {.conv = {.activation = TX_OP_RELU6}};
    return tx_ref_conv(in, 3, &a, out);
}
static tx_status run_softmax(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_softmax(ctx, TX_OP_SOFTMAX, in[0], &(tx_softmax_desc){.axis = -1}, out);
}
static int ref_softmax(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_op_attrs a = {.softmax = {.axis = -1}};
    return tx_ref_softmax(in, 1, &a, out);
}
static tx_status run_sum(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_reduce(ctx, TX_OP_REDUCE_SUM, in[0], &(tx_reduce_desc){.drop_dims = true}, out);
}
static int ref_sum(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_op_attrs a = {.reduce = {.drop_dims = true}};
    return tx_ref_reduce_sum(in, 1, &a, out);
}

/* The MobileNet-v1 head of ANCHORS.md, NCHW: conv 3x3 s2 -> 32; depthwise 3x3;
 * conv 1x1 -> 64; depthwise 3x3 s2; conv 1x1 -> 128; each + bias, relu6, TF
 * "same" padding (SAME_UPPER). Inputs: x, then (w, b) per layer. */
static const struct {
    int group, stride;
} k_mobilenet[5] = {{1, 2}, {32, 1}, {1, 1}, {64, 2}, {1, 1}};

static tx_conv_desc mobilenet_desc(int layer) {
    return (tx_conv_desc){.group = k_mobilenet[layer].group,
                          .strides = {k_mobilenet[layer].stride, k_mobilenet[layer].stride},
                          .auto_pad = TX_AUTO_PAD_SAME_UPPER,
                          .activation = TX_OP_RELU6};
}
static tx_status run_mobilenet(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    tx_tensor x = in[0];
    for (int l = 0; l < 5; l++) {
        tx_conv_desc d = mobilenet_desc(l);
        d.bias = in[2 + 2 * l];
        tx_tensor y;
        tx_status s = tx_conv(ctx, x, in[1 + 2 * l], &d, &y);
        if (l > 0)
            tx_tensor_destroy(ctx, x);
        if (s)
            return s;
        x = y;
    }
    *out = x;
    return TX_STATUS_OK;
}
static int ref_mobilenet(const tx_ref_tensor *in, tx_ref_tensor *out) {
    tx_ref_tensor x = in[0];
    for (int l = 0; l < 5; l++) {
        tx_op_attrs a = {.conv = mobilenet_desc(l)};
        tx_ref_tensor args[3] = {x, in[1 + 2 * l], in[2 + 2 * l]}, y;
        int rc = tx_ref_conv(args, 3, &a, &y);
        if (l > 0)
            tx_ref_free(&x);
        if (rc)
            return rc;
        x = y;
    }
    *out = x;
    return 0;
}

#define MATMUL(N, SMOKE)                                                                           \
    {                                                                                              \
        .name = "matmul_" #N, .what = "matmul " #N "x" #N " x " #N "x" #N,                         \
        .flops = 2.0 * N * N * N, .n_inputs = 2, .rank = {2, 2}, .shape = {{N, N}, {N, N}},        \
        .run = run_matmul, .ref = ref_matmul, .smoke = SMOKE                                       \
    }

/* One training step of a digits-sized MLP (64 -> 64 relu -> 10, batch 32):
 * forward, mean squared error against the targets, the tape's backward, an
 * SGD update of the 4 parameters in place; the output is the loss. The
 * reference does the same in plain C on copies of the weights. */
static tx_status run_train_mlp(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    tx_tape *tape;
    tx_optim *opt;
    tx_tensor h = {0}, y = {0}, g[4] = {{0}};
    tx_status st = tx_optim_create(ctx, &(tx_optim_desc){.kind = TX_OPTIM_SGD, .lr = 1e-3f}, &opt);
    if (st)
        return st;
    st = tx_tape_begin(ctx, &tape);
    if (!st)
        st = tx_matmul(ctx, in[0], in[1],
                       &(tx_matmul_desc){.bias = in[2], .activation = TX_OP_RELU}, &h);
    if (!st)
        st = tx_matmul(ctx, h, in[3], &(tx_matmul_desc){.bias = in[4]}, &y);
    if (!st)
        st = tx_mse_loss(ctx, y, in[5], TX_LOSS_MEAN, out);
    if (!st)
        st = tx_tape_grad(ctx, tape, *out, in + 1, 4, g);
    if (!st || tape)
        tx_tape_end(ctx, tape);
    if (!st)
        st = tx_optim_step(ctx, opt, in + 1, g, 4);
    tx_optim_destroy(ctx, opt);
    tx_tensor tmp[6] = {h, y, g[0], g[1], g[2], g[3]};
    for (int i = 0; i < 6; i++)
        if (tmp[i].id)
            tx_tensor_destroy(ctx, tmp[i]);
    return st;
}

static int ref_train_mlp(const tx_ref_tensor *in, tx_ref_tensor *out) {
    enum { B = 32, I = 64, H = 64, O = 10 };
    static float h[B * H], dy[B * O], dh[B * H], w1[I * H], w2[H * O];
    const float *x = in[0].data, *t = in[5].data;
    double loss = 0;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            double a = in[2].data[j];
            for (int i = 0; i < I; i++)
                a += (double)x[b * I + i] * in[1].data[i * H + j];
            h[b * H + j] = a > 0 ? (float)a : 0;
        }
    for (int b = 0; b < B; b++)
        for (int o = 0; o < O; o++) {
            double a = in[4].data[o];
            for (int j = 0; j < H; j++)
                a += (double)h[b * H + j] * in[3].data[j * O + o];
            loss += (a - t[b * O + o]) * (a - t[b * O + o]);
            dy[b * O + o] = (float)(2 * (a - t[b * O + o]) / (B * O));
        }
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            double a = 0;
            for (int o = 0; o < O; o++)
                a += (double)dy[b * O + o] * in[3].data[j * O + o];
            dh[b * H + j] = h[b * H + j] > 0 ? (float)a : 0;
        }
    for (int j = 0; j < H; j++)
        for (int o = 0; o < O; o++) {
            double a = 0;
            for (int b = 0; b < B; b++)
                a += (double)h[b * H + j] * dy[b * O + o];
            w2[j * O + o] = in[3].data[j * O + o] - 1e-3f * (float)a;
        }
    for (int i = 0; i < I; i++)
        for (int j = 0; j < H; j++) {
            double a = 0;
            for (int b = 0; b < B; b++)
                a += (double)x[b * I + i] * dh[b * H + j];
            w1[i * H + j] = in[1].data[i * H + j] - 1e-3f * (float)a;
        }
    *out = (tx_ref_tensor){.rank = 0, .data = malloc(sizeof(float))};
    if (!out->data)
        return -1;
    /* 0 * (updated weights): keeps the update from being optimized away (no fast-math) */
    out->data[0] = (float)(loss / (B * O)) + 0.0f * (w1[0] + w2[0]);
    return 0;
}

/* One training step of the digits CNN (`texel train --model cnn`, batch 32):
 * x [32, 1, 8, 8] → conv 3x3x8 pad 1 relu → maxpool 2 → conv 3x3x16 pad 1
 * relu → maxpool 2 → [32, 64] → dense 10, mean squared error, the tape's
 * backward, SGD on the 6 parameters in place; the output is the loss. The
 * reference does the same in plain C on copies of the weights. */
static tx_status run_train_cnn(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    tx_tape *tape;
    tx_optim *opt;
    tx_tensor t[7] = {{0}}, g[6] = {{0}};
    tx_pool_desc pool = {.kernel_shape = {2, 2}, .strides = {2, 2}};
    tx_status st = tx_optim_create(ctx, &(tx_optim_desc){.kind = TX_OPTIM_SGD, .lr = 1e-3f}, &opt);
    if (st)
        return st;
    st = tx_tape_begin(ctx, &tape);
    for (int l = 0; l < 2 && !st; l++) {
        st = tx_conv(
            ctx, l ? t[1] : in[0], in[1 + 2 * l],
            &(tx_conv_desc){.pads = {1, 1, 1, 1}, .bias = in[2 + 2 * l], .activation = TX_OP_RELU},
            &t[2 * l]);
        if (!st)
            st = tx_pooling(ctx, TX_OP_MAXPOOL, t[2 * l], &pool, &t[2 * l + 1]);
    }
    if (!st)
        st = tx_tensor_reshape(ctx, t[3], 2, (int64_t[]){32, 64}, &t[4]);
    if (!st)
        st = tx_matmul(ctx, t[4], in[5], &(tx_matmul_desc){.bias = in[6]}, &t[5]);
    if (!st)
        st = tx_mse_loss(ctx, t[5], in[7], TX_LOSS_MEAN, out);
    if (!st)
        st = tx_tape_grad(ctx, tape, *out, in + 1, 6, g);
    if (!st || tape)
        tx_tape_end(ctx, tape);
    if (!st)
        st = tx_optim_step(ctx, opt, in + 1, g, 6);
    tx_optim_destroy(ctx, opt);
    for (int i = 0; i < 7; i++)
        if (t[i].id)
            tx_tensor_destroy(ctx, t[i]);
    for (int i = 0; i < 6; i++)
        if (g[i].id)
            tx_tensor_destroy(ctx, g[i]);
    return st;
}

enum { CB = 32 };

/* y [CB, M, S, S] = relu(conv3x3 pad 1 (x [CB, C, S, S], w [M, C, 3, 3]) + b) */
static void cnn_conv(const float *x, const float *w, const float *b, int C, int M, int S,
                     float *y) {
    for (int n = 0; n < CB; n++)
        for (int m = 0; m < M; m++)
            for (int i = 0; i < S; i++)
                for (int j = 0; j < S; j++) {
                    double a = b[m];
                    for (int c = 0; c < C; c++)
                        for (int ki = 0; ki < 3; ki++)
                            for (int kj = 0; kj < 3; kj++) {
                                int yi = i + ki - 1, xj = j + kj - 1;
                                if (yi >= 0 && yi < S && xj >= 0 && xj < S)
                                    a += (double)x[((n * C + c) * S + yi) * S + xj] *
                                         w[((m * C + c) * 3 + ki) * 3 + kj];
                            }
                    y[((n * M + m) * S + i) * S + j] = a > 0 ? (float)a : 0;
                }
}

/* 2x2/2 max pool of y [CB, M, S, S]; arg: the flat index of each max */
static void cnn_pool(const float *y, int M, int S, float *p, int *arg) {
    int h = S / 2;
    for (int nm = 0; nm < CB * M; nm++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < h; j++) {
                int best = (nm * S + 2 * i) * S + 2 * j;
                for (int d = 1; d < 4; d++) {
                    int k = (nm * S + 2 * i + d / 2) * S + 2 * j + d % 2;
                    if (y[k] > y[best])
                        best = k;
                }
                p[(nm * h + i) * h + j] = y[best];
                arg[(nm * h + i) * h + j] = best;
            }
}

/* The conv's backward through relu: dz = dy where y > 0; w -= lr dw, b -= lr db;
 * dx (when not NULL) = the input gradient with the old w. */
static void cnn_conv_back(const float *x, const float *w, const float *b, const float *y, float *dy,
                          int C, int M, int S, float *dx, float *nw, float *nb) {
    for (int k = 0; k < CB * M * S * S; k++)
        dy[k] = y[k] > 0 ? dy[k] : 0;
    if (dx)
        memset(dx, 0, sizeof(float) * (size_t)(CB * C * S * S));
    for (int m = 0; m < M; m++) {
        double db = 0;
        for (int n = 0; n < CB; n++)
            for (int k = 0; k < S * S; k++)
                db += dy[(n * M + m) * S * S + k];
        nb[m] = b[m] - 1e-3f * (float)db;
        for (int c = 0; c < C; c++)
            for (int ki = 0; ki < 3; ki++)
                for (int kj = 0; kj < 3; kj++) {
                    double dw = 0;
                    float wv = w[((m * C + c) * 3 + ki) * 3 + kj];
                    for (int n = 0; n < CB; n++)
                        for (int i = 0; i < S; i++)
                            for (int j = 0; j < S; j++) {
                                int yi = i + ki - 1, xj = j + kj - 1;
                                if (yi < 0 || yi >= S || xj < 0 || xj >= S)
                                    continue;
                                float d = dy[((n * M + m) * S + i) * S + j];
                                dw += (double)d * x[((n * C + c) * S + yi) * S + xj];
                                if (dx)
                                    dx[((n * C + c) * S + yi) * S + xj] += d * wv;
                            }
                    nw[((m * C + c) * 3 + ki) * 3 + kj] = wv - 1e-3f * (float)dw;
                }
    }
}

static int ref_train_cnn(const tx_ref_tensor *in, tx_ref_tensor *out) {
    static float y1[CB * 8 * 64], p1[CB * 8 * 16], y2[CB * 16 * 16], p2[CB * 64], z[CB * 10];
    static float dz[CB * 10], dp2[CB * 64], dy2[CB * 16 * 16], dp1[CB * 8 * 16], dy1[CB * 8 * 64];
    static float w1[8 * 9], b1[8], w2[16 * 8 * 9], b2[16], w3[64 * 10], b3[10];
    static int a1[CB * 8 * 16], a2[CB * 64];
    const float *x = in[0].data, *t = in[7].data, *W3 = in[5].data;
    cnn_conv(x, in[1].data, in[2].data, 1, 8, 8, y1);
    cnn_pool(y1, 8, 8, p1, a1);
    cnn_conv(p1, in[3].data, in[4].data, 8, 16, 4, y2);
    cnn_pool(y2, 16, 4, p2, a2);
    double loss = 0;
    for (int n = 0; n < CB; n++)
        for (int o = 0; o < 10; o++) {
            double a = in[6].data[o];
            for (int k = 0; k < 64; k++)
                a += (double)p2[n * 64 + k] * W3[k * 10 + o];
            z[n * 10 + o] = (float)a;
            loss += (a - t[n * 10 + o]) * (a - t[n * 10 + o]);
            dz[n * 10 + o] = (float)(2 * (a - t[n * 10 + o]) / (CB * 10));
        }
    for (int k = 0; k < 64; k++)
        for (int o = 0; o < 10; o++) {
            double a = 0;
            for (int n = 0; n < CB; n++)
                a += (double)p2[n * 64 + k] * dz[n * 10 + o];
            w3[k * 10 + o] = W3[k * 10 + o] - 1e-3f * (float)a;
        }
    for (int o = 0; o < 10; o++) {
        double a = 0;
        for (int n = 0; n < CB; n++)
            a += dz[n * 10 + o];
        b3[o] = in[6].data[o] - 1e-3f * (float)a;
    }
    for (int n = 0; n < CB; n++)
        for (int k = 0; k < 64; k++) {
            double a = 0;
            for (int o = 0; o < 10; o++)
                a += (double)dz[n * 10 + o] * W3[k * 10 + o];
            dp2[n * 64 + k] = (float)a;
        }
    memset(dy2, 0, sizeof dy2);
    for (int k = 0; k < CB * 64; k++)
        dy2[a2[k]] += dp2[k];
    cnn_conv_back(p1, in[3].data, in[4].data, y2, dy2, 8, 16, 4, dp1, w2, b2);
    memset(dy1, 0, sizeof dy1);
    for (int k = 0; k < CB * 8 * 16; k++)
        dy1[a1[k]] += dp1[k];
    cnn_conv_back(x, in[1].data, in[2].data, y1, dy1, 1, 8, 8, NULL, w1, b1);
    *out = (tx_ref_tensor){.rank = 0, .data = malloc(sizeof(float))};
    if (!out->data)
        return -1;
    /* 0 * (updated weights): keeps the update from being optimized away (no fast-math) */
    out->data[0] =
        (float)(loss / (CB * 10)) + 0.0f * (w1[0] + b1[0] + w2[0] + b2[0] + w3[0] + b3[0] + z[0]);
    return 0;
}

const tx_bench_case tx_bench_cases[] = {
    MATMUL(128, true),
    MATMUL(256, false),
    MATMUL(512, false),
    MATMUL(1024, false),
    {.name = "add_1m",
     .what = "add, 1M elements (1024x1024 + 1024x1024)",
     .flops = 1048576,
     .n_inputs = 2,
     .rank = {2, 2},
     .shape = {{1024, 1024}, {1024, 1024}},
     .run = run_add,
     .ref = ref_add,
     .smoke = true},
    {.name = "conv2d_56",
     .what = "conv2d 1x64x56x56 * 64x64x3x3, pad 1, + bias, relu (TF.js: NHWC)",
     .flops = 2.0 * 56 * 56 * 64 * 64 * 9,
     .n_inputs = 3,
     .rank = {4, 4, 1},
     .shape = {{1, 64, 56, 56}, {64, 64, 3, 3}, {64}},
     .run = run_conv,
     .ref = ref_conv},
    {.name = "depthwise_112",
     .what = "depthwise 1x32x112x112 * 32x1x3x3, pad 1, + bias, relu",
     .flops = 2.0 * 112 * 112 * 32 * 9,
     .n_inputs = 3,
     .rank = {4, 4, 1},
     .shape = {{1, 32, 112, 112}, {32, 1, 3, 3}, {32}},
     .run = run_depthwise,
     .ref = ref_depthwise},
    {.name = "conv1x1_56",
     .what = "conv 1x1 1x64x56x56 * 128x64x1x1, + bias, relu6",
     .flops = 2.0 * 56 * 56 * 128 * 64,
     .n_inputs = 3,
     .rank = {4, 4, 1},
     .shape = {{1, 64, 56, 56}, {128, 64, 1, 1}, {128}},
     .run = run_pointwise,
     .ref = ref_pointwise},
    {.name = "softmax_256x1000",
     .what = "softmax over rows of 256x1000",
     .flops = 256.0 * 1000 * 3,
     .n_inputs = 1,
     .rank = {2},
     .shape = {{256, 1000}},
     .run = run_softmax,
     .ref = ref_softmax,
     .smoke = true},
    {.name = "sum_1m",
     .what = "sum of 1M elements",
     .flops = 1048576,
     .n_inputs = 1,
     .rank = {1},
     .shape = {{1048576}},
     .run = run_sum,
     .ref = ref_sum},
    {.name = "mobilenet_head",
     .what = "5-layer MobileNet-v1 head, 1x3x224x224, bias + relu6, one read at the end",
     .flops = 2.0 * (112.0 * 112 * 32 * 27 + 112.0 * 112 * 32 * 9 + 112.0 * 112 * 64 * 32 +
                     56.0 * 56 * 64 * 9 + 56.0 * 56 * 128 * 64),
     .n_inputs = 11,
     .rank = {4, 4, 1, 4, 1, 4, 1, 4, 1, 4, 1},
     .shape = {{1, 3, 224, 224},
               {32, 3, 3, 3},
               {32},
               {32, 1, 3, 3},
               {32},
               {64, 32, 1, 1},
               {64},
               {64, 1, 3, 3},
               {64},
               {128, 64, 1, 1},
               {128}},
     .run = run_mobilenet,
     .ref = ref_mobilenet},
    {.name = "train_mlp_step",
     .what = "one training step: MLP 64-64(relu)-10 on a batch of 32, MSE, backward, SGD update",
     .flops = 3.0 * 2 * 32 * (64 * 64 + 64 * 10),
     .n_inputs = 6,
     .rank = {2, 2, 1, 2, 1, 2},
     .shape = {{32, 64}, {64, 64}, {64}, {64, 10}, {10}, {32, 10}},
     .run = run_train_mlp,
     .ref = ref_train_mlp,
     .smoke = true},
    {.name = "train_cnn_step",
     .what = "one training step: the digits CNN (conv 3x3x8, pool, conv 3x3x16, pool, dense 10) "
             "on a batch of 32, MSE, backward, SGD update",
     .flops = 3.0 * 2 * 32 * (64 * 8 * 9 + 16 * 16 * 8 * 9 + 64 * 10),
     .n_inputs = 8,
     .rank = {4, 4, 1, 4, 1, 2, 1, 2},
     .shape = {{32, 1, 8, 8}, {8, 1, 3, 3}, {8}, {16, 8, 3, 3}, {16}, {64, 10}, {10}, {32, 10}},
     .run = run_train_cnn,
     .ref = ref_train_cnn,
     .smoke = true},
    {.name = "relu_1m",
     .what = "relu, 1M elements",
     .flops = 1048576,
     .n_inputs = 1,
     .rank = {2},
     .shape = {{1024, 1024}},
     .run = run_relu,
     .ref = ref_relu},
};
const int tx_bench_case_count = (int)(sizeof tx_bench_cases / sizeof tx_bench_cases[0]);
