#include "cases.h"

#include <stdlib.h>

void tx_bench_fill(float *v, int64_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

static tx_status run_matmul(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_matmul(ctx, in[0], in[1], NULL, out);
}
static int ref_matmul(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_matmul(in, 2, NULL, out);
}
static tx_status run_add(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_binary(ctx, TX_OP_ADD, in[0], in[1], out);
}
static int ref_add(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_add(in, 2, NULL, out);
}
static tx_status run_relu(tx_ctx *ctx, const tx_tensor *in, tx_tensor *out) {
    return tx_unary(ctx, TX_OP_RELU, in[0], out);
}
static int ref_relu(const tx_ref_tensor *in, tx_ref_tensor *out) {
    return tx_ref_relu(in, 1, NULL, out);
}

#define MATMUL(N, SMOKE)                                                                       \
    {.name = "matmul_" #N,                                                                     \
     .what = "matmul " #N "x" #N " x " #N "x" #N,                                              \
     .flops = 2.0 * N * N * N,                                                                 \
     .n_inputs = 2,                                                                            \
     .rank = {2, 2},                                                                           \
     .shape = {{N, N}, {N, N}},                                                                \
     .run = run_matmul,                                                                        \
     .ref = ref_matmul,                                                                        \
     .smoke = SMOKE}

const tx_bench_case tx_bench_cases[] = {
    MATMUL(128, true),
    MATMUL(256, false),
    MATMUL(512, false),
    MATMUL(1024, false),
    {.name = "add_1m",
     .what = "add, 1M elements (1024x1024 + 1024x1024)",
     .flops = 1048576,
     .n_inputs = 2,
     .rank = {2, 2},
     .shape = {{1024, 1024}, {1024, 1024}},
     .run = run_add,
     .ref = ref_add,
     .smoke = true},
    {.name = "relu_1m",
     .what = "relu, 1M elements",
     .flops = 1048576,
     .n_inputs = 1,
     .rank = {2},
     .shape = {{1024, 1024}},
     .run = run_relu,
     .ref = ref_relu},
};
const int tx_bench_case_count = (int)(sizeof tx_bench_cases / sizeof tx_bench_cases[0]);
