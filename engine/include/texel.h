/*
 * texel.h — a tensor engine whose main compute device is the fragment shader,
 * with a SIMD + threads CPU device behind the same ops (tx_device; sessions
 * choose between them by measurement).
 *
 * Overview
 * --------
 * GPU tensors live in RGBA32F textures, 4 values per texel, contiguous
 * row-major; CPU tensors in host memory, in the same order.
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
 *       desc field, tx_ctx_restore on a context that is not lost. A caller
 *       bug: fix the call. For models: a malformed or truncated file (the
 *       message says which message or field), a node reading a value nothing
 *       produces, a cycle, a bad node attribute or one whose declared type
 *       is not what it carries, a node with an empty required input or no
 *       outputs, a feed with an unknown name.
 *   TX_STATUS_SHAPE_MISMATCH    shapes the op cannot combine (no broadcast,
 *       inner dims differ, bias not [N]), a reshape to another element count,
 *       or a byte count in tx_tensor_write / tx_tensor_read that does not fit
 *       the tensor. For models: declared shapes (value_info, graph outputs,
 *       initializers listed as inputs) that contradict what the weights make
 *       (tx_session_create names the node, the value and both shapes), or a
 *       feed of another shape than the declared one.
 *   TX_STATUS_RANK_TOO_HIGH     more than TX_MAX_RANK dimensions.
 *   TX_STATUS_DTYPE_MISMATCH    a dtype the op does not take (int32 into
 *       unary or matmul, int32 with float32 in a binary op); a feed of the
 *       wrong dtype; an initializer listed as an input with another type.
 *   TX_STATUS_STALE_HANDLE      a tensor that was destroyed, never created,
 *       or belongs to another context.
 *   TX_STATUS_TOO_LARGE         the tensor needs more texels than one texture
 *       of this device holds (the message names the size and
 *       MAX_TEXTURE_SIZE), or more elements than texel can address; element
 *       counts that overflow are reported here too, and so are a model's
 *       tensors, declared or inferred shapes of more than 2^40 elements.
 *   TX_STATUS_OUT_OF_MEMORY     the context's memory_budget would be exceeded
 *       by live textures, or the driver or host refused an allocation. Live
 *       tensors are untouched; free some and retry.
 *   TX_STATUS_UNSUPPORTED       the device cannot run texel (renders neither
 *       RGBA32F nor RGBA16F targets, fewer than 4 draw buffers, not GL ES 3.0
 *       / WebGL2), tx_ctx_restore found the new context unusable, or a model
 *       needs an op or type texel lacks.
 *   TX_STATUS_GL_ERROR          the driver reported an error during the op
 *       (the message names the op and the GL error), or an op's generic
 *       program failed to compile (driver log and numbered source on
 *       stderr). The op's output was not created; the context stays usable.
 *       Under WebGL error checks are deferred (web/texel_web.c): an op's
 *       error then surfaces at the next read, whose message says so.
 *       (A *specialized* program that fails is no error: the op falls back to
 *       the generic program and stats.compile_failures counts it.)
 *   TX_STATUS_CONTEXT_LOST      the GL context is gone (GPU reset, WebGL
 *       webglcontextlost, or the host called tx_ctx_mark_lost). From then on
 *       every call that touches the GPU returns it, until tx_ctx_restore succeeds;
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
    TX_STATUS_INVALID_ARGUMENT, /* null pointer, bad enum, bad attribute value */
    TX_STATUS_SHAPE_MISMATCH,   /* shapes that the op cannot combine */
    TX_STATUS_RANK_TOO_HIGH,    /* more than TX_MAX_RANK dimensions */
    TX_STATUS_DTYPE_MISMATCH,   /* a dtype the op does not take */
    TX_STATUS_STALE_HANDLE,     /* a destroyed or never-created tensor */
    TX_STATUS_TOO_LARGE,        /* exceeds what one texture of this device holds */
    TX_STATUS_OUT_OF_MEMORY,    /* the context's byte budget or the driver ran out */
    TX_STATUS_UNSUPPORTED,      /* the device lacks a required capability, or a
                                   model needs an op/type texel lacks */
    TX_STATUS_GL_ERROR,         /* the driver reported an error during the op */
    TX_STATUS_CONTEXT_LOST,     /* the GL context is gone */
    TX_STATUS_DEVICE_MISMATCH,  /* an op's tensors live on different devices: move
                                   them first (tx_tensor_to) */
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

/* Where a tensor lives and its ops run. Every op runs on the device of its
 * inputs (all on one device, else TX_STATUS_DEVICE_MISMATCH) and puts its
 * output there; data crosses devices only by tx_tensor_to, counted in the
 * stats (bytes_uploaded / bytes_downloaded). */
typedef enum tx_device {
    TX_DEVICE_DEFAULT = 0, /* the context's default device (tx_ctx_desc.device) */
    TX_DEVICE_GPU,         /* RGBA float textures; GLSL fragment-shader kernels */
    TX_DEVICE_CPU,         /* host memory; SIMD + threaded C kernels (engine/cpu/) */
    TX_DEVICE_AUTO,        /* sessions only: chosen by measurement (tx_session_desc) */
    TX_DEVICE_COUNT_
} tx_device;

/* A tensor handle: pool slot and generation. {0} is never valid. */
typedef struct tx_tensor {
    uint32_t id;
} tx_tensor;

/* Special values of tx_ctx_desc.specialize_after (zero means the default). */
#define TX_SPECIALIZE_DEFAULT 0
#define TX_SPECIALIZE_ALWAYS  (-1) /* k = 0: compile the specialized variant at once */
#define TX_SPECIALIZE_NEVER   (-2) /* only ever use generic programs */

typedef void (*tx_glproc)(void);

typedef struct tx_ctx_desc {
    tx_glproc (*get_proc_address)(const char *name); /* GL loader (glfwGetProcAddress,
                                                        eglGetProcAddress); NULL under
                                                        emscripten */
    int specialize_after;                            /* k > 0: identical calls before specializing;
                                                        0: default (2, or env TEXEL_SPECIALIZE_AFTER);
                                                        TX_SPECIALIZE_ALWAYS / TX_SPECIALIZE_NEVER.
                                                        With k > 0 on a software rasterizer, a
                                                        matmul / conv draw of >= 2^25
                                                        multiply-adds is specialized at once;
                                                        with the default k there, a smaller
                                                        draw waits until its calls did 2^25
                                                        (at most 64 calls; natively both scaled
                                                        down by what compiles cost there, to a
                                                        sixteenth); with the default k
                                                        on a GPU without a background compile
                                                        (no KHR_parallel_shader_compile), the
                                                        compiles a call does not need yet take
                                                        at most a quarter of the wall time, in
                                                        bursts of at most 50 ms */
    int max_specialized;                             /* LRU cap on specialized programs; 0: 1024 */
    size_t memory_budget;                            /* bytes of live + pooled textures; 0: 1 GiB */
    int max_texture_size;     /* clamp the probed limit (tests); 0: device limit */
    bool no_parallel_compile; /* ignore KHR_parallel_shader_compile */
    bool log_shaders;         /* print every generated program to stderr */
    size_t pool_limit;        /* bytes of free textures kept for reuse; 0: a quarter
                                 of memory_budget. A free texture not reused within
                                 1024 allocations is deleted whatever this says. */
    bool float16_storage;     /* store tensors in RGBA16F even where float32 renders
                                 (half the memory, see tx_caps.float16_storage) */
    tx_device device;         /* where tx_tensor_create puts tensors whose desc names
                                 no device; 0: TX_DEVICE_GPU */
    int cpu_threads;          /* threads of the CPU device; 0: env TEXEL_CPU_THREADS,
                                 else one per core; 1: no threads */
    bool no_gpu;              /* a context without GL (no current context needed,
                                 get_proc_address unused): only the CPU device.
                                 The default device is the CPU, 'auto' sessions
                                 run on the CPU ("no GPU context"), and GPU
                                 tensors, ops and sessions fail with
                                 TX_STATUS_UNSUPPORTED; desc.device gpu too. */
    bool emulate_division;    /* divide in integer steps (tx_caps.emulated_division)
                                 even where the driver's division probes as IEEE
                                 754: tests the emulation on any GPU */
    /* GL at the first GPU use, not before tx_ctx_create: the CPU device
     * needs none, and making a context can take a second (a browser's first
     * WebGL2 context on a software GPU). Where set, tx_ctx_create makes no
     * GL call (caps.gl_pending). The first GPU tensor, GPU op, transfer to
     * the GPU, session on the GPU (an 'auto' session's: before its second
     * run, unless tx_ctx_gpu_hint says otherwise), tx_session_compile or
     * tx_ctx_start_gl calls it once: it makes
     * an OpenGL ES 3.0 context current and returns true (get_proc_address
     * then loads GL from it), or writes why not into `why` and returns
     * false. Then, or when the context it made cannot run texel, the
     * context is one of the CPU device only from there on (caps.no_gpu),
     * every GPU call failing with TX_STATUS_UNSUPPORTED and that reason. */
    bool (*make_gl)(void *user, char *why, size_t why_size);
    void *make_gl_user;
} tx_ctx_desc;

typedef struct tx_caps {
    char renderer[128];
    char version[128];
    char glsl_version[128];
    int max_texture_size;
    int max_draw_buffers;
    bool float32_render;   /* RGBA32F render + readback verified by drawing */
    bool float16_render;   /* RGBA16F render verified by drawing */
    bool parallel_compile; /* KHR_parallel_shader_compile usable */
    /* Tensors are stored as float16 (the device renders RGBA16F but not
     * RGBA32F, or desc.float16_storage asked for it). Math inside an op is
     * still float32, but every op output (and upload) is rounded to 11
     * significant bits: relative error up to 2^-11 per stored value (tests
     * allow 2^-10 plus the op's float32 tolerance), magnitudes above 65504
     * become ±Inf (uploads may clamp to ±65504 instead), values below 2^-14
     * lose bits, int32 is exact only to ±2048. NaN and ±Inf still propagate.
     * Results from such a context are flagged by this field. */
    bool float16_storage;
    bool no_gpu; /* made with tx_ctx_desc.no_gpu: no GL, every field above is 0 */
    /* The driver's float division is not correctly rounded (probed at
     * creation: NVIDIA's GLSL divides by a reciprocal multiply, within the
     * 2.5 ulp GLSL allows), or desc.emulate_division asked: Div, Mod and
     * Resize's coordinates divide in integer steps instead, so that
     * quantization and nearest-neighbour ties round as IEEE 754 and as the
     * CPU device does. */
    bool emulated_division;
    /* tx_ctx_desc.make_gl has not been called yet: no GL context, every
     * field above but no_gpu is 0 (tx_ctx_start_gl fills them) */
    bool gl_pending;
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
    uint64_t specialized_programs;    /* specialized programs held now */
    double compile_ms;                /* wall time spent in synchronous compiles */
    uint64_t pooled_textures;         /* free textures held for reuse now */
    uint64_t textures_evicted;        /* free textures deleted (age, pool_limit, budget, trim) */
    uint64_t context_losses;          /* times the GL context was found lost */
    uint64_t context_restores;        /* successful tx_ctx_restore calls */
    uint64_t cpu_ops;                 /* ops run by the CPU device */
    uint64_t live_host_bytes;         /* host memory owned by live CPU tensors, with
                                         the weights they keep in a kernel's layout
                                         (freed first when a tensor needs the room) */
    uint64_t peak_host_bytes;         /* max of live_host_bytes */
    uint64_t specializations_waiting; /* call signatures called k times or more,
                                         still on their generic program, that more
                                         calls will specialize (a software
                                         rasterizer's small draws: cache.c) */
    double gl_start_ms;               /* tx_ctx_desc.make_gl's call and the probes
                                         after it, at the first GPU use (0 before,
                                         and for a context given GL at creation) */
} tx_stats;

tx_status tx_ctx_create(const tx_ctx_desc *desc, tx_ctx **out);
void tx_ctx_destroy(tx_ctx *ctx);
const char *tx_last_error(const tx_ctx *ctx);
const char *tx_status_name(tx_status s);

/* The library's version, "MAJOR.MINOR.PATCH" (meson.build's project version;
 * changes in CHANGELOG.md), and the same as MAJOR * 10000 + MINOR * 100 +
 * PATCH. Before 1.0 every minor release may change the ABI (the soname is
 * libtexel.so.0.MINOR). */
const char *tx_version(void);
int tx_version_number(void);

tx_status tx_ctx_caps(const tx_ctx *ctx, tx_caps *out);
/* Makes the GL context of a tx_ctx_desc.make_gl context now (the next GPU
 * use would): OK at once where it is made. TX_STATUS_UNSUPPORTED, naming the
 * reason, for a context without GL (desc.no_gpu, or make_gl failed). */
tx_status tx_ctx_start_gl(tx_ctx *ctx);
/* What the host learned about the GPU before a make_gl context made its GL
 * context, for 'auto' sessions (the web build: a worker's throwaway WebGL2
 * context, made off the page's thread). renderer NULL: the host is looking;
 * auto's sessions stay on the CPU, without making the GL context, until it
 * says what it found. renderer "": nothing found (auto goes on as without a
 * hint). Else the renderer string and, where measured, a fragment shader's
 * FMA rate in GFLOP/s (<= 0: not measured): a renderer named a software
 * rasterizer whose rate is below half auto's probe threshold (15 GFLOP/s)
 * sends auto's sessions to the CPU for good, and the GL context is never
 * made for them; any other answer, auto as without a hint. Ignored once the
 * GL context is made (its own renderer and probe count), and under the
 * environment's TEXEL_AUTO_MEASURE (auto then measures). */
tx_status tx_ctx_gpu_hint(tx_ctx *ctx, const char *renderer, double gflops);
tx_status tx_ctx_stats(const tx_ctx *ctx, tx_stats *out);
/* Finishes all queued GL work (for timing). */
tx_status tx_ctx_finish(tx_ctx *ctx);
/* Drops every pooled (free) texture. */
void tx_ctx_trim(tx_ctx *ctx);
/* The k actually in force (after defaults and env); -1 = never. */
int tx_ctx_specialize_after(const tx_ctx *ctx);

/* Compile cost per program family (a GLSL template: "matmul", "conv",
 * "unary" ...), so a first call's cost can be traced to its ops. compile_ms
 * is the wall time of the synchronous compile calls (tx_stats.compile_ms is
 * their sum over families); first_draw_ms is the time of each program's
 * first draw, where drivers that generate the machine code at the first draw
 * (llvmpipe) really compile. Counts and times start again after a context
 * loss. */
#define TX_MAX_COMPILE_FAMILIES 32
typedef struct tx_compile_family {
    const char *name;              /* static string */
    uint32_t generic, specialized; /* programs issued */
    double compile_ms, first_draw_ms;
} tx_compile_family;
/* Writes up to max families into out (may be NULL); returns how many there are. */
int tx_ctx_compile_families(const tx_ctx *ctx, tx_compile_family *out, int max);

/* Kernel variants chosen by measurement (env TEXEL_TUNE=1; README). Natively
 * the choices are remembered in the device-choices file; a host without files
 * (the browser) reads them here after a context's work and hands them to the
 * next context on the same renderer. A choice set here serves with or without
 * TEXEL_TUNE (benchmarks force a variant this way). Kernels: "matmul-tm" (tile rows 1, 4 or
 * 8), size classes 0..TX_TUNE_CLASSES-1. 0: not measured. */
#define TX_TUNE_CLASSES 32
int tx_ctx_kernel_choice(const tx_ctx *ctx, const char *kernel, int size_class);
tx_status tx_ctx_set_kernel_choice(tx_ctx *ctx, const char *kernel, int size_class, int variant);

/* ---- tensors ---- */

typedef struct tx_tensor_desc {
    int rank; /* 0..TX_MAX_RANK; 0 is a scalar */
    int64_t shape[TX_MAX_RANK];
    tx_dtype dtype;   /* default float32 */
    const void *data; /* float or int32_t values, or NULL for zeros */
    tx_device device; /* 0: the context's default (tx_ctx_desc.device) */
    /* data holds IEEE 754 half-precision bit patterns (uint16_t, one per
     * element) instead of floats; float32 dtype only. A GPU storing float16
     * (tx_caps.float16_storage) takes them as they are, half the bytes of a
     * float upload; float32 storage and the CPU widen them (exactly). */
    bool data_f16;
} tx_tensor_desc;

tx_status tx_tensor_create(tx_ctx *ctx, const tx_tensor_desc *desc, tx_tensor *out);
tx_status tx_tensor_destroy(tx_ctx *ctx, tx_tensor t);
/* A copy of t on `device` (a new tensor, also when t is already there): the
 * explicit crossing between devices, counted in bytes_uploaded (to the GPU)
 * or bytes_downloaded (from it). */
tx_status tx_tensor_to(tx_ctx *ctx, tx_tensor t, tx_device device, tx_tensor *out);
/* The device t lives on (never TX_DEVICE_DEFAULT). */
tx_status tx_tensor_device(tx_ctx *ctx, tx_tensor t, tx_device *out);
/* "gpu" / "cpu" / "auto" / "default"; "?" for other values. */
const char *tx_device_name(tx_device device);
/* The device a name means ("gpu", "cpu", "auto"); TX_DEVICE_COUNT_ if none. */
tx_device tx_device_from_name(const char *name);
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

/* ---- asynchronous reads ----
 *
 * tx_tensor_read stalls until the GPU has finished everything queued before
 * it. The asynchronous path copies the tensor into a pixel-pack buffer behind
 * a fence and returns at once; the caller polls (yielding to its event loop
 * between polls under WebGL) and then collects the values. The read sees the
 * tensor as it was when tx_tensor_read_async was called: the tensor may be
 * destroyed or overwritten meanwhile. */
typedef struct tx_readback {
    uint32_t id; /* {0} is never valid */
} tx_readback;

tx_status tx_tensor_read_async(tx_ctx *ctx, tx_tensor t, tx_readback *out);
/* Never blocks. *ready becomes true once tx_readback_finish will not stall. */
tx_status tx_readback_poll(tx_ctx *ctx, tx_readback r, bool *ready);
/* Copies the values (float or int32 as the tensor's dtype) into dst, which
 * must hold at least the tensor's size in bytes, and frees the readback (also
 * on failure). Stalls if called before the poll reported ready. */
tx_status tx_readback_finish(tx_ctx *ctx, tx_readback r, void *dst, size_t bytes);
/* Frees a readback without collecting it. */
tx_status tx_readback_cancel(tx_ctx *ctx, tx_readback r);
/* Element count and dtype of the tensor being read. */
tx_status tx_readback_info(tx_ctx *ctx, tx_readback r, int64_t *numel, tx_dtype *dtype);

/* ---- context loss ----
 *
 * A GL context can be lost (GPU reset, driver update, a browser reclaiming
 * memory). texel notices when the driver reports an error (after a draw,
 * upload or allocation), on every tx_tensor_read and readback (a read asks
 * the driver each time, so it never returns garbage from a dead context), and
 * when tx_ctx_is_lost polls. Hosts that learn of the loss first (WebGL's
 * `webglcontextlost` event, a desktop host that destroyed its context) say so
 * with tx_ctx_mark_lost, while the lost context is still the current one.
 * The loss is latched: from then on every call that touches the GPU fails
 * with TX_STATUS_CONTEXT_LOST ("... every call fails until tx_ctx_restore"),
 * pending asynchronous reads included. tx_tensor_destroy, tx_tensor_shape,
 * tx_ctx_stats, tx_ctx_caps, tx_ctx_trim and tx_ctx_destroy keep working and
 * never delete or touch a GL name of a context the driver reports lost (a new
 * context may hand out the same numbers).
 *
 * Once the host has a working context again (WebGL: `webglcontextrestored`,
 * the same context object; desktop: a new context made current),
 * tx_ctx_restore rebuilds the engine's GL objects and re-probes the caps,
 * programs are recompiled on demand, and restore hooks run so that owners of
 * long-lived tensors (a model session's weights) can re-upload them. Tensors
 * created before the loss stay valid handles whose contents are gone: every
 * use fails with TX_STATUS_CONTEXT_LOST ("created before the GL context was
 * lost", naming the handle), tx_tensor_shape still reports their shape, and
 * the caller destroys them as usual. Counters (tx_stats) are kept across a
 * restore; context_losses and context_restores count both events. */
typedef void (*tx_restore_hook)(tx_ctx *ctx, void *user);

/* For a GL context texel shares with the caller's own drawing (or, one at a
 * time, with another tx_ctx): texel caches its GL bindings and relies on some
 * state (no blending, scissor or color mask, default pixel-store values, its
 * vertex array). After GL calls of your own on this context, call this
 * before the next texel call: it sets that state again and forgets the
 * cached bindings. Without it, results may be wrong. The state texel leaves
 * behind is its own: bindings of its textures, framebuffers and program.
 * TX_STATUS_CONTEXT_LOST once the context is lost; a CPU-only context has
 * nothing to reset. */
tx_status tx_ctx_reset_gl_state(tx_ctx *ctx);

/* Latches the loss and forgets the old context's GL objects at once (their
 * bytes leave the counters). Harmless when already lost. */
void tx_ctx_mark_lost(tx_ctx *ctx);
/* True once the context is lost, until tx_ctx_restore; also for NULL. Polls
 * the driver (cheap, no GPU sync) and latches a loss it reports. */
bool tx_ctx_is_lost(tx_ctx *ctx);
/* Rebinds the engine to the GL context current now. TX_STATUS_INVALID_ARGUMENT
 * if the context is not lost (mark it first); TX_STATUS_CONTEXT_LOST (call
 * again later) while the context is still lost; TX_STATUS_UNSUPPORTED if the
 * new context cannot run texel (the context stays lost). */
tx_status tx_ctx_restore(tx_ctx *ctx);
/* Registers fn(ctx, user) to run at the end of every successful restore (at
 * most 16 hooks; the same pair twice is refused). */
tx_status tx_ctx_add_restore_hook(tx_ctx *ctx, tx_restore_hook fn, void *user);
tx_status tx_ctx_remove_restore_hook(tx_ctx *ctx, tx_restore_hook fn, void *user);
/* How many times the objects of a lost context were dropped: bumped by each
 * loss (at tx_ctx_mark_lost, or at tx_ctx_restore when the engine noticed the
 * loss itself). Tensors made under an older generation are lost. */
int tx_ctx_generation(const tx_ctx *ctx);

/* ---- ops ---- */

/* Any op of family UNARY: relu, sigmoid, tanh, exp, log, sqrt, abs, neg, erf, gelu… */
tx_status tx_unary(tx_ctx *ctx, tx_op op, tx_tensor x, tx_tensor *out);
/* y = min(max(x, lo), hi), NaN stays NaN; relu6 is tx_clip(x, 0, 6). */
tx_status tx_clip(tx_ctx *ctx, tx_tensor x, float lo, float hi, tx_tensor *out);
/* Any op of family BINARY, with numpy broadcasting: add sub mul div pow min max,
 * prelu, and or xor (0/1), equal less greater less_equal greater_equal (0/1). */
tx_status tx_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out);

typedef struct tx_matmul_desc {
    bool transpose_a; /* use the last two dims of a swapped */
    bool transpose_b;
    tx_tensor bias;     /* {0} = none; else shape [N] (or broadcastable [1, N]) */
    tx_op activation;   /* TX_OP_NONE, any UNARY op (relu, relu6, gelu …) or one of
                           tx_activation's (leaky_relu, hard_sigmoid, elu …) */
    float alpha, beta;  /* tx_activation's alpha, beta for such an activation (finite) */
    tx_tensor residual; /* {0} = none; else a float tensor of y's shape, added
                           before the activation (a transformer's skip connection) */
} tx_matmul_desc;

/* Batched matmul: a [..., M, K] × b [..., K, N] → [..., M, N]; batch dims
 * broadcast; rank-1 operands follow numpy (a vector is [1, K] or [K, 1]).
 * y = act(a × b + bias + residual); the residual is added where the
 * product is written (under a recording tape, or with split tensors, as a
 * separate add). */
tx_status tx_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                    tx_tensor *out);

/* ---- convolution and pooling (NCHW, as ONNX defines them) ----
 *
 * Inputs are [N, C, H, W] (2-D) or [N, C, W] (1-D, run as H = 1). Array
 * attributes hold ONNX's per-spatial-dim lists in order: for 2-D strides
 * {h, w} and pads {h_begin, w_begin, h_end, w_end}; for 1-D strides {w} and
 * pads {w_begin, w_end}. An all-zero strides or dilations list means 1 on
 * every dim (so a zeroed desc is a plain conv); a 0 beside a set value, or any
 * negative value, is TX_STATUS_INVALID_ARGUMENT. group 0 means 1. For
 * conv_transpose, SAME_* auto_pad pads so that output = input · stride. */

typedef enum tx_auto_pad {
    TX_AUTO_PAD_NOTSET = 0, /* use `pads` */
    TX_AUTO_PAD_SAME_UPPER, /* output = ceil(input / stride); odd padding at the end */
    TX_AUTO_PAD_SAME_LOWER, /* same, odd padding at the beginning */
    TX_AUTO_PAD_VALID,      /* no padding */
    TX_AUTO_PAD_COUNT_
} tx_auto_pad;

typedef struct tx_conv_desc {
    int strides[2];   /* 0 = 1 */
    int dilations[2]; /* 0 = 1 */
    int pads[4];      /* begin..., end... (non-negative) */
    tx_auto_pad auto_pad;
    int group;             /* 0 = 1; C and M must both divide by it */
    int output_padding[2]; /* conv_transpose: extra rows/cols at the end */
    int output_shape[2];   /* conv_transpose: wanted spatial output (all 0 = computed);
                              pads are then derived as ONNX's reference does */
    tx_tensor bias;        /* {0} = none; else [M] */
    tx_op activation;      /* TX_OP_NONE, any UNARY op (relu, relu6 …), TX_OP_CLIP or one of
                              tx_activation's (leaky_relu, hard_sigmoid, elu …) */
    float lo, hi;          /* clip bounds when activation == TX_OP_CLIP (±INFINITY: open) */
    float alpha, beta;     /* tx_activation's alpha, beta for such an activation (finite) */
    tx_tensor residual;    /* {0} = none; else a float tensor of y's shape, added before
                              the activation (a residual block's skip connection) */
    bool x_affine;         /* read x · x_scale + x_shift at every position inside x, the
                              padding still 0: an elementwise affine before a padded conv
                              (a normalization, PP-LCNet's learnable affine) without a pass
                              of its own (GPU convs; elsewhere, and under a recording tape,
                              it runs as tx_activation(TX_OP_AFFINE) first) */
    float x_scale;         /* x_affine's scale and shift (finite) */
    float x_shift;
    bool residual_pad; /* the residual has y's shape but for fewer channels (dim 1, at
                          least 1): y's other channels add 0, as if it were padded with
                          zeros there (BlazeFace's skip path, Concat(x, zeros)) */
} tx_conv_desc;

/* y = act(conv(x, w) + bias + residual): x [N, C, (H,) W], w [M, C/group,
 * (kH,) kW] → [N, M, (Ho,) Wo]. Depthwise is group = C = M. The residual is
 * added in the conv's own last pass (no separate add over y); under a
 * recording tape it runs as conv, add and activation, so gradients reach it. */
tx_status tx_conv(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc, tx_tensor *out);
/* The gradient of conv w.r.t. its input: x [N, C, (H,) W], w [C, M/group, (kH,) kW]
 * → [N, M, (Ho,) Wo], Ho = stride·(H−1) + output_padding + (kH−1)·dilation + 1 − pads. */
tx_status tx_conv_transpose(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *desc,
                            tx_tensor *out);

typedef struct tx_pool_desc {
    int kernel_shape[2]; /* maxpool / averagepool: required (> 0) */
    int strides[2];      /* 0 = 1 */
    int dilations[2];    /* 0 = 1 */
    int pads[4];         /* begin..., end... (non-negative) */
    tx_auto_pad auto_pad;
    bool ceil_mode;         /* output size rounds up (a window must start inside the
                               input or its begin padding, as in PyTorch) */
    bool count_include_pad; /* averagepool: padded cells count in the divisor */
} tx_pool_desc;

/* op: TX_OP_MAXPOOL, TX_OP_AVERAGEPOOL (desc required), TX_OP_GLOBALMAXPOOL,
 * TX_OP_GLOBALAVERAGEPOOL (desc may be NULL; the output keeps rank with
 * spatial dims of 1). MaxPool's optional Indices output is not produced. */
tx_status tx_pooling(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_pool_desc *desc, tx_tensor *out);
/* ---- ONNX operator set: reductions, softmax, normalizations, elementwise
 * extras. Axes follow ONNX: negative counts from the end. ---- */

typedef struct tx_reduce_desc {
    int n_axes;                /* entries used in axes; 0 = every axis (ONNX empty
                                  axes); ArgMax/ArgMin: 0 = axis 0, else exactly 1 */
    int axes[TX_MAX_RANK];     /* each at most once */
    bool drop_dims;            /* ONNX keepdims = 0: remove the reduced axes
                                  (default keeps them with size 1) */
    bool noop_with_empty_axes; /* ONNX: n_axes == 0 returns x unchanged */
    bool select_last_index;    /* ArgMax/ArgMin: ties give the last index */
} tx_reduce_desc;

/* Any op of family REDUCE: reduce_sum, reduce_mean, reduce_max, reduce_min,
 * reduce_prod, reduce_l1, reduce_l2, reduce_sum_square, reduce_log_sum,
 * reduce_log_sum_exp, and argmax / argmin (int32 indices; NaN beats every
 * number, as in numpy). `desc` NULL: all axes, keepdims. NaN propagates.
 * Empty reductions give the identity (sum 0, prod 1, max -inf, min +inf,
 * log_sum_exp -inf, mean NaN). Large ones run as a tree of short draws. */
tx_status tx_reduce(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_reduce_desc *desc, tx_tensor *out);

typedef struct tx_softmax_desc {
    int axis;       /* NULL desc: -1 (ONNX opset >= 13 default); pre-13 default is 1 */
    bool coerce_2d; /* opset < 13: normalize over the flattened dims [axis, rank) */
} tx_softmax_desc;

/* softmax or log_softmax along one axis, max-subtracted (numerically stable). */
tx_status tx_softmax(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_softmax_desc *desc,
                     tx_tensor *out);

typedef struct tx_norm_desc {
    float epsilon; /* 0: 1e-5 (the ONNX default) */
    int axis;      /* layer_norm: first normalized axis; ONNX's default is -1, which is
                      not the zero value: set it */
} tx_norm_desc;

/* batch_norm (inference): inputs x [N, C, ...], scale, B, mean, var (each [C]);
 * instance_norm: x [N, C, ...], scale [C], B [C];
 * layer_norm: x, scale[, bias], normalized over dims [axis, rank); scale and
 * bias have the normalized shape or trailing part of it (or one element). */
tx_status tx_norm(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                  const tx_norm_desc *desc, tx_tensor *out);

/* Family ACT, ONNX defaults in brackets: hard_sigmoid max(0, min(1, alpha x +
 * beta)) [0.2, 0.5]; leaky_relu [alpha 0.01]; elu [alpha 1]; selu
 * [alpha 1.67326319, beta = gamma 1.05070102]; celu [alpha 1];
 * thresholded_relu x > alpha ? x : 0 [1]; shrink [alpha = lambd 0.5, beta =
 * bias 0]; affine alpha x + beta [1, 0] (ONNX's experimental Affine; what
 * sessions fuse a Mul and an Add by scalar constants into); swish x
 * sigmoid(alpha x) [1] (SiLU; what sessions fuse x * Sigmoid(x), or of
 * Mul(x, alpha), into). */
tx_status tx_activation(tx_ctx *ctx, tx_op op, tx_tensor x, float alpha, float beta,
                        tx_tensor *out);

/* Values converted to dtype `to` (float → int32 truncates toward zero, NaN → 0);
 * as_bool: every nonzero value (NaN included) becomes 1 (ONNX bool). */
tx_status tx_cast(tx_ctx *ctx, tx_tensor x, tx_dtype to, bool as_bool, tx_tensor *out);

/* Family NARY with numpy broadcasting over all inputs: where (cond, a, b:
 * cond != 0 ? a : b; 3 inputs) and the variadic sum, mean, min_n, max_n
 * (1 or more inputs of one dtype). */
tx_status tx_nary(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs, tx_tensor *out);
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
    TX_RESIZE_HALF_PIXEL = 0,            /* x_in = (x_out + 0.5) / scale - 0.5 */
    TX_RESIZE_ASYMMETRIC,                /* x_in = x_out / scale (ONNX Upsample) */
    TX_RESIZE_ALIGN_CORNERS,             /* x_in = x_out * (in - 1) / (len - 1) */
    TX_RESIZE_PYTORCH_HALF_PIXEL,        /* half_pixel, but -0.5 where len == 1 */
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
    tx_resize_mode mode;        /* linear/cubic interpolate every dim not mapped 1:1 */
    tx_resize_coord coord;      /* ONNX coordinate_transformation_mode */
    tx_resize_nearest nearest;  /* ONNX nearest_mode */
    float scales[TX_MAX_RANK];  /* per dim of x, > 0; 0 means 1; out = floor(in * scale) */
    int64_t sizes[TX_MAX_RANK]; /* output shape; when any entry is nonzero, sizes
                                   win and scale = out / in (0 keeps that dim) */
    float cubic_a;              /* cubic coefficient; 0 means -0.75 (ONNX default) */
    bool exclude_outside;       /* cubic: taps outside x weigh 0, the rest renormalised */
    tx_tensor residual;         /* optional, y's shape and dtype: added where the resize
                                   writes y (a feature pyramid's top-down Add) */
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
    float lo, hi;            /* clip */
    tx_matmul_desc matmul;   /* matmul (bias: the third input, residual the fourth; with
                                fewer inputs, attrs' own bias / residual are used) */
    tx_conv_desc conv;       /* conv, conv_transpose (bias: the third input, residual the
                                fourth; with fewer inputs, attrs' own are used) */
    tx_pool_desc pool;       /* maxpool, averagepool (global pools ignore it) */
    tx_reduce_desc reduce;   /* REDUCE family */
    tx_softmax_desc softmax; /* softmax, log_softmax (zero: axis 0) */
    tx_norm_desc norm;       /* NORM family */
    float alpha, beta;       /* ACT family (given as is: no ONNX defaults) */
    tx_dtype cast_to;        /* cast */
    bool cast_bool;          /* cast: to 0/1 */
    struct {                 /* data movement and resize */
        int axis;            /* concat, split, gather */
        int n_perm;          /* transpose: entries in perm; 0 reverses the dims */
        int perm[TX_MAX_RANK];
        int n_split;      /* split: number of outputs (0 means 1) */
        int64_t split[8]; /* split sizes (up to 8 outputs here; tx_split takes
                             any number); all zero: equal parts */
        tx_slice_desc slice;
        tx_pad_desc pad;
        tx_resize_desc resize;
        int rank; /* expand: target shape */
        int64_t shape[TX_MAX_RANK];
        int64_t repeats[TX_MAX_RANK]; /* tile */
        int blocksize;                /* depth_to_space, space_to_depth */
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
/* Inputs the op takes; 0 for the variadic ones (one or more). */
int tx_op_arity(tx_op op);

/* ---- ONNX sessions (engine/model/) ----
 *
 * A session holds one ONNX model: its graph is planned once (constant
 * shape subgraphs folded on the host, BatchNormalization folded into Conv,
 * MatMul/Gemm + Add + activation fused into one tx_matmul, intermediates freed
 * after their last consumer) and its weights are uploaded once, at creation.
 *
 *     tx_session *sess;
 *     if (tx_session_create(ctx, bytes, len, NULL, &sess)) puts(tx_last_error(ctx));
 *     tx_feed feed = {"x", x};
 *     const char *fetch = "y";
 *     tx_tensor y;
 *     tx_session_run(sess, &feed, 1, &fetch, 1, &y);   // y is the caller's
 *     tx_tensor_destroy(ctx, y);
 *     tx_session_destroy(sess);
 *
 * Float element types (float, double, float16) run as TX_DTYPE_FLOAT32; all
 * integer types and bool as TX_DTYPE_INT32 (exact to 2^24). An op type the
 * engine lacks makes tx_session_create return TX_STATUS_UNSUPPORTED with
 * every missing op type named in the message.
 *
 * After a context loss, tx_ctx_restore re-uploads each session's weights
 * (the session registers a restore hook and keeps the host copies), so the
 * same session runs again on tensors created after the restore. */

typedef struct tx_session tx_session;

typedef struct tx_session_desc {
    bool no_fusion;           /* keep every node a separate op (debugging, tests) */
    tx_device device;         /* 0 or TX_DEVICE_AUTO: chosen by measurement (below);
                                 TX_DEVICE_GPU / TX_DEVICE_CPU: always that one */
    const char *choice_cache; /* auto: the file remembering choices per model and
                                 renderer; NULL: $TEXEL_CACHE_DIR/device-choices,
                                 else ~/.cache/texel/device-choices; "": none */
} tx_session_desc;

/* How TX_DEVICE_AUTO chooses. A software rasterizer (llvmpipe, softpipe,
 * SwiftShader, Microsoft Basic Render Driver: the renderer string) runs on
 * the CPU (env TEXEL_AUTO_MEASURE: measure anyway). Otherwise the session's
 * first run goes to the CPU (its result never waits on shader compiles).
 * With KHR_parallel_shader_compile the second run starts with a warm-up
 * pass that issues every GPU program without drawing, and the CPU serves
 * runs until they have compiled in the background. Then runs go to the GPU
 * until its programs are specialized (one more CPU run if the CPU has only
 * been timed cold), and the faster steady state is kept from then on and
 * remembered in choice_cache for the same model bytes and renderer, so the
 * next session decides without measuring. tx_session_stats says which
 * device ran and why. */

typedef struct tx_value_info {
    const char *name;                   /* owned by the session */
    int rank;                           /* -1 when the model does not say */
    int64_t shape[TX_MAX_RANK];         /* -1 for a dynamic dimension */
    const char *dim_names[TX_MAX_RANK]; /* a dynamic dimension's name ("batch"), or NULL */
    tx_dtype dtype;
    int onnx_type; /* TensorProto.DataType (1 float, 7 int64 ...) */
} tx_value_info;

typedef struct tx_feed {
    const char *name;
    tx_tensor tensor; /* stays the caller's */
} tx_feed;

tx_status tx_session_create(tx_ctx *ctx, const void *bytes, size_t len, const tx_session_desc *desc,
                            tx_session **out);
void tx_session_destroy(tx_session *sess);
int tx_session_input_count(const tx_session *sess);
int tx_session_output_count(const tx_session *sess);
tx_status tx_session_input_info(const tx_session *sess, int i, tx_value_info *out);
tx_status tx_session_output_info(const tx_session *sess, int i, tx_value_info *out);
/* Runs the graph on `feeds` (every input once) and returns the `fetches`
 * (graph output names; NULL with n_fetches = output count means all, in
 * order) as new tensors the caller destroys. Errors name the node. */
tx_status tx_session_run(tx_session *sess, const tx_feed *feeds, int n_feeds,
                         const char *const *fetches, int n_fetches, tx_tensor *outs);
typedef struct tx_session_stats {
    int nodes;                   /* in the file */
    int steps;                   /* ops run per tx_session_run */
    int folded;                  /* nodes computed at plan time (constants, shapes) */
    int fused;                   /* nodes fused into another op */
    uint64_t weight_bytes;       /* constants uploaded at creation: the bytes they take
                                    on the device (2 a value in float16 storage) */
    uint64_t host_bytes;         /* host memory the session keeps: the parsed model (its
                                    float16 weights as halves) and folded constants */
    tx_device device;            /* the device the last run used (before any: the next one's) */
    tx_device next_device;       /* the device the next run uses (auto: its choice once decided) */
    bool decided;                /* auto has settled (or the device was fixed) */
    char reason[192];            /* why that device: "fixed by the session's desc" (or
                                    "by TEXEL_DEVICE"), "software rasterizer
                                    (llvmpipe ...)", "measured: gpu 4.1 ms, cpu 9.3 ms",
                                    "remembered: ...", "trial: ..." */
    uint64_t runs_gpu, runs_cpu; /* runs per device so far */
    double gpu_ms, cpu_ms;       /* auto's steady-state measurements (0: none) */
    /* device values read back mid-run for a host path, over all runs: shape
     * inputs fed at run time, and the data-dependent ops (NonZero,
     * NonMaxSuppression, Unique, Compress, TopK, the Scatter indices) */
    uint64_t readbacks, readback_bytes;
    double load_compile_ms; /* a GPU session with static input shapes issues every
                               generic program at creation: the time that took
                               (0: not done; TEXEL_NO_LOAD_COMPILE=1 turns it off) */
} tx_session_stats;
tx_status tx_session_stats_get(const tx_session *sess, tx_session_stats *out);
/* Where a run's time goes, step by step. From tx_session_profile_enable(s,
 * true) on (which also zeroes the counts), every step of a run is timed on
 * the host clock, and a GPU step that drew is waited for before the next
 * starts (a texel of its output read back: a round trip, ~0.5 ms in a
 * browser, which a small step's time includes), so profiled runs lose the
 * overlap of CPU and GPU work and take longer than others; false stops it.
 * A node fused into another step (an activation, a bias, a
 * BatchNormalization) counts in that step's time. */
typedef struct tx_step_profile {
    const char *op_type; /* the step's ONNX op ("Conv"); owned by the session */
    const char *name;    /* its node's name (may be "") */
    tx_op activation;    /* a fused activation (TX_OP_RELU ...), TX_OP_NONE for none */
    int runs;            /* timed runs of the step */
    double ms;           /* their total */
    uint64_t draws;      /* their GPU draws */
    uint64_t compiles;   /* programs they compiled (their time includes those) */
    tx_device device;    /* the device of the last timed run */
    int out_rank;        /* its first output's shape in that run (rank -1: none) */
    int64_t out_shape[TX_MAX_RANK];
    double macs; /* its multiply-adds in that run, by the ONNX op's definition
                    (Conv, ConvTranspose, MatMul, Gemm; 0 for other ops) */
} tx_step_profile;
tx_status tx_session_profile_enable(tx_session *sess, bool on);
/* Fills out[0 .. max-1] with the profile of the steps, in the order they run,
 * and returns how many there are (more than max: only the first max are
 * written); -1 when profiling is off or the arguments are bad. */
int tx_session_profile(const tx_session *sess, tx_step_profile *out, int max);
/* The device tensor of initializer `name` (a weight), owned by the session:
 * for fine-tuning, record tx_session_run and a loss on its output under a
 * tx_tape and ask tx_tape_grad for the weights' gradients; tx_optim_step
 * updates them in place, and the session's next runs use the new values.
 * Needs a session with a fixed device (desc.device gpu or cpu). Fine-tune
 * with desc.no_fusion: a conv weight the planner folded something into
 * (BatchNormalization, or a Mul or Add by constants) holds the folded values
 * (scaled in place where the conv alone reads it) or is not what the graph
 * runs (a copy was folded). A context loss restores the values the session
 * was created with (the file's, unless folded). */
tx_status tx_session_weight(tx_session *sess, const char *name, tx_tensor *out);

/* ---- training (engine/grad/): losses, a gradient tape, optimizers ----
 *
 *     tx_tape *tape;
 *     tx_tape_begin(ctx, &tape);                   // ops on ctx are recorded from here
 *     tx_matmul(ctx, x, w, &(tx_matmul_desc){.bias = b, .activation = TX_OP_RELU}, &h);
 *     tx_softmax_cross_entropy(ctx, h, labels, NULL, &loss, NULL);
 *     tx_tensor grads[2];
 *     tx_tape_grad(ctx, tape, loss, (tx_tensor[]){w, b}, 2, grads);  // d loss / d w, d b
 *     tx_tape_end(ctx, tape);                      // frees what it kept; grads are the caller's
 *     tx_optim_step(ctx, opt, (tx_tensor[]){w, b}, grads, 2);        // w, b updated in place
 *
 * Ops with a gradient: every unary and ACT op (relu ... mish, hard_sigmoid,
 * selu, celu, thresholded_relu, shrink, affine; floor, ceil, round and sign give
 * zeros), add, sub, mul, div, min, max, pow, prelu (broadcasting summed back),
 * float-to-float cast, matmul (transposes, bias, fused activation, batch dims,
 * rank-1 operands), conv (2-D and 1-D: stride, pads, auto_pad, dilation,
 * groups, bias, fused activation), conv_transpose (pads, auto_pad or
 * output_shape), average pools (any windows, ceil_mode too), max pools (any
 * windows; ties share g evenly), global pools, every
 * reduction (reduce_prod exact at zeros), softmax and log_softmax (coerce_2d
 * too), batch_norm (inference), layer_norm, instance_norm, where, sum, mean,
 * max_n, min_n, transpose, slice (any steps), split, pad (every mode), expand,
 * tile, concat (up to 8 inputs), gather, depth_to_space, space_to_depth,
 * resize (per dim, the resize of an identity matrix transposed; every mode
 * but tf_half_pixel_for_nearest outside nearest floor / round_prefer_floor),
 * reshape and the other views, and the losses. Comparisons, logic, is_nan,
 * argmax/argmin and casts to int32 pass no gradient (they are steps). What is
 * left (conv_transpose with an output_shape past its full result, the resize
 * modes above) is recorded too: tx_tape_grad through it returns UNSUPPORTED
 * naming the op, never a silent zero. */

typedef enum tx_loss_reduction {
    TX_LOSS_MEAN = 0, /* sum of the losses / sum of their weights (ONNX "mean") */
    TX_LOSS_SUM,
    TX_LOSS_NONE, /* one loss per label, shaped like the labels */
    TX_LOSS_REDUCTION_COUNT_
} tx_loss_reduction;
typedef struct tx_loss_desc {
    tx_loss_reduction reduction;
    tx_tensor weight;      /* {0}: every class weighs 1; else float32 [C] */
    bool has_ignore_index; /* labels equal to ignore_index weigh 0 */
    int32_t ignore_index;
} tx_loss_desc;
/* ONNX NegativeLogLikelihoodLoss: x [N, C, d...] float32, labels [N, d...]
 * int32 in [0, C) (or ignore_index): loss = -x[n, label, d...] · weight[label],
 * reduced as desc says (NULL: mean, no weight). */
tx_status tx_nll_loss(tx_ctx *ctx, tx_tensor x, tx_tensor labels, const tx_loss_desc *desc,
                      tx_tensor *out);
/* ONNX SoftmaxCrossEntropyLoss: nll_loss(log_softmax(scores, axis 1), labels).
 * log_prob (may be NULL) receives the log_softmax, the caller's to destroy. */
tx_status tx_softmax_cross_entropy(tx_ctx *ctx, tx_tensor scores, tx_tensor labels,
                                   const tx_loss_desc *desc, tx_tensor *out, tx_tensor *log_prob);
/* Mean (or sum, or none) of (a - b)^2, broadcasting. */
tx_status tx_mse_loss(tx_ctx *ctx, tx_tensor a, tx_tensor b, tx_loss_reduction reduction,
                      tx_tensor *out);

/* A gradient tape: while one is recording (one per context), every op run on
 * the context is recorded, keeping its inputs and output alive (views the
 * tape owns, so the caller may destroy its handles). */
typedef struct tx_tape tx_tape;
tx_status tx_tape_begin(tx_ctx *ctx, tx_tape **out);
/* Gradients of sum(y) with respect to xs[0..n) into grads[0..n) (new tensors,
 * the caller's; zeros where y does not depend on x). Stops the recording;
 * may be called again on the same tape for another y. */
tx_status tx_tape_grad(tx_ctx *ctx, tx_tape *tape, tx_tensor y, const tx_tensor *xs, int n,
                       tx_tensor *grads);
/* Stops recording (if it still is) and frees the tape and what it kept. */
void tx_tape_end(tx_ctx *ctx, tx_tape *tape);

typedef enum tx_optim_kind {
    TX_OPTIM_SGD = 0,  /* p -= lr (g + weight_decay p) */
    TX_OPTIM_MOMENTUM, /* v = momentum v + g (+ weight_decay p); p -= lr v (nesterov: g + momentum
                          v) */
    TX_OPTIM_ADAM,     /* Adam (weight_decay added to g, L2) */
    TX_OPTIM_ADAMW,    /* Adam with decoupled weight decay: p -= lr weight_decay p */
    TX_OPTIM_COUNT_
} tx_optim_kind;
typedef struct tx_optim_desc {
    tx_optim_kind kind;
    float lr;       /* 0: 0.01 (SGD, momentum), 0.001 (Adam, AdamW) */
    float momentum; /* 0: 0.9 */
    bool nesterov;
    float beta1, beta2; /* 0: 0.9, 0.999 */
    float epsilon;      /* 0: 1e-8 */
    float weight_decay; /* 0: none (AdamW too) */
} tx_optim_desc;
typedef struct tx_optim tx_optim;
tx_status tx_optim_create(tx_ctx *ctx, const tx_optim_desc *desc, tx_optim **out);
/* One step over params[0..n) with their grads: each param's values are
 * replaced in place (its handle stays; views of it keep the old values).
 * The state (momentum, Adam's moments) is per position in the list, made on
 * the first step: pass the same params in the same order each step. */
tx_status tx_optim_step(tx_ctx *ctx, tx_optim *opt, const tx_tensor *params, const tx_tensor *grads,
                        int n);
void tx_optim_destroy(tx_ctx *ctx, tx_optim *opt);

/* Compiling ahead, for a progress bar before the first GPU run: walks the
 * session's GPU plan for feeds of these shapes without drawing, so every
 * generic program it needs starts compiling (and the GPU weights are
 * uploaded); *programs (may be NULL) gets how many programs the plan uses,
 * those issued before (at the session's load, or by an earlier walk)
 * included. With
 * KHR_parallel_shader_compile (tx_caps.parallel_compile) they compile in the
 * background and tx_session_compiling says how many programs of the context
 * are still compiling (programs - that = compiled); without it the call
 * returns when all have compiled. Meant for sessions that run on the GPU
 * (tx_session_stats.device); the first run then only waits for what is still
 * compiling. */
tx_status tx_session_compile(tx_session *sess, const tx_feed *feeds, int n_feeds, int *programs);
int tx_session_compiling(const tx_session *sess);

#ifdef __cplusplus
}
#endif
#endif
