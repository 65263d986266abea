#include "cases.h"

#include <stdlib.h>

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
