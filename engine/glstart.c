/* Bringing GL up for a context: the probes by rendering (at creation, at
 * tx_ctx_restore), and the GL context of a tx_ctx_desc.make_gl context, made
 * at the first GPU use. Below tensor.c and front.c, which call
 * tx_ctx_need_gl at their front doors; context.c calls the rest. */
#include <ctype.h>
#include <string.h>

#include "internal.h"

/* Does the renderer string name a software rasterizer (the GPU's work runs
 * on the CPU's cores)? */
bool tx_software_renderer(const char *renderer) {
    static const char *const soft[] = {"llvmpipe", "softpipe",     "swiftshader",
                                       "swrast",   "basic render", "software"};
    char low[128];
    size_t n = 0;
    for (; renderer[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)renderer[n]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof soft / sizeof soft[0]; i++)
        if (strstr(low, soft[i]))
            return true;
    return false;
}

/* Probes the current context by rendering; false (message in ctx->err) when
 * texel cannot run on it. Used at creation and by tx_ctx_restore. */
bool tx_ctx_probe(tx_ctx *ctx, const tx_ctx_desc *d) {
    if (d->no_parallel_compile)
        ctx->gl.has_parallel = false;
    tx_caps *c = &ctx->caps;
    tx_gl_strings(c->renderer, c->version, c->glsl_version, sizeof c->renderer);
    c->max_texture_size = tx_gl_max_texture_size();
    c->max_draw_buffers = tx_gl_max_draw_buffers();
    c->parallel_compile = ctx->gl.has_parallel;
    ctx->software_gl = tx_software_renderer(c->renderer);
    /* one draw for every probe where the driver takes it, else one each */
    bool div_exact = true,
         all = tx_gl_probe_all(&ctx->gl, &c->float32_render, &c->float16_render, &div_exact);
    if (!all) {
        c->float32_render = tx_gl_probe_render(&ctx->gl, false);
        c->float16_render = tx_gl_probe_render(&ctx->gl, true);
    }
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
    /* float16 storage rounds every quotient to 11 bits anyway */
    c->emulated_division = !c->float16_storage &&
                           (d->emulate_division || !(all ? div_exact : tx_gl_probe_div(&ctx->gl)));
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

/* Resets the GL layer once its objects are gone or deleted, keeping the
 * settings that outlive a context (the deferred-check mode, the test hook). */
void tx_gl_forget(tx_ctx *ctx) {
    bool defer = ctx->gl.defer_errors, fault = ctx->gl.fault_lost;
    tx_gl_shutdown(&ctx->gl); /* deletes nothing when gl.lost */
    ctx->gl.defer_errors = defer;
    ctx->gl.fault_lost = fault;
    ctx->gl.lost = true; /* nothing of ours is left to delete or use */
}

/* Loads GL from the context current now, probes it and makes the program
 * cache (if there is none): the steps of tx_ctx_restore and of the first GPU
 * use. On failure the GL layer is forgotten again and `why` says what went
 * wrong: CONTEXT_LOST when the context is (still) lost, UNSUPPORTED when it
 * cannot run texel, OUT_OF_MEMORY. */
tx_status tx_gl_start(tx_ctx *ctx, char *why, size_t n) {
    bool defer = ctx->gl.defer_errors;
    if (!tx_gl_init(&ctx->gl, ctx->get_proc_address, why, n)) {
        ctx->gl.lost = true; /* GL may not have loaded: nothing to unbind or delete */
        tx_gl_forget(ctx);
        return TX_STATUS_CONTEXT_LOST;
    }
    ctx->gl.defer_errors = defer;
    if (tx_gl_context_lost(&ctx->gl)) {
        ctx->gl.lost = true;
        tx_gl_forget(ctx);
        snprintf(why, n, "the GL context is still lost");
        return TX_STATUS_CONTEXT_LOST;
    }
    tx_ctx_desc d = {.max_texture_size = ctx->max_texture_size_req,
                     .no_parallel_compile = ctx->no_parallel_compile,
                     .float16_storage = ctx->float16_storage_req,
                     .emulate_division = ctx->emulate_division_req};
    if (!tx_ctx_probe(ctx, &d)) {
        snprintf(why, n, "the GL context is unusable: %.400s", ctx->err);
        tx_gl_forget(ctx);
        return TX_STATUS_UNSUPPORTED;
    }
    if (!ctx->cache && tx_cache_create(ctx)) {
        tx_gl_forget(ctx);
        snprintf(why, n, "out of host memory");
        return TX_STATUS_OUT_OF_MEMORY;
    }
    ctx->lost = false;
    ctx->gl_dropped = false;
    return TX_STATUS_OK;
}

tx_status tx_ctx_need_gl(tx_ctx *ctx, const char *op) {
    if (!ctx->gl_pending)
        return TX_STATUS_OK;
    ctx->gl_pending = ctx->caps.gl_pending = false; /* once, whatever the outcome */
    double t0 = tx_now_ms();
    char why[sizeof ctx->no_gpu_why] = "";
    tx_status s = TX_STATUS_UNSUPPORTED;
    if (ctx->make_gl(ctx->make_gl_user, why, sizeof why))
        s = tx_gl_start(ctx, why, sizeof why);
    else if (!why[0])
        snprintf(why, sizeof why, "desc.make_gl made no GL context");
    ctx->stats.gl_start_ms = tx_now_ms() - t0;
    if (s == TX_STATUS_OK)
        return TX_STATUS_OK;
    /* the CPU device only, from here on (error.c names the reason) */
    memset(&ctx->caps, 0, sizeof ctx->caps);
    ctx->max_tex = 0;
    ctx->no_gpu = ctx->caps.no_gpu = true;
    ctx->lost = ctx->gl_dropped = ctx->gl.lost = true;
    snprintf(ctx->no_gpu_why, sizeof ctx->no_gpu_why, "%s", why);
    return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GPU is needed", op);
}
