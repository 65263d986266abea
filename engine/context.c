/* tx_ctx: takes a current GL ES 3.0 context, probes it by rendering, keeps
 * stats and the last error. */
#include <string.h>

#include "internal.h"

/* Chosen by measurement (bench/README.md, "Choosing k"): 2 identical calls. */
#define TX_DEFAULT_SPECIALIZE_AFTER 2
#define TX_DEFAULT_MAX_SPECIALIZED 1024
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
        vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
        va_end(ap);
    }
    return s;
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

tx_status tx_ctx_create(const tx_ctx_desc *desc, tx_ctx **out) {
    if (!out)
        return TX_STATUS_INVALID_ARGUMENT;
    *out = NULL;
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    tx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return TX_STATUS_OUT_OF_MEMORY;
    if (!tx_gl_init(&ctx->gl, d.get_proc_address, ctx->err, sizeof ctx->err)) {
        fprintf(stderr, "texel: %s\n", ctx->err);
        free(ctx);
        return TX_STATUS_UNSUPPORTED;
    }
    ctx->get_proc = d.get_proc_address;
    ctx->k = resolve_k(&d);
    ctx->max_specialized = d.max_specialized > 0 ? d.max_specialized : TX_DEFAULT_MAX_SPECIALIZED;
    ctx->budget = d.memory_budget ? d.memory_budget : TX_DEFAULT_BUDGET;
    ctx->log_shaders = d.log_shaders || (getenv("TEXEL_LOG_SHADERS") != NULL);
    if (d.no_parallel_compile)
        ctx->gl.has_parallel = false;

    tx_caps *c = &ctx->caps;
    tx_gl_strings(c->renderer, c->version, c->glsl_version, sizeof c->renderer);
    c->max_texture_size = tx_gl_max_texture_size();
    c->max_draw_buffers = tx_gl_max_draw_buffers();
    c->parallel_compile = ctx->gl.has_parallel;
    c->float32_render = tx_gl_probe_render(&ctx->gl, false);
    c->float16_render = tx_gl_probe_render(&ctx->gl, true);
    ctx->max_tex = c->max_texture_size;
    if (d.max_texture_size > 0 && d.max_texture_size < ctx->max_tex) {
        /* Keep widths powers of two (see tx_texture). */
        int m = 1;
        while (m * 2 <= d.max_texture_size)
            m *= 2;
        ctx->max_tex = m;
    }
    if (!c->float32_render) {
        tx_gl_shutdown(&ctx->gl);
        free(ctx);
        fprintf(stderr, "texel: this device cannot render to RGBA32F textures "
                        "(EXT_color_buffer_float); texel needs float32 render targets\n");
        return TX_STATUS_UNSUPPORTED;
    }
    if (c->max_draw_buffers < 4) {
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
    tx_readbacks_drop(ctx, true);
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
    tx_gl_finish();
    return TX_STATUS_OK;
}

void tx_ctx_trim(tx_ctx *ctx) {
    if (ctx)
        tx_pool_trim(ctx, 0);
}

int tx_ctx_specialize_after(const tx_ctx *ctx) { return ctx ? ctx->k : -1; }

/* ---- context loss ---- */

/* Forgets every GL object of the lost context. The deletes this issues are
 * no-ops on a lost context (WebGL and KHR_robustness both say so); what
 * matters is that no name of the old context is used again. Live tensors keep
 * their handles but their storage is detached: its bytes leave the counters
 * and its generation no longer matches, so every use reports the loss. */
static void drop_gl_objects(tx_ctx *ctx) {
    if (ctx->gl_dropped)
        return;
    tx_readbacks_drop(ctx, false);
    tx_cache_destroy(ctx);
    tx_pool_trim(ctx, 0);
    for (int i = 0; i < ctx->n_slots; i++) {
        tx_storage *st = ctx->slots[i].live ? ctx->slots[i].st : NULL;
        if (!st || st->generation != ctx->generation)
            continue;
        ctx->stats.live_texture_bytes -= st->tex.bytes;
        st->tex.bytes = 0;
        st->tex.gl = 0;
    }
    ctx->generation++;
    ctx->gl_dropped = true;
}

void tx_ctx_mark_lost(tx_ctx *ctx) {
    if (!ctx)
        return;
    ctx->lost = true;
    drop_gl_objects(ctx);
}

bool tx_ctx_is_lost(const tx_ctx *ctx) { return !ctx || ctx->lost; }

int tx_ctx_generation(const tx_ctx *ctx) { return ctx ? (int)ctx->generation : 0; }

tx_status tx_ctx_restore(tx_ctx *ctx) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!ctx->lost)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_ctx_restore: the context is not lost (call tx_ctx_mark_lost first "
                       "if the host saw the loss)");
    drop_gl_objects(ctx);
    bool allow_parallel = ctx->caps.parallel_compile;
    bool defer_errors = ctx->gl.defer_errors;
    if (!tx_gl_init(&ctx->gl, ctx->get_proc, ctx->err, sizeof ctx->err))
        return TX_STATUS_CONTEXT_LOST;
    ctx->gl.defer_errors = defer_errors;
    if (tx_gl_context_lost(&ctx->gl))
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "tx_ctx_restore: the GL context is still lost");
    ctx->gl.has_parallel = ctx->gl.has_parallel && allow_parallel;
    if (!tx_gl_probe_render(&ctx->gl, false))
        return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                       "tx_ctx_restore: the restored context cannot render to RGBA32F textures");
    tx_status s = tx_cache_create(ctx);
    if (s)
        return tx_fail(ctx, s, "tx_ctx_restore: out of host memory");
    ctx->lost = false;
    ctx->gl_dropped = false;
    for (size_t i = 0; i < TX_COUNTOF(ctx->restore_hooks); i++)
        if (ctx->restore_hooks[i].fn)
            ctx->restore_hooks[i].fn(ctx, ctx->restore_hooks[i].user);
    return TX_STATUS_OK;
}

tx_status tx_ctx_add_restore_hook(tx_ctx *ctx, tx_restore_hook fn, void *user) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!fn)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_ctx_add_restore_hook: fn is NULL");
    int free_i = -1;
    for (int i = 0; i < (int)TX_COUNTOF(ctx->restore_hooks); i++) {
        if (ctx->restore_hooks[i].fn == fn && ctx->restore_hooks[i].user == user)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "tx_ctx_add_restore_hook: this hook is already registered");
        if (!ctx->restore_hooks[i].fn && free_i < 0)
            free_i = i;
    }
    if (free_i < 0)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                       "tx_ctx_add_restore_hook: all %d hook slots are in use",
                       (int)TX_COUNTOF(ctx->restore_hooks));
    ctx->restore_hooks[free_i].fn = fn;
    ctx->restore_hooks[free_i].user = user;
    return TX_STATUS_OK;
}

tx_status tx_ctx_remove_restore_hook(tx_ctx *ctx, tx_restore_hook fn, void *user) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    for (size_t i = 0; i < TX_COUNTOF(ctx->restore_hooks); i++)
        if (ctx->restore_hooks[i].fn == fn && ctx->restore_hooks[i].user == user) {
            ctx->restore_hooks[i].fn = NULL;
            ctx->restore_hooks[i].user = NULL;
            return TX_STATUS_OK;
        }
    return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                   "tx_ctx_remove_restore_hook: no such hook is registered");
}
