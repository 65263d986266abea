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
 *        batch and channels swapped (read in place: tx_conv_nc_swapped),
 *        strides and dilations swapped, so that
 *        out[c, m, i, j] = sum_{n, oh, ow} x[n, c, i d + oh s, ...] gz[n, m, oh, ow];
 *        cut to the kernel and transposed back to [M, C, kH, kW] (for group
 *        1 all within the conv's own passes).
 * conv_transpose: dx = conv(g, w), dw = conv's weight gradient with g as the
 *   input and x as the output gradient.
 * gz is g through the fused activation: from y where its derivative allows
 * (relu, clip, sigmoid, tanh), else from the pre-activation recomputed. */
#include <stdlib.h>
#include <string.h>

#include "grad.h"

static tx_status mm(tx_ctx *ctx, tx_tensor a, tx_tensor b, bool ta, bool tb, gx_tmps *l,
                    tx_tensor *out) {
    return gx_kept(
        tx_matmul(ctx, a, b, &(tx_matmul_desc){.transpose_a = ta, .transpose_b = tb}, out), l, out);
}

/* g through the node's fused activation. */
static tx_status through_act(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor *gz) {
    bool conv = nd->op == TX_OP_CONV || nd->op == TX_OP_CONV_TRANSPOSE;
    tx_op act = conv ? nd->a.conv.activation : nd->a.matmul.activation;
    float ab[2];
    if (conv)
        tx_act_floats(act, nd->a.conv.lo, nd->a.conv.hi, nd->a.conv.alpha, nd->a.conv.beta, ab);
    else
        tx_act_floats(act, 0, 0, nd->a.matmul.alpha, nd->a.matmul.beta, ab);
    float lo = ab[0], hi = ab[1];
    if (gx_activation_from_output(act))
        return gx_activation_grad(ctx, act, lo, hi, nd->out, g, l, gz);
    tx_tensor z;
    tx_status st;
    if (conv) {
        tx_conv_desc d = nd->a.conv;
        d.activation = TX_OP_NONE;
        d.bias = nd->n_in > 2 ? nd->in[2] : (tx_tensor){0};
        st = nd->op == TX_OP_CONV ? tx_conv(ctx, nd->in[0], nd->in[1], &d, &z)
                                  : tx_conv_transpose(ctx, nd->in[0], nd->in[1], &d, &z);
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
    tx_tensor a = nd->in[0], b = nd->in[1], g = gz, da, db;
    const tx_slot *as = gx_slot(ctx, a), *bs = gx_slot(ctx, b), *ys = gx_slot(ctx, nd->out);
    bool a1 = as->rank == 1, b1 = bs->rank == 1; /* the forward ignores a vector's flag */
    bool ta = nd->a.matmul.transpose_a && !a1, tb = nd->a.matmul.transpose_b && !b1;
    int ar = as->rank, br = bs->rank, gr = ys->rank;
    int64_t ash[TX_MAX_RANK], bsh[TX_MAX_RANK], gsh[TX_MAX_RANK];
    memcpy(ash, as->shape, sizeof ash);
    memcpy(bsh, bs->shape, sizeof bsh);
    memcpy(gsh, ys->shape, sizeof gsh);
    tx_status st = TX_STATUS_OK;
    if (a1 || b1) { /* a vector is the row [1, K] (a) or column [K, 1] (b) it stands for */
        if (a1)
            ar = 2, ash[0] = 1, ash[1] = as->shape[0];
        if (b1)
            br = 2, bsh[0] = bs->shape[0], bsh[1] = 1;
        if (a1 && b1)
            gr = 2, gsh[0] = gsh[1] = 1;
        else if (a1) /* y = batch + [N]: batch + [1, N] */
            gsh[gr] = gsh[gr - 1], gsh[gr - 1] = 1, gr++;
        else /* y = batch + [M]: batch + [M, 1] */
            gsh[gr++] = 1;
        st = gx_view(ctx, a, ar, ash, l, &a);
        if (!st)
            st = gx_view(ctx, b, br, bsh, l, &b);
        if (!st)
            st = gx_view(ctx, gz, gr, gsh, l, &g);
    }
    /* only the gradients asked for: a first layer's data input takes none */
    if (!st && gx_need(nd, 0)) {
        st = ta ? mm(ctx, b, g, tb, true, l, &da) : mm(ctx, g, b, false, !tb, l, &da);
        if (!st)
            st = gx_unbroadcast(ctx, da, ar, ash, l, &da);
        if (!st)
            st = gx_view(ctx, da, as->rank, as->shape, l, &gin[0]);
    }
    if (!st && gx_need(nd, 1)) {
        st = tb ? mm(ctx, g, a, true, ta, l, &db) : mm(ctx, a, g, !ta, false, l, &db);
        if (!st)
            st = gx_unbroadcast(ctx, db, br, bsh, l, &db);
        if (!st)
            st = gx_view(ctx, db, bs->rank, bs->shape, l, &gin[1]);
    }
    if (!st && nd->n_in > 2 && gx_need(nd, 2)) {
        const tx_slot *cs = gx_slot(ctx, nd->in[2]);
        st = gx_unbroadcast(ctx, gz, cs->rank, cs->shape, l, &gin[2]);
    }
    return st;
}

static tx_status transpose01(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    return gx_kept(tx_transpose(ctx, t, (const int[]){1, 0, 2, 3}, out), l, out);
}

/* Channels [lo, hi) of a 4-D tensor (t itself when that is all of them). */
static tx_status channels(tx_ctx *ctx, tx_tensor t, int64_t lo, int64_t hi, gx_tmps *l,
                          tx_tensor *out) {
    if (lo == 0 && hi == gx_slot(ctx, t)->shape[1]) {
        *out = t;
        return TX_STATUS_OK;
    }
    tx_slice_desc d = {.n = 1, .starts = {lo}, .ends = {hi}, .axes = {1}, .has_axes = true};
    return gx_kept(tx_slice(ctx, t, &d, out), l, out);
}

/* dw of one group: x4 [N, Cg, H, W], gz4 [N, Mg, Ho, Wo] → [Mg, Cg, kh, kw]
 * (the conv reads x and gz transposed where they are and writes its output
 * transposed, cut to the kernel). */
static tx_status weight_grad(tx_ctx *ctx, tx_tensor x4, tx_tensor gz4, const tx_window *w,
                             gx_tmps *l, tx_tensor *out) {
    tx_conv_desc d = {.strides = {w->dh, w->dw},
                      .dilations = {w->sh, w->sw},
                      .pads = {w->pt, w->pl, w->pb, w->pr}};
    return gx_kept(tx_conv_nc_swapped(ctx, x4, gz4, &d, (const int[]){w->kh, w->kw}, out), l, out);
}

/* The weight gradient of a conv whose groups each read one input channel
 * (depthwise, any multiplier) in one conv: the batch goes into the channels,
 * x [N, C, H, W] → [1, C N, H, W] (channel c n), and g [N, M, Ho, Wo] → the
 * weight [M, N, Ho, Wo] of a conv with C groups, so out[0, m] sums
 * x[n, c(m)] g[n, m] over n and the window: [1, M, kh, kw] after the cut. */
static tx_status depthwise_weight_grad(tx_ctx *ctx, tx_tensor x4, tx_tensor g4, const tx_window *w,
                                       gx_tmps *l, tx_tensor *dw) {
    const tx_slot *xs = gx_slot(ctx, x4), *gs = gx_slot(ctx, g4);
    int64_t n = xs->shape[0], c = xs->shape[1], m = gs->shape[1];
    tx_tensor xt, gt, r;
    tx_status st = transpose01(ctx, x4, l, &xt);
    if (!st)
        st = gx_view(ctx, xt, 4, (int64_t[]){1, c * n, xs->shape[2], xs->shape[3]}, l, &xt);
    if (!st)
        st = transpose01(ctx, g4, l, &gt);
    if (!st)
        st = gx_kept(tx_conv(ctx, xt, gt,
                             &(tx_conv_desc){.strides = {w->dh, w->dw},
                                             .dilations = {w->sh, w->sw},
                                             .pads = {w->pt, w->pl, w->pb, w->pr},
                                             .group = (int)c},
                             &r),
                     l, &r);
    if (st)
        return st;
    const tx_slot *rs = gx_slot(ctx, r);
    if (rs->shape[2] != w->kh || rs->shape[3] != w->kw) {
        tx_slice_desc sd = {
            .n = 2, .starts = {0, 0}, .ends = {w->kh, w->kw}, .axes = {2, 3}, .has_axes = true};
        st = gx_kept(tx_slice(ctx, r, &sd, &r), l, &r);
        if (st)
            return st;
    }
    return gx_view(ctx, r, 4, (int64_t[]){m, 1, w->kh, w->kw}, l, dw);
}

/* The weight gradient of a grouped conv: x4 [N, C, H, W], g4 [N, M, Ho, Wo]
 * → [M, C / group, kh, kw]: one conv per group (each group's temporaries
 * freed before the next, so any number of groups fits), concatenated; groups
 * of one input channel take depthwise_weight_grad's single conv. */
static tx_status grouped_weight_grad(tx_ctx *ctx, tx_tensor x4, tx_tensor g4, int group,
                                     const tx_window *w, gx_tmps *l, tx_tensor *dw) {
    int64_t cg = gx_slot(ctx, x4)->shape[1] / group, mg = gx_slot(ctx, g4)->shape[1] / group;
    if (group == 1)
        return weight_grad(ctx, x4, g4, w, l, dw);
    if (cg == 1)
        return depthwise_weight_grad(ctx, x4, g4, w, l, dw);
    tx_tensor *parts = calloc((size_t)group, sizeof *parts);
    if (!parts)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_grad: out of host memory");
    tx_status st = TX_STATUS_OK;
    for (int gi = 0; gi < group && !st; gi++) {
        gx_tmps r = {0};
        tx_tensor xg, gg, p;
        st = channels(ctx, x4, gi * cg, (gi + 1) * cg, &r, &xg);
        if (!st)
            st = channels(ctx, g4, gi * mg, (gi + 1) * mg, &r, &gg);
        if (!st)
            st = weight_grad(ctx, xg, gg, w, &r, &p);
        if (!st) {                   /* a view of the part outlives r */
            int64_t sh[TX_MAX_RANK]; /* copied: a new slot may move the slot table */
            const tx_slot *ps = gx_slot(ctx, p);
            int rank = ps->rank;
            memcpy(sh, ps->shape, sizeof sh);
            st = tx_tensor_reshape(ctx, p, rank, sh, &parts[gi]);
        }
        gx_free(ctx, &r);
    }
    if (!st)
        st = gx_kept(tx_concat(ctx, parts, group, 0, dw), l, dw);
    for (int gi = 0; gi < group; gi++)
        if (parts[gi].id)
            tx_tensor_destroy(ctx, parts[gi]);
    free(parts);
    return st;
}

/* sum of g4 [N, M, Ho, Wo] over all but M: the bias gradient [M]. */
static tx_status bias_grad(tx_ctx *ctx, tx_tensor g4, gx_tmps *l, tx_tensor *db) {
    return gx_red(ctx, TX_OP_REDUCE_SUM, g4,
                  &(tx_reduce_desc){.n_axes = 3, .axes = {0, 2, 3}, .drop_dims = true}, l, db);
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
    int64_t m = ws->shape[0], cg = ws->shape[1];
    tx_tensor x4, w4, g4, dx4, dw;
    st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, w.c, w.h, w.w}, l, &x4);
    if (!st)
        st = gx_view(ctx, nd->in[1], 4, (int64_t[]){m, cg, w.kh, w.kw}, l, &w4);
    if (!st)
        st = gx_view(ctx, gz, 4, (int64_t[]){w.n, m, w.ho, w.wo}, l, &g4);
    if (st)
        return st;
    /* dx: conv_transpose back to exactly H x W */
    tx_conv_desc td = {.strides = {w.sh, w.sw},
                       .dilations = {w.dh, w.dw},
                       .pads = {w.pt, w.pl, w.pb, w.pr},
                       .group = group};
    gx_output_padding(&w, td.output_padding);
    if (gx_need(nd, 0)) { /* not for a first layer's input image */
        st = gx_kept(tx_conv_transpose(ctx, g4, w4, &td, &dx4), l, &dx4);
        if (!st)
            st = gx_view(ctx, dx4, xs->rank, xs->shape, l, &gin[0]);
    }
    if (!st && gx_need(nd, 1)) {
        st = grouped_weight_grad(ctx, x4, g4, group, &w, l, &dw);
        if (!st)
            st = gx_view(ctx, dw, ws->rank, ws->shape, l, &gin[1]);
    }
    if (!st && nd->n_in > 2 && gx_need(nd, 2))
        st = bias_grad(ctx, g4, l, &gin[2]);
    return st;
}

/* conv_transpose y = convT(x, w), w [C, M / group, kh, kw]: its input gradient
 * is the conv of g with w (same strides, dilations, pads, groups), its weight
 * gradient the conv's weight gradient with the roles of input and output
 * swapped (g plays the input, x the output gradient). */
static tx_status conv_transpose_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor gz, gx_tmps *l,
                                         tx_tensor gin[GX_MAX_IN]) {
    const tx_conv_desc *cd = &nd->a.conv;
    const tx_slot *xs = gx_slot(ctx, nd->in[0]), *ws = gx_slot(ctx, nd->in[1]);
    const tx_slot *ys = gx_slot(ctx, nd->out);
    int nsp = xs->rank - 2;
    int k[2] = {(int)ws->shape[2], nsp == 2 ? (int)ws->shape[3] : 0};
    int pads[4];
    memcpy(pads, cd->pads, sizeof pads);
    bool has_os = cd->output_shape[0] || (nsp == 2 && cd->output_shape[1]);
    if (cd->auto_pad != TX_AUTO_PAD_NOTSET || has_os) {
        /* the pads auto_pad / output_shape resolved to (as ops/conv.c derives
         * them): total = full size - y's size, split as the forward split it */
        for (int i = 0; i < nsp; i++) {
            int s = cd->strides[i] ? cd->strides[i] : 1,
                d = cd->dilations[i] ? cd->dilations[i] : 1;
            int64_t full = (int64_t)s * (xs->shape[2 + i] - 1) + cd->output_padding[i] +
                           (int64_t)(ws->shape[2 + i] - 1) * d + 1;
            int64_t total = full - ys->shape[2 + i], half = total >= 0 ? total / 2 : -1;
            if (cd->auto_pad == TX_AUTO_PAD_VALID && !has_os) /* output_shape wins */
                total = half = 0;
            if (total < 0)
                return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                               "tx_tape_grad: conv_transpose whose output_shape is larger than "
                               "its full result has no gradient yet");
            pads[i] = (int)(cd->auto_pad == TX_AUTO_PAD_SAME_UPPER ? half : total - half);
            pads[nsp + i] = (int)(total - pads[i]);
        }
    }
    tx_window w; /* the conv geometry seen from y's side: its output is x's size */
    tx_status st = tx_window_geom(ctx, "conv_transpose", ys, k, cd->strides, cd->dilations, pads,
                                  TX_AUTO_PAD_NOTSET, false, &w);
    if (st)
        return st;
    int group = cd->group ? cd->group : 1;
    int64_t c = xs->shape[1], h = nsp == 2 ? xs->shape[2] : 1, wd = xs->shape[xs->rank - 1];
    if (w.ho != h || w.wo != wd)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: conv_transpose whose output the matching conv does not map "
                       "back to its input size has no gradient yet");
    tx_tensor x4, w4, g4, dx4, dw;
    st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, c, h, wd}, l, &x4);
    if (!st)
        st = gx_view(ctx, nd->in[1], 4, (int64_t[]){c, ws->shape[1], w.kh, w.kw}, l, &w4);
    if (!st)
        st = gx_view(ctx, gz, 4, (int64_t[]){w.n, w.c, w.h, w.w}, l, &g4);
    if (!st && gx_need(nd, 0)) {
        st = gx_kept(tx_conv(ctx, g4, w4,
                             &(tx_conv_desc){.strides = {w.sh, w.sw},
                                             .dilations = {w.dh, w.dw},
                                             .pads = {w.pt, w.pl, w.pb, w.pr},
                                             .group = group},
                             &dx4),
                     l, &dx4);
        if (!st)
            st = gx_view(ctx, dx4, xs->rank, xs->shape, l, &gin[0]);
    }
    if (!st && gx_need(nd, 1)) {
        st = grouped_weight_grad(ctx, g4, x4, group, &w, l, &dw);
        if (!st)
            st = gx_view(ctx, dw, ws->rank, ws->shape, l, &gin[1]);
    }
    if (!st && nd->n_in > 2 && gx_need(nd, 2))
        st = bias_grad(ctx, g4, l, &gin[2]);
    return st;
}

tx_status gx_backward_linear(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor gin[GX_MAX_IN]) {
    tx_tensor gz;
    tx_status st = through_act(ctx, nd, g, l, &gz);
    if (st)
        return st;
    if (nd->op == TX_OP_CONV_TRANSPOSE)
        return conv_transpose_backward(ctx, nd, gz, l, gin);
    return nd->op == TX_OP_CONV ? conv_backward(ctx, nd, gz, l, gin)
                                : matmul_backward(ctx, nd, gz, l, gin);
}
