/* Gradients of the elementwise families: UNARY, CLIP, ACT, BINARY, CAST.
 *
 * A unary op's gradient is g · f'(x), with f'(x) made from forward ops
 * (comparisons give 0/1 masks on float tensors); where f' is cheaper from the
 * output y (sigmoid, tanh, exp) it uses y. A binary op's gradients are summed
 * back over the dims broadcasting stretched. Comparisons, logic, is_nan and
 * casts to integers are steps: no gradient flows through them (zero almost
 * everywhere); a float-to-float cast passes g on. */
#include <math.h>

#include "grad.h"

/* 1 - t */
static tx_status one_minus(tx_ctx *ctx, tx_tensor t, gx_tmps *l, tx_tensor *out) {
    tx_tensor one;
    tx_status st = gx_scalar(ctx, t, 1.0f, l, &one);
    return st ? st : gx_bin(ctx, TX_OP_SUB, one, t, l, out);
}

/* (lo < t) (t < hi): 1 strictly inside, 0 elsewhere */
static tx_status inside(tx_ctx *ctx, tx_tensor t, float lo, float hi, gx_tmps *l, tx_tensor *out) {
    tx_tensor a, b;
    tx_status st = gx_bin_s(ctx, TX_OP_GREATER, t, lo, l, &a);
    if (!st)
        st = gx_bin_s(ctx, TX_OP_LESS, t, hi, l, &b);
    return st ? st : gx_bin(ctx, TX_OP_MUL, a, b, l, out);
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
    case TX_OP_CLIP: return inside(ctx, x, lo, hi, l, d);
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
    case TX_OP_AFFINE: return gx_fill(ctx, gx_slot(ctx, x)->st->dev, 1, (int64_t[]){1}, lo, l, d);
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
    case TX_OP_ERF: /* 2 / sqrt(pi) exp(-x^2) */
        st = gx_bin(ctx, TX_OP_MUL, x, x, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, a, -1.0f, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_EXP, a, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_MUL, a, 1.12837917f, l, d);
    case TX_OP_SOFTSIGN: /* 1 / (1 + |x|)^2 */
        st = gx_un(ctx, TX_OP_ABS, x, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, a, 1.0f, l, &a);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, a, a, l, &a);
        return st ? st : gx_un(ctx, TX_OP_RECIPROCAL, a, l, d);
    case TX_OP_HARD_SWISH: /* 0 below -3, 1 above 3, x / 3 + 1/2 between */
        st = gx_bin_s(ctx, TX_OP_MUL, x, 1.0f / 3.0f, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, a, 0.5f, l, &a);
        if (!st)
            st = inside(ctx, x, -3.0f, 3.0f, l, &b);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, a, b, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_GREATER_EQUAL, x, 3.0f, l, &b);
        return st ? st : gx_bin(ctx, TX_OP_ADD, a, b, l, d);
    case TX_OP_TAN: /* 1 + y^2 */
        st = gx_bin(ctx, TX_OP_MUL, y, y, l, &a);
        return st ? st : gx_bin_s(ctx, TX_OP_ADD, a, 1.0f, l, d);
    case TX_OP_SINH: return gx_un(ctx, TX_OP_COSH, x, l, d);
    case TX_OP_COSH: return gx_un(ctx, TX_OP_SINH, x, l, d);
    case TX_OP_ASIN:  /* 1 / sqrt(1 - x^2) */
    case TX_OP_ACOS:  /* -1 / sqrt(1 - x^2) */
    case TX_OP_ASINH: /* 1 / sqrt(x^2 + 1) */
    case TX_OP_ACOSH: /* 1 / sqrt(x^2 - 1) */
        st = gx_bin(ctx, TX_OP_MUL, x, x, l, &a);
        if (!st)
            st = op == TX_OP_ASINH   ? gx_bin_s(ctx, TX_OP_ADD, a, 1.0f, l, &a)
                 : op == TX_OP_ACOSH ? gx_bin_s(ctx, TX_OP_SUB, a, 1.0f, l, &a)
                                     : one_minus(ctx, a, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_SQRT, a, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_RECIPROCAL, a, l, op == TX_OP_ACOS ? &a : d);
        return st || op != TX_OP_ACOS ? st : gx_bin_s(ctx, TX_OP_MUL, a, -1.0f, l, d);
    case TX_OP_ATAN:  /* 1 / (1 + x^2) */
    case TX_OP_ATANH: /* 1 / (1 - x^2) */
        st = gx_bin(ctx, TX_OP_MUL, x, x, l, &a);
        if (!st)
            st = op == TX_OP_ATAN ? gx_bin_s(ctx, TX_OP_ADD, a, 1.0f, l, &a)
                                  : one_minus(ctx, a, l, &a);
        return st ? st : gx_un(ctx, TX_OP_RECIPROCAL, a, l, d);
    case TX_OP_MISH: /* t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x)) */
        st = gx_un(ctx, TX_OP_SOFTPLUS, x, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_TANH, a, l, &a);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, a, a, l, &b);
        if (!st)
            st = one_minus(ctx, b, l, &b);
        if (!st)
            st = gx_un(ctx, TX_OP_SIGMOID, x, l, &c);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, c, x, l, &c);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, c, b, l, &c);
        return st ? st : gx_bin(ctx, TX_OP_ADD, a, c, l, d);
    case TX_OP_SWISH: /* s (1 + alpha x (1 - s)), s = sigmoid(alpha x) */
        st = gx_bin_s(ctx, TX_OP_MUL, x, lo, l, &a);
        if (!st)
            st = gx_un(ctx, TX_OP_SIGMOID, a, l, &b);
        if (!st)
            st = one_minus(ctx, b, l, &c);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, a, c, l, &c);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, c, 1.0f, l, &c);
        return st ? st : gx_bin(ctx, TX_OP_MUL, b, c, l, d);
    case TX_OP_HARD_SIGMOID: /* alpha where 0 < alpha x + beta < 1 */
        st = gx_bin_s(ctx, TX_OP_MUL, x, lo, l, &a);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, a, hi, l, &a);
        if (!st)
            st = inside(ctx, a, 0.0f, 1.0f, l, &b);
        return st ? st : gx_bin_s(ctx, TX_OP_MUL, b, lo, l, d);
    case TX_OP_SELU: /* x > 0 ? gamma : y + gamma alpha (alpha: lo, gamma: hi) */
    case TX_OP_CELU: /* x > 0 ? 1 : exp(min(x, 0) / alpha) */
        st = gx_bin_s(ctx, TX_OP_GREATER, x, 0.0f, l, &a);
        if (!st && op == TX_OP_SELU)
            st = gx_bin_s(ctx, TX_OP_ADD, y, hi * lo, l, &b);
        if (!st && op == TX_OP_CELU)
            st = gx_bin_s(ctx, TX_OP_MIN, x, 0.0f, l, &b);
        if (!st && op == TX_OP_CELU)
            st = gx_bin_s(ctx, TX_OP_MUL, b, 1.0f / lo, l, &b);
        if (!st && op == TX_OP_CELU)
            st = gx_un(ctx, TX_OP_EXP, b, l, &b);
        c = a; /* the slope above 0 where the mask is 1: a (celu) or gamma a (selu) */
        if (!st && op == TX_OP_SELU)
            st = gx_bin_s(ctx, TX_OP_MUL, a, hi, l, &c);
        if (!st) /* a select, not a blend: b may be huge where x > 0 */
            st = gx_kept(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){a, c, b}, 3, d), l, d);
        return st;
    case TX_OP_THRESHOLDED_RELU: return gx_bin_s(ctx, TX_OP_GREATER, x, lo, l, d);
    case TX_OP_SHRINK: /* 1 outside [-lambd, lambd] */
        st = inside(ctx, x, -lo, lo, l, &a);
        return st ? st : one_minus(ctx, a, l, d);
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
    tx_tensor d;
    tx_status st;
    if (act == TX_OP_RELU) {
        /* y = relu(x) is nonzero exactly where x > 0 (NaN aside, which
         * passes g on): g there, one draw where the mask and its product
         * are two */
        st = gx_scalar(ctx, y, 0.0f, l, &d);
        if (!st)
            st = gx_kept(tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){y, g, d}, 3, out), l, out);
        return st;
    }
    /* clip: y > lo iff x > lo; y < hi iff x < hi (on the open side) */
    st = deriv(ctx, act, lo, hi, y, y, l, &d);
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
    case TX_OP_SUB:
        if (gx_need(nd, 1))
            st = gx_bin_s(ctx, TX_OP_MUL, g, -1.0f, l, &gb);
        break;
    case TX_OP_MUL: /* the sides asked for (a mask or a constant takes none) */
        if (gx_need(nd, 0))
            st = gx_bin(ctx, TX_OP_MUL, g, b, l, &ga);
        if (!st && gx_need(nd, 1))
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
    case TX_OP_PRELU: /* x >= 0 ? x : slope x: g (m + (1 - m) slope), g x (1 - m) */
        st = gx_bin_s(ctx, TX_OP_LESS, a, 0.0f, l, &m);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, g, m, l, &t); /* g where x < 0 */
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, a, l, &gb);
        if (!st)
            st = gx_bin(ctx, TX_OP_SUB, g, t, l, &ga);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, t, b, l, &t);
        if (!st)
            st = gx_bin(ctx, TX_OP_ADD, ga, t, l, &ga);
        break;
    case TX_OP_AND:
    case TX_OP_OR:
    case TX_OP_XOR:
    case TX_OP_EQUAL:
    case TX_OP_LESS:
    case TX_OP_GREATER:
    case TX_OP_LESS_EQUAL:
    case TX_OP_GREATER_EQUAL: return TX_STATUS_OK; /* 0/1 steps: zero almost everywhere */
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
    if (!st && gx_need(nd, 0))
        st = gx_unbroadcast(ctx, ga, as->rank, as->shape, l, &gin[0]);
    if (!st && gx_need(nd, 1))
        st = gx_unbroadcast(ctx, gb, bs->rank, bs->shape, l, &gin[1]);
    return st;
}

tx_status gx_backward_elementwise(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                  tx_tensor gin[GX_MAX_IN]) {
    if (gx_slot(ctx, nd->in[0])->dtype != TX_DTYPE_FLOAT32)
        return TX_STATUS_OK; /* integer values carry no gradient */
    if (tx_op_family((tx_op)nd->op) == TX_FAMILY_BINARY)
        return binary(ctx, nd, g, l, gin);
    if (nd->op == TX_OP_CAST) { /* float to float passes g; to integers or 0/1, none */
        if (nd->a.cast_to == TX_DTYPE_FLOAT32 && nd->a.hi == 0)
            gin[0] = g;
        return TX_STATUS_OK;
    }
    if (nd->op == TX_OP_NOT || nd->op == TX_OP_IS_NAN)
        return TX_STATUS_OK;
    float lo = nd->op == TX_OP_CLIP ? nd->a.lo : nd->a.alpha;
    float hi = nd->op == TX_OP_CLIP ? nd->a.hi : nd->a.beta;
    return gx_unary_grad(ctx, nd->op, lo, hi, nd->in[0], nd->out, g, l, &gin[0]);
}
