/* UNARY, CLIP, ACT and CAST families front: y = f(x); kernels in
 * engine/gpu/unary.c and engine/cpu/unary.c. */
#include <math.h>
#include <string.h>

#include "../device.h"
#include "../split.h"

static tx_status unary_run(tx_ctx *ctx, tx_op op, tx_tensor x, float lo, float hi, tx_dtype to,
                           tx_tensor *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_family fam = tx_op_family(op);
    if (fam != TX_FAMILY_UNARY && fam != TX_FAMILY_CLIP && fam != TX_FAMILY_ACT &&
        fam != TX_FAMILY_CAST)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_unary: %s (%d) is not a unary op",
                       tx_op_name(op), (int)op);
    const char *name = tx_op_name(op);
    tx_status st = tx_op_begin(ctx, name, out);
    if (st)
        return st;
    if (fam == TX_FAMILY_CLIP && (isnan(lo) || isnan(hi) || lo > hi))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "clip: bounds [%g, %g] are not ordered",
                       (double)lo, (double)hi);
    if (fam == TX_FAMILY_ACT && (!isfinite(lo) || !isfinite(hi)))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: alpha %g / beta %g must be finite",
                       name, (double)lo, (double)hi);
    if (fam == TX_FAMILY_CAST && (unsigned)to >= TX_DTYPE_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "cast: unknown dtype %d", (int)to);
    tx_slot *xs;
    st = tx_check_input(ctx, name, "x", x, fam != TX_FAMILY_CAST, &xs);
    if (st)
        return st;
    if (xs->st->n_parts)
        return tx_split_unary(ctx, op, x, lo, hi, to, out);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){xs}, 1, xs->rank, xs->shape,
                      fam == TX_FAMILY_CAST ? to : xs->dtype, &dev, &y);
    if (st)
        return st;
    tx_unary_call c = {.op = op,
                       .family = fam,
                       .lo = lo,
                       .hi = hi,
                       .to = to,
                       .x = tx_slot_get(ctx, x),
                       .y = tx_slot_get(ctx, y)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, unary, c), y, out);
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

tx_status tx_unary_run(tx_ctx *ctx, tx_op op, tx_tensor x, float lo, float hi, tx_dtype to,
                       tx_tensor *out) {
    tx_status st = unary_run(ctx, op, x, lo, hi, to, out);
    if (!st && tx_tape_recording(ctx))
        tx_tape_note(ctx, op, &x, 1,
                     &(tx_op_attrs){.lo = lo, .hi = hi, .alpha = lo, .beta = hi, .cast_to = to},
                     NULL, *out, (tx_tensor){0});
    return st;
}
