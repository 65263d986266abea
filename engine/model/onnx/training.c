/* ONNX ai.onnx.preview.training: Adagrad, Momentum, Adam (one or several
 * tensors per node), composed from engine elementwise ops on the session's
 * device. The learning rate R and step count T are host scalars; every
 * coefficient they and the attributes give is folded on the host. Formulas
 * as the ONNX operator definitions give them:
 *   G' = norm_coefficient X + G
 *   Adagrad:  H' = H + G'^2; X' = X - R / (1 + T decay_factor) G' / (sqrt(H') + eps)
 *   Momentum: V' = alpha V + (T > 0 ? beta : 1) G';
 *             X' = X - R V' (standard) or X - R (G' + alpha V') (nesterov)
 *   Adam:     V' = alpha V + (1 - alpha) G'; H' = beta H + (1 - beta) G'^2;
 *             X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + eps)),
 *             R' = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R */
#include <math.h>
#include <string.h>

#include "common.h"

enum { ADAGRAD, MOMENTUM, ADAM };

typedef struct upd {
    tx_xnode *x;
    tx_tmp_list *l;
    tx_device dev;
} upd;

static tx_status keep(upd *u, tx_status st, tx_tensor t, tx_tensor *out) {
    if (st)
        return st;
    TX_ASSERT(u->l->n < (int)TX_COUNTOF(u->l->t));
    u->l->t[u->l->n++] = t;
    *out = t;
    return TX_STATUS_OK;
}

/* a A + b B (B may be {0}: a A), a temporary. */
static tx_status lin(upd *u, double a, tx_tensor A, double b, tx_tensor B, tx_tensor *out) {
    tx_ctx *ctx = u->x->ctx;
    tx_tensor s, t = A, r;
    tx_status st;
    if (a != 1) {
        float av = (float)a;
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 0, .data = &av, .device = u->dev}, &s);
        if (!st)
            st = keep(u, st, s, &s);
        if (!st)
            st = keep(u, tx_binary(ctx, TX_OP_MUL, A, s, &r), r, &t);
        if (st)
            return st;
    }
    if (!B.id) {
        *out = t;
        return TX_STATUS_OK;
    }
    tx_tensor bb;
    st = lin(u, b, B, 0, (tx_tensor){0}, &bb);
    return st ? st : keep(u, tx_binary(ctx, TX_OP_ADD, t, bb, &r), r, out);
}

/* G' / (sqrt(H') + eps) */
static tx_status scaled(upd *u, tx_tensor g, tx_tensor h, double eps, tx_tensor *out) {
    tx_ctx *ctx = u->x->ctx;
    tx_tensor r, sq, e;
    float ev = (float)eps;
    tx_status st = keep(u, tx_unary(ctx, TX_OP_SQRT, h, &r), r, &sq);
    if (!st)
        st = keep(
            u,
            tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 0, .data = &ev, .device = u->dev}, &r),
            r, &e);
    if (!st)
        st = keep(u, tx_binary(ctx, TX_OP_ADD, sq, e, &r), r, &sq);
    return st ? st : keep(u, tx_binary(ctx, TX_OP_DIV, g, sq, &r), r, out);
}

/* Hands a temporary to output i (the list forgets it). */
static tx_status emit(upd *u, int i, tx_tensor t) {
    for (int k = 0; k < u->l->n; k++)
        if (u->l->t[k].id == t.id) {
            u->l->t[k] = u->l->t[--u->l->n];
            return tx_x_set_dev(u->x, i, t, TX_ONNX_FLOAT);
        }
    tx_tensor c;
    tx_status st = tx_identity(u->x->ctx, t, &c); /* an input passed through */
    return st ? st : tx_x_set_dev(u->x, i, c, TX_ONNX_FLOAT);
}

static tx_status exec_training(tx_xnode *x) {
    const char *ot = x->node->op_type;
    int kind = strcmp(ot, "Adagrad") == 0 ? ADAGRAD : strcmp(ot, "Momentum") == 0 ? MOMENTUM : ADAM;
    int per = kind == ADAM ? 4 : 3; /* X, G, then V and/or H */
    int n = (x->n_in - 2) / per;
    if (n < 1 || x->n_in != 2 + per * n || x->n_out > (per - 1) * n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "%d inputs, %d outputs: want R, T and %d "
                         "groups of %d",
                         x->n_in, x->n_out, n, per);
    const tx_hval *rh, *th;
    tx_status st = tx_x_host2(x, 0, &rh, 1, &th);
    if (st)
        return st;
    if (rh->numel != 1 || th->numel != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "R and T must be scalars");
    double R = tx_hval_get(rh, 0), T = tx_hval_get(th, 0);
    double nc = tx_attr_float(x->node, "norm_coefficient", 0);
    double alpha = tx_attr_float(x->node, "alpha", kind == ADAM ? 0.9f : 0);
    double beta = tx_attr_float(x->node, "beta", kind == ADAM ? 0.999f : 0);
    double eps = tx_attr_float(x->node, "epsilon", 1e-6f); /* the schemas' default */
    const char *mode = tx_attr_str(x->node, "mode", "standard");
    bool nesterov = strcmp(mode, "nesterov") == 0;
    if (kind == MOMENTUM && !nesterov && strcmp(mode, "standard") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", mode);
    tx_tmp_list l = {0};
    upd u = {x, &l, TX_DEVICE_DEFAULT};
    for (int i = 0; i < n && !st; i++) {
        tx_tensor X, G, S1, S2 = {0}, g, a, b, y;
        st = tx_x_dev_as(x, 2 + i, TX_DTYPE_FLOAT32, &l, &X);
        if (!st)
            st = tx_x_dev_as(x, 2 + n + i, TX_DTYPE_FLOAT32, &l, &G);
        if (!st)
            st = tx_x_dev_as(x, 2 + 2 * n + i, TX_DTYPE_FLOAT32, &l, &S1);
        if (!st && kind == ADAM)
            st = tx_x_dev_as(x, 2 + 3 * n + i, TX_DTYPE_FLOAT32, &l, &S2);
        if (!st)
            st = tx_tensor_device(x->ctx, X, &u.dev);
        if (!st)
            st = nc != 0 ? lin(&u, 1, G, nc, X, &g) : (g = G, TX_STATUS_OK);
        if (st)
            break;
        if (kind == ADAGRAD) {
            tx_tensor g2, r;
            st = keep(&u, tx_binary(x->ctx, TX_OP_MUL, g, g, &r), r, &g2);
            if (!st)
                st = lin(&u, 1, S1, 1, g2, &a); /* H' */
            if (!st)
                st = scaled(&u, g, a, eps, &b);
            if (!st)
                st = lin(&u, 1, X, -R / (1 + T * tx_attr_float(x->node, "decay_factor", 0)), b, &y);
        } else if (kind == MOMENTUM) {
            st = lin(&u, alpha, S1, T > 0 ? beta : 1, g, &a); /* V' */
            if (!st)
                st = nesterov ? lin(&u, 1, g, alpha, a, &b) : (b = a, TX_STATUS_OK);
            if (!st)
                st = lin(&u, 1, X, -R, b, &y);
        } else {
            tx_tensor g2, r, h, q;
            st = lin(&u, alpha, S1, 1 - alpha, g, &a); /* V' */
            if (!st)
                st = keep(&u, tx_binary(x->ctx, TX_OP_MUL, g, g, &r), r, &g2);
            if (!st)
                st = lin(&u, beta, S2, 1 - beta, g2, &h); /* H' */
            if (!st)
                st = scaled(&u, a, h, eps, &q);
            double ra = T > 0 ? R * sqrt(1 - pow(beta, T)) / (1 - pow(alpha, T)) : R;
            if (!st)
                st = lin(&u, 1, X, -ra, q, &b);
            double post = tx_attr_float(x->node, "norm_coefficient_post", 0);
            if (!st)
                st = lin(&u, 1 - post, b, 0, (tx_tensor){0}, &y);
            if (!st && 2 * n + i < x->n_out)
                st = emit(&u, 2 * n + i, h);
        }
        if (!st)
            st = emit(&u, i, y);
        if (!st && n + i < x->n_out)
            st = emit(&u, n + i, a);
        tx_tmps_free(x, &l);
    }
    tx_tmps_free(x, &l);
    return st;
}

/* ---- rows (looked up for the ai.onnx.preview.training domain only) ---- */

static const tx_onnx_op k_ops[] = {
    {"Adagrad", exec_training, NULL, 0, 5, -1, 3},
    {"Momentum", exec_training, NULL, 0, 5, -1, 3},
    {"Adam", exec_training, NULL, 0, 6, -1, 3},
};

const tx_onnx_family tx_onnx_ops_training = {k_ops, TX_COUNTOF(k_ops)};
