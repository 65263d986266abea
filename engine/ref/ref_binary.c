/* Reference: BINARY family with numpy broadcasting. */
#include <math.h>
#include <stdlib.h>

#include "ref.h"

double tx_ref_binary_scalar(tx_op op, double a, double b, bool is_int) {
    switch (op) {
    case TX_OP_ADD: return a + b;
    case TX_OP_SUB: return a - b;
    case TX_OP_MUL: return a * b;
    case TX_OP_DIV: return is_int ? trunc(a / b) : a / b;
    case TX_OP_POW: return is_int ? round(pow(a, b)) : pow(a, b);
    case TX_OP_MIN: return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
    case TX_OP_MAX: return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
    case TX_OP_PRELU: return a < 0 ? a * b : a;
    case TX_OP_AND: return a != 0 && b != 0;
    case TX_OP_OR: return a != 0 || b != 0;
    case TX_OP_XOR: return (a != 0) != (b != 0);
    case TX_OP_EQUAL: return a == b;
    case TX_OP_LESS: return a < b;
    case TX_OP_GREATER: return a > b;
    case TX_OP_LESS_EQUAL: return a <= b;
    case TX_OP_GREATER_EQUAL: return a >= b;
    default: return NAN;
    }
}

static int run(tx_op op, const tx_ref_tensor *in, int n_in, tx_ref_tensor *out) {
    if (n_in != 2)
        return -1;
    const tx_ref_tensor *a = &in[0], *b = &in[1];
    int rank = a->rank > b->rank ? a->rank : b->rank;
    int64_t da[TX_MAX_RANK], db[TX_MAX_RANK];
    *out = (tx_ref_tensor){.rank = rank, .dtype = a->dtype};
    if (tx_ref_broadcast(a->rank, a->shape, b->rank, b->shape, rank, da, db, out->shape))
        return -1;
    int64_t n = tx_ref_numel(out);
    out->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!out->data)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t ia, ib;
        tx_ref_broadcast_at(rank, out->shape, da, db, i, &ia, &ib);
        out->data[i] =
            (float)tx_ref_binary_scalar(op, a->data[ia], b->data[ib], a->dtype == TX_DTYPE_INT32);
    }
    return 0;
}

#define BINARY_REF(ENUM, name) TX_REF_RUN_NO_ATTRS(ENUM, name)
BINARY_REF(ADD, add)
BINARY_REF(SUB, sub)
BINARY_REF(MUL, mul)
BINARY_REF(DIV, div)
BINARY_REF(POW, pow)
BINARY_REF(MIN, min)
BINARY_REF(MAX, max)
BINARY_REF(PRELU, prelu)
BINARY_REF(AND, and)
BINARY_REF(OR, or)
BINARY_REF(XOR, xor)
BINARY_REF(EQUAL, equal)
BINARY_REF(LESS, less)
BINARY_REF(GREATER, greater)
BINARY_REF(LESS_EQUAL, less_equal)
BINARY_REF(GREATER_EQUAL, greater_equal)
