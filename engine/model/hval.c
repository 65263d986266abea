/* Host values: small tensors on the CPU (shape arithmetic, constants, weights
 * before upload). Float-like element types are held as float (a float16
 * weight as its halves until host code reads it), int-like ones as int64 so
 * shape math (Slice ends of INT64_MAX, say) stays exact; the conversion to
 * the device's int32 checks the range. */
#include <math.h>
#include <string.h>

#include "model.h"

/* Ints live as floats in the texture: exact only up to 2^24. */
#define TX_DEVICE_INT_MAX (1 << 24)

void tx_hval_free(tx_hval *v) {
    free(v->f);
    free(v->i);
    free(v->h16);
    v->f = NULL;
    v->i = NULL;
    v->h16 = NULL;
}

bool tx_dims_in_range(int rank, const int64_t *shape, int64_t limit, bool allow_unknown) {
    if (rank < 0 || rank > TX_MAX_RANK)
        return false;
    int64_t n = 1; /* product of the known non-zero dims */
    for (int i = 0; i < rank; i++) {
        if (shape[i] == -1 && allow_unknown)
            continue;
        if (shape[i] < 0 || shape[i] > limit)
            return false;
        if (shape[i] > 0 && n > limit / shape[i])
            return false;
        n *= shape[i] ? shape[i] : 1;
    }
    return true;
}

bool tx_hval_alloc(tx_hval *v, int elem, int rank, const int64_t *shape) {
    memset(v, 0, sizeof *v);
    /* 2^28 elements (1-2 GiB) at most: a hostile ConstantOfShape must not
     * make the host allocate (and touch) unbounded memory */
    if (!tx_dims_in_range(rank, shape, (int64_t)1 << 28, false))
        return false;
    v->elem = elem;
    v->rank = rank;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        v->shape[i] = shape[i];
        n *= shape[i];
    }
    v->numel = n;
    size_t cnt = (size_t)(n ? n : 1);
    if (tx_onnx_type_is_float(elem))
        v->f = calloc(cnt, sizeof(float));
    else
        v->i = calloc(cnt, sizeof(int64_t));
    return v->f || v->i;
}

bool tx_hval_copy(tx_hval *dst, const tx_hval *src) {
    if (src->h16 && !src->f) {
        *dst = *src;
        dst->h16 = malloc((size_t)(src->numel ? src->numel : 1) * sizeof(uint16_t));
        if (!dst->h16)
            return false;
        memcpy(dst->h16, src->h16, (size_t)src->numel * sizeof(uint16_t));
        return true;
    }
    if (!tx_hval_alloc(dst, src->elem, src->rank, src->shape))
        return false;
    if (src->numel && src->f && dst->f)
        memcpy(dst->f, src->f, (size_t)src->numel * sizeof(float));
    else if (src->numel && src->i && dst->i)
        memcpy(dst->i, src->i, (size_t)src->numel * sizeof(int64_t));
    else if (src->numel) { /* element class changed: cannot happen for a copy */
        tx_hval_free(dst);
        return false;
    }
    return true;
}

double tx_hval_get(const tx_hval *v, int64_t i) {
    if (v->f)
        return (double)v->f[i];
    if (v->h16)
        return (double)tx_onnx_half_to_float(v->h16[i]);
    return (double)v->i[i];
}

bool tx_hval_widen(tx_hval *v) {
    if (v->f || !v->h16)
        return true;
    v->f = malloc((size_t)(v->numel ? v->numel : 1) * sizeof(float));
    if (v->f)
        tx_halves_to_floats(v->h16, v->f, v->numel);
    return v->f != NULL;
}

bool tx_hval_same_halves(const tx_hval *v, const uint16_t *h16) {
    if (!v->f || !h16)
        return false;
    for (int64_t k = 0; k < v->numel; k++) {
        uint32_t a = tx_half_bits_to_float_bits(h16[k]), b;
        memcpy(&b, &v->f[k], 4);
        if (a != b)
            return false;
    }
    return true;
}

size_t tx_hval_bytes(const tx_hval *v) {
    size_t n = (size_t)v->numel;
    return v->f     ? n * sizeof(float)
           : v->h16 ? n * sizeof(uint16_t)
           : v->i   ? n * sizeof(int64_t)
                    : 0;
}

tx_status tx_hval_device_dtype(int elem, tx_dtype *out) {
    if (tx_onnx_type_is_float(elem)) {
        *out = TX_DTYPE_FLOAT32;
        return TX_STATUS_OK;
    }
    if (tx_onnx_type_is_int(elem)) {
        *out = TX_DTYPE_INT32;
        return TX_STATUS_OK;
    }
    return TX_STATUS_UNSUPPORTED;
}

tx_status tx_hval_upload(tx_ctx *ctx, const char *what, const tx_hval *v, tx_tensor *out) {
    tx_dtype dt;
    if (tx_hval_device_dtype(v->elem, &dt))
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "%s: element type %s has no device dtype", what,
                       tx_onnx_type_name(v->elem));
    tx_tensor_desc d = {.rank = v->rank, .dtype = dt};
    memcpy(d.shape, v->shape, sizeof d.shape);
    int32_t *tmp = NULL;
    if (dt == TX_DTYPE_INT32 && v->numel) {
        tmp = malloc((size_t)v->numel * sizeof *tmp);
        if (!tmp)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", what);
        for (int64_t k = 0; k < v->numel; k++) {
            if (v->i[k] > TX_DEVICE_INT_MAX || v->i[k] < -TX_DEVICE_INT_MAX) {
                free(tmp);
                return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                               "%s: integer value %lld at %lld does not fit the device's "
                               "int32 (exact to 2^24 in float textures)",
                               what, (long long)v->i[k], (long long)k);
            }
            tmp[k] = (int32_t)v->i[k];
        }
        d.data = tmp;
    } else {
        d.data = v->f ? (const void *)v->f : (const void *)v->h16;
        d.data_f16 = !v->f && v->h16;
    }
    tx_status st = tx_tensor_create(ctx, &d, out);
    free(tmp);
    return st;
}

tx_status tx_hval_download(tx_ctx *ctx, tx_tensor t, int elem, tx_hval *out) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dt;
    tx_status st = tx_tensor_shape(ctx, t, &rank, shape, &dt);
    if (st)
        return st;
    if (dt == TX_DTYPE_FLOAT32 && !tx_onnx_type_is_float(elem))
        elem = TX_ONNX_FLOAT;
    if (dt == TX_DTYPE_INT32 && !tx_onnx_type_is_int(elem))
        elem = TX_ONNX_INT64;
    if (!tx_hval_alloc(out, elem, rank, shape))
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "download: out of host memory");
    size_t n = (size_t)(out->numel ? out->numel : 1);
    void *buf = malloc(n * 4);
    if (!buf) {
        tx_hval_free(out);
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "download: out of host memory");
    }
    st = tx_tensor_read(ctx, t, buf, n * 4);
    if (!st) {
        if (out->f)
            memcpy(out->f, buf, (size_t)out->numel * 4);
        else
            for (int64_t k = 0; k < out->numel; k++)
                out->i[k] = ((int32_t *)buf)[k];
    } else {
        tx_hval_free(out);
    }
    free(buf);
    return st;
}
