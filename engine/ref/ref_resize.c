/* Reference: RESIZE family (ONNX Resize, nearest, n-linear, cubic), after
 * onnx/reference/ops/op_resize.py: taps around floor(x) on an edge-padded
 * input, cubic coefficients with A, exclude_outside renormalising.
 * Coordinates are computed in float32 in onnxruntime's order, so nearest
 * ties pick what onnxruntime picks; the sums accumulate in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* `len` is the resized length as the ONNX reference defines it: in * scale,
 * unrounded (the output size when sizes are given). */
static float coord(tx_resize_coord m, int64_t o, float len, int64_t in, float sc) {
    switch (m) {
    case TX_RESIZE_HALF_PIXEL: return ((float)o + 0.5f) / sc - 0.5f;
    case TX_RESIZE_ASYMMETRIC: return (float)o / sc;
    case TX_RESIZE_ALIGN_CORNERS:
        return len == 1.0f ? 0.0f : (float)o * (float)(in - 1) / (len - 1.0f);
    case TX_RESIZE_PYTORCH_HALF_PIXEL: return len == 1.0f ? -0.5f : ((float)o + 0.5f) / sc - 0.5f;
    default: return ((float)o + 0.5f) / sc;
    }
}

static int64_t nearest(tx_resize_nearest m, float x, int64_t in) {
    float n;
    switch (m) {
    case TX_RESIZE_ROUND_PREFER_FLOOR: n = x == floorf(x) + 0.5f ? floorf(x) : roundf(x); break;
    case TX_RESIZE_ROUND_PREFER_CEIL: n = x == floorf(x) + 0.5f ? ceilf(x) : roundf(x); break;
    case TX_RESIZE_FLOOR: n = floorf(x); break;
    default: n = ceilf(x); break;
    }
    int64_t i = (int64_t)n;
    return i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
}

int tx_ref_resize(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    /* x[, residual of y's shape, added in float32 as the kernels add it] */
    const tx_ref_tensor *x = tx_ref_one_input(in, n_in == 2 ? 1 : n_in, attrs);
    const tx_ref_tensor *res = n_in == 2 ? &in[1] : NULL;
    if (!x)
        return -1;
    const tx_resize_desc *d = &attrs->move.resize;
    int rank = x->rank;
    bool by_size = false;
    for (int i = 0; i < rank; i++)
        by_size = by_size || d->sizes[i] != 0;
    float sc[TX_MAX_RANK], len[TX_MAX_RANK];
    *out = (tx_ref_tensor){.rank = rank, .dtype = x->dtype};
    for (int i = 0; i < rank; i++) {
        int64_t n = x->shape[i];
        if (by_size) {
            out->shape[i] = d->sizes[i] ? d->sizes[i] : n;
            sc[i] = n ? (float)out->shape[i] / (float)n : 1.0f;
        } else {
            sc[i] = d->scales[i] == 0.0f ? 1.0f : d->scales[i];
            out->shape[i] = (int64_t)floor((double)n * (double)sc[i]);
        }
        len[i] = by_size ? (float)out->shape[i] : (float)((double)n * (double)sc[i]);
    }
    if (res && (res->rank != rank || memcmp(res->shape, out->shape, sizeof(int64_t) * rank)))
        return -1;
    int64_t total = tx_ref_numel(out);
    out->data = malloc((size_t)(total ? total : 1) * sizeof(float));
    if (!out->data)
        return -1;
    int64_t c[TX_MAX_RANK], tap[TX_MAX_RANK][4];
    double w[TX_MAX_RANK][4];
    int nt[TX_MAX_RANK];
    double A = d->cubic_a == 0.0f ? -0.75 : (double)d->cubic_a;
    for (int64_t i = 0; i < total; i++) {
        int64_t r = i;
        for (int k = rank - 1; k >= 0; k--) {
            c[k] = r % out->shape[k];
            r /= out->shape[k];
        }
        for (int k = 0; k < rank; k++) {
            int64_t n = x->shape[k];
            float xf = coord(d->coord, c[k], len[k], n, sc[k]);
            if (d->mode == TX_RESIZE_NEAREST) {
                nt[k] = 1;
                tap[k][0] = nearest(d->nearest, xf, n);
                w[k][0] = 1;
                continue;
            }
            double f = floor((double)xf), t = (double)xf - f;
            if (d->mode == TX_RESIZE_LINEAR) {
                nt[k] = 2;
                w[k][0] = 1 - t;
                w[k][1] = t;
            } else {
                double q = 1 - t;
                nt[k] = 4;
                w[k][0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
                w[k][1] = ((A + 2) * t - (A + 3)) * t * t + 1;
                w[k][2] = ((A + 2) * q - (A + 3)) * q * q + 1;
                w[k][3] = ((A * (q + 1) - 5 * A) * (q + 1) + 8 * A) * (q + 1) - 4 * A;
            }
            int64_t first = (int64_t)f - (nt[k] == 4 ? 1 : 0);
            double sum = 0;
            for (int j = 0; j < nt[k]; j++) {
                int64_t p = first + j;
                if (d->mode == TX_RESIZE_CUBIC && d->exclude_outside && (p < 0 || p >= n))
                    w[k][j] = 0;
                sum += w[k][j];
                tap[k][j] = p < 0 ? 0 : (p >= n ? n - 1 : p); /* edge padding */
            }
            if (d->mode == TX_RESIZE_CUBIC && d->exclude_outside)
                for (int j = 0; j < nt[k]; j++)
                    w[k][j] /= sum;
        }
        /* every combination of the dims' taps */
        int64_t combos = 1;
        for (int k = 0; k < rank; k++)
            combos *= nt[k];
        double acc = 0;
        for (int64_t q = 0; q < combos; q++) {
            int64_t rest = q, idx = 0;
            double wt = 1;
            for (int k = rank - 1; k >= 0; k--) {
                int j = (int)(rest % nt[k]);
                rest /= nt[k];
                wt *= w[k][j];
                int64_t stride = 1;
                for (int m = k + 1; m < rank; m++)
                    stride *= x->shape[m];
                idx += tap[k][j] * stride;
            }
            if (wt != 0)
                acc += wt * x->data[idx];
        }
        out->data[i] = (float)acc;
        if (res)
            out->data[i] += res->data[i];
    }
    return 0;
}
