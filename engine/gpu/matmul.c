/* MATMUL family on the GPU (glsl-templates/matmul.glsl).
 *
 * Work per fragment is the lever on a fragment-shader engine (ANCHORS.md):
 * with N % 4 == 0 each fragment computes a 4- or 8-row × 4-column output tile
 * and writes it to as many render targets (one per row phase: the layers of
 * one array texture), then a cheap second draw interleaves them into the
 * row-major output, one fetch per texel. Without a residual the output
 * keeps the tiles as its texture instead (tx_phases), and that pass runs
 * when something needs rows (tx_gpu_flatten), or never where the consumer
 * reads the tiles (a depthwise conv after a 1x1 conv: engine/gpu/conv.c).
 * Small M uses 1 × 4 tiles written directly. Where N % 4 != 0 (N > 4) the
 * tiles' rows are padded to whole texels and the interleave gathers each
 * output texel's elements (SwiftShader, 32x64 @ 64x10: 111 µs against 250
 * for the 4 dot products per fragment that small M and matrix-vector
 * products still run).
 *
 * Where an operand's dim may change size between runs (tx_slot.vary: a
 * session's symbolic sequence length), the variant does not depend on it: a
 * varying M takes the large-M tile, a varying N the padded row tiles (right
 * for any N), a varying K the path for any size, so every length runs the
 * programs compiled for the first.
 *
 * A residual (y's shape, tx_matmul_call.resid) is added by the pass that
 * writes y: the 1-row tiles, or the interleave, which then applies the
 * activation the row tiles leave out. */
#include <math.h>

#include "../device.h"
#include "tune.h"

/* Below this many rows the 4-row tile's second draw costs more than it saves. */
#define TX_MATMUL_TILE_MIN_M 8

static const char *const k_bd[4] = {"p_bd0", "p_bd1", "p_bd2", "p_bd3"};
static const char *const k_ab[4] = {"p_ab0", "p_ab1", "p_ab2", "p_ab3"};
static const char *const k_bb[4] = {"p_bb0", "p_bb1", "p_bb2", "p_bb3"};

/* Whether M, N, K may change between runs: the vary bits of the dims they
 * come from (a is [.., M, K] or [.., K, M] transposed, b [.., K, N] or
 * [.., N, K]; rank-1 operands are 1×K and K×1). */
static void matmul_vary(const tx_matmul_call *c, bool *m, bool *n, bool *k) {
    const tx_slot *a = c->a, *b = c->b;
    unsigned va = a->vary, vb = b->vary;
    int ra = a->rank, rb = b->rank;
    bool a_last = ra >= 1 && (va >> (ra - 1) & 1), a_prev = ra >= 2 && (va >> (ra - 2) & 1);
    bool b_last = rb >= 1 && (vb >> (rb - 1) & 1), b_prev = rb >= 2 && (vb >> (rb - 2) & 1);
    bool ta = c->ta && ra >= 2, tb = c->tb && rb >= 2;
    *m = ta ? a_last : a_prev;
    *k = (ta ? a_prev : a_last) || (rb == 1 ? b_last : (tb ? b_last : b_prev));
    *n = rb == 1 ? false : (tb ? b_prev : b_last);
}

/* Whether tm-row tiles pad their rows to whole texels (TX_NPAD): where N %
 * 4 != 0, or N may vary (the compute pass and the interleave must agree). */
static bool padded_rows(const tx_matmul_call *c, int tm) {
    bool vary_m, vary_n, vary_k;
    matmul_vary(c, &vary_m, &vary_n, &vary_k);
    return tm > 1 && (c->N % 4 != 0 || vary_n);
}

static void req_act(const tx_matmul_call *c, tx_program_req *r) {
    bool floats = c->act == TX_OP_CLIP || tx_op_family(c->act) == TX_FAMILY_ACT;
    tx_req_act(r, c->act, floats ? c->lo : -INFINITY, floats ? c->hi : INFINITY);
}

/* The operands' texture widths (p_a_ws, p_b_ws, p_c_ws: the bias's, 0
 * without one), the output's batch dims and A's and B's batch strides
 * (p_bd*, p_ab*, p_bb*). */
static void req_operands(const tx_matmul_call *c, tx_program_req *r) {
    tx_req_int(r, "p_a_ws", c->a->st->tex.wshift);
    tx_req_int(r, "p_b_ws", c->b->st->tex.wshift);
    tx_req_int(r, "p_c_ws", c->bias ? c->bias->st->tex.wshift : 0);
    for (int i = 0; i < 4; i++) {
        tx_req_int(r, k_bd[i], (int)c->bd[i]);
        tx_req_int(r, k_ab[i], (int)c->sa[i]);
        tx_req_int(r, k_bb[i], (int)c->sb[i]);
    }
}

/* Texels of each tile texture (tm > 1): every row tile's ceil(N / 4). */
static int64_t tile_texels(const tx_matmul_call *c, int tm) {
    return c->nbatch * ((c->M + tm - 1) / tm) * ((c->N + 3) / 4);
}

/* The compute pass's request for tm-row tiles written to textures of width
 * 2^out_ws (tm 1: the output itself). */
static void main_req(const tx_matmul_call *c, int tm, int out_ws, tx_program_req *r) {
    const tx_slot *cs = c->bias, *ys = c->y;
    int64_t M = c->M, N = c->N, K = c->K;
    bool ta = c->ta, tb = c->tb;
    bool vary_m, vary_n, vary_k;
    matmul_vary(c, &vary_m, &vary_n, &vary_k);
    bool npad = padded_rows(c, tm);
    bool vec = N % 4 == 0 && !vary_n;
    int64_t mt = (M + tm - 1) / tm;
    tx_req_init(r, TX_FAMILY_MATMUL, "matmul", 2 + (cs != NULL) + (c->resid && tm == 1), tm);
    r->macs = (double)c->nbatch * (double)M * (double)N * (double)K;
    tx_req_define_int(r, "TX_PASS", 0);
    tx_req_define_int(r, "TX_TM", tm);
    if (vec || npad)
        tx_req_define(r, "TX_VEC", "1");
    if (npad)
        tx_req_define(r, "TX_NPAD", "1");
    if (ta)
        tx_req_define(r, "TX_TA", "1");
    if (tb)
        tx_req_define(r, "TX_TB", "1");
    if (!ta && K % 4 == 0 && !vary_k)
        tx_req_define(r, "TX_A_VEC", "1");
    if (ta && M % 4 == 0 && tm >= 4 && !vary_m)
        tx_req_define(r, "TX_A_TVEC", "1");
    /* stepped texture() reads (matmul.glsl): 1 where no step crosses a
     * texture row, 2 with a carry (right for any width: where a dim may
     * vary, the operand's width may too) */
    int64_t aw = (int64_t)1 << c->a->st->tex.wshift, bw = (int64_t)1 << c->b->st->tex.wshift;
    if ((vec || npad) && !ta && K >= 4 && K % 4 == 0 && !vary_k)
        tx_req_define_int(r, "TX_A_2D", !c->a->vary && aw % (K / 4) == 0 ? 1 : 2);
    if (vec && !tb && K >= 4 && !vary_k)
        tx_req_define_int(r, "TX_B_2D", !c->b->vary && N % bw == 0 ? 1 : 2);
    if (tb && K % 4 == 0 && !vary_k)
        tx_req_define(r, "TX_B_TVEC", "1");
    if (cs)
        tx_req_define(r, "TX_BIAS", "1");
    if (cs && c->bias_rows)
        tx_req_define(r, "TX_BIAS_ROWS", "1");
    /* a residual: added here with 1-row tiles (the output itself), else by
     * the interleaving pass, which then applies the activation too */
    if (c->resid && tm == 1)
        tx_req_resid(r, cs ? 3 : 2, &c->resid->st->tex, c->resid->numel, c->y->numel);
    if (!c->resid || tm == 1)
        req_act(c, r);
    int64_t ntex = tm > 1 ? tile_texels(c, tm) : (ys->numel + 3) / 4;
    tx_req_int(r, "p_M", (int)M);
    tx_req_int(r, "p_N", (int)N);
    tx_req_int(r, "p_K", (int)K);
    tx_req_int(r, "p_MT", (int)mt);
    tx_req_int(r, "p_ntex", (int)ntex);
    tx_req_int(r, "p_out_ws", out_ws);
    tx_req_tex_inv(r, "p_a_iw", "p_a_ih", &c->a->st->tex);
    tx_req_tex_inv(r, "p_b_iw", "p_b_ih", &c->b->st->tex);
    req_operands(c, r);
}

/* A shape's first calls (until its steady program is ready): the first-call
 * program (TX_PASS 2), whose signature never specializes. One generic program
 * per activation and residual serves every shape, transpose and bias. */
static tx_status run_first(tx_ctx *ctx, const tx_matmul_call *c) {
    const tx_slot *as = c->a, *bs = c->b, *cs = c->bias, *ys = c->y;
    int64_t M = c->M, N = c->N, K = c->K;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MATMUL, "matmul", c->resid ? 4 : 3, 1);
    r.generic_only = true;
    tx_req_define_int(&r, "TX_PASS", 2);
    tx_req_define_int(&r, "TX_TM", 1);
    if (c->resid)
        tx_req_resid(&r, 3, &c->resid->st->tex, c->resid->numel, c->y->numel);
    req_act(c, &r);
    tx_req_int(&r, "p_M", (int)M);
    tx_req_int(&r, "p_N", (int)N);
    tx_req_int(&r, "p_K", (int)K);
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_sam", (int)(c->ta ? 1 : K));
    tx_req_int(&r, "p_sak", (int)(c->ta ? M : 1));
    tx_req_int(&r, "p_sbk", (int)(c->tb ? 1 : N));
    tx_req_int(&r, "p_sbn", (int)(c->tb ? K : 1));
    tx_req_int(&r, "p_bias", cs ? (c->bias_rows ? 2 : 1) : 0);
    req_operands(c, &r);
    /* without a bias its slot holds any texture: the program never reads it */
    const tx_texture *ins[4] = {&as->st->tex, &bs->st->tex, cs ? &cs->st->tex : &as->st->tex,
                                c->resid ? &c->resid->st->tex : NULL};
    return tx_gpu_run(ctx, "matmul", &r, ins, r.n_inputs, (const tx_texture *[]){&ys->st->tex}, 1);
}

/* The interleaving pass: row tiles of layout ph into the row-major texture y
 * of y_numel elements; with c, adding c's residual, then its activation
 * (the tiles leave both out where there is a residual). */
static tx_status interleave(tx_ctx *ctx, const char *op, const tx_phases *ph,
                            const tx_texture *tiles, const tx_texture *y, int64_t y_numel,
                            const tx_matmul_call *c) {
    const tx_slot *rs = c ? c->resid : NULL;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MATMUL, "matmul", rs ? 2 : 1, 1);
    r.array_inputs = 1;
    /* A copy pass: constant folding buys nothing; keep it to one program. */
    r.generic_only = true;
    tx_req_define_int(&r, "TX_PASS", 1);
    tx_req_define_int(&r, "TX_TM", ph->tm);
    if (ph->npad)
        tx_req_define(&r, "TX_NPAD", "1");
    tx_req_int(&r, "p_M", (int)ph->m);
    tx_req_int(&r, "p_N", (int)ph->n);
    tx_req_int(&r, "p_MT", (int)((ph->m + ph->tm - 1) / ph->tm));
    tx_req_int(&r, "p_ntex", (int)((y_numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", y->wshift);
    tx_req_int(&r, "p_a_ws", tiles->wshift);
    tx_req_tex_inv(&r, "p_a_iw", "p_a_ih", tiles);
    if (rs) {
        tx_req_resid(&r, 1, &rs->st->tex, rs->numel, y_numel);
        req_act(c, &r);
    }
    return tx_gpu_run(ctx, op, &r, (const tx_texture *[]){tiles, rs ? &rs->st->tex : NULL},
                      rs ? 2 : 1, (const tx_texture *[]){y}, 1);
}

/* Whether y may keep the tm-row tiles as its texture (tx_phases): no
 * residual to add (the interleave adds it), one texture (not split), rows
 * padded to a multiple of tm by at most an eighth (the tiles live as long
 * as y: 9 rows on 8-row tiles would hold 16), and not turned off (env
 * TEXEL_PHASES=0). */
static bool leave_phases(const tx_ctx *ctx, const tx_matmul_call *c, int tm) {
    int64_t pad = (c->M + tm - 1) / tm * tm - c->M;
    return !ctx->no_phases && !c->resid && !c->y->st->n_parts && pad * 8 <= c->M;
}

/* st's tiles replaced by a row-major texture: holding their values
 * (interleaved) or, for a storage about to be overwritten, none. On failure
 * st keeps its tiles, still a whole tensor. */
static tx_status to_rows(tx_ctx *ctx, const char *op, tx_storage *st, bool values) {
    if (st->dev != TX_DEVICE_GPU || !st->phases.tm)
        return TX_STATUS_OK;
    tx_texture flat = {0};
    int64_t texels = (st->numel + 3) / 4;
    tx_status s = tx_pool_acquire(ctx, op, texels > 1 ? texels : 1, &flat);
    if (!s && values)
        s = interleave(ctx, op, &st->phases, &st->tex, &flat, st->numel, NULL);
    if (s) {
        if (flat.gl)
            tx_pool_release(ctx, &flat);
        return s;
    }
    tx_pool_release(ctx, &st->tex);
    st->tex = flat;
    st->phases.tm = 0;
    return TX_STATUS_OK;
}

tx_status tx_gpu_flatten(tx_ctx *ctx, const char *op, tx_storage *st) {
    return to_rows(ctx, op, st, true);
}

tx_status tx_gpu_flat_output(tx_ctx *ctx, const char *op, tx_storage *st) {
    return to_rows(ctx, op, st, false);
}

/* One matmul with tm-row tiles (1: written directly; 4 or 8: one render
 * target per row phase, each a layer of one array texture, then the
 * interleaving pass, or y keeps the tiles: leave_phases). first: the 1 x 4
 * tiles of a shape's first calls, whose signature never specializes (the
 * steady variant's does). */
static tx_status run_tm(tx_ctx *ctx, const tx_matmul_call *c, int tm, bool first) {
    const char *name = "matmul";
    const tx_slot *cs = c->bias, *ys = c->y;
    int64_t M = c->M, N = c->N;
    tx_texture tiles = {0}; /* tm > 1: the row phases, one layer each */
    tx_status st =
        tm > 1 ? tx_pool_acquire_layers(ctx, name, tile_texels(c, tm), tm, &tiles) : TX_STATUS_OK;
    if (!st) {
        tx_program_req r;
        main_req(c, tm, tm > 1 ? tiles.wshift : ys->st->tex.wshift, &r);
        r.generic_only = first;
        tx_texture layer[8];
        const tx_texture *out_tex[8];
        for (int i = 0; i < tm; i++) {
            layer[i] = tm > 1 ? tx_layer(&tiles, i) : ys->st->tex;
            out_tex[i] = &layer[i];
        }
        const tx_texture *ins[4] = {&c->a->st->tex, &c->b->st->tex, cs ? &cs->st->tex : NULL, NULL};
        int n_in = cs ? 3 : 2;
        if (c->resid && tm == 1)
            ins[n_in++] = &c->resid->st->tex;
        st = tx_gpu_run(ctx, name, &r, ins, n_in, out_tex, tm);
    }
    if (!st && tm > 1) {
        tx_phases ph = {.tm = tm, .m = M, .n = N, .nbatch = c->nbatch, .npad = padded_rows(c, tm)};
        if (leave_phases(ctx, c, tm)) { /* y is the tiles until a consumer needs rows */
            tx_pool_release(ctx, &ys->st->tex);
            ys->st->tex = tiles;
            ys->st->phases = ph;
            return TX_STATUS_OK;
        }
        st = interleave(ctx, name, &ph, &tiles, &ys->st->tex, ys->numel, c);
    }
    if (tiles.gl)
        tx_pool_release(ctx, &tiles);
    return st;
}

/* At most this many multiply-adds, a shape's first calls (until its
 * specialized program is ready) run 1 x 4 tiles: one small program, no
 * interleaving pass, where the row tiles cost two programs to compile and,
 * on drivers that translate at the first draw, to translate. Chromium on
 * SwiftShader, first call: matmul 128 53 vs 128 ms, 256 73 vs 126 ms (TF.js
 * webgl 79-98); 512 gains nothing (228 vs 217 ms), its 1 x 4 run being slow. */
#define TX_MATMUL_FIRST_SMALL_MACS (1 << 24)
/* At most this many, the first calls run the first-call program (TX_PASS 2),
 * one for every transpose, bias and N: a training step's or a small model's
 * matmuls translate one program, not one each. SwiftShader translates a
 * program at its first draw: the 1 x 4 tiles ~30 ms, the unaligned-N program
 * ~80 ms, the first-call program 40-70 ms; it runs slower (128^3 25 ms
 * against 3), hence only for small products. */
#define TX_MATMUL_FIRST_TINY_MACS  (1 << 18)

static tx_status run_variant(tx_ctx *ctx, const void *call, int tm) {
    const tx_matmul_call *c = call;
    /* a tuning run's earlier candidate may have left y as its tiles */
    tx_status st = tx_gpu_flat_output(ctx, "matmul", c->y->st);
    if (st)
        return st;
    double macs = (double)c->nbatch * (double)c->M * (double)c->N * (double)c->K;
    int ws = tm > 1 ? tx_tex_wshift(ctx, tile_texels(c, tm)) : c->y->st->tex.wshift;
    /* not where a dim may vary: every length must run the programs compiled
     * for the first, and a length would move the product across the line */
    bool vary_m, vary_n, vary_k;
    matmul_vary(c, &vary_m, &vary_n, &vary_k);
    bool tiny = macs <= TX_MATMUL_FIRST_TINY_MACS && !vary_m && !vary_n && !vary_k;
    if (ws >= 0 && !ctx->tune_measuring && macs <= TX_MATMUL_FIRST_SMALL_MACS && (tm > 1 || tiny)) {
        tx_program_req r;
        main_req(c, tm, ws, &r);
        if (!tx_cache_steady(ctx, "matmul", &r))
            return tiny ? run_first(ctx, c) : run_tm(ctx, c, 1, true);
    }
    return run_tm(ctx, c, tm, false);
}

tx_status tx_gpu_matmul(tx_ctx *ctx, const tx_matmul_call *c) {
    bool vary_m, vary_n, vary_k;
    matmul_vary(c, &vary_m, &vary_n, &vary_k);
    /* row tiles where N is a fixed multiple of 4, or padded to one where it
     * is not (N > 4: a matrix-vector product keeps its own path) or may
     * change (whatever it is now) */
    bool vec = c->N % 4 == 0 || c->N > 4 || vary_n;
    int tm = vec && (c->M >= TX_MATMUL_TILE_MIN_M || vary_m) ? 4 : 1;
    /* Eight row phases where the device has 8 draw buffers: 12 fetches per
     * 128 FMAs instead of 8 per 64 (llvmpipe, 1024²: 16.9 vs 12.9 GFLOP/s). */
    bool can8 = (c->M >= 2 * TX_MATMUL_TILE_MIN_M || vary_m) && ctx->caps.max_draw_buffers >= 8;
    if (tm == 4 && can8)
        tm = 8;
    /* one tile for every length where a dim may vary (a choice measured per
     * size would give another length another program) */
    if (tm == 1 || vary_m || vary_n || vary_k)
        return run_variant(ctx, c, tm);
    /* per device: the 8-target tile that wins on llvmpipe may lose elsewhere */
    static const int cand[3] = {1, 4, 8};
    double macs = (double)c->nbatch * (double)c->M * (double)c->N * (double)c->K;
    return tx_tune_run(ctx, "matmul-tm", macs, cand, can8 ? 3 : 2, tm, run_variant, c);
}
