/* SGEMM for the CPU device, the BLIS/OpenBLAS way:
 *
 *   for jc over N by NC:                       B block: KC×NC, in L3
 *     for pc over K by KC:
 *       pack B[pc.., jc..] into NR-wide panels (the threads share the work)
 *       parallel over (M blocks of MC) × (N splits), each task:
 *         pack its A block into MR-high panels  A block: MC×KC, in L2
 *         for each NR panel, for each MR panel: micro-kernel (MR×NR in registers,
 *           B micro-panel KC×NR in L1), with the epilogue in its store:
 *           first K block: C = acc (or C += acc when accumulating), later: C += acc;
 *           last K block: + bias, activation.
 *   Edge tiles: packing pads with zeros, the kernel computes a whole tile into
 *   registers and stores only the valid part (through a small buffer).
 *
 * A B that is not transposed and at most DIRECT_B_MAX_K deep is not packed:
 * the kernels read its panels where they are (ldb apart; see below).
 *
 * Tiny products (M·N·K <= 4096 or K == 0) use a plain loop, and M == 1 or
 * N == 1 (matrix-vector) a dot/axpy loop, because packing would dominate.
 *
 * Dispatch: x86-64 builds compile the AVX2+FMA kernel (6×16, 12 ymm
 * accumulators) with __attribute__((target)) next to the baseline SSE2 one
 * (4×8, 8 xmm accumulators), and pick at run time with
 * __builtin_cpu_supports: one binary is fast on current CPUs and still runs on
 * any x86-64, with no build option and nothing the rest of the engine must be
 * compiled with. wasm simd128 uses the same 4×8 kernel (16 vector registers
 * there too), AArch64 NEON a 6×8 one (32 registers), and TX_NO_SIMD builds
 * the 6×8 code on plain floats. An AVX-512 kernel would go next to the AVX2
 * one the same way. */
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#include "simd.h"

/* What one micro-kernel call stores (see the file comment). */
typedef struct {
    int mr, nr;            /* valid rows and columns of this tile */
    bool load_c;           /* C += acc (else C = acc) */
    bool last;             /* last K block: add bias, apply act */
    const float *bias_col; /* bias of the tile's first column, or NULL */
    const float *bias_row; /* bias of the tile's first row, or NULL */
    int act;               /* TX_GEMM_ACT_* (RELU is CLIP with lo 0, hi +inf) */
    float lo, hi;
    int64_t lda; /* kernels that read A by rows: the row stride */
    int64_t ldb; /* from one depth step of B's panel to the next: NR when packed, B's
                    row stride when the kernel reads B where it is */
} tile_epi;

/* k: depth; a: A's tile, a packed MR×k panel (k columns of MR) or, for a
 * kernel that reads A by rows, row r at a + r·e->lda; b: packed k×NR panel. */
typedef void (*ukernel_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc,
                           const tile_epi *e);

typedef struct {
    const char *name;
    int mr, nr;
    int64_t kc, mc, nc; /* cache blocks: mc a multiple of mr, nc of nr */
    ukernel_fn fn;
    bool a_rows; /* fn reads A by rows (see the tile_epi's lda) */
} kernel_info;

static inline float act1(float v, const tile_epi *e) {
    if (e->act == TX_GEMM_ACT_NONE)
        return v;
    if (e->act == TX_GEMM_ACT_HARD_SWISH)
        return tx_hard_swish1(v);
    v = v < e->lo ? e->lo : v;
    return e->act == TX_GEMM_ACT_CLIP && v > e->hi ? e->hi : v;
}

/* Stores the valid mr×nr part of a tile held in t (row stride ts). */
static void store_partial(const float *t, int ts, float *c, int64_t ldc, const tile_epi *e) {
    for (int r = 0; r < e->mr; r++) {
        float *cr = c + r * ldc;
        const float *tr = t + r * ts;
        for (int j = 0; j < e->nr; j++) {
            float v = tr[j];
            if (e->load_c)
                v += cr[j];
            if (e->last) {
                if (e->bias_col)
                    v += e->bias_col[j];
                if (e->bias_row)
                    v += e->bias_row[r];
                v = act1(v, e);
            }
            cr[j] = v;
        }
    }
}

/* ---- 4-wide kernels: 6×8 (NEON, scalar), 4×8 (SSE2, wasm simd128) ------------- */

#if defined(TX_NO_SIMD) || defined(__aarch64__)
#define TX_GEMM_V4_6X8 1 /* enough registers (or none at all): 6×8 */
#endif

/* The tile epilogue on one vector v of row r, columns j…: add C (cp) when
 * accumulating, then on the last depth block the biases and the activation;
 * vN names the vector width's functions (tx_v4, tx_v8). */
#define EPILOGUE(vN)                                                                               \
    if (e->load_c)                                                                                 \
        v = vN##_add(v, vN##_load(cp));                                                            \
    if (e->last) {                                                                                 \
        if (e->bias_col)                                                                           \
            v = vN##_add(v, vN##_load(e->bias_col + j));                                           \
        if (e->bias_row)                                                                           \
            v = vN##_add(v, vN##_set1(e->bias_row[r]));                                            \
        if (e->act == TX_GEMM_ACT_HARD_SWISH) {                                                    \
            v = vN##_hard_swish(v);                                                                \
        } else if (e->act) {                                                                       \
            v = vN##_max(vN##_set1(e->lo), v);                                                     \
            if (e->act == TX_GEMM_ACT_CLIP)                                                        \
                v = vN##_min(vN##_set1(e->hi), v);                                                 \
        }                                                                                          \
    }                                                                                              \
    return v

static inline tx_f32x4 epi4(tx_f32x4 v, const float *cp, const tile_epi *e, int r, int j) {
    EPILOGUE(tx_v4);
}

/* Stores a 4-wide kernel's rows×8 tile of accumulators (acc[r][0..1]) with
 * the epilogue: straight into C when whole, else through store_partial. */
static void store_v4x8(tx_f32x4 acc[][2], int rows, float *c, int64_t ldc, const tile_epi *e) {
    if (e->mr == rows && e->nr == 8) {
        for (int r = 0; r < rows; r++) {
            float *cr = c + r * ldc;
            tx_v4_store(cr, epi4(acc[r][0], cr, e, r, 0));
            tx_v4_store(cr + 4, epi4(acc[r][1], cr + 4, e, r, 4));
        }
        return;
    }
    float t[6 * 8];
    for (int r = 0; r < rows; r++) {
        tx_v4_store(t + r * 8, acc[r][0]);
        tx_v4_store(t + r * 8 + 4, acc[r][1]);
    }
    store_partial(t, 8, c, ldc, e);
}

/* A is read by rows here: row r of the tile at a + r·lda (e->lda), the A
 * matrix itself when it is not transposed (no packing: 5–7% on square
 * products in V8, 20–25% when N is small, as in a conv's 3136×64×576), else
 * a row-major panel that pack_a wrote. Rows past the tile's mr read row 0
 * again and are not stored. */
#ifdef TX_GEMM_V4_6X8
static void kern_v4_6x8(int64_t k, const float *restrict a, const float *restrict b,
                        float *restrict c, int64_t ldc, const tile_epi *e) {
    tx_f32x4 z = tx_v4_set1(0.0f);
    tx_f32x4 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z;
    tx_f32x4 c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    const int64_t ldb = e->ldb;
    tx_f32x4 b0, b1, s;
    const float *a0 = a, *a1 = a + (e->mr > 1 ? e->lda : 0), *a2 = a + (e->mr > 2 ? 2 * e->lda : 0);
    const float *a3 = a + (e->mr > 3 ? 3 * e->lda : 0), *a4 = a + (e->mr > 4 ? 4 * e->lda : 0);
    const float *a5 = a + (e->mr > 5 ? 5 * e->lda : 0);
#define FMA2(r, sv)                                                                                \
    s = sv;                                                                                        \
    c##r##0 = tx_v4_fma(s, b0, c##r##0);                                                           \
    c##r##1 = tx_v4_fma(s, b1, c##r##1)
/* One step of depth: B's two vectors of step q, then for each row r the
 * splat of A(r, q) (S(v<r>, q)) times them into c<r>0 and c<r>1. */
#define STEP(q, S)                                                                                 \
    b0 = tx_v4_load(b + (q)*ldb);                                                                  \
    b1 = tx_v4_load(b + (q)*ldb + 4);                                                              \
    FMA2(0, S(v0, q));                                                                             \
    FMA2(1, S(v1, q));                                                                             \
    FMA2(2, S(v2, q));                                                                             \
    FMA2(3, S(v3, q));                                                                             \
    FMA2(4, S(v4, q));                                                                             \
    FMA2(5, S(v5, q))
#define LANE(v, q) TX_V4_LANE(v, q)
#define SAME(v, q) v
    int64_t p = 0;
    /* 4 steps at a time: 4 values of each row in one vector load, each
     * splat by a shuffle, instead of 24 scalar load-splats; with the
     * unrolling, wasm SIMD in V8 went from 35 to 46 GFLOP/s on matmul 1024
     * (XNNPACK's "splat" kernels do the same). */
    for (; p + 4 <= k; p += 4) {
        tx_f32x4 v0 = tx_v4_load(a0 + p), v1 = tx_v4_load(a1 + p), v2 = tx_v4_load(a2 + p);
        tx_f32x4 v3 = tx_v4_load(a3 + p), v4 = tx_v4_load(a4 + p), v5 = tx_v4_load(a5 + p);
        STEP(0, LANE);
        STEP(1, LANE);
        STEP(2, LANE);
        STEP(3, LANE);
        b += 4 * ldb;
    }
    for (; p < k; p++) {
        tx_f32x4 v0 = tx_v4_set1(a0[p]), v1 = tx_v4_set1(a1[p]), v2 = tx_v4_set1(a2[p]);
        tx_f32x4 v3 = tx_v4_set1(a3[p]), v4 = tx_v4_set1(a4[p]), v5 = tx_v4_set1(a5[p]);
        STEP(0, SAME);
        b += ldb;
    }
#undef SAME
#undef LANE
#undef STEP
#undef FMA2
    tx_f32x4 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    store_v4x8(acc, 6, c, ldc, e);
}

#else
/* 4×8, A by rows like the 6×8 one, each A value splat straight from memory
 * (wasm's v128.load32_splat) rather than shuffled out of a vector: 8
 * accumulators, 2 B vectors and 1 splat fit the 16 vector registers V8 has on
 * x86-64, where the 6×8 kernel's 21 live vectors spill. Measured in Node on a
 * Zen 4 (kernel alone, packed B in cache): 38.6 GFLOP/s against 31.3 for the
 * 6×8 splat kernel, 26.6 for a 6×8 load-splat, 22.7 for 5×8. */
static void kern_v4_4x8(int64_t k, const float *restrict a, const float *restrict b,
                        float *restrict c, int64_t ldc, const tile_epi *e) {
    tx_f32x4 z = tx_v4_set1(0.0f);
    tx_f32x4 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z, c30 = z, c31 = z;
    const float *a0 = a, *a1 = a + (e->mr > 1 ? e->lda : 0), *a2 = a + (e->mr > 2 ? 2 * e->lda : 0);
    const float *a3 = a + (e->mr > 3 ? 3 * e->lda : 0);
    const int64_t ldb = e->ldb;
    for (int64_t p = 0; p < k; p++) {
        tx_f32x4 b0 = tx_v4_load(b), b1 = tx_v4_load(b + 4), s;
#define FMA2(r)                                                                                    \
    s = tx_v4_load_splat(a##r + p);                                                                \
    c##r##0 = tx_v4_fma(s, b0, c##r##0);                                                           \
    c##r##1 = tx_v4_fma(s, b1, c##r##1)
        FMA2(0);
        FMA2(1);
        FMA2(2);
        FMA2(3);
#undef FMA2
        b += ldb;
    }
    tx_f32x4 acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
    store_v4x8(acc, 4, c, ldc, e);
}
#endif

/* ---- AVX2+FMA kernel, 6×16 ---------------------------------------------------- */

#ifdef TX_SIMD_X86

/* X(r) for the kernel's six rows; the accumulators are named c<r>0 and
 * c<r>1, so the row must be a literal for token pasting. */
#define EACH_ROW6(X)                                                                               \
    X(0);                                                                                          \
    X(1);                                                                                          \
    X(2);                                                                                          \
    X(3);                                                                                          \
    X(4);                                                                                          \
    X(5)

TX_TARGET_AVX2 static inline tx_f32x8 epi8(tx_f32x8 v, const float *cp, const tile_epi *e, int r,
                                           int j) {
    EPILOGUE(tx_v8);
}

TX_TARGET_AVX2 static void kern_avx2_6x16(int64_t k, const float *restrict a,
                                          const float *restrict b, float *restrict c, int64_t ldc,
                                          const tile_epi *e) {
    tx_f32x8 z = tx_v8_set1(0.0f);
    tx_f32x8 c00 = z, c01 = z, c10 = z, c11 = z, c20 = z, c21 = z;
    tx_f32x8 c30 = z, c31 = z, c40 = z, c41 = z, c50 = z, c51 = z;
    const int64_t ldb = e->ldb;
    for (int64_t p = 0; p < k; p++) {
        tx_f32x8 b0 = tx_v8_load(b), b1 = tx_v8_load(b + 8), s;
#define ROW8(r)                                                                                    \
    s = tx_v8_set1(a[r]);                                                                          \
    c##r##0 = tx_v8_fma(s, b0, c##r##0);                                                           \
    c##r##1 = tx_v8_fma(s, b1, c##r##1)
        EACH_ROW6(ROW8);
#undef ROW8
        a += 6;
        b += ldb;
    }
    if (e->mr == 6 && e->nr == 16) {
#define STORE8(r)                                                                                  \
    tx_v8_store(c + r * ldc, epi8(c##r##0, c + r * ldc, e, r, 0));                                 \
    tx_v8_store(c + r * ldc + 8, epi8(c##r##1, c + r * ldc + 8, e, r, 8))
        EACH_ROW6(STORE8);
#undef STORE8
        return;
    }
    float t[6 * 16];
#define SPILL8(r)                                                                                  \
    tx_v8_store(t + r * 16, c##r##0);                                                              \
    tx_v8_store(t + r * 16 + 8, c##r##1)
    EACH_ROW6(SPILL8);
#undef SPILL8
    store_partial(t, 16, c, ldc, e);
}

#undef EACH_ROW6

#endif

#undef EPILOGUE

static kernel_info pick_kernel(void) {
#if defined(TX_SIMD_X86) && !defined(TX_GEMM_NO_AVX2) /* tests build the v4 kernel alone */
    if (tx_simd_have_avx2_fma())
        return (kernel_info){"avx2-6x16", 6, 16, 384, 144, 2720, kern_avx2_6x16, false};
#endif
#if defined(TX_NO_SIMD)
    return (kernel_info){"scalar-6x8", 6, 8, 384, 120, 2728, kern_v4_6x8, true};
#elif defined(TX_GEMM_V4_6X8)
    /* 32 vector registers: the 6×8 kernel's 21 live vectors fit */
    return (kernel_info){"v4-6x8", 6, 8, 384, 120, 2728, kern_v4_6x8, true};
#else
    /* 16 vector registers (SSE2, and wasm SIMD as V8 maps it on x86-64) */
    return (kernel_info){"v4-4x8", 4, 8, 384, 120, 2728, kern_v4_4x8, true};
#endif
}

const char *tx_cpu_sgemm_kernel_name(void) {
    return pick_kernel().name;
}

int tx_cpu_sgemm_vector_width(void) {
#ifdef TX_NO_SIMD
    return 1;
#else
    return pick_kernel().nr == 16 ? 8 : 4;
#endif
}

/* ---- packing -------------------------------------------------------------------- */

/* A panel of kc steps × w lanes, d[p * w + l], from a source whose steps are
 * rows: step p's first n lanes at src + p * ld, lanes past n zero. */
static void pack_rows(const float *src, int64_t ld, int n, int w, int64_t kc, float *restrict d) {
    if (n == w && w % 4 == 0) {
        /* whole panels (every one but the last): vector copies, not a
         * memcpy call per step (a library call in wasm) */
        for (int64_t p = 0; p < kc; p++, src += ld, d += w)
            for (int l = 0; l < w; l += 4)
                tx_v4_store(d + l, tx_v4_load(src + l));
        return;
    }
    for (int64_t p = 0; p < kc; p++, src += ld) {
        memcpy(d + p * w, src, (size_t)n * sizeof *src);
        for (int l = n; l < w; l++)
            d[p * w + l] = 0.0f;
    }
}

/* The same panel from a source whose lanes are rows: lane l < n at
 * src + l * ld, step p at offset p; lanes past n zero. */
static void pack_cols(const float *src, int64_t ld, int n, int w, int64_t kc, float *restrict d) {
    int l = 0;
    for (; l < n; l++, src += ld)
        for (int64_t p = 0; p < kc; p++)
            d[p * w + l] = src[p];
    for (; l < w; l++)
        for (int64_t p = 0; p < kc; p++)
            d[p * w + l] = 0.0f;
}

/* A rows [i0, i0+mc) × depth [p0, p0+kc) → MR-high panels, kc columns of MR
 * each, rows past M zero; for a kernel that reads A by rows (a_rows), the
 * block row-major instead (row i0 + i at dst + i·kc), needed only when A is
 * transposed (otherwise that kernel reads A where it is). */
static void pack_a(const tx_gemm *g, int mr, bool a_rows, int64_t i0, int64_t mc, int64_t p0,
                   int64_t kc, float *restrict dst) {
    if (a_rows) {
        for (int64_t i = 0; i < mc; i++)
            for (int64_t p = 0; p < kc; p++)
                dst[i * kc + p] = g->A[(p0 + p) * g->lda + i0 + i];
        return;
    }
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int rows = mc - ir < mr ? (int)(mc - ir) : mr;
        float *d = dst + ir * kc;
        if (g->trans_a)
            pack_rows(g->A + p0 * g->lda + i0 + ir, g->lda, rows, mr, kc, d);
        else
            pack_cols(g->A + (i0 + ir) * g->lda + p0, g->lda, rows, mr, kc, d);
    }
}

/* B depth [p0, p0+kc) × the NR panels [q0, q1) of columns from j0 (ncols
 * valid) → kc rows of NR each per panel, columns past the end zero. */
static void pack_b(const tx_gemm *g, int nr, int64_t j0, int64_t ncols, int64_t p0, int64_t kc,
                   int64_t q0, int64_t q1, float *restrict dst) {
    for (int64_t q = q0; q < q1; q++) {
        int64_t jr = q * nr;
        int cols = ncols - jr < nr ? (int)(ncols - jr) : nr;
        float *d = dst + jr * kc;
        if (!g->trans_b)
            pack_rows(g->B + p0 * g->ldb + j0 + jr, g->ldb, cols, nr, kc, d);
        else
            pack_cols(g->B + (j0 + jr) * g->ldb + p0, g->ldb, cols, nr, kc, d);
    }
}

/* ---- the blocked driver ------------------------------------------------------- */

typedef struct {
    const tx_gemm *g;
    kernel_info ki;
    float lo, hi;
    int64_t jc, nc, pc, kc; /* current B block */
    int64_t mc, mblocks;    /* M blocks */
    int64_t npanels, nsplit, panels_per_split;
    bool first, last; /* K block */
    float *bp;        /* packed B block */
    float **ap;       /* per-thread packed A block */
    bool direct_b;    /* the kernels read B's whole panels where they are */
} gemm_job;

static void pack_b_range(void *arg, int64_t q0, int64_t q1, int thread) {
    (void)thread;
    gemm_job *j = arg;
    const tx_gemm *g = j->g;
    const int nr = j->ki.nr;
    if (g->pack_b) {
        int64_t c0 = q0 * nr, c1 = q1 * nr < j->nc ? q1 * nr : j->nc;
        g->pack_b(g->pack_b_arg, j->pc, j->kc, j->jc + c0, c1 - c0, nr, j->bp + c0 * j->kc);
        return;
    }
    pack_b(g, nr, j->jc, j->nc, j->pc, j->kc, q0, q1, j->bp);
}

static void compute_range(void *arg, int64_t t0, int64_t t1, int thread) {
    gemm_job *j = arg;
    const tx_gemm *g = j->g;
    const int mr = j->ki.mr, nr = j->ki.nr;
    float *ap = j->ap[thread];
    int64_t packed_ib = -1;
    tile_epi e = {0};
    e.load_c = !j->first || g->accumulate;
    e.last = j->last;
    e.act = g->act;
    e.lo = j->lo;
    e.hi = j->hi;
    /* a kernel that reads A by rows reads a plain A in place */
    const bool direct_a = j->ki.a_rows && !g->trans_a;
    e.lda = direct_a ? g->lda : j->kc;
    for (int64_t t = t0; t < t1; t++) {
        int64_t ib = t / j->nsplit, s = t % j->nsplit;
        int64_t i0 = ib * j->mc, mc = g->M - i0 < j->mc ? g->M - i0 : j->mc;
        if (ib != packed_ib && !direct_a) {
            pack_a(g, mr, j->ki.a_rows, i0, mc, j->pc, j->kc, ap);
            packed_ib = ib;
        }
        int64_t q0 = s * j->panels_per_split, q1 = q0 + j->panels_per_split;
        if (q1 > j->npanels)
            q1 = j->npanels;
        for (int64_t q = q0; q < q1; q++) {
            int64_t jr = q * nr, col = j->jc + jr;
            e.nr = j->nc - jr < nr ? (int)(j->nc - jr) : nr;
            const bool in_place = j->direct_b && e.nr == nr;
            const float *bp = in_place ? g->B + j->pc * g->ldb + col : j->bp + jr * j->kc;
            e.ldb = in_place ? g->ldb : nr;
            e.bias_col = g->bias_kind == TX_GEMM_BIAS_COL ? g->bias + col : NULL;
            for (int64_t ir = 0; ir < mc; ir += mr) {
                e.mr = mc - ir < mr ? (int)(mc - ir) : mr;
                e.bias_row = g->bias_kind == TX_GEMM_BIAS_ROW ? g->bias + i0 + ir : NULL;
                const float *a = direct_a ? g->A + (i0 + ir) * g->lda + j->pc : ap + ir * j->kc;
                j->ki.fn(j->kc, a, bp, g->C + (i0 + ir) * g->ldc + col, g->ldc, &e);
            }
        }
    }
}

static void *alloc_floats(int64_t n) {
    size_t bytes = ((size_t)n * sizeof(float) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes ? bytes : 64);
}

static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}

static int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

/* A plain B with a short depth is read in place (its whole NR-wide panels:
 * K rows of NR floats, ldb apart) instead of packed: a 1×1 conv's B is the
 * input itself, K = C_in channels by N = H·W pixels, and packing it was a
 * full extra copy (the MobileNet head's 32→64 1×1 conv at 112×112 in Node,
 * wasm, sampled in turn: 4.80 → 4.01 ms). Deeper B's are packed: their panels'
 * rows, ldb apart, span more pages and cache sets than L1 holds (matmul_512
 * read in place took 20% longer). */
enum { DIRECT_B_MAX_K = 64 };
/* A B of any depth is read in place too when few rows of A share it: each
 * panel then serves at most 64 / MR micro-tiles, too few to repay its
 * packed copy. PP-OCRv4 rec's classifier (40 x 120 -> 6625, B cold:
 * bench/cpu_gemm_bench), one thread, two rounds, packed -> in place:
 * wasm 11.9 / 12.2 -> 17.8 / 20.3 GFLOP/s, native 38 / 43 -> 48 / 42;
 * 40 x 512 -> 1024: wasm 17 / 19 -> 21 / 26, native 38 / 38 -> 50 / 50.
 * At M = 96 or 128 native lost as often as it won. */
enum { DIRECT_B_MAX_M = 64 };
/* Returns false when out of memory (the caller falls back to a slow path). */
static bool gemm_blocked(tx_threadpool *tp, const tx_gemm *g, float lo, float hi) {
    const kernel_info ki = pick_kernel();
    const int nth = tx_threadpool_size(tp);
    gemm_job j = {.g = g, .ki = ki, .lo = lo, .hi = hi};

    /* M blocks of equal size (a multiple of MR) no larger than MC; when they
     * are too few to keep every thread busy, split N too. */
    j.mblocks = ceil_div(g->M, ki.mc);
    j.mc = ceil_div(ceil_div(g->M, j.mblocks), ki.mr) * ki.mr;
    j.mblocks = ceil_div(g->M, j.mc);
    /* K blocks of equal depth (a multiple of 8) no deeper than KC: a K of
     * 576 (a 3×3 conv over 64 channels) is two blocks of 288, not 256, 256
     * and 64, so C is loaded and stored twice, not three times. NC keeps the
     * packed B block near KC·NC floats. */
    const int64_t kblocks = ceil_div(g->K, ki.kc);
    const int64_t kc_max = min64(ceil_div(ceil_div(g->K, kblocks), 8) * 8, g->K);
    const int64_t nc_cap = ki.kc * ki.nc / kc_max / ki.nr * ki.nr;
    const int64_t nc_max = min64(nc_cap, ceil_div(g->N, ki.nr) * ki.nr);

    j.direct_b = !g->trans_b && !g->pack_b && (g->K <= DIRECT_B_MAX_K || g->M <= DIRECT_B_MAX_M);
    j.bp = alloc_floats(kc_max * nc_max);
    j.ap = calloc((size_t)nth, sizeof *j.ap);
    bool ok = j.bp && j.ap;
    for (int t = 0; ok && t < nth; t++)
        ok = (j.ap[t] = alloc_floats(j.mc * kc_max)) != NULL;
    if (ok) {
        for (j.jc = 0; j.jc < g->N; j.jc += nc_max) {
            j.nc = min64(nc_max, g->N - j.jc);
            j.npanels = ceil_div(j.nc, ki.nr);
            j.nsplit = 1;
            if (nth > 1 && j.mblocks < 2 * nth)
                j.nsplit = min64(j.npanels, ceil_div(2 * nth, j.mblocks));
            j.panels_per_split = ceil_div(j.npanels, j.nsplit);
            j.nsplit = ceil_div(j.npanels, j.panels_per_split);
            for (j.pc = 0; j.pc < g->K; j.pc += kc_max) {
                j.kc = min64(kc_max, g->K - j.pc);
                j.first = j.pc == 0;
                j.last = j.pc + j.kc >= g->K;
                /* pack B: one thread per >= 16K floats; read in place,
                 * only a last partial panel */
                int64_t grain = ceil_div(16384, j.kc * ki.nr);
                if (!j.direct_b)
                    tx_parallel_for(tp, j.npanels, grain, pack_b_range, &j);
                else if (j.nc % ki.nr)
                    pack_b_range(&j, j.npanels - 1, j.npanels, 0);
                tx_parallel_for(tp, j.mblocks * j.nsplit, 1, compute_range, &j);
            }
        }
    }
    if (j.ap)
        for (int t = 0; t < nth; t++)
            free(j.ap[t]);
    free(j.ap);
    free(j.bp);
    return ok;
}

/* ---- small and matrix-vector cases -------------------------------------------- */

static inline float finish(float v, float *cp, const tx_gemm *g, int64_t i, int64_t j,
                           const tile_epi *e) {
    if (g->accumulate)
        v += *cp;
    if (g->bias_kind == TX_GEMM_BIAS_COL)
        v += g->bias[j];
    else if (g->bias_kind == TX_GEMM_BIAS_ROW)
        v += g->bias[i];
    return act1(v, e);
}

static inline float a_at(const tx_gemm *g, int64_t i, int64_t k) {
    return g->trans_a ? g->A[k * g->lda + i] : g->A[i * g->lda + k];
}

static inline float b_at(const tx_gemm *g, int64_t k, int64_t j) {
    return g->trans_b ? g->B[j * g->ldb + k] : g->B[k * g->ldb + j];
}

static void gemm_small(const tx_gemm *g, const tile_epi *e) {
    for (int64_t i = 0; i < g->M; i++)
        for (int64_t j = 0; j < g->N; j++) {
            float s = 0.0f;
            for (int64_t k = 0; k < g->K; k++)
                s += a_at(g, i, k) * b_at(g, k, j);
            float *cp = g->C + i * g->ldc + j;
            *cp = finish(s, cp, g, i, j, e);
        }
}

/* Matrix-vector: out[j] = sum_k x[k] · W(k, j) for j in [0, n), where W(k,j) =
 * w[k*wk + j*wj] and one of wk, wj is 1; out[j] = C[j*oc], its bias at
 * bias[j*bs] (bs 0: one value for all). Covers M == 1 (x: A's row, W: B) and
 * N == 1 (x: B's column, W: Aᵀ). */
typedef struct {
    const tx_gemm *g;
    const tile_epi *e;
    int64_t n, K;
    const float *x; /* contiguous copy */
    const float *w;
    int64_t wk, wj;
    float *out;
    int64_t oc;
    const float *bias;
    int64_t bs;
    bool avx2; /* the AVX2+FMA loops may run */
} gemv_job;

enum { GEMV_COLS = 512 };

/* The axpy_cols loops below after their wide blocks: one vector of W
 * columns (type T, functions vN_*) at a time while W columns are left. */
#define AXPY_COLS_ONE_VECTOR(T, vN, W)                                                             \
    for (; j + (W) <= nb; j += (W)) {                                                              \
        T a = vN##_set1(0.0f);                                                                     \
        const float *wp = w + j;                                                                   \
        for (int64_t k = 0; k < K; k++, wp += wk)                                                  \
            a = vN##_fma(vN##_set1(x[k]), vN##_load(wp), a);                                       \
        vN##_store(acc + j, a);                                                                    \
    }

/* acc[j] = sum_k x[k] · w[k*wk + j] for j in [0, nb): column blocks held in
 * registers for the whole K loop (no accumulator traffic through memory). */
static void axpy_cols_v4(int64_t K, const float *x, const float *w, int64_t wk, int64_t nb,
                         float *acc) {
    int64_t j = 0;
    for (; j + 32 <= nb; j += 32) {
        tx_f32x4 a[8];
        for (int i = 0; i < 8; i++)
            a[i] = tx_v4_set1(0.0f);
        const float *wp = w + j;
        for (int64_t k = 0; k < K; k++, wp += wk) {
            tx_f32x4 s = tx_v4_set1(x[k]);
            for (int i = 0; i < 8; i++)
                a[i] = tx_v4_fma(s, tx_v4_load(wp + 4 * i), a[i]);
        }
        for (int i = 0; i < 8; i++)
            tx_v4_store(acc + j + 4 * i, a[i]);
    }
    AXPY_COLS_ONE_VECTOR(tx_f32x4, tx_v4, 4);
    for (; j < nb; j++) {
        float a = 0.0f;
        for (int64_t k = 0; k < K; k++)
            a += x[k] * w[k * wk + j];
        acc[j] = a;
    }
}

#ifdef TX_SIMD_X86
TX_TARGET_AVX2 static void axpy_cols_avx2(int64_t K, const float *x, const float *w, int64_t wk,
                                          int64_t nb, float *acc) {
    int64_t j = 0;
    for (; j + 64 <= nb; j += 64) {
        tx_f32x8 z = tx_v8_set1(0.0f), a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z,
                 a7 = z;
        const float *wp = w + j;
        for (int64_t k = 0; k < K; k++, wp += wk) {
            tx_f32x8 s = tx_v8_set1(x[k]);
            a0 = tx_v8_fma(s, tx_v8_load(wp), a0);
            a1 = tx_v8_fma(s, tx_v8_load(wp + 8), a1);
            a2 = tx_v8_fma(s, tx_v8_load(wp + 16), a2);
            a3 = tx_v8_fma(s, tx_v8_load(wp + 24), a3);
            a4 = tx_v8_fma(s, tx_v8_load(wp + 32), a4);
            a5 = tx_v8_fma(s, tx_v8_load(wp + 40), a5);
            a6 = tx_v8_fma(s, tx_v8_load(wp + 48), a6);
            a7 = tx_v8_fma(s, tx_v8_load(wp + 56), a7);
        }
        tx_v8_store(acc + j, a0);
        tx_v8_store(acc + j + 8, a1);
        tx_v8_store(acc + j + 16, a2);
        tx_v8_store(acc + j + 24, a3);
        tx_v8_store(acc + j + 32, a4);
        tx_v8_store(acc + j + 40, a5);
        tx_v8_store(acc + j + 48, a6);
        tx_v8_store(acc + j + 56, a7);
    }
    AXPY_COLS_ONE_VECTOR(tx_f32x8, tx_v8, 8);
    for (; j < nb; j++) { /* fused like the vector loops: a column's bits do not depend on
                             where the thread chunks split the columns */
        float a = 0.0f;
        for (int64_t k = 0; k < K; k++)
            a = __builtin_fmaf(x[k], w[k * wk + j], a);
        acc[j] = a;
    }
}
#endif

#undef AXPY_COLS_ONE_VECTOR

/* acc[j] = sum_k x[k] · w[j*wj + k] for j in [0, nb). */
static void dot_cols_v4(int64_t K, const float *x, const float *w, int64_t wj, int64_t nb,
                        float *acc) {
    for (int64_t j = 0; j < nb; j++) {
        const float *wc = w + j * wj;
        tx_f32x4 s0 = tx_v4_set1(0.0f), s1 = s0;
        int64_t k = 0;
        for (; k + 8 <= K; k += 8) {
            s0 = tx_v4_fma(tx_v4_load(x + k), tx_v4_load(wc + k), s0);
            s1 = tx_v4_fma(tx_v4_load(x + k + 4), tx_v4_load(wc + k + 4), s1);
        }
        float s = tx_v4_hsum(tx_v4_add(s0, s1));
        for (; k < K; k++)
            s += x[k] * wc[k];
        acc[j] = s;
    }
}

#ifdef TX_SIMD_X86
TX_TARGET_AVX2 static inline float hsum8(tx_f32x8 v) {
    tx_f32x4 lo = {v[0], v[1], v[2], v[3]}, hi = {v[4], v[5], v[6], v[7]};
    return tx_v4_hsum(lo + hi);
}

/* As dot_cols_v4, four columns at a time so each load of x serves four; every
 * column is summed in the same order whichever way it is grouped. */
TX_TARGET_AVX2 static void dot_cols_avx2(int64_t K, const float *x, const float *w, int64_t wj,
                                         int64_t nb, float *acc) {
    int64_t j = 0;
    const int64_t K16 = K / 16 * 16;
    for (; j + 4 <= nb; j += 4) {
        const float *w0 = w + j * wj, *w1 = w0 + wj, *w2 = w1 + wj, *w3 = w2 + wj;
        tx_f32x8 z = tx_v8_set1(0.0f), a0 = z, b0 = z, a1 = z, b1 = z, a2 = z, b2 = z, a3 = z,
                 b3 = z;
        for (int64_t k = 0; k < K16; k += 16) {
            tx_f32x8 x0 = tx_v8_load(x + k), x1 = tx_v8_load(x + k + 8);
            a0 = tx_v8_fma(x0, tx_v8_load(w0 + k), a0);
            b0 = tx_v8_fma(x1, tx_v8_load(w0 + k + 8), b0);
            a1 = tx_v8_fma(x0, tx_v8_load(w1 + k), a1);
            b1 = tx_v8_fma(x1, tx_v8_load(w1 + k + 8), b1);
            a2 = tx_v8_fma(x0, tx_v8_load(w2 + k), a2);
            b2 = tx_v8_fma(x1, tx_v8_load(w2 + k + 8), b2);
            a3 = tx_v8_fma(x0, tx_v8_load(w3 + k), a3);
            b3 = tx_v8_fma(x1, tx_v8_load(w3 + k + 8), b3);
        }
        float s0 = hsum8(a0 + b0), s1 = hsum8(a1 + b1), s2 = hsum8(a2 + b2), s3 = hsum8(a3 + b3);
        for (int64_t k = K16; k < K; k++) {
            s0 += x[k] * w0[k];
            s1 += x[k] * w1[k];
            s2 += x[k] * w2[k];
            s3 += x[k] * w3[k];
        }
        acc[j] = s0;
        acc[j + 1] = s1;
        acc[j + 2] = s2;
        acc[j + 3] = s3;
    }
    for (; j < nb; j++) {
        const float *wc = w + j * wj;
        tx_f32x8 a = tx_v8_set1(0.0f), b = a;
        for (int64_t k = 0; k < K16; k += 16) {
            a = tx_v8_fma(tx_v8_load(x + k), tx_v8_load(wc + k), a);
            b = tx_v8_fma(tx_v8_load(x + k + 8), tx_v8_load(wc + k + 8), b);
        }
        float s = hsum8(a + b);
        for (int64_t k = K16; k < K; k++)
            s += x[k] * wc[k];
        acc[j] = s;
    }
}
#endif

static void gemv_range(void *arg, int64_t j0, int64_t j1, int thread) {
    (void)thread;
    const gemv_job *v = arg;
    float acc[GEMV_COLS];
    for (int64_t jb = j0; jb < j1; jb += GEMV_COLS) {
        int64_t nb = min64(GEMV_COLS, j1 - jb);
        if (v->wj == 1) { /* axpy over rows of W */
#ifdef TX_SIMD_X86
            if (v->avx2)
                axpy_cols_avx2(v->K, v->x, v->w + jb, v->wk, nb, acc);
            else
#endif
                axpy_cols_v4(v->K, v->x, v->w + jb, v->wk, nb, acc);
        } else { /* dot with columns of W (contiguous in k) */
#ifdef TX_SIMD_X86
            if (v->avx2)
                dot_cols_avx2(v->K, v->x, v->w + jb * v->wj, v->wj, nb, acc);
            else
#endif
                dot_cols_v4(v->K, v->x, v->w + jb * v->wj, v->wj, nb, acc);
        }
        for (int64_t j = 0; j < nb; j++) {
            float *cp = v->out + (jb + j) * v->oc;
            float r = acc[j];
            if (v->g->accumulate)
                r += *cp;
            if (v->bias)
                r += v->bias[(jb + j) * v->bs];
            *cp = act1(r, v->e);
        }
    }
}

static bool gemv(tx_threadpool *tp, const tx_gemm *g, const tile_epi *e) {
    gemv_job v = {.g = g, .e = e, .K = g->K};
#ifdef TX_SIMD_X86
    v.avx2 = tx_simd_have_avx2_fma();
#endif
    const float *xs; /* the vector, and its stride */
    int64_t xinc;
    if (g->M == 1) {
        v.n = g->N;
        xs = g->A;
        xinc = g->trans_a ? g->lda : 1;
        v.w = g->B;
        v.wk = g->trans_b ? 1 : g->ldb;
        v.wj = g->trans_b ? g->ldb : 1;
        v.out = g->C;
        v.oc = 1;
        v.bias = g->bias_kind ? g->bias : NULL;
        v.bs = g->bias_kind == TX_GEMM_BIAS_COL ? 1 : 0;
    } else { /* N == 1: Cᵀ = Bᵀ·Aᵀ, W(k, i) = A(i, k) */
        v.n = g->M;
        xs = g->B;
        xinc = g->trans_b ? 1 : g->ldb;
        v.w = g->A;
        v.wk = g->trans_a ? g->lda : 1;
        v.wj = g->trans_a ? 1 : g->lda;
        v.out = g->C;
        v.oc = g->ldc;
        v.bias = g->bias_kind ? g->bias : NULL;
        v.bs = g->bias_kind == TX_GEMM_BIAS_ROW ? 1 : 0;
    }
    float *xcopy = NULL;
    if (xinc != 1) {
        if (!(xcopy = malloc((size_t)g->K * sizeof *xcopy)))
            return false;
        for (int64_t k = 0; k < g->K; k++)
            xcopy[k] = xs[k * xinc];
        xs = xcopy;
    }
    v.x = xs;
    /* one thread per >= 64K multiply-adds */
    tx_parallel_for(tp, v.n, ceil_div(65536, g->K), gemv_range, &v);
    free(xcopy);
    return true;
}

void tx_cpu_sgemm(tx_threadpool *tp, const tx_gemm *g) {
    if (g->M <= 0 || g->N <= 0)
        return;
    tile_epi e = {.act = g->act, .lo = g->act_lo, .hi = g->act_hi};
    if (g->act == TX_GEMM_ACT_RELU)
        e.lo = 0.0f;
    if (g->K <= 0 || g->M * g->N * g->K <= 4096) {
        gemm_small(g, &e);
        return;
    }
    if (g->M * g->N * g->K < (1 << 18))
        tp = NULL; /* waking the threads costs more than they would save */
    if ((g->M == 1 || g->N == 1) && gemv(tp, g, &e))
        return;
    if (!gemm_blocked(tp, g, e.lo, e.hi))
        gemm_small(g, &e); /* out of memory for the packed blocks */
}

bool tx_cpu_sgemm_packed_b(tx_threadpool *tp, const tx_gemm *g) {
    if (g->M <= 0 || g->N <= 0)
        return true;
    if (g->K <= 0) { /* C = act(bias) (or act(C + bias)): no B to read */
        tx_gemm z = *g;
        z.pack_b = NULL;
        tx_cpu_sgemm(tp, &z);
        return true;
    }
    tile_epi e = {.act = g->act, .lo = g->act_lo, .hi = g->act_hi};
    if (g->act == TX_GEMM_ACT_RELU)
        e.lo = 0.0f;
    if (g->M * g->N * g->K < (1 << 18))
        tp = NULL;
    return gemm_blocked(tp, g, e.lo, e.hi);
}

void tx_cpu_sgemm_ref(const tx_gemm *g) {
    tile_epi e = {.act = g->act, .lo = g->act_lo, .hi = g->act_hi};
    if (g->act == TX_GEMM_ACT_RELU)
        e.lo = 0.0f;
    for (int64_t i = 0; i < g->M; i++)
        for (int64_t j = 0; j < g->N; j++) {
            double s = 0.0;
            for (int64_t k = 0; k < g->K; k++)
                s += (double)a_at(g, i, k) * (double)b_at(g, k, j);
            float *cp = g->C + i * g->ldc + j;
            *cp = finish((float)s, cp, g, i, j, &e);
        }
}
