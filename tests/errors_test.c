/* Bad input gets a status and a message naming the op and the shapes; no GL
 * error escapes; the context stays usable afterwards. */
#include <math.h>

#include "expect.h"
#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "tensors.h"

static tx_host *g_host;

static tx_ctx *open_ctx(tx_ctx_desc d) {
    return tx_test_open_ctx(d, &g_host);
}

static tx_tensor mk_desc(tx_ctx *ctx, tx_tensor_desc d) {
    tx_tensor t = {0};
    if (tx_tensor_create(ctx, &d, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}

static tx_tensor mk(tx_ctx *ctx, int rank, int64_t d0, int64_t d1, int64_t d2) {
    return mk_desc(ctx, (tx_tensor_desc){.rank = rank, .shape = {d0, d1, d2}});
}

static tx_tensor mk4(tx_ctx *ctx, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    return mk_desc(ctx, (tx_tensor_desc){.rank = 4, .shape = {d0, d1, d2, d3}});
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_ctx *ctx = open_ctx((tx_ctx_desc){.max_texture_size = 64, .memory_budget = 1 << 20});
    tx_tensor y = {0};

    if (tx_test_begin("binary shapes that do not broadcast")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 3, 5, 0);
        EXPECT(tx_binary(ctx, TX_OP_ADD, a, b, &y), TX_STATUS_SHAPE_MISMATCH, "add", "[3, 4]",
               "[3, 5]");
        TX_DESTROY(ctx, a, b);
        tx_test_end();
    }
    if (tx_test_begin("matmul inner dims differ")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 5, 6, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "matmul", "[3, 4]",
               "[5, 6]");
        TX_DESTROY(ctx, a, b);
        tx_test_end();
    }
    if (tx_test_begin("matmul batch dims do not broadcast; bad bias; bad activation")) {
        tx_tensor a = mk(ctx, 3, 2, 3, 4), b = mk(ctx, 3, 3, 4, 5), c = mk(ctx, 1, 4, 0, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "matmul", "batch");
        tx_tensor b2 = mk(ctx, 2, 4, 5, 0);
        EXPECT(tx_matmul(ctx, a, b2, &(tx_matmul_desc){.bias = c}, &y), TX_STATUS_SHAPE_MISMATCH,
               "bias", "[4]");
        EXPECT(tx_matmul(ctx, a, b2, &(tx_matmul_desc){.activation = TX_OP_ADD}, &y),
               TX_STATUS_INVALID_ARGUMENT, "activation");
        TX_DESTROY(ctx, a, b, b2, c);
        tx_test_end();
    }
    if (tx_test_begin("rank above 6")) {
        tx_tensor t;
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 7}, &t), TX_STATUS_RANK_TOO_HIGH,
               "rank 7", "6");
        tx_tensor a = mk(ctx, 1, 8, 0, 0), v;
        EXPECT(tx_tensor_reshape(ctx, a, 7, (int64_t[]){1, 1, 1, 1, 1, 1, 8}, &v),
               TX_STATUS_RANK_TOO_HIGH, "reshape");
        tx_tensor_destroy(ctx, a);
        tx_test_end();
    }
    if (tx_test_begin("negative and overflowing dims")) {
        tx_tensor t;
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, -1}}, &t),
               TX_STATUS_INVALID_ARGUMENT, "negative", "[3, -1]");
        EXPECT(
            tx_tensor_create(
                ctx, &(tx_tensor_desc){.rank = 3, .shape = {1LL << 40, 1LL << 40, 1LL << 40}}, &t),
            TX_STATUS_TOO_LARGE, "too many elements");
        tx_test_end();
    }
    if (tx_test_begin("stale handles")) {
        tx_tensor a = mk(ctx, 1, 4, 0, 0), b = mk(ctx, 1, 4, 0, 0);
        tx_tensor_destroy(ctx, a);
        tx_tensor a2 = mk(ctx, 1, 4, 0, 0); /* may reuse the slot: generation differs */
        EXPECT(tx_binary(ctx, TX_OP_ADD, a, b, &y), TX_STATUS_STALE_HANDLE, "add", "a");
        EXPECT(tx_tensor_destroy(ctx, a), TX_STATUS_STALE_HANDLE, "destroy");
        EXPECT(tx_tensor_read(ctx, a, (float[4]){0}, 16), TX_STATUS_STALE_HANDLE, "read");
        EXPECT(tx_unary(ctx, TX_OP_RELU, (tx_tensor){0}, &y), TX_STATUS_STALE_HANDLE, "relu");
        EXPECT(tx_unary(ctx, TX_OP_RELU, (tx_tensor){0xFFFFFFFFu}, &y), TX_STATUS_STALE_HANDLE,
               "relu");
        TX_DESTROY(ctx, a2, b);
        tx_test_end();
    }
    if (tx_test_begin("tensor over the device texture limit: split, or refused by an op "
                      "without a split path")) {
        tx_tensor t = {0};
        /* 64 × 64 texels × 4 = 16384 values fit; one more is split (engine/split.h) */
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {16385}}, &t),
               TX_STATUS_OK, "");
        EXPECT(tx_softmax(ctx, TX_OP_SOFTMAX, t, NULL, &y), TX_STATUS_TOO_LARGE, "softmax",
               "[16385]", "split across 2 textures", "MAX_TEXTURE_SIZE 64");
        tx_tensor a = mk(ctx, 2, 120, 8, 0), b = mk(ctx, 2, 8, 140, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_OK, "");
        tx_tensor_destroy(ctx, y);
        /* rows larger than a texture: d is split mid-row, no part holds whole rows */
        tx_tensor c = mk(ctx, 2, 1, 8, 0), d = mk(ctx, 2, 8, 16400, 0);
        EXPECT(tx_matmul(ctx, c, d, NULL, &y), TX_STATUS_TOO_LARGE, "matmul", "[8, 16400]",
               "whole rows");
        TX_DESTROY(ctx, a, b, c, d, t);
        tx_test_end();
    }
    if (tx_test_begin("memory budget: out-of-memory status, live tensors intact")) {
        float v[1024];
        for (int i = 0; i < 1024; i++)
            v[i] = (float)i;
        tx_tensor keep;
        CHECK(
            !tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {1024}, .data = v}, &keep),
            "%s", tx_last_error(ctx));
        tx_tensor many[64];
        int n = 0;
        tx_status s = TX_STATUS_OK;
        while (n < 64 && !(s = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {16000}},
                                                &many[n])))
            n++;
        CHECK(s == TX_STATUS_OUT_OF_MEMORY, "got %s after %d tensors", tx_status_name(s), n);
        CHECK(strstr(tx_last_error(ctx), "budget") != NULL, "%s", tx_last_error(ctx));
        float back[1024];
        CHECK(!tx_tensor_read(ctx, keep, back, sizeof back), "%s", tx_last_error(ctx));
        CHECK(memcmp(back, v, sizeof v) == 0, "live tensor changed");
        for (int i = 0; i < n; i++)
            tx_tensor_destroy(ctx, many[i]);
        tx_tensor again;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {16000}}, &again),
              "usable after OOM: %s", tx_last_error(ctx));
        TX_DESTROY(ctx, again, keep);
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        CHECK(st.live_texture_bytes + st.pooled_texture_bytes <= (1u << 20),
              "live + pooled %llu over budget",
              (unsigned long long)(st.live_texture_bytes + st.pooled_texture_bytes));
        tx_test_end();
    }
    if (tx_test_begin("null pointers and bad enums")) {
        tx_tensor a = mk(ctx, 1, 4, 0, 0);
        EXPECT(tx_unary(ctx, TX_OP_RELU, a, NULL), TX_STATUS_INVALID_ARGUMENT, "out");
        EXPECT(tx_tensor_create(ctx, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "desc");
        EXPECT(tx_tensor_read(ctx, a, NULL, 16), TX_STATUS_INVALID_ARGUMENT, "dst");
        EXPECT(tx_tensor_read(ctx, a, (float[2]){0}, 8), TX_STATUS_SHAPE_MISMATCH, "8 bytes");
        EXPECT(tx_unary(ctx, TX_OP_ADD, a, &y), TX_STATUS_INVALID_ARGUMENT, "not a unary");
        EXPECT(tx_binary(ctx, TX_OP_RELU, a, a, &y), TX_STATUS_INVALID_ARGUMENT, "not a binary");
        EXPECT(tx_op_run(ctx, (tx_op)9999, &a, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
               "unknown op");
        EXPECT(tx_clip(ctx, a, 2, 1, &y), TX_STATUS_INVALID_ARGUMENT, "clip");
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = 9}, &y),
               TX_STATUS_INVALID_ARGUMENT, "dtype");
        CHECK(tx_ctx_create(NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "null out");
        CHECK(tx_unary(NULL, TX_OP_RELU, a, &y) == TX_STATUS_INVALID_ARGUMENT, "null ctx");
        tx_tensor_destroy(ctx, a);
        tx_test_end();
    }
    if (tx_test_begin("dtype mismatch")) {
        tx_tensor f = mk(ctx, 1, 4, 0, 0), i;
        CHECK(!tx_tensor_create(
                  ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = TX_DTYPE_INT32}, &i),
              "create");
        EXPECT(tx_binary(ctx, TX_OP_ADD, f, i, &y), TX_STATUS_DTYPE_MISMATCH, "add", "int32");
        EXPECT(tx_matmul(ctx, i, i, NULL, &y), TX_STATUS_DTYPE_MISMATCH, "matmul");
        TX_DESTROY(ctx, f, i);
        tx_test_end();
    }
    if (tx_test_begin("reshape views: no draw, shared storage, bad shapes refused")) {
        float v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        tx_tensor a, r;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, 4}, .data = v}, &a),
              "create");
        tx_stats s0;
        tx_ctx_stats(ctx, &s0);
        CHECK(!tx_tensor_reshape(ctx, a, 3, (int64_t[]){2, -1, 3}, &r), "%s", tx_last_error(ctx));
        int rank;
        int64_t sh[TX_MAX_RANK];
        tx_tensor_shape(ctx, r, &rank, sh, NULL);
        CHECK(rank == 3 && sh[1] == 2, "inferred dim %lld", (long long)sh[1]);
        tx_stats s1;
        tx_ctx_stats(ctx, &s1);
        CHECK(s1.draws == s0.draws && s1.live_texture_bytes == s0.live_texture_bytes,
              "view drew or allocated");
        tx_tensor_destroy(ctx, a);
        float back[12];
        CHECK(!tx_tensor_read(ctx, r, back, sizeof back) && memcmp(back, v, sizeof v) == 0,
              "view must outlive its source");
        EXPECT(tx_tensor_reshape(ctx, r, 2, (int64_t[]){5, 3}, &y), TX_STATUS_SHAPE_MISMATCH,
               "12 elements", "[5, 3]");
        EXPECT(tx_tensor_reshape(ctx, r, 2, (int64_t[]){-1, -1}, &y), TX_STATUS_INVALID_ARGUMENT,
               "-1");
        tx_tensor_destroy(ctx, r);
        tx_test_end();
    }
    if (tx_test_begin("conv: bad shapes and attributes name the op and shapes")) {
        tx_tensor x = mk4(ctx, 1, 4, 5, 5), w = mk4(ctx, 6, 3, 3, 3), w2 = mk4(ctx, 6, 2, 3, 3);
        tx_tensor big = mk4(ctx, 1, 4, 7, 7), b = mk(ctx, 1, 5, 0, 0);
        EXPECT(tx_conv(ctx, x, w, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "conv", "[1, 4, 5, 5]",
               "[6, 3, 3, 3]", "C/group = 4");
        EXPECT(tx_conv(ctx, x, w2, &(tx_conv_desc){.group = 3}, &y), TX_STATUS_SHAPE_MISMATCH,
               "conv", "divide by group", "[6, 2, 3, 3]");
        EXPECT(tx_conv(ctx, x, big, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "conv", "[1, 4, 5, 5]");
        tx_tensor wk = mk4(ctx, 2, 4, 9, 9);
        EXPECT(tx_conv(ctx, x, wk, &(tx_conv_desc){.pads = {1, 1, 1, 1}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "conv", "does not fit", "[1, 4, 5, 5]", "(1, 1)");
        tx_tensor w4 = mk4(ctx, 6, 4, 3, 3);
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.pads = {1, -1, 1, 1}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "negative pads", "[1, 4, 5, 5]");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.strides = {2, 0}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "stride 0", "[1, 4, 5, 5]");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.strides = {-1, -1}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "stride -1");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.dilations = {1, -2}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "dilation -2");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.group = -1}, &y), TX_STATUS_INVALID_ARGUMENT,
               "conv", "group");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.x_affine = true, .x_scale = 1, .x_shift = NAN},
                       &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "x_affine", "x_shift nan");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.auto_pad = (tx_auto_pad)7}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "auto_pad");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.bias = b}, &y), TX_STATUS_SHAPE_MISMATCH,
               "conv", "bias [5]", "M = 6");
        EXPECT(tx_conv(ctx, x, w4, &(tx_conv_desc){.activation = TX_OP_ADD}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv", "activation");
        EXPECT(tx_conv(ctx, x, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "conv", "rank", "[5]");
        EXPECT(tx_conv(ctx, b, w4, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "conv", "[N, C, H, W]");
        EXPECT(tx_conv(ctx, x, w4, NULL, NULL), TX_STATUS_INVALID_ARGUMENT, "conv", "out");
        /* ConvTranspose weights are [C, M/group, kH, kW] */
        EXPECT(tx_conv_transpose(ctx, x, w, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "conv_transpose",
               "[1, 4, 5, 5]", "[6, 3, 3, 3]", "C = 4");
        tx_tensor wt = mk4(ctx, 4, 2, 3, 3);
        EXPECT(tx_conv_transpose(ctx, x, wt,
                                 &(tx_conv_desc){.strides = {2, 2}, .output_padding = {2, 2}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "conv_transpose", "output_padding");
        EXPECT(tx_conv_transpose(ctx, x, wt, &(tx_conv_desc){.pads = {9, 9, 9, 9}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "conv_transpose", "pads", "[4, 2, 3, 3]");
        EXPECT(tx_conv_transpose(ctx, x, wt, &(tx_conv_desc){.x_affine = true, .x_scale = INFINITY},
                                 &y),
               TX_STATUS_INVALID_ARGUMENT, "conv_transpose", "x_scale inf");
        tx_tensor ts[] = {x, w4, wt, w, w2, big, b, wk};
        for (size_t i = 0; i < TX_COUNTOF(ts); i++)
            tx_tensor_destroy(ctx, ts[i]);
        tx_test_end();
    }
    if (tx_test_begin("pools: bad shapes and attributes name the op and shapes")) {
        tx_tensor x = mk4(ctx, 1, 2, 4, 4), v = mk(ctx, 2, 4, 4, 0);
        EXPECT(tx_pooling(ctx, TX_OP_MAXPOOL, x, &(tx_pool_desc){.kernel_shape = {5, 5}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "maxpool", "does not fit", "[1, 2, 4, 4]");
        EXPECT(tx_pooling(ctx, TX_OP_AVERAGEPOOL, x, &(tx_pool_desc){.kernel_shape = {0, 2}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "averagepool", "kernel 0", "[1, 2, 4, 4]");
        EXPECT(tx_pooling(ctx, TX_OP_MAXPOOL, x,
                          &(tx_pool_desc){.kernel_shape = {2, 2}, .pads = {0, 0, -1, 0}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "maxpool", "negative pads");
        EXPECT(tx_pooling(ctx, TX_OP_MAXPOOL, x,
                          &(tx_pool_desc){.kernel_shape = {2, 2}, .strides = {0, 1}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "maxpool", "stride 0");
        EXPECT(tx_pooling(ctx, TX_OP_MAXPOOL, x, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "maxpool",
               "desc");
        EXPECT(tx_pooling(ctx, TX_OP_GLOBALAVERAGEPOOL, v, NULL, &y), TX_STATUS_SHAPE_MISMATCH,
               "globalaveragepool", "[4, 4]");
        EXPECT(tx_pooling(ctx, TX_OP_RELU, x, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
               "not a pool op");
        TX_DESTROY(ctx, x, v);
        tx_test_end();
    }
    if (tx_test_begin("reductions: bad axes and shapes")) {
        tx_tensor a = mk(ctx, 3, 2, 3, 4), i;
        EXPECT(tx_reduce(ctx, TX_OP_REDUCE_SUM, a, &(tx_reduce_desc){.n_axes = 1, .axes = {3}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "reduce_sum", "axis 3", "[2, 3, 4]");
        EXPECT(
            tx_reduce(ctx, TX_OP_REDUCE_MAX, a, &(tx_reduce_desc){.n_axes = 1, .axes = {-4}}, &y),
            TX_STATUS_INVALID_ARGUMENT, "reduce_max", "axis -4", "[2, 3, 4]");
        EXPECT(tx_reduce(ctx, TX_OP_REDUCE_MEAN, a, &(tx_reduce_desc){.n_axes = 2, .axes = {1, -2}},
                         &y),
               TX_STATUS_INVALID_ARGUMENT, "reduce_mean", "repeated", "[2, 3, 4]");
        EXPECT(tx_reduce(ctx, TX_OP_REDUCE_SUM, a, &(tx_reduce_desc){.n_axes = 7}, &y),
               TX_STATUS_INVALID_ARGUMENT, "reduce_sum", "7 axes");
        EXPECT(tx_reduce(ctx, TX_OP_ARGMAX, a, &(tx_reduce_desc){.n_axes = 2, .axes = {0, 1}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "argmax", "one axis", "[2, 3, 4]");
        EXPECT(tx_reduce(ctx, TX_OP_RELU, a, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
               "not a reduction");
        tx_tensor e = mk(ctx, 2, 3, 0, 0);
        EXPECT(tx_reduce(ctx, TX_OP_ARGMIN, e, &(tx_reduce_desc){.n_axes = 1, .axes = {1}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "argmin", "empty", "[3, 0]");
        CHECK(!tx_tensor_create(
                  ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = TX_DTYPE_INT32}, &i),
              "create");
        EXPECT(tx_reduce(ctx, TX_OP_REDUCE_L2, i, NULL, &y), TX_STATUS_DTYPE_MISMATCH, "reduce_l2",
               "float32");
        TX_DESTROY(ctx, a, e, i);
        tx_test_end();
    }
    if (tx_test_begin("softmax and norms: bad axes and shapes")) {
        tx_tensor x = mk(ctx, 3, 2, 3, 4), c3 = mk(ctx, 1, 3, 0, 0), c4 = mk(ctx, 1, 4, 0, 0),
                  m = mk(ctx, 2, 3, 4, 0), v = mk(ctx, 1, 12, 0, 0);
        EXPECT(tx_softmax(ctx, TX_OP_SOFTMAX, x, &(tx_softmax_desc){.axis = 3}, &y),
               TX_STATUS_INVALID_ARGUMENT, "softmax", "axis 3", "[2, 3, 4]");
        EXPECT(tx_softmax(ctx, TX_OP_LOG_SOFTMAX, c3, &(tx_softmax_desc){.axis = -2}, &y),
               TX_STATUS_INVALID_ARGUMENT, "log_softmax", "axis -2", "[3]");
        EXPECT(tx_norm(ctx, TX_OP_BATCH_NORM, (tx_tensor[]){x, c4, c3, c3, c3}, 5, NULL, &y),
               TX_STATUS_SHAPE_MISMATCH, "batch_norm", "scale [4]", "[2, 3, 4]", "[3]");
        EXPECT(tx_norm(ctx, TX_OP_BATCH_NORM, (tx_tensor[]){x, c3, c3, c3}, 4, NULL, &y),
               TX_STATUS_INVALID_ARGUMENT, "batch_norm", "5 inputs, got 4");
        EXPECT(tx_norm(ctx, TX_OP_INSTANCE_NORM, (tx_tensor[]){c3, c3, c3}, 3, NULL, &y),
               TX_STATUS_SHAPE_MISMATCH, "instance_norm", "[3]", "rank >= 2");
        EXPECT(tx_norm(ctx, TX_OP_LAYER_NORM, (tx_tensor[]){x, c3}, 2, &(tx_norm_desc){.axis = -1},
                       &y),
               TX_STATUS_SHAPE_MISMATCH, "layer_norm", "scale [3]", "[2, 3, 4]");
        EXPECT(tx_norm(ctx, TX_OP_LAYER_NORM, (tx_tensor[]){x, m, v}, 3, &(tx_norm_desc){.axis = 1},
                       &y),
               TX_STATUS_SHAPE_MISMATCH, "layer_norm", "bias [12]", "[2, 3, 4]");
        EXPECT(
            tx_norm(ctx, TX_OP_LAYER_NORM, (tx_tensor[]){x, c4}, 2, &(tx_norm_desc){.axis = 5}, &y),
            TX_STATUS_INVALID_ARGUMENT, "layer_norm", "axis 5");
        EXPECT(tx_norm(ctx, TX_OP_LAYER_NORM, (tx_tensor[]){x, c4}, 2,
                       &(tx_norm_desc){.axis = -1, .epsilon = -1}, &y),
               TX_STATUS_INVALID_ARGUMENT, "layer_norm", "epsilon");
        TX_DESTROY(ctx, x, c3, c4, m, v);
        tx_test_end();
    }
    if (tx_test_begin("where, variadic, activations, cast: bad inputs")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 3, 5, 0), i;
        CHECK(!tx_tensor_create(
                  ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = TX_DTYPE_INT32}, &i),
              "create");
        EXPECT(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){a, a, b}, 3, &y), TX_STATUS_SHAPE_MISMATCH,
               "where", "input 2 [3, 5]");
        EXPECT(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){a, a}, 2, &y), TX_STATUS_INVALID_ARGUMENT,
               "where", "2 inputs");
        EXPECT(tx_nary(ctx, TX_OP_SUM, (tx_tensor[]){a}, 0, &y), TX_STATUS_INVALID_ARGUMENT, "sum",
               "0 inputs");
        EXPECT(tx_nary(ctx, TX_OP_MAX_N, (tx_tensor[]){a, a, a, i}, 4, &y),
               TX_STATUS_DTYPE_MISMATCH, "max_n", "input 3 is int32");
        EXPECT(tx_activation(ctx, TX_OP_RELU, a, 1, 1, &y), TX_STATUS_INVALID_ARGUMENT, "relu");
        EXPECT(tx_activation(ctx, TX_OP_ELU, a, NAN, 1, &y), TX_STATUS_INVALID_ARGUMENT, "elu",
               "alpha");
        EXPECT(tx_unary(ctx, TX_OP_LEAKY_RELU, a, &y), TX_STATUS_INVALID_ARGUMENT, "tx_activation");
        EXPECT(tx_cast(ctx, a, (tx_dtype)7, false, &y), TX_STATUS_INVALID_ARGUMENT, "cast",
               "dtype 7");
        EXPECT(tx_op_run(ctx, TX_OP_SUM, &a, 0, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "sum");
        TX_DESTROY(ctx, a, b, i);
        tx_test_end();
    }
    if (tx_test_begin("data movement: bad perms, axes, sizes and dtypes")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 3, 5, 0), c = mk(ctx, 2, 2, 4, 0);
        EXPECT(tx_transpose(ctx, a, (int[]){1, 1}, &y), TX_STATUS_INVALID_ARGUMENT, "transpose",
               "perm[1] = 1", "[3, 4]");
        EXPECT(tx_transpose(ctx, a, (int[]){0, 2}, &y), TX_STATUS_INVALID_ARGUMENT, "transpose",
               "perm[1] = 2");
        EXPECT(tx_concat(ctx, (tx_tensor[]){a, b}, 2, 0, &y), TX_STATUS_SHAPE_MISMATCH, "concat",
               "[3, 4]", "[3, 5]", "axis 0");
        EXPECT(tx_concat(ctx, (tx_tensor[]){a, c}, 2, 2, &y), TX_STATUS_INVALID_ARGUMENT, "concat",
               "axis 2");
        EXPECT(tx_concat(ctx, (tx_tensor[]){a}, 0, 0, &y), TX_STATUS_INVALID_ARGUMENT, "concat");
        tx_tensor parts[3];
        EXPECT(tx_split(ctx, a, 1, (int64_t[]){1, 2}, 2, parts), TX_STATUS_SHAPE_MISMATCH, "split",
               "sum to 3", "[3, 4]");
        EXPECT(tx_split(ctx, a, -3, NULL, 2, parts), TX_STATUS_INVALID_ARGUMENT, "split",
               "axis -3");
        EXPECT(tx_slice(ctx, a, &(tx_slice_desc){.n = 2, .axes = {1, -1}, .has_axes = true}, &y),
               TX_STATUS_INVALID_ARGUMENT, "slice", "repeated", "[3, 4]");
        EXPECT(tx_slice(ctx, a, &(tx_slice_desc){.n = 3}, &y), TX_STATUS_INVALID_ARGUMENT, "slice",
               "3 entries");
        EXPECT(tx_pad(ctx, a, &(tx_pad_desc){.begin = {-2}, .end = {-2}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "pad", "crop", "[3, 4]");
        EXPECT(tx_pad(ctx, a, &(tx_pad_desc){.mode = (tx_pad_mode)9}, &y),
               TX_STATUS_INVALID_ARGUMENT, "pad", "mode");
        tx_tensor e = mk(ctx, 2, 0, 4, 0);
        EXPECT(tx_pad(ctx, e, &(tx_pad_desc){.mode = TX_PAD_REFLECT, .begin = {1}}, &y),
               TX_STATUS_SHAPE_MISMATCH, "pad", "empty", "[0, 4]");
        EXPECT(tx_gather(ctx, a, b, 0, &y), TX_STATUS_DTYPE_MISMATCH, "gather", "int32");
        tx_tensor i6;
        CHECK(
            !tx_tensor_create(
                ctx,
                &(tx_tensor_desc){.rank = 6, .shape = {1, 1, 1, 1, 1, 2}, .dtype = TX_DTYPE_INT32},
                &i6),
            "create");
        EXPECT(tx_gather(ctx, a, i6, 0, &y), TX_STATUS_RANK_TOO_HIGH, "gather", "rank 7", "[3, 4]",
               "[1, 1, 1, 1, 1, 2]");
        EXPECT(tx_gather(ctx, a, i6, -3, &y), TX_STATUS_INVALID_ARGUMENT, "gather", "axis -3");
        EXPECT(tx_gather(ctx, e, i6, 0, &y), TX_STATUS_RANK_TOO_HIGH, "gather");
        EXPECT(tx_expand(ctx, a, 2, (int64_t[]){5, 4}, &y), TX_STATUS_SHAPE_MISMATCH, "expand",
               "[3, 4]", "[5, 4]");
        EXPECT(tx_tile(ctx, a, (int64_t[]){1, -1}, &y), TX_STATUS_INVALID_ARGUMENT, "tile",
               "repeats[1] = -1");
        tx_tensor d4 = mk(ctx, 3, 2, 3, 4);
        EXPECT(tx_depth_to_space(ctx, d4, 2, TX_DEPTH_DCR, &y), TX_STATUS_SHAPE_MISMATCH,
               "depth_to_space", "rank 3", "[2, 3, 4]");
        tx_tensor x4;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 4, .shape = {1, 6, 2, 3}}, &x4),
              "create");
        EXPECT(tx_depth_to_space(ctx, x4, 2, TX_DEPTH_DCR, &y), TX_STATUS_SHAPE_MISMATCH,
               "depth_to_space", "blocksize^2 = 4", "[1, 6, 2, 3]");
        EXPECT(tx_space_to_depth(ctx, x4, 2, &y), TX_STATUS_SHAPE_MISMATCH, "space_to_depth",
               "multiples of blocksize 2");
        EXPECT(tx_depth_to_space(ctx, x4, 0, TX_DEPTH_DCR, &y), TX_STATUS_INVALID_ARGUMENT,
               "blocksize 0");
        EXPECT(tx_resize(ctx, a, &(tx_resize_desc){.scales = {1, -2}}, &y),
               TX_STATUS_INVALID_ARGUMENT, "resize", "scales[1]", "[3, 4]");
        EXPECT(tx_resize(ctx, e, &(tx_resize_desc){.sizes = {2, 4}}, &y), TX_STATUS_SHAPE_MISMATCH,
               "resize", "empty");
        EXPECT(tx_resize(ctx, i6, &(tx_resize_desc){.mode = TX_RESIZE_LINEAR}, &y),
               TX_STATUS_DTYPE_MISMATCH, "resize", "linear");
        tx_tensor r4;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 4, .shape = {2, 2, 2, 2}}, &r4),
              "create");
        EXPECT(tx_resize(ctx, r4,
                         &(tx_resize_desc){.mode = TX_RESIZE_CUBIC, .scales = {2, 2, 2, 2}}, &y),
               TX_STATUS_UNSUPPORTED, "resize", "cubic", "at most 3", "[2, 2, 2, 2]");
        tx_tensor_destroy(ctx, r4);
        tx_op_attrs at = {.move = {.n_split = 2}};
        EXPECT(tx_op_run(ctx, TX_OP_SPLIT, &a, 1, &at, &y), TX_STATUS_INVALID_ARGUMENT, "split",
               "tx_op_run_multi");
        at = (tx_op_attrs){.move = {.n_perm = 3}};
        EXPECT(tx_op_run(ctx, TX_OP_TRANSPOSE, &a, 1, &at, &y), TX_STATUS_INVALID_ARGUMENT,
               "transpose", "3 entries");
        EXPECT(tx_op_run(ctx, TX_OP_CONCAT, &a, 0, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "concat");
        tx_tensor ts[] = {a, b, c, d4, e, i6, x4};
        for (size_t i = 0; i < TX_COUNTOF(ts); i++)
            tx_tensor_destroy(ctx, ts[i]);
        tx_test_end();
    }
    if (tx_test_begin("flatten, squeeze, unsqueeze: ONNX shapes as views; bad axes refused")) {
        tx_tensor a = mk(ctx, 3, 2, 1, 3), v;
        int rank;
        int64_t sh[TX_MAX_RANK];
        CHECK(!tx_flatten(ctx, a, 2, &v), "%s", tx_last_error(ctx));
        tx_tensor_shape(ctx, v, &rank, sh, NULL);
        CHECK(rank == 2 && sh[0] == 2 && sh[1] == 3, "flatten(2): rank %d [%lld, %lld]", rank,
              (long long)sh[0], (long long)sh[1]);
        tx_tensor_destroy(ctx, v);
        CHECK(!tx_flatten(ctx, a, 0, &v), "%s", tx_last_error(ctx));
        tx_tensor_shape(ctx, v, &rank, sh, NULL);
        CHECK(rank == 2 && sh[0] == 1 && sh[1] == 6, "flatten(0)");
        tx_tensor_destroy(ctx, v);
        CHECK(!tx_squeeze(ctx, a, NULL, 0, &v), "%s", tx_last_error(ctx));
        tx_tensor_shape(ctx, v, &rank, sh, NULL);
        CHECK(rank == 2 && sh[0] == 2 && sh[1] == 3, "squeeze all: rank %d", rank);
        tx_tensor_destroy(ctx, v);
        CHECK(!tx_unsqueeze(ctx, a, (int[]){0, -1}, 2, &v), "%s", tx_last_error(ctx));
        tx_tensor_shape(ctx, v, &rank, sh, NULL);
        CHECK(rank == 5 && sh[0] == 1 && sh[1] == 2 && sh[3] == 3 && sh[4] == 1,
              "unsqueeze: rank %d", rank);
        tx_tensor_destroy(ctx, v);
        EXPECT(tx_squeeze(ctx, a, (int[]){0}, 1, &y), TX_STATUS_INVALID_ARGUMENT, "squeeze",
               "axes[0] = 0", "[2, 1, 3]");
        EXPECT(tx_unsqueeze(ctx, a, (int[]){1, 1}, 2, &y), TX_STATUS_INVALID_ARGUMENT, "unsqueeze",
               "repeated");
        EXPECT(tx_unsqueeze(ctx, a, (int[]){0, 1, 2, 3}, 4, &y), TX_STATUS_RANK_TOO_HIGH,
               "unsqueeze", "rank 7");
        EXPECT(tx_flatten(ctx, a, 4, &y), TX_STATUS_INVALID_ARGUMENT, "flatten", "axis 4");
        tx_tensor_destroy(ctx, a);
        tx_test_end();
    }
    if (tx_test_begin("gather clamps out-of-range indices; identity is a view")) {
        float v[3] = {10, 20, 30}, got[6];
        int32_t idx[6] = {-1, 5, -7, 1, 2, -3};
        tx_tensor x, ix, g, id;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {3}, .data = v}, &x),
              "create");
        CHECK(!tx_tensor_create(
                  ctx,
                  &(tx_tensor_desc){.rank = 1, .shape = {6}, .dtype = TX_DTYPE_INT32, .data = idx},
                  &ix),
              "create");
        CHECK(!tx_gather(ctx, x, ix, 0, &g), "%s", tx_last_error(ctx));
        CHECK(!tx_tensor_read(ctx, g, got, sizeof got), "read");
        const float want[6] = {30, 30, 10, 20, 30, 10};
        for (int i = 0; i < 6; i++)
            CHECK(got[i] == want[i], "index %d -> %g, want %g", idx[i], (double)got[i],
                  (double)want[i]);
        tx_stats s0, s1;
        tx_ctx_stats(ctx, &s0);
        CHECK(!tx_identity(ctx, g, &id), "%s", tx_last_error(ctx));
        tx_tensor one;
        CHECK(!tx_concat(ctx, &g, 1, 0, &one), "%s", tx_last_error(ctx));
        tx_ctx_stats(ctx, &s1);
        CHECK(s1.draws == s0.draws && s1.live_texture_bytes == s0.live_texture_bytes,
              "identity / single concat drew or allocated");
        tx_tensor ts[] = {x, ix, g, id, one};
        for (size_t i = 0; i < TX_COUNTOF(ts); i++)
            tx_tensor_destroy(ctx, ts[i]);
        tx_test_end();
    }
    tx_host_close(g_host, ctx);

    if (tx_test_begin("specialized compile failure falls back to generic, results right")) {
        ctx = open_ctx((tx_ctx_desc){.specialize_after = 1, .no_parallel_compile = true});
        float v[8] = {-1, 2, -3, 4, -5, 6, -7, 8}, out[8];
        tx_tensor a;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &a),
              "create");
        printf("  (an injected link failure follows; its log below is expected)\n");
        ctx->fault_specialized = true;
        for (int i = 0; i < 4; i++) {
            CHECK(!tx_unary(ctx, TX_OP_RELU, a, &y), "%s", tx_last_error(ctx));
            CHECK(!tx_tensor_read(ctx, y, out, sizeof out), "read");
            for (int j = 0; j < 8; j++)
                CHECK(out[j] == (v[j] < 0 ? 0 : v[j]), "call %d elem %d = %g", i, j,
                      (double)out[j]);
            tx_tensor_destroy(ctx, y);
        }
        tx_stats s;
        tx_ctx_stats(ctx, &s);
        CHECK(s.compile_failures == 1 && s.specialized_runs == 0 && s.generic_runs == 4,
              "%llu failures, %llu specialized runs, %llu generic runs",
              (unsigned long long)s.compile_failures, (unsigned long long)s.specialized_runs,
              (unsigned long long)s.generic_runs);
        tx_host_close(g_host, ctx);
        tx_test_end();
    }
    return tx_test_finish();
}
