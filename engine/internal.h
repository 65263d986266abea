/* Engine-private declarations shared by the engine's C files. */
#ifndef TX_INTERNAL_H
#define TX_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gl/gl.h"
#include "texel.h"

/* Programmer bugs inside the engine: always on, never for caller input. */
#define TX_ASSERT(c)                                                                   \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "texel: assertion failed: %s (%s:%d)\n", #c, __FILE__,     \
                    __LINE__);                                                         \
            abort();                                                                   \
        }                                                                              \
    } while (0)

#define TX_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

typedef enum tx_family {
    TX_FAMILY_UNARY,
    TX_FAMILY_CLIP,
    TX_FAMILY_BINARY,
    TX_FAMILY_MATMUL,
    TX_FAMILY_REDUCE,
    TX_FAMILY_SOFTMAX,
    TX_FAMILY_NORM,
    TX_FAMILY_ACT,
    TX_FAMILY_CAST,
    TX_FAMILY_NARY,
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
    size_t bytes;
} tx_texture;

/* Storage shared by a tensor and its views. */
typedef struct tx_storage {
    tx_texture tex;
    int refs;
    int64_t numel;
} tx_storage;

typedef struct tx_slot {
    uint32_t gen;  /* bumped on destroy; a handle carries the gen it was made with */
    bool live;
    int rank;
    int64_t shape[TX_MAX_RANK];
    int64_t numel;
    tx_dtype dtype;
    tx_storage *st;
} tx_slot;

typedef struct tx_pool {
    tx_texture *free_tex; /* free textures, oldest first */
    int n_free, cap_free;
} tx_pool;

/* ---- codegen ---- */

#define TX_MAX_PARAMS 64
#define TX_MAX_INPUTS 8 /* = TX_GL_UNITS; batch_norm takes 5 */
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
    bool generic_only; /* a helper pass (e.g. matmul's interleave): never specialized */
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
    int k;               /* specialize after k identical calls; -1 never */
    int max_specialized;
    size_t budget;
    int max_tex;         /* effective max texture width/height */
    bool log_shaders;
    bool lost;
    bool fault_specialized; /* test hook: the next specialized link "fails" */
    char err[1024];

    tx_slot *slots;
    int n_slots, cap_slots;
    uint32_t *free_slots;
    int n_free_slots, cap_free_slots;

    tx_pool pool;
    tx_cache *cache;
};

/* error.c-style helpers (context.c) */
tx_status tx_fail(tx_ctx *ctx, tx_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void tx_shape_str(char *buf, size_t n, int rank, const int64_t *shape);

/* tensor.c */
tx_slot *tx_slot_get(tx_ctx *ctx, tx_tensor t);
tx_status tx_check_tensor(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t,
                          tx_slot **out);
/* Creates an uninitialised tensor for an op's output. */
tx_status tx_tensor_alloc(tx_ctx *ctx, const char *op, int rank, const int64_t *shape,
                          tx_dtype dtype, tx_tensor *out);
void tx_tensors_release_all(tx_ctx *ctx);

/* pool.c */
tx_status tx_pool_acquire(tx_ctx *ctx, const char *op, int64_t texels, tx_texture *out);
void tx_pool_release(tx_ctx *ctx, tx_texture *tex);
void tx_pool_trim(tx_ctx *ctx, size_t keep_bytes);
/* The texture dims for `texels` texels (without allocating). */
bool tx_tex_dims(const tx_ctx *ctx, int64_t texels, int *size_class, int *w, int *h);

/* codegen/codegen.c */
void tx_req_init(tx_program_req *r, tx_family fam, const char *template_name, int n_inputs,
                 int n_outputs);
void tx_req_define(tx_program_req *r, const char *name, const char *value);
void tx_req_define_int(tx_program_req *r, const char *name, int value);
void tx_req_int(tx_program_req *r, const char *name, int v);
void tx_req_float(tx_program_req *r, const char *name, float v);
/* Full GLSL for the generic (specialized = false) or specialized variant.
 * Returns a malloc'd string. */
char *tx_codegen(const tx_program_req *r, bool specialized);
const char *tx_template_source(const char *name); /* embedded at build time */

/* cache.c */
tx_status tx_cache_create(tx_ctx *ctx);
void tx_cache_destroy(tx_ctx *ctx);
/* Picks (and compiles when needed) the program for this request, counts the
 * invocation, binds the program and sets its parameters. */
tx_status tx_cache_bind(tx_ctx *ctx, const char *op, const tx_program_req *req);

/* Draws the bound program over `outs` (all the same dims). */
tx_status tx_draw(tx_ctx *ctx, const char *op, const tx_texture *const *ins, int n_in,
                  const tx_texture *const *outs, int n_out);

/* ops: registry.c */
tx_family tx_op_family(tx_op op);
/* The checks an op entry starts with: ctx, op in family `fam` (else "<api>:
 * <op> is not <what>"), out not NULL, context not lost. */
tx_status tx_op_enter(tx_ctx *ctx, tx_op op, tx_family fam, const char *api, const char *what,
                      const void *out);

/* ops */
/* UNARY, CLIP (a, b = lo, hi), ACT (a, b = alpha, beta) and CAST (b != 0:
 * values become 0/1; output dtype `to`). */
tx_status tx_unary_run(tx_ctx *ctx, tx_op op, tx_tensor x, float a, float b, tx_dtype to,
                       tx_tensor *out);

/* ---- reductions (ops/reduce.c), shared by softmax and the norms ---- */

/* x canonicalized for one reduction: kept and reduced dims merged into up to
 * 3 groups each (leading groups padded with size 1, stride 0). */
typedef struct tx_reduce_plan {
    int64_t nout; /* outputs (product of kept dims) */
    int64_t R;    /* elements reduced into each output */
    int ksz[3], kst[3], rsz[3], rst[3];
    bool vec;     /* innermost reduced group contiguous, size % 4 == 0 */
    bool kvec;    /* innermost kept group contiguous, size % 4 == 0 */
} tx_reduce_plan;

/* State kinds of glsl-templates/reduce.glsl (TX_ACC); the order is the GLSL's. */
typedef enum tx_reduce_acc {
    TX_REDUCE_ACC_SUM,
    TX_REDUCE_ACC_SUMSQ,
    TX_REDUCE_ACC_PROD,
    TX_REDUCE_ACC_MAX,
    TX_REDUCE_ACC_MIN,
    TX_REDUCE_ACC_LSE,     /* (max, sum of exp(x - max)) */
    TX_REDUCE_ACC_ARGMAX,
    TX_REDUCE_ACC_ARGMIN,
    TX_REDUCE_ACC_MOMENTS, /* (sum(x - K), sum((x - K)^2), K): mean and variance */
    TX_REDUCE_ACC_L1,      /* sum of |x| */
} tx_reduce_acc;

void tx_reduce_plan_make(int rank, const int64_t *shape, const bool *reduced,
                         tx_reduce_plan *p);
/* Runs the passes over x's texture. With final_out, the last pass writes
 * finished values (reduce.glsl's TX_FIN `fin`) into it; otherwise *states gets a
 * pooled texture with one state texel per output (the caller releases it). */
tx_status tx_reduce_run(tx_ctx *ctx, const char *name, const tx_texture *x,
                        const tx_reduce_plan *p, tx_reduce_acc acc, int fin, bool last,
                        const tx_texture *final_out, tx_texture *states);
/* ONNX axes (negative from the end, no repeats) → mask[TX_MAX_RANK]. */
tx_status tx_axes_mask(tx_ctx *ctx, const char *name, const tx_slot *xs, int n_axes,
                       const int *axes, bool *mask);

#endif
