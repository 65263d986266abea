/* NARY family on the CPU: rows of the last output dim, each input read with
 * a stride of 0 or 1 along the row; the fold runs input by input over the
 * row (left to right, as the GPU's passes do), so the loops vectorize.
 * Semantics as glsl-templates/nary.glsl. */
#include <string.h>

#include "cpu.h"

static inline float nan_min(float x, float z) {
    return x != x || z != z ? x + z : (x < z ? x : z);
}
static inline float nan_max(float x, float z) {
    return x != x || z != z ? x + z : (x > z ? x : z);
}

typedef struct nary_job {
    const tx_nary_call *c;
    const int64_t (*st)[6]; /* per input */
} nary_job;

/* The offset of output element i's row start (column col) in input k. */
static int64_t offset_of(const tx_nary_call *c, const int64_t *st, int64_t r, int64_t col) {
    int64_t o = col * st[5];
    for (int d = 4; d >= 0; d--) {
        o += r % c->dims[d] * st[d];
        r /= c->dims[d];
    }
    return o;
}

static inline float add(float x, float z) {
    return x + z;
}

/* y[i] (op)= x[i * s], i < n. */
static void fold_row(tx_op op, float *y, const float *x, int64_t s, int64_t n) {
#define FOLD(f)                                                                                    \
    if (s == 1) {                                                                                  \
        TX_CPU_EACH(n, y[i] = f(y[i], x[i]));                                                      \
    } else {                                                                                       \
        const float b = x[0];                                                                      \
        TX_CPU_EACH(n, y[i] = f(y[i], b));                                                         \
    }                                                                                              \
    break
    switch (op) {
    case TX_OP_MIN_N: FOLD(nan_min);
    case TX_OP_MAX_N: FOLD(nan_max);
    default: FOLD(add);
    }
#undef FOLD
}

/* Output elements [begin, end), row by row of the last dim. */
static void nary_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const nary_job *j = arg;
    const tx_nary_call *c = j->c;
    float *y = tx_cpu_data(c->y);
    int64_t len = c->dims[5];
    for (int64_t i = begin; i < end;) {
        int64_t r = i / len, col = i % len;
        int64_t n = len - col < end - i ? len - col : end - i;
        float *yr = y + i;
        if (c->op == TX_OP_WHERE) {
            const float *x[3];
            int64_t s[3];
            for (int k = 0; k < 3; k++) {
                x[k] = tx_cpu_data(c->xs[k]) + offset_of(c, j->st[k], r, col);
                s[k] = j->st[k][5];
            }
            for (int64_t e = 0; e < n; e++)
                yr[e] = x[0][e * s[0]] != 0 ? x[1][e * s[1]] : x[2][e * s[2]];
        } else {
            for (int k = 0; k < c->n; k++) {
                const float *x = tx_cpu_data(c->xs[k]) + offset_of(c, j->st[k], r, col);
                int64_t s = j->st[k][5];
                if (k > 0)
                    fold_row(c->op, yr, x, s, n);
                else if (s == 1)
                    memcpy(yr, x, (size_t)n * sizeof(float));
                else
                    TX_CPU_EACH(n, yr[i] = x[0]);
            }
            if (c->scale != 1.0f) {
                const float sc = c->scale;
                TX_CPU_EACH(n, yr[i] *= sc);
            }
        }
        i += n;
    }
}

tx_status tx_cpu_nary(tx_ctx *ctx, const tx_nary_call *c) {
    int64_t(*st)[6] = malloc((size_t)c->n * sizeof *st);
    if (!st)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", tx_op_name(c->op));
    for (int k = 0; k < c->n; k++)
        tx_nary_strides(c->xs[k], st[k]);
    nary_job j = {c, (const int64_t(*)[6])st};
    tx_cpu_for(ctx, c->y->numel, 16384 / (c->n > 4 ? c->n / 4 : 1), nary_range, &j);
    free(st);
    return TX_STATUS_OK;
}
