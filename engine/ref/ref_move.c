/* Reference: MOVE family, written from the ONNX operator definitions one
 * output element at a time (coordinates in, coordinates out), independently
 * of the engine's index-map simplification. */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* Allocates out with the given shape and dtype; returns its element count
 * or -1. */
static int64_t make_out(tx_ref_tensor *out, int rank, const int64_t *shape, tx_dtype dtype) {
    *out = (tx_ref_tensor){.rank = rank, .dtype = dtype};
    for (int i = 0; i < rank; i++)
        out->shape[i] = shape[i];
    int64_t n = tx_ref_numel(out);
    out->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    return out->data ? n : -1;
}

static void unravel(int64_t i, int rank, const int64_t *shape, int64_t *c) {
    for (int d = rank - 1; d >= 0; d--) {
        c[d] = shape[d] ? i % shape[d] : 0;
        i = shape[d] ? i / shape[d] : 0;
    }
}

static int64_t ravel(int rank, const int64_t *shape, const int64_t *c) {
    int64_t i = 0;
    for (int d = 0; d < rank; d++)
        i = i * shape[d] + c[d];
    return i;
}

static int norm_axis(int axis, int rank) {
    return axis < 0 ? axis + rank : axis;
}

int tx_ref_identity(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                    tx_ref_tensor *out) {
    (void)attrs;
    if (n_in != 1)
        return -1;
    int64_t n = make_out(out, in[0].rank, in[0].shape, in[0].dtype);
    if (n < 0)
        return -1;
    memcpy(out->data, in[0].data, (size_t)n * sizeof(float));
    return 0;
}

int tx_ref_transpose(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                     tx_ref_tensor *out) {
    if (n_in != 1)
        return -1;
    const tx_ref_tensor *x = &in[0];
    int perm[TX_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        perm[i] = attrs && attrs->move.n_perm ? attrs->move.perm[i] : x->rank - 1 - i;
    int64_t oshape[TX_MAX_RANK], c[TX_MAX_RANK], xc[TX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank)
            return -1;
        oshape[i] = x->shape[perm[i]];
    }
    int64_t n = make_out(out, x->rank, oshape, x->dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, x->rank, oshape, c);
        for (int d = 0; d < x->rank; d++)
            xc[perm[d]] = c[d];
        out->data[i] = x->data[ravel(x->rank, x->shape, xc)];
    }
    return n < 0 ? -1 : 0;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

int tx_ref_slice(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in, attrs);
    if (!x)
        return -1;
    const tx_slice_desc *s = &attrs->move.slice;
    int64_t start[TX_MAX_RANK], step[TX_MAX_RANK], oshape[TX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        start[d] = 0;
        step[d] = 1;
        oshape[d] = x->shape[d];
    }
    for (int i = 0; i < s->n; i++) {
        int64_t a = s->has_axes ? s->axes[i] : i;
        if (a < 0)
            a += x->rank;
        if (a < 0 || a >= x->rank)
            return -1;
        int64_t dim = x->shape[a], st = s->steps[i] ? s->steps[i] : 1;
        /* ONNX: add dim to negatives, then clamp by the sign of the step */
        double b = (double)s->starts[i], e = (double)s->ends[i];
        if (b < 0)
            b += (double)dim;
        if (e < 0)
            e += (double)dim;
        if (st > 0) {
            b = b < 0 ? 0 : (b > dim ? (double)dim : b);
            e = e < 0 ? 0 : (e > dim ? (double)dim : e);
        } else {
            b = b < 0 ? 0 : (b > dim - 1 ? (double)(dim - 1) : b);
            e = e < -1 ? -1 : (e > dim - 1 ? (double)(dim - 1) : e);
        }
        int64_t len = 0;
        for (double p = b; dim > 0 && (st > 0 ? p < e : p > e); p += (double)st)
            len++;
        start[a] = (int64_t)b;
        step[a] = st;
        oshape[a] = len;
    }
    int64_t n = make_out(out, x->rank, oshape, x->dtype), c[TX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        unravel(i, x->rank, oshape, c);
        for (int d = 0; d < x->rank; d++)
            c[d] = start[d] + c[d] * step[d];
        out->data[i] = x->data[ravel(x->rank, x->shape, c)];
    }
    return n < 0 ? -1 : 0;
}

int tx_ref_pad(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in, attrs);
    if (!x)
        return -1;
    const tx_pad_desc *p = &attrs->move.pad;
    int64_t oshape[TX_MAX_RANK], c[TX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        oshape[d] = x->shape[d] + p->begin[d] + p->end[d];
        if (oshape[d] < 0)
            return -1;
    }
    float value = p->value;
    if (x->dtype == TX_DTYPE_INT32)
        value = (float)(int32_t)value;
    int64_t n = make_out(out, x->rank, oshape, x->dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, x->rank, oshape, c);
        bool inside = true;
        for (int d = 0; d < x->rank; d++) {
            int64_t dim = x->shape[d], v = c[d] - p->begin[d];
            if (dim == 0 && p->mode != TX_PAD_CONSTANT)
                return -1;
            if (v >= 0 && v < dim)
                ;
            else if (p->mode == TX_PAD_CONSTANT)
                inside = false;
            else if (p->mode == TX_PAD_EDGE)
                v = v < 0 ? 0 : dim - 1;
            else if (p->mode == TX_PAD_WRAP)
                v = ((v % dim) + dim) % dim;
            else /* reflect: bounce between the ends until inside */
                while (v < 0 || v >= dim)
                    v = dim == 1 ? 0 : (v < 0 ? -v : 2 * (dim - 1) - v);
            c[d] = v;
        }
        out->data[i] = inside ? x->data[ravel(x->rank, x->shape, c)] : value;
    }
    return n < 0 ? -1 : 0;
}

int tx_ref_expand(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in, attrs);
    if (!x)
        return -1;
    int rs = attrs->move.rank, rank = rs > x->rank ? rs : x->rank;
    int64_t oshape[TX_MAX_RANK], xd[TX_MAX_RANK], c[TX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int ix = d - (rank - x->rank), is = d - (rank - rs);
        xd[d] = ix >= 0 ? x->shape[ix] : 1;
        int64_t sd = is >= 0 ? attrs->move.shape[is] : 1;
        if (xd[d] != sd && xd[d] != 1 && sd != 1)
            return -1;
        oshape[d] = xd[d] == 1 ? sd : xd[d];
    }
    int64_t n = make_out(out, rank, oshape, x->dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, oshape, c);
        for (int d = 0; d < rank; d++)
            if (xd[d] == 1)
                c[d] = 0;
        out->data[i] = x->data[ravel(rank, xd, c)];
    }
    return n < 0 ? -1 : 0;
}

int tx_ref_tile(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in, attrs);
    if (!x)
        return -1;
    int64_t oshape[TX_MAX_RANK], c[TX_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        if (attrs->move.repeats[d] < 0)
            return -1;
        oshape[d] = x->shape[d] * attrs->move.repeats[d];
    }
    int64_t n = make_out(out, x->rank, oshape, x->dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, x->rank, oshape, c);
        for (int d = 0; d < x->rank; d++)
            c[d] %= x->shape[d];
        out->data[i] = x->data[ravel(x->rank, x->shape, c)];
    }
    return n < 0 ? -1 : 0;
}

static int depth_space(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, bool to_space,
                       tx_ref_tensor *out) {
    if (n_in != 1 || !attrs || in[0].rank != 4 || attrs->move.blocksize < 1)
        return -1;
    const tx_ref_tensor *x = &in[0];
    int64_t b = attrs->move.blocksize, N = x->shape[0], C = x->shape[1], H = x->shape[2],
            W = x->shape[3];
    bool crd = attrs->move.depth_mode == TX_DEPTH_CRD;
    int64_t oshape[4], c[4];
    if (to_space) {
        if (C % (b * b))
            return -1;
        int64_t o[4] = {N, C / (b * b), H * b, W * b};
        memcpy(oshape, o, sizeof o);
    } else {
        if (H % b || W % b)
            return -1;
        int64_t o[4] = {N, C * b * b, H / b, W / b};
        memcpy(oshape, o, sizeof o);
    }
    int64_t n = make_out(out, 4, oshape, x->dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, 4, oshape, c);
        int64_t xc[4];
        if (to_space) { /* y[n, c, h*b + bi, w*b + bj] */
            int64_t bi = c[2] % b, bj = c[3] % b, cc = c[1], Co = oshape[1];
            xc[0] = c[0];
            xc[1] = crd ? cc * b * b + bi * b + bj : (bi * b + bj) * Co + cc;
            xc[2] = c[2] / b;
            xc[3] = c[3] / b;
        } else { /* y[n, (bi*b + bj)*C + c, h, w] = x[n, c, h*b + bi, w*b + bj] */
            int64_t blk = c[1] / C, cc = c[1] % C;
            xc[0] = c[0];
            xc[1] = cc;
            xc[2] = c[2] * b + blk / b;
            xc[3] = c[3] * b + blk % b;
        }
        out->data[i] = x->data[ravel(4, x->shape, xc)];
    }
    return n < 0 ? -1 : 0;
}

int tx_ref_depth_to_space(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                          tx_ref_tensor *out) {
    return depth_space(in, n_in, attrs, true, out);
}

int tx_ref_space_to_depth(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                          tx_ref_tensor *out) {
    return depth_space(in, n_in, attrs, false, out);
}

/* Several outputs: out[0..k-1], k = tx_op_outputs(split, attrs). */
int tx_ref_split(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in, attrs);
    if (!x)
        return -1;
    int k = tx_op_outputs(TX_OP_SPLIT, attrs), a = norm_axis(attrs->move.axis, x->rank);
    if (a < 0 || a >= x->rank)
        return -1;
    bool sized = false;
    for (int i = 0; i < k && i < 8; i++)
        sized = sized || attrs->move.split[i] != 0;
    int64_t dim = x->shape[a], at = 0, c[TX_MAX_RANK];
    for (int j = 0; j < k; j++) {
        int64_t len = sized ? attrs->move.split[j] : (dim + k - 1) / k;
        if (!sized && at + len > dim)
            len = dim - at;
        int64_t oshape[TX_MAX_RANK];
        memcpy(oshape, x->shape, sizeof oshape);
        oshape[a] = len;
        int64_t n = make_out(&out[j], x->rank, oshape, x->dtype);
        if (n < 0)
            return -1;
        for (int64_t i = 0; i < n; i++) {
            unravel(i, x->rank, oshape, c);
            c[a] += at;
            out[j].data[i] = x->data[ravel(x->rank, x->shape, c)];
        }
        at += len;
    }
    return at == dim ? 0 : -1;
}

int tx_ref_concat(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    if (n_in < 1)
        return -1;
    int rank = in[0].rank, a = norm_axis(attrs ? attrs->move.axis : 0, rank);
    if (a < 0 || a >= rank)
        return -1;
    int64_t oshape[TX_MAX_RANK], c[TX_MAX_RANK];
    memcpy(oshape, in[0].shape, sizeof oshape);
    oshape[a] = 0;
    for (int k = 0; k < n_in; k++)
        oshape[a] += in[k].shape[a];
    int64_t n = make_out(out, rank, oshape, in[0].dtype);
    for (int64_t i = 0; i < n; i++) {
        unravel(i, rank, oshape, c);
        int k = 0;
        while (c[a] >= in[k].shape[a])
            c[a] -= in[k++].shape[a];
        out->data[i] = in[k].data[ravel(rank, in[k].shape, c)];
    }
    return n < 0 ? -1 : 0;
}

int tx_ref_gather(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    if (n_in != 2)
        return -1;
    const tx_ref_tensor *x = &in[0], *idx = &in[1];
    int a = norm_axis(attrs ? attrs->move.axis : 0, x->rank);
    int orank = x->rank - 1 + idx->rank;
    if (a < 0 || a >= x->rank || orank > TX_MAX_RANK)
        return -1;
    int64_t oshape[TX_MAX_RANK], c[TX_MAX_RANK], xc[TX_MAX_RANK];
    int k = 0;
    for (int d = 0; d < a; d++)
        oshape[k++] = x->shape[d];
    for (int d = 0; d < idx->rank; d++)
        oshape[k++] = idx->shape[d];
    for (int d = a + 1; d < x->rank; d++)
        oshape[k++] = x->shape[d];
    int64_t n = make_out(out, orank, oshape, x->dtype), dim = x->shape[a];
    for (int64_t i = 0; i < n; i++) {
        unravel(i, orank, oshape, c);
        int64_t j = ravel(idx->rank, idx->shape, c + a);
        int64_t v = (int64_t)idx->data[j];
        if (v < 0)
            v += dim;
        v = clamp64(v, 0, dim - 1); /* texel.h: out-of-range indices clamp */
        for (int d = 0; d < a; d++)
            xc[d] = c[d];
        xc[a] = v;
        for (int d = a + 1; d < x->rank; d++)
            xc[d] = c[d - 1 + idx->rank];
        out->data[i] = x->data[ravel(x->rank, x->shape, xc)];
    }
    return n < 0 ? -1 : 0;
}
