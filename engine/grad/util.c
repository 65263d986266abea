/* What the backward functions share: temporaries, constants, broadcasting undone. */
#include <stdlib.h>

#include "grad.h"

tx_tensor gx_keep(gx_tmps *l, tx_tensor t) {
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    l->t[l->n++] = t;
    return t;
}

void gx_free(tx_ctx *ctx, gx_tmps *l) {
    for (int i = 0; i < l->n; i++)
        tx_tensor_destroy(ctx, l->t[i]);
    l->n = 0;
}

const tx_slot *gx_slot(tx_ctx *ctx, tx_tensor t) {
    const tx_slot *s = tx_slot_get(ctx, t);
    TX_ASSERT(s != NULL);
    return s;
}

static int64_t numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

tx_status gx_fill(tx_ctx *ctx, tx_device dev, int rank, const int64_t *shape, float v, gx_tmps *l,
                  tx_tensor *out) {
    int64_t n = numel_of(rank, shape);
    float *buf = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!buf)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "grad: out of host memory");
    for (int64_t i = 0; i < n; i++)
        buf[i] = v;
    tx_tensor_desc d = {.rank = rank, .data = buf, .device = dev};
    for (int i = 0; i < rank; i++)
        d.shape[i] = shape[i];
    tx_status st = tx_tensor_create(ctx, &d, out);
    free(buf);
    if (!st)
        gx_keep(l, *out);
    return st;
}

tx_status gx_scalar(tx_ctx *ctx, tx_tensor like, float v, gx_tmps *l, tx_tensor *out) {
    return gx_fill(ctx, gx_slot(ctx, like)->st->dev, 1, (int64_t[]){1}, v, l, out);
}

tx_status gx_bin(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, gx_tmps *l, tx_tensor *out) {
    tx_status st = tx_binary(ctx, op, a, b, out);
    if (!st)
        gx_keep(l, *out);
    return st;
}

tx_status gx_bin_s(tx_ctx *ctx, tx_op op, tx_tensor a, float v, gx_tmps *l, tx_tensor *out) {
    tx_tensor s;
    tx_status st = gx_scalar(ctx, a, v, l, &s);
    return st ? st : gx_bin(ctx, op, a, s, l, out);
}

tx_status gx_kept(tx_status st, gx_tmps *l, tx_tensor *t) {
    if (!st)
        gx_keep(l, *t);
    return st;
}

tx_status gx_un(tx_ctx *ctx, tx_op op, tx_tensor x, gx_tmps *l, tx_tensor *out) {
    return gx_kept(tx_unary(ctx, op, x, out), l, out);
}

tx_status gx_red(tx_ctx *ctx, tx_op op, tx_tensor t, const tx_reduce_desc *d, gx_tmps *l,
                 tx_tensor *out) {
    return gx_kept(tx_reduce(ctx, op, t, d, out), l, out);
}

tx_status gx_view(tx_ctx *ctx, tx_tensor t, int rank, const int64_t *shape, gx_tmps *l,
                  tx_tensor *out) {
    return gx_kept(tx_tensor_reshape(ctx, t, rank, shape, out), l, out);
}

tx_status gx_unbroadcast(tx_ctx *ctx, tx_tensor g, int rank, const int64_t *shape, gx_tmps *l,
                         tx_tensor *out) {
    const tx_slot *gs = gx_slot(ctx, g);
    tx_reduce_desc d = {0};
    int lead = gs->rank - rank;
    TX_ASSERT(lead >= 0);
    for (int i = 0; i < gs->rank; i++)
        if (i < lead || (shape[i - lead] == 1 && gs->shape[i] != 1))
            d.axes[d.n_axes++] = i;
    if (d.n_axes == 0 && lead == 0) {
        *out = g;
        return TX_STATUS_OK;
    }
    tx_tensor s = g;
    if (d.n_axes) {
        tx_status st = tx_reduce(ctx, TX_OP_REDUCE_SUM, g, &d, &s);
        if (st)
            return st;
        gx_keep(l, s);
    }
    return gx_view(ctx, s, rank, shape, l, out);
}

void gx_output_padding(const tx_window *w, int out[2]) {
    int64_t full_h =
        (int64_t)w->sh * (w->ho - 1) + (int64_t)(w->kh - 1) * w->dh + 1 - w->pt - w->pb;
    int64_t full_w =
        (int64_t)w->sw * (w->wo - 1) + (int64_t)(w->kw - 1) * w->dw + 1 - w->pl - w->pr;
    out[0] = (int)(w->h - full_h);
    out[1] = (int)(w->w - full_w);
}
