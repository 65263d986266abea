/*
 * texel.h — a tensor engine whose compute device is the fragment shader.
 *
 * Overview
 * --------
 * Tensors live in RGBA32F textures, 4 values per texel, contiguous row-major.
 * Every op is GLSL ES 3.00 generated from a template. A *generic* program of
 * each op family (shapes as uniforms) serves every shape from its first call;
 * after `specialize_after` identical invocations a *specialized* program with
 * every parameter folded to a `const` is compiled (in the background where
 * KHR_parallel_shader_compile exists) and used from then on.
 *
 * texel never creates a window or a GL context: the caller makes an OpenGL ES
 * 3.0 (or WebGL2) context current and hands it over. All calls must happen on
 * the thread where that context is current, and one GL context serves one
 * tx_ctx (the engine caches GL bindings). Tensor handles from another tx_ctx
 * are caught as TX_STATUS_STALE_HANDLE (generations differ per context; 1 in
 * 4095 could collide).
 *
 * Worked example
 * --------------
 *     tx_ctx *ctx;
 *     if (tx_ctx_create(&(tx_ctx_desc){ .get_proc_address = glfwGetProcAddress },
 *                       &ctx) != TX_STATUS_OK) { ... }
 *     float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, y[4];
 *     tx_tensor ta, tb, tc;
 *     tx_tensor_create(ctx, &(tx_tensor_desc){ .rank = 2, .shape = {2, 3},
 *                                              .data = a }, &ta);
 *     tx_tensor_create(ctx, &(tx_tensor_desc){ .rank = 2, .shape = {3, 2},
 *                                              .data = b }, &tb);
 *     if (tx_matmul(ctx, ta, tb, NULL, &tc) != TX_STATUS_OK)
 *         fprintf(stderr, "%s\n", tx_last_error(ctx));
 *     tx_tensor_read(ctx, tc, y, sizeof y);   // y = {4, 5, 10, 11}
 *     tx_tensor_destroy(ctx, ta); tx_tensor_destroy(ctx, tb);
 *     tx_tensor_destroy(ctx, tc);
 *     tx_ctx_destroy(ctx);
 *
 * Errors
 * ------
 * Every call returns a tx_status. TX_STATUS_OK is 0; anything else leaves
 * outputs untouched and puts a message naming the op and the offending shapes
 * in tx_last_error(ctx). No GL error escapes a call, and no call aborts on
 * caller input. After any failure other than TX_STATUS_CONTEXT_LOST the
 * context stays usable and every live tensor keeps its contents. What each
 * status means, and what the caller can do:
 *
 *   TX_STATUS_INVALID_ARGUMENT  a NULL pointer, an unknown op or dtype enum, an
 *       op of the wrong family, a wrong input count, a bad attribute (clip
 *       bounds out of order or NaN), a negative rank or dimension, a negative
 *       desc field. A caller bug: fix the call.
 *   TX_STATUS_SHAPE_MISMATCH    shapes the op cannot combine (no broadcast,
 *       inner dims differ, bias not [N]), a reshape to another element count,
 *       or a byte count in tx_tensor_write / tx_tensor_read that does not fit
 *       the tensor.
 *   TX_STATUS_RANK_TOO_HIGH     more than TX_MAX_RANK dimensions.
 *   TX_STATUS_DTYPE_MISMATCH    a dtype the op does not take (int32 into
 *       unary or matmul, int32 with float32 in a binary op).
 *   TX_STATUS_STALE_HANDLE      a tensor that was destroyed, never created,
 *       or belongs to another context.
 *   TX_STATUS_TOO_LARGE         the tensor needs more texels than one texture
 *       of this device holds (the message names the size and
 *       MAX_TEXTURE_SIZE), or more elements than texel can address; element
 *       counts that overflow are reported here too.
 *   TX_STATUS_OUT_OF_MEMORY     the context's memory_budget would be exceeded
 *       by live textures, or the driver or host refused an allocation. Live
 *       tensors are untouched; free some and retry.
 *   TX_STATUS_UNSUPPORTED       the device cannot run texel (renders neither
 *       RGBA32F nor RGBA16F targets, fewer than 4 draw buffers, not GL ES 3.0
 *       / WebGL2), or tx_ctx_restore found the new context unusable.
 *   TX_STATUS_GL_ERROR          the driver reported an error during the op
 *       (the message names the op and the GL error), or an op's generic
 *       program failed to compile (driver log and numbered source on
 *       stderr). The op's output was not created; the context stays usable.
 *       (A *specialized* program that fails is no error: the op falls back to
 *       the generic program and stats.compile_failures counts it.)
 *   TX_STATUS_CONTEXT_LOST      the GL context is gone (GPU reset, WebGL
 *       webglcontextlost, or tx_ctx_restore was needed). From then on every
 *       call that touches the GPU returns it, until tx_ctx_restore succeeds;
 *       after that, tensors created before the loss return it too (their
 *       contents are gone; tx_tensor_shape still answers, tx_tensor_destroy
 *       frees them). See "Context loss" below.
 */
#ifndef TEXEL_H
#define TEXEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TX_MAX_RANK 6

typedef enum tx_status {
    TX_STATUS_OK = 0,
    TX_STATUS_INVALID_ARGUMENT,  /* null pointer, bad enum, bad attribute value */
    TX_STATUS_SHAPE_MISMATCH,    /* shapes that the op cannot combine */
    TX_STATUS_RANK_TOO_HIGH,     /* more than TX_MAX_RANK dimensions */
    TX_STATUS_DTYPE_MISMATCH,    /* a dtype the op does not take */
    TX_STATUS_STALE_HANDLE,      /* a destroyed or never-created tensor */
    TX_STATUS_TOO_LARGE,         /* exceeds what one texture of this device holds */
    TX_STATUS_OUT_OF_MEMORY,     /* the context's byte budget or the driver ran out */
    TX_STATUS_UNSUPPORTED,       /* the device lacks a required capability */
    TX_STATUS_GL_ERROR,          /* the driver reported an error during the op */
    TX_STATUS_CONTEXT_LOST,      /* the GL context is gone */
    TX_STATUS_COUNT_
} tx_status;

typedef enum tx_dtype {
    TX_DTYPE_FLOAT32 = 0,
    TX_DTYPE_INT32, /* stored as floats in the texture: exact up to |2^24|
                       (|2048| with tx_caps.float16_storage) */
    TX_DTYPE_COUNT_
} tx_dtype;

/* The op list (engine/ops/ops.def) gives one enum value per op. */
typedef enum tx_op {
    TX_OP_NONE = 0, /* no op (e.g. no fused activation) */
#define TX_OP(ENUM, name, family, arity) TX_OP_##ENUM,
#include "texel_ops.def"
#undef TX_OP
    TX_OP_COUNT_
} tx_op;

typedef struct tx_ctx tx_ctx;

/* A tensor handle: pool slot and generation. {0} is never valid. */
typedef struct tx_tensor {
    uint32_t id;
} tx_tensor;

/* Special values of tx_ctx_desc.specialize_after (zero means the default). */
#define TX_SPECIALIZE_DEFAULT 0
#define TX_SPECIALIZE_ALWAYS (-1) /* k = 0: compile the specialized variant at once */
#define TX_SPECIALIZE_NEVER (-2)  /* only ever use generic programs */

typedef void (*tx_glproc)(void);

typedef struct tx_ctx_desc {
    tx_glproc (*get_proc_address)(const char *name); /* GL loader (glfwGetProcAddress,
                                                        eglGetProcAddress); NULL under
                                                        emscripten */
    int specialize_after;      /* k > 0: identical calls before specializing;
                                  0: default (2, or env TEXEL_SPECIALIZE_AFTER);
                                  TX_SPECIALIZE_ALWAYS / TX_SPECIALIZE_NEVER */
    int max_specialized;       /* LRU cap on specialized programs; 0: 128 */
    size_t memory_budget;      /* bytes of live + pooled textures; 0: 1 GiB */
    int max_texture_size;      /* clamp the probed limit (tests); 0: device limit */
    bool no_parallel_compile;  /* ignore KHR_parallel_shader_compile */
    bool log_shaders;          /* print every generated program to stderr */
    size_t pool_limit;         /* bytes of free textures kept for reuse; 0: a quarter
                                  of memory_budget. A free texture not reused within
                                  1024 allocations is deleted whatever this says. */
    bool float16_storage;      /* store tensors in RGBA16F even where float32 renders
                                  (half the memory, see tx_caps.float16_storage) */
} tx_ctx_desc;

typedef struct tx_caps {
    char renderer[128];
    char version[128];
    char glsl_version[128];
    int max_texture_size;
    int max_draw_buffers;
    bool float32_render;    /* RGBA32F render + readback verified by drawing */
    bool float16_render;    /* RGBA16F render verified by drawing */
    bool parallel_compile;  /* KHR_parallel_shader_compile usable */
    /* Tensors are stored as float16 (the device renders RGBA16F but not
     * RGBA32F, or desc.float16_storage asked for it). Math inside an op is
     * still float32, but every op output (and upload) is rounded to 11
     * significant bits: relative error up to 2^-11 per stored value (tests
     * allow 2^-10 plus the op's float32 tolerance), magnitudes above 65504
     * become ±Inf (uploads may clamp to ±65504 instead), values below 2^-14
     * lose bits, int32 is exact only to ±2048. NaN and ±Inf still propagate.
     * Results from such a context are flagged by this field. */
    bool float16_storage;
} tx_caps;

typedef struct tx_stats {
    uint64_t generic_compiles;     /* generic programs linked */
    uint64_t specialized_compiles; /* specialized programs issued */
    uint64_t specialized_ready;    /* specialized programs that finished linking */
    uint64_t specialized_evicted;  /* dropped by the LRU cap */
    uint64_t compile_failures;     /* programs that failed; the op fell back */
    uint64_t cache_hits;           /* invocations served by an existing program */
    uint64_t generic_runs;         /* invocations served by a generic program */
    uint64_t specialized_runs;     /* invocations served by a specialized program */
    uint64_t draws;
    uint64_t bytes_uploaded;
    uint64_t bytes_downloaded;
    uint64_t live_texture_bytes;   /* textures owned by live tensors */
    uint64_t pooled_texture_bytes; /* free textures kept for reuse */
    uint64_t peak_texture_bytes;   /* max of live + pooled */
    uint64_t live_tensors;
    uint64_t specialized_programs; /* specialized programs held now */
    double compile_ms;             /* wall time spent in synchronous compiles */
    uint64_t pooled_textures;      /* free textures held for reuse now */
    uint64_t textures_evicted;     /* free textures deleted (age, pool_limit, budget, trim) */
    uint64_t context_losses;       /* times the GL context was found lost */
    uint64_t context_restores;     /* successful tx_ctx_restore calls */
} tx_stats;

tx_status tx_ctx_create(const tx_ctx_desc *desc, tx_ctx **out);
void tx_ctx_destroy(tx_ctx *ctx);
const char *tx_last_error(const tx_ctx *ctx);
const char *tx_status_name(tx_status s);
tx_status tx_ctx_caps(const tx_ctx *ctx, tx_caps *out);
tx_status tx_ctx_stats(const tx_ctx *ctx, tx_stats *out);
/* Finishes all queued GL work (for timing). */
tx_status tx_ctx_finish(tx_ctx *ctx);
/* Drops every pooled (free) texture. */
void tx_ctx_trim(tx_ctx *ctx);
/* The k actually in force (after defaults and env); -1 = never. */
int tx_ctx_specialize_after(const tx_ctx *ctx);

/* ---- context loss ----
 *
 * texel notices a lost context when the driver reports an error (after a
 * draw, upload or allocation) and on every tx_tensor_read, so a read never
 * returns garbage from a dead context. From then on every call that touches
 * the GPU returns TX_STATUS_CONTEXT_LOST. tx_tensor_destroy, tx_tensor_shape,
 * tx_ctx_stats, tx_ctx_caps, tx_ctx_trim and tx_ctx_destroy keep working and
 * issue no GL call (the old names may belong to a new context).
 *
 * To recover, make a working context current (WebGL: after the
 * webglcontextrestored event, the same canvas context; desktop: a new
 * context from the same driver) and call tx_ctx_restore. It rebuilds the
 * engine's GL objects and re-probes the caps; programs are recompiled lazily
 * by the next ops. Tensors created before the loss stay allocated handles
 * whose contents are gone: every use returns TX_STATUS_CONTEXT_LOST naming
 * the handle, tx_tensor_shape still reports their shape, and the caller
 * destroys them and re-creates (re-uploads) what it needs. */

/* Polls the driver (cheap: no GPU sync); true once the context is lost,
 * until tx_ctx_restore. Hosts may call it from their context-lost handler. */
bool tx_ctx_is_lost(tx_ctx *ctx);
/* Rebinds the engine to the GL context current now. Returns
 * TX_STATUS_CONTEXT_LOST (call again later) while the context is still lost,
 * TX_STATUS_UNSUPPORTED if the new context cannot run texel. Calling it on a
 * healthy context also works: everything made before is treated as lost. */
tx_status tx_ctx_restore(tx_ctx *ctx);

/* ---- tensors ---- */

typedef struct tx_tensor_desc {
    int rank;                 /* 0..TX_MAX_RANK; 0 is a scalar */
    int64_t shape[TX_MAX_RANK];
    tx_dtype dtype;           /* default float32 */
    const void *data;         /* float or int32_t values, or NULL for zeros */
} tx_tensor_desc;

tx_status tx_tensor_create(tx_ctx *ctx, const tx_tensor_desc *desc, tx_tensor *out);
tx_status tx_tensor_destroy(tx_ctx *ctx, tx_tensor t);
/* Replaces the contents; `bytes` must equal the tensor's size in bytes. */
tx_status tx_tensor_write(tx_ctx *ctx, tx_tensor t, const void *data, size_t bytes);
/* Reads into caller memory; `bytes` must be at least the tensor's size. */
tx_status tx_tensor_read(tx_ctx *ctx, tx_tensor t, void *dst, size_t bytes);
/* rank, shape and dtype of a tensor; shape may be NULL. */
tx_status tx_tensor_shape(tx_ctx *ctx, tx_tensor t, int *rank, int64_t shape[TX_MAX_RANK],
                          tx_dtype *dtype);
/* A view with a new shape over the same storage (no draw). One dim may be -1. */
tx_status tx_tensor_reshape(tx_ctx *ctx, tx_tensor t, int rank, const int64_t *shape,
                            tx_tensor *out);

/* ---- ops ---- */

/* Any op of family UNARY: relu, sigmoid, tanh, exp, log, sqrt, abs, neg, erf, gelu… */
tx_status tx_unary(tx_ctx *ctx, tx_op op, tx_tensor x, tx_tensor *out);
/* y = min(max(x, lo), hi); relu6 is tx_clip(x, 0, 6). */
tx_status tx_clip(tx_ctx *ctx, tx_tensor x, float lo, float hi, tx_tensor *out);
/* Any op of family BINARY, with numpy broadcasting: add sub mul div pow min max. */
tx_status tx_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out);

typedef struct tx_matmul_desc {
    bool transpose_a;   /* use the last two dims of a swapped */
    bool transpose_b;
    tx_tensor bias;     /* {0} = none; else shape [N] (or broadcastable [1, N]) */
    tx_op activation;   /* TX_OP_NONE, or any UNARY op (relu, relu6, gelu …) */
} tx_matmul_desc;

/* Batched matmul: a [..., M, K] × b [..., K, N] → [..., M, N]; batch dims
 * broadcast; rank-1 operands follow numpy (a vector is [1, K] or [K, 1]). */
tx_status tx_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                    tx_tensor *out);

/* Runs any op by enum with its inputs in order; `attrs` may be NULL.
 * (CLI and tests use this to walk the op list.) */
typedef struct tx_op_attrs {
    float lo, hi;               /* clip */
    tx_matmul_desc matmul;      /* matmul */
} tx_op_attrs;
tx_status tx_op_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                    const tx_op_attrs *attrs, tx_tensor *out);
const char *tx_op_name(tx_op op);
/* Looks an op up by its name ("matmul"); returns TX_OP_NONE if unknown. */
tx_op tx_op_from_name(const char *name);
int tx_op_arity(tx_op op);

#ifdef __cplusplus
}
#endif
#endif
