/* RESIZE family on the CPU: each resampled dim's taps (input offsets and
 * weights) are computed once per output coordinate into a table; the
 * output is then walked row by row of its innermost dim, the outer dims'
 * taps combined once per row. Coordinates in float32 in the order
 * glsl-templates/resize.glsl uses, so nearest breaks ties as the GPU does. */
#include <math.h>
#include <string.h>

#include "cpu.h"

/* Most tap combinations of a row's outer dims: linear 2^5, cubic 4^3. */
#define MAX_COMBOS 64

/* The input coordinate of output o (resize.glsl's tx_rz_coord). */
static float coord_of(const tx_resize_call *c, const tx_resize_dim *e, int64_t o) {
    float fo = (float)o;
    switch (c->coord) {
    case TX_RESIZE_HALF_PIXEL: return (fo + 0.5f) / e->sc - 0.5f;
    case TX_RESIZE_ASYMMETRIC: return fo / e->sc;
    case TX_RESIZE_ALIGN_CORNERS:
        return e->len == 1.0f ? 0.0f : fo * (float)(e->in - 1) / (e->len - 1.0f);
    case TX_RESIZE_PYTORCH_HALF_PIXEL: return e->len == 1.0f ? -0.5f : (fo + 0.5f) / e->sc - 0.5f;
    default: return (fo + 0.5f) / e->sc;
    }
}

/* f clamped to [0, in - 1] as an index (NaN: 0). */
static int64_t clamp_index(float f, int64_t in) {
    if (!(f > 0.0f))
        return 0;
    return f >= (float)(in - 1) ? in - 1 : (int64_t)f;
}

/* Dim e's taps for every output coordinate: T offsets (index * st) and
 * weights per coordinate. */
static void taps_of(const tx_resize_call *c, const tx_resize_dim *e, int T, int64_t *off,
                    float *w) {
    for (int64_t o = 0; o < e->od; o++) {
        float x = coord_of(c, e, o);
        int64_t *to = off + o * T;
        float *tw = w + o * T;
        if (T == 1) {
            float n;
            switch (c->nearest) {
            case TX_RESIZE_ROUND_PREFER_FLOOR: n = ceilf(x - 0.5f); break;
            case TX_RESIZE_ROUND_PREFER_CEIL: n = floorf(x + 0.5f); break;
            case TX_RESIZE_FLOOR: n = floorf(x); break;
            default: n = ceilf(x); break;
            }
            to[0] = clamp_index(n, e->in) * e->st;
            tw[0] = 1.0f;
        } else if (T == 2) {
            x = x < 0.0f ? 0.0f : (x > (float)(e->in - 1) ? (float)(e->in - 1) : x);
            int64_t x0 = (int64_t)x;
            float r = x - (float)x0;
            to[0] = x0 * e->st;
            to[1] = (x0 + 1 < e->in ? x0 + 1 : e->in - 1) * e->st;
            tw[0] = 1.0f - r;
            tw[1] = r;
        } else {
            float f = floorf(x), r = x - f, a = c->cubic_a;
            float q = 1.0f - r, r1 = r + 1.0f, q1 = q + 1.0f;
            tw[0] = ((a * r1 - 5.0f * a) * r1 + 8.0f * a) * r1 - 4.0f * a;
            tw[1] = ((a + 2.0f) * r - (a + 3.0f)) * r * r + 1.0f;
            tw[2] = ((a + 2.0f) * q - (a + 3.0f)) * q * q + 1.0f;
            tw[3] = ((a * q1 - 5.0f * a) * q1 + 8.0f * a) * q1 - 4.0f * a;
            float sum = 0.0f;
            for (int t = 0; t < 4; t++) {
                float p = f + (float)(t - 1);
                if (c->exclude_outside && (p < 0.0f || p >= (float)e->in))
                    tw[t] = 0.0f;
                sum += tw[t];
                to[t] = clamp_index(p, e->in) * e->st;
            }
            if (c->exclude_outside)
                for (int t = 0; t < 4; t++)
                    tw[t] /= sum;
        }
    }
}

typedef struct resize_job {
    const tx_resize_call *c;
    int T;
    const int64_t *off[TX_MAX_RANK]; /* resampled dims' tap tables */
    const float *w[TX_MAX_RANK];
} resize_job;

static void resize_row(const resize_job *j, int64_t r, float *yr);

/* Rows begin..end of y, each plus its row of the residual (if any). */
static void resize_rows(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const resize_job *j = arg;
    const tx_resize_call *c = j->c;
    int64_t len = c->d[c->n - 1].od;
    float *y = tx_cpu_data(c->y);
    const float *rs = c->resid ? tx_cpu_data(c->resid) : NULL;
    for (int64_t r = begin; r < end; r++) {
        float *yr = y + r * len;
        resize_row(j, r, yr);
        if (rs)
            for (int64_t o = 0; o < len; o++)
                yr[o] += rs[r * len + o];
    }
}

/* Row r of y (the innermost dim's od elements) into yr. */
static void resize_row(const resize_job *j, int64_t r, float *yr) {
    const tx_resize_call *c = j->c;
    const tx_resize_dim *e = &c->d[c->n - 1];
    const float *x = tx_cpu_data(c->x);
    int T = j->T;
    int64_t len = e->od;
    /* the outer dims' tap combinations */
    int64_t coff[MAX_COMBOS] = {0};
    float cw[MAX_COMBOS] = {1.0f};
    int nc = 1;
    int64_t q = r;
    for (int k = c->n - 2; k >= 0; k--) {
        const tx_resize_dim *d = &c->d[k];
        int64_t o = q % d->od;
        q /= d->od;
        if (!d->resampled) {
            for (int i = 0; i < nc; i++)
                coff[i] += o * d->st;
            continue;
        }
        const int64_t *to = j->off[k] + o * T;
        const float *tw = j->w[k] + o * T;
        for (int t = T - 1; t >= 0; t--) /* t = 0 last: in place */
            for (int i = 0; i < nc; i++) {
                coff[t * nc + i] = coff[i] + to[t];
                cw[t * nc + i] = cw[i] * tw[t];
            }
        nc *= T;
    }
    if (!e->resampled) {
        if (T == 1 && e->st == 1) {
            memcpy(yr, x + coff[0], (size_t)len * sizeof(float));
            return;
        }
        for (int64_t o = 0; o < len; o++) {
            float acc = 0.0f;
            for (int i = 0; i < nc; i++)
                acc += cw[i] * x[coff[i] + o * e->st];
            yr[o] = acc; /* nearest: the weight is 1 */
        }
        return;
    }
    const int64_t *to = j->off[c->n - 1];
    const float *tw = j->w[c->n - 1];
    if (T == 1) {
        const float *xr = x + coff[0];
        for (int64_t o = 0; o < len; o++)
            yr[o] = xr[to[o]];
        return;
    }
    for (int64_t o = 0; o < len; o++) {
        float acc = 0.0f;
        for (int i = 0; i < nc; i++) {
            const float *xr = x + coff[i];
            float s = 0.0f;
            for (int t = 0; t < T; t++)
                s += tw[o * T + t] * xr[to[o * T + t]];
            acc += cw[i] * s;
        }
        yr[o] = acc;
    }
}

tx_status tx_cpu_resize(tx_ctx *ctx, const tx_resize_call *c) {
    resize_job j = {.c = c};
    j.T = c->mode == TX_RESIZE_NEAREST ? 1 : (c->mode == TX_RESIZE_LINEAR ? 2 : 4);
    int64_t total = 0;
    for (int k = 0; k < c->n; k++)
        if (c->d[k].resampled)
            total += c->d[k].od * j.T;
    int64_t *off = malloc((size_t)(total > 0 ? total : 1) * sizeof *off);
    float *w = malloc((size_t)(total > 0 ? total : 1) * sizeof *w);
    if (!off || !w) {
        free(off);
        free(w);
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "resize: out of host memory for taps");
    }
    int64_t at = 0;
    for (int k = 0; k < c->n; k++)
        if (c->d[k].resampled) {
            taps_of(c, &c->d[k], j.T, off + at, w + at);
            j.off[k] = off + at;
            j.w[k] = w + at;
            at += c->d[k].od * j.T;
        }
    int64_t len = c->d[c->n - 1].od;
    tx_cpu_for(ctx, c->y->numel / len, len >= 4096 ? 1 : 4096 / len, resize_rows, &j);
    free(off);
    free(w);
    return TX_STATUS_OK;
}
