/* Asynchronous reads: a pixel-pack buffer and a fence per pending read.
 *
 * Handles are {index + 1 in the low 16 bits, generation in the high 16}, like
 * tensor handles, so a finished or cancelled readback is refused, not reused.
 * Pending reads belong to the GL context: a loss drops them all. A CPU
 * tensor's read copies its values at once and is ready when asked. */
#include <string.h>

#include "internal.h"

typedef struct readback {
    bool used;
    uint16_t gen;
    unsigned buf;
    void *sync;
    int texels;
    int64_t numel;
    tx_dtype dtype;
    float *host;    /* a CPU tensor's values, copied when the read began */
    unsigned epoch; /* tx_gl.error_epoch when it began */
} readback;

struct tx_readbacks {
    readback *r;
    int n, cap;
};

static readback *readback_get(tx_ctx *ctx, tx_readback h) {
    uint32_t idx = h.id & 0xFFFFu;
    if (!ctx->reads || idx == 0 || idx > (uint32_t)ctx->reads->n)
        return NULL;
    readback *r = &ctx->reads->r[idx - 1];
    return r->used && r->gen == (h.id >> 16) ? r : NULL;
}

static tx_status readback_check(tx_ctx *ctx, const char *fn, tx_readback h, readback **out) {
    *out = readback_get(ctx, h);
    /* a CPU tensor's read (a host copy) outlives a loss */
    if (ctx->lost && !ctx->gl_pending && !(*out && (*out)->host))
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "%s: the GL context was lost; pending reads are gone", fn);
    if (!*out)
        return tx_fail(ctx, TX_STATUS_STALE_HANDLE,
                       "%s: readback 0x%08x is not pending (finished, cancelled, dropped by a "
                       "context loss, or never started)",
                       fn, h.id);
    return TX_STATUS_OK;
}

static void readback_free(tx_ctx *ctx, readback *r) {
    if (!r->host)
        tx_gl_read_free(&ctx->gl, r->buf, r->sync);
    free(r->host);
    r->host = NULL;
    r->used = false;
    r->buf = 0;
    r->sync = NULL;
    r->gen = (uint16_t)(r->gen + 1 ? r->gen + 1 : 1);
}

tx_status tx_tensor_read_async(tx_ctx *ctx, tx_tensor t, tx_readback *out) {
    const char *fn = "tx_tensor_read_async";
    tx_slot *s;
    tx_status st = tx_check_out_tensor(ctx, fn, out, "tensor", t, &s);
    if (st)
        return st;
    if (ctx->lost && s->st->dev == TX_DEVICE_GPU)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", fn);
    if (!ctx->reads) {
        ctx->reads = calloc(1, sizeof *ctx->reads);
        if (!ctx->reads)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    struct tx_readbacks *rs = ctx->reads;
    int idx = -1;
    for (int i = 0; i < rs->n && idx < 0; i++)
        if (!rs->r[i].used)
            idx = i;
    if (idx < 0) {
        if (rs->n == 0xFFFF)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: %d reads pending already", fn, rs->n);
        if (rs->n == rs->cap) {
            int cap = rs->cap ? rs->cap * 2 : 8;
            readback *n = realloc(rs->r, (size_t)cap * sizeof *n);
            if (!n)
                return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", fn);
            rs->r = n;
            rs->cap = cap;
        }
        idx = rs->n++;
        memset(&rs->r[idx], 0, sizeof rs->r[idx]);
        rs->r[idx].gen = 1;
    }
    readback *r = &rs->r[idx];
    int texels = (int)((s->numel + 3) / 4);
    if (texels < 1)
        texels = 1;
    if (s->st->dev == TX_DEVICE_CPU || s->st->n_parts) {
        /* ready at once: host memory, or a tensor split across textures
         * (engine/split.h), read part by part now */
        r->host = malloc((size_t)texels * 16u);
        if (!r->host)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", fn);
        st = s->st->n_parts ? tx_storage_read(ctx, fn, s->st, r->host, s->numel) : TX_STATUS_OK;
        if (st) {
            free(r->host);
            r->host = NULL;
            return st;
        }
        if (!s->st->n_parts)
            memcpy(r->host, s->st->host, (size_t)s->numel * sizeof(float));
    } else if ((st = tx_gpu_flatten(ctx, fn, s->st))) {
        return st;
    } else if (!tx_gl_read_begin(&ctx->gl, s->st->tex.gl, s->st->tex.w, texels, &r->buf,
                                 &r->sync)) {
        return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, fn, "starting the pixel-pack copy");
    } else {
        ctx->work_key = 0; /* later draws are the next read's work */
    }
    r->used = true;
    r->epoch = ctx->gl.error_epoch;
    r->texels = texels;
    r->numel = s->numel;
    r->dtype = s->dtype;
    *out = (tx_readback){((uint32_t)r->gen << 16) | (uint32_t)(idx + 1)};
    return TX_STATUS_OK;
}

tx_status tx_readback_poll(tx_ctx *ctx, tx_readback h, bool *ready) {
    tx_status st = tx_check_arg(ctx, "tx_readback_poll", "ready", ready != NULL);
    if (st)
        return st;
    *ready = false;
    readback *r;
    st = readback_check(ctx, "tx_readback_poll", h, &r);
    if (st)
        return st;
    *ready = r->host || tx_gl_read_ready(&ctx->gl, r->sync);
    return TX_STATUS_OK;
}

tx_status tx_readback_info(tx_ctx *ctx, tx_readback h, int64_t *numel, tx_dtype *dtype) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    readback *r = readback_get(ctx, h);
    if (!r)
        return readback_check(ctx, "tx_readback_info", h, &r);
    if (numel)
        *numel = r->numel;
    if (dtype)
        *dtype = r->dtype;
    return TX_STATUS_OK;
}

/* Ends read h: its values into dst, or (copy set: float32 only) handed to
 * copy with the pixel-pack buffer bound or, for host values, a pointer. */
static tx_status finish(tx_ctx *ctx, tx_readback h, void *dst, size_t bytes,
                        const tx_read_copy *copy) {
    const char *fn = "tx_readback_finish";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    readback *r;
    tx_status st = readback_check(ctx, fn, h, &r);
    if (st)
        return st;
    size_t need = (size_t)r->numel * 4u;
    if (copy ? r->dtype != TX_DTYPE_FLOAT32 : !dst || bytes < need) {
        st = copy ? tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                            "%s: only float32 values are handed over as they are; finish an "
                            "int32 read into memory",
                            fn)
                  : tx_fail(ctx, !dst ? TX_STATUS_INVALID_ARGUMENT : TX_STATUS_SHAPE_MISMATCH,
                            "%s: %s (the tensor needs %zu bytes, %zu given)", fn,
                            !dst ? "dst is NULL" : "dst is too small", need, bytes);
        readback_free(ctx, r);
        return st;
    }
    if (r->host) {
        bool ok = true;
        if (copy)
            ok = copy->host(copy->user, r->host, need);
        else
            tx_texels_to_values(r->dtype, r->host, r->numel, dst);
        readback_free(ctx, r);
        return ok ? TX_STATUS_OK : tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    /* float32 values go straight to the caller; int32 are converted from a
     * copy of the texels */
    float *buf = r->dtype == TX_DTYPE_FLOAT32 ? dst : malloc((size_t)r->texels * 16u);
    if (!buf && !copy) {
        readback_free(ctx, r);
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
    /* As in tx_tensor_read: values reach the caller here, so ask the driver
     * whether the context survived even when the copy reported no error. */
    bool ok = tx_gl_read_end(&ctx->gl, r->buf,
                             r->dtype == TX_DTYPE_FLOAT32 ? need : (size_t)r->texels * 16u, buf,
                             copy ? copy->bound : NULL, copy ? copy->user : NULL) &&
              !tx_gl_context_lost(&ctx->gl);
    /* Deferred errors: the start of this read asked nothing, so an error
     * another check reported meanwhile may have been its own (a pixel-pack
     * buffer the driver could not allocate, say) */
    bool others = ok && ctx->gl.defer_errors && ctx->gl.error_epoch != r->epoch;
    ok &= !others;
    if (ok) {
        if (buf != dst)
            tx_texels_to_values(r->dtype, buf, r->numel, dst);
        ctx->stats.bytes_downloaded += (uint64_t)r->texels * 16u;
    }
    if (buf != dst)
        free(buf);
    readback_free(ctx, r);
    if (ok)
        return TX_STATUS_OK;
    if (others)
        return tx_fail(ctx, TX_STATUS_GL_ERROR,
                       "%s: a GL error reported while this read was pending (deferred GL error "
                       "checks) may have been its own: its values are not handed over",
                       fn);
    return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, fn, "reading the pixel-pack buffer");
}

tx_status tx_readback_finish(tx_ctx *ctx, tx_readback h, void *dst, size_t bytes) {
    return finish(ctx, h, dst, bytes, NULL);
}

tx_status tx_readback_finish_with(tx_ctx *ctx, tx_readback h, const tx_read_copy *copy) {
    if (!copy || !copy->bound || !copy->host)
        return ctx ? tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_readback_finish: no copy given")
                   : TX_STATUS_INVALID_ARGUMENT;
    return finish(ctx, h, NULL, 0, copy);
}

tx_status tx_readback_cancel(tx_ctx *ctx, tx_readback h) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    readback *r = readback_get(ctx, h);
    if (!r)
        return tx_fail(ctx, TX_STATUS_STALE_HANDLE,
                       "tx_readback_cancel: readback 0x%08x is not pending", h.id);
    readback_free(ctx, r);
    return TX_STATUS_OK;
}

void tx_readbacks_drop(tx_ctx *ctx, bool release) {
    struct tx_readbacks *rs = ctx->reads;
    if (!rs)
        return;
    for (int i = 0; i < rs->n; i++) /* a loss keeps CPU reads (host copies) */
        if (rs->r[i].used && (release || !rs->r[i].host))
            readback_free(ctx, &rs->r[i]);
    if (release) {
        free(rs->r);
        free(rs);
        ctx->reads = NULL;
    }
}
