/* The CPU device: tensors in 64-byte-aligned host memory (within the
 * context's memory budget, counted apart from textures), kernels in C with
 * SIMD and threads (engine/cpu/<family>.c). */
#include <string.h>

#include "cpu.h"

static void drop_derived(tx_ctx *ctx, tx_storage *st) {
    free(st->host_packed);
    st->host_packed = NULL;
    ctx->stats.live_host_bytes -= st->host_packed_bytes;
    st->host_packed_bytes = 0;
    st->packed_key = 0;
}

/* Frees every kept derived copy (tx_cpu_derived): they are a cache, and a
 * tensor's memory comes first. No kernel holds one while tensors are made. */
static void drop_all_derived(tx_ctx *ctx) {
    for (int i = 0; i < ctx->n_slots; i++) {
        tx_slot *s = tx_slot_at(ctx, i);
        if (s->live && s->st && s->st->host_packed)
            drop_derived(ctx, s->st);
    }
}

static tx_status cpu_alloc(tx_ctx *ctx, const char *op, int64_t numel, tx_storage *st) {
    /* At least one vector, rounded up to whole vectors so kernels may load
     * a full one at the end. */
    size_t bytes = ((size_t)(numel > 0 ? numel : 1) * sizeof(float) + 63u) & ~(size_t)63u;
    if (ctx->stats.live_host_bytes + bytes > ctx->budget)
        drop_all_derived(ctx);
    if (ctx->stats.live_host_bytes + bytes > ctx->budget)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                       "%s: %zu bytes of host memory would exceed the memory budget of %zu "
                       "bytes (%llu live on the CPU)",
                       op, bytes, ctx->budget, (unsigned long long)ctx->stats.live_host_bytes);
    st->host = aligned_alloc(64, bytes);
    if (!st->host) {
        drop_all_derived(ctx);
        st->host = aligned_alloc(64, bytes);
    }
    if (!st->host)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory (%zu bytes)", op,
                       bytes);
    st->host_bytes = bytes;
    ctx->stats.live_host_bytes += bytes;
    if (ctx->stats.live_host_bytes > ctx->stats.peak_host_bytes)
        ctx->stats.peak_host_bytes = ctx->stats.live_host_bytes;
    return TX_STATUS_OK;
}

static void cpu_release(tx_ctx *ctx, tx_storage *st) {
    drop_derived(ctx, st);
    free(st->host);
    st->host = NULL;
    ctx->stats.live_host_bytes -= st->host_bytes;
    st->host_bytes = 0;
}

float *tx_cpu_derived(tx_ctx *ctx, tx_storage *st, uint64_t key, int64_t n, bool *valid) {
    *valid = false;
    if (st->refs <= 0 || st->dev != TX_DEVICE_CPU || n <= 0)
        return NULL;
    if (st->host_packed && st->packed_key == key && st->packed_version == st->version) {
        *valid = true;
        return st->host_packed;
    }
    size_t bytes = ((size_t)n * sizeof(float) + 63u) & ~(size_t)63u;
    if (st->host_packed_bytes != bytes) {
        drop_derived(ctx, st);
        if (ctx->stats.live_host_bytes + bytes > ctx->budget)
            return NULL;
        st->host_packed = aligned_alloc(64, bytes);
        if (!st->host_packed)
            return NULL;
        st->host_packed_bytes = bytes;
        ctx->stats.live_host_bytes += bytes;
        if (ctx->stats.live_host_bytes > ctx->stats.peak_host_bytes)
            ctx->stats.peak_host_bytes = ctx->stats.live_host_bytes;
    }
    st->packed_key = key;
    st->packed_version = st->version;
    return st->host_packed;
}

static tx_status cpu_write(tx_ctx *ctx, const char *op, tx_storage *st, const void *vals, bool half,
                           int64_t numel) {
    (void)ctx;
    (void)op;
    st->version++; /* what was derived from the old values is stale */
    if (vals && half)
        tx_halves_to_floats(vals, st->host, numel);
    else if (vals)
        memcpy(st->host, vals, (size_t)numel * sizeof(float));
    else
        memset(st->host, 0, st->host_bytes);
    return TX_STATUS_OK;
}

static tx_status cpu_read(tx_ctx *ctx, const char *op, const tx_storage *st, float *vals,
                          int64_t numel) {
    (void)ctx;
    (void)op;
    memcpy(vals, st->host, (size_t)numel * sizeof(float));
    return TX_STATUS_OK;
}

/* The context's pool, made on first use with ctx->cpu_threads threads
 * (0: one per core). A pool that cannot be made (out of memory) leaves the
 * kernels serial: tx_parallel_for on NULL runs inline. */
static tx_threadpool *cpu_pool(tx_ctx *ctx) {
    if (!ctx->cpu_pool && ctx->cpu_threads != 1)
        ctx->cpu_pool = tx_threadpool_create(ctx->cpu_threads);
    return ctx->cpu_pool;
}

void tx_cpu_for(tx_ctx *ctx, int64_t n, int64_t grain, tx_cpu_range_fn fn, void *arg) {
    if (n > 0)
        tx_parallel_for(cpu_pool(ctx), n, grain, fn, arg);
}

int tx_cpu_threads(tx_ctx *ctx) {
    return tx_threadpool_size(cpu_pool(ctx));
}

tx_threadpool *tx_cpu_pool_of(tx_ctx *ctx) {
    return cpu_pool(ctx);
}

void tx_cpu_shutdown(tx_ctx *ctx) {
    tx_threadpool_destroy(ctx->cpu_pool);
    ctx->cpu_pool = NULL;
}

/* Every kernel counts as one CPU op. */
#define COUNTED(fam)                                                                               \
    static tx_status counted_##fam(tx_ctx *ctx, const tx_##fam##_call *c) {                        \
        ctx->stats.cpu_ops++;                                                                      \
        return tx_cpu_##fam(ctx, c);                                                               \
    }
COUNTED(unary)
COUNTED(binary)
COUNTED(reduce)
COUNTED(softmax)
COUNTED(norm)
COUNTED(matmul)
COUNTED(conv)
COUNTED(pool)
COUNTED(nary)
COUNTED(move)
COUNTED(resize)
COUNTED(optim)

const tx_device_i tx_cpu_device = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .write = cpu_write,
    .read = cpu_read,
    .unary = counted_unary,
    .binary = counted_binary,
    .reduce = counted_reduce,
    .softmax = counted_softmax,
    .norm = counted_norm,
    .matmul = counted_matmul,
    .conv = counted_conv,
    .pool = counted_pool,
    .nary = counted_nary,
    .optim = counted_optim,
    .move = counted_move,
    .resize = counted_resize,
};
