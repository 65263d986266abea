/* The benchmark case table, shared by the desktop runner (`texel bench`) and
 * the browser runner (the same C compiled to wasm exports it as JSON, and the
 * page runs TF.js on the identical shapes by case name). */
#ifndef TX_BENCH_CASES_H
#define TX_BENCH_CASES_H

#include "ref/ref.h"
#include "texel.h"

#define TX_BENCH_MAX_INPUTS 12

typedef struct tx_bench_case {
    const char *name; /* stable id, e.g. "matmul_1024"; the TF.js side keys on it */
    const char *what; /* human description */
    double flops;     /* per call, for GFLOP/s (0 where meaningless) */
    int n_inputs;
    int rank[TX_BENCH_MAX_INPUTS];
    int64_t shape[TX_BENCH_MAX_INPUTS][TX_MAX_RANK];
    /* Runs the case on the GPU: inputs → one output (intermediates freed). */
    tx_status (*run)(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out);
    /* The same on the CPU through engine/ref (the baseline); 0 on success. */
    int (*ref)(const tx_ref_tensor *in, tx_ref_tensor *out);
    bool smoke; /* small enough for CI's runner check */
} tx_bench_case;

extern const tx_bench_case tx_bench_cases[];
extern const int tx_bench_case_count;

/* Seeded inputs in [-1, 1]. */
void tx_bench_fill(float *v, int64_t n, uint64_t seed);

#endif
