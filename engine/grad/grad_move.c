/* Gradients of data movement.
 *
 * Views (reshape, flatten, squeeze, unsqueeze) give g back in x's shape;
 * transpose runs g through the inverse permutation; expand sums g back over
 * the broadcast dims, tile over the repeats (one dim at a time); slice pads
 * g with zeros back to x (steps 1), pad (constant mode) crops it with the
 * negated pads; concat slices g per input; gather scatters by a matmul with
 * the indices' one-hot matrix: dx [A, V, B] = onehot(idx)^T [V, n] · g [A, n, B]. */
#include <stdlib.h>

#include "grad.h"

static tx_status slice_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    const tx_slice_desc *d = &nd->a.move.slice;
    tx_pad_desc pd = {0};
    for (int k = 0; k < d->n; k++) {
        int64_t ax = d->has_axes ? d->axes[k] : k;
        ax = ax < 0 ? ax + xs->rank : ax;
        int64_t dim = xs->shape[ax], step = d->steps[k] ? d->steps[k] : 1;
        if (step != 1)
            return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                           "tx_tape_grad: slice with step %lld has no gradient yet",
                           (long long)step);
        int64_t b = d->starts[k], e = d->ends[k];
        b = b < 0 ? b + dim : b;
        e = e < 0 ? e + dim : e;
        b = b < 0 ? 0 : b > dim ? dim : b;
        e = e < b ? b : e > dim ? dim : e;
        pd.begin[ax] = b;
        pd.end[ax] = dim - e;
    }
    return gx_kept(tx_pad(ctx, g, &pd, dx), l, dx);
}

static tx_status tile_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                               tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    int64_t cur[TX_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
        cur[i] = xs->shape[i] * nd->a.move.repeats[i];
    tx_tensor t = g;
    for (int i = 0; i < xs->rank; i++) {
        int64_t r = nd->a.move.repeats[i], pre = 1, post = 1;
        if (r <= 1)
            continue;
        for (int j = 0; j < i; j++)
            pre *= cur[j];
        for (int j = i + 1; j < xs->rank; j++)
            post *= cur[j];
        tx_tensor v, s;
        tx_status st = gx_view(ctx, t, 4, (int64_t[]){pre, r, xs->shape[i], post}, l, &v);
        if (!st)
            st = gx_kept(tx_reduce(ctx, TX_OP_REDUCE_SUM, v,
                                   &(tx_reduce_desc){.n_axes = 1, .axes = {1}, .drop_dims = true},
                                   &s),
                         l, &s);
        if (st)
            return st;
        cur[i] = xs->shape[i];
        t = s;
    }
    return gx_view(ctx, t, xs->rank, xs->shape, l, dx);
}

static tx_status concat_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                 tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *x0 = gx_slot(ctx, nd->in[0]);
    int ax = nd->a.move.axis < 0 ? nd->a.move.axis + x0->rank : nd->a.move.axis;
    int64_t at = 0;
    for (int i = 0; i < nd->n_in; i++) {
        int64_t len = gx_slot(ctx, nd->in[i])->shape[ax];
        tx_slice_desc d = {
            .n = 1, .starts = {at}, .ends = {at + len}, .axes = {ax}, .has_axes = true};
        tx_status st = gx_kept(tx_slice(ctx, g, &d, &gin[i]), l, &gin[i]);
        if (st)
            return st;
        at += len;
    }
    return TX_STATUS_OK;
}

static tx_status gather_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                 tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]), *is = gx_slot(ctx, nd->in[1]);
    int ax = nd->a.move.axis < 0 ? nd->a.move.axis + xs->rank : nd->a.move.axis;
    int64_t A = 1, B = 1, V = xs->shape[ax], n = is->numel;
    for (int i = 0; i < ax; i++)
        A *= xs->shape[i];
    for (int i = ax + 1; i < xs->rank; i++)
        B *= xs->shape[i];
    int32_t *ramp = malloc(sizeof(int32_t) * (size_t)(V ? V : 1));
    if (!ramp)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_grad: out of host memory");
    for (int64_t v = 0; v < V; v++)
        ramp[v] = (int32_t)v;
    tx_tensor r, iv, neg, zero, fix, shifted, eq, oh, gv, d3;
    tx_status st = tx_tensor_create(ctx,
                                    &(tx_tensor_desc){.rank = 2,
                                                      .shape = {1, V},
                                                      .dtype = TX_DTYPE_INT32,
                                                      .data = ramp,
                                                      .device = xs->st->dev},
                                    &r);
    free(ramp);
    if (st)
        return st;
    gx_keep(l, r);
    int32_t zv = 0, vv = (int32_t)V;
    tx_tensor_desc sd = {.rank = 1, .shape = {1}, .dtype = TX_DTYPE_INT32, .device = xs->st->dev};
    sd.data = &zv;
    st = gx_kept(tx_tensor_create(ctx, &sd, &zero), l, &zero);
    sd.data = &vv;
    if (!st)
        st = gx_kept(tx_tensor_create(ctx, &sd, &fix), l, &fix);
    /* negative indices count from the end */
    if (!st)
        st = gx_view(ctx, nd->in[1], 2, (int64_t[]){n, 1}, l, &iv);
    if (!st)
        st = gx_bin(ctx, TX_OP_LESS, iv, zero, l, &neg);
    if (!st)
        st = gx_bin(ctx, TX_OP_MUL, neg, fix, l, &neg);
    if (!st)
        st = gx_bin(ctx, TX_OP_ADD, iv, neg, l, &shifted);
    if (!st)
        st = gx_bin(ctx, TX_OP_EQUAL, shifted, r, l, &eq);
    if (!st)
        st = gx_kept(tx_cast(ctx, eq, TX_DTYPE_FLOAT32, false, &oh), l, &oh);
    if (!st)
        st = gx_view(ctx, g, 3, (int64_t[]){A, n, B}, l, &gv);
    if (!st)
        st = gx_kept(tx_matmul(ctx, oh, gv, &(tx_matmul_desc){.transpose_a = true}, &d3), l, &d3);
    return st ? st : gx_view(ctx, d3, xs->rank, xs->shape, l, dx);
}

tx_status gx_backward_move(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    if (xs->dtype != TX_DTYPE_FLOAT32)
        return TX_STATUS_OK;
    switch (nd->op) {
    case GX_OP_RESHAPE: return gx_view(ctx, g, xs->rank, xs->shape, l, &gin[0]);
    case TX_OP_EXPAND: return gx_unbroadcast(ctx, g, xs->rank, xs->shape, l, &gin[0]);
    case TX_OP_SLICE: return slice_backward(ctx, nd, g, l, &gin[0]);
    case TX_OP_TILE: return tile_backward(ctx, nd, g, l, &gin[0]);
    case TX_OP_CONCAT: return concat_backward(ctx, nd, g, l, gin);
    case TX_OP_GATHER: return gather_backward(ctx, nd, g, l, &gin[0]);
    case TX_OP_PAD: {
        const tx_pad_desc *p = &nd->a.move.pad;
        if (p->mode != TX_PAD_CONSTANT)
            return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                           "tx_tape_grad: pad in reflect/edge/wrap mode has no gradient yet");
        tx_pad_desc back = {0};
        for (int i = 0; i < xs->rank; i++) {
            back.begin[i] = -p->begin[i];
            back.end[i] = -p->end[i];
        }
        return gx_kept(tx_pad(ctx, g, &back, &gin[0]), l, &gin[0]);
    }
    case TX_OP_TRANSPOSE: {
        int inv[TX_MAX_RANK];
        for (int i = 0; i < xs->rank; i++) {
            int p = nd->a.move.n_perm ? nd->a.move.perm[i] : xs->rank - 1 - i;
            inv[p < 0 ? p + xs->rank : p] = i;
        }
        return gx_kept(tx_transpose(ctx, g, inv, &gin[0]), l, &gin[0]);
    }
    default:
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "tx_tape_grad: %s has no gradient yet",
                       tx_op_name((tx_op)nd->op));
    }
}
