/* ONNX normalizations: Batch/Instance/LayerNormalization, Softmax, LogSoftmax, Hardmax. */
#include <string.h>

#include "common.h"

static tx_status exec_softmax(tx_xnode *x) {
    tx_op op = strcmp(x->node->op_type, "Softmax") == 0 ? TX_OP_SOFTMAX : TX_OP_LOG_SOFTMAX;
    bool old = x->opset < 13; /* before 13: normalise the input coerced to 2-D at axis */
    int64_t axis = tx_attr_int(x->node, "axis", old ? 1 : -1);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tx_softmax_desc d = {.axis = (int)axis, .coerce_2d = old};
    tx_tensor in, y;
    tx_status st = tx_x_float_input_only(x, 0);
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_softmax(x->ctx, op, in, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* LayerNormalization's optional outputs Mean and InvStdDev (over dims
 * [axis, rank), kept as 1s): separate reductions, only when a model reads them. */
static tx_status layer_norm_stats(tx_xnode *x, tx_tensor in, int axis, float eps) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_tensor_shape(x->ctx, in, &rank, shape, NULL);
    if (st)
        return st;
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %d for rank %d", axis, rank);
    tx_reduce_desc rd = {.n_axes = rank - a};
    for (int i = a; i < rank; i++)
        rd.axes[i - a] = i;
    tx_tmp_list l = {0};
    tx_tensor mean, t[6];
    st = tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, in, &rd, &mean);
    if (st)
        return st;
    st = tx_binary(x->ctx, TX_OP_SUB, in, mean, &t[0]);
    if (!st && (l.t[l.n++] = t[0], true))
        st = tx_binary(x->ctx, TX_OP_MUL, t[0], t[0], &t[1]);
    if (!st && (l.t[l.n++] = t[1], true))
        st = tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, t[1], &rd, &t[2]);
    if (!st && (l.t[l.n++] = t[2], true))
        st = tx_x_scalar(x, eps, &t[3]);
    if (!st && (l.t[l.n++] = t[3], true))
        st = tx_binary(x->ctx, TX_OP_ADD, t[2], t[3], &t[4]);
    if (!st && (l.t[l.n++] = t[4], true))
        st = tx_unary(x->ctx, TX_OP_SQRT, t[4], &t[5]);
    tx_tensor inv = {0};
    if (!st && (l.t[l.n++] = t[5], true))
        st = tx_unary(x->ctx, TX_OP_RECIPROCAL, t[5], &inv);
    tx_tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev(x, 1, mean, TX_ONNX_FLOAT);
    else
        tx_tensor_destroy(x->ctx, mean);
    if (!st && x->n_out > 2)
        st = tx_x_set_dev(x, 2, inv, TX_ONNX_FLOAT);
    else if (inv.id)
        tx_tensor_destroy(x->ctx, inv);
    return st;
}

static tx_status exec_norm(tx_xnode *x) {
    const char *t = x->node->op_type;
    tx_op op = strcmp(t, "BatchNormalization") == 0      ? TX_OP_BATCH_NORM
               : strcmp(t, "InstanceNormalization") == 0 ? TX_OP_INSTANCE_NORM
                                                         : TX_OP_LAYER_NORM;
    if (op == TX_OP_BATCH_NORM && tx_attr_int(x->node, "training_mode", 0) != 0)
        return tx_onnx_batch_norm_training(x);
    for (int o = 1; o < x->n_out && op != TX_OP_LAYER_NORM; o++)
        if (x->out[o])
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                             "output %d (training statistics) is "
                             "unsupported",
                             o);
    if (op == TX_OP_BATCH_NORM &&
        (tx_attr_int(x->node, "training_mode", 0) != 0 || tx_attr_int(x->node, "spatial", 1) == 0))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "training_mode / spatial=0 is unsupported");
    float eps = tx_attr_float(x->node, "epsilon", 1e-5f);
    if (!(eps >= 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "epsilon %g", (double)eps);
    tx_norm_desc d = {.epsilon = eps > 0 ? eps : 1e-30f}; /* 0 means the default there */
    if (op == TX_OP_LAYER_NORM) {
        int64_t axis = tx_attr_int(x->node, "axis", -1);
        if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
        d.axis = (int)axis;
    }
    int want = op == TX_OP_BATCH_NORM ? 5 : 3;
    tx_tensor in[5];
    int n = 0;
    tx_status st = TX_STATUS_OK;
    for (int i = 0; i < want && i < x->n_in && !st; i++) {
        if (!tx_x_has(x, i))
            break;
        st = tx_x_float_input_only(x, i);
        if (!st)
            st = tx_x_dev(x, i, &in[n++]);
    }
    if (st)
        return st;
    if (n < (op == TX_OP_LAYER_NORM ? 2 : want))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs %d inputs, got %d", want, n);
    tx_tensor y;
    st = tx_norm(x->ctx, op, in, n, &d, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    bool stats = x->n_out > 1 && (x->out[1] || (x->n_out > 2 && x->out[2]));
    if (!st && op == TX_OP_LAYER_NORM && stats)
        st = layer_norm_stats(x, in[0], d.axis, eps);
    return st;
}

/* Hardmax: 1 where ArgMax along the axis is (the first maximum), else 0: the
 * argmax compared with an index ramp along the axis. Before opset 13 the input
 * is coerced to 2-D at axis (default 1) and the maximum taken over the
 * flattened trailing dims. */
static tx_status exec_hardmax(tx_xnode *x) {
    bool old = x->opset < 13;
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", old ? 1 : -1);
    if (rank < 1 || axis < -rank || axis >= rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d", (long long)axis,
                         rank);
    int a = tx_norm_axis(axis, rank);
    tx_tmp_list l = {0};
    tx_tensor in, v, am, ramp, eq, y = {0};
    int vr = rank;
    int64_t vs[TX_MAX_RANK];
    memcpy(vs, shape, sizeof vs);
    if (old) { /* [prod(:a), prod(a:)], max over dim 1 */
        vr = 2;
        vs[0] = tx_numel_of(a, shape);
        vs[1] = tx_numel_of(rank - a, shape + a);
        a = 1;
    }
    tx_hval r;
    int64_t rs[TX_MAX_RANK];
    for (int d = 0; d < vr; d++)
        rs[d] = d == a ? vs[a] : 1;
    if (!tx_hval_alloc(&r, TX_ONNX_INT64, vr, rs))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < r.numel; k++)
        r.i[k] = k;
    st = tx_x_dev(x, 0, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, vr, vs, &v)))
        l.t[l.n++] = v;
    tx_reduce_desc rd = {.n_axes = 1, .axes = {a}};
    if (!st && !(st = tx_reduce(x->ctx, TX_OP_ARGMAX, v, &rd, &am)))
        l.t[l.n++] = am;
    if (!st && !(st = tx_hval_upload(x->ctx, x->node->name, &r, &ramp)))
        l.t[l.n++] = ramp;
    tx_hval_free(&r);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_EQUAL, ramp, am, &eq)))
        l.t[l.n++] = eq;
    tx_tensor f;
    if (!st && !(st = tx_x_to_dtype(x, eq, TX_DTYPE_FLOAT32, &l, &f)))
        st = tx_tensor_reshape(x->ctx, f, rank, shape, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"BatchNormalization", exec_norm, tx_x_infer_same, 0, 5, 5, 0},
    {"InstanceNormalization", exec_norm, tx_x_infer_same, 0, 3, 3, 0},
    {"LayerNormalization", exec_norm, tx_x_infer_same, 0, 2, 3, 0},
    {"Softmax", exec_softmax, tx_x_infer_same, 0, 1, 1, 0},
    {"LogSoftmax", exec_softmax, tx_x_infer_same, 0, 1, 1, 0},
    {"Hardmax", exec_hardmax, tx_x_infer_same, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_norm = {k_ops, TX_COUNTOF(k_ops)};
