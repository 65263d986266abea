/* CONV and CONV_TRANSPOSE families on the CPU.
 *
 * - Depthwise (group == C == M): a direct kernel vectorized over output
 *   width. Each plane is first copied, zero-padded, into a scratch buffer
 *   whose columns are split by phase modulo the stride, so the taps of
 *   consecutive outputs are consecutive floats for every stride; the hot
 *   shapes (3×3 and 5×5, strides 1 and 2) get the tap loops unrolled.
 * - 1×1, stride 1, no pads: y = W·x straight from the tensors (one GEMM per
 *   batch and group).
 * - 3×3, stride 1, enough channels, where the GEMM is 4-wide (wasm, SSE2,
 *   NEON): Winograd F(2×2, 3×3), 16 GEMMs on transformed tiles (see its
 *   section for when and why).
 * - Otherwise one GEMM per batch and group whose B, the patches (im2col), is
 *   packed by the GEMM straight from the input into its panels, block by
 *   block (pack_patches): no im2col matrix; bias and relu / clip / hard-swish
 *   fused into the GEMM's store.
 * - ConvTranspose: col = Wᵀ·x by GEMM, then scattered (col2im) into y.
 * Activations the GEMM cannot fuse run over the output afterwards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../hash.h"
#include "cpu.h"
#include "gemm.h"
#include "simd.h"

/* ceil(a / d) for d > 0 and any a. */
static int64_t cdiv(int64_t a, int64_t d) {
    return a >= 0 ? (a + d - 1) / d : -((-a) / d);
}

static tx_status oom(tx_ctx *ctx, const tx_conv_call *c) {
    return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory for scratch",
                   c->transpose ? "conv_transpose" : "conv");
}

/* The activation of the call as the GEMM's epilogue; false: run afterwards. */
static bool conv_act(const tx_conv_call *c, tx_gemm *g) {
    return tx_cpu_gemm_act(c->act, c->lo, c->hi, g);
}

/* ---- depthwise ---- */

typedef struct dw_geom {
    int64_t hp, L, rs; /* padded rows, floats per phase row, per padded row (s·L) */
    int s;             /* column phases: the width stride */
    int64_t wo_r;      /* wo rounded up to 8 */
    int act;           /* 0 none, 1 clip to [lo, hi] (relu: [0, inf)), 2 afterwards, 3 hard-swish */
    float lo, hi;
} dw_geom;

/* One output row: out[ox] = bias + Σ w[ky, kx] · in(ky, ox·s + kx·dw), with
 * `in` the padded rows from the window's first row; then the clip. */
#define DW_ROW(SUFFIX, ATTR, VT, VW, LOAD, STORE, SET1, FMA, HSWISH, MAX, MIN)                     \
    ATTR static inline __attribute__((always_inline)) void dw_row_##SUFFIX(                        \
        const float *in, int64_t rs, int64_t L, const float *wt, int kh, int kw, int s, int dh,    \
        int dw, float bias, int64_t wo, float *out, int act, float lo, float hi) {                 \
        for (int64_t ox = 0; ox < wo; ox += VW) {                                                  \
            VT acc = SET1(bias);                                                                   \
            for (int ky = 0; ky < kh; ky++) {                                                      \
                const float *r = in + (int64_t)ky * dh * rs + ox;                                  \
                for (int kx = 0; kx < kw; kx++) {                                                  \
                    int t = kx * dw;                                                               \
                    acc = FMA(SET1(wt[ky * kw + kx]), LOAD(r + (t % s) * L + t / s), acc);         \
                }                                                                                  \
            }                                                                                      \
            if (act == 1)                                                                          \
                acc = MIN(SET1(hi), MAX(SET1(lo), acc));                                           \
            else if (act == 3)                                                                     \
                acc = HSWISH(acc);                                                                 \
            if (ox + VW <= wo) {                                                                   \
                STORE(out + ox, acc);                                                              \
            } else {                                                                               \
                float tmp[VW];                                                                     \
                STORE(tmp, acc);                                                                   \
                memcpy(out + ox, tmp, (size_t)(wo - ox) * sizeof(float));                          \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    /* All output rows of one plane; the hot shapes with constant taps. */                         \
    ATTR static void dw_plane_##SUFFIX(const tx_conv_call *c, const dw_geom *q, const float *buf,  \
                                       const float *wt, float bias, float *y) {                    \
        int kh = c->kh, kw = c->kw, s = q->s, sh = c->sh, dh = c->dh, dw = c->dw;                  \
        int64_t rs = q->rs, L = q->L, wo = c->wo;                                                  \
        int act = q->act == 1 || q->act == 3 ? q->act : 0;                                         \
        float lo = q->lo, hi = q->hi;                                                              \
        for (int64_t oy = 0; oy < c->ho; oy++) {                                                   \
            const float *in = buf + oy * sh * rs;                                                  \
            float *out = y + oy * wo;                                                              \
            if (dh == 1 && dw == 1 && kh == 3 && kw == 3 && s == 1)                                \
                dw_row_##SUFFIX(in, rs, L, wt, 3, 3, 1, 1, 1, bias, wo, out, act, lo, hi);         \
            else if (dh == 1 && dw == 1 && kh == 3 && kw == 3 && s == 2)                           \
                dw_row_##SUFFIX(in, rs, L, wt, 3, 3, 2, 1, 1, bias, wo, out, act, lo, hi);         \
            else if (dh == 1 && dw == 1 && kh == 5 && kw == 5 && s == 1)                           \
                dw_row_##SUFFIX(in, rs, L, wt, 5, 5, 1, 1, 1, bias, wo, out, act, lo, hi);         \
            else if (dh == 1 && dw == 1 && kh == 5 && kw == 5 && s == 2)                           \
                dw_row_##SUFFIX(in, rs, L, wt, 5, 5, 2, 1, 1, bias, wo, out, act, lo, hi);         \
            else                                                                                   \
                dw_row_##SUFFIX(in, rs, L, wt, kh, kw, s, dh, dw, bias, wo, out, act, lo, hi);     \
        }                                                                                          \
    }

DW_ROW(v4, , tx_f32x4, 4, tx_v4_load, tx_v4_store, tx_v4_set1, tx_v4_fma, tx_v4_hard_swish,
       tx_v4_max, tx_v4_min)
#ifdef TX_SIMD_X86
DW_ROW(avx2, TX_TARGET_AVX2, tx_f32x8, 8, tx_v8_load, tx_v8_store, tx_v8_set1, tx_v8_fma,
       tx_v8_hard_swish, tx_v8_max, tx_v8_min)
#endif

/* The call's tensors' data: x, w, bias (NULL without) and, returned, y. */
static float *conv_data(const tx_conv_call *c, const float **x, const float **w,
                        const float **bias) {
    *x = tx_cpu_data(c->x);
    *w = tx_cpu_data(c->wt);
    *bias = c->bias ? tx_cpu_data(c->bias) : NULL;
    return tx_cpu_data(c->y);
}

/* n input floats from src to a padded row split in two phases of L floats:
 * src[i] is column k + i, at phase (k + i) % 2, index (k + i) / 2; 8 at a
 * time with two shuffles. */
static void deinterleave2(const float *src, int64_t n, int64_t k, float *row, int64_t L) {
    int64_t i = 0;
    if (n > 0 && (k & 1)) {
        row[L + (k >> 1)] = src[0];
        i = 1;
    }
    float *ev = row + ((k + i) >> 1), *od = row + L + ((k + i) >> 1);
    for (; i + 8 <= n; i += 8, ev += 4, od += 4) {
        tx_f32x4 a = tx_v4_load(src + i), b = tx_v4_load(src + i + 4);
        tx_v4_store(ev, tx_v4_even(a, b));
        tx_v4_store(od, tx_v4_odd(a, b));
    }
    for (; i < n; i++) {
        int64_t kk = k + i;
        row[(kk & 1) * L + (kk >> 1)] = src[i];
    }
}

typedef struct dw_job {
    const tx_conv_call *c;
    dw_geom q;
    bool avx2;
    tx_status st;
} dw_job;

static void dw_planes(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    dw_job *j = arg;
    const tx_conv_call *c = j->c;
    const dw_geom *q = &j->q;
    size_t n = (size_t)(q->hp * q->rs + 8);
    float *buf = aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
    if (!buf) {
        j->st = TX_STATUS_OUT_OF_MEMORY;
        return;
    }
    const float *x, *w, *bias;
    float *y = conv_data(c, &x, &w, &bias);
    int s = q->s;
    /* Every plane writes the same positions, so the padding zeroed here
     * stays zero. */
    memset(buf, 0, n * sizeof(float));
    for (int64_t pl = begin; pl < end; pl++) {
        int64_t ch = pl % c->c;
        const float *xp = x + pl * c->h * c->w;
        /* padded row r holds input row r - pt; padded column k holds input
         * column k - pl, at phase k % s, index k / s */
        int64_t x0 = c->pl < 0 ? -c->pl : 0;
        int64_t x1 = c->w;
        if (x1 + c->pl > q->L * s)
            x1 = q->L * s - c->pl;
        for (int64_t iy = 0; iy < c->h; iy++) {
            int64_t r = iy + c->pt;
            if (r < 0 || r >= q->hp || x1 <= x0)
                continue;
            float *row = buf + r * q->rs;
            const float *src = xp + iy * c->w;
            if (s == 1) {
                memcpy(row + x0 + c->pl, src + x0, (size_t)(x1 - x0) * sizeof(float));
            } else if (s == 2) {
                deinterleave2(src + x0, x1 - x0, x0 + c->pl, row, q->L);
            } else {
                int64_t k = x0 + c->pl, idx = k / s;
                int ph = (int)(k % s);
                for (int64_t ix = x0; ix < x1; ix++) {
                    row[ph * q->L + idx] = src[ix];
                    if (++ph == s) {
                        ph = 0;
                        idx++;
                    }
                }
            }
        }
        const float *wt = w + ch * c->kh * c->kw;
        float b = bias ? bias[ch] : 0.0f;
        float *yp = y + pl * c->ho * c->wo;
#ifdef TX_SIMD_X86
        if (j->avx2)
            dw_plane_avx2(c, q, buf, wt, b, yp);
        else
#endif
            dw_plane_v4(c, q, buf, wt, b, yp);
        if (q->act == 2)
            tx_cpu_unary_apply(c->act, c->lo, c->hi, yp, yp, c->ho * c->wo);
    }
    free(buf);
}

/* The activation as the direct kernels store it: act 0 none, 1 clip to [lo,
 * hi] (relu: [0, inf)), 3 hard-swish, or 2: none of those, to run over each
 * plane afterwards (tx_cpu_unary_apply) while it is in cache. */
static void store_act(const tx_conv_call *c, int *act, float *lo, float *hi) {
    tx_gemm g = {0};
    bool fused = conv_act(c, &g);
    *act = !fused ? 2 : g.act == TX_GEMM_ACT_NONE ? 0 : g.act == TX_GEMM_ACT_HARD_SWISH ? 3 : 1;
    *lo = g.act == TX_GEMM_ACT_RELU ? 0.0f : g.act_lo;
    *hi = g.act == TX_GEMM_ACT_RELU ? INFINITY : g.act_hi;
}

static tx_status conv_depthwise(tx_ctx *ctx, const tx_conv_call *c) {
    dw_job j = {.c = c};
    dw_geom *q = &j.q;
    q->s = c->sw;
    q->wo_r = (c->wo + 7) / 8 * 8;
    q->hp = (c->ho - 1) * c->sh + (int64_t)(c->kh - 1) * c->dh + 1;
    int64_t wp = (q->wo_r - 1) * c->sw + (int64_t)(c->kw - 1) * c->dw + 1;
    q->L = cdiv(wp, c->sw);
    q->rs = q->L * c->sw;
    store_act(c, &q->act, &q->lo, &q->hi);
#ifdef TX_SIMD_X86
    j.avx2 = tx_simd_have_avx2_fma();
#endif
    int64_t per = c->ho * c->wo * (int64_t)c->kh * c->kw;
    tx_cpu_for(ctx, c->n * c->c, 1 + 65536 / (per + 1), dw_planes, &j);
    return j.st ? oom(ctx, c) : TX_STATUS_OK;
}

/* ---- GEMM paths ---- */

/* The patches of one batch and group as the B of the conv's GEMM: K = cg·kh·kw
 * rows (ci, ky, kx) by N = ho·wo pixel columns. They are packed straight into
 * the GEMM's panels (tx_gemm_pack_fn), so no im2col matrix is written and
 * then packed again. */
typedef struct {
    const tx_conv_call *c;
    const float *x; /* the batch and group's first input plane */
} patches;

static void pack_patches(const void *arg, int64_t p0, int64_t kc, int64_t j0, int64_t ncols, int nr,
                         float *dst) {
    const patches *pa = arg;
    const tx_conv_call *c = pa->c;
    const int64_t plane = c->h * c->w, taps = (int64_t)c->kh * c->kw;
    int64_t iyb[16], ixb[16]; /* per lane: input row and column of tap (0, 0) */
    for (int64_t q = 0; q < ncols; q += nr, dst += nr * kc) {
        int n = ncols - q < nr ? (int)(ncols - q) : nr;
        int64_t j = j0 + q;
        for (int l = 0; l < n; l++) {
            iyb[l] = (j + l) / c->wo * c->sh - c->pt;
            ixb[l] = (j + l) % c->wo * c->sw - c->pl;
        }
        /* a whole panel inside one output row: one input row per tap */
        bool one_row = n == nr && j % c->wo + n <= c->wo;
        int64_t ci = p0 / taps;
        int ky = (int)(p0 % taps / c->kw), kx = (int)(p0 % c->kw);
        for (int64_t p = 0; p < kc; p++) {
            float *d = dst + p * nr;
            const float *xc = pa->x + ci * plane;
            int64_t dy = (int64_t)ky * c->dh, dx = (int64_t)kx * c->dw;
            if (one_row) {
                int64_t iy = iyb[0] + dy, ix = ixb[0] + dx;
                const float *row = xc + iy * c->w;
                if (iy < 0 || iy >= c->h) {
                    for (int l = 0; l < nr; l += 4)
                        tx_v4_store(d + l, tx_v4_set1(0.0f));
                } else if (c->sw == 1 && ix >= 0 && ix + nr <= c->w) {
                    for (int l = 0; l < nr; l += 4)
                        tx_v4_store(d + l, tx_v4_load(row + ix + l));
                } else if (c->sw == 2 && ix >= 0 && ix + 2 * nr <= c->w) {
                    for (int l = 0; l < nr; l += 4)
                        tx_v4_store(d + l, tx_v4_even(tx_v4_load(row + ix + 2 * l),
                                                      tx_v4_load(row + ix + 2 * l + 4)));
                } else {
                    for (int l = 0; l < nr; l++, ix += c->sw)
                        d[l] = ix >= 0 && ix < c->w ? row[ix] : 0.0f;
                }
            } else {
                for (int l = 0; l < nr; l++) {
                    int64_t iy = iyb[l] + dy, ix = ixb[l] + dx;
                    d[l] = l < n && iy >= 0 && iy < c->h && ix >= 0 && ix < c->w
                               ? xc[iy * c->w + ix]
                               : 0.0f;
                }
            }
            if (++kx == c->kw) {
                kx = 0;
                if (++ky == c->kh) {
                    ky = 0;
                    ci++;
                }
            }
        }
    }
}

typedef struct gemm_job {
    const tx_conv_call *c;
    tx_threadpool *tp; /* for each GEMM: NULL when the items run side by side */
    bool fused;
    tx_gemm g0; /* the epilogue */
    tx_status st;
} gemm_job;

/* 1×1, stride 1, no pads: the input planes are B as they are. */
static bool conv_is_direct(const tx_conv_call *c) {
    return c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && c->pt == 0 && c->pl == 0 &&
           c->ho == c->h && c->wo == c->w;
}

/* Items (batch, group): one GEMM each, y_g = W_g · patches(x_g). */
static void gemm_items(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    gemm_job *j = arg;
    const tx_conv_call *c = j->c;
    int64_t HW = c->ho * c->wo, K = c->cg * c->kh * c->kw;
    const float *x, *w, *bias;
    float *y = conv_data(c, &x, &w, &bias);
    for (int64_t it = begin; it < end; it++) {
        int64_t gi = it % c->groups, n = it / c->groups;
        patches pa = {c, x + (n * c->c + gi * c->cg) * c->h * c->w};
        tx_gemm g = j->g0;
        g.M = c->mg;
        g.N = HW;
        g.K = K;
        g.A = w + gi * c->mg * K;
        g.lda = K;
        g.C = y + (n * c->m + gi * c->mg) * HW;
        g.ldc = HW;
        g.bias = bias ? bias + gi * c->mg : NULL;
        g.bias_kind = bias ? TX_GEMM_BIAS_ROW : TX_GEMM_BIAS_NONE;
        if (conv_is_direct(c)) {
            g.B = pa.x;
            g.ldb = HW;
            tx_cpu_sgemm(j->tp, &g);
        } else {
            g.pack_b = pack_patches;
            g.pack_b_arg = &pa;
            if (!tx_cpu_sgemm_packed_b(j->tp, &g)) {
                j->st = TX_STATUS_OUT_OF_MEMORY;
                return;
            }
        }
        if (!j->fused)
            for (int64_t r = 0; r < c->mg; r++)
                tx_cpu_unary_apply(c->act, c->lo, c->hi, g.C + r * HW, g.C + r * HW, HW);
    }
}

static tx_status conv_gemm(tx_ctx *ctx, const tx_conv_call *c) {
    gemm_job j = {.c = c};
    j.fused = conv_act(c, &j.g0);
    int64_t items = c->n * c->groups;
    int threads = tx_cpu_threads(ctx);
    if (items >= 2 * threads || threads == 1) {
        tx_cpu_for(ctx, items, 1, gemm_items, &j);
    } else {
        /* too few items to share out: each GEMM uses all threads */
        j.tp = tx_cpu_pool_of(ctx);
        gemm_items(&j, 0, items, 0);
    }
    return j.st ? oom(ctx, c) : TX_STATUS_OK;
}

/* ---- Winograd F(2×2, 3×3) and F(4×4, 3×3) ---- */

/* 3×3 kernels at stride 1 and dilation 1 (the common conv of a CNN) with
 * enough channels: each t×t block of outputs from a (t+2)×(t+2) input window
 * d as Aᵀ[(G g Gᵀ) ⊙ (Bᵀ d B)]A (Lavin & Gray 2015), so the multiplies are
 * (t+2)² per t² outputs and input channel instead of 9 t²: 16 per 4 for
 * t = 2, 36 per 16 for t = 4. The elementwise products summed over channels
 * are (t+2)² GEMMs, O[ξ] = U[ξ] · V[ξ], with
 *   U[ξ] (mg × cg): the transformed weights, kept with the weights'
 *                   storage while they are unchanged (tx_cpu_derived);
 *   V[ξ] (cg × T): the transformed input windows of T tiles.
 * Work items are (batch, group, a strip of tile rows): the strip's input rows
 * are copied zero-padded into a scratch, transformed 4 tiles per vector
 * (t = 2: stride-2 columns by even/odd shuffles; t = 4: 4×4 transposes),
 * multiplied by the GEMMs on the calling thread, and transformed back into y
 * with bias and activation. The strip is sized so that its V stays in L2
 * between its transform and the GEMMs. F(2×2)'s transforms only add,
 * subtract and halve; F(4×4)'s also scale by 2, 4, 5 and 8 and its weights'
 * by sixths (computed in double), so its results round a little further from
 * the im2col GEMM's (OCR det's output: 3e-12 against 7e-13 for F(2×2)). */

/* Where it is used, by measurement (bench/README.md, "Winograd"): with the
 * 4-wide and scalar GEMMs (wasm, SSE2, NEON), from 16 channels in and out
 * (fewer: the GEMMs' depth is too short to pay for the transforms) and 64
 * tiles per image (fewer: the weight transform dominates where the weights
 * change from call to call: a 512-channel 7×7 conv took 1.8× longer). With
 * AVX2+FMA the im2col GEMM runs twice as fast and the transforms,
 * memory-bound, ate the saving (measured even or slower natively), so that
 * road keeps im2col. F(4×4, 3×3) (2.25 multiplies an output against 4)
 * where its own tiles number 64 or more: OCR det's 96 -> 24 convs, 4-wide
 * kernel natively, one thread, F(2×2) -> F(4×4): 72x96 6.9-10.2 -> 4.1 ms,
 * 36x48 1.6-2.5 -> 1.2, conv2d_56 (64 -> 64 at 56x56) 5.1-5.6 -> 4.7-4.9;
 * at 18x24 (30 tiles of 4x4, a third of them padding) it lost. */
enum { WINO_MIN_CHANNELS = 16, WINO_MIN_TILES = 64 };

/* The Winograd tile side for c: 4 (F(4×4, 3×3)), 2 (F(2×2, 3×3)) or 0
 * (im2col). TEXEL_WINOGRAD=0, 2 or 4 sets it for every 3×3 conv at stride
 * and dilation 1 with enough channels, whatever the GEMM and the tile count
 * (tests run both tiles natively that way). Winograd's sums round otherwise
 * than the direct ones, so small-channel convs whose callers compare their
 * results for equality (the max-pool gradient's one-hot taps) never take it. */
static int wino_tile(const tx_conv_call *c) {
    if (!(c->ho > 0 && c->wo > 0 && c->kh == 3 && c->kw == 3 && c->sh == 1 && c->sw == 1 &&
          c->dh == 1 && c->dw == 1))
        return 0;
    if (c->cg < WINO_MIN_CHANNELS || c->mg < WINO_MIN_CHANNELS)
        return 0;
    const char *e = getenv("TEXEL_WINOGRAD");
    if (e && (!strcmp(e, "0") || !strcmp(e, "2") || !strcmp(e, "4")))
        return atoi(e);
    if (tx_cpu_sgemm_vector_width() >= 8)
        return 0;
    if (((c->ho + 3) / 4) * ((c->wo + 3) / 4) >= WINO_MIN_TILES)
        return 4;
    return ((c->ho + 1) / 2) * ((c->wo + 1) / 2) >= WINO_MIN_TILES ? 2 : 0;
}

typedef struct wino_job {
    const tx_conv_call *c;
    int t;          /* outputs per tile side: 2 (F(2×2, 3×3)) or 4 (F(4×4, 3×3)) */
    int nx;         /* ξ: (t + 2)², 16 or 36 */
    const float *u; /* U[ξ] for every group: [groups][nx][mg][cg] */
    int64_t tw;     /* tiles per row, rounded up to 4 */
    int64_t rows;   /* tile rows per strip */
    int64_t strips; /* per (batch, group) */
    int64_t wp;     /* the strip scratch's row length: t·tw + t */
    int act;        /* store_act's */
    float lo, hi;
    tx_status st;
} wino_job;

/* U = G g Gᵀ for each (m, ci) of each group, G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]. */
static void wino_weights(const tx_conv_call *c, const float *w, float *u) {
    const int64_t mg = c->mg, cg = c->cg;
    for (int64_t gi = 0; gi < c->groups; gi++)
        for (int64_t m = 0; m < mg; m++)
            for (int64_t ci = 0; ci < cg; ci++) {
                const float *g = w + ((gi * mg + m) * cg + ci) * 9;
                float t[4][3]; /* G g */
                for (int k = 0; k < 3; k++) {
                    t[0][k] = g[k];
                    t[1][k] = 0.5f * (g[k] + g[3 + k] + g[6 + k]);
                    t[2][k] = 0.5f * (g[k] - g[3 + k] + g[6 + k]);
                    t[3][k] = g[6 + k];
                }
                float *ug = u + gi * 16 * mg * cg + m * cg + ci;
                for (int i = 0; i < 4; i++) {
                    float r[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                                  0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
                    for (int j = 0; j < 4; j++)
                        ug[(4 * i + j) * mg * cg] = r[j];
                }
            }
}

/* The same for F(4×4, 3×3): U = G g Gᵀ with the 6×3 G of the points 0, ±1,
 * ±2 and ∞: rows (¼ 0 0), -⅙(1 1 1), -⅙(1 -1 1), (1/24 1/12 ⅙),
 * (1/24 -1/12 ⅙), (0 0 1), in double. */
static void wino4_weights(const tx_conv_call *c, const float *w, float *u) {
    static const double G[6][3] = {{0.25, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
    const int64_t mg = c->mg, cg = c->cg;
    for (int64_t gi = 0; gi < c->groups; gi++)
        for (int64_t m = 0; m < mg; m++)
            for (int64_t ci = 0; ci < cg; ci++) {
                const float *g = w + ((gi * mg + m) * cg + ci) * 9;
                double t[6][3]; /* G g */
                for (int i = 0; i < 6; i++)
                    for (int k = 0; k < 3; k++)
                        t[i][k] = G[i][0] * g[k] + G[i][1] * g[3 + k] + G[i][2] * g[6 + k];
                float *ug = u + gi * 36 * mg * cg + m * cg + ci;
                for (int i = 0; i < 6; i++)
                    for (int jj = 0; jj < 6; jj++)
                        ug[(6 * i + jj) * mg * cg] =
                            (float)(t[i][0] * G[jj][0] + t[i][1] * G[jj][1] + t[i][2] * G[jj][2]);
            }
}

/* A strip's input: rows t·ty0 - pt … (t·rows + 2 of them) of each channel of
 * the group, padded column p holding input column p - pl, zeros outside. */
static void wino_fill(const wino_job *j, const float *xg, int64_t ty0, float *sb) {
    const tx_conv_call *c = j->c;
    const int64_t nrow = j->t * j->rows + 2, wp = j->wp;
    int64_t x0 = c->pl < 0 ? -c->pl : 0, x1 = c->w; /* input columns that land */
    if (x1 + c->pl > wp)
        x1 = wp - c->pl;
    for (int64_t ci = 0; ci < c->cg; ci++)
        for (int64_t r = 0; r < nrow; r++) {
            float *row = sb + (ci * nrow + r) * wp;
            int64_t iy = j->t * ty0 - c->pt + r;
            if (iy < 0 || iy >= c->h || x1 <= x0) {
                memset(row, 0, (size_t)wp * sizeof(float));
                continue;
            }
            const float *src = xg + (ci * c->h + iy) * c->w;
            int64_t p0 = x0 + c->pl, p1 = x1 + c->pl;
            memset(row, 0, (size_t)p0 * sizeof(float));
            memcpy(row + p0, src + x0, (size_t)(p1 - p0) * sizeof(float));
            memset(row + p1, 0, (size_t)(wp - p1) * sizeof(float));
        }
}

/* V[ξ][ci][t] = (Bᵀ d B)[ξ] for the strip's tiles t = ry·tw + tx, with
 * Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; 4 tiles per vector. */
static void wino_input(const wino_job *j, const float *sb, int64_t nt, float *v) {
    const tx_conv_call *c = j->c;
    const int64_t nrow = 2 * j->rows + 2, wp = j->wp, cg = c->cg;
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t ry = 0; ry < nt / j->tw; ry++)
            for (int64_t tx = 0; tx < j->tw; tx += 4) {
                tx_f32x4 d[4][4];
                for (int r = 0; r < 4; r++) {
                    const float *p = sb + (ci * nrow + 2 * ry + r) * wp + 2 * tx;
                    tx_f32x4 a = tx_v4_load(p), b = tx_v4_load(p + 4);
                    tx_f32x4 a2 = tx_v4_load(p + 2), b2 = tx_v4_load(p + 6);
                    d[r][0] = tx_v4_even(a, b);
                    d[r][1] = tx_v4_odd(a, b);
                    d[r][2] = tx_v4_even(a2, b2);
                    d[r][3] = tx_v4_odd(a2, b2);
                }
                tx_f32x4 t[4][4];
                for (int k = 0; k < 4; k++) {
                    t[0][k] = tx_v4_sub(d[0][k], d[2][k]);
                    t[1][k] = tx_v4_add(d[1][k], d[2][k]);
                    t[2][k] = tx_v4_sub(d[2][k], d[1][k]);
                    t[3][k] = tx_v4_sub(d[1][k], d[3][k]);
                }
                float *o = v + ci * nt + ry * j->tw + tx;
                const int64_t xs = cg * nt; /* one ξ to the next */
                for (int i = 0; i < 4; i++) {
                    tx_v4_store(o + (4 * i + 0) * xs, tx_v4_sub(t[i][0], t[i][2]));
                    tx_v4_store(o + (4 * i + 1) * xs, tx_v4_add(t[i][1], t[i][2]));
                    tx_v4_store(o + (4 * i + 2) * xs, tx_v4_sub(t[i][2], t[i][1]));
                    tx_v4_store(o + (4 * i + 3) * xs, tx_v4_sub(t[i][1], t[i][3]));
                }
            }
}

static inline tx_f32x4 wino_act(tx_f32x4 v, const wino_job *j) {
    if (j->act == 1)
        return tx_v4_min(tx_v4_set1(j->hi), tx_v4_max(tx_v4_set1(j->lo), v));
    return j->act == 3 ? tx_v4_hard_swish(v) : v;
}

/* y's 2×2 blocks = Aᵀ O A + bias, A ᵀ = [1 1 1 0; 0 1 -1 -1], activated and
 * stored where they fall inside ho × wo. */
static void wino_output(const wino_job *j, const float *o, int64_t nt, int64_t ty0,
                        const float *bias, float *yg) {
    const tx_conv_call *c = j->c;
    const int64_t mg = c->mg, xs = mg * nt;
    for (int64_t m = 0; m < mg; m++) {
        tx_f32x4 b = tx_v4_set1(bias ? bias[m] : 0.0f);
        float *ym = yg + m * c->ho * c->wo;
        for (int64_t ry = 0; ry < nt / j->tw; ry++)
            for (int64_t tx = 0; tx < j->tw; tx += 4) {
                const float *op = o + m * nt + ry * j->tw + tx;
                tx_f32x4 q[4][4];
                for (int i = 0; i < 16; i++)
                    q[i / 4][i % 4] = tx_v4_load(op + i * xs);
                tx_f32x4 t[2][4];
                for (int k = 0; k < 4; k++) {
                    t[0][k] = tx_v4_add(tx_v4_add(q[0][k], q[1][k]), q[2][k]);
                    t[1][k] = tx_v4_sub(tx_v4_sub(q[1][k], q[2][k]), q[3][k]);
                }
                int64_t ox = 2 * tx, n = c->wo - ox < 8 ? c->wo - ox : 8;
                for (int i = 0; i < 2; i++) {
                    int64_t oy = 2 * (ty0 + ry) + i;
                    if (oy >= c->ho || n <= 0)
                        break;
                    tx_f32x4 y0 = tx_v4_add(tx_v4_add(tx_v4_add(t[i][0], t[i][1]), t[i][2]), b);
                    tx_f32x4 y1 = tx_v4_add(tx_v4_sub(tx_v4_sub(t[i][1], t[i][2]), t[i][3]), b);
                    tx_f32x4 lo = wino_act(tx_v4_zip_lo(y0, y1), j);
                    tx_f32x4 hi = wino_act(tx_v4_zip_hi(y0, y1), j);
                    float *yr = ym + oy * c->wo + ox;
                    if (n == 8) {
                        tx_v4_store(yr, lo);
                        tx_v4_store(yr + 4, hi);
                    } else {
                        float tmp[8];
                        tx_v4_store(tmp, lo);
                        tx_v4_store(tmp + 4, hi);
                        memcpy(yr, tmp, (size_t)n * sizeof(float));
                    }
                }
            }
    }
}

/* Lanes l of a[0..3] as the vectors of their columns: out[k][l] = a[l][k]. */
static inline void transpose4(const tx_f32x4 a[4], tx_f32x4 out[4]) {
    tx_f32x4 t0 = tx_v4_zip_lo(a[0], a[2]), t1 = tx_v4_zip_hi(a[0], a[2]);
    tx_f32x4 t2 = tx_v4_zip_lo(a[1], a[3]), t3 = tx_v4_zip_hi(a[1], a[3]);
    out[0] = tx_v4_zip_lo(t0, t2);
    out[1] = tx_v4_zip_hi(t0, t2);
    out[2] = tx_v4_zip_lo(t1, t3);
    out[3] = tx_v4_zip_hi(t1, t3);
}

/* Bᵀ of F(4×4, 3×3) on six vectors: rows (4 0 -5 0 1 0), (0 -4 -4 1 1 0),
 * (0 4 -4 -1 1 0), (0 -2 -1 2 1 0), (0 2 -1 -2 1 0), (0 4 0 -5 0 1). */
static inline void wino4_bt(const tx_f32x4 d[6], tx_f32x4 o[6]) {
    const tx_f32x4 four = tx_v4_set1(4.0f), five = tx_v4_set1(5.0f), two = tx_v4_set1(2.0f);
    tx_f32x4 a = tx_v4_sub(d[4], d[2]);                  /* d4 - d2 */
    tx_f32x4 b = tx_v4_sub(d[3], tx_v4_mul(four, d[1])); /* d3 - 4 d1 */
    tx_f32x4 e = tx_v4_sub(d[4], tx_v4_mul(four, d[2])); /* d4 - 4 d2 */
    tx_f32x4 f = tx_v4_mul(two, tx_v4_sub(d[3], d[1]));  /* 2 (d3 - d1) */
    o[0] = tx_v4_add(tx_v4_mul(four, d[0]), tx_v4_sub(d[4], tx_v4_mul(five, d[2])));
    o[1] = tx_v4_add(e, b);
    o[2] = tx_v4_sub(e, b);
    o[3] = tx_v4_add(a, f);
    o[4] = tx_v4_sub(a, f);
    o[5] = tx_v4_add(tx_v4_mul(four, d[1]), tx_v4_sub(d[5], tx_v4_mul(five, d[3])));
}

/* V[ξ][ci][t] = (Bᵀ d B)[ξ] for F(4×4, 3×3): 6×6 windows 4 apart, 4 tiles
 * per vector (columns by 4×4 transposes of the rows). */
static void wino4_input(const wino_job *j, const float *sb, int64_t nt, float *v) {
    const tx_conv_call *c = j->c;
    const int64_t nrow = 4 * j->rows + 2, wp = j->wp, cg = c->cg;
    const int64_t xs = cg * nt; /* one ξ to the next */
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t ry = 0; ry < nt / j->tw; ry++)
            for (int64_t tx = 0; tx < j->tw; tx += 4) {
                tx_f32x4 t[6][6]; /* t[k][r]: Bᵀ over rows, column k */
                {
                    tx_f32x4 d[6][6]; /* d[k][r]: column k of window row r */
                    for (int r = 0; r < 6; r++) {
                        const float *p = sb + (ci * nrow + 4 * ry + r) * wp + 4 * tx;
                        tx_f32x4 a[5], cols[4], cols2[4];
                        for (int q = 0; q < 5; q++)
                            a[q] = tx_v4_load(p + 4 * q);
                        transpose4(a, cols);
                        transpose4(a + 1, cols2);
                        for (int k = 0; k < 4; k++)
                            d[k][r] = cols[k];
                        d[4][r] = cols2[0];
                        d[5][r] = cols2[1];
                    }
                    for (int k = 0; k < 6; k++)
                        wino4_bt(d[k], t[k]);
                }
                float *o = v + ci * nt + ry * j->tw + tx;
                for (int i = 0; i < 6; i++) {
                    tx_f32x4 row[6], out[6];
                    for (int k = 0; k < 6; k++)
                        row[k] = t[k][i];
                    wino4_bt(row, out);
                    for (int k = 0; k < 6; k++)
                        tx_v4_store(o + (6 * i + k) * xs, out[k]);
                }
            }
}

/* Aᵀ of F(4×4, 3×3) on six vectors: rows (1 1 1 1 1 0), (0 1 -1 2 -2 0),
 * (0 1 1 4 4 0), (0 1 -1 8 -8 1). */
static inline void wino4_at(const tx_f32x4 q[6], tx_f32x4 o[4]) {
    tx_f32x4 s12 = tx_v4_add(q[1], q[2]), d12 = tx_v4_sub(q[1], q[2]);
    tx_f32x4 s34 = tx_v4_add(q[3], q[4]), d34 = tx_v4_sub(q[3], q[4]);
    o[0] = tx_v4_add(tx_v4_add(q[0], s12), s34);
    o[1] = tx_v4_add(d12, tx_v4_mul(tx_v4_set1(2.0f), d34));
    o[2] = tx_v4_add(s12, tx_v4_mul(tx_v4_set1(4.0f), s34));
    o[3] = tx_v4_add(tx_v4_add(d12, tx_v4_mul(tx_v4_set1(8.0f), d34)), q[5]);
}

/* y's 4×4 blocks = Aᵀ O A + bias, activated and stored where they fall
 * inside ho × wo (4 tiles' rows are 16 consecutive outputs). */
static void wino4_output(const wino_job *j, const float *o, int64_t nt, int64_t ty0,
                         const float *bias, float *yg) {
    const tx_conv_call *c = j->c;
    const int64_t mg = c->mg, xs = mg * nt;
    for (int64_t m = 0; m < mg; m++) {
        tx_f32x4 b = tx_v4_set1(bias ? bias[m] : 0.0f);
        float *ym = yg + m * c->ho * c->wo;
        for (int64_t ry = 0; ry < nt / j->tw; ry++)
            for (int64_t tx = 0; tx < j->tw; tx += 4) {
                const float *op = o + m * nt + ry * j->tw + tx;
                tx_f32x4 t[6][4]; /* t[k][i]: Aᵀ over rows, column k */
                for (int k = 0; k < 6; k++) {
                    tx_f32x4 q[6];
                    for (int r = 0; r < 6; r++)
                        q[r] = tx_v4_load(op + (6 * r + k) * xs);
                    wino4_at(q, t[k]);
                }
                int64_t ox = 4 * tx, n = c->wo - ox < 16 ? c->wo - ox : 16;
                for (int i = 0; i < 4; i++) {
                    int64_t oy = 4 * (ty0 + ry) + i;
                    if (oy >= c->ho || n <= 0)
                        break;
                    tx_f32x4 row[6], yv[4], out[4];
                    for (int k = 0; k < 6; k++)
                        row[k] = t[k][i];
                    wino4_at(row, yv);
                    for (int k = 0; k < 4; k++)
                        yv[k] = tx_v4_add(yv[k], b);
                    transpose4(yv, out); /* out[l]: tile l's 4 columns */
                    float *yr = ym + oy * c->wo + ox;
                    if (n == 16) {
                        for (int l = 0; l < 4; l++)
                            tx_v4_store(yr + 4 * l, wino_act(out[l], j));
                    } else {
                        float tmp[16];
                        for (int l = 0; l < 4; l++)
                            tx_v4_store(tmp + 4 * l, wino_act(out[l], j));
                        memcpy(yr, tmp, (size_t)n * sizeof(float));
                    }
                }
            }
    }
}

static void wino_items(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    wino_job *j = arg;
    const tx_conv_call *c = j->c;
    const int T = j->t;
    const int64_t cg = c->cg, mg = c->mg, th = (c->ho + T - 1) / T;
    const int64_t tmax = j->rows * j->tw;
    size_t sb_n = (size_t)(cg * (T * j->rows + 2) * j->wp);
    size_t v_n = (size_t)(j->nx * cg * tmax), o_n = (size_t)(j->nx * mg * tmax);
    float *sb = malloc(sb_n * sizeof(float)), *v = malloc(v_n * sizeof(float));
    float *o = malloc(o_n * sizeof(float));
    if (!sb || !v || !o) {
        j->st = TX_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    const float *x, *w, *bias;
    float *y = conv_data(c, &x, &w, &bias);
    for (int64_t it = begin; it < end; it++) {
        int64_t strip = it % j->strips, gi = it / j->strips % c->groups;
        int64_t n = it / j->strips / c->groups;
        int64_t ty0 = strip * j->rows;
        int64_t nt = (th - ty0 < j->rows ? th - ty0 : j->rows) * j->tw;
        const float *xg = x + (n * c->c + gi * cg) * c->h * c->w;
        float *yg = y + (n * c->m + gi * mg) * c->ho * c->wo;
        wino_fill(j, xg, ty0, sb);
        if (T == 4)
            wino4_input(j, sb, nt, v);
        else
            wino_input(j, sb, nt, v);
        const float *ug = j->u + gi * j->nx * mg * cg;
        for (int xi = 0; xi < j->nx; xi++) {
            tx_gemm g = {.M = mg,
                         .N = nt,
                         .K = cg,
                         .A = ug + xi * mg * cg,
                         .lda = cg,
                         .B = v + xi * cg * nt,
                         .ldb = nt,
                         .C = o + xi * mg * nt,
                         .ldc = nt};
            tx_cpu_sgemm(NULL, &g);
        }
        const float *bg = bias ? bias + gi * mg : NULL;
        if (T == 4)
            wino4_output(j, o, nt, ty0, bg, yg);
        else
            wino_output(j, o, nt, ty0, bg, yg);
        if (j->act == 2)
            for (int64_t m = 0; m < mg; m++) {
                /* the rows this strip wrote */
                int64_t oy0 = T * ty0, oy1 = T * ty0 + T * (nt / j->tw);
                oy1 = oy1 > c->ho ? c->ho : oy1;
                float *p = yg + (m * c->ho + oy0) * c->wo;
                tx_cpu_unary_apply(c->act, c->lo, c->hi, p, p, (oy1 - oy0) * c->wo);
            }
    }
done:
    free(sb);
    free(v);
    free(o);
}

static tx_status conv_winograd(tx_ctx *ctx, const tx_conv_call *c, int T) {
    wino_job j = {.c = c, .t = T, .nx = (T + 2) * (T + 2)};
    store_act(c, &j.act, &j.lo, &j.hi);
    const int64_t th = (c->ho + T - 1) / T;
    j.tw = ((c->wo + T - 1) / T + 3) / 4 * 4;
    j.wp = T * j.tw + T; /* F(4×4)'s transposes read a vector past the last window */
    /* V and O of a strip (nx·cg·T and nx·mg·T floats) within about 512 KiB
     * each: V stays in L2 between its transform and the GEMMs, and a layer
     * with many outputs does not make a strip's scratch large */
    int64_t tiles = 131072 / (j.nx * (c->cg > c->mg ? c->cg : c->mg));
    j.rows = tiles / j.tw < 1 ? 1 : tiles / j.tw;
    j.rows = j.rows > th ? th : j.rows;
    j.strips = (th + j.rows - 1) / j.rows;
    /* U stays with the weights while they are unchanged (a model's layer
     * runs again with the same U) */
    const int64_t un = c->groups * j.nx * c->mg * c->cg;
    const int64_t k[] = {T, c->groups, c->mg, c->cg};
    bool valid;
    float *kept = tx_cpu_derived(ctx, c->wt->st, tx_fnv1a((const char *)k, sizeof k), un, &valid);
    float *u = kept ? kept : malloc((size_t)un * sizeof(float));
    if (!u)
        return oom(ctx, c);
    const float *x, *w, *bias;
    conv_data(c, &x, &w, &bias);
    if (!valid && T == 4)
        wino4_weights(c, w, u);
    else if (!valid)
        wino_weights(c, w, u);
    j.u = u;
    tx_cpu_for(ctx, c->n * c->groups * j.strips, 1, wino_items, &j);
    if (!kept)
        free(u);
    return j.st ? oom(ctx, c) : TX_STATUS_OK;
}

/* ---- ConvTranspose ---- */

/* The col scratch: at most this many floats (four times, at least one row). */
#define TX_CONV_COL_FLOATS (128 * 1024)

/* A ConvTranspose whose kernel equals its stride (dilation 1, no padding,
 * no output padding) writes every output once: output (oy, ox) is col row
 * (mi, oy % kh, ox % kw) at input (oy / kh, ox / kw). Those scatter and
 * finish in one pass over y, rows in parallel, bias and activation while a
 * row is in cache: no zeroing, no += and no second pass. */
static bool convt_tiles(const tx_conv_call *c) {
    return c->kh == c->sh && c->kw == c->sw && c->dh == 1 && c->dw == 1 && c->pt == 0 &&
           c->pl == 0 && c->ho == c->h * c->sh && c->wo == c->w * c->sw;
}

typedef struct convt_job {
    const tx_conv_call *c;
    const float *col, *bias;
    float *yg;       /* the group's first output plane */
    int64_t iy0, nr; /* the tile's input rows */
    int64_t mi0;     /* the group's first output channel */
} convt_job;

/* Items: (mi, input row of the tile); each writes kh output rows. */
static void convt_rows(void *arg, int64_t begin, int64_t end, int thread) {
    (void)thread;
    const convt_job *j = arg;
    const tx_conv_call *c = j->c;
    const int64_t w = c->w, wo = c->wo, np = j->nr * w, HWo = c->ho * wo;
    for (int64_t it = begin; it < end; it++) {
        int64_t mi = it / j->nr, r = it % j->nr, iy = j->iy0 + r;
        float b = j->bias ? j->bias[j->mi0 + mi] : 0.0f;
        for (int ky = 0; ky < c->kh; ky++) {
            float *yr = j->yg + mi * HWo + (iy * c->kh + ky) * wo;
            const float *cr = j->col + ((mi * c->kh + ky) * c->kw) * np + r * w;
            int64_t ix = 0;
            if (c->kw == 2) { /* two col rows zipped */
                const float *c0 = cr, *c1 = cr + np;
                tx_f32x4 vb = tx_v4_set1(b);
                for (; ix + 4 <= w; ix += 4) {
                    tx_f32x4 a = tx_v4_add(tx_v4_load(c0 + ix), vb);
                    tx_f32x4 e = tx_v4_add(tx_v4_load(c1 + ix), vb);
                    tx_v4_store(yr + 2 * ix, tx_v4_zip_lo(a, e));
                    tx_v4_store(yr + 2 * ix + 4, tx_v4_zip_hi(a, e));
                }
            }
            for (; ix < w; ix++)
                for (int kx = 0; kx < c->kw; kx++)
                    yr[ix * c->kw + kx] = cr[kx * np + ix] + b;
            if (c->act != TX_OP_NONE)
                tx_cpu_unary_apply(c->act, c->lo, c->hi, yr, yr, wo);
        }
    }
}

static tx_status conv_transpose(tx_ctx *ctx, const tx_conv_call *c) {
    int64_t HWi = c->h * c->w, HWo = c->ho * c->wo;
    const bool tiles = convt_tiles(c);
    int64_t R = c->mg * c->kh * c->kw; /* col rows: (mi, ky, kx) */
    /* input rows per tile, so the col scratch stays bounded */
    int64_t rows = TX_CONV_COL_FLOATS * 4 / (R * c->w > 0 ? R * c->w : 1);
    rows = rows < 1 ? 1 : (rows > c->h ? c->h : rows);
    float *col = malloc((size_t)(R * rows * c->w) * sizeof(float));
    if (!col)
        return oom(ctx, c);
    const float *x, *w, *bias;
    float *y = conv_data(c, &x, &w, &bias);
    if (!tiles)
        memset(y, 0, (size_t)(c->n * c->m * HWo) * sizeof(float));
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t gi = 0; gi < c->groups; gi++) {
            float *yg = y + (n * c->m + gi * c->mg) * HWo;
            for (int64_t iy0 = 0; iy0 < c->h; iy0 += rows) {
                int64_t nr = c->h - iy0 < rows ? c->h - iy0 : rows, np = nr * c->w;
                /* col[R × np] = W_gᵀ · x_g: W_g is cg × R */
                tx_gemm g = {.M = R,
                             .N = np,
                             .K = c->cg,
                             .A = w + gi * c->cg * R,
                             .lda = R,
                             .trans_a = true,
                             .B = x + (n * c->c + gi * c->cg) * HWi + iy0 * c->w,
                             .ldb = HWi,
                             .C = col,
                             .ldc = np};
                tx_cpu_sgemm(tx_cpu_pool_of(ctx), &g);
                if (tiles) {
                    convt_job j = {.c = c,
                                   .col = col,
                                   .bias = bias,
                                   .yg = yg,
                                   .iy0 = iy0,
                                   .nr = nr,
                                   .mi0 = gi * c->mg};
                    tx_cpu_for(ctx, c->mg * nr, 1, convt_rows, &j);
                    continue;
                }
                for (int64_t r = 0; r < R; r++) {
                    int kx = (int)(r % c->kw), ky = (int)(r / c->kw % c->kh);
                    float *ym = yg + (r / ((int64_t)c->kw * c->kh)) * HWo;
                    const float *cr = col + r * np;
                    for (int64_t iy = iy0; iy < iy0 + nr; iy++) {
                        int64_t oy = iy * c->sh - c->pt + (int64_t)ky * c->dh;
                        if (oy < 0 || oy >= c->ho)
                            continue;
                        float *yr = ym + oy * c->wo;
                        const float *cc = cr + (iy - iy0) * c->w;
                        for (int64_t ix = 0; ix < c->w; ix++) {
                            int64_t ox = ix * c->sw - c->pl + (int64_t)kx * c->dw;
                            if (ox >= 0 && ox < c->wo)
                                yr[ox] += cc[ix];
                        }
                    }
                }
            }
        }
    free(col);
    for (int64_t n = 0; n < c->n && !tiles; n++)
        for (int64_t mi = 0; mi < c->m; mi++) {
            float *ym = y + (n * c->m + mi) * HWo;
            if (bias) {
                float b = bias[mi];
                for (int64_t i = 0; i < HWo; i++)
                    ym[i] += b;
            }
            if (c->act != TX_OP_NONE)
                tx_cpu_unary_apply(c->act, c->lo, c->hi, ym, ym, HWo);
        }
    return TX_STATUS_OK;
}

static tx_status conv_route(tx_ctx *ctx, const tx_conv_call *c);

/* src [a, b, h, w] into dst [b, a, ch, cw] (ch <= h, cw <= w): the first two
 * dims swapped, each plane cut to its first ch x cw positions. */
static void swap01(const float *src, int64_t a, int64_t b, int64_t h, int64_t w, int64_t ch,
                   int64_t cw, float *dst) {
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++)
            for (int64_t r = 0; r < ch; r++)
                memcpy(dst + ((j * a + i) * ch + r) * cw, src + ((i * b + j) * h + r) * w,
                       (size_t)cw * sizeof(float));
}

/* swap_nc: the conv of transposed copies of x and w into a scratch output,
 * then y from it transposed and cut (the GPU reads and writes them in place;
 * here the copies cost one pass over each, as the transposes did). */
static tx_status conv_swapped(tx_ctx *ctx, const tx_conv_call *c) {
    int64_t xn = c->x->numel, wn = c->wt->numel;
    int64_t on = c->n * c->m * c->ho * c->wo;
    int64_t xa = (xn + 15) & ~(int64_t)15, wa = (wn + 15) & ~(int64_t)15; /* 64-byte aligned */
    /* aligned_alloc wants a multiple of the alignment (emscripten's refuses others) */
    int64_t ya = (on + 15) & ~(int64_t)15;
    float *buf = aligned_alloc(64, (size_t)(xa + wa + ya) * sizeof(float));
    if (!buf)
        return oom(ctx, c);
    /* temporaries: no derived copies (refs 0: tx_cpu_derived keeps none) */
    tx_storage xst = {.dev = TX_DEVICE_CPU, .host = buf};
    tx_storage wst = {.dev = TX_DEVICE_CPU, .host = buf + xa};
    tx_storage yst = {.dev = TX_DEVICE_CPU, .host = buf + xa + wa};
    tx_slot xs = *c->x, ws = *c->wt, ys = *c->y;
    swap01(tx_cpu_data(c->x), c->c, c->n, c->h, c->w, c->h, c->w, xst.host);
    swap01(tx_cpu_data(c->wt), c->cg, c->m, c->kh, c->kw, c->kh, c->kw, wst.host);
    xs.st = &xst;
    ws.st = &wst;
    ys.st = &yst;
    ys.numel = on;
    tx_conv_call t = *c;
    t.swap_nc = false;
    t.x = &xs;
    t.wt = &ws;
    t.y = &ys;
    tx_status st = conv_route(ctx, &t);
    if (!st)
        swap01(yst.host, c->n, c->m, c->ho, c->wo, c->yh, c->yw, tx_cpu_data(c->y));
    free(buf);
    return st;
}

/* A residual is added after the conv's own epilogue (bias), then the
 * activation: one more pass over y, in place. A residual_pad residual
 * (fewer channels) covers the first part of each image's output. */
tx_status tx_cpu_conv(tx_ctx *ctx, const tx_conv_call *c) {
    TX_ASSERT(!c->xa); /* the front runs x_affine as an op of its own here */
    if (c->swap_nc)
        return conv_swapped(ctx, c);
    if (!c->resid)
        return conv_route(ctx, c);
    tx_conv_call base = *c;
    base.act = TX_OP_NONE;
    base.resid = NULL;
    tx_status st = conv_route(ctx, &base);
    if (st)
        return st;
    float *y = tx_cpu_data(c->y);
    const float *r = tx_cpu_data(c->resid);
    if (c->resid->numel == c->y->numel) {
        tx_cpu_add_act(ctx, y, r, c->y->numel, c->act, c->lo, c->hi);
        return TX_STATUS_OK;
    }
    int64_t yn = c->n ? c->y->numel / c->n : 0, rn = c->n ? c->resid->numel / c->n : 0;
    for (int64_t n = 0; n < c->n; n++) {
        tx_cpu_add_act(ctx, y + n * yn, r + n * rn, rn, c->act, c->lo, c->hi);
        if (c->act != TX_OP_NONE)
            tx_cpu_add_act(ctx, y + n * yn + rn, NULL, yn - rn, c->act, c->lo, c->hi);
    }
    return TX_STATUS_OK;
}

static tx_status conv_route(tx_ctx *ctx, const tx_conv_call *c) {
    if (c->transpose)
        return conv_transpose(ctx, c);
    if (c->groups == c->c && c->cg == 1 && c->mg == 1)
        return conv_depthwise(ctx, c);
    int tile = wino_tile(c);
    if (tile)
        return conv_winograd(ctx, c, tile);
    return conv_gemm(ctx, c);
}
