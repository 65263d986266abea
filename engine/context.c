/* tx_ctx: takes a current GL ES 3.0 context, probes it by rendering, keeps
 * stats and the last error. */
#include <string.h>

#include "internal.h"

/* Chosen by measurement (bench/README.md, "Choosing k"): 2 identical calls. */
#define TX_DEFAULT_SPECIALIZE_AFTER 2
#define TX_DEFAULT_MAX_SPECIALIZED 128
#define TX_DEFAULT_BUDGET ((size_t)1 << 30)

static const char *const k_status_names[TX_STATUS_COUNT_] = {
    [TX_STATUS_OK] = "TX_STATUS_OK",
    [TX_STATUS_INVALID_ARGUMENT] = "TX_STATUS_INVALID_ARGUMENT",
    [TX_STATUS_SHAPE_MISMATCH] = "TX_STATUS_SHAPE_MISMATCH",
    [TX_STATUS_RANK_TOO_HIGH] = "TX_STATUS_RANK_TOO_HIGH",
    [TX_STATUS_DTYPE_MISMATCH] = "TX_STATUS_DTYPE_MISMATCH",
    [TX_STATUS_STALE_HANDLE] = "TX_STATUS_STALE_HANDLE",
    [TX_STATUS_TOO_LARGE] = "TX_STATUS_TOO_LARGE",
    [TX_STATUS_OUT_OF_MEMORY] = "TX_STATUS_OUT_OF_MEMORY",
    [TX_STATUS_UNSUPPORTED] = "TX_STATUS_UNSUPPORTED",
    [TX_STATUS_GL_ERROR] = "TX_STATUS_GL_ERROR",
    [TX_STATUS_CONTEXT_LOST] = "TX_STATUS_CONTEXT_LOST",
};

const char *tx_status_name(tx_status s) {
    if ((unsigned)s >= TX_STATUS_COUNT_)
        return "TX_STATUS_?";
    return k_status_names[s];
}

tx_status tx_fail(tx_ctx *ctx, tx_status s, const char *fmt, ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
        va_end(ap);
        /* Say once, for every op's message, what gets the caller out. */
        if (s == TX_STATUS_CONTEXT_LOST && ctx->lost && n >= 0 && (size_t)n < sizeof ctx->err)
            snprintf(ctx->err + n, sizeof ctx->err - (size_t)n,
                     " (every call fails until tx_ctx_restore)");
    }
    return s;
}

void tx_ctx_set_lost(tx_ctx *ctx) {
    if (!ctx->lost)
        ctx->stats.context_losses++;
    ctx->lost = true;
    ctx->gl.lost = true;
}

tx_status tx_gl_failure(tx_ctx *ctx, tx_status otherwise, const char *op, const char *what) {
    if (ctx->lost || tx_gl_context_lost(&ctx->gl)) {
        tx_ctx_set_lost(ctx);
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context was lost (%s)", op,
                       what);
    }
    return tx_fail(ctx, otherwise, "%s: the driver failed %s", op, what);
}

void tx_shape_str(char *buf, size_t n, int rank, const int64_t *shape) {
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld",
                                 (long long)shape[i]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

const char *tx_last_error(const tx_ctx *ctx) {
    if (!ctx)
        return "no context";
    return ctx->err;
}

static int resolve_k(const tx_ctx_desc *d) {
    const char *env = getenv("TEXEL_SPECIALIZE_AFTER");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == 0)
            return v < 0 ? -1 : (int)(v > 1000000 ? 1000000 : v);
        fprintf(stderr, "texel: ignoring TEXEL_SPECIALIZE_AFTER=\"%s\" (not an integer)\n",
                env);
    }
    switch (d->specialize_after) {
    case TX_SPECIALIZE_DEFAULT: return TX_DEFAULT_SPECIALIZE_AFTER;
    case TX_SPECIALIZE_ALWAYS: return 0;
    default: return d->specialize_after < 0 ? -1 : d->specialize_after;
    }
}

/* Probes the current context by rendering; false (message in ctx->err) when
 * texel cannot run on it. Used at creation and by tx_ctx_restore. */
static bool probe_caps(tx_ctx *ctx, const tx_ctx_desc *d) {
    if (d->no_parallel_compile)
        ctx->gl.has_parallel = false;
    tx_caps *c = &ctx->caps;
    tx_gl_strings(c->renderer, c->version, c->glsl_version, sizeof c->renderer);
    c->max_texture_size = tx_gl_max_texture_size();
    c->max_draw_buffers = tx_gl_max_draw_buffers();
    c->parallel_compile = ctx->gl.has_parallel;
    c->float32_render = tx_gl_probe_render(&ctx->gl, false);
    c->float16_render = tx_gl_probe_render(&ctx->gl, true);
    ctx->max_tex = c->max_texture_size;
    if (d->max_texture_size > 0 && d->max_texture_size < ctx->max_tex) {
        /* Keep widths powers of two (see tx_texture). */
        int m = 1;
        while (m * 2 <= d->max_texture_size)
            m *= 2;
        ctx->max_tex = m;
    }
    /* Without float32 render targets, float16 storage still computes
     * (flagged in caps, ~3 significant digits); with neither, nothing does. */
    c->float16_storage = c->float16_render && (d->float16_storage || !c->float32_render);
    ctx->gl.half_storage = c->float16_storage;
    if (!c->float32_render && !c->float16_storage) {
        snprintf(ctx->err, sizeof ctx->err,
                 "this device can render neither to RGBA32F nor to RGBA16F textures "
                 "(EXT_color_buffer_float / EXT_color_buffer_half_float)");
        return false;
    }
    if (d->float16_storage && !c->float16_render) {
        snprintf(ctx->err, sizeof ctx->err,
                 "desc.float16_storage: this device cannot render to RGBA16F textures");
        return false;
    }
    if (c->max_draw_buffers < 4) {
        snprintf(ctx->err, sizeof ctx->err, "this device has %d draw buffers; texel needs 4",
                 c->max_draw_buffers);
        return false;
    }
    return true;
}

/* Checks the desc fields that have no meaning when negative. */
static const char *bad_desc(const tx_ctx_desc *d) {
#ifndef __EMSCRIPTEN__
    if (!d->get_proc_address)
        return "desc.get_proc_address is NULL (needed to load GL)";
#endif
    if (d->max_specialized < 0)
        return "desc.max_specialized is negative";
    if (d->max_texture_size < 0)
        return "desc.max_texture_size is negative";
    return NULL;
}

tx_status tx_ctx_create(const tx_ctx_desc *desc, tx_ctx **out) {
    if (!out)
        return TX_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    const char *bad = bad_desc(&d);
    if (bad) {
        /* No context to carry the message: stderr is all there is. */
        fprintf(stderr, "texel: tx_ctx_create: %s\n", bad);
        return TX_STATUS_INVALID_ARGUMENT;
    }
    tx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return TX_STATUS_OUT_OF_MEMORY;
    if (!tx_gl_init(&ctx->gl, d.get_proc_address, ctx->err, sizeof ctx->err)) {
        fprintf(stderr, "texel: %s\n", ctx->err);
        free(ctx);
        return TX_STATUS_UNSUPPORTED;
    }
    ctx->get_proc_address = d.get_proc_address;
    {
        /* Consecutive contexts get distant generation ranges (tensor.c). */
        static _Atomic unsigned contexts_made;
        ctx->handle_salt = (unsigned)contexts_made++ * 1237u;
    }
    ctx->k = resolve_k(&d);
    ctx->max_specialized = d.max_specialized > 0 ? d.max_specialized : TX_DEFAULT_MAX_SPECIALIZED;
    ctx->budget = d.memory_budget ? d.memory_budget : TX_DEFAULT_BUDGET;
    ctx->pool.limit = d.pool_limit ? d.pool_limit : ctx->budget / 4;
    ctx->log_shaders = d.log_shaders || (getenv("TEXEL_LOG_SHADERS") != NULL);
    ctx->no_parallel_compile = d.no_parallel_compile;
    ctx->max_texture_size_req = d.max_texture_size;
    ctx->float16_storage_req = d.float16_storage;
    if (!probe_caps(ctx, &d)) {
        fprintf(stderr, "texel: %s\n", ctx->err);
        tx_gl_shutdown(&ctx->gl);
        free(ctx);
        return TX_STATUS_UNSUPPORTED;
    }
    tx_status s = tx_cache_create(ctx);
    if (s != TX_STATUS_OK) {
        tx_gl_shutdown(&ctx->gl);
        free(ctx);
        return s;
    }
    *out = ctx;
    return TX_STATUS_OK;
}

void tx_ctx_destroy(tx_ctx *ctx) {
    if (!ctx)
        return;
    tx_tensors_release_all(ctx);
    tx_pool_trim(ctx, 0);
    tx_cache_destroy(ctx);
    free(ctx->pool.free_tex);
    free(ctx->slots);
    free(ctx->free_slots);
    tx_gl_shutdown(&ctx->gl);
    free(ctx);
}

tx_status tx_ctx_caps(const tx_ctx *ctx, tx_caps *out) {
    if (!ctx || !out)
        return TX_STATUS_INVALID_ARGUMENT;
    *out = ctx->caps;
    out->max_texture_size = ctx->max_tex;
    return TX_STATUS_OK;
}

tx_status tx_ctx_stats(const tx_ctx *ctx, tx_stats *out) {
    if (!ctx || !out)
        return TX_STATUS_INVALID_ARGUMENT;
    *out = ctx->stats;
    return TX_STATUS_OK;
}

tx_status tx_ctx_finish(tx_ctx *ctx) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_ctx_finish: the GL context is lost");
    tx_gl_finish();
    if (tx_gl_context_lost(&ctx->gl))
        return tx_gl_failure(ctx, TX_STATUS_CONTEXT_LOST, "tx_ctx_finish", "finishing");
    return TX_STATUS_OK;
}

bool tx_ctx_is_lost(tx_ctx *ctx) {
    if (!ctx)
        return false;
    if (!ctx->lost && tx_gl_context_lost(&ctx->gl))
        tx_ctx_set_lost(ctx);
    return ctx->lost;
}

tx_status tx_ctx_restore(tx_ctx *ctx) {
    const char *op = "tx_ctx_restore";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    /* Whatever the state was, everything made on the old context is gone. */
    tx_ctx_set_lost(ctx);
    if (tx_gl_context_lost(&ctx->gl))
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "%s: the GL context is still lost; call again once it is restored "
                       "(WebGL: after webglcontextrestored) or a new one is current",
                       op);
    tx_tensors_mark_lost(ctx);
    tx_pool_trim(ctx, 0); /* forgets: gl.lost makes the deletes no-ops */
    tx_cache_destroy(ctx);
    tx_gl_shutdown(&ctx->gl);
    ctx->stats.specialized_programs = 0;
    char err[sizeof ctx->err];
    if (!tx_gl_init(&ctx->gl, ctx->get_proc_address, err, sizeof err)) {
        ctx->gl.lost = true;
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: %s", op, err);
    }
    tx_ctx_desc d = {.max_texture_size = ctx->max_texture_size_req,
                     .no_parallel_compile = ctx->no_parallel_compile,
                     .float16_storage = ctx->float16_storage_req};
    if (!probe_caps(ctx, &d)) {
        snprintf(err, sizeof err, "%s", ctx->err);
        tx_gl_shutdown(&ctx->gl);
        ctx->gl.lost = true;
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "%s: the new context is unusable: %s", op,
                       err);
    }
    tx_status s = tx_cache_create(ctx);
    if (s) {
        tx_gl_shutdown(&ctx->gl);
        ctx->gl.lost = true;
        return tx_fail(ctx, s, "%s: out of host memory", op);
    }
    ctx->lost = false;
    ctx->stats.context_restores++;
    ctx->err[0] = 0;
    return TX_STATUS_OK;
}

void tx_ctx_trim(tx_ctx *ctx) { /* while lost, this only forgets (gl.lost) */
    if (ctx)
        tx_pool_trim(ctx, 0);
}

int tx_ctx_specialize_after(const tx_ctx *ctx) { return ctx ? ctx->k : -1; }
