/* CONV and CONV_TRANSPOSE families: y = act(conv(x, w) + bias), NCHW.
 *
 * Tensors are row-major NCHW (4 x positions per texel), which is the wrong
 * shape for a fast conv: a fragment wants 4 channels per fetch. So a conv is
 * four draws of glsl-templates/conv.glsl: pack the input into a zero-padded
 * 4-channels-per-texel copy, pack the weights into mat4 blocks, compute
 * 4 output channels × 4 positions per fragment into four render targets, and
 * unpack the tiles into NCHW. The packs cost one pass over the input and the
 * weights; the compute pass reads each of them many times.
 *
 * ConvTranspose runs through the same passes as a stride-1 conv over the
 * input upsampled by the stride (the pack pass inserts the zeros), with
 * flipped, transposed weights and padding dk - 1 - pad. */
#include <math.h>
#include <string.h>

#include "../internal.h"

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

/* Everything the four passes need, in the terms of the conv being computed
 * (for ConvTranspose: the equivalent stride-1 conv over the upsampled input). */
typedef struct conv_plan {
    bool depthwise, transpose, slide;
    int64_t n, c, h, w, m, groups, cg, mg;
    int kh, kw, sh, sw, dh, dw; /* kernel, strides, dilations */
    int ut, ul;                 /* padded position of source (0, 0) */
    int uh, uw;                 /* upsampling (ConvTranspose strides) */
    int tp, tc;                 /* output positions, channels per fragment: 4 or 8 */
    int64_t ho, wo, hp, wp, xt;
    int64_t nb, ib, ob, nob; /* input blocks per batch, per group; output blocks */
    int64_t nobt;            /* output tiles along channels: nob / (tc / 4) */
} conv_plan;

static tx_status fail_shapes(tx_ctx *ctx, tx_status s, const char *op, const char *why,
                             const tx_slot *x, const tx_slot *w) {
    char a[160], b[160];
    tx_shape_str(a, sizeof a, x->rank, x->shape);
    tx_shape_str(b, sizeof b, w->rank, w->shape);
    return tx_fail(ctx, s, "%s: %s (x %s, w %s)", op, why, a, b);
}

/* Validates the operands and attributes and fills the plan (and the output
 * shape). */
static tx_status conv_plan_make(tx_ctx *ctx, const char *op, bool transpose, int max_targets,
                                const tx_slot *xs, const tx_slot *ws, const tx_slot *bs,
                                const tx_conv_desc *d, conv_plan *p, int *orank,
                                int64_t oshape[TX_MAX_RANK]) {
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
    if (act != TX_OP_NONE && tx_op_family(act) != TX_FAMILY_UNARY && act != TX_OP_CLIP)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: activation %d is not a unary op or clip", op, (int)act);
    if (act == TX_OP_CLIP && (isnan(d->lo) || isnan(d->hi) || d->lo > d->hi))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: clip bounds [%g, %g] are not ordered",
                       op, (double)d->lo, (double)d->hi);
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
        p->uh = p->uw = 1;
        p->ut = g.pt;
        p->ul = g.pl;
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
            /* The equivalent conv's begin padding: dk - 1 - pad (may be
             * negative: the pack pass then crops). */
            if (j == 0)
                p->ut = (int)(dk - 1 - pb2[j]);
            else
                p->ul = (int)(dk - 1 - pb2[j]);
        }
        p->uh = g.sh;
        p->uw = g.sw;
        g.kh = k2[0];
        g.kw = k2[1];
        g.sh = g.sw = 1;
    }
    p->transpose = transpose;
    p->n = g.n, p->c = c, p->h = g.h, p->w = g.w, p->m = m;
    p->groups = groups, p->cg = cg, p->mg = mg;
    p->kh = g.kh, p->kw = g.kw, p->sh = g.sh, p->sw = g.sw, p->dh = g.dh, p->dw = g.dw;
    p->ho = g.ho, p->wo = g.wo;
    p->depthwise = cg == 1 && mg == 1;
    p->slide = p->sw == p->dw && p->kw > 1;
    /* 8 positions per fragment halve the weight fetches per FMA. They need 8
     * render targets and make the unpack pass pick from 8 textures, whose
     * divergent branches cost more than the tile saves on depthwise. On
     * llvmpipe (2 busy cores, best of runs): dense 3x3 64->64 at 56x56,
     * 33 -> 28 ms per call; 1x1 32->64 at 112x112, compute 10 -> 7 ms,
     * unpack 2.1 -> 3.4 ms; depthwise 32 at 112x112, 5.1 -> 5.9 ms. Rows much
     * narrower than 8 would waste the tile. */
    p->tp = !p->depthwise && max_targets >= 8 && (p->wo % 8 == 0 || p->wo > 16) ? 8 : 4;
    /* A 1x1 conv has no windows to overlap, so 8 channels x 4 positions cost
     * the compute pass what 4 x 8 do, and the unpack pass then picks its
     * texture by channel, which neighbouring fragments share. */
    p->tc = 4;
    if (!p->depthwise && max_targets >= 8 && p->kh * p->kw == 1 && groups == 1) {
        p->tc = 8;
        p->tp = 4;
    }
    p->xt = (p->wo + p->tp - 1) / p->tp;
    p->hp = (p->ho - 1) * p->sh + (int64_t)(p->kh - 1) * p->dh + 1;
    p->wp = (p->xt * p->tp - 1) * p->sw + (int64_t)(p->kw - 1) * p->dw + 1 + (p->slide ? p->dw : 0);
    if (p->depthwise) {
        p->nb = (c + 3) / 4;
        p->nob = p->nb;
    } else {
        p->ib = (cg + 3) / 4;
        p->ob = (mg + 3) / 4;
        p->nb = groups * p->ib;
        p->nob = groups * p->ob;
    }
    p->nobt = p->tc == 8 ? (p->nob + 1) / 2 : p->nob;
    *orank = xs->rank;
    oshape[0] = p->n;
    oshape[1] = m;
    if (nsp == 2)
        oshape[2] = p->ho;
    oshape[xs->rank - 1] = p->wo;
    return TX_STATUS_OK;
}

/* Sets what every pass shares: the structural defines and the shapes. */
static void req_common(tx_program_req *r, const conv_plan *p, int pass, int n_in, int n_out) {
    tx_req_init(r, p->transpose ? TX_FAMILY_CONV_TRANSPOSE : TX_FAMILY_CONV, "conv", n_in, n_out);
    tx_req_define_int(r, "TX_PASS", pass);
    tx_req_define_int(r, "TX_TP", p->tp);
    tx_req_define_int(r, "TX_TC", p->tc);
    if (p->depthwise)
        tx_req_define(r, "TX_DW", "1");
}

static tx_status pass_draw(tx_ctx *ctx, const char *op, const tx_program_req *r,
                           const tx_texture *const *ins, int n_in, const tx_texture *const *outs,
                           int n_out) {
    tx_status st = tx_cache_bind(ctx, op, r);
    return st ? st : tx_draw(ctx, op, ins, n_in, outs, n_out);
}

static tx_status conv_run(tx_ctx *ctx, bool transpose, tx_tensor x, tx_tensor w,
                          const tx_conv_desc *desc, tx_tensor *out) {
    const char *op = transpose ? "conv_transpose" : "conv";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: out is NULL", op);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_conv_desc d = desc ? *desc : (tx_conv_desc){0};
    tx_slot *xs, *ws, *bs = NULL;
    tx_status st = tx_check_tensor(ctx, op, "x", x, &xs);
    if (!st)
        st = tx_check_tensor(ctx, op, "w", w, &ws);
    if (!st && d.bias.id)
        st = tx_check_tensor(ctx, op, "bias", d.bias, &bs);
    if (st)
        return st;
    conv_plan p;
    int orank = 0;
    int64_t oshape[TX_MAX_RANK];
    st = conv_plan_make(ctx, op, transpose, ctx->caps.max_draw_buffers, xs, ws, bs, &d, &p, &orank,
                        oshape);
    if (st)
        return st;
    tx_tensor y;
    st = tx_tensor_alloc(ctx, op, TX_DEVICE_GPU, orank, oshape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    if (tx_slot_get(ctx, y)->numel == 0) {
        *out = y;
        return TX_STATUS_OK;
    }
    int64_t x_tex = p.n * p.nb * p.hp * p.wp;
    int64_t w_tex = p.depthwise ? p.nb * p.kh * p.kw : p.nobt * (p.tc / 4) * p.ib * p.kh * p.kw * 4;
    int64_t t_tex = p.n * p.nobt * p.ho * p.xt;
    /* tex[0]: packed input, tex[1]: packed weights, then one tile texture per
     * render target of the compute pass */
    tx_texture tex[10];
    int n_tex = 2 + p.tp * p.tc / 4, have = 0;
    while (have < n_tex && !(st = tx_pool_acquire(ctx, op,
                                                  have == 0   ? max64(x_tex, 1)
                                                  : have == 1 ? max64(w_tex, 1)
                                                              : t_tex,
                                                  &tex[have])))
        have++;
    if (st) {
        while (have > 0)
            tx_pool_release(ctx, &tex[--have]);
        tx_tensor_destroy(ctx, y);
        return st;
    }
    tx_texture *xp = &tex[0], *wp = &tex[1], *tiles = &tex[2];
    xs = tx_slot_get(ctx, x);
    ws = tx_slot_get(ctx, w);
    bs = d.bias.id ? tx_slot_get(ctx, d.bias) : NULL;
    tx_slot *ys = tx_slot_get(ctx, y);
    tx_program_req r;

    /* pass 0: pack the input */
    req_common(&r, &p, 0, 1, 1);
    tx_req_int(&r, "p_ntex", (int)x_tex);
    tx_req_int(&r, "p_out_ws", xp->wshift);
    tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
    tx_req_int(&r, "p_NB", (int)p.nb);
    tx_req_int(&r, "p_Hp", (int)p.hp);
    tx_req_int(&r, "p_Wp", (int)p.wp);
    tx_req_int(&r, "p_pt", p.ut);
    tx_req_int(&r, "p_pl", p.ul);
    tx_req_int(&r, "p_uh", p.uh);
    tx_req_int(&r, "p_uw", p.uw);
    tx_req_int(&r, "p_H", (int)p.h);
    tx_req_int(&r, "p_W", (int)p.w);
    tx_req_int(&r, "p_C", (int)p.c);
    tx_req_int(&r, "p_Cg", (int)p.cg);
    tx_req_int(&r, "p_IB", (int)p.ib);
    st = pass_draw(ctx, op, &r, (const tx_texture *[]){&xs->st->tex}, 1, (const tx_texture *[]){xp},
                   1);

    /* pass 1: pack the weights */
    if (!st) {
        req_common(&r, &p, 1, 1, 1);
        /* A gather over a few KB of weights: folding constants buys nothing
         * measurable, and every layer's shape would cost one more compile. */
        r.generic_only = true;
        if (transpose)
            tx_req_define(&r, "TX_TRANSPOSE", "1");
        tx_req_int(&r, "p_ntex", (int)w_tex);
        tx_req_int(&r, "p_out_ws", wp->wshift);
        tx_req_int(&r, "p_in_ws", ws->st->tex.wshift);
        tx_req_int(&r, "p_kh", p.kh);
        tx_req_int(&r, "p_kw", p.kw);
        tx_req_int(&r, "p_M", (int)p.m);
        tx_req_int(&r, "p_Mg", (int)p.mg);
        tx_req_int(&r, "p_Cg", (int)p.cg);
        tx_req_int(&r, "p_IB", (int)p.ib);
        tx_req_int(&r, "p_OB", (int)p.ob);
        tx_req_int(&r, "p_G", (int)p.groups);
        st = pass_draw(ctx, op, &r, (const tx_texture *[]){&ws->st->tex}, 1,
                       (const tx_texture *[]){wp}, 1);
    }

    /* pass 2: compute the tiles */
    if (!st) {
        req_common(&r, &p, 2, bs ? 3 : 2, n_tex - 2);
        if (p.slide)
            tx_req_define(&r, "TX_SLIDE", "1");
        if (bs)
            tx_req_define(&r, "TX_BIAS", "1");
        if (d.activation != TX_OP_NONE) {
            char fn[48];
            snprintf(fn, sizeof fn, "tx_u_%s", tx_op_name(d.activation));
            tx_req_define(&r, "TX_ACT", fn);
            if (d.activation == TX_OP_CLIP) {
                if (isfinite(d.lo)) {
                    tx_req_define(&r, "TX_HAS_LO", "1");
                    tx_req_float(&r, "p_lo", d.lo);
                }
                if (isfinite(d.hi)) {
                    tx_req_define(&r, "TX_HAS_HI", "1");
                    tx_req_float(&r, "p_hi", d.hi);
                }
            }
        }
        tx_req_int(&r, "p_ntex", (int)t_tex);
        tx_req_int(&r, "p_out_ws", tiles[0].wshift);
        tx_req_int(&r, "p_x_ws", xp->wshift);
        tx_req_int(&r, "p_w_ws", wp->wshift);
        tx_req_int(&r, "p_b_ws", bs ? bs->st->tex.wshift : 0);
        tx_req_int(&r, "p_XT", (int)p.xt);
        tx_req_int(&r, "p_Ho", (int)p.ho);
        tx_req_int(&r, "p_NOB", (int)p.nobt);
        tx_req_int(&r, "p_NB", (int)p.nb);
        tx_req_int(&r, "p_IB", (int)p.ib);
        tx_req_int(&r, "p_OB", (int)p.ob);
        tx_req_int(&r, "p_Hp", (int)p.hp);
        tx_req_int(&r, "p_Wp", (int)p.wp);
        tx_req_int(&r, "p_kh", p.kh);
        tx_req_int(&r, "p_kw", p.kw);
        tx_req_int(&r, "p_sh", p.sh);
        tx_req_int(&r, "p_sw", p.sw);
        tx_req_int(&r, "p_dh", p.dh);
        tx_req_int(&r, "p_dw", p.dw);
        tx_req_int(&r, "p_M", (int)p.m);
        tx_req_int(&r, "p_Mg", (int)p.mg);
        const tx_texture *ins[3] = {xp, wp, bs ? &bs->st->tex : NULL};
        const tx_texture *outs[8];
        for (int i = 0; i < n_tex - 2; i++)
            outs[i] = &tiles[i];
        st = pass_draw(ctx, op, &r, ins, bs ? 3 : 2, outs, n_tex - 2);
    }

    /* pass 3: unpack into NCHW */
    if (!st) {
        req_common(&r, &p, 3, n_tex - 2, 1);
        if (p.wo % 4 == 0)
            tx_req_define(&r, "TX_ALIGNED", "1");
        tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
        tx_req_int(&r, "p_n", (int)ys->numel);
        tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r, "p_a_ws", tiles[0].wshift);
        tx_req_int(&r, "p_Wo", (int)p.wo);
        tx_req_int(&r, "p_Ho", (int)p.ho);
        tx_req_int(&r, "p_M", (int)p.m);
        tx_req_int(&r, "p_Mg", (int)p.mg);
        tx_req_int(&r, "p_OB", (int)p.ob);
        tx_req_int(&r, "p_NOB", (int)p.nobt);
        tx_req_int(&r, "p_XT", (int)p.xt);
        const tx_texture *ins[8];
        for (int i = 0; i < n_tex - 2; i++)
            ins[i] = &tiles[i];
        st = pass_draw(ctx, op, &r, ins, n_tex - 2, (const tx_texture *[]){&ys->st->tex}, 1);
    }
    for (int i = 0; i < n_tex; i++)
        tx_pool_release(ctx, &tex[i]);
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}

tx_status tx_conv_out_shape(tx_ctx *ctx, bool transpose, int rank, const int64_t *xshape,
                            const int64_t *wshape, int64_t bias_len, const tx_conv_desc *d,
                            int64_t *oshape) {
    tx_slot xs = {.rank = rank, .dtype = TX_DTYPE_FLOAT32};
    tx_slot ws = xs, bs = {.rank = 1, .shape = {bias_len}, .dtype = TX_DTYPE_FLOAT32};
    memcpy(xs.shape, xshape, sizeof(int64_t) * (size_t)rank);
    memcpy(ws.shape, wshape, sizeof(int64_t) * (size_t)rank);
    conv_plan p;
    int orank;
    return conv_plan_make(ctx, transpose ? "conv_transpose" : "conv", transpose, 8, &xs, &ws,
                          bias_len >= 0 ? &bs : NULL, d, &p, &orank, oshape);
}

tx_status tx_conv(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc, tx_tensor *out) {
    return conv_run(ctx, false, x, w, desc, out);
}

tx_status tx_conv_transpose(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc,
                            tx_tensor *out) {
    return conv_run(ctx, true, x, w, desc, out);
}
