/* POOL family on the CPU: each window's in-range rows and columns are found
 * once per output row and column (tables over wo), so the window loops run
 * without bounds tests; threads take whole planes. Max ignores NaN as the
 * reference does (v > m); averages sum in float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* ceil(a / d) for d > 0 and any a. */
static int64_t cdiv(int64_t a, int64_t d) {
    return a >= 0 ? (a + d - 1) / d : -((-a) / d);
}

/* The taps k in [*k0, *k1) of a k-tap window at output o whose positions
 * o·s - p + k·d lie in [lo, hi). */
static void taps(int64_t o, int s, int p, int d, int k, int64_t lo, int64_t hi, int *k0, int *k1) {
    int64_t start = o * s - p;
    int64_t a = cdiv(lo - start, d), b = cdiv(hi - start, d);
    a = a < 0 ? 0 : a;
    b = b > k ? k : b;
    *k0 = (int)a;
    *k1 = (int)(b < a ? a : b);
}

typedef struct pool_job {
    const tx_pool_call *c;
    int *kx; /* per output column: first tap, end tap, padded count */
} pool_job;

static void global_planes(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_pool_call *c = ((const pool_job *)arg)->c;
    int64_t hw = c->g.h * c->g.w;
    const float *x = tx_cpu_data(c->x);
    float *y = tx_cpu_data(c->y);
    for (int64_t pl = begin; pl < end; pl++) {
        const float *p = x + pl * hw;
        if (c->is_max) {
            float m[8];
            for (int k = 0; k < 8; k++)
                m[k] = -INFINITY;
            int64_t i = 0;
            for (; i + 8 <= hw; i += 8)
                for (int k = 0; k < 8; k++)
                    m[k] = p[i + k] > m[k] ? p[i + k] : m[k];
            float r = -INFINITY;
            for (; i < hw; i++)
                r = p[i] > r ? p[i] : r;
            for (int k = 0; k < 8; k++)
                r = m[k] > r ? m[k] : r;
            y[pl] = r;
        } else {
            y[pl] = (float)(tx_cpu_sum(p, hw) / (double)hw);
        }
    }
}

static void window_planes(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const pool_job *j = arg;
    const tx_pool_call *c = j->c;
    const tx_window *g = &c->g;
    const float *x = tx_cpu_data(c->x);
    float *y = tx_cpu_data(c->y);
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = x + pl * g->h * g->w;
        float *yp = y + pl * g->ho * g->wo;
        for (int64_t oy = 0; oy < g->ho; oy++) {
            int ky0, ky1, py0, py1;
            taps(oy, g->sh, g->pt, g->dh, g->kh, 0, g->h, &ky0, &ky1);
            taps(oy, g->sh, g->pt, g->dh, g->kh, -g->pt, g->h + g->pb, &py0, &py1);
            int64_t iy0 = oy * g->sh - g->pt;
            float *yr = yp + oy * g->wo;
            for (int64_t ox = 0; ox < g->wo; ox++) {
                const int *t = j->kx + 3 * ox;
                int kx0 = t[0], kx1 = t[1];
                int64_t ix0 = ox * g->sw - g->pl;
                if (c->is_max) {
                    float m = -INFINITY;
                    for (int ky = ky0; ky < ky1; ky++) {
                        const float *r = xp + (iy0 + (int64_t)ky * g->dh) * g->w;
                        for (int kx = kx0; kx < kx1; kx++) {
                            float v = r[ix0 + (int64_t)kx * g->dw];
                            m = v > m ? v : m;
                        }
                    }
                    yr[ox] = m;
                } else {
                    float s = 0;
                    for (int ky = ky0; ky < ky1; ky++) {
                        const float *r = xp + (iy0 + (int64_t)ky * g->dh) * g->w;
                        for (int kx = kx0; kx < kx1; kx++)
                            s += r[ix0 + (int64_t)kx * g->dw];
                    }
                    int64_t n = c->include_pad ? (int64_t)(py1 - py0) * t[2]
                                               : (int64_t)(ky1 - ky0) * (kx1 - kx0);
                    yr[ox] = s / (float)n;
                }
            }
        }
    }
}

/* 2x2 windows at stride 2, every one inside the input (no begin pads, floor
 * sizes: the common downsampling pool): four outputs at a time from two rows'
 * even and odd lanes, the taps in window_planes' order (so the same values,
 * NaN ignored by v > m). BlazeFace's three max pools in the browser (wasm
 * SIMD, one thread) took 12% of its run before. */
static bool is_2x2_s2(const tx_window *g) {
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->dh == 1 && g->dw == 1 &&
           g->pt == 0 && g->pl == 0 && 2 * g->ho <= g->h && 2 * g->wo <= g->w;
}

static void pool2x2_planes(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_pool_call *c = ((const pool_job *)arg)->c;
    const tx_window *g = &c->g;
    const float *x = tx_cpu_data(c->x);
    float *y = tx_cpu_data(c->y);
    bool is_max = c->is_max;
    for (int64_t pl = begin; pl < end; pl++) {
        for (int64_t oy = 0; oy < g->ho; oy++) {
            const float *r0 = x + (pl * g->h + 2 * oy) * g->w, *r1 = r0 + g->w;
            float *yr = y + (pl * g->ho + oy) * g->wo;
            int64_t ox = 0;
#ifndef TX_NO_SIMD
            for (; ox + 4 <= g->wo; ox += 4) {
                tx_f32x4 a = tx_v4_load(r0 + 2 * ox), b = tx_v4_load(r0 + 2 * ox + 4);
                tx_f32x4 d = tx_v4_load(r1 + 2 * ox), e = tx_v4_load(r1 + 2 * ox + 4);
                tx_f32x4 t[4] = {tx_v4_even(a, b), tx_v4_odd(a, b), tx_v4_even(d, e),
                                 tx_v4_odd(d, e)};
                tx_f32x4 m = tx_v4_set1(is_max ? -INFINITY : 0.0f);
                for (int k = 0; k < 4; k++)
                    m = is_max ? tx_v4_max(t[k], m) : tx_v4_add(m, t[k]);
                tx_v4_store(yr + ox, is_max ? m : tx_v4_mul(m, tx_v4_set1(0.25f)));
            }
#endif
            for (; ox < g->wo; ox++) {
                const float t[4] = {r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
                float m = is_max ? -INFINITY : 0.0f;
                for (int k = 0; k < 4; k++)
                    m = is_max ? (t[k] > m ? t[k] : m) : m + t[k];
                yr[ox] = is_max ? m : m / 4.0f;
            }
        }
    }
}

/* A tiled max pool's gradient (tx_pool_call's gy, gg): per window, its ties
 * to the max, then dx over its cells; cells no whole window covers get 0. */
static void grad_planes(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_pool_call *c = ((const pool_job *)arg)->c;
    const tx_window *g = &c->g;
    const float *x = tx_cpu_data(c->x), *ym = tx_cpu_data(c->gy), *gg = tx_cpu_data(c->gg);
    float *dx = tx_cpu_data(c->y);
    int64_t hw = g->h * g->w, ohw = g->ho * g->wo;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *xp = x + pl * hw;
        float *dp = dx + pl * hw;
        memset(dp, 0, (size_t)hw * sizeof *dp);
        for (int64_t oy = 0; oy < g->ho; oy++)
            for (int64_t ox = 0; ox < g->wo; ox++) {
                int64_t o = pl * ohw + oy * g->wo + ox, base = oy * g->kh * g->w + ox * g->kw;
                float m = ym[o];
                int ties = 0;
                for (int ky = 0; ky < g->kh; ky++)
                    for (int kx = 0; kx < g->kw; kx++)
                        ties += xp[base + ky * g->w + kx] == m;
                /* (x == y) * (g / ties), as the ops it replaces: 0 * share is NaN
                 * where share is not finite (a NaN max has no ties) */
                float share = gg[o] / (float)ties;
                float other = isfinite(share) ? 0.0f : NAN;
                for (int ky = 0; ky < g->kh; ky++)
                    for (int kx = 0; kx < g->kw; kx++) {
                        int64_t i = base + ky * g->w + kx;
                        dp[i] = xp[i] == m ? share : other;
                    }
            }
    }
}

tx_status tx_cpu_pool(tx_ctx *ctx, const tx_pool_call *c) {
    const tx_window *g = &c->g;
    int64_t planes = g->n * g->c;
    pool_job j = {.c = c};
    if (c->gy) {
        tx_cpu_for(ctx, planes, 1 + 16384 / (g->h * g->w + 1), grad_planes, &j);
        return TX_STATUS_OK;
    }
    if (c->global) {
        tx_cpu_for(ctx, planes, 1 + 16384 / (g->h * g->w + 1), global_planes, &j);
        return TX_STATUS_OK;
    }
    if (is_2x2_s2(g)) { /* x / 4 and x * 0.25 are the same float */
        tx_cpu_for(ctx, planes, 1 + 32768 / (g->ho * g->wo * 4 + 1), pool2x2_planes, &j);
        return TX_STATUS_OK;
    }
    j.kx = malloc((size_t)g->wo * 3 * sizeof(int));
    if (!j.kx)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", tx_op_name(c->op));
    for (int64_t ox = 0; ox < g->wo; ox++) {
        int p0, p1;
        taps(ox, g->sw, g->pl, g->dw, g->kw, 0, g->w, &j.kx[3 * ox], &j.kx[3 * ox + 1]);
        taps(ox, g->sw, g->pl, g->dw, g->kw, -g->pl, g->w + g->pr, &p0, &p1);
        j.kx[3 * ox + 2] = p1 - p0;
    }
    int64_t per = g->ho * g->wo * (int64_t)g->kh * g->kw;
    tx_cpu_for(ctx, planes, 1 + 32768 / (per + 1), window_planes, &j);
    free(j.kx);
    return TX_STATUS_OK;
}
