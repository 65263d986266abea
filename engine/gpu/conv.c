/* CONV and CONV_TRANSPOSE families on the GPU.
 *
 * Tensors are row-major NCHW (4 x positions per texel), which is the wrong
 * shape for a fast conv: a fragment wants 4 channels per fetch. So a conv is
 * four draws of glsl-templates/conv.glsl: pack the input into a zero-padded
 * 4-channels-per-texel copy, pack the weights into mat4 blocks, compute
 * 4 output channels × 4 positions per fragment into four render targets, and
 * unpack the tiles into NCHW. The packs cost one pass over the input and the
 * weights; the compute pass reads each of them many times. The packed weights
 * stay with the weights' storage (tx_storage.packed) until the weights are
 * written or destroyed, so a conv over the same weights again (every layer of
 * a session after its first run) is three draws.
 *
 * ConvTranspose runs through the same passes as a stride-1 conv over the
 * input upsampled by the stride (the pack pass inserts the zeros), with
 * flipped, transposed weights and padding dk - 1 - pad. The compute pass
 * skips the kernel rows that meet a row of inserted zeros (all but every
 * s-th); along x the zeros are still multiplied, since a fragment's
 * consecutive positions need different kernel columns.
 *
 * Four routes skip the packing: 1x1 convs as matmuls (conv_is_matmul),
 * depthwise convs over rows of whole texels in one pass (dw_direct), convs
 * of a single position as dot products (conv_is_dot), and 2x2 stride-2
 * ConvTransposes in one pass (convt_2x2). */
#include <math.h>
#include <string.h>

#include "../device.h"
#include "../hash.h"
#include "tune.h"

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

/* Everything the four passes need, in the terms of the conv being computed
 * (for ConvTranspose: the equivalent stride-1 conv over the upsampled input). */
typedef struct conv_plan {
    bool depthwise, transpose, slide, swap_nc;
    int64_t n, c, h, w, m, groups, cg, mg;
    int kh, kw, sh, sw, dh, dw; /* kernel, strides, dilations */
    int ut, ul;                 /* padded position of source (0, 0) */
    int uh, uw;                 /* upsampling (ConvTranspose strides) */
    int tp, tc;                 /* output positions, channels per fragment: 4 or 8 */
    int64_t ho, wo, hp, wp, xt;
    int64_t nb, ib, ob, nob; /* input blocks per batch, per group; output blocks */
    int64_t nobt;            /* output tiles along channels: nob / (tc / 4) */
} conv_plan;

/* tp: positions per fragment (4 or 8; 0: the rule below). */
static void plan_make(const tx_conv_call *cc, int max_targets, int tp, conv_plan *p) {
    memset(p, 0, sizeof *p);
    p->transpose = cc->transpose;
    p->swap_nc = cc->swap_nc;
    p->n = cc->n, p->c = cc->c, p->h = cc->h, p->w = cc->w, p->m = cc->m;
    p->groups = cc->groups, p->cg = cc->cg, p->mg = cc->mg;
    p->kh = cc->kh, p->kw = cc->kw, p->dh = cc->dh, p->dw = cc->dw;
    p->ho = cc->ho, p->wo = cc->wo;
    if (!cc->transpose) {
        p->sh = cc->sh, p->sw = cc->sw;
        p->uh = p->uw = 1;
        p->ut = cc->pt;
        p->ul = cc->pl;
    } else {
        /* The equivalent conv's begin padding: dk - 1 - pad (may be
         * negative: the pack pass then crops). */
        p->ut = (cc->kh - 1) * cc->dh - cc->pt;
        p->ul = (cc->kw - 1) * cc->dw - cc->pl;
        p->uh = cc->sh;
        p->uw = cc->sw;
        p->sh = p->sw = 1;
    }
    int64_t c = p->c, groups = p->groups, cg = p->cg, mg = p->mg;
    p->depthwise = cg == 1 && mg == 1 && !cc->swap_nc;
    p->slide = p->sw == p->dw && p->kw > 1;
    /* 8 positions per fragment halve the weight fetches per FMA. They need 8
     * render targets and make the unpack pass pick from 8 textures, whose
     * divergent branches cost more than the tile saves on depthwise. On
     * llvmpipe (2 busy cores, best of runs): dense 3x3 64->64 at 56x56,
     * 33 -> 28 ms per call; 1x1 32->64 at 112x112, compute 10 -> 7 ms,
     * unpack 2.1 -> 3.4 ms; depthwise 32 at 112x112, 5.1 -> 5.9 ms. Rows much
     * narrower than 8 would waste the tile. */
    p->tp = !p->depthwise && max_targets >= 8 && (p->wo % 8 == 0 || p->wo > 16) ? 8 : 4;
    if (tp && !p->depthwise && max_targets >= 8)
        p->tp = tp;
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
}

/* Whether wst's packed copy of the weights stands for `key` (packing and
 * shape) and the current values; if not, a texture of w_tex texels for it. */
static tx_status packed_weights(tx_ctx *ctx, const char *op, tx_storage *wst, uint64_t key,
                                int64_t w_tex, bool *packed) {
    *packed = wst->packed.gl && wst->packed_key == key && wst->packed_version == wst->version;
    if (*packed)
        return TX_STATUS_OK;
    if (wst->packed.gl)
        tx_pool_release(ctx, &wst->packed);
    return tx_pool_acquire(ctx, op, max64(w_tex, 1), &wst->packed);
}

/* After the packing pass (status st): the copy stands for key, unless the
 * pass failed or drew nothing (the compile-only warm-up). */
static void packed_done(tx_ctx *ctx, tx_storage *wst, uint64_t key, tx_status st) {
    wst->packed_key = st || ctx->compile_only ? 0 : key;
    wst->packed_version = wst->version;
}

/* The multiply-adds of the conv's compute (a transposed conv's inserted
 * zeros included: the draw computes them). */
static double conv_macs(const tx_conv_call *cc) {
    return (double)cc->n * (double)cc->m * (double)cc->ho * (double)cc->wo * (double)cc->cg *
           cc->kh * cc->kw;
}

/* What the packed weights depend on: equal keys, equal packed texels. */
static uint64_t weights_key(const conv_plan *p, int64_t w_tex) {
    const int64_t k[] = {p->transpose, p->depthwise, p->kh,   p->kw, p->m,
                         p->mg,        p->cg,        p->ib,   p->ob, p->nb,
                         p->groups,    p->tc,        p->nobt, w_tex, p->swap_nc};
    return tx_fnv1a((const char *)k, sizeof k);
}

/* Sets what the passes share: the structural defines that shape their code.
 * Only the compute pass has the tile (TX_TP, TX_TC) as defines: the packs
 * do not depend on it and the unpack pass takes it as parameters, so the
 * convs of a model share those programs. */
static void req_common(tx_program_req *r, const conv_plan *p, int pass, int n_in, int n_out) {
    tx_req_init(r, p->transpose ? TX_FAMILY_CONV_TRANSPOSE : TX_FAMILY_CONV, "conv", n_in, n_out);
    tx_req_define_int(r, "TX_PASS", pass);
    if (pass == 2) {
        tx_req_define_int(r, "TX_TP", p->tp);
        tx_req_define_int(r, "TX_TC", p->tc);
    }
    if (p->depthwise)
        tx_req_define(r, "TX_DW", "1");
    if (p->swap_nc && pass != 2)
        tx_req_define(r, "TX_SWAP_NC", "1");
}

/* x_affine (the passes that read x: 0, 4, 5): x · xs + xb inside x. A
 * define, not parameters 1 and 0 for every conv: on SwiftShader the FMA
 * per texel read made the generic programs of convs without it slower
 * (three rounds alternated, texel-gpu steady: ppocr cls 45-49 -> 50-53 ms,
 * PP-OCRv4 det 770 -> 790-840), which costs more than translating the
 * variants that have it (det's first result +100 ms, rec's -50). */
static void req_xaff(tx_program_req *r, const tx_conv_call *cc) {
    if (!cc->xa)
        return;
    tx_req_define(r, "TX_XAFF", "1");
    tx_req_float(r, "p_xs", cc->xs);
    tx_req_float(r, "p_xb", cc->xb);
}

static tx_status run_tp(tx_ctx *ctx, const void *call, int tp) {
    const tx_conv_call *cc = call;
    const char *op = cc->transpose ? "conv_transpose" : "conv";
    const tx_slot *xs = cc->x, *ws = cc->wt, *bs = cc->bias, *rs = cc->resid, *ys = cc->y;
    bool transpose = cc->transpose;
    conv_plan p;
    plan_make(cc, ctx->caps.max_draw_buffers, tp, &p);
    tx_status st = TX_STATUS_OK;
    int64_t x_tex = p.n * p.nb * p.hp * p.wp;
    int64_t w_tex = p.depthwise ? p.nb * p.kh * p.kw : p.nobt * (p.tc / 4) * p.ib * p.kh * p.kw * 4;
    int64_t t_tex = p.n * p.nobt * p.ho * p.xt;
    /* the packed input, and the tiles: one array texture, a layer per render target */
    int n_tiles = p.tp * p.tc / 4;
    tx_texture xp = {0}, tiles = {0};
    tx_storage *wst = ws->st;
    uint64_t wkey = weights_key(&p, w_tex);
    bool packed;
    st = packed_weights(ctx, op, wst, wkey, w_tex, &packed);
    if (!st)
        st = tx_pool_acquire(ctx, op, max64(x_tex, 1), &xp);
    if (!st)
        st = tx_pool_acquire_layers(ctx, op, t_tex, n_tiles, &tiles);
    if (st) {
        if (xp.gl)
            tx_pool_release(ctx, &xp);
        if (!packed && wst->packed.gl)
            tx_pool_release(ctx, &wst->packed);
        return st;
    }
    tx_texture *wp = &wst->packed;
    tx_program_req r;

    /* pass 0: pack the input */
    req_common(&r, &p, 0, 1, 1);
    req_xaff(&r, cc);
    TX_REQ_INTS(&r, {"p_ntex", (int)x_tex}, {"p_out_ws", xp.wshift},
                {"p_in_ws", xs->st->tex.wshift}, {"p_NB", (int)p.nb}, {"p_Hp", (int)p.hp},
                {"p_Wp", (int)p.wp}, {"p_pt", p.ut}, {"p_pl", p.ul}, {"p_uh", p.uh}, {"p_uw", p.uw},
                {"p_H", (int)p.h}, {"p_W", (int)p.w}, {"p_C", (int)p.c}, {"p_Cg", (int)p.cg},
                {"p_IB", (int)p.ib}, {"p_N", (int)p.n});
    tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", &xs->st->tex);
    st = tx_gpu_run(ctx, op, &r, (const tx_texture *[]){&xs->st->tex}, 1,
                    (const tx_texture *[]){&xp}, 1);

    /* pass 1: pack the weights (unless they are packed already) */
    if (!st && !packed) {
        req_common(&r, &p, 1, 1, 1);
        /* A gather over a few KB of weights: folding constants buys nothing
         * measurable, and every layer's shape would cost one more compile. */
        r.generic_only = true;
        if (transpose)
            tx_req_define(&r, "TX_TRANSPOSE", "1");
        TX_REQ_INTS(&r, {"p_ntex", (int)w_tex}, {"p_out_ws", wp->wshift},
                    {"p_in_ws", ws->st->tex.wshift}, {"p_kh", p.kh}, {"p_kw", p.kw},
                    {"p_M", (int)p.m}, {"p_Mg", (int)p.mg}, {"p_Cg", (int)p.cg},
                    {"p_IB", (int)p.ib}, {"p_OB", (int)p.ob}, {"p_G", (int)p.groups});
        st = tx_gpu_run(ctx, op, &r, (const tx_texture *[]){&ws->st->tex}, 1,
                        (const tx_texture *[]){wp}, 1);
        packed_done(ctx, wst, wkey, st);
    }

    /* pass 2: compute the tiles */
    if (!st) {
        req_common(&r, &p, 2, bs ? 3 : 2, n_tiles);
        r.macs = conv_macs(cc);
        if (p.slide)
            tx_req_define(&r, "TX_SLIDE", "1");
        if (bs)
            tx_req_define(&r, "TX_BIAS", "1");
        if (bs && (p.depthwise || p.mg % 4 == 0)) /* a block's biases are one texel */
            tx_req_define(&r, "TX_BIAS_VEC", "1");
        if (transpose) { /* which kernel rows meet input rows */
            tx_req_define(&r, "TX_TRANSPOSE", "1");
            TX_REQ_INTS(&r, {"p_pt", p.ut}, {"p_uh", p.uh}, {"p_H", (int)p.h});
        }
        if (!rs) /* else the unpack applies it, after the residual */
            tx_req_act(&r, cc->act, cc->lo, cc->hi);
        TX_REQ_INTS(&r, {"p_ntex", (int)t_tex}, {"p_out_ws", tiles.wshift}, {"p_x_ws", xp.wshift},
                    {"p_w_ws", wp->wshift}, {"p_b_ws", bs ? bs->st->tex.wshift : 0},
                    {"p_XT", (int)p.xt}, {"p_Ho", (int)p.ho}, {"p_NOB", (int)p.nobt},
                    {"p_NB", (int)p.nb}, {"p_IB", (int)p.ib}, {"p_OB", (int)p.ob},
                    {"p_Hp", (int)p.hp}, {"p_Wp", (int)p.wp}, {"p_kh", p.kh}, {"p_kw", p.kw},
                    {"p_sh", p.sh}, {"p_sw", p.sw}, {"p_dh", p.dh}, {"p_dw", p.dw},
                    {"p_M", (int)p.m}, {"p_Mg", (int)p.mg});
        tx_req_tex_inv(&r, "p_x_iw", "p_x_ih", &xp);
        tx_req_tex_inv(&r, "p_w_iw", "p_w_ih", wp);
        const tx_texture *ins[3] = {&xp, wp, bs ? &bs->st->tex : NULL};
        tx_texture layer[8];
        const tx_texture *outs[8];
        for (int i = 0; i < n_tiles; i++) {
            layer[i] = tx_layer(&tiles, i);
            outs[i] = &layer[i];
        }
        st = tx_gpu_run(ctx, op, &r, ins, bs ? 3 : 2, outs, n_tiles);
    }

    /* pass 3: unpack into NCHW */
    if (!st) {
        req_common(&r, &p, 3, rs ? 2 : 1, 1);
        r.array_inputs = 1;
        if (p.wo % 4 == 0 && !p.swap_nc)
            tx_req_define(&r, "TX_ALIGNED", "1");
        if (rs) {
            tx_req_resid(&r, 1, &rs->st->tex, rs->numel, ys->numel);
            tx_req_act(&r, cc->act, cc->lo, cc->hi);
        }
        TX_REQ_INTS(&r, {"p_ntex", (int)((ys->numel + 3) / 4)}, {"p_n", (int)ys->numel},
                    {"p_out_ws", ys->st->tex.wshift}, {"p_a_ws", tiles.wshift}, {"p_Wo", (int)p.wo},
                    {"p_Ho", (int)p.ho}, {"p_M", (int)p.m}, {"p_Mg", (int)p.mg},
                    {"p_OB", (int)p.ob}, {"p_NOB", (int)p.nobt}, {"p_XT", (int)p.xt},
                    {"p_N", (int)p.n}, {"p_yh", cc->yh}, {"p_yw", cc->yw}, {"p_tp", p.tp},
                    {"p_tc", p.tc});
        tx_req_tex_inv(&r, "p_a_iw", "p_a_ih", &tiles);
        st = tx_gpu_run(ctx, op, &r, (const tx_texture *[]){&tiles, rs ? &rs->st->tex : NULL},
                        rs ? 2 : 1, (const tx_texture *[]){&ys->st->tex}, 1);
    }
    tx_pool_release(ctx, &xp);
    tx_pool_release(ctx, &tiles);
    return st;
}

/* A 1x1 conv with no stride, padding or groups is a matmul per image,
 * y[n] = w[M, C] x[n][C, H*W], its bias one value per row: the matmul kernel
 * reads x and writes y in NCHW as they are, without the pack and unpack
 * passes (Chromium, SwiftShader: 64 -> 128 channels at 56x56 30 -> 16 ms per
 * call, 32 -> 64 at 112x112 37 -> 20 ms). Only where H*W % 4 == 0 and H, W
 * cannot change between runs: the matmul's 4-column tiles need whole texels
 * per row (otherwise the pack/unpack passes win: PP-OCRv4 rec, whose width
 * varies, ran 0.35 s on llvmpipe that way and 0.6-1.8 s as matmuls). */
tx_status tx_gpu_matmul(tx_ctx *ctx, const tx_matmul_call *c); /* gpu/matmul.c */

/* Whether x's and y's spatial dims (past N and C) keep their sizes between runs. */
static bool spatial_fixed(const tx_conv_call *cc) {
    return !((cc->x->vary | cc->y->vary) & ~3u);
}

/* A 1x1 conv (stride 1, no pads, one group) is a matmul per image: W [M, C]
 * @ x [C, H*W]. Where H or W may vary (a session's symbolic dims) the matmul
 * sees a varying N and takes its row tiles padded for any N (tx_gpu_matmul):
 * the conv's own pack, compute and unpack draws ran such a conv 2.5x slower
 * (SwiftShader, PP-OCRv4 rec's 240 -> 240 at 12x80: 40 ms a draw against 16
 * at a fixed size, 23 padded). Only with M * C at least this: the matmul's
 * programs cost more to compile and, on SwiftShader, to translate at their
 * first draw, which the small convs of OCR cls and det never paid back (det
 * with every 1x1 conv routed: first run 4.6 -> 6.9 s, steady 1.11 -> 1.06 s;
 * with this line: rec steady 1.07 -> 0.77 s, det first run 4.6 -> 5.3 s). */
#define TX_CONV_VARY_MATMUL_MC (1 << 14)
static bool conv_is_matmul(const tx_conv_call *cc) {
    return !cc->transpose && !cc->swap_nc && !cc->xa && cc->groups == 1 && cc->kh == 1 &&
           cc->kw == 1 && cc->sh == 1 && cc->sw == 1 && cc->pt == 0 && cc->pl == 0 &&
           cc->ho == cc->h && cc->wo == cc->w &&
           (spatial_fixed(cc) ? cc->h * cc->w % 4 == 0 : cc->m * cc->c >= TX_CONV_VARY_MATMUL_MC);
}

static tx_status run_as_matmul(tx_ctx *ctx, const tx_conv_call *cc) {
    /* views: w as [M, C], x as [n, C, H*W], y as [n, M, H*W]; n or C may
     * change between runs (vary), and H*W where H or W may */
    tx_slot a = *cc->wt, b = *cc->x, y = *cc->y;
    a.rank = 2;
    a.vary = 0;
    b.rank = y.rank = 3;
    b.vary = (uint8_t)((cc->x->vary & 3u) | (cc->x->vary & 12u ? 4u : 0u));
    y.vary = (uint8_t)((cc->y->vary & 3u) | (cc->y->vary & 12u ? 4u : 0u));
    tx_matmul_call mc = {.M = cc->m,
                         .N = cc->h * cc->w,
                         .K = cc->c,
                         .nbatch = cc->n,
                         .bd = {1, 1, 1, cc->n},
                         .sb = {0, 0, 0, 1},
                         .act = cc->act,
                         .lo = cc->lo,
                         .hi = cc->hi,
                         .a = &a,
                         .b = &b,
                         .bias = cc->bias,
                         .bias_rows = true,
                         .resid = cc->resid,
                         .y = &y};
    return tx_gpu_matmul(ctx, &mc);
}

/* What the one-pass routes (TX_PASS 4, 5, 6: NCHW x to NCHW y, no pack or
 * unpack) share: x, the weights `w` (packed or as stored), the bias and
 * residual as the inputs after them, the fused activation and the
 * parameters every such pass reads. The route adds its own, then calls
 * one_pass_run. */
static void one_pass_req(tx_program_req *r, const tx_conv_call *cc, int pass, double macs,
                         const tx_texture *w) {
    const tx_slot *bs = cc->bias, *rs = cc->resid, *ys = cc->y;
    int n_in = 2 + (bs != NULL) + (rs != NULL);
    tx_req_init(r, cc->transpose ? TX_FAMILY_CONV_TRANSPOSE : TX_FAMILY_CONV, "conv", n_in, 1);
    r->macs = macs;
    tx_req_define_int(r, "TX_PASS", pass);
    if (bs)
        tx_req_define(r, "TX_BIAS", "1");
    if (rs)
        tx_req_resid(r, n_in - 1, &rs->st->tex, rs->numel, ys->numel);
    tx_req_act(r, cc->act, cc->lo, cc->hi);
    TX_REQ_INTS(r, {"p_ntex", (int)((ys->numel + 3) / 4)}, {"p_out_ws", ys->st->tex.wshift},
                {"p_in_ws", cc->x->st->tex.wshift}, {"p_w_ws", w->wshift},
                {"p_b_ws", bs ? bs->st->tex.wshift : 0});
    tx_req_tex_inv(r, "p_in_iw", "p_in_ih", &cc->x->st->tex);
    tx_req_tex_inv(r, "p_w_iw", "p_w_ih", w);
}

static tx_status one_pass_run(tx_ctx *ctx, const tx_program_req *r, const tx_conv_call *cc,
                              const tx_texture *w) {
    const tx_slot *bs = cc->bias, *rs = cc->resid;
    int n_in = 2 + (bs != NULL) + (rs != NULL);
    const tx_texture *ins[4] = {&cc->x->st->tex, w, bs ? &bs->st->tex : NULL, NULL};
    if (rs)
        ins[n_in - 1] = &rs->st->tex;
    return tx_gpu_run(ctx, cc->transpose ? "conv_transpose" : "conv", r, ins, n_in,
                      (const tx_texture *[]){&cc->y->st->tex}, 1);
}

/* A depthwise conv over rows of whole texels (W % 4 == 0, Wo % 4 == 0), at
 * most 7 taps wide (a window of 4 texels), stride 1 or 2 along x, no
 * dilation: one draw from NCHW to NCHW (conv.glsl TX_PASS 4) with the taps
 * packed per kernel row (TX_PASS 1, TX_DROW), kept with the weights like the
 * other packing. The pack and unpack passes cost it more than its compute.
 * Its defines are the taps, the x stride and the window's lane offset, none
 * of them H or W, so where a session's H or W vary every size of whole
 * texels shares its programs (other sizes take the packing passes). On
 * symbolic dims it took 14 of PP-OCRv4 det's 51 convs at 288x384: those
 * 719 -> 337 ms over 21 runs on llvmpipe (each draw waited for). */
static bool dw_direct(const tx_conv_call *cc) {
    return !cc->transpose && !cc->swap_nc && cc->cg == 1 && cc->mg == 1 && cc->dh == 1 &&
           cc->dw == 1 && (cc->sw == 1 || cc->sw == 2) && cc->kw <= 7 && cc->w % 4 == 0 &&
           cc->wo % 4 == 0;
}

/* Whether the depthwise route reads x where it is a matmul's row tiles
 * (tx_phases: a 1x1 conv's output, channels as rows): image n's channel c
 * is then row c of product n, its rows of whole texels (W % 4 == 0) as they
 * are in NCHW, in layer c % tm. So the 1x1 conv's interleaving pass is left
 * out, and the depthwise conv fetches what it would from row-major x. */
static bool dw_takes_phases(const tx_conv_call *cc) {
    const tx_phases *ph = &cc->x->st->phases;
    return ph->tm && dw_direct(cc) && ph->nbatch == cc->n && ph->m == cc->c &&
           ph->n == cc->h * cc->w;
}

static tx_status run_dw_direct(tx_ctx *ctx, const tx_conv_call *cc) {
    const char *op = "conv";
    const tx_slot *ws = cc->wt;
    int64_t w_tex = cc->m * cc->kh * ((cc->kw + 3) / 4);
    const int64_t k[] = {0xD0, cc->m, cc->kh, cc->kw, w_tex};
    uint64_t wkey = tx_fnv1a((const char *)k, sizeof k);
    tx_storage *wst = ws->st;
    bool packed;
    tx_status st = packed_weights(ctx, op, wst, wkey, w_tex, &packed);
    if (st)
        return st;
    tx_program_req r;
    if (!packed) {
        tx_req_init(&r, TX_FAMILY_CONV, "conv", 1, 1);
        r.generic_only = true; /* a gather over a few KB, as the other packing */
        tx_req_define_int(&r, "TX_PASS", 1);
        tx_req_define(&r, "TX_DW", "1");
        tx_req_define(&r, "TX_DROW", "1");
        TX_REQ_INTS(&r, {"p_ntex", (int)w_tex}, {"p_out_ws", wst->packed.wshift},
                    {"p_in_ws", ws->st->tex.wshift}, {"p_kh", cc->kh}, {"p_kw", cc->kw},
                    {"p_Mg", 1}, {"p_Cg", 1});
        st = tx_gpu_run(ctx, op, &r, (const tx_texture *[]){&ws->st->tex}, 1,
                        (const tx_texture *[]){&wst->packed}, 1);
        packed_done(ctx, wst, wkey, st);
        if (st)
            return st;
    }
    /* the window: columns x0 * sw - pl .. + 3 * sw + kw - 1, from lane
     * (-pl) mod 4 of its first texel */
    int off = ((-cc->pl) % 4 + 4) % 4;
    int wt = (off + 3 * cc->sw + cc->kw + 3) / 4;
    one_pass_req(&r, cc, 4, conv_macs(cc), &wst->packed);
    const tx_phases *ph = &cc->x->st->phases;
    if (ph->tm) { /* x is a 1x1 conv's row tiles (dw_takes_phases) */
        r.array_inputs = 1;
        tx_req_define_int(&r, "TX_TM", ph->tm);
        tx_req_int(&r, "p_MT", (int)((ph->m + ph->tm - 1) / ph->tm));
    }
    tx_req_define_int(&r, "TX_WT", wt);
    tx_req_define_int(&r, "TX_OFF", off);
    tx_req_define_int(&r, "TX_SW", cc->sw);
    tx_req_define_int(&r, "TX_KW", cc->kw);
    req_xaff(&r, cc);
    TX_REQ_INTS(&r, {"p_Wo", (int)cc->wo}, {"p_W", (int)cc->w}, {"p_Ho", (int)cc->ho},
                {"p_H", (int)cc->h}, {"p_M", (int)cc->m}, {"p_kh", cc->kh}, {"p_sh", cc->sh},
                {"p_pt", cc->pt}, {"p_pl", cc->pl});
    return one_pass_run(ctx, &r, cc, &wst->packed);
}

/* A dense conv of one position (H = W = 1, a 1x1 kernel, no padding: the
 * squeeze-excite convs after a global pool, 20 of PP-OCRv4 det's, 18 of
 * ppocr cls's) is one value per output channel, y[n][m] = w[m] . x[n] + b[m]:
 * one draw (conv.glsl TX_PASS 5) over x and w as they are, where the packing
 * passes take three (pack, compute, unpack) and the matmul route programs
 * of its own per shape whose first draws SwiftShader translates (tried: cls
 * first result +100 ms). A fragment owns 4 consecutive outputs; TX_C4
 * (C % 4 == 0) takes the dot products 4 channels a fetch. */
static bool conv_is_dot(const tx_conv_call *cc) {
    return !cc->transpose && !cc->swap_nc && cc->groups == 1 && cc->kh == 1 && cc->kw == 1 &&
           cc->h == 1 && cc->w == 1 && cc->ho == 1 && cc->wo == 1 && cc->pt == 0 && cc->pl == 0;
}

static tx_status run_dot(tx_ctx *ctx, const tx_conv_call *cc) {
    const tx_texture *w = &cc->wt->st->tex;
    tx_program_req r;
    one_pass_req(&r, cc, 5, conv_macs(cc), w);
    req_xaff(&r, cc);
    if (cc->c % 4 == 0)
        tx_req_define(&r, "TX_C4", "1");
    TX_REQ_INTS(&r, {"p_n", (int)cc->y->numel}, {"p_C", (int)cc->c}, {"p_M", (int)cc->m});
    return one_pass_run(ctx, &r, cc, w);
}

/* A ConvTranspose with 2x2 kernels at stride 2 and no begin pads (the 2x
 * upsampling of segmentation heads: PaddleOCR det's two, U-Nets) writes
 * each input position's 2x2 block of outputs and nothing overlaps: output
 * (oy, ox) is x[., oy / 2, ox / 2] . w[., m, oy % 2, ox % 2]. One draw
 * (conv.glsl TX_PASS 6) from NCHW to NCHW: a fragment owns 4 outputs of a
 * row, 2 input positions, whose inputs are one texel per channel (W even)
 * and whose weights one texel per (c, m) ([C, M, 2, 2] as stored). The
 * packing route upsamples the input with inserted zeros first, so its
 * pack is 4x the input and half its multiply-adds are by zeros. */
static bool convt_2x2(const tx_conv_call *cc) {
    /* x_affine never reaches a ConvTranspose (the front runs it as an op
     * first); this route would not apply it */
    return cc->transpose && !cc->swap_nc && !cc->xa && cc->groups == 1 && cc->kh == 2 &&
           cc->kw == 2 && cc->sh == 2 && cc->sw == 2 && cc->dh == 1 && cc->dw == 1 && cc->pt == 0 &&
           cc->pl == 0 && cc->ho == 2 * cc->h && cc->wo == 2 * cc->w && cc->w % 2 == 0;
}

static tx_status run_convt_2x2(tx_ctx *ctx, const tx_conv_call *cc) {
    const tx_texture *w = &cc->wt->st->tex;
    tx_program_req r;
    /* every output reads its C inputs once (no inserted zeros) */
    one_pass_req(&r, cc, 6,
                 (double)cc->n * (double)cc->m * (double)cc->ho * (double)cc->wo * (double)cc->c,
                 w);
    TX_REQ_INTS(&r, {"p_C", (int)cc->c}, {"p_M", (int)cc->m}, {"p_H", (int)cc->h},
                {"p_W", (int)cc->w});
    return one_pass_run(ctx, &r, cc, w);
}

/* Positions per fragment (4 or 8) chosen per device where both apply: dense
 * convs with 4 channels per fragment on 8 render targets (env TEXEL_TUNE,
 * tune.c). */
tx_status tx_gpu_conv(tx_ctx *ctx, const tx_conv_call *cc) {
    if (dw_takes_phases(cc))
        return run_dw_direct(ctx, cc);
    /* the front kept x as it is (tx_op_device_keep): the other routes read rows */
    tx_status st = tx_gpu_flatten(ctx, "conv", cc->x->st);
    if (st)
        return st;
    if (convt_2x2(cc))
        return run_convt_2x2(ctx, cc);
    if (conv_is_dot(cc))
        return run_dot(ctx, cc);
    if (conv_is_matmul(cc))
        return run_as_matmul(ctx, cc);
    if (dw_direct(cc))
        return run_dw_direct(ctx, cc);
    conv_plan p;
    plan_make(cc, ctx->caps.max_draw_buffers, 0, &p);
    if (p.depthwise || p.tc != 4 || ctx->caps.max_draw_buffers < 8)
        return run_tp(ctx, cc, p.tp);
    static const int cand[2] = {4, 8};
    double macs = (double)p.n * (double)p.m * (double)p.ho * (double)p.wo * (double)p.cg *
                  (double)(p.kh * p.kw);
    return tx_tune_run(ctx, "conv-tp", macs, cand, 2, p.tp, run_tp, cc);
}
