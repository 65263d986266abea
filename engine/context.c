/* tx_ctx: takes a current GL ES 3.0 context, probes it by rendering, keeps
 * stats and the last error. */
#include <string.h>

#include "internal.h"

/* Chosen by measurement (bench/README.md, "Choosing k"): 2 identical calls. */
#define TX_DEFAULT_SPECIALIZE_AFTER 2
#define TX_DEFAULT_MAX_SPECIALIZED  1024
#define TX_DEFAULT_BUDGET           ((size_t)1 << 30)

static int resolve_k(const tx_ctx_desc *d, bool *is_default) {
    const char *env = getenv("TEXEL_SPECIALIZE_AFTER");
    *is_default = false;
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == 0)
            return v < 0 ? -1 : (int)(v > 1000000 ? 1000000 : v);
        fprintf(stderr, "texel: ignoring TEXEL_SPECIALIZE_AFTER=\"%s\" (not an integer)\n", env);
    }
    switch (d->specialize_after) {
    case TX_SPECIALIZE_DEFAULT: *is_default = true; return TX_DEFAULT_SPECIALIZE_AFTER;
    case TX_SPECIALIZE_ALWAYS: return 0;
    default: return d->specialize_after < 0 ? -1 : d->specialize_after;
    }
}

/* Checks the desc fields that have no meaning when negative. */
static const char *bad_desc(const tx_ctx_desc *d) {
#ifndef __EMSCRIPTEN__
    if (!d->get_proc_address && !d->no_gpu)
        return "desc.get_proc_address is NULL (needed to load GL; desc.no_gpu makes a context "
               "without GL)";
#endif
    if (d->max_specialized < 0)
        return "desc.max_specialized is negative";
    if (d->max_texture_size < 0)
        return "desc.max_texture_size is negative";
    if (d->device != TX_DEVICE_DEFAULT && d->device != TX_DEVICE_GPU && d->device != TX_DEVICE_CPU)
        return "desc.device is not gpu or cpu";
    if (d->cpu_threads < 0)
        return "desc.cpu_threads is negative";
    if (d->no_gpu && d->make_gl)
        return "desc.no_gpu (no GL) and desc.make_gl (GL at the first GPU use) are both set";
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
    if (d.no_gpu && d.device == TX_DEVICE_GPU) {
        fprintf(stderr, "texel: tx_ctx_create: desc.device is gpu but desc.no_gpu asks for a "
                        "context without GL (no GPU context)\n");
        return TX_STATUS_UNSUPPORTED;
    }
    tx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return TX_STATUS_OUT_OF_MEMORY;
    bool gl_now = !d.no_gpu && !d.make_gl;
    if (gl_now && !tx_gl_init(&ctx->gl, d.get_proc_address, ctx->err, sizeof ctx->err)) {
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
    ctx->k = resolve_k(&d, &ctx->k_default);
    ctx->max_specialized = d.max_specialized > 0 ? d.max_specialized : TX_DEFAULT_MAX_SPECIALIZED;
    ctx->budget = d.memory_budget ? d.memory_budget : TX_DEFAULT_BUDGET;
    ctx->pool.limit = d.pool_limit ? d.pool_limit : ctx->budget / 4;
    ctx->log_shaders = d.log_shaders || (getenv("TEXEL_LOG_SHADERS") != NULL);
    {
        const char *tune = getenv("TEXEL_TUNE");
        ctx->tune_kernels = tune && *tune && *tune != '0';
        const char *phases = getenv("TEXEL_PHASES");
        ctx->no_phases = phases && *phases == '0';
    }
    ctx->no_parallel_compile = d.no_parallel_compile;
    ctx->max_texture_size_req = d.max_texture_size;
    ctx->float16_storage_req = d.float16_storage;
    {
        const char *emulate = getenv("TEXEL_EMULATE_DIVISION");
        ctx->emulate_division_req = d.emulate_division || (emulate && *emulate && *emulate != '0');
        d.emulate_division = ctx->emulate_division_req;
    }
    ctx->device = d.device != TX_DEVICE_DEFAULT ? d.device
                  : d.no_gpu                    ? TX_DEVICE_CPU
                                                : TX_DEVICE_GPU;
    ctx->cpu_threads = d.cpu_threads;
    const char *threads = getenv("TEXEL_CPU_THREADS"); /* the default: desc's wins */
    if (d.cpu_threads == 0 && threads && atoi(threads) > 0)
        ctx->cpu_threads = atoi(threads);
    if (d.no_gpu) {
        /* The context-loss state from birth, without its counters: every GPU
         * path already refuses a lost context and keeps the CPU working, and
         * tx_fail turns its CONTEXT_LOST into UNSUPPORTED (error.c). */
        ctx->no_gpu = ctx->caps.no_gpu = true;
        ctx->lost = ctx->gl_dropped = ctx->gl.lost = true;
    } else if (d.make_gl) {
        /* the same state until the first GPU use (tx_ctx_need_gl) */
        ctx->gl_pending = ctx->caps.gl_pending = true;
        ctx->make_gl = d.make_gl;
        ctx->make_gl_user = d.make_gl_user;
        ctx->lost = ctx->gl_dropped = ctx->gl.lost = true;
    } else if (!tx_ctx_probe(ctx, &d)) {
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
    tx_readbacks_drop(ctx, true);
    if (ctx->tape) /* a tape the caller did not end: its views go with it */
        tx_tape_end(ctx, ctx->tape);
    tx_tensors_release_all(ctx);
    tx_pool_trim(ctx, 0);
    tx_cache_destroy(ctx);
    tx_cpu_shutdown(ctx);
    free(ctx->pool.free_tex);
    for (int i = 0; i < ctx->cap_slots / TX_SLOT_CHUNK; i++)
        free(ctx->slot_chunks[i]);
    free(ctx->slot_chunks);
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
    out->specializations_waiting = (uint64_t)tx_cache_waiting(ctx);
    return TX_STATUS_OK;
}

tx_status tx_ctx_finish(tx_ctx *ctx) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (ctx->no_gpu || ctx->gl_pending)
        return TX_STATUS_OK; /* no GPU work to wait for */
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_ctx_finish: the GL context is lost");
    tx_gl_finish();
    if (tx_gl_context_lost(&ctx->gl))
        return tx_gl_failure(ctx, TX_STATUS_CONTEXT_LOST, "tx_ctx_finish", "finishing");
    return TX_STATUS_OK;
}

void tx_ctx_trim(tx_ctx *ctx) { /* while lost, this only forgets (gl.lost) */
    if (ctx)
        tx_pool_trim(ctx, 0);
}

int tx_ctx_specialize_after(const tx_ctx *ctx) {
    return ctx ? ctx->k : -1;
}

/* ---- context loss ----
 *
 * One design for every way a loss shows up. It is *latched* (loss.c:
 * tx_ctx_set_lost) when the driver reports it (an error after a draw, upload or allocation
 * whose cause tx_gl_context_lost confirms; every read asks the driver even
 * without an error), when tx_ctx_is_lost polls it, or when the host says so
 * (tx_ctx_mark_lost). Latching only sets flags, so it is safe in the middle
 * of an op. The old context's objects are then *dropped* (drop_gl_objects) by
 * tx_ctx_mark_lost or at the latest by tx_ctx_restore: forgotten, and
 * deleted only while the driver says that context is still alive (a host
 * that marks a healthy context lost); after a real loss no old name is
 * deleted or used again (gl.lost), since a new context may hand out the same
 * numbers. Dropping bumps ctx->generation: storages of an older generation
 * are lost, so their tensors keep valid handles (shape, destroy) whose every
 * other use says so. */

/* Forgets (deletes, if the context still lives) every GL object made before
 * the loss. Live tensors keep their handles but their storage is detached:
 * its bytes leave the counters and its generation no longer matches. */
static void drop_gl_objects(tx_ctx *ctx) {
    if (ctx->gl_dropped)
        return;
    tx_readbacks_drop(ctx, false);
    tx_cache_destroy(ctx);
    ctx->stats.specialized_programs = 0;
    tx_pool_trim(ctx, 0);
    for (int i = 0; i < ctx->n_slots; i++) {
        const tx_slot *sl = tx_slot_at(ctx, i);
        tx_storage *st = sl->live ? sl->st : NULL;
        if (!st || st->dev != TX_DEVICE_GPU || st->generation != ctx->generation)
            continue;
        tx_gl_tex_delete(&ctx->gl, st->tex.gl); /* skipped after a real loss */
        ctx->stats.live_texture_bytes -= st->tex.bytes;
        st->tex.bytes = 0;
        st->tex.gl = 0;
        if (st->packed.gl) {
            tx_gl_tex_delete(&ctx->gl, st->packed.gl);
            tx_pool_forget(ctx, &st->packed);
        }
    }
    tx_gl_forget(ctx);
    ctx->generation++;
    ctx->gl_dropped = true;
}

tx_status tx_ctx_reset_gl_state(tx_ctx *ctx) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (ctx->no_gpu || ctx->gl_pending)
        return TX_STATUS_OK; /* no GL context to share (yet) */
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "tx_ctx_reset_gl_state: the GL context is lost");
    tx_gl_reset_state(&ctx->gl);
    return TX_STATUS_OK;
}

void tx_ctx_mark_lost(tx_ctx *ctx) {
    if (!ctx)
        return;
    tx_ctx_set_lost(ctx);
    drop_gl_objects(ctx);
}

int tx_ctx_generation(const tx_ctx *ctx) {
    return ctx ? (int)ctx->generation : 0;
}

tx_status tx_ctx_gpu_hint(tx_ctx *ctx, const char *renderer, double gflops) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    ctx->hint_looking = renderer == NULL;
    snprintf(ctx->hint_renderer, sizeof ctx->hint_renderer, "%s", renderer ? renderer : "");
    ctx->hint_gflops = gflops;
    return TX_STATUS_OK;
}

tx_status tx_ctx_start_gl(tx_ctx *ctx) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (ctx->no_gpu) /* error.c says why */
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_ctx_start_gl: no GPU context");
    return tx_ctx_need_gl(ctx, "tx_ctx_start_gl");
}

tx_status tx_ctx_restore(tx_ctx *ctx) {
    const char *op = "tx_ctx_restore";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (ctx->no_gpu)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: no GPU context", op);
    if (ctx->gl_pending)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: the GL context is not made yet (tx_ctx_desc.make_gl makes it at the "
                       "first GPU use)",
                       op);
    if (!tx_ctx_is_lost(ctx))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: the context is not lost (call tx_ctx_mark_lost first if the host "
                       "saw the loss or made another GL context current)",
                       op);
    drop_gl_objects(ctx);
    /* Under WebGL this asks the same canvas context; natively a new context
     * answers after tx_gl_init below. */
    if (tx_gl_context_lost(&ctx->gl))
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "%s: the GL context is still lost; call again once it is restored "
                       "(WebGL: after webglcontextrestored) or a new one is current",
                       op);
    char why[sizeof ctx->err];
    tx_status s = tx_gl_start(ctx, why, sizeof why);
    if (s)
        return tx_fail(ctx, s, "%s: %s%s", op, why,
                       s == TX_STATUS_CONTEXT_LOST ? "; call again once a working one is current"
                                                   : "");
    ctx->stats.context_restores++;
    ctx->err[0] = 0;
    for (size_t i = 0; i < TX_COUNTOF(ctx->restore_hooks); i++)
        if (ctx->restore_hooks[i].fn)
            ctx->restore_hooks[i].fn(ctx, ctx->restore_hooks[i].user);
    return TX_STATUS_OK;
}

tx_status tx_ctx_add_restore_hook(tx_ctx *ctx, tx_restore_hook fn, void *user) {
    tx_status st = tx_check_arg(ctx, "tx_ctx_add_restore_hook", "fn", fn != NULL);
    if (st)
        return st;
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
    /* A NULL fn would match every empty slot. */
    tx_status st = tx_check_arg(ctx, "tx_ctx_remove_restore_hook", "fn", fn != NULL);
    if (st)
        return st;
    for (size_t i = 0; i < TX_COUNTOF(ctx->restore_hooks); i++)
        if (ctx->restore_hooks[i].fn == fn && ctx->restore_hooks[i].user == user) {
            ctx->restore_hooks[i].fn = NULL;
            ctx->restore_hooks[i].user = NULL;
            return TX_STATUS_OK;
        }
    return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                   "tx_ctx_remove_restore_hook: no such hook is registered");
}
