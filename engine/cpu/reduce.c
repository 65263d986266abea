/* REDUCE family on the CPU, over the front's canonical plan (up to 3 kept
 * and 3 reduced groups). Two loop shapes cover every plan, because the
 * innermost non-unit dim of x is either reduced or kept:
 * - inner: the innermost reduced group is contiguous, so each output is a
 *   sum (max, ...) of contiguous runs, accumulated in several float lanes
 *   (vectorizable) whose blocks add up in double;
 * - outer: the innermost kept group is contiguous, so a tile of adjacent
 *   outputs is accumulated row by row, one contiguous row of x per reduced
 *   index, elementwise into per-output lanes.
 * Semantics as glsl-templates/reduce.glsl and engine/ref/ref_reduce.c: NaN
 * propagates through max/min/sums, ArgMax/ArgMin take the first (or with
 * select_last_index the last) best index and a NaN beats every number,
 * log-sum-exp subtracts the max. */
#include <math.h>

#include "cpu.h"

#define LANES 8
#define BLOCK 2048 /* elements summed in float lanes before adding to a double */
#define TILE  256  /* outputs accumulated together by the outer loop */

#define LANE_SUM(n, expr)                                                                          \
    double tot = 0;                                                                                \
    for (int64_t b0 = 0; b0 < (n); b0 += BLOCK) {                                                  \
        int64_t b1 = b0 + BLOCK < (n) ? b0 + BLOCK : (n);                                          \
        float l[LANES] = {0};                                                                      \
        int64_t i = b0;                                                                            \
        for (; i + LANES <= b1; i += LANES)                                                        \
            for (int k = 0; k < LANES; k++) {                                                      \
                float v = p[i + k];                                                                \
                l[k] += (expr);                                                                    \
            }                                                                                      \
        for (; i < b1; i++) {                                                                      \
            float v = p[i];                                                                        \
            l[0] += (expr);                                                                        \
        }                                                                                          \
        tot += (double)(((l[0] + l[4]) + (l[1] + l[5])) + ((l[2] + l[6]) + (l[3] + l[7])));        \
    }                                                                                              \
    return tot

double tx_cpu_sum(const float *p, int64_t n) {
    LANE_SUM(n, v);
}

double tx_cpu_sqdev(const float *p, int64_t n, float c) {
    LANE_SUM(n, (v - c) * (v - c));
}

static double sum_sq(const float *p, int64_t n) {
    LANE_SUM(n, v * v);
}

static double sum_abs(const float *p, int64_t n) {
    LANE_SUM(n, fabsf(v));
}

double tx_cpu_exp_sum(const float *restrict x, float m, float *restrict y, int64_t n) {
    const tx_f32x4 m4 = tx_v4_set1(m), z = tx_v4_set1(0.0f);
    double tot = 0;
    int64_t i = 0;
    while (i + 4 <= n) {
        int64_t end = i + BLOCK < n ? i + BLOCK : n;
        tx_f32x4 a0 = z, a1 = z;
        for (; i + 8 <= end; i += 8) {
            tx_f32x4 e0 = tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(x + i), m4));
            tx_f32x4 e1 = tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(x + i + 4), m4));
            if (y) {
                tx_v4_store(y + i, e0);
                tx_v4_store(y + i + 4, e1);
            }
            a0 = tx_v4_add(a0, e0);
            a1 = tx_v4_add(a1, e1);
        }
        for (; i + 4 <= end; i += 4) {
            tx_f32x4 e0 = tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(x + i), m4));
            if (y)
                tx_v4_store(y + i, e0);
            a0 = tx_v4_add(a0, e0);
        }
        tot += (double)tx_v4_hsum(tx_v4_add(a0, a1));
    }
    if (i < n) { /* the last few through a padded block: the same function */
        float xb[4] = {m, m, m, m}, yb[4];
        for (int64_t k = i; k < n; k++)
            xb[k - i] = x[k];
        tx_v4_store(yb, tx_cpu_exp_nonpos_v4(tx_v4_sub(tx_v4_load(xb), m4)));
        for (int64_t k = i; k < n; k++) {
            if (y)
                y[k] = yb[k - i];
            tot += (double)yb[k - i];
        }
    }
    return tot;
}

/* exp(v - m) summed; where m is infinite, only the values equal to it count
 * (as 1), as the reference's log-sum-exp does. */
static double sum_exp(const float *p, int64_t n, float m) {
    if (isinf(m)) {
        double cnt = 0;
        for (int64_t i = 0; i < n; i++)
            cnt += p[i] == m;
        return cnt;
    }
    return tx_cpu_exp_sum(p, m, NULL, n);
}

static double run_prod(const float *p, int64_t n) {
    double l[4] = {1, 1, 1, 1};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            l[k] *= p[i + k];
    for (; i < n; i++)
        l[0] *= p[i];
    return (l[0] * l[1]) * (l[2] * l[3]);
}

/* max (min) of m and p[0..n); NaN if any is NaN. */
static float run_max(const float *p, int64_t n, float m, bool is_max) {
    float l[LANES];
    int nan[LANES] = {0};
    for (int k = 0; k < LANES; k++)
        l[k] = m;
    int64_t i = 0;
    if (is_max) {
        for (; i + LANES <= n; i += LANES)
            for (int k = 0; k < LANES; k++) {
                float v = p[i + k];
                l[k] = v > l[k] ? v : l[k];
                nan[k] |= v != v;
            }
    } else {
        for (; i + LANES <= n; i += LANES)
            for (int k = 0; k < LANES; k++) {
                float v = p[i + k];
                l[k] = v < l[k] ? v : l[k];
                nan[k] |= v != v;
            }
    }
    for (; i < n; i++) {
        float v = p[i];
        l[0] = is_max ? (v > l[0] ? v : l[0]) : (v < l[0] ? v : l[0]);
        nan[0] |= v != v;
    }
    float r = l[0];
    int any = nan[0] | (m != m);
    for (int k = 1; k < LANES; k++) {
        r = is_max ? (l[k] > r ? l[k] : r) : (l[k] < r ? l[k] : r);
        any |= nan[k];
    }
    return any ? NAN : r;
}

/* Does x, at a later index, replace the best b? A NaN beats every number
 * (the first NaN, or with `last` the last). */
static inline bool better(float x, float b, bool is_max, bool last) {
    if (b != b)
        return last && x != x;
    if (x != x)
        return true;
    return is_max ? (last ? x >= b : x > b) : (last ? x <= b : x < b);
}

static void run_arg(const float *p, int64_t n, int64_t j0, bool is_max, bool last, float *best,
                    int64_t *idx) {
    for (int64_t i = 0; i < n; i++)
        if (*idx < 0 || better(p[i], *best, is_max, last)) {
            *best = p[i];
            *idx = j0 + i;
        }
}

/* The finished value of an accumulated s (m: LSE's max, idx: ARG's index). */
static float finish(const tx_reduce_call *c, double s, float m, int64_t idx) {
    switch (c->fin) {
    case 1: return (float)(s / (double)c->plan.R);
    case 2: return (float)sqrt(s);
    case 3: return (float)((double)m + log(s));
    case 4: return (float)(idx > 0 ? idx : 0);
    case 5: return (float)log(s);
    default: return (float)s;
    }
}

static float init_of(tx_reduce_acc acc) {
    switch (acc) {
    case TX_REDUCE_ACC_PROD: return 1.0f;
    case TX_REDUCE_ACC_MAX:
    case TX_REDUCE_ACC_LSE: return -INFINITY;
    case TX_REDUCE_ACC_MIN: return INFINITY;
    default: return 0.0f;
    }
}

/* Element offset of output o's first element. */
static int64_t out_base(const tx_reduce_plan *p, int64_t o) {
    int64_t c2 = o % p->ksz[2], q = o / p->ksz[2];
    int64_t c1 = q % p->ksz[1], c0 = q / p->ksz[1];
    return c0 * p->kst[0] + c1 * p->kst[1] + c2 * p->kst[2];
}

/* Outputs [begin, end), each over contiguous runs of its reduced elements. */
static void inner_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_reduce_call *c = arg;
    const float *xd = tx_cpu_data(c->x);
    float *yd = tx_cpu_data(c->y);
    const tx_reduce_plan *p = &c->plan;
    int64_t n = p->rsz[2], runs = p->R == 0 ? 0 : (int64_t)p->rsz[0] * p->rsz[1];
    bool is_max = c->acc == TX_REDUCE_ACC_MAX || c->acc == TX_REDUCE_ACC_LSE ||
                  c->acc == TX_REDUCE_ACC_ARGMAX;
    for (int64_t o = begin; o < end; o++) {
        const float *xb = xd + out_base(p, o);
#define RUNS(stmt)                                                                                 \
    for (int64_t r = 0; r < runs; r++) {                                                           \
        const float *rp = xb + (r / p->rsz[1]) * p->rst[0] + (r % p->rsz[1]) * p->rst[1];          \
        stmt;                                                                                      \
    }
        double s = 0;
        float m = init_of(c->acc);
        int64_t idx = -1;
        switch (c->acc) {
        case TX_REDUCE_ACC_SUM: RUNS(s += tx_cpu_sum(rp, n)); break;
        case TX_REDUCE_ACC_SUMSQ: RUNS(s += sum_sq(rp, n)); break;
        case TX_REDUCE_ACC_L1: RUNS(s += sum_abs(rp, n)); break;
        case TX_REDUCE_ACC_PROD:
            s = 1;
            RUNS(s *= run_prod(rp, n));
            break;
        case TX_REDUCE_ACC_MAX:
        case TX_REDUCE_ACC_MIN:
            RUNS(m = run_max(rp, n, m, is_max));
            s = m;
            break;
        case TX_REDUCE_ACC_LSE:
            RUNS(m = run_max(rp, n, m, true));
            RUNS(s += sum_exp(rp, n, m));
            break;
        case TX_REDUCE_ACC_ARGMAX:
        case TX_REDUCE_ACC_ARGMIN: RUNS(run_arg(rp, n, r * n, is_max, c->last, &m, &idx)); break;
        default: TX_ASSERT(!"not a reduction accumulator");
        }
#undef RUNS
        yd[o] = finish(c, s, m, idx);
    }
}

/* Tiles [begin, end) of up to TILE adjacent outputs (along the innermost kept
 * group), accumulated one contiguous row of x per reduced index. */
static void outer_range(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const tx_reduce_call *c = arg;
    const float *xd = tx_cpu_data(c->x);
    float *yd = tx_cpu_data(c->y);
    const tx_reduce_plan *p = &c->plan;
    int64_t k2 = p->ksz[2], per = (k2 + TILE - 1) / TILE;
    tx_reduce_acc acc = c->acc;
    bool is_max =
        acc == TX_REDUCE_ACC_MAX || acc == TX_REDUCE_ACC_LSE || acc == TX_REDUCE_ACC_ARGMAX;
    bool sum_like = acc == TX_REDUCE_ACC_SUM || acc == TX_REDUCE_ACC_SUMSQ ||
                    acc == TX_REDUCE_ACC_L1 || acc == TX_REDUCE_ACC_LSE;
    int64_t R = p->R;
    float f[TILE], m[TILE];
    double d[TILE];
    int64_t idx[TILE];
    for (int64_t t = begin; t < end; t++) {
        int64_t o0 = (t / per) * k2 + (t % per) * TILE;
        int64_t w = k2 - (t % per) * TILE < TILE ? k2 - (t % per) * TILE : TILE;
        const float *xb = xd + out_base(p, o0);
        float init = init_of(acc);
        for (int64_t i = 0; i < w; i++) {
            f[i] = 0;
            m[i] = init;
            d[i] = acc == TX_REDUCE_ACC_PROD ? 1 : 0;
            idx[i] = -1;
        }
        /* pass 0: max / min / arg / prod / sums; pass 1: LSE's sum of exp */
        for (int pass = 0; pass < (acc == TX_REDUCE_ACC_LSE ? 2 : 1); pass++) {
            int64_t rows = 0;
            for (int64_t r = 0; r < R; r++) {
                int64_t r2 = r % p->rsz[2], q = r / p->rsz[2];
                const float *row =
                    xb + (q / p->rsz[1]) * p->rst[0] + (q % p->rsz[1]) * p->rst[1] + r2 * p->rst[2];
                switch (acc) {
                case TX_REDUCE_ACC_SUM: TX_CPU_EACH(w, f[i] += row[i]); break;
                case TX_REDUCE_ACC_SUMSQ: TX_CPU_EACH(w, f[i] += row[i] * row[i]); break;
                case TX_REDUCE_ACC_L1: TX_CPU_EACH(w, f[i] += fabsf(row[i])); break;
                case TX_REDUCE_ACC_PROD: TX_CPU_EACH(w, d[i] *= row[i]); break;
                case TX_REDUCE_ACC_MAX:
                    TX_CPU_EACH(w, m[i] = (row[i] > m[i] || row[i] != row[i]) ? row[i] : m[i]);
                    break;
                case TX_REDUCE_ACC_MIN:
                    TX_CPU_EACH(w, m[i] = (row[i] < m[i] || row[i] != row[i]) ? row[i] : m[i]);
                    break;
                case TX_REDUCE_ACC_LSE:
                    if (pass == 0) {
                        TX_CPU_EACH(w, m[i] = (row[i] > m[i] || row[i] != row[i]) ? row[i] : m[i]);
                    } else {
                        TX_CPU_EACH(w, f[i] += fabsf(m[i]) == INFINITY
                                                   ? (row[i] == m[i] ? 1.0f : 0.0f)
                                                   : tx_cpu_exp_nonpos(row[i] - m[i]));
                    }
                    break;
                case TX_REDUCE_ACC_ARGMAX:
                case TX_REDUCE_ACC_ARGMIN:
                    for (int64_t i = 0; i < w; i++)
                        if (idx[i] < 0 || better(row[i], m[i], is_max, c->last)) {
                            m[i] = row[i];
                            idx[i] = r;
                        }
                    break;
                default: TX_ASSERT(!"not a reduction accumulator");
                }
                /* float lanes stay short sums: flush them into double */
                if (sum_like && (pass == 1 || acc != TX_REDUCE_ACC_LSE) && ++rows == 256) {
                    rows = 0;
                    for (int64_t i = 0; i < w; i++) {
                        d[i] += f[i];
                        f[i] = 0;
                    }
                }
            }
        }
        float *y = yd + o0;
        for (int64_t i = 0; i < w; i++) {
            double s = sum_like ? d[i] + f[i] : (acc == TX_REDUCE_ACC_PROD ? d[i] : m[i]);
            y[i] = finish(c, s, m[i], idx[i]);
        }
    }
}

tx_status tx_cpu_reduce(tx_ctx *ctx, const tx_reduce_call *c) {
    const tx_reduce_plan *p = &c->plan;
    int64_t cost = p->R > 0 ? p->R : 1; /* elements read per output */
    if (p->kst[2] == 1 && p->rst[2] != 1) {
        int64_t per = (p->ksz[2] + TILE - 1) / TILE, tiles = p->nout / p->ksz[2] * per;
        int64_t grain = 16384 / (cost * TILE);
        tx_cpu_for(ctx, tiles, grain > 0 ? grain : 1, outer_range, (void *)c);
    } else {
        int64_t grain = 16384 / cost;
        tx_cpu_for(ctx, p->nout, grain > 0 ? grain : 1, inner_range, (void *)c);
    }
    return TX_STATUS_OK;
}
