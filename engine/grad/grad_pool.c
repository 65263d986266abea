/* Gradients of the pools.
 *
 * Global pools spread g over the window (average: g / HW; max: where x equals
 * the max). Windowed pools whose windows tile the input without overlap or
 * padding (stride = kernel, dilation 1, no pads: the usual 2x2/2) upsample y
 * and g to the covered region by a broadcast, take the mask x == y there (max)
 * or g / (kh kw) (average), and pad the uncovered rest with zeros. Ties in a
 * max window share g. Other average pools run as a depthwise conv_transpose
 * (below); overlapping max windows need a scatter the engine lacks:
 * UNSUPPORTED. */
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

/* Average pools of any windows (overlapping, padded, dilated): the pool is a
 * depthwise conv with a kernel of ones divided by each window's count (kh kw,
 * or the cells inside x without count_include_pad: a conv of ones with ones),
 * so dx is the conv_transpose of g / count with the ones kernel. */
static tx_status average_pool(tx_ctx *ctx, const gx_node *nd, const tx_window *w, tx_tensor g,
                              gx_tmps *l, tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    tx_device dev = xs->st->dev;
    tx_tensor ones_k, g4, div, gs, d4;
    tx_conv_desc cd = {.strides = {w->sh, w->sw},
                       .dilations = {w->dh, w->dw},
                       .pads = {w->pt, w->pl, w->pb, w->pr},
                       .group = (int)w->c};
    tx_status st = gx_fill(ctx, dev, 4, (int64_t[]){w->c, 1, w->kh, w->kw}, 1.0f, l, &ones_k);
    if (!st)
        st = gx_view(ctx, g, 4, (int64_t[]){w->n, w->c, w->ho, w->wo}, l, &g4);
    if (st)
        return st;
    if (nd->a.pool.count_include_pad) {
        st = gx_bin_s(ctx, TX_OP_MUL, g4, 1.0f / (float)(w->kh * w->kw), l, &gs);
    } else {
        tx_tensor ones_x;
        st = gx_fill(ctx, dev, 4, (int64_t[]){1, w->c, w->h, w->w}, 1.0f, l, &ones_x);
        if (!st)
            st = gx_kept(tx_conv(ctx, ones_x, ones_k, &cd, &div), l, &div);
        if (st)
            return st;
        st = gx_bin(ctx, TX_OP_DIV, g4, div, l, &gs);
    }
    if (st)
        return st;
    gx_output_padding(w, cd.output_padding);
    st = gx_kept(tx_conv_transpose(ctx, gs, ones_k, &cd, &d4), l, &d4);
    if (st)
        return st;
    return gx_view(ctx, d4, xs->rank, xs->shape, l, dx);
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
    int op[2]; /* fits: no ceil_mode window past the end */
    gx_output_padding(&w, op);
    bool fits = op[0] >= 0 && op[0] < (w.sh > w.dh ? w.sh : w.dh) && op[1] >= 0 &&
                op[1] < (w.sw > w.dw ? w.sw : w.dw);
    if (nd->op == TX_OP_AVERAGEPOOL && !tiles && fits)
        return average_pool(ctx, nd, &w, g, l, &gin[0]);
    if (!tiles)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: %s with overlapping, dilated or padded windows (or a "
                       "ceil_mode window past the end) has no gradient yet",
                       tx_op_name((tx_op)nd->op));
    tx_tensor x4, y4, g4, ug, dxc;
    st = gx_view(ctx, nd->in[0], 4, (int64_t[]){w.n, w.c, w.h, w.w}, l, &x4);
    if (!st)
        st = gx_view(ctx, nd->out, 4, (int64_t[]){w.n, w.c, w.ho, w.wo}, l, &y4);
    if (!st)
        st = gx_view(ctx, g, 4, (int64_t[]){w.n, w.c, w.ho, w.wo}, l, &g4);
    if (!st)
        st = upsample(ctx, g4, &w, l, &ug);
    if (st)
        return st;
    int64_t ch = w.ho * w.kh, cw = w.wo * w.kw;
    bool cut = ch != w.h || cw != w.w;
    if (nd->op == TX_OP_AVERAGEPOOL) {
        st = gx_bin_s(ctx, TX_OP_MUL, ug, 1.0f / (float)(w.kh * w.kw), l, &dxc);
    } else {
        tx_tensor xc = x4, uy, mask;
        if (cut) {
            tx_slice_desc sd = {
                .n = 2, .starts = {0, 0}, .ends = {ch, cw}, .axes = {2, 3}, .has_axes = true};
            st = gx_kept(tx_slice(ctx, x4, &sd, &xc), l, &xc);
            if (st)
                return st;
        }
        st = upsample(ctx, y4, &w, l, &uy);
        if (!st)
            st = gx_bin(ctx, TX_OP_EQUAL, xc, uy, l, &mask);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, mask, ug, l, &dxc);
    }
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
