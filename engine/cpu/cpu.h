/* The CPU device's private interface: its kernels (engine/cpu/<family>.c)
 * and the helpers they share. Kernels read and write tx_storage.host: float
 * values, int32 tensors as whole floats, as on the GPU. */
#ifndef TX_CPU_H
#define TX_CPU_H

#include "../device.h"

/* The host values of a slot. */
static inline float *tx_cpu_data(const tx_slot *s) {
    return s->st->host;
}

/* Runs fn over [0, n) in chunks of at least `grain` on the context's CPU
 * threads (the caller's thread works too); returns when all are done. */
typedef void (*tx_cpu_range_fn)(void *arg, int64_t begin, int64_t end, int thread);
void tx_cpu_for(tx_ctx *ctx, int64_t n, int64_t grain, tx_cpu_range_fn fn, void *arg);
/* The number of threads tx_cpu_for may use (for per-thread scratch). */
int tx_cpu_threads(tx_ctx *ctx);

/* y[i] = f(x[i]) for a UNARY / CLIP / ACT op (lo, hi: clip bounds or alpha,
 * beta); x and y may be the same array. Also the fused activation of matmul
 * and conv. */
void tx_cpu_unary_apply(tx_op op, float lo, float hi, const float *x, float *y, int64_t n);

/* Sums of p[0..n) and of (p[i] - c)^2: float partial sums in several lanes
 * (vectorizable), added up in double every few thousand elements. */
double tx_cpu_sum(const float *p, int64_t n);
double tx_cpu_sqdev(const float *p, int64_t n, float c);

tx_status tx_cpu_unary(tx_ctx *ctx, const tx_unary_call *c);
tx_status tx_cpu_binary(tx_ctx *ctx, const tx_binary_call *c);
tx_status tx_cpu_reduce(tx_ctx *ctx, const tx_reduce_call *c);
tx_status tx_cpu_softmax(tx_ctx *ctx, const tx_softmax_call *c);
tx_status tx_cpu_norm(tx_ctx *ctx, const tx_norm_call *c);

#endif
