/* ONNX sampling at computed positions: GridSample, RoiAlign, and Resize's
 * tf_crop_and_resize (for resize.c; described at tx_onnx_resize_crop).
 *
 * GridSample and RoiAlign are compositions of engine ops around one row Gather: X [N, C, H, W]
 * is viewed as rows Xr [N*H*W, C] (one Transpose), each tap is a Gather of
 * rows by a flat index n*H*W + y*W + x, times its weight, summed.
 *
 * GridSample (onnxruntime's semantics: nearest rounds half to even, taps
 * outside the image are zeros / clamped / reflected per tap) computes its tap
 * coordinates and weights on the device from the grid, per axis: 1 tap for
 * nearest, 2 for linear, 4 for cubic (A = -0.75), then one Gather per tap
 * pair. RoiAlign reads back its rois and batch indices (R x 5 values; one
 * counted read each when they are device values) and builds the taps on the
 * host (as onnxruntime's pre-calculation does): the image stays on the
 * device and the op is one Gather, one Mul and one ReduceSum (ReduceMax for
 * mode max). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* X [N, C, spatial...] as rows [N * prod(spatial), C]. */
static tx_tensor image_rows(tx_xb *c, tx_tensor in, int rank, const int64_t *s) {
    int perm[TX_MAX_RANK] = {0};
    for (int d = 1; d < rank - 1; d++)
        perm[d] = d + 1;
    perm[rank - 1] = 1;
    int64_t rs[2] = {tx_numel_of(rank, s) / s[1], s[1]};
    return tx_xb_reshape(c, tx_xb_transpose(c, in, perm), 2, rs);
}

/* ---- GridSample ---- */

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* The tap coordinate c (integral floats) folded back into [lo, hi] by
 * reflection at the borders (onnxruntime's GsReflect), as a float tensor. */
static tx_tensor gs_reflect(tx_xb *c, tx_tensor v, float lo, float hi) {
    float range = hi - lo;
    if (range <= 0)
        return tx_xb_binary_s(c, TX_OP_MUL, v, 0);
    tx_tensor low = tx_xb_binary_s(c, TX_OP_LESS, v, lo),
              high = tx_xb_binary_s(c, TX_OP_GREATER, v, hi);
    /* distance past the border crossed */
    tx_tensor dl = tx_xb_binary(c, TX_OP_SUB, tx_xb_scalar(c, lo), v),
              dh = tx_xb_binary_s(c, TX_OP_SUB, v, hi);
    tx_tensor dx = tx_xb_where(c, low, dl, dh);
    tx_tensor n = tx_xb_unary(c, TX_OP_FLOOR, tx_xb_binary_s(c, TX_OP_MUL, dx, 1.0f / range));
    tx_tensor r = tx_xb_binary(c, TX_OP_SUB, dx, tx_xb_binary_s(c, TX_OP_MUL, n, range));
    tx_tensor half = tx_xb_unary(c, TX_OP_FLOOR, tx_xb_binary_s(c, TX_OP_MUL, n, 0.5f));
    tx_tensor odd = tx_xb_binary(c, TX_OP_SUB, n, tx_xb_binary_s(c, TX_OP_MUL, half, 2));
    /* lo + r where (low and even) or (high and odd), else lo + range - r:
     * s = low != odd */
    tx_tensor s = tx_xb_binary(c, TX_OP_XOR, low, odd);
    tx_tensor t = tx_xb_where(c, s, r, tx_xb_binary(c, TX_OP_SUB, tx_xb_scalar(c, range), r));
    tx_tensor res = tx_xb_binary_s(c, TX_OP_ADD, t, lo);
    return tx_xb_where(c, tx_xb_binary(c, TX_OP_OR, low, high), res, v);
}

/* Per axis: tap coordinates (clamped into 0..len-1) and weights (zero for
 * taps outside when padding is zeros) of the unnormalised coordinate u. */
static int gs_axis(tx_xb *c, tx_tensor u, int64_t len, int mode, int pad, bool align,
                   tx_tensor *tap, tx_tensor *w) {
    int nt = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4;
    tx_tensor f = tx_xb_unary(c, mode == GS_NEAREST ? TX_OP_ROUND : TX_OP_FLOOR, u);
    tx_tensor t = tx_xb_binary(c, TX_OP_SUB, u, f); /* fraction in [0, 1) */
    if (mode == GS_NEAREST) {
        w[0] = (tx_tensor){0};
    } else if (mode == GS_LINEAR) {
        w[0] = tx_xb_binary(c, TX_OP_SUB, tx_xb_scalar(c, 1), t);
        w[1] = t;
    } else {
        /* cubic convolution, A = -0.75, at distances t + 1, t, 1 - t, 2 - t */
        const float A = -0.75f;
        tx_tensor d[4] = {tx_xb_binary_s(c, TX_OP_ADD, t, 1), t,
                          tx_xb_binary(c, TX_OP_SUB, tx_xb_scalar(c, 1), t),
                          tx_xb_binary(c, TX_OP_SUB, tx_xb_scalar(c, 2), t)};
        for (int k = 0; k < 4; k++) {
            tx_tensor p;
            if (k == 0 || k == 3) /* ((A x - 5A) x + 8A) x - 4A, 1 < x < 2 */
                p = tx_xb_binary_s(
                    c, TX_OP_ADD,
                    tx_xb_binary(
                        c, TX_OP_MUL,
                        tx_xb_binary_s(
                            c, TX_OP_ADD,
                            tx_xb_binary(c, TX_OP_MUL,
                                         tx_xb_binary_s(c, TX_OP_ADD,
                                                        tx_xb_binary_s(c, TX_OP_MUL, d[k], A),
                                                        -5 * A),
                                         d[k]),
                            8 * A),
                        d[k]),
                    -4 * A);
            else /* ((A + 2) x - (A + 3)) x x + 1, x <= 1 */
                p = tx_xb_binary_s(
                    c, TX_OP_ADD,
                    tx_xb_binary(
                        c, TX_OP_MUL,
                        tx_xb_binary(c, TX_OP_MUL,
                                     tx_xb_binary_s(c, TX_OP_ADD,
                                                    tx_xb_binary_s(c, TX_OP_MUL, d[k], A + 2),
                                                    -(A + 3)),
                                     d[k]),
                        d[k]),
                    1);
            w[k] = p;
        }
    }
    float hi = (float)(len - 1);
    float lo_r = align ? 0 : -0.5f, hi_r = align ? hi : (float)len - 0.5f;
    for (int k = 0; k < nt; k++) {
        tx_tensor v =
            mode == GS_NEAREST ? f : tx_xb_binary_s(c, TX_OP_ADD, f, (float)(k - (nt == 4)));
        if (pad == GS_ZEROS) {
            tx_tensor in = tx_xb_binary(c, TX_OP_AND, tx_xb_binary_s(c, TX_OP_GREATER_EQUAL, v, 0),
                                        tx_xb_binary_s(c, TX_OP_LESS_EQUAL, v, hi));
            w[k] = w[k].id ? tx_xb_binary(c, TX_OP_MUL, w[k], in) : in;
        } else if (pad == GS_REFLECTION) {
            v = gs_reflect(c, v, lo_r, hi_r);
        }
        tap[k] = tx_xb_clip(c, v, 0, hi);
    }
    return nt;
}

static tx_status exec_grid_sample(tx_xnode *x) {
    const char *ms = tx_attr_str(x->node, "mode", "bilinear");
    const char *ps = tx_attr_str(x->node, "padding_mode", "zeros");
    bool align = tx_attr_int(x->node, "align_corners", 0) != 0;
    int mode = !strcmp(ms, "nearest")                             ? GS_NEAREST
               : !strcmp(ms, "bilinear") || !strcmp(ms, "linear") ? GS_LINEAR
               : !strcmp(ms, "bicubic") || !strcmp(ms, "cubic")   ? GS_CUBIC
                                                                  : -1;
    int pad = !strcmp(ps, "zeros")        ? GS_ZEROS
              : !strcmp(ps, "border")     ? GS_BORDER
              : !strcmp(ps, "reflection") ? GS_REFLECTION
                                          : -1;
    if (mode < 0 || pad < 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\" / padding_mode \"%s\"", ms,
                         ps);
    int rx, rg;
    int64_t sx[TX_MAX_RANK], sg[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape2(x, &rx, sx, &rg, sg)))
        return st;
    if (rx != 4)
        return tx_x_fail(x, rx > 4 ? TX_STATUS_UNSUPPORTED : TX_STATUS_SHAPE_MISMATCH,
                         "X rank %d: only 2-D sampling (X [N, C, H, W]) is supported", rx);
    if (rg != 4 || sg[0] != sx[0] || sg[3] != 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "grid must be [N, H_out, W_out, 2]");
    int64_t n = sx[0], h = sx[2], w = sx[3];
    if (tx_numel_of(rx, sx) > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "X of over 2^24 elements (flat indices)");
    tx_tensor in, grid, y = {0};
    if ((st = tx_x_dev(x, 0, &in)) || (st = tx_x_dev(x, 1, &grid)))
        return st;
    tx_xb cb = {.x = x}, *c = &cb;
    tx_tensor rows = image_rows(c, in, rx, sx);
    /* unnormalised coordinates: ((g + 1) (len - 1)) / 2, or ((g + 1) len - 1) / 2 */
    tx_tensor u[2];
    for (int a = 0; a < 2; a++) {
        tx_tensor ga = tx_xb_take(c, grid, a, 3);
        int64_t len = a == 0 ? w : h;
        float sc = align ? (float)(len - 1) / 2 : (float)len / 2;
        float of = align ? sc : sc - 0.5f;
        u[a] = tx_xb_binary_s(c, TX_OP_ADD, tx_xb_binary_s(c, TX_OP_MUL, ga, sc), of);
    }
    tx_tensor tx_[4], wx[4], ty[4], wy[4];
    int nx = gs_axis(c, u[0], w, mode, pad, align, tx_, wx);
    int ny = gs_axis(c, u[1], h, mode, pad, align, ty, wy);
    /* n * H * W, per batch */
    int64_t bs[3] = {n, 1, 1};
    tx_hval bh;
    tx_tensor base = {0};
    if (!c->st && !tx_hval_alloc(&bh, TX_ONNX_FLOAT, 3, bs))
        c->st = tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    else if (!c->st) {
        for (int64_t b = 0; b < n; b++)
            bh.f[b] = (float)(b * h * w);
        base = tx_xb_track(c, tx_hval_upload(x->ctx, x->node->name, &bh, &base), base);
        tx_hval_free(&bh);
    }
    int64_t ws[4] = {n, sg[1], sg[2], 1};
    tx_tensor acc = {0};
    for (int i = 0; i < ny; i++) {
        tx_tensor row =
            tx_xb_binary(c, TX_OP_ADD, base, tx_xb_binary_s(c, TX_OP_MUL, ty[i], (float)w));
        for (int j = 0; j < nx; j++) {
            tx_tensor g = tx_xb_gather(
                c, rows, tx_xb_cast(c, tx_xb_binary(c, TX_OP_ADD, row, tx_[j]), TX_DTYPE_INT32), 0);
            tx_tensor wt = wy[i].id && wx[j].id ? tx_xb_binary(c, TX_OP_MUL, wy[i], wx[j])
                           : wy[i].id           ? wy[i]
                                                : wx[j];
            tx_tensor term = wt.id ? tx_xb_binary(c, TX_OP_MUL, g, tx_xb_reshape(c, wt, 4, ws)) : g;
            acc = acc.id ? tx_xb_binary(c, TX_OP_ADD, acc, term) : term;
        }
    }
    int perm[4] = {0, 3, 1, 2};
    if (!c->st)
        c->st = tx_transpose(x->ctx, acc, perm, &y);
    st = tx_xb_free(c);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* ---- RoiAlign ---- */

/* RoiAlign(X, rois [R, 4] (x1, y1, x2, y2), batch_indices [R]) -> [R, C,
 * output_height, output_width]: each bin the average (mode avg) of
 * sampling_ratio^2 bilinear samples (adaptive ceil(roi / bins) when 0), as
 * onnxruntime computes them; samples past the image by more than a pixel
 * count zero. Mode max is onnxruntime's: the largest weighted tap of any
 * sample. The taps of every sample (4 each: row index and weight / count)
 * are built on the host from the rois, then gathered and summed on the
 * device. */
static tx_status exec_roi_align(tx_xnode *x) {
    const char *mode = tx_attr_str(x->node, "mode", "avg");
    bool max = strcmp(mode, "max") == 0;
    if (!max && strcmp(mode, "avg") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\" (avg or max)", mode);
    bool half = strcmp(tx_attr_str(x->node, "coordinate_transformation_mode",
                                   x->opset >= 16 ? "half_pixel" : "output_half_pixel"),
                       "half_pixel") == 0;
    int64_t oh = tx_attr_int(x->node, "output_height", 1),
            ow = tx_attr_int(x->node, "output_width", 1),
            sr = tx_attr_int(x->node, "sampling_ratio", 0);
    float scale = tx_attr_float(x->node, "spatial_scale", 1.0f);
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rx, sx)))
        return st;
    if (rx != 4 || oh < 1 || ow < 1 || sr < 0 || oh * ow > (1 << 20))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "X rank %d (want 4), output %lldx%lld, sampling_ratio %lld", rx,
                         (long long)oh, (long long)ow, (long long)sr);
    const tx_hval *rh, *bh;
    if ((st = tx_x_host2(x, 1, &rh, 2, &bh)))
        return st;
    int64_t nr = rh->rank == 2 ? rh->shape[0] : -1;
    if (nr < 0 || rh->shape[1] != 4 || bh->rank != 1 || bh->shape[0] != nr)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "rois must be [R, 4], batch_indices [R]");
    int64_t h = sx[2], w = sx[3];
    /* the most samples a bin takes decides the taps' axis (shorter bins pad
     * with zero weights) */
    int64_t gy[1 << 10], gx[1 << 10], most = 1;
    if (nr > (1 << 10))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%lld rois (at most 1024)", (long long)nr);
    float off = half ? 0.5f : 0;
    for (int64_t r = 0; r < nr; r++) {
        float rw =
            (float)tx_hval_get(rh, r * 4 + 2) * scale - (float)tx_hval_get(rh, r * 4) * scale;
        float rhh =
            (float)tx_hval_get(rh, r * 4 + 3) * scale - (float)tx_hval_get(rh, r * 4 + 1) * scale;
        if (!half) {
            rw = fmaxf(rw, 1);
            rhh = fmaxf(rhh, 1);
        }
        float fy = sr > 0 ? (float)sr : ceilf(rhh / (float)oh);
        float fx = sr > 0 ? (float)sr : ceilf(rw / (float)ow);
        if (!(fy <= 256) || !(fx <= 256)) /* NaN, or huge rois */
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                             "roi %lld takes %g x %g samples per bin (at most 256)", (long long)r,
                             (double)fy, (double)fx);
        gy[r] = fy < 0 ? 0 : (int64_t)fy;
        gx[r] = fx < 0 ? 0 : (int64_t)fx;
        int64_t b = (int64_t)tx_hval_get(bh, r);
        if (b < 0 || b >= sx[0])
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "batch index %lld is outside 0..%lld",
                             (long long)b, (long long)sx[0] - 1);
        if (gy[r] * gx[r] > most)
            most = gy[r] * gx[r];
    }
    if (most > 256)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%lld samples per bin (at most 256)",
                         (long long)most);
    int64_t ts[4] = {nr, oh, ow, most * 4};
    tx_hval ih, wh;
    if (!tx_hval_alloc(&ih, TX_ONNX_INT64, 4, ts))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    if (!tx_hval_alloc(&wh, TX_ONNX_FLOAT, 4, ts)) {
        tx_hval_free(&ih);
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    for (int64_t r = 0; r < nr; r++) {
        float x1 = (float)tx_hval_get(rh, r * 4) * scale - off;
        float y1 = (float)tx_hval_get(rh, r * 4 + 1) * scale - off;
        float rw = (float)tx_hval_get(rh, r * 4 + 2) * scale - off - x1;
        float rhh = (float)tx_hval_get(rh, r * 4 + 3) * scale - off - y1;
        if (!half) {
            rw = fmaxf(rw, 1);
            rhh = fmaxf(rhh, 1);
        }
        float bw = rw / (float)ow, bhh = rhh / (float)oh, cnt = (float)(gy[r] * gx[r]);
        int64_t base = (int64_t)tx_hval_get(bh, r) * h * w;
        for (int64_t py = 0; py < oh; py++)
            for (int64_t px = 0; px < ow; px++) {
                int64_t at = ((r * oh + py) * ow + px) * most * 4;
                for (int64_t iy = 0; iy < gy[r]; iy++)
                    for (int64_t ix = 0; ix < gx[r]; ix++, at += 4) {
                        float yy = y1 + (float)py * bhh + ((float)iy + 0.5f) * bhh / (float)gy[r];
                        float xx = x1 + (float)px * bw + ((float)ix + 0.5f) * bw / (float)gx[r];
                        if (yy < -1 || yy > (float)h || xx < -1 || xx > (float)w)
                            continue; /* weights stay 0 */
                        yy = fmaxf(yy, 0);
                        xx = fmaxf(xx, 0);
                        int64_t yl = (int64_t)yy, xl = (int64_t)xx, yh, xh;
                        if (yl >= h - 1) {
                            yh = yl = h - 1;
                            yy = (float)yl;
                        } else {
                            yh = yl + 1;
                        }
                        if (xl >= w - 1) {
                            xh = xl = w - 1;
                            xx = (float)xl;
                        } else {
                            xh = xl + 1;
                        }
                        float ly = yy - (float)yl, lx = xx - (float)xl, hy = 1 - ly, hx = 1 - lx;
                        int64_t p[4] = {yl * w + xl, yl * w + xh, yh * w + xl, yh * w + xh};
                        float q[4] = {hy * hx, hy * lx, ly * hx, ly * lx};
                        for (int k = 0; k < 4; k++) {
                            ih.i[at + k] = base + p[k];
                            wh.f[at + k] = max ? q[k] : q[k] / cnt;
                        }
                    }
                /* max: slots past this bin's samples repeat its first one */
                int64_t first = ((r * oh + py) * ow + px) * most * 4;
                for (; max && gy[r] * gx[r] > 0 && at < first + most * 4; at++) {
                    ih.i[at] = ih.i[first + (at - first) % 4];
                    wh.f[at] = wh.f[first + (at - first) % 4];
                }
            }
    }
    tx_tensor in, y = {0};
    if (!(st = tx_x_dev(x, 0, &in))) {
        tx_xb cb = {.x = x}, *c = &cb;
        tx_tensor ti = {0}, tw = {0};
        ti = tx_xb_track(c, tx_hval_upload(x->ctx, x->node->name, &ih, &ti), ti);
        tw = tx_xb_track(c, c->st ? c->st : tx_hval_upload(x->ctx, x->node->name, &wh, &tw), tw);
        tx_tensor g = tx_xb_gather(c, image_rows(c, in, rx, sx), ti, 0); /* [R, oh, ow, S4, C] */
        int64_t ws[5] = {nr, oh, ow, most * 4, 1};
        tx_tensor p = tx_xb_binary(c, TX_OP_MUL, g, tx_xb_reshape(c, tw, 5, ws));
        tx_reduce_desc rd = {.n_axes = 1, .axes = {3}, .drop_dims = true};
        tx_tensor s = {0};
        s = tx_xb_track(
            c,
            c->st ? c->st
                  : tx_reduce(x->ctx, max ? TX_OP_REDUCE_MAX : TX_OP_REDUCE_SUM, p, &rd, &s),
            s);
        int perm[4] = {0, 3, 1, 2};
        if (!c->st)
            c->st = tx_transpose(x->ctx, s, perm, &y);
        st = tx_xb_free(c);
    }
    tx_hval_free(&ih);
    tx_hval_free(&wh);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* ---- Resize, coordinate_transformation_mode tf_crop_and_resize ---- */

/* Output o of an axis of length len resized to lo inside roi [s, e]. */
static double crop_coord(int64_t o, int64_t len, int64_t lo, double s, double e) {
    if (lo > 1)
        return s * (double)(len - 1) + (double)o * (e - s) * (double)(len - 1) / (double)(lo - 1);
    return 0.5 * (s + e) * (double)(len - 1);
}

static int64_t crop_nearest(double v, tx_resize_nearest nm) {
    switch (nm) {
    case TX_RESIZE_ROUND_PREFER_FLOOR:
        return v == floor(v) + 0.5 ? (int64_t)floor(v) : (int64_t)llround(v);
    case TX_RESIZE_ROUND_PREFER_CEIL: return (int64_t)llround(v);
    case TX_RESIZE_FLOOR: return (int64_t)floor(v);
    default: return (int64_t)ceil(v);
    }
}

/* Resize with tf_crop_and_resize (nearest, linear): the taps of each resized
 * axis depend only on the shapes and the roi (read on the host: 2 x rank
 * values), so they are built here and applied axis by axis on the device as
 * Gathers along the axis times per-position weights; outputs whose source
 * falls outside the input take extrapolation_value (one Where). Linear
 * weights follow onnxruntime (a tap clamped onto its neighbour weighs 1/2). */
tx_status tx_onnx_resize_crop(tx_xnode *x, tx_resize_mode mode, tx_resize_nearest nm, int rank,
                              const int64_t *in, const int64_t *out) {
    if (mode == TX_RESIZE_CUBIC)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "cubic tf_crop_and_resize is unsupported");
    const tx_hval *roi;
    tx_status st = tx_x_host(x, 1, &roi);
    if (st)
        return st;
    if (roi->numel != 2 * rank || tx_attr_find(x->node, "axes"))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "roi has %lld entries, want 2 x rank (%d), and no axes",
                         (long long)roi->numel, 2 * rank);
    float ev = tx_attr_float(x->node, "extrapolation_value", 0.0f);
    tx_tensor cur;
    if ((st = tx_x_dev(x, 0, &cur)))
        return st;
    tx_xb cb = {.x = x}, *c = &cb;
    tx_tensor mask = {0}, y = {0};
    for (int a = 0; a < rank && !c->st; a++) {
        double s0 = tx_hval_get(roi, a), e0 = tx_hval_get(roi, rank + a);
        int64_t len = in[a], lo = out[a];
        if (lo == len && s0 == 0 && e0 == 1)
            continue;
        if (lo < 1 || lo > (1 << 24) || len < 1) {
            c->st = tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %d: %lld -> %lld elements", a,
                              (long long)len, (long long)lo);
            break;
        }
        int nt = mode == TX_RESIZE_NEAREST ? 1 : 2;
        int64_t *ix = malloc(sizeof(int64_t) * (size_t)(lo * 2));
        float *w = malloc(sizeof(float) * (size_t)(lo * 3));
        if (!ix || !w) {
            free(ix);
            free(w);
            c->st = tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        float *valid = w + 2 * lo;
        bool any_out = false;
        for (int64_t o = 0; o < lo; o++) {
            double v = crop_coord(o, len, lo, s0, e0);
            valid[o] = v >= 0 && v <= (double)(len - 1);
            any_out |= !valid[o];
            double vc = v < 0 ? 0 : v > (double)(len - 1) ? (double)(len - 1) : v;
            if (nt == 1) {
                int64_t k = crop_nearest(vc, nm);
                ix[o] = k < 0 ? 0 : k >= len ? len - 1 : k;
                w[o] = 1;
                continue;
            }
            int64_t x1 = (int64_t)floor(vc), x2;
            x1 = x1 >= len - 1 ? len - 1 : x1;
            x2 = x1 + 1 >= len ? len - 1 : x1 + 1;
            double d1 = fabs(vc - (double)x1), d2 = fabs(vc - (double)x2);
            if (x1 == x2)
                d1 = d2 = 0.5;
            ix[o] = x1;
            ix[lo + o] = x2;
            w[o] = (float)d2;
            w[lo + o] = (float)d1;
        }
        int64_t ws[TX_MAX_RANK];
        for (int i = 0; i < rank; i++)
            ws[i] = i == a ? lo : 1;
        tx_tensor acc = {0};
        for (int t = 0; t < nt && !c->st; t++) {
            tx_tmp_list l = {0};
            tx_tensor ti = {0};
            c->st = tx_x_upload_ints(x, 1, &lo, ix + t * lo, &l, &ti);
            tx_tensor g = tx_xb_gather(c, cur, ti, a);
            tx_tmps_free(x, &l);
            tx_tensor wt = {0};
            if (nt > 1)
                wt = tx_xb_const(c, 1, &lo, TX_DTYPE_FLOAT32, w + t * lo);
            if (nt > 1 && !c->st)
                wt = tx_xb_reshape(c, wt, rank, ws);
            tx_tensor term = nt > 1 ? tx_xb_binary(c, TX_OP_MUL, g, wt) : g;
            acc = acc.id ? tx_xb_binary(c, TX_OP_ADD, acc, term) : term;
        }
        if (any_out && !c->st) {
            tx_tensor m = tx_xb_const(c, 1, &lo, TX_DTYPE_FLOAT32, valid);
            m = tx_xb_reshape(c, m, rank, ws);
            mask = mask.id ? tx_xb_binary(c, TX_OP_MUL, mask, m) : m;
        }
        free(ix);
        free(w);
        cur = acc;
    }
    if (mask.id)
        cur = tx_xb_where(c, mask, cur, tx_xb_scalar(c, ev));
    st = c->st ? c->st : tx_identity(x->ctx, cur, &y);
    tx_xb_free(c);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"GridSample", exec_grid_sample, NULL, 0, 2, 2, 0},
    {"RoiAlign", exec_roi_align, NULL, 0, 3, 3, 6},
};

const tx_onnx_family tx_onnx_ops_sample = {k_ops, TX_COUNTOF(k_ops)};
