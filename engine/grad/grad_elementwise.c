/* Gradients of the elementwise families: UNARY, CLIP, ACT, BINARY.
 *
 * A unary op's gradient is g · f'(x), with f'(x) made from forward ops
 * (comparisons give 0/1 masks on float tensors); where f' is cheaper from the
 * output y (sigmoid, tanh, exp) it uses y. A binary op's gradients are summed
 * back over the dims broadcasting stretched. */
#include <math.h>

#include "grad.h"

/* 1 - t */
static tx_status one_minus(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    tx_tensor one;
    tx_status st = gx_scalar(ctx, t, 1.0f, l, &one);
    return st ? st : gx_bin(ctx, TX_OP_SUB, one, t, l, out);
}

/* d = f'(x) of op (y = f(x) may be {0} where the derivative does not use it;
 * x may be {0} for the ops whose derivative is y's). */
static tx_status deriv(tx_ctx *ctx, tx_op op, float lo, float hi, tx_tensor x, tx_tensor y,
                       gx_tmps *l, tx_tensor *d) {
    tx_tensor a, b, c;
    tx_status st;
    switch (op) {
    case TX_OP_RELU: return gx_bin_s(ctx, TX_OP_GREATER, x, 0.0f, l, d);
    case TX_OP_RELU6: lo = 0, hi = 6; /* fall through */
    case TX_OP_CLIP:
        st = gx_bin_s(ctx, TX_OP_GREATER, x, lo, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_LESS, x, hi, l, &b);
        return st ? st : gx_bin(ctx, TX_OP_MUL, a, b, l, d);
    case TX_OP_SIGMOID: /* y (1 - y) */
    case TX_OP_TANH:    /* 1 - y^2 */
        st = gx_bin(ctx, TX_OP_MUL, y, y, l, &a);
        if (st)
            return st;
        return op == TX_OP_SIGMOID ? gx_bin(ctx, TX_OP_SUB, y, a, l, d) : one_minus(ctx, a, l, d);
    case TX_OP_EXP: *d = y; return TX_STATUS_OK;
    case TX_OP_LOG: return gx_un(ctx, TX_OP_RECIPROCAL, x, l, d);
    case TX_OP_SQRT: /* 0.5 / y */
        st = gx_un(ctx, TX_OP_RECIPROCAL, y, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_MUL, a, 0.5f, l, d);
    case TX_OP_ABS: return gx_un(ctx, TX_OP_SIGN, x, l, d);
    case TX_OP_NEG: return gx_fill(ctx, gx_slot(ctx, x)->st->dev, 1, (int64_t[]){1}, -1.0f, l, d);
    case TX_OP_SOFTPLUS: return gx_un(ctx, TX_OP_SIGMOID, x, l, d);
    case TX_OP_SIN: return gx_un(ctx, TX_OP_COS, x, l, d);
    case TX_OP_COS:
        st = gx_un(ctx, TX_OP_SIN, x, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_MUL, a, -1.0f, l, d);
    case TX_OP_RECIPROCAL: /* -y^2 */
        st = gx_bin(ctx, TX_OP_MUL, y, y, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_MUL, a, -1.0f, l, d);
    case TX_OP_FLOOR:
    case TX_OP_CEIL:
    case TX_OP_ROUND:
    case TX_OP_SIGN: return gx_scalar(ctx, x, 0.0f, l, d);
    case TX_OP_GELU: /* Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2 */
        st = gx_bin_s(ctx, TX_OP_MUL, x, 0.70710678f, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_ERF, a, l, &b);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, b, 1.0f, l, &b);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, b, 0.5f, l, &b); /* Phi */
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, x, x, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, a, -0.5f, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_EXP, a, l, &a);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, a, x, l, &c);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, c, 0.39894228f, l, &c);
        return st ? st : gx_bin(ctx, TX_OP_ADD, b, c, l, d);
    case TX_OP_LEAKY_RELU: /* x > 0 ? 1 : alpha = mask (1 - alpha) + alpha */
        st = gx_bin_s(ctx, TX_OP_GREATER, x, 0.0f, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, a, 1.0f - lo, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_ADD, a, lo, l, d);
    case TX_OP_ELU: /* x > 0 ? 1 : y + alpha */
        st = gx_bin_s(ctx, TX_OP_GREATER, x, 0.0f, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, y, lo, l, &b);
        if (!st)
            st = tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){a, a, b}, 3, d);
        if (!st)
            gx_keep(l, *d);
        return st;
    default:
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "tx_tape_grad: %s has no gradient yet",
                       tx_op_name(op));
    }
}

tx_status gx_activation_grad(tx_ctx *ctx, tx_op act, float lo, float hi, tx_tensor y, tx_tensor g,
                             gx_tmps *l, tx_tensor *out) {
    if (act == TX_OP_NONE) {
        *out = g;
        return TX_STATUS_OK;
    }
    /* relu and clip: y > lo iff x > lo; y < hi iff x < hi (on the open side) */
    tx_tensor d;
    tx_status st = deriv(ctx, act, lo, hi, y, y, l, &d);
    return st ? st : gx_bin(ctx, TX_OP_MUL, g, d, l, out);
}

/* Whether gx_activation_grad can work from the output alone. */
bool gx_activation_from_output(tx_op act) {
    return act == TX_OP_NONE || act == TX_OP_RELU || act == TX_OP_RELU6 || act == TX_OP_CLIP ||
           act == TX_OP_SIGMOID || act == TX_OP_TANH || act == TX_OP_EXP;
}

tx_status gx_unary_grad(tx_ctx *ctx, tx_op op, float lo, float hi, tx_tensor x, tx_tensor y,
                        tx_tensor g, gx_tmps *l, tx_tensor *out) {
    tx_tensor d;
    tx_status st = deriv(ctx, op, lo, hi, x, y, l, &d);
    return st ? st : gx_bin(ctx, TX_OP_MUL, g, d, l, out);
}

static tx_status binary(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                        tx_tensor gin[GX_MAX_IN]) {
    tx_tensor a = nd->in[0], b = nd->in[1], ga = g, gb = g, t, m;
    tx_status st = TX_STATUS_OK;
    switch (nd->op) {
    case TX_OP_ADD: break;
    case TX_OP_SUB: st = gx_bin_s(ctx, TX_OP_MUL, g, -1.0f, l, &gb); break;
    case TX_OP_MUL:
        st = gx_bin(ctx, TX_OP_MUL, g, b, l, &ga);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, g, a, l, &gb);
        break;
    case TX_OP_DIV: /* g / b, -g y / b */
        st = gx_bin(ctx, TX_OP_DIV, g, b, l, &ga);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, ga, nd->out, l, &t);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, t, -1.0f, l, &gb);
        break;
    case TX_OP_POW: /* g b a^(b-1), g y ln a */
        st = gx_bin_s(ctx, TX_OP_SUB, b, 1.0f, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_POW, a, t, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, b, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, g, l, &ga);
        if (!st)
            st = gx_un(ctx, TX_OP_LOG, a, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, nd->out, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, g, l, &gb);
        break;
    case TX_OP_MIN:
    case TX_OP_MAX: /* the chosen side gets g (ties: b) */
        st = gx_bin(ctx, nd->op == TX_OP_MIN ? TX_OP_LESS : TX_OP_GREATER, a, b, l, &m);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, g, m, l, &ga);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, ga, l, &gb);
        break;
    default:
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "tx_tape_grad: %s has no gradient yet",
                       tx_op_name((tx_op)nd->op));
    }
    const tx_slot *as = gx_slot(ctx, a), *bs = gx_slot(ctx, b);
    if (!st)
        st = gx_unbroadcast(ctx, ga, as->rank, as->shape, l, &gin[0]);
    if (!st)
        st = gx_unbroadcast(ctx, gb, bs->rank, bs->shape, l, &gin[1]);
    return st;
}

tx_status gx_backward_elementwise(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                  tx_tensor gin[GX_MAX_IN]) {
    if (gx_slot(ctx, nd->in[0])->dtype != TX_DTYPE_FLOAT32)
        return TX_STATUS_OK; /* integer values carry no gradient */
    if (tx_op_family((tx_op)nd->op) == TX_FAMILY_BINARY)
        return binary(ctx, nd, g, l, gin);
    float lo = nd->op == TX_OP_CLIP ? nd->a.lo : nd->a.alpha;
    float hi = nd->op == TX_OP_CLIP ? nd->a.hi : nd->a.beta;
    return gx_unary_grad(ctx, nd->op, lo, hi, nd->in[0], nd->out, g, l, &gin[0]);
}
