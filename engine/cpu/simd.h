/* A small portable SIMD layer for the CPU device's kernels, on GCC/Clang vector
 * extensions (no intrinsics headers), so one source serves x86-64 (SSE2 and,
 * in functions marked TX_TARGET_AVX2, AVX2+FMA), WebAssembly SIMD128 (clang,
 * -msimd128), AArch64 NEON, and — with TX_NO_SIMD, or a compiler without
 * vector extensions — plain scalar code (browsers without wasm SIMD).
 *
 * tx_f32x4: 4 floats, always defined (a struct of 4 floats in scalar builds).
 * tx_f32x8: 8 floats, only where TX_SIMD_X86 is set; its helpers carry
 * TX_TARGET_AVX2 and must only be called from functions that also do (and run
 * only on CPUs that have AVX2 and FMA: see tx_simd_have_avx2_fma).
 *
 * Loads and stores are unaligned (memcpy, which compiles to one vector move).
 * fma(a, b, c) = a*b + c: a fused instruction where the target has one (the
 * 8-wide x86 one, always: it lives in AVX2+FMA functions), else a multiply and
 * an add (SSE2, wasm SIMD128 — whose fused op is only in relaxed-simd). */
#ifndef TX_CPU_SIMD_H
#define TX_CPU_SIMD_H

#include <string.h>

#if !defined(TX_NO_SIMD) && !(defined(__GNUC__) || defined(__clang__))
#define TX_NO_SIMD 1
#endif
#if !defined(TX_NO_SIMD) && defined(__wasm__) && !defined(__wasm_simd128__)
#define TX_NO_SIMD 1 /* wasm without -msimd128: say so rather than let clang scalarize */
#endif

#if !defined(TX_NO_SIMD) && defined(__x86_64__)
#define TX_SIMD_X86 1
#endif

#ifdef TX_SIMD_X86
#define TX_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define TX_TARGET_AVX2
#endif

/* Width of the widest vector type this build can always use (tx_f32x4). */
#define TX_SIMD_W4 4

#ifndef TX_NO_SIMD

typedef float tx_f32x4 __attribute__((vector_size(16)));
typedef int tx_i32x4 __attribute__((vector_size(16)));

static inline tx_f32x4 tx_v4_load(const float *p) {
    tx_f32x4 v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
static inline void tx_v4_store(float *p, tx_f32x4 v) {
    __builtin_memcpy(p, &v, sizeof v);
}
static inline tx_f32x4 tx_v4_set1(float x) {
    return (tx_f32x4){x, x, x, x};
}
/* *p in every lane: one load-splat (wasm's v128.load32_splat, x86's
 * movss + shufps or vbroadcastss). */
static inline tx_f32x4 tx_v4_load_splat(const float *p) {
    float x = *p;
    return (tx_f32x4){x, x, x, x};
}
/* Lane l (a constant) of v in every lane: one shuffle. */
#define TX_V4_LANE(v, l) __builtin_shufflevector(v, v, l, l, l, l)
/* The even lanes of a:b (a0 a2 b0 b2) and the odd ones (a1 a3 b1 b3): a
 * stride-2 gather of 8 floats as two shuffles. */
static inline tx_f32x4 tx_v4_even(tx_f32x4 a, tx_f32x4 b) {
    return __builtin_shufflevector(a, b, 0, 2, 4, 6);
}
static inline tx_f32x4 tx_v4_odd(tx_f32x4 a, tx_f32x4 b) {
    return __builtin_shufflevector(a, b, 1, 3, 5, 7);
}
/* a0 b0 a1 b1 and a2 b2 a3 b3: two vectors' lanes interleaved. */
static inline tx_f32x4 tx_v4_zip_lo(tx_f32x4 a, tx_f32x4 b) {
    return __builtin_shufflevector(a, b, 0, 4, 1, 5);
}
static inline tx_f32x4 tx_v4_zip_hi(tx_f32x4 a, tx_f32x4 b) {
    return __builtin_shufflevector(a, b, 2, 6, 3, 7);
}
static inline tx_f32x4 tx_v4_add(tx_f32x4 a, tx_f32x4 b) {
    return a + b;
}
static inline tx_f32x4 tx_v4_sub(tx_f32x4 a, tx_f32x4 b) {
    return a - b;
}
static inline tx_f32x4 tx_v4_mul(tx_f32x4 a, tx_f32x4 b) {
    return a * b;
}
/* a*b + c (contracted to one instruction only where the target has it and
 * contraction is on). */
static inline tx_f32x4 tx_v4_fma(tx_f32x4 a, tx_f32x4 b, tx_f32x4 c) {
    return a * b + c;
}
/* a > b ? a : b per lane, as a bitwise select (C has no vector ?:); a NaN in
 * either gives b, so max(lo, v) and min(hi, v) keep a NaN v (NaN in, NaN out),
 * as x86 maxps/minps do. */
static inline tx_f32x4 tx_v4_max(tx_f32x4 a, tx_f32x4 b) {
    tx_i32x4 m = a > b;
    return (tx_f32x4)((m & (tx_i32x4)a) | (~m & (tx_i32x4)b));
}
static inline tx_f32x4 tx_v4_min(tx_f32x4 a, tx_f32x4 b) {
    tx_i32x4 m = a < b;
    return (tx_f32x4)((m & (tx_i32x4)a) | (~m & (tx_i32x4)b));
}
static inline float tx_v4_hsum(tx_f32x4 v) {
    return (v[0] + v[2]) + (v[1] + v[3]);
}

#else /* TX_NO_SIMD: the same API on plain floats */

typedef struct {
    float v[4];
} tx_f32x4;

static inline tx_f32x4 tx_v4_load(const float *p) {
    tx_f32x4 r;
    memcpy(r.v, p, sizeof r.v);
    return r;
}
static inline void tx_v4_store(float *p, tx_f32x4 a) {
    memcpy(p, a.v, sizeof a.v);
}
static inline tx_f32x4 tx_v4_set1(float x) {
    return (tx_f32x4){{x, x, x, x}};
}
#define TX_V4_LANE(x_, l_) tx_v4_set1((x_).v[l_])
static inline tx_f32x4 tx_v4_load_splat(const float *p) {
    return tx_v4_set1(*p);
}
static inline tx_f32x4 tx_v4_even(tx_f32x4 a, tx_f32x4 b) {
    return (tx_f32x4){{a.v[0], a.v[2], b.v[0], b.v[2]}};
}
static inline tx_f32x4 tx_v4_odd(tx_f32x4 a, tx_f32x4 b) {
    return (tx_f32x4){{a.v[1], a.v[3], b.v[1], b.v[3]}};
}
static inline tx_f32x4 tx_v4_zip_lo(tx_f32x4 a, tx_f32x4 b) {
    return (tx_f32x4){{a.v[0], b.v[0], a.v[1], b.v[1]}};
}
static inline tx_f32x4 tx_v4_zip_hi(tx_f32x4 a, tx_f32x4 b) {
    return (tx_f32x4){{a.v[2], b.v[2], a.v[3], b.v[3]}};
}
#define TX_V4_MAP(expr)                                                                            \
    tx_f32x4 r;                                                                                    \
    for (int i = 0; i < 4; i++)                                                                    \
        r.v[i] = (expr);                                                                           \
    return r
static inline tx_f32x4 tx_v4_add(tx_f32x4 a, tx_f32x4 b) {
    TX_V4_MAP(a.v[i] + b.v[i]);
}
static inline tx_f32x4 tx_v4_sub(tx_f32x4 a, tx_f32x4 b) {
    TX_V4_MAP(a.v[i] - b.v[i]);
}
static inline tx_f32x4 tx_v4_mul(tx_f32x4 a, tx_f32x4 b) {
    TX_V4_MAP(a.v[i] * b.v[i]);
}
static inline tx_f32x4 tx_v4_fma(tx_f32x4 a, tx_f32x4 b, tx_f32x4 c) {
    TX_V4_MAP(a.v[i] * b.v[i] + c.v[i]);
}
static inline tx_f32x4 tx_v4_max(tx_f32x4 a, tx_f32x4 b) {
    TX_V4_MAP(a.v[i] > b.v[i] ? a.v[i] : b.v[i]);
}
static inline tx_f32x4 tx_v4_min(tx_f32x4 a, tx_f32x4 b) {
    TX_V4_MAP(a.v[i] < b.v[i] ? a.v[i] : b.v[i]);
}
#undef TX_V4_MAP
static inline float tx_v4_hsum(tx_f32x4 a) {
    return (a.v[0] + a.v[2]) + (a.v[1] + a.v[3]);
}

#endif /* TX_NO_SIMD */

/* Hard-swish, v · clamp(v / 6 + 1/2, 0, 1), for the unary op and the GEMM's
 * and depthwise conv's fused epilogues. The clamp is two selects (not nested
 * ternaries, not fminf/fmaxf calls) so that gcc vectorizes the scalar form,
 * and a NaN passes through both (NaN in, NaN out) in every form. */
static inline float tx_hard_swish1(float v) {
    float t = v * (1.0f / 6.0f) + 0.5f;
    t = t < 0.0f ? 0.0f : t;
    return v * (t > 1.0f ? 1.0f : t);
}
static inline tx_f32x4 tx_v4_hard_swish(tx_f32x4 v) {
    tx_f32x4 t = tx_v4_fma(v, tx_v4_set1(1.0f / 6.0f), tx_v4_set1(0.5f));
    return tx_v4_mul(v, tx_v4_min(tx_v4_set1(1.0f), tx_v4_max(tx_v4_set1(0.0f), t)));
}

#ifdef TX_SIMD_X86

typedef float tx_f32x8 __attribute__((vector_size(32)));
typedef int tx_i32x8 __attribute__((vector_size(32)));

TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_load(const float *p) {
    tx_f32x8 v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
TX_TARGET_AVX2 static inline void tx_v8_store(float *p, tx_f32x8 v) {
    __builtin_memcpy(p, &v, sizeof v);
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_set1(float x) {
    return (tx_f32x8){x, x, x, x, x, x, x, x};
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_add(tx_f32x8 a, tx_f32x8 b) {
    return a + b;
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_mul(tx_f32x8 a, tx_f32x8 b) {
    return a * b;
}
/* Always one vfmadd: the builtin does not depend on -ffp-contract (which ISO
 * C modes turn off). */
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_fma(tx_f32x8 a, tx_f32x8 b, tx_f32x8 c) {
    return __builtin_ia32_vfmaddps256(a, b, c);
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_max(tx_f32x8 a, tx_f32x8 b) {
    tx_i32x8 m = a > b;
    return (tx_f32x8)((m & (tx_i32x8)a) | (~m & (tx_i32x8)b));
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_min(tx_f32x8 a, tx_f32x8 b) {
    tx_i32x8 m = a < b;
    return (tx_f32x8)((m & (tx_i32x8)a) | (~m & (tx_i32x8)b));
}
TX_TARGET_AVX2 static inline tx_f32x8 tx_v8_hard_swish(tx_f32x8 v) {
    tx_f32x8 t = tx_v8_fma(v, tx_v8_set1(1.0f / 6.0f), tx_v8_set1(0.5f));
    return tx_v8_mul(v, tx_v8_min(tx_v8_set1(1.0f), tx_v8_max(tx_v8_set1(0.0f), t)));
}

/* True when this CPU runs TX_TARGET_AVX2 code (cheap after the first call). */
static inline int tx_simd_have_avx2_fma(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

#endif /* TX_SIMD_X86 */

#endif
