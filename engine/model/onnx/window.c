/* ONNX window functions: HannWindow, HammingWindow, BlackmanWindow. Their
 * output's length is the value of their input (a run-time scalar is read back
 * once, counted): computed on the host, uploaded by whatever reads them (and
 * folded at plan time when the size is a constant). */
#include <math.h>
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

static const tx_onnx_op k_ops[] = {
    {"HannWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"HammingWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
    {"BlackmanWindow", exec_window, NULL, TX_OPF_HOST, 1, 1, 1},
};

const tx_onnx_family tx_onnx_ops_window = {k_ops, TX_COUNTOF(k_ops)};
