/* BINARY family on the CPU: numpy broadcasting as rows of the last dim with
 * a stride of 0 or 1 per operand, so the common cases (same shape, a scalar,
 * a bias row) are straight vectorizable loops. Semantics as
 * glsl-templates/binary.glsl. */
#include <math.h>

#include "cpu.h"

/* pow as C99 Annex F defines it; int32: rounded to the nearest whole value. */
static inline float pow_int(float x, float z) {
    return roundf(powf(x, z));
}
static inline float nan_min(float x, float z) {
    return x != x || z != z ? x + z : (x < z ? x : z);
}
static inline float nan_max(float x, float z) {
    return x != x || z != z ? x + z : (x > z ? x : z);
}

/* y[i] = a[i·as] (op) b[i·bs], i < n. */
static void bin_row(tx_op op, bool is_int, const float *a, int64_t as, const float *b, int64_t bs,
                    float *y, int64_t n) {
#define ROW(expr)                                                                                  \
    if (as == 1 && bs == 1) {                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                          \
            float x = a[i], z = b[i];                                                              \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    } else if (as == 1 && bs == 0) {                                                               \
        const float z = b[0];                                                                      \
        for (int64_t i = 0; i < n; i++) {                                                          \
            float x = a[i];                                                                        \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    } else {                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                          \
            float x = a[i * as], z = b[i * bs];                                                    \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    }                                                                                              \
    break
    switch (op) {
    case TX_OP_ADD: ROW(x + z);
    case TX_OP_SUB: ROW(x - z);
    case TX_OP_MUL: ROW(x * z);
    case TX_OP_DIV:
        if (is_int) {
            ROW(truncf(x / z));
        }
        ROW(x / z);
    case TX_OP_POW:
        if (is_int) {
            ROW(pow_int(x, z));
        }
        ROW(powf(x, z));
    case TX_OP_MIN: ROW(nan_min(x, z));
    case TX_OP_MAX: ROW(nan_max(x, z));
    case TX_OP_PRELU: ROW(x < 0 ? x * z : x);
    case TX_OP_AND: ROW((x != 0 && z != 0) ? 1.0f : 0.0f);
    case TX_OP_OR: ROW((x != 0 || z != 0) ? 1.0f : 0.0f);
    case TX_OP_XOR: ROW(((x != 0) != (z != 0)) ? 1.0f : 0.0f);
    case TX_OP_EQUAL: ROW(x == z ? 1.0f : 0.0f);
    case TX_OP_LESS: ROW(x < z ? 1.0f : 0.0f);
    case TX_OP_GREATER: ROW(x > z ? 1.0f : 0.0f);
    case TX_OP_LESS_EQUAL: ROW(x <= z ? 1.0f : 0.0f);
    case TX_OP_GREATER_EQUAL: ROW(x >= z ? 1.0f : 0.0f);
    default: TX_ASSERT(!"not a binary op");
    }
#undef ROW
}

/* Output elements [begin, end): walked row by row of the last dim. */
static void binary_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_binary_call *c = arg;
    const float *ad = tx_cpu_data(c->a);
    const float *bd = tx_cpu_data(c->b);
    float *yd = tx_cpu_data(c->y);
    bool is_int = c->dtype == TX_DTYPE_INT32;
    int64_t len = c->dims[5];
    int64_t i = begin;
    while (i < end) {
        /* coordinates of i → operand offsets */
        int64_t r = i / len, col = i % len, ao = col * c->sa[5], bo = col * c->sb[5];
        for (int d = 4; d >= 0; d--) {
            int64_t k = r % c->dims[d];
            r /= c->dims[d];
            ao += k * c->sa[d];
            bo += k * c->sb[d];
        }
        int64_t n = len - col < end - i ? len - col : end - i;
        bin_row(c->op, is_int, ad + ao, c->sa[5], bd + bo, c->sb[5], yd + i, n);
        i += n;
    }
}

tx_status tx_cpu_binary(tx_ctx *ctx, const tx_binary_call *c) {
    tx_cpu_for(ctx, c->y->numel, 16384, binary_range, (void *)c);
    return TX_STATUS_OK;
}
