/* ONNX Resize and Upsample. */
#include <math.h>
#include <string.h>

#include "common.h"

/* Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (7: scales attribute; 9: X, scales). */
static tx_status exec_resize(tx_xnode *x) {
    bool up = strcmp(x->node->op_type, "Upsample") == 0;
    bool v10 = up || x->opset < 11;
    tx_resize_desc d = {0};
    bool crop = false;
    const char *mode = tx_attr_str(x->node, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0)
        d.mode = TX_RESIZE_NEAREST;
    else if (strcmp(mode, "linear") == 0 || (up && strcmp(mode, "bilinear") == 0))
        d.mode = TX_RESIZE_LINEAR;
    else if (strcmp(mode, "cubic") == 0 && !v10)
        d.mode = TX_RESIZE_CUBIC;
    else
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", mode);
    if (v10) {
        d.coord = TX_RESIZE_ASYMMETRIC;
        d.nearest = TX_RESIZE_FLOOR;
    } else {
        static const char *coords[] = {"half_pixel", "asymmetric", "align_corners",
                                       "pytorch_half_pixel", "tf_half_pixel_for_nearest"};
        static const char *nears[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
        const char *c = tx_attr_str(x->node, "coordinate_transformation_mode", "half_pixel");
        if (strcmp(c, "tf_half_pixel_for_nn") == 0) /* the opset-10 era name */
            c = "tf_half_pixel_for_nearest";
        const char *nm = tx_attr_str(x->node, "nearest_mode", "round_prefer_floor");
        int ci = -1, ni = -1;
        crop = strcmp(c, "tf_crop_and_resize") == 0;
        if (crop)
            ci = 0; /* sample.c's composition */
        for (int i = 0; i < 5; i++)
            if (strcmp(c, coords[i]) == 0)
                ci = i;
        for (int i = 0; i < 4; i++)
            if (strcmp(nm, nears[i]) == 0)
                ni = i;
        if (ci < 0 || ni < 0)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "coordinate_transformation_mode \"%s\" / nearest_mode \"%s\"", c, nm);
        d.coord = (tx_resize_coord)ci;
        d.nearest = (tx_resize_nearest)ni;
        d.cubic_a = tx_attr_float(x->node, "cubic_coeff_a", -0.75f);
        d.exclude_outside = tx_attr_int(x->node, "exclude_outside", 0) != 0;
        if (tx_attr_int(x->node, "antialias", 0) != 0)
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "antialias is unsupported");
        if (strcmp(tx_attr_str(x->node, "keep_aspect_ratio_policy", "stretch"), "stretch"))
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                             "keep_aspect_ratio_policy \"%s\" is "
                             "unsupported",
                             tx_attr_str(x->node, "keep_aspect_ratio_policy", ""));
    }
    int rank;
    int64_t shape[TX_MAX_RANK], axes[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int na;
    st = tx_x_attr_ints(x, "axes", axes, TX_MAX_RANK, &na);
    if (st)
        return st;
    if (na < 0)
        na = tx_all_axes(rank, axes);
    for (int i = 0; i < na; i++)
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axes[i]);
    float scales[TX_MAX_RANK];
    int64_t sizes[TX_MAX_RANK];
    int nsc = -1, nsz = -1;
    if (up && x->opset < 9) {
        const tx_onnx_attr *a = tx_attr_find(x->node, "scales");
        if (!a || a->n_floats > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs a scales attribute");
        nsc = a->n_floats;
        if (nsc)
            memcpy(scales, a->floats, sizeof(float) * (size_t)nsc);
    } else {
        int si = v10 ? 1 : 2;
        if (tx_x_has(x, si)) {
            const tx_hval *h;
            st = tx_x_host(x, si, &h);
            if (st)
                return st;
            if (h->numel > TX_MAX_RANK)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "scales has %lld entries",
                                 (long long)h->numel);
            nsc = h->numel ? (int)h->numel : -1;
            for (int i = 0; i < nsc; i++)
                scales[i] = (float)tx_hval_get(h, i);
        }
        if (!v10 && tx_x_has(x, 3)) {
            st = tx_x_host_ints(x, 3, "sizes", sizes, TX_MAX_RANK, &nsz);
            if (st)
                return st;
            if (nsz == 0)
                nsz = -1;
        }
    }
    if ((nsc < 0) == (nsz < 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs exactly one of scales and sizes");
    if ((nsc >= 0 && nsc != na) || (nsz >= 0 && nsz != na))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "scales/sizes have %d entries for %d "
                         "axes",
                         nsc >= 0 ? nsc : nsz, na);
    for (int i = 0; i < na; i++) {
        int a = tx_norm_axis(axes[i], rank);
        if (nsc >= 0) {
            if (!(scales[i] > 0) || !isfinite(scales[i]))
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "scale %g", (double)scales[i]);
            d.scales[a] = scales[i];
        } else {
            if (sizes[i] <= 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "size %lld", (long long)sizes[i]);
            d.sizes[a] = sizes[i];
        }
    }
    if (nsz >= 0) /* sizes win where set: unlisted axes keep their length */
        for (int i = 0; i < rank; i++)
            if (!d.sizes[i])
                d.sizes[i] = shape[i];
    st = tx_x_float_input_only(x, 0);
    int64_t out[TX_MAX_RANK]; /* the output's shape */
    for (int i = 0; i < rank; i++)
        out[i] = d.sizes[i]    ? d.sizes[i]
                 : d.scales[i] ? (int64_t)floor((double)shape[i] * (double)d.scales[i])
                               : shape[i];
    if (!st && crop)
        return tx_onnx_resize_crop(x, d.mode, d.nearest, rank, shape, out);
    tx_tensor in, y, r = {0};
    if (!st)
        st = tx_x_dev(x, 0, &in);
    /* input 4: a residual Add fused by fuse.c, added where the resize
     * writes y if it has y's shape, else after it (a broadcast) */
    if (!st && tx_x_has(x, 4))
        st = tx_x_dev(x, 4, &r);
    bool after = false;
    if (!st && r.id) {
        int rr;
        int64_t rs[TX_MAX_RANK];
        tx_tensor_shape(x->ctx, r, &rr, rs, NULL);
        after = rr != rank || memcmp(rs, out, sizeof(int64_t) * (size_t)rank) != 0;
        if (!after)
            d.residual = r;
    }
    if (!st)
        st = tx_resize(x->ctx, in, &d, &y);
    if (!st && after) {
        tx_tensor z = y;
        st = tx_binary(x->ctx, TX_OP_ADD, z, r, &y);
        tx_tensor_destroy(x->ctx, z);
    }
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* Static output info: input 0's rank, and each dim from constant scales
 * (floor(dim * scale)) or sizes; unknown where they are computed at run
 * time or the input dim is unknown. Anything exec_resize would refuse is
 * its to report. */
static tx_status infer_resize(tx_xnode *x) {
    bool up = strcmp(x->node->op_type, "Upsample") == 0;
    bool v10 = up || x->opset < 11;
    int ex, rx;
    int64_t sx[TX_MAX_RANK], o[TX_MAX_RANK], axes[TX_MAX_RANK];
    tx_x_info(x, 0, &ex, &rx, sx);
    if (rx < 1 || (!v10 && strcmp(tx_attr_str(x->node, "coordinate_transformation_mode", ""),
                                  "tf_crop_and_resize") == 0))
        return TX_STATUS_OK;
    for (int i = 0; i < rx; i++)
        o[i] = -1;
    int na = -1;
    if (!v10 && tx_x_attr_ints(x, "axes", axes, TX_MAX_RANK, &na))
        return TX_STATUS_OK;
    if (na < 0)
        na = tx_all_axes(rx, axes);
    bool moved[TX_MAX_RANK] = {false};
    for (int i = 0; i < na; i++) {
        if (axes[i] < -rx || axes[i] >= rx)
            return TX_STATUS_OK;
        moved[tx_norm_axis(axes[i], rx)] = true;
    }
    const tx_hval *h = NULL;
    bool sizes = false;
    if (up && x->opset < 9) {
        const tx_onnx_attr *a = tx_attr_find(x->node, "scales");
        if (a && a->n_floats == na)
            for (int i = 0, j = 0; i < rx; i++)
                if (moved[i]) {
                    double sc = a->floats[j++];
                    o[i] = sx[i] >= 0 && sc > 0 ? (int64_t)floor((double)sx[i] * sc) : -1;
                }
    } else { /* constant scales (not empty), else constant sizes */
        const tx_hval *sc = NULL, *sz = NULL;
        if (tx_x_has(x, v10 ? 1 : 2) && tx_x_host(x, v10 ? 1 : 2, &sc) == TX_STATUS_OK &&
            !sc->numel)
            sc = NULL;
        if (!v10 && tx_x_has(x, 3) && tx_x_host(x, 3, &sz) == TX_STATUS_OK && !sz->numel)
            sz = NULL;
        h = sc ? sc : sz;
        sizes = !sc && sz;
    }
    if (h && h->numel == na)
        for (int i = 0, j = 0; i < rx; i++)
            if (moved[i]) {
                double v = tx_hval_get(h, j++);
                float f = (float)v;
                /* unknown where float arithmetic (onnxruntime's, a file's
                 * declared shapes) would give another length */
                if (sizes)
                    o[i] = v > 0 ? (int64_t)v : -1;
                else if (sx[i] >= 0 && f > 0 && isfinite(f) &&
                         floorf((float)sx[i] * f) == floor((double)sx[i] * (double)f))
                    o[i] = (int64_t)floor((double)sx[i] * (double)f);
            }
    for (int i = 0; i < rx; i++)
        if (!moved[i])
            o[i] = sx[i];
    tx_x_set_info(x, 0, ex, rx, o);
    return TX_STATUS_OK;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"Resize", exec_resize, infer_resize, 0, 1, 4, 14},
    {"Upsample", exec_resize, infer_resize, 0, 1, 2, 2},
};

const tx_onnx_family tx_onnx_ops_resize = {k_ops, TX_COUNTOF(k_ops)};
