/* BINARY family front: y = a (op) b with numpy broadcasting; kernels in
 * engine/gpu/binary.c and engine/cpu/binary.c. */
#include <string.h>

#include "../device.h"
#include "../split.h"

static tx_status binary_run(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out) {
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
    tx_binary_call c = {.op = op, .dtype = as->dtype};
    int64_t da[6], db[6];
    int bad = tx_broadcast(6, as->rank, as->shape, bs->rank, bs->shape, da, db, c.dims, c.sa, c.sb);
    if (bad >= 0) {
        char x[160], y[160];
        tx_shape_str(x, sizeof x, as->rank, as->shape);
        tx_shape_str(y, sizeof y, bs->rank, bs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", name, x, y,
                       bad - (6 - rank), (long long)da[bad], (long long)db[bad]);
    }
    int64_t ynumel = 1;
    for (int i = 0; i < 6; i++)
        ynumel *= c.dims[i];
    if (as->st->n_parts || bs->st->n_parts || tx_needs_split(ctx, as->st->dev, ynumel))
        return tx_split_binary(ctx, op, a, b, out);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){as, bs}, 2, rank, c.dims + 6 - rank, as->dtype,
                      &dev, &y);
    if (st)
        return st;
    c.a = tx_slot_get(ctx, a);
    c.b = tx_slot_get(ctx, b);
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, binary, c), y, out);
}

tx_status tx_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out) {
    tx_status st = binary_run(ctx, op, a, b, out);
    if (!st)
        tx_tape_note(ctx, op, (tx_tensor[]){a, b}, 2, NULL, NULL, *out, (tx_tensor){0});
    return st;
}
