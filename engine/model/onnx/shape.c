/* ONNX shape ops: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout), Shape, Size. */
#include <string.h>

#include "common.h"

/* A copy of host input i with a new shape (views of host values). */
static tx_status host_reshaped(tx_xnode *x, int i, int rank, const int64_t *shape) {
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    tx_hval o;
    if (!tx_hval_copy(&o, h))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    o.rank = rank;
    memset(o.shape, 0, sizeof o.shape);
    memcpy(o.shape, shape, sizeof(int64_t) * (size_t)rank);
    return tx_x_set_host(x, 0, &o);
}

/* Output 0 = input 0 with a new shape: a host copy or a device view. */
static tx_status emit_view(tx_xnode *x, int rank, const int64_t *shape) {
    if (rank > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d exceeds %d", rank,
                         TX_MAX_RANK);
    if (tx_x_is_host(x, 0))
        return host_reshaped(x, 0, rank, shape);
    tx_tensor t, y;
    tx_status st = tx_x_dev(x, 0, &t);
    if (!st)
        st = tx_tensor_reshape(x->ctx, t, rank, shape, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
    return st;
}

/* Resolves a Reshape target: 0 copies the input dim (unless allowzero), one -1
 * is inferred from numel. */
static tx_status reshape_target(tx_xnode *x, int in_rank, const int64_t *in_shape, int n,
                                const int64_t *spec, bool allowzero, int64_t *out) {
    if (n > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "target rank %d exceeds %d", n, TX_MAX_RANK);
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = spec[i];
        if (d == 0 && !allowzero) {
            if (i >= in_rank)
                return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                                 "0 at dim %d copies a dim the "
                                 "input lacks",
                                 i);
            d = in_shape[i];
        }
        if (d == -1) {
            if (infer >= 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "more than one -1 in the shape");
            infer = i;
        } else if (d < 0) {
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "negative dim %lld in the shape",
                             (long long)d);
        } else if (d > TX_DIM_MAX || (d && known > TX_DIM_MAX / d)) {
            return tx_x_fail(x, TX_STATUS_TOO_LARGE, "the shape has more than 2^40 elements");
        } else {
            known *= d;
        }
        out[i] = d;
    }
    int64_t total = tx_numel_of(in_rank, in_shape);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "cannot infer the -1 dim");
        out[infer] = total / known;
        known = total;
    }
    if (known != total) {
        char a[160], b[160];
        tx_shape_str(a, sizeof a, in_rank, in_shape);
        tx_shape_str(b, sizeof b, n, out);
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "cannot reshape %s to %s", a, b);
    }
    return TX_STATUS_OK;
}

static tx_status reshape_spec(tx_xnode *x, int64_t *spec, int *n) {
    if (x->opset < 5) {
        const int64_t *v;
        *n = tx_attr_ints(x->node, "shape", &v);
        if (*n < 0 || *n > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "needs a shape attribute of rank "
                             "<= %d",
                             TX_MAX_RANK);
        memcpy(spec, v, sizeof(int64_t) * (size_t)*n);
        return TX_STATUS_OK;
    }
    return tx_x_host_ints(x, 1, "the shape", spec, TX_MAX_RANK, n);
}

static tx_status exec_reshape(tx_xnode *x) {
    int64_t spec[TX_MAX_RANK], out[TX_MAX_RANK], in_shape[TX_MAX_RANK];
    int n, in_rank;
    tx_status st = reshape_spec(x, spec, &n);
    if (!st)
        st = tx_x_shape(x, 0, &in_rank, in_shape);
    if (!st)
        st = reshape_target(x, in_rank, in_shape, n, spec, tx_attr_int(x->node, "allowzero", 0),
                            out);
    return st ? st : emit_view(x, n, out);
}

static tx_status infer_reshape(tx_xnode *x) {
    int64_t spec[TX_MAX_RANK], out[TX_MAX_RANK], in_shape[TX_MAX_RANK];
    int n, in_rank;
    if (reshape_spec(x, spec, &n)) { /* the target is only known at run time: */
        int es, rs;                  /* its rank may be */
        int64_t ss[TX_MAX_RANK];
        if (x->opset < 5 || !tx_x_has(x, 1))
            return TX_STATUS_OK;
        tx_x_info(x, 1, &es, &rs, ss);
        if (rs == 1 && ss[0] >= 0 && ss[0] <= TX_MAX_RANK) {
            for (int i = 0; i < ss[0]; i++)
                out[i] = -1;
            tx_x_set_info(x, 0, tx_x_elem(x, 0), (int)ss[0], out);
        }
        return TX_STATUS_OK;
    }
    tx_status st = tx_x_shape(x, 0, &in_rank, in_shape);
    if (!st)
        st = reshape_target(x, in_rank, in_shape, n, spec, tx_attr_int(x->node, "allowzero", 0),
                            out);
    if (st == TX_STATUS_DEFER) { /* input shape unknown: rank still known */
        for (int i = 0; i < n; i++)
            out[i] = spec[i] > 0 ? spec[i] : -1;
        st = TX_STATUS_OK;
    }
    if (!st)
        tx_x_set_info(x, 0, tx_x_elem(x, 0), n, out);
    return st;
}

static tx_status flatten_shape(tx_xnode *x, int rank, const int64_t *shape, int64_t *out) {
    int64_t axis = tx_attr_int(x->node, "axis", 1);
    if (axis < -rank || axis > rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d]",
                         (long long)axis, rank, rank);
    int a = tx_norm_axis(axis, rank);
    out[0] = tx_numel_of(a, shape);
    out[1] = tx_numel_of(rank - a, shape + a);
    return TX_STATUS_OK;
}

static tx_status exec_flatten(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK], out[2];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = flatten_shape(x, rank, shape, out);
    return st ? st : emit_view(x, 2, out);
}

static tx_status infer_flatten(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK], out[2];
    if (!tx_x_shape(x, 0, &rank, shape) && !flatten_shape(x, rank, shape, out))
        tx_x_set_info(x, 0, tx_x_elem(x, 0), 2, out);
    return TX_STATUS_OK;
}

/* The axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 from
 * 13; given is false (n = 0) when neither is there. */
typedef struct {
    int64_t v[TX_MAX_RANK];
    int n;
    bool given;
} axes_arg;

static tx_status axes_of(tx_xnode *x, axes_arg *ax) {
    ax->n = 0;
    ax->given = x->opset < 13 || tx_x_has(x, 1);
    if (x->opset >= 13)
        return ax->given ? tx_x_host_ints(x, 1, "axes", ax->v, TX_MAX_RANK, &ax->n) : TX_STATUS_OK;
    const int64_t *v;
    int n = tx_attr_ints(x->node, "axes", &v);
    if (n < 0) {
        ax->given = false;
        return TX_STATUS_OK;
    }
    if (n > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "too many axes");
    memcpy(ax->v, v, sizeof(int64_t) * (size_t)n);
    ax->n = n;
    return TX_STATUS_OK;
}

/* Validates and normalizes axes against rank into mark[] (repeats refused). */
static tx_status mark_axes(tx_xnode *x, const int64_t *axes, int n, int rank, bool *mark) {
    memset(mark, 0, sizeof(bool) * TX_MAX_RANK);
    for (int i = 0; i < n; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                             (long long)axes[i], rank);
        int a = tx_norm_axis(axes[i], rank);
        if (mark[a])
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %d is repeated", a);
        mark[a] = true;
    }
    return TX_STATUS_OK;
}

static tx_status squeeze_shape(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                               int64_t *out) {
    axes_arg ax;
    bool drop[TX_MAX_RANK];
    tx_status st = axes_of(x, &ax);
    if (st || (st = mark_axes(x, ax.v, ax.n, rank, drop)))
        return st;
    for (int a = 0; a < rank; a++)
        if (drop[a] && shape[a] != 1)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "dim %d is %lld, not 1", a,
                             (long long)shape[a]);
    *orank = 0;
    for (int d = 0; d < rank; d++)
        if (!(ax.given ? drop[d] : shape[d] == 1))
            out[(*orank)++] = shape[d];
    return TX_STATUS_OK;
}

static tx_status unsqueeze_shape(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                                 int64_t *out) {
    axes_arg ax;
    tx_status st = axes_of(x, &ax);
    if (st)
        return st;
    int r = rank + ax.n;
    if (r > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d exceeds %d", r, TX_MAX_RANK);
    bool ins[TX_MAX_RANK];
    if ((st = mark_axes(x, ax.v, ax.n, r, ins)))
        return st;
    int j = 0;
    for (int d = 0; d < r; d++)
        out[d] = ins[d] ? 1 : shape[j++];
    *orank = r;
    return TX_STATUS_OK;
}

typedef tx_status (*shape_fn)(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                              int64_t *out);

static tx_status exec_shaped(tx_xnode *x, shape_fn f) {
    int rank, orank = 0;
    int64_t shape[TX_MAX_RANK], out[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = f(x, rank, shape, &orank, out);
    return st ? st : emit_view(x, orank, out);
}

static tx_status infer_shaped(tx_xnode *x, shape_fn f) {
    int rank, orank = 0;
    int64_t shape[TX_MAX_RANK], out[TX_MAX_RANK];
    if (!tx_x_shape(x, 0, &rank, shape) && !f(x, rank, shape, &orank, out))
        tx_x_set_info(x, 0, tx_x_elem(x, 0), orank, out);
    return TX_STATUS_OK;
}

static tx_status exec_squeeze(tx_xnode *x) {
    return exec_shaped(x, squeeze_shape);
}
static tx_status exec_unsqueeze(tx_xnode *x) {
    return exec_shaped(x, unsqueeze_shape);
}
/* With constant axes, dims unknown here may be squeezed too (the run checks
 * they are 1); without, every dim must be known. */
static tx_status infer_squeeze(tx_xnode *x) {
    int e, rank, orank = 0;
    int64_t shape[TX_MAX_RANK], out[TX_MAX_RANK];
    axes_arg ax;
    bool drop[TX_MAX_RANK];
    tx_x_info(x, 0, &e, &rank, shape);
    if (rank < 0 || axes_of(x, &ax))
        return TX_STATUS_OK;
    if (!ax.given)
        return infer_shaped(x, squeeze_shape);
    if (mark_axes(x, ax.v, ax.n, rank, drop))
        return TX_STATUS_OK;
    for (int d = 0; d < rank; d++) {
        if (drop[d] && shape[d] >= 0 && shape[d] != 1)
            return TX_STATUS_OK; /* the run's to report */
        if (!drop[d])
            out[orank++] = shape[d];
    }
    tx_x_set_info(x, 0, e, orank, out);
    return TX_STATUS_OK;
}
static tx_status infer_unsqueeze(tx_xnode *x) {
    return infer_shaped(x, unsqueeze_shape);
}

static tx_status exec_identity(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (tx_x_has(x, 2)) { /* Dropout's training_mode */
        const tx_hval *h;
        tx_status st = tx_x_host(x, 2, &h);
        if (st)
            return st;
        const tx_hval *r = NULL; /* training: the identity only when ratio is 0 */
        if (h->numel == 1 && tx_hval_get(h, 0) != 0 && tx_x_has(x, 1) && (st = tx_x_host(x, 1, &r)))
            return st;
        if (h->numel == 1 && tx_hval_get(h, 0) != 0 &&
            !(r && r->numel == 1 && tx_hval_get(r, 0) == 0))
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                             "training_mode with a nonzero ratio draws a random mask from the "
                             "seed, which texel cannot reproduce");
    }
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = emit_view(x, rank, shape);
    if (!st && x->n_out > 1 && x->out[1]) { /* Dropout's mask: all true at inference */
        tx_hval m;
        if (!st && !tx_hval_alloc(&m, TX_ONNX_BOOL, rank, shape))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        if (!st) {
            for (int64_t k = 0; k < m.numel; k++)
                m.i[k] = 1;
            st = tx_x_set_host(x, 1, &m);
        }
    }
    return st;
}

static tx_status set_host_ints(tx_xnode *x, int o, int rank, const int64_t *shape,
                               const int64_t *v) {
    tx_hval h;
    if (!tx_hval_alloc(&h, TX_ONNX_INT64, rank, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    memcpy(h.i, v, sizeof(int64_t) * (size_t)h.numel);
    return tx_x_set_host(x, o, &h);
}

static tx_status exec_shape(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t start = tx_attr_int(x->node, "start", 0), end = tx_attr_int(x->node, "end", rank);
    if (start < 0)
        start += rank;
    if (end < 0)
        end += rank;
    start = start < 0 ? 0 : (start > rank ? rank : start);
    end = end < 0 ? 0 : (end > rank ? rank : end);
    int64_t n = end > start ? end - start : 0;
    return set_host_ints(x, 0, 1, &n, shape + start);
}

static tx_status infer_shape(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    tx_x_info(x, 0, &elem, &rank, shape);
    int64_t n = rank; /* before start/end; good enough when they are absent */
    bool plain = !tx_attr_find(x->node, "start") && !tx_attr_find(x->node, "end");
    tx_x_set_info(x, 0, TX_ONNX_INT64, 1, (int64_t[]){plain && rank >= 0 ? n : -1});
    return TX_STATUS_OK;
}

static tx_status exec_size(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    return st ? st : set_host_ints(x, 0, 0, NULL, &(int64_t){tx_numel_of(rank, shape)});
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    {"Reshape", exec_reshape, infer_reshape, H, 1, 2, 2},
    {"Flatten", exec_flatten, infer_flatten, H, 1, 1, 0},
    {"Squeeze", exec_squeeze, infer_squeeze, H, 1, 2, 2},
    {"Unsqueeze", exec_unsqueeze, infer_unsqueeze, H, 1, 2, 2},
    {"Identity", exec_identity, tx_x_infer_same, H, 1, 1, 0},
    {"Dropout", exec_identity, tx_x_infer_same, H, 1, 3, 6},
    {"Shape", exec_shape, infer_shape, TX_OPF_SHAPE_ONLY, 1, 1, 0},
    {"Size", exec_size, NULL, TX_OPF_SHAPE_ONLY, 1, 1, 0},
};

#undef H

const tx_onnx_family tx_onnx_ops_shape = {k_ops, TX_COUNTOF(k_ops)};
