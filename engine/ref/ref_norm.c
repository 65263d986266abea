/* Reference: SOFTMAX (softmax, log_softmax, with the pre-13 coerce_2d flag)
 * and NORM (batch_norm inference, instance_norm, layer_norm), two-pass in
 * double precision. */
#include <math.h>
#include <stdlib.h>

#include "ref.h"

static int alloc_like(const tx_ref_tensor *x, tx_ref_tensor *out) {
    *out = *x;
    int64_t n = tx_ref_numel(x);
    out->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    return out->data ? 0 : -1;
}

/* x as [A, R, B]: softmax over R for every (a, b). */
static int softmax_run(bool log_, const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                       tx_ref_tensor *out) {
    if (n_in != 1)
        return -1;
    const tx_ref_tensor *x = &in[0];
    tx_softmax_desc d = attrs ? attrs->softmax : (tx_softmax_desc){.axis = -1};
    int axis = d.axis < 0 ? d.axis + x->rank : d.axis;
    if (axis < 0 || axis >= x->rank)
        return -1;
    int64_t A = 1, R = 1, B = 1;
    for (int i = 0; i < x->rank; i++) {
        if (i < axis)
            A *= x->shape[i];
        else if (i == axis || d.coerce_2d)
            R *= x->shape[i];
        else
            B *= x->shape[i];
    }
    if (alloc_like(x, out))
        return -1;
    for (int64_t a = 0; a < A; a++)
        for (int64_t b = 0; b < B; b++) {
            const float *px = x->data + a * R * B + b;
            float *py = out->data + a * R * B + b;
            double m = -INFINITY, s = 0;
            for (int64_t r = 0; r < R; r++)
                m = isnan(px[r * B]) || px[r * B] > m ? px[r * B] : m;
            for (int64_t r = 0; r < R; r++)
                s += exp(px[r * B] - m);
            for (int64_t r = 0; r < R; r++)
                py[r * B] = (float)(log_ ? px[r * B] - m - log(s) : exp(px[r * B] - m) / s);
        }
    return 0;
}

int tx_ref_softmax(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                   tx_ref_tensor *out) {
    return softmax_run(false, in, n_in, attrs, out);
}

int tx_ref_log_softmax(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                       tx_ref_tensor *out) {
    return softmax_run(true, in, n_in, attrs, out);
}

/* The product of x's dims d, d + 1, …: the elements one normalization
 * group spans (all dims from 2 for batch/instance norm, from axis for layer
 * norm). */
static int64_t dims_from(const tx_ref_tensor *x, int d) {
    int64_t n = 1;
    for (int i = d; i < x->rank; i++)
        n *= x->shape[i];
    return n;
}

/* Batch/instance norm's inputs: n_in == want, x = in[0] at least [N, C],
 * and each other input C values (one per channel). */
static bool channel_params(const tx_ref_tensor *in, int n_in, int want) {
    if (n_in != want || in[0].rank < 2)
        return false;
    for (int i = 1; i < n_in; i++)
        if (tx_ref_numel(&in[i]) != in[0].shape[1])
            return false;
    return true;
}

static double eps_of(const tx_op_attrs *attrs) {
    return attrs && attrs->norm.epsilon != 0 ? attrs->norm.epsilon : 1e-5;
}

int tx_ref_batch_norm(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                      tx_ref_tensor *out) {
    const tx_ref_tensor *x = &in[0];
    if (!channel_params(in, n_in, 5) || alloc_like(x, out))
        return -1;
    int64_t C = x->shape[1], S = dims_from(x, 2);
    double eps = eps_of(attrs);
    int64_t n = tx_ref_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / S) % C;
        out->data[i] =
            (float)((x->data[i] - in[3].data[c]) / sqrt(in[4].data[c] + eps) * in[1].data[c] +
                    in[2].data[c]);
    }
    return 0;
}

/* Normalizes each of G groups of S consecutive elements; scale/bias index
 * (channel or position) from `pidx`. */
static void normalize_groups(const tx_ref_tensor *x, int64_t G, int64_t S, double eps,
                             const float *scale, const float *bias, int64_t C, int64_t ap,
                             int64_t bp, tx_ref_tensor *out) {
    for (int64_t g = 0; g < G; g++) {
        const float *px = x->data + g * S;
        double m = 0, v = 0;
        for (int64_t s = 0; s < S; s++)
            m += px[s];
        m /= (double)S;
        for (int64_t s = 0; s < S; s++)
            v += (px[s] - m) * (px[s] - m);
        v /= (double)S;
        double rs = 1.0 / sqrt(v + eps);
        for (int64_t s = 0; s < S; s++) {
            int64_t ai = C ? g % C : s % ap, bi = C ? g % C : s % bp;
            out->data[g * S + s] = (float)((px[s] - m) * rs * scale[ai] + (bias ? bias[bi] : 0));
        }
    }
}

int tx_ref_instance_norm(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                         tx_ref_tensor *out) {
    const tx_ref_tensor *x = &in[0];
    if (!channel_params(in, n_in, 3) || alloc_like(x, out))
        return -1;
    int64_t C = x->shape[1], S = dims_from(x, 2);
    if (S > 0)
        normalize_groups(x, tx_ref_numel(x) / S, S, eps_of(attrs), in[1].data, in[2].data, C, 1, 1,
                         out);
    return 0;
}

int tx_ref_layer_norm(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                      tx_ref_tensor *out) {
    if (n_in != 2 && n_in != 3)
        return -1;
    const tx_ref_tensor *x = &in[0];
    int axis = attrs ? attrs->norm.axis : -1;
    axis = axis < 0 ? axis + x->rank : axis;
    if (axis < 0 || axis >= x->rank)
        return -1;
    int64_t S = dims_from(x, axis);
    int64_t ap = tx_ref_numel(&in[1]), bp = n_in == 3 ? tx_ref_numel(&in[2]) : 1;
    if (ap == 0 || bp == 0 || (S % ap) || (S % bp))
        return -1;
    if (alloc_like(x, out))
        return -1;
    if (S > 0)
        normalize_groups(x, tx_ref_numel(x) / S, S, eps_of(attrs), in[1].data,
                         n_in == 3 ? in[2].data : NULL, 0, ap, bp, out);
    return 0;
}
