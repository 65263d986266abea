/* GFLOP/s of tx_cpu_sgemm on 1 and 2 threads (or the counts given as
 * arguments): square sizes, a matrix-vector product and a conv-like shape.
 * Each figure is the best of several timed repetitions (the machine may be
 * shared), each repetition running for at least ~50 ms. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu/gemm.h"
#include "cpu/threads.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* cold: B cycles through copies that together outgrow the caches (64 MB),
 * as a model's weights arrive at their layer: read from memory. */
static double bench(tx_threadpool *tp, int64_t M, int64_t N, int64_t K, bool trans_b, bool cold) {
    int64_t nb = cold ? (64 << 20) / (K * N * 4) + 1 : 1;
    float *A = malloc((size_t)(M * K) * sizeof *A), *C = malloc((size_t)(M * N) * sizeof *C);
    float *B = malloc((size_t)(nb * K * N) * sizeof *B);
    for (int64_t i = 0; i < M * K; i++)
        A[i] = (float)(i % 7) * 0.25f - 0.5f;
    for (int64_t i = 0; i < nb * K * N; i++)
        B[i] = (float)(i % 5) * 0.25f - 0.5f;
    tx_gemm g = {.M = M,
                 .N = N,
                 .K = K,
                 .A = A,
                 .lda = K,
                 .B = B,
                 .ldb = trans_b ? K : N,
                 .trans_b = trans_b,
                 .C = C,
                 .ldc = N};
    double flops = 2.0 * (double)M * (double)N * (double)K, best = 1e30;
    tx_cpu_sgemm(tp, &g); /* warm up */
    for (int rep = 0; rep < 7; rep++) {
        int iters = 0;
        double t0 = now(), t;
        do {
            g.B = B + iters % nb * K * N;
            tx_cpu_sgemm(tp, &g);
            iters++;
            t = now() - t0;
        } while (t < 0.05);
        if (t / iters < best)
            best = t / iters;
    }
    free(A);
    free(B);
    free(C);
    return flops / best * 1e-9;
}

int main(int argc, char **argv) {
    /* M, N, K, B transposed (an ONNX Gemm's transB, as in fully connected
     * layers), B cold (read from memory each call) */
    static const int64_t shapes[][5] = {
        {64, 64, 64, 0, 0},
        {256, 256, 256, 0, 0},
        {512, 512, 512, 0, 0},
        {1024, 1024, 1024, 0, 0},
        {1, 1024, 1024, 0, 0},
        {1, 1024, 1024, 1, 0},
        {3136, 64, 576, 0, 0},
        {1024, 1024, 1024, 1, 0},
        /* PP-OCRv4 rec's classifier (40 steps x 120 -> 6625 classes) */
        {40, 6625, 120, 0, 0},
        {40, 6625, 120, 0, 1}};
    int threads[8] = {1, 2}, nt = 2;
    if (argc > 1) {
        nt = 0;
        for (int i = 1; i < argc && nt < 8; i++)
            threads[nt++] = atoi(argv[i]);
    }
    printf("kernel %s\n", tx_cpu_sgemm_kernel_name());
    for (int t = 0; t < nt; t++) {
        tx_threadpool *tp = tx_threadpool_create(threads[t]);
        printf("threads %d\n", tx_threadpool_size(tp));
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t *d = shapes[s];
            printf("  M=%-5lld N=%-5lld K=%-5lld %s %s %8.1f GFLOP/s\n", (long long)d[0],
                   (long long)d[1], (long long)d[2], d[3] ? "B^T" : "   ", d[4] ? "cold" : "    ",
                   bench(tp, d[0], d[1], d[2], d[3] != 0, d[4] != 0));
            fflush(stdout);
        }
        tx_threadpool_destroy(tp);
    }
    return 0;
}
