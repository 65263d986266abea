/* NORM family on the CPU, one group (S contiguous elements) at a time:
 * instance_norm and layer_norm take the group's mean and then the mean
 * square deviation from it (two passes: no cancellation), in float lanes
 * added up in double; one more pass normalizes, scales and shifts.
 * batch_norm's statistics are inputs: one pass. */
#include <math.h>

#include "cpu.h"

typedef struct norm_job {
    const tx_norm_call *c;
    const float *x, *scale, *bias, *mean, *var;
    float *y;
} norm_job;

/* y = (x - mean) * rs * a + b with a, b of period ap, bp (1: one value). */
static void apply(const float *x, float *y, int64_t S, float mean, float rs, const float *a,
                  int64_t ap, const float *b, int64_t bp) {
    if (ap == 1 && bp == 1) {
        float k = rs * a[0], b0 = b ? b[0] : 0.0f;
        for (int64_t i = 0; i < S; i++)
            y[i] = (x[i] - mean) * k + b0;
        return;
    }
    /* both periods are products of trailing dims: the shorter divides the
     * longer, which divides S */
    int64_t P = ap > bp ? ap : bp;
    for (int64_t s0 = 0; s0 < S; s0 += P) {
        const float *xp = x + s0;
        float *yp = y + s0;
        if (ap == P && (bp == P || !b)) {
            for (int64_t i = 0; i < P; i++)
                yp[i] = (xp[i] - mean) * rs * a[i] + (b ? b[i] : 0.0f);
        } else {
            for (int64_t i = 0; i < P; i++)
                yp[i] = (xp[i] - mean) * rs * a[i % ap] + (b ? b[i % bp] : 0.0f);
        }
    }
}

static void groups_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const norm_job *j = arg;
    const tx_norm_call *c = j->c;
    int64_t S = c->S;
    bool ln = c->op == TX_OP_LAYER_NORM;
    for (int64_t g = begin; g < end; g++) {
        const float *x = j->x + g * S;
        float *y = j->y + g * S;
        int64_t ch = g % c->C;
        double mean, var;
        if (c->op == TX_OP_BATCH_NORM) {
            mean = j->mean[ch];
            var = j->var[ch];
        } else {
            mean = tx_cpu_sum(x, S) / (double)S;
            var = tx_cpu_sqdev(x, S, (float)mean) / (double)S;
        }
        float rs = (float)(1.0 / sqrt(var + (double)c->eps));
        if (ln)
            apply(x, y, S, (float)mean, rs, j->scale, c->ap, j->bias, c->bp);
        else
            apply(x, y, S, (float)mean, rs, j->scale + ch, 1, j->bias + ch, 1);
    }
}

tx_status tx_cpu_norm(tx_ctx *ctx, const tx_norm_call *c) {
    norm_job j = {c,
                  tx_cpu_data(c->x),
                  tx_cpu_data(c->scale),
                  c->bias ? tx_cpu_data(c->bias) : NULL,
                  c->mean ? tx_cpu_data(c->mean) : NULL,
                  c->var ? tx_cpu_data(c->var) : NULL,
                  tx_cpu_data(c->y)};
    int64_t grain = 16384 / c->S;
    tx_cpu_for(ctx, c->G, grain > 0 ? grain : 1, groups_range, &j);
    return TX_STATUS_OK;
}
