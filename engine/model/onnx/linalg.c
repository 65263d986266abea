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

#include "chain.h"

/* An int32 scalar. */
static tx_tensor int_scalar(tx_chain *c, int32_t v) {
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = 0, .dtype = TX_DTYPE_INT32, .data = &v};
    return ch_keep(c, c->st ? c->st : tx_tensor_create(c->x->ctx, &d, &t), t);
}

/* A float32 tensor of rank/shape from host values. */
static tx_tensor floats(tx_chain *c, int rank, const int64_t *shape, const float *v) {
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = rank, .data = v};
    memcpy(d.shape, shape, sizeof(int64_t) * (size_t)rank);
    return ch_keep(c, c->st ? c->st : tx_tensor_create(c->x->ctx, &d, &t), t);
}

/* x[..., k, ...] along axis (that dim dropped). */
static tx_tensor take(tx_chain *c, tx_tensor x, int32_t k, int axis) {
    tx_tensor ix = int_scalar(c, k), t = {0};
    return ch_keep(c, c->st ? c->st : tx_gather(c->x->ctx, x, ix, axis, &t), t);
}

static tx_tensor to_float(tx_chain *c, tx_tensor x) {
    tx_tensor t = {0};
    return ch_keep(c, c->st ? c->st : tx_cast(c->x->ctx, x, TX_DTYPE_FLOAT32, false, &t), t);
}

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
    tx_chain *c = calloc(1, sizeof *c);
    float *hv = malloc(sizeof(float) * (size_t)(3 * m + nb));
    if (!c || !hv) {
        free(c);
        free(hv);
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    c->x = x;
    float *ramp = hv, *ge = hv + m, *gt = hv + 2 * m, *base = hv + 3 * m;
    for (int64_t r = 0; r < m; r++)
        ramp[r] = (float)r;
    for (int64_t b = 0; b < nb; b++)
        base[b] = (float)(b * m);
    int64_t s3[3] = {nb, m, m}, s2r[2] = {nb * m, m}, sb1[2] = {nb, 1}, sbm1[3] = {nb, m, 1},
            sb1m[3] = {nb, 1, m};
    tx_tensor a = ch_reshape(c, in, 3, s3), rt = floats(c, 1, &m, ramp);
    tx_tensor bt = floats(c, 2, sb1, base), sign = {0}, det = {0};
    for (int64_t k = 0; k < m && !c->st; k++) {
        for (int64_t r = 0; r < m; r++) {
            ge[r] = r >= k;
            gt[r] = r > k;
        }
        tx_tensor get = floats(c, 1, &m, ge), gtt = floats(c, 1, &m, gt);
        /* pivot: the largest |A[b, r, k]| with r >= k */
        tx_tensor col = ch_un(c, TX_OP_ABS, take(c, a, (int32_t)k, 2)); /* [B, M] */
        tx_tensor masked = ch_where(c, get, col, ch_scalar(c, -1));
        tx_reduce_desc rd = {.n_axes = 1, .axes = {1}};
        tx_tensor p = {0};
        p = ch_keep(c, c->st ? c->st : tx_reduce(x->ctx, TX_OP_ARGMAX, masked, &rd, &p), p);
        tx_tensor pf = to_float(c, p); /* [B, 1] */
        /* swap rows k and p: row r reads k -> p, p -> k, else r */
        tx_tensor isk = ch_bin_s(c, TX_OP_EQUAL, rt, (float)k),
                  isp = ch_bin(c, TX_OP_EQUAL, rt, pf);
        tx_tensor src = ch_where(c, isk, pf, ch_where(c, isp, ch_scalar(c, (float)k), rt));
        tx_tensor rows = ch_to_int(c, ch_bin(c, TX_OP_ADD, src, bt)); /* [B, M] */
        a = ch_reshape(c, ch_gather_rows(c, ch_reshape(c, a, 2, s2r), rows), 3, s3);
        tx_tensor moved = ch_bin_s(c, TX_OP_GREATER,
                                   ch_un(c, TX_OP_ABS, ch_bin_s(c, TX_OP_SUB, pf, (float)k)), 0.5f);
        tx_tensor flip = ch_bin_s(c, TX_OP_ADD, ch_bin_s(c, TX_OP_MUL, moved, -2), 1); /* [B, 1] */
        sign = sign.id ? ch_bin(c, TX_OP_MUL, sign, flip) : flip;
        tx_tensor prow = take(c, a, (int32_t)k, 1);                          /* [B, M] */
        tx_tensor piv = ch_reshape(c, take(c, prow, (int32_t)k, 1), 2, sb1); /* [B, 1] */
        det = det.id ? ch_bin(c, TX_OP_MUL, det, piv) : piv;
        if (k == m - 1)
            break;
        tx_tensor safe = ch_where(c, ch_bin_s(c, TX_OP_EQUAL, piv, 0), ch_scalar(c, 1), piv);
        tx_tensor f =
            ch_bin(c, TX_OP_MUL, ch_bin(c, TX_OP_DIV, take(c, a, (int32_t)k, 2), safe), gtt);
        tx_tensor upd =
            ch_bin(c, TX_OP_MUL, ch_reshape(c, f, 3, sbm1), ch_reshape(c, prow, 3, sb1m));
        a = ch_bin(c, TX_OP_SUB, a, upd);
    }
    tx_tensor r = ch_reshape(c, ch_bin(c, TX_OP_MUL, det, sign), rx - 2, sx);
    st = c->st ? c->st : tx_identity(x->ctx, r, &y);
    tx_chain_free(c);
    free(c);
    free(hv);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static const tx_onnx_op k_ops[] = {
    {"Det", exec_det, NULL, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_linalg = {k_ops, TX_COUNTOF(k_ops)};
