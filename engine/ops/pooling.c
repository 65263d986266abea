/* POOL family: MaxPool, AveragePool and their global forms, NCHW.
 *
 * Pools are cheap next to the convs around them (k*k reads per output, no
 * FMAs to share), so one output texel per fragment straight from the
 * row-major input is enough; only the global pools take texel-wide steps. */
#include <string.h>

#include "../internal.h"

tx_status tx_pooling(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_pool_desc *desc, tx_tensor *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (tx_op_family(op) != TX_FAMILY_POOL)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_pooling: %s (%d) is not a pool op",
                       tx_op_name(op), (int)op);
    const char *name = tx_op_name(op);
    bool global = op == TX_OP_GLOBALMAXPOOL || op == TX_OP_GLOBALAVERAGEPOOL;
    bool is_max = op == TX_OP_MAXPOOL || op == TX_OP_GLOBALMAXPOOL;
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: out is NULL", name);
    if (!global && !desc)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: desc (kernel_shape) is NULL", name);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", name);
    tx_slot *xs;
    tx_status st = tx_check_tensor(ctx, name, "x", x, &xs);
    if (st)
        return st;
    if (xs->dtype != TX_DTYPE_FLOAT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: x must be float32", name);
    tx_window g;
    int64_t oshape[TX_MAX_RANK];
    if (global) {
        char s[160];
        tx_shape_str(s, sizeof s, xs->rank, xs->shape);
        if (xs->rank < 3 || xs->rank > 4)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: x %s must be [N, C, H, W] or [N, C, W]", name, s);
        memset(&g, 0, sizeof g);
        g.n = xs->shape[0];
        g.c = xs->shape[1];
        g.h = xs->rank == 4 ? xs->shape[2] : 1;
        g.w = xs->shape[xs->rank - 1];
        g.ho = g.wo = 1;
    } else {
        tx_pool_desc d = *desc;
        st = tx_window_geom(ctx, name, xs, d.kernel_shape, d.strides, d.dilations, d.pads,
                            d.auto_pad, d.ceil_mode, &g);
        if (st)
            return st;
    }
    if (g.h * g.w == 0 && g.n * g.c > 0) {
        char s[160];
        tx_shape_str(s, sizeof s, xs->rank, xs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: x %s has empty planes to pool", name, s);
    }
    oshape[0] = g.n;
    oshape[1] = g.c;
    if (xs->rank == 4)
        oshape[2] = g.ho;
    oshape[xs->rank - 1] = g.wo;
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, xs->rank, oshape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    xs = tx_slot_get(ctx, x);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel > 0) {
        tx_program_req r;
        tx_req_init(&r, TX_FAMILY_POOL, "pool", 1, 1);
        tx_req_define(&r, is_max ? "TX_MAX" : "TX_AVG", "1");
        tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
        tx_req_int(&r, "p_n", (int)ys->numel);
        tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
        tx_req_int(&r, "p_H", (int)g.h);
        tx_req_int(&r, "p_W", (int)g.w);
        if (global) {
            tx_req_define(&r, "TX_GLOBAL", "1");
            if ((g.h * g.w) % 4 == 0)
                tx_req_define(&r, "TX_GVEC", "1");
        } else {
            if (!is_max && desc->count_include_pad)
                tx_req_define(&r, "TX_INCLUDE_PAD", "1");
            tx_req_int(&r, "p_Ho", (int)g.ho);
            tx_req_int(&r, "p_Wo", (int)g.wo);
            tx_req_int(&r, "p_kh", g.kh);
            tx_req_int(&r, "p_kw", g.kw);
            tx_req_int(&r, "p_sh", g.sh);
            tx_req_int(&r, "p_sw", g.sw);
            tx_req_int(&r, "p_dh", g.dh);
            tx_req_int(&r, "p_dw", g.dw);
            tx_req_int(&r, "p_pt", g.pt);
            tx_req_int(&r, "p_pl", g.pl);
            tx_req_int(&r, "p_He", (int)g.h + g.pb);
            tx_req_int(&r, "p_We", (int)g.w + g.pr);
        }
        st = tx_cache_bind(ctx, name, &r);
        if (!st)
            st = tx_draw(ctx, name, (const tx_texture *[]){&xs->st->tex}, 1,
                         (const tx_texture *[]){&ys->st->tex}, 1);
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
}
