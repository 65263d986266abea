/* ONNX DFT and STFT as matrix products on the device.
 *
 * A DFT of length L giving K bins is two [L, K] matrices, cos and sin of
 * -/+ 2 pi k j / L (scaled by 1/L for the inverse), built on the host: with
 * the transformed axis last, re = xr C - xi S and im = xr S + xi C (two to
 * four MatMuls). DFT moves its axis last and back (Transposes), pads or crops
 * it to dft_length; STFT cuts frames with one Gather by a host-built index,
 * multiplies by the window and transforms each frame. Outputs end in a
 * [re, im] dim of 2 (a Concat). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"

static tx_tensor ch_matmul(tx_chain *c, tx_tensor a, tx_tensor b) {
    tx_tensor t = {0};
    tx_matmul_desc d = {0};
    return ch_keep(c, c->st ? c->st : tx_matmul(c->x->ctx, a, b, &d, &t), t);
}

/* The [L, K] cos and sin matrices. */
static void dft_mats(tx_chain *c, int64_t len, int64_t k, bool inverse, tx_tensor *cm,
                     tx_tensor *sm) {
    float *v = malloc(sizeof(float) * (size_t)(2 * len * k));
    if (!v) {
        c->st = c->st ? c->st : tx_x_fail(c->x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        *cm = *sm = (tx_tensor){0};
        return;
    }
    double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)len : 1;
    for (int64_t j = 0; j < len; j++)
        for (int64_t b = 0; b < k; b++) {
            /* the angle of j * b / len, reduced first to keep it exact */
            double a = sign * 6.283185307179586 * (double)((j * b) % len) / (double)len;
            v[j * k + b] = (float)(cos(a) * scale);
            v[len * k + j * k + b] = (float)(sin(a) * scale);
        }
    for (int m = 0; m < 2; m++) {
        tx_tensor t = {0};
        tx_tensor_desc d = {.rank = 2, .shape = {len, k}, .data = v + m * len * k};
        t = ch_keep(c, c->st ? c->st : tx_tensor_create(c->x->ctx, &d, &t), t);
        *(m ? sm : cm) = t;
    }
    free(v);
}

/* re, im of xr (+ i xi; xi {0}: real) transformed along their last dim
 * (length len) into k bins. */
static void dft_last(tx_chain *c, tx_tensor xr, tx_tensor xi, int64_t len, int64_t k, bool inverse,
                     tx_tensor *re, tx_tensor *im) {
    tx_tensor cm, sm;
    dft_mats(c, len, k, inverse, &cm, &sm);
    *re = ch_matmul(c, xr, cm);
    *im = ch_matmul(c, xr, sm);
    if (xi.id) {
        *re = ch_bin(c, TX_OP_SUB, *re, ch_matmul(c, xi, sm));
        *im = ch_bin(c, TX_OP_ADD, *im, ch_matmul(c, xi, cm));
    }
}

/* Component k (0 re, 1 im) of x's last dim, dropped. */
static tx_tensor component(tx_chain *c, tx_tensor x, int rank, int k) {
    int32_t v = k;
    tx_tensor ix = {0}, t = {0};
    ix =
        ch_keep(c,
                c->st ? c->st
                      : tx_tensor_create(
                            c->x->ctx,
                            &(tx_tensor_desc){.rank = 0, .dtype = TX_DTYPE_INT32, .data = &v}, &ix),
                ix);
    return ch_keep(c, c->st ? c->st : tx_gather(c->x->ctx, x, ix, rank - 1, &t), t);
}

/* [re, im] stacked into a new last dim (shape s of rank r, without it). */
static tx_tensor stack_complex(tx_chain *c, tx_tensor re, tx_tensor im, int r, const int64_t *s) {
    int64_t u[TX_MAX_RANK];
    memcpy(u, s, sizeof(int64_t) * (size_t)r);
    u[r] = 1;
    tx_tensor p[2] = {ch_reshape(c, re, r + 1, u), ch_reshape(c, im, r + 1, u)}, t = {0};
    return ch_keep(c, c->st ? c->st : tx_concat(c->x->ctx, p, 2, r, &t), t);
}

/* x (rank r) with `extra` zeros after its last dim (negative: cropped). */
static tx_tensor pad_last(tx_chain *c, tx_tensor x, int r, int64_t extra) {
    tx_pad_desc pd = {.mode = TX_PAD_CONSTANT};
    pd.end[r - 1] = extra;
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_pad(c->x->ctx, x, &pd, &t), t);
}

/* Finishes a composition: output 0 is a handle of r (the chain's last). */
static tx_status finish(tx_chain *c, tx_tensor r) {
    tx_tensor y = {0};
    tx_status st = c->st ? c->st : tx_identity(c->x->ctx, r, &y);
    tx_xnode *x = c->x;
    tx_chain_free(c);
    free(c);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* DFT(input [..., n, ..., 1|2][, dft_length][, axis (opset 20)]). */
static tx_status exec_dft(tx_xnode *x) {
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rx, sx)))
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", 1), len = -1;
    if (x->opset >= 20) {
        axis = -2;
        if (tx_x_has(x, 2)) {
            const tx_hval *h;
            if ((st = tx_x_host(x, 2, &h)))
                return st;
            axis = h->numel == 1 ? (int64_t)tx_hval_get(h, 0) : INT64_MAX;
        }
    }
    if (rx < 2 || (sx[rx - 1] != 1 && sx[rx - 1] != 2) || axis < -rx || axis >= rx ||
        tx_norm_axis(axis, rx) == rx - 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "input [..., 1 or 2] of rank %d, axis %lld (not the last)", rx,
                         (long long)axis);
    int a = tx_norm_axis(axis, rx), r = rx - 1;
    if (tx_x_has(x, 1)) {
        const tx_hval *h;
        if ((st = tx_x_host(x, 1, &h)))
            return st;
        len = h->numel == 1 ? (int64_t)tx_hval_get(h, 0) : -1;
        if (len < 1 || len > (1 << 14))
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "dft_length %lld", (long long)len);
    }
    len = len < 0 ? sx[a] : len;
    bool inverse = tx_attr_int(x->node, "inverse", 0) != 0;
    bool onesided = tx_attr_int(x->node, "onesided", 0) != 0;
    if (len > (1 << 14) || (inverse && onesided))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "dft_length %lld%s", (long long)len,
                         inverse && onesided ? " with inverse and onesided" : "");
    int64_t k = onesided ? len / 2 + 1 : len;
    tx_tensor in;
    if ((st = tx_x_dev(x, 0, &in)))
        return st;
    tx_chain *c = calloc(1, sizeof *c);
    if (!c)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    c->x = x;
    /* the axis last: perm moves a to r - 1 */
    int perm[TX_MAX_RANK], inv[TX_MAX_RANK];
    int64_t ps[TX_MAX_RANK];
    for (int i = 0, j = 0; i < r; i++)
        if (i != a)
            perm[j++] = i;
    perm[r - 1] = a;
    for (int i = 0; i < r; i++) {
        inv[perm[i]] = i;
        ps[i] = sx[perm[i]];
    }
    tx_tensor parts[2] = {{0}, {0}};
    for (int m = 0; m < (int)sx[rx - 1]; m++) {
        tx_tensor p = ch_transpose(c, component(c, in, rx, m), perm);
        if (len != sx[a]) /* zero-pad or crop to dft_length */
            p = pad_last(c, p, r, len - sx[a]);
        parts[m] = p;
    }
    tx_tensor re, im;
    dft_last(c, parts[0], parts[1], len, k, inverse, &re, &im);
    ps[r - 1] = k;
    tx_tensor y = stack_complex(c, re, im, r, ps);
    int pb[TX_MAX_RANK];
    for (int i = 0; i < r; i++)
        pb[i] = inv[i];
    pb[r] = r;
    return finish(c, ch_transpose(c, y, pb));
}

/* An optional scalar int input i (absent: def). */
static tx_status int_in(tx_xnode *x, int i, int64_t def, int64_t *out) {
    *out = def;
    if (!tx_x_has(x, i))
        return TX_STATUS_OK;
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (!st && h->numel != 1)
        st = tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d must be one value", i);
    if (!st)
        *out = (int64_t)tx_hval_get(h, 0);
    return st;
}

/* STFT(signal [B, n, 1|2], frame_step[, window [L]][, frame_length]) ->
 * [B, frames, bins, 2], frames = 1 + (n - L) / frame_step. */
static tx_status exec_stft(tx_xnode *x) {
    int rx;
    int64_t sx[TX_MAX_RANK], step, flen;
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rx, sx)) || (st = int_in(x, 1, 0, &step)) ||
        (st = int_in(x, 3, -1, &flen)))
        return st;
    int rw = -1;
    int64_t sw[TX_MAX_RANK] = {0};
    if (tx_x_has(x, 2) && (st = tx_x_shape(x, 2, &rw, sw)))
        return st;
    if (rw >= 0 && (rw != 1 || (flen >= 0 && flen != sw[0])))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "window must be 1-D of frame_length");
    flen = rw >= 0 ? sw[0] : flen;
    if (rx != 3 || (sx[2] != 1 && sx[2] != 2) || step < 1 || flen < 1 || flen > sx[1] ||
        flen > (1 << 14))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "signal [B, n, 1 or 2] (rank %d), frame_step %lld, frame_length %lld", rx,
                         (long long)step, (long long)flen);
    bool onesided = tx_attr_int(x->node, "onesided", 1) != 0;
    int64_t frames = 1 + (sx[1] - flen) / step, k = onesided ? flen / 2 + 1 : flen;
    int64_t is[2] = {frames, flen}, *ix = malloc(sizeof(int64_t) * (size_t)(frames * flen));
    if (!ix)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t f = 0; f < frames; f++)
        for (int64_t j = 0; j < flen; j++)
            ix[f * flen + j] = f * step + j;
    tx_tmp_list l = {0};
    tx_tensor in, tix, win = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_x_upload_ints(x, 2, is, ix, &l, &tix);
    free(ix);
    if (!st && rw >= 0)
        st = tx_x_dev(x, 2, &win);
    tx_chain *c = st ? NULL : calloc(1, sizeof *c);
    if (!c) {
        tx_tmps_free(x, &l);
        return st ? st : tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    c->x = x;
    tx_tensor parts[2] = {{0}, {0}};
    for (int m = 0; m < (int)sx[2]; m++) {
        tx_tensor p = component(c, in, rx, m), g = {0}; /* [B, n] */
        g = ch_keep(c, c->st ? c->st : tx_gather(x->ctx, p, tix, 1, &g), g);
        parts[m] = win.id ? ch_bin(c, TX_OP_MUL, g, win) : g; /* [B, frames, L] */
    }
    tx_tensor re, im;
    dft_last(c, parts[0], parts[1], flen, k, false, &re, &im);
    int64_t ys[3] = {sx[0], frames, k};
    tx_tensor y = stack_complex(c, re, im, 3, ys);
    tx_status fs = finish(c, y);
    tx_tmps_free(x, &l);
    return fs;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"DFT", exec_dft, NULL, 0, 1, 3, 6},
    {"STFT", exec_stft, NULL, 0, 2, 4, 10},
};

const tx_onnx_family tx_onnx_ops_spectral = {k_ops, TX_COUNTOF(k_ops)};
