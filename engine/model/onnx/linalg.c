/* ONNX Det: Gaussian elimination with partial pivoting, composed from
 * engine ops over all the matrices at once ([..., M, M] viewed as [B, M, M]).
 * Step k: the pivot row is the ArgMax of |A[:, r, k]| over r >= k, swapped
 * with row k by one row Gather (the swap flips the sign), and the rows below
 * lose their multiple of row k. The determinant is the signed product of the
 * pivots; a zero pivot (a singular matrix) gives 0 and is replaced by 1 for
 * the division, so nothing turns into NaN. About 20 draws a step, M steps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

static tx_status exec_det(tx_xnode *x) {
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rx, sx)))
        return st;
    if (rx < 2 || sx[rx - 1] != sx[rx - 2] || sx[rx - 1] < 1)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "X must be [..., M, M] with M >= 1");
    int64_t m = sx[rx - 1], nb = tx_numel_of(rx - 2, sx);
    if (m > 24)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "M = %lld (at most 24: ~20 draws a row)",
                         (long long)m);
    if (nb * m > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%lld rows (flat indices)", (long long)(nb * m));
    tx_tensor in, y = {0};
    if ((st = tx_x_dev(x, 0, &in)))
        return st;
    float *hv = malloc(sizeof(float) * (size_t)(3 * m + nb));
    if (!hv)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    tx_xb cb = {.x = x}, *c = &cb;
    float *ramp = hv, *ge = hv + m, *gt = hv + 2 * m, *base = hv + 3 * m;
    for (int64_t r = 0; r < m; r++)
        ramp[r] = (float)r;
    for (int64_t b = 0; b < nb; b++)
        base[b] = (float)(b * m);
    int64_t s3[3] = {nb, m, m}, s2r[2] = {nb * m, m}, sb1[2] = {nb, 1}, sbm1[3] = {nb, m, 1},
            sb1m[3] = {nb, 1, m};
    tx_tensor a = tx_xb_reshape(c, in, 3, s3), rt = tx_xb_const(c, 1, &m, TX_DTYPE_FLOAT32, ramp);
    tx_tensor bt = tx_xb_const(c, 2, sb1, TX_DTYPE_FLOAT32, base), sign = {0}, det = {0};
    for (int64_t k = 0; k < m && !c->st; k++) {
        for (int64_t r = 0; r < m; r++) {
            ge[r] = r >= k;
            gt[r] = r > k;
        }
        tx_tensor get = tx_xb_const(c, 1, &m, TX_DTYPE_FLOAT32, ge),
                  gtt = tx_xb_const(c, 1, &m, TX_DTYPE_FLOAT32, gt);
        /* pivot: the largest |A[b, r, k]| with r >= k */
        tx_tensor col = tx_xb_unary(c, TX_OP_ABS, tx_xb_take(c, a, (int32_t)k, 2)); /* [B, M] */
        tx_tensor masked = tx_xb_where(c, get, col, tx_xb_scalar(c, -1));
        tx_reduce_desc rd = {.n_axes = 1, .axes = {1}};
        tx_tensor p = {0};
        p = tx_xb_track(c, c->st ? c->st : tx_reduce(x->ctx, TX_OP_ARGMAX, masked, &rd, &p), p);
        tx_tensor pf = tx_xb_cast(c, p, TX_DTYPE_FLOAT32); /* [B, 1] */
        /* swap rows k and p: row r reads k -> p, p -> k, else r */
        tx_tensor isk = tx_xb_binary_s(c, TX_OP_EQUAL, rt, (float)k),
                  isp = tx_xb_binary(c, TX_OP_EQUAL, rt, pf);
        tx_tensor src = tx_xb_where(c, isk, pf, tx_xb_where(c, isp, tx_xb_scalar(c, (float)k), rt));
        tx_tensor rows =
            tx_xb_cast(c, tx_xb_binary(c, TX_OP_ADD, src, bt), TX_DTYPE_INT32); /* [B, M] */
        a = tx_xb_reshape(c, tx_xb_gather(c, tx_xb_reshape(c, a, 2, s2r), rows, 0), 3, s3);
        tx_tensor moved = tx_xb_binary_s(
            c, TX_OP_GREATER, tx_xb_unary(c, TX_OP_ABS, tx_xb_binary_s(c, TX_OP_SUB, pf, (float)k)),
            0.5f);
        tx_tensor flip =
            tx_xb_binary_s(c, TX_OP_ADD, tx_xb_binary_s(c, TX_OP_MUL, moved, -2), 1); /* [B, 1] */
        sign = sign.id ? tx_xb_binary(c, TX_OP_MUL, sign, flip) : flip;
        tx_tensor prow = tx_xb_take(c, a, (int32_t)k, 1);                             /* [B, M] */
        tx_tensor piv = tx_xb_reshape(c, tx_xb_take(c, prow, (int32_t)k, 1), 2, sb1); /* [B, 1] */
        det = det.id ? tx_xb_binary(c, TX_OP_MUL, det, piv) : piv;
        if (k == m - 1)
            break;
        tx_tensor safe =
            tx_xb_where(c, tx_xb_binary_s(c, TX_OP_EQUAL, piv, 0), tx_xb_scalar(c, 1), piv);
        tx_tensor f = tx_xb_binary(
            c, TX_OP_MUL, tx_xb_binary(c, TX_OP_DIV, tx_xb_take(c, a, (int32_t)k, 2), safe), gtt);
        tx_tensor upd = tx_xb_binary(c, TX_OP_MUL, tx_xb_reshape(c, f, 3, sbm1),
                                     tx_xb_reshape(c, prow, 3, sb1m));
        a = tx_xb_binary(c, TX_OP_SUB, a, upd);
    }
    tx_tensor r = tx_xb_reshape(c, tx_xb_binary(c, TX_OP_MUL, det, sign), rx - 2, sx);
    st = c->st ? c->st : tx_identity(x->ctx, r, &y);
    tx_xb_free(c);
    free(hv);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static const tx_onnx_op k_ops[] = {
    {"Det", exec_det, NULL, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_linalg = {k_ops, TX_COUNTOF(k_ops)};
