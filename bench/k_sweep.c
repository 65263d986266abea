/* Measures the specialization threshold k on workloads shaped like real use:
 *   model:   one "inference" = 16 ops of different shapes and families (each
 *            signature once per inference), repeated 12 times;
 *   dynamic: 40 calls whose shapes mostly do not repeat (sequence lengths).
 * For each k in {0, 1, 2, 3, 5, never} a fresh context runs the workload and
 * prints the first-inference ms, the total ms and the steady-state ms per
 * inference, with the compile counters. Run with MESA_SHADER_CACHE_DISABLE=true
 * so no disk cache flatters a later run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glctx.h"
#include "texel.h"

typedef struct step {
    tx_op op;
    int64_t m, k, n; /* matmul: [m,k]x[k,n]; elementwise: [m,n] */
} step;

static const step k_model[] = {
    {TX_OP_MATMUL, 64, 128, 256}, {TX_OP_GELU, 64, 0, 256},     {TX_OP_MATMUL, 64, 256, 128},
    {TX_OP_ADD, 64, 0, 128},      {TX_OP_MATMUL, 64, 128, 384}, {TX_OP_SIGMOID, 64, 0, 384},
    {TX_OP_MATMUL, 64, 384, 128}, {TX_OP_MUL, 64, 0, 128},      {TX_OP_MATMUL, 128, 128, 128},
    {TX_OP_TANH, 128, 0, 128},    {TX_OP_MATMUL, 128, 128, 64}, {TX_OP_ADD, 128, 0, 64},
    {TX_OP_MATMUL, 32, 64, 512},  {TX_OP_RELU, 32, 0, 512},     {TX_OP_MATMUL, 32, 512, 16},
    {TX_OP_EXP, 32, 0, 16},
};

static tx_tensor filled(tx_ctx *ctx, int64_t r, int64_t c) {
    size_t n = (size_t)(r * c);
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
    tx_tensor t;
    tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {r, c}, .data = v}, &t);
    free(v);
    return t;
}

static double run_step(tx_ctx *ctx, const step *s) {
    double t0 = tx_host_ms();
    tx_tensor a, b = {0}, y;
    tx_status st;
    if (s->op == TX_OP_MATMUL) {
        a = filled(ctx, s->m, s->k);
        b = filled(ctx, s->k, s->n);
        st = tx_matmul(ctx, a, b, NULL, &y);
    } else if (tx_op_arity(s->op) == 2) {
        a = filled(ctx, s->m, s->n);
        b = filled(ctx, 1, s->n);
        st = tx_binary(ctx, s->op, a, b, &y);
    } else {
        a = filled(ctx, s->m, s->n);
        st = tx_unary(ctx, s->op, a, &y);
    }
    if (st) {
        fprintf(stderr, "k_sweep: %s\n", tx_last_error(ctx));
        exit(1);
    }
    float probe[4];
    tx_tensor_read(ctx, y, probe, sizeof probe < 4 ? 4 : 4); /* wait for the draw */
    tx_tensor_destroy(ctx, a);
    if (b.id)
        tx_tensor_destroy(ctx, b);
    tx_tensor_destroy(ctx, y);
    return tx_host_ms() - t0;
}

int main(void) {
    const int ks[] = {TX_SPECIALIZE_ALWAYS, 1, 2, 3, 5, TX_SPECIALIZE_NEVER};
    const char *kname[] = {"0", "1", "2", "3", "5", "never"};
    printf("| k | model: first inference ms | model: 12 inferences ms | model: steady ms | "
           "model compiles (gen+spec) | dynamic: 40 calls ms | dynamic compiles |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (int ki = 0; ki < 6; ki++) {
        tx_host *h;
        tx_ctx *ctx;
        if (tx_host_open(&(tx_ctx_desc){.specialize_after = ks[ki]}, &h, &ctx))
            return 77;
        double first = 0, total = 0, last = 0;
        for (int it = 0; it < 12; it++) {
            double t = 0;
            for (size_t i = 0; i < sizeof k_model / sizeof k_model[0]; i++)
                t += run_step(ctx, &k_model[i]);
            if (it == 0)
                first = t;
            total += t;
            last = t;
        }
        tx_stats s1;
        tx_ctx_stats(ctx, &s1);
        tx_host_close(h, ctx);

        if (tx_host_open(&(tx_ctx_desc){.specialize_after = ks[ki]}, &h, &ctx))
            return 77;
        double dyn = 0;
        unsigned seed = 12345;
        for (int i = 0; i < 40; i++) {
            seed = seed * 1103515245u + 12345u;
            int64_t len = 16 + (int64_t)((seed >> 8) % 24) * 8; /* 24 lengths: some repeat */
            step s = {i % 2 ? TX_OP_MATMUL : TX_OP_GELU, len, 64, 64};
            dyn += run_step(ctx, &s);
        }
        tx_stats s2;
        tx_ctx_stats(ctx, &s2);
        tx_host_close(h, ctx);
        printf("| %s | %.1f | %.1f | %.2f | %llu+%llu | %.1f | %llu+%llu |\n", kname[ki], first,
               total, last, (unsigned long long)s1.generic_compiles,
               (unsigned long long)s1.specialized_compiles, dyn,
               (unsigned long long)s2.generic_compiles,
               (unsigned long long)s2.specialized_compiles);
        fflush(stdout);
    }
    return 0;
}
