/* The steps every op front shares around its device kernel (declared in device.h). */
#include "device.h"

tx_status tx_op_device(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n,
                       tx_device *out) {
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (!ins[i])
            continue;
        if (first < 0)
            first = i;
        else if (ins[i]->st->dev != ins[first]->st->dev)
            return tx_fail(ctx, TX_STATUS_DEVICE_MISMATCH,
                           "%s: input %d is on the %s, input %d on the %s: move one with "
                           "tx_tensor_to",
                           op, first, tx_device_name(ins[first]->st->dev), i,
                           tx_device_name(ins[i]->st->dev));
    }
    *out = first < 0 ? ctx->device : ins[first]->st->dev;
    if (*out == TX_DEVICE_GPU && ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    return TX_STATUS_OK;
}

tx_status tx_op_finish(tx_ctx *ctx, tx_status st, tx_tensor y, tx_tensor *out) {
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}
