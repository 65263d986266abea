/* Engine-private declarations shared by the engine's C files. */
#ifndef TX_INTERNAL_H
#define TX_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gl/gl.h"
#include "texel.h"

/* Milliseconds on a monotonic clock: compile times, auto's trial timings. */
static inline double tx_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Programmer bugs inside the engine: always on, never for caller input. */
#define TX_ASSERT(c)                                                                               \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "texel: assertion failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define TX_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

typedef enum tx_family {
    TX_FAMILY_UNARY,
    TX_FAMILY_CLIP,
    TX_FAMILY_BINARY,
    TX_FAMILY_MATMUL,
    TX_FAMILY_CONV,
    TX_FAMILY_CONV_TRANSPOSE,
    TX_FAMILY_POOL,
    TX_FAMILY_REDUCE,
    TX_FAMILY_SOFTMAX,
    TX_FAMILY_NORM,
    TX_FAMILY_ACT,
    TX_FAMILY_CAST,
    TX_FAMILY_NARY,
    TX_FAMILY_MOVE,   /* data movement: ops/move.c, glsl-templates/move.glsl */
    TX_FAMILY_RESIZE, /* nearest / n-linear resampling: ops/resize.c */
    TX_FAMILY_OPTIM,  /* fused optimizer steps (no op of texel_ops.def): grad/optim.c */
    TX_FAMILY_COUNT_
} tx_family;

/* ---- storage and tensors ---- */

/* One pooled texture. Width is always a power of two so that texel index →
 * coordinates is a shift and a mask in GLSL. */
typedef struct tx_texture {
    tx_gl_tex gl;
    int w, h;
    int wshift;
    int size_class;
    int layers; /* an array texture's (tx_pool_acquire_layers), else 0 */
    size_t bytes;
    uint64_t released; /* pool tick when it was last freed (age for eviction) */
} tx_texture;

/* A GPU storage whose texture holds a matmul's row tiles as they were drawn
 * (one layer per row phase, engine/gpu/matmul.c), left for the consumer to
 * read where it can instead of interleaving them into row-major texels:
 * element (b, m, col) of the [nbatch, m, n] product is lane col % 4 of texel
 * (b * ceil(m / tm) + m / tm) * ceil(n / 4) + col / 4 of layer m % tm.
 * tm 0: the texture is row-major, as every tensor's is by default. */
typedef struct tx_phases {
    int tm; /* 4 or 8; 0: flat */
    int64_t m, n, nbatch;
    bool npad; /* the tiles' rows padded to whole texels (TX_NPAD) */
} tx_phases;

/* Storage shared by a tensor and its views: a texture (GPU) or host memory
 * (CPU). Both hold int32 values as floats, so the kernels of both devices
 * share the GPU's semantics. */
typedef struct tx_storage {
    tx_device dev;    /* TX_DEVICE_GPU or TX_DEVICE_CPU */
    tx_texture tex;   /* GPU */
    tx_phases phases; /* GPU: tex's layout (tm 0: row-major) */
    float *host;      /* CPU: numel floats (at least 4), 64-byte aligned */
    size_t host_bytes;
    uint32_t generation; /* ctx->generation when made; older: lost with the context */
    int refs;
    int64_t numel;
    /* GPU, larger than one texture (engine/split.h): n_parts internal tensors
     * holding consecutive ranges of the elements; tex is unused. */
    int n_parts;
    tx_tensor *parts;
    uint32_t version; /* bumped by every write of the contents */
    /* A derived layout kept with the storage, valid while packed_key and
     * packed_version match: GPU, conv's packed weights (engine/gpu/conv.c);
     * CPU, Winograd's transformed weights (host_packed, tx_cpu_derived). */
    tx_texture packed;
    float *host_packed;
    size_t host_packed_bytes;
    uint64_t packed_key;
    uint32_t packed_version;
} tx_storage;

typedef struct tx_slot {
    uint32_t gen; /* bumped on destroy; a handle carries the gen it was made with */
    bool live;
    int rank;
    int64_t shape[TX_MAX_RANK];
    int64_t numel;
    tx_dtype dtype;
    tx_storage *st;
    /* Bit d set: dim d may have another size at the next run (a session's
     * symbolic dims). GPU kernels then keep their program variant (#defines)
     * independent of that size, so a new length needs no new program. */
    uint8_t vary;
} tx_slot;

typedef struct tx_pool {
    tx_texture *free_tex; /* free textures, oldest first */
    int n_free, cap_free;
    uint64_t tick; /* texture acquisitions so far: the pool's clock */
    size_t limit;  /* most bytes of free textures kept */
} tx_pool;

/* ---- codegen ---- */

#define TX_MAX_PARAMS  64
#define TX_MAX_INPUTS  8
#define TX_MAX_OUTPUTS 8

typedef enum tx_param_type { TX_PARAM_INT, TX_PARAM_FLOAT } tx_param_type;

typedef struct tx_param {
    const char *name; /* "p_n": a static string */
    tx_param_type type;
    union {
        int i;
        float f;
    } v;
} tx_param;

/* Everything codegen needs to produce a program; both cache keys are made
 * from exactly these fields, so a key cannot omit what the source bakes in. */
typedef struct tx_program_req {
    tx_family family;
    const char *template_name; /* glsl-templates/<name>.glsl */
    char defines[384];         /* structural "#define X v\n" lines (both variants) */
    int n_inputs, n_outputs;
    unsigned array_inputs; /* bit i: u_in<i> is a sampler2DArray (a TX_GL_ARRAY texture) */
    bool generic_only;     /* a helper pass (e.g. matmul's interleave): never specialized */
    double macs;           /* the draw's multiply-adds, where the op counts them (0: not
                              counted): a big draw on a software rasterizer runs
                              its specialized program from the first call (cache.c) */
    int n_params;
    tx_param params[TX_MAX_PARAMS];
} tx_program_req;

typedef struct tx_program tx_program;

/* ---- cache ---- */

typedef struct tx_cache tx_cache;

/* ---- the context ---- */

struct tx_ctx {
    tx_gl gl;
    tx_caps caps;
    tx_stats stats;
    int k;          /* specialize after k identical calls; -1 never */
    bool k_default; /* k is the default (neither the desc nor TEXEL_SPECIALIZE_AFTER set it):
                       on a software rasterizer small draws then wait longer (cache.c) */
    int max_specialized;
    size_t budget;
    int max_tex; /* effective max texture width/height */
    bool log_shaders;
    /* Context loss (context.c). `lost` is latched (by a driver report or
     * tx_ctx_mark_lost) until tx_ctx_restore; every GPU call fails meanwhile. */
    bool lost;
    bool no_gpu;          /* tx_ctx_desc.no_gpu: lost from birth, GPU calls say UNSUPPORTED */
    char no_gpu_why[256]; /* why, where make_gl failed ("": desc.no_gpu) */
    /* tx_ctx_desc.make_gl not called yet: lost from birth like no_gpu, until
     * tx_ctx_need_gl makes the GL context at the first GPU use */
    bool gl_pending;
    /* tx_ctx_gpu_hint, while gl_pending: the host is looking; what it found */
    bool hint_looking;
    char hint_renderer[128];
    double hint_gflops;
    bool (*make_gl)(void *user, char *why, size_t why_size);
    void *make_gl_user;
    bool gl_dropped;     /* this loss's GL objects are already forgotten */
    uint32_t generation; /* bumped when they are: older storages are lost */
    struct {
        tx_restore_hook fn;
        void *user;
    } restore_hooks[16];
    /* kept for tx_ctx_restore */
    tx_glproc (*get_proc_address)(const char *name);
    int max_texture_size_req;
    bool no_parallel_compile;
    bool float16_storage_req;
    bool emulate_division_req;
    tx_device device;               /* tx_tensor_create's default (never DEFAULT) */
    int cpu_threads;                /* as asked (desc / env); 0: one per core */
    struct tx_threadpool *cpu_pool; /* the CPU device's threads, made on first use */
    bool compile_only;              /* GPU kernels warm their programs, draw nothing */
    uint64_t warm_requests; /* tx_cache_warm calls: programs a compile-only walk asked for */
    double probe_gflops;    /* auto's software-rasterizer probe (0: not made) */
    bool software_gl;       /* caps.renderer names a software rasterizer */
    bool tune_kernels;      /* env TEXEL_TUNE=1: kernel variants timed on first use */
    bool no_phases;         /* env TEXEL_PHASES=0: matmuls interleave their row tiles */
    bool tune_measuring;    /* tx_tune_run is timing the variants: each runs as asked */
    signed char matmul_tm[TX_TUNE_CLASSES]; /* per size class: measured tile rows (0: not yet) */
    signed char conv_tp[TX_TUNE_CLASSES];   /* per size class: positions per conv fragment */
    /* Test hooks (tests/ only): simulate driver failures. */
    bool fault_specialized;  /* the next specialized link "fails" */
    bool fault_generic;      /* the next generic link "fails" */
    bool fault_draw_error;   /* the next draw leaves a real GL error behind */
    int fault_tex_create;    /* this many texture allocations are refused */
    int fault_compiling;     /* this many tx_cache_compiling calls see one more compiling */
    double fault_compile_ms; /* added to every specialized compile's time for pacing (cache.c) */
    double fault_price_ms;   /* > 0: the compile price sig_k rents against (cache.c) */
    char err[1024];

    /* The slots, in chunks of TX_SLOT_CHUNK that never move: a tx_slot
     * pointer stays valid while its tensor lives, whatever is created after. */
    tx_slot **slot_chunks;
    int n_slots, cap_slots; /* cap_slots: chunks x TX_SLOT_CHUNK */
    uint32_t handle_salt;   /* per-context start of slot generations (tensor.c) */
    uint32_t *free_slots;
    int n_free_slots, cap_free_slots;

    tx_pool pool;
    tx_cache *cache;

    struct tx_readbacks *reads; /* asynchronous reads (readback.c) */
    /* A hash of the draws (program, output size) since the last read began:
     * the same work queued again gives the same key, so the web wrapper can
     * remember how long a read of it waited (texel.js, blocking reads). */
    uint64_t work_key;
    struct tx_tape *tape; /* the recording gradient tape (engine/grad/tape.c) */
    int tape_paused;      /* > 0: ops run unrecorded (composites, backward) */
};

/* ---- status and error reporting (error.c) ----
 * The bottom of the engine: every unit reports through these, and error.c
 * calls back into none of them (it writes ctx->err, reads ctx->lost). */
tx_status tx_fail(tx_ctx *ctx, tx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The check a public entry starts with: ctx (NULL: TX_STATUS_INVALID_ARGUMENT,
 * nowhere to say more), then that the argument named `arg` is given (not
 * NULL; else "<fn>: <arg> is NULL"). */
tx_status tx_check_arg(tx_ctx *ctx, const char *fn, const char *arg, bool given);
void tx_shape_str(char *buf, size_t n, int rank, const int64_t *shape);

/* ---- context loss (loss.c) ----
 * Above error.c and below every unit that talks to the driver: latching only
 * sets flags. Dropping the old context's objects and restoring are
 * context.c's, which calls those units. */
/* Latches context loss: every call fails with TX_STATUS_CONTEXT_LOST until
 * tx_ctx_restore; when the driver confirms the loss, no GL object is deleted
 * any more (gl.lost). Nothing is freed here: it may run in the middle of an
 * op, whose pointers stay valid. tx_ctx_mark_lost and tx_ctx_restore then
 * drop the old context's objects. */
void tx_ctx_set_lost(tx_ctx *ctx);
/* The status to return after the driver failed at `what`: CONTEXT_LOST (and
 * latched) when the context is gone, else `otherwise` with the message. */
tx_status tx_gl_failure(tx_ctx *ctx, tx_status otherwise, const char *op, const char *what);
/* glstart.c: the GL context of a tx_ctx_desc.make_gl context, made at the
 * first GPU use. Each front door of GPU work calls it before its lost
 * check: OK at once where nothing is pending (GL made, lost or absent: that
 * check answers); else make_gl and the probes run, and a failure leaves a
 * context of the CPU device only (UNSUPPORTED, naming `op` and why). */
tx_status tx_ctx_need_gl(tx_ctx *ctx, const char *op);
/* glstart.c, for context.c: probes the current GL context by rendering into
 * ctx->caps (false, message in ctx->err, when texel cannot run on it); loads,
 * probes and makes the program cache (CONTEXT_LOST, UNSUPPORTED or
 * OUT_OF_MEMORY with why, the GL layer forgotten again); resets the GL layer
 * once its objects are gone, keeping the settings that outlive a context. */
bool tx_ctx_probe(tx_ctx *ctx, const tx_ctx_desc *d);
tx_status tx_gl_start(tx_ctx *ctx, char *why, size_t n);
void tx_gl_forget(tx_ctx *ctx);

/* tensor.c */
tx_slot *tx_slot_get(tx_ctx *ctx, tx_tensor t);
/* Slot i of the table (i < ctx->n_slots), live or not. */
#define TX_SLOT_CHUNK_BITS 8
#define TX_SLOT_CHUNK      (1 << TX_SLOT_CHUNK_BITS)
static inline tx_slot *tx_slot_at(tx_ctx *ctx, int i) {
    return &ctx->slot_chunks[i >> TX_SLOT_CHUNK_BITS][i & (TX_SLOT_CHUNK - 1)];
}
/* numel floats out of a storage, split across textures (engine/split.h) or
 * not: the values as stored (int32 tensors' too). */
tx_status tx_storage_read(tx_ctx *ctx, const char *op, tx_storage *stg, float *vals, int64_t numel);
/* A new tensor on an existing storage (a split one: engine/split.h); the
 * storage is released on failure. */
tx_status tx_tensor_wrap(tx_ctx *ctx, const char *op, tx_storage *stg, int rank,
                         const int64_t *shape, tx_dtype dtype, tx_tensor *out);
/* Sets t's slot's vary mask (tx_slot.vary); a stale handle is ignored. */
void tx_tensor_set_vary(tx_ctx *ctx, tx_tensor t, unsigned mask);
/* a takes b's storage and b a's (same element count; optimizers update a
 * parameter in place under its handle). */
void tx_tensor_swap_storage(tx_ctx *ctx, tx_tensor a, tx_tensor b);

/* grad/tape.c: the recording gradient tape. The fronts of differentiable ops
 * call tx_tape_note after they succeeded (a no-op unless a tape records). */
enum {
    GX_OP_RESHAPE = TX_OP_COUNT_ + 1, /* views: reshape, flatten, squeeze, unsqueeze */
    GX_OP_SCE,                        /* softmax cross-entropy: scores, labels[, weight] */
    GX_OP_NLL,                        /* negative log-likelihood: log_prob, labels[, weight] */
    GX_OP_MSE,                        /* mean squared error: a, b */
};
bool tx_tape_recording(const tx_ctx *ctx);
/* Records op (inputs ins[0..n), attributes a (or NULL), loss desc (or NULL),
 * output out) on the recording tape; aux (or {0}) is a value the backward
 * needs, which the tape takes over (destroyed when nothing records). A
 * failure to record (out of memory) marks the tape broken: tx_tape_grad
 * then says so. */
void tx_tape_note(tx_ctx *ctx, int op, const tx_tensor *ins, int n, const tx_op_attrs *a,
                  const tx_loss_desc *loss, tx_tensor out, tx_tensor aux);
/* Pauses / resumes recording (composite ops run their parts unrecorded). */
void tx_tape_pause(tx_ctx *ctx);
void tx_tape_resume(tx_ctx *ctx);
/* double → int64 as a cast would, saturating where the cast is undefined
 * (NaN → 0, beyond ±2^63 → the limit): host math on hostile values. */
int64_t tx_sat_i64(double v);
/* IEEE 754 half → float, exactly (NaN payloads kept): one value's bits, and n
 * values (tensor.c). */
uint32_t tx_half_bits_to_float_bits(uint16_t h);
/* float → IEEE 754 half, to nearest even (what an RGBA16F upload does). */
uint16_t tx_float_to_half_bits(float f);
void tx_halves_to_floats(const uint16_t *h, float *f, int64_t n);
void tx_floats_to_halves(const float *f, uint16_t *h, int64_t n);
/* ONNX Slice along a dim of length dim: the length of [start:end:*step]
 * (*step != 0) after ONNX's clamping (start into [0, dim] stepping forward,
 * [0, dim - 1] backward), *first its first index (0 when empty). *step is
 * clamped to [-(dim + 1), dim + 1] (a step past the dim takes one element),
 * which keeps the arithmetic in range. The device slice, the host one and
 * shape inference share it (engine/ops/move.c). */
int64_t tx_slice_dim(int64_t dim, int64_t start, int64_t end, int64_t *step, int64_t *first);
tx_status tx_check_tensor(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t, tx_slot **out);
/* The checks an entry on one tensor starts with: ctx, out not NULL ("<fn>:
 * out is NULL"), then tensor t (named arg) into *ts. */
tx_status tx_check_out_tensor(tx_ctx *ctx, const char *fn, const void *out, const char *arg,
                              tx_tensor t, tx_slot **ts);
/* tx_check_tensor of an op's input named `arg`; with float_only, an int32
 * one is refused ("<op>: <arg> must be float32"). */
tx_status tx_check_input(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t, bool float_only,
                         tx_slot **out);
/* tx_check_input of inputs t[0..n), named args[i], into out[i]: the first failure. */
tx_status tx_check_inputs(tx_ctx *ctx, const char *op, int n, const char *const *args,
                          const tx_tensor *t, bool float_only, tx_slot **out);
/* Creates an uninitialised tensor for an op's output on `dev` (DEFAULT: the
 * context's default device). Slots never move: pointers stay valid. */
tx_status tx_tensor_alloc(tx_ctx *ctx, const char *op, tx_device dev, int rank,
                          const int64_t *shape, tx_dtype dtype, tx_tensor *out);
void tx_tensors_release_all(tx_ctx *ctx);
/* A view of t with dtype `dtype` (no draw, no copy): int32 values live as
 * floats on both devices, so an int32 tensor read as float32 is exact, and a
 * float32 tensor of integral values within int32's exact range reads as
 * int32 (the caller guarantees that; the quantization executors' clipped
 * results are). */
tx_status tx_tensor_retype(tx_ctx *ctx, tx_tensor t, tx_dtype dtype, tx_tensor *out);
/* Texture floats → caller values (float32 copied, int32 converted). */
void tx_texels_to_values(tx_dtype dtype, const float *texels, int64_t numel, void *dst);

/* pool.c */
tx_status tx_pool_acquire(tx_ctx *ctx, const char *op, int64_t texels, tx_texture *out);
/* An array texture of `layers` layers of `texels` each (gl has TX_GL_ARRAY
 * set); tx_layer names one of them as a render target. */
tx_status tx_pool_acquire_layers(tx_ctx *ctx, const char *op, int64_t texels, int layers,
                                 tx_texture *out);
tx_texture tx_layer(const tx_texture *array, int i);
void tx_pool_release(tx_ctx *ctx, tx_texture *tex);
void tx_pool_trim(tx_ctx *ctx, size_t keep_bytes);
/* Forgets a texture without deleting it (context loss). */
void tx_pool_forget(tx_ctx *ctx, tx_texture *tex);
/* The texture dims for `texels` texels (without allocating). */
bool tx_tex_dims(const tx_ctx *ctx, int64_t texels, int *size_class, int *w, int *h);
/* The width shift of the texture tx_pool_acquire gives for `texels` (-1: too large). */
int tx_tex_wshift(const tx_ctx *ctx, int64_t texels);

/* codegen/codegen.c */
void tx_req_init(tx_program_req *r, tx_family fam, const char *template_name, int n_inputs,
                 int n_outputs);
void tx_req_define(tx_program_req *r, const char *name, const char *value);
void tx_req_define_int(tx_program_req *r, const char *name, int value);
void tx_req_int(tx_program_req *r, const char *name, int v);
/* Several int params at once, in order: TX_REQ_INTS(r, {"p_M", m}, {"p_K", k}). */
typedef struct {
    const char *name;
    int v;
} tx_req_iv;
void tx_req_ints(tx_program_req *r, const tx_req_iv *p, size_t n);
#define TX_REQ_INTS(r, ...)                                                                        \
    tx_req_ints((r), (const tx_req_iv[]){__VA_ARGS__},                                             \
                sizeof((const tx_req_iv[]){__VA_ARGS__}) / sizeof(tx_req_iv))
void tx_req_float(tx_program_req *r, const char *name, float v);
/* 1 / width and 1 / height of t as float params iw and ih (for
 * tx_texel_n: texture() reads; names are string literals). */
void tx_req_tex_inv(tx_program_req *r, const char *iw, const char *ih, const tx_texture *t);
/* Defines `name` where `in` is as wide as `out`: texel t of each then sits
 * at the same position, so the template may read the fragment's own
 * (tx_texel_here) instead of computing t's. */
void tx_req_here(tx_program_req *r, const char *name, const tx_texture *in, const tx_texture *out);
/* A clip's finite bounds: TX_HAS_LO and p_lo, TX_HAS_HI and p_hi. */
void tx_req_clip(tx_program_req *r, float lo, float hi);
/* A fused activation (none: TX_OP_NONE): TX_ACT names its function tx_u_<op>;
 * a clip's bounds as tx_req_clip. */
void tx_req_act(tx_program_req *r, tx_op act, float lo, float hi);
/* A residual read as the program's input `in` (TX_RESID and p_r_ws, what
 * shaders/elementwise.glsl's tx_resid_act adds). */
/* TX_RESID: input `in` (texture resid) is a residual added to output texel
 * t; r_numel < y_numel: it covers y's first r_numel elements (a multiple
 * of 4; a zero-padded residual's), the rest adds 0 (TX_RESID_N). */
void tx_req_resid(tx_program_req *r, int in, const tx_texture *resid, int64_t r_numel,
                  int64_t y_numel);
/* Full GLSL for the generic (specialized = false) or specialized variant.
 * Returns a malloc'd string. */
char *tx_codegen(const tx_program_req *r, bool specialized, bool emulate_div);
const char *tx_template_source(const char *name); /* embedded at build time */

/* gpu/device.c: waits until the GPU has written t (nothing for a CPU
 * tensor) by reading one texel of it, counted in bytes_downloaded: timing
 * needs it, since glFinish only flushes in browsers. */
tx_status tx_gpu_wait(tx_ctx *ctx, tx_tensor t);
/* gpu/matmul.c: a GPU storage holding a matmul's row tiles (tx_phases) rewritten
 * row-major (the interleaving pass the matmul left out); others as they are. */
tx_status tx_gpu_flatten(tx_ctx *ctx, const char *op, tx_storage *st);
/* A GPU storage about to be overwritten whole: a row-major texture for it,
 * the row tiles it held (if any) dropped unread. */
tx_status tx_gpu_flat_output(tx_ctx *ctx, const char *op, tx_storage *st);

/* cache.c */
tx_status tx_cache_create(tx_ctx *ctx);
void tx_cache_destroy(tx_ctx *ctx);
/* Picks (and compiles when needed) the program for this request, counts the
 * invocation, binds the program and sets its parameters. texels: the draw's
 * output texels over all its render targets, its work where req counts no
 * multiply-adds (sig_k in cache.c: the default k on a software rasterizer). */
tx_status tx_cache_bind(tx_ctx *ctx, const char *op, const tx_program_req *req, double texels);
/* Signatures called at least k times whose specialized program further calls
 * will issue (the cost-aware wait on a software rasterizer). */
int tx_cache_waiting(const tx_ctx *ctx);
/* The most calls a signature waits there before its specialized program. */
#define TX_SPECIALIZE_SOFT_MAX 64
/* Does the renderer string name a software rasterizer (llvmpipe, SwiftShader,
 * ...: the GPU's work runs on the CPU's cores)? (glstart.c) */
bool tx_software_renderer(const char *renderer);
/* The warm-up pass (ctx->compile_only): starts compiling req's generic
 * program (a big draw's specialized one, as tx_cache_bind would use) unless
 * it exists, binds nothing. With KHR_parallel_shader_compile
 * the driver compiles in the background; the first tx_cache_bind that needs
 * the program reads its link status. */
tx_status tx_cache_warm(tx_ctx *ctx, const char *op, const tx_program_req *req);
/* For a kernel whose first calls run a cheaper variant than its steady one
 * (matmul: one 1 x 4 program before the 8-row tile and its interleave pass):
 * counts a call of req's signature as tx_cache_bind would, issues its
 * specialized compile once due (at once: no draw of req follows), and tells
 * whether req should serve this call: its specialized program is ready or
 * failed for good (its generic program then serves), or the context never /
 * always specializes. An evicted specialization counts from 0 again. */
bool tx_cache_steady(tx_ctx *ctx, const char *op, const tx_program_req *req);
/* Programs still compiling in the background: warmed generic ones and
 * pending specialized ones (0 without KHR_parallel_shader_compile). */
int tx_cache_compiling(tx_ctx *ctx);

/* Draws the bound program over `outs` (all the same dims). */
tx_status tx_draw(tx_ctx *ctx, const char *op, const tx_texture *const *ins, int n_in,
                  const tx_texture *const *outs, int n_out);

/* readback.c */
/* Frees the pending readbacks of GPU tensors (a context loss: CPU tensors'
 * host copies stay readable), or with `release` every one and the table
 * (context destroy). Handles stay unique across a loss. */
void tx_readbacks_drop(tx_ctx *ctx, bool release);
/* How tx_readback_finish_with hands a float32 read's values over: bound(user,
 * bytes) while the pixel-pack buffer holding them is bound as
 * GL_PIXEL_PACK_BUFFER, or host(user, values, bytes) for values already in
 * host memory (a split tensor's). False: out of memory. web/texel_web.c reads
 * them into a JS array, skipping the copies through wasm memory. */
typedef struct tx_read_copy {
    bool (*bound)(void *user, size_t bytes);
    bool (*host)(void *user, const float *values, size_t bytes);
    void *user;
} tx_read_copy;
/* tx_readback_finish, the values handed to copy; float32 reads only (another
 * dtype is refused, and the read freed, as any finish frees it). */
tx_status tx_readback_finish_with(tx_ctx *ctx, tx_readback h, const tx_read_copy *copy);

/* cpu/device.c: stops the CPU device's threads (context destroy). */
void tx_cpu_shutdown(tx_ctx *ctx);

/* ops: registry.c */
tx_family tx_op_family(tx_op op);
/* The checks an op front starts with once it has a name: ctx, out not NULL
 * ("<name>: out is NULL"). A lost context is refused later, by tx_op_device,
 * and only for GPU work. */
tx_status tx_op_begin(tx_ctx *ctx, const char *name, const void *out);
/* tx_op_begin, then the operands of a conv or matmul: x/a and w/b, and bias
 * when bias.id != 0, named names[0..2], checked into s[0..2] (s[2] NULL
 * without bias). */
tx_status tx_op_begin_operands(tx_ctx *ctx, const char *name, const void *out,
                               const char *const names[3], tx_tensor a, tx_tensor b, tx_tensor bias,
                               tx_slot *s[3]);
/* The checks an op entry starts with: ctx, op in family `fam` (else "<api>:
 * <op> is not <what>"), out not NULL. */
tx_status tx_op_enter(tx_ctx *ctx, tx_op op, tx_family fam, const char *api, const char *what,
                      const void *out);
/* tx_op_enter for an op on an array of inputs, then inputs not NULL
 * ("<op>: inputs is NULL"). */
tx_status tx_op_enter_n(tx_ctx *ctx, tx_op op, tx_family fam, const char *api, const char *what,
                        const tx_tensor *inputs, const void *out);

/* ops */
/* MOVE family dispatch for tx_op_run / tx_op_run_multi (ops/move.c). */
tx_status tx_move_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                      const tx_op_attrs *attrs, tx_tensor *outs, int n_outs);
/* UNARY, CLIP (a, b = lo, hi), ACT (a, b = alpha, beta) and CAST (b != 0:
 * values become 0/1; output dtype `to`). */
tx_status tx_unary_run(tx_ctx *ctx, tx_op op, tx_tensor x, float a, float b, tx_dtype to,
                       tx_tensor *out);

/* ops: conv.c. The geometry of a windowed op (conv, pool) on [N, C, H, W] or
 * [N, C, W] (run as H = 1): validated attributes, pads after auto_pad, and
 * the output size. */
typedef struct tx_window {
    int64_t n, c, h, w, ho, wo;
    int kh, kw, sh, sw, dh, dw;
    int pt, pl, pb, pr;
} tx_window;
tx_status tx_window_geom(tx_ctx *ctx, const char *op, const tx_slot *x, const int kernel[2],
                         const int strides[2], const int dilations[2], const int pads[4],
                         tx_auto_pad auto_pad, bool ceil_mode, tx_window *g);
/* The gradient of a max pool whose windows w tile x (stride = kernel,
 * dilation 1, no pads): dx (x's shape) = (x == y) * g / (the count of the
 * window's elements equal to its max y), 0 where no whole window covers x.
 * One kernel for what is otherwise seven ops (engine/grad/grad_pool.c). */
tx_status tx_maxpool_tiles_grad(tx_ctx *ctx, tx_tensor x, tx_tensor y, tx_tensor g,
                                const tx_window *w, tx_tensor *dx);
/* A conv with the first two dims of its 4-D operands and output swapped:
 * x [C, N, H, W] and w [Cg, M, kh, kw] read as [N, C, H, W] and [M, Cg, kh,
 * kw], the output [N, M, ho, wo] written as [M, N, cut[0], cut[1]], its
 * first cut[0] x cut[1] positions (cut <= ho, wo). A conv's weight gradient
 * (engine/grad/grad_linear.c) in the conv's own draws, the transposes and
 * the cut read and written in place. d: group 1, no bias, residual or
 * activation. */
tx_status tx_conv_nc_swapped(tx_ctx *ctx, tx_tensor x, tx_tensor w, const tx_conv_desc *d,
                             const int cut[2], tx_tensor *out);

/* A residual operand r of a conv or matmul (named "residual"): a float
 * tensor of y's shape (rank, shape) on the device of x (the op's first
 * input), into *rs. */
tx_status tx_check_residual(tx_ctx *ctx, const char *op, tx_tensor r, const tx_slot *x, int rank,
                            const int64_t *shape, tx_slot **rs);
/* The end of a conv or matmul with a residual run as separate ops (under a
 * recording tape, or over split tensors): *out = act(z + r), z destroyed. */
/* The checks of a desc's fused activation: NONE, a UNARY op, CLIP (where
 * clip_ok; lo <= hi, not NaN) or an ACT op (alpha, beta finite). */
tx_status tx_check_act(tx_ctx *ctx, const char *op, tx_op act, bool clip_ok, float lo, float hi,
                       float alpha, float beta);
/* y = act(x) for a fused activation with its two floats (tx_unary_call's
 * lo, hi): CLIP's bounds, an ACT op's alpha and beta, unused otherwise. */
tx_status tx_apply_act(tx_ctx *ctx, tx_op act, float lo, float hi, tx_tensor x, tx_tensor *out);
/* Those two floats of a desc's activation: clip's lo, hi or an ACT op's
 * alpha, beta (0, 0 for the others). */
void tx_act_floats(tx_op act, float lo, float hi, float alpha, float beta, float out[2]);
tx_status tx_residual_act(tx_ctx *ctx, tx_tensor z, tx_tensor r, tx_op act, float lo, float hi,
                          tx_tensor *out);

/* The output shape tx_matmul gives for a and b of these shapes and d's
 * transposes (d's bias and residual are not read), with its checks. */
tx_status tx_matmul_out_shape(tx_ctx *ctx, int ra, const int64_t *ashape, int rb,
                              const int64_t *bshape, const tx_matmul_desc *d, int *orank,
                              int64_t *oshape);
/* The output shape tx_conv / tx_conv_transpose give for x and w of these
 * shapes (rank 3 or 4) and d's attributes, with the same checks and messages,
 * and nothing run: shape inference at model load. bias_len < 0: no bias. */
tx_status tx_conv_out_shape(tx_ctx *ctx, bool transpose, int rank, const int64_t *xshape,
                            const int64_t *wshape, int64_t bias_len, const tx_conv_desc *d,
                            int64_t *oshape);
/* ---- reductions (ops/reduce.c), shared by softmax and the norms; the GPU's
 * passes are in gpu/reduce.h ---- */

/* x canonicalized for one reduction: kept and reduced dims merged into up to
 * 3 groups each (leading groups padded with size 1, stride 0). */
typedef struct tx_reduce_plan {
    int64_t nout; /* outputs (product of kept dims) */
    int64_t R;    /* elements reduced into each output */
    int ksz[3], kst[3], rsz[3], rst[3];
    bool vec;  /* innermost reduced group contiguous, size % 4 == 0 */
    bool kvec; /* innermost kept group contiguous, size % 4 == 0 */
} tx_reduce_plan;

/* State kinds of glsl-templates/reduce.glsl (TX_ACC); the order is the GLSL's. */
typedef enum tx_reduce_acc {
    TX_REDUCE_ACC_SUM,
    TX_REDUCE_ACC_SUMSQ,
    TX_REDUCE_ACC_PROD,
    TX_REDUCE_ACC_MAX,
    TX_REDUCE_ACC_MIN,
    TX_REDUCE_ACC_LSE, /* (max, sum of exp(x - max)) */
    TX_REDUCE_ACC_ARGMAX,
    TX_REDUCE_ACC_ARGMIN,
    TX_REDUCE_ACC_MOMENTS, /* (sum(x - K), sum((x - K)^2), K): mean and variance */
    TX_REDUCE_ACC_L1,      /* sum of |x| */
} tx_reduce_acc;

void tx_reduce_plan_make(int rank, const int64_t *shape, const bool *reduced, tx_reduce_plan *p);
/* The mean of x^2 over all of x, a scalar, in one reduction (the MSE loss's;
 * not noted on a tape). */
tx_status tx_reduce_mean_square(tx_ctx *ctx, tx_tensor x, tx_tensor *out);
/* ONNX axes (negative from the end, no repeats) → mask[TX_MAX_RANK]. */
tx_status tx_axes_mask(tx_ctx *ctx, const char *name, const tx_slot *xs, int n_axes,
                       const int *axes, bool *mask);

#endif
