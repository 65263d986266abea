/* MATMUL family on the CPU: one tx_cpu_sgemm per batch, bias and relu /
 * relu6 / clip / hard-swish fused into its store, other activations applied over the output
 * afterwards. Many small batches run side by side (one thread each);
 * otherwise the batches run in turn on all threads. */
#include "cpu.h"
#include "gemm.h"

/* Below this many multiply-adds per batch, threads split batches, not one. */
#define TX_MATMUL_SMALL (1 << 18)

/* The gemm epilogue for a fused activation; false: apply it afterwards. */
bool tx_cpu_gemm_act(tx_op op, float lo, float hi, tx_gemm *g) {
    switch (op) {
    case TX_OP_NONE: g->act = TX_GEMM_ACT_NONE; return true;
    case TX_OP_RELU: g->act = TX_GEMM_ACT_RELU; return true;
    case TX_OP_RELU6:
        g->act = TX_GEMM_ACT_CLIP;
        g->act_lo = 0;
        g->act_hi = 6;
        return true;
    case TX_OP_CLIP:
        g->act = TX_GEMM_ACT_CLIP;
        g->act_lo = lo;
        g->act_hi = hi;
        return true;
    case TX_OP_HARD_SWISH: g->act = TX_GEMM_ACT_HARD_SWISH; return true;
    default: g->act = TX_GEMM_ACT_NONE; return false;
    }
}

typedef struct mm_job {
    const tx_matmul_call *c;
    tx_threadpool *tp;
} mm_job;

static void mm_batches(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const mm_job *j = arg;
    const tx_matmul_call *c = j->c;
    int64_t M = c->M, N = c->N, K = c->K;
    const float *A = tx_cpu_data(c->a), *B = tx_cpu_data(c->b);
    float *Y = tx_cpu_data(c->y);
    tx_gemm g = {.M = M,
                 .N = N,
                 .K = K,
                 .lda = c->ta ? M : K,
                 .trans_a = c->ta,
                 .ldb = c->tb ? K : N,
                 .trans_b = c->tb,
                 .ldc = N,
                 .bias = c->bias ? tx_cpu_data(c->bias) : NULL,
                 .bias_kind = c->bias ? TX_GEMM_BIAS_COL : TX_GEMM_BIAS_NONE};
    bool fused = tx_cpu_gemm_act(c->act, c->lo, c->hi, &g);
    for (int64_t b = begin; b < end; b++) {
        int64_t oa = 0, ob = 0, rem = b;
        for (int i = 3; i >= 0; i--) {
            int64_t idx = rem % c->bd[i];
            rem /= c->bd[i];
            oa += idx * c->sa[i];
            ob += idx * c->sb[i];
        }
        g.A = A + oa * M * K;
        g.B = B + ob * K * N;
        g.C = Y + b * M * N;
        tx_cpu_sgemm(j->tp, &g);
        if (!fused)
            tx_cpu_unary_apply(c->act, c->lo, c->hi, g.C, g.C, M * N);
    }
}

tx_status tx_cpu_matmul(tx_ctx *ctx, const tx_matmul_call *c) {
    if (c->resid) { /* the product and bias, then y = act(y + residual) in place */
        tx_matmul_call base = *c;
        base.act = TX_OP_NONE;
        base.resid = NULL;
        tx_status st = tx_cpu_matmul(ctx, &base);
        if (!st)
            tx_cpu_add_act(ctx, tx_cpu_data(c->y), tx_cpu_data(c->resid), c->y->numel, c->act,
                           c->lo, c->hi);
        return st;
    }
    mm_job j = {.c = c, .tp = tx_cpu_pool_of(ctx)};
    if (c->nbatch > 1 && c->M * c->N * c->K < TX_MATMUL_SMALL) {
        j.tp = NULL;
        tx_cpu_for(ctx, c->nbatch, 1, mm_batches, &j);
    } else {
        mm_batches(&j, 0, c->nbatch, 0);
    }
    return TX_STATUS_OK;
}
