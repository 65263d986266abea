/* CONV and CONV_TRANSPOSE families front: y = act(conv(x, w) + bias), NCHW;
 * validation and ONNX attribute resolution (auto_pad, output_shape) into a
 * tx_conv_call, kernels in engine/gpu/conv.c and engine/cpu/conv.c. Also the
 * window geometry that the pools share. */
#include <math.h>
#include <string.h>

#include "../device.h"

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* One spatial dim of a windowed op (conv or pool): fills the pads auto_pad
 * implies and returns the output size, or -1 when the window does not fit. */
static int64_t window_out(int64_t in, int k, int s, int d, tx_auto_pad ap, bool ceil_mode, int *pb,
                          int *pe) {
    int64_t dk = (int64_t)(k - 1) * d + 1;
    if (ap == TX_AUTO_PAD_SAME_UPPER || ap == TX_AUTO_PAD_SAME_LOWER) {
        int64_t out = (in + s - 1) / s;
        int64_t total = max64(0, (out - 1) * s + dk - in);
        int64_t small = total / 2;
        *pb = (int)(ap == TX_AUTO_PAD_SAME_UPPER ? small : total - small);
        *pe = (int)(total - *pb);
        return out;
    }
    if (ap == TX_AUTO_PAD_VALID)
        *pb = *pe = 0;
    int64_t span = in + *pb + *pe - dk;
    if (span < 0)
        return -1;
    int64_t out = (ceil_mode ? span + s - 1 : span) / s + 1;
    /* ceil_mode: the last window must start inside the input or its begin
     * padding (PyTorch's rule, which exporters rely on). */
    if (ceil_mode && (out - 1) * s >= in + *pb)
        out--;
    return out;
}

tx_status tx_window_geom(tx_ctx *ctx, const char *op, const tx_slot *x, const int kernel[2],
                         const int strides[2], const int dilations[2], const int pads[4],
                         tx_auto_pad auto_pad, bool ceil_mode, tx_window *g) {
    char xs[160];
    tx_shape_str(xs, sizeof xs, x->rank, x->shape);
    if (x->rank != 3 && x->rank != 4)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "%s: x %s must be [N, C, H, W] or [N, C, W] (2-D or 1-D)", op, xs);
    if ((unsigned)auto_pad >= TX_AUTO_PAD_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: auto_pad %d is not a tx_auto_pad", op,
                       (int)auto_pad);
    int nsp = x->rank - 2;
    /* 1-D runs as H = 1 with a 1-tall kernel; the attribute lists hold W's
     * values in their first entries. */
    int k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1}, pb[2] = {0, 0}, pe[2] = {0, 0};
    bool s_unset = true, d_unset = true;
    for (int i = 0; i < nsp; i++) {
        s_unset = s_unset && strides[i] == 0;
        d_unset = d_unset && dilations[i] == 0;
    }
    for (int i = 0; i < nsp; i++) {
        int j = i + 2 - nsp;
        k[j] = kernel[i];
        s[j] = s_unset ? 1 : strides[i];
        d[j] = d_unset ? 1 : dilations[i];
        pb[j] = pads[i];
        pe[j] = pads[i + nsp];
        if (s[j] <= 0 || d[j] <= 0 || k[j] <= 0)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "%s: x %s: spatial dim %d has stride %d, dilation %d, kernel %d "
                           "(all must be >= 1; all-zero strides/dilations mean 1)",
                           op, xs, i, s[j], d[j], k[j]);
        if (pb[j] < 0 || pe[j] < 0)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "%s: x %s: negative pads (%d, %d) on spatial dim %d", op, xs, pb[j],
                           pe[j], i);
    }
    memset(g, 0, sizeof *g);
    g->n = x->shape[0];
    g->c = x->shape[1];
    g->h = nsp == 2 ? x->shape[2] : 1;
    g->w = x->shape[x->rank - 1];
    int64_t in[2] = {g->h, g->w}, out[2];
    for (int j = 0; j < 2; j++) {
        out[j] = window_out(in[j], k[j], s[j], d[j], auto_pad, ceil_mode, &pb[j], &pe[j]);
        if (out[j] < 1)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: the %lld-wide window (kernel %d, dilation %d) does not fit x %s "
                           "padded by (%d, %d) on spatial dim %d",
                           op, (long long)((int64_t)(k[j] - 1) * d[j] + 1), k[j], d[j], xs, pb[j],
                           pe[j], j - (2 - nsp));
    }
    g->kh = k[0], g->kw = k[1], g->sh = s[0], g->sw = s[1], g->dh = d[0], g->dw = d[1];
    g->pt = pb[0], g->pl = pb[1], g->pb = pe[0], g->pr = pe[1];
    g->ho = out[0];
    g->wo = out[1];
    return TX_STATUS_OK;
}

static tx_status fail_shapes(tx_ctx *ctx, tx_status s, const char *op, const char *why,
                             const tx_slot *x, const tx_slot *w) {
    char a[160], b[160];
    tx_shape_str(a, sizeof a, x->rank, x->shape);
    tx_shape_str(b, sizeof b, w->rank, w->shape);
    return tx_fail(ctx, s, "%s: %s (x %s, w %s)", op, why, a, b);
}

/* Validates the operands and attributes and fills the call's geometry (and
 * the output shape). */
static tx_status conv_geom(tx_ctx *ctx, const char *op, bool transpose, const tx_slot *xs,
                           const tx_slot *ws, const tx_slot *bs, const tx_conv_desc *d,
                           tx_conv_call *p, int *orank, int64_t oshape[TX_MAX_RANK]) {
    memset(p, 0, sizeof *p);
    if (xs->dtype != TX_DTYPE_FLOAT32 || ws->dtype != TX_DTYPE_FLOAT32 ||
        (bs && bs->dtype != TX_DTYPE_FLOAT32))
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: operands must be float32", op);
    if (xs->rank != 3 && xs->rank != 4)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op,
                           "x must be [N, C, H, W] or [N, C, W] (2-D or 1-D conv)", xs, ws);
    if (ws->rank != xs->rank)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op, "w must have the rank of x", xs, ws);
    if (d->group < 0)
        return fail_shapes(ctx, TX_STATUS_INVALID_ARGUMENT, op, "group must be >= 1", xs, ws);
    int64_t groups = d->group ? d->group : 1;
    int64_t c = xs->shape[1];
    if (c % groups)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op,
                           "input channels do not divide by group", xs, ws);
    int64_t cg = c / groups, mg, m;
    if (!transpose) {
        m = ws->shape[0];
        if (ws->shape[1] != cg || m % groups) {
            char why[160];
            snprintf(why, sizeof why,
                     "w must be [M, C/group = %lld, ...] with M divisible by group %lld",
                     (long long)cg, (long long)groups);
            return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op, why, xs, ws);
        }
        mg = m / groups;
    } else {
        if (ws->shape[0] != c) {
            char why[160];
            snprintf(why, sizeof why, "w must be [C = %lld, M/group, ...]", (long long)c);
            return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op, why, xs, ws);
        }
        mg = ws->shape[1];
        m = mg * groups;
    }
    if (bs && (bs->rank != 1 || bs->shape[0] != m)) {
        char b[160], why[200];
        tx_shape_str(b, sizeof b, bs->rank, bs->shape);
        snprintf(why, sizeof why, "bias %s must be [M = %lld]", b, (long long)m);
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op, why, xs, ws);
    }
    tx_op act = d->activation;
    tx_status ast = tx_check_act(ctx, op, act, true, d->lo, d->hi, d->alpha, d->beta);
    if (ast)
        return ast;
    if (d->x_affine && (!isfinite(d->x_scale) || !isfinite(d->x_shift)))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: x_affine's x_scale %g and x_shift %g must be finite", op,
                       (double)d->x_scale, (double)d->x_shift);
    int nsp = xs->rank - 2;
    int kernel[2] = {(int)ws->shape[2], nsp == 2 ? (int)ws->shape[3] : 0};
    if (ws->shape[2] > INT32_MAX || ws->shape[xs->rank - 1] > INT32_MAX)
        return fail_shapes(ctx, TX_STATUS_TOO_LARGE, op, "kernel too large", xs, ws);
    tx_window g;
    if (!transpose) {
        tx_status st = tx_window_geom(ctx, op, xs, kernel, d->strides, d->dilations, d->pads,
                                      d->auto_pad, false, &g);
        if (st)
            return st;
    } else {
        /* Validate like a conv's attributes (kernel 1 always fits), then
         * derive ConvTranspose's own geometry. */
        int ones[2] = {1, 1};
        tx_status st = tx_window_geom(ctx, op, xs, ones, d->strides, d->dilations, d->pads,
                                      TX_AUTO_PAD_NOTSET, false, &g);
        if (st)
            return st;
        if ((unsigned)d->auto_pad >= TX_AUTO_PAD_COUNT_)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: auto_pad %d is not a tx_auto_pad",
                           op, (int)d->auto_pad);
        int k2[2] = {nsp == 2 ? kernel[0] : 1, nsp == 2 ? kernel[1] : kernel[0]};
        int s2[2] = {g.sh, g.sw}, d2[2] = {g.dh, g.dw};
        int pb2[2] = {g.pt, g.pl}, pe2[2] = {g.pb, g.pr}, op2[2] = {0, 0}, os2[2] = {0, 0};
        bool has_os = false;
        for (int i = 0; i < nsp; i++) {
            int j = i + 2 - nsp;
            op2[j] = d->output_padding[i];
            os2[j] = d->output_shape[i];
            has_os = has_os || d->output_shape[i] != 0;
        }
        int64_t in[2] = {g.h, g.w};
        for (int j = 0; j < 2; j++) {
            if (op2[j] < 0 || os2[j] < 0 || (op2[j] >= s2[j] && op2[j] >= d2[j]))
                return fail_shapes(ctx, TX_STATUS_INVALID_ARGUMENT, op,
                                   "output_padding must be smaller than stride or dilation, "
                                   "output_shape non-negative",
                                   xs, ws);
            int64_t dk = (int64_t)(k2[j] - 1) * d2[j] + 1;
            int64_t full = (int64_t)s2[j] * (in[j] - 1) + op2[j] + dk;
            bool same =
                d->auto_pad == TX_AUTO_PAD_SAME_UPPER || d->auto_pad == TX_AUTO_PAD_SAME_LOWER;
            if (has_os || same) {
                /* As onnx/reference/ops/op_conv_transpose.py derives them. */
                int64_t want = has_os ? (nsp == 2 || j == 1 ? os2[j] : 1) : in[j] * s2[j];
                /* total < 0 (output_shape past the full result) pads with
                 * zeros; halves round down as in Python. */
                int64_t total = full - want;
                int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
                bool upper = d->auto_pad == TX_AUTO_PAD_SAME_UPPER;
                pb2[j] = (int)(upper ? half : total - half);
                pe2[j] = (int)(total - pb2[j]);
            } else if (d->auto_pad == TX_AUTO_PAD_VALID) {
                pb2[j] = pe2[j] = 0;
            }
            int64_t out = full - pb2[j] - pe2[j];
            if (out < 1)
                return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op,
                                   "pads remove the whole output", xs, ws);
            if (j == 0)
                g.ho = out;
            else
                g.wo = out;
        }
        g.kh = k2[0];
        g.kw = k2[1];
        g.pt = pb2[0];
        g.pl = pb2[1];
    }
    p->transpose = transpose;
    p->n = g.n, p->c = c, p->h = g.h, p->w = g.w, p->m = m;
    p->groups = groups, p->cg = cg, p->mg = mg;
    p->kh = g.kh, p->kw = g.kw, p->sh = g.sh, p->sw = g.sw, p->dh = g.dh, p->dw = g.dw;
    p->pt = g.pt, p->pl = g.pl;
    p->ho = g.ho, p->wo = g.wo;
    p->xa = d->x_affine;
    p->xs = d->x_scale;
    p->xb = d->x_shift;
    p->act = act;
    float ab[2];
    tx_act_floats(act, d->lo, d->hi, d->alpha, d->beta, ab);
    p->lo = ab[0];
    p->hi = ab[1];
    *orank = xs->rank;
    oshape[0] = p->n;
    oshape[1] = m;
    if (nsp == 2)
        oshape[2] = p->ho;
    oshape[xs->rank - 1] = p->wo;
    return TX_STATUS_OK;
}

/* act(conv + bias + residual) as separate ops, under a recording tape (so
 * the residual gets its gradient). */
static tx_status conv_residual_parts(tx_ctx *ctx, bool transpose, tx_tensor x, tx_tensor w,
                                     const tx_conv_desc *desc, tx_tensor *out) {
    tx_conv_desc d = *desc;
    d.residual = (tx_tensor){0};
    d.activation = TX_OP_NONE;
    tx_tensor z;
    tx_status st = transpose ? tx_conv_transpose(ctx, x, w, &d, &z) : tx_conv(ctx, x, w, &d, &z);
    float ab[2];
    tx_act_floats(desc->activation, desc->lo, desc->hi, desc->alpha, desc->beta, ab);
    return st ? st : tx_residual_act(ctx, z, desc->residual, desc->activation, ab[0], ab[1], out);
}

/* A residual_pad residual r [N, Cr, ...] of y's shape but for its Cr <= M
 * channels (1 <= Cr; on x's device, float32). */
static tx_status check_padded_residual(tx_ctx *ctx, const char *op, tx_tensor r, const tx_slot *x,
                                       int rank, const int64_t *shape, tx_slot **rs) {
    tx_status st = tx_check_input(ctx, op, "residual", r, true, rs);
    if (st)
        return st;
    if ((*rs)->st->dev != x->st->dev)
        return tx_check_residual(ctx, op, r, x, rank, shape, rs); /* its device message */
    bool ok =
        (*rs)->rank == rank && rank >= 2 && (*rs)->shape[1] >= 1 && (*rs)->shape[1] <= shape[1];
    for (int i = 0; i < rank && ok; i++)
        ok = i == 1 || (*rs)->shape[i] == shape[i];
    if (ok)
        return TX_STATUS_OK;
    char want[160], got[160];
    tx_shape_str(want, sizeof want, rank, shape);
    tx_shape_str(got, sizeof got, (*rs)->rank, (*rs)->shape);
    return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                   "%s: residual %s must have y's shape %s but for 1 to %lld channels "
                   "(residual_pad)",
                   op, got, want, rank >= 2 ? (long long)shape[1] : 0LL);
}

/* The conv with its residual_pad residual padded with zeros first (tx_pad:
 * recorded by a tape, so the residual gets its gradient): under a
 * recording tape, and on the GPU where the residual is no prefix of y in
 * whole texels (N > 1, a partial texel). */
static tx_status conv_padded_residual_parts(tx_ctx *ctx, bool transpose, tx_tensor x, tx_tensor w,
                                            const tx_conv_desc *desc, const tx_slot *rs, int64_t m,
                                            tx_tensor *out) {
    tx_pad_desc pd = {.mode = TX_PAD_CONSTANT};
    pd.end[1] = m - rs->shape[1];
    tx_tensor r;
    tx_status st = tx_pad(ctx, desc->residual, &pd, &r);
    if (st)
        return st;
    tx_conv_desc d = *desc;
    d.residual = r;
    d.residual_pad = false;
    st = transpose ? tx_conv_transpose(ctx, x, w, &d, out) : tx_conv(ctx, x, w, &d, out);
    tx_tensor_destroy(ctx, r);
    return st;
}

/* conv(x · x_scale + x_shift) with the affine as an op of its own: where
 * the kernel does not apply it (a transposed conv, the CPU device) and under
 * a recording tape (the affine gets its gradient). */
static tx_status conv_x_affine_parts(tx_ctx *ctx, bool transpose, tx_tensor x, tx_tensor w,
                                     const tx_conv_desc *desc, tx_tensor *out) {
    tx_conv_desc d = *desc;
    d.x_affine = false;
    tx_tensor t;
    tx_status st = tx_activation(ctx, TX_OP_AFFINE, x, desc->x_scale, desc->x_shift, &t);
    if (st)
        return st;
    st = transpose ? tx_conv_transpose(ctx, t, w, &d, out) : tx_conv(ctx, t, w, &d, out);
    tx_tensor_destroy(ctx, t);
    return st;
}

/* parts: a residual runs as separate ops (a recording tape) */
static tx_status conv_run(tx_ctx *ctx, bool transpose, tx_tensor x, tx_tensor w,
                          const tx_conv_desc *desc, bool parts, tx_tensor *out) {
    const char *op = transpose ? "conv_transpose" : "conv";
    tx_conv_desc d = desc ? *desc : (tx_conv_desc){0};
    tx_slot *s[3];
    tx_status st = tx_op_begin_operands(ctx, op, out, (const char *const[]){"x", "w", "bias"}, x, w,
                                        d.bias, s);
    if (st)
        return st;
    tx_slot *xs = s[0], *ws = s[1], *bs = s[2], *rs = NULL;
    tx_conv_call c;
    int orank = 0;
    int64_t oshape[TX_MAX_RANK];
    st = conv_geom(ctx, op, transpose, xs, ws, bs, &d, &c, &orank, oshape);
    if (!st && d.residual.id)
        st = d.residual_pad ? check_padded_residual(ctx, op, d.residual, xs, orank, oshape, &rs)
                            : tx_check_residual(ctx, op, d.residual, xs, orank, oshape, &rs);
    if (st)
        return st;
    /* the GPU kernels add a residual covering a prefix of y in whole
     * texels; the CPU's, each image's first channels */
    if (rs && d.residual_pad && rs->shape[1] < oshape[1] &&
        (parts || (xs->st->dev == TX_DEVICE_GPU && (oshape[0] != 1 || rs->numel % 4 != 0))))
        return conv_padded_residual_parts(ctx, transpose, x, w, &d, rs, oshape[1], out);
    if (d.x_affine && (transpose || tx_tape_recording(ctx) || xs->st->dev != TX_DEVICE_GPU))
        return conv_x_affine_parts(ctx, transpose, x, w, &d, out);
    if (rs && parts)
        return conv_residual_parts(ctx, transpose, x, w, &d, out);
    tx_device dev;
    tx_tensor y;
    /* x may stay a matmul's row tiles: the GPU kernel reads them where its
     * route can (tx_gpu_conv) */
    st = tx_op_device_keep(ctx, op, (const tx_slot *[]){xs, ws, bs, rs}, 4, 1u, &dev);
    if (!st)
        st = tx_tensor_alloc(ctx, op, dev, orank, oshape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    c.x = tx_slot_get(ctx, x);
    c.wt = tx_slot_get(ctx, w);
    c.bias = d.bias.id ? tx_slot_get(ctx, d.bias) : NULL;
    c.resid = d.residual.id ? tx_slot_get(ctx, d.residual) : NULL;
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, conv, c), y, out);
}

tx_status tx_conv_nc_swapped(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *d,
                             const int cut[2], tx_tensor *out) {
    const char *op = "conv (transposed operands)";
    TX_ASSERT(d->group <= 1 && !d->bias.id && !d->residual.id && d->activation == TX_OP_NONE);
    tx_slot *s[2];
    tx_status st = tx_check_inputs(ctx, op, 2, (const char *const[]){"x", "w"},
                                   (const tx_tensor[]){x, w}, true, s);
    if (st)
        return st;
    if (s[0]->rank != 4 || s[1]->rank != 4)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, op, "x and w must be 4-D", s[0], s[1]);
    tx_slot xt = *s[0], wt = *s[1]; /* the shapes the conv sees */
    xt.shape[0] = s[0]->shape[1], xt.shape[1] = s[0]->shape[0];
    wt.shape[0] = s[1]->shape[1], wt.shape[1] = s[1]->shape[0];
    tx_conv_call c;
    int orank = 0;
    int64_t oshape[TX_MAX_RANK];
    st = conv_geom(ctx, op, false, &xt, &wt, NULL, d, &c, &orank, oshape);
    if (st)
        return st;
    if (cut[0] < 1 || cut[1] < 1 || cut[0] > c.ho || cut[1] > c.wo)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "%s: cut %dx%d is not inside the %lldx%lld output", op, cut[0], cut[1],
                       (long long)c.ho, (long long)c.wo);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, op, (const tx_slot *[]){s[0], s[1]}, 2, 4,
                      (const int64_t[]){c.m, c.n, cut[0], cut[1]}, TX_DTYPE_FLOAT32, &dev, &y);
    if (st)
        return st;
    c.swap_nc = true;
    c.yh = cut[0];
    c.yw = cut[1];
    c.x = tx_slot_get(ctx, x);
    c.wt = tx_slot_get(ctx, w);
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, conv, c), y, out);
}

tx_status tx_conv_out_shape(tx_ctx *ctx, bool transpose, int rank, const int64_t *xshape,
                            const int64_t *wshape, int64_t bias_len, const tx_conv_desc *d,
                            int64_t *oshape) {
    tx_slot xs = {.rank = rank, .dtype = TX_DTYPE_FLOAT32};
    tx_slot ws = xs, bs = {.rank = 1, .shape = {bias_len}, .dtype = TX_DTYPE_FLOAT32};
    memcpy(xs.shape, xshape, sizeof(int64_t) * (size_t)rank);
    memcpy(ws.shape, wshape, sizeof(int64_t) * (size_t)rank);
    tx_conv_call c;
    int orank;
    return conv_geom(ctx, transpose ? "conv_transpose" : "conv", transpose, &xs, &ws,
                     bias_len >= 0 ? &bs : NULL, d, &c, &orank, oshape);
}

/* Tells a recording tape about a conv (bias as a third input). */
static tx_status noted(tx_ctx *ctx, tx_status st, tx_op op, tx_tensor x, tx_tensor w,
                       const tx_conv_desc *desc, const tx_tensor *out) {
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs at = {0};
        if (desc)
            at.conv = *desc;
        tx_tensor bias = at.conv.bias;
        at.conv.bias = (tx_tensor){0};
        tx_tape_note(ctx, op, (tx_tensor[]){x, w, bias}, bias.id ? 3 : 2, &at, NULL, *out,
                     (tx_tensor){0});
    }
    return st;
}

/* a residual or x_affine under a tape: conv, add, activation and affine
 * are recorded (not noted here) */
static bool conv_parts(tx_ctx *ctx, const tx_conv_desc *desc) {
    /* (a residual_pad residual is padded first: conv_run) */
    return desc && (desc->residual.id || desc->x_affine) && tx_tape_recording(ctx);
}

tx_status tx_conv(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc, tx_tensor *out) {
    bool parts = conv_parts(ctx, desc);
    tx_status st = conv_run(ctx, false, x, w, desc, parts, out);
    return parts ? st : noted(ctx, st, TX_OP_CONV, x, w, desc, out);
}

tx_status tx_conv_transpose(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc,
                            tx_tensor *out) {
    bool parts = conv_parts(ctx, desc);
    tx_status st = conv_run(ctx, true, x, w, desc, parts, out);
    return parts ? st : noted(ctx, st, TX_OP_CONV_TRANSPOSE, x, w, desc, out);
}
