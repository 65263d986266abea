/* Gradients of data movement: views (reshape, flatten, squeeze, unsqueeze)
 * give g back in x's shape; transpose gives g through the inverse permutation. */
#include "grad.h"

tx_status gx_backward_move(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                           tx_tensor gin[GX_MAX_IN]) {
    const tx_slot *xs = gx_slot(ctx, nd->in[0]);
    if (nd->op == GX_OP_RESHAPE)
        return gx_view(ctx, g, xs->rank, xs->shape, l, &gin[0]);
    int inv[TX_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        int p = nd->a.move.n_perm ? nd->a.move.perm[i] : xs->rank - 1 - i;
        inv[p < 0 ? p + xs->rank : p] = i;
    }
    tx_status st = tx_transpose(ctx, g, inv, &gin[0]);
    if (!st)
        gx_keep(l, gin[0]);
    return st;
}
