/* ONNX DFT and STFT as matmuls with a cos/sin matrix built on the host, and
 * MelWeightMatrix (host values).
 *
 * The transformed axis is moved next to the trailing real/imaginary dim, so
 * each row of [rows, L·c] (c = 1 real, 2 complex, interleaved) times the
 * [L·c, K·2] matrix gives K interleaved (re, im) outputs; dft_length pads or
 * truncates by leaving rows out, onesided keeps K = n/2 + 1 bins. STFT gathers
 * its frames (one Gather), applies the window and runs the same matmul. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* v [rows, L·c] -> [rows, K·2]: the n-point DFT (inverse: with e^{+iθ} and 1/n). */
static tx_tensor dft_rows(tx_xb *b, tx_tensor v, int64_t L, int c, int64_t n, int64_t K,
                          bool inverse) {
    if (b->st)
        return (tx_tensor){0};
    if ((double)L * (double)c * (double)K * 2 > 64.0 * 1024 * 1024) {
        tx_xb_fail(b, TX_STATUS_UNSUPPORTED, "a DFT matrix over 64M entries");
        return (tx_tensor){0};
    }
    float *m = calloc((size_t)(L * c * K * 2), sizeof(float));
    if (!m) {
        tx_xb_fail(b, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        return (tx_tensor){0};
    }
    double sgn = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)n : 1.0;
    for (int64_t i = 0; i < L && i < n; i++)
        for (int64_t k = 0; k < K; k++) {
            /* (xr + i·xi)(cos θ + i·sgn·sin θ) */
            double th = 6.283185307179586 * (double)((i * k) % n) / (double)n;
            double co = cos(th) * scale, si = sgn * sin(th) * scale;
            float *re = m + (i * c) * K * 2 + k * 2;
            re[0] = (float)co; /* xr -> re */
            re[1] = (float)si; /* xr -> im */
            if (c == 2) {
                float *im = re + K * 2;
                im[0] = (float)-si; /* xi -> re */
                im[1] = (float)co;  /* xi -> im */
            }
        }
    tx_tensor mt = tx_xb_const(b, 2, (int64_t[]){L * c, K * 2}, TX_DTYPE_FLOAT32, m);
    free(m);
    return tx_xb_matmul(b, v, mt, false, (tx_tensor){0});
}

/* A scalar int host input (absent: def). */
static tx_status scalar_in(tx_xnode *x, int i, const char *what, int64_t def, int64_t *out) {
    *out = def;
    if (!tx_x_has(x, i))
        return TX_STATUS_OK;
    int n;
    tx_status st = tx_x_host_ints(x, i, what, out, 1, &n);
    if (!st && n != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s must be one value", what);
    return st;
}

static tx_status exec_dft(tx_xnode *x) {
    int rank;
    int64_t s[TX_MAX_RANK], axis, nfft;
    tx_status st = tx_x_shape(x, 0, &rank, s);
    if (!st)
        st = x->opset >= 20 ? scalar_in(x, 2, "axis", -2, &axis) : TX_STATUS_OK;
    if (!st && x->opset < 20)
        axis = tx_attr_int(x->node, "axis", 1);
    if (st)
        return st;
    int c = rank >= 2 ? (int)s[rank - 1] : 0;
    if (rank < 2 || (c != 1 && c != 2) || axis < -rank || axis >= rank ||
        tx_norm_axis(axis, rank) == rank - 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "input must be [..., 1 or 2] with axis %lld not its last dim",
                         (long long)axis);
    int a = tx_norm_axis(axis, rank);
    int64_t L = s[a];
    st = scalar_in(x, 1, "dft_length", L, &nfft);
    if (st)
        return st;
    if (nfft < 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "dft_length %lld", (long long)nfft);
    bool inverse = tx_attr_int(x->node, "inverse", 0) != 0;
    bool onesided = tx_attr_int(x->node, "onesided", 0) != 0;
    if (inverse && onesided)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "inverse with onesided");
    if (x->fold)
        return TX_STATUS_DEFER;
    int64_t K = onesided ? nfft / 2 + 1 : nfft;
    /* [..., L, ..., c] -> [rest..., L, c] */
    int perm[TX_MAX_RANK], back[TX_MAX_RANK], m = 0;
    for (int d = 0; d < rank - 1; d++)
        if (d != a)
            perm[m++] = d;
    perm[m++] = a;
    perm[m++] = rank - 1;
    for (int d = 0; d < rank; d++)
        back[perm[d]] = d;
    tx_xb b = {.x = x};
    tx_tensor v = tx_xb_transpose(&b, tx_xb_in(&b, 0), perm);
    int64_t rows = tx_numel_of(rank, s) / (L * c), ts[TX_MAX_RANK];
    v = dft_rows(&b, tx_xb_reshape(&b, v, 2, (int64_t[]){rows, L * c}), L, c, nfft, K, inverse);
    for (int d = 0; d < rank; d++)
        ts[d] = s[perm[d]];
    ts[rank - 2] = K;
    ts[rank - 1] = 2;
    v = tx_xb_transpose(&b, tx_xb_reshape(&b, v, rank, ts), back);
    tx_xb_output(&b, 0, v, TX_ONNX_FLOAT);
    return tx_xb_free(&b);
}

static tx_status exec_stft(tx_xnode *x) {
    int rank, wr = 1;
    int64_t s[TX_MAX_RANK], ws[TX_MAX_RANK] = {-1}, step, fl;
    tx_status st = tx_x_shape(x, 0, &rank, s);
    if (!st)
        st = scalar_in(x, 1, "frame_step", 0, &step);
    if (!st && tx_x_has(x, 2))
        st = tx_x_shape(x, 2, &wr, ws);
    if (!st)
        st = scalar_in(x, 3, "frame_length", ws[0], &fl);
    if (st)
        return st;
    if (rank != 3 || (s[2] != 1 && s[2] != 2))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "signal must be [batch, length, 1 or 2]");
    if (wr != 1 || fl < 1 || step < 1 || fl > s[1] || (ws[0] >= 0 && ws[0] != fl))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "frame_step %lld, frame_length %lld, window [%lld] for a signal of %lld",
                         (long long)step, (long long)fl, (long long)ws[0], (long long)s[1]);
    if (x->fold)
        return TX_STATUS_DEFER;
    bool onesided = tx_attr_int(x->node, "onesided", 1) != 0;
    int c = (int)s[2];
    int64_t F = (s[1] - fl) / step + 1, K = onesided ? fl / 2 + 1 : fl;
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(F * fl));
    if (!idx)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t f = 0; f < F; f++)
        for (int64_t n = 0; n < fl; n++)
            idx[f * fl + n] = (int32_t)(f * step + n);
    tx_xb b = {.x = x};
    tx_tensor it = tx_xb_const(&b, 2, (int64_t[]){F, fl}, TX_DTYPE_INT32, idx);
    free(idx);
    tx_tensor frames = tx_xb_gather(&b, tx_xb_in(&b, 0), it, 1); /* [batch, F, fl, c] */
    if (tx_x_has(x, 2)) {
        tx_tensor w = tx_xb_reshape(&b, tx_xb_in(&b, 2), 2, (int64_t[]){fl, 1});
        frames = tx_xb_binary(&b, TX_OP_MUL, frames, w);
    }
    tx_tensor v = tx_xb_reshape(&b, frames, 2, (int64_t[]){s[0] * F, fl * c});
    v = tx_xb_reshape(&b, dft_rows(&b, v, fl, c, fl, K, false), 4, (int64_t[]){s[0], F, K, 2});
    tx_xb_output(&b, 0, v, TX_ONNX_FLOAT);
    return tx_xb_free(&b);
}

/* MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangles between
 * mel-spaced bins, computed on the host as the ONNX reference does (the mel
 * range split into num_mel_bins + 2 steps, bins floored). */
static tx_status exec_mel_weight_matrix(tx_xnode *x) {
    int64_t nmel, dft, sr;
    const tx_hval *lo, *hi;
    tx_status st = scalar_in(x, 0, "num_mel_bins", 0, &nmel);
    if (!st)
        st = scalar_in(x, 1, "dft_length", 0, &dft);
    if (!st)
        st = scalar_in(x, 2, "sample_rate", 0, &sr);
    if (!st)
        st = tx_x_host2(x, 3, &lo, 4, &hi);
    if (st)
        return st;
    if (nmel < 1 || nmel > 65536 || dft < 1 || dft > (1 << 24) || sr < 1 || lo->numel != 1 ||
        hi->numel != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "num_mel_bins %lld, dft_length %lld, sample_rate %lld (positive), "
                         "edges one value each",
                         (long long)nmel, (long long)dft, (long long)sr);
    int elem = (int)tx_attr_int(x->node, "output_datatype", TX_ONNX_FLOAT);
    if (!tx_onnx_type_is_float(elem) && !tx_onnx_type_is_int(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "output_datatype %s", tx_onnx_type_name(elem));
    int64_t nsb = dft / 2 + 1, *bin = malloc(sizeof(int64_t) * (size_t)(nmel + 2));
    if (!bin)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    double lm = 2595.0 * log10(1.0 + tx_hval_get(lo, 0) / 700.0);
    double hm = 2595.0 * log10(1.0 + tx_hval_get(hi, 0) / 700.0);
    double step = (hm - lm) / (double)(nmel + 2);
    bool ok = true;
    for (int64_t k = 0; k < nmel + 2; k++) {
        double hz = 700.0 * (pow(10.0, ((double)k * step + lm) / 2595.0) - 1.0);
        double b = floor((double)(dft + 1) * hz / (double)sr);
        ok &= b >= 0 && b < (double)nsb;
        bin[k] = ok ? (int64_t)b : 0;
    }
    tx_hval o;
    if (!ok || !tx_hval_alloc(&o, elem, 2, (int64_t[]){nsb, nmel})) {
        free(bin);
        return ok ? tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory")
                  : tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                              "the edges map outside the %lld spectrogram bins", (long long)nsb);
    }
    for (int64_t i = 0; i < nmel; i++) {
        int64_t l = bin[i], c = bin[i + 1], h = bin[i + 2];
        for (int64_t j = l; j < h || j == c; j++) {
            /* rising to the center (1 where that edge is empty), then falling */
            double w = j >= c ? (j == c ? 1.0 : (double)(h - j) / (double)(h - c))
                              : (double)(j - l) / (double)(c - l);
            if (o.f)
                o.f[j * nmel + i] = (float)w;
            else
                o.i[j * nmel + i] = (int64_t)w;
        }
    }
    free(bin);
    return tx_x_set_host(x, 0, &o);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"DFT", exec_dft, NULL, 0, 1, 3, 6},
    {"STFT", exec_stft, NULL, 0, 2, 4, 10},
    {"MelWeightMatrix", exec_mel_weight_matrix, NULL, TX_OPF_HOST, 5, 5, 31},
};

const tx_onnx_family tx_onnx_ops_dft = {k_ops, TX_COUNTOF(k_ops)};
