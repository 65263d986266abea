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
/* One loop of y[i] = expr over x = xe and z = ze; ROW picks the loop whose
 * operands are contiguous (i) or broadcast (a hoisted scalar), so that the
 * common cases vectorize, and strided indexing for the rest. */
#define ROW_LOOP(xe, ze, expr)                                                                     \
    for (int64_t i = 0; i < n; i++) {                                                              \
        float x = (xe), z = (ze);                                                                  \
        y[i] = (expr);                                                                             \
    }
#define ROW(expr)                                                                                  \
    if (as == 1 && bs == 1) {                                                                      \
        ROW_LOOP(a[i], b[i], expr)                                                                 \
    } else if (as == 1 && bs == 0) {                                                               \
        const float b0 = b[0];                                                                     \
        ROW_LOOP(a[i], b0, expr)                                                                   \
    } else if (as == 0 && bs == 1) {                                                               \
        const float a0 = a[0];                                                                     \
        ROW_LOOP(a0, b[i], expr)                                                                   \
    } else {                                                                                       \
        ROW_LOOP(a[i * as], b[i * bs], expr)                                                       \
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
#undef ROW_LOOP
}

typedef struct binary_job {
    const tx_binary_call *c;
    const float *a, *b;
    float *y;
    /* the call's dims with neighbours merged where both operands walk them
     * alike, so rows are as long as they can be ([C,H,W] * [C,1,1]: C rows
     * of H·W against one value each) */
    int nd;
    int64_t dims[6], sa[6], sb[6];
} binary_job;

static void merge_dims(binary_job *j) {
    const tx_binary_call *c = j->c;
    j->nd = 0;
    for (int d = 0; d < 6; d++) {
        if (c->dims[d] == 1)
            continue;
        int k = j->nd - 1;
        /* dim d continues dim k when, for each operand, stepping k is
         * stepping d dims[d] times (both broadcast, or both contiguous) */
        if (k >= 0 && j->sa[k] == c->sa[d] * c->dims[d] && j->sb[k] == c->sb[d] * c->dims[d]) {
            j->dims[k] *= c->dims[d];
            j->sa[k] = c->sa[d];
            j->sb[k] = c->sb[d];
            continue;
        }
        j->dims[j->nd] = c->dims[d];
        j->sa[j->nd] = c->sa[d];
        j->sb[j->nd] = c->sb[d];
        j->nd++;
    }
    if (j->nd == 0) { /* a single element */
        j->dims[0] = 1;
        j->sa[0] = j->sb[0] = 0;
        j->nd = 1;
    }
}

/* Output elements [begin, end): walked row by row of the last merged dim. */
static void binary_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const binary_job *j = arg;
    bool is_int = j->c->dtype == TX_DTYPE_INT32;
    int last = j->nd - 1;
    int64_t len = j->dims[last];
    int64_t i = begin;
    while (i < end) {
        /* coordinates of i → operand offsets */
        int64_t r = i / len, col = i % len, ao = col * j->sa[last], bo = col * j->sb[last];
        for (int d = last - 1; d >= 0; d--) {
            int64_t k = r % j->dims[d];
            r /= j->dims[d];
            ao += k * j->sa[d];
            bo += k * j->sb[d];
        }
        int64_t n = len - col < end - i ? len - col : end - i;
        bin_row(j->c->op, is_int, j->a + ao, j->sa[last], j->b + bo, j->sb[last], j->y + i, n);
        i += n;
    }
}

tx_status tx_cpu_binary(tx_ctx *ctx, const tx_binary_call *c) {
    binary_job j = {c, tx_cpu_data(c->a), tx_cpu_data(c->b), tx_cpu_data(c->y), 0, {0}, {0}, {0}};
    merge_dims(&j);
    tx_cpu_for(ctx, c->y->numel, 16384, binary_range, &j);
    return TX_STATUS_OK;
}
