/* Reference: UNARY and CLIP families. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

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
    default: return x;
    }
}

static int run(tx_op op, const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
               tx_ref_tensor *out) {
    if (n_in != 1)
        return -1;
    *out = in[0];
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
        } else {
            y = tx_ref_unary_scalar(op, x);
        }
        out->data[i] = (float)y;
    }
    return 0;
}

#define UNARY_REF(ENUM, name)                                                                 \
    int tx_ref_##name(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,           \
                      tx_ref_tensor *out) {                                                   \
        return run(TX_OP_##ENUM, in, n_in, attrs, out);                                       \
    }
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
