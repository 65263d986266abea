/* The losses and their gradients, composed from engine ops on the inputs'
 * device (no kernel of their own: each is a handful of elementwise ops and
 * reductions, the same draws a fused kernel would make at these sizes).
 *
 * Negative log-likelihood over x [N, C, D] (D: the trailing dims flattened)
 * and labels [N, D]: a label's one-hot mask is equal(labels [N, 1, D], a ramp
 * [1, C, 1] of 0..C-1), so a label outside [0, C) selects nothing; an
 * ignore_index inside [0, C) gets -1 in the ramp, which no valid label
 * equals. wm = mask · weight[c]; loss[n, d] = -sum_c x · wm; mean divides the
 * sum by sum(wm). The gradients reuse the same mask: d nll / dx = -wm · g',
 * d sce / dscores = (softmax · sum_c wm - wm) · g'. */
#include <stdlib.h>

#include "grad.h"

static const char *loss_name(int op) {
    return op == GX_OP_SCE ? "softmax_cross_entropy" : "nll_loss";
}

/* Checks x [N, C, d...], labels [N, d...] int32 and the desc; N, C, D out. */
static tx_status check(tx_ctx *ctx, const char *name, tx_tensor x, tx_tensor labels,
                       const tx_loss_desc *d, int64_t *n, int64_t *c, int64_t *dd) {
    tx_slot *xs, *ls, *ws;
    tx_status st = tx_check_input(ctx, name, "x", x, true, &xs);
    if (!st)
        st = tx_check_input(ctx, name, "labels", labels, false, &ls);
    if (st)
        return st;
    if ((unsigned)d->reduction >= TX_LOSS_REDUCTION_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: unknown reduction %d", name,
                       (int)d->reduction);
    if (ls->dtype != TX_DTYPE_INT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: labels must be int32", name);
    char a[160], b[160];
    tx_shape_str(a, sizeof a, xs->rank, xs->shape);
    tx_shape_str(b, sizeof b, ls->rank, ls->shape);
    bool ok = xs->rank >= 2 && ls->rank == xs->rank - 1 && ls->shape[0] == xs->shape[0];
    for (int i = 1; ok && i < ls->rank; i++)
        ok = ls->shape[i] == xs->shape[i + 1];
    if (!ok)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "%s: x %s and labels %s: want x [N, C, d...] and labels [N, d...]", name, a,
                       b);
    *n = xs->shape[0];
    *c = xs->shape[1];
    *dd = xs->numel / (*n * *c > 0 ? *n * *c : 1);
    if (d->weight.id) {
        st = tx_check_input(ctx, name, "weight", d->weight, true, &ws);
        if (st)
            return st;
        if (ws->rank != 1 || ws->shape[0] != *c) {
            tx_shape_str(b, sizeof b, ws->rank, ws->shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: weight %s for x %s: want [%lld]",
                           name, b, a, (long long)*c);
        }
    }
    return TX_STATUS_OK;
}

/* wm [N, C, D]: the labels' one-hot masks times their class weights. */
static tx_status weighted_mask(tx_ctx *ctx, tx_tensor x, tx_tensor labels, const tx_loss_desc *d,
                               int64_t n, int64_t c, int64_t dd, gx_tmps *l, tx_tensor *wm) {
    int32_t *ramp = malloc(sizeof(int32_t) * (size_t)c);
    if (!ramp)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "loss: out of host memory");
    for (int64_t i = 0; i < c; i++)
        ramp[i] = (int32_t)i;
    if (d->has_ignore_index && d->ignore_index >= 0 && d->ignore_index < c)
        ramp[d->ignore_index] = -1;
    tx_tensor r, lab, mask, maskf;
    tx_status st = tx_tensor_create(ctx,
                                    &(tx_tensor_desc){.rank = 3,
                                                      .shape = {1, c, 1},
                                                      .dtype = TX_DTYPE_INT32,
                                                      .data = ramp,
                                                      .device = gx_slot(ctx, x)->st->dev},
                                    &r);
    free(ramp);
    if (st)
        return st;
    gx_keep(l, r);
    st = gx_view(ctx, labels, 3, (int64_t[]){n, 1, dd}, l, &lab);
    if (!st)
        st = gx_bin(ctx, TX_OP_EQUAL, lab, r, l, &mask);
    if (!st)
        st = gx_kept(tx_cast(ctx, mask, TX_DTYPE_FLOAT32, false, &maskf), l, &maskf);
    if (st)
        return st;
    if (!d->weight.id) {
        *wm = maskf;
        return TX_STATUS_OK;
    }
    tx_tensor w3;
    st = gx_view(ctx, d->weight, 3, (int64_t[]){1, c, 1}, l, &w3);
    return st ? st : gx_bin(ctx, TX_OP_MUL, maskf, w3, l, wm);
}

static tx_status sum_all(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    tx_status st = tx_reduce(ctx, TX_OP_REDUCE_SUM, t, &(tx_reduce_desc){.drop_dims = true}, out);
    if (!st)
        gx_keep(l, *out);
    return st;
}

/* nll of x (log-probabilities) into *out (not kept in l). */
static tx_status nll(tx_ctx *ctx, const char *name, tx_tensor x, tx_tensor labels,
                     const tx_loss_desc *d, gx_tmps *l, tx_tensor *out) {
    int64_t n = 0, c = 0, dd = 0;
    tx_status st = check(ctx, name, x, labels, d, &n, &c, &dd);
    if (st)
        return st;
    tx_tensor x3, wm, prod, s, loss, num, den;
    st = gx_view(ctx, x, 3, (int64_t[]){n, c, dd}, l, &x3);
    if (!st)
        st = weighted_mask(ctx, x, labels, d, n, c, dd, l, &wm);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, x3, wm, l, &prod);
    if (!st)
        st = gx_red(ctx, TX_OP_REDUCE_SUM, prod,
                    &(tx_reduce_desc){.n_axes = 1, .axes = {1}, .drop_dims = true}, l, &s);
    if (!st)
        st = gx_un(ctx, TX_OP_NEG, s, l, &loss);
    if (st)
        return st;
    if (d->reduction == TX_LOSS_NONE) {
        const tx_slot *ls = gx_slot(ctx, labels);
        return tx_tensor_reshape(ctx, loss, ls->rank, ls->shape, out);
    }
    if (d->reduction == TX_LOSS_SUM)
        return tx_reduce(ctx, TX_OP_REDUCE_SUM, loss, &(tx_reduce_desc){.drop_dims = true}, out);
    st = sum_all(ctx, loss, l, &num);
    if (!st)
        st = sum_all(ctx, wm, l, &den);
    return st ? st : tx_binary(ctx, TX_OP_DIV, num, den, out);
}

tx_status tx_nll_loss(tx_ctx *ctx, tx_tensor x, tx_tensor labels, const tx_loss_desc *desc,
                      tx_tensor *out) {
    tx_status st = tx_check_arg(ctx, "nll_loss", "out", out != NULL);
    if (st)
        return st;
    tx_loss_desc d = desc ? *desc : (tx_loss_desc){0};
    gx_tmps l = {0};
    tx_tape_pause(ctx);
    st = nll(ctx, "nll_loss", x, labels, &d, &l, out);
    tx_tape_resume(ctx);
    gx_free(ctx, &l);
    if (!st)
        tx_tape_note(ctx, GX_OP_NLL, (tx_tensor[]){x, labels, d.weight}, d.weight.id ? 3 : 2, NULL,
                     &d, *out, (tx_tensor){0});
    return st;
}

tx_status tx_softmax_cross_entropy(tx_ctx *ctx, tx_tensor scores, tx_tensor labels,
                                   const tx_loss_desc *desc, tx_tensor *out, tx_tensor *log_prob) {
    tx_status st = tx_check_arg(ctx, "softmax_cross_entropy", "out", out != NULL);
    if (st)
        return st;
    tx_loss_desc d = desc ? *desc : (tx_loss_desc){0};
    gx_tmps l = {0};
    tx_tensor lp = {0}, lp_aux = {0};
    bool recording = tx_tape_recording(ctx);
    tx_tape_pause(ctx);
    st = tx_check_input(ctx, "softmax_cross_entropy", "scores", scores, true, &(tx_slot *){0});
    if (!st)
        st = tx_softmax(ctx, TX_OP_LOG_SOFTMAX, scores, &(tx_softmax_desc){.axis = 1}, &lp);
    if (!st)
        st = nll(ctx, "softmax_cross_entropy", lp, labels, &d, &l, out);
    if (!st && recording)
        st = tx_identity(ctx, lp, &lp_aux);
    tx_tape_resume(ctx);
    gx_free(ctx, &l);
    if (st) {
        if (lp.id)
            tx_tensor_destroy(ctx, lp);
        return st;
    }
    tx_tape_note(ctx, GX_OP_SCE, (tx_tensor[]){scores, labels, d.weight}, d.weight.id ? 3 : 2, NULL,
                 &d, *out, lp_aux);
    if (log_prob)
        *log_prob = lp;
    else
        tx_tensor_destroy(ctx, lp);
    return TX_STATUS_OK;
}

tx_status tx_mse_loss(tx_ctx *ctx, tx_tensor a, tx_tensor b, tx_loss_reduction reduction,
                      tx_tensor *out) {
    tx_status st = tx_check_arg(ctx, "mse_loss", "out", out != NULL);
    if (st)
        return st;
    if ((unsigned)reduction >= TX_LOSS_REDUCTION_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "mse_loss: unknown reduction %d",
                       (int)reduction);
    /* a - b, then its squares reduced in one pass; the difference stays
     * with the tape's node for the gradient (tx_tape_note frees it when
     * nothing records) */
    tx_tensor diff = {0};
    tx_tape_pause(ctx);
    st = tx_binary(ctx, TX_OP_SUB, a, b, &diff);
    if (!st)
        st = reduction == TX_LOSS_NONE  ? tx_binary(ctx, TX_OP_MUL, diff, diff, out)
             : reduction == TX_LOSS_SUM ? tx_reduce(ctx, TX_OP_REDUCE_SUM_SQUARE, diff,
                                                    &(tx_reduce_desc){.drop_dims = true}, out)
                                        : tx_reduce_mean_square(ctx, diff, out);
    tx_tape_resume(ctx);
    if (st) {
        if (diff.id)
            tx_tensor_destroy(ctx, diff);
        return st;
    }
    tx_tape_note(ctx, GX_OP_MSE, (tx_tensor[]){a, b}, 2, NULL,
                 &(tx_loss_desc){.reduction = reduction}, *out, diff);
    return st;
}

/* ---- gradients ---- */

/* g' [N, 1, D] or a scalar: the output gradient spread over the classes, and
 * for mean divided by sum(wm). */
static tx_status spread(tx_ctx *ctx, const gx_node *nd, tx_tensor g, tx_tensor wm, int64_t n,
                        int64_t dd, gx_tmps *l, tx_tensor *out) {
    if (nd->loss.reduction == TX_LOSS_NONE)
        return gx_view(ctx, g, 3, (int64_t[]){n, 1, dd}, l, out);
    if (nd->loss.reduction == TX_LOSS_SUM) {
        *out = g;
        return TX_STATUS_OK;
    }
    tx_tensor den;
    tx_status st = sum_all(ctx, wm, l, &den);
    return st ? st : gx_bin(ctx, TX_OP_DIV, g, den, l, out);
}

static tx_status mse_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                              tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *as = gx_slot(ctx, nd->in[0]), *bs = gx_slot(ctx, nd->in[1]);
    tx_tensor diff = nd->aux, gk, two, ga, gb, neg; /* a - b, kept by the forward pass */
    const tx_slot *ds = gx_slot(ctx, diff);
    float k = nd->loss.reduction == TX_LOSS_MEAN ? 2.0f / (float)(ds->numel ? ds->numel : 1) : 2.0f;
    /* g k first: one element unless the reduction is none */
    tx_status st = gx_bin_s(ctx, TX_OP_MUL, g, k, l, &gk);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, diff, gk, l, &two);
    if (!st && gx_need(nd, 0) && !(st = gx_unbroadcast(ctx, two, as->rank, as->shape, l, &ga)))
        gin[0] = ga;
    /* the targets' gradient only when asked for (they are data, mostly) */
    if (!st && gx_need(nd, 1)) {
        st = gx_unbroadcast(ctx, two, bs->rank, bs->shape, l, &gb);
        if (!st && !(st = gx_bin_s(ctx, TX_OP_MUL, gb, -1.0f, l, &neg)))
            gin[1] = neg;
    }
    return st;
}

tx_status gx_backward_loss(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    if (nd->op == GX_OP_MSE)
        return mse_backward(ctx, nd, g, l, gin);
    int64_t n = 0, c = 0, dd = 0;
    tx_tensor x = nd->op == GX_OP_SCE ? nd->aux : nd->in[0];
    tx_status st = check(ctx, loss_name(nd->op), x, nd->in[1], &nd->loss, &n, &c, &dd);
    if (st)
        return st;
    tx_tensor wm, gs, t, dx;
    st = weighted_mask(ctx, x, nd->in[1], &nd->loss, n, c, dd, l, &wm);
    if (!st)
        st = spread(ctx, nd, g, wm, n, dd, l, &gs);
    if (st)
        return st;
    if (nd->op == GX_OP_NLL) {
        st = gx_bin(ctx, TX_OP_MUL, wm, gs, l, &t);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, t, -1.0f, l, &dx);
    } else {
        tx_tensor lp3, p, wsel, pw;
        st = gx_view(ctx, nd->aux, 3, (int64_t[]){n, c, dd}, l, &lp3);
        if (!st)
            st = gx_un(ctx, TX_OP_EXP, lp3, l, &p);
        if (!st)
            st = gx_red(ctx, TX_OP_REDUCE_SUM, wm, &(tx_reduce_desc){.n_axes = 1, .axes = {1}}, l,
                        &wsel);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, p, wsel, l, &pw);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, pw, wm, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, gs, l, &dx);
    }
    if (st)
        return st;
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    return gx_view(ctx, dx, xs->rank, xs->shape, l, &gin[0]);
}
