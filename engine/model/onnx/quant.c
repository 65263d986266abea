/* ONNX QuantizeLinear, DequantizeLinear (per tensor, per axis, blocked) and
 * DynamicQuantizeLinear, composed from the engine's elementwise, cast,
 * reduce and gather kernels, so they run on either device. Quantized values
 * live as TX_DTYPE_INT32 (exact: 8- and 16-bit values are far inside 2^24).
 * Constant inputs (int8 weights feeding DequantizeLinear in QDQ models) fold
 * on the host at plan time. */
#include <math.h>
#include <string.h>

#include "common.h"

tx_status tx_x_qrange(tx_xnode *x, int elem, float *lo, float *hi) {
    switch (elem) {
    case TX_ONNX_UINT8: *lo = 0.0f, *hi = 255.0f; return TX_STATUS_OK;
    case TX_ONNX_INT8: *lo = -128.0f, *hi = 127.0f; return TX_STATUS_OK;
    case TX_ONNX_UINT16: *lo = 0.0f, *hi = 65535.0f; return TX_STATUS_OK;
    case TX_ONNX_INT16: *lo = -32768.0f, *hi = 32767.0f; return TX_STATUS_OK;
    default:
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "quantized element type %s is unsupported (uint8, int8, uint16, int16)",
                         tx_onnx_type_name(elem));
    }
}

bool tx_x_zero_point_zero(tx_xnode *x, int i) {
    const tx_hval *h;
    if (!tx_x_has(x, i))
        return true;
    if (!tx_x_is_host(x, i) || tx_x_host(x, i, &h))
        return false;
    for (int64_t k = 0; k < h->numel; k++)
        if (tx_hval_get(h, k) != 0)
            return false;
    return true;
}

tx_status tx_x_dev_float(tx_xnode *x, int i, tx_tmp_list *l, tx_tensor *out) {
    tx_tensor t;
    tx_status st = tx_x_dev(x, i, &t);
    if (st || tx_x_dtype_of(x, t) == TX_DTYPE_FLOAT32) {
        *out = t;
        return st;
    }
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    st = tx_tensor_retype(x->ctx, t, TX_DTYPE_FLOAT32, out);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

tx_status tx_x_set_dev_int(tx_xnode *x, int i, tx_tensor y, int elem) {
    tx_tensor v;
    tx_status st = tx_tensor_retype(x->ctx, y, TX_DTYPE_INT32, &v);
    tx_tensor_destroy(x->ctx, y);
    return st ? st : tx_x_set_dev(x, i, v, elem);
}

/* t (destroyed) ∘ b → *t, for the elementwise chains below. */
static tx_status bin_step(tx_xnode *x, tx_op op, tx_tensor *t, tx_tensor b) {
    tx_tensor y;
    tx_status st = tx_binary(x->ctx, op, *t, b, &y);
    tx_tensor_destroy(x->ctx, *t);
    *t = st ? (tx_tensor){0} : y;
    return st;
}

tx_status tx_x_requantize(tx_xnode *x, tx_tensor v, tx_tensor s, bool divide, tx_tensor zp,
                          float lo, float hi, tx_tensor *out) {
    tx_tensor t, r;
    tx_status st = tx_binary(x->ctx, divide ? TX_OP_DIV : TX_OP_MUL, v, s, &t);
    if (st)
        return st;
    st = tx_unary(x->ctx, TX_OP_ROUND, t, &r); /* half to even, as ONNX */
    tx_tensor_destroy(x->ctx, t);
    if (!st && zp.id)
        st = bin_step(x, TX_OP_ADD, &r, zp);
    if (st)
        return st;
    st = tx_clip(x->ctx, r, lo, hi, out);
    tx_tensor_destroy(x->ctx, r);
    return st;
}

/* How a scale (and its zero point) maps onto x: one value, one per index of
 * `axis` ([D]), or (opset 21 block_size) one per block of `block` indices of
 * `axis`, the other dims as x's. */
typedef struct qlay {
    int rank, axis;
    int64_t d, block, inner, dp; /* dp: the scale's length along axis */
    bool per_tensor;
} qlay;

static tx_status qlayout(tx_xnode *x, int si, qlay *q) {
    int64_t xs[TX_MAX_RANK], ss[TX_MAX_RANK], zs[TX_MAX_RANK];
    int rs, rz;
    memset(q, 0, sizeof *q);
    tx_status st = tx_x_shape(x, 0, &q->rank, xs);
    if (!st)
        st = tx_x_shape(x, si, &rs, ss);
    if (st)
        return st;
    if (tx_x_has(x, si + 1)) {
        if ((st = tx_x_shape(x, si + 1, &rz, zs)))
            return st;
        if (rz != rs || memcmp(ss, zs, sizeof(int64_t) * (size_t)rs) != 0)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "the zero point's shape differs from the scale's");
    }
    q->block = x->opset >= 21 ? tx_attr_int(x->node, "block_size", 0) : 0;
    if (tx_numel_of(rs, ss) == 1 && q->block == 0) {
        q->per_tensor = true;
        return TX_STATUS_OK;
    }
    int64_t a = tx_attr_int(x->node, "axis", 1);
    if (a < -q->rank || a >= q->rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                         (long long)a, q->rank);
    q->axis = tx_norm_axis(a, q->rank);
    q->d = xs[q->axis];
    q->inner = tx_numel_of(q->rank - q->axis - 1, xs + q->axis + 1);
    if (q->block < 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "block_size %lld", (long long)q->block);
    if (q->block == 0) {
        if (rs != 1 || ss[0] != q->d)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "a per-axis scale must be 1-D of x's dim %d (%lld), got %lld values",
                             q->axis, (long long)q->d, (long long)tx_numel_of(rs, ss));
        q->dp = q->d;
        return TX_STATUS_OK;
    }
    q->dp = (q->d + q->block - 1) / q->block;
    bool ok = rs == q->rank;
    for (int i = 0; ok && i < rs; i++)
        ok = ss[i] == (i == q->axis ? q->dp : xs[i]);
    if (!ok)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "a blocked scale must have x's shape with ceil(%lld / %lld) along axis %d",
                         (long long)q->d, (long long)q->block, q->axis);
    return TX_STATUS_OK;
}

/* Index into the scale of element k of x. */
static int64_t qindex(const qlay *q, int64_t k) {
    if (q->per_tensor)
        return 0;
    int64_t a = (k / q->inner) % q->d;
    if (!q->block)
        return a;
    return k / (q->d * q->inner) * (q->dp * q->inner) + a / q->block * q->inner + k % q->inner;
}

/* Input i (a scale or zero point) on the device as float32, shaped to
 * broadcast against x: [D] reshaped with D at axis; blocked ones gathered
 * along axis (index j / block) to x's shape. */
static tx_status qparam_dev(tx_xnode *x, int i, const qlay *q, tx_tmp_list *l, tx_tensor *out) {
    tx_tensor t;
    tx_status st = tx_x_dev_float(x, i, l, &t);
    if (st || q->per_tensor) {
        *out = t;
        return st;
    }
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    if (!q->block) {
        int64_t shape[TX_MAX_RANK];
        for (int d = 0; d < q->rank; d++)
            shape[d] = d == q->axis ? q->d : 1;
        st = tx_tensor_reshape(x->ctx, t, q->rank, shape, out);
    } else {
        int32_t *idx = malloc(sizeof(int32_t) * (size_t)q->d);
        if (!idx)
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t j = 0; j < q->d; j++)
            idx[j] = (int32_t)(j / q->block);
        tx_tensor it;
        st = tx_tensor_create(
            x->ctx,
            &(tx_tensor_desc){.rank = 1, .shape = {q->d}, .dtype = TX_DTYPE_INT32, .data = idx},
            &it);
        free(idx);
        if (!st) {
            st = tx_gather(x->ctx, t, it, q->axis, out);
            tx_tensor_destroy(x->ctx, it);
        }
    }
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

/* The output type of QuantizeLinear: output_dtype (opset 21), else the zero
 * point's, else uint8. */
static int quantize_elem(tx_xnode *x) {
    int64_t od = x->opset >= 21 ? tx_attr_int(x->node, "output_dtype", 0) : 0;
    return od ? (int)od : tx_x_has(x, 2) ? tx_x_elem(x, 2) : TX_ONNX_UINT8;
}

/* Output 0 has input 0's static shape and element type elem. */
static tx_status infer_as_elem(tx_xnode *x, int elem) {
    int e, r;
    int64_t s[TX_MAX_RANK];
    tx_x_info(x, 0, &e, &r, s);
    if (r >= 0)
        tx_x_set_info(x, 0, elem, r, s);
    return TX_STATUS_OK;
}

static tx_status infer_quantize(tx_xnode *x) {
    return infer_as_elem(x, quantize_elem(x));
}

static tx_status infer_dequantize(tx_xnode *x) {
    return infer_as_elem(x, TX_ONNX_FLOAT);
}

/* Both ops on constants: y[k] from x[k], scale and zero point at qindex. */
static tx_status qdq_host(tx_xnode *x, const qlay *q, bool quant, int oelem, float lo, float hi) {
    const tx_hval *h, *s, *z = NULL;
    tx_hval o = {0};
    tx_status st = tx_x_host_like(x, 0, oelem, &h, &o);
    if (!st)
        st = tx_x_host(x, 1, &s);
    if (!st && tx_x_has(x, 2))
        st = tx_x_host(x, 2, &z);
    if (st) {
        if (o.f || o.i)
            tx_hval_free(&o);
        return st;
    }
    for (int64_t k = 0; k < o.numel; k++) {
        int64_t p = qindex(q, k);
        float sc = (float)tx_hval_get(s, p), zp = z ? (float)tx_hval_get(z, p) : 0.0f;
        float v = (float)tx_hval_get(h, k);
        if (quant) {
            float r = rintf(v / sc) + zp;
            o.i[k] = (int64_t)(isnan(r) ? lo : fminf(fmaxf(r, lo), hi));
        } else {
            o.f[k] = (v - zp) * sc;
        }
    }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_quantize(tx_xnode *x) {
    int oelem = quantize_elem(x);
    float lo, hi;
    qlay q;
    tx_status st = tx_x_qrange(x, oelem, &lo, &hi);
    if (!st)
        st = tx_x_float_input_only(x, 0);
    if (!st)
        st = qlayout(x, 1, &q);
    if (st)
        return st;
    if (tx_x_all_host(x))
        return qdq_host(x, &q, true, oelem, lo, hi);
    tx_tmp_list l = {0};
    tx_tensor v, s, zp = {0}, y;
    st = tx_x_dev_float(x, 0, &l, &v);
    if (!st)
        st = qparam_dev(x, 1, &q, &l, &s);
    if (!st && !tx_x_zero_point_zero(x, 2))
        st = qparam_dev(x, 2, &q, &l, &zp);
    if (!st)
        st = tx_x_requantize(x, v, s, true, zp, lo, hi, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev_int(x, 0, y, oelem);
}

static tx_status exec_dequantize(tx_xnode *x) {
    int elem = tx_x_elem(x, 0);
    float lo, hi;
    qlay q;
    tx_status st = elem == TX_ONNX_INT32 ? TX_STATUS_OK : tx_x_qrange(x, elem, &lo, &hi);
    if (!st)
        st = qlayout(x, 1, &q);
    if (st)
        return st;
    if (tx_x_all_host(x))
        return qdq_host(x, &q, false, TX_ONNX_FLOAT, 0, 0);
    tx_tmp_list l = {0};
    tx_tensor v, s, zp, y = {0};
    st = tx_x_dev_float(x, 0, &l, &v);
    if (!st && !tx_x_zero_point_zero(x, 2)) {
        st = qparam_dev(x, 2, &q, &l, &zp);
        if (!st)
            st = tx_binary(x->ctx, TX_OP_SUB, v, zp, &y);
        if (!st)
            v = l.t[l.n++] = y;
    }
    if (!st)
        st = qparam_dev(x, 1, &q, &l, &s);
    if (!st)
        st = tx_binary(x->ctx, TX_OP_MUL, v, s, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

static tx_status infer_dynamic(tx_xnode *x) {
    const int64_t none[1] = {0};
    tx_x_set_info(x, 1, TX_ONNX_FLOAT, 0, none);
    tx_x_set_info(x, 2, TX_ONNX_UINT8, 0, none);
    return infer_as_elem(x, TX_ONNX_UINT8);
}

/* Keeps *t in l when st is OK; returns st. */
static tx_status keep(tx_tmp_list *l, tx_status st, const tx_tensor *t) {
    if (!st) {
        TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
        l->t[l->n++] = *t;
    }
    return st;
}

/* y_scale = (max(x, 0) - min(x, 0)) / 255 (1 when that is 0), y_zero_point = saturate(round(-min /
 * scale)), y = saturate(round(x / scale) + zero point), all on the device (no read). */
static tx_status exec_dynamic(tx_xnode *x) {
    tx_status st = tx_x_float_input_only(x, 0);
    if (st)
        return st;
    tx_tmp_list l = {0};
    tx_tensor v, mn, mx, mn0, mx0, zero, n255, range, sc0, flat, one, neg, scale = {0}, zp = {0}, y;
    const tx_reduce_desc rd = {.drop_dims = true};
    st = tx_x_dev_float(x, 0, &l, &v);
    if (!st)
        st = keep(&l, tx_reduce(x->ctx, TX_OP_REDUCE_MIN, v, &rd, &mn), &mn);
    if (!st)
        st = keep(&l, tx_reduce(x->ctx, TX_OP_REDUCE_MAX, v, &rd, &mx), &mx);
    if (!st)
        st = keep(&l, tx_x_scalar(x, 0.0f, &zero), &zero);
    if (!st)
        st = keep(&l, tx_x_scalar(x, 255.0f, &n255), &n255);
    if (!st)
        st = keep(&l, tx_binary(x->ctx, TX_OP_MIN, mn, zero, &mn0), &mn0);
    if (!st)
        st = keep(&l, tx_binary(x->ctx, TX_OP_MAX, mx, zero, &mx0), &mx0);
    if (!st)
        st = keep(&l, tx_binary(x->ctx, TX_OP_SUB, mx0, mn0, &range), &range);
    if (!st)
        st = keep(&l, tx_binary(x->ctx, TX_OP_DIV, range, n255, &sc0), &sc0);
    /* an all-zero x gets scale 1 (as onnxruntime: no 0 / 0 below) */
    if (!st)
        st = keep(&l, tx_binary(x->ctx, TX_OP_EQUAL, range, zero, &flat), &flat);
    if (!st)
        st = keep(&l, tx_x_scalar(x, 1.0f, &one), &one);
    if (!st)
        st = tx_nary(x->ctx, TX_OP_WHERE, (const tx_tensor[]){flat, one, sc0}, 3, &scale);
    if (!st)
        st = keep(&l, tx_unary(x->ctx, TX_OP_NEG, mn0, &neg), &neg);
    if (!st)
        st = tx_x_requantize(x, neg, scale, true, (tx_tensor){0}, 0.0f, 255.0f, &zp);
    if (!st)
        st = tx_x_requantize(x, v, scale, true, zp, 0.0f, 255.0f, &y);
    tx_tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev_int(x, 0, y, TX_ONNX_UINT8);
    if (!st) {
        st = tx_x_set_dev(x, 1, scale, TX_ONNX_FLOAT);
        scale.id = 0;
    }
    if (!st) {
        st = tx_x_set_dev_int(x, 2, zp, TX_ONNX_UINT8);
        zp.id = 0;
    }
    if (scale.id)
        tx_tensor_destroy(x->ctx, scale);
    if (zp.id)
        tx_tensor_destroy(x->ctx, zp);
    return st;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"QuantizeLinear", exec_quantize, infer_quantize, TX_OPF_HOST, 2, 3, 0},
    {"DequantizeLinear", exec_dequantize, infer_dequantize, TX_OPF_HOST, 2, 3, 0},
    {"DynamicQuantizeLinear", exec_dynamic, infer_dynamic, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_quant = {k_ops, TX_COUNTOF(k_ops)};
