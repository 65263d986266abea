/* Reference: MATMUL (numpy semantics, optional transposes, bias, residual, activation). */
#include <stdlib.h>

#include "ref.h"

int tx_ref_matmul(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs, tx_ref_tensor *out) {
    if (n_in < 2)
        return -1;
    const tx_ref_tensor *a = &in[0], *b = &in[1];
    const tx_ref_tensor *bias = n_in > 2 ? &in[2] : NULL;
    const tx_ref_tensor *resid = n_in > 3 ? &in[3] : NULL; /* y's shape */
    bool ta = attrs && attrs->matmul.transpose_a && a->rank >= 2;
    bool tb = attrs && attrs->matmul.transpose_b && b->rank >= 2;
    tx_op act = attrs ? attrs->matmul.activation : TX_OP_NONE;
    if (a->rank < 1 || b->rank < 1)
        return -1;
    /* View both as batched matrices. */
    int64_t am = a->rank == 1 ? 1 : a->shape[a->rank - 2];
    int64_t ak = a->shape[a->rank - 1];
    if (ta) {
        int64_t t = am;
        am = ak;
        ak = t;
    }
    int64_t bk = b->rank == 1 ? b->shape[0] : b->shape[b->rank - 2];
    int64_t bn = b->rank == 1 ? 1 : b->shape[b->rank - 1];
    if (tb) {
        int64_t t = bk;
        bk = bn;
        bn = t;
    }
    if (ak != bk)
        return -1;
    int abr = a->rank > 2 ? a->rank - 2 : 0, bbr = b->rank > 2 ? b->rank - 2 : 0;
    int br = abr > bbr ? abr : bbr;
    int64_t bd[TX_MAX_RANK], bda[TX_MAX_RANK], bdb[TX_MAX_RANK];
    if (tx_ref_broadcast(abr, a->shape, bbr, b->shape, br, bda, bdb, bd))
        return -1;
    *out = (tx_ref_tensor){.dtype = TX_DTYPE_FLOAT32};
    for (int i = 0; i < br; i++)
        out->shape[out->rank++] = bd[i];
    if (a->rank > 1)
        out->shape[out->rank++] = am;
    if (b->rank > 1)
        out->shape[out->rank++] = bn;
    if (out->rank > TX_MAX_RANK)
        return -1;
    if (bias && tx_ref_numel(bias) != bn)
        return -1;
    int64_t nb = 1;
    for (int i = 0; i < br; i++)
        nb *= bd[i];
    int64_t total = nb * am * bn;
    if (resid && resid->rank != out->rank)
        return -1;
    for (int i = 0; resid && i < out->rank; i++)
        if (resid->shape[i] != out->shape[i])
            return -1;
    out->data = malloc((size_t)(total > 0 ? total : 1) * sizeof(float));
    if (!out->data)
        return -1;
    for (int64_t bi = 0; bi < nb; bi++) {
        int64_t oa, ob;
        tx_ref_broadcast_at(br, bd, bda, bdb, bi, &oa, &ob);
        const float *A = a->data + oa * am * ak;
        const float *B = b->data + ob * bk * bn;
        float *C = out->data + bi * am * bn;
        for (int64_t m = 0; m < am; m++)
            for (int64_t n = 0; n < bn; n++) {
                double s = 0;
                for (int64_t k = 0; k < ak; k++) {
                    double x = ta ? A[k * am + m] : A[m * ak + k];
                    double y = tb ? B[n * bk + k] : B[k * bn + n];
                    s += x * y;
                }
                if (bias)
                    s += bias->data[n];
                if (resid)
                    s += resid->data[bi * am * bn + m * bn + n];
                if (act != TX_OP_NONE)
                    s = tx_ref_act_scalar(act, attrs->matmul.alpha, attrs->matmul.beta, s);
                C[m * bn + n] = (float)s;
            }
    }
    return 0;
}
