/* Gradients of reductions and softmax.
 *
 * A reduction's g is viewed with the reduced dims kept (size 1) and
 * broadcast back over them: sum passes it on, mean divides by the count,
 * sum_square multiplies by 2x, max/min keep it where x equals the result.
 * softmax: dx = y (g - sum(g y)); log_softmax: dx = g - exp(y) sum(g), the
 * sums along the softmax axis. */
#include "grad.h"

/* x's shape with the reduced axes of d set to 1 (rank of x); false: a no-op. */
static bool kept_shape(const tx_slot *xs, const tx_reduce_desc *d, int64_t *shape) {
    if (d->n_axes == 0 && d->noop_with_empty_axes)
        return false;
    for (int i = 0; i < xs->rank; i++)
        shape[i] = d->n_axes == 0 ? 1 : xs->shape[i];
    for (int j = 0; j < d->n_axes; j++)
        shape[d->axes[j] < 0 ? d->axes[j] + xs->rank : d->axes[j]] = 1;
    return true;
}

static tx_status reduce_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                 tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    int64_t shape[TX_MAX_RANK];
    if (!kept_shape(xs, &nd->a.reduce, shape)) {
        *dx = g;
        return TX_STATUS_OK;
    }
    tx_tensor gk, yk, t;
    tx_status st = gx_view(ctx, g, xs->rank, shape, l, &gk);
    if (st)
        return st;
    switch (nd->op) {
    case TX_OP_REDUCE_SUM: break;
    case TX_OP_REDUCE_MEAN: {
        int64_t kept = 1;
        for (int i = 0; i < xs->rank; i++)
            kept *= shape[i];
        st = gx_bin_s(ctx, TX_OP_MUL, gk, (float)kept / (float)xs->numel, l, &gk);
        break;
    }
    case TX_OP_REDUCE_SUM_SQUARE:
        st = gx_bin_s(ctx, TX_OP_MUL, nd->in[0], 2.0f, l, &t);
        return st ? st : gx_bin(ctx, TX_OP_MUL, t, gk, l, dx);
    case TX_OP_REDUCE_MAX:
    case TX_OP_REDUCE_MIN:
        st = gx_view(ctx, nd->out, xs->rank, shape, l, &yk);
        if (!st)
            st = gx_bin(ctx, TX_OP_EQUAL, nd->in[0], yk, l, &t);
        return st ? st : gx_bin(ctx, TX_OP_MUL, t, gk, l, dx);
    default:
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "tx_tape_grad: %s has no gradient yet",
                       tx_op_name((tx_op)nd->op));
    }
    if (st)
        return st;
    st = tx_expand(ctx, gk, xs->rank, xs->shape, dx);
    if (!st)
        gx_keep(l, *dx);
    return st;
}

static tx_status softmax_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                  tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    if (nd->a.softmax.coerce_2d)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: %s over flattened dims (coerce_2d) has no gradient yet",
                       tx_op_name((tx_op)nd->op));
    tx_reduce_desc rd = {.n_axes = 1, .axes = {nd->a.softmax.axis}};
    (void)xs;
    tx_tensor y = nd->out, t, s, p;
    tx_status st;
    if (nd->op == TX_OP_SOFTMAX) {
        st = gx_bin(ctx, TX_OP_MUL, g, y, l, &t);
        if (!st)
            st = gx_red(ctx, TX_OP_REDUCE_SUM, t, &rd, l, &s);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, s, l, &t);
        return st ? st : gx_bin(ctx, TX_OP_MUL, y, t, l, dx);
    }
    st = gx_red(ctx, TX_OP_REDUCE_SUM, g, &rd, l, &s);
    if (!st)
        st = gx_un(ctx, TX_OP_EXP, y, l, &p);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, p, s, l, &t);
    return st ? st : gx_bin(ctx, TX_OP_SUB, g, t, l, dx);
}

tx_status gx_backward_reduce(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor gin[GX_MAX_IN]) {
    return tx_op_family((tx_op)nd->op) == TX_FAMILY_SOFTMAX
               ? softmax_backward(ctx, nd, g, l, &gin[0])
               : reduce_backward(ctx, nd, g, l, &gin[0]);
}
