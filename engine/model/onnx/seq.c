/* ONNX ops composed from engine ops around sequences and channels: CumSum,
 * ReverseSequence, LRN, MeanVarianceNormalization, BitShift, Det, and the
 * window functions (host values: their only input is a length). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* Input i's shape into rank/shape through the builder. */
static int in_shape(tx_xb *b, int i, int64_t shape[TX_MAX_RANK]) {
    int rank = -1;
    if (!b->st)
        b->st = tx_x_shape(b->x, i, &rank, shape);
    return b->st ? -1 : rank;
}

/* Input i as float32 on the device. */
static tx_tensor in_float(tx_xb *b, int i) {
    tx_tensor t = tx_xb_in(b, i);
    if (!b->st && tx_x_dtype_of(b->x, t) != TX_DTYPE_FLOAT32)
        t = tx_xb_cast(b, t, TX_DTYPE_FLOAT32);
    return t;
}

/* Output 0 from a tracked tensor, as element type elem; frees the builder. */
static tx_status finish(tx_xb *b, tx_tensor y, int elem) {
    tx_xb_output(b, 0, y, elem);
    return tx_xb_free(b);
}

/* ---- CumSum: a matmul with a 0/1 triangle, or a log-step scan ---- */

/* v [pre, n, post] shifted by k along dim 1 (toward the end, or the start
 * when rev), zeros filling in. */
static tx_tensor shifted(tx_xb *b, tx_tensor v, int64_t k, bool rev) {
    tx_pad_desc d = {.mode = TX_PAD_CONSTANT};
    d.begin[1] = rev ? -k : k;
    d.end[1] = rev ? k : -k;
    return tx_xb_pad(b, v, &d);
}

/* Up to this length the triangle matmul (n² weights, one draw) runs; longer
 * axes take log2(n) shifted adds (Hillis-Steele). */
#define CUMSUM_MATMUL_MAX 512

static tx_status exec_cumsum(tx_xnode *x) {
    int64_t axis_v[1];
    int n_axis, rank;
    int64_t s[TX_MAX_RANK];
    tx_status st = tx_x_host_ints(x, 1, "axis", axis_v, 1, &n_axis);
    if (!st)
        st = tx_x_shape(x, 0, &rank, s);
    if (st)
        return st;
    if (n_axis != 1 || axis_v[0] < -rank || axis_v[0] >= rank || rank < 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis must be one value in [-%d, %d)", rank,
                         rank);
    if (x->fold)
        return TX_STATUS_DEFER;
    int a = tx_norm_axis(axis_v[0], rank);
    bool excl = tx_attr_int(x->node, "exclusive", 0) != 0;
    bool rev = tx_attr_int(x->node, "reverse", 0) != 0;
    int64_t n = s[a], pre = tx_numel_of(a, s), post = tx_numel_of(rank - a - 1, s + a + 1);
    tx_xb b = {.x = x};
    tx_tensor v = tx_xb_reshape(&b, in_float(&b, 0), 3, (int64_t[]){pre, n, post}), y;
    if (n <= CUMSUM_MATMUL_MAX) {
        float *tri = calloc((size_t)(n > 0 ? n * n : 1), sizeof(float));
        if (!tri)
            tx_xb_fail(&b, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t i = 0; i < n && tri; i++) /* y[i] = sum of x[j] over the j tri[i][j] marks */
            for (int64_t j = 0; j < n; j++)
                tri[i * n + j] =
                    (rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i)) ? 1.0f : 0.0f;
        tx_tensor m = tx_xb_const(&b, 2, (int64_t[]){n, n}, TX_DTYPE_FLOAT32, tri);
        free(tri);
        y = tx_xb_matmul(&b, m, v, false, (tx_tensor){0});
    } else {
        y = excl ? shifted(&b, v, 1, rev) : v;
        for (int64_t k = 1; k < n; k *= 2)
            y = tx_xb_binary(&b, TX_OP_ADD, y, shifted(&b, y, k, rev));
    }
    return finish(&b, tx_xb_reshape(&b, y, rank, s), tx_x_elem(x, 0));
}

/* ---- ReverseSequence: one Gather of rows [time·batch, rest] ---- */

static tx_status exec_reverse_sequence(tx_xnode *x) {
    int64_t ba = tx_attr_int(x->node, "batch_axis", 1), ta = tx_attr_int(x->node, "time_axis", 0);
    tx_xb b = {.x = x};
    int64_t s[TX_MAX_RANK], ls[TX_MAX_RANK];
    int rank = in_shape(&b, 0, s), lr = in_shape(&b, 1, ls);
    if (b.st)
        return b.st;
    if (rank < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "batch_axis %lld / time_axis %lld for rank %d (one is 0, the other 1)",
                         (long long)ba, (long long)ta, rank);
    int64_t T = s[ta], B = s[ba], rest = tx_numel_of(rank - 2, s + 2);
    if (lr != 1 || ls[0] != B)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "sequence_lens must be [%lld]", (long long)B);
    if (x->fold)
        return TX_STATUS_DEFER;
    float *ramp = malloc(sizeof(float) * (size_t)(T + B));
    if (!ramp)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < T + B; k++)
        ramp[k] = (float)(k < T ? k : k - T);
    tx_tensor tr = tx_xb_const(&b, 2, (int64_t[]){T, 1}, TX_DTYPE_FLOAT32, ramp);
    tx_tensor br = tx_xb_const(&b, 2, (int64_t[]){1, B}, TX_DTYPE_FLOAT32, ramp + T);
    free(ramp);
    /* source time of (t, b): len - 1 - t inside the length, t after it */
    tx_tensor len = tx_xb_reshape(&b, in_float(&b, 1), 2, (int64_t[]){1, B});
    tx_tensor inside = tx_xb_binary(&b, TX_OP_LESS, tr, len);
    tx_tensor back =
        tx_xb_binary(&b, TX_OP_SUB, tx_xb_binary(&b, TX_OP_SUB, len, tr), tx_xb_scalar(&b, 1.0f));
    tx_tensor src = {0};
    if (!b.st) {
        tx_tensor w[3] = {inside, back, tr};
        b.st = tx_nary(x->ctx, TX_OP_WHERE, w, 3, &src);
        tx_xb_track(&b, b.st, src);
    }
    /* rows of x viewed [T, B, rest] (batch-major inputs transposed there first) */
    tx_tensor v = tx_xb_in(&b, 0);
    if (ba == 0) {
        v = tx_xb_reshape(&b, v, 3, (int64_t[]){B, T, rest});
        v = tx_xb_transpose(&b, v, (int[]){1, 0, 2});
    }
    v = tx_xb_reshape(&b, v, 2, (int64_t[]){T * B, rest});
    tx_tensor idx = tx_xb_binary(&b, TX_OP_ADD,
                                 tx_xb_binary(&b, TX_OP_MUL, src, tx_xb_scalar(&b, (float)B)), br);
    idx = tx_xb_cast(&b, tx_xb_reshape(&b, idx, 1, (int64_t[]){T * B}), TX_DTYPE_INT32);
    tx_tensor y = {0};
    if (!b.st) {
        b.st = tx_gather(x->ctx, v, idx, 0, &y);
        tx_xb_track(&b, b.st, y);
    }
    if (ba == 0) {
        y = tx_xb_reshape(&b, y, 3, (int64_t[]){T, B, rest});
        y = tx_xb_transpose(&b, y, (int[]){1, 0, 2});
    }
    y = tx_xb_reshape(&b, y, rank, s);
    return finish(&b, y, tx_x_elem(x, 0));
}

/* ---- LRN: the window sum over channels as an average pool of x² ---- */

static tx_status exec_lrn(tx_xnode *x) {
    int64_t size = tx_attr_int(x->node, "size", 0);
    float alpha = tx_attr_float(x->node, "alpha", 1e-4f),
          beta = tx_attr_float(x->node, "beta", 0.75f);
    float bias = tx_attr_float(x->node, "bias", 1.0f);
    tx_xb b = {.x = x};
    int64_t s[TX_MAX_RANK];
    int rank = in_shape(&b, 0, s);
    if (b.st)
        return b.st;
    if (size < 1 || size > 1023 || rank < 3)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "size %lld for rank %d (needs size >= 1, rank >= 3)", (long long)size,
                         rank);
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_tensor in = tx_xb_in(&b, 0);
    tx_tensor sq = tx_xb_binary(&b, TX_OP_MUL, in, in);
    int64_t hw = tx_numel_of(rank - 2, s + 2);
    sq = tx_xb_reshape(&b, sq, 4, (int64_t[]){s[0], 1, s[1], hw});
    tx_pool_desc pd = {.kernel_shape = {(int)size, 1},
                       .pads = {(int)((size - 1) / 2), 0, (int)(size / 2), 0},
                       .count_include_pad = true};
    tx_tensor avg = {0};
    if (!b.st) {
        b.st = tx_pooling(x->ctx, TX_OP_AVERAGEPOOL, sq, &pd, &avg);
        tx_xb_track(&b, b.st, avg);
    }
    /* y = x / (bias + alpha / size · sum)^beta, sum / size being the average */
    tx_tensor d =
        tx_xb_binary(&b, TX_OP_MUL, tx_xb_reshape(&b, avg, rank, s), tx_xb_scalar(&b, alpha));
    d = tx_xb_binary(&b, TX_OP_ADD, d, tx_xb_scalar(&b, bias));
    d = tx_xb_binary(&b, TX_OP_POW, d, tx_xb_scalar(&b, beta));
    return finish(&b, tx_xb_binary(&b, TX_OP_DIV, in, d), TX_ONNX_FLOAT);
}

/* ---- MeanVarianceNormalization, as its ONNX function body ---- */

static tx_status exec_mvn(tx_xnode *x) {
    int64_t ax[TX_MAX_RANK] = {0, 2, 3};
    int n = 3, axes[TX_MAX_RANK];
    tx_status st = tx_x_attr_ints(x, "axes", ax, TX_MAX_RANK, &n);
    if (st)
        return st;
    if (n < 0)
        n = 3;
    tx_xb b = {.x = x};
    int64_t s[TX_MAX_RANK];
    int rank = in_shape(&b, 0, s);
    if (b.st)
        return b.st;
    for (int i = 0; i < n; i++) {
        if (ax[i] < -rank || ax[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d",
                             (long long)ax[i], rank);
        axes[i] = tx_norm_axis(ax[i], rank);
    }
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_tensor in = tx_xb_in(&b, 0);
    tx_tensor mean = tx_xb_reduce(&b, TX_OP_REDUCE_MEAN, in, axes, n, true);
    tx_tensor ex2 =
        tx_xb_reduce(&b, TX_OP_REDUCE_MEAN, tx_xb_binary(&b, TX_OP_MUL, in, in), axes, n, true);
    tx_tensor var = tx_xb_binary(&b, TX_OP_SUB, ex2, tx_xb_binary(&b, TX_OP_MUL, mean, mean));
    tx_tensor sd = tx_xb_unary(&b, TX_OP_SQRT, tx_xb_clip(&b, var, 0.0f, INFINITY));
    sd = tx_xb_binary(&b, TX_OP_ADD, sd, tx_xb_scalar(&b, 1e-9f));
    return finish(&b, tx_xb_binary(&b, TX_OP_DIV, tx_xb_binary(&b, TX_OP_SUB, in, mean), sd),
                  TX_ONNX_FLOAT);
}

/* ---- BitShift on unsigned values as float arithmetic (exact to 2^24) ---- */

static tx_status exec_bitshift(tx_xnode *x) {
    const char *dir = tx_attr_str(x->node, "direction", "");
    bool left = strcmp(dir, "LEFT") == 0;
    if (!left && strcmp(dir, "RIGHT") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "direction \"%s\" (LEFT or RIGHT)", dir);
    int elem = tx_x_elem(x, 0), bits = 0;
    switch (elem) {
    case TX_ONNX_UINT8: bits = 8; break;
    case TX_ONNX_UINT16: bits = 16; break;
    case TX_ONNX_UINT32: bits = 32; break;
    case TX_ONNX_UINT64: bits = 64; break;
    default:
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input type %s (unsigned integers only)",
                         tx_onnx_type_name(elem));
    }
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_xb b = {.x = x};
    tx_tensor v = in_float(&b, 0);
    tx_tensor p = tx_xb_binary(&b, TX_OP_POW, tx_xb_scalar(&b, 2.0f), in_float(&b, 1));
    tx_tensor y;
    if (left) {
        y = tx_xb_binary(&b, TX_OP_MUL, v, p);
        if (bits < 32) { /* wraps: y mod 2^bits */
            tx_tensor m = tx_xb_scalar(&b, (float)(1 << bits));
            tx_tensor q = tx_xb_unary(&b, TX_OP_FLOOR, tx_xb_binary(&b, TX_OP_DIV, y, m));
            y = tx_xb_binary(&b, TX_OP_SUB, y, tx_xb_binary(&b, TX_OP_MUL, q, m));
        }
    } else {
        y = tx_xb_unary(&b, TX_OP_FLOOR, tx_xb_binary(&b, TX_OP_DIV, v, p));
    }
    return finish(&b, y, elem);
}

/* ---- HannWindow, HammingWindow, BlackmanWindow (host values) ---- */

static tx_status exec_window(tx_xnode *x) {
    int64_t nv[1];
    int cnt;
    tx_status st = tx_x_host_ints(x, 0, "size", nv, 1, &cnt);
    if (st)
        return st;
    int64_t n = nv[0];
    if (cnt != 1 || n < 0 || n > ((int64_t)1 << 26))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "size must be one value in [0, 2^26]");
    int elem = (int)tx_attr_int(x->node, "output_datatype", TX_ONNX_FLOAT);
    if (!tx_onnx_type_is_float(elem) && !tx_onnx_type_is_int(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "output_datatype %s", tx_onnx_type_name(elem));
    bool periodic = tx_attr_int(x->node, "periodic", 1) != 0;
    double den = periodic ? (double)n : (double)(n - 1);
    const char *t = x->node->op_type;
    double a0 = 0.5, a1 = 0.5, a2 = 0; /* a0 - a1 cos(2πk/N) + a2 cos(4πk/N) */
    if (strcmp(t, "HammingWindow") == 0)
        a0 = 25.0 / 46.0, a1 = 1.0 - a0;
    else if (strcmp(t, "BlackmanWindow") == 0)
        a0 = 0.42, a2 = 0.08;
    tx_hval o;
    if (!tx_hval_alloc(&o, elem, 1, &n))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < n; k++) {
        double w = den > 0 ? 6.283185307179586 * (double)k / den : 0.0;
        double v = a0 - a1 * cos(w) + a2 * cos(2.0 * w);
        if (o.f)
            o.f[k] = (float)v;
        else
            o.i[k] = (int64_t)v;
    }
    return tx_x_set_host(x, 0, &o);
}

/* ---- BatchNormalization with training_mode: batch statistics ---- */

tx_status tx_onnx_batch_norm_training(tx_xnode *x) {
    if (x->n_out > 3 && (x->out[3] || (x->n_out > 4 && x->out[4])))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "the saved_mean / saved_var outputs (opset < 14)");
    float eps = tx_attr_float(x->node, "epsilon", 1e-5f);
    float mom = tx_attr_float(x->node, "momentum", 0.9f);
    tx_xb b = {.x = x};
    int64_t s[TX_MAX_RANK];
    int rank = in_shape(&b, 0, s);
    if (b.st)
        return b.st;
    if (rank < 2 || !(eps >= 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "rank %d, epsilon %g (needs [N, C, ...])",
                         rank, (double)eps);
    for (int i = 1; i < 5; i++) {
        int64_t cs[TX_MAX_RANK];
        if (in_shape(&b, i, cs) != 1 || cs[0] != s[1])
            return b.st ? b.st
                        : tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input %d must be [%lld]", i,
                                    (long long)s[1]);
    }
    if (x->fold)
        return TX_STATUS_DEFER;
    int axes[TX_MAX_RANK], na = 0;
    int64_t cshape[TX_MAX_RANK]; /* [C, 1, ...]: per channel against [N, C, ...] */
    for (int d = 0; d < rank; d++)
        if (d != 1)
            axes[na++] = d;
    for (int d = 0; d < rank - 1; d++)
        cshape[d] = d ? 1 : s[1];
    tx_tensor in = tx_xb_in(&b, 0);
    tx_tensor mean = tx_xb_reduce(&b, TX_OP_REDUCE_MEAN, in, axes, na, true);
    tx_tensor dev = tx_xb_binary(&b, TX_OP_SUB, in, mean);
    tx_tensor var =
        tx_xb_reduce(&b, TX_OP_REDUCE_MEAN, tx_xb_binary(&b, TX_OP_MUL, dev, dev), axes, na, true);
    tx_tensor sd =
        tx_xb_unary(&b, TX_OP_SQRT, tx_xb_binary(&b, TX_OP_ADD, var, tx_xb_scalar(&b, eps)));
    tx_tensor y = tx_xb_binary(&b, TX_OP_DIV, dev, sd);
    y = tx_xb_binary(&b, TX_OP_MUL, y, tx_xb_reshape(&b, tx_xb_in(&b, 1), rank - 1, cshape));
    y = tx_xb_binary(&b, TX_OP_ADD, y, tx_xb_reshape(&b, tx_xb_in(&b, 2), rank - 1, cshape));
    /* running statistics: input · momentum + batch · (1 - momentum) */
    tx_tensor run[2] = {{0}, {0}}, stat[2] = {mean, var};
    for (int k = 0; k < 2 && x->n_out > k + 1 && x->out[k + 1]; k++) {
        tx_tensor bs = tx_xb_reshape(&b, stat[k], 1, &s[1]);
        tx_tensor a = tx_xb_binary(&b, TX_OP_MUL, tx_xb_in(&b, 3 + k), tx_xb_scalar(&b, mom));
        run[k] = tx_xb_binary(&b, TX_OP_ADD, a,
                              tx_xb_binary(&b, TX_OP_MUL, bs, tx_xb_scalar(&b, 1.0f - mom)));
    }
    tx_tensor outs[3] = {y, run[0], run[1]};
    for (int o = 0; o < 3; o++)
        if (outs[o].id)
            tx_xb_output(&b, o, outs[o], TX_ONNX_FLOAT);
    return tx_xb_free(&b);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"CumSum", exec_cumsum, tx_x_infer_same, 0, 2, 2, 2},
    {"ReverseSequence", exec_reverse_sequence, tx_x_infer_same, 0, 2, 2, 0},
    {"LRN", exec_lrn, tx_x_infer_same, 0, 1, 1, 0},
    {"MeanVarianceNormalization", exec_mvn, tx_x_infer_same, 0, 1, 1, 0},
    {"BitShift", exec_bitshift, tx_x_infer_bcast, 0, 2, 2, 0},
    {"HannWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"HammingWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"BlackmanWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
};

const tx_onnx_family tx_onnx_ops_seq = {k_ops, TX_COUNTOF(k_ops)};
