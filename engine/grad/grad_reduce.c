/* Gradients of reductions and softmax.
 *
 * A reduction's g is viewed with the reduced dims kept (size 1) and
 * broadcast back over them: sum passes it on, mean divides by the count,
 * sum_square multiplies by 2x, max/min keep it where x equals the result,
 * l1 multiplies by sign(x), l2 by x / y (0 where y is), log_sum by 1 / exp(y), log_sum_exp
 * by exp(x - y), prod by the product of the other elements; argmax/argmin
 * (integers) pass none.
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

/* reduce_prod: dx = g times the product of the other elements of x's group:
 * y / x where x != 0; where x == 0, the product of the group's nonzero
 * elements if x is its only zero, else 0 (no division by zero anywhere that
 * is kept). */
static tx_status prod_backward(tx_ctx *ctx, const gx_node *nd, const int64_t *shape, tx_tensor gk,
                               gx_tmps *l, tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_reduce_desc rd = nd->a.reduce;
    rd.drop_dims = false;
    tx_tensor x = nd->in[0], yk, z, nz, p, n, one, t, others;
    tx_status st = gx_view(ctx, nd->out, xs->rank, shape, l, &yk);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_EQUAL, x, 0.0f, l, &z);
    if (!st) /* x with its zeros made ones */
        st = gx_bin(ctx, TX_OP_ADD, x, z, l, &nz);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_PROD, nz, &rd, l, &p);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_SUM, z, &rd, l, &n);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_EQUAL, n, 1.0f, l, &one);
    if (!st) /* the product of the others where x is the group's only zero */
        st = gx_bin(ctx, TX_OP_MUL, p, one, l, &p);
    if (!st)
        st = gx_bin(ctx, TX_OP_DIV, yk, nz, l, &t); /* y / x where x != 0 */
    if (!st)
        st = gx_kept(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){z, p, t}, 3, &others), l, &others);
    return st ? st : gx_bin(ctx, TX_OP_MUL, others, gk, l, dx);
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
    case TX_OP_REDUCE_L1: /* g sign(x) */
        st = gx_un(ctx, TX_OP_SIGN, nd->in[0], l, &t);
        return st ? st : gx_bin(ctx, TX_OP_MUL, t, gk, l, dx);
    case TX_OP_REDUCE_L2:          /* g x / y */
    case TX_OP_REDUCE_LOG_SUM_EXP: /* g exp(x - y) */
        st = gx_view(ctx, nd->out, xs->rank, shape, l, &yk);
        if (!st)
            st = gx_bin(ctx, nd->op == TX_OP_REDUCE_L2 ? TX_OP_DIV : TX_OP_SUB, nd->in[0], yk, l,
                        &t);
        if (!st && nd->op == TX_OP_REDUCE_LOG_SUM_EXP)
            st = gx_un(ctx, TX_OP_EXP, t, l, &t);
        if (!st && nd->op == TX_OP_REDUCE_L2) { /* an all-zero group: 0, not 0 / 0 */
            tx_tensor z, zero;
            st = gx_bin_s(ctx, TX_OP_EQUAL, yk, 0.0f, l, &z);
            if (!st)
                st = gx_scalar(ctx, t, 0.0f, l, &zero);
            if (!st)
                st = gx_kept(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){z, zero, t}, 3, &t), l, &t);
        }
        return st ? st : gx_bin(ctx, TX_OP_MUL, t, gk, l, dx);
    case TX_OP_REDUCE_LOG_SUM: /* g / exp(y) (the sum), spread */
        st = gx_view(ctx, nd->out, xs->rank, shape, l, &yk);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, yk, -1.0f, l, &t);
        if (!st)
            st = gx_un(ctx, TX_OP_EXP, t, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, gk, l, &gk);
        break;
    case TX_OP_REDUCE_PROD: return prod_backward(ctx, nd, shape, gk, l, dx);
    case TX_OP_ARGMAX:
    case TX_OP_ARGMIN: *dx = (tx_tensor){0}; return TX_STATUS_OK; /* integer output */
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
    tx_reduce_desc rd = {.n_axes = 1, .axes = {nd->a.softmax.axis}};
    tx_tensor y = nd->out, t, s, p, d;
    tx_status st = TX_STATUS_OK;
    if (nd->a.softmax.coerce_2d) { /* over dims [axis, rank) as one: on [pre, post] views */
        int ax = rd.axes[0] < 0 ? rd.axes[0] + xs->rank : rd.axes[0];
        int64_t pre = 1;
        for (int i = 0; i < ax; i++)
            pre *= xs->shape[i];
        int64_t v2[2] = {pre, pre ? xs->numel / pre : 0};
        rd.axes[0] = 1;
        st = gx_view(ctx, y, 2, v2, l, &y);
        if (!st)
            st = gx_view(ctx, g, 2, v2, l, &g);
    }
    if (!st && nd->op == TX_OP_SOFTMAX) {
        st = gx_bin(ctx, TX_OP_MUL, g, y, l, &t);
        if (!st)
            st = gx_red(ctx, TX_OP_REDUCE_SUM, t, &rd, l, &s);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, s, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, y, t, l, &d);
    } else if (!st) {
        st = gx_red(ctx, TX_OP_REDUCE_SUM, g, &rd, l, &s);
        if (!st)
            st = gx_un(ctx, TX_OP_EXP, y, l, &p);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, p, s, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, t, l, &d);
    }
    return st ? st : gx_view(ctx, d, xs->rank, xs->shape, l, dx);
}

tx_status gx_backward_reduce(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor gin[GX_MAX_IN]) {
    return tx_op_family((tx_op)nd->op) == TX_FAMILY_SOFTMAX
               ? softmax_backward(ctx, nd, g, l, &gin[0])
               : reduce_backward(ctx, nd, g, l, &gin[0]);
}
