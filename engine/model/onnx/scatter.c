/* ONNX scatters: ScatterND, ScatterElements, Scatter (ScatterElements before
 * opset 11), MaxUnpool; and ReverseSequence, a Gather by a host-built map.
 *
 * Composed from engine ops, the data and updates staying on the device: the
 * indices are read back (one tx_tensor_read when they are a device value,
 * counted in tx_session_stats.readbacks; usually they are constants) and the
 * host inverts them into "layers": for every output element, the flat index
 * of the update that lands there (layer j holds each element's j-th writer, in
 * update order), and a 0/1 mask of where one does. A layer is then
 *   g = Gather(updates flattened, layer index)          (one draw)
 *   y = Where(mask, combine(y, g), y)                   (one or two draws)
 * with combine = g (reduction none: only the last writer is kept, one layer),
 * y + g, y * g, Max or Min. The number of layers is the largest number of
 * updates one element receives (1 without duplicates); more than
 * TX_SCATTER_MAX_LAYERS is refused. Flat indices are exact to 2^24. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define TX_SCATTER_MAX_LAYERS 64

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

/* The inverse of an index map: target[u] is the flat output element update u
 * goes to (u in update order). */
typedef struct scatter_plan {
    int64_t n_out, n_upd;
    int64_t *target;
} scatter_plan;

static tx_status oom(tx_xnode *x) {
    return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
}

static tx_status parse_reduction(tx_xnode *x, int *red) {
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    const char *r = tx_attr_str(x->node, "reduction", "none");
    for (int i = 0; i < 5; i++)
        if (strcmp(r, names[i]) == 0) {
            *red = i;
            return TX_STATUS_OK;
        }
    return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                     "reduction \"%s\" (expected none, add, mul, max or min)", r);
}

/* One layer's draws: y' = Where(mask, combine(y, Gather(upd, ix)), y). */
static tx_status apply_layer(tx_xnode *x, int red, tx_tensor y, tx_tensor upd, tx_tensor ix,
                             tx_tensor mask, tx_tmp_list *l, tx_tensor *out) {
    static const tx_op comb[] = {TX_OP_NONE, TX_OP_ADD, TX_OP_MUL, TX_OP_MAX, TX_OP_MIN};
    tx_tensor g, c;
    tx_status st = tx_gather(x->ctx, upd, ix, 0, &g);
    if (st)
        return st;
    l->t[l->n++] = g;
    c = g;
    if (red != RED_NONE) {
        if ((st = tx_binary(x->ctx, comb[red], y, g, &c)))
            return st;
        l->t[l->n++] = c;
    }
    tx_tensor w[3] = {mask, c, y};
    return tx_nary(x->ctx, TX_OP_WHERE, w, 3, out);
}

/* y = scatter of updates (device, any shape: flattened here) into data (a
 * device tensor of rank/shape), by plan p. data NULL: zeros. */
static tx_status scatter_run(tx_xnode *x, const scatter_plan *p, int red, const tx_tensor *data,
                             tx_tensor updates, int rank, const int64_t *shape, int elem) {
    if (p->n_out > (1 << 24) || p->n_upd > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "%lld outputs, %lld updates (flat indices are exact to 2^24)",
                         (long long)p->n_out, (long long)p->n_upd);
    int64_t no = p->n_out ? p->n_out : 1;
    int64_t *cnt = calloc((size_t)no * 3, sizeof(int64_t));
    if (!cnt)
        return oom(x);
    int64_t layers = p->n_upd ? 1 : 0, *ix = cnt + no, *mk = cnt + 2 * no;
    for (int64_t u = 0; u < p->n_upd && red != RED_NONE; u++)
        if (++cnt[p->target[u]] > layers)
            layers = cnt[p->target[u]];
    if (layers > TX_SCATTER_MAX_LAYERS) {
        free(cnt);
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "an element receives %lld updates (at most %d are supported)",
                         (long long)layers, TX_SCATTER_MAX_LAYERS);
    }
    tx_tmp_list l = {0};
    tx_tensor y = {0}, upd, zeros;
    tx_status st = tx_tensor_reshape(x->ctx, updates, 1, &p->n_upd, &upd);
    if (!st)
        l.t[l.n++] = upd;
    if (!st && !data) {
        tx_hval zh;
        if (!tx_hval_alloc(&zh, elem, rank, shape))
            st = oom(x);
        else if (!(st = tx_hval_upload(x->ctx, x->node->name, &zh, &zeros)))
            l.t[l.n++] = zeros;
        tx_hval_free(&zh);
        data = &zeros;
    }
    if (!st)
        st = tx_tensor_reshape(x->ctx, *data, rank, shape, &y); /* a handle of our own */
    for (int64_t j = 0; j < layers && !st; j++) {
        memset(cnt, 0, sizeof(int64_t) * (size_t)no * 3);
        for (int64_t u = 0; u < p->n_upd; u++) {
            int64_t t = p->target[u];
            if (red == RED_NONE || cnt[t]++ == j) {
                ix[t] = u;
                mk[t] = 1;
            }
        }
        tx_tmp_list lj = {0};
        tx_tensor ti, tm, ny;
        st = tx_x_upload_ints(x, rank, shape, ix, &lj, &ti);
        if (!st)
            st = tx_x_upload_ints(x, rank, shape, mk, &lj, &tm);
        if (!st && !(st = apply_layer(x, red, y, upd, ti, tm, &lj, &ny))) {
            lj.t[lj.n++] = y;
            y = ny;
        }
        tx_tmps_free(x, &lj);
    }
    free(cnt);
    tx_tmps_free(x, &l);
    if (st) {
        if (y.id)
            tx_tensor_destroy(x->ctx, y);
        return st;
    }
    return tx_x_set_dev(x, 0, y, elem);
}

/* A scatter's reduction, the shapes of data (input 0) and updates (input 2)
 * and the indices (input 1) on the host. */
static tx_status scatter_inputs(tx_xnode *x, int *red, int *rd, int64_t *sd, int *ru, int64_t *su,
                                const tx_hval **ih) {
    *red = RED_NONE;
    tx_status st = x->opset >= 16 ? parse_reduction(x, red) : TX_STATUS_OK;
    if (st || (st = tx_x_shape(x, 0, rd, sd)) || (st = tx_x_shape(x, 2, ru, su)))
        return st;
    return tx_x_host(x, 1, ih);
}

/* Scatter into data (input 0) the updates (input 2) by p; frees p's targets. */
static tx_status scatter_data(tx_xnode *x, scatter_plan *p, int red, int rank,
                              const int64_t *shape) {
    tx_tensor data, upd;
    tx_status st = tx_x_dev(x, 0, &data);
    if (!st)
        st = tx_x_dev(x, 2, &upd);
    if (!st)
        st = scatter_run(x, p, red, &data, upd, rank, shape, tx_x_elem(x, 0));
    free(p->target);
    return st;
}

/* ---- ScatterElements, Scatter ---- */

static tx_status exec_scatter_elements(tx_xnode *x) {
    int red, rd, ru;
    int64_t sd[TX_MAX_RANK], su[TX_MAX_RANK];
    const tx_hval *ih;
    tx_status st = scatter_inputs(x, &red, &rd, sd, &ru, su, &ih);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (rd < 1 || axis < -rd || axis >= rd || ih->rank != rd || ru != rd)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "data rank %d, indices rank %d, updates rank %d, axis %lld", rd, ih->rank,
                         ru, (long long)axis);
    int a = tx_norm_axis(axis, rd);
    for (int d = 0; d < rd; d++)
        if (ih->shape[d] != su[d] || (d != a && su[d] > sd[d]))
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "indices and updates must have one shape within the data's "
                             "(dim %d: %lld, %lld, data %lld)",
                             d, (long long)ih->shape[d], (long long)su[d], (long long)sd[d]);
    scatter_plan p = {tx_numel_of(rd, sd), ih->numel,
                      malloc(sizeof(int64_t) * (size_t)(ih->numel + 1))};
    if (!p.target)
        return oom(x);
    for (int64_t u = 0; u < ih->numel; u++) {
        int64_t rem = u, off = 0, stride = 1;
        for (int d = rd - 1; d >= 0; d--) {
            int64_t c = rem % su[d];
            rem /= su[d];
            if (d == a) {
                c = (int64_t)tx_hval_get(ih, u);
                if (c < 0)
                    c += sd[d];
                if (c < 0 || c >= sd[d]) {
                    free(p.target);
                    return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "index %lld is outside 0..%lld",
                                     (long long)tx_hval_get(ih, u), (long long)sd[d] - 1);
                }
            }
            off += c * stride;
            stride *= sd[d];
        }
        p.target[u] = off;
    }
    return scatter_data(x, &p, red, rd, sd);
}

/* ---- ScatterND ---- */

static tx_status exec_scatter_nd(tx_xnode *x) {
    int red, rd, ru;
    int64_t sd[TX_MAX_RANK], su[TX_MAX_RANK];
    const tx_hval *ih;
    tx_status st = scatter_inputs(x, &red, &rd, sd, &ru, su, &ih);
    if (st)
        return st;
    int q = ih->rank, k = q >= 1 ? (int)ih->shape[q - 1] : 0;
    bool ok = q >= 1 && k >= 1 && k <= rd && ru == q - 1 + rd - k;
    for (int d = 0; ok && d < q - 1; d++)
        ok = su[d] == ih->shape[d];
    for (int d = k; ok && d < rd; d++)
        ok = su[q - 1 + d - k] == sd[d];
    if (!ok)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "updates must be indices.shape[:-1] + data.shape[k:] (data rank %d, "
                         "indices rank %d, k %d, updates rank %d)",
                         rd, q, k, ru);
    int64_t tuples = tx_numel_of(q - 1, ih->shape), inner = tx_numel_of(rd - k, sd + k);
    scatter_plan p = {tx_numel_of(rd, sd), tuples * inner,
                      malloc(sizeof(int64_t) * (size_t)(tuples * inner + 1))};
    if (!p.target)
        return oom(x);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t base = 0;
        for (int j = 0; j < k; j++) {
            int64_t c = (int64_t)tx_hval_get(ih, t * k + j);
            if (c < 0)
                c += sd[j];
            if (c < 0 || c >= sd[j]) {
                free(p.target);
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "index %lld is outside 0..%lld",
                                 (long long)tx_hval_get(ih, t * k + j), (long long)sd[j] - 1);
            }
            base = base * sd[j] + c;
        }
        for (int64_t e = 0; e < inner; e++)
            p.target[t * inner + e] = base * inner + e;
    }
    return scatter_data(x, &p, red, rd, sd);
}

/* ---- MaxUnpool ---- */

/* MaxUnpool(X, I[, output_shape]): zeros of the output shape with X[k] at the
 * flat position I[k] (MaxPool's Indices) of the default output shape,
 * (in - 1) * stride - pad_begin - pad_end + kernel per spatial dim. A given
 * output_shape (at least as large) keeps each element's coordinates: the
 * extra rows and columns are zeros, as in the ONNX reference. */
static tx_status exec_max_unpool(tx_xnode *x) {
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rx, sx);
    if (st)
        return st;
    const int64_t *ks, *strides, *pads;
    int nk = tx_attr_ints(x->node, "kernel_shape", &ks);
    int ns = tx_attr_ints(x->node, "strides", &strides);
    int np = tx_attr_ints(x->node, "pads", &pads);
    int sp = rx - 2;
    if (rx < 3 || nk != sp || (ns >= 0 && ns != sp) || (np >= 0 && np != 2 * sp))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "input rank %d needs kernel_shape (and strides, pads) for %d spatial "
                         "dims",
                         rx, sp);
    for (int d = 0; d < sp; d++) {
        int64_t k = ks[d], s = ns >= 0 ? strides[d] : 1;
        int64_t pb = np >= 0 ? pads[d] : 0, pe = np >= 0 ? pads[sp + d] : 0;
        if (k < 1 || k > INT32_MAX || s < 1 || s > INT32_MAX || pb < 0 || pb > INT32_MAX ||
            pe < 0 || pe > INT32_MAX)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "kernel_shape, strides or pads of dim %d out of range", d);
    }
    int64_t os[TX_MAX_RANK], is[TX_MAX_RANK];
    is[0] = sx[0];
    is[1] = sx[1];
    for (int d = 0; d < sp; d++)
        is[2 + d] = (sx[2 + d] - 1) * (ns >= 0 ? strides[d] : 1) -
                    (np >= 0 ? pads[d] + pads[sp + d] : 0) + ks[d];
    memcpy(os, is, sizeof os);
    if (tx_x_has(x, 2)) {
        int n;
        if ((st = tx_x_host_ints(x, 2, "output_shape", os, TX_MAX_RANK, &n)))
            return st;
        if (n != rx)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "output_shape has %d dims, X %d", n, rx);
    }
    if (!tx_dims_in_range(rx, is, (int64_t)1 << 24, false) ||
        !tx_dims_in_range(rx, os, (int64_t)1 << 24, false))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "an output of over 2^24 elements (flat indices are exact to 2^24)");
    for (int d = 0; d < rx; d++)
        if (is[d] < 1 || os[d] < is[d])
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "output dim %d is %lld, under the default %lld", d, (long long)os[d],
                             (long long)is[d]);
    const tx_hval *ih;
    if ((st = tx_x_host(x, 1, &ih)))
        return st;
    if (ih->numel != tx_numel_of(rx, sx))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "I must have X's shape");
    scatter_plan p = {tx_numel_of(rx, os), ih->numel,
                      malloc(sizeof(int64_t) * (size_t)(ih->numel + 1))};
    if (!p.target)
        return oom(x);
    for (int64_t u = 0; u < ih->numel; u++) {
        int64_t t = (int64_t)tx_hval_get(ih, u), n_in = tx_numel_of(rx, is);
        if (t < 0 || t >= n_in) {
            free(p.target);
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "index %lld is outside 0..%lld",
                             (long long)t, (long long)n_in - 1);
        }
        int64_t off = 0, stride = 1;
        for (int d = rx - 1; d >= 0; d--) {
            off += (t % is[d]) * stride;
            t /= is[d];
            stride *= os[d];
        }
        p.target[u] = off;
    }
    tx_tensor in;
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = scatter_run(x, &p, RED_NONE, NULL, in, rx, os, tx_x_elem(x, 0));
    free(p.target);
    return st;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"ScatterElements", exec_scatter_elements, tx_x_infer_same, 0, 3, 3, 2},
    {"Scatter", exec_scatter_elements, tx_x_infer_same, 0, 3, 3, 2},
    {"ScatterND", exec_scatter_nd, tx_x_infer_same, 0, 3, 3, 2},
    {"MaxUnpool", exec_max_unpool, NULL, 0, 2, 3, 6},
};

const tx_onnx_family tx_onnx_ops_scatter = {k_ops, TX_COUNTOF(k_ops)};
