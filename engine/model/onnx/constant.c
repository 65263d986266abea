/* ONNX generators computed on the host: Constant, ConstantOfShape, Range, EyeLike. */
#include <math.h>

#include "common.h"

static tx_status hval_from_attr(tx_xnode *x, const tx_onnx_attr *a, tx_hval *out) {
    switch (a->type) {
    case TX_ATTR_TENSOR:
        if (!a->t || !tx_hval_copy(out, a->t))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        return TX_STATUS_OK;
    case TX_ATTR_FLOAT:
        if (!tx_hval_alloc(out, TX_ONNX_FLOAT, 0, NULL))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        out->f[0] = a->f;
        return TX_STATUS_OK;
    case TX_ATTR_INT:
        if (!tx_hval_alloc(out, TX_ONNX_INT64, 0, NULL))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        out->i[0] = a->i;
        return TX_STATUS_OK;
    case TX_ATTR_FLOATS:
    case TX_ATTR_INTS: {
        int64_t n = a->type == TX_ATTR_FLOATS ? a->n_floats : a->n_ints;
        if (!tx_hval_alloc(out, a->type == TX_ATTR_FLOATS ? TX_ONNX_FLOAT : TX_ONNX_INT64, 1, &n))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t k = 0; k < n; k++) {
            if (out->f)
                out->f[k] = a->floats[k];
            else
                out->i[k] = a->ints[k];
        }
        return TX_STATUS_OK;
    }
    default:
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "attribute \"%s\" of this type (%d: "
                         "strings, sparse) is unsupported",
                         a->name, a->type);
    }
}

static tx_status exec_constant(tx_xnode *x) {
    if (x->node->n_attrs != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs exactly one value attribute");
    /* folded at plan time, a tensor value is read where the model holds it */
    const tx_onnx_attr *a = &x->node->attrs[0];
    if (a->type == TX_ATTR_TENSOR && a->t && tx_x_set_const_ref(x, 0, a->t))
        return TX_STATUS_OK;
    tx_hval h;
    tx_status st = hval_from_attr(x, &x->node->attrs[0], &h);
    return st ? st : tx_x_set_host(x, 0, &h);
}

static tx_status exec_constant_of_shape(tx_xnode *x) {
    int64_t shape[TX_MAX_RANK];
    int n;
    tx_status st = tx_x_host_ints(x, 0, "the shape", shape, TX_MAX_RANK, &n);
    if (st)
        return st;
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "negative dim %lld",
                             (long long)shape[i]);
    const tx_onnx_attr *a = tx_attr_find(x->node, "value");
    tx_hval v = {0};
    if (a && (st = hval_from_attr(x, a, &v)))
        return st;
    int elem = a ? v.elem : TX_ONNX_FLOAT;
    double fill = a && v.numel ? tx_hval_get(&v, 0) : 0.0;
    tx_hval_free(&v);
    tx_hval o;
    if (!tx_hval_alloc(&o, elem, n, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < o.numel; k++) {
        if (o.f)
            o.f[k] = (float)fill;
        else
            o.i[k] = tx_sat_i64(fill);
    }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_range(tx_xnode *x) {
    const tx_hval *h[3];
    for (int i = 0; i < 3; i++) {
        tx_status st = tx_x_host(x, i, &h[i]);
        if (st)
            return st;
        if (h[i]->numel != 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d must be a scalar", i);
    }
    double start = tx_hval_get(h[0], 0), limit = tx_hval_get(h[1], 0), delta = tx_hval_get(h[2], 0);
    if (delta == 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "delta is 0");
    double cnt = ceil((limit - start) / delta);
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    if (n > (1 << 26))
        return tx_x_fail(x, TX_STATUS_TOO_LARGE, "%lld elements", (long long)n);
    tx_hval o;
    if (!tx_hval_alloc(&o, h[0]->elem, 1, &n))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < n; k++) {
        if (o.f)
            o.f[k] = (float)(start + (double)k * delta);
        else
            o.i[k] = h[0]->i[0] + k * h[2]->i[0];
    }
    return tx_x_set_host(x, 0, &o);
}

/* EyeLike: ones on diagonal k of a 2-D shape; only the input's shape is
 * read, so the result is a host value (folded at plan time when static). */
static tx_status exec_eye_like(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank != 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input rank %d (needs 2)", rank);
    int elem = (int)tx_attr_int(x->node, "dtype", tx_x_elem(x, 0));
    if (!tx_onnx_type_is_float(elem) && !tx_onnx_type_is_int(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "dtype %s is unsupported",
                         tx_onnx_type_name(elem));
    int64_t k = tx_attr_int(x->node, "k", 0);
    tx_hval o;
    if (!tx_hval_alloc(&o, elem, 2, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t i = 0; i < shape[0]; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < shape[1]) {
            if (o.f)
                o.f[i * shape[1] + j] = 1;
            else
                o.i[i * shape[1] + j] = 1;
        }
    }
    return tx_x_set_host(x, 0, &o);
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    {"Constant", exec_constant, NULL, H, 0, 0, 0},
    {"ConstantOfShape", exec_constant_of_shape, NULL, H, 1, 1, 1},
    {"Range", exec_range, NULL, H, 3, 3, 7},
    {"EyeLike", exec_eye_like, NULL, TX_OPF_SHAPE_ONLY, 1, 1, 0},
};

#undef H

const tx_onnx_family tx_onnx_ops_constant = {k_ops, TX_COUNTOF(k_ops)};
