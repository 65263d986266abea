/* Gradients of the NARY family: where (g to a where cond, to b elsewhere;
 * none to cond), sum (g to each), mean (g / n to each), min_n / max_n (g to
 * the inputs equal to the result; ties share it), each summed back over its
 * broadcast dims. */
#include "grad.h"

tx_status gx_backward_nary(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    tx_status st = TX_STATUS_OK;
    if (nd->op == TX_OP_WHERE) {
        tx_tensor c, ga, gb;
        st = gx_kept(tx_cast(ctx, nd->in[0], TX_DTYPE_FLOAT32, true, &c), l, &c);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, g, c, l, &ga);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, ga, l, &gb);
        for (int i = 1; i < 3 && !st; i++) {
            const tx_slot *s = gx_slot(ctx, nd->in[i]);
            if (s->dtype == TX_DTYPE_FLOAT32)
                st = gx_unbroadcast(ctx, i == 1 ? ga : gb, s->rank, s->shape, l, &gin[i]);
        }
        return st;
    }
    if (gx_slot(ctx, nd->in[0])->dtype != TX_DTYPE_FLOAT32)
        return TX_STATUS_OK;
    tx_tensor gs = g;
    if (nd->op == TX_OP_MEAN)
        st = gx_bin_s(ctx, TX_OP_MUL, g, 1.0f / (float)nd->n_in, l, &gs);
    for (int i = 0; i < nd->n_in && !st; i++) {
        const tx_slot *s = gx_slot(ctx, nd->in[i]);
        tx_tensor gi = gs, m;
        if (nd->op == TX_OP_MIN_N || nd->op == TX_OP_MAX_N) {
            st = gx_bin(ctx, TX_OP_EQUAL, nd->in[i], nd->out, l, &m);
            if (!st)
                st = gx_bin(ctx, TX_OP_MUL, g, m, l, &gi);
        }
        if (!st)
            st = gx_unbroadcast(ctx, gi, s->rank, s->shape, l, &gin[i]);
    }
    return st;
}
