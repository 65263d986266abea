/* Reference: UNARY, CLIP, ACT (alpha, beta from attrs, given as is) and CAST. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

double tx_ref_act_scalar(tx_op op, double al, double be, double x) {
    switch (op) {
    case TX_OP_AFFINE: return al * x + be;
    case TX_OP_SWISH: return x / (1.0 + exp(-al * x));
    case TX_OP_HARD_SIGMOID: return fmax(0.0, fmin(1.0, al * x + be));
    case TX_OP_LEAKY_RELU: return x < 0 ? al * x : x;
    case TX_OP_ELU: return x < 0 ? al * expm1(x) : x;
    case TX_OP_CELU: return x < 0 ? al * expm1(x / al) : x;
    case TX_OP_THRESHOLDED_RELU: return x > al ? x : 0;
    case TX_OP_SHRINK: return x < -al ? x + be : (x > al ? x - be : 0);
    case TX_OP_SELU: return be * (x < 0 ? al * expm1(x) : x);
    default: return tx_ref_unary_scalar(op, x);
    }
}

double tx_ref_unary_scalar(tx_op op, double x) {
    switch (op) {
    case TX_OP_RELU: return x < 0 ? 0 : x;
    case TX_OP_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case TX_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TX_OP_TANH: return tanh(x);
    case TX_OP_EXP: return exp(x);
    case TX_OP_LOG: return log(x);
    case TX_OP_SQRT: return sqrt(x);
    case TX_OP_ABS: return fabs(x);
    case TX_OP_NEG: return -x;
    case TX_OP_ERF: return erf(x);
    case TX_OP_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    /* log(1 + e^x) without overflowing: FLT_MAX stays FLT_MAX */
    case TX_OP_SOFTPLUS: return fmax(x, 0.0) + log1p(exp(-fabs(x)));
    case TX_OP_SOFTSIGN: return x / (1.0 + fabs(x));
    case TX_OP_HARD_SWISH: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
    case TX_OP_SIN: return sin(x);
    case TX_OP_COS: return cos(x);
    case TX_OP_TAN: return tan(x);
    case TX_OP_FLOOR: return floor(x);
    case TX_OP_CEIL: return ceil(x);
    case TX_OP_ROUND: return nearbyint(x); /* default rounding: half to even */
    case TX_OP_SIGN: return isnan(x) ? x : (x > 0) - (x < 0);
    case TX_OP_RECIPROCAL: return 1.0 / x;
    case TX_OP_NOT: return x == 0;
    case TX_OP_SINH: return sinh(x);
    case TX_OP_COSH: return cosh(x);
    case TX_OP_ASIN: return asin(x);
    case TX_OP_ACOS: return acos(x);
    case TX_OP_ATAN: return atan(x);
    case TX_OP_ASINH: return asinh(x);
    case TX_OP_ACOSH: return acosh(x);
    case TX_OP_ATANH: return atanh(x);
    case TX_OP_MISH: return x * tanh(log1p(exp(x)));
    case TX_OP_IS_NAN: return isnan(x) ? 1 : 0;
    default: return x;
    }
}

static int run(tx_op op, const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
               tx_ref_tensor *out) {
    if (n_in != 1)
        return -1;
    *out = in[0];
    if (op == TX_OP_CAST)
        out->dtype = attrs ? attrs->cast_to : TX_DTYPE_FLOAT32;
    double al = attrs ? attrs->alpha : 0, be = attrs ? attrs->beta : 0;
    int64_t n = tx_ref_numel(&in[0]);
    out->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!out->data)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        double x = in[0].data[i];
        double y;
        if (op == TX_OP_CLIP) {
            y = x;
            if (attrs && x < attrs->lo)
                y = attrs->lo;
            if (attrs && x > attrs->hi)
                y = attrs->hi;
        } else if (op == TX_OP_CAST) {
            if (attrs && attrs->cast_bool)
                y = x != 0 || isnan(x);
            else if (out->dtype == TX_DTYPE_INT32)
                y = isnan(x) ? 0 : fmax(-2147483648.0, fmin(2147483520.0, trunc(x)));
            else
                y = x;
        } else {
            y = tx_ref_act_scalar(op, al, be, x);
        }
        out->data[i] = (float)y;
    }
    return 0;
}

#define UNARY_REF(ENUM, name) TX_REF_RUN(ENUM, name)
UNARY_REF(RELU, relu)
UNARY_REF(RELU6, relu6)
UNARY_REF(SIGMOID, sigmoid)
UNARY_REF(TANH, tanh)
UNARY_REF(EXP, exp)
UNARY_REF(LOG, log)
UNARY_REF(SQRT, sqrt)
UNARY_REF(ABS, abs)
UNARY_REF(NEG, neg)
UNARY_REF(ERF, erf)
UNARY_REF(GELU, gelu)
UNARY_REF(CLIP, clip)
UNARY_REF(SOFTPLUS, softplus)
UNARY_REF(SOFTSIGN, softsign)
UNARY_REF(HARD_SWISH, hard_swish)
UNARY_REF(SIN, sin)
UNARY_REF(COS, cos)
UNARY_REF(TAN, tan)
UNARY_REF(FLOOR, floor)
UNARY_REF(CEIL, ceil)
UNARY_REF(ROUND, round)
UNARY_REF(SIGN, sign)
UNARY_REF(RECIPROCAL, reciprocal)
UNARY_REF(NOT, not )
UNARY_REF(SINH, sinh)
UNARY_REF(COSH, cosh)
UNARY_REF(ASIN, asin)
UNARY_REF(ACOS, acos)
UNARY_REF(ATAN, atan)
UNARY_REF(ASINH, asinh)
UNARY_REF(ACOSH, acosh)
UNARY_REF(ATANH, atanh)
UNARY_REF(MISH, mish)
UNARY_REF(IS_NAN, is_nan)
UNARY_REF(CELU, celu)
UNARY_REF(THRESHOLDED_RELU, thresholded_relu)
UNARY_REF(SHRINK, shrink)
UNARY_REF(HARD_SIGMOID, hard_sigmoid)
UNARY_REF(AFFINE, affine)
UNARY_REF(SWISH, swish)
UNARY_REF(LEAKY_RELU, leaky_relu)
UNARY_REF(ELU, elu)
UNARY_REF(SELU, selu)
UNARY_REF(CAST, cast)
