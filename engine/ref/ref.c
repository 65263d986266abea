/* The reference dispatch table, generated from the op list. */
#include "ref.h"

#include <math.h>
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

int tx_ref_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int r, int64_t *da,
                     int64_t *db, int64_t *dims) {
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        da[i] = ia >= 0 ? a[ia] : 1;
        db[i] = ib >= 0 ? b[ib] : 1;
        if (da[i] != db[i] && da[i] != 1 && db[i] != 1)
            return -1;
        dims[i] = da[i] == 1 ? db[i] : da[i];
    }
    return 0;
}

void tx_ref_broadcast_at(int r, const int64_t *dims, const int64_t *da, const int64_t *db,
                         int64_t i, int64_t *ia, int64_t *ib) {
    int64_t sa = 1, sb = 1;
    *ia = *ib = 0;
    for (int d = r - 1; d >= 0; d--) {
        int64_t c = i % dims[d];
        i /= dims[d];
        if (da[d] != 1)
            *ia += c * sa;
        if (db[d] != 1)
            *ib += c * sb;
        sa *= da[d];
        sb *= db[d];
    }
}

const tx_ref_tensor *tx_ref_one_input(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs) {
    return n_in == 1 && attrs ? &in[0] : NULL;
}

void tx_ref_free(tx_ref_tensor *t) {
    free(t->data);
    t->data = NULL;
}

void tx_ref_input_range(tx_op op, int input, float *lo, float *hi) {
    *lo = -2.0f;
    *hi = 2.0f;
    /* one line per case: the table it is */
    /* clang-format off */
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
    case TX_OP_MATMUL:
    case TX_OP_CONV:
    case TX_OP_CONV_TRANSPOSE: *lo = -1.0f; *hi = 1.0f; break;
    case TX_OP_REDUCE_PROD: *lo = 0.9f; *hi = 1.1f; break;
    case TX_OP_REDUCE_LOG_SUM_EXP: *lo = -8.0f; *hi = 8.0f; break;
    /* far past exp's float range: only max subtraction survives */
    case TX_OP_SOFTMAX:
    case TX_OP_LOG_SOFTMAX: *lo = -20.0f; *hi = 100.0f; break;
    case TX_OP_BATCH_NORM:
        if (input == 4) { *lo = 0.1f; *hi = 2.0f; }
        break;
    case TX_OP_TAN: *lo = -1.4f; *hi = 1.4f; break;
    case TX_OP_ASIN:
    case TX_OP_ACOS:
    case TX_OP_ATANH: *lo = -0.99f; *hi = 0.99f; break;
    case TX_OP_ACOSH: *lo = 1.01f; *hi = 4.0f; break;
    case TX_OP_CELU: *lo = -4.0f; *hi = 4.0f; break;
    case TX_OP_ROUND:
    case TX_OP_CAST: *lo = -4.0f; *hi = 4.0f; break;
    case TX_OP_NOT:
    case TX_OP_AND:
    case TX_OP_XOR:
    case TX_OP_OR: *lo = 0.0f; *hi = 2.0f; break;
    case TX_OP_WHERE:
        if (input == 0) { *lo = 0.0f; *hi = 2.0f; }
        break;
    default: break;
    }
    /* clang-format on */
}

double tx_ref_input_step(tx_op op, int input) {
    switch (op) {
    case TX_OP_ARGMAX:
    case TX_OP_ARGMIN:
    case TX_OP_CAST:
    case TX_OP_SIGN: return 0.5;
    case TX_OP_ROUND:
    case TX_OP_FLOOR:
    case TX_OP_CEIL: return 0.25;
    case TX_OP_NOT:
    case TX_OP_AND:
    case TX_OP_OR:
    case TX_OP_XOR:
    case TX_OP_EQUAL:
    case TX_OP_LESS:
    case TX_OP_GREATER:
    case TX_OP_LESS_EQUAL:
    case TX_OP_GREATER_EQUAL: return 1.0;
    case TX_OP_WHERE: return input == 0 ? 1.0 : 0.0;
    default: return 0.0;
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
    /* one line per case: the table it is */
    /* clang-format off */
    switch (op) {
    case TX_OP_EXP:
    case TX_OP_POW:
    case TX_OP_SIGMOID:
    case TX_OP_TANH:
    case TX_OP_LOG: *atol = 1e-5; *rtol = 1e-4; break;
    case TX_OP_ERF:
    case TX_OP_GELU: *atol = 2e-5; *rtol = 1e-5; break;
    case TX_OP_SOFTPLUS:
    case TX_OP_ELU:
    case TX_OP_SELU:
    case TX_OP_SIN:
    case TX_OP_COS:
    case TX_OP_TAN:
    case TX_OP_RECIPROCAL:
    case TX_OP_SINH:
    case TX_OP_COSH:
    case TX_OP_ASIN:
    case TX_OP_ACOS:
    case TX_OP_ATAN:
    case TX_OP_ASINH:
    case TX_OP_ACOSH:
    case TX_OP_ATANH:
    case TX_OP_MISH:
    case TX_OP_SWISH:
    case TX_OP_CELU:
    case TX_OP_SOFTMAX:
    case TX_OP_LOG_SOFTMAX: *atol = 1e-5; *rtol = 1e-4; break;
    case TX_OP_REDUCE_SUM:
    case TX_OP_REDUCE_MEAN:
    case TX_OP_REDUCE_L2:
    case TX_OP_REDUCE_SUM_SQUARE:
    case TX_OP_REDUCE_L1:
    case TX_OP_REDUCE_LOG_SUM:
    case TX_OP_REDUCE_LOG_SUM_EXP:
        /* float32 sums of k terms of magnitude <= 4, accumulated as a tree */
        *atol = 2e-6 * sqrt((double)k) + 1e-6;
        *rtol = 1e-5 * (1.0 + log2((double)k));
        break;
    case TX_OP_REDUCE_PROD: *atol = 1e-6; *rtol = 2e-6 * (double)k; break;
    case TX_OP_BATCH_NORM:
    case TX_OP_INSTANCE_NORM:
    case TX_OP_LAYER_NORM: *atol = 1e-4; *rtol = 1e-4; break;
    case TX_OP_MATMUL:
    case TX_OP_CONV:
    case TX_OP_CONV_TRANSPOSE:
        /* float32 accumulation over k terms of magnitude <= 1 */
        *atol = 1e-5 * (double)(k > 16 ? k : 16) / 4.0;
        *rtol = 1e-4;
        break;
    default: break;
    }
    /* clang-format on */
}
