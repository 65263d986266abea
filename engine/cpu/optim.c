/* Fused optimizer steps on the CPU: one pass over each parameter (the
 * formulas are tx_optim_call's in engine/device.h). */
#include <math.h>

#include "cpu.h"

tx_status tx_cpu_optim(tx_ctx *ctx, const tx_optim_call *c) {
    (void)ctx;
    const float *k = c->coef, *p = c->p->st->host, *g = c->g->st->host;
    const float *s1 = c->s1 ? c->s1->st->host : NULL, *s2 = c->s2 ? c->s2->st->host : NULL;
    float *y = c->y->st->host, *o1 = c->s1_out ? c->s1_out->st->host : NULL;
    float *o2 = c->s2_out ? c->s2_out->st->host : NULL;
    int64_t n = c->y->numel;
    for (int64_t i = 0; i < n; i++) {
        float gi = g[i] + k[1] * p[i];
        if (c->kind == 0) {
            y[i] = p[i] - k[0] * gi;
        } else if (c->kind == 1) {
            float v = c->first ? gi : k[2] * s1[i] + gi;
            y[i] = p[i] - k[0] * (c->nesterov ? gi + k[2] * v : v);
            o1[i] = v;
        } else {
            float m = k[2] * s1[i] + (1.0f - k[2]) * gi;
            float v = k[3] * s2[i] + (1.0f - k[3]) * gi * gi;
            y[i] = k[7] * p[i] - k[0] * (m * k[5]) / (sqrtf(v * k[6]) + k[4]);
            o1[i] = m;
            o2[i] = v;
        }
    }
    return TX_STATUS_OK;
}
