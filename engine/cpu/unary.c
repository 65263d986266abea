/* UNARY, CLIP, ACT and CAST families on the CPU: one loop per op, so the
 * simple ones vectorize; semantics as shaders/elementwise.glsl (NaN in, NaN
 * out; cast truncates and saturates). */
#include <math.h>

#include "cpu.h"
#include "simd.h"

static inline float keep_nan(float r, float v) {
    return v != v ? v : r;
}

/* Two selects, not nested ones: gcc vectorizes these (a NaN passes both). */
static inline float clamp01(float t) {
    t = t < 0.0f ? 0.0f : t;
    return t > 1.0f ? 1.0f : t;
}

/* In the SIMD layer: gcc does not if-convert the scalar form inside the
 * switch's loop ("control flow in loop"). */
static void hard_swish(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        tx_v4_store(y + i, tx_v4_hard_swish(tx_v4_load(x + i)));
    for (; i < n; i++)
        y[i] = tx_hard_swish1(x[i]);
}

/* Round half to even without a library call (nearbyintf is one on baseline
 * x86-64, so its loop does not vectorize; this loop measured 2.4x faster over
 * 1M floats): below 2^23 adding and subtracting 2^23 rounds |v| in the
 * default mode; larger values, infinities and NaN are integral (or NaN)
 * already. The sign is put back, so -0.3 gives -0, as nearbyintf does. */
static inline float round_even(float v) {
    float t = fabsf(v), r = (t + 8388608.0f) - 8388608.0f;
    return t < 8388608.0f ? copysignf(r, v) : v;
}

static float softplus(float v) {
    return keep_nan((v > 0 ? v : 0) + log1pf(expf(-fabsf(v))), v);
}

void tx_cpu_unary_apply(tx_op op, float lo, float hi, const float *x, float *y, int64_t n) {
#define MAP(expr)                                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                              \
        float v = x[i];                                                                            \
        y[i] = (expr);                                                                             \
    }                                                                                              \
    break
    const float a = lo, b = hi;
    switch (op) {
    case TX_OP_NONE:
        if (x == y)
            break;
        MAP(v);
    case TX_OP_RELU: MAP(v < 0 ? 0.0f : v);
    case TX_OP_RELU6: MAP(v < 0 ? 0.0f : (v > 6 ? 6.0f : v));
    case TX_OP_SIGMOID: MAP(1.0f / (1.0f + expf(-v)));
    case TX_OP_TANH: MAP(tanhf(v));
    case TX_OP_EXP: MAP(expf(v));
    case TX_OP_LOG: MAP(logf(v));
    case TX_OP_SQRT: MAP(sqrtf(v));
    case TX_OP_ABS: MAP(fabsf(v));
    case TX_OP_NEG: MAP(-v);
    case TX_OP_ERF: MAP(erff(v));
    case TX_OP_GELU: MAP(0.5f * v * (1.0f + erff(v * 0.70710678118654752f)));
    case TX_OP_CLIP: MAP(v < lo ? lo : (v > hi ? hi : v));
    case TX_OP_SOFTPLUS: MAP(softplus(v));
    case TX_OP_SOFTSIGN: MAP(v / (1.0f + fabsf(v)));
    /* clamps as ternaries, not fminf/fmaxf (library calls, not vectorized);
     * a NaN passes both compares and stays NaN */
    case TX_OP_HARD_SWISH: hard_swish(x, y, n); break;
    case TX_OP_SIN: MAP(sinf(v));
    case TX_OP_COS: MAP(cosf(v));
    case TX_OP_TAN: MAP(tanf(v));
    case TX_OP_FLOOR: MAP(floorf(v));
    case TX_OP_CEIL: MAP(ceilf(v));
    case TX_OP_ROUND: MAP(round_even(v)); /* half to even, as nearbyintf */
    case TX_OP_SIGN: MAP(v > 0 ? 1.0f : (v < 0 ? -1.0f : v));
    case TX_OP_RECIPROCAL: MAP(1.0f / v);
    case TX_OP_NOT: MAP(v == 0 ? 1.0f : 0.0f);
    case TX_OP_SINH: MAP(sinhf(v));
    case TX_OP_COSH: MAP(coshf(v));
    case TX_OP_ASIN: MAP(asinf(v));
    case TX_OP_ACOS: MAP(acosf(v));
    case TX_OP_ATAN: MAP(atanf(v));
    case TX_OP_ASINH: MAP(asinhf(v));
    case TX_OP_ACOSH: MAP(acoshf(v));
    case TX_OP_ATANH: MAP(atanhf(v));
    case TX_OP_MISH: MAP(v * tanhf(softplus(v)));
    case TX_OP_IS_NAN: MAP(v != v ? 1.0f : 0.0f);
    case TX_OP_HARD_SIGMOID: MAP(clamp01(a * v + b));
    case TX_OP_AFFINE: MAP(a * v + b);
    case TX_OP_SWISH: MAP(v * (1.0f / (1.0f + expf(-(a * v)))));
    case TX_OP_LEAKY_RELU: MAP(v < 0 ? a * v : v);
    case TX_OP_ELU: MAP(v < 0 ? a * expm1f(v) : v);
    case TX_OP_CELU: MAP(v < 0 ? a * expm1f(v / a) : v);
    case TX_OP_THRESHOLDED_RELU: MAP(v > a ? v : keep_nan(0.0f, v));
    case TX_OP_SHRINK: MAP(v < -a ? v + b : (v > a ? v - b : keep_nan(0.0f, v)));
    case TX_OP_SELU: MAP(b * (v < 0 ? a * expm1f(v) : v));
    default: TX_ASSERT(!"not an elementwise op");
    }
#undef MAP
}

/* cast to int32: truncate toward zero, NaN → 0, clamped to int32's range (as
 * floats: 2147483520 is the largest float below 2^31). */
static float cast_int(float v) {
    if (v != v)
        return 0.0f;
    v = truncf(v);
    return v < -2147483648.0f ? -2147483648.0f : (v > 2147483520.0f ? 2147483520.0f : v);
}

static void unary_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_unary_call *c = arg;
    const float *xd = tx_cpu_data(c->x);
    float *yd = tx_cpu_data(c->y);
    const float *x = xd + begin;
    float *y = yd + begin;
    int64_t n = end - begin;
    if (c->family != TX_FAMILY_CAST) {
        tx_cpu_unary_apply(c->op, c->lo, c->hi, x, y, n);
    } else if (c->hi != 0) { /* to bool: NaN is true */
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i] != 0 ? 1.0f : 0.0f;
    } else if (c->to == TX_DTYPE_INT32) {
        for (int64_t i = 0; i < n; i++)
            y[i] = cast_int(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            y[i] = x[i];
    }
}

tx_status tx_cpu_unary(tx_ctx *ctx, const tx_unary_call *c) {
    tx_cpu_for(ctx, c->y->numel, 16384, unary_range, (void *)c);
    return TX_STATUS_OK;
}

typedef struct add_act_job {
    float *y;
    const float *r;
    int64_t n;
    tx_op act;
    float lo, hi;
} add_act_job;

#define TX_ADD_ACT_CHUNK 16384

static void add_act_items(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const add_act_job *j = arg;
    for (int64_t i = begin; i < end; i++) {
        int64_t e0 = i * TX_ADD_ACT_CHUNK;
        int64_t e1 = e0 + TX_ADD_ACT_CHUNK < j->n ? e0 + TX_ADD_ACT_CHUNK : j->n;
        for (int64_t e = e0; e < e1 && j->r; e++)
            j->y[e] += j->r[e];
        if (j->act != TX_OP_NONE)
            tx_cpu_unary_apply(j->act, j->lo, j->hi, j->y + e0, j->y + e0, e1 - e0);
    }
}

void tx_cpu_add_act(tx_ctx *ctx, float *y, const float *r, int64_t n, tx_op act, float lo,
                    float hi) {
    add_act_job j = {y, r, n, act, lo, hi};
    tx_cpu_for(ctx, (n + TX_ADD_ACT_CHUNK - 1) / TX_ADD_ACT_CHUNK, 1, add_act_items, &j);
}
