/* MATMUL family front: batched C = act(A × B + bias + residual); kernels in
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

/* The checks of a matmul's operands and attributes, its call's geometry and
 * the output shape. */
static tx_status matmul_geom(tx_ctx *ctx, const tx_slot *as, const tx_slot *bs, const tx_slot *cs,
                             const tx_matmul_desc *d, tx_matmul_call *c, int *orank,
                             int64_t *oshape) {
    tx_status ast = tx_check_act(ctx, "matmul", d->activation, false, 0, 0, d->alpha, d->beta);
    if (ast)
        return ast;
    if (as->dtype != TX_DTYPE_FLOAT32 || bs->dtype != TX_DTYPE_FLOAT32 ||
        (cs && cs->dtype != TX_DTYPE_FLOAT32))
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "matmul: operands must be float32");
    if (as->rank < 1 || bs->rank < 1)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "operands need rank >= 1", as, bs);
    bool ta = d->transpose_a && as->rank >= 2, tb = d->transpose_b && bs->rank >= 2;
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
    *c = (tx_matmul_call){.M = M, .N = N, .K = K, .ta = ta, .tb = tb, .nbatch = 1};
    int64_t bda[4], bdb[4];
    if (tx_broadcast(4, abr, as->shape, bbr, bs->shape, bda, bdb, c->bd, c->sa, c->sb) >= 0)
        return fail_shapes(ctx, TX_STATUS_SHAPE_MISMATCH, "batch dims do not broadcast", as, bs);
    int64_t shape[TX_MAX_RANK + 2];
    int rank = 0;
    for (int i = 0; i < 4; i++)
        c->nbatch *= c->bd[i];
    for (int i = 4 - br; i < 4; i++)
        shape[rank++] = c->bd[i];
    if (as->rank > 1)
        shape[rank++] = M;
    if (bs->rank > 1)
        shape[rank++] = N;
    if (rank > TX_MAX_RANK)
        return fail_shapes(ctx, TX_STATUS_RANK_TOO_HIGH, "result rank exceeds 6", as, bs);
    if (cs && (cs->numel != N || (cs->rank >= 1 && cs->shape[cs->rank - 1] != N))) {
        char x[160];
        tx_shape_str(x, sizeof x, cs->rank, cs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "matmul: bias %s must have N = %lld values",
                       x, (long long)N);
    }
    c->act = d->activation;
    float ab[2];
    tx_act_floats(c->act, 0, 0, d->alpha, d->beta, ab);
    c->lo = ab[0];
    c->hi = ab[1];
    *orank = rank;
    memcpy(oshape, shape, sizeof(int64_t) * (size_t)rank);
    return TX_STATUS_OK;
}

/* act(a x b + bias + residual) as separate ops: under a recording tape (so
 * the residual gets its gradient) and over split tensors. */
static tx_status matmul_residual_parts(tx_ctx *ctx, tx_tensor a, tx_tensor b,
                                       const tx_matmul_desc *desc, tx_tensor *out) {
    tx_matmul_desc d = *desc;
    d.residual = (tx_tensor){0};
    d.activation = TX_OP_NONE;
    tx_tensor z;
    tx_status st = tx_matmul(ctx, a, b, &d, &z);
    float ab[2];
    tx_act_floats(desc->activation, 0, 0, desc->alpha, desc->beta, ab);
    return st ? st : tx_residual_act(ctx, z, desc->residual, desc->activation, ab[0], ab[1], out);
}

/* parts: a residual runs as separate ops (a recording tape) */
static tx_status matmul_run(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                            bool parts, tx_tensor *out) {
    const char *name = "matmul";
    tx_matmul_desc d = desc ? *desc : (tx_matmul_desc){0};
    tx_slot *s[3], *rs = NULL;
    tx_status st = tx_op_begin_operands(ctx, name, out, (const char *const[]){"a", "b", "bias"}, a,
                                        b, d.bias, s);
    if (st)
        return st;
    tx_slot *as = s[0], *bs = s[1], *cs = s[2];
    tx_matmul_call c;
    int orank = 0;
    int64_t oshape[TX_MAX_RANK];
    st = matmul_geom(ctx, as, bs, cs, &d, &c, &orank, oshape);
    if (!st && d.residual.id)
        st = tx_check_residual(ctx, name, d.residual, as, orank, oshape, &rs);
    if (st)
        return st;
    int64_t ynumel = 1;
    for (int i = 0; i < orank; i++)
        ynumel *= oshape[i];
    bool split = as->st->n_parts || bs->st->n_parts || tx_needs_split(ctx, as->st->dev, ynumel);
    if (rs && (split || parts))
        return matmul_residual_parts(ctx, a, b, &d, out);
    if (split)
        return tx_split_matmul(ctx, a, b, &d, out);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){as, bs, cs, rs}, 4, orank, oshape,
                      TX_DTYPE_FLOAT32, &dev, &y);
    if (st)
        return st;
    c.a = tx_slot_get(ctx, a);
    c.b = tx_slot_get(ctx, b);
    c.bias = d.bias.id ? tx_slot_get(ctx, d.bias) : NULL;
    c.resid = d.residual.id ? tx_slot_get(ctx, d.residual) : NULL;
    c.y = tx_slot_get(ctx, y);
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, matmul, c), y, out);
}

tx_status tx_matmul_out_shape(tx_ctx *ctx, int ra, const int64_t *ashape, int rb,
                              const int64_t *bshape, const tx_matmul_desc *d, int *orank,
                              int64_t *oshape) {
    tx_slot as = {.rank = ra, .dtype = TX_DTYPE_FLOAT32}, bs = as;
    bs.rank = rb;
    memcpy(as.shape, ashape, sizeof(int64_t) * (size_t)ra);
    memcpy(bs.shape, bshape, sizeof(int64_t) * (size_t)rb);
    tx_matmul_desc dd = *d;
    dd.bias = (tx_tensor){0};
    tx_matmul_call c;
    return matmul_geom(ctx, &as, &bs, NULL, &dd, &c, orank, oshape);
}

tx_status tx_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                    tx_tensor *out) {
    /* a residual under a tape: matmul, add and activation are recorded */
    bool parts = desc && desc->residual.id && tx_tape_recording(ctx);
    tx_status st = matmul_run(ctx, a, b, desc, parts, out);
    if (!st && !parts && tx_tape_recording(ctx)) {
        tx_op_attrs at = {.matmul = desc ? *desc : (tx_matmul_desc){0}};
        tx_tensor bias = at.matmul.bias;
        at.matmul.bias = (tx_tensor){0};
        tx_tape_note(ctx, TX_OP_MATMUL, (tx_tensor[]){a, b, bias}, bias.id ? 3 : 2, &at, NULL, *out,
                     (tx_tensor){0});
    }
    return st;
}
