/* ONNX MatMul and Gemm (a fused bias and activation ride in the matmul). */
#include <string.h>

#include "common.h"

static tx_status apply_act(tx_xnode *x, tx_tensor *y) {
    if (x->act == TX_OP_NONE)
        return TX_STATUS_OK;
    tx_tensor z;
    tx_status st = x->act == TX_OP_RELU6
                       ? tx_clip(x->ctx, *y, 0, 6, &z)
                       : tx_apply_act(x->ctx, x->act, x->act_alpha, x->act_beta, *y, &z);
    tx_tensor_destroy(x->ctx, *y);
    if (!st)
        *y = z;
    return st;
}

static tx_status check_float_inputs(tx_xnode *x) {
    for (int i = 0; i < x->n_in; i++) {
        int e = tx_x_elem(x, i);
        if (x->in[i] && e && !tx_onnx_type_is_float(e))
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                             x->node->op_type, tx_onnx_type_name(e));
    }
    return TX_STATUS_OK;
}

/* MatMul + the residual input 3 (then x->act): where the product is written
 * when the residual has its shape, else as the Add it was, broadcasting. */
static tx_status exec_matmul_residual(tx_xnode *x, tx_tensor a, tx_tensor b, tx_matmul_desc *d) {
    tx_ctx *ctx = x->ctx;
    tx_tensor r, y;
    tx_status st = tx_x_dev(x, 3, &r);
    if (st)
        return st;
    int ra, rb, rr, ry;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], sr[TX_MAX_RANK], sy[TX_MAX_RANK];
    tx_tensor_shape(ctx, a, &ra, sa, NULL);
    tx_tensor_shape(ctx, b, &rb, sb, NULL);
    tx_tensor_shape(ctx, r, &rr, sr, NULL);
    if (!tx_matmul_out_shape(ctx, ra, sa, rb, sb, d, &ry, sy) && ry == rr &&
        !memcmp(sy, sr, sizeof(int64_t) * (size_t)rr)) {
        d->residual = r;
        st = tx_matmul(ctx, a, b, d, &y);
    } else {
        tx_op act = d->activation;
        d->activation = TX_OP_NONE;
        tx_tensor z;
        st = tx_matmul(ctx, a, b, d, &z);
        if (!st)
            st = tx_residual_act(ctx, z, r, act, d->alpha, d->beta, &y);
    }
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

static tx_status exec_matmul(tx_xnode *x) {
    tx_status st = check_float_inputs(x);
    if (st)
        return st;
    tx_tensor a, b, y;
    tx_matmul_desc d = {.activation = x->act, .alpha = x->act_alpha, .beta = x->act_beta};
    st = tx_x_dev(x, 0, &a);
    if (!st)
        st = tx_x_dev(x, 1, &b);
    if (!st && x->bias) {
        tx_session_val *in[1] = {x->bias};
        tx_xnode bx = *x;
        bx.in = in;
        bx.n_in = 1;
        st = tx_x_dev(&bx, 0, &d.bias);
    }
    if (!st && tx_x_has(x, 3)) /* a fused residual Add (fuse.c) */
        return exec_matmul_residual(x, a, b, &d);
    if (!st)
        st = tx_matmul(x->ctx, a, b, &d, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    return st;
}

static tx_status exec_gemm(tx_xnode *x) {
    tx_status st = check_float_inputs(x);
    if (st)
        return st;
    float alpha = tx_attr_float(x->node, "alpha", 1.0f),
          beta = tx_attr_float(x->node, "beta", 1.0f);
    tx_matmul_desc d = {.transpose_a = tx_attr_int(x->node, "transA", 0) != 0,
                        .transpose_b = tx_attr_int(x->node, "transB", 0) != 0};
    int ra, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK];
    st = tx_x_shape2(x, &ra, sa, &rb, sb);
    if (st)
        return st;
    if (ra != 2 || rb != 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "A and B must be 2-D (got rank %d and %d)",
                         ra, rb);
    int64_t n = d.transpose_b ? sb[0] : sb[1];
    tx_tensor a, b, c = {0}, y;
    st = tx_x_dev(x, 0, &a);
    if (!st)
        st = tx_x_dev(x, 1, &b);
    if (st)
        return st;
    bool c_in_matmul = false;
    if (x->bias) {
        tx_session_val *in[1] = {x->bias};
        tx_xnode bx = *x;
        bx.in = in;
        bx.n_in = 1;
        st = tx_x_dev(&bx, 0, &d.bias);
        c_in_matmul = true;
    } else if (tx_x_has(x, 2)) {
        int rc;
        int64_t sc[TX_MAX_RANK];
        st = tx_x_shape(x, 2, &rc, sc);
        if (!st)
            st = tx_x_dev(x, 2, &c);
        if (!st && alpha == 1.0f && beta == 1.0f && tx_numel_of(rc, sc) == n &&
            (rc == 1 || (rc == 2 && sc[0] == 1))) {
            d.bias = c;
            c_in_matmul = true;
        }
    }
    if (st)
        return st;
    bool post = alpha != 1.0f || (c.id && !c_in_matmul);
    if (!post) {
        d.activation = x->act;
        d.alpha = x->act_alpha;
        d.beta = x->act_beta;
    }
    st = tx_matmul(x->ctx, a, b, &d, &y);
    if (!st && alpha != 1.0f) {
        tx_tensor s, z;
        st = tx_x_scalar(x, alpha, &s);
        if (!st) {
            st = tx_binary(x->ctx, TX_OP_MUL, y, s, &z);
            tx_tensor_destroy(x->ctx, s);
            tx_tensor_destroy(x->ctx, y);
            y = z;
        }
    }
    if (!st && c.id && !c_in_matmul) {
        tx_tensor cb = c, s, z;
        bool cb_temp = false;
        if (beta != 1.0f) {
            st = tx_x_scalar(x, beta, &s);
            if (!st) {
                st = tx_binary(x->ctx, TX_OP_MUL, c, s, &cb);
                tx_tensor_destroy(x->ctx, s);
                cb_temp = !st;
            }
        }
        if (!st) {
            st = tx_binary(x->ctx, TX_OP_ADD, y, cb, &z);
            tx_tensor_destroy(x->ctx, y);
            y = z;
        }
        if (cb_temp)
            tx_tensor_destroy(x->ctx, cb);
    }
    if (!st && post)
        st = apply_act(x, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    return st;
}

static tx_status matmul_mismatch(tx_xnode *x, int ra, const int64_t *sa, int rb,
                                 const int64_t *sb) {
    char a[160], b[160];
    tx_shape_str(a, sizeof a, ra, sa);
    tx_shape_str(b, sizeof b, rb, sb);
    return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "A %s and B %s do not multiply", a, b);
}

static tx_status infer_matmul(tx_xnode *x) {
    int ea, ra, eb, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], o[TX_MAX_RANK + 2];
    tx_x_info(x, 0, &ea, &ra, sa);
    tx_x_info(x, 1, &eb, &rb, sb);
    if (ra < 1 || rb < 1)
        return TX_STATUS_OK;
    int64_t m = ra >= 2 ? sa[ra - 2] : 1, n = rb >= 2 ? sb[rb - 1] : 1;
    int64_t ka = sa[ra - 1], kb = rb >= 2 ? sb[rb - 2] : sb[0];
    int rbat;
    int64_t bat[TX_MAX_RANK];
    if ((ka >= 0 && kb >= 0 && ka != kb) ||
        !tx_bcast_shapes(ra > 2 ? ra - 2 : 0, sa, rb > 2 ? rb - 2 : 0, sb, &rbat, bat))
        return matmul_mismatch(x, ra, sa, rb, sb);
    int r = 0;
    for (int i = 0; i < rbat; i++)
        o[r++] = bat[i];
    if (ra >= 2)
        o[r++] = m;
    if (rb >= 2)
        o[r++] = n;
    if (r <= TX_MAX_RANK)
        tx_x_set_info(x, 0, TX_ONNX_FLOAT, r, o);
    return TX_STATUS_OK;
}

static tx_status infer_gemm(tx_xnode *x) {
    int ea, ra, eb, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK];
    tx_x_info(x, 0, &ea, &ra, sa);
    tx_x_info(x, 1, &eb, &rb, sb);
    if (ra != 2 || rb != 2)
        return TX_STATUS_OK;
    bool ta = tx_attr_int(x->node, "transA", 0) != 0, tb = tx_attr_int(x->node, "transB", 0) != 0;
    int64_t ka = ta ? sa[0] : sa[1], kb = tb ? sb[1] : sb[0];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return matmul_mismatch(x, ra, sa, rb, sb);
    int64_t o[2] = {ta ? sa[1] : sa[0], tb ? sb[0] : sb[1]};
    tx_x_set_info(x, 0, TX_ONNX_FLOAT, 2, o);
    return TX_STATUS_OK;
}

tx_status tx_x_infer_matmul(tx_xnode *x) {
    return infer_matmul(x);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"MatMul", exec_matmul, infer_matmul, TX_OPF_FUSE_ACT, 2, 2, 0},
    {"Gemm", exec_gemm, infer_gemm, TX_OPF_FUSE_ACT, 2, 3, 0},
};

const tx_onnx_family tx_onnx_ops_matmul = {k_ops, TX_COUNTOF(k_ops)};
