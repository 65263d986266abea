/* Reference: POOL family (MaxPool, AveragePool, global forms), NCHW, 1-D or
 * 2-D, straight from the ONNX definitions (ceil_mode as PyTorch: the last
 * window must start inside the input or its begin padding). */
#include <math.h>
#include <stdlib.h>

#include "ref.h"

static int run(tx_op op, const tx_ref_tensor *x, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    int nsp = x->rank - 2;
    if (nsp != 1 && nsp != 2)
        return -1;
    bool global = op == TX_OP_GLOBALMAXPOOL || op == TX_OP_GLOBALAVERAGEPOOL;
    bool is_max = op == TX_OP_MAXPOOL || op == TX_OP_GLOBALMAXPOOL;
    tx_pool_desc p = attrs && !global ? attrs->pool : (tx_pool_desc){0};
    int64_t ih = nsp == 2 ? x->shape[2] : 1, iw = x->shape[x->rank - 1];
    int64_t in_sz[2] = {ih, iw}, k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1};
    int64_t pb[2] = {0, 0}, pe[2] = {0, 0}, o[2];
    for (int i = 0; i < nsp; i++) {
        int j = 2 - nsp + i;
        k[j] = global ? in_sz[j] : p.kernel_shape[i];
        s[j] = p.strides[i] ? p.strides[i] : 1;
        d[j] = p.dilations[i] ? p.dilations[i] : 1;
        pb[j] = p.pads[i];
        pe[j] = p.pads[nsp + i];
    }
    for (int j = 0; j < 2; j++) {
        int64_t ext = (k[j] - 1) * d[j] + 1;
        if (p.auto_pad == TX_AUTO_PAD_SAME_UPPER || p.auto_pad == TX_AUTO_PAD_SAME_LOWER) {
            o[j] = (in_sz[j] + s[j] - 1) / s[j];
            int64_t total = (o[j] - 1) * s[j] + ext - in_sz[j];
            total = total < 0 ? 0 : total;
            pb[j] = p.auto_pad == TX_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            pe[j] = total - pb[j];
            continue;
        }
        if (p.auto_pad == TX_AUTO_PAD_VALID)
            pb[j] = pe[j] = 0;
        int64_t span = in_sz[j] + pb[j] + pe[j] - ext;
        if (span < 0 || k[j] < 1)
            return -1;
        o[j] = (int64_t)(p.ceil_mode ? ceil((double)span / (double)s[j])
                                     : floor((double)span / (double)s[j])) +
               1;
        if (p.ceil_mode && (o[j] - 1) * s[j] >= in_sz[j] + pb[j])
            o[j]--;
    }
    *out = (tx_ref_tensor){.rank = x->rank, .dtype = TX_DTYPE_FLOAT32};
    out->shape[0] = x->shape[0];
    out->shape[1] = x->shape[1];
    if (nsp == 2)
        out->shape[2] = o[0];
    out->shape[x->rank - 1] = o[1];
    int64_t total = tx_ref_numel(out);
    out->data = malloc((size_t)(total ? total : 1) * sizeof(float));
    if (!out->data)
        return -1;
    int64_t planes = x->shape[0] * x->shape[1];
    float *y = out->data;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t oy = 0; oy < o[0]; oy++)
            for (int64_t ox = 0; ox < o[1]; ox++) {
                double acc = is_max ? -INFINITY : 0.0;
                int64_t count = 0, padded = 0;
                for (int64_t ky = 0; ky < k[0]; ky++)
                    for (int64_t kx = 0; kx < k[1]; kx++) {
                        int64_t yy = oy * s[0] - pb[0] + ky * d[0];
                        int64_t xx = ox * s[1] - pb[1] + kx * d[1];
                        if (yy >= -pb[0] && yy < ih + pe[0] && xx >= -pb[1] && xx < iw + pe[1])
                            padded++;
                        if (yy < 0 || yy >= ih || xx < 0 || xx >= iw)
                            continue;
                        double v = x->data[(pl * ih + yy) * iw + xx];
                        if (is_max)
                            acc = v > acc ? v : acc;
                        else
                            acc += v;
                        count++;
                    }
                if (!is_max)
                    acc /= (double)(p.count_include_pad ? padded : count);
                *y++ = (float)acc;
            }
    return 0;
}

#define POOL_REF(ENUM, name)                                                                       \
    int tx_ref_##name(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,                 \
                      tx_ref_tensor *out) {                                                        \
        return n_in == 1 ? run(TX_OP_##ENUM, &in[0], attrs, out) : -1;                             \
    }
POOL_REF(MAXPOOL, maxpool)
POOL_REF(AVERAGEPOOL, averagepool)
POOL_REF(GLOBALMAXPOOL, globalmaxpool)
POOL_REF(GLOBALAVERAGEPOOL, globalaveragepool)
