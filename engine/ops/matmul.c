/* MATMUL family front: batched C = act(A × B + bias); kernels in
 * engine/gpu/matmul.c and engine/cpu/matmul.c. */
#include <string.h>

#include "../device.h"
#include "../split.h"

static tx_status fail_shapes(tx_ctx *ctx, tx_status s, const char *why, const tx_slot *a,
                             const tx_slot *b) {
    char x[160], y[160];
    tx_shape_str(x, sizeof x, a->rank, a->shape);
    tx_shape_str(y, sizeof y, b->rank, b->shape);
    return tx_fail(ctx, s, "matmul: %s (a %s, b %s)", why, x, y);
}

static tx_status matmul_run(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                            tx_tensor *out) {
    const char *name = "matmul";
    tx_matmul_desc d = desc ? *desc : (tx_matmul_desc){0};
    tx_slot *s[3];
    tx_status st = tx_op_begin_operands(ctx, name, out, (const char *const[]){"a", "b", "bias"}, a,
                                        b, d.bias, s);
    if (st)
        return st;
    tx_slot *as = s[0], *bs = s[1], *cs = s[2];
    if (d.activation != TX_OP_NONE && tx_op_family(d.activation) != TX_FAMILY_UNARY)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "matmul: activation %d is not a unary op",
                       (int)d.activation);
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
    /* batch dims padded on the left to 4; strides in whole matrices */
    tx_matmul_call c = {.M = M, .N = N, .K = K, .ta = ta, .tb = tb, .nbatch = 1};
    int64_t bda[4], bdb[4];
    if (tx_broadcast(4, abr, as->shape, bbr, bs->shape, bda, bdb, c.bd, c.sa, c.sb) >= 0)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "batch dims do not broadcast", as, bs);
    int64_t oshape[TX_MAX_RANK + 2];
    int orank = 0;
    for (int i = 0; i < 4; i++)
        c.nbatch *= c.bd[i];
    for (int i = 4 - br; i < 4; i++)
        oshape[orank++] = c.bd[i];
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
    int64_t ynumel = 1;
    for (int i = 0; i < orank; i++)
        ynumel *= oshape[i];
    if (as->st->n_parts || bs->st->n_parts || tx_needs_split(ctx, as->st->dev, ynumel))
        return tx_split_matmul(ctx, a, b, &d, out);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){as, bs, cs}, 3, orank, oshape,
                      TX_DTYPE_FLOAT32, &dev, &y);
    if (st)
        return st;
    c.act = d.activation;
    c.a = tx_slot_get(ctx, a);
    c.b = tx_slot_get(ctx, b);
    c.bias = d.bias.id ? tx_slot_get(ctx, d.bias) : NULL;
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, matmul, c), y, out);
}

tx_status tx_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                    tx_tensor *out) {
    tx_status st = matmul_run(ctx, a, b, desc, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs at = {.matmul = desc ? *desc : (tx_matmul_desc){0}};
        tx_tensor bias = at.matmul.bias;
        at.matmul.bias = (tx_tensor){0};
        tx_tape_note(ctx, TX_OP_MATMUL, (tx_tensor[]){a, b, bias}, bias.id ? 3 : 2, &at, NULL, *out,
                     (tx_tensor){0});
    }
    return st;
}
