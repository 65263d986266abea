/* Gradients of matmul and conv, written as matmuls and convs.
 *
 * matmul y = act(A B + bias): dA = gz B^T, dB = A^T gz (the transpose flags
 * pick which operand is transposed, no transpose is materialised), batch dims
 * summed back; dbias = gz summed over the rows.
 *
 * conv y = act(conv(x, w) + bias), 2-D (1-D runs as H = 1):
 *   dx = conv_transpose(gz, w) with the conv's strides, dilations, pads and
 *        groups, output_padding making it x's size exactly;
 *   dw = conv(x^T, gz^T) per group: x [N, C, H, W] and gz [N, M, Ho, Wo] with
 *        batch and channels swapped, strides and dilations swapped, so that
 *        out[c, m, i, j] = sum_{n, oh, ow} x[n, c, i d + oh s, ...] gz[n, m, oh, ow];
 *        cut to the kernel and transposed back to [M, C, kH, kW].
 * gz is g through the fused activation: from y where its derivative allows
 * (relu, clip, sigmoid, tanh), else from the pre-activation recomputed. */
#include <string.h>

#include "grad.h"

static tx_status mm(tx_ctx *ctx, tx_tensor a, tx_tensor b, bool ta, bool tb, gx_tmps *l,
                    tx_tensor *out) {
    tx_status st =
        tx_matmul(ctx, a, b, &(tx_matmul_desc){.transpose_a = ta, .transpose_b = tb}, out);
    if (!st)
        gx_keep(l, *out);
    return st;
}

/* g through the node's fused activation. */
static tx_status through_act(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor *gz) {
    bool conv = nd->op == TX_OP_CONV;
    tx_op act = conv ? nd->a.conv.activation : nd->a.matmul.activation;
    float lo = conv ? nd->a.conv.lo : 0, hi = conv ? nd->a.conv.hi : 0;
    if (gx_activation_from_output(act))
        return gx_activation_grad(ctx, act, lo, hi, nd->out, g, l, gz);
    tx_tensor z;
    tx_status st;
    if (conv) {
        tx_conv_desc d = nd->a.conv;
        d.activation = TX_OP_NONE;
        d.bias = nd->n_in > 2 ? nd->in[2] : (tx_tensor){0};
        st = tx_conv(ctx, nd->in[0], nd->in[1], &d, &z);
    } else {
        tx_matmul_desc d = nd->a.matmul;
        d.activation = TX_OP_NONE;
        d.bias = nd->n_in > 2 ? nd->in[2] : (tx_tensor){0};
        st = tx_matmul(ctx, nd->in[0], nd->in[1], &d, &z);
    }
    if (st)
        return st;
    gx_keep(l, z);
    return gx_unary_grad(ctx, act, lo, hi, z, nd->out, g, l, gz);
}

static tx_status matmul_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor gz, gx_tmps *l,
                                 tx_tensor gin[GX_MAX_IN]) {
    tx_tensor a = nd->in[0], b = nd->in[1], da, db;
    const tx_slot *as = gx_slot(ctx, a), *bs = gx_slot(ctx, b);
    if (as->rank < 2 || bs->rank < 2)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: matmul of a vector (rank 1) has no gradient yet");
    bool ta = nd->a.matmul.transpose_a, tb = nd->a.matmul.transpose_b;
    tx_status st = ta ? mm(ctx, b, gz, tb, true, l, &da) : mm(ctx, gz, b, false, !tb, l, &da);
    if (!st)
        st = tb ? mm(ctx, gz, a, true, ta, l, &db) : mm(ctx, a, gz, !ta, false, l, &db);
    if (!st)
        st = gx_unbroadcast(ctx, da, as->rank, as->shape, l, &gin[0]);
    if (!st)
        st = gx_unbroadcast(ctx, db, bs->rank, bs->shape, l, &gin[1]);
    if (!st && nd->n_in > 2) {
        const tx_slot *cs = gx_slot(ctx, nd->in[2]);
        st = gx_unbroadcast(ctx, gz, cs->rank, cs->shape, l, &gin[2]);
    }
    return st;
}

static tx_status transpose01(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    tx_status st = tx_transpose(ctx, t, (const int[]){1, 0, 2, 3}, out);
    if (!st)
        gx_keep(l, *out);
    return st;
}

/* Channels [lo, hi) of a 4-D tensor (t itself when that is all of them). */
static tx_status channels(tx_ctx *ctx, tx_tensor t, int64_t lo, int64_t hi, gx_tmps *l,
                          tx_tensor *out) {
    if (lo == 0 && hi == gx_slot(ctx, t)->shape[1]) {
        *out = t;
        return TX_STATUS_OK;
    }
    tx_slice_desc d = {.n = 1, .starts = {lo}, .ends = {hi}, .axes = {1}, .has_axes = true};
    tx_status st = tx_slice(ctx, t, &d, out);
    if (!st)
        gx_keep(l, *out);
    return st;
}

/* dw of one group: x4 [N, Cg, H, W], gz4 [N, Mg, Ho, Wo] → [Mg, Cg, kh, kw]. */
static tx_status weight_grad(tx_ctx *ctx, tx_tensor x4, tx_tensor gz4, const tx_window *w,
                             gx_tmps *l, tx_tensor *out) {
    tx_tensor xt, gt, r;
    tx_status st = transpose01(ctx, x4, l, &xt);
    if (!st)
        st = transpose01(ctx, gz4, l, &gt);
    if (st)
        return st;
    tx_conv_desc d = {.strides = {w->dh, w->dw},
                      .dilations = {w->sh, w->sw},
                      .pads = {w->pt, w->pl, w->pb, w->pr}};
    st = tx_conv(ctx, xt, gt, &d, &r);
    if (st)
        return st;
    gx_keep(l, r);
    const tx_slot *rs = gx_slot(ctx, r);
    if (rs->shape[2] != w->kh || rs->shape[3] != w->kw) {
        tx_slice_desc sd = {
            .n = 2, .starts = {0, 0}, .ends = {w->kh, w->kw}, .axes = {2, 3}, .has_axes = true};
        st = tx_slice(ctx, r, &sd, &r);
        if (st)
            return st;
        gx_keep(l, r);
    }
    return transpose01(ctx, r, l, out);
}

static tx_status conv_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor gz, gx_tmps *l,
                               tx_tensor gin[GX_MAX_IN]) {
    const tx_conv_desc *cd = &nd->a.conv;
    const tx_slot *xs = gx_slot(ctx, nd->in[0]), *ws = gx_slot(ctx, nd->in[1]);
    int nsp = xs->rank - 2;
    int k[2] = {(int)ws->shape[2], nsp == 2 ? (int)ws->shape[3] : 0};
    tx_window w;
    tx_status st = tx_window_geom(ctx, "conv", xs, k, cd->strides, cd->dilations, cd->pads,
                                  cd->auto_pad, false, &w);
    if (st)
        return st;
    int group = cd->group ? cd->group : 1;
    int64_t m = ws->shape[0], cg = ws->shape[1], mg = m / group;
    tx_tensor x4, w4, g4, dx4, dw;
    st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, w.c, w.h, w.w}, l, &x4);
    if (!st)
        st = gx_view(ctx, nd->in[1], 4, (int64_t[]){m, cg, w.kh, w.kw}, l, &w4);
    if (!st)
        st = gx_view(ctx, gz, 4, (int64_t[]){w.n, m, w.ho, w.wo}, l, &g4);
    if (st)
        return st;
    /* dx: conv_transpose back to exactly H x W */
    int64_t full_h = (int64_t)w.sh * (w.ho - 1) + (int64_t)(w.kh - 1) * w.dh + 1 - w.pt - w.pb;
    int64_t full_w = (int64_t)w.sw * (w.wo - 1) + (int64_t)(w.kw - 1) * w.dw + 1 - w.pl - w.pr;
    tx_conv_desc td = {.strides = {w.sh, w.sw},
                       .dilations = {w.dh, w.dw},
                       .pads = {w.pt, w.pl, w.pb, w.pr},
                       .group = group,
                       .output_padding = {(int)(w.h - full_h), (int)(w.w - full_w)}};
    st = tx_conv_transpose(ctx, g4, w4, &td, &dx4);
    if (st)
        return st;
    gx_keep(l, dx4);
    st = gx_view(ctx, dx4, xs->rank, xs->shape, l, &gin[0]);
    /* dw, one group at a time */
    tx_tensor parts[64];
    if (!st && group > (int)TX_COUNTOF(parts))
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: conv with %d groups: the weight gradient takes at most %d",
                       group, (int)TX_COUNTOF(parts));
    for (int gi = 0; gi < group && !st; gi++) {
        tx_tensor xg, gg;
        st = channels(ctx, x4, gi * cg, (gi + 1) * cg, l, &xg);
        if (!st)
            st = channels(ctx, g4, gi * mg, (gi + 1) * mg, l, &gg);
        if (!st)
            st = weight_grad(ctx, xg, gg, &w, l, &parts[gi]);
    }
    if (st)
        return st;
    dw = parts[0];
    if (group > 1) {
        st = tx_concat(ctx, parts, group, 0, &dw);
        if (st)
            return st;
        gx_keep(l, dw);
    }
    st = gx_view(ctx, dw, ws->rank, ws->shape, l, &gin[1]);
    if (!st && nd->n_in > 2) {
        tx_tensor db;
        st = tx_reduce(ctx, TX_OP_REDUCE_SUM, g4,
                       &(tx_reduce_desc){.n_axes = 3, .axes = {0, 2, 3}, .drop_dims = true}, &db);
        if (!st)
            gin[2] = gx_keep(l, db);
    }
    return st;
}

tx_status gx_backward_linear(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor gin[GX_MAX_IN]) {
    tx_tensor gz;
    tx_status st = through_act(ctx, nd, g, l, &gz);
    if (st)
        return st;
    return nd->op == TX_OP_CONV ? conv_backward(ctx, nd, gz, l, gin)
                                : matmul_backward(ctx, nd, gz, l, gin);
}
