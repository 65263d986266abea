/* UNARY, CLIP, ACT and CAST families: y = f(x), one texel per fragment. */
#include <math.h>
#include <string.h>

#include "../internal.h"

tx_status tx_unary_run(tx_ctx *ctx, tx_op op, tx_tensor x, float lo, float hi, tx_dtype to,
                       tx_tensor *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_family fam = tx_op_family(op);
    if (fam != TX_FAMILY_UNARY && fam != TX_FAMILY_CLIP && fam != TX_FAMILY_ACT &&
        fam != TX_FAMILY_CAST)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_unary: %s (%d) is not a unary op",
                       tx_op_name(op), (int)op);
    const char *name = tx_op_name(op);
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: out is NULL", name);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", name);
    if (fam == TX_FAMILY_CLIP && (isnan(lo) || isnan(hi) || lo > hi))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "clip: bounds [%g, %g] are not ordered",
                       (double)lo, (double)hi);
    if (fam == TX_FAMILY_ACT && (!isfinite(lo) || !isfinite(hi)))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: alpha %g / beta %g must be finite",
                       name, (double)lo, (double)hi);
    if (fam == TX_FAMILY_CAST && (unsigned)to >= TX_DTYPE_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "cast: unknown dtype %d", (int)to);
    tx_slot *xs;
    tx_status st = tx_check_tensor(ctx, name, "x", x, &xs);
    if (st)
        return st;
    if (xs->dtype != TX_DTYPE_FLOAT32 && fam != TX_FAMILY_CAST)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: x must be float32", name);
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, xs->rank, xs->shape,
                         fam == TX_FAMILY_CAST ? to : xs->dtype, &y);
    if (st)
        return st;
    xs = tx_slot_get(ctx, x);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (xs->numel > 0) {
        tx_program_req r;
        tx_req_init(&r, fam, "unary", 1, 1);
        char fn[48];
        snprintf(fn, sizeof fn, "tx_u_%s", name);
        if (fam == TX_FAMILY_CAST) /* bool first: NaN is true, not 0 */
            snprintf(fn, sizeof fn, "%s",
                     hi != 0 ? "tx_u_cast_bool"
                             : (to == TX_DTYPE_INT32 ? "tx_u_cast_int" : "tx_u_cast_float"));
        tx_req_define(&r, "TX_FN", fn);
        tx_req_int(&r, "p_ntex", (int)((xs->numel + 3) / 4));
        tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
        if (fam == TX_FAMILY_CLIP) {
            if (isfinite(lo)) {
                tx_req_define(&r, "TX_HAS_LO", "1");
                tx_req_float(&r, "p_lo", lo);
            }
            if (isfinite(hi)) {
                tx_req_define(&r, "TX_HAS_HI", "1");
                tx_req_float(&r, "p_hi", hi);
            }
        }
        if (fam == TX_FAMILY_ACT) {
            tx_req_define(&r, "TX_HAS_ALPHA", "1");
            tx_req_float(&r, "p_alpha", lo);
            tx_req_float(&r, "p_beta", hi);
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
    }
    *out = y;
    return TX_STATUS_OK;
}

tx_status tx_unary(tx_ctx *ctx, tx_op op, tx_tensor x, tx_tensor *out) {
    if (ctx && tx_op_family(op) == TX_FAMILY_CLIP)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_unary: use tx_clip for clip");
    if (ctx && tx_op_family(op) == TX_FAMILY_ACT)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_unary: use tx_activation for %s",
                       tx_op_name(op));
    if (ctx && op == TX_OP_CAST)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_unary: use tx_cast for cast");
    return tx_unary_run(ctx, op, x, 0, 0, TX_DTYPE_FLOAT32, out);
}

tx_status tx_clip(tx_ctx *ctx, tx_tensor x, float lo, float hi, tx_tensor *out) {
    return tx_unary_run(ctx, TX_OP_CLIP, x, lo, hi, TX_DTYPE_FLOAT32, out);
}

tx_status tx_activation(tx_ctx *ctx, tx_op op, tx_tensor x, float alpha, float beta,
                        tx_tensor *out) {
    if (ctx && tx_op_family(op) != TX_FAMILY_ACT)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_activation: %s (%d) takes no alpha/beta", tx_op_name(op), (int)op);
    return tx_unary_run(ctx, op, x, alpha, beta, TX_DTYPE_FLOAT32, out);
}

tx_status tx_cast(tx_ctx *ctx, tx_tensor x, tx_dtype to, bool as_bool, tx_tensor *out) {
    return tx_unary_run(ctx, TX_OP_CAST, x, 0, as_bool ? 1.0f : 0.0f, to, out);
}
