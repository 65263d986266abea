/* RESIZE family front: ONNX Resize (and Upsample), nearest, n-linear or
 * cubic, with the common coordinate transformation modes. Dims whose
 * mapping is the identity (same size, scale 1) are merged with their
 * contiguous neighbours, so an NCHW resize of H and W is a 3-dim problem
 * and linear reads 4 taps, cubic 16. Kernels in engine/gpu/resize.c and
 * engine/cpu/resize.c. */
#include <math.h>
#include <string.h>

#include "../device.h"

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
           (d->mode == TX_RESIZE_NEAREST &&
            (d->nearest == TX_RESIZE_ROUND_PREFER_FLOOR || d->nearest == TX_RESIZE_FLOOR));
}

/* A residual for resize(x) of shape `shape`: that shape (tx_check_residual:
 * no broadcast, float32, x's device), and x float32. */
static tx_status check_residual(tx_ctx *ctx, tx_tensor r, const tx_slot *xs, int rank,
                                const int64_t *shape) {
    tx_slot *rs;
    tx_status st = tx_check_residual(ctx, "resize", r, xs, rank, shape, &rs);
    if (st || xs->dtype == TX_DTYPE_FLOAT32)
        return st;
    char xb[160];
    tx_shape_str(xb, sizeof xb, xs->rank, xs->shape);
    return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH,
                   "resize: a residual needs float32 x (x %s is int32)", xb);
}

static tx_status resize_run(tx_ctx *ctx, tx_tensor x, const tx_resize_desc *desc, tx_tensor *out) {
    const char *name = "resize";
    tx_slot *xs;
    tx_status st = tx_check_arg(ctx, name, "out", out != NULL);
    if (!st)
        st = tx_check_arg(ctx, name, "desc", desc != NULL);
    if (!st)
        st = tx_check_tensor(ctx, name, "x", x, &xs);
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
                               "resize: scales[%d] = %g is not a usable positive scale (x %s)", i,
                               (double)d.scales[i], xb);
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
    /* dims outermost first: drop size-1 plain dims, merge contiguous plain ones */
    tx_resize_call c = {.mode = d.mode,
                        .coord = d.coord,
                        .nearest = d.nearest,
                        .cubic_a = d.cubic_a == 0.0f ? -0.75f : d.cubic_a,
                        .exclude_outside = d.exclude_outside};
    tx_resize_dim *dims = c.d;
    int n = 0;
    bool empty = false;
    for (int i = 0; i < rank; i++) {
        empty = empty || oshape[i] == 0;
        tx_resize_dim e = {
            .od = oshape[i], .in = xs->shape[i], .st = ist[i], .sc = sc[i], .len = len[i]};
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
        c.nres += e.resampled;
        dims[n++] = e;
    }
    if (n == 0)
        dims[n++] = (tx_resize_dim){.od = 1, .in = 1, .st = 0, .sc = 1.0f, .len = 1.0f};
    c.n = n;
    if (!empty && d.mode == TX_RESIZE_CUBIC && c.nres > 3)
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "resize: cubic mode resamples at most 3 dims (x %s has %d)", xb, c.nres);
    if (d.residual.id && (st = check_residual(ctx, d.residual, xs, rank, oshape)))
        return st;
    tx_device dev;
    tx_tensor y;
    /* the residual among the inputs: a matmul's row tiles are made rows */
    const tx_slot *rs = d.residual.id ? tx_slot_get(ctx, d.residual) : NULL;
    st = tx_op_output(ctx, name, (const tx_slot *[]){xs, rs}, 2, rank, oshape, xs->dtype, &dev, &y);
    if (st)
        return st;
    c.x = tx_slot_get(ctx, x);
    c.resid = d.residual.id ? tx_slot_get(ctx, d.residual) : NULL;
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, resize, c), y, out);
}

/* resize(x) + residual as two ops, under a recording tape (so the residual
 * gets its gradient), the residual checked as resize_run checks it (y's
 * shape, not a broadcast) */
static tx_status resize_residual_parts(tx_ctx *ctx, tx_tensor x, const tx_resize_desc *desc,
                                       tx_tensor *out) {
    tx_resize_desc d = *desc;
    d.residual = (tx_tensor){0};
    tx_tensor z;
    tx_status st = tx_resize(ctx, x, &d, &z);
    if (st)
        return st;
    const tx_slot *zs = tx_slot_get(ctx, z);
    st = check_residual(ctx, desc->residual, tx_slot_get(ctx, x), zs->rank, zs->shape);
    if (!st)
        st = tx_binary(ctx, TX_OP_ADD, z, desc->residual, out);
    tx_tensor_destroy(ctx, z);
    return st;
}

tx_status tx_resize(tx_ctx *ctx, tx_tensor x, const tx_resize_desc *desc, tx_tensor *out) {
    if (desc && desc->residual.id && tx_tape_recording(ctx))
        return resize_residual_parts(ctx, x, desc, out);
    tx_status st = resize_run(ctx, x, desc, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs a = {0};
        a.move.resize = *desc;
        tx_tape_note(ctx, TX_OP_RESIZE, &x, 1, &a, NULL, *out, (tx_tensor){0});
    }
    return st;
}
