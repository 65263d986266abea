/* BINARY family: y = a (op) b with numpy broadcasting. */
#include <string.h>

#include "../internal.h"

static const char *const k_dims[6] = {"p_d0", "p_d1", "p_d2", "p_d3", "p_d4", "p_d5"};
static const char *const k_as[6] = {"p_as0", "p_as1", "p_as2", "p_as3", "p_as4", "p_as5"};
static const char *const k_bs[6] = {"p_bs0", "p_bs1", "p_bs2", "p_bs3", "p_bs4", "p_bs5"};

tx_status tx_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (tx_op_family(op) != TX_FAMILY_BINARY)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_binary: %s (%d) is not a binary op",
                       tx_op_name(op), (int)op);
    const char *name = tx_op_name(op);
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: out is NULL", name);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", name);
    tx_slot *as, *bs;
    tx_status st = tx_check_tensor(ctx, name, "a", a, &as);
    if (!st)
        st = tx_check_tensor(ctx, name, "b", b, &bs);
    if (st)
        return st;
    if (as->dtype != bs->dtype)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: a is %s, b is %s", name,
                       as->dtype == TX_DTYPE_INT32 ? "int32" : "float32",
                       bs->dtype == TX_DTYPE_INT32 ? "int32" : "float32");
    /* Broadcast: align right, pad to 6 dims. */
    int rank = as->rank > bs->rank ? as->rank : bs->rank;
    int64_t da[6], db[6], dout[6], sa[6], sb[6];
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < 6; i++) {
        int ia = i - (6 - as->rank), ib = i - (6 - bs->rank);
        da[i] = ia >= 0 ? as->shape[ia] : 1;
        db[i] = ib >= 0 ? bs->shape[ib] : 1;
        if (da[i] != db[i] && da[i] != 1 && db[i] != 1) {
            char x[160], y[160];
            tx_shape_str(x, sizeof x, as->rank, as->shape);
            tx_shape_str(y, sizeof y, bs->rank, bs->shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", name,
                           x, y, i - (6 - rank), (long long)da[i], (long long)db[i]);
        }
        dout[i] = da[i] == 1 ? db[i] : da[i];
    }
    for (int i = 0; i < rank; i++)
        oshape[i] = dout[6 - rank + i];
    int64_t ea = 1, eb = 1;
    for (int i = 5; i >= 0; i--) {
        sa[i] = da[i] == 1 ? 0 : ea;
        sb[i] = db[i] == 1 ? 0 : eb;
        ea *= da[i];
        eb *= db[i];
    }
    tx_dtype dtype = as->dtype;
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, rank, oshape, dtype, &y);
    if (st)
        return st;
    as = tx_slot_get(ctx, a);
    bs = tx_slot_get(ctx, b);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel > 0) {
        tx_program_req r;
        tx_req_init(&r, TX_FAMILY_BINARY, "binary", 2, 1);
        char fn[48];
        snprintf(fn, sizeof fn, "tx_b_%s", name);
        tx_req_define(&r, "TX_OP", fn);
        if (dtype == TX_DTYPE_INT32)
            tx_req_define(&r, "TX_INT", "1");
        int mode = 0;
        int64_t last = rank > 0 ? oshape[rank - 1] : 1;
        bool same = as->numel == ys->numel && bs->numel == ys->numel;
        if (same)
            mode = 1;
        else if (bs->numel == 1 && as->numel == ys->numel)
            mode = 2;
        else if (as->numel == 1 && bs->numel == ys->numel)
            mode = 3;
        else if (as->numel == ys->numel && bs->numel == last && last % 4 == 0 &&
                 db[5] == last)
            mode = 4;
        tx_req_define_int(&r, "TX_MODE", mode);
        tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
        tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r, "p_a_ws", as->st->tex.wshift);
        tx_req_int(&r, "p_b_ws", bs->st->tex.wshift);
        if (mode == 4)
            tx_req_int(&r, "p_bn4", (int)(last / 4));
        if (mode == 0) {
            tx_req_int(&r, "p_n", (int)ys->numel);
            for (int i = 0; i < 6; i++) {
                tx_req_int(&r, k_dims[i], (int)dout[i]);
                tx_req_int(&r, k_as[i], (int)sa[i]);
                tx_req_int(&r, k_bs[i], (int)sb[i]);
            }
        }
        st = tx_cache_bind(ctx, name, &r);
        if (!st) {
            const tx_texture *ins[2] = {&as->st->tex, &bs->st->tex};
            const tx_texture *outs[1] = {&ys->st->tex};
            st = tx_draw(ctx, name, ins, 2, outs, 1);
        }
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
}
