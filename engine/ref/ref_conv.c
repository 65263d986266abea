/* Reference: CONV (gather form) and CONV_TRANSPOSE (scatter form, so that it
 * does not share the engine's "conv over the upsampled input" construction),
 * straight from the ONNX operator definitions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* Spatial attributes, with 1-D problems seen as 2-D with H = 1. */
typedef struct geo {
    int64_t ih, iw, oh, ow;
    int64_t k[2], s[2], d[2], pb[2], pe[2], op[2];
} geo;

static void geo_attrs(const tx_conv_desc *c, int nsp, const int64_t *kernel, geo *g) {
    for (int j = 0; j < 2; j++) {
        g->k[j] = 1, g->s[j] = 1, g->d[j] = 1, g->pb[j] = 0, g->pe[j] = 0, g->op[j] = 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = 2 - nsp + i;
        g->k[j] = kernel[i];
        if (c->strides[i])
            g->s[j] = c->strides[i];
        if (c->dilations[i])
            g->d[j] = c->dilations[i];
        g->pb[j] = c->pads[i];
        g->pe[j] = c->pads[nsp + i];
        g->op[j] = c->output_padding[i];
    }
}

static double activate(const tx_conv_desc *c, double v) {
    if (c->activation == TX_OP_CLIP)
        return v < c->lo ? c->lo : (v > c->hi ? c->hi : v);
    if (c->activation != TX_OP_NONE)
        return tx_ref_act_scalar(c->activation, c->alpha, c->beta, v);
    return v;
}

/* The residual (a fourth input: y's values added before the activation) at
 * y's element i, 0 without one; with residual_pad it holds y's first
 * channels only (resid_fits checked its shape) and the others add 0. */
static double resid_at(const tx_ref_tensor *in, int n_in, const tx_ref_tensor *y, bool pad,
                       int64_t i) {
    if (n_in <= 3)
        return 0.0;
    if (!pad)
        return (double)in[3].data[i];
    int64_t inner = 1;
    for (int k = 2; k < y->rank; k++)
        inner *= y->shape[k];
    int64_t m = y->shape[1], cr = in[3].shape[1];
    int64_t n = i / (m * inner), c = i / inner % m;
    return c < cr ? (double)in[3].data[(n * cr + c) * inner + i % inner] : 0.0;
}

/* Whether the residual (if any) fits y: its shape, or with residual_pad
 * that but for 1 to y's channels. */
static bool resid_fits(const tx_ref_tensor *in, int n_in, const tx_ref_tensor *y, bool pad) {
    if (n_in <= 3)
        return true;
    const tx_ref_tensor *r = &in[3];
    if (!pad)
        return tx_ref_numel(r) == tx_ref_numel(y);
    bool ok = r->rank == y->rank && r->rank >= 2 && r->shape[1] >= 1 && r->shape[1] <= y->shape[1];
    for (int k = 0; k < r->rank && ok; k++)
        ok = k == 1 || r->shape[k] == y->shape[k];
    return ok;
}

/* What both references start from: the optional bias, the attributes and
 * the number of spatial dims (-1: unusable operands). */
static int conv_args(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                     const tx_ref_tensor **b, tx_conv_desc *c) {
    if (n_in < 2)
        return -1;
    *b = n_in > 2 ? &in[2] : NULL;
    *c = attrs ? attrs->conv : (tx_conv_desc){0};
    int nsp = in[0].rank - 2;
    return (nsp == 1 || nsp == 2) && in[1].rank == in[0].rank ? nsp : -1;
}

/* [N, M, (oh,) ow] with room for its values. */
static int conv_out(tx_ref_tensor *out, const tx_ref_tensor *x, int64_t m,
                    const int64_t out_sz[2]) {
    int nsp = x->rank - 2;
    *out = (tx_ref_tensor){.rank = x->rank, .dtype = TX_DTYPE_FLOAT32};
    out->shape[0] = x->shape[0];
    out->shape[1] = m;
    if (nsp == 2)
        out->shape[2] = out_sz[0];
    out->shape[x->rank - 1] = out_sz[1];
    int64_t total = tx_ref_numel(out);
    out->data = malloc((size_t)(total ? total : 1) * sizeof(float));
    return out->data ? 0 : -1;
}

/* An input value as the conv reads it (x_affine: inside x only; the
 * padding, never read here, stays 0). */
static double x_at(const tx_conv_desc *c, float v) {
    return c->x_affine ? (double)v * c->x_scale + c->x_shift : (double)v;
}

int tx_ref_conv(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    const tx_ref_tensor *x = &in[0], *w = &in[1], *b;
    tx_conv_desc c;
    int nsp = conv_args(in, n_in, attrs, &b, &c);
    if (nsp < 0)
        return -1;
    int64_t n = x->shape[0], ch = x->shape[1], m = w->shape[0], cg = w->shape[1];
    int64_t groups = c.group ? c.group : 1;
    if (cg * groups != ch || m % groups || (b && tx_ref_numel(b) != m))
        return -1;
    int64_t mg = m / groups;
    geo g;
    geo_attrs(&c, nsp, w->shape + 2, &g);
    int64_t in_sz[2] = {nsp == 2 ? x->shape[2] : 1, x->shape[x->rank - 1]}, out_sz[2];
    for (int j = 0; j < 2; j++) {
        int64_t ext = (g.k[j] - 1) * g.d[j] + 1;
        if (c.auto_pad == TX_AUTO_PAD_VALID) {
            g.pb[j] = g.pe[j] = 0;
        } else if (c.auto_pad != TX_AUTO_PAD_NOTSET) {
            int64_t o = (in_sz[j] + g.s[j] - 1) / g.s[j];
            int64_t total = (o - 1) * g.s[j] + ext - in_sz[j];
            if (total < 0)
                total = 0;
            g.pb[j] = c.auto_pad == TX_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
            g.pe[j] = total - g.pb[j];
        }
        int64_t span = in_sz[j] + g.pb[j] + g.pe[j] - ext;
        if (span < 0)
            return -1;
        out_sz[j] = span / g.s[j] + 1;
    }
    if (conv_out(out, x, m, out_sz))
        return -1;
    if (!resid_fits(in, n_in, out, attrs->conv.residual_pad)) {
        free(out->data);
        out->data = NULL;
        return -1;
    }
    int64_t ih = in_sz[0], iw = in_sz[1], kh = g.k[0], kw = g.k[1];
    float *y = out->data;
    for (int64_t ni = 0; ni < n; ni++)
        for (int64_t mi = 0; mi < m; mi++)
            for (int64_t oy = 0; oy < out_sz[0]; oy++)
                for (int64_t ox = 0; ox < out_sz[1]; ox++) {
                    double s = b ? b->data[mi] : 0.0;
                    int64_t gi = mi / mg;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ky = 0; ky < kh; ky++) {
                            int64_t yy = oy * g.s[0] - g.pb[0] + ky * g.d[0];
                            if (yy < 0 || yy >= ih)
                                continue;
                            for (int64_t kx = 0; kx < kw; kx++) {
                                int64_t xx = ox * g.s[1] - g.pb[1] + kx * g.d[1];
                                if (xx < 0 || xx >= iw)
                                    continue;
                                double xv = x_at(
                                    &c, x->data[((ni * ch + gi * cg + ci) * ih + yy) * iw + xx]);
                                double wv = w->data[((mi * cg + ci) * kh + ky) * kw + kx];
                                s += xv * wv;
                            }
                        }
                    *y = (float)activate(
                        &c, s + resid_at(in, n_in, out, attrs->conv.residual_pad, y - out->data));
                    y++;
                }
    return 0;
}

int tx_ref_conv_transpose(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                          tx_ref_tensor *out) {
    const tx_ref_tensor *x = &in[0], *w = &in[1], *b;
    tx_conv_desc c;
    int nsp = conv_args(in, n_in, attrs, &b, &c);
    if (nsp < 0)
        return -1;
    int64_t n = x->shape[0], ch = x->shape[1];
    int64_t groups = c.group ? c.group : 1;
    int64_t mg = w->shape[1], m = mg * groups, cg = ch / groups;
    if (w->shape[0] != ch || ch % groups || (b && tx_ref_numel(b) != m))
        return -1;
    geo g;
    geo_attrs(&c, nsp, w->shape + 2, &g);
    int64_t in_sz[2] = {nsp == 2 ? x->shape[2] : 1, x->shape[x->rank - 1]}, out_sz[2];
    bool has_os = false;
    for (int i = 0; i < nsp; i++)
        has_os = has_os || c.output_shape[i];
    for (int j = 0; j < 2; j++) {
        int64_t full = g.s[j] * (in_sz[j] - 1) + g.op[j] + (g.k[j] - 1) * g.d[j] + 1;
        bool same = c.auto_pad == TX_AUTO_PAD_SAME_UPPER || c.auto_pad == TX_AUTO_PAD_SAME_LOWER;
        if (has_os || same) {
            int64_t target = in_sz[j] * g.s[j];
            if (has_os)
                target = (nsp == 1 && j == 0) ? 1 : c.output_shape[j - (2 - nsp)];
            int64_t total = full - target;
            /* onnx/reference/ops/op_conv_transpose.py, with Python's // */
            int64_t half = (int64_t)floor((double)total / 2.0);
            if (c.auto_pad == TX_AUTO_PAD_SAME_UPPER) {
                g.pb[j] = half;
                g.pe[j] = total - half;
            } else {
                g.pb[j] = total - half;
                g.pe[j] = half;
            }
        } else if (c.auto_pad == TX_AUTO_PAD_VALID) {
            g.pb[j] = g.pe[j] = 0;
        }
        out_sz[j] = full - g.pb[j] - g.pe[j];
        if (out_sz[j] < 1)
            return -1;
    }
    if (conv_out(out, x, m, out_sz))
        return -1;
    int64_t total = tx_ref_numel(out);
    if (!resid_fits(in, n_in, out, attrs->conv.residual_pad)) {
        free(out->data);
        out->data = NULL;
        return -1;
    }
    int64_t oh = out_sz[0], ow = out_sz[1], ih = in_sz[0], iw = in_sz[1];
    int64_t kh = g.k[0], kw = g.k[1];
    double *acc = calloc((size_t)(total ? total : 1), sizeof(double));
    if (!acc) {
        tx_ref_free(out);
        return -1;
    }
    /* Every input element scatters its kernel-sized footprint. */
    for (int64_t ni = 0; ni < n; ni++)
        for (int64_t ci = 0; ci < ch; ci++) {
            int64_t gi = ci / cg;
            for (int64_t iy = 0; iy < ih; iy++)
                for (int64_t ix = 0; ix < iw; ix++) {
                    double xv = x_at(&c, x->data[((ni * ch + ci) * ih + iy) * iw + ix]);
                    for (int64_t mi = 0; mi < mg; mi++)
                        for (int64_t ky = 0; ky < kh; ky++) {
                            int64_t oy = iy * g.s[0] - g.pb[0] + ky * g.d[0];
                            if (oy < 0 || oy >= oh)
                                continue;
                            for (int64_t kx = 0; kx < kw; kx++) {
                                int64_t ox = ix * g.s[1] - g.pb[1] + kx * g.d[1];
                                if (ox < 0 || ox >= ow)
                                    continue;
                                double wv = w->data[((ci * mg + mi) * kh + ky) * kw + kx];
                                acc[((ni * m + gi * mg + mi) * oh + oy) * ow + ox] += xv * wv;
                            }
                        }
                }
        }
    for (int64_t i = 0; i < total; i++) {
        int64_t mi = (i / (oh * ow)) % m;
        out->data[i] =
            (float)activate(&c, acc[i] + (b ? b->data[mi] : 0.0) +
                                    resid_at(in, n_in, out, attrs->conv.residual_pad, i));
    }
    free(acc);
    return 0;
}
