/* RESIZE family: ONNX Resize (and Upsample), nearest, n-linear or cubic,
 * with the common coordinate transformation modes. Dims whose mapping is the
 * identity (same size, scale 1) are merged with their contiguous neighbours,
 * so an NCHW resize of H and W is a 3-dim problem and linear reads 4 taps,
 * cubic 16. */
#include <math.h>
#include <string.h>

#include "../internal.h"

static const char *const k_od[6] = {"p_od0", "p_od1", "p_od2", "p_od3", "p_od4", "p_od5"};
static const char *const k_in[6] = {"p_in0", "p_in1", "p_in2", "p_in3", "p_in4", "p_in5"};
static const char *const k_st[6] = {"p_st0", "p_st1", "p_st2", "p_st3", "p_st4", "p_st5"};
static const char *const k_sc[6] = {"p_sc0", "p_sc1", "p_sc2", "p_sc3", "p_sc4", "p_sc5"};

typedef struct rz_dim {
    int64_t od, in, st;
    float sc;
    float len; /* resized length as ONNX defines it: in * scale, unrounded */
    bool resampled;
} rz_dim;

/* Whether output coordinate o maps to input o for every o (then the dim is
 * a plain copy and may merge with its neighbours). */
static bool rz_identity(const tx_resize_desc *d, int64_t in, int64_t od, float sc) {
    if (od != in)
        return false;
    if (d->coord == TX_RESIZE_ALIGN_CORNERS)
        return (float)in * sc == (float)in; /* the unrounded length is in too */
    if (sc != 1.0f)
        return false;
    /* (o + 0.5) / 1: nearest rounding may still land on o + 1; linear blends */
    return d->coord != TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST ||
           (d->mode == TX_RESIZE_NEAREST && (d->nearest == TX_RESIZE_ROUND_PREFER_FLOOR ||
                                             d->nearest == TX_RESIZE_FLOOR));
}

tx_status tx_resize(tx_ctx *ctx, tx_tensor x, const tx_resize_desc *desc, tx_tensor *out) {
    const char *name = "resize";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out || !desc)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "resize: %s is NULL",
                       !out ? "out" : "desc");
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "resize: the GL context is lost");
    tx_slot *xs;
    tx_status st = tx_check_tensor(ctx, name, "x", x, &xs);
    if (st)
        return st;
    const tx_resize_desc d = *desc;
    if ((unsigned)d.mode >= TX_RESIZE_MODE_COUNT_ || (unsigned)d.coord >= TX_RESIZE_COORD_COUNT_ ||
        (unsigned)d.nearest >= TX_RESIZE_NEAREST_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "resize: unknown mode %d, coordinate mode %d or nearest mode %d",
                       (int)d.mode, (int)d.coord, (int)d.nearest);
    if (d.mode != TX_RESIZE_NEAREST && xs->dtype != TX_DTYPE_FLOAT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "resize: %s mode needs float32 x",
                       d.mode == TX_RESIZE_LINEAR ? "linear" : "cubic");
    if (!isfinite(d.cubic_a))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "resize: cubic_a is not finite");
    char xb[160];
    tx_shape_str(xb, sizeof xb, xs->rank, xs->shape);
    bool by_size = false;
    for (int i = 0; i < xs->rank; i++)
        by_size = by_size || d.sizes[i] != 0;
    int rank = xs->rank;
    int64_t oshape[TX_MAX_RANK], ist[TX_MAX_RANK];
    float sc[TX_MAX_RANK], len[TX_MAX_RANK];
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        ist[i] = s;
        s *= xs->shape[i];
    }
    for (int i = 0; i < rank; i++) {
        int64_t in = xs->shape[i];
        if (by_size) {
            if (d.sizes[i] < 0)
                return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                               "resize: sizes[%d] = %lld is negative (x %s)", i,
                               (long long)d.sizes[i], xb);
            oshape[i] = d.sizes[i] ? d.sizes[i] : in;
            sc[i] = in > 0 ? (float)oshape[i] / (float)in : 1.0f;
        } else {
            float f = d.scales[i] == 0.0f ? 1.0f : d.scales[i];
            if (!(f > 0.0f) || !isfinite(f) || (double)in * f > 1e9)
                return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                               "resize: scales[%d] = %g is not a usable positive scale (x %s)",
                               i, (double)d.scales[i], xb);
            sc[i] = f;
            oshape[i] = (int64_t)floor((double)in * (double)f);
        }
        len[i] = by_size ? (float)oshape[i] : (float)((double)in * (double)sc[i]);
        if (in == 0 && oshape[i] > 0)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "resize: dim %d of x %s is empty: nothing to sample", i, xb);
        if (sc[i] == 0.0f && oshape[i] > 0)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "resize: scale of dim %d is 0", i);
    }
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, rank, oshape, xs->dtype, &y);
    if (st)
        return st;
    xs = tx_slot_get(ctx, x);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel == 0) {
        *out = y;
        return TX_STATUS_OK;
    }
    /* dims outermost first: drop size-1 plain dims, merge contiguous plain ones */
    rz_dim dims[TX_MAX_RANK];
    int n = 0;
    for (int i = 0; i < rank; i++) {
        rz_dim e = {.od = oshape[i], .in = xs->shape[i], .st = ist[i], .sc = sc[i],
                    .len = len[i]};
        e.resampled = !rz_identity(&d, e.in, e.od, e.sc);
        if (!e.resampled) {
            if (e.od == 1)
                continue;
            if (n > 0 && !dims[n - 1].resampled && dims[n - 1].st == e.od * e.st) {
                dims[n - 1].od *= e.od;
                dims[n - 1].in = dims[n - 1].od;
                dims[n - 1].st = e.st;
                continue;
            }
        }
        dims[n++] = e;
    }
    if (n == 0)
        dims[n++] = (rz_dim){.od = 1, .in = 1, .st = 0, .sc = 1.0f, .len = 1.0f};
    /* resampled dim k takes digit pos of the shader's tap counter */
    int rmask = 0, nres = 0, pos = 0;
    for (int k = 0; k < n; k++)
        if (dims[n - 1 - k].resampled) {
            rmask |= 1 << k;
            pos |= nres++ << (3 * k);
        }
    int taps = d.mode == TX_RESIZE_NEAREST ? 1 : (d.mode == TX_RESIZE_LINEAR ? 2 : 4);
    if (taps == 4 && nres > 3) {
        tx_tensor_destroy(ctx, y);
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "resize: cubic mode resamples at most 3 dims (x %s has %d)", xb, nres);
    }
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_RESIZE, "resize", 1, 1);
    tx_req_define_int(&r, "TX_NDIM", n);
    tx_req_define_int(&r, "TX_RMASK", rmask);
    tx_req_define_int(&r, "TX_COORD", (int)d.coord);
    tx_req_define_int(&r, "TX_TAPS", taps);
    if (taps == 1) {
        tx_req_define_int(&r, "TX_NEAREST", (int)d.nearest);
    } else {
        tx_req_define_int(&r, "TX_LOG", taps == 2 ? 1 : 2);
        tx_req_define_int(&r, "TX_NRES", nres);
        tx_req_define_int(&r, "TX_POS", pos);
    }
    if (taps == 4) {
        tx_req_float(&r, "p_a", d.cubic_a == 0.0f ? -0.75f : d.cubic_a);
        if (d.exclude_outside)
            tx_req_define(&r, "TX_EXCLUDE", "1");
    }
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
    for (int k = 0; k < n; k++) {
        const rz_dim *e = &dims[n - 1 - k];
        tx_req_int(&r, k_od[k], (int)e->od);
        tx_req_int(&r, k_in[k], (int)e->in);
        tx_req_int(&r, k_st[k], (int)e->st);
        /* p_sc carries what the coordinate mode needs (resize.glsl) */
        float v = e->sc;
        if (d.coord == TX_RESIZE_ALIGN_CORNERS)
            v = e->len;
        else if (d.coord == TX_RESIZE_PYTORCH_HALF_PIXEL && e->len == 1.0f)
            v = 0.0f;
        tx_req_float(&r, k_sc[k], v);
    }
    st = tx_cache_bind(ctx, name, &r);
    if (!st) {
        const tx_texture *ins[1] = {&xs->st->tex};
        const tx_texture *outs[1] = {&ys->st->tex};
        st = tx_draw(ctx, name, ins, 1, outs, 1);
    }
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}
