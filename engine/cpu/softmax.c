/* SOFTMAX family on the CPU: x as [A, R, B]. A contiguous row (B == 1) is
 * one pass for the max, one writing exp(x - max) while summing it, one
 * scaling; otherwise a tile of adjacent b's is walked row by row of R, the
 * same three passes elementwise across the tile. Semantics as
 * engine/ref/ref_norm.c: a NaN in a row makes the row NaN. */
#include <math.h>

#include "cpu.h"

#define TILE 256

/* y[i] = exp(x[i] - m[i]), 4 lanes at a time; the last few through a padded
 * block, so that every element takes the same function. */
static void exp_row(const float *restrict x, const float *restrict m, float *restrict y,
                    int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        tx_v4_store(y + i, tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(x + i), tx_v4_load(m + i))));
    if (i < n) {
        float xb[4] = {0, 0, 0, 0}, mb[4] = {0, 0, 0, 0}, yb[4];
        for (int64_t k = i; k < n; k++) {
            xb[k - i] = x[k];
            mb[k - i] = m[k];
        }
        tx_v4_store(yb, tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(xb), tx_v4_load(mb))));
        for (int64_t k = i; k < n; k++)
            y[k] = yb[k - i];
    }
}

/* Rows [begin, end) of a [A·R] view (B == 1). */
static void rows_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_softmax_call *c = arg;
    const float *xd = tx_cpu_data(c->x);
    float *yd = tx_cpu_data(c->y);
    int64_t R = c->R;
    bool log_ = c->op == TX_OP_LOG_SOFTMAX;
    for (int64_t a = begin; a < end; a++) {
        const float *restrict x = xd + a * R;
        float *restrict y = yd + a * R;
        /* the max in vector lanes; a NaN need not be tracked here: exp(NaN -
         * m) is NaN, so the sum, and through it the whole row, comes out NaN */
        tx_f32x4 l0 = tx_v4_set1(-INFINITY), l1 = l0;
        int64_t i = 0;
        for (; i + 8 <= R; i += 8) {
            l0 = tx_v4_max(tx_v4_load(x + i), l0);
            l1 = tx_v4_max(tx_v4_load(x + i + 4), l1);
        }
        float lb[8];
        tx_v4_store(lb, l0);
        tx_v4_store(lb + 4, l1);
        float m = -INFINITY;
        for (int k = 0; k < 8; k++)
            m = lb[k] > m ? lb[k] : m;
        for (; i < R; i++)
            m = x[i] > m ? x[i] : m;
        /* exp(x - m) into y and summed in one pass; then scale, or y = x - m - log(sum) */
        double s = tx_cpu_exp_sum(x, m, y, R);
        if (log_) {
            /* (x - m) - log(s), as the GPU: m + log(s) rounded to float first
             * loses log(s) beside a large m ([-1e30, -1e30] gave 0, not -log 2) */
            float ls = (float)log(s);
            TX_CPU_EACH(R, y[i] = (x[i] - m) - ls);
        } else {
            float inv = (float)(1.0 / s);
            TX_CPU_EACH(R, y[i] *= inv);
        }
    }
}

/* Tiles [begin, end) of up to TILE adjacent b's of one a. */
static void tiles_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_softmax_call *c = arg;
    const float *xd = tx_cpu_data(c->x);
    float *yd = tx_cpu_data(c->y);
    int64_t R = c->R, B = c->B, per = (B + TILE - 1) / TILE;
    bool log_ = c->op == TX_OP_LOG_SOFTMAX;
    float m[TILE];
    double s[TILE];
    for (int64_t t = begin; t < end; t++) {
        int64_t a = t / per, b0 = (t % per) * TILE;
        int64_t w = B - b0 < TILE ? B - b0 : TILE;
        const float *restrict x = xd + a * R * B + b0;
        float *restrict y = yd + a * R * B + b0;
        TX_CPU_EACH(w, m[i] = -INFINITY; s[i] = 0);
        for (int64_t r = 0; r < R; r++) {
            const float *xr = x + r * B;
            TX_CPU_EACH(w, m[i] = (xr[i] > m[i] || xr[i] != xr[i]) ? xr[i] : m[i]);
        }
        /* exp(x - m) into y, summed in float per row, rows added in double */
        for (int64_t r = 0; r < R; r++) {
            const float *restrict xr = x + r * B;
            float *restrict yr = y + r * B;
            exp_row(xr, m, yr, w);
            TX_CPU_EACH(w, s[i] += yr[i]);
        }
        if (log_) {
            float ls[TILE];
            for (int64_t i = 0; i < w; i++)
                ls[i] = (float)log(s[i]);
            for (int64_t r = 0; r < R; r++) {
                const float *restrict xr = x + r * B;
                float *restrict yr = y + r * B;
                TX_CPU_EACH(w, yr[i] = (xr[i] - m[i]) - ls[i]);
            }
        } else {
            for (int64_t i = 0; i < w; i++)
                m[i] = (float)(1.0 / s[i]);
            for (int64_t r = 0; r < R; r++) {
                float *yr = y + r * B;
                TX_CPU_EACH(w, yr[i] *= m[i]);
            }
        }
    }
}

tx_status tx_cpu_softmax(tx_ctx *ctx, const tx_softmax_call *c) {
    if (c->B == 1) {
        int64_t grain = 16384 / c->R;
        tx_cpu_for(ctx, c->A, grain > 0 ? grain : 1, rows_range, (void *)c);
    } else {
        int64_t per = (c->B + TILE - 1) / TILE, grain = 16384 / (c->R * TILE);
        tx_cpu_for(ctx, c->A * per, grain > 0 ? grain : 1, tiles_range, (void *)c);
    }
    return TX_STATUS_OK;
}
