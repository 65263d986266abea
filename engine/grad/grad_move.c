/* Gradients of data movement and resize.
 *
 * Views (reshape, flatten, squeeze, unsqueeze) give g back in x's shape;
 * transpose runs g through the inverse permutation (depth_to_space and
 * space_to_depth through their inverses); expand sums g back over the
 * broadcast dims, tile over the repeats (one dim at a time); slice pads g
 * with zeros back to x (steps 1), pad (constant mode) crops it with the
 * negated pads; strided slices and the reflect/edge/wrap pads put g back one
 * dim at a time (scatter_dim below); concat slices g per input; gather
 * scatters by a matmul with the indices' one-hot matrix:
 * dx [A, V, B] = onehot(idx)^T [V, n] · g [A, n, B]. Resize is linear and
 * separable: per resized dim, dx = R^T g with R^T [in, out] the resize of an
 * identity matrix along that dim alone, made by the forward op itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grad.h"

/* Where out position c of a moved dim came from in x's dim (-1: nowhere). */
typedef struct src_map {
    int64_t dim;     /* x's length */
    int64_t b, step; /* slices: b + c step */
    int64_t begin;   /* pads: c - begin, then mapped by mode */
    int mode;        /* -1: a slice; else a tx_pad_mode */
} src_map;

static int64_t src_of(const src_map *m, int64_t c) {
    if (m->mode < 0)
        return m->b + c * m->step;
    int64_t dim = m->dim, v = c - m->begin;
    if (v >= 0 && v < dim)
        return v;
    switch (m->mode) {
    case TX_PAD_CONSTANT: return -1;
    case TX_PAD_EDGE: return v < 0 ? 0 : dim - 1;
    case TX_PAD_WRAP: return ((v % dim) + dim) % dim;
    default: /* reflect, as the forward: bounce between the ends */
        if (dim == 1)
            return 0;
        int64_t p = 2 * (dim - 1);
        v = ((v % p) + p) % p;
        return v < dim ? v : p - v;
    }
}

/* g's run [c0, c0 + len) of dim ax (g: `shape`) whose sources are v0, v0 + s,
 * ... (s != 0; s == 0: all v0), placed into a tensor with dim ax of length n
 * and zeros elsewhere. Works on [pre, len, post] views. */
static tx_status run_part(tx_ctx *ctx, tx_tensor g, int rank, const int64_t *shape, int ax,
                          int64_t c0, int64_t len, int64_t v0, int64_t s, int64_t n, gx_tmps *l,
                          tx_tensor *out) {
    int64_t pre = 1, post = 1, L = shape[ax], a = s < 0 ? -s : s;
    for (int i = 0; i < ax; i++)
        pre *= shape[i];
    for (int i = ax + 1; i < rank; i++)
        post *= shape[i];
    tx_tensor t;
    tx_status st = gx_view(ctx, g, 3, (int64_t[]){pre, L, post}, l, &t);
    if (!st && len != L)
        st = gx_kept(
            tx_slice(ctx, t,
                     &(tx_slice_desc){
                         .n = 1, .starts = {c0}, .ends = {c0 + len}, .axes = {1}, .has_axes = true},
                     &t),
            l, &t);
    int64_t lo = s < 0 ? v0 + (len - 1) * s : v0, run = len;
    if (!st && s == 0) { /* one element repeated: its gradient is the sum */
        st = gx_red(ctx, TX_OP_REDUCE_SUM, t, &(tx_reduce_desc){.n_axes = 1, .axes = {1}}, l, &t);
        run = 1;
    }
    if (!st && s < 0)
        st = gx_kept(tx_slice(ctx, t,
                              &(tx_slice_desc){.n = 1,
                                               .starts = {-1},
                                               .ends = {INT64_MIN},
                                               .axes = {1},
                                               .steps = {-1},
                                               .has_axes = true},
                              &t),
                     l, &t);
    if (!st && a > 1) { /* zeros between: [pre, len, 1, post] padded to [pre, len, a, post] */
        st = gx_view(ctx, t, 4, (int64_t[]){pre, len, 1, post}, l, &t);
        if (!st)
            st = gx_kept(tx_pad(ctx, t, &(tx_pad_desc){.end = {0, 0, a - 1, 0}}, &t), l, &t);
        if (!st)
            st = gx_view(ctx, t, 3, (int64_t[]){pre, len * a, post}, l, &t);
        run = len * a; /* the last a - 1 zeros are cut by the pad below */
    }
    if (!st)
        st = gx_kept(
            tx_pad(ctx, t, &(tx_pad_desc){.begin = {0, lo, 0}, .end = {0, n - lo - run, 0}}, &t), l,
            &t);
    int64_t osh[TX_MAX_RANK];
    memcpy(osh, shape, sizeof osh);
    osh[ax] = n;
    return st ? st : gx_view(ctx, t, rank, osh, l, out);
}

/* g with dim ax (length shape[ax]) moved back to x's dim (length m->dim):
 * every out position adds its gradient to its source. The positions split
 * into runs whose sources move by one fixed step (a slice: one run; a
 * reflect pad: a reversed run, the middle, a reversed run; an edge pad: two
 * constant runs and the middle), each put in place by run_part. shape is
 * updated. Each run's temporaries are freed before the next. */
static tx_status scatter_dim(tx_ctx *ctx, tx_tensor g, int rank, int64_t *shape, int ax,
                             const src_map *m, gx_tmps *l, tx_tensor *out) {
    int64_t L = shape[ax], n = m->dim;
    tx_tensor acc = {0};
    tx_status st = TX_STATUS_OK;
    for (int64_t c0 = 0; c0 < L && !st;) {
        int64_t v0 = src_of(m, c0), c1 = c0 + 1, s = 1;
        if (v0 < 0) {
            c0++;
            continue;
        }
        if (c1 < L && src_of(m, c1) >= 0) {
            s = src_of(m, c1) - v0;
            while (c1 < L && src_of(m, c1) >= 0 && src_of(m, c1) - src_of(m, c1 - 1) == s)
                c1++;
        }
        gx_tmps r = {0};
        tx_tensor part, sum;
        st = run_part(ctx, g, rank, shape, ax, c0, c1 - c0, v0, s, n, &r, &part);
        if (!st && acc.id) {
            st = tx_binary(ctx, TX_OP_ADD, acc, part, &sum);
            tx_tensor_destroy(ctx, acc);
            acc = st ? (tx_tensor){0} : sum;
        } else if (!st) {            /* a view of part outlives r */
            int64_t sh[TX_MAX_RANK]; /* copied: a new slot may move the slot table */
            const tx_slot *ps = gx_slot(ctx, part);
            int rank = ps->rank;
            memcpy(sh, ps->shape, sizeof sh);
            st = tx_tensor_reshape(ctx, part, rank, sh, &acc);
        }
        gx_free(ctx, &r);
        c0 = c1;
    }
    shape[ax] = n;
    if (st) {
        if (acc.id)
            tx_tensor_destroy(ctx, acc);
        return st;
    }
    if (!acc.id) /* nothing came from x's dim */
        return gx_fill(ctx, gx_slot(ctx, g)->st->dev, rank, shape, 0.0f, l, out);
    *out = gx_keep(l, acc);
    return TX_STATUS_OK;
}

/* Any slice: each sliced dim of g put back by scatter_dim, its source
 * b + c step with b clamped as the forward clamps it. */
static tx_status strided_slice_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                        tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    const tx_slice_desc *d = &nd->a.move.slice;
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, gx_slot(ctx, g)->shape, sizeof shape);
    tx_tensor t = g;
    tx_status st = TX_STATUS_OK;
    for (int k = 0; k < d->n && !st; k++) {
        int64_t ax = d->has_axes ? d->axes[k] : k;
        ax = ax < 0 ? ax + xs->rank : ax;
        int64_t dim = xs->shape[ax], step = d->steps[k] ? d->steps[k] : 1, b = d->starts[k];
        if (step > dim + 1)
            step = dim + 1;
        if (step < -(dim + 1))
            step = -(dim + 1);
        if (b < 0)
            b = b < -dim ? -1 : b + dim;
        if (step > 0)
            b = b < 0 ? 0 : (b > dim ? dim : b);
        else
            b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
        src_map m = {.dim = dim, .b = b, .step = step, .mode = -1};
        st = scatter_dim(ctx, t, xs->rank, shape, (int)ax, &m, l, &t);
    }
    *dx = t;
    return st;
}

/* reflect, edge and wrap pads: one dim at a time (negative pads crop). */
static tx_status pad_modes_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                    tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    const tx_pad_desc *p = &nd->a.move.pad;
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, gx_slot(ctx, g)->shape, sizeof shape);
    tx_tensor t = g;
    tx_status st = TX_STATUS_OK;
    for (int ax = 0; ax < xs->rank && !st; ax++) {
        if (!p->begin[ax] && !p->end[ax])
            continue;
        src_map m = {.dim = xs->shape[ax], .begin = p->begin[ax], .mode = (int)p->mode};
        st = scatter_dim(ctx, t, xs->rank, shape, ax, &m, l, &t);
    }
    *dx = t;
    return st;
}

/* depth_to_space / space_to_depth: g through the inverse rearrangement
 * (space_to_depth is the inverse of DCR depth_to_space; CRD's inverse is
 * written out as its 6-D transpose). */
static tx_status depth_space_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                      tx_tensor *dx) {
    int b = nd->a.move.blocksize;
    if (nd->op == TX_OP_SPACE_TO_DEPTH)
        return gx_kept(tx_depth_to_space(ctx, g, b, TX_DEPTH_DCR, dx), l, dx);
    if (nd->a.move.depth_mode == TX_DEPTH_DCR)
        return gx_kept(tx_space_to_depth(ctx, g, b, dx), l, dx);
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    int64_t N = xs->shape[0], C = xs->shape[1], H = xs->shape[2], W = xs->shape[3];
    tx_tensor t; /* y = x [N, c, b, b, H, W] moved to [N, c, H, b, W, b] */
    tx_status st = gx_view(ctx, g, 6, (int64_t[]){N, C / ((int64_t)b * b), H, b, W, b}, l, &t);
    if (!st)
        st = gx_kept(tx_transpose(ctx, t, (const int[]){0, 1, 3, 5, 2, 4}, &t), l, &t);
    return st ? st : gx_view(ctx, t, 4, xs->shape, l, dx);
}

/* Resize, one resized dim at a time: R^T [in, out] is the resize of the
 * identity [in, in] along its last dim with this dim's scale (or size) and
 * the node's mode, so dx = R^T · g on [pre, out, post] views. */
static tx_status resize_backward(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                 tx_tensor *dx) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    const tx_resize_desc *rd = &nd->a.move.resize;
    bool by_sizes = false;
    for (int i = 0; i < xs->rank; i++)
        by_sizes |= rd->sizes[i] != 0;
    /* tf_half_pixel_for_nearest moves even a dim at scale 1 (linear, cubic,
     * the ceil roundings): the identity's other dim would be resampled too */
    if (rd->coord == TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST &&
        !(rd->mode == TX_RESIZE_NEAREST &&
          (rd->nearest == TX_RESIZE_ROUND_PREFER_FLOOR || rd->nearest == TX_RESIZE_FLOOR)))
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_tape_grad: resize with tf_half_pixel_for_nearest coordinates has a "
                       "gradient only in nearest mode with floor or round_prefer_floor");
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, gx_slot(ctx, g)->shape, sizeof shape);
    tx_tensor t = g;
    tx_status st = TX_STATUS_OK;
    for (int ax = 0; ax < xs->rank && !st; ax++) {
        int64_t in = xs->shape[ax], out = shape[ax], pre = 1, post = 1;
        float sc = rd->scales[ax] ? rd->scales[ax] : 1.0f;
        if ((by_sizes ? out == in : sc == 1.0f) && rd->coord != TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST)
            continue; /* a plain copy (tf_half_pixel's nearest may shift even at scale 1) */
        for (int i = 0; i < ax; i++)
            pre *= shape[i];
        for (int i = ax + 1; i < xs->rank; i++)
            post *= shape[i];
        float *eye = calloc((size_t)(in * in), sizeof(float));
        if (!eye)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                           "tx_tape_grad: out of host memory for resize's %lld x %lld matrix",
                           (long long)in, (long long)in);
        for (int64_t i = 0; i < in; i++)
            eye[i * in + i] = 1.0f;
        tx_tensor e, rt, g3, d3;
        st = gx_kept(tx_tensor_create(ctx,
                                      &(tx_tensor_desc){.rank = 2,
                                                        .shape = {in, in},
                                                        .dtype = TX_DTYPE_FLOAT32,
                                                        .data = eye,
                                                        .device = xs->st->dev},
                                      &e),
                     l, &e);
        free(eye);
        tx_resize_desc one = *rd;
        memset(one.scales, 0, sizeof one.scales);
        memset(one.sizes, 0, sizeof one.sizes);
        if (by_sizes)
            one.sizes[0] = in, one.sizes[1] = out;
        else
            one.scales[1] = sc;
        if (!st)
            st = gx_kept(tx_resize(ctx, e, &one, &rt), l, &rt);
        if (!st)
            st = gx_view(ctx, t, 3, (int64_t[]){pre, out, post}, l, &g3);
        if (!st)
            st = gx_kept(tx_matmul(ctx, rt, g3, &(tx_matmul_desc){0}, &d3), l, &d3);
        shape[ax] = in;
        if (!st)
            st = gx_view(ctx, d3, xs->rank, shape, l, &t);
    }
    *dx = t;
    return st;
}

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
            return strided_slice_backward(ctx, nd, g, l, dx);
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
    case TX_OP_DEPTH_TO_SPACE:
    case TX_OP_SPACE_TO_DEPTH: return depth_space_backward(ctx, nd, g, l, &gin[0]);
    case TX_OP_RESIZE: return resize_backward(ctx, nd, g, l, &gin[0]);
    case TX_OP_PAD: {
        const tx_pad_desc *p = &nd->a.move.pad;
        if (p->mode != TX_PAD_CONSTANT)
            return pad_modes_backward(ctx, nd, g, l, &gin[0]);
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
