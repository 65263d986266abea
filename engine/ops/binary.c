/* BINARY family front: y = a (op) b with numpy broadcasting; kernels in
 * engine/gpu/binary.c and engine/cpu/binary.c. */
#include <string.h>

#include "../device.h"

tx_status tx_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_BINARY, "tx_binary", "a binary op", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    tx_slot *as, *bs;
    st = tx_check_tensor(ctx, name, "a", a, &as);
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
                           "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", name, x,
                           y, i - (6 - rank), (long long)da[i], (long long)db[i]);
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
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){as, bs}, 2, rank, oshape, as->dtype, &dev, &y);
    if (st)
        return st;
    tx_binary_call c = {.op = op,
                        .dtype = as->dtype,
                        .a = tx_slot_get(ctx, a),
                        .b = tx_slot_get(ctx, b),
                        .y = tx_slot_get(ctx, y)};
    for (int i = 0; i < 6; i++) {
        c.dims[i] = dout[i];
        c.sa[i] = sa[i];
        c.sb[i] = sb[i];
    }
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, binary, c), y, out);
}
