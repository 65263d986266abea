/* ONNX window functions (HannWindow, HammingWindow, BlackmanWindow) and
 * MelWeightMatrix. Their output's shape is the value of their inputs (a
 * run-time scalar is read back once, counted): computed on the host, uploaded
 * by whatever reads them (and folded at plan time when the inputs are
 * constants). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static tx_status exec_window(tx_xnode *x) {
    const char *op = x->node->op_type;
    /* a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) */
    double a0 = 0.5, a1 = 0.5, a2 = 0;
    if (strcmp(op, "HammingWindow") == 0) {
        a0 = 25.0 / 46.0;
        a1 = 1 - a0;
    } else if (strcmp(op, "BlackmanWindow") == 0) {
        a0 = 0.42, a1 = 0.5, a2 = 0.08;
    }
    const tx_hval *h;
    tx_status st = tx_x_host(x, 0, &h);
    if (st)
        return st;
    if (h->numel != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "size must be one value");
    double size = tx_hval_get(h, 0);
    if (!(size >= 0 && size <= (1 << 24)))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "size %g is outside 0..2^24", size);
    int64_t n = (int64_t)size, elem = tx_attr_int(x->node, "output_datatype", TX_ONNX_FLOAT);
    bool periodic = tx_attr_int(x->node, "periodic", 1) != 0;
    tx_dtype dt;
    if (tx_hval_device_dtype((int)elem, &dt))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "output_datatype %lld", (long long)elem);
    tx_hval o;
    if (!tx_hval_alloc(&o, (int)elem, 1, &n))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    double len = periodic ? (double)n : (double)(n - 1);
    for (int64_t k = 0; k < n; k++) {
        double t = len > 0 ? 6.283185307179586 * (double)k / len : 0;
        double v = a0 - a1 * cos(t) + a2 * cos(2 * t);
        if (o.f)
            o.f[k] = (float)v;
        else
            o.i[k] = (int64_t)v;
    }
    return tx_x_set_host(x, 0, &o);
}

/* Scalar input i as a double. */
static tx_status scalar_in(tx_xnode *x, int i, double *out) {
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    if (h->numel != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d must be one value", i);
    *out = tx_hval_get(h, 0);
    return TX_STATUS_OK;
}

/* MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
 * upper_edge_hertz) -> [dft_length / 2 + 1, num_mel_bins] triangles peaking
 * at 1, as the ONNX reference builds them. */
static tx_status exec_mel(tx_xnode *x) {
    double v[5];
    for (int i = 0; i < 5; i++) {
        tx_status st = scalar_in(x, i, &v[i]);
        if (st)
            return st;
    }
    int64_t bins = (int64_t)v[0], dft = (int64_t)v[1];
    double rate = v[2], lo = v[3], hi = v[4];
    if (bins < 1 || bins > (1 << 16) || dft < 1 || dft > (1 << 24) || !(rate > 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "num_mel_bins %lld, dft_length %lld, sample_rate %g", (long long)bins,
                         (long long)dft, rate);
    int64_t elem = tx_attr_int(x->node, "output_datatype", TX_ONNX_FLOAT);
    tx_dtype dt;
    if (tx_hval_device_dtype((int)elem, &dt))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "output_datatype %lld", (long long)elem);
    int64_t nspec = dft / 2 + 1, os[2] = {nspec, bins};
    int64_t *f = malloc(sizeof(int64_t) * (size_t)(bins + 2));
    if (!f)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    double lm = 2595 * log10(1 + lo / 700), hm = 2595 * log10(1 + hi / 700);
    double step = (hm - lm) / (double)(bins + 2);
    for (int64_t k = 0; k < bins + 2; k++) {
        double hz = 700 * (pow(10, ((double)k * step + lm) / 2595) - 1);
        f[k] = (int64_t)floor((double)(dft + 1) * hz / rate);
        if (f[k] < 0 || f[k] >= nspec) {
            free(f);
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "the mel edges fall outside the %lld spectrogram bins",
                             (long long)nspec);
        }
    }
    tx_hval o;
    if (!tx_hval_alloc(&o, (int)elem, 2, os)) {
        free(f);
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    for (int64_t i = 0; i < bins; i++) {
        int64_t l = f[i], c = f[i + 1], r = f[i + 2];
        for (int64_t j = l; j <= c; j++) {
            double w = c == l ? 1 : (double)(j - l) / (double)(c - l);
            if (c == l && j != c)
                continue;
            if (o.f)
                o.f[j * bins + i] = (float)w;
            else
                o.i[j * bins + i] = (int64_t)w;
        }
        for (int64_t j = c; j < r; j++) {
            double w = (double)(r - j) / (double)(r - c);
            if (o.f)
                o.f[j * bins + i] = (float)w;
            else
                o.i[j * bins + i] = (int64_t)w;
        }
    }
    free(f);
    return tx_x_set_host(x, 0, &o);
}

static const tx_onnx_op k_ops[] = {
    {"MelWeightMatrix", exec_mel, NULL, TX_OPF_HOST, 5, 5, 31},
    {"HannWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"HammingWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"BlackmanWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
};

const tx_onnx_family tx_onnx_ops_window = {k_ops, TX_COUNTOF(k_ops)};
