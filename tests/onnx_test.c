/* ONNX loader, graph passes and Session API: malformed files give a status
 * (never a crash), feeds are validated, constants fold, MatMul + Add + Relu
 * fuse into one matmul, BatchNormalization folds into Conv weights, the
 * memory plan frees intermediates, weights upload once. Models are built here
 * with a small protobuf writer; the loader's fuzz corpus also uses models from
 * libonnx-testdata when installed. */
#include <math.h>

#include "glctx.h"
#include "harness.h"
#include "internal.h"
#include "model/model.h"
#include "npy.h"
#include "onnx_writer.h"
#include "open_ctx.h"
#include "tensors.h"

/* ---- helpers ---- */

static tx_host *g_host;

static tx_tensor mk(tx_ctx *ctx, int rank, const int64_t *shape, const float *data) {
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = rank, .data = data};
    memcpy(d.shape, shape, sizeof(int64_t) * (size_t)rank);
    if (tx_tensor_create(ctx, &d, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}

/* y = relu(x @ W + B), then Shape(y) → Gather(1) → Unsqueeze → Concat with
 * [-1] → Reshape(y) into z: a shape subgraph that must fold at plan time. */
static buf mlp_model(int64_t m, int64_t k, int64_t n, const float *w, const float *bias) {
    buf g = {0};
    int64_t wd[2] = {k, n}, bd[1] = {n}, xd[2] = {-1, k}, one = 1;
    init_f(&g, "W", wd, 2, w);
    init_f(&g, "B", bd, 1, bias);
    init_i64(&g, "idx", NULL, 0, (int64_t[]){1});
    init_i64(&g, "minus1", &one, 1, (int64_t[]){-1});
    init_i64(&g, "axes0", &one, 1, (int64_t[]){0});
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, xd, 2);
    (void)m;
    node(&g, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"xw"}, 1, NULL, 0);
    node(&g, "Add", "add", (const char *[]){"xw", "B"}, 2, (const char *[]){"xwb"}, 1, NULL, 0);
    node(&g, "Relu", "relu", (const char *[]){"xwb"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    node(&g, "Shape", "shape", (const char *[]){"W"}, 1, (const char *[]){"ws"}, 1, NULL, 0);
    node(&g, "Gather", "gather", (const char *[]){"ws", "idx"}, 2, (const char *[]){"wn"}, 1, NULL,
         0);
    node(&g, "Unsqueeze", "unsq", (const char *[]){"wn", "axes0"}, 2, (const char *[]){"wn1"}, 1,
         NULL, 0);
    node(&g, "Concat", "concat", (const char *[]){"minus1", "wn1"}, 2, (const char *[]){"zshape"},
         1, (buf[]){attr_i("axis", 0)}, 1);
    node(&g, "Reshape", "reshape", (const char *[]){"y", "zshape"}, 2, (const char *[]){"z"}, 1,
         NULL, 0);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, n}, 2);
    vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){-1, n}, 2);
    return model(&g, 13);
}

/* x [1, C, 6, 6] → Cast → Conv (W [M, C, 3, 3], pads 1) → BatchNormalization
 * → Relu → Conv (W2 [M, M, 1, 1], a Constant node's value) → Cast → y, with
 * every weight float16 (half16) or float32 of the same values: what a
 * float16 export (float32 at the I/O) looks like. */
enum { F16_C = 8, F16_M = 64 };
static buf half_weights_model(bool half16, const uint16_t *w, const uint16_t *w2,
                              const uint16_t *bn) {
    buf g = {0};
    int elem = half16 ? TX_ONNX_FLOAT16 : TX_ONNX_FLOAT;
    size_t width = half16 ? 2 : 4;
    int64_t nw = F16_M * F16_C * 9, nw2 = F16_M * F16_M, m = F16_M;
    float *wf = malloc((size_t)(nw + nw2 + 4 * m) * sizeof *wf);
    for (int64_t i = 0; i < nw; i++)
        wf[i] = tx_onnx_half_to_float(w[i]);
    for (int64_t i = 0; i < nw2; i++)
        wf[nw + i] = tx_onnx_half_to_float(w2[i]);
    for (int64_t i = 0; i < 4 * m; i++)
        wf[nw + nw2 + i] = tx_onnx_half_to_float(bn[i]);
    const void *pw = half16 ? (const void *)w : wf, *pw2 = half16 ? (const void *)w2 : wf + nw;
    init_elem(&g, "W", (int64_t[]){F16_M, F16_C, 3, 3}, 4, elem, pw, width);
    const char *bn_names[4] = {"scale", "bias", "mean", "var"};
    for (int k = 0; k < 4; k++)
        init_elem(&g, bn_names[k], &m, 1, elem,
                  half16 ? (const void *)(bn + k * m) : (const void *)(wf + nw + nw2 + k * m),
                  width);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, F16_C, 6, 6}, 4);
    node(&g, "Cast", "in", (const char *[]){"x"}, 1, (const char *[]){"x16"}, 1,
         (buf[]){attr_i("to", elem)}, 1);
    node(&g, "Conv", "conv", (const char *[]){"x16", "W"}, 2, (const char *[]){"c"}, 1,
         (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
    node(&g, "BatchNormalization", "bn", (const char *[]){"c", "scale", "bias", "mean", "var"}, 5,
         (const char *[]){"cb"}, 1, NULL, 0);
    node(&g, "Relu", "relu", (const char *[]){"cb"}, 1, (const char *[]){"r"}, 1, NULL, 0);
    buf a = {0}, t = {0};
    str_field(&a, 1, "value");
    tensor_msg(&t, "W2v", (int64_t[]){F16_M, F16_M, 1, 1}, 4, elem, pw2, (size_t)nw2 * width);
    msg_field(&a, 5, &t);
    int_field(&a, 20, TX_ATTR_TENSOR);
    node(&g, "Constant", "w2", NULL, 0, (const char *[]){"W2"}, 1, &a, 1);
    node(&g, "Conv", "conv2", (const char *[]){"r", "W2"}, 2, (const char *[]){"y16"}, 1, NULL, 0);
    node(&g, "Cast", "out", (const char *[]){"y16"}, 1, (const char *[]){"y"}, 1,
         (buf[]){attr_i("to", TX_ONNX_FLOAT)}, 1);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, F16_M, 6, 6}, 4);
    vinfo(&g, 12, "W2", elem, (int64_t[]){F16_M, F16_M, 1, 1}, 4); /* a constant output */
    free(wf);
    return model(&g, 13);
}

/* A chain of `len` Relu/Neg nodes: x → a0 → a1 → ... → y */
static buf chain_model(int len, int64_t n) {
    buf g = {0};
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, &n, 1);
    char in[32] = "x", out[32];
    for (int i = 0; i < len; i++) {
        if (i == len - 1)
            strcpy(out, "y");
        else
            snprintf(out, sizeof out, "a%d", i);
        char nm[32];
        snprintf(nm, sizeof nm, "n%d", i);
        node(&g, i % 2 ? "Neg" : "Abs", nm, (const char *[]){in}, 1, (const char *[]){out}, 1, NULL,
             0);
        strcpy(in, out);
    }
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, &n, 1);
    return model(&g, 13);
}

/* h = x @ W, then GELU written out as exporters do (erf form); `half_first`
 * picks the (h * 0.5) * (1 + erf) grouping. */
static buf gelu_model(int64_t k, int64_t n, const float *w, bool half_first) {
    buf g = {0};
    int64_t wd[2] = {k, n};
    init_f(&g, "W", wd, 2, w);
    init_f(&g, "sqrt2", NULL, 0, (float[]){1.41421356f});
    init_f(&g, "one", NULL, 0, (float[]){1.0f});
    init_f(&g, "half", NULL, 0, (float[]){0.5f});
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){-1, k}, 2);
    node(&g, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"h"}, 1, NULL, 0);
    node(&g, "Div", "div", (const char *[]){"h", "sqrt2"}, 2, (const char *[]){"d"}, 1, NULL, 0);
    node(&g, "Erf", "erf", (const char *[]){"d"}, 1, (const char *[]){"e"}, 1, NULL, 0);
    node(&g, "Add", "add", (const char *[]){"one", "e"}, 2, (const char *[]){"a"}, 1, NULL, 0);
    if (half_first) {
        node(&g, "Mul", "mh", (const char *[]){"h", "half"}, 2, (const char *[]){"hh"}, 1, NULL, 0);
        node(&g, "Mul", "m1", (const char *[]){"hh", "a"}, 2, (const char *[]){"y"}, 1, NULL, 0);
    } else {
        node(&g, "Mul", "m1", (const char *[]){"h", "a"}, 2, (const char *[]){"p"}, 1, NULL, 0);
        node(&g, "Mul", "m2", (const char *[]){"p", "half"}, 2, (const char *[]){"y"}, 1, NULL, 0);
    }
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, n}, 2);
    return model(&g, 13);
}

/* y = Relu(BatchNormalization(Conv(x, W, B))) on x [1, C, H, W] (3x3, pads 1),
 * or HardSwish written out in four nodes instead of the Relu, and
 * idx = ArgMax(y, axis 1): the fusion passes fold BN into the conv weights
 * and fuse the activation into the conv. */
static buf conv_bn_model(int64_t c, int64_t m, int64_t h, int64_t w, const float *wt,
                         const float *b, const float *bn, bool hswish) {
    buf g = {0};
    int64_t wd[4] = {m, c, 3, 3};
    init_f(&g, "W", wd, 4, wt);
    init_f(&g, "B", &m, 1, b);
    const char *bn_names[4] = {"gamma", "beta", "mean", "var"};
    for (int i = 0; i < 4; i++)
        init_f(&g, bn_names[i], &m, 1, bn + i * m);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, c, h, w}, 4);
    buf pads = {0};
    str_field(&pads, 1, "pads");
    for (int i = 0; i < 4; i++)
        int_field(&pads, 8, 1);
    int_field(&pads, 20, TX_ATTR_INTS);
    node(&g, "Conv", "conv", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"c"}, 1, &pads,
         1);
    node(&g, "BatchNormalization", "bn", (const char *[]){"c", "gamma", "beta", "mean", "var"}, 5,
         (const char *[]){"n"}, 1, (buf[]){attr_f("epsilon", 1e-3f)}, 1);
    if (hswish) { /* x * Clip(x + 3, 0, 6) / 6, as Paddle2ONNX writes HardSwish */
        init_f(&g, "three", NULL, 0, (float[]){3});
        init_f(&g, "zero", NULL, 0, (float[]){0});
        init_f(&g, "six", NULL, 0, (float[]){6});
        node(&g, "Add", "hs_add", (const char *[]){"n", "three"}, 2, (const char *[]){"h1"}, 1,
             NULL, 0);
        node(&g, "Clip", "hs_clip", (const char *[]){"h1", "zero", "six"}, 3,
             (const char *[]){"h2"}, 1, NULL, 0);
        node(&g, "Mul", "hs_mul", (const char *[]){"n", "h2"}, 2, (const char *[]){"h3"}, 1, NULL,
             0);
        node(&g, "Div", "hs_div", (const char *[]){"h3", "six"}, 2, (const char *[]){"y"}, 1, NULL,
             0);
    } else {
        node(&g, "Relu", "relu", (const char *[]){"n"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    }
    node(&g, "ArgMax", "am", (const char *[]){"y"}, 1, (const char *[]){"idx"}, 1,
         (buf[]){attr_i("axis", 1)}, 1);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, m, h, w}, 4);
    vinfo(&g, 12, "idx", TX_ONNX_INT64, (int64_t[]){1, 1, h, w}, 4);
    return model(&g, 15);
}

/* A residual block on x [1, 4, 6, 8]: a = Conv3x3(x), y = Relu(Conv1x1(a) +
 * a), and z = Conv3x3(y) + r with r [1, 4, 1, 1] (a graph input that
 * broadcasts): both Adds fold into their convs (fuse_residual), the Relu too;
 * z's residual runs as conv then add, having another shape. */
static buf residual_model(const float *w3, const float *w1, const float *b) {
    buf g = {0};
    init_f(&g, "W3", (int64_t[]){4, 4, 3, 3}, 4, w3);
    init_f(&g, "W1", (int64_t[]){4, 4, 1, 1}, 4, w1);
    init_f(&g, "B", (int64_t[]){4}, 1, b);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 8}, 4);
    vinfo(&g, 11, "r", TX_ONNX_FLOAT, (int64_t[]){1, 4, 1, 1}, 4);
    buf pads[2] = {{0}, {0}}; /* node() takes the attribute's bytes */
    for (int k = 0; k < 2; k++) {
        str_field(&pads[k], 1, "pads");
        for (int i = 0; i < 4; i++)
            int_field(&pads[k], 8, 1);
        int_field(&pads[k], 20, TX_ATTR_INTS);
    }
    node(&g, "Conv", "c1", (const char *[]){"x", "W3", "B"}, 3, (const char *[]){"a"}, 1, &pads[0],
         1);
    node(&g, "Conv", "c2", (const char *[]){"a", "W1"}, 2, (const char *[]){"b"}, 1, NULL, 0);
    node(&g, "Add", "add1", (const char *[]){"b", "a"}, 2, (const char *[]){"s"}, 1, NULL, 0);
    node(&g, "Relu", "relu", (const char *[]){"s"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    node(&g, "Conv", "c3", (const char *[]){"y", "W3"}, 2, (const char *[]){"c"}, 1, &pads[1], 1);
    node(&g, "Add", "add2", (const char *[]){"r", "c"}, 2, (const char *[]){"z"}, 1, NULL, 0);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 8}, 4);
    vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 8}, 4);
    return model(&g, 13);
}

/* Activations with attributes after a Conv, a squeeze-excite's 1x1 Conv and
 * a Gemm, on x [1, 4, 6, 8]:
 *     a = LeakyRelu(Conv3x3(x, W, B), alpha 0.15)       [1, 8, 6, 8]
 *     y = HardSigmoid(Conv1x1(GlobalAveragePool(a), W2, B2), 1/6, 0.5)
 *     z = Elu(Gemm(Flatten(GlobalAveragePool(a)), W3, B3), alpha 0.7)
 * (MobileNetV3 / PP-LCNet's SE gate, YOLO's conv + leaky). */
static buf act_attr_model(const float *w, const float *b, const float *w2, const float *b2,
                          const float *w3, const float *b3) {
    buf g = {0};
    init_f(&g, "W", (int64_t[]){8, 4, 3, 3}, 4, w);
    init_f(&g, "B", (int64_t[]){8}, 1, b);
    init_f(&g, "W2", (int64_t[]){8, 8, 1, 1}, 4, w2);
    init_f(&g, "B2", (int64_t[]){8}, 1, b2);
    init_f(&g, "W3", (int64_t[]){8, 5}, 2, w3);
    init_f(&g, "B3", (int64_t[]){5}, 1, b3);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 8}, 4);
    node(&g, "Conv", "c1", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"c"}, 1,
         (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
    node(&g, "LeakyRelu", "lr", (const char *[]){"c"}, 1, (const char *[]){"a"}, 1,
         (buf[]){attr_f("alpha", 0.15f)}, 1);
    node(&g, "GlobalAveragePool", "gap", (const char *[]){"a"}, 1, (const char *[]){"p"}, 1, NULL,
         0);
    node(&g, "Conv", "c2", (const char *[]){"p", "W2", "B2"}, 3, (const char *[]){"q"}, 1, NULL, 0);
    node(&g, "HardSigmoid", "hs", (const char *[]){"q"}, 1, (const char *[]){"y"}, 1,
         (buf[]){attr_f("alpha", 1.0f / 6), attr_f("beta", 0.5f)}, 2);
    node(&g, "Flatten", "fl", (const char *[]){"p"}, 1, (const char *[]){"f"}, 1, NULL, 0);
    node(&g, "Gemm", "gm", (const char *[]){"f", "W3", "B3"}, 3, (const char *[]){"e"}, 1, NULL, 0);
    node(&g, "Elu", "elu", (const char *[]){"e"}, 1, (const char *[]){"z"}, 1,
         (buf[]){attr_f("alpha", 0.7f)}, 1);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 8, 1, 1}, 4);
    vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 5}, 2);
    return model(&g, 13);
}

/* PP-LCNetV3's learnable affine blocks around a conv, on x [1, 3, 6, 7]:
 *     a = Add(Mul(0.8, Conv3x3(x, W1, B1)), 0.25)          (scalars [1])
 *     h = HardSwish(a), written out in four nodes
 *     y = Sub(0.5, Div(Conv1x1(Mul(Sub(h, t2), s2), W2, B2), 2))
 *              (s2 [1, 4, 1, 1], t2 [4, 1, 1]; 2 groups of 2 channels in, 3 out)
 *     z = Conv3x3(Add(Mul(h, 1.25), t4), W3)               (t4 [1, 4, 1, 1])
 * The affine maps fold into conv weights: after c1 (then the HardSwish fuses
 * into it), before and after c2 (1x1, no padding); not before c3, whose
 * padded borders read zeros that Add(·, t4) would have shifted. A fourth
 * conv, v = Conv3x3(x, W1, B1), shares c1's weights: they must not be
 * folded where they are. */
static const float k_aff_s2[4] = {1.5f, -0.5f, 0.75f, 2}, k_aff_t2[4] = {0.1f, -0.2f, 0.3f, 0.05f},
                   k_aff_t4[4] = {0.5f, 0.4f, -0.3f, 0.2f};
static buf affine_model(const float *w1, const float *b1, const float *w2, const float *b2,
                        const float *w3) {
    buf g = {0};
    init_f(&g, "W1", (int64_t[]){4, 3, 3, 3}, 4, w1);
    init_f(&g, "B1", (int64_t[]){4}, 1, b1);
    init_f(&g, "W2", (int64_t[]){6, 2, 1, 1}, 4, w2);
    init_f(&g, "B2", (int64_t[]){6}, 1, b2);
    init_f(&g, "W3", (int64_t[]){2, 4, 3, 3}, 4, w3);
    init_f(&g, "s1", (int64_t[]){1}, 1, (float[]){0.8f});
    init_f(&g, "t1", (int64_t[]){1}, 1, (float[]){0.25f});
    init_f(&g, "s2", (int64_t[]){1, 4, 1, 1}, 4, k_aff_s2);
    init_f(&g, "t2", (int64_t[]){4, 1, 1}, 3, k_aff_t2);
    init_f(&g, "d3", NULL, 0, (float[]){2});
    init_f(&g, "half", (int64_t[]){1, 1}, 2, (float[]){0.5f});
    init_f(&g, "s4", (int64_t[]){1}, 1, (float[]){1.25f});
    init_f(&g, "t4", (int64_t[]){1, 4, 1, 1}, 4, k_aff_t4);
    init_f(&g, "three", NULL, 0, (float[]){3});
    init_f(&g, "zero", NULL, 0, (float[]){0});
    init_f(&g, "six", NULL, 0, (float[]){6});
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 3, 6, 7}, 4);
    buf pads[2] = {{0}, {0}};
    for (int k = 0; k < 2; k++) {
        str_field(&pads[k], 1, "pads");
        for (int i = 0; i < 4; i++)
            int_field(&pads[k], 8, 1);
        int_field(&pads[k], 20, TX_ATTR_INTS);
    }
#define N1(op, name, a, out)                                                                       \
    node(&g, op, name, (const char *[]){a}, 1, (const char *[]){out}, 1, NULL, 0)
#define N2(op, name, a, b, out)                                                                    \
    node(&g, op, name, (const char *[]){a, b}, 2, (const char *[]){out}, 1, NULL, 0)
    node(&g, "Conv", "c1", (const char *[]){"x", "W1", "B1"}, 3, (const char *[]){"c1"}, 1,
         &pads[0], 1);
    N2("Mul", "m1", "s1", "c1", "m1");
    N2("Add", "a1", "m1", "t1", "a1");
    N2("Add", "hs_add", "a1", "three", "h1");
    node(&g, "Clip", "hs_clip", (const char *[]){"h1", "zero", "six"}, 3, (const char *[]){"h2"}, 1,
         NULL, 0);
    N2("Mul", "hs_mul", "a1", "h2", "h3");
    N2("Div", "hs_div", "h3", "six", "h");
    N2("Sub", "m2", "h", "t2", "m2");
    N2("Mul", "a2", "s2", "m2", "a2");
    node(&g, "Conv", "c2", (const char *[]){"a2", "W2", "B2"}, 3, (const char *[]){"c2"}, 1,
         (buf[]){attr_i("group", 2)}, 1);
    N2("Div", "d3", "c2", "d3", "d");
    N2("Sub", "s5", "half", "d", "y");
    N2("Mul", "m4", "h", "s4", "m4");
    N2("Add", "a4", "t4", "m4", "a4");
    node(&g, "Conv", "c3", (const char *[]){"a4", "W3"}, 2, (const char *[]){"z"}, 1, &pads[1], 1);
    buf pads4 = {0};
    str_field(&pads4, 1, "pads");
    for (int i = 0; i < 4; i++)
        int_field(&pads4, 8, 1);
    int_field(&pads4, 20, TX_ATTR_INTS);
    node(&g, "Conv", "c4", (const char *[]){"x", "W1", "B1"}, 3, (const char *[]){"v"}, 1, &pads4,
         1);
#undef N1
#undef N2
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 6, 6, 7}, 4);
    vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 7}, 4);
    vinfo(&g, 12, "v", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
    return model(&g, 13);
}

/* out[o, i, j] = b[o] + Σ w[o, c, ki, kj] · in[c0 + c, i + ki - p, j + kj - p]
 * (zero outside; c over o's group's cg channels from c0), in [cg·groups, 6,
 * 7], k x k, padding p (plain C, for the tests). */
static void ref_conv(const double *in, int cg, const float *w, const float *b, int m, int k, int p,
                     int groups, double *out) {
    for (int o = 0; o < m; o++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 7; j++) {
                double acc = b ? b[o] : 0;
                int c0 = o / (m / groups) * cg;
                for (int ci = 0; ci < cg; ci++)
                    for (int ki = 0; ki < k; ki++)
                        for (int kj = 0; kj < k; kj++) {
                            int yi = i + ki - p, xj = j + kj - p;
                            if (yi >= 0 && yi < 6 && xj >= 0 && xj < 7)
                                acc += (double)w[((o * cg + ci) * k + ki) * k + kj] *
                                       in[((c0 + ci) * 6 + yi) * 7 + xj];
                        }
                out[(o * 6 + i) * 7 + j] = acc;
            }
}

/* The same for MatMul on x [n, 6] (n symbolic): y = Relu(x W + B + x), z =
 * y W + r with r [6] (broadcasts: the op then add at run time). */
static buf residual_mm_model(const float *w, const float *b) {
    buf g = {0};
    init_f(&g, "W", (int64_t[]){6, 6}, 2, w);
    init_f(&g, "B", (int64_t[]){6}, 1, b);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){-1, 6}, 2);
    vinfo(&g, 11, "r", TX_ONNX_FLOAT, (int64_t[]){6}, 1);
    node(&g, "MatMul", "m1", (const char *[]){"x", "W"}, 2, (const char *[]){"m"}, 1, NULL, 0);
    node(&g, "Add", "bias", (const char *[]){"m", "B"}, 2, (const char *[]){"mb"}, 1, NULL, 0);
    node(&g, "Add", "res", (const char *[]){"mb", "x"}, 2, (const char *[]){"s"}, 1, NULL, 0);
    node(&g, "Relu", "relu", (const char *[]){"s"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    node(&g, "MatMul", "m2", (const char *[]){"y", "W"}, 2, (const char *[]){"c"}, 1, NULL, 0);
    node(&g, "Add", "res2", (const char *[]){"c", "r"}, 2, (const char *[]){"z"}, 1, NULL, 0);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, 6}, 2);
    vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){-1, 6}, 2);
    return model(&g, 13);
}

/* One node `op` reading x [rank, shape] (and the initializers "W" 3x3 conv
 * weights, "pads" / "split" int64 lists when `inits` says so), writing y (and
 * a second output "i" when n_out is 2). */
static buf one_node_model(const char *op, const int64_t *shape, int rank, const char *const *ins,
                          int n_in, int n_out, buf *attrs, int n_attrs, int opset) {
    buf g = {0};
    float w[2 * 1 * 3 * 3] = {0};
    init_f(&g, "W", (int64_t[]){2, 1, 3, 3}, 4, w);
    init_i64(&g, "pads3", (int64_t[]){3}, 1, (int64_t[]){1, 1, 1});
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, shape, rank);
    node(&g, op, "n", ins, n_in, (const char *[]){"y", "i"}, n_out, attrs, n_attrs);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    if (n_out > 1)
        vinfo(&g, 12, "i", TX_ONNX_INT64, NULL, -1);
    return model(&g, opset);
}

static void *read_all(const char *path, size_t *len) {
    return tx_read_file(path, len);
}

/* Loads every prefix and many corrupted copies of a model: statuses only. */
static void fuzz_bytes(const uint8_t *d, size_t n, int *crashes_ok, int *errors) {
    char err[512];
    tx_onnx_model m;
    size_t step = n > 4000 ? n / 2000 : 1;
    for (size_t len = 0; len < n; len += step) {
        tx_status st = tx_onnx_load(d, len, &m, err, sizeof err);
        if (st)
            (*errors)++;
        else
            tx_onnx_model_free(&m);
        (*crashes_ok)++;
    }
    uint8_t *c = malloc(n);
    uint64_t r = 12345;
    for (int it = 0; it < 3000; it++) {
        memcpy(c, d, n);
        for (int f = 0; f < 1 + it % 4; f++) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            c[r % n] = (uint8_t)(r >> 32);
        }
        if (tx_onnx_load(c, n, &m, err, sizeof err) == TX_STATUS_OK)
            tx_onnx_model_free(&m);
        else
            (*errors)++;
        (*crashes_ok)++;
    }
    free(c);
}

/* A session of model m with fusion on or off, checked to plan `steps` steps
 * with `fused` nodes folded away; NULL (the failure recorded) otherwise. */
static tx_session *fusion_session(tx_ctx *ctx, buf m, int fusion, int steps, int fused) {
    tx_session *s;
    tx_status st = tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.no_fusion = !fusion}, &s);
    CHECK(!st, "%s", tx_last_error(ctx));
    if (st)
        return NULL;
    tx_session_stats ss;
    tx_session_stats_get(s, &ss);
    CHECK(ss.steps == steps && ss.fused == fused, "fusion %d: steps %d fused %d (want %d, %d)",
          fusion, ss.steps, ss.fused, steps, fused);
    return s;
}

/* Runs session s on feeds x and r (taking them), reads its two outputs
 * (bytes each) into y and z, and destroys s. */
static void run_xr(tx_ctx *ctx, tx_session *s, tx_tensor x, tx_tensor r, float *y, float *z,
                   size_t bytes) {
    tx_tensor out[2];
    tx_status st = tx_session_run(s, (tx_feed[]){{"x", x}, {"r", r}}, 2, NULL, 2, out);
    CHECK(!st, "%s", tx_last_error(ctx));
    if (!st) {
        CHECK(!tx_tensor_read(ctx, out[0], y, bytes) && !tx_tensor_read(ctx, out[1], z, bytes),
              "%s", tx_last_error(ctx));
        TX_DESTROY(ctx, out[0], out[1]);
    }
    TX_DESTROY(ctx, x, r);
    tx_session_destroy(s);
}

#define EXPECT_ST(call, status, needle)                                                            \
    do {                                                                                           \
        tx_status s_ = (call);                                                                     \
        CHECK(s_ == (status), "%s returned %s, want %s (%s)", #call, tx_status_name(s_),           \
              tx_status_name(status), tx_last_error(ctx));                                         \
        CHECK(strstr(tx_last_error(ctx), needle) != NULL, "message \"%s\" lacks \"%s\"",           \
              tx_last_error(ctx), needle);                                                         \
    } while (0)

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];

    /* host-only tests first (no GL needed) */
    if (tx_test_begin("loader: every prefix and corrupted copies of built models")) {
        float w[12] = {0}, b[4] = {0};
        buf m = mlp_model(2, 3, 4, w, b);
        int runs = 0, errors = 0;
        fuzz_bytes(m.d, m.n, &runs, &errors);
        CHECK(runs > 3000 && errors > 0, "runs %d errors %d", runs, errors);
        char err[512];
        tx_onnx_model om;
        CHECK(tx_onnx_load(m.d, m.n, &om, err, sizeof err) == TX_STATUS_OK, "%s", err);
        CHECK(om.n_nodes == 8 && om.n_inits == 5 && om.opset == 13, "nodes %d inits %d", om.n_nodes,
              om.n_inits);
        tx_onnx_model_free(&om);
        /* a truncated file names what was cut */
        tx_status st = tx_onnx_load(m.d, m.n - 3, &om, err, sizeof err);
        CHECK(st == TX_STATUS_INVALID_ARGUMENT && strstr(err, "truncated"), "%d %s", st, err);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("loader: fuzz corpus from libonnx-testdata models")) {
        const char *files[] = {
            "/usr/share/libonnx-testdata/data/node/test_gemm_all_attributes/model.onnx",
            "/usr/share/libonnx-testdata/data/node/test_constant/model.onnx",
            "/usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d/model.onnx",
            "/usr/share/libonnx-testdata/data/node/test_cast_FLOAT_to_FLOAT16/test_data_set_0/"
            "input_0.pb"};
        int runs = 0, errors = 0, found = 0;
        for (size_t i = 0; i < TX_COUNTOF(files); i++) {
            size_t n;
            uint8_t *d = read_all(files[i], &n);
            if (!d)
                continue;
            found++;
            fuzz_bytes(d, n, &runs, &errors);
            /* the tensor reader too */
            for (size_t len = 0; len < n && len < 4096; len++) {
                tx_hval v;
                char err[256];
                if (!tx_onnx_load_tensor(d, len, &v, NULL, err, sizeof err))
                    tx_hval_free(&v);
            }
            free(d);
        }
        CHECK(found == 0 || errors > 0, "found %d", found);
        if (!found)
            printf("  (libonnx-testdata not installed: built models only)\n");
        tx_test_end();
    }
    if (tx_test_begin("loader: malformed inputs get messages")) {
        char err[512];
        tx_onnx_model om;
        const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        CHECK(tx_onnx_load(junk, sizeof junk, &om, err, sizeof err) == TX_STATUS_INVALID_ARGUMENT,
              "varint overflow: %s", err);
        CHECK(tx_onnx_load(NULL, 0, &om, err, sizeof err) != TX_STATUS_OK && strstr(err, "graph"),
              "empty: %s", err);
        /* a tensor whose raw_data is shorter than its dims say */
        buf g = {0}, t = {0};
        float v[3] = {1, 2, 3};
        tensor_msg(&t, "w", (int64_t[]){2, 2}, 2, TX_ONNX_FLOAT, v, sizeof v);
        msg_field(&g, 5, &t);
        buf m = model(&g, 13);
        tx_status st = tx_onnx_load(m.d, m.n, &om, err, sizeof err);
        CHECK(st == TX_STATUS_INVALID_ARGUMENT && strstr(err, "\"w\"") &&
                  strstr(err, "carries 3 values"),
              "%s", err);
        free(m.d);
        /* a length prefix pointing past the end */
        const uint8_t past[] = {0x3a, 0x7f, 0x0a, 0x01};
        CHECK(tx_onnx_load(past, sizeof past, &om, err, sizeof err) == TX_STATUS_INVALID_ARGUMENT,
              "%s", err);
        /* float16 initializer via int32_data and an int64 one via int64_data */
        buf g2 = {0}, t2 = {0}, t3 = {0};
        int_field(&t2, 1, 2);
        int_field(&t2, 2, TX_ONNX_FLOAT16);
        str_field(&t2, 8, "h");
        int_field(&t2, 5, 0x3c00); /* 1.0 */
        int_field(&t2, 5, 0xc000); /* -2.0 */
        msg_field(&g2, 5, &t2);
        int_field(&t3, 1, 2);
        int_field(&t3, 2, TX_ONNX_INT64);
        str_field(&t3, 8, "i");
        buf packed = {0};
        varint(&packed, (uint64_t)(int64_t)-5);
        varint(&packed, 7);
        msg_field(&t3, 7, &packed);
        msg_field(&g2, 5, &t3);
        m = model(&g2, 13);
        st = tx_onnx_load(m.d, m.n, &om, err, sizeof err);
        CHECK(st == TX_STATUS_OK, "%s", err);
        if (!st) {
            CHECK(om.n_inits == 2 && om.inits[0].v.f[0] == 1.0f && om.inits[0].v.f[1] == -2.0f,
                  "float16 values");
            CHECK(om.inits[1].v.i[0] == -5 && om.inits[1].v.i[1] == 7, "int64 values");
            tx_onnx_model_free(&om);
        }
        free(m.d);
        /* attributes whose declared type is not what they carry (found by
         * fuzz_onnx_load: a TENSOR attribute without a tensor) */
        for (int c = 0; c < 3; c++) {
            buf g3 = {0}, a = {0};
            str_field(&a, 1, "strides");
            if (c == 0) {
                int_field(&a, 8, 2); /* ints, declared TENSOR */
                int_field(&a, 20, TX_ATTR_TENSOR);
            } else if (c == 1) {
                int_field(&a, 20, TX_ATTR_INT); /* no value at all */
            } else {
                int_field(&a, 3, 2); /* an int and a float, declared INT */
                float one = 1;
                key(&a, 2, 5);
                put(&a, &one, 4);
                int_field(&a, 20, TX_ATTR_INT);
            }
            node(&g3, "MaxPool", "pool", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, &a, 1);
            m = model(&g3, 13);
            st = tx_onnx_load(m.d, m.n, &om, err, sizeof err);
            static const char *want[] = {"declared TENSOR but carries INTS",
                                         "declared INT but carries no value",
                                         "declared INT but carries"};
            CHECK(st == TX_STATUS_INVALID_ARGUMENT && strstr(err, "attribute \"strides\" is") &&
                      strstr(err, want[c]) && strstr(err, "\"pool\""),
                  "case %d: %d %s", c, st, err);
            if (!st)
                tx_onnx_model_free(&om);
            free(m.d);
        }
        /* a ModelProto with two `graph` fields merges them, as protobuf does:
         * 9 + 9 nodes (the second parse used to grow the node array from a
         * capacity of 0 and wrote past it; found by fuzz_onnx_load) */
        {
            buf ga = {0}, gb = {0};
            char nm[2][9][8];
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 9; i++) {
                    snprintf(nm[k][i], sizeof nm[k][i], "%c%d", k ? 'b' : 'a', i);
                    node(k ? &gb : &ga, "Relu", nm[k][i], (const char *[]){"x"}, 1,
                         (const char *[]){nm[k][i]}, 1, NULL, 0);
                }
            m = model(&ga, 13);
            msg_field(&m, 7, &gb);
            st = tx_onnx_load(m.d, m.n, &om, err, sizeof err);
            CHECK(st == TX_STATUS_OK, "%s", err);
            if (!st) {
                CHECK(om.n_nodes == 18, "%d nodes", om.n_nodes);
                for (int i = 0; i < om.n_nodes && i < 18; i++)
                    CHECK(strcmp(om.nodes[i].name, nm[i / 9][i % 9]) == 0 &&
                              om.nodes[i].n_out == 1 &&
                              strcmp(om.nodes[i].out[0], nm[i / 9][i % 9]) == 0,
                          "node %d is \"%s\"", i, om.nodes[i].name);
                tx_onnx_model_free(&om);
            }
            free(m.d);
        }
        tx_test_end();
    }
    if (tx_test_begin("npy: parse, write, truncation")) {
        char err[256];
        const char *path = "onnx_test_tmp.npy";
        float v[6] = {1, 2, 3, 4, 5, 6.5f};
        CHECK(tx_npy_write(path, "<f8", 2, (int64_t[]){2, 3}, TX_DTYPE_FLOAT32, v) == 0, "write");
        tx_npy n;
        CHECK(tx_npy_read(path, &n, err, sizeof err) == 0, "%s", err);
        CHECK(n.rank == 2 && n.shape[1] == 3 && ((float *)n.data)[5] == 6.5f, "round trip");
        tx_npy_free(&n);
        size_t len;
        uint8_t *d = tx_read_file(path, &len);
        int bad = 0;
        for (size_t l = 0; d && l < len; l++) {
            if (tx_npy_parse(d, l, &n, err, sizeof err) == 0)
                tx_npy_free(&n);
            else
                bad++;
        }
        CHECK(bad == (int)len, "every prefix is rejected (%d of %zu)", bad, len);
        free(d);
        int32_t iv[2] = {-3, 1 << 20};
        CHECK(tx_npy_write(path, "<i8", 1, (int64_t[]){2}, TX_DTYPE_INT32, iv) == 0, "write");
        CHECK(tx_npy_read(path, &n, err, sizeof err) == 0 && n.dtype == TX_DTYPE_INT32 &&
                  ((int32_t *)n.data)[0] == -3 && ((int32_t *)n.data)[1] == 1 << 20,
              "int64 round trip %s", err);
        tx_npy_free(&n);
        remove(path);
        tx_test_end();
    }
    if (tx_test_begin("BatchNormalization folds into Conv weights")) {
        tx_hval w, b, g, be, mu, var, w2, b2;
        int64_t ws[4] = {2, 1, 1, 2}, cs[1] = {2};
        tx_hval_alloc(&w, TX_ONNX_FLOAT, 4, ws);
        tx_hval_alloc(&b, TX_ONNX_FLOAT, 1, cs);
        tx_hval *ch[4] = {&g, &be, &mu, &var};
        for (int i = 0; i < 4; i++)
            tx_hval_alloc(ch[i], TX_ONNX_FLOAT, 1, cs);
        float wv[4] = {1, 2, 3, 4};
        memcpy(w.f, wv, sizeof wv);
        b.f[0] = 0.5f, b.f[1] = -1;
        g.f[0] = 2, g.f[1] = 0.5f;
        be.f[0] = 1, be.f[1] = 0;
        mu.f[0] = 0.25f, mu.f[1] = 1;
        var.f[0] = 3, var.f[1] = 0;
        bool ok = tx_fold_bn_into_conv(&w, &b, &g, &be, &mu, &var, 1, &w2, &b2);
        CHECK(ok, "fold");
        if (ok) {
            /* BN(conv(x)) for x = [1, 1] at channel o: (sum(W[o]) + b - mu)·s + beta */
            for (int o = 0; o < 2; o++) {
                double s = g.f[o] / sqrt(var.f[o] + 1.0);
                double want = (wv[2 * o] + wv[2 * o + 1] + b.f[o] - mu.f[o]) * s + be.f[o];
                double got = w2.f[2 * o] + w2.f[2 * o + 1] + b2.f[o];
                CHECK(fabs(got - want) < 1e-6, "channel %d: %g vs %g", o, got, want);
            }
            tx_hval_free(&w2);
            tx_hval_free(&b2);
        }
        tx_hval bad;
        tx_hval_alloc(&bad, TX_ONNX_FLOAT, 1, (int64_t[]){3});
        CHECK(!tx_fold_bn_into_conv(&w, &b, &g, &be, &mu, &bad, 1, &w2, &b2),
              "3 variances for 2 channels must be refused");
        tx_hval_free(&bad);
        tx_hval_free(&w);
        tx_hval_free(&b);
        for (int i = 0; i < 4; i++)
            tx_hval_free(ch[i]);
        tx_test_end();
    }

    tx_ctx *ctx = tx_test_open_ctx_counted((tx_ctx_desc){0}, &g_host);

    if (tx_test_begin("session: MatMul + Add + Relu fuse; shape subgraph folds; results")) {
        enum { M = 5, K = 6, N = 8 };
        float w[K * N], bias[N], x[M * K];
        for (int i = 0; i < K * N; i++)
            w[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
        for (int i = 0; i < N; i++)
            bias[i] = (float)i / 8.0f - 0.5f;
        for (int i = 0; i < M * K; i++)
            x[i] = (float)((i * 5) % 13) / 13.0f - 0.3f;
        buf m = mlp_model(M, K, N, w, bias);
        tx_session *s = NULL;
        tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
        CHECK(st == TX_STATUS_OK, "create: %s", tx_last_error(ctx));
        if (!st) {
            tx_session_stats ss;
            tx_session_stats_get(s, &ss);
            /* Shape, Gather, Unsqueeze, Concat fold; Add and Relu fuse into
             * MatMul: left are the matmul and the reshape view */
            CHECK(ss.nodes == 8 && ss.steps == 2 && ss.fused == 2 && ss.folded == 4,
                  "nodes %d steps %d fused %d folded %d", ss.nodes, ss.steps, ss.fused, ss.folded);
            CHECK(ss.weight_bytes == (K * N + N) * 4, "weights %llu",
                  (unsigned long long)ss.weight_bytes);
            CHECK(tx_session_input_count(s) == 1 && tx_session_output_count(s) == 2, "counts");
            tx_value_info vi;
            tx_session_input_info(s, 0, &vi);
            CHECK(strcmp(vi.name, "x") == 0 && vi.rank == 2 && vi.shape[0] == -1 &&
                      vi.shape[1] == K && vi.dtype == TX_DTYPE_FLOAT32 && vi.dim_names[0] &&
                      strcmp(vi.dim_names[0], "N") == 0,
                  "input info");
            tx_tensor tx = mk(ctx, 2, (int64_t[]){M, K}, x), out[2];
            tx_stats a, b;
            for (int run = 0; run < 2; run++) {
                tx_ctx_stats(ctx, &a);
                st = tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 2, out);
                tx_ctx_stats(ctx, &b);
                CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(ctx));
                if (st)
                    break;
                CHECK(b.bytes_uploaded == a.bytes_uploaded, "run %d uploaded %llu bytes", run,
                      (unsigned long long)(b.bytes_uploaded - a.bytes_uploaded));
                float y[M * N], z[M * N];
                int rank;
                int64_t shape[TX_MAX_RANK];
                tx_tensor_shape(ctx, out[1], &rank, shape, NULL);
                CHECK(rank == 2 && shape[0] == M && shape[1] == N, "z shape");
                tx_tensor_read(ctx, out[0], y, sizeof y);
                tx_tensor_read(ctx, out[1], z, sizeof z);
                double err = 0;
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double acc = bias[j];
                        for (int k = 0; k < K; k++)
                            acc += (double)x[i * K + k] * w[k * N + j];
                        acc = acc < 0 ? 0 : acc;
                        err = fmax(err, fabs(acc - y[i * N + j]));
                        err = fmax(err, fabs(acc - z[i * N + j]));
                    }
                CHECK(err < 1e-5, "max error %g", err);
                TX_DESTROY(ctx, out[0], out[1]);
            }
            /* the same graph without fusion runs three ops */
            tx_session *s2;
            st = tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.no_fusion = true}, &s2);
            CHECK(!st, "%s", tx_last_error(ctx));
            if (!st) {
                tx_session_stats ss2;
                tx_session_stats_get(s2, &ss2);
                CHECK(ss2.steps == 4 && ss2.fused == 0, "steps %d", ss2.steps);
                tx_session_destroy(s2);
            }
            /* mismatched feeds */
            tx_tensor bad = mk(ctx, 2, (int64_t[]){M, K + 1}, NULL);
            tx_tensor bad_rank = mk(ctx, 1, (int64_t[]){K}, NULL);
            tx_tensor bad_dt;
            tx_tensor_create(ctx,
                             &(tx_tensor_desc){.rank = 2, .shape = {M, K}, .dtype = TX_DTYPE_INT32},
                             &bad_dt);
            const char *fy = "y";
            EXPECT_ST(tx_session_run(s, &(tx_feed){"q", tx}, 1, &fy, 1, out),
                      TX_STATUS_INVALID_ARGUMENT, "\"q\" is not an input");
            EXPECT_ST(tx_session_run(s, &(tx_feed){"x", bad}, 1, &fy, 1, out),
                      TX_STATUS_SHAPE_MISMATCH, "[-1, 6]");
            EXPECT_ST(tx_session_run(s, &(tx_feed){"x", bad_rank}, 1, &fy, 1, out),
                      TX_STATUS_SHAPE_MISMATCH, "\"x\"");
            EXPECT_ST(tx_session_run(s, &(tx_feed){"x", bad_dt}, 1, &fy, 1, out),
                      TX_STATUS_DTYPE_MISMATCH, "int32");
            EXPECT_ST(tx_session_run(s, NULL, 0, &fy, 1, out), TX_STATUS_INVALID_ARGUMENT,
                      "not fed");
            const char *fq = "xw";
            EXPECT_ST(tx_session_run(s, &(tx_feed){"x", tx}, 1, &fq, 1, out),
                      TX_STATUS_INVALID_ARGUMENT, "not an output");
            tx_feed two[2] = {{"x", tx}, {"x", tx}};
            EXPECT_ST(tx_session_run(s, two, 2, &fy, 1, out), TX_STATUS_INVALID_ARGUMENT,
                      "fed twice");
            TX_DESTROY(ctx, bad, bad_rank, bad_dt, tx);
            tx_stats before;
            tx_ctx_stats(ctx, &before);
            tx_session_destroy(s);
            tx_stats after;
            tx_ctx_stats(ctx, &after);
            CHECK(after.live_tensors + 2 == before.live_tensors, "weights freed: %llu -> %llu",
                  (unsigned long long)before.live_tensors, (unsigned long long)after.live_tensors);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("session: the profile times every step of a run, on either device")) {
        enum { M = 5, K = 6, N = 8 };
        float w[K * N], bias[N], x[M * K];
        for (int i = 0; i < K * N; i++)
            w[i] = (float)(i % 5) - 2;
        for (int i = 0; i < N; i++)
            bias[i] = 0.5f;
        for (int i = 0; i < M * K; i++)
            x[i] = (float)(i % 3);
        buf m = mlp_model(M, K, N, w, bias);
        for (int dev = 0; dev < 2; dev++) {
            tx_device want_dev = dev ? TX_DEVICE_CPU : TX_DEVICE_GPU;
            /* a context of its own on the same GL context (closing a host
             * would end the one the other tests use): the first run's
             * programs are compiled in the profiled steps */
            tx_ctx *ctx = NULL;
            if (tx_host_new_ctx(g_host, &(tx_ctx_desc){0}, &ctx)) {
                CHECK(false, "a second engine context");
                break;
            }
            tx_session *s = NULL;
            tx_status st =
                tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.device = want_dev}, &s);
            CHECK(!st, "create: %s", tx_last_error(ctx));
            if (st) {
                tx_ctx_destroy(ctx);
                continue;
            }
            tx_step_profile p[4];
            CHECK(tx_session_profile(s, p, 4) == -1, "a profile before it is enabled");
            tx_tensor tx = mk(ctx, 2, (int64_t[]){M, K}, x), out[2];
            CHECK(!tx_session_profile_enable(s, true), "%s", tx_last_error(ctx));
            tx_stats c0, c1;
            tx_ctx_stats(ctx, &c0);
            double t0 = tx_now_ms();
            for (int r = 0; r < 3; r++) {
                CHECK(!tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 2, out), "%s",
                      tx_last_error(ctx));
                TX_DESTROY(ctx, out[0], out[1]);
            }
            double wall = tx_now_ms() - t0;
            tx_ctx_stats(ctx, &c1);
            /* a run refused at its feeds runs no step */
            EXPECT_ST(tx_session_run(s, &(tx_feed){"q", tx}, 1, NULL, 2, out),
                      TX_STATUS_INVALID_ARGUMENT, "\"q\"");
            /* the MatMul (with Add and Relu fused) and the Reshape */
            CHECK(tx_session_profile(s, p, 1) == 2, "step count");
            CHECK(tx_session_profile(s, p, 4) == 2, "step count");
            CHECK(strcmp(p[0].op_type, "MatMul") == 0 && p[0].activation == TX_OP_RELU &&
                      strcmp(p[1].op_type, "Reshape") == 0 && p[1].activation == TX_OP_NONE,
                  "steps %s (activation %d), %s", p[0].op_type, (int)p[0].activation, p[1].op_type);
            double sum = 0;
            for (int i = 0; i < 2; i++) {
                CHECK(p[i].runs == 3 && p[i].device == want_dev, "step %d: %d runs on device %d", i,
                      p[i].runs, (int)p[i].device);
                CHECK(p[i].out_rank == 2 && p[i].out_shape[0] == M && p[i].out_shape[1] == N,
                      "step %d: output rank %d", i, p[i].out_rank);
                CHECK(p[i].ms >= 0, "step %d: %g ms", i, p[i].ms);
                sum += p[i].ms;
            }
            CHECK(p[0].ms > 0 && sum <= wall, "steps %g ms of the runs' %g", sum, wall);
            /* the compiles of the runs (the first run's programs on the
             * GPU), each in its step */
            uint64_t compiled = c1.generic_compiles + c1.specialized_compiles -
                                c0.generic_compiles - c0.specialized_compiles;
            CHECK(p[0].compiles + p[1].compiles == compiled && (dev ? compiled == 0 : compiled > 0),
                  "%llu + %llu compiles in the steps, %llu in the runs",
                  (unsigned long long)p[0].compiles, (unsigned long long)p[1].compiles,
                  (unsigned long long)compiled);
            /* a GPU matmul draws, three times its runs' draws; the CPU none */
            CHECK(dev ? p[0].draws == 0 : p[0].draws >= 3 && p[0].draws % 3 == 0,
                  "%llu matmul draws", (unsigned long long)p[0].draws);
            CHECK(p[1].draws == 0, "the reshape (a view) drew %llu",
                  (unsigned long long)p[1].draws);
            CHECK(p[0].macs == M * N * K && p[1].macs == 0, "macs %g, %g", p[0].macs, p[1].macs);
            /* enabling again starts from zero; off is off */
            CHECK(!tx_session_profile_enable(s, true) && tx_session_profile(s, p, 4) == 2 &&
                      p[0].runs == 0 && p[0].ms == 0 && p[0].draws == 0,
                  "counts after a restart: %d runs", p[0].runs);
            CHECK(!tx_session_profile_enable(s, false) && tx_session_profile(s, p, 4) == -1,
                  "a profile after it is turned off");
            CHECK(tx_session_profile(s, NULL, 1) == -1 && tx_session_profile(NULL, p, 4) == -1 &&
                      tx_session_profile_enable(NULL, true) == TX_STATUS_INVALID_ARGUMENT,
                  "bad arguments");
            tx_tensor_destroy(ctx, tx);
            tx_session_destroy(s);
            tx_ctx_destroy(ctx);
        }
        free(m.d);
        tx_test_end();
    }
    for (int hswish = 0; hswish < 2; hswish++) {
        if (tx_test_begin(hswish ? "session: Conv + BatchNormalization + written-out HardSwish "
                                   "fold into one conv"
                                 : "session: Conv + BatchNormalization + Relu fold into one conv; "
                                   "ArgMax")) {
            enum { C = 3, M = 5, H = 6, W = 7 };
            float wt[M * C * 9], b[M], bn[4 * M], x[C * H * W];
            for (int i = 0; i < M * C * 9; i++)
                wt[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
            for (int i = 0; i < M; i++) {
                b[i] = (float)i / 5.0f - 0.3f;
                bn[i] = 0.5f + (float)i / 4.0f;           /* gamma */
                bn[M + i] = (float)(i % 3) / 3.0f - 0.2f; /* beta */
                bn[2 * M + i] = (float)i / 7.0f - 0.1f;   /* mean */
                bn[3 * M + i] = 0.25f + (float)i / 3.0f;  /* var */
            }
            for (int i = 0; i < C * H * W; i++)
                x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
            /* plain-C reference */
            double want[M * H * W];
            for (int o = 0; o < M; o++)
                for (int i = 0; i < H; i++)
                    for (int j = 0; j < W; j++) {
                        double acc = b[o];
                        for (int ci = 0; ci < C; ci++)
                            for (int ki = 0; ki < 3; ki++)
                                for (int kj = 0; kj < 3; kj++) {
                                    int yi = i + ki - 1, xj = j + kj - 1;
                                    if (yi >= 0 && yi < H && xj >= 0 && xj < W)
                                        acc += (double)wt[((o * C + ci) * 3 + ki) * 3 + kj] *
                                               x[(ci * H + yi) * W + xj];
                                }
                        acc =
                            (acc - bn[2 * M + o]) / sqrt(bn[3 * M + o] + 1e-3) * bn[o] + bn[M + o];
                        want[(o * H + i) * W + j] =
                            hswish ? acc * fmin(fmax(acc + 3, 0), 6) / 6 : (acc < 0 ? 0 : acc);
                    }
            buf m = conv_bn_model(C, M, H, W, wt, b, bn, hswish);
            for (int fusion = 1; fusion >= 0; fusion--) {
                /* unfused: conv, bn, relu (or add, clip, mul, div), argmax */
                tx_session *s = fusion_session(ctx, m, fusion, fusion ? 2 : (hswish ? 7 : 4),
                                               fusion ? (hswish ? 5 : 2) : 0);
                if (!s)
                    break;
                tx_tensor tx = mk(ctx, 4, (int64_t[]){1, C, H, W}, x), out[2];
                tx_status st = tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 2, out);
                CHECK(!st, "%s", tx_last_error(ctx));
                if (!st) {
                    float y[M * H * W];
                    int32_t idx[H * W];
                    tx_dtype dt;
                    tx_tensor_shape(ctx, out[1], NULL, NULL, &dt);
                    tx_tensor_read(ctx, out[0], y, sizeof y);
                    tx_tensor_read(ctx, out[1], idx, sizeof idx);
                    double err = 0;
                    int bad_idx = 0;
                    for (int i = 0; i < M * H * W; i++)
                        err = fmax(err, fabs(want[i] - y[i]));
                    for (int p = 0; p < H * W; p++) {
                        int best = 0;
                        for (int o = 1; o < M; o++)
                            if (want[o * H * W + p] > want[best * H * W + p])
                                best = o;
                        /* ties (two Relu zeros) may pick either */
                        bad_idx +=
                            idx[p] != best && want[idx[p] * H * W + p] != want[best * H * W + p];
                    }
                    CHECK(err < 1e-4, "fusion %d: max error %g", fusion, err);
                    CHECK(dt == TX_DTYPE_INT32 && bad_idx == 0,
                          "fusion %d: argmax dtype %d, %d "
                          "wrong",
                          fusion, (int)dt, bad_idx);
                    TX_DESTROY(ctx, out[0], out[1]);
                }
                tx_tensor_destroy(ctx, tx);
                tx_session_destroy(s);
            }
            free(m.d);
            tx_test_end();
        }
    }
    if (tx_test_begin("fusion: a residual Add (and the Relu after it) into the conv")) {
        float w3[4 * 4 * 9], w1[16], b[4] = {0.1f, -0.2f, 0.3f, 0}, x[4 * 6 * 8],
                                     r[4] = {0.5f, -0.5f, 1, -1};
        for (int i = 0; i < 4 * 4 * 9; i++)
            w3[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 16; i++)
            w1[i] = (float)((i * 3) % 5) / 5.0f - 0.4f;
        for (int i = 0; i < 4 * 6 * 8; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        buf m = residual_model(w3, w1, b);
        float got[2][2][4 * 6 * 8];
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            /* unfused: 3 convs, 2 adds, relu */
            tx_session *s = fusion_session(ctx, m, fusion, fusion ? 3 : 6, fusion ? 3 : 0);
            if (!s)
                break;
            run_xr(ctx, s, mk(ctx, 4, (int64_t[]){1, 4, 6, 8}, x),
                   mk(ctx, 4, (int64_t[]){1, 4, 1, 1}, r), got[fusion][0], got[fusion][1],
                   sizeof got[0][0]);
        }
        double err = 0;
        int negative = 0;
        for (int o = 0; o < 2 && !tx_t.cur_failed; o++)
            for (int i = 0; i < 4 * 6 * 8; i++) {
                err = fmax(err, fabs(got[1][o][i] - got[0][o][i]));
                negative += o == 0 && got[1][0][i] < 0;
            }
        CHECK(err < 1e-5 && negative == 0, "fused vs unfused: max difference %g, %d negatives", err,
              negative);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: LeakyRelu, HardSigmoid and Elu (with their attributes) into the "
                      "Conv, the squeeze-excite's 1x1 Conv and the Gemm before them")) {
        float w[8 * 4 * 9], b[8], w2[64], b2[8], w3[40], b3[5], x[4 * 6 * 8];
        for (int i = 0; i < 8 * 4 * 9; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 8; i++)
            b[i] = (float)i / 8.0f - 0.4f, b2[i] = (float)((i * 3) % 7) / 7.0f - 0.5f;
        for (int i = 0; i < 64; i++)
            w2[i] = (float)((i * 5) % 9) / 3.0f - 1.3f;
        for (int i = 0; i < 40; i++)
            w3[i] = (float)((i * 3) % 11) / 2.0f - 2.6f;
        for (int i = 0; i < 5; i++)
            b3[i] = (float)i - 2.5f;
        for (int i = 0; i < 4 * 6 * 8; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        buf m = act_attr_model(w, b, w2, b2, w3, b3);
        float got[2][2][8];
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            /* unfused: conv, leaky, gap, conv, hardsigmoid, flatten, gemm, elu */
            tx_session *s = fusion_session(ctx, m, fusion, fusion ? 5 : 8, fusion ? 3 : 0);
            if (!s)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 6, 8}, x), out[2];
            tx_status st = tx_session_run(s, (tx_feed[]){{"x", xt}}, 1, NULL, 2, out);
            CHECK(!st, "fusion %d: %s", fusion, tx_last_error(ctx));
            if (!st) {
                CHECK(!tx_tensor_read(ctx, out[0], got[fusion][0], 8 * sizeof(float)) &&
                          !tx_tensor_read(ctx, out[1], got[fusion][1], 5 * sizeof(float)),
                      "%s", tx_last_error(ctx));
                TX_DESTROY(ctx, out[0], out[1]);
            }
            TX_DESTROY(ctx, xt);
            tx_session_destroy(s);
        }
        /* the plain-C definition of the three layers */
        double a[8][6 * 8], p[8], y[8], z[5];
        for (int o = 0; o < 8; o++) {
            p[o] = 0;
            for (int oy = 0; oy < 6; oy++)
                for (int ox = 0; ox < 8; ox++) {
                    double v = b[o];
                    for (int c = 0; c < 4; c++)
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int iy = oy + ky - 1, ix = ox + kx - 1;
                                if (iy >= 0 && iy < 6 && ix >= 0 && ix < 8)
                                    v += (double)w[((o * 4 + c) * 3 + ky) * 3 + kx] *
                                         x[(c * 6 + iy) * 8 + ix];
                            }
                    a[o][oy * 8 + ox] = v < 0 ? 0.15 * v : v;
                    p[o] += a[o][oy * 8 + ox] / 48;
                }
        }
        for (int o = 0; o < 8; o++) {
            double q = b2[o];
            for (int c = 0; c < 8; c++)
                q += (double)w2[o * 8 + c] * p[c];
            y[o] = fmax(0, fmin(1, q / 6 + 0.5));
        }
        int inside = 0, negative = 0;
        for (int j = 0; j < 5; j++) {
            double e = b3[j];
            for (int c = 0; c < 8; c++)
                e += p[c] * (double)w3[c * 5 + j];
            z[j] = e < 0 ? 0.7 * expm1(e) : e;
            negative += z[j] < 0;
        }
        double err = 0;
        for (int f = 0; f < 2 && !tx_t.cur_failed; f++) {
            for (int o = 0; o < 8; o++)
                err = fmax(err, fabs(got[f][0][o] - y[o]));
            for (int j = 0; j < 5; j++)
                err = fmax(err, fabs(got[f][1][j] - z[j]));
        }
        for (int o = 0; o < 8; o++)
            inside += y[o] > 0 && y[o] < 1;
        CHECK(err < 1e-4, "fused and unfused vs the definition: max difference %g", err);
        CHECK(inside >= 2 && negative >= 1,
              "the data must reach the activations' bends (%d gates "
              "inside (0, 1), %d negative Elu outputs)",
              inside, negative);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: scale and shift by constants fold into conv weights (PP-LCNetV3's "
                      "affine blocks), not before a padded conv")) {
        float w1[4 * 27], b1[4], w2[12], b2[6], w3[2 * 36], x[3 * 42];
        for (int i = 0; i < 4 * 27; i++)
            w1[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
        for (int i = 0; i < 4; i++)
            b1[i] = (float)i / 4.0f - 0.3f;
        for (int i = 0; i < 12; i++)
            w2[i] = (float)((i * 3) % 7) / 7.0f - 0.4f;
        for (int i = 0; i < 6; i++)
            b2[i] = 0.2f - (float)i / 9.0f;
        for (int i = 0; i < 2 * 36; i++)
            w3[i] = (float)((i * 5) % 9) / 9.0f - 0.5f;
        for (int i = 0; i < 3 * 42; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        /* plain-C reference, node by node */
        double xd[3 * 42], a[4 * 42], h[4 * 42], t[4 * 42], y[6 * 42], z[2 * 42];
        for (int i = 0; i < 3 * 42; i++)
            xd[i] = x[i];
        ref_conv(xd, 3, w1, b1, 4, 3, 1, 1, a);
        for (int i = 0; i < 4 * 42; i++) {
            double v = a[i] * (double)0.8f + (double)0.25f;
            h[i] = v * fmin(fmax(v + 3, 0), 6) / 6;
            t[i] = (h[i] - k_aff_t2[i / 42]) * k_aff_s2[i / 42];
        }
        ref_conv(t, 2, w2, b2, 6, 1, 0, 2, y);
        for (int i = 0; i < 6 * 42; i++)
            y[i] = (double)0.5f - y[i] / 2;
        for (int i = 0; i < 4 * 42; i++)
            t[i] = h[i] * (double)1.25f + k_aff_t4[i / 42];
        ref_conv(t, 4, w3, NULL, 2, 3, 1, 1, z);
        buf m = affine_model(w1, b1, w2, b2, w3);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            /* unfused: 4 convs, 12 elementwise steps; fused: c1 (+ its Mul,
             * Add and the HardSwish), c2 (+ Sub, Mul, Div, Sub), Mul, Add,
             * c3, c4 */
            tx_session *s = fusion_session(ctx, m, fusion, fusion ? 6 : 16, fusion ? 10 : 0);
            if (!s)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 3, 6, 7}, x), out[3];
            tx_status st = tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 3, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            if (!st) {
                float gy[6 * 42], gz[2 * 42], gv[4 * 42];
                CHECK(!tx_tensor_read(ctx, out[0], gy, sizeof gy) &&
                          !tx_tensor_read(ctx, out[1], gz, sizeof gz) &&
                          !tx_tensor_read(ctx, out[2], gv, sizeof gv),
                      "%s", tx_last_error(ctx));
                double ey = 0, ez = 0, ev = 0;
                for (int i = 0; i < 6 * 42; i++)
                    ey = fmax(ey, fabs(gy[i] - y[i]));
                for (int i = 0; i < 2 * 42; i++)
                    ez = fmax(ez, fabs(gz[i] - z[i]));
                for (int i = 0; i < 4 * 42; i++)
                    ev = fmax(ev, fabs(gv[i] - a[i]));
                CHECK(ey < 1e-4 && ez < 1e-4 && ev < 1e-4, "fusion %d: max error y %g, z %g, v %g",
                      fusion, ey, ez, ev);
                TX_DESTROY(ctx, out[0], out[1], out[2]);
            }
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(s);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: scale and shift by constants fold into a ConvTranspose's "
                      "weights and bias (grouped, shared weights kept)")) {
        /* y = Sub(Add(Mul(ConvTranspose(x, W, B), s), t), 0.5) with 2 groups
         * of 2 input channels, 3 outputs each, stride 2: folds into the
         * ConvTranspose (output channel o is W[c, o % 3] for group o / 3's
         * c); v = ConvTranspose(x, W, B) shares W and B, which must keep
         * their values. Then the same without B and without v (W folded
         * where it is, the bias made from the shift alone). The reference is
         * the unfused session. */
        static const float sv[6] = {1.5f, -0.5f, 0.75f, 2, -1.25f, 0.3f},
                           tv[6] = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.25f},
                           bv[6] = {0.2f, -0.1f, 0.05f, 0.3f, -0.25f, 0.15f};
        float w[4 * 3 * 9], x[4 * 15];
        for (int i = 0; i < 4 * 3 * 9; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
        for (int i = 0; i < 4 * 15; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        for (int shared = 1; shared >= 0 && !tx_t.cur_failed; shared--) {
            buf g = {0};
            init_f(&g, "W", (int64_t[]){4, 3, 3, 3}, 4, w);
            if (shared)
                init_f(&g, "B", (int64_t[]){6}, 1, bv);
            init_f(&g, "s", (int64_t[]){1, 6, 1, 1}, 4, sv);
            init_f(&g, "t", (int64_t[]){6, 1, 1}, 3, tv);
            init_f(&g, "half", NULL, 0, (float[]){0.5f});
            vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 3, 5}, 4);
            for (int k = 0; k < 1 + shared; k++)
                node(&g, "ConvTranspose", k ? "ct2" : "ct1", (const char *[]){"x", "W", "B"},
                     2 + shared, (const char *[]){k ? "v" : "c"}, 1,
                     (buf[]){attr_i("group", 2), attr_is("strides", (int64_t[]){2, 2}, 2),
                             attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)},
                     3);
            node(&g, "Mul", "m", (const char *[]){"c", "s"}, 2, (const char *[]){"m"}, 1, NULL, 0);
            node(&g, "Add", "a", (const char *[]){"t", "m"}, 2, (const char *[]){"a"}, 1, NULL, 0);
            node(&g, "Sub", "d", (const char *[]){"a", "half"}, 2, (const char *[]){"y"}, 1, NULL,
                 0);
            vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 6, 5, 9}, 4);
            if (shared)
                vinfo(&g, 12, "v", TX_ONNX_FLOAT, (int64_t[]){1, 6, 5, 9}, 4);
            buf m = model(&g, 13);
            float got[2][2][6 * 45] = {{{0}}};
            for (int fusion = 0; fusion < 2 && !tx_t.cur_failed; fusion++) {
                tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 1 + shared : 4 + shared,
                                                fusion ? 3 : 0);
                if (!ss)
                    break;
                tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 3, 5}, x), out[2];
                tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 1 + shared, out);
                CHECK(!st, "%s", tx_last_error(ctx));
                for (int o = 0; !st && o < 1 + shared; o++) {
                    CHECK(!tx_tensor_read(ctx, out[o], got[fusion][o], sizeof got[0][0]), "%s",
                          tx_last_error(ctx));
                    tx_tensor_destroy(ctx, out[o]);
                }
                tx_tensor_destroy(ctx, xt);
                tx_session_destroy(ss);
            }
            double ey = 0, ev = 0, spread = 0;
            for (int i = 0; i < 6 * 45; i++) {
                ey = fmax(ey, fabs(got[1][0][i] - got[0][0][i]));
                ev = fmax(ev, fabs(got[1][1][i] - got[0][1][i]));
                spread = fmax(spread, fabs(got[0][0][i] - (shared ? got[0][1][i] : 0)));
            }
            CHECK(ey < 1e-5 && ev < 1e-6 && spread > 0.1,
                  "shared %d: fused vs unfused: y %g, v %g (y - v up to %g)", shared, ey, ev,
                  spread);
            free(m.d);
        }
        tx_test_end();
    }
    if (tx_test_begin("fusion: BatchNormalization and the Relu after it fold into a "
                      "ConvTranspose, before and after the Add of its bias (grouped, stride 2; "
                      "its shared weights kept)")) {
        /* y = Relu(BN(Add(ConvTranspose(x, W), B4))), PaddleOCR det's head,
         * with 2 groups of 2 input channels and 3 outputs each, and z =
         * Relu(BN(ConvTranspose(x, W, B))); v = ConvTranspose(x, W, B)
         * reads the same W and B, which keep their values. Fused: the
         * three ConvTransposes (the Add, BNs and Relus folded in); the
         * reference is the unfused session. */
        static const float gv[6] = {1.5f, -0.5f, 0.75f, 2, -1.25f, 0.3f},
                           bev[6] = {0.1f, -0.2f, 0.3f, 0.05f, -0.4f, 0.25f},
                           muv[6] = {0.02f, -0.1f, 0.2f, 0, 0.3f, -0.05f},
                           varv[6] = {0.5f, 1, 2, 0.25f, 1.5f, 0.8f},
                           bv[6] = {0.2f, -0.1f, 0.05f, 0.3f, -0.25f, 0.15f};
        float w[4 * 3 * 9], x[4 * 15];
        for (int i = 0; i < 4 * 3 * 9; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
        for (int i = 0; i < 4 * 15; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        buf g = {0};
        init_f(&g, "W", (int64_t[]){4, 3, 3, 3}, 4, w);
        init_f(&g, "B", (int64_t[]){6}, 1, bv);
        init_f(&g, "B4", (int64_t[]){1, 6, 1, 1}, 4, bv);
        init_f(&g, "gamma", (int64_t[]){6}, 1, gv);
        init_f(&g, "beta", (int64_t[]){6}, 1, bev);
        init_f(&g, "mean", (int64_t[]){6}, 1, muv);
        init_f(&g, "var", (int64_t[]){6}, 1, varv);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 3, 5}, 4);
        static const char *const ct_out[3] = {"c", "v", "c2"};
        for (int k = 0; k < 3; k++)
            node(&g, "ConvTranspose", ct_out[k], (const char *[]){"x", "W", "B"}, k ? 3 : 2,
                 (const char *[]){ct_out[k]}, 1,
                 (buf[]){attr_i("group", 2), attr_is("strides", (int64_t[]){2, 2}, 2),
                         attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)},
                 3);
        node(&g, "Add", "a", (const char *[]){"c", "B4"}, 2, (const char *[]){"cb"}, 1, NULL, 0);
        for (int k = 0; k < 2; k++) {
            node(&g, "BatchNormalization", k ? "bn2" : "bn",
                 (const char *[]){k ? "c2" : "cb", "gamma", "beta", "mean", "var"}, 5,
                 (const char *[]){k ? "n2" : "n"}, 1, (buf[]){attr_f("epsilon", 1e-3f)}, 1);
            node(&g, "Relu", k ? "r2" : "r", (const char *[]){k ? "n2" : "n"}, 1,
                 (const char *[]){k ? "z" : "y"}, 1, NULL, 0);
        }
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 6, 5, 9}, 4);
        vinfo(&g, 12, "v", TX_ONNX_FLOAT, (int64_t[]){1, 6, 5, 9}, 4);
        vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 6, 5, 9}, 4);
        buf m = model(&g, 13);
        float got[2][3][6 * 45] = {{{0}}};
        for (int fusion = 0; fusion < 2 && !tx_t.cur_failed; fusion++) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 3 : 8, fusion ? 5 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 3, 5}, x), out[3];
            tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 3, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int o = 0; !st && o < 3; o++) {
                CHECK(!tx_tensor_read(ctx, out[o], got[fusion][o], sizeof got[0][0]), "%s",
                      tx_last_error(ctx));
                tx_tensor_destroy(ctx, out[o]);
            }
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(ss);
        }
        double ey = 0, ev = 0, ez = 0, neg = 0, pos = 0;
        for (int i = 0; i < 6 * 45; i++) {
            ey = fmax(ey, fabs(got[1][0][i] - got[0][0][i]));
            ev = fmax(ev, fabs(got[1][1][i] - got[0][1][i]));
            ez = fmax(ez, fabs(got[1][2][i] - got[0][2][i]));
            neg = fmin(neg, got[0][1][i]); /* v has negatives the Relu cut from y */
            pos = fmax(pos, got[0][0][i]);
        }
        CHECK(ey < 1e-5 && ev < 1e-6 && ez < 1e-5 && neg < -0.1 && pos > 0.1,
              "fused vs unfused: y %g, v %g, z %g (v down to %g, y up to %g)", ey, ev, ez, neg,
              pos);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: a scalar affine before padded convs is read through by them "
                      "(tx_conv_desc.x_affine), folded into an unpadded one's weights, not "
                      "while another op reads it")) {
        /* a = Add(Mul(x, 0.8), -0.3) read by a padded depthwise conv (y),
         * a padded dense one (z) and a 1x1 (p): one Affine, then read
         * through by the padded two (the padding stays 0, which folding
         * into the weights would not give) and folded into the 1x1's W3
         * and B3, which keeps it a matmul; q = Mul(x, 1.5) read by a conv
         * (u) and a Relu (r) stays a step. */
        static const float w3[8] = {0.5f, -1, 0.25f, 2, -0.75f, 1, 1.5f, -0.5f}, b3[2] = {0.1f, -2};
        float w1[4 * 9], b1[4], w2[2 * 4 * 9], x[4 * 42];
        for (int i = 0; i < 4 * 9; i++)
            w1[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
        for (int i = 0; i < 4; i++)
            b1[i] = (float)i / 4.0f - 0.3f;
        for (int i = 0; i < 2 * 4 * 9; i++)
            w2[i] = (float)((i * 5) % 9) / 9.0f - 0.5f;
        for (int i = 0; i < 4 * 42; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        double a[4 * 42], q[4 * 42], y[4 * 42], z[2 * 42], u[2 * 42], pw[2 * 42];
        for (int i = 0; i < 4 * 42; i++) {
            a[i] = (double)(x[i] * 0.8f) + (double)-0.3f;
            q[i] = (double)x[i] * (double)1.5f;
        }
        ref_conv(a, 1, w1, b1, 4, 3, 1, 4, y);
        ref_conv(a, 4, w2, NULL, 2, 3, 1, 1, z);
        ref_conv(q, 4, w2, NULL, 2, 3, 1, 1, u);
        ref_conv(a, 4, w3, b3, 2, 1, 0, 1, pw);
        buf g = {0};
        init_f(&g, "W1", (int64_t[]){4, 1, 3, 3}, 4, w1);
        init_f(&g, "B1", (int64_t[]){4}, 1, b1);
        init_f(&g, "W2", (int64_t[]){2, 4, 3, 3}, 4, w2);
        init_f(&g, "s", NULL, 0, (float[]){0.8f});
        init_f(&g, "t", (int64_t[]){1}, 1, (float[]){-0.3f});
        init_f(&g, "s2", NULL, 0, (float[]){1.5f});
        init_f(&g, "W3", (int64_t[]){2, 4, 1, 1}, 4, w3);
        init_f(&g, "B3", (int64_t[]){2}, 1, b3);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        buf pads = attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4);
        node(&g, "Mul", "m", (const char *[]){"x", "s"}, 2, (const char *[]){"m"}, 1, NULL, 0);
        node(&g, "Add", "a", (const char *[]){"m", "t"}, 2, (const char *[]){"a"}, 1, NULL, 0);
        node(&g, "Conv", "dw", (const char *[]){"a", "W1", "B1"}, 3, (const char *[]){"y"}, 1,
             (buf[]){attr_i("group", 4), pads}, 2);
        node(&g, "Conv", "dense", (const char *[]){"a", "W2"}, 2, (const char *[]){"z"}, 1,
             (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
        node(&g, "Conv", "pw", (const char *[]){"a", "W3", "B3"}, 3, (const char *[]){"p"}, 1, NULL,
             0);
        node(&g, "Mul", "q", (const char *[]){"s2", "x"}, 2, (const char *[]){"q"}, 1, NULL, 0);
        node(&g, "Conv", "c3", (const char *[]){"q", "W2"}, 2, (const char *[]){"u"}, 1,
             (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
        node(&g, "Relu", "r", (const char *[]){"q"}, 1, (const char *[]){"r"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 7}, 4);
        vinfo(&g, 12, "u", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 7}, 4);
        vinfo(&g, 12, "r", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        vinfo(&g, 12, "p", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 7}, 4);
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            /* unfused: Mul, Add, 3 convs, Mul, conv, Relu; fused: the Mul and
             * Add one Affine, read through or folded by the three convs */
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 6 : 8, fusion ? 2 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 6, 7}, x), out[5];
            tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 5, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            if (!st) {
                float gy[4 * 42], gz[2 * 42], gu[2 * 42], gr[4 * 42], gp[2 * 42];
                CHECK(!tx_tensor_read(ctx, out[0], gy, sizeof gy) &&
                          !tx_tensor_read(ctx, out[1], gz, sizeof gz) &&
                          !tx_tensor_read(ctx, out[2], gu, sizeof gu) &&
                          !tx_tensor_read(ctx, out[3], gr, sizeof gr) &&
                          !tx_tensor_read(ctx, out[4], gp, sizeof gp),
                      "%s", tx_last_error(ctx));
                double ey = 0, ez = 0, eu = 0, er = 0, ep = 0;
                for (int i = 0; i < 4 * 42; i++) {
                    ey = fmax(ey, fabs(gy[i] - y[i]));
                    er = fmax(er, fabs(gr[i] - fmax(q[i], 0)));
                }
                for (int i = 0; i < 2 * 42; i++) {
                    ez = fmax(ez, fabs(gz[i] - z[i]));
                    eu = fmax(eu, fabs(gu[i] - u[i]));
                    ep = fmax(ep, fabs(gp[i] - pw[i]));
                }
                CHECK(ey < 1e-4 && ez < 1e-4 && eu < 1e-4 && er < 1e-6 && ep < 1e-4,
                      "fusion %d: max error y %g, z %g, u %g, r %g, p %g", fusion, ey, ez, eu, er,
                      ep);
                TX_DESTROY(ctx, out[0], out[1], out[2], out[3], out[4]);
            }
            /* the 1x1's weights, which it alone reads, hold 0.8 W3 (folded
             * in place) where fused, W3 where not: read from a session with
             * a fixed device (tx_session_weight needs one; the plan is the
             * same on either) */
            tx_session *sw;
            st = tx_session_create(
                ctx, m.d, m.n, &(tx_session_desc){.no_fusion = !fusion, .device = TX_DEVICE_CPU},
                &sw);
            CHECK(!st, "%s", tx_last_error(ctx));
            tx_tensor wt;
            if (!st) {
                st = tx_session_weight(sw, "W3", &wt);
                CHECK(!st, "%s", tx_last_error(ctx));
            }
            float gw[8];
            if (!st && !tx_tensor_read(ctx, wt, gw, sizeof gw)) {
                double ew = 0;
                for (int i = 0; i < 8; i++)
                    ew = fmax(ew, fabs(gw[i] - w3[i] * (fusion ? 0.8f : 1.0f)));
                CHECK(ew < 1e-6, "fusion %d: W3 off by %g", fusion, ew);
            }
            tx_session_destroy(sw);
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: x + x * HardSigmoid(conv) is x * (gate + 1), the gate conv's "
                      "output clipped to [1, 2], unless the gate has another reader")) {
        /* three squeeze-excite gates on x [1, 4, 6, 7]: h = HardSigmoid(
         * Conv1x1(GlobalAveragePool(v))) then Add(v, Mul(v, h)).
         * 1: the conv has a bias, Add(x, Mul(x, h1)) -> y1;
         * 2: no bias, the operands swapped: Add(Mul(h2, y1), y1) -> y2;
         * 3: h3 is also read by a Relu (r3): stays as written.
         * Unfused 16 steps; fused 11: the HardSigmoids into their convs (3),
         * the Adds of gates 1 and 2 (2). */
        float wg[3][16], x[4 * 42];
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 16; i++)
                wg[j][i] = (float)(((i + j) * 7) % 13) / 4.0f - 1.5f;
        /* gate 1's HardSigmoid saturates at 0 (channel 0) and 1 (3) */
        static const float bg[4] = {-6, -1, 2, 7};
        for (int i = 0; i < 4 * 42; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        /* the reference in doubles: v -> v + v * h(v), h per channel */
        double v[4][4 * 42], h3[4] = {0};
        for (int i = 0; i < 4 * 42; i++)
            v[0][i] = x[i];
        for (int j = 0; j < 3; j++) {
            double pool[4], h[4];
            for (int c = 0; c < 4; c++) {
                pool[c] = 0;
                for (int i = 0; i < 42; i++)
                    pool[c] += v[j][c * 42 + i] / 42.0;
            }
            for (int o = 0; o < 4; o++) {
                double z = j == 0 ? bg[o] : 0;
                for (int c = 0; c < 4; c++)
                    z += (double)wg[j][o * 4 + c] * pool[c];
                h[o] = fmin(fmax(0.2f * z + 0.5f, 0), 1);
                if (j == 2)
                    h3[o] = h[o];
            }
            for (int i = 0; i < 4 * 42; i++)
                v[j + 1][i] = v[j][i] + v[j][i] * h[i / 42];
        }
        buf g = {0};
        init_f(&g, "W1", (int64_t[]){4, 4, 1, 1}, 4, wg[0]);
        init_f(&g, "B1", (int64_t[]){4}, 1, bg);
        init_f(&g, "W2", (int64_t[]){4, 4, 1, 1}, 4, wg[1]);
        init_f(&g, "W3", (int64_t[]){4, 4, 1, 1}, 4, wg[2]);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        static const char *const names[3][7] = {{"x", "p1", "z1", "h1", "m1", "y1", "W1"},
                                                {"y1", "p2", "z2", "h2", "m2", "y2", "W2"},
                                                {"y2", "p3", "z3", "h3", "m3", "y3", "W3"}};
        for (int j = 0; j < 3; j++) {
            const char *const *n = names[j];
            node(&g, "GlobalAveragePool", n[1], (const char *[]){n[0]}, 1, (const char *[]){n[1]},
                 1, NULL, 0);
            node(&g, "Conv", n[2], (const char *[]){n[1], n[6], "B1"}, j == 0 ? 3 : 2,
                 (const char *[]){n[2]}, 1, NULL, 0);
            node(&g, "HardSigmoid", n[3], (const char *[]){n[2]}, 1, (const char *[]){n[3]}, 1,
                 (buf[]){attr_f("alpha", 0.2f), attr_f("beta", 0.5f)}, 2);
            node(&g, "Mul", n[4],
                 j == 1 ? (const char *[]){n[3], n[0]} : (const char *[]){n[0], n[3]}, 2,
                 (const char *[]){n[4]}, 1, NULL, 0);
            node(&g, "Add", n[5],
                 j == 1 ? (const char *[]){n[4], n[0]} : (const char *[]){n[0], n[4]}, 2,
                 (const char *[]){n[5]}, 1, NULL, 0);
        }
        node(&g, "Relu", "r3", (const char *[]){"h3"}, 1, (const char *[]){"r3"}, 1, NULL, 0);
        vinfo(&g, 12, "y3", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        vinfo(&g, 12, "r3", TX_ONNX_FLOAT, (int64_t[]){1, 4, 1, 1}, 4);
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 11 : 16, fusion ? 5 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 6, 7}, x), out[2];
            tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 2, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            if (!st) {
                float gy[4 * 42], gr[4];
                CHECK(!tx_tensor_read(ctx, out[0], gy, sizeof gy) &&
                          !tx_tensor_read(ctx, out[1], gr, sizeof gr),
                      "%s", tx_last_error(ctx));
                double ey = 0, er = 0, big = 0;
                for (int i = 0; i < 4 * 42; i++) {
                    ey = fmax(ey, fabs(gy[i] - v[3][i]));
                    big = fmax(big, fabs(v[3][i] - v[0][i]));
                }
                for (int c = 0; c < 4; c++)
                    er = fmax(er, fabs(gr[c] - h3[c]));
                CHECK(ey < 1e-5 && er < 1e-6 && big > 0.3,
                      "fusion %d: max error y3 %g, r3 %g (the gates moved x by %g)", fusion, ey, er,
                      big);
                TX_DESTROY(ctx, out[0], out[1]);
            }
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: Resize + Add runs as one resize with a residual; a broadcast "
                      "one is added after it; a residual computed later stays an Add")) {
        /* x [1, 2, 3, 4] resized 2x (nearest, half_pixel: y[i][j] =
         * x[i / 2][j / 2]) three times: y1 = u + R(x) (u an input: fused,
         * added in the resize), y2 = R(x) + b (b [1, 2, 1, 1] broadcasts:
         * fused, added after it), y3 = R(x) + Relu(u) (the Relu comes after
         * the Resize in the file: stays). Unfused 7 steps, fused 5. */
        float x[24], u[96];
        for (int i = 0; i < 24; i++)
            x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 96; i++)
            u[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        static const float bv[2] = {0.25f, -1.5f};
        double want[3][96];
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 8; j++) {
                    int o = (c * 6 + i) * 8 + j;
                    double r = x[(c * 3 + i / 2) * 4 + j / 2];
                    want[0][o] = r + u[o];
                    want[1][o] = r + bv[c];
                    want[2][o] = r + fmax(u[o], 0);
                }
        buf g = {0};
        init_f(&g, "s", (int64_t[]){4}, 1, (float[]){1, 1, 2, 2});
        init_f(&g, "b", (int64_t[]){1, 2, 1, 1}, 4, bv);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 2, 3, 4}, 4);
        vinfo(&g, 11, "u", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 8}, 4);
        for (int j = 0; j < 3; j++) {
            char rn[4] = {'r', (char)('1' + j), 0};
            node(&g, "Resize", rn, (const char *[]){"x", "", "s"}, 3, (const char *[]){rn}, 1, NULL,
                 0);
        }
        node(&g, "Add", "a1", (const char *[]){"u", "r1"}, 2, (const char *[]){"y1"}, 1, NULL, 0);
        node(&g, "Add", "a2", (const char *[]){"r2", "b"}, 2, (const char *[]){"y2"}, 1, NULL, 0);
        node(&g, "Relu", "c", (const char *[]){"u"}, 1, (const char *[]){"c"}, 1, NULL, 0);
        node(&g, "Add", "a3", (const char *[]){"r3", "c"}, 2, (const char *[]){"y3"}, 1, NULL, 0);
        for (int j = 0; j < 3; j++) {
            char yn[4] = {'y', (char)('1' + j), 0};
            vinfo(&g, 12, yn, TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 8}, 4);
        }
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 5 : 7, fusion ? 2 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 2, 3, 4}, x),
                      ut = mk(ctx, 4, (int64_t[]){1, 2, 6, 8}, u), out[3];
            tx_status st = tx_session_run(ss, (tx_feed[]){{"x", xt}, {"u", ut}}, 2, NULL, 3, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int j = 0; j < 3 && !st; j++) {
                float got[96];
                CHECK(!tx_tensor_read(ctx, out[j], got, sizeof got), "%s", tx_last_error(ctx));
                double e = 0;
                for (int i = 0; i < 96; i++)
                    e = fmax(e, fabs(got[i] - want[j][i]));
                CHECK(e < 1e-6, "fusion %d: y%d off by %g", fusion, j + 1, e);
                tx_tensor_destroy(ctx, out[j]);
            }
            TX_DESTROY(ctx, xt, ut);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: LayerNormalization written as ReduceMean, Sub, Pow, Sqrt, Div, "
                      "Mul, Add is one step (axes attribute and input); not where d has "
                      "another reader")) {
        /* on x [2, 3, 8]: y1 over the last axis, gamma and beta [8]; y2
         * over the last two, gamma [3, 8], no beta; y3 as y1 but its d =
         * x - mean is an output too (stays 9 steps). Opset 13 (axes an
         * attribute) and 18 (an input). */
        float x[48], g1[8], b1[8], g2[24];
        /* row 0 of 8 nearly constant: its variance (~1e-6) is below eps,
         * which then decides its output */
        for (int i = 0; i < 48; i++)
            x[i] = i < 8 ? 1.0f + (float)(i % 3) * 1e-3f
                         : (float)((i * 7) % 13) / 3.0f - 2.0f + (float)(i / 16);
        for (int i = 0; i < 8; i++) {
            g1[i] = 0.5f + (float)i / 8.0f;
            b1[i] = (float)i / 4.0f - 1.0f;
        }
        for (int i = 0; i < 24; i++)
            g2[i] = (float)((i * 5) % 7) / 7.0f - 0.3f;
        const float eps = 1e-5f;
        double want[3][48], dref[48];
        for (int j = 0; j < 2; j++) { /* j 0: rows of 8; 1: rows of 24 */
            int len = j ? 24 : 8;
            for (int r = 0; r < 48 / len; r++) {
                double mean = 0, var = 0;
                for (int i = 0; i < len; i++)
                    mean += x[r * len + i] / (double)len;
                for (int i = 0; i < len; i++)
                    var += (x[r * len + i] - mean) * (x[r * len + i] - mean) / len;
                for (int i = 0; i < len; i++) {
                    int e = r * len + i;
                    double nv = (x[e] - mean) / sqrt(var + eps);
                    want[j][e] = j ? nv * g2[i] : nv * g1[i] + b1[i];
                    if (!j) {
                        want[2][e] = want[0][e];
                        dref[e] = x[e] - mean;
                    }
                }
            }
        }
        for (int opset = 13; opset <= 18 && !tx_t.cur_failed; opset += 5) {
            buf g = {0};
            init_f(&g, "g1", (int64_t[]){8}, 1, g1);
            init_f(&g, "b1", (int64_t[]){8}, 1, b1);
            init_f(&g, "g2", (int64_t[]){3, 8}, 2, g2);
            init_f(&g, "two", NULL, 0, (float[]){2});
            init_f(&g, "eps", NULL, 0, &eps);
            init_i64(&g, "ax1", (int64_t[]){1}, 1, (int64_t[]){-1});
            init_i64(&g, "ax2", (int64_t[]){2}, 1, (int64_t[]){1, 2});
            vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 3, 8}, 3);
            for (int j = 0; j < 3; j++) {
                char nm[9][8];
                for (int i = 0; i < 9; i++)
                    snprintf(nm[i], sizeof nm[i], "%c%d", "msedvqnpy"[i], j);
                const char *ax = j == 1 ? "ax2" : "ax1";
                bool in18 = opset == 18;
                for (int r = 0; r < 2; r++) { /* the mean of x, then of d^2 */
                    if (r) {
                        node(&g, "Sub", nm[1], (const char *[]){"x", nm[0]}, 2,
                             (const char *[]){nm[1]}, 1, NULL, 0);
                        node(&g, "Pow", nm[2], (const char *[]){nm[1], "two"}, 2,
                             (const char *[]){nm[2]}, 1, NULL, 0);
                    }
                    buf axes = attr_is("axes", j == 1 ? (int64_t[]){1, 2} : (int64_t[]){-1},
                                       j == 1 ? 2 : 1);
                    node(&g, "ReduceMean", r ? nm[3] : nm[0], (const char *[]){r ? nm[2] : "x", ax},
                         in18 ? 2 : 1, (const char *[]){r ? nm[3] : nm[0]}, 1, in18 ? NULL : &axes,
                         !in18);
                    free(axes.d); /* (node took it where it was given) */
                }
                node(&g, "Add", nm[4], (const char *[]){nm[3], "eps"}, 2, (const char *[]){nm[4]},
                     1, NULL, 0);
                node(&g, "Sqrt", nm[5], (const char *[]){nm[4]}, 1, (const char *[]){nm[5]}, 1,
                     NULL, 0);
                node(&g, "Div", nm[6], (const char *[]){nm[1], nm[5]}, 2, (const char *[]){nm[6]},
                     1, NULL, 0);
                node(&g, "Mul", nm[7], (const char *[]){nm[6], j == 1 ? "g2" : "g1"}, 2,
                     (const char *[]){j == 1 ? nm[8] : nm[7]}, 1, NULL, 0);
                if (j != 1)
                    node(&g, "Add", nm[8], (const char *[]){nm[7], "b1"}, 2,
                         (const char *[]){nm[8]}, 1, NULL, 0);
                vinfo(&g, 12, nm[8], TX_ONNX_FLOAT, (int64_t[]){2, 3, 8}, 3);
                if (j == 2)
                    vinfo(&g, 12, nm[1], TX_ONNX_FLOAT, (int64_t[]){2, 3, 8}, 3);
            }
            buf m = model(&g, opset);
            for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
                tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 11 : 26, fusion ? 15 : 0);
                if (!ss)
                    break;
                tx_tensor xt = mk(ctx, 3, (int64_t[]){2, 3, 8}, x), out[4];
                tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 4, out);
                CHECK(!st, "opset %d: %s", opset, tx_last_error(ctx));
                for (int j = 0; j < 4 && !st; j++) {
                    float got[48];
                    CHECK(!tx_tensor_read(ctx, out[j], got, sizeof got), "%s", tx_last_error(ctx));
                    double e = 0;
                    for (int i = 0; i < 48; i++)
                        e = fmax(e, fabs(got[i] - (j == 3 ? dref[i] : want[j][i])));
                    CHECK(e < 1e-4, "opset %d fusion %d: output %d off by %g", opset, fusion, j, e);
                    tx_tensor_destroy(ctx, out[j]);
                }
                tx_tensor_destroy(ctx, xt);
                tx_session_destroy(ss);
            }
            free(m.d);
        }
        tx_test_end();
    }
    if (tx_test_begin("fusion: x * Sigmoid(x) and x * Sigmoid(x * a) are one Swish, fused into "
                      "a conv before it; not where the sigmoid has another reader")) {
        /* x [1, 4, 5, 6]: y1 = c * Sigmoid(c), c = Conv1x1(x, W, B) (the
         * Swish fuses into the conv); y2 = Sigmoid(x * 1.702) * x (a Swish
         * step, alpha 1.702, operands swapped); y3 = x * s3 with s3 =
         * Sigmoid(x) an output too (stays). Unfused 8 steps, fused 4. */
        float x[120], w[12], b[3] = {0.5f, -1, 0.25f};
        for (int i = 0; i < 120; i++)
            x[i] = (float)((i * 7) % 17) / 2.0f - 4.0f;
        for (int i = 0; i < 12; i++)
            w[i] = (float)((i * 5) % 7) / 7.0f - 0.4f;
        double want[4][120] = {{0}};
        for (int p = 0; p < 30; p++)
            for (int o = 0; o < 3; o++) {
                double c = b[o];
                for (int i = 0; i < 4; i++)
                    c += (double)w[o * 4 + i] * x[i * 30 + p];
                want[0][o * 30 + p] = c / (1 + exp(-c));
            }
        for (int i = 0; i < 120; i++) {
            want[1][i] = x[i] / (1 + exp(-(double)(x[i] * 1.702f)));
            want[3][i] = 1 / (1 + exp(-(double)x[i]));
            want[2][i] = x[i] * want[3][i];
        }
        buf g = {0};
        init_f(&g, "W", (int64_t[]){3, 4, 1, 1}, 4, w);
        init_f(&g, "B", (int64_t[]){3}, 1, b);
        init_f(&g, "a", NULL, 0, (float[]){1.702f});
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 5, 6}, 4);
        node(&g, "Conv", "c", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"c"}, 1, NULL,
             0);
        node(&g, "Sigmoid", "s1", (const char *[]){"c"}, 1, (const char *[]){"s1"}, 1, NULL, 0);
        node(&g, "Mul", "y1", (const char *[]){"c", "s1"}, 2, (const char *[]){"y1"}, 1, NULL, 0);
        node(&g, "Mul", "xa", (const char *[]){"x", "a"}, 2, (const char *[]){"xa"}, 1, NULL, 0);
        node(&g, "Sigmoid", "s2", (const char *[]){"xa"}, 1, (const char *[]){"s2"}, 1, NULL, 0);
        node(&g, "Mul", "y2", (const char *[]){"s2", "x"}, 2, (const char *[]){"y2"}, 1, NULL, 0);
        node(&g, "Sigmoid", "s3", (const char *[]){"x"}, 1, (const char *[]){"s3"}, 1, NULL, 0);
        node(&g, "Mul", "y3", (const char *[]){"x", "s3"}, 2, (const char *[]){"y3"}, 1, NULL, 0);
        vinfo(&g, 12, "y1", TX_ONNX_FLOAT, (int64_t[]){1, 3, 5, 6}, 4);
        vinfo(&g, 12, "y2", TX_ONNX_FLOAT, (int64_t[]){1, 4, 5, 6}, 4);
        vinfo(&g, 12, "y3", TX_ONNX_FLOAT, (int64_t[]){1, 4, 5, 6}, 4);
        vinfo(&g, 12, "s3", TX_ONNX_FLOAT, (int64_t[]){1, 4, 5, 6}, 4);
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 4 : 8, fusion ? 4 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 5, 6}, x), out[4];
            tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 4, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int j = 0; j < 4 && !st; j++) {
                float got[120];
                size_t n = j == 0 ? 90 : 120;
                CHECK(!tx_tensor_read(ctx, out[j], got, n * sizeof(float)), "%s",
                      tx_last_error(ctx));
                double e = 0;
                for (size_t i = 0; i < n; i++)
                    e = fmax(e, fabs(got[i] - want[j][i]));
                CHECK(e < 1e-5, "fusion %d: output %d off by %g", fusion, j, e);
                tx_tensor_destroy(ctx, out[j]);
            }
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: Conv + Add(Concat(x, zeros)) takes x as a residual_pad "
                      "residual; not a Concat with a nonzero constant")) {
        /* BlazeFace's skip path where the channels grow: y1 = Relu(Conv(x)
         * + Concat(x, Z)) with x [1, 4, 6, 7], Z zeros [1, 2, 6, 7] (one
         * step: the conv reads x as its residual, channels 4 and 5 add 0);
         * y2 = Conv(x) + Concat(x, K), K nonzero (stays three steps: the
         * Concat runs after the conv, so it is no residual for it); y3 as
         * y1 on u [2, 4, 6, 7] (a batch: the front pads the residual
         * first). Unfused 11 steps, fused 5. */
        float x[2 * 168], w[6 * 36], b[6], zk[2 * 84] = {0};
        for (int i = 0; i < 2 * 168; i++)
            x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 6 * 36; i++)
            w[i] = (float)((i * 5) % 11) / 11.0f - 0.45f;
        for (int i = 0; i < 6; i++)
            b[i] = (float)i / 6.0f - 0.4f;
        float kv[84];
        for (int i = 0; i < 84; i++)
            kv[i] = (float)(i % 5) - 2.0f;
        double cv[2][252], want[3][2 * 252];
        for (int n = 0; n < 2; n++) {
            double xin[168];
            for (int i = 0; i < 168; i++)
                xin[i] = x[n * 168 + i];
            ref_conv(xin, 4, w, b, 6, 3, 1, 1, cv[n]);
        }
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < 252; i++) {
                double r = i < 168 ? x[n * 168 + i] : 0;
                want[2][n * 252 + i] = fmax(cv[n][i] + r, 0);
                if (n == 0) {
                    want[0][i] = fmax(cv[0][i] + r, 0);
                    want[1][i] = cv[0][i] + (i < 168 ? x[i] : kv[i - 168]);
                }
            }
        buf g = {0};
        init_f(&g, "W", (int64_t[]){6, 4, 3, 3}, 4, w);
        init_f(&g, "B", (int64_t[]){6}, 1, b);
        init_f(&g, "Z", (int64_t[]){1, 2, 6, 7}, 4, zk);
        init_f(&g, "Z2", (int64_t[]){2, 2, 6, 7}, 4, zk);
        init_f(&g, "K", (int64_t[]){1, 2, 6, 7}, 4, kv);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        vinfo(&g, 11, "u", TX_ONNX_FLOAT, (int64_t[]){2, 4, 6, 7}, 4);
        static const char *const nm[3][6] = {{"x", "Z", "c1", "p1", "a1", "y1"},
                                             {"x", "K", "c2", "p2", "y2", ""},
                                             {"u", "Z2", "c3", "p3", "a3", "y3"}};
        for (int j = 0; j < 3; j++) {
            const char *const *n = nm[j];
            node(&g, "Conv", n[2], (const char *[]){n[0], "W", "B"}, 3, (const char *[]){n[2]}, 1,
                 (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
            node(&g, "Concat", n[3], (const char *[]){n[0], n[1]}, 2, (const char *[]){n[3]}, 1,
                 (buf[]){attr_i("axis", 1)}, 1);
            node(&g, "Add", n[4], (const char *[]){n[2], n[3]}, 2, (const char *[]){n[4]}, 1, NULL,
                 0);
            if (j != 1)
                node(&g, "Relu", n[5], (const char *[]){n[4]}, 1, (const char *[]){n[5]}, 1, NULL,
                     0);
        }
        vinfo(&g, 12, "y1", TX_ONNX_FLOAT, (int64_t[]){1, 6, 6, 7}, 4);
        vinfo(&g, 12, "y2", TX_ONNX_FLOAT, (int64_t[]){1, 6, 6, 7}, 4);
        vinfo(&g, 12, "y3", TX_ONNX_FLOAT, (int64_t[]){2, 6, 6, 7}, 4);
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 5 : 11, fusion ? 6 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 6, 7}, x),
                      ut = mk(ctx, 4, (int64_t[]){2, 4, 6, 7}, x), out[3];
            tx_status st = tx_session_run(ss, (tx_feed[]){{"x", xt}, {"u", ut}}, 2, NULL, 3, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int j = 0; j < 3 && !st; j++) {
                float got[2 * 252];
                int n = j == 2 ? 2 * 252 : 252;
                CHECK(!tx_tensor_read(ctx, out[j], got, (size_t)n * sizeof(float)), "%s",
                      tx_last_error(ctx));
                double e = 0;
                for (int i = 0; i < n; i++)
                    e = fmax(e, fabs(got[i] - want[j][i]));
                CHECK(e < 1e-4, "fusion %d: y%d off by %g", fusion, j + 1, e);
                tx_tensor_destroy(ctx, out[j]);
            }
            TX_DESTROY(ctx, xt, ut);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: a Concat(x, zeros) residual the Add broadcasts, and a LayerNorm "
                      "whose eps raises the rank, stay as written")) {
        /* y1 = Conv(x, W [1, 4, 3, 3]) [1, 1, 6, 7] + Concat(v, Z) [1, 2, 6, 7]:
         * the Add broadcasts the conv's one channel, which residual_pad
         * cannot give (the Concat stays; the Add fuses as a plain residual,
         * added after the conv at run time since it broadcasts); y2 = the
         * decomposed LayerNorm of u [2, 8] with eps [1, 1, 1] (y2 is
         * [1, 2, 8]: its 8 steps stay). */
        float x[168], w[36], v[42], u[16];
        for (int i = 0; i < 168; i++)
            x[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 36; i++)
            w[i] = (float)((i * 5) % 11) / 11.0f - 0.45f;
        for (int i = 0; i < 42; i++)
            v[i] = (float)(i % 7) - 3.0f;
        for (int i = 0; i < 16; i++)
            u[i] = (float)((i * 3) % 5) - 2.0f;
        double c[42];
        {
            double xin[168];
            for (int i = 0; i < 168; i++)
                xin[i] = x[i];
            ref_conv(xin, 4, w, NULL, 1, 3, 1, 1, c);
        }
        double want1[84], want2[16];
        for (int i = 0; i < 84; i++)
            want1[i] = c[i % 42] + (i < 42 ? v[i] : 0);
        for (int r = 0; r < 2; r++) {
            double mean = 0, var = 0;
            for (int i = 0; i < 8; i++)
                mean += u[r * 8 + i] / 8.0;
            for (int i = 0; i < 8; i++)
                var += (u[r * 8 + i] - mean) * (u[r * 8 + i] - mean) / 8.0;
            for (int i = 0; i < 8; i++)
                want2[r * 8 + i] = (u[r * 8 + i] - mean) / sqrt(var + 1e-5) * 2.0;
        }
        buf g = {0};
        init_f(&g, "W", (int64_t[]){1, 4, 3, 3}, 4, w);
        float zeros[42] = {0};
        init_f(&g, "Z", (int64_t[]){1, 1, 6, 7}, 4, zeros);
        init_f(&g, "two", NULL, 0, (float[]){2});
        init_f(&g, "eps", (int64_t[]){1, 1, 1}, 3, (float[]){1e-5f});
        init_f(&g, "gam", (int64_t[]){8}, 1, (float[]){2, 2, 2, 2, 2, 2, 2, 2});
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 6, 7}, 4);
        vinfo(&g, 11, "v", TX_ONNX_FLOAT, (int64_t[]){1, 1, 6, 7}, 4);
        vinfo(&g, 11, "u", TX_ONNX_FLOAT, (int64_t[]){2, 8}, 2);
        node(&g, "Concat", "p", (const char *[]){"v", "Z"}, 2, (const char *[]){"p"}, 1,
             (buf[]){attr_i("axis", 1)}, 1);
        node(&g, "Conv", "c", (const char *[]){"x", "W"}, 2, (const char *[]){"c"}, 1,
             (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
        node(&g, "Add", "y1", (const char *[]){"c", "p"}, 2, (const char *[]){"y1"}, 1, NULL, 0);
        node(&g, "ReduceMean", "m", (const char *[]){"u"}, 1, (const char *[]){"m"}, 1,
             (buf[]){attr_is("axes", (int64_t[]){-1}, 1)}, 1);
        node(&g, "Sub", "d", (const char *[]){"u", "m"}, 2, (const char *[]){"d"}, 1, NULL, 0);
        node(&g, "Pow", "q", (const char *[]){"d", "two"}, 2, (const char *[]){"q"}, 1, NULL, 0);
        node(&g, "ReduceMean", "va", (const char *[]){"q"}, 1, (const char *[]){"va"}, 1,
             (buf[]){attr_is("axes", (int64_t[]){-1}, 1)}, 1);
        node(&g, "Add", "ve", (const char *[]){"va", "eps"}, 2, (const char *[]){"ve"}, 1, NULL, 0);
        node(&g, "Sqrt", "sd", (const char *[]){"ve"}, 1, (const char *[]){"sd"}, 1, NULL, 0);
        node(&g, "Div", "n", (const char *[]){"d", "sd"}, 2, (const char *[]){"n"}, 1, NULL, 0);
        node(&g, "Mul", "y2", (const char *[]){"n", "gam"}, 2, (const char *[]){"y2"}, 1, NULL, 0);
        vinfo(&g, 12, "y1", TX_ONNX_FLOAT, (int64_t[]){1, 2, 6, 7}, 4);
        vinfo(&g, 12, "y2", TX_ONNX_FLOAT, (int64_t[]){1, 2, 8}, 3);
        buf m = model(&g, 13);
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *ss = fusion_session(ctx, m, fusion, fusion ? 10 : 11, fusion ? 1 : 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, 6, 7}, x),
                      vt = mk(ctx, 4, (int64_t[]){1, 1, 6, 7}, v),
                      ut = mk(ctx, 2, (int64_t[]){2, 8}, u), out[2];
            tx_status st =
                tx_session_run(ss, (tx_feed[]){{"x", xt}, {"v", vt}, {"u", ut}}, 3, NULL, 2, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int j = 0; j < 2 && !st; j++) {
                int rank;
                int64_t shape[TX_MAX_RANK];
                tx_tensor_shape(ctx, out[j], &rank, shape, NULL);
                CHECK(rank == (j ? 3 : 4) && shape[1] == 2, "fusion %d: y%d of rank %d", fusion,
                      j + 1, rank);
                float got[84];
                int n = j ? 16 : 84;
                CHECK(!tx_tensor_read(ctx, out[j], got, (size_t)n * sizeof(float)), "%s",
                      tx_last_error(ctx));
                double e = 0;
                for (int i = 0; i < n; i++)
                    e = fmax(e, fabs(got[i] - (j ? want2[i] : want1[i])));
                CHECK(e < 1e-4, "fusion %d: y%d off by %g", fusion, j + 1, e);
                tx_tensor_destroy(ctx, out[j]);
            }
            TX_DESTROY(ctx, xt, vt, ut);
            tx_session_destroy(ss);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: a scalar that raises its input's rank stays a step before a "
                      "padded conv")) {
        /* v = Mul(x [1, 4, 7], s [1, 1, 1, 1]) is [1, 1, 4, 7], which the 2-D
         * conv reads; x itself is not a 2-D conv's input, so the conv must
         * not read x through an x_affine. Fused and unfused sessions agree. */
        float w[2 * 9], x[28];
        for (int i = 0; i < 2 * 9; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.45f;
        for (int i = 0; i < 28; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        buf g = {0};
        init_f(&g, "W", (int64_t[]){2, 1, 3, 3}, 4, w);
        init_f(&g, "s", (int64_t[]){1, 1, 1, 1}, 4, (float[]){1.5f});
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, 7}, 3);
        node(&g, "Mul", "m", (const char *[]){"x", "s"}, 2, (const char *[]){"v"}, 1, NULL, 0);
        node(&g, "Conv", "c", (const char *[]){"v", "W"}, 2, (const char *[]){"y"}, 1,
             (buf[]){attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 1);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 2, 4, 7}, 4);
        buf m = model(&g, 13);
        float got[2][56] = {{0}};
        for (int fusion = 0; fusion < 2 && !tx_t.cur_failed; fusion++) {
            tx_session *ss = fusion_session(ctx, m, fusion, 2, 0);
            if (!ss)
                break;
            tx_tensor xt = mk(ctx, 3, (int64_t[]){1, 4, 7}, x), out;
            tx_status st = tx_session_run(ss, &(tx_feed){"x", xt}, 1, NULL, 1, &out);
            CHECK(!st, "fusion %d: %s", fusion, tx_last_error(ctx));
            if (!st) {
                CHECK(!tx_tensor_read(ctx, out, got[fusion], sizeof got[0]), "%s",
                      tx_last_error(ctx));
                tx_tensor_destroy(ctx, out);
            }
            tx_tensor_destroy(ctx, xt);
            tx_session_destroy(ss);
        }
        double d = 0, big = 0;
        for (int i = 0; i < 56; i++) {
            d = fmax(d, fabs(got[1][i] - got[0][i]));
            big = fmax(big, fabs(got[0][i]));
        }
        CHECK(d < 1e-6 && big > 0.1, "fused vs unfused: %g (outputs up to %g)", d, big);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: a scale that broadcasts its input up to the conv's channels "
                      "stays a step")) {
        /* y = Conv1x1(Mul(x, s), W) with x [1, 1, 3, 4] and s [1, 3, 1, 1]:
         * the Mul makes the 3 channels the conv reads; folding s into W
         * would leave the conv reading x's one */
        static const float sv[3] = {1, -2, 0.5f}, w[6] = {1, 2, 3, -1, 0.5f, 2};
        float x[12];
        for (int i = 0; i < 12; i++)
            x[i] = (float)i - 5;
        buf g = {0};
        init_f(&g, "s", (int64_t[]){1, 3, 1, 1}, 4, sv);
        init_f(&g, "W", (int64_t[]){2, 3, 1, 1}, 4, w);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 1, 3, 4}, 4);
        node(&g, "Mul", "m", (const char *[]){"x", "s"}, 2, (const char *[]){"m"}, 1, NULL, 0);
        node(&g, "Conv", "c", (const char *[]){"m", "W"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 2, 3, 4}, 4);
        buf m = model(&g, 13);
        tx_session *s = fusion_session(ctx, m, 1, 2, 0);
        tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 1, 3, 4}, x), out = {0};
        tx_status st = s ? tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 1, &out) : 1;
        CHECK(!st, "%s", tx_last_error(ctx));
        float y[24];
        if (!st && !tx_tensor_read(ctx, out, y, sizeof y)) {
            int bad = 0;
            for (int o = 0; o < 2; o++)
                for (int p = 0; p < 12; p++) {
                    double want = 0;
                    for (int c = 0; c < 3; c++)
                        want += (double)w[o * 3 + c] * sv[c] * x[p];
                    bad += fabs(y[o * 12 + p] - want) > 1e-5;
                }
            CHECK(bad == 0, "%d of 24 wrong", bad);
        }
        TX_DESTROY(ctx, xt, out);
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: Mul, Sub and Div by scalars in a row become one Affine step")) {
        /* y = (1 - 3x) / 4 on x [2, 3]: one step (alpha -0.75, beta 0.25);
         * z = x * 5 alone stays a Mul; w = Mul(x, 2) + r (r a graph input,
         * not a constant) stays two steps */
        buf g = {0};
        init_f(&g, "three", (int64_t[]){1}, 1, (float[]){3});
        init_f(&g, "one", NULL, 0, (float[]){1});
        init_f(&g, "four", (int64_t[]){1, 1}, 2, (float[]){4});
        init_f(&g, "five", NULL, 0, (float[]){5});
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        vinfo(&g, 11, "r", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        node(&g, "Mul", "m", (const char *[]){"x", "three"}, 2, (const char *[]){"m"}, 1, NULL, 0);
        node(&g, "Sub", "s", (const char *[]){"one", "m"}, 2, (const char *[]){"s"}, 1, NULL, 0);
        node(&g, "Div", "d", (const char *[]){"s", "four"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        node(&g, "Mul", "m5", (const char *[]){"x", "five"}, 2, (const char *[]){"z"}, 1, NULL, 0);
        node(&g, "Mul", "m2", (const char *[]){"x", "four"}, 2, (const char *[]){"m2"}, 1, NULL, 0);
        node(&g, "Add", "a2", (const char *[]){"m2", "r"}, 2, (const char *[]){"w"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        vinfo(&g, 12, "w", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        buf m = model(&g, 13);
        static const float x[6] = {-2, -0.5f, 0, 1, 2.5f, 100}, r[6] = {1, 2, 3, 4, 5, 6};
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            tx_session *s = fusion_session(ctx, m, fusion, fusion ? 4 : 6, fusion ? 2 : 0);
            if (!s)
                break;
            float y[3][6];
            tx_tensor out[3];
            tx_tensor xt = mk(ctx, 2, (int64_t[]){2, 3}, x), rt = mk(ctx, 2, (int64_t[]){2, 3}, r);
            tx_status st = tx_session_run(s, (tx_feed[]){{"x", xt}, {"r", rt}}, 2, NULL, 3, out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int o = 0; o < 3 && !st; o++) {
                CHECK(!tx_tensor_read(ctx, out[o], y[o], sizeof y[o]), "%s", tx_last_error(ctx));
                tx_tensor_destroy(ctx, out[o]);
            }
            int bad = 0;
            for (int i = 0; i < 6 && !st; i++)
                bad += fabs(y[0][i] - (1 - 3.0 * x[i]) / 4) > 1e-5 * fmax(1, fabs(x[i])) ||
                       y[1][i] != 5 * x[i] || y[2][i] != 4 * x[i] + r[i];
            CHECK(bad == 0, "fusion %d: %d of 6 wrong", fusion, bad);
            TX_DESTROY(ctx, xt, rt);
            tx_session_destroy(s);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: scalar arithmetic on a shape stays on the host")) {
        /* y = Reshape(x, Cast(Div(Mul(Cast(Shape(x)), 0.5), 0.5))) on x [N,
         * 6]: the planner computes the shape on the host at every run; the
         * Mul and Div must not become an Affine, which would run on the
         * device and be read back */
        buf g = {0};
        init_f(&g, "half", NULL, 0, (float[]){0.5f});
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){-1, 6}, 2);
        node(&g, "Shape", "sh", (const char *[]){"x"}, 1, (const char *[]){"sh"}, 1, NULL, 0);
        node(&g, "Cast", "cf", (const char *[]){"sh"}, 1, (const char *[]){"shf"}, 1,
             (buf[]){attr_i("to", TX_ONNX_FLOAT)}, 1);
        node(&g, "Mul", "m", (const char *[]){"shf", "half"}, 2, (const char *[]){"m"}, 1, NULL, 0);
        node(&g, "Div", "d", (const char *[]){"m", "half"}, 2, (const char *[]){"d"}, 1, NULL, 0);
        node(&g, "Cast", "ci", (const char *[]){"d"}, 1, (const char *[]){"shi"}, 1,
             (buf[]){attr_i("to", TX_ONNX_INT64)}, 1);
        node(&g, "Reshape", "r", (const char *[]){"x", "shi"}, 2, (const char *[]){"y"}, 1, NULL,
             0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, 6}, 2);
        buf m = model(&g, 13);
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s) ==
                  TX_STATUS_OK,
              "%s", tx_last_error(ctx));
        float x[18], y[18];
        for (int i = 0; i < 18; i++)
            x[i] = (float)i;
        for (int n = 3; s && n >= 2 && !tx_t.cur_failed; n--) {
            tx_tensor xt = mk(ctx, 2, (int64_t[]){n, 6}, x), out = {0};
            tx_status st = tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 1, &out);
            CHECK(!st && !tx_tensor_read(ctx, out, y, sizeof(float) * 6 * (size_t)n), "%s",
                  tx_last_error(ctx));
            for (int i = 0; i < 6 * n && !st; i++)
                CHECK(y[i] == x[i], "n %d: y[%d] = %g", n, i, y[i]);
            TX_DESTROY(ctx, xt, out);
        }
        tx_session_stats ss;
        if (s) {
            tx_session_stats_get(s, &ss);
            CHECK(ss.readbacks == 0, "%llu readbacks", (unsigned long long)ss.readbacks);
        }
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("fusion: MatMul + bias + residual Add (+ Relu) into one matmul")) {
        float w[36], b[6], x[5 * 6], r[6] = {1, -1, 0.5f, -0.5f, 2, -2};
        for (int i = 0; i < 36; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < 6; i++)
            b[i] = (float)i / 10.0f - 0.25f;
        for (int i = 0; i < 30; i++)
            x[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        buf m = residual_mm_model(w, b);
        float got[2][2][30];
        for (int fusion = 1; fusion >= 0 && !tx_t.cur_failed; fusion--) {
            /* unfused: 2 matmuls, 3 adds, relu */
            tx_session *s = fusion_session(ctx, m, fusion, fusion ? 2 : 6, fusion ? 4 : 0);
            if (!s)
                break;
            run_xr(ctx, s, mk(ctx, 2, (int64_t[]){5, 6}, x), mk(ctx, 1, (int64_t[]){6}, r),
                   got[fusion][0], got[fusion][1], sizeof got[0][0]);
        }
        double err = 0;
        for (int o = 0; o < 2 && !tx_t.cur_failed; o++)
            for (int i = 0; i < 30; i++) {
                err = fmax(err, fabs(got[1][o][i] - got[0][o][i]));
                double want = b[i % 6] + x[i]; /* y from a plain-C reference */
                for (int k = 0; k < 6; k++)
                    want += (double)x[(i / 6) * 6 + k] * w[k * 6 + i % 6];
                if (o == 0)
                    err = fmax(err, fabs(got[1][0][i] - fmax(0, want)));
            }
        CHECK(err < 1e-5, "fused vs unfused and the reference: max difference %g", err);
        free(m.d);
        tx_test_end();
    }

    if (tx_test_begin("session: a 1x1 Conv on a symbolic width runs as a matmul at every width")) {
        /* x [1, 128, 3, W] with W symbolic: the conv is W1 [128, 128] @ x
         * [128, 3W] (enough channels for the matmul: gpu/conv.c) by the
         * matmul's row tiles padded for any N (3W = 24, 15, 3, 9, 21: whole
         * texels, not, and fewer than 4), the bias and Relu fused; each
         * width's runs compile no program that the first width's did not */
        enum { C = 128, M = 128, H = 3 };
        static float w[M * C];
        float b[M];
        for (int i = 0; i < M * C; i++)
            w[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
        for (int i = 0; i < M; i++)
            b[i] = (float)i / 16.0f - 0.5f;
        buf g = {0};
        init_f(&g, "W", (int64_t[]){M, C, 1, 1}, 4, w);
        init_f(&g, "B", (int64_t[]){M}, 1, b);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, C, H, -1}, 4);
        node(&g, "Conv", "c", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"c"}, 1, NULL,
             0);
        node(&g, "Relu", "relu", (const char *[]){"c"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, M, H, -1}, 4);
        buf m = model(&g, 13);
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s) ==
                  TX_STATUS_OK,
              "%s", tx_last_error(ctx));
        static const int widths[] = {8, 5, 1, 3, 7};
        float x[C * H * 8], y[M * H * 8];
        tx_stats first = {0};
        for (int wi = 0; s && wi < 5 && !tx_t.cur_failed; wi++) {
            int W = widths[wi], n = H * W;
            for (int i = 0; i < C * n; i++)
                x[i] = (float)(((i + wi) * 5) % 11) / 11.0f - 0.5f;
            /* until 3 runs took the row tiles (a software rasterizer's small
             * signature waits up to 64 calls for its steady program) */
            int tiled = 0;
            for (int run = 0; run < 100 && tiled < 3 && !tx_t.cur_failed; run++) {
                tx_stats before, after;
                tx_ctx_stats(ctx, &before);
                tx_tensor xt = mk(ctx, 4, (int64_t[]){1, C, H, W}, x), out = {0};
                tx_status st = tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 1, &out);
                CHECK(!st, "width %d: %s", W, tx_last_error(ctx));
                CHECK(!st && !tx_tensor_read(ctx, out, y, sizeof(float) * (size_t)(M * n)),
                      "width %d: read: %s", W, tx_last_error(ctx));
                tx_ctx_stats(ctx, &after);
                double err = 0;
                for (int o = 0; o < M; o++)
                    for (int p = 0; p < n; p++) {
                        double want = b[o];
                        for (int c = 0; c < C; c++)
                            want += (double)w[o * C + c] * x[c * n + p];
                        err = fmax(err, fabs(y[o * n + p] - fmax(0, want)));
                    }
                CHECK(err < 1e-5, "width %d, run %d: max error %g", W, run, err);
                /* the matmul: 1 draw in a signature's first calls, then the
                 * row tiles and their interleave; the conv's own path is 3+ */
                CHECK(after.draws - before.draws <= 2, "width %d, run %d: %llu draws", W, run,
                      (unsigned long long)(after.draws - before.draws));
                tiled += after.draws - before.draws == 2;
                TX_DESTROY(ctx, xt, out);
            }
            CHECK(tiled == 3, "width %d: %d runs of 100 took the row tiles", W, tiled);
            tx_stats now;
            tx_ctx_stats(ctx, &now);
            if (wi == 0)
                first = now;
            CHECK(now.generic_compiles == first.generic_compiles,
                  "width %d compiled %llu generic programs more than the first width", W,
                  (unsigned long long)(now.generic_compiles - first.generic_compiles));
        }
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }

    if (tx_test_begin("session: a depthwise Conv on a symbolic width is one draw where rows are "
                      "whole texels")) {
        /* x [1, 8, 5, W] with W symbolic, a depthwise 3x3 (pads 1) + bias +
         * Relu: at W = 8, 12, 16 (rows of whole texels) the one-pass route
         * (gpu/conv.c dw_direct: one draw once its taps are packed), at
         * W = 6 the pack, compute and unpack passes; the widths of whole
         * texels share their programs, and every width matches the
         * definition */
        enum { C = 8, H = 5, K = 3, WMAX = 16 };
        float w[C * K * K], b[C];
        for (int i = 0; i < C * K * K; i++)
            w[i] = (float)((i * 5) % 7) / 7.0f - 0.4f;
        for (int i = 0; i < C; i++)
            b[i] = (float)i / 8.0f - 0.3f;
        buf g = {0};
        init_f(&g, "W", (int64_t[]){C, 1, K, K}, 4, w);
        init_f(&g, "B", (int64_t[]){C}, 1, b);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, C, H, -1}, 4);
        node(&g, "Conv", "c", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"c"}, 1,
             (buf[]){attr_i("group", C), attr_is("pads", (int64_t[]){1, 1, 1, 1}, 4)}, 2);
        node(&g, "Relu", "relu", (const char *[]){"c"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, C, H, -1}, 4);
        buf m = model(&g, 13);
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s) ==
                  TX_STATUS_OK,
              "%s", tx_last_error(ctx));
        static const int widths[] = {8, 12, 6, 16, 8};
        float x[C * H * WMAX], y[C * H * WMAX];
        uint64_t gen_before = 0;
        for (int wi = 0; s && wi < 5 && !tx_t.cur_failed; wi++) {
            int W = widths[wi], n = H * W;
            for (int i = 0; i < C * n; i++)
                x[i] = (float)(((i + wi) * 3) % 11) / 11.0f - 0.5f;
            unsigned long long draws = 0;
            for (int run = 0; run < 4 && !tx_t.cur_failed; run++) {
                tx_stats before, after;
                tx_ctx_stats(ctx, &before);
                tx_tensor xt = mk(ctx, 4, (int64_t[]){1, C, H, W}, x), out = {0};
                tx_status st = tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 1, &out);
                CHECK(!st, "width %d: %s", W, tx_last_error(ctx));
                CHECK(!st && !tx_tensor_read(ctx, out, y, sizeof(float) * (size_t)(C * n)),
                      "width %d: read: %s", W, tx_last_error(ctx));
                tx_ctx_stats(ctx, &after);
                draws = after.draws - before.draws;
                double err = 0;
                for (int c = 0; c < C; c++)
                    for (int oy = 0; oy < H; oy++)
                        for (int ox = 0; ox < W; ox++) {
                            double want = b[c];
                            for (int ky = 0; ky < K; ky++)
                                for (int kx = 0; kx < K; kx++) {
                                    int iy = oy + ky - 1, ix = ox + kx - 1;
                                    if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                        want += (double)w[(c * K + ky) * K + kx] *
                                                x[(c * H + iy) * W + ix];
                                }
                            err = fmax(err, fabs(y[(c * H + oy) * W + ox] - fmax(0, want)));
                        }
                CHECK(err < 1e-5, "width %d, run %d: max error %g", W, run, err);
                TX_DESTROY(ctx, xt, out);
            }
            /* the last run's draws: the conv (Relu fused into it) */
            if (W % 4 == 0)
                CHECK(draws == 1, "width %d: %llu draws a run, want the one pass", W, draws);
            else
                CHECK(draws >= 3, "width %d: %llu draws a run, want the packing passes", W, draws);
            /* after the first width of whole texels, and of the packing
             * route's width, no width compiles a generic program */
            tx_stats now;
            tx_ctx_stats(ctx, &now);
            if (wi == 1 || wi >= 3)
                CHECK(now.generic_compiles == gen_before,
                      "width %d compiled %llu generic programs more than the widths before", W,
                      (unsigned long long)(now.generic_compiles - gen_before));
            gen_before = now.generic_compiles;
        }
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }

    if (tx_test_begin("session: per-channel Div and Sub on a symbolic width, one program each")) {
        /* y = x / s (s [1, 3, 1, 1]) and z = t - x (t [3, 1, 1]) on x [1, 3,
         * 2, W]: the per-channel modes of binary.glsl (b, then a per
         * channel) with 2W elements per channel, 4, 6, 2 and 12: one
         * element for a texel's 4 or one per lane, a test of a parameter
         * in one program; no width compiles a generic program the first did
         * not */
        static const float sv[3] = {2, -0.5f, 4}, tv[3] = {1, -2, 0.25f};
        buf g = {0};
        init_f(&g, "s", (int64_t[]){1, 3, 1, 1}, 4, sv);
        init_f(&g, "t", (int64_t[]){3, 1, 1}, 3, tv);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 3, 2, -1}, 4);
        node(&g, "Div", "d", (const char *[]){"x", "s"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        node(&g, "Sub", "u", (const char *[]){"t", "x"}, 2, (const char *[]){"z"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 3, 2, -1}, 4);
        vinfo(&g, 12, "z", TX_ONNX_FLOAT, (int64_t[]){1, 3, 2, -1}, 4);
        buf m = model(&g, 13);
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, m.d, m.n, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s) ==
                  TX_STATUS_OK,
              "%s", tx_last_error(ctx));
        static const int widths[] = {2, 3, 1, 6};
        tx_stats first = {0};
        for (int wi = 0; s && wi < 4 && !tx_t.cur_failed; wi++) {
            int W = widths[wi], n = 3 * 2 * W;
            float x[36], y[36], z[36];
            for (int run = 0; run < 6 && !tx_t.cur_failed; run++) {
                for (int i = 0; i < n; i++)
                    x[i] = (float)(((i + wi + run) * 5) % 11) - 5;
                tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 3, 2, W}, x), out[2] = {{0}};
                tx_status st = tx_session_run(s, &(tx_feed){"x", xt}, 1, NULL, 2, out);
                CHECK(!st, "width %d: %s", W, tx_last_error(ctx));
                CHECK(!st && !tx_tensor_read(ctx, out[0], y, sizeof(float) * (size_t)n) &&
                          !tx_tensor_read(ctx, out[1], z, sizeof(float) * (size_t)n),
                      "width %d: read: %s", W, tx_last_error(ctx));
                int bad = 0;
                for (int i = 0; i < n && !st; i++) {
                    int c = i / (2 * W);
                    bad += fabsf(y[i] - x[i] / sv[c]) > 1e-6f || z[i] != tv[c] - x[i];
                }
                CHECK(bad == 0, "width %d, run %d: %d of %d elements wrong", W, run, bad, n);
                TX_DESTROY(ctx, xt, out[0], out[1]);
            }
            tx_stats now;
            tx_ctx_stats(ctx, &now);
            if (wi == 0)
                first = now;
            CHECK(now.generic_compiles == first.generic_compiles,
                  "width %d compiled %llu generic programs more than the first width", W,
                  (unsigned long long)(now.generic_compiles - first.generic_compiles));
        }
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }

    if (tx_test_begin("session: static shapes through Reduce, Resize, Slice, Concat, Transpose, "
                      "Squeeze, Reshape and Conv on a symbolic height")) {
        /* x [1, 4, H, 6], H symbolic, outputs declared without shapes: what
         * the planner infers for each (-1: unknown) is what a later binary
         * op's fast mode rests on (vary masks); a run at H = 3 and 5 must
         * agree with every dim it says. Reshape to a fed shape: rank 4,
         * every dim unknown, the conv's channels taken from its weights */
        static const float sc[4] = {1, 1, 2, 0.5f}, w[20] = {1, 2, 3, 4, 5};
        buf g = {0};
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 4, -1, 6}, 4);
        vinfo(&g, 11, "shp", TX_ONNX_INT64, (int64_t[]){4}, 1); /* Reshape's, fed */
        init_f(&g, "sc", (int64_t[]){4}, 1, sc);
        init_f(&g, "W", (int64_t[]){5, 4, 1, 1}, 4, w);
        init_i64(&g, "st", (int64_t[]){1}, 1, (int64_t[]){1});
        init_i64(&g, "en", (int64_t[]){1}, 1, (int64_t[]){3});
        init_i64(&g, "ax1", (int64_t[]){1}, 1, (int64_t[]){1});
        init_i64(&g, "ax3", (int64_t[]){1}, 1, (int64_t[]){3});
        node(&g, "ReduceMean", "r", (const char *[]){"x"}, 1, (const char *[]){"r"}, 1,
             (buf[]){attr_is("axes", (int64_t[]){3}, 1)}, 1);
        node(&g, "Resize", "u", (const char *[]){"x", "", "sc"}, 3, (const char *[]){"u"}, 1, NULL,
             0);
        node(&g, "Slice", "sl", (const char *[]){"x", "st", "en", "ax1"}, 4, (const char *[]){"sl"},
             1, NULL, 0);
        node(&g, "Concat", "cat", (const char *[]){"x", "sl"}, 2, (const char *[]){"cat"}, 1,
             (buf[]){attr_i("axis", 1)}, 1);
        node(&g, "Transpose", "tr", (const char *[]){"x"}, 1, (const char *[]){"tr"}, 1,
             (buf[]){attr_is("perm", (int64_t[]){0, 2, 3, 1}, 4)}, 1);
        node(&g, "Squeeze", "sq", (const char *[]){"r", "ax3"}, 2, (const char *[]){"sq"}, 1, NULL,
             0);
        node(&g, "Reshape", "rs", (const char *[]){"x", "shp"}, 2, (const char *[]){"rs"}, 1, NULL,
             0);
        node(&g, "Conv", "cv", (const char *[]){"rs", "W"}, 2, (const char *[]){"cv"}, 1, NULL, 0);
        static const char *outs[] = {"r", "u", "sl", "cat", "tr", "sq", "cv"};
        static const int64_t want[7][5] = {{4, 1, 4, -1, 1},  {4, 1, 4, -1, 3}, {4, 1, 2, -1, 6},
                                           {4, 1, 6, -1, 6},  {4, 1, -1, 6, 4}, {3, 1, 4, -1},
                                           {4, -1, 5, -1, -1}}; /* rank, dims */
        for (int i = 0; i < 7; i++)
            vinfo(&g, 12, outs[i], TX_ONNX_FLOAT, NULL, -1);
        buf m = model(&g, 13);
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, m.d, m.n, &(tx_session_desc){0}, &s) == TX_STATUS_OK, "%s",
              tx_last_error(ctx));
        for (int i = 0; s && i < 7; i++) {
            tx_value_info vi;
            CHECK(!tx_session_output_info(s, i, &vi), "%s", tx_last_error(ctx));
            bool ok = vi.rank == want[i][0];
            for (int d = 0; ok && d < vi.rank; d++)
                ok = vi.shape[d] == want[i][1 + d];
            CHECK(ok, "%s: inferred rank %d, dims %lld %lld %lld %lld", outs[i], vi.rank,
                  (long long)vi.shape[0], (long long)vi.shape[1], (long long)vi.shape[2],
                  (long long)vi.shape[3]);
        }
        for (int h = 3; s && h <= 5 && !tx_t.cur_failed; h += 2) {
            float x[4 * 5 * 6];
            for (int i = 0; i < 4 * h * 6; i++)
                x[i] = (float)(i % 7);
            tx_tensor xt = mk(ctx, 4, (int64_t[]){1, 4, h, 6}, x), shp, out[7];
            tx_tensor_create(ctx,
                             &(tx_tensor_desc){.rank = 1,
                                               .shape = {4},
                                               .dtype = TX_DTYPE_INT32,
                                               .data = (int32_t[]){1, 4, h, 6}},
                             &shp);
            tx_status st = tx_session_run(s, (tx_feed[]){{"x", xt}, {"shp", shp}}, 2, NULL, 7, out);
            CHECK(!st, "H %d: %s", h, tx_last_error(ctx));
            for (int i = 0; i < 7 && !st; i++) {
                int r;
                int64_t sh[TX_MAX_RANK];
                tx_tensor_shape(ctx, out[i], &r, sh, NULL);
                bool ok = r == want[i][0];
                for (int d = 0; ok && d < r; d++)
                    ok = want[i][1 + d] < 0 || sh[d] == want[i][1 + d];
                CHECK(ok, "H %d: %s has rank %d, dims %lld %lld %lld", h, outs[i], r,
                      (long long)sh[0], (long long)sh[1], (long long)sh[2]);
                tx_tensor_destroy(ctx, out[i]);
            }
            TX_DESTROY(ctx, xt, shp);
        }
        tx_session_destroy(s);
        free(m.d);
        tx_test_end();
    }

    if (tx_test_begin("session: node attributes and inputs are checked; features named")) {
        static const struct {
            const char *op;
            int rank, n_in, n_out;
            int64_t shape[5];
            const char *ins[3];
            const char *attr; /* which attribute the case sets */
            tx_status want;
            const char *needle;
        } k[] = {
            {"Conv",
             4,
             2,
             1,
             {1, 1, 5, 5},
             {"x", "W"},
             "auto_pad",
             TX_STATUS_INVALID_ARGUMENT,
             "auto_pad \"BOGUS\""},
            {"Conv",
             4,
             2,
             1,
             {1, 1, 5, 5},
             {"x", "W"},
             "kernel_shape",
             TX_STATUS_SHAPE_MISMATCH,
             "kernel_shape does not match W"},
            {"Conv", 5, 2, 1, {1, 1, 2, 5, 5}, {"x", "W"}, "", TX_STATUS_SHAPE_MISMATCH, "W 4-D"},
            {"MaxPool",
             5,
             1,
             2,
             {1, 1, 2, 5, 5},
             {"x"},
             "kernel",
             TX_STATUS_INVALID_ARGUMENT,
             "kernel_shape has 2 entries, want 3"},
            {"MaxPool",
             4,
             1,
             1,
             {1, 1, 5, 5},
             {"x"},
             "",
             TX_STATUS_INVALID_ARGUMENT,
             "kernel_shape is required"},
            {"Split", 2, 1, 2, {5, 3}, {"x"}, "", TX_STATUS_INVALID_ARGUMENT, "equal parts"},
            {"Pad",
             2,
             2,
             1,
             {4, 3},
             {"x", "pads3"},
             "",
             TX_STATUS_INVALID_ARGUMENT,
             "pads has 3 entries for 2 axes"},
            {"Resize",
             2,
             1,
             1,
             {4, 3},
             {"x"},
             "",
             TX_STATUS_INVALID_ARGUMENT,
             "exactly one of scales and sizes"},
            {"Transpose",
             2,
             1,
             1,
             {4, 3},
             {"x"},
             "perm",
             TX_STATUS_INVALID_ARGUMENT,
             "perm has 3 entries for rank 2"},
        };
        for (size_t c = 0; c < TX_COUNTOF(k); c++) {
            buf a[1];
            int na = 0;
            if (!strcmp(k[c].attr, "auto_pad"))
                a[na++] = attr_s("auto_pad", "BOGUS");
            else if (!strcmp(k[c].attr, "kernel_shape"))
                a[na++] = attr_is("kernel_shape", (int64_t[]){2, 2}, 2);
            else if (!strcmp(k[c].attr, "kernel"))
                a[na++] = attr_is("kernel_shape", (int64_t[]){2, 2}, 2);
            else if (!strcmp(k[c].attr, "perm"))
                a[na++] = attr_is("perm", (int64_t[]){0, 1, 2}, 3);
            buf m = one_node_model(k[c].op, k[c].shape, k[c].rank, k[c].ins, k[c].n_in, k[c].n_out,
                                   a, na, 13);
            tx_session *s = NULL;
            tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
            if (!st) { /* the executors check when the node runs */
                tx_tensor tx = mk(ctx, k[c].rank, k[c].shape, NULL), out[2];
                st = tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, k[c].n_out, out);
                if (!st)
                    for (int o = 0; o < k[c].n_out; o++)
                        tx_tensor_destroy(ctx, out[o]);
                tx_tensor_destroy(ctx, tx);
                tx_session_destroy(s);
            }
            CHECK(st == k[c].want && strstr(tx_last_error(ctx), k[c].needle),
                  "case %zu (%s): %s, \"%s\" (want %s, \"%s\")", c, k[c].op, tx_status_name(st),
                  tx_last_error(ctx), tx_status_name(k[c].want), k[c].needle);
            free(m.d);
        }
        tx_test_end();
    }
    if (tx_test_begin("session: the erf GELU pattern becomes one Gelu, fused into MatMul")) {
        enum { M = 3, K = 4, N = 8 };
        float w[K * N], x[M * K];
        for (int i = 0; i < K * N; i++)
            w[i] = (float)((i * 5) % 9) / 3.0f - 1.3f;
        for (int i = 0; i < M * K; i++)
            x[i] = (float)((i * 7) % 5) / 2.0f - 1.0f;
        for (int variant = 0; variant < 2; variant++) {
            buf m = gelu_model(K, N, w, variant == 1);
            tx_session *s;
            tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
            CHECK(!st, "%s", tx_last_error(ctx));
            if (!st) {
                tx_session_stats ss;
                tx_session_stats_get(s, &ss);
                CHECK(ss.steps == 1, "variant %d: %d steps (want one matmul with gelu)", variant,
                      ss.steps);
                tx_tensor tx = mk(ctx, 2, (int64_t[]){M, K}, x), ty;
                st = tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 1, &ty);
                CHECK(!st, "%s", tx_last_error(ctx));
                if (!st) {
                    float y[M * N];
                    tx_tensor_read(ctx, ty, y, sizeof y);
                    double err = 0;
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            double h = 0;
                            for (int k = 0; k < K; k++)
                                h += (double)x[i * K + k] * w[k * N + j];
                            double want = 0.5 * h * (1 + erf(h / sqrt(2.0)));
                            err = fmax(err, fabs(want - y[i * N + j]));
                        }
                    CHECK(err < 1e-4, "variant %d: max error %g", variant, err);
                    tx_tensor_destroy(ctx, ty);
                }
                tx_tensor_destroy(ctx, tx);
                tx_session_destroy(s);
            }
            free(m.d);
        }
        tx_test_end();
    }
    if (tx_test_begin("session: after a context loss the restore re-uploads the weights")) {
        enum { M = 3, K = 4, N = 5 };
        float w[K * N], bias[N], x[M * K], want[M * N];
        for (int i = 0; i < K * N; i++)
            w[i] = (float)((i * 3) % 7) / 7.0f - 0.3f;
        for (int i = 0; i < N; i++)
            bias[i] = 0.25f * (float)i - 0.5f;
        for (int i = 0; i < M * K; i++)
            x[i] = (float)((i * 5) % 9) / 9.0f - 0.2f;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float acc = bias[j];
                for (int k = 0; k < K; k++)
                    acc += x[i * K + k] * w[k * N + j];
                want[i * N + j] = acc < 0 ? 0 : acc;
            }
        buf m = mlp_model(M, K, N, w, bias);
        tx_stats start;
        tx_ctx_stats(ctx, &start);
        tx_session *s = NULL, *s2 = NULL;
        /* weights in textures: the GPU's (CPU sessions keep theirs through a
         * loss, device_test) */
        const tx_session_desc gpu = {.device = TX_DEVICE_GPU};
        tx_status st = tx_session_create(ctx, m.d, m.n, &gpu, &s);
        CHECK(!st, "create: %s", tx_last_error(ctx));
        /* a second session on the same context: each has its own hook */
        st = st ? st : tx_session_create(ctx, m.d, m.n, &gpu, &s2);
        CHECK(!st, "create 2: %s", tx_last_error(ctx));
        const char *fy = "y";
        for (int phase = 0; phase < 3 && !st; phase++) {
            if (phase == 1) { /* simulated loss: the engine drops every GL object */
                tx_ctx_mark_lost(ctx);
                tx_tensor t;
                EXPECT_ST(tx_session_run(s, &(tx_feed){"x", (tx_tensor){0}}, 1, &fy, 1, &t),
                          TX_STATUS_CONTEXT_LOST, "lost");
                tx_stats ls;
                tx_ctx_stats(ctx, &ls);
                CHECK(ls.live_texture_bytes == 0, "%llu bytes live while lost",
                      (unsigned long long)ls.live_texture_bytes);
                CHECK(!tx_ctx_restore(ctx), "restore: %s", tx_last_error(ctx));
                tx_stats rs;
                tx_ctx_stats(ctx, &rs);
                /* both sessions' weights are back before any run */
                CHECK(rs.live_texture_bytes > 0 && rs.live_tensors == ls.live_tensors,
                      "after restore: %llu bytes, %llu tensors (before %llu)",
                      (unsigned long long)rs.live_texture_bytes,
                      (unsigned long long)rs.live_tensors, (unsigned long long)ls.live_tensors);
            }
            for (int which = 0; which < 2; which++) {
                tx_tensor xt = mk(ctx, 2, (int64_t[]){M, K}, x), y;
                tx_stats a, b;
                tx_ctx_stats(ctx, &a);
                st = tx_session_run(which ? s2 : s, &(tx_feed){"x", xt}, 1, &fy, 1, &y);
                tx_ctx_stats(ctx, &b);
                CHECK(!st, "phase %d run: %s", phase, tx_last_error(ctx));
                if (st)
                    break;
                CHECK(b.bytes_uploaded == a.bytes_uploaded, "phase %d: the run uploaded %llu bytes",
                      phase, (unsigned long long)(b.bytes_uploaded - a.bytes_uploaded));
                float got[M * N];
                CHECK(!tx_tensor_read(ctx, y, got, sizeof got), "%s", tx_last_error(ctx));
                for (int i = 0; i < M * N; i++)
                    CHECK(fabsf(got[i] - want[i]) < 1e-5f, "phase %d [%d] = %g, want %g", phase, i,
                          (double)got[i], (double)want[i]);
                TX_DESTROY(ctx, y, xt);
            }
        }
        tx_session_destroy(s);
        tx_session_destroy(s2);
        tx_stats end;
        tx_ctx_stats(ctx, &end);
        CHECK(end.live_tensors == start.live_tensors, "%llu tensors left",
              (unsigned long long)(end.live_tensors - start.live_tensors));
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("session: memory plan frees each intermediate after its last use")) {
        enum { LEN = 12, NUM = 64 * 64 };
        buf m = chain_model(LEN, NUM);
        tx_session *s;
        tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
        CHECK(!st, "%s", tx_last_error(ctx));
        if (!st) {
            float *x = malloc(NUM * 4), *y = malloc(NUM * 4);
            for (int i = 0; i < NUM; i++)
                x[i] = (float)(i % 7) - 3;
            tx_tensor tx = mk(ctx, 1, (int64_t[]){NUM}, x), ty;
            tx_ctx_trim(ctx);
            tx_stats a, b;
            tx_ctx_stats(ctx, &a);
            tx_session_stats ss;
            tx_session_stats_get(s, &ss);
            /* the session's device holds its intermediates (TEXEL_DEVICE) */
            bool cpu = ss.device == TX_DEVICE_CPU;
            uint64_t base = cpu ? a.live_host_bytes : a.live_texture_bytes;
            const char *fy = "y";
            st = tx_session_run(s, &(tx_feed){"x", tx}, 1, &fy, 1, &ty);
            CHECK(!st, "%s", tx_last_error(ctx));
            tx_ctx_stats(ctx, &b);
            uint64_t one = NUM * 4;
            /* live: the output; pooled: at most the two textures a step holds */
            uint64_t live = cpu ? b.live_host_bytes : b.live_texture_bytes;
            CHECK(live - base == one, "live %s bytes grew by %llu", cpu ? "host" : "texture",
                  (unsigned long long)(live - base));
            CHECK(b.pooled_texture_bytes <= 2 * one, "pooled %llu bytes for %d intermediates",
                  (unsigned long long)b.pooled_texture_bytes, LEN - 1);
            if (!st) {
                tx_tensor_read(ctx, ty, y, NUM * 4);
                int bad = 0;
                for (int i = 0; i < NUM; i++) /* abs, neg, abs, ... ends with neg */
                    bad += y[i] != -fabsf(x[i]);
                CHECK(bad == 0, "%d wrong values", bad);
                tx_tensor_destroy(ctx, ty);
            }
            tx_tensor_destroy(ctx, tx);
            free(x);
            free(y);
            tx_session_destroy(s);
        }
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("session: unsupported ops are all named; bad graphs are statuses")) {
        buf g = {0};
        int64_t d4[4] = {1, 3, 8, 8};
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, d4, 4);
        node(&g, "FancyConv", "c1", (const char *[]){"x"}, 1, (const char *[]){"a"}, 1, NULL, 0);
        node(&g, "Relu", "r", (const char *[]){"a"}, 1, (const char *[]){"b"}, 1, NULL, 0);
        node(&g, "WeirdPool", "p1", (const char *[]){"b"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, d4, 4);
        buf m = model(&g, 13);
        tx_session *s;
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_UNSUPPORTED,
                  "\"FancyConv\", \"WeirdPool\" (first at nodes \"c1\", \"p1\")");
        free(m.d);
        /* a cycle and a dangling input */
        buf g2 = {0};
        vinfo(&g2, 11, "x", TX_ONNX_FLOAT, d4, 4);
        node(&g2, "Add", "a1", (const char *[]){"x", "c"}, 2, (const char *[]){"b"}, 1, NULL, 0);
        node(&g2, "Relu", "r1", (const char *[]){"b"}, 1, (const char *[]){"c"}, 1, NULL, 0);
        vinfo(&g2, 12, "c", TX_ONNX_FLOAT, d4, 4);
        m = model(&g2, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_INVALID_ARGUMENT, "cycle");
        free(m.d);
        buf g3 = {0};
        vinfo(&g3, 11, "x", TX_ONNX_FLOAT, d4, 4);
        node(&g3, "Relu", "r1", (const char *[]){"nope"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g3, 12, "y", TX_ONNX_FLOAT, d4, 4);
        m = model(&g3, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_INVALID_ARGUMENT,
                  "\"nope\"");
        free(m.d);
        /* Nodes the arity checks reject (found by the fuzzers): an empty name
         * stands for an absent optional input, never a required one (Gemm's
         * B reached shape inference as a NULL value), and a node needs an
         * output (shape inference of IsNaN wrote through out[0], past the
         * node's values). Each graph also has a Relu x -> y. */
        static const struct {
            const char *op, *ins[3];
            int n_in, n_out;
            const char *want;
        } bad_arity[] = {
            {"Gemm", {"x", ""}, 2, 1, "Gemm node \"n\" has 1 inputs (takes 2..3)"},
            {"Add", {"", "x"}, 2, 1, "Add node \"n\": input 0 is required but empty"},
            {"Gemm", {"x", "", "x"}, 3, 1, "Gemm node \"n\": input 1 is required but empty"},
            {"Not", {"x"}, 1, 0, "Not node \"n\" has no outputs"},
        };
        for (size_t c = 0; c < TX_COUNTOF(bad_arity); c++) {
            buf g5 = {0};
            vinfo(&g5, 11, "x", TX_ONNX_FLOAT, (int64_t[]){4, 4}, 2);
            node(&g5, bad_arity[c].op, "n", bad_arity[c].ins, bad_arity[c].n_in,
                 (const char *[]){"z"}, bad_arity[c].n_out, NULL, 0);
            node(&g5, "Relu", "r", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, NULL, 0);
            vinfo(&g5, 12, "y", TX_ONNX_FLOAT, (int64_t[]){4, 4}, 2);
            m = model(&g5, 13);
            EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_INVALID_ARGUMENT,
                      bad_arity[c].want);
            free(m.d);
        }
        /* Gemm fed shapes that do not multiply reports the node at run time
         * (the declared shape leaves the inner dim open) */
        buf g4 = {0};
        vinfo(&g4, 11, "a", TX_ONNX_FLOAT, (int64_t[]){2, -1}, 2);
        vinfo(&g4, 11, "b", TX_ONNX_FLOAT, (int64_t[]){4, 5}, 2);
        node(&g4, "Gemm", "g1", (const char *[]){"a", "b"}, 2, (const char *[]){"y"}, 1,
             (buf[]){attr_f("alpha", 2.0f)}, 1);
        vinfo(&g4, 12, "y", TX_ONNX_FLOAT, (int64_t[]){2, 5}, 2);
        m = model(&g4, 13);
        tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
        CHECK(!st, "%s", tx_last_error(ctx));
        if (!st) {
            tx_tensor a = mk(ctx, 2, (int64_t[]){2, 3}, NULL),
                      b = mk(ctx, 2, (int64_t[]){4, 5}, NULL), y;
            tx_feed f[2] = {{"a", a}, {"b", b}};
            EXPECT_ST(tx_session_run(s, f, 2, NULL, 1, &y), TX_STATUS_SHAPE_MISMATCH,
                      "Gemm node \"g1\"");
            TX_DESTROY(ctx, a, b);
            tx_session_destroy(s);
        }
        free(m.d);
        CHECK(tx_gl_error() == 0, "no GL error escaped");
        tx_test_end();
    }
    if (tx_test_begin("session: declared shapes that contradict the weights are statuses")) {
        float w[4 * 5] = {0};
        tx_session *s = NULL;
        /* the input's declared width cannot meet the weight's height */
        buf g = {0};
        init_f(&g, "W", (int64_t[]){4, 5}, 2, w);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        node(&g, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){2, 5}, 2);
        buf m = model(&g, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "MatMul node \"mm\": A [2, 3] and B [4, 5] do not multiply");
        CHECK(s == NULL, "a failed create hands out no session");
        free(m.d);
        /* the output is declared other than the weights make it */
        buf g2 = {0};
        init_f(&g2, "W", (int64_t[]){3, 4}, 2, w);
        vinfo(&g2, 11, "x", TX_ONNX_FLOAT, (int64_t[]){-1, 3}, 2);
        node(&g2, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g2, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, 5}, 2);
        m = model(&g2, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "MatMul node \"mm\" makes \"y\" [-1, 4] from its inputs, but the model "
                  "declares it [-1, 5]");
        free(m.d);
        /* an intermediate's value_info of another rank */
        buf g3 = {0};
        init_f(&g3, "W", (int64_t[]){3, 4}, 2, w);
        vinfo(&g3, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
        node(&g3, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"h"}, 1, NULL, 0);
        node(&g3, "Relu", "r", (const char *[]){"h"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g3, 13, "h", TX_ONNX_FLOAT, (int64_t[]){8}, 1);
        vinfo(&g3, 12, "y", TX_ONNX_FLOAT, (int64_t[]){2, 4}, 2);
        m = model(&g3, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "makes \"h\" [2, 4] from its inputs, but the model declares it [8]");
        free(m.d);
        /* a Conv whose weights want 2 input channels, fed a 3-channel input */
        buf g4 = {0};
        init_f(&g4, "K", (int64_t[]){1, 2, 1, 1}, 4, w);
        vinfo(&g4, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 3, 4, 4}, 4);
        node(&g4, "Conv", "c", (const char *[]){"x", "K"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g4, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 1, 4, 4}, 4);
        m = model(&g4, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "Conv node \"c\": conv: w must be [M, C/group = 3, ...]");
        free(m.d);
        /* a 3x3 Conv without padding, declared as if it kept the size (the
         * batch and the image size are dynamic: only the channels and the
         * kernel are known, and those already contradict) */
        float k33[2 * 3 * 3 * 3] = {0};
        buf g4b = {0};
        init_f(&g4b, "K", (int64_t[]){2, 3, 3, 3}, 4, k33);
        vinfo(&g4b, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 3, 4, 4}, 4);
        node(&g4b, "Conv", "c", (const char *[]){"x", "K"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g4b, 12, "y", TX_ONNX_FLOAT, (int64_t[]){1, 2, 4, 4}, 4);
        m = model(&g4b, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "Conv node \"c\" makes \"y\" [1, 2, 2, 2] from its inputs, but the model "
                  "declares it [1, 2, 4, 4]");
        free(m.d);
        buf g4c = {0}; /* the same with a dynamic batch and size: 3 channels in, 5 declared out */
        init_f(&g4c, "K", (int64_t[]){2, 3, 3, 3}, 4, k33);
        vinfo(&g4c, 11, "x", TX_ONNX_FLOAT, (int64_t[]){-1, 3, -1, -1}, 4);
        node(&g4c, "Conv", "c", (const char *[]){"x", "K"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g4c, 12, "y", TX_ONNX_FLOAT, (int64_t[]){-1, 5, -1, -1}, 4);
        m = model(&g4c, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "makes \"y\" [-1, 2, -1, -1] from its inputs, but the model declares it "
                  "[-1, 5, -1, -1]");
        free(m.d);
        /* IR 3 lists initializers as inputs: the declared shape and type must
         * be the initializer's */
        for (int elem = 0; elem < 2; elem++) {
            buf g5 = {0};
            init_f(&g5, "W", (int64_t[]){3, 4}, 2, w);
            vinfo(&g5, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 3}, 2);
            vinfo(&g5, 11, "W", elem ? TX_ONNX_INT64 : TX_ONNX_FLOAT,
                  elem ? (int64_t[]){3, 4} : (int64_t[]){3, 3}, 2);
            node(&g5, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"y"}, 1, NULL,
                 0);
            vinfo(&g5, 12, "y", TX_ONNX_FLOAT, (int64_t[]){2, 4}, 2);
            m = model(&g5, 13);
            if (elem)
                EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_DTYPE_MISMATCH,
                          "input \"W\" is declared int64 but its initializer is float");
            else
                EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                          "input \"W\" is declared [3, 3] but its initializer is [3, 4]");
            free(m.d);
        }
        /* a Reshape whose constant shape does not hold the weights' elements */
        buf g6 = {0};
        init_f(&g6, "W", (int64_t[]){4, 5}, 2, w);
        init_i64(&g6, "shape", (int64_t[]){2}, 1, (int64_t[]){3, 7});
        node(&g6, "Reshape", "rs", (const char *[]){"W", "shape"}, 2, (const char *[]){"y"}, 1,
             NULL, 0);
        vinfo(&g6, 12, "y", TX_ONNX_FLOAT, (int64_t[]){3, 7}, 2);
        m = model(&g6, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_SHAPE_MISMATCH,
                  "cannot reshape [4, 5] to [3, 7]");
        free(m.d);
        /* a declared dim past 2^40 elements */
        buf g7 = {0};
        vinfo(&g7, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1 << 30, 1 << 30}, 2);
        node(&g7, "Relu", "r", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g7, 12, "y", TX_ONNX_FLOAT, NULL, -1);
        m = model(&g7, 13);
        EXPECT_ST(tx_session_create(ctx, m.d, m.n, NULL, &s), TX_STATUS_TOO_LARGE,
                  "value \"x\" is declared with dims beyond 2^40 elements");
        free(m.d);
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        CHECK(st.live_tensors == 0, "%llu tensors leaked", (unsigned long long)st.live_tensors);
        tx_test_end();
    }
    if (tx_test_begin("session: truncated models never crash tx_session_create")) {
        float w[12] = {0}, b[4] = {0};
        buf m = mlp_model(2, 3, 4, w, b);
        int ok = 0, failed = 0;
        for (size_t len = 0; len < m.n; len++) {
            tx_session *s;
            if (tx_session_create(ctx, m.d, len, NULL, &s) == TX_STATUS_OK) {
                ok++;
                tx_session_destroy(s);
            } else {
                failed++;
                CHECK(tx_last_error(ctx)[0] != 0, "a failure without a message at %zu", len);
            }
        }
        CHECK(failed > 0, "ok %d failed %d", ok, failed);
        /* corrupted copies: plan-time code (folding, fusion) meets odd graphs */
        uint8_t *c = malloc(m.n);
        uint64_t r = 99;
        for (int it = 0; it < 600; it++) {
            memcpy(c, m.d, m.n);
            for (int f = 0; f < 1 + it % 3; f++) {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                c[r % m.n] = (uint8_t)(r >> 24);
            }
            tx_session *s;
            if (tx_session_create(ctx, c, m.n, NULL, &s) == TX_STATUS_OK)
                tx_session_destroy(s);
        }
        free(c);
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        CHECK(st.live_tensors == 0, "%llu tensors leaked", (unsigned long long)st.live_tensors);
        free(m.d);
        tx_test_end();
    }
    if (tx_test_begin("session: a big MatMul on a software rasterizer warms its specialized "
                      "program at load")) {
        /* the suite's context (a second tx_ctx on the same GL context would
         * leave this one's cached GL bindings stale) */
        tx_ctx *fc = ctx;
        enum { M = 256, K = 512, N = 256 }; /* 2^25 multiply-adds: cache.c's "big" */
        float *w = malloc((size_t)K * N * 4), *x = malloc((size_t)M * K * 4),
              *y = malloc((size_t)M * N * 4);
        for (int i = 0; i < K * N; i++)
            w[i] = (float)((i * 7) % 13) * 0.125f - 0.75f;
        for (int i = 0; i < M * K; i++)
            x[i] = (float)((i * 5) % 11) * 0.25f - 1.25f;
        buf g = {0};
        init_f(&g, "W", (int64_t[]){K, N}, 2, w);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){M, K}, 2);
        node(&g, "MatMul", "mm", (const char *[]){"x", "W"}, 2, (const char *[]){"y"}, 1, NULL, 0);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, (int64_t[]){M, N}, 2);
        buf mm = model(&g, 13);
        tx_session *s = NULL;
        if (fc) {
            tx_caps caps;
            tx_ctx_caps(fc, &caps);
            bool soft = tx_software_renderer(caps.renderer);
            bool counted = tx_ctx_specialize_after(fc) > 0; /* else k rules every draw */
            tx_stats a, b, c;
            tx_ctx_stats(fc, &a);
            CHECK(tx_session_create(fc, mm.d, mm.n, &(tx_session_desc){.device = TX_DEVICE_GPU},
                                    &s) == TX_STATUS_OK,
                  "%s", tx_last_error(fc));
            tx_ctx_stats(fc, &b);
            tx_tensor tx = mk(fc, 2, (int64_t[]){M, K}, x), out = {0};
            CHECK(s && tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 1, &out) == TX_STATUS_OK,
                  "%s", tx_last_error(fc));
            tx_ctx_stats(fc, &c);
            /* software: the specialized program at load, served from the first
             * run, nothing compiled in it; a GPU: generic programs first */
            CHECK(!counted || b.specialized_compiles - a.specialized_compiles == (soft ? 1u : 0u),
                  "%s: %llu specialized programs at load", caps.renderer,
                  (unsigned long long)(b.specialized_compiles - a.specialized_compiles));
            CHECK(!counted || c.specialized_runs - b.specialized_runs == (soft ? 1u : 0u),
                  "%s: %llu specialized runs in the first run", caps.renderer,
                  (unsigned long long)(c.specialized_runs - b.specialized_runs));
            CHECK(!counted || (c.generic_compiles == b.generic_compiles &&
                               c.specialized_compiles == b.specialized_compiles),
                  "the first run compiled %llu generic, %llu specialized programs",
                  (unsigned long long)(c.generic_compiles - b.generic_compiles),
                  (unsigned long long)(c.specialized_compiles - b.specialized_compiles));
            CHECK(out.id && tx_tensor_read(fc, out, y, (size_t)M * N * 4) == TX_STATUS_OK, "read");
            double err = 0;
            for (int i = 0; out.id && i < M; i += 31)
                for (int j = 0; j < N; j++) {
                    double acc = 0;
                    for (int k = 0; k < K; k++)
                        acc += (double)x[i * K + k] * w[k * N + j];
                    err = fmax(err, fabs(acc - y[i * N + j]) / (1 + fabs(acc)));
                }
            CHECK(err < 1e-5, "error %g", err);
            if (out.id)
                tx_tensor_destroy(fc, out);
            tx_tensor_destroy(fc, tx);
            tx_session_destroy(s);
        }
        free(mm.d);
        free(w);
        free(x);
        free(y);
        tx_test_end();
    }
    if (tx_test_begin("session: float16 weights stay halves on the host and on the way up")) {
        enum { NW = F16_M * F16_C * 9, NW2 = F16_M * F16_M, NX = F16_C * 36, NY = F16_M * 36 };
        uint16_t *w = malloc(NW * 2), *w2 = malloc(NW2 * 2), bn[4 * F16_M];
        uint32_t seed = 7;
        for (int i = 0; i < NW + NW2; i++) { /* halves in ±[2^-9, 2^-1), subnormals aside */
            seed = seed * 1664525u + 1013904223u;
            uint16_t h = (uint16_t)(0x1800 + (seed >> 16) % 0x2000) | (seed >> 31 ? 0x8000 : 0);
            if (i < NW)
                w[i] = h;
            else
                w2[i - NW] = h;
        }
        for (int i = 0; i < F16_M; i++) {
            bn[i] = (uint16_t)(0x3800 + i * 8);         /* scale 0.5.. */
            bn[F16_M + i] = (uint16_t)(0x2000 + i);     /* bias */
            bn[2 * F16_M + i] = (uint16_t)(0x1000 + i); /* mean */
            bn[3 * F16_M + i] = (uint16_t)(0x3c00 + i); /* var 1.. */
        }
        float x[NX];
        for (int i = 0; i < NX; i++)
            x[i] = (float)((i * 7) % 17) / 8.0f - 1.0f;
        buf m16 = half_weights_model(true, w, w2, bn), m32 = half_weights_model(false, w, w2, bn);
        uint64_t up_f32 = 0;
        struct {
            const char *name;
            tx_ctx_desc desc;
            tx_device device;
        } runs[] = {{"gpu", {0}, TX_DEVICE_GPU},
                    {"gpu float16 storage", {.float16_storage = true}, TX_DEVICE_GPU},
                    {"cpu", {0}, TX_DEVICE_CPU}};
        for (size_t r = 0; r < TX_COUNTOF(runs); r++) {
            tx_ctx *fc = NULL;
            if (tx_host_new_ctx(g_host, &runs[r].desc, &fc)) {
                CHECK(0, "%s: no context: %s", runs[r].name, tx_last_error(fc));
                continue;
            }
            float y[2][NY];
            uint64_t host[2] = {0}, up[2] = {0};
            for (int h = 0; h < 2; h++) {
                buf *mm = h ? &m32 : &m16;
                tx_session *s = NULL;
                tx_stats a, b;
                tx_ctx_stats(fc, &a);
                tx_status st = tx_session_create(fc, mm->d, mm->n,
                                                 &(tx_session_desc){.device = runs[r].device}, &s);
                tx_ctx_stats(fc, &b);
                CHECK(!st, "%s: create: %s", runs[r].name, tx_last_error(fc));
                if (st)
                    break;
                tx_session_stats ss;
                tx_session_stats_get(s, &ss);
                host[h] = ss.host_bytes;
                up[h] = b.bytes_uploaded - a.bytes_uploaded;
                /* the Casts are views; BatchNormalization and Relu fuse */
                CHECK(ss.steps == 4 && ss.fused == 2, "%s: %d steps, %d fused", runs[r].name,
                      ss.steps, ss.fused);
                tx_tensor tx = {0}, out = {0};
                tx_tensor_create(
                    fc,
                    &(tx_tensor_desc){
                        .rank = 4, .shape = {1, F16_C, 6, 6}, .data = x, .device = runs[r].device},
                    &tx);
                tx_tensor w2_out = {0};
                tx_tensor outs2[2];
                st = tx_session_run(s, &(tx_feed){"x", tx}, 1, (const char *[]){"y", "W2"}, 2,
                                    outs2);
                if (!st) {
                    out = outs2[0];
                    w2_out = outs2[1];
                }
                CHECK(!st && !tx_tensor_read(fc, out, y[h], sizeof y[h]), "%s: run: %s",
                      runs[r].name, tx_last_error(fc));
                /* the constant output reads back as its halves' values */
                float *w2v = malloc(NW2 * sizeof *w2v);
                int w2_bad = st ? NW2 : 0;
                if (!st && tx_tensor_read(fc, w2_out, w2v, NW2 * sizeof *w2v))
                    w2_bad = NW2;
                for (int i = 0; !w2_bad && i < NW2; i++)
                    w2_bad += w2v[i] != tx_onnx_half_to_float(w2[i]);
                CHECK(w2_bad == 0, "%s: W2 output: %d values off", runs[r].name, w2_bad);
                free(w2v);
                if (!st)
                    tx_tensor_destroy(fc, w2_out);
                /* W went into the BatchNormalization fold: no weight to train */
                tx_tensor wt;
                CHECK(tx_session_weight(s, "W", &wt) == TX_STATUS_INVALID_ARGUMENT &&
                          strstr(tx_last_error(fc), "folded into") &&
                          strstr(tx_last_error(fc), "no_fusion"),
                      "%s: folded W: %s", runs[r].name, tx_last_error(fc));
                TX_DESTROY(fc, tx, out);
                tx_session_destroy(s);
                if (r == 0 && h == 0) {
                    /* against no fusion: the fold's float32 W is there, the
                     * file's halves of W (a block of their own) are not */
                    st = tx_session_create(
                        fc, mm->d, mm->n,
                        &(tx_session_desc){.device = runs[r].device, .no_fusion = true}, &s);
                    CHECK(!st, "no_fusion: %s", tx_last_error(fc));
                    if (!st) {
                        tx_session_stats_get(s, &ss);
                        int64_t more = (int64_t)host[0] - (int64_t)ss.host_bytes;
                        int64_t want = NW * 4 - NW * 2 + F16_M * 4; /* + the folded bias */
                        CHECK(more >= want - 512 && more <= want + 512,
                              "fused keeps %lld B more than no_fusion, want %lld", (long long)more,
                              (long long)want);
                        tx_session_destroy(s);
                    }
                }
            }
            /* the same values give the same results, to the bit */
            CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0, "%s: float16 and float32 weights differ",
                  runs[r].name);
            /* W2's halves are kept, not widened: 2 bytes a value less. W is
             * replaced by the BN fold's result in both (the file's W freed);
             * that is float32, but for float16 storage halves as well. The
             * arena's shared blocks are the same. */
            int64_t saved = (int64_t)host[1] - (int64_t)host[0];
            int64_t want = NW2 * 2 + (runs[r].desc.float16_storage ? NW * 2 : 0);
            CHECK(saved >= want - 256 && saved <= want + 256,
                  "%s: host bytes %llu (float16) vs %llu (float32), %lld saved, want %lld",
                  runs[r].name, (unsigned long long)host[0], (unsigned long long)host[1],
                  (long long)saved, (long long)want);
            printf("  %s: host bytes %llu (float16 weights) vs %llu (float32)\n", runs[r].name,
                   (unsigned long long)host[0], (unsigned long long)host[1]);
            /* each model's weights go up as the storage holds them: halves
             * for float16 storage, half the bytes of float32 storage's */
            if (runs[r].device == TX_DEVICE_GPU)
                CHECK(up[0] == up[1] && up[0] > 0, "%s: uploaded %llu vs %llu", runs[r].name,
                      (unsigned long long)up[0], (unsigned long long)up[1]);
            if (r == 0)
                up_f32 = up[0];
            else if (r == 1)
                CHECK(up[0] * 2 == up_f32, "float16 storage uploaded %llu B, float32 %llu B",
                      (unsigned long long)up[0], (unsigned long long)up_f32);
            /* against float64 math on the same weights */
            double err = 0, big = 0;
            for (int o = 0; o < F16_M; o++)
                for (int p = 0; p < 36; p++) {
                    double acc = 0;
                    for (int k = 0; k < F16_M; k++) {
                        double sc = tx_onnx_half_to_float(bn[k]) /
                                    sqrt(tx_onnx_half_to_float(bn[3 * F16_M + k]) + 1e-5);
                        double c = 0;
                        for (int ci = 0; ci < F16_C; ci++)
                            for (int ky = 0; ky < 3; ky++)
                                for (int kx = 0; kx < 3; kx++) {
                                    int yy = p / 6 + ky - 1, xx = p % 6 + kx - 1;
                                    if (yy < 0 || yy >= 6 || xx < 0 || xx >= 6)
                                        continue;
                                    c += x[ci * 36 + yy * 6 + xx] *
                                         (double)tx_onnx_half_to_float(
                                             w[((k * F16_C + ci) * 3 + ky) * 3 + kx]);
                                }
                        c = (c - tx_onnx_half_to_float(bn[2 * F16_M + k])) * sc +
                            tx_onnx_half_to_float(bn[F16_M + k]);
                        acc += (c > 0 ? c : 0) * tx_onnx_half_to_float(w2[o * F16_M + k]);
                    }
                    err = fmax(err, fabs(acc - y[0][o * 36 + p]));
                    big = fmax(big, fabs(acc));
                }
            double tol = runs[r].desc.float16_storage ? 4e-3 * fmax(big, 1) : 1e-5 * fmax(big, 1);
            CHECK(err <= tol, "%s: max error %g (largest %g)", runs[r].name, err, big);
            tx_ctx_destroy(fc);
        }
        free(m16.d);
        free(m32.d);
        free(w);
        free(w2);
        tx_test_end();
    }
    if (tx_test_begin("session: a GPU session issues its generic programs at load")) {
        /* a fresh context on the same GL context: no program of an earlier
         * test is cached (last: the shared context's cached GL state is stale
         * after another context has drawn) */
        tx_ctx *fc = NULL;
        CHECK(tx_host_new_ctx(g_host, &(tx_ctx_desc){0}, &fc) == TX_STATUS_OK, "context");
        const tx_session_desc gpu = {.device = TX_DEVICE_GPU};
        buf st_m = one_node_model("Relu", (int64_t[]){2, 3, 4}, 3, (const char *[]){"x"}, 1, 1,
                                  NULL, 0, 13);
        buf dyn_m = mlp_model(-1, 4, 5, (float[20]){0}, (float[5]){0});
        tx_session *s = NULL;
        tx_stats a, b, c;
        for (int no_load = 0; fc && no_load < 2; no_load++) {
            setenv("TEXEL_NO_LOAD_COMPILE", no_load ? "1" : "0", 1);
            tx_ctx_stats(fc, &a);
            CHECK(tx_session_create(fc, st_m.d, st_m.n, &gpu, &s) == TX_STATUS_OK, "%s",
                  tx_last_error(fc));
            if (!s)
                break;
            tx_ctx_stats(fc, &b);
            tx_session_stats ss;
            tx_session_stats_get(s, &ss);
            float x[24], y[24];
            for (int i = 0; i < 24; i++)
                x[i] = (float)i - 11.5f;
            tx_tensor tx = mk(fc, 3, (int64_t[]){2, 3, 4}, x), out;
            CHECK(tx_session_run(s, &(tx_feed){"x", tx}, 1, NULL, 1, &out) == TX_STATUS_OK, "%s",
                  tx_last_error(fc));
            tx_ctx_stats(fc, &c);
            if (no_load == 0) {
                CHECK(b.generic_compiles == a.generic_compiles + 1 && b.draws == a.draws &&
                          ss.load_compile_ms > 0,
                      "at load: %llu generic programs, %llu draws, %.3f ms",
                      (unsigned long long)(b.generic_compiles - a.generic_compiles),
                      (unsigned long long)(b.draws - a.draws), ss.load_compile_ms);
                CHECK(c.generic_compiles == b.generic_compiles,
                      "the first run compiled %llu generic programs",
                      (unsigned long long)(c.generic_compiles - b.generic_compiles));
            } else { /* the program is cached by now; nothing is issued at load */
                CHECK(ss.load_compile_ms == 0 && b.generic_compiles == a.generic_compiles,
                      "TEXEL_NO_LOAD_COMPILE=1: %.3f ms", ss.load_compile_ms);
            }
            CHECK(tx_tensor_read(fc, out, y, sizeof y) == TX_STATUS_OK, "read");
            for (int i = 0; i < 24; i++)
                CHECK(y[i] == (x[i] < 0 ? 0 : x[i]), "y[%d] = %g", i, y[i]);
            TX_DESTROY(fc, tx, out);
            tx_session_destroy(s);
            s = NULL;
        }
        unsetenv("TEXEL_NO_LOAD_COMPILE");
        /* a dynamic input shape: nothing to compile for yet */
        if (fc) {
            tx_ctx_stats(fc, &a);
            CHECK(tx_session_create(fc, dyn_m.d, dyn_m.n, &gpu, &s) == TX_STATUS_OK, "%s",
                  tx_last_error(fc));
            tx_ctx_stats(fc, &b);
            tx_session_stats ss = {0};
            tx_session_stats_get(s, &ss);
            CHECK(ss.load_compile_ms == 0 && b.generic_compiles == a.generic_compiles,
                  "dynamic input: %.3f ms at load", ss.load_compile_ms);
            tx_session_destroy(s);
            tx_ctx_destroy(fc);
        }
        free(st_m.d);
        free(dyn_m.d);
        tx_test_end();
    }
    tx_host_close(g_host, ctx);
    return tx_test_finish();
}
