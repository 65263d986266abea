/* Single-precision GEMM for the CPU device, with the epilogue that matmul and
 * conv (im2col) need fused into the store: C = [C +] op(A)·op(B) [+ bias],
 * then an activation. See gemm.c for the method and the dispatch. */
#ifndef TX_CPU_GEMM_H
#define TX_CPU_GEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "threads.h"

enum {
    TX_GEMM_BIAS_NONE = 0,
    TX_GEMM_BIAS_COL = 1, /* bias[j] added to column j (N values) */
    TX_GEMM_BIAS_ROW = 2, /* bias[i] added to row i (M values) */
};

enum {
    TX_GEMM_ACT_NONE = 0,
    TX_GEMM_ACT_RELU = 1,       /* v < 0 ? 0 : v */
    TX_GEMM_ACT_CLIP = 2,       /* v < act_lo ? act_lo : v > act_hi ? act_hi : v (relu6: 0, 6) */
    TX_GEMM_ACT_HARD_SWISH = 3, /* v · clamp(v / 6 + 1/2, 0, 1) (MobileNetV3's) */
};

/* B given by a function instead of a matrix (conv's patches, which are never
 * written out as one): it writes depth [p0, p0 + kc) × columns [j0, j0 +
 * ncols) of B as panels nr columns wide, panel q (columns j0 + q·nr…) at
 * dst + q·nr·kc holding B(p0 + p, j0 + q·nr + l) at [p·nr + l], columns past
 * ncols zero. It is called from several threads at once on disjoint panels. */
typedef void (*tx_gemm_pack_fn)(const void *arg, int64_t p0, int64_t kc, int64_t j0, int64_t ncols,
                                int nr, float *dst);

typedef struct tx_gemm {
    int64_t M, N, K;   /* C is M×N; the inner dimension is K (any may be 0) */
    const float *A;    /* M×K row-major, or K×M when trans_a */
    int64_t lda;       /* A's row stride in floats (>= K, or >= M when trans_a) */
    bool trans_a;      /* A holds op(A) transposed: A(i,k) = A[k*lda + i] */
    const float *B;    /* K×N row-major, or N×K when trans_b */
    int64_t ldb;       /* B's row stride in floats (>= N, or >= K when trans_b) */
    bool trans_b;      /* B holds op(B) transposed: B(k,j) = B[j*ldb + k] */
    float *C;          /* M×N row-major output; must not overlap A, B or bias */
    int64_t ldc;       /* C's row stride in floats (>= N) */
    const float *bias; /* per bias_kind; may be NULL when bias_kind is 0 */
    int bias_kind;     /* TX_GEMM_BIAS_*: 0 none, 1 per column (N), 2 per row (M) */
    int act;           /* TX_GEMM_ACT_*: 0 none, 1 relu, 2 clip to [act_lo, act_hi], 3 hard-swish */
    float act_lo;      /* clip bounds (act 2 only); NaN in, NaN out for every act */
    float act_hi;      /* */
    bool accumulate;   /* C = act(C + A·B + bias) instead of act(A·B + bias) */
    tx_gemm_pack_fn pack_b; /* when set, B comes from it (B, ldb, trans_b unused) */
    const void *pack_b_arg; /* its first argument */
} tx_gemm;

/* g->C as above, on tp's threads (NULL: the calling thread only). Results do
 * not depend on the number of threads (each C element is summed in one fixed
 * K order for a given kernel), but may differ from tx_cpu_sgemm_ref by
 * rounding (fused multiply-adds, blocked sums). */
void tx_cpu_sgemm(tx_threadpool *tp, const tx_gemm *g);

/* tx_cpu_sgemm for a B given by pack_b, which only the blocked path can read:
 * false, with C unwritten, when its packing buffers cannot be allocated. */
bool tx_cpu_sgemm_packed_b(tx_threadpool *tp, const tx_gemm *g);

/* The same result by a plain triple loop in double precision: the oracle for
 * tests. */
void tx_cpu_sgemm_ref(const tx_gemm *g);

/* Which micro-kernel tx_cpu_sgemm uses on this CPU ("avx2-6x16", "v4-4x8",
 * "v4-6x8", "scalar-6x8"), for benchmarks and logs. */
const char *tx_cpu_sgemm_kernel_name(void);

/* The floats per vector of that kernel: 8 (AVX2), 4 (SSE2, wasm SIMD, NEON)
 * or 1 (scalar), for callers choosing between methods by its speed. */
int tx_cpu_sgemm_vector_width(void);

#endif
