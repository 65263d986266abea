/* ONNX losses: SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, run by
 * the engine's tx_softmax_cross_entropy / tx_nll_loss (engine/grad/loss.c:
 * composed from engine ops on the session's device). */
#include <string.h>

#include "common.h"

static tx_status loss_desc(tx_xnode *x, tx_loss_desc *d) {
    const char *r = tx_attr_str(x->node, "reduction", "mean");
    memset(d, 0, sizeof *d);
    if (strcmp(r, "mean") == 0)
        d->reduction = TX_LOSS_MEAN;
    else if (strcmp(r, "sum") == 0)
        d->reduction = TX_LOSS_SUM;
    else if (strcmp(r, "none") == 0)
        d->reduction = TX_LOSS_NONE;
    else
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "reduction \"%s\" (want \"none\", \"sum\" or \"mean\")", r);
    if (tx_attr_find(x->node, "ignore_index")) {
        int64_t ii = tx_attr_int(x->node, "ignore_index", 0);
        if (ii < INT32_MIN || ii > INT32_MAX)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "ignore_index %lld", (long long)ii);
        d->has_ignore_index = true;
        d->ignore_index = (int32_t)ii;
    }
    return TX_STATUS_OK;
}

static tx_status exec_loss(tx_xnode *x) {
    bool sce = strcmp(x->node->op_type, "SoftmaxCrossEntropyLoss") == 0;
    tx_loss_desc d;
    tx_status st = loss_desc(x, &d);
    if (!st)
        st = tx_x_float_input_only(x, 0);
    if (st)
        return st;
    tx_tmp_list l = {0};
    tx_tensor in, labels, loss, lp = {0};
    st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_INT32, &l, &labels);
    if (!st && tx_x_has(x, 2))
        st = tx_x_dev_as(x, 2, TX_DTYPE_FLOAT32, &l, &d.weight);
    if (!st)
        st = sce ? tx_softmax_cross_entropy(x->ctx, in, labels, &d, &loss,
                                            x->n_out > 1 && x->out[1] ? &lp : NULL)
                 : tx_nll_loss(x->ctx, in, labels, &d, &loss);
    tx_tmps_free(x, &l);
    if (st)
        return st == TX_STATUS_DEFER ? st : tx_x_fail(x, st, "%s", tx_last_error(x->ctx));
    int elem = tx_x_elem(x, 0);
    st = tx_x_set_dev(x, 0, loss, elem);
    if (lp.id)
        st = st ? (tx_tensor_destroy(x->ctx, lp), st) : tx_x_set_dev(x, 1, lp, elem);
    return st;
}

static tx_status infer_loss(tx_xnode *x) {
    int elem, rank, lrank;
    int64_t shape[TX_MAX_RANK], lshape[TX_MAX_RANK];
    tx_x_info(x, 0, &elem, &rank, shape);
    tx_x_info(x, 1, &(int){0}, &lrank, lshape);
    tx_loss_desc d;
    tx_status st = loss_desc(x, &d);
    if (st)
        return st;
    if (d.reduction == TX_LOSS_NONE)
        tx_x_set_info(x, 0, elem, lrank, lshape);
    else
        tx_x_set_info(x, 0, elem, 0, NULL);
    if (x->n_out > 1)
        tx_x_set_info(x, 1, elem, rank, shape);
    return TX_STATUS_OK;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"SoftmaxCrossEntropyLoss", exec_loss, infer_loss, 0, 2, 3, 0},
    {"NegativeLogLikelihoodLoss", exec_loss, infer_loss, 0, 2, 3, 0},
};

const tx_onnx_family tx_onnx_ops_loss = {k_ops, TX_COUNTOF(k_ops)};
