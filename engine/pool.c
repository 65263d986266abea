/* Texture pool: textures are bucketed by size class (texel counts 2^k and
 * 3·2^(k-1), so at most a third is wasted) and reused across tensors of any
 * shape in the class. Live + pooled bytes stay within the context's budget:
 * pooled textures are evicted oldest first, and only when live textures alone
 * would exceed it does an allocation fail with TX_STATUS_OUT_OF_MEMORY.
 *
 * The pool itself cannot grow without bound under shapes that keep changing
 * (the peers' most reported memory complaint): free textures are capped at
 * pool.limit bytes (tx_ctx_desc.pool_limit), and one not reused within
 * TX_POOL_MAX_AGE acquisitions is deleted, so classes nobody asks for any
 * more leave the pool. Reuse takes the most recently freed textures of a
 * class, so the surplus of a class is what ages out. */
#include <string.h>

#include "internal.h"

/* Long enough that a model's per-run intermediates (hundreds of tensors)
 * are reused across runs; short enough that stale classes go soon. */
#define TX_POOL_MAX_AGE 1024

/* Class c ↔ texel count: c even → 2^(c/2), c odd → 3·2^((c-1)/2 - 1). */
static int64_t class_texels(int c) {
    if (c == 0)
        return 1;
    if (c % 2 == 0)
        return (int64_t)1 << (c / 2);
    return (int64_t)3 << ((c - 1) / 2 - 1 < 0 ? 0 : (c - 1) / 2 - 1);
}

static int size_class_of(int64_t texels) {
    int c = 0;
    while (class_texels(c) < texels)
        c++;
    return c;
}

bool tx_tex_dims(const tx_ctx *ctx, int64_t texels, int *size_class, int *w, int *h) {
    int64_t max = ctx->max_tex;
    if (texels > max * max)
        return false;
    int c = size_class_of(texels);
    int64_t ct = class_texels(c);
    /* Square-ish textures keep the rasterizer's tiles full. */
    int64_t ww = 1;
    while (ww * ww < ct)
        ww *= 2;
    if (ww > max)
        ww = max;
    int64_t hh = (ct + ww - 1) / ww;
    if (hh > max) {
        /* The class rounds past the limit; the exact texel count still fits. */
        ct = texels;
        hh = (ct + ww - 1) / ww;
        c = 1000 + (int)hh; /* a private class per height: never shared wrongly */
    }
    *size_class = c;
    *w = (int)ww;
    *h = (int)hh;
    return true;
}

static int log2i(int v) {
    int s = 0;
    while ((1 << s) < v)
        s++;
    return s;
}

int tx_tex_wshift(const tx_ctx *ctx, int64_t texels) {
    int c, w, h;
    return tx_tex_dims(ctx, texels, &c, &w, &h) ? log2i(w) : -1;
}

/* Drops free textures (oldest first: the list is in release order) that
 * were not reused within TX_POOL_MAX_AGE acquisitions. */
static void evict_old(tx_ctx *ctx) {
    tx_pool *p = &ctx->pool;
    int drop = 0;
    while (drop < p->n_free && p->free_tex[drop].released + TX_POOL_MAX_AGE < p->tick)
        drop++;
    if (!drop)
        return;
    size_t bytes = 0;
    for (int i = 0; i < drop; i++) {
        tx_gl_tex_delete(&ctx->gl, p->free_tex[i].gl);
        bytes += p->free_tex[i].bytes;
    }
    memmove(p->free_tex, p->free_tex + drop, (size_t)(p->n_free - drop) * sizeof *p->free_tex);
    p->n_free -= drop;
    ctx->stats.pooled_texture_bytes -= bytes;
    ctx->stats.pooled_textures = (uint64_t)p->n_free;
    ctx->stats.textures_evicted += (uint64_t)drop;
}

static size_t min_size(size_t a, size_t b) {
    return a < b ? a : b;
}

/* A texture from the driver; the test hook fault_tex_create refuses some. */
static bool tex_create(tx_ctx *ctx, int w, int h, int layers, tx_gl_tex *out) {
    if (ctx->fault_tex_create > 0) {
        ctx->fault_tex_create--;
        return false;
    }
    return layers ? tx_gl_tex_create_array(&ctx->gl, w, h, layers, out)
                  : tx_gl_tex_create(&ctx->gl, w, h, out);
}

tx_texture tx_layer(const tx_texture *array, int i) {
    tx_texture t = *array;
    t.gl = TX_GL_LAYER(array->gl, i);
    return t;
}

tx_status tx_pool_acquire(tx_ctx *ctx, const char *op, int64_t texels, tx_texture *out) {
    return tx_pool_acquire_layers(ctx, op, texels, 0, out);
}

tx_status tx_pool_acquire_layers(tx_ctx *ctx, const char *op, int64_t texels, int layers,
                                 tx_texture *out) {
    int c, w, h;
    if (!tx_tex_dims(ctx, texels, &c, &w, &h))
        return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                       "%s: %lld RGBA texels needed, more than one %d×%d texture holds on "
                       "this device (MAX_TEXTURE_SIZE %d)",
                       op, (long long)texels, ctx->max_tex, ctx->max_tex, ctx->max_tex);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_pool *p = &ctx->pool;
    p->tick++;
    evict_old(ctx);
    /* The newest release of the class wins (older surplus ages out), and
     * among textures released at that same tick the first released: an op
     * that frees its tiles in order gets them back in that order, so the GL
     * layer's cached bindings and attachments still match (under WebGL each
     * rebind is a call into JS; web/test/api.js counts them). */
    int pick = -1;
    for (int i = p->n_free - 1; i >= 0; i--) {
        const tx_texture *f = &p->free_tex[i];
        if (f->size_class != c || f->w != w || f->h != h || f->layers != layers)
            continue;
        if (pick >= 0 && f->released != p->free_tex[pick].released)
            break;
        pick = i;
    }
    if (pick >= 0) {
        *out = p->free_tex[pick];
        memmove(&p->free_tex[pick], &p->free_tex[pick + 1],
                (size_t)(p->n_free - pick - 1) * sizeof *p->free_tex);
        p->n_free--;
        ctx->stats.pooled_textures = (uint64_t)p->n_free;
        ctx->stats.pooled_texture_bytes -= out->bytes;
        ctx->stats.live_texture_bytes += out->bytes;
        return TX_STATUS_OK;
    }
    size_t bytes = (size_t)w * (size_t)h * (ctx->caps.float16_storage ? 8u : 16u) *
                   (size_t)(layers ? layers : 1);
    char dims[48]; /* "W×H" or, for an array texture, "W×H×layers array" */
    if (layers)
        snprintf(dims, sizeof dims, "%d×%d×%d array", w, h, layers);
    else
        snprintf(dims, sizeof dims, "%d×%d", w, h);
    if (ctx->stats.live_texture_bytes + bytes > ctx->budget)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                       "%s: a %s texture (%zu bytes) would exceed the memory budget of %zu "
                       "bytes (%llu live)",
                       op, dims, bytes, ctx->budget,
                       (unsigned long long)ctx->stats.live_texture_bytes);
    tx_pool_trim(ctx, min_size(p->limit, ctx->budget - ctx->stats.live_texture_bytes - bytes));
    tx_texture t = {0};
    t.w = w;
    t.h = h;
    t.wshift = log2i(w);
    t.size_class = c;
    t.layers = layers;
    t.bytes = bytes;
    if (!tex_create(ctx, w, h, layers, &t.gl)) {
        /* The driver refused: drop every pooled texture and try once more. */
        tx_pool_trim(ctx, 0);
        if (!tex_create(ctx, w, h, layers, &t.gl)) {
            char what[96];
            snprintf(what, sizeof what, "allocating a %s %s texture (%zu bytes)", dims,
                     ctx->caps.float16_storage ? "RGBA16F" : "RGBA32F", bytes);
            return tx_gl_failure(ctx, TX_STATUS_OUT_OF_MEMORY, op, what);
        }
    }
    ctx->stats.live_texture_bytes += bytes;
    uint64_t total = ctx->stats.live_texture_bytes + ctx->stats.pooled_texture_bytes;
    if (total > ctx->stats.peak_texture_bytes)
        ctx->stats.peak_texture_bytes = total;
    *out = t;
    return TX_STATUS_OK;
}

void tx_pool_forget(tx_ctx *ctx, tx_texture *tex) {
    ctx->stats.live_texture_bytes -= tex->bytes;
    memset(tex, 0, sizeof *tex);
}

void tx_pool_release(tx_ctx *ctx, tx_texture *tex) {
    tx_pool *p = &ctx->pool;
    if (ctx->lost) {
        /* Nothing from a lost context may be reused (and after a real loss
         * its name is not even deleted: gl.lost). */
        tx_gl_tex_delete(&ctx->gl, tex->gl);
        tx_pool_forget(ctx, tex);
        return;
    }
    ctx->stats.live_texture_bytes -= tex->bytes;
    if (p->n_free == p->cap_free) {
        int cap = p->cap_free ? p->cap_free * 2 : 32;
        tx_texture *n = realloc(p->free_tex, (size_t)cap * sizeof *n);
        if (!n) {
            tx_gl_tex_delete(&ctx->gl, tex->gl);
            return;
        }
        p->free_tex = n;
        p->cap_free = cap;
    }
    tex->released = p->tick;
    p->free_tex[p->n_free++] = *tex;
    ctx->stats.pooled_textures = (uint64_t)p->n_free;
    ctx->stats.pooled_texture_bytes += tex->bytes;
    /* Keep live + pooled within budget, and pooled within the pool's limit. */
    size_t keep = min_size(p->limit, ctx->budget - ctx->stats.live_texture_bytes);
    if (ctx->stats.pooled_texture_bytes > keep)
        tx_pool_trim(ctx, keep);
}

void tx_pool_trim(tx_ctx *ctx, size_t keep_bytes) {
    tx_pool *p = &ctx->pool;
    int drop = 0;
    while (drop < p->n_free && ctx->stats.pooled_texture_bytes > keep_bytes) {
        tx_gl_tex_delete(&ctx->gl, p->free_tex[drop].gl);
        ctx->stats.pooled_texture_bytes -= p->free_tex[drop].bytes;
        drop++;
    }
    if (drop) {
        memmove(p->free_tex, p->free_tex + drop, (size_t)(p->n_free - drop) * sizeof *p->free_tex);
        p->n_free -= drop;
        ctx->stats.pooled_textures = (uint64_t)p->n_free;
        ctx->stats.textures_evicted += (uint64_t)drop;
    }
}
