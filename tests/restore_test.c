/* Asynchronous reads (pixel-pack buffer + fence) and context loss/restore:
 * the same source runs natively and, compiled with emscripten, in the browser
 * (where web/test/ also loses the context for real with WEBGL_lose_context). */
#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "tensors.h"

static tx_tensor vec(tx_ctx *ctx, int n, const float *v) {
    tx_tensor t = {0};
    if (tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {n}, .data = v}, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}

/* Polls a few times, then collects (which stalls if needed): natively the
 * fence signals once the GPU is done; under WebGL only between event-loop
 * tasks, which a C main() never yields to (web/test/api.js polls for real). */
static tx_status read_async(tx_ctx *ctx, tx_tensor t, void *dst, size_t bytes, int *polls) {
    tx_readback r;
    tx_status s = tx_tensor_read_async(ctx, t, &r);
    if (s)
        return s;
    bool ready = false;
    *polls = 0;
    while (!ready && *polls < 16) {
        s = tx_readback_poll(ctx, r, &ready);
        if (s)
            return s;
        ++*polls;
        if (*polls > 8)
            tx_ctx_finish(ctx);
    }
    return tx_readback_finish(ctx, r, dst, bytes);
}

static int hook_calls;
static void on_restore(tx_ctx *ctx, void *user) {
    (void)ctx;
    hook_calls += *(int *)user;
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_host *h;
    tx_ctx *ctx = tx_test_open_ctx((tx_ctx_desc){0}, &h);

    if (tx_test_begin("async read equals blocking read (float, int, odd sizes)")) {
        for (int n = 1; n <= 4099; n = n * 3 + 2) {
            float *v = malloc((size_t)n * 4), *a = malloc((size_t)n * 4),
                  *b = malloc((size_t)n * 4);
            for (int i = 0; i < n; i++)
                v[i] = (float)i * 0.5f - 7.0f;
            tx_tensor x = vec(ctx, n, v), y;
            CHECK(!tx_unary(ctx, TX_OP_NEG, x, &y), "%s", tx_last_error(ctx));
            int polls = 0;
            CHECK(!read_async(ctx, y, a, (size_t)n * 4, &polls), "n=%d: %s", n, tx_last_error(ctx));
            CHECK(!tx_tensor_read(ctx, y, b, (size_t)n * 4), "%s", tx_last_error(ctx));
            for (int i = 0; i < n; i++)
                CHECK(a[i] == -v[i] && b[i] == a[i], "n=%d elem %d: async %g blocking %g", n, i,
                      (double)a[i], (double)b[i]);
            TX_DESTROY(ctx, x, y);
            free(v);
            free(a);
            free(b);
        }
        int32_t iv[5] = {-3, 0, 7, 16777216, -16777216}, got[5];
        tx_tensor it;
        CHECK(!tx_tensor_create(
                  ctx,
                  &(tx_tensor_desc){.rank = 1, .shape = {5}, .dtype = TX_DTYPE_INT32, .data = iv},
                  &it),
              "int create");
        int polls;
        CHECK(!read_async(ctx, it, got, sizeof got, &polls), "%s", tx_last_error(ctx));
        CHECK(memcmp(got, iv, sizeof iv) == 0, "int32 values differ");
        tx_tensor_destroy(ctx, it);
        tx_test_end();
    }
    if (tx_test_begin("the work key: draws since the last read, cleared by reads, not by writes")) {
        /* texel.js keys its blocking-read choice on it (tx_ctx.work_key) */
        float v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8];
        tx_tensor x = vec(ctx, 8, v), y, z;
        CHECK(!tx_tensor_read(ctx, x, got, sizeof got) && ctx->work_key == 0, "a read left %llx",
              (unsigned long long)ctx->work_key);
        CHECK(!tx_unary(ctx, TX_OP_NEG, x, &y), "%s", tx_last_error(ctx));
        uint64_t one = ctx->work_key;
        CHECK(!tx_tensor_write(ctx, x, v, sizeof v) && ctx->work_key == one,
              "a write changed the key");
        CHECK(!tx_unary(ctx, TX_OP_NEG, y, &z) && ctx->work_key != one && ctx->work_key != 0,
              "a second draw left the key %llx", (unsigned long long)ctx->work_key);
        CHECK(!tx_tensor_read(ctx, z, got, sizeof got) && ctx->work_key == 0,
              "a blocking read left %llx", (unsigned long long)ctx->work_key);
        tx_tensor_destroy(ctx, z);
        CHECK(!tx_unary(ctx, TX_OP_NEG, y, &z) && ctx->work_key == one,
              "the same draw after a read gave another key");
        int polls;
        CHECK(!read_async(ctx, z, got, sizeof got, &polls) && ctx->work_key == 0,
              "an async read left %llx", (unsigned long long)ctx->work_key);
        TX_DESTROY(ctx, x, y, z);
        tx_test_end();
    }
    if (tx_test_begin("async read is a snapshot; handles are single-use")) {
        float v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8] = {0}, got[8];
        tx_tensor x = vec(ctx, 8, v);
        tx_readback r, r2;
        CHECK(!tx_tensor_read_async(ctx, x, &r), "%s", tx_last_error(ctx));
        CHECK(!tx_tensor_write(ctx, x, w, sizeof w), "%s", tx_last_error(ctx));
        tx_tensor_destroy(ctx, x);
        int64_t numel = 0;
        CHECK(!tx_readback_info(ctx, r, &numel, NULL) && numel == 8, "info %lld", (long long)numel);
        CHECK(!tx_readback_finish(ctx, r, got, sizeof got), "%s", tx_last_error(ctx));
        CHECK(memcmp(got, v, sizeof v) == 0, "the read saw a later write");
        bool ready;
        CHECK(tx_readback_poll(ctx, r, &ready) == TX_STATUS_STALE_HANDLE, "finished handle polled");
        CHECK(strstr(tx_last_error(ctx), "not pending") != NULL, "%s", tx_last_error(ctx));
        x = vec(ctx, 8, v);
        CHECK(!tx_tensor_read_async(ctx, x, &r2) && !tx_readback_cancel(ctx, r2), "cancel");
        CHECK(tx_readback_finish(ctx, r2, got, sizeof got) == TX_STATUS_STALE_HANDLE,
              "cancelled handle finished");
        CHECK(!tx_tensor_read_async(ctx, x, &r2), "%s", tx_last_error(ctx));
        CHECK(tx_readback_finish(ctx, r2, got, 4) == TX_STATUS_SHAPE_MISMATCH,
              "short dst accepted");
        CHECK(tx_gl_error() == 0, "GL error escaped");
        tx_tensor_destroy(ctx, x);
        tx_test_end();
    }
    if (tx_test_begin("context loss: old tensors report it, restore rebuilds, hooks run")) {
        float v[6] = {1, -2, 3, -4, 5, -6}, got[6];
        tx_tensor a = vec(ctx, 6, v), b = vec(ctx, 6, v), y;
        tx_readback pending;
        CHECK(!tx_tensor_read_async(ctx, a, &pending), "%s", tx_last_error(ctx));
        int one = 1;
        CHECK(!tx_ctx_add_restore_hook(ctx, on_restore, &one), "%s", tx_last_error(ctx));
        CHECK(tx_ctx_add_restore_hook(ctx, on_restore, &one) == TX_STATUS_INVALID_ARGUMENT,
              "duplicate hook");
        CHECK(tx_ctx_restore(ctx) == TX_STATUS_INVALID_ARGUMENT, "restore of a live context");
        tx_ctx_mark_lost(ctx);
        CHECK(tx_ctx_is_lost(ctx), "not lost");
        tx_stats s;
        tx_ctx_stats(ctx, &s);
        CHECK(s.live_texture_bytes == 0 && s.pooled_texture_bytes == 0,
              "%llu live, %llu pooled bytes after loss", (unsigned long long)s.live_texture_bytes,
              (unsigned long long)s.pooled_texture_bytes);
        bool ready;
        CHECK(tx_readback_poll(ctx, pending, &ready) == TX_STATUS_CONTEXT_LOST,
              "pending read survived");
        CHECK(tx_binary(ctx, TX_OP_ADD, a, b, &y) == TX_STATUS_CONTEXT_LOST,
              "op on a lost context");
        tx_tensor c;
        CHECK(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {2}}, &c) ==
                  TX_STATUS_CONTEXT_LOST,
              "create");
        int gen0 = tx_ctx_generation(ctx);
        CHECK(tx_ctx_restore(ctx) == TX_STATUS_OK, "%s", tx_last_error(ctx));
        CHECK(hook_calls == 1 && !tx_ctx_is_lost(ctx) && tx_ctx_generation(ctx) == gen0, "hooks %d",
              hook_calls);
        CHECK(tx_binary(ctx, TX_OP_ADD, a, b, &y) == TX_STATUS_CONTEXT_LOST,
              "old tensor used after restore");
        CHECK(strstr(tx_last_error(ctx), "before the GL context was lost") != NULL, "%s",
              tx_last_error(ctx));
        CHECK(tx_tensor_read(ctx, a, got, sizeof got) == TX_STATUS_CONTEXT_LOST, "old tensor read");
        CHECK(tx_readback_poll(ctx, pending, &ready) == TX_STATUS_STALE_HANDLE,
              "pending read after restore");
        CHECK(!tx_tensor_destroy(ctx, a) && !tx_tensor_destroy(ctx, b), "destroying old tensors");
        tx_tensor a2 = vec(ctx, 6, v), b2 = vec(ctx, 6, v);
        CHECK(!tx_binary(ctx, TX_OP_MUL, a2, b2, &y), "%s", tx_last_error(ctx));
        CHECK(!tx_tensor_read(ctx, y, got, sizeof got), "%s", tx_last_error(ctx));
        for (int i = 0; i < 6; i++)
            CHECK(got[i] == v[i] * v[i], "elem %d = %g", i, (double)got[i]);
        TX_DESTROY(ctx, a2, b2, y);
        tx_ctx_stats(ctx, &s);
        CHECK(s.live_tensors == 0 && s.live_texture_bytes == 0, "%llu tensors, %llu bytes live",
              (unsigned long long)s.live_tensors, (unsigned long long)s.live_texture_bytes);
        CHECK(!tx_ctx_remove_restore_hook(ctx, on_restore, &one), "remove hook");
        CHECK(tx_ctx_remove_restore_hook(ctx, on_restore, &one) == TX_STATUS_INVALID_ARGUMENT,
              "removed twice");
        CHECK(tx_gl_error() == 0, "GL error escaped");
        tx_test_end();
    }
    tx_host_close(h, ctx);
    return tx_test_finish();
}
