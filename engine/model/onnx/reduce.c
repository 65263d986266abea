/* ONNX reductions: Reduce*, ArgMax, ArgMin. */
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

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"ReduceSum", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMean", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMax", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMin", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceProd", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceL1", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceL2", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceSumSquare", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceLogSum", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceLogSumExp", exec_reduce, NULL, 0, 1, 2, 2},
    {"ArgMax", exec_reduce, NULL, 0, 1, 1, 0},
    {"ArgMin", exec_reduce, NULL, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_reduce = {k_ops, TX_COUNTOF(k_ops)};
