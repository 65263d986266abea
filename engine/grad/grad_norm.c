/* Gradients of the normalizations.
 *
 * batch_norm (inference: fixed mean and var): y = (x - mean) s + B with
 * s = scale / sqrt(var + eps) per channel, so dx = g s, dB = sum g,
 * dscale = sum g (x - mean) / sqrt(var + eps), dmean = -sum g s,
 * dvar = -sum g (x - mean) scale / 2 (var + eps)^(3/2).
 * layer_norm and instance_norm normalize x over some dims R with its own
 * mean and variance: x^ = (x - mu) r, r = 1 / sqrt(var + eps), y = x^ scale + bias;
 * with h = g scale: dx = r (h - mean_R(h) - x^ mean_R(h x^)), dscale = sum g x^,
 * dbias = sum g (summed back to their shapes). */
#include "grad.h"

/* A [C] tensor viewed to broadcast against x [N, C, ...]. */
static tx_status per_channel(tx_ctx *ctx, tx_tensor t, const tx_slot *xs, gx_tmps *l,
                             tx_tensor *out) {
    int64_t shape[TX_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
        shape[i] = i == 1 ? xs->shape[1] : 1;
    return gx_view(ctx, t, xs->rank, shape, l, out);
}

/* sum of t [N, C, ...] over every dim but 1: [C]. */
static tx_status chan_sum(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    const tx_slot *ts = gx_slot(ctx, t);
    tx_reduce_desc all = {.drop_dims = true};
    for (int a = 0; a < ts->rank; a++)
        if (a != 1)
            all.axes[all.n_axes++] = a;
    return gx_red(ctx, TX_OP_REDUCE_SUM, t, &all, l, out);
}

static tx_status batch_norm(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                            tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    float eps = nd->a.norm.epsilon ? nd->a.norm.epsilon : 1e-5f;
    tx_tensor sc, mu, var, ve, r, s, xm, gx, t, u;
    tx_status st = per_channel(ctx, nd->in[1], xs, l, &sc);
    if (!st)
        st = per_channel(ctx, nd->in[3], xs, l, &mu);
    if (!st)
        st = per_channel(ctx, nd->in[4], xs, l, &var);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_ADD, var, eps, l, &ve);
    if (!st)
        st = gx_un(ctx, TX_OP_SQRT, ve, l, &r);
    if (st)
        return st;
    st = gx_un(ctx, TX_OP_RECIPROCAL, r, l, &r); /* 1 / sqrt(var + eps) */
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, sc, r, l, &s);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, g, s, l, &gx);
    if (!st)
        st = gx_bin(ctx, TX_OP_SUB, nd->in[0], mu, l, &xm);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, g, xm, l, &t); /* g (x - mean) */
    if (st)
        return st;
    gin[0] = gx;
    st = gx_bin(ctx, TX_OP_MUL, t, r, l, &u);
    if (!st)
        st = chan_sum(ctx, u, l, &gin[1]);
    if (!st)
        st = chan_sum(ctx, g, l, &gin[2]);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_MUL, gx, -1.0f, l, &u);
    if (!st)
        st = chan_sum(ctx, u, l, &gin[3]);
    if (!st) /* -g (x - mean) s r^2 / 2 */
        st = gx_bin(ctx, TX_OP_MUL, t, s, l, &u);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, u, r, l, &u);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, u, r, l, &u);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_MUL, u, -0.5f, l, &u);
    return st ? st : chan_sum(ctx, u, l, &gin[4]);
}

static tx_status normalized(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                            tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    float eps = nd->a.norm.epsilon ? nd->a.norm.epsilon : 1e-5f;
    tx_reduce_desc rd = {0};
    bool inst = nd->op == TX_OP_INSTANCE_NORM;
    int first = inst ? 2 : (nd->a.norm.axis < 0 ? nd->a.norm.axis + xs->rank : nd->a.norm.axis);
    for (int i = first; i < xs->rank; i++)
        rd.axes[rd.n_axes++] = i;
    tx_tensor mu, xm, sq, var, r, xh, sc, h, m1, hx, m2, t, dx;
    tx_status st = gx_red(ctx, TX_OP_REDUCE_MEAN, nd->in[0], &rd, l, &mu);
    if (!st)
        st = gx_bin(ctx, TX_OP_SUB, nd->in[0], mu, l, &xm);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, xm, xm, l, &sq);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_MEAN, sq, &rd, l, &var);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_ADD, var, eps, l, &var);
    if (!st)
        st = gx_un(ctx, TX_OP_SQRT, var, l, &r);
    if (!st)
        st = gx_un(ctx, TX_OP_RECIPROCAL, r, l, &r);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, xm, r, l, &xh);
    if (!st)
        st = inst ? per_channel(ctx, nd->in[1], xs, l, &sc) : (sc = nd->in[1], TX_STATUS_OK);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, g, sc, l, &h);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_MEAN, h, &rd, l, &m1);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, h, xh, l, &hx);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_MEAN, hx, &rd, l, &m2);
    if (!st)
        st = gx_bin(ctx, TX_OP_SUB, h, m1, l, &t);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, xh, m2, l, &hx);
    if (!st)
        st = gx_bin(ctx, TX_OP_SUB, t, hx, l, &t);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, t, r, l, &dx);
    if (st)
        return st;
    gin[0] = dx;
    /* scale and bias: summed back (instance_norm's are [C]: over every dim but 1) */
    for (int i = 1; i < nd->n_in && !st; i++) {
        const tx_slot *ps = gx_slot(ctx, nd->in[i]);
        tx_tensor gi = g;
        if (i == 1)
            st = gx_bin(ctx, TX_OP_MUL, g, xh, l, &gi);
        if (st)
            break;
        if (inst)
            st = chan_sum(ctx, gi, l, &gi);
        if (!st)
            st = gx_unbroadcast(ctx, gi, ps->rank, ps->shape, l, &gin[i]);
    }
    return st;
}

tx_status gx_backward_norm(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    return nd->op == TX_OP_BATCH_NORM ? batch_norm(ctx, nd, g, l, gin)
                                      : normalized(ctx, nd, g, l, gin);
}
