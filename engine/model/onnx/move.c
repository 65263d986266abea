/* ONNX data movement: Cast, Concat, Slice, Transpose, Split, Pad, Expand, Tile, Trilu ... */
#include <math.h>
#include <string.h>

#include "common.h"

/* Cast, Concat and Slice (as Gather) also compute on the host: shape subgraphs
 * fold through them. */
static tx_status exec_cast(tx_xnode *x) {
    bool like = strcmp(x->node->op_type, "CastLike") == 0;
    int64_t to = like ? tx_x_elem(x, 1) : tx_attr_int(x->node, "to", 0);
    if (to == TX_ONNX_BFLOAT16 ||
        (!tx_onnx_type_is_float((int)to) && !tx_onnx_type_is_int((int)to)))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "cast to %s is unsupported",
                         tx_onnx_type_name((int)to));
    int from = tx_x_elem(x, 0);
    if (tx_x_is_host(x, 0)) {
        const tx_hval *h;
        tx_hval o;
        tx_status st = tx_x_host_like(x, 0, (int)to, &h, &o);
        if (st)
            return st;
        for (int64_t k = 0; k < h->numel; k++) {
            double v = tx_hval_get(h, k);
            if (o.f)
                o.f[k] = (float)v;
            else if (to == TX_ONNX_BOOL)
                o.i[k] = v != 0;
            else
                o.i[k] = isfinite(v) ? tx_sat_i64(v) : 0;
        }
        return tx_x_set_host(x, 0, &o);
    }
    if (from == TX_ONNX_STRING || from == TX_ONNX_BFLOAT16)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "cast from %s is unsupported",
                         tx_onnx_type_name(from));
    tx_tensor in, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (st)
        return st;
    tx_dtype want = tx_onnx_type_is_int((int)to) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    if (to == TX_ONNX_BOOL || tx_x_dtype_of(x, in) != want) {
        st = tx_cast(x->ctx, in, want, to == TX_ONNX_BOOL, &y);
    } else { /* same storage (float16 <-> float, int widths): a view */
        int rank;
        int64_t shape[TX_MAX_RANK];
        st = tx_tensor_shape(x->ctx, in, &rank, shape, NULL);
        if (!st)
            st = tx_tensor_reshape(x->ctx, in, rank, shape, &y);
    }
    return st ? st : tx_x_set_dev(x, 0, y, (int)to);
}

static tx_status infer_cast(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    tx_x_info(x, 0, &elem, &rank, shape);
    int to = strcmp(x->node->op_type, "CastLike") == 0 ? tx_x_elem(x, 1)
                                                       : (int)tx_attr_int(x->node, "to", 0);
    tx_x_set_info(x, 0, to, rank, shape);
    return TX_STATUS_OK;
}

static tx_status concat_dev(tx_xnode *x) {
    int idx[64], n = 0;
    for (int i = 0; i < x->n_in; i++)
        if (x->in[i])
            idx[n++] = i;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tx_tmp_list l = {0};
    tx_tensor ts[64], y;
    tx_status st = tx_x_dev_same(x, idx, n, &l, ts);
    if (!st)
        st = tx_concat(x->ctx, ts, n, (int)axis, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, idx[0]));
}

static tx_status exec_concat(tx_xnode *x) {
    const tx_hval *h[64];
    int n = 0;
    if (x->n_in > 64)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 64 inputs");
    if (!tx_x_all_host(x))
        return concat_dev(x);
    for (int i = 0; i < x->n_in; i++) {
        if (!x->in[i])
            continue;
        tx_status st = tx_x_host(x, i, &h[n]);
        if (st)
            return st;
        n++;
    }
    if (!n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "no inputs");
    int r = h[0]->rank;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (r < 1 || axis < -r || axis >= r)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)axis, r);
    int a = tx_norm_axis(axis, r);
    int64_t oshape[TX_MAX_RANK];
    memcpy(oshape, h[0]->shape, sizeof oshape);
    oshape[a] = 0;
    for (int i = 0; i < n; i++) {
        bool ok = h[i]->rank == r && (h[i]->f != NULL) == (h[0]->f != NULL);
        for (int d = 0; d < r && ok; d++)
            ok = d == a || h[i]->shape[d] == h[0]->shape[d];
        if (!ok)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input %d does not match input 0", i);
        oshape[a] += h[i]->shape[a];
    }
    tx_hval o;
    if (!tx_hval_alloc(&o, h[0]->elem, r, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t outer = tx_numel_of(a, oshape), inner = tx_numel_of(r - a - 1, oshape + a + 1), k = 0;
    for (int64_t p = 0; p < outer; p++)
        for (int i = 0; i < n; i++) {
            int64_t len = h[i]->shape[a] * inner;
            for (int64_t s = 0; s < len; s++, k++) {
                if (o.f)
                    o.f[k] = h[i]->f[p * len + s];
                else
                    o.i[k] = h[i]->i[p * len + s];
            }
        }
    return tx_x_set_host(x, 0, &o);
}

/* Static output info of Slice: input 0's rank; a sliced dim's length where
 * the dim and constant starts, ends, axes and steps (attributes before
 * opset 10) give it; unknown otherwise (every dim where the axes are not
 * constants). Bad arguments are the run's to report. */
static tx_status infer_slice(tx_xnode *x) {
    int ex, rx, n = -1, ne = -1, na = -1, ns = -1;
    int64_t sx[TX_MAX_RANK], o[TX_MAX_RANK], starts[TX_MAX_RANK], ends[TX_MAX_RANK],
        axes[TX_MAX_RANK], steps[TX_MAX_RANK];
    tx_x_info(x, 0, &ex, &rx, sx);
    if (rx < 1)
        return TX_STATUS_OK;
    memcpy(o, sx, sizeof o);
    const tx_hval *h;
    bool axes_known, known;
    if (x->opset < 10) {
        const int64_t *v[3];
        n = tx_attr_ints(x->node, "starts", &v[0]);
        ne = tx_attr_ints(x->node, "ends", &v[1]);
        na = tx_attr_ints(x->node, "axes", &v[2]);
        if (n < 0 || n > TX_MAX_RANK || ne != n || na > TX_MAX_RANK)
            return TX_STATUS_OK;
        memcpy(starts, v[0], sizeof(int64_t) * (size_t)n);
        memcpy(ends, v[1], sizeof(int64_t) * (size_t)n);
        if (na > 0)
            memcpy(axes, v[2], sizeof(int64_t) * (size_t)na);
        axes_known = known = true;
    } else {
        axes_known = !tx_x_has(x, 3) || (tx_x_host(x, 3, &h) == TX_STATUS_OK &&
                                         !tx_x_host_ints(x, 3, "axes", axes, TX_MAX_RANK, &na));
        known = axes_known && tx_x_host(x, 1, &h) == TX_STATUS_OK &&
                tx_x_host(x, 2, &h) == TX_STATUS_OK &&
                !tx_x_host_ints(x, 1, "starts", starts, TX_MAX_RANK, &n) &&
                !tx_x_host_ints(x, 2, "ends", ends, TX_MAX_RANK, &ne) &&
                (!tx_x_has(x, 4) || (tx_x_host(x, 4, &h) == TX_STATUS_OK &&
                                     !tx_x_host_ints(x, 4, "steps", steps, TX_MAX_RANK, &ns)));
    }
    if (!axes_known) {
        for (int i = 0; i < rx; i++)
            o[i] = -1;
    } else if (!known) {
        for (int i = 0; i < (na >= 0 ? na : rx); i++) {
            int64_t ax = na >= 0 ? axes[i] : i;
            if (ax < -rx || ax >= rx)
                return TX_STATUS_OK;
            o[tx_norm_axis(ax, rx)] = -1;
        }
    } else {
        if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
            return TX_STATUS_OK;
        for (int i = 0; i < n; i++) {
            int64_t ax = na >= 0 ? axes[i] : i, sp = ns >= 0 ? steps[i] : 1, first;
            if (ax < -rx || ax >= rx || sp == 0)
                return TX_STATUS_OK;
            int a = tx_norm_axis(ax, rx);
            o[a] = sx[a] < 0 ? -1 : tx_slice_dim(sx[a], starts[i], ends[i], &sp, &first);
        }
    }
    tx_x_set_info(x, 0, ex, rx, o);
    return TX_STATUS_OK;
}

/* Static output info of Concat: the inputs' rank; each dim from any input
 * that knows it, the axis's as the sum where every input knows its own. */
static tx_status infer_concat(tx_xnode *x) {
    int rank = -1, elem = 0;
    int64_t o[TX_MAX_RANK], axis = tx_attr_int(x->node, "axis", 0), len = 0;
    for (int i = 0; i < x->n_in; i++) {
        int e, r;
        int64_t sh[TX_MAX_RANK];
        if (!tx_x_has(x, i))
            continue;
        tx_x_info(x, i, &e, &r, sh);
        elem = elem ? elem : e;
        if (r < 1) { /* its length along the axis is unknown */
            len = -1;
            continue;
        }
        if (rank < 0) {
            rank = r;
            if (axis < -r || axis >= r)
                return TX_STATUS_OK;
            axis = tx_norm_axis(axis, r);
            for (int d = 0; d < r; d++)
                o[d] = -1;
        }
        if (r != rank)
            return TX_STATUS_OK;
        for (int d = 0; d < r; d++)
            if (d != axis && o[d] < 0)
                o[d] = sh[d];
        len = len >= 0 && sh[axis] >= 0 ? len + sh[axis] : -1;
    }
    if (rank < 0)
        return TX_STATUS_OK;
    o[axis] = len;
    tx_x_set_info(x, 0, elem, rank, o);
    return TX_STATUS_OK;
}

static tx_status exec_slice(tx_xnode *x) {
    const tx_hval *d;
    tx_status st;
    int64_t starts[TX_MAX_RANK], ends[TX_MAX_RANK], axes[TX_MAX_RANK], steps[TX_MAX_RANK];
    int n, ne, na = -1, ns = -1;
    if (x->opset < 10) {
        const int64_t *v;
        n = tx_attr_ints(x->node, "starts", &v);
        if (n < 0 || n > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad starts");
        memcpy(starts, v, sizeof(int64_t) * (size_t)n);
        ne = tx_attr_ints(x->node, "ends", &v);
        if (ne != n)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad ends");
        memcpy(ends, v, sizeof(int64_t) * (size_t)n);
        na = tx_attr_ints(x->node, "axes", &v);
        if (na > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad axes");
        if (na >= 0)
            memcpy(axes, v, sizeof(int64_t) * (size_t)na);
    } else {
        st = tx_x_host_ints(x, 1, "starts", starts, TX_MAX_RANK, &n);
        if (!st)
            st = tx_x_host_ints(x, 2, "ends", ends, TX_MAX_RANK, &ne);
        if (!st && tx_x_has(x, 3))
            st = tx_x_host_ints(x, 3, "axes", axes, TX_MAX_RANK, &na);
        if (!st && tx_x_has(x, 4))
            st = tx_x_host_ints(x, 4, "steps", steps, TX_MAX_RANK, &ns);
        if (st)
            return st;
    }
    if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "starts/ends/axes/steps differ in length");
    if (!tx_x_is_host(x, 0)) {
        tx_slice_desc sd = {.n = n, .has_axes = na >= 0};
        for (int i = 0; i < n; i++) {
            if (ns >= 0 && steps[i] == 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "step 0");
            sd.starts[i] = starts[i];
            sd.ends[i] = ends[i];
            sd.axes[i] = na >= 0 ? axes[i] : i;
            sd.steps[i] = ns >= 0 ? steps[i] : 1;
        }
        tx_tensor in, y;
        st = tx_x_dev(x, 0, &in);
        if (!st)
            st = tx_slice(x->ctx, in, &sd, &y);
        return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
    }
    st = tx_x_host(x, 0, &d);
    if (st)
        return st;
    int r = d->rank;
    int64_t lo[TX_MAX_RANK], step[TX_MAX_RANK], oshape[TX_MAX_RANK];
    for (int i = 0; i < r; i++) {
        lo[i] = 0;
        step[i] = 1;
        oshape[i] = d->shape[i];
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = na >= 0 ? axes[i] : i;
        if (ax < -r || ax >= r)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)ax);
        int a = tx_norm_axis(ax, r);
        int64_t dim = d->shape[a], sp = ns >= 0 ? steps[i] : 1;
        if (sp == 0)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "step 0");
        oshape[a] = tx_slice_dim(dim, starts[i], ends[i], &sp, &lo[a]);
        step[a] = sp;
    }
    tx_hval o;
    if (!tx_hval_alloc(&o, d->elem, r, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < o.numel; k++) {
        int64_t rem = k, src = 0, mul = 1;
        for (int dd = r - 1; dd >= 0; dd--) {
            int64_t c = rem % oshape[dd];
            rem /= oshape[dd];
            src += (lo[dd] + c * step[dd]) * mul;
            mul *= d->shape[dd];
        }
        if (o.f)
            o.f[k] = d->f[src];
        else
            o.i[k] = d->i[src];
    }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_transpose(tx_xnode *x) {
    int64_t p[TX_MAX_RANK];
    int n, perm[TX_MAX_RANK];
    tx_status st = tx_x_attr_ints(x, "perm", p, TX_MAX_RANK, &n);
    for (int i = 0; !st && i < n; i++) {
        if (p[i] < 0 || p[i] >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "perm[%d] = %lld", i, (long long)p[i]);
        perm[i] = (int)p[i];
    }
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (!st && n >= 0 && n != rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "perm has %d entries for rank %d", n, rank);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_transpose(x->ctx, in, n >= 0 ? perm : NULL, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* Static output info: input 0's dims permuted (reversed without perm). */
static tx_status infer_transpose(tx_xnode *x) {
    int e, rank, n;
    int64_t shape[TX_MAX_RANK], p[TX_MAX_RANK], out[TX_MAX_RANK];
    tx_x_info(x, 0, &e, &rank, shape);
    if (rank < 0 || tx_x_attr_ints(x, "perm", p, TX_MAX_RANK, &n) || (n >= 0 && n != rank))
        return TX_STATUS_OK;
    bool seen[TX_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        int64_t from = n < 0 ? rank - 1 - i : p[i];
        if (from < 0 || from >= rank || seen[from])
            return TX_STATUS_OK; /* the run's to report */
        seen[from] = true;
        out[i] = shape[from];
    }
    tx_x_set_info(x, 0, e, rank, out);
    return TX_STATUS_OK;
}

static tx_status exec_split(tx_xnode *x) {
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    int64_t split[64];
    int ns;
    tx_status st = tx_x_ints_attr_or_input(x, "split", 13, 1, split, 64, &ns);
    if (st)
        return st;
    int n = x->n_out;
    if (n < 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "has no outputs");
    if (n > 64)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 64 outputs");
    if (ns >= 0 && ns != n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "split has %d entries for %d outputs", ns,
                         n);
    int64_t no = tx_attr_int(x->node, "num_outputs", n);
    if (no != n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "num_outputs %lld but %d outputs",
                         (long long)no, n);
    if (ns < 0 && !tx_attr_find(x->node, "num_outputs")) {
        /* before opset 18 equal parts must divide the dim exactly */
        int rank;
        int64_t shape[TX_MAX_RANK];
        st = tx_x_shape(x, 0, &rank, shape);
        if (st)
            return st;
        int a = tx_norm_axis(axis, rank);
        if (a < 0 || a >= rank || shape[a] % n)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "axis %lld of a rank-%d input does "
                             "not split into %d equal parts",
                             (long long)axis, rank, n);
    }
    tx_tensor in, outs[64];
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_split(x->ctx, in, (int)axis, ns >= 0 ? split : NULL, n, outs);
    for (int i = 0; i < n && !st; i++)
        st = tx_x_set_dev(x, i, outs[i], tx_x_elem(x, 0));
    return st;
}

static tx_status exec_pad(tx_xnode *x) {
    const char *mode = tx_attr_str(x->node, "mode", "constant");
    tx_pad_desc d = {0};
    if (strcmp(mode, "constant") == 0)
        d.mode = TX_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0)
        d.mode = TX_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0)
        d.mode = TX_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0)
        d.mode = TX_PAD_WRAP;
    else
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", mode);
    int rank;
    int64_t shape[TX_MAX_RANK], pads[2 * TX_MAX_RANK], axes[TX_MAX_RANK];
    int np, na = -1;
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (x->opset < 11) {
        st = tx_x_attr_ints(x, "pads", pads, 2 * TX_MAX_RANK, &np);
        d.value = tx_attr_float(x->node, "value", 0);
    } else {
        st = tx_x_host_ints(x, 1, "pads", pads, 2 * TX_MAX_RANK, &np);
        if (!st && tx_x_has(x, 2)) {
            const tx_hval *h;
            st = tx_x_host(x, 2, &h);
            if (!st && h->numel != 1)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                                 "constant_value must be a "
                                 "scalar");
            if (!st)
                d.value = (float)tx_hval_get(h, 0);
        }
        if (!st && tx_x_has(x, 3))
            st = tx_x_host_ints(x, 3, "axes", axes, TX_MAX_RANK, &na);
    }
    if (st)
        return st;
    if (na < 0)
        na = tx_all_axes(rank, axes);
    if (np != 2 * na)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "pads has %d entries for %d axes", np, na);
    for (int i = 0; i < na; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axes[i]);
        int a = tx_norm_axis(axes[i], rank);
        d.begin[a] = pads[i];
        d.end[a] = pads[na + i];
    }
    tx_tensor in, y;
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_pad(x->ctx, in, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_expand(tx_xnode *x) {
    int64_t shape[TX_MAX_RANK];
    int n;
    tx_status st = tx_x_host_ints(x, 1, "shape", shape, TX_MAX_RANK, &n);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_expand(x->ctx, in, n, shape, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_tile(tx_xnode *x) {
    int64_t rep[TX_MAX_RANK];
    int n, rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_host_ints(x, 1, "repeats", rep, TX_MAX_RANK, &n);
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (!st && n != rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "repeats has %d entries for rank %d", n,
                         rank);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_tile(x->ctx, in, rep, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_depth_space(tx_xnode *x) {
    bool d2s = strcmp(x->node->op_type, "DepthToSpace") == 0;
    int64_t b = tx_attr_int(x->node, "blocksize", 0);
    if (b < 1 || b > 4096)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "blocksize %lld", (long long)b);
    const char *m = tx_attr_str(x->node, "mode", "DCR");
    if (d2s && strcmp(m, "DCR") != 0 && strcmp(m, "CRD") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", m);
    tx_tensor in, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (!st)
        st = d2s ? tx_depth_to_space(x->ctx, in, (int)b,
                                     strcmp(m, "CRD") == 0 ? TX_DEPTH_CRD : TX_DEPTH_DCR, &y)
                 : tx_space_to_depth(x->ctx, in, (int)b, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* Trilu: Where(mask, x, 0) with the [N, M] triangle mask built on the host
 * (it depends only on the shape and k) and broadcast over the batch dims. */
static tx_status exec_trilu(tx_xnode *x) {
    bool upper = tx_attr_int(x->node, "upper", 1) != 0;
    int64_t k = 0;
    if (tx_x_has(x, 1)) {
        int64_t v[1];
        int n;
        tx_status st = tx_x_host_ints(x, 1, "k", v, 1, &n);
        if (st)
            return st;
        if (n != 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "k must be a scalar");
        k = v[0];
    }
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank < 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input rank %d (needs at least 2)", rank);
    tx_tensor t[3], y;
    st = tx_x_dev(x, 0, &t[1]);
    if (st)
        return st;
    tx_hval mask;
    if (!tx_hval_alloc(&mask, TX_ONNX_BOOL, 2, shape + rank - 2))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            mask.i[i * cols + j] = upper ? j - i >= k : j - i <= k;
    st = tx_hval_upload(x->ctx, x->node->name, &mask, &t[0]);
    tx_hval_free(&mask);
    if (st)
        return st;
    tx_dtype dt = tx_x_dtype_of(x, t[1]);
    float zf = 0;
    int32_t zi = 0;
    st = tx_tensor_create(
        x->ctx,
        &(tx_tensor_desc){.rank = 0, .dtype = dt, .data = dt == TX_DTYPE_INT32 ? (void *)&zi : &zf},
        &t[2]);
    if (!st) {
        st = tx_nary(x->ctx, TX_OP_WHERE, t, 3, &y);
        tx_tensor_destroy(x->ctx, t[2]);
    }
    tx_tensor_destroy(x->ctx, t[0]);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    {"Cast", exec_cast, infer_cast, H, 1, 1, 0},
    {"CastLike", exec_cast, infer_cast, H, 2, 2, 0},
    {"Concat", exec_concat, infer_concat, H, 1, -1, 0},
    {"Slice", exec_slice, infer_slice, H, 1, 5, 30},
    {"Transpose", exec_transpose, infer_transpose, 0, 1, 1, 0},
    {"Split", exec_split, NULL, 0, 1, 2, 2},
    {"Pad", exec_pad, NULL, 0, 1, 4, 14},
    {"Expand", exec_expand, NULL, 0, 2, 2, 2},
    {"Tile", exec_tile, NULL, 0, 2, 2, 2},
    {"DepthToSpace", exec_depth_space, NULL, 0, 1, 1, 0},
    {"Trilu", exec_trilu, tx_x_infer_same, 0, 1, 2, 2},
    {"SpaceToDepth", exec_depth_space, NULL, 0, 1, 1, 0},
};

#undef H

const tx_onnx_family tx_onnx_ops_move = {k_ops, TX_COUNTOF(k_ops)};
