/* The CPU device's private interface: its kernels (engine/cpu/<family>.c)
 * and the helpers they share. Kernels read and write tx_storage.host: float
 * values, int32 tensors as whole floats, as on the GPU. */
#ifndef TX_CPU_H
#define TX_CPU_H

#include "../device.h"
#include "simd.h"
#include "threads.h"

/* The host values of a slot. */
static inline float *tx_cpu_data(const tx_slot *s) {
    return s->st->host;
}

/* n floats derived from st's values (weights in a kernel's layout) that st
 * keeps for `key` until its values are written or it is destroyed, counted
 * in the memory budget. *valid: they hold what key stands for already;
 * otherwise the caller fills them now, before anything else runs. NULL
 * where none can be kept (over the budget, out of memory, a kernel's
 * temporary copy of a storage): the caller makes its own. */
float *tx_cpu_derived(tx_ctx *ctx, tx_storage *st, uint64_t key, int64_t n, bool *valid);

/* Runs fn over [0, n) in chunks of at least `grain` on the context's CPU
 * threads (the caller's thread works too); returns when all are done. */
typedef void (*tx_cpu_range_fn)(void *arg, int64_t begin, int64_t end, int thread);
void tx_cpu_for(tx_ctx *ctx, int64_t n, int64_t grain, tx_cpu_range_fn fn, void *arg);
/* The number of threads tx_cpu_for may use (for per-thread scratch). */
int tx_cpu_threads(tx_ctx *ctx);
/* The context's thread pool (made on first use; NULL: run serially), for
 * kernels that hand it to tx_cpu_sgemm. */
tx_threadpool *tx_cpu_pool_of(tx_ctx *ctx);

/* y[i] = f(x[i]) for a UNARY / CLIP / ACT op (lo, hi: clip bounds or alpha,
 * beta); x and y may be the same array. Also the fused activation of matmul
 * and conv. */
void tx_cpu_unary_apply(tx_op op, float lo, float hi, const float *x, float *y, int64_t n);
/* y = act(y + r) over n elements, in place, on the context's threads (a
 * residual after a conv's or matmul's own epilogue; act NONE: the add alone). */
/* y = act(y + r) over n elements, in place (r NULL: act(y)). */
void tx_cpu_add_act(tx_ctx *ctx, float *y, const float *r, int64_t n, tx_op act, float lo,
                    float hi);

/* stmt for each int64_t i < w, in chunks of 8: gcc -O2 vectorizes loops of a
 * fixed count only. */
#define TX_CPU_EACH(w, stmt)                                                                       \
    do {                                                                                           \
        int64_t i0_ = 0;                                                                           \
        for (; i0_ + 8 <= (w); i0_ += 8)                                                           \
            for (int k_ = 0; k_ < 8; k_++) {                                                       \
                int64_t i = i0_ + k_;                                                              \
                stmt;                                                                              \
            }                                                                                      \
        for (int64_t i = i0_; i < (w); i++) {                                                      \
            stmt;                                                                                  \
        }                                                                                          \
    } while (0)

/* exp(x) for x <= 0 (softmax's and log-sum-exp's x - max) or NaN: Cephes'
 * expf polynomial after rounding x·log2(e) to n (within 2 ulp of expf).
 * Below -87.33 (2^-126): 0; x > 0 is taken as 0. The range tests and
 * selects are integer masks on x's bits: gcc will not if-convert float
 * compares (they may trap), and the loops over this would not vectorize. */
static inline float tx_cpu_exp_nonpos(float x) {
    union fb {
        float f;
        uint32_t u;
    } in = {.f = x}, lim = {.f = -87.33f}, t, two_n, y;
    uint32_t nan = -(uint32_t)((in.u & 0x7fffffffu) > 0x7f800000u);
    uint32_t low = -(uint32_t)(in.u > lim.u); /* negative, below the limit */
    uint32_t pos = -(uint32_t)(in.u < 0x80000000u);
    t.u = in.u & ~pos;
    t.u = (lim.u & (low | nan)) | (t.u & ~(low | nan));
    float n = (t.f * 1.44269504f + 12582912.0f) - 12582912.0f; /* rint without SSE4.1 */
    float r = (t.f - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * r * r + r + 1.0f;
    two_n.u = (uint32_t)((int32_t)n + 127) << 23;
    y.f = e * two_n.f;
    y.u = (in.u & nan) | (y.u & ~(nan | low));
    return y.f;
}

/* exp(x) on 4 lanes for x <= 0 (softmax's x - max) or NaN, cheaper than
 * tx_cpu_exp_nonpos where it matters (wasm: 3.8x slower softmax than
 * XNNPACK's with that one): the rounding of x·log2(e) leaves 2^n's exponent
 * bits in place (a magic bias holding 127, shifted up: no float-to-int
 * conversion), a two-constant ln 2 reduction and a degree-5 polynomial
 * (XNNPACK's rr2-p5 constants), and one float compare for the range: below
 * -87.336544 (2^-126) 0, a NaN passes through the arithmetic. Within 2 ulp
 * of expf on [-87.3, 0]. */
#define TX_EXP_MAGIC 12583039.0f /* 1.5 · 2^23 + 127 */
#define TX_EXP_POLY(t)                                                                             \
    ((((0x1.0F9F9Cp-7f * (t) + 0x1.573A1Ap-5f) * (t) + 0x1.555A80p-3f) * (t) + 0x1.FFFDC6p-2f) *   \
         (t) +                                                                                     \
     0x1.FFFFF6p-1f)
#ifndef TX_NO_SIMD
static inline tx_f32x4 tx_cpu_exp_nonpos_v4(tx_f32x4 x) {
    tx_f32x4 n = x * 1.44269504f + TX_EXP_MAGIC;
    tx_f32x4 s = (tx_f32x4)((tx_i32x4)n << 23);
    n -= TX_EXP_MAGIC;
    tx_f32x4 t = x - n * 0x1.62E400p-1f;
    t -= n * 0x1.7F7D1Cp-20f;
    tx_f32x4 p = TX_EXP_POLY(t);
    tx_f32x4 f = (t * s) * p + s;
    return (tx_f32x4)((tx_i32x4)f & ~(x < -87.336544f));
}
#else
static inline tx_f32x4 tx_cpu_exp_nonpos_v4(tx_f32x4 x) {
    for (int i = 0; i < 4; i++) {
        union {
            float f;
            uint32_t u;
        } n = {.f = x.v[i] * 1.44269504f + TX_EXP_MAGIC}, s;
        s.u = n.u << 23;
        float k = n.f - TX_EXP_MAGIC;
        float t = x.v[i] - k * 0x1.62E400p-1f;
        t -= k * 0x1.7F7D1Cp-20f;
        float f = (t * s.f) * TX_EXP_POLY(t) + s.f;
        x.v[i] = x.v[i] < -87.336544f ? 0.0f : f;
    }
    return x;
}
#endif

/* Sums of p[0..n) and of (p[i] - c)^2: float partial sums in several lanes
 * (vectorizable), added up in double every few thousand elements. */
double tx_cpu_sum(const float *p, int64_t n);
double tx_cpu_sqdev(const float *p, int64_t n, float c);
/* Σ exp(x[i] - m) over n floats, each term also stored to y[i] unless y is
 * NULL (softmax's numerators): tx_cpu_exp_nonpos_v4 on every element, float
 * lanes added up in double every few thousand elements. x[i] <= m (m: the
 * max), or NaN. */
double tx_cpu_exp_sum(const float *restrict x, float m, float *restrict y, int64_t n);

tx_status tx_cpu_unary(tx_ctx *ctx, const tx_unary_call *c);
tx_status tx_cpu_binary(tx_ctx *ctx, const tx_binary_call *c);
tx_status tx_cpu_reduce(tx_ctx *ctx, const tx_reduce_call *c);
tx_status tx_cpu_softmax(tx_ctx *ctx, const tx_softmax_call *c);
tx_status tx_cpu_norm(tx_ctx *ctx, const tx_norm_call *c);
tx_status tx_cpu_matmul(tx_ctx *ctx, const tx_matmul_call *c);
tx_status tx_cpu_conv(tx_ctx *ctx, const tx_conv_call *c);
tx_status tx_cpu_pool(tx_ctx *ctx, const tx_pool_call *c);

/* Sets g's epilogue activation for a fused act (NONE, RELU, RELU6, CLIP with
 * bounds lo, hi) and returns true; other ops: none, false (the caller applies
 * tx_cpu_unary_apply to the output). */
struct tx_gemm;
bool tx_cpu_gemm_act(tx_op op, float lo, float hi, struct tx_gemm *g);
tx_status tx_cpu_nary(tx_ctx *ctx, const tx_nary_call *c);
tx_status tx_cpu_optim(tx_ctx *ctx, const tx_optim_call *c);
tx_status tx_cpu_move(tx_ctx *ctx, const tx_move_call *c);
tx_status tx_cpu_resize(tx_ctx *ctx, const tx_resize_call *c);

#endif
