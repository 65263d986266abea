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
 * the thread where that context is current.
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
 * in tx_last_error(ctx). No GL error escapes a call.
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
    TX_DTYPE_INT32, /* stored as floats in the texture: exact up to |2^24| */
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

/* ---- data movement: transpose, concat, split, slice, pad, gather, resize,
 *      expand, tile, depth/space, identity (ONNX semantics) ----
 *
 * Every op here takes float32 or int32 tensors and returns the input's dtype
 * (Gather's indices are int32). Axes may be negative (counted from the end).
 * Identity, Reshape (tx_tensor_reshape), Flatten, Squeeze and Unsqueeze are
 * views: no draw. Attributes fixed by the caller (perm, axes, starts, pads,
 * repeats, block sizes) are validated on the host; Gather's indices are data
 * on the GPU and cannot be: an index outside [-dim, dim - 1] is clamped to
 * that range (ONNX calls it an error, which a shader cannot report). */

/* A view of x with the same shape and storage (no draw). */
tx_status tx_identity(tx_ctx *ctx, tx_tensor x, tx_tensor *out);
/* Views with ONNX shape rules (no draw). Flatten: [prod(dims[:axis]),
 * prod(dims[axis:])], axis in [-rank, rank]. Squeeze: drops the listed dims
 * (each must be 1), or every 1 when n_axes is 0. Unsqueeze: inserts 1s at
 * the listed positions of the result (rank + n_axes dims). */
tx_status tx_flatten(tx_ctx *ctx, tx_tensor x, int axis, tx_tensor *out);
tx_status tx_squeeze(tx_ctx *ctx, tx_tensor x, const int *axes, int n_axes, tx_tensor *out);
tx_status tx_unsqueeze(tx_ctx *ctx, tx_tensor x, const int *axes, int n_axes, tx_tensor *out);
/* y.shape[i] = x.shape[perm[i]]; perm has rank(x) entries, a permutation of
 * 0..rank-1; NULL reverses the dims (the ONNX default). */
tx_status tx_transpose(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out);
/* Joins n >= 1 tensors along `axis`; every other dim must be equal. */
tx_status tx_concat(tx_ctx *ctx, const tx_tensor *xs, int n, int axis, tx_tensor *out);
/* Cuts x along `axis` into n outputs outs[0..n-1] of sizes split[i] (they
 * must sum to the dim); split NULL: n parts of ceil(dim / n), the last one
 * smaller (ONNX 18 num_outputs). */
tx_status tx_split(tx_ctx *ctx, tx_tensor x, int axis, const int64_t *split, int n,
                   tx_tensor *outs);

typedef struct tx_slice_desc {
    int n;                       /* entries used in each array below */
    int64_t starts[TX_MAX_RANK]; /* negative counts from the end; clamped like ONNX */
    int64_t ends[TX_MAX_RANK];   /* exclusive; INT64_MAX / INT64_MIN mean "to the end" */
    int64_t axes[TX_MAX_RANK];   /* the dim of each entry; only read when has_axes */
    int64_t steps[TX_MAX_RANK];  /* 0 means 1; negative walks backwards */
    bool has_axes;               /* false: entry i slices dim i */
} tx_slice_desc;
tx_status tx_slice(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out);

typedef enum tx_pad_mode {
    TX_PAD_CONSTANT = 0, /* outside reads `value` */
    TX_PAD_REFLECT,      /* mirror without repeating the edge (numpy "reflect") */
    TX_PAD_EDGE,         /* repeat the edge element */
    TX_PAD_WRAP,         /* periodic (ONNX 19 "wrap") */
    TX_PAD_COUNT_
} tx_pad_mode;
typedef struct tx_pad_desc {
    tx_pad_mode mode;
    int64_t begin[TX_MAX_RANK]; /* elements added before dim i; negative crops */
    int64_t end[TX_MAX_RANK];   /* elements added after dim i; negative crops */
    float value;                /* constant mode */
} tx_pad_desc;
tx_status tx_pad(tx_ctx *ctx, tx_tensor x, const tx_pad_desc *desc, tx_tensor *out);

/* y = x taken along `axis` at int32 `indices` (any rank):
 * y.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]. Negative
 * indices count from the end; out-of-range ones are clamped (see above). */
tx_status tx_gather(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out);

typedef enum tx_resize_mode {
    TX_RESIZE_NEAREST = 0,
    TX_RESIZE_LINEAR, /* n-linear: 2 taps a resampled dim */
    TX_RESIZE_CUBIC,  /* 4 taps a resampled dim; at most 3 resampled dims */
    TX_RESIZE_MODE_COUNT_
} tx_resize_mode;
typedef enum tx_resize_coord {
    TX_RESIZE_HALF_PIXEL = 0, /* x_in = (x_out + 0.5) / scale - 0.5 */
    TX_RESIZE_ASYMMETRIC,     /* x_in = x_out / scale (ONNX Upsample) */
    TX_RESIZE_ALIGN_CORNERS,  /* x_in = x_out * (in - 1) / (len - 1) */
    TX_RESIZE_PYTORCH_HALF_PIXEL, /* half_pixel, but -0.5 where len == 1 */
    TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST, /* x_in = (x_out + 0.5) / scale */
    TX_RESIZE_COORD_COUNT_
} tx_resize_coord;
typedef enum tx_resize_nearest {
    TX_RESIZE_ROUND_PREFER_FLOOR = 0,
    TX_RESIZE_ROUND_PREFER_CEIL,
    TX_RESIZE_FLOOR, /* ONNX Upsample's nearest */
    TX_RESIZE_CEIL,
    TX_RESIZE_NEAREST_COUNT_
} tx_resize_nearest;
typedef struct tx_resize_desc {
    tx_resize_mode mode;       /* linear/cubic interpolate every dim not mapped 1:1 */
    tx_resize_coord coord;     /* ONNX coordinate_transformation_mode */
    tx_resize_nearest nearest; /* ONNX nearest_mode */
    float scales[TX_MAX_RANK]; /* per dim of x, > 0; 0 means 1; out = floor(in * scale) */
    int64_t sizes[TX_MAX_RANK]; /* output shape; when any entry is nonzero, sizes
                                   win and scale = out / in (0 keeps that dim) */
    float cubic_a;             /* cubic coefficient; 0 means -0.75 (ONNX default) */
    bool exclude_outside;      /* cubic: taps outside x weigh 0, the rest renormalised */
} tx_resize_desc;
/* Resize/Upsample. Upsample(mode) is asymmetric coords with nearest FLOOR.
 * len is the resized length as the ONNX reference defines it: in * scale,
 * unrounded (onnxruntime uses the rounded output size; they differ only
 * where in * scale is fractional); with sizes, len = out. Coordinates are
 * clamped to [0, in - 1] (nearest after rounding). */
tx_status tx_resize(tx_ctx *ctx, tx_tensor x, const tx_resize_desc *desc, tx_tensor *out);

/* Broadcasts x against `shape` (numpy rules, both ways, as ONNX Expand). */
tx_status tx_expand(tx_ctx *ctx, tx_tensor x, int rank, const int64_t *shape, tx_tensor *out);
/* y.shape[i] = x.shape[i] * repeats[i]; repeats has rank(x) entries >= 0. */
tx_status tx_tile(tx_ctx *ctx, tx_tensor x, const int64_t *repeats, tx_tensor *out);

typedef enum tx_depth_mode { TX_DEPTH_DCR = 0, TX_DEPTH_CRD, TX_DEPTH_COUNT_ } tx_depth_mode;
/* x [N, C, H, W] -> [N, C / b^2, H * b, W * b] (ONNX DepthToSpace). */
tx_status tx_depth_to_space(tx_ctx *ctx, tx_tensor x, int blocksize, tx_depth_mode mode,
                            tx_tensor *out);
/* x [N, C, H, W] -> [N, C * b^2, H / b, W / b] (ONNX SpaceToDepth). */
tx_status tx_space_to_depth(tx_ctx *ctx, tx_tensor x, int blocksize, tx_tensor *out);

/* Runs any op by enum with its inputs in order; `attrs` may be NULL.
 * (CLI and tests use this to walk the op list.) */
typedef struct tx_op_attrs {
    float lo, hi;               /* clip */
    tx_matmul_desc matmul;      /* matmul */
    struct {                    /* data movement and resize */
        int axis;               /* concat, split, gather */
        int n_perm;             /* transpose: entries in perm; 0 reverses the dims */
        int perm[TX_MAX_RANK];
        int n_split;            /* split: number of outputs (0 means 1) */
        int64_t split[8];       /* split sizes (up to 8 outputs here; tx_split takes
                                   any number); all zero: equal parts */
        tx_slice_desc slice;
        tx_pad_desc pad;
        tx_resize_desc resize;
        int rank;               /* expand: target shape */
        int64_t shape[TX_MAX_RANK];
        int64_t repeats[TX_MAX_RANK]; /* tile */
        int blocksize;          /* depth_to_space, space_to_depth */
        tx_depth_mode depth_mode;
    } move;
} tx_op_attrs;
tx_status tx_op_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                    const tx_op_attrs *attrs, tx_tensor *out);
/* For ops with several outputs (split: attrs->move.n_split of them): fills
 * outs[0..n_outs-1]; n_outs must equal tx_op_outputs(op, attrs). */
tx_status tx_op_run_multi(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                          const tx_op_attrs *attrs, tx_tensor *outs, int n_outs);
/* Number of outputs of op with these attributes (1 for most ops). */
int tx_op_outputs(tx_op op, const tx_op_attrs *attrs);
const char *tx_op_name(tx_op op);
/* Looks an op up by its name ("matmul"); returns TX_OP_NONE if unknown. */
tx_op tx_op_from_name(const char *name);
/* Inputs an op takes; 0: any number >= 1 (variadic: concat). */
int tx_op_arity(tx_op op);

#ifdef __cplusplus
}
#endif
#endif
