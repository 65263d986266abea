/* The CPU device's compute core: tx_cpu_sgemm against tx_cpu_sgemm_ref over
 * sizes that hit every path (tiny loop, matrix-vector, packed blocks with edge
 * tiles, several K, M and N blocks), transposes, strides larger than a row,
 * every bias kind and activation, accumulation and NaN, B as a matrix and
 * through a pack_b function (conv's patches), on no pool and on a
 * 2-thread pool; and tx_parallel_for's coverage. Links only engine/cpu's core
 * (no GL). Ends with "N passed, N failed". */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/gemm.h"
#include "cpu/threads.h"

static int passed, failed;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}
static float next_f(void) { /* [-1, 1) */
    return (float)(next_u32() >> 8) / (float)(1 << 23) - 1.0f;
}
static int64_t next_in(int64_t lo, int64_t hi) {
    return lo + (int64_t)(next_u32() % (uint32_t)(hi - lo + 1));
}

typedef struct {
    int64_t M, N, K;
    bool ta, tb;
    int bias_kind, act;
    bool acc;
    int pad;
    bool nan;
    bool packed; /* B given by a pack_b function (tx_cpu_sgemm_packed_b) */
} gcase;

/* A pack_b function reading a plain B (as conv's reads its input planes). */
typedef struct {
    const float *B;
    int64_t ldb;
    bool tb;
} bsrc;

static void pack_from(const void *arg, int64_t p0, int64_t kc, int64_t j0, int64_t ncols, int nr,
                      float *dst) {
    const bsrc *s = arg;
    for (int64_t q = 0; q < ncols; q += nr, dst += nr * kc)
        for (int64_t p = 0; p < kc; p++)
            for (int l = 0; l < nr; l++) {
                int64_t j = j0 + q + l, k = p0 + p;
                dst[p * nr + l] = q + l >= ncols ? 0.0f
                                  : s->tb        ? s->B[j * s->ldb + k]
                                                 : s->B[k * s->ldb + j];
            }
}

static bool sgemm(tx_threadpool *tp, const tx_gemm *g) {
    if (!g->pack_b) {
        tx_cpu_sgemm(tp, g);
        return true;
    }
    return tx_cpu_sgemm_packed_b(tp, g);
}

static float *rand_buf(int64_t n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    for (int64_t i = 0; i < n; i++)
        p[i] = next_f();
    return p;
}

static void run_case(tx_threadpool *tp, const char *pool, gcase c) {
    int64_t lda = (c.ta ? c.M : c.K) + c.pad, ldb = (c.tb ? c.K : c.N) + c.pad, ldc = c.N + c.pad;
    int64_t arows = c.ta ? c.K : c.M, brows = c.tb ? c.N : c.K;
    float *A = rand_buf(arows * lda), *B = rand_buf(brows * ldb), *C = rand_buf(c.M * ldc);
    float *bias = rand_buf(c.M > c.N ? c.M : c.N);
    float *R = malloc((size_t)(c.M * ldc > 0 ? c.M * ldc : 1) * sizeof *R);
    if (c.nan && arows * lda > 0)
        A[0] = NAN;
    memcpy(R, C, (size_t)(c.M * ldc) * sizeof *R);
    float *S = malloc((size_t)(c.M * ldc > 0 ? c.M * ldc : 1) * sizeof *S);
    memcpy(S, C, (size_t)(c.M * ldc) * sizeof *S);
    tx_gemm g = {.M = c.M,
                 .N = c.N,
                 .K = c.K,
                 .A = A,
                 .lda = lda,
                 .trans_a = c.ta,
                 .B = B,
                 .ldb = ldb,
                 .trans_b = c.tb,
                 .C = C,
                 .ldc = ldc,
                 .bias = c.bias_kind ? bias : NULL,
                 .bias_kind = c.bias_kind,
                 .act = c.act,
                 .act_lo = -0.5f,
                 .act_hi = 0.7f,
                 .accumulate = c.acc};
    bsrc src = {B, ldb, c.tb};
    if (c.packed) {
        g.pack_b = pack_from;
        g.pack_b_arg = &src;
    }
    bool ran = sgemm(tp, &g);
    g.C = S;
    if (tp)
        ran = sgemm(NULL, &g) && ran; /* the same bits whatever the number of threads */
    g.C = R;
    g.pack_b = NULL;
    tx_cpu_sgemm_ref(&g);
    int64_t bad = 0, first = -1;
    double tol = 1e-6 * (double)(c.K + 4);
    for (int64_t i = 0; i < c.M * ldc; i++) {
        float x = C[i], r = R[i];
        bool ok = (isnan(x) && isnan(r)) || fabs((double)x - (double)r) <= tol * (1.0 + fabs(r));
        if (!ok && bad++ == 0)
            first = i;
    }
    bool same = !tp || memcmp(C, S, (size_t)(c.M * ldc) * sizeof *C) == 0;
    if (bad || !same || !ran) {
        failed++;
        printf("FAIL %s M=%lld N=%lld K=%lld ta=%d tb=%d bias=%d act=%d acc=%d pad=%d nan=%d "
               "packed=%d%s: %lld wrong, first at row %lld col %lld: %g vs ref %g%s\n",
               pool, (long long)c.M, (long long)c.N, (long long)c.K, c.ta, c.tb, c.bias_kind, c.act,
               c.acc, c.pad, c.nan, c.packed, ran ? "" : " (out of memory)", (long long)bad,
               (long long)(first / ldc), (long long)(first % ldc), bad ? (double)C[first] : 0.0,
               bad ? (double)R[first] : 0.0, same ? "" : "; differs from 1 thread");
    } else {
        passed++;
    }
    free(A);
    free(B);
    free(C);
    free(R);
    free(S);
    free(bias);
}

/* Every combination of the flags for one size. */
static void all_flags(tx_threadpool *tp, const char *pool, int64_t M, int64_t N, int64_t K) {
    for (int f = 0; f < 2 * 2 * 3 * 4 * 2 * 2; f++) {
        gcase c = {M,
                   N,
                   K,
                   f & 1,
                   (f >> 1) & 1,
                   (f >> 2) % 3,
                   (f / 12) % 4,
                   (f / 48) & 1,
                   (f / 96) & 1 ? 3 : 0,
                   false,
                   false};
        run_case(tp, pool, c);
    }
}

/* n random combinations of the flags for one size. */
static void some_flags(tx_threadpool *tp, const char *pool, int64_t M, int64_t N, int64_t K,
                       int n) {
    for (int i = 0; i < n; i++) {
        gcase c = {M,
                   N,
                   K,
                   next_u32() & 1,
                   next_u32() & 1,
                   (int)(next_u32() % 3),
                   (int)(next_u32() % 4),
                   next_u32() & 1,
                   (next_u32() & 1) ? (int)next_in(1, 17) : 0,
                   false,
                   false};
        c.packed = next_u32() & 1;
        run_case(tp, pool, c);
    }
}

static void gemm_tests(tx_threadpool *tp, const char *pool) {
    static const int64_t small[][3] = {
        {1, 1, 1},   {5, 7, 11},  {13, 17, 300}, {1, 1, 7}, {1, 64, 64}, {64, 1, 64}, {1, 300, 1},
        {37, 41, 1}, {6, 16, 64}, {7, 17, 65},   {0, 5, 5}, {5, 5, 0},   {12, 32, 5}, {2, 3, 4000}};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        all_flags(tp, pool, small[i][0], small[i][1], small[i][2]);
    static const int64_t big[][3] = {
        {1, 1000, 300},
        {1, 37, 5000},
        {300, 1, 400},
        {1000, 1, 37},
        {100, 100, 1},
        {200, 300, 700},
        {150, 4100, 20},
        {289, 33, 513},
        {64, 64, 64},
        {256, 256, 256},
        {145, 145, 257},
        {3, 2000, 300},
        {500, 24, 1000},
        {3136, 64, 576},
        {1, 1, 100000},
        /* few rows of A: B read in place at any depth (rec's classifier; K in
         * three blocks, a ragged last panel; M at the bound and past it) */
        {40, 6625, 120},
        {7, 1003, 777},
        {64, 200, 900},
        {65, 200, 900}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        some_flags(tp, pool, big[i][0], big[i][1], big[i][2], 6);
    for (int i = 0; i < 40; i++)
        some_flags(tp, pool, next_in(1, 160), next_in(1, 160), next_in(1, 600), 1);
    /* NaN in A: the rows (or columns) it reaches stay NaN through every act */
    for (int act = 0; act < 4; act++) {
        run_case(tp, pool, (gcase){40, 50, 60, false, false, 1, act, false, 0, true, false});
        run_case(tp, pool, (gcase){1, 50, 60, true, false, 0, act, true, 2, true, true});
    }
}

/* ---- tx_parallel_for -------------------------------------------------------- */

typedef struct {
    atomic_int *hits;
    atomic_int bad_thread, calls;
    int size;
    tx_threadpool *tp;
    int nested_ok;
} pf_arg;

static void pf_fn(void *p, int64_t b, int64_t e, int thread) {
    pf_arg *a = p;
    atomic_fetch_add(&a->calls, 1);
    if (thread < 0 || thread >= a->size)
        atomic_fetch_add(&a->bad_thread, 1);
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add(&a->hits[i], 1);
}

static void nested_inner(void *p, int64_t b, int64_t e, int thread) {
    (void)thread;
    *(int64_t *)p += e - b;
}

static void nested_fn(void *p, int64_t b, int64_t e, int thread) {
    (void)b;
    (void)e;
    (void)thread;
    pf_arg *a = p;
    int64_t n = 0;
    tx_parallel_for(a->tp, 1000, 1, nested_inner, &n); /* the pool is busy: runs inline */
    if (n == 1000)
        atomic_fetch_add(&a->calls, 1);
}

static void pool_tests(void) {
    const int sizes[] = {0, 1, 2, 3};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        tx_threadpool *tp = tx_threadpool_create(sizes[s]);
        int size = tx_threadpool_size(tp);
        bool ok = tp && size >= 1 && (sizes[s] <= 0 || size <= sizes[s]);
        const int64_t ns[] = {0, 1, 7, 1000, 100003};
        const int64_t grains[] = {1, 10, 1000};
        for (int rep = 0; rep < 50 && ok; rep++)
            for (size_t ni = 0; ni < 5; ni++)
                for (size_t gi = 0; gi < 3; gi++) {
                    int64_t n = ns[ni];
                    pf_arg a = {.hits = calloc((size_t)n + 1, sizeof(atomic_int)), .size = size};
                    tx_parallel_for(tp, n, grains[gi], pf_fn, &a);
                    for (int64_t i = 0; i < n; i++)
                        ok &= atomic_load(&a.hits[i]) == 1;
                    ok &= atomic_load(&a.bad_thread) == 0;
                    ok &= n == 0 || atomic_load(&a.calls) <= (n + grains[gi] - 1) / grains[gi];
                    free(a.hits);
                }
        pf_arg a = {.tp = tp};
        tx_parallel_for(tp, 4, 1, nested_fn, &a);
        ok &= atomic_load(&a.calls) >= 1;
        tx_threadpool_destroy(tp);
        if (ok)
            passed++;
        else {
            failed++;
            printf("FAIL parallel_for on a pool of %d (size %d)\n", sizes[s], size);
        }
    }
    tx_parallel_for(NULL, 3, 1, nested_inner, &(int64_t){0});
    tx_threadpool_destroy(NULL);
}

int main(void) {
    printf("kernel: %s\n", tx_cpu_sgemm_kernel_name());
    pool_tests();
    gemm_tests(NULL, "no pool");
    tx_threadpool *tp = tx_threadpool_create(2);
    gemm_tests(tp, "2 threads");
    tx_threadpool_destroy(tp);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
