/* SOFTMAX family on the CPU: x as [A, R, B]. A contiguous row (B == 1) is
 * one pass for the max, one writing exp(x - max) while summing it, one
 * scaling; otherwise a tile of adjacent b's is walked row by row of R, the
 * same three passes elementwise across the tile. Semantics as
 * engine/ref/ref_norm.c: a NaN in a row makes the row NaN. */
#include <math.h>

#include "cpu.h"

#define TILE 256

typedef struct softmax_job {
    const tx_softmax_call *c;
    const float *x;
    float *y;
} softmax_job;

/* Rows [begin, end) of a [A·R] view (B == 1). */
static void rows_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const softmax_job *j = arg;
    int64_t R = j->c->R;
    bool log_ = j->c->op == TX_OP_LOG_SOFTMAX;
    for (int64_t a = begin; a < end; a++) {
        const float *x = j->x + a * R;
        float *y = j->y + a * R;
        float l[8];
        int nan = 0;
        for (int k = 0; k < 8; k++)
            l[k] = -INFINITY;
        int64_t i = 0;
        for (; i + 8 <= R; i += 8)
            for (int k = 0; k < 8; k++) {
                l[k] = x[i + k] > l[k] ? x[i + k] : l[k];
                nan |= x[i + k] != x[i + k];
            }
        for (; i < R; i++) {
            l[0] = x[i] > l[0] ? x[i] : l[0];
            nan |= x[i] != x[i];
        }
        float m = l[0];
        for (int k = 1; k < 8; k++)
            m = l[k] > m ? l[k] : m;
        if (nan)
            m = NAN;
        double s = 0;
        if (log_) {
            for (i = 0; i < R; i++)
                s += expf(x[i] - m);
            float off = (float)((double)m + log(s));
            for (i = 0; i < R; i++)
                y[i] = x[i] - off;
        } else {
            for (i = 0; i < R; i++) {
                float e = expf(x[i] - m);
                y[i] = e;
                s += e;
            }
            float inv = (float)(1.0 / s);
            for (i = 0; i < R; i++)
                y[i] *= inv;
        }
    }
}

/* Tiles [begin, end) of up to TILE adjacent b's of one a. */
static void tiles_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const softmax_job *j = arg;
    int64_t R = j->c->R, B = j->c->B, per = (B + TILE - 1) / TILE;
    bool log_ = j->c->op == TX_OP_LOG_SOFTMAX;
    float m[TILE];
    double s[TILE];
    for (int64_t t = begin; t < end; t++) {
        int64_t a = t / per, b0 = (t % per) * TILE;
        int64_t w = B - b0 < TILE ? B - b0 : TILE;
        const float *x = j->x + a * R * B + b0;
        float *y = j->y + a * R * B + b0;
        for (int64_t i = 0; i < w; i++) {
            m[i] = -INFINITY;
            s[i] = 0;
        }
        for (int64_t r = 0; r < R; r++)
            for (int64_t i = 0; i < w; i++) {
                float v = x[r * B + i];
                m[i] = (v > m[i] || v != v) ? v : m[i];
            }
        for (int64_t r = 0; r < R; r++)
            for (int64_t i = 0; i < w; i++) {
                float e = expf(x[r * B + i] - m[i]);
                if (!log_)
                    y[r * B + i] = e;
                s[i] += e;
            }
        if (log_) {
            for (int64_t i = 0; i < w; i++)
                m[i] = (float)((double)m[i] + log(s[i]));
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < w; i++)
                    y[r * B + i] = x[r * B + i] - m[i];
        } else {
            for (int64_t i = 0; i < w; i++)
                m[i] = (float)(1.0 / s[i]);
            for (int64_t r = 0; r < R; r++)
                for (int64_t i = 0; i < w; i++)
                    y[r * B + i] *= m[i];
        }
    }
}

tx_status tx_cpu_softmax(tx_ctx *ctx, const tx_softmax_call *c) {
    softmax_job j = {c, tx_cpu_data(c->x), tx_cpu_data(c->y)};
    if (c->B == 1) {
        int64_t grain = 16384 / c->R;
        tx_cpu_for(ctx, c->A, grain > 0 ? grain : 1, rows_range, &j);
    } else {
        int64_t per = (c->B + TILE - 1) / TILE, grain = 16384 / (c->R * TILE);
        tx_cpu_for(ctx, c->A * per, grain > 0 ? grain : 1, tiles_range, &j);
    }
    return TX_STATUS_OK;
}
