/* ONNX selection ops whose output shape (or every output element) depends on
 * the data: NonZero, Compress, Unique, NonMaxSuppression, TopK.
 *
 * Compress reads back only its condition and gathers on the device. The
 * others run on the host. Their inputs are read back once with tx_x_host (one
 * tx_tensor_read per device input, counted in tx_session_stats.readbacks and
 * readback_bytes) and their outputs are host values that the next device op
 * uploads. Why the host: the output's size is only known after looking at
 * every element (a count read-back cannot be avoided), and what follows the
 * count (a compaction, a sort, greedy suppression) is sequential and small
 * next to the network that feeds it; a device version would read the count
 * back anyway and run one draw per selection step. Each op's inputs are
 * detection heads' score and box lists, index masks or small tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static tx_status oom(tx_xnode *x) {
    return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
}

static tx_status alloc_out(tx_xnode *x, tx_hval *o, int elem, int rank, const int64_t *shape) {
    return tx_hval_alloc(o, elem, rank, shape) ? TX_STATUS_OK : oom(x);
}

/* Element k of v, as stored (float or int), written into o at j. */
static void copy_elem(tx_hval *o, int64_t j, const tx_hval *v, int64_t k) {
    if (o->f)
        o->f[j] = v->f ? v->f[k] : (float)v->i[k];
    else
        o->i[j] = v->i ? v->i[k] : (int64_t)v->f[k];
}

/* ---- NonZero ---- */

/* NonZero(X) -> int64 [rank, count]: the coordinates of the non-zero
 * elements in row-major order. */
static tx_status exec_non_zero(tx_xnode *x) {
    const tx_hval *v;
    tx_status st = tx_x_host(x, 0, &v);
    if (st)
        return st;
    int64_t cnt = 0;
    for (int64_t k = 0; k < v->numel; k++)
        cnt += tx_hval_get(v, k) != 0;
    int r = v->rank ? v->rank : 1;
    int64_t os[2] = {r, cnt};
    tx_hval o;
    if ((st = alloc_out(x, &o, TX_ONNX_INT64, 2, os)))
        return st;
    for (int64_t k = 0, j = 0; k < v->numel; k++) {
        if (tx_hval_get(v, k) == 0)
            continue;
        int64_t rem = k;
        for (int d = v->rank - 1; d >= 0; d--) {
            o.i[d * cnt + j] = rem % v->shape[d];
            rem /= v->shape[d];
        }
        j++;
    }
    return tx_x_set_host(x, 0, &o);
}

/* A value of shape vr/vs viewed for its optional "axis" attribute; without
 * it the value is flattened (axis 0 of a 1-D view). */
static tx_status axis_view(tx_xnode *x, int vr, const int64_t *vs, int *rank, int64_t *shape,
                           int *a) {
    const tx_onnx_attr *aa = tx_attr_find(x->node, "axis");
    *rank = vr;
    *a = 0;
    memcpy(shape, vs, sizeof(int64_t) * TX_MAX_RANK);
    if (!aa) {
        *rank = 1;
        shape[0] = tx_numel_of(vr, vs);
        return TX_STATUS_OK;
    }
    if (vr < 1 || aa->i < -vr || aa->i >= vr)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)aa->i, vr);
    *a = tx_norm_axis(aa->i, vr);
    return TX_STATUS_OK;
}

/* ---- Compress ---- */

/* Compress(input, condition[, axis]): the slices along axis (of the flattened
 * input without axis) whose condition entry is true. condition may be shorter
 * than the axis: the rest is dropped. Only the condition is read back (a 1-D
 * mask); a device input stays there: one Gather along the axis by the kept
 * positions. */
static tx_status exec_compress(tx_xnode *x) {
    const tx_hval *c;
    int vr, rank, a;
    int64_t vs[TX_MAX_RANK], shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &vr, vs);
    if (st || (st = tx_x_host(x, 1, &c)) || (st = axis_view(x, vr, vs, &rank, shape, &a)))
        return st;
    if (c->rank != 1 || c->numel > shape[a])
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "condition must be 1-D with at most %lld entries (the axis), got %lld",
                         (long long)shape[a], (long long)c->numel);
    int64_t *pos = malloc(sizeof(int64_t) * (size_t)(c->numel + 1)), kept = 0;
    if (!pos)
        return oom(x);
    for (int64_t k = 0; k < c->numel; k++)
        if (tx_hval_get(c, k) != 0)
            pos[kept++] = k;
    int64_t os[TX_MAX_RANK];
    memcpy(os, shape, sizeof os);
    os[a] = kept;
    int64_t outer = tx_numel_of(a, shape), inner = tx_numel_of(rank - a - 1, shape + a + 1);
    if (tx_x_is_host(x, 0) || kept == 0) { /* folding, or an empty result */
        const tx_hval *v = NULL;
        tx_hval o;
        if (!(st = kept ? tx_x_host(x, 0, &v) : TX_STATUS_OK) &&
            !(st = alloc_out(x, &o, tx_x_elem(x, 0), rank, os))) {
            for (int64_t p = 0, j = 0; p < outer && kept; p++)
                for (int64_t q = 0; q < kept; q++)
                    for (int64_t e = 0; e < inner; e++)
                        copy_elem(&o, j++, v, (p * shape[a] + pos[q]) * inner + e);
            st = tx_x_set_host(x, 0, &o);
        }
        free(pos);
        return st;
    }
    tx_tmp_list l = {0};
    tx_tensor in, view, ix, y = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, rank, shape, &view)))
        l.t[l.n++] = view;
    if (!st)
        st = tx_x_upload_ints(x, 1, &kept, pos, &l, &ix);
    free(pos);
    if (!st)
        st = tx_gather(x->ctx, view, ix, a, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* ---- Unique ---- */

/* The slices of Unique: slice k of v along the axis is the `outer` runs of
 * `inner` elements at (p * n + k) * inner. */
typedef struct slices {
    const tx_hval *v;
    int64_t outer, n, inner;
} slices;

static int cmp_slices(const slices *s, int64_t a, int64_t b) {
    for (int64_t p = 0; p < s->outer; p++)
        for (int64_t e = 0; e < s->inner; e++) {
            double va = tx_hval_get(s->v, (p * s->n + a) * s->inner + e);
            double vb = tx_hval_get(s->v, (p * s->n + b) * s->inner + e);
            if (va != vb)
                return va < vb ? -1 : 1;
        }
    return 0;
}

/* Stable insertion-merge sort of idx[0..n) by slice (a merge sort keeps it
 * O(n log n) with the comparison above). */
static void sort_slices(const slices *s, int64_t *idx, int64_t *tmp, int64_t n) {
    if (n < 2)
        return;
    int64_t h = n / 2;
    sort_slices(s, idx, tmp, h);
    sort_slices(s, idx + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_slices(s, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
}

/* Unique(X) -> Y, indices, inverse_indices, counts (ONNX 11). Without axis
 * X is flattened. sorted=1 orders Y ascending (slices lexicographically),
 * sorted=0 by first occurrence. */
static tx_status exec_unique(tx_xnode *x) {
    const tx_hval *v;
    tx_status st = tx_x_host(x, 0, &v);
    if (st)
        return st;
    bool sorted = tx_attr_int(x->node, "sorted", 1) != 0;
    int rank, a;
    int64_t shape[TX_MAX_RANK];
    if ((st = axis_view(x, v->rank, v->shape, &rank, shape, &a)))
        return st;
    slices s = {v, tx_numel_of(a, shape), shape[a], tx_numel_of(rank - a - 1, shape + a + 1)};
    int64_t n = s.n, nn = n ? n : 1;
    int64_t *order = malloc(sizeof(int64_t) * (size_t)nn * 4);
    if (!order)
        return oom(x);
    int64_t *tmp = order + nn, *first = order + 2 * nn, *inv = order + 3 * nn;
    for (int64_t k = 0; k < n; k++)
        order[k] = k;
    sort_slices(&s, order, tmp, n);
    /* groups of equal slices in sorted order: first occurrence (the stable
     * sort puts it first), count, and each slice's group */
    int64_t g = 0;
    for (int64_t k = 0; k < n; k++) {
        if (k == 0 || cmp_slices(&s, order[k - 1], order[k]) != 0)
            first[g++] = order[k];
        inv[order[k]] = g - 1;
    }
    /* group ranks in the output order: sorted, or by first occurrence */
    int64_t *rankof = tmp;
    for (int64_t k = 0; k < g; k++)
        rankof[k] = k;
    if (!sorted) {
        /* groups in sorted order are ranked by their first index */
        int64_t r = 0;
        for (int64_t k = 0; k < n; k++)
            if (first[inv[k]] == k)
                rankof[inv[k]] = r++;
    }
    int64_t ys[TX_MAX_RANK], gs = g;
    memcpy(ys, shape, sizeof ys);
    ys[a] = g;
    tx_hval o[4] = {0};
    st = alloc_out(x, &o[0], v->elem, rank, ys);
    for (int i = 1; i < 4 && !st; i++)
        st = alloc_out(x, &o[i], TX_ONNX_INT64, 1, i == 2 ? &n : &gs);
    if (!st) {
        for (int64_t k = 0; k < g; k++) {
            int64_t r = rankof[k];
            for (int64_t p = 0; p < s.outer; p++)
                for (int64_t e = 0; e < s.inner; e++)
                    copy_elem(&o[0], (p * g + r) * s.inner + e, v,
                              (p * n + first[k]) * s.inner + e);
            o[1].i[r] = first[k];
        }
        for (int64_t k = 0; k < n; k++) {
            o[2].i[k] = rankof[inv[k]];
            o[3].i[rankof[inv[k]]]++;
        }
    }
    free(order);
    for (int i = 0; i < 4 && !st; i++)
        st = tx_x_set_host(x, i, &o[i]);
    for (int i = 0; i < 4; i++)
        tx_hval_free(&o[i]);
    return st;
}

/* ---- NonMaxSuppression ---- */

typedef struct nms_box {
    float y1, x1, y2, x2;
} nms_box;

static nms_box nms_corners(const float *b, bool center) {
    if (center) /* [x_center, y_center, width, height] */
        return (nms_box){b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
    /* [y1, x1, y2, x2], corners in either order */
    return (nms_box){fminf(b[0], b[2]), fminf(b[1], b[3]), fmaxf(b[0], b[2]), fmaxf(b[1], b[3])};
}

static float nms_iou(nms_box a, nms_box b) {
    float ia = (a.y2 - a.y1) * (a.x2 - a.x1), ib = (b.y2 - b.y1) * (b.x2 - b.x1);
    if (ia <= 0 || ib <= 0)
        return 0;
    float h = fminf(a.y2, b.y2) - fmaxf(a.y1, b.y1), w = fminf(a.x2, b.x2) - fmaxf(a.x1, b.x1);
    if (h <= 0 || w <= 0)
        return 0;
    float inter = h * w;
    return inter / (ia + ib - inter);
}

static const float *g_nms_scores; /* qsort's context (the host path runs on one thread) */

static int cmp_score_desc(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    float sa = g_nms_scores[a], sb = g_nms_scores[b];
    if (sa != sb)
        return sa > sb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* An optional scalar input (absent: def). */
static tx_status opt_scalar(tx_xnode *x, int i, double def, double *out) {
    *out = def;
    if (!tx_x_has(x, i))
        return TX_STATUS_OK;
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    if (h->numel > 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d must hold one value, got %lld", i,
                         (long long)h->numel);
    if (h->numel == 1)
        *out = tx_hval_get(h, 0);
    return TX_STATUS_OK;
}

/* NonMaxSuppression(boxes [B, N, 4], scores [B, C, N][, max_output_boxes_per_class,
 * iou_threshold, score_threshold]) -> int64 [selected, 3] rows (batch, class,
 * box): per batch and class, boxes by descending score (ties by index),
 * dropping those at or under score_threshold, each kept unless its IoU with an
 * already kept box exceeds iou_threshold, at most max_output per class. */
static tx_status exec_nms(tx_xnode *x) {
    const tx_hval *bx, *sc;
    tx_status st = tx_x_host2(x, 0, &bx, 1, &sc);
    if (st)
        return st;
    if (bx->rank != 3 || bx->shape[2] != 4 || sc->rank != 3 || sc->shape[0] != bx->shape[0] ||
        sc->shape[2] != bx->shape[1] || !bx->f || !sc->f)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "boxes must be float [B, N, 4] and scores float [B, C, N]");
    double maxo, iou_t, score_t;
    if ((st = opt_scalar(x, 2, 0, &maxo)) || (st = opt_scalar(x, 3, 0, &iou_t)) ||
        (st = opt_scalar(x, 4, -INFINITY, &score_t)))
        return st;
    if (iou_t < 0 || iou_t > 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "iou_threshold %g is outside [0, 1]",
                         iou_t);
    bool center = tx_attr_int(x->node, "center_point_box", 0) != 0;
    int64_t nb = bx->shape[0], nc = sc->shape[1], n = bx->shape[1];
    int64_t per = maxo < 0 ? 0 : (int64_t)fmin(maxo, (double)n);
    size_t cap = (size_t)(nb * nc * per) + 1;
    int64_t *sel = malloc(sizeof(int64_t) * (cap * 3 + 2 * (size_t)(n + 1)));
    nms_box *boxes = malloc(sizeof(nms_box) * (size_t)(n + 1));
    if (!sel || !boxes) {
        free(sel);
        free(boxes);
        return oom(x);
    }
    int64_t *cand = sel + cap * 3, *kept = cand + n + 1, m = 0;
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t k = 0; k < n; k++)
            boxes[k] = nms_corners(bx->f + (b * n + k) * 4, center);
        for (int64_t c = 0; c < nc; c++) {
            const float *s = sc->f + (b * nc + c) * n;
            int64_t nk = 0, nsel = 0;
            for (int64_t k = 0; k < n; k++)
                if (s[k] > score_t)
                    cand[nk++] = k;
            g_nms_scores = s;
            qsort(cand, (size_t)nk, sizeof *cand, cmp_score_desc);
            for (int64_t k = 0; k < nk && nsel < per; k++) {
                bool keep = true;
                for (int64_t j = 0; j < nsel && keep; j++)
                    keep = nms_iou(boxes[cand[k]], boxes[kept[j]]) <= iou_t;
                if (!keep)
                    continue;
                kept[nsel++] = cand[k];
                sel[m * 3] = b;
                sel[m * 3 + 1] = c;
                sel[m * 3 + 2] = cand[k];
                m++;
            }
        }
    }
    free(boxes);
    int64_t os[2] = {m, 3};
    tx_hval o;
    if (!(st = alloc_out(x, &o, TX_ONNX_INT64, 2, os)))
        memcpy(o.i, sel, sizeof(int64_t) * (size_t)(m * 3));
    free(sel);
    return st ? st : tx_x_set_host(x, 0, &o);
}

/* ---- TopK ---- */

typedef struct topk_ctx {
    const tx_hval *v;
    int64_t base, stride;
    bool largest;
} topk_ctx;

static topk_ctx g_topk; /* qsort's context */

/* Larger (or smaller) first; equal values by index. NaN counts as largest. */
static int cmp_topk(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    double va = tx_hval_get(g_topk.v, g_topk.base + a * g_topk.stride);
    double vb = tx_hval_get(g_topk.v, g_topk.base + b * g_topk.stride);
    bool na = va != va, nb = vb != vb;
    if (na != nb)
        return (na == g_topk.largest) ? -1 : 1;
    if (!na && va != vb)
        return ((va > vb) == g_topk.largest) ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* TopK(X, K) -> Values, Indices along axis (K an attribute before opset 10).
 * Ties keep the lower index first; sorted=0 returns the same order. */
static tx_status exec_top_k(tx_xnode *x) {
    const tx_hval *v;
    tx_status st = tx_x_host(x, 0, &v);
    if (st)
        return st;
    int64_t k = tx_attr_int(x->node, "k", -1);
    if (x->opset >= 10) {
        const tx_hval *kh;
        if ((st = tx_x_host(x, 1, &kh)))
            return st;
        if (kh->numel != 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "K must hold one value");
        k = (int64_t)tx_hval_get(kh, 0);
    }
    int64_t axis = tx_attr_int(x->node, "axis", -1);
    int r = v->rank;
    if (r < 1 || axis < -r || axis >= r)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)axis, r);
    int a = tx_norm_axis(axis, r);
    int64_t n = v->shape[a];
    if (k < 0 || k > n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "K %lld is outside 0..%lld", (long long)k,
                         (long long)n);
    int64_t outer = tx_numel_of(a, v->shape), inner = tx_numel_of(r - a - 1, v->shape + a + 1);
    int64_t os[TX_MAX_RANK];
    memcpy(os, v->shape, sizeof os);
    os[a] = k;
    tx_hval o[2] = {0};
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!idx)
        return oom(x);
    st = alloc_out(x, &o[0], v->elem, r, os);
    if (!st)
        st = alloc_out(x, &o[1], TX_ONNX_INT64, r, os);
    g_topk.largest = tx_attr_int(x->node, "largest", 1) != 0;
    g_topk.v = v;
    g_topk.stride = inner;
    for (int64_t p = 0; p < outer && !st; p++)
        for (int64_t s = 0; s < inner; s++) {
            g_topk.base = p * n * inner + s;
            for (int64_t j = 0; j < n; j++)
                idx[j] = j;
            qsort(idx, (size_t)n, sizeof *idx, cmp_topk);
            for (int64_t j = 0; j < k; j++) {
                int64_t at = (p * k + j) * inner + s;
                copy_elem(&o[0], at, v, g_topk.base + idx[j] * inner);
                o[1].i[at] = idx[j];
            }
        }
    free(idx);
    for (int i = 0; i < 2 && !st; i++)
        st = tx_x_set_host(x, i, &o[i]);
    for (int i = 0; i < 2; i++)
        tx_hval_free(&o[i]);
    return st;
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    {"NonZero", exec_non_zero, NULL, H, 1, 1, 1},
    {"Compress", exec_compress, NULL, H, 2, 2, 3},
    {"Unique", exec_unique, NULL, H, 1, 1, 1},
    {"NonMaxSuppression", exec_nms, NULL, H, 2, 5, 31},
    {"TopK", exec_top_k, NULL, H, 1, 2, 3},
};

#undef H

const tx_onnx_family tx_onnx_ops_detect = {k_ops, TX_COUNTOF(k_ops)};
