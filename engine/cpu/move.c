/* MOVE family on the CPU: the output walked row by row of its innermost dim,
 * so contiguous rows (slice, split, concat, gather, the interior of a pad or
 * tile) are memcpy and broadcast rows fills; a transpose whose innermost
 * output dim is strided and whose next one is contiguous in x goes through
 * blocks that stay in cache. Semantics as glsl-templates/move.glsl. */
#include <string.h>

#include "cpu.h"

/* Elements per tx_cpu_for chunk, roughly. */
#define GRAIN_ELEMS 16384
/* The side of a transpose block. */
#define TILE        32

static int64_t grain_rows(int64_t row) {
    return row >= GRAIN_ELEMS ? 1 : GRAIN_ELEMS / (row > 0 ? row : 1);
}

static void fill(float *y, float v, int64_t n) {
    TX_CPU_EACH(n, y[i] = v);
}

/* Maps coordinate *c into [0, n) by the border rule; false: outside, the
 * constant fill (move.glsl's tx_border). */
static bool border(tx_move_border mode, int64_t *c, int64_t n) {
    int64_t v = *c;
    if (v >= 0 && v < n)
        return true;
    switch (mode) {
    case TX_MOVE_BORDER_REFLECT: { /* an even triangle wave of period 2(n - 1) */
        if (n == 1) {
            *c = 0;
            return true;
        }
        int64_t p = 2 * (n - 1);
        v = (v < 0 ? -v : v) % p;
        *c = v >= n ? p - v : v;
        return true;
    }
    case TX_MOVE_BORDER_EDGE: *c = v < 0 ? 0 : n - 1; return true;
    case TX_MOVE_BORDER_WRAP:
        v %= n;
        *c = v < 0 ? v + n : v;
        return true;
    default: return false;
    }
}

typedef struct move_job {
    const tx_move_call *c;
    const float *x;
    float *y;
    const int64_t *at; /* CONCAT: each input's first column in a row */
} move_job;

/* One row of a border dim d starting at x + src (coordinates before the
 * rule) into y. */
static void border_row(const tx_move_call *c, const tx_move_dim *d, const float *x, float *y) {
    int64_t od = d->od, in = d->in, st = d->st;
    if (d->mul == 1 && c->bmode == TX_MOVE_BORDER_WRAP && st == 1 && in > 0) {
        /* runs of the input row, wrapping */
        for (int64_t o = 0; o < od;) {
            int64_t k = o + d->off;
            border(c->bmode, &k, in);
            int64_t run = in - k < od - o ? in - k : od - o;
            memcpy(y + o, x + k, (size_t)run * sizeof(float));
            o += run;
        }
        return;
    }
    int64_t lo = 0, hi = 0; /* [lo, hi): inside the input */
    if (d->mul == 1) {
        lo = -d->off > 0 ? -d->off : 0;
        hi = in - d->off < od ? in - d->off : od;
        if (hi < lo)
            hi = lo;
    }
    for (int64_t o = 0; o < lo; o++) {
        int64_t k = o * d->mul + d->off;
        y[o] = border(c->bmode, &k, in) ? x[k * st] : c->value;
    }
    if (hi > lo) {
        const float *s = x + (lo + d->off) * st;
        if (st == 1)
            memcpy(y + lo, s, (size_t)(hi - lo) * sizeof(float));
        else
            for (int64_t o = 0; o < hi - lo; o++)
                y[lo + o] = s[o * st];
    }
    for (int64_t o = hi > lo ? hi : lo; o < od; o++) {
        int64_t k = o * d->mul + d->off;
        y[o] = border(c->bmode, &k, in) ? x[k * st] : c->value;
    }
}

/* MAP: output rows [begin, end) of the innermost dim. */
static void map_rows(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const move_job *j = arg;
    const tx_move_call *c = j->c;
    const tx_move_dim *d = &c->d[c->n - 1];
    int64_t len = d->od;
    for (int64_t r = begin; r < end; r++) {
        float *y = j->y + r * len;
        int64_t src = c->base, q = r;
        bool inside = true;
        for (int k = c->n - 2; k >= 0; k--) {
            const tx_move_dim *e = &c->d[k];
            int64_t o = q % e->od;
            q /= e->od;
            if (e->border) {
                int64_t v = o * e->mul + e->off;
                inside = border(c->bmode, &v, e->in) && inside;
                src += v * e->st;
            } else {
                src += o * e->st;
            }
        }
        if (!inside) {
            fill(y, c->value, len);
            continue;
        }
        const float *x = j->x + src;
        if (d->border)
            border_row(c, d, x, y);
        else if (d->st == 1)
            memcpy(y, x, (size_t)len * sizeof(float));
        else if (d->st == 0)
            fill(y, x[0], len);
        else
            for (int64_t i = 0; i < len; i++)
                y[i] = x[i * d->st];
    }
}

/* MAP whose last two dims [A, B] read x at a + b * sb (a transpose): blocks
 * of TILE x TILE; item t is outer row t / ta, block row t % ta. */
static void transpose_blocks(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const move_job *j = arg;
    const tx_move_call *c = j->c;
    int64_t A = c->d[c->n - 2].od, B = c->d[c->n - 1].od, sb = c->d[c->n - 1].st;
    int64_t ta = (A + TILE - 1) / TILE;
    for (int64_t t = begin; t < end; t++) {
        int64_t r = t / ta, a0 = t % ta * TILE, src = c->base, q = r;
        for (int k = c->n - 3; k >= 0; k--) {
            src += q % c->d[k].od * c->d[k].st;
            q /= c->d[k].od;
        }
        const float *x = j->x + src;
        float *y = j->y + r * A * B;
        int64_t a1 = a0 + TILE < A ? a0 + TILE : A;
        for (int64_t b0 = 0; b0 < B; b0 += TILE) {
            int64_t b1 = b0 + TILE < B ? b0 + TILE : B;
            for (int64_t a = a0; a < a1; a++)
                for (int64_t b = b0; b < b1; b++)
                    y[a * B + b] = x[a + b * sb];
        }
    }
}

/* CONCAT: item t is row t / n_in of input t % n_in. */
static void concat_items(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const move_job *j = arg;
    const tx_move_call *c = j->c;
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / c->n_in;
        int k = (int)(t % c->n_in);
        int64_t len = j->at[k + 1] - j->at[k];
        if (len > 0)
            memcpy(j->y + o * c->L + j->at[k], tx_cpu_data(c->xs[k]) + o * len,
                   (size_t)len * sizeof(float));
    }
}

/* GATHER: row t = (o, idx) of `inner` elements. */
static void gather_rows(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const move_job *j = arg;
    const tx_move_call *c = j->c;
    const float *idx = tx_cpu_data(c->indices);
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / c->nidx;
        /* float compares: a whole value out of int64 range clamps too */
        float f = idx[t % c->nidx];
        if (f < 0)
            f += (float)c->dim;
        int64_t k = !(f > 0) ? 0 : (f >= (float)(c->dim - 1) ? c->dim - 1 : (int64_t)f);
        memcpy(j->y + t * c->inner, j->x + (o * c->dim + k) * c->inner,
               (size_t)c->inner * sizeof(float));
    }
}

tx_status tx_cpu_move(tx_ctx *ctx, const tx_move_call *c) {
    move_job j = {c, c->x ? tx_cpu_data(c->x) : NULL, tx_cpu_data(c->y), NULL};
    int64_t numel = c->y->numel;
    if (c->kind == TX_MOVE_GATHER) {
        if (c->inner > 0)
            tx_cpu_for(ctx, numel / c->inner, grain_rows(c->inner), gather_rows, &j);
        return TX_STATUS_OK;
    }
    if (c->kind == TX_MOVE_CONCAT) {
        int64_t *at = malloc((size_t)(c->n_in + 1) * sizeof *at);
        if (!at)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "concat: out of host memory");
        at[0] = 0;
        for (int k = 0; k < c->n_in; k++)
            at[k + 1] = at[k] + c->xs[k]->shape[c->axis] * c->inner;
        j.at = at;
        int64_t outer = numel / c->L;
        tx_cpu_for(ctx, outer * c->n_in, grain_rows(c->L / c->n_in), concat_items, &j);
        free(at);
        return TX_STATUS_OK;
    }
    const tx_move_dim *d = &c->d[c->n - 1];
    if (c->n >= 2 && c->bmode == TX_MOVE_BORDER_NONE && c->d[c->n - 2].st == 1 && d->st > 1 &&
        c->d[c->n - 2].od > 1) {
        int64_t A = c->d[c->n - 2].od, ta = (A + TILE - 1) / TILE;
        int64_t items = numel / (A * d->od) * ta;
        tx_cpu_for(ctx, items, grain_rows(TILE * d->od), transpose_blocks, &j);
        return TX_STATUS_OK;
    }
    tx_cpu_for(ctx, numel / d->od, grain_rows(d->od), map_rows, &j);
    return TX_STATUS_OK;
}
