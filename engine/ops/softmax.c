/* SOFTMAX family: softmax and log_softmax along one axis (ONNX opset >= 13),
 * or over the flattened trailing dims (coerce_2d, opset < 13).
 *
 * The reduction passes (ops/reduce.c) compute each row's (max, sum of
 * exp(x - max)) as a tree in one sweep over x (the online log-sum-exp
 * recurrence); one elementwise pass then writes exp(x - max) / sum or
 * x - max - log(sum). Max subtraction keeps exp from overflowing. */
#include <string.h>

#include "../internal.h"

tx_status tx_softmax(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_softmax_desc *desc,
                     tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_SOFTMAX, "tx_softmax", "a softmax", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    tx_softmax_desc d = desc ? *desc : (tx_softmax_desc){.axis = -1};
    tx_slot *xs;
    st = tx_check_tensor(ctx, name, "x", x, &xs);
    if (st)
        return st;
    if (xs->dtype != TX_DTYPE_FLOAT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: x must be float32", name);
    bool mask[TX_MAX_RANK];
    st = tx_axes_mask(ctx, name, xs, 1, &d.axis, mask);
    if (st)
        return st;
    int axis = d.axis < 0 ? d.axis + xs->rank : d.axis;
    int64_t R = 1, B = 1;
    for (int i = axis; i < xs->rank; i++) {
        if (d.coerce_2d)
            mask[i] = true;
        if (mask[i])
            R *= xs->shape[i];
        else
            B *= xs->shape[i];
    }
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, xs->rank, xs->shape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    xs = tx_slot_get(ctx, x);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel > 0) {
        tx_reduce_plan plan;
        tx_reduce_plan_make(xs->rank, xs->shape, mask, &plan);
        tx_texture stats;
        st = tx_reduce_run(ctx, name, &xs->st->tex, &plan, TX_REDUCE_ACC_LSE, 0, false, NULL,
                           &stats);
        if (!st) {
            tx_program_req r;
            tx_req_init(&r, TX_FAMILY_SOFTMAX, "softmax", 2, 1);
            if (op == TX_OP_LOG_SOFTMAX)
                tx_req_define(&r, "TX_LOG", "1");
            bool rowvec = B == 1 && R % 4 == 0;
            if (rowvec)
                tx_req_define(&r, "TX_ROWVEC", "1");
            tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
            tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
            tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
            tx_req_int(&r, "p_st_ws", stats.wshift);
            tx_req_int(&r, "p_R", (int)R);
            if (!rowvec) {
                tx_req_int(&r, "p_n", (int)ys->numel);
                tx_req_int(&r, "p_B", (int)B);
            }
            st = tx_cache_bind(ctx, name, &r);
            if (!st) {
                const tx_texture *ins[2] = {&xs->st->tex, &stats};
                const tx_texture *outs[1] = {&ys->st->tex};
                st = tx_draw(ctx, name, ins, 2, outs, 1);
            }
            tx_pool_release(ctx, &stats);
        }
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
}
