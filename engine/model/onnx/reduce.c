/* ONNX reductions: Reduce*, ArgMax, ArgMin. */
#include <string.h>

#include "common.h"

static tx_status exec_reduce(tx_xnode *x) {
    static const tx_onnx_name_op k[] = {{"ReduceSum", TX_OP_REDUCE_SUM},
                                        {"ReduceMean", TX_OP_REDUCE_MEAN},
                                        {"ReduceMax", TX_OP_REDUCE_MAX},
                                        {"ReduceMin", TX_OP_REDUCE_MIN},
                                        {"ReduceProd", TX_OP_REDUCE_PROD},
                                        {"ReduceL1", TX_OP_REDUCE_L1},
                                        {"ReduceL2", TX_OP_REDUCE_L2},
                                        {"ReduceSumSquare", TX_OP_REDUCE_SUM_SQUARE},
                                        {"ReduceLogSum", TX_OP_REDUCE_LOG_SUM},
                                        {"ReduceLogSumExp", TX_OP_REDUCE_LOG_SUM_EXP},
                                        {"ArgMax", TX_OP_ARGMAX},
                                        {"ArgMin", TX_OP_ARGMIN}};
    tx_op op = tx_onnx_name_to_op(k, TX_COUNTOF(k), x->node->op_type);
    bool arg = op == TX_OP_ARGMAX || op == TX_OP_ARGMIN;
    tx_reduce_desc d = {0};
    d.drop_dims = tx_attr_int(x->node, "keepdims", 1) == 0;
    tx_status st = TX_STATUS_OK;
    if (arg) {
        int64_t axis = tx_attr_int(x->node, "axis", 0);
        if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
        d.n_axes = 1;
        d.axes[0] = (int)axis;
        d.select_last_index = tx_attr_int(x->node, "select_last_index", 0) != 0;
    } else {
        int64_t axes[TX_MAX_RANK];
        int n;
        /* axes became an input in opset 13 for ReduceSum, 18 for the rest */
        st = tx_x_ints_attr_or_input(x, "axes", op == TX_OP_REDUCE_SUM ? 13 : 18, 1, axes,
                                     TX_MAX_RANK, &n);
        if (st)
            return st;
        for (int j = 0; j < n; j++) {
            if (axes[j] < -TX_MAX_RANK || axes[j] >= TX_MAX_RANK)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axes[j]);
            d.axes[j] = (int)axes[j];
        }
        d.n_axes = n > 0 ? n : 0;
        d.noop_with_empty_axes = tx_attr_int(x->node, "noop_with_empty_axes", 0) != 0;
    }
    int elem = tx_x_elem(x, 0);
    bool int_ok = arg || op == TX_OP_REDUCE_SUM || op == TX_OP_REDUCE_MAX || op == TX_OP_REDUCE_MIN;
    tx_tmp_list l = {0};
    tx_tensor in, y;
    st = tx_x_dev(x, 0, &in);
    if (!st && !int_ok)
        st = tx_x_to_dtype(x, in, TX_DTYPE_FLOAT32, &l, &in);
    if (!st)
        st = tx_reduce(x->ctx, op, in, &d, &y);
    tx_tmps_free(x, &l);
    if (st)
        return st;
    return arg ? tx_x_set_dev(x, 0, y, TX_ONNX_INT64) : tx_x_set_dev_typed(x, 0, y, elem, true);
}

/* Static output info: the reduced dims become 1 (keepdims) or go; ArgMax /
 * ArgMin give int64. Unknown where the axes are not constants or the input
 * rank is unknown; a bad axis is the run's to report. */
static tx_status infer_reduce(tx_xnode *x) {
    tx_op op = strcmp(x->node->op_type, "ArgMax") == 0   ? TX_OP_ARGMAX
               : strcmp(x->node->op_type, "ArgMin") == 0 ? TX_OP_ARGMIN
                                                         : TX_OP_NONE;
    int ex, rx;
    int64_t sx[TX_MAX_RANK], axes[TX_MAX_RANK], o[TX_MAX_RANK];
    tx_x_info(x, 0, &ex, &rx, sx);
    if (rx < 1)
        return TX_STATUS_OK;
    int n = 1;
    if (op != TX_OP_NONE) {
        axes[0] = tx_attr_int(x->node, "axis", 0);
    } else {
        bool sum = strcmp(x->node->op_type, "ReduceSum") == 0;
        if (tx_x_ints_attr_or_input(x, "axes", sum ? 13 : 18, 1, axes, TX_MAX_RANK, &n))
            return TX_STATUS_OK;
        if (n <= 0 && tx_attr_int(x->node, "noop_with_empty_axes", 0))
            return tx_x_infer_same(x);
    }
    bool red[TX_MAX_RANK] = {false};
    for (int j = 0; j < n; j++) {
        if (axes[j] < -rx || axes[j] >= rx)
            return TX_STATUS_OK;
        red[tx_norm_axis(axes[j], rx)] = true;
    }
    bool keep = tx_attr_int(x->node, "keepdims", 1) != 0;
    int ro = 0;
    for (int i = 0; i < rx; i++)
        if (n <= 0 || red[i]) {
            if (keep)
                o[ro++] = 1;
        } else {
            o[ro++] = sx[i];
        }
    tx_x_set_info(x, 0, op != TX_OP_NONE ? TX_ONNX_INT64 : ex, ro, o);
    return TX_STATUS_OK;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"ReduceSum", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceMean", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceMax", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceMin", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceProd", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceL1", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceL2", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceSumSquare", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceLogSum", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ReduceLogSumExp", exec_reduce, infer_reduce, 0, 1, 2, 2},
    {"ArgMax", exec_reduce, infer_reduce, 0, 1, 1, 0},
    {"ArgMin", exec_reduce, infer_reduce, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_reduce = {k_ops, TX_COUNTOF(k_ops)};
