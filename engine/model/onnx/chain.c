/* Chains of engine ops for the ONNX executors that compose many of them
 * (sample.c, volume.c): see tx_chain.h. */
#include <string.h>

#include "chain.h"

tx_tensor ch_keep(tx_chain *c, tx_status st, tx_tensor t) {
    if (c->st)
        return (tx_tensor){0};
    if (!st && c->n >= (int)TX_COUNTOF(c->t)) {
        tx_tensor_destroy(c->x->ctx, t);
        st = tx_x_fail(c->x, TX_STATUS_UNSUPPORTED, "too many intermediate tensors");
    }
    if (st) {
        c->st = st;
        return (tx_tensor){0};
    }
    c->t[c->n++] = t;
    return t;
}

void tx_chain_free(tx_chain *c) {
    for (int i = 0; i < c->n; i++)
        tx_tensor_destroy(c->x->ctx, c->t[i]);
    c->n = c->ns = 0;
}

tx_tensor ch_scalar(tx_chain *c, float v) {
    for (int i = 0; i < c->ns && !c->st; i++)
        if (memcmp(&c->sv[i], &v, sizeof v) == 0)
            return c->st_[i];
    tx_tensor t = {0};
    tx_status st =
        c->st
            ? c->st
            : tx_tensor_create(c->x->ctx,
                               &(tx_tensor_desc){.rank = 0, .dtype = TX_DTYPE_FLOAT32, .data = &v},
                               &t);
    t = ch_keep(c, st, t);
    if (t.id && c->ns < (int)TX_COUNTOF(c->sv)) {
        c->sv[c->ns] = v;
        c->st_[c->ns++] = t;
    }
    return t;
}

tx_tensor ch_bin(tx_chain *c, tx_op op, tx_tensor a, tx_tensor b) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_binary(c->x->ctx, op, a, b, &t), t);
}

tx_tensor ch_bin_s(tx_chain *c, tx_op op, tx_tensor a, float v) {
    return ch_bin(c, op, a, ch_scalar(c, v));
}

tx_tensor ch_un(tx_chain *c, tx_op op, tx_tensor a) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_unary(c->x->ctx, op, a, &t), t);
}

tx_tensor ch_clip(tx_chain *c, tx_tensor a, float lo, float hi) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_clip(c->x->ctx, a, lo, hi, &t), t);
}

tx_tensor ch_where(tx_chain *c, tx_tensor m, tx_tensor a, tx_tensor b) {
    tx_tensor t = {0}, w[3] = {m, a, b};
    return ch_keep(c, c->st ? c->st : tx_nary(c->x->ctx, TX_OP_WHERE, w, 3, &t), t);
}

tx_tensor ch_reshape(tx_chain *c, tx_tensor a, int rank, const int64_t *shape) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_tensor_reshape(c->x->ctx, a, rank, shape, &t), t);
}

tx_tensor ch_transpose(tx_chain *c, tx_tensor a, const int *perm) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_transpose(c->x->ctx, a, perm, &t), t);
}

tx_tensor ch_to_int(tx_chain *c, tx_tensor a) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_cast(c->x->ctx, a, TX_DTYPE_INT32, false, &t), t);
}

tx_tensor ch_gather_rows(tx_chain *c, tx_tensor rows, tx_tensor ix) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_gather(c->x->ctx, rows, ix, 0, &t), t);
}
