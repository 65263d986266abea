/* ONNX indexing: Gather, GatherElements, GatherND, OneHot. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static tx_status gather_dev(tx_xnode *x) {
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tx_tmp_list l = {0};
    tx_tensor in, ix, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st)
        st = tx_gather(x->ctx, in, ix, (int)axis, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_gather(tx_xnode *x) {
    if (!tx_x_is_host(x, 0) || !tx_x_is_host(x, 1))
        return gather_dev(x);
    const tx_hval *d, *ix;
    tx_status st = tx_x_host2(x, 0, &d, 1, &ix);
    if (st)
        return st;
    int r = d->rank;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (r < 1 || axis < -r || axis >= r)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)axis, r);
    int a = tx_norm_axis(axis, r);
    int orank = r - 1 + ix->rank;
    if (orank > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d", orank);
    int64_t oshape[TX_MAX_RANK];
    int j = 0;
    for (int i = 0; i < a; i++)
        oshape[j++] = d->shape[i];
    for (int i = 0; i < ix->rank; i++)
        oshape[j++] = ix->shape[i];
    for (int i = a + 1; i < r; i++)
        oshape[j++] = d->shape[i];
    int64_t outer = tx_numel_of(a, d->shape), inner = tx_numel_of(r - a - 1, d->shape + a + 1);
    int64_t n = d->shape[a];
    tx_hval o;
    if (!tx_hval_alloc(&o, d->elem, orank, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t k = 0;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < ix->numel; q++) {
            int64_t id = (int64_t)tx_hval_get(ix, q);
            if (id < 0)
                id += n;
            if (id < 0 || id >= n) {
                tx_hval_free(&o);
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "index %lld is outside 0..%lld",
                                 (long long)id, (long long)n - 1);
            }
            for (int64_t s = 0; s < inner; s++, k++) {
                int64_t src = (p * n + id) * inner + s;
                if (o.f)
                    o.f[k] = d->f[src];
                else
                    o.i[k] = d->i[src];
            }
        }
    return tx_x_set_host(x, 0, &o);
}

static tx_status int_scalar(tx_xnode *x, int32_t v, tx_tensor *out) {
    return tx_tensor_create(x->ctx,
                            &(tx_tensor_desc){.rank = 0, .dtype = TX_DTYPE_INT32, .data = &v}, out);
}

/* t + bound * (t < 0), elementwise (bound broadcasts): ONNX's negative
 * indices. t is int32. */
static tx_status wrap_negative(tx_xnode *x, tx_tensor t, tx_tensor bound, tx_tmp_list *l,
                               tx_tensor *out) {
    tx_tensor zero, lt, m;
    tx_status st = int_scalar(x, 0, &zero);
    if (!st && (l->t[l->n++] = zero, !(st = tx_binary(x->ctx, TX_OP_LESS, t, zero, &lt))))
        l->t[l->n++] = lt;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, lt, bound, &m)))
        l->t[l->n++] = m;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_ADD, t, m, out)))
        l->t[l->n++] = *out;
    return st;
}

/* Flat indices are exact to 2^24: n (said as pre n post) must not pass it. */
static tx_status flat_exact(tx_xnode *x, const char *pre, int64_t n, const char *post) {
    if (n > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s%lld%s (flat indices are exact to 2^24)", pre,
                         (long long)n, post);
    return TX_STATUS_OK;
}

/* GatherElements as one Gather over x flattened: the flat index of output
 * element c is idx[c] * stride(axis) + base[c], where base (the offset of c's
 * other coordinates) depends only on the shapes and is built on the host.
 * Negative indices get dim added. Flat indices must stay exact: x up to 2^24
 * elements. */
static tx_status exec_gather_elements(tx_xnode *x) {
    int rx, ri;
    int64_t sx[TX_MAX_RANK], si[TX_MAX_RANK];
    tx_status st = tx_x_shape2(x, &rx, sx, &ri, si);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (rx < 1 || ri != rx || axis < -rx || axis >= rx)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "data rank %d, indices rank %d, axis %lld",
                         rx, ri, (long long)axis);
    int a = tx_norm_axis(axis, rx);
    for (int d = 0; d < rx; d++)
        if (d != a && si[d] > sx[d])
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "indices dim %d (%lld) exceeds the "
                             "data's (%lld)",
                             d, (long long)si[d], (long long)sx[d]);
    int64_t nx = tx_numel_of(rx, sx);
    if ((st = flat_exact(x, "data of ", nx, " elements")))
        return st;
    int64_t stride[TX_MAX_RANK], acc = 1;
    for (int d = rx - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= sx[d];
    }
    tx_hval base;
    if (!tx_hval_alloc(&base, TX_ONNX_INT64, ri, si))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < base.numel; k++) {
        int64_t rem = k, off = 0;
        for (int d = ri - 1; d >= 0; d--) {
            int64_t c = rem % si[d];
            rem /= si[d];
            if (d != a)
                off += c * stride[d];
        }
        base.i[k] = off;
    }
    tx_tmp_list l = {0};
    tx_tensor in, flat, ix, t, y = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st && !(st = tx_hval_upload(x->ctx, x->node->name, &base, &t)))
        l.t[l.n++] = t;
    tx_hval_free(&base);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, 1, &nx, &flat)))
        l.t[l.n++] = flat;
    /* flat = wrapped(idx) * stride + base */
    tx_tensor sc, dim, iw, n1, lin;
    if (!st && !(st = int_scalar(x, (int32_t)stride[a], &sc)))
        l.t[l.n++] = sc;
    if (!st && !(st = int_scalar(x, (int32_t)sx[a], &dim)))
        l.t[l.n++] = dim;
    if (!st)
        st = wrap_negative(x, ix, dim, &l, &iw);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, iw, sc, &n1)))
        l.t[l.n++] = n1;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_ADD, n1, t, &lin)))
        l.t[l.n++] = lin;
    if (!st)
        st = tx_gather(x->ctx, flat, lin, 0, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* OneHot(indices, depth, values [off, on]): Where(unsqueezed indices == a
 * ramp of `depth` along axis, on, off). */
static tx_status exec_one_hot(tx_xnode *x) {
    const tx_hval *dh, *vh;
    tx_status st = tx_x_host2(x, 1, &dh, 2, &vh);
    if (st)
        return st;
    if (dh->numel != 1 || vh->numel != 2)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "depth must be one value, values two");
    int64_t depth = (int64_t)tx_hval_get(dh, 0);
    if (depth < 1 || depth > (1 << 24))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "depth %lld", (long long)depth);
    int rank;
    int64_t shape[TX_MAX_RANK];
    st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", -1);
    if (rank + 1 > TX_MAX_RANK || axis < -(rank + 1) || axis > rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d", (long long)axis,
                         rank);
    int a = tx_norm_axis(axis, rank + 1);
    int64_t us[TX_MAX_RANK], rs[TX_MAX_RANK], *ramp = malloc(sizeof(int64_t) * (size_t)depth);
    if (!ramp)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int d = 0, j = 0; d <= rank; d++) {
        us[d] = d == a ? 1 : shape[j++];
        rs[d] = d == a ? depth : 1;
    }
    for (int64_t k = 0; k < depth; k++)
        ramp[k] = k;
    tx_tmp_list l = {0};
    tx_tensor ix, iu, dsc, iw, rt, eq, t[3], y = {0};
    bool isf = vh->f != NULL;
    float fv[2] = {isf ? vh->f[0] : 0, isf ? vh->f[1] : 0};
    int32_t iv[2] = {isf ? 0 : (int32_t)vh->i[0], isf ? 0 : (int32_t)vh->i[1]};
    tx_dtype vdt = isf ? TX_DTYPE_FLOAT32 : TX_DTYPE_INT32;
    st = tx_x_dev_as(x, 0, TX_DTYPE_INT32, &l, &ix);
    if (!st && !(st = tx_tensor_reshape(x->ctx, ix, rank + 1, us, &iu)))
        l.t[l.n++] = iu;
    if (!st && !(st = int_scalar(x, (int32_t)depth, &dsc)))
        l.t[l.n++] = dsc;
    if (!st)
        st = wrap_negative(x, iu, dsc, &l, &iw);
    if (!st)
        st = tx_x_upload_ints(x, rank + 1, rs, ramp, &l, &rt);
    free(ramp);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_EQUAL, iw, rt, &eq)))
        l.t[l.n++] = eq;
    for (int k = 0; k < 2 && !st; k++) {
        st = tx_tensor_create(
            x->ctx,
            &(tx_tensor_desc){
                .rank = 0, .dtype = vdt, .data = isf ? (void *)&fv[1 - k] : (void *)&iv[1 - k]},
            &t[1 + k]);
        if (!st)
            l.t[l.n++] = t[1 + k];
    }
    if (!st) {
        t[0] = eq;
        st = tx_nary(x->ctx, TX_OP_WHERE, t, 3, &y);
    }
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, vh->elem);
}

/* GatherND as one Gather over data viewed as [prod(dims[:b+k]), dims[b+k:]...]
 * (b = batch_dims): the row of index tuple i is
 * batch(i) * prod(dims[b:b+k]) + sum_j idx[i, j] * stride_j (a ReduceSum over
 * the tuple), batch(i) the flat index of i's first b coordinates, built on
 * the host from the shapes. */
static tx_status exec_gather_nd(tx_xnode *x) {
    int64_t bd = tx_attr_int(x->node, "batch_dims", 0);
    int rd, ri;
    int64_t sd[TX_MAX_RANK], si[TX_MAX_RANK];
    tx_status st = tx_x_shape2(x, &rd, sd, &ri, si);
    if (st)
        return st;
    int k = ri >= 1 ? (int)si[ri - 1] : 0;
    if (bd < 0 || bd >= ri || bd >= rd)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "batch_dims %lld must be under both ranks (data %d, indices %d)",
                         (long long)bd, rd, ri);
    int b = (int)bd;
    if (ri < 1 || k < 1 || b + k > rd)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "indices' last dim %d for data rank %d and batch_dims %d", k, rd, b);
    for (int d = 0; d < b; d++)
        if (si[d] != sd[d])
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "batch dim %d: data has %lld, indices %lld", d, (long long)sd[d],
                             (long long)si[d]);
    int64_t rows = tx_numel_of(b + k, sd), per = tx_numel_of(k, sd + b);
    if ((st = flat_exact(x, "", rows, " index tuples' rows")))
        return st;
    int64_t dims[TX_MAX_RANK], strides[TX_MAX_RANK], acc = 1, one = k;
    for (int j = k - 1; j >= 0; j--) {
        dims[j] = sd[b + j];
        strides[j] = acc;
        acc *= sd[b + j];
    }
    int64_t vs[TX_MAX_RANK];
    vs[0] = rows;
    for (int j = b + k; j < rd; j++)
        vs[1 + j - b - k] = sd[j];
    tx_tmp_list l = {0};
    tx_tensor in, v, ix, dt, stt, iw, prod, lin, base, y = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, 1 + rd - b - k, vs, &v)))
        l.t[l.n++] = v;
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st)
        st = tx_x_upload_ints(x, 1, &one, dims, &l, &dt);
    if (!st)
        st = tx_x_upload_ints(x, 1, &one, strides, &l, &stt);
    if (!st)
        st = wrap_negative(x, ix, dt, &l, &iw);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, iw, stt, &prod)))
        l.t[l.n++] = prod;
    tx_reduce_desc r = {.n_axes = 1, .axes = {-1}, .drop_dims = true};
    if (!st && !(st = tx_reduce(x->ctx, TX_OP_REDUCE_SUM, prod, &r, &lin)))
        l.t[l.n++] = lin;
    if (!st && b > 0) {
        /* + batch(i) * per, over the tuples' shape si[:-1] */
        int64_t nt = tx_numel_of(ri - 1, si), inner = nt / tx_numel_of(b, si);
        int64_t *bv = malloc(sizeof(int64_t) * (size_t)(nt ? nt : 1));
        if (!bv)
            st = tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t t = 0; !st && t < nt; t++)
            bv[t] = (t / inner) * per;
        if (!st)
            st = tx_x_upload_ints(x, ri - 1, si, bv, &l, &base);
        free(bv);
        tx_tensor sum;
        if (!st && !(st = tx_binary(x->ctx, TX_OP_ADD, lin, base, &sum)))
            l.t[l.n++] = lin = sum;
    }
    if (!st)
        st = tx_gather(x->ctx, v, lin, 0, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    {"Gather", exec_gather, NULL, H, 2, 2, 0},
    {"GatherElements", exec_gather_elements, NULL, 0, 2, 2, 0},
    {"OneHot", exec_one_hot, NULL, 0, 3, 3, 6},
    {"GatherND", exec_gather_nd, NULL, 0, 2, 2, 0},
};

#undef H

const tx_onnx_family tx_onnx_ops_gather = {k_ops, TX_COUNTOF(k_ops)};
