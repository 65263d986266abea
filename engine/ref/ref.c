/* The reference dispatch table, generated from the op list. */
#include "ref.h"

#include <stdlib.h>

const tx_ref_fn tx_ref_table[TX_OP_COUNT_] = {
#define TX_OP(ENUM, name, family, arity) [TX_OP_##ENUM] = tx_ref_##name,
#include "texel_ops.def"
#undef TX_OP
};

int64_t tx_ref_numel(const tx_ref_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

void tx_ref_free(tx_ref_tensor *t) {
    free(t->data);
    t->data = NULL;
}

void tx_ref_input_range(tx_op op, int input, float *lo, float *hi) {
    *lo = -2.0f;
    *hi = 2.0f;
    switch (op) {
    case TX_OP_LOG:
    case TX_OP_SQRT: *lo = 0.01f; *hi = 4.0f; break;
    case TX_OP_EXP: *lo = -8.0f; *hi = 8.0f; break;
    case TX_OP_RELU6:
    case TX_OP_CLIP: *lo = -8.0f; *hi = 8.0f; break;
    case TX_OP_DIV:
        if (input == 1) { *lo = 0.25f; *hi = 4.0f; }
        break;
    case TX_OP_POW:
        if (input == 0) { *lo = 0.1f; *hi = 3.0f; } else { *lo = -2.0f; *hi = 2.0f; }
        break;
    case TX_OP_MATMUL: *lo = -1.0f; *hi = 1.0f; break;
    default: break;
    }
}

tx_dtype tx_ref_input_dtype(tx_op op, int input, const tx_ref_tensor *in, int n_in,
                            const tx_op_attrs *attrs, float *lo, float *hi) {
    if (op == TX_OP_GATHER && input == 1 && n_in >= 1) {
        int a = attrs ? attrs->move.axis : 0;
        a = a < 0 ? a + in[0].rank : a;
        float dim = a >= 0 && a < in[0].rank ? (float)in[0].shape[a] : 1.0f;
        *lo = -dim - 2.0f;
        *hi = dim + 1.0f;
        return TX_DTYPE_INT32;
    }
    tx_ref_input_range(op, input, lo, hi);
    return TX_DTYPE_FLOAT32;
}

void tx_ref_tolerance(tx_op op, int64_t k, double *atol, double *rtol) {
    *atol = 1e-5;
    *rtol = 1e-5;
    switch (op) {
    case TX_OP_EXP:
    case TX_OP_POW:
    case TX_OP_SIGMOID:
    case TX_OP_TANH:
    case TX_OP_LOG: *atol = 1e-5; *rtol = 1e-4; break;
    case TX_OP_ERF:
    case TX_OP_GELU: *atol = 2e-5; *rtol = 1e-5; break;
    case TX_OP_MATMUL:
        /* float32 accumulation over k terms of magnitude <= 1 */
        *atol = 1e-5 * (double)(k > 16 ? k : 16) / 4.0;
        *rtol = 1e-4;
        break;
    default: break;
    }
}
