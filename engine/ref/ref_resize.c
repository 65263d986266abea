/* Reference: RESIZE family (ONNX Resize, nearest and n-linear). Coordinates
 * are computed in float32 in onnxruntime's order, so nearest-mode ties pick
 * what onnxruntime picks; the interpolation itself accumulates in double. */
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
    case TX_RESIZE_PYTORCH_HALF_PIXEL:
        return len == 1.0f ? -0.5f : ((float)o + 0.5f) / sc - 0.5f;
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

int tx_ref_resize(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                  tx_ref_tensor *out) {
    if (n_in != 1 || !attrs)
        return -1;
    const tx_ref_tensor *x = &in[0];
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
    int64_t total = tx_ref_numel(out);
    out->data = malloc((size_t)(total ? total : 1) * sizeof(float));
    if (!out->data)
        return -1;
    int64_t c[TX_MAX_RANK], lo[TX_MAX_RANK], hi[TX_MAX_RANK];
    double w[TX_MAX_RANK];
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
                lo[k] = hi[k] = nearest(d->nearest, xf, n);
                w[k] = 0;
            } else {
                xf = xf < 0 ? 0 : (xf > (float)(n - 1) ? (float)(n - 1) : xf);
                lo[k] = (int64_t)xf;
                hi[k] = lo[k] + 1 < n ? lo[k] + 1 : n - 1;
                w[k] = (double)(xf - (float)lo[k]);
            }
        }
        /* every corner of the 2^rank box (the weight is 0 or the corner
         * repeats where a dim does not interpolate) */
        double acc = 0;
        for (int corner = 0; corner < (1 << rank); corner++) {
            double wt = 1;
            int64_t idx = 0;
            for (int k = 0; k < rank; k++) {
                bool up = (corner >> (rank - 1 - k)) & 1;
                wt *= up ? w[k] : 1.0 - w[k];
                idx = idx * x->shape[k] + (up ? hi[k] : lo[k]);
            }
            if (wt != 0)
                acc += wt * x->data[idx];
        }
        out->data[i] = (float)acc;
    }
    return 0;
}
