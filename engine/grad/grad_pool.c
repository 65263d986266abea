/* Gradients of the pools.
 *
 * Global pools spread g over the window (average: g / HW; max: where x equals
 * the max). Windowed pools whose windows tile the input without overlap or
 * padding (stride = kernel, dilation 1, no pads: the usual 2x2/2): max runs
 * one kernel (tx_maxpool_tiles_grad: g where x equals the window's max, ties
 * sharing it evenly), average upsamples g / (kh kw) to the covered region by
 * a broadcast; the uncovered rest gets zeros. Other average pools run as a
 * depthwise conv_transpose, other max pools as one-hot convs (below),
 * ceil_mode windows past the end included. */
#include <stdlib.h>
#include <string.h>

#include "grad.h"

/* t [N, C, ho, wo] → [N, C, ho kh, wo kw], each value repeated over its window. */
static tx_status upsample(tx_ctx *ctx, tx_tensor t, const tx_window *w, gx_tmps *l,
                          tx_tensor *out) {
    tx_tensor v, e;
    tx_status st = gx_view(ctx, t, 6, (int64_t[]){w->n, w->c, w->ho, 1, w->wo, 1}, l, &v);
    if (!st)
        st = gx_kept(tx_expand(ctx, v, 6, (int64_t[]){w->n, w->c, w->ho, w->kh, w->wo, w->kw}, &e),
                     l, &e);
    if (st)
        return st;
    return gx_view(ctx, e, 4, (int64_t[]){w->n, w->c, w->ho * w->kh, w->wo * w->kw}, l, out);
}

static tx_status global_pool(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                             tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_tensor t, e;
    tx_status st;
    if (nd->op == TX_OP_GLOBALAVERAGEPOOL) {
        int64_t hw = xs->numel / (xs->shape[0] * xs->shape[1]);
        st = gx_bin_s(ctx, TX_OP_MUL, g, 1.0f / (float)hw, l, &t);
        if (!st)
            st = tx_expand(ctx, t, xs->rank, xs->shape, &e);
        if (!st)
            *dx = gx_keep(l, e);
        return st;
    }
    st = gx_bin(ctx, TX_OP_EQUAL, nd->in[0], nd->out, l, &t);
    return st ? st : gx_bin(ctx, TX_OP_MUL, t, g, l, dx);
}

/* w's end pads made the ones a conv needs for exactly ho x wo windows: more
 * where a ceil_mode window runs past the end, less where ceil_mode dropped a
 * window that would start in the padding. */
static tx_status fit_end_pads(tx_ctx *ctx, const char *op, tx_window *w) {
    int64_t span_h = (int64_t)w->dh * (w->kh - 1) + 1, span_w = (int64_t)w->dw * (w->kw - 1) + 1;
    int64_t pb = (w->ho - 1) * w->sh + span_h - w->h - w->pt;
    int64_t pr = (w->wo - 1) * w->sw + span_w - w->w - w->pl;
    w->pb = (int)(pb > 0 ? pb : 0);
    w->pr = (int)(pr > 0 ? pr : 0);
    if ((w->h + w->pt + w->pb - span_h) / w->sh + 1 != w->ho ||
        (w->w + w->pl + w->pr - span_w) / w->sw + 1 != w->wo)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: %s whose windows no conv reproduces has no gradient yet", op);
    return TX_STATUS_OK;
}

/* Average pools of any windows (overlapping, padded, dilated, ceil_mode):
 * y = wgt · (the sum over each window's cells inside x), a depthwise conv
 * with a kernel of ones scaled per window; wgt is taken from the forward
 * itself (the pool of ones over the conv of ones with ones), so every divisor
 * rule (count_include_pad, ceil_mode windows past the end) agrees. dx is the
 * conv_transpose of g · wgt with the ones kernel. */
static tx_status average_pool(tx_ctx *ctx, const gx_node *nd, const tx_window *wg, tx_tensor g,
                              gx_tmps *l, tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_device dev = xs->st->dev;
    tx_window w = *wg;
    tx_status st = fit_end_pads(ctx, "averagepool", &w);
    if (st)
        return st;
    int64_t one_shape[TX_MAX_RANK];
    memcpy(one_shape, xs->shape, sizeof one_shape);
    one_shape[0] = 1;
    int xr = xs->rank;
    tx_tensor ones_k, ones_x, ones4, inside, avg, wgt, g4, gs, d4;
    tx_conv_desc cd = {.strides = {w.sh, w.sw},
                       .dilations = {w.dh, w.dw},
                       .pads = {w.pt, w.pl, w.pb, w.pr},
                       .group = (int)w.c};
    int64_t o4[4] = {1, w.c, w.ho, w.wo};
    st = gx_fill(ctx, dev, 4, (int64_t[]){w.c, 1, w.kh, w.kw}, 1.0f, l, &ones_k);
    if (!st)
        st = gx_fill(ctx, dev, xr, one_shape, 1.0f, l, &ones_x);
    if (!st)
        st = gx_view(ctx, ones_x, 4, (int64_t[]){1, w.c, w.h, w.w}, l, &ones4);
    if (!st) /* the cells of each window inside x */
        st = gx_kept(tx_conv(ctx, ones4, ones_k, &cd, &inside), l, &inside);
    if (!st) /* the forward on ones: inside / divisor */
        st = gx_kept(tx_pooling(ctx, TX_OP_AVERAGEPOOL, ones_x, &nd->a.pool, &avg), l, &avg);
    if (!st)
        st = gx_view(ctx, avg, 4, o4, l, &avg);
    if (!st)
        st = gx_bin(ctx, TX_OP_DIV, avg, inside, l, &wgt);
    if (!st)
        st = gx_view(ctx, g, 4, (int64_t[]){w.n, w.c, w.ho, w.wo}, l, &g4);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, g4, wgt, l, &gs);
    if (st)
        return st;
    gx_output_padding(&w, cd.output_padding);
    st = gx_kept(tx_conv_transpose(ctx, gs, ones_k, &cd, &d4), l, &d4);
    return st ? st : gx_view(ctx, d4, xs->rank, xs->shape, l, dx);
}

/* Max pools of any windows (overlapping, padded, dilated, ceil_mode): each
 * window's K = kh kw elements are taken out by a depthwise conv with one-hot
 * kernels (channel c K + k holds tap k of channel c's windows), compared with
 * y (taps in the padding never count), g is split evenly among the taps equal
 * to the max, and the conv_transpose with the same one-hot kernels sums each
 * tap's share back into its element of x. */
static tx_status max_pool(tx_ctx *ctx, const gx_node *nd, const tx_window *wg, tx_tensor g,
                          gx_tmps *l, tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_device dev = xs->st->dev;
    tx_window w = *wg;
    tx_status st = fit_end_pads(ctx, "maxpool", &w);
    if (st)
        return st;
    int64_t C = w.c, K = (int64_t)w.kh * w.kw;
    float *hot = calloc((size_t)(C * K * K), sizeof(float));
    if (!hot)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_grad: out of host memory");
    for (int64_t ck = 0; ck < C * K; ck++)
        hot[ck * K + ck % K] = 1.0f;
    tx_tensor wk, wk1, ones, valid, x4, taps, y5, g5, eq, cnt, share, w4, d4;
    st = gx_kept(tx_tensor_create(ctx,
                                  &(tx_tensor_desc){.rank = 4,
                                                    .shape = {C * K, 1, w.kh, w.kw},
                                                    .dtype = TX_DTYPE_FLOAT32,
                                                    .data = hot,
                                                    .device = dev},
                                  &wk),
                 l, &wk);
    free(hot);
    tx_conv_desc cd = {.strides = {w.sh, w.sw},
                       .dilations = {w.dh, w.dw},
                       .pads = {w.pt, w.pl, w.pb, w.pr},
                       .group = (int)C};
    tx_conv_desc cd1 = cd;
    cd1.group = 1;
    int64_t s5[5] = {w.n, C, K, w.ho, w.wo}, y5s[5] = {w.n, C, 1, w.ho, w.wo};
    if (!st) /* the first channel's kernels, [K, 1, kh, kw] */
        st = gx_kept(
            tx_slice(ctx, wk,
                     &(tx_slice_desc){.n = 1, .starts = {0}, .ends = {K}, .has_axes = true}, &wk1),
            l, &wk1);
    if (!st)
        st = gx_fill(ctx, dev, 4, (int64_t[]){1, 1, w.h, w.w}, 1.0f, l, &ones);
    if (!st) /* 1 where tap k of a window lies inside x */
        st = gx_kept(tx_conv(ctx, ones, wk1, &cd1, &valid), l, &valid);
    if (!st)
        st = gx_view(ctx, valid, 5, (int64_t[]){1, 1, K, w.ho, w.wo}, l, &valid);
    if (!st)
        st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, C, w.h, w.w}, l, &x4);
    if (!st)
        st = gx_kept(tx_conv(ctx, x4, wk, &cd, &taps), l, &taps);
    if (!st)
        st = gx_view(ctx, taps, 5, s5, l, &taps);
    if (!st)
        st = gx_view(ctx, nd->out, 5, y5s, l, &y5);
    if (!st)
        st = gx_view(ctx, g, 5, y5s, l, &g5);
    if (!st)
        st = gx_bin(ctx, TX_OP_EQUAL, taps, y5, l, &eq);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, eq, valid, l, &eq);
    if (!st)
        st =
            gx_red(ctx, TX_OP_REDUCE_SUM, eq, &(tx_reduce_desc){.n_axes = 1, .axes = {2}}, l, &cnt);
    if (!st)
        st = gx_bin(ctx, TX_OP_DIV, g5, cnt, l, &share);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, eq, share, l, &share);
    if (!st)
        st = gx_view(ctx, share, 4, (int64_t[]){w.n, C * K, w.ho, w.wo}, l, &w4);
    if (st)
        return st;
    gx_output_padding(&w, cd.output_padding);
    st = gx_kept(tx_conv_transpose(ctx, w4, wk, &cd, &d4), l, &d4);
    return st ? st : gx_view(ctx, d4, xs->rank, xs->shape, l, dx);
}

tx_status gx_backward_pool(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    if (nd->op == TX_OP_GLOBALAVERAGEPOOL || nd->op == TX_OP_GLOBALMAXPOOL)
        return global_pool(ctx, nd, g, l, &gin[0]);
    const tx_pool_desc *pd = &nd->a.pool;
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_window w;
    tx_status st = tx_window_geom(ctx, tx_op_name((tx_op)nd->op), xs, pd->kernel_shape, pd->strides,
                                  pd->dilations, pd->pads, pd->auto_pad, pd->ceil_mode, &w);
    if (st)
        return st;
    bool tiles = w.sh == w.kh && w.sw == w.kw && w.dh == 1 && w.dw == 1 && !w.pt && !w.pl &&
                 !w.pb && !w.pr && w.ho * w.kh <= w.h && w.wo * w.kw <= w.w;
    if (!tiles)
        return nd->op == TX_OP_MAXPOOL ? max_pool(ctx, nd, &w, g, l, &gin[0])
                                       : average_pool(ctx, nd, &w, g, l, &gin[0]);
    tx_tensor g4, ug, dxc;
    st = gx_view(ctx, g, 4, (int64_t[]){w.n, w.c, w.ho, w.wo}, l, &g4);
    if (st)
        return st;
    if (nd->op == TX_OP_MAXPOOL) { /* one kernel; ties share g evenly */
        tx_tensor x4, y4;
        st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, w.c, w.h, w.w}, l, &x4);
        if (!st)
            st = gx_view(ctx, nd->out, 4, (int64_t[]){w.n, w.c, w.ho, w.wo}, l, &y4);
        if (!st)
            st = gx_kept(tx_maxpool_tiles_grad(ctx, x4, y4, g4, &w, &dxc), l, &dxc);
        return st ? st : gx_view(ctx, dxc, xs->rank, xs->shape, l, &gin[0]);
    }
    int64_t ch = w.ho * w.kh, cw = w.wo * w.kw;
    bool cut = ch != w.h || cw != w.w;
    st = upsample(ctx, g4, &w, l, &ug);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_MUL, ug, 1.0f / (float)(w.kh * w.kw), l, &dxc);
    if (st)
        return st;
    tx_tensor dx = dxc;
    if (cut) {
        tx_pad_desc pd2 = {.end = {0, 0, w.h - ch, w.w - cw}};
        st = gx_kept(tx_pad(ctx, dxc, &pd2, &dx), l, &dx);
        if (st)
            return st;
    }
    return gx_view(ctx, dx, xs->rank, xs->shape, l, &gin[0]);
}
