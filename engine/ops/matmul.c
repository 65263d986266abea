/* MATMUL family: batched C = act(A × B + bias).
 *
 * Work per fragment is the lever on a fragment-shader engine (ANCHORS.md):
 * with N % 4 == 0 each fragment computes a 4- or 8-row × 4-column output tile
 * and writes it to as many render targets (one per row phase), then a cheap
 * second draw interleaves them into the row-major output. Small M uses 1 × 4 tiles
 * written directly. N % 4 != 0 falls back to 4 dot products per fragment. */
#include <string.h>

#include "../internal.h"

/* Below this many rows the 4-row tile's second draw costs more than it saves. */
#define TX_MATMUL_TILE_MIN_M 8

static const char *const k_bd[4] = {"p_bd0", "p_bd1", "p_bd2", "p_bd3"};
static const char *const k_ab[4] = {"p_ab0", "p_ab1", "p_ab2", "p_ab3"};
static const char *const k_bb[4] = {"p_bb0", "p_bb1", "p_bb2", "p_bb3"};

static tx_status fail_shapes(tx_ctx *ctx, tx_status s, const char *why, const tx_slot *a,
                             const tx_slot *b) {
    char x[160], y[160];
    tx_shape_str(x, sizeof x, a->rank, a->shape);
    tx_shape_str(y, sizeof y, b->rank, b->shape);
    return tx_fail(ctx, s, "matmul: %s (a %s, b %s)", why, x, y);
}

tx_status tx_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                    tx_tensor *out) {
    const char *name = "matmul";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "matmul: out is NULL");
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "matmul: the GL context is lost");
    tx_matmul_desc d = desc ? *desc : (tx_matmul_desc){0};
    tx_slot *as, *bs, *cs = NULL;
    tx_status st = tx_check_tensor(ctx, name, "a", a, &as);
    if (!st)
        st = tx_check_tensor(ctx, name, "b", b, &bs);
    if (!st && d.bias.id)
        st = tx_check_tensor(ctx, name, "bias", d.bias, &cs);
    if (st)
        return st;
    if (d.activation != TX_OP_NONE && tx_op_family(d.activation) != TX_FAMILY_UNARY)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "matmul: activation %d is not a unary op", (int)d.activation);
    if (as->dtype != TX_DTYPE_FLOAT32 || bs->dtype != TX_DTYPE_FLOAT32 ||
        (cs && cs->dtype != TX_DTYPE_FLOAT32))
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "matmul: operands must be float32");
    if (as->rank < 1 || bs->rank < 1)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "operands need rank >= 1", as, bs);
    bool ta = d.transpose_a && as->rank >= 2, tb = d.transpose_b && bs->rank >= 2;
    int64_t M = as->rank == 1 ? 1 : as->shape[as->rank - 2];
    int64_t K = as->shape[as->rank - 1];
    if (ta) {
        int64_t t = M;
        M = K;
        K = t;
    }
    int64_t KB = bs->rank == 1 ? bs->shape[0] : bs->shape[bs->rank - 2];
    int64_t N = bs->rank == 1 ? 1 : bs->shape[bs->rank - 1];
    if (tb) {
        int64_t t = KB;
        KB = N;
        N = t;
    }
    if (K != KB)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "inner dimensions differ", as, bs);
    int abr = as->rank > 2 ? as->rank - 2 : 0, bbr = bs->rank > 2 ? bs->rank - 2 : 0;
    int br = abr > bbr ? abr : bbr;
    /* batch dims padded on the left to 4 */
    int64_t bd[4], bda[4], bdb[4], sa[4], sb[4];
    for (int i = 0; i < 4; i++) {
        int ia = i - (4 - abr), ib = i - (4 - bbr);
        bda[i] = ia >= 0 ? as->shape[ia] : 1;
        bdb[i] = ib >= 0 ? bs->shape[ib] : 1;
        if (bda[i] != bdb[i] && bda[i] != 1 && bdb[i] != 1)
            return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "batch dims do not broadcast", as,
                               bs);
        bd[i] = bda[i] == 1 ? bdb[i] : bda[i];
    }
    int64_t ea = 1, eb = 1, nbatch = 1;
    for (int i = 3; i >= 0; i--) {
        sa[i] = bda[i] == 1 ? 0 : ea;
        sb[i] = bdb[i] == 1 ? 0 : eb;
        ea *= bda[i];
        eb *= bdb[i];
        nbatch *= bd[i];
    }
    int64_t oshape[TX_MAX_RANK + 2];
    int orank = 0;
    for (int i = 4 - br; i < 4; i++)
        oshape[orank++] = bd[i];
    if (as->rank > 1)
        oshape[orank++] = M;
    if (bs->rank > 1)
        oshape[orank++] = N;
    if (orank > TX_MAX_RANK)
        return fail_shapes(ctx, TX_STATUS_RANK_TOO_HIGH, "result rank exceeds 6", as, bs);
    if (cs && (cs->numel != N || (cs->rank >= 1 && cs->shape[cs->rank - 1] != N))) {
        char x[160];
        tx_shape_str(x, sizeof x, cs->rank, cs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "matmul: bias %s must have N = %lld values",
                       x, (long long)N);
    }
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, orank, oshape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    as = tx_slot_get(ctx, a);
    bs = tx_slot_get(ctx, b);
    cs = d.bias.id ? tx_slot_get(ctx, d.bias) : NULL;
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel == 0) {
        *out = y;
        return TX_STATUS_OK;
    }

    bool vec = N % 4 == 0;
    int tm = vec && M >= TX_MATMUL_TILE_MIN_M ? 4 : 1;
    /* Eight row phases where the device has 8 draw buffers: 12 fetches per
     * 128 FMAs instead of 8 per 64 (llvmpipe, 1024²: 16.9 vs 12.9 GFLOP/s). */
    if (tm == 4 && M >= 2 * TX_MATMUL_TILE_MIN_M && ctx->caps.max_draw_buffers >= 8)
        tm = 8;
    int64_t mt = (M + tm - 1) / tm;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MATMUL, "matmul", cs ? 3 : 2, tm);
    tx_req_define_int(&r, "TX_PASS", 0);
    tx_req_define_int(&r, "TX_TM", tm);
    if (vec)
        tx_req_define(&r, "TX_VEC", "1");
    if (ta)
        tx_req_define(&r, "TX_TA", "1");
    if (tb)
        tx_req_define(&r, "TX_TB", "1");
    if (!ta && K % 4 == 0)
        tx_req_define(&r, "TX_A_VEC", "1");
    if (ta && M % 4 == 0 && tm == 4)
        tx_req_define(&r, "TX_A_TVEC", "1");
    if (tb && K % 4 == 0)
        tx_req_define(&r, "TX_B_TVEC", "1");
    if (cs)
        tx_req_define(&r, "TX_BIAS", "1");
    if (d.activation != TX_OP_NONE) {
        char fn[48];
        snprintf(fn, sizeof fn, "tx_u_%s", tx_op_name(d.activation));
        tx_req_define(&r, "TX_ACT", fn);
    }
    int64_t ntex = vec ? nbatch * mt * (N / 4) : (ys->numel + 3) / 4;
    tx_texture tiles[8];
    int n_tiles = 0;
    if (tm > 1) {
        for (; n_tiles < tm; n_tiles++) {
            st = tx_pool_acquire(ctx, name, ntex, &tiles[n_tiles]);
            if (st)
                break;
        }
    }
    const tx_texture *out_tex[8];
    if (!st) {
        tx_req_int(&r, "p_M", (int)M);
        tx_req_int(&r, "p_N", (int)N);
        tx_req_int(&r, "p_K", (int)K);
        tx_req_int(&r, "p_MT", (int)mt);
        tx_req_int(&r, "p_ntex", (int)ntex);
        tx_req_int(&r, "p_out_ws", tm > 1 ? tiles[0].wshift : ys->st->tex.wshift);
        tx_req_int(&r, "p_a_ws", as->st->tex.wshift);
        tx_req_int(&r, "p_b_ws", bs->st->tex.wshift);
        tx_req_int(&r, "p_c_ws", cs ? cs->st->tex.wshift : 0);
        for (int i = 0; i < 4; i++) {
            tx_req_int(&r, k_bd[i], (int)bd[i]);
            tx_req_int(&r, k_ab[i], (int)sa[i]);
            tx_req_int(&r, k_bb[i], (int)sb[i]);
        }
        for (int i = 0; i < tm; i++)
            out_tex[i] = tm > 1 ? &tiles[i] : &ys->st->tex;
        st = tx_cache_bind(ctx, name, &r);
    }
    if (!st) {
        const tx_texture *ins[3] = {&as->st->tex, &bs->st->tex, cs ? &cs->st->tex : NULL};
        st = tx_draw(ctx, name, ins, cs ? 3 : 2, out_tex, tm);
    }
    if (!st && tm > 1) {
        tx_program_req r2;
        tx_req_init(&r2, TX_FAMILY_MATMUL, "matmul", tm, 1);
        /* A copy pass: constant folding buys nothing; keep it to one program. */
        r2.generic_only = true;
        tx_req_define_int(&r2, "TX_PASS", 1);
        tx_req_define_int(&r2, "TX_TM", tm);
        tx_req_int(&r2, "p_M", (int)M);
        tx_req_int(&r2, "p_N", (int)N);
        tx_req_int(&r2, "p_MT", (int)mt);
        tx_req_int(&r2, "p_ntex", (int)((ys->numel + 3) / 4));
        tx_req_int(&r2, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r2, "p_a_ws", tiles[0].wshift);
        st = tx_cache_bind(ctx, name, &r2);
        if (!st) {
            const tx_texture *ins[8];
            for (int i = 0; i < tm; i++)
                ins[i] = &tiles[i];
            const tx_texture *outs[1] = {&ys->st->tex};
            st = tx_draw(ctx, name, ins, tm, outs, 1);
        }
    }
    for (int i = 0; i < n_tiles; i++)
        tx_pool_release(ctx, &tiles[i]);
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}
