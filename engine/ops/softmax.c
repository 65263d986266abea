/* SOFTMAX family front: softmax and log_softmax along one axis (ONNX opset
 * >= 13), or over the flattened trailing dims (coerce_2d, opset < 13); kernels
 * in engine/gpu/softmax.c and engine/cpu/softmax.c. */
#include <string.h>

#include "../device.h"

static tx_status softmax_run(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_softmax_desc *desc,
                             tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_SOFTMAX, "tx_softmax", "a softmax", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    tx_softmax_desc d = desc ? *desc : (tx_softmax_desc){.axis = -1};
    tx_slot *xs;
    st = tx_check_input(ctx, name, "x", x, true, &xs);
    if (st)
        return st;
    bool mask[TX_MAX_RANK];
    st = tx_axes_mask(ctx, name, xs, 1, &d.axis, mask);
    if (st)
        return st;
    int axis = d.axis < 0 ? d.axis + xs->rank : d.axis;
    int64_t A = 1, R = 1, B = 1;
    for (int i = 0; i < axis; i++)
        A *= xs->shape[i];
    for (int i = axis; i < xs->rank; i++) {
        if (d.coerce_2d)
            mask[i] = true;
        if (mask[i])
            R *= xs->shape[i];
        else
            B *= xs->shape[i];
    }
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){xs}, 1, xs->rank, xs->shape, TX_DTYPE_FLOAT32,
                      &dev, &y);
    if (st)
        return st;
    tx_softmax_call c = {
        .op = op, .A = A, .R = R, .B = B, .x = tx_slot_get(ctx, x), .y = tx_slot_get(ctx, y)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, softmax, c), y, out);
}

tx_status tx_softmax(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_softmax_desc *desc,
                     tx_tensor *out) {
    tx_status st = softmax_run(ctx, op, x, desc, out);
    if (!st && tx_tape_recording(ctx))
        tx_tape_note(ctx, op, &x, 1,
                     &(tx_op_attrs){.softmax = desc ? *desc : (tx_softmax_desc){.axis = -1}}, NULL,
                     *out, (tx_tensor){0});
    return st;
}
