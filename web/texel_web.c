/* The C side of the JS API (web/texel.js): exported functions with plain
 * int/pointer arguments, so the JS layer needs no knowledge of C struct
 * layouts.
 *
 * - Tensors and readbacks cross as their uint32 handle ids.
 * - Ops run by enum through tx_op_run. Attributes cross as one string
 *   "name=value;name=v1,v2" parsed against k_attr_fields below: a new op
 *   family makes its attributes reachable from JS by adding rows there (JS
 *   needs no edit; positional JS arguments follow the row order).
 * - Stats and caps cross as JSON (one X-macro list below).
 * - Each exported call makes its context's WebGL context current first, so
 *   several texel contexts can share a page. */
#include <emscripten.h>
#include <emscripten/html5.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EXPORT EMSCRIPTEN_KEEPALIVE

/* web/texel_lib.js */
extern int txw_js_context_create(void *key);
extern void txw_js_context_destroy(int handle);
extern void txw_js_gl_made(void *w, const char *renderer);

typedef struct txw {
    tx_ctx *ctx;
    int gl;
    char json[8192];
} txw;

static txw *g_current;
static char g_create_error[1024];

static tx_ctx *use(txw *w) {
    if (g_current != w) {
        if (w->gl) /* 0: a context without GL (Node), nothing to make current */
            emscripten_webgl_make_context_current(w->gl);
        g_current = w;
    }
    return w->ctx;
}

/* ---- context ---- */

#define TXW_NO_WEBGL2                                                                              \
    "this browser gave no WebGL2 context (texel needs WebGL2 with EXT_color_buffer_float)"

/* tx_ctx_desc.make_gl of a context created with gl_later: the WebGL2 context
 * on the canvas texel.js keeps for this context (Module.txwCanvasOf), made at
 * the first GPU use; texel.js then recalls the kernel choices of its
 * renderer, before the engine's probes. */
static bool make_gl(void *user, char *why, size_t n) {
    txw *w = user;
    w->gl = txw_js_context_create(w);
    if (!w->gl) {
        snprintf(why, n, TXW_NO_WEBGL2);
        return false;
    }
    g_current = w; /* the context just made is current */
    char r[128], v[128], g[128];
    tx_gl_strings(r, v, g, sizeof r);
    txw_js_gl_made(w, r);
    return true;
}

EXPORT txw *txw_create(int specialize_after, double memory_budget, int max_texture_size,
                       int log_shaders, int debug, int device, int cpu_threads, int float16,
                       int no_gpu, int gl_later) {
    g_create_error[0] = 0;
    txw *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(g_create_error, sizeof g_create_error, "out of memory");
        return NULL;
    }
    /* no_gpu: no WebGL2 here (Node): a context of the CPU device only;
     * gl_later: the WebGL2 context comes at the first GPU use (make_gl) */
    w->gl = no_gpu || gl_later ? 0 : txw_js_context_create(NULL);
    if (!w->gl && !no_gpu && !gl_later) {
        snprintf(g_create_error, sizeof g_create_error, TXW_NO_WEBGL2);
        free(w);
        return NULL;
    }
    g_current = w;
    tx_ctx_desc d = {
        .specialize_after = specialize_after,
        .memory_budget = memory_budget > 0 ? (size_t)memory_budget : 0,
        .max_texture_size = max_texture_size,
        .log_shaders = log_shaders != 0,
        .device = (tx_device)device,
        .cpu_threads = cpu_threads,
        .float16_storage = float16 != 0,
        .no_gpu = no_gpu != 0,
        .make_gl = gl_later && !no_gpu ? make_gl : NULL,
        .make_gl_user = w,
    };
    tx_status s = tx_ctx_create(&d, &w->ctx);
    if (s) {
        snprintf(g_create_error, sizeof g_create_error, "tx_ctx_create failed: %s",
                 tx_status_name(s));
        if (w->gl)
            txw_js_context_destroy(w->gl);
        g_current = NULL;
        free(w);
        return NULL;
    }
    /* glGetError after every draw would cost a GPU-process round trip per op;
     * `debug` keeps it (errors then name the op that caused them). */
    w->ctx->gl.defer_errors = !debug;
    return w;
}

/* Kernel variants chosen by measurement (TEXEL_TUNE): the page keeps them in
 * localStorage per renderer (texel.js), since the engine has no file here. */
static const char *const k_tuned[] = {"matmul-tm", "conv-tp"}; /* texel.js: TUNED */
EXPORT int txw_kernel_choice(txw *w, int kernel, int size_class) {
    return kernel >= 0 && kernel < 2 ? tx_ctx_kernel_choice(w->ctx, k_tuned[kernel], size_class)
                                     : 0;
}
EXPORT int txw_set_kernel_choice(txw *w, int kernel, int size_class, int variant) {
    if (kernel < 0 || kernel >= 2)
        return TX_STATUS_INVALID_ARGUMENT;
    return tx_ctx_set_kernel_choice(w->ctx, k_tuned[kernel], size_class, variant);
}

EXPORT const char *txw_create_error(void) {
    return g_create_error;
}

/* Sets an engine environment variable: the knobs the desktop reads from the
 * environment (TEXEL_AUTO_MEASURE, TEXEL_SPECIALIZE_AFTER, TEXEL_CPU_THREADS ...); value NULL
 * unsets. */
EXPORT int txw_setenv(const char *name, const char *value) {
    return value ? setenv(name, value, 1) : unsetenv(name);
}

EXPORT void txw_destroy(txw *w) {
    if (!w)
        return;
    tx_ctx_destroy(use(w));
    if (w->gl)
        txw_js_context_destroy(w->gl);
    g_current = NULL;
    free(w);
}

EXPORT const char *txw_last_error(txw *w) {
    return tx_last_error(w->ctx);
}
EXPORT const char *txw_status_name(int s) {
    return tx_status_name((tx_status)s);
}
EXPORT int txw_status_count(void) {
    return TX_STATUS_COUNT_;
}
EXPORT int txw_gl_handle(txw *w) {
    return w->gl;
}
EXPORT int txw_finish(txw *w) {
    return tx_ctx_finish(use(w));
}
EXPORT void txw_trim(txw *w) {
    tx_ctx_trim(use(w));
}

/* ---- context loss ---- */

EXPORT int txw_reset_gl_state(txw *w) {
    return tx_ctx_reset_gl_state(use(w));
}
EXPORT void txw_mark_lost(txw *w) {
    tx_ctx_mark_lost(use(w));
}
EXPORT int txw_start_gl(txw *w) {
    return tx_ctx_start_gl(use(w));
}
/* texel.js's worker (warmGpu): looking (renderer NULL), then what it found. */
EXPORT int txw_gpu_hint(txw *w, const char *renderer, double gflops) {
    return tx_ctx_gpu_hint(use(w), renderer, gflops);
}
EXPORT int txw_is_lost(txw *w) {
    return tx_ctx_is_lost(w->ctx);
}
EXPORT int txw_restore(txw *w) {
    return tx_ctx_restore(use(w));
}
EXPORT int txw_generation(txw *w) {
    return tx_ctx_generation(w->ctx);
}

/* ---- stats and caps as JSON ---- */

/* clang-format off */
#define TXW_STATS(X) \
    X(generic_compiles) \
    X(specialized_compiles) \
    X(specialized_ready) \
    X(specialized_evicted) \
    X(compile_failures) \
    X(cache_hits) \
    X(generic_runs) \
    X(specialized_runs) \
    X(draws) \
    X(bytes_uploaded) \
    X(bytes_downloaded) \
    X(live_texture_bytes) \
    X(pooled_texture_bytes) \
    X(peak_texture_bytes) \
    X(live_tensors) \
    X(specialized_programs) \
    X(pooled_textures) \
    X(textures_evicted) \
    X(context_losses) \
    X(context_restores) \
    X(cpu_ops) \
    X(live_host_bytes) \
    X(peak_host_bytes) \
    X(specializations_waiting)
/* clang-format on */

EXPORT const char *txw_stats_json(txw *w) {
    tx_stats s;
    tx_ctx_stats(w->ctx, &s);
    size_t n = 0, cap = sizeof w->json;
    n += (size_t)snprintf(w->json + n, cap - n, "{");
#define X(f)                                                                                       \
    n += (size_t)snprintf(w->json + n, cap - n, "\"" #f "\":%llu,", (unsigned long long)s.f);
    TXW_STATS(X)
#undef X
    n += (size_t)snprintf(w->json + n, cap - n,
                          "\"compile_ms\":%.3f,\"gl_start_ms\":%.3f,\"generation\":%d,",
                          s.compile_ms, s.gl_start_ms, tx_ctx_generation(w->ctx));
    /* compile cost per program family (tx_ctx_compile_families) */
    tx_compile_family f[TX_MAX_COMPILE_FAMILIES];
    int nf = tx_ctx_compile_families(w->ctx, f, TX_MAX_COMPILE_FAMILIES);
    n += (size_t)snprintf(w->json + n, cap - n, "\"compile_families\":{");
    for (int i = 0; i < nf && n < cap; i++)
        n += (size_t)snprintf(w->json + n, cap - n,
                              "%s\"%s\":{\"generic\":%u,\"specialized\":%u,\"compile_ms\":%.3f,"
                              "\"first_draw_ms\":%.3f}",
                              i ? "," : "", f[i].name, f[i].generic, f[i].specialized,
                              f[i].compile_ms, f[i].first_draw_ms);
    if (n < cap)
        snprintf(w->json + n, cap - n, "}}");
    return w->json;
}

static void json_str(char *dst, size_t n, const char *s) {
    size_t j = 0;
    for (; *s && j + 2 < n; s++) {
        if (*s == '"' || *s == '\\')
            dst[j++] = '\\';
        dst[j++] = (*s >= 32 && *s < 127) ? *s : '?';
    }
    dst[j] = 0;
}

EXPORT const char *txw_caps_json(txw *w) {
    tx_caps c;
    tx_ctx_caps(w->ctx, &c);
    char r[256], v[256], g[256];
    json_str(r, sizeof r, c.renderer);
    json_str(v, sizeof v, c.version);
    json_str(g, sizeof g, c.glsl_version);
    snprintf(w->json, sizeof w->json,
             "{\"renderer\":\"%s\",\"version\":\"%s\",\"glsl_version\":\"%s\","
             "\"max_texture_size\":%d,\"max_draw_buffers\":%d,\"float32_render\":%s,"
             "\"float16_render\":%s,\"float16_storage\":%s,\"parallel_compile\":%s,"
             "\"specialize_after\":%d,\"no_gpu\":%s,\"emulated_division\":%s,"
             "\"gl_pending\":%s}",
             r, v, g, c.max_texture_size, c.max_draw_buffers, c.float32_render ? "true" : "false",
             c.float16_render ? "true" : "false", c.float16_storage ? "true" : "false",
             c.parallel_compile ? "true" : "false", tx_ctx_specialize_after(w->ctx),
             c.no_gpu ? "true" : "false", c.emulated_division ? "true" : "false",
             c.gl_pending ? "true" : "false");
    return w->json;
}

/* ---- tensors ---- */

static int to_shape(int rank, const int32_t *in, int64_t *out) {
    if (rank < 0 || rank > TX_MAX_RANK)
        return 0;
    for (int i = 0; i < rank; i++)
        out[i] = in[i];
    return 1;
}

EXPORT int txw_tensor_create(txw *w, int rank, const int32_t *shape, int dtype, const void *data,
                             int device, uint32_t *out) {
    tx_ctx *ctx = use(w);
    /* dtype 2: float32 values given as half floats (texel.js's 'float16') */
    tx_tensor_desc d = {.rank = rank,
                        .dtype = dtype == 2 ? TX_DTYPE_FLOAT32 : (tx_dtype)dtype,
                        .data = data,
                        .device = (tx_device)device,
                        .data_f16 = dtype == 2};
    to_shape(rank, shape, d.shape); /* a bad rank is reported by tx_tensor_create */
    return tx_tensor_create(ctx, &d, (tx_tensor *)out);
}

EXPORT int txw_tensor_destroy(txw *w, uint32_t id) {
    return tx_tensor_destroy(use(w), (tx_tensor){id});
}

EXPORT int txw_tensor_read(txw *w, uint32_t id, void *dst, double bytes) {
    return tx_tensor_read(use(w), (tx_tensor){id}, dst, (size_t)bytes);
}

/* Where a float32 tensor of the CPU device holds its values (0 for any other
 * tensor, or a handle that is not live): texel.js copies them straight out
 * of wasm memory, without tx_tensor_read's copy into a buffer of its own.
 * Valid until the next call into the engine. */
EXPORT uint32_t txw_tensor_host_view(txw *w, uint32_t id) {
    const tx_slot *s = tx_slot_get(use(w), (tx_tensor){id});
    if (!s || s->dtype != TX_DTYPE_FLOAT32 || s->st->dev != TX_DEVICE_CPU || s->st->n_parts ||
        !s->st->host)
        return 0;
    return (uint32_t)(uintptr_t)s->st->host;
}

EXPORT int txw_tensor_write(txw *w, uint32_t id, const void *src, double bytes) {
    return tx_tensor_write(use(w), (tx_tensor){id}, src, (size_t)bytes);
}

/* Devices cross as their tx_device values; names through these two. */
EXPORT const char *txw_device_name(int d) {
    return tx_device_name((tx_device)d);
}

EXPORT int txw_tensor_device(txw *w, uint32_t id, int *out) {
    tx_device d = TX_DEVICE_DEFAULT;
    tx_status s = tx_tensor_device(use(w), (tx_tensor){id}, &d);
    *out = (int)d;
    return s;
}

EXPORT int txw_tensor_to(txw *w, uint32_t id, int device, uint32_t *out) {
    return tx_tensor_to(use(w), (tx_tensor){id}, (tx_device)device, (tx_tensor *)out);
}

/* out: rank, dtype, then rank dims. */
EXPORT int txw_tensor_shape(txw *w, uint32_t id, int32_t *out) {
    int rank = 0;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dt;
    tx_status s = tx_tensor_shape(use(w), (tx_tensor){id}, &rank, shape, &dt);
    if (s)
        return s;
    out[0] = rank;
    out[1] = (int32_t)dt;
    for (int i = 0; i < rank; i++)
        out[2 + i] = (int32_t)shape[i];
    return 0;
}

EXPORT int txw_tensor_reshape(txw *w, uint32_t id, int rank, const int32_t *shape, uint32_t *out) {
    int64_t s[TX_MAX_RANK] = {0};
    to_shape(rank < 0 || rank > TX_MAX_RANK ? 0 : rank, shape, s);
    return tx_tensor_reshape(use(w), (tx_tensor){id}, rank, s, (tx_tensor *)out);
}

/* ---- asynchronous reads ---- */

/* out[0]: the readback; out[1]: the draws queued before it (tx_ctx.work_key,
 * folded to 32 bits), which texel.js keys its blocking-read choice on. */
EXPORT int txw_read_async(txw *w, uint32_t id, uint32_t *out) {
    tx_ctx *ctx = use(w);
    uint64_t key = ctx ? ctx->work_key : 0;
    out[1] = (uint32_t)(key ^ (key >> 32));
    return tx_tensor_read_async(ctx, (tx_tensor){id}, (tx_readback *)out);
}

EXPORT int txw_read_poll(txw *w, uint32_t r, int *ready) {
    bool b = false;
    tx_status s = tx_readback_poll(use(w), (tx_readback){r}, &b);
    *ready = b;
    return s;
}

EXPORT int txw_read_finish(txw *w, uint32_t r, void *dst, double bytes) {
    return tx_readback_finish(use(w), (tx_readback){r}, dst, (size_t)bytes);
}

/* texel_lib.js: a float32 read's values into a new Float32Array, left in
 * Module.txwRead for texel.js (one copy, where the wasm-memory road took
 * three: 4 MB in ~1 ms instead of ~4 in Chromium). */
extern int txw_js_read_bound(double bytes);
extern int txw_js_read_host(const float *values, double bytes);
static bool read_bound(void *user, size_t bytes) {
    (void)user;
    return txw_js_read_bound((double)bytes);
}
static bool read_host(void *user, const float *values, size_t bytes) {
    (void)user;
    return txw_js_read_host(values, (double)bytes);
}

EXPORT int txw_read_finish_js(txw *w, uint32_t r) {
    const tx_read_copy copy = {read_bound, read_host, NULL};
    return tx_readback_finish_with(use(w), (tx_readback){r}, &copy);
}

EXPORT int txw_read_cancel(txw *w, uint32_t r) {
    return tx_readback_cancel(use(w), (tx_readback){r});
}

/* ---- ops ---- */

EXPORT int txw_op_count(void) {
    return TX_OP_COUNT_;
}
EXPORT const char *txw_op_name(int op) {
    return tx_op_name((tx_op)op);
}
EXPORT int txw_op_arity(int op) {
    return tx_op_arity((tx_op)op);
}

typedef enum attr_type { A_BOOL, A_INT, A_INT64, A_FLOAT, A_OP, A_TENSOR } attr_type;

typedef struct attr_field {
    tx_family family;
    const char *name; /* snake_case; JS passes camelCase or snake_case */
    size_t offset;    /* in tx_op_attrs */
    attr_type type;
    int count;     /* > 1: an array of up to that many values */
    long n_offset; /* >= 0: an int in tx_op_attrs that receives the number given */
} attr_field;

#define FIELD(fam, name, member, type)                                                             \
    { TX_FAMILY_##fam, name, offsetof(tx_op_attrs, member), type, 1, -1 }
#define FIELDN(fam, name, member, type, n)                                                         \
    { TX_FAMILY_##fam, name, offsetof(tx_op_attrs, member), type, n, -1 }
/* An array whose length goes to another member (axes → n_axes). */
#define FIELDC(fam, name, member, type, n, count_member)                                           \
    {                                                                                              \
        TX_FAMILY_##fam, name, offsetof(tx_op_attrs, member), type, n,                             \
            (long)offsetof(tx_op_attrs, count_member)                                              \
    }

/* One row per attribute an op family takes from JS, in positional order. */
static const attr_field k_attr_fields[] = {
    FIELD(CLIP, "lo", lo, A_FLOAT),
    FIELD(CLIP, "hi", hi, A_FLOAT),
    FIELD(MATMUL, "transpose_a", matmul.transpose_a, A_BOOL),
    FIELD(MATMUL, "transpose_b", matmul.transpose_b, A_BOOL),
    FIELD(MATMUL, "bias", matmul.bias, A_TENSOR),
    FIELD(MATMUL, "activation", matmul.activation, A_OP),
    FIELD(MATMUL, "residual", matmul.residual, A_TENSOR),
    FIELD(MATMUL, "alpha", matmul.alpha, A_FLOAT),
    FIELD(MATMUL, "beta", matmul.beta, A_FLOAT),
/* enums cross as their C values (auto_pad: 0 notset, 1 same_upper, 2
 * same_lower, 3 valid; see texel.h) */
#define CONV_FIELDS(F)                                                                             \
    FIELDN(F, "strides", conv.strides, A_INT, 2), FIELDN(F, "pads", conv.pads, A_INT, 4),          \
        FIELDN(F, "dilations", conv.dilations, A_INT, 2), FIELD(F, "group", conv.group, A_INT),    \
        FIELD(F, "auto_pad", conv.auto_pad, A_INT), FIELD(F, "bias", conv.bias, A_TENSOR),         \
        FIELD(F, "activation", conv.activation, A_OP), FIELD(F, "lo", conv.lo, A_FLOAT),           \
        FIELD(F, "hi", conv.hi, A_FLOAT),                                                          \
        FIELDN(F, "output_padding", conv.output_padding, A_INT, 2),                                \
        FIELDN(F, "output_shape", conv.output_shape, A_INT, 2),                                    \
        FIELD(F, "residual", conv.residual, A_TENSOR), FIELD(F, "alpha", conv.alpha, A_FLOAT),     \
        FIELD(F, "beta", conv.beta, A_FLOAT), FIELD(F, "x_affine", conv.x_affine, A_BOOL),         \
        FIELD(F, "x_scale", conv.x_scale, A_FLOAT), FIELD(F, "x_shift", conv.x_shift, A_FLOAT),    \
        FIELD(F, "residual_pad", conv.residual_pad, A_BOOL)
    CONV_FIELDS(CONV),
    CONV_FIELDS(CONV_TRANSPOSE),
    FIELDN(POOL, "kernel_shape", pool.kernel_shape, A_INT, 2),
    FIELDN(POOL, "strides", pool.strides, A_INT, 2),
    FIELDN(POOL, "pads", pool.pads, A_INT, 4),
    FIELDN(POOL, "dilations", pool.dilations, A_INT, 2),
    FIELD(POOL, "auto_pad", pool.auto_pad, A_INT),
    FIELD(POOL, "ceil_mode", pool.ceil_mode, A_BOOL),
    FIELD(POOL, "count_include_pad", pool.count_include_pad, A_BOOL),
    FIELDC(REDUCE, "axes", reduce.axes, A_INT, TX_MAX_RANK, reduce.n_axes),
    FIELD(REDUCE, "drop_dims", reduce.drop_dims, A_BOOL),
    FIELD(REDUCE, "noop_with_empty_axes", reduce.noop_with_empty_axes, A_BOOL),
    FIELD(REDUCE, "select_last_index", reduce.select_last_index, A_BOOL),
    FIELD(SOFTMAX, "axis", softmax.axis, A_INT),
    FIELD(SOFTMAX, "coerce_2d", softmax.coerce_2d, A_BOOL),
    FIELD(NORM, "epsilon", norm.epsilon, A_FLOAT),
    FIELD(NORM, "axis", norm.axis, A_INT),
    FIELD(ACT, "alpha", alpha, A_FLOAT),
    FIELD(ACT, "beta", beta, A_FLOAT),
    FIELD(CAST, "to", cast_to, A_INT),
    FIELD(CAST, "bool", cast_bool, A_BOOL),
    FIELD(MOVE, "axis", move.axis, A_INT),
    FIELDC(MOVE, "perm", move.perm, A_INT, TX_MAX_RANK, move.n_perm),
    FIELDC(MOVE, "shape", move.shape, A_INT64, TX_MAX_RANK, move.rank),
    FIELDN(MOVE, "repeats", move.repeats, A_INT64, TX_MAX_RANK),
    FIELD(MOVE, "blocksize", move.blocksize, A_INT),
    FIELD(MOVE, "depth_mode", move.depth_mode, A_INT),
    FIELD(MOVE, "pad_mode", move.pad.mode, A_INT),
    FIELDN(MOVE, "pad_begin", move.pad.begin, A_INT64, TX_MAX_RANK),
    FIELDN(MOVE, "pad_end", move.pad.end, A_INT64, TX_MAX_RANK),
    FIELD(MOVE, "pad_value", move.pad.value, A_FLOAT),
    FIELDC(MOVE, "starts", move.slice.starts, A_INT64, TX_MAX_RANK, move.slice.n),
    FIELDN(MOVE, "ends", move.slice.ends, A_INT64, TX_MAX_RANK),
    FIELDN(MOVE, "steps", move.slice.steps, A_INT64, TX_MAX_RANK),
    FIELD(RESIZE, "mode", move.resize.mode, A_INT),
    FIELD(RESIZE, "coord", move.resize.coord, A_INT),
    FIELD(RESIZE, "nearest", move.resize.nearest, A_INT),
    FIELDN(RESIZE, "scales", move.resize.scales, A_FLOAT, TX_MAX_RANK),
    FIELDN(RESIZE, "sizes", move.resize.sizes, A_INT64, TX_MAX_RANK),
    FIELD(RESIZE, "residual", move.resize.residual, A_TENSOR),
#undef CONV_FIELDS
};
/* FIELDN is for array attributes (strides, pads): FIELDN(CONV, "strides",
 * conv.strides, A_INT, 2) takes "strides=2,2" from JS `{strides: [2, 2]}`. */

/* Comma-separated attribute names of an op, in positional order. */
EXPORT const char *txw_op_attr_names(int op) {
    static char buf[512];
    size_t n = 0;
    buf[0] = 0;
    tx_family fam = tx_op_family((tx_op)op);
    for (size_t i = 0; i < TX_COUNTOF(k_attr_fields) && n + 1 < sizeof buf; i++)
        if (k_attr_fields[i].family == fam)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? "," : "",
                                  k_attr_fields[i].name);
    return buf;
}

static tx_status set_attr(tx_ctx *ctx, const char *op, const attr_field *f, tx_op_attrs *a,
                          const char *val) {
    char *base = (char *)a + f->offset;
    const char *p = val;
    for (int i = 0; i < f->count; i++) {
        char *end = NULL;
        switch (f->type) {
        case A_BOOL:
        case A_INT: {
            long v = strtol(p, &end, 10);
            if (f->type == A_BOOL)
                ((bool *)base)[i] = v != 0;
            else
                ((int *)base)[i] = (int)v;
            break;
        }
        case A_INT64: ((int64_t *)base)[i] = strtoll(p, &end, 10); break;
        case A_FLOAT: ((float *)base)[i] = strtof(p, &end); break;
        case A_TENSOR: ((tx_tensor *)base)[i].id = (uint32_t)strtoul(p, &end, 10); break;
        case A_OP: {
            size_t len = strcspn(p, ",");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), p);
            tx_op o = (len == 0 || strcmp(name, "none") == 0) ? TX_OP_NONE : tx_op_from_name(name);
            if (o == TX_OP_NONE && len && strcmp(name, "none") != 0)
                return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s: unknown op \"%s\"", op,
                               f->name, name);
            ((tx_op *)base)[i] = o;
            end = (char *)p + len;
            break;
        }
        }
        if (end == p || (*end != 0 && *end != ','))
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s: cannot parse \"%s\"", op,
                           f->name, val);
        bool last = i + 1 == f->count;
        /* arrays may stop early (the rest stay 0): axes, perm, pads of 1-D */
        if (*end == 0 && f->count > 1) {
            if (f->n_offset >= 0)
                *(int *)((char *)a + f->n_offset) = i + 1;
            break;
        }
        if (last ? *end != 0 : *end != ',')
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s takes %d value%s, got \"%s\"",
                           op, f->name, f->count, f->count > 1 ? "s" : "", val);
        p = end + 1;
    }
    return TX_STATUS_OK;
}

/* "name=value;name=v1,v2" → attrs; unknown names are errors, not ignored. */
static tx_status parse_attrs(tx_ctx *ctx, tx_op op, const char *s, tx_op_attrs *a) {
    const char *name = tx_op_name(op);
    tx_family fam = tx_op_family(op);
    while (s && *s) {
        size_t len = strcspn(s, ";");
        char item[512];
        if (len >= sizeof item)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: attribute too long", name);
        memcpy(item, s, len);
        item[len] = 0;
        s += len + (s[len] == ';');
        char *eq = strchr(item, '=');
        if (!eq)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: attribute \"%s\" has no value",
                           name, item);
        *eq = 0;
        const attr_field *f = NULL;
        for (size_t i = 0; i < TX_COUNTOF(k_attr_fields) && !f; i++)
            if (k_attr_fields[i].family == fam && strcmp(k_attr_fields[i].name, item) == 0)
                f = &k_attr_fields[i];
        if (!f)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "%s: unknown option \"%s\" (this op takes: %s)", name, item,
                           txw_op_attr_names(op)[0] ? txw_op_attr_names(op) : "none");
        tx_status st = set_attr(ctx, name, f, a, eq + 1);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

/* Family defaults that differ from zero (clip without bounds clips nothing). */
static void default_attrs(tx_op op, tx_op_attrs *a) {
    memset(a, 0, sizeof *a);
    if (tx_op_family(op) == TX_FAMILY_CLIP) {
        a->lo = -INFINITY;
        a->hi = INFINITY;
    }
    if (op == TX_OP_AFFINE) /* the identity, as ONNX's default */
        a->alpha = 1;
}

EXPORT int txw_op_run(txw *w, int op, const uint32_t *inputs, int n_inputs, const char *attrs,
                      uint32_t *out) {
    tx_ctx *ctx = use(w);
    tx_op_attrs a;
    default_attrs((tx_op)op, &a);
    if (tx_op_family((tx_op)op) == TX_FAMILY_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "unknown op %d", op);
    tx_status s = parse_attrs(ctx, (tx_op)op, attrs, &a);
    if (s)
        return s;
    return tx_op_run(ctx, (tx_op)op, (const tx_tensor *)inputs, n_inputs, &a, (tx_tensor *)out);
}

/* ---- ONNX sessions ----
 *
 * A session crosses as its pointer. Its inputs/outputs cross one at a time:
 * txw_session_info fills ints, names cross as strings. Feeds and fetches are
 * arrays of C string pointers and tensor ids the JS side lays out in the heap.
 * After a context loss the engine's restore hook re-uploads the weights
 * (engine/model/session.c), so the same session runs again. */

/* device: a tx_device (0 / TX_DEVICE_AUTO: auto). The C side remembers no
 * auto decision under emscripten: web/texel.js keeps them (localStorage) and
 * passes a remembered device here. */
EXPORT int txw_session_create(txw *w, const void *bytes, double len, int device, tx_session **out) {
    tx_session_desc d = {.device = (tx_device)device};
    return tx_session_create(use(w), bytes, (size_t)len, &d, out);
}

/* tx_session_stats as JSON (device as its name). */
EXPORT const char *txw_session_stats_json(txw *w, tx_session *sess) {
    tx_session_stats st;
    if (tx_session_stats_get(sess, &st))
        return "{}";
    char reason[sizeof st.reason + 32];
    json_str(reason, sizeof reason, st.reason);
    snprintf(w->json, sizeof w->json,
             "{\"nodes\":%d,\"steps\":%d,\"folded\":%d,\"fused\":%d,\"weight_bytes\":%llu,"
             "\"host_bytes\":%llu,"
             "\"device\":\"%s\",\"next_device\":\"%s\",\"decided\":%s,\"reason\":\"%s\","
             "\"runs_gpu\":%llu,"
             "\"runs_cpu\":%llu,\"gpu_ms\":%.3f,\"cpu_ms\":%.3f,\"readbacks\":%llu,"
             "\"readback_bytes\":%llu,\"load_compile_ms\":%.3f}",
             st.nodes, st.steps, st.folded, st.fused, (unsigned long long)st.weight_bytes,
             (unsigned long long)st.host_bytes, tx_device_name(st.device),
             tx_device_name(st.next_device), st.decided ? "true" : "false", reason,
             (unsigned long long)st.runs_gpu, (unsigned long long)st.runs_cpu, st.gpu_ms, st.cpu_ms,
             (unsigned long long)st.readbacks, (unsigned long long)st.readback_bytes,
             st.load_compile_ms);
    return w->json;
}

EXPORT int txw_session_profile_enable(txw *w, tx_session *s, int on) {
    use(w);
    return tx_session_profile_enable(s, on != 0);
}

/* tx_session_profile as a JSON array (malloc'd: the caller frees it), NULL
 * when profiling is off or out of memory. */
EXPORT char *txw_session_profile_json(txw *w, tx_session *s) {
    use(w);
    int n = tx_session_profile(s, NULL, 0);
    tx_step_profile *p = n > 0 ? calloc((size_t)n, sizeof *p) : NULL;
    if (n < 0 || (n > 0 && !p))
        return NULL;
    tx_session_profile(s, p, n);
    enum { PER_STEP = 1024 }; /* two names of at most 256 escaped bytes, the numbers */
    size_t cap = (size_t)n * PER_STEP + 4, len = 0;
    char *out = malloc(cap);
    for (int i = 0; out && i < n; i++) {
        char op[300], name[300], shape[160] = "null";
        json_str(op, sizeof op, p[i].op_type);
        json_str(name, sizeof name, p[i].name);
        if (p[i].out_rank >= 0) {
            size_t k = (size_t)snprintf(shape, sizeof shape, "[");
            for (int d = 0; d < p[i].out_rank; d++)
                k += (size_t)snprintf(shape + k, sizeof shape - k, d ? ",%lld" : "%lld",
                                      (long long)p[i].out_shape[d]);
            snprintf(shape + k, sizeof shape - k, "]");
        }
        len += (size_t)snprintf(
            out + len, cap - len,
            "%s{\"op_type\":\"%s\",\"name\":\"%s\",\"activation\":\"%s\",\"runs\":%d,"
            "\"ms\":%.4f,\"draws\":%llu,\"compiles\":%llu,\"macs\":%.0f,\"device\":\"%s\","
            "\"shape\":%s}",
            i ? "," : "[", op, name,
            p[i].activation != TX_OP_NONE ? tx_op_name(p[i].activation) : "", p[i].runs, p[i].ms,
            (unsigned long long)p[i].draws, (unsigned long long)p[i].compiles, p[i].macs,
            tx_device_name(p[i].device), shape);
    }
    if (out)
        snprintf(out + len, cap - len, n ? "]" : "[]");
    free(p);
    return out;
}

EXPORT void txw_session_destroy(txw *w, tx_session *s) {
    use(w);
    tx_session_destroy(s);
}

EXPORT int txw_session_count(tx_session *s, int is_output) {
    return is_output ? tx_session_output_count(s) : tx_session_input_count(s);
}

static tx_status session_info(tx_session *s, int is_output, int i, tx_value_info *vi) {
    return is_output ? tx_session_output_info(s, i, vi) : tx_session_input_info(s, i, vi);
}

/* out: rank (-1 unknown), dtype, onnx_type, then rank dims (-1 dynamic). */
EXPORT int txw_session_info(tx_session *s, int is_output, int i, int32_t *out) {
    tx_value_info vi;
    tx_status st = session_info(s, is_output, i, &vi);
    if (st)
        return st;
    out[0] = vi.rank;
    out[1] = (int32_t)vi.dtype;
    out[2] = vi.onnx_type;
    for (int d = 0; d < vi.rank && d < TX_MAX_RANK; d++)
        out[3 + d] = vi.shape[d] > INT32_MAX ? -1 : (int32_t)vi.shape[d];
    return 0;
}

/* d < 0: the value's name; else dimension d's symbolic name ("" if none). */
EXPORT const char *txw_session_name(tx_session *s, int is_output, int i, int d) {
    tx_value_info vi;
    if (session_info(s, is_output, i, &vi))
        return "";
    if (d < 0)
        return vi.name ? vi.name : "";
    return d < TX_MAX_RANK && vi.dim_names[d] ? vi.dim_names[d] : "";
}

/* fetches NULL: all outputs in order (n_fetches must be the output count). */
/* feeds[] from names[] + ids[] (JS arrays in the heap); false: too many */
static bool make_feeds(tx_ctx *ctx, const char *op, int n_feeds, const char *const *names,
                       const uint32_t *ids, tx_feed feeds[64]) {
    if (n_feeds < 0 || n_feeds > 64) {
        tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %d feeds (at most 64)", op, n_feeds);
        return false;
    }
    for (int i = 0; i < n_feeds; i++)
        feeds[i] = (tx_feed){names[i], (tx_tensor){ids[i]}};
    return true;
}

EXPORT int txw_session_run(txw *w, tx_session *s, int n_feeds, const char *const *names,
                           const uint32_t *ids, int n_fetches, const char *const *fetches,
                           uint32_t *outs) {
    tx_ctx *ctx = use(w);
    tx_feed feeds[64];
    if (!make_feeds(ctx, "session.run", n_feeds, names, ids, feeds))
        return TX_STATUS_INVALID_ARGUMENT;
    return tx_session_run(s, feeds, n_feeds, fetches, n_fetches, (tx_tensor *)outs);
}

/* Session.compile: tx_session_compile, then tx_session_compiling polled. */
EXPORT int txw_session_compile(txw *w, tx_session *s, int n_feeds, const char *const *names,
                               const uint32_t *ids, int *programs) {
    tx_ctx *ctx = use(w);
    tx_feed feeds[64];
    if (!make_feeds(ctx, "session.compile", n_feeds, names, ids, feeds))
        return TX_STATUS_INVALID_ARGUMENT;
    return tx_session_compile(s, feeds, n_feeds, programs);
}

EXPORT int txw_session_compiling(txw *w, tx_session *s) {
    use(w);
    return tx_session_compiling(s);
}

/* ---- training (engine/grad/) ----
 * A tape and an optimizer cross as pointers; tensors as ids. kind of txw_loss:
 * 0 softmax cross-entropy, 1 negative log-likelihood, 2 mean squared error. */

EXPORT int txw_tape_begin(txw *w, tx_tape **out) {
    return tx_tape_begin(use(w), out);
}

EXPORT int txw_tape_grad(txw *w, tx_tape *t, uint32_t y, const uint32_t *xs, int n,
                         uint32_t *grads) {
    return tx_tape_grad(use(w), t, (tx_tensor){y}, (const tx_tensor *)xs, n, (tx_tensor *)grads);
}

EXPORT void txw_tape_end(txw *w, tx_tape *t) {
    tx_tape_end(use(w), t);
}

EXPORT int txw_loss(txw *w, int kind, uint32_t x, uint32_t labels, uint32_t weight, int reduction,
                    int has_ignore_index, int ignore_index, uint32_t *out, uint32_t *log_prob) {
    tx_ctx *ctx = use(w);
    tx_loss_desc d = {.reduction = (tx_loss_reduction)reduction,
                      .weight = {weight},
                      .has_ignore_index = has_ignore_index != 0,
                      .ignore_index = ignore_index};
    if (kind == 0)
        return tx_softmax_cross_entropy(ctx, (tx_tensor){x}, (tx_tensor){labels}, &d,
                                        (tx_tensor *)out, log_prob ? (tx_tensor *)log_prob : NULL);
    if (kind == 1)
        return tx_nll_loss(ctx, (tx_tensor){x}, (tx_tensor){labels}, &d, (tx_tensor *)out);
    if (kind == 2)
        return tx_mse_loss(ctx, (tx_tensor){x}, (tx_tensor){labels}, d.reduction, (tx_tensor *)out);
    return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "loss: unknown kind %d", kind);
}

EXPORT int txw_optim_create(txw *w, int kind, double lr, double momentum, int nesterov,
                            double beta1, double beta2, double epsilon, double weight_decay,
                            tx_optim **out) {
    return tx_optim_create(use(w),
                           &(tx_optim_desc){.kind = (tx_optim_kind)kind,
                                            .lr = (float)lr,
                                            .momentum = (float)momentum,
                                            .nesterov = nesterov != 0,
                                            .beta1 = (float)beta1,
                                            .beta2 = (float)beta2,
                                            .epsilon = (float)epsilon,
                                            .weight_decay = (float)weight_decay},
                           out);
}

EXPORT int txw_optim_step(txw *w, tx_optim *o, const uint32_t *params, const uint32_t *grads,
                          int n) {
    return tx_optim_step(use(w), o, (const tx_tensor *)params, (const tx_tensor *)grads, n);
}

EXPORT void txw_optim_destroy(txw *w, tx_optim *o) {
    tx_optim_destroy(use(w), o);
}

EXPORT int txw_session_weight(txw *w, tx_session *s, const char *name, uint32_t *out) {
    use(w);
    return tx_session_weight(s, name, (tx_tensor *)out);
}
