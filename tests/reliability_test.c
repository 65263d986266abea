/* Reliability under pressure and driver failure: the texture pool stays
 * bounded under random shapes, the memory budget holds without losing live
 * tensors, injected GL errors and failed links become statuses naming the op,
 * and a (simulated) lost context fails every call until tx_ctx_restore. The
 * faults are the engine's test hooks (internal.h), which make the driver fail
 * for real (an invalid GL call) where they can. */
#include <math.h>
#include <unistd.h>

#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "tensors.h"

static tx_host *g_host;

static tx_ctx *open_ctx(tx_ctx_desc d) {
    return tx_test_open_ctx(d, &g_host);
}

static tx_stats stats(const tx_ctx *ctx) {
    tx_stats s;
    tx_ctx_stats(ctx, &s);
    return s;
}

static tx_tensor mk(tx_ctx *ctx, int rank, const int64_t *shape, const float *data) {
    return tx_test_tensor(ctx, rank, shape, TX_DTYPE_FLOAT32, data);
}

static tx_tensor mk1(tx_ctx *ctx, int64_t n, const float *data) {
    return mk(ctx, 1, (int64_t[]){n}, data);
}

static bool read_eq(tx_ctx *ctx, tx_tensor t, const float *want, int n) {
    float got[64];
    if (n > 64 || tx_tensor_read(ctx, t, got, (size_t)n * sizeof(float)))
        return false;
    return memcmp(got, want, (size_t)n * sizeof(float)) == 0;
}

/* Captures what the engine writes to stderr between begin and end. */
static int g_saved_fd = -1;
static FILE *g_capture;
static void capture_begin(void) {
    fflush(stderr);
    g_capture = tmpfile();
    g_saved_fd = dup(2);
    dup2(fileno(g_capture), 2);
}
static char *capture_end(void) {
    fflush(stderr);
    dup2(g_saved_fd, 2);
    close(g_saved_fd);
    long n = ftell(g_capture);
    char *buf = calloc((size_t)(n > 0 ? n : 0) + 1, 1);
    rewind(g_capture);
    if (n > 0 && fread(buf, 1, (size_t)n, g_capture) != (size_t)n)
        buf[0] = 0;
    fclose(g_capture);
    return buf;
}

static uint64_t g_rng = 12345;
static uint32_t rnd(uint32_t n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 33) % n;
}

static void test_pool_random_shapes(void) {
    if (!tx_test_begin("pool: 10,000 calls with random shapes stay bounded"))
        return;
    const size_t budget = 64u << 20, limit = 4u << 20;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){
        .memory_budget = budget, .pool_limit = limit, .specialize_after = TX_SPECIALIZE_NEVER});
    uint64_t max_pooled = 0, max_textures = 0, max_live = 0, max_first_half = 0;
    int failures = 0;
    for (int i = 0; i < 10000 && failures < 3; i++) {
        int rank = 1 + (int)rnd(3);
        int64_t shape[3];
        for (int d = 0; d < rank; d++)
            shape[d] = 1 + rnd(d == rank - 1 ? 97 : 13);
        tx_tensor a = mk(ctx, rank, shape, NULL), b = {0}, y = {0};
        tx_status s;
        switch (rnd(3)) {
        case 0: s = tx_unary(ctx, TX_OP_RELU, a, &y); break;
        case 1:
            b = mk(ctx, 1, &shape[rank - 1], NULL);
            s = tx_binary(ctx, TX_OP_ADD, a, b, &y);
            break;
        default:
            b = mk(ctx, 2, (int64_t[]){shape[rank - 1], 1 + rnd(9)}, NULL);
            s = tx_matmul(ctx, a, b, NULL, &y);
            break;
        }
        if (s) {
            CHECK(0, "call %d: %s", i, tx_last_error(ctx));
            failures++;
        }
        tx_stats st = stats(ctx);
        if (st.live_texture_bytes > max_live)
            max_live = st.live_texture_bytes;
        tx_tensor_destroy(ctx, a);
        if (b.id)
            tx_tensor_destroy(ctx, b);
        if (y.id)
            tx_tensor_destroy(ctx, y);
        st = stats(ctx);
        if (st.pooled_texture_bytes > max_pooled)
            max_pooled = st.pooled_texture_bytes;
        if (st.pooled_textures > max_textures)
            max_textures = st.pooled_textures;
        if (i == 4999)
            max_first_half = max_textures;
        CHECK(st.pooled_texture_bytes <= limit, "call %d: %llu pooled bytes over the limit", i,
              (unsigned long long)st.pooled_texture_bytes);
        if (i % 1000 == 999)
            tx_ctx_finish(ctx); /* keep the driver's queue short */
    }
    tx_stats st = stats(ctx);
    printf("  pool after 10,000 random calls: %llu textures / %llu bytes pooled (max %llu / "
           "%llu), peak live %llu, peak live+pooled %llu, %llu evicted\n",
           (unsigned long long)st.pooled_textures, (unsigned long long)st.pooled_texture_bytes,
           (unsigned long long)max_textures, (unsigned long long)max_pooled,
           (unsigned long long)max_live, (unsigned long long)st.peak_texture_bytes,
           (unsigned long long)st.textures_evicted);
    CHECK(st.live_tensors == 0 && st.live_texture_bytes == 0, "%llu tensors / %llu bytes leaked",
          (unsigned long long)st.live_tensors, (unsigned long long)st.live_texture_bytes);
    CHECK(st.peak_texture_bytes <= max_live + limit, "peak %llu > peak live %llu + limit",
          (unsigned long long)st.peak_texture_bytes, (unsigned long long)max_live);
    /* Shapes up to 13×13×97 fall in ~26 size classes, a call frees up to 7
     * textures of one class: the pool levels off early and does not grow in
     * the second half of the run. */
    CHECK(max_textures <= max_first_half, "pool grew in the second half: %llu > %llu textures",
          (unsigned long long)max_textures, (unsigned long long)max_first_half);
    CHECK(max_textures <= 26 * 7, "up to %llu textures pooled", (unsigned long long)max_textures);
    CHECK(st.textures_evicted > 0, "nothing was ever evicted");
    tx_host_close(g_host, ctx);
    tx_test_end();
}

static void test_pool_age_and_limit(void) {
    if (!tx_test_begin("pool: unused classes age out; pool_limit caps free bytes"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){.pool_limit = 64u << 10});
    /* 40,000 elements = 10,000 texels: one 160 KiB texture, over the 64 KiB
     * limit, so it is not even kept. */
    tx_tensor big = mk1(ctx, 40000, NULL);
    tx_tensor_destroy(ctx, big);
    tx_stats s = stats(ctx);
    CHECK(s.pooled_textures == 0 && s.pooled_texture_bytes == 0,
          "a texture over pool_limit was pooled (%llu bytes)",
          (unsigned long long)s.pooled_texture_bytes);
    /* Ten 16 KiB textures freed: only four fit under 64 KiB. */
    tx_tensor t[10];
    for (int i = 0; i < 10; i++)
        t[i] = mk1(ctx, 4096, NULL);
    for (int i = 0; i < 10; i++)
        tx_tensor_destroy(ctx, t[i]);
    s = stats(ctx);
    CHECK(s.pooled_textures == 4 && s.pooled_texture_bytes == 4 * 16384,
          "%llu textures, %llu bytes pooled", (unsigned long long)s.pooled_textures,
          (unsigned long long)s.pooled_texture_bytes);
    /* Then only tiny tensors: the 16 KiB class is not asked for again and
     * must leave within 1024 allocations. */
    for (int i = 0; i < 1100; i++) {
        tx_tensor x = mk1(ctx, 4, NULL);
        tx_tensor_destroy(ctx, x);
    }
    s = stats(ctx);
    CHECK(s.pooled_textures == 1 && s.pooled_texture_bytes == 16,
          "after aging: %llu textures, %llu bytes pooled", (unsigned long long)s.pooled_textures,
          (unsigned long long)s.pooled_texture_bytes);
    CHECK(s.textures_evicted >= 4 + 6, "%llu evicted", (unsigned long long)s.textures_evicted);
    tx_ctx_trim(ctx);
    s = stats(ctx);
    CHECK(s.pooled_textures == 0 && s.pooled_texture_bytes == 0, "trim left %llu textures",
          (unsigned long long)s.pooled_textures);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

static void test_oom_inside_op(void) {
    if (!tx_test_begin("budget: out of memory inside matmul loses nothing live"))
        return;
    /* a, b and the output are 16 KiB textures each; the 4 row-phase tiles
     * need 4 KiB each: 56 KiB admits the output and two tiles only. Generic
     * programs only: an adaptive context's first calls of a small matmul run
     * 1-row tiles, which need no tile textures. */
    tx_ctx *ctx = open_ctx(
        (tx_ctx_desc){.memory_budget = 56u << 10, .specialize_after = TX_SPECIALIZE_NEVER});
    float *va = malloc(4096 * sizeof(float)), *vb = malloc(4096 * sizeof(float));
    for (int i = 0; i < 4096; i++) {
        va[i] = (float)(i % 7);
        vb[i] = (i / 64 == i % 64) ? 1.0f : 0.0f; /* identity */
    }
    tx_tensor a = mk(ctx, 2, (int64_t[]){64, 64}, va), b = mk(ctx, 2, (int64_t[]){64, 64}, vb);
    tx_stats s0 = stats(ctx);
    tx_tensor y = {0};
    tx_status st = tx_matmul(ctx, a, b, NULL, &y);
    CHECK(st == TX_STATUS_OUT_OF_MEMORY, "got %s: %s", tx_status_name(st), tx_last_error(ctx));
    CHECK(strstr(tx_last_error(ctx), "matmul") && strstr(tx_last_error(ctx), "budget"), "%s",
          tx_last_error(ctx));
    CHECK(y.id == 0, "output handle written on failure");
    tx_stats s1 = stats(ctx);
    CHECK(s1.live_tensors == s0.live_tensors && s1.live_texture_bytes == s0.live_texture_bytes,
          "live %llu tensors / %llu bytes, before %llu / %llu", (unsigned long long)s1.live_tensors,
          (unsigned long long)s1.live_texture_bytes, (unsigned long long)s0.live_tensors,
          (unsigned long long)s0.live_texture_bytes);
    CHECK(s1.live_texture_bytes + s1.pooled_texture_bytes <= (56u << 10), "over budget");
    float *back = malloc(4096 * sizeof(float));
    CHECK(!tx_tensor_read(ctx, a, back, 4096 * sizeof(float)) &&
              memcmp(back, va, 4096 * sizeof(float)) == 0,
          "input a changed");
    /* Free b's budget share by using a [64, 4] right side: no tiles needed
     * beyond what fits, and the context still computes. */
    tx_tensor b2 = mk(ctx, 2, (int64_t[]){64, 4}, vb);
    tx_tensor_destroy(ctx, b);
    CHECK(!tx_matmul(ctx, a, b2, NULL, &y), "after OOM: %s", tx_last_error(ctx));
    if (y.id) {
        /* y = a × b2: b2 rows are the identity's first 4 columns' rows. */
        float *got = malloc(256 * sizeof(float));
        CHECK(!tx_tensor_read(ctx, y, got, 256 * sizeof(float)), "read");
        bool ok = true;
        for (int m = 0; m < 64 && ok; m++)
            for (int n = 0; n < 4; n++) {
                double w = 0;
                for (int k = 0; k < 64; k++)
                    w += (double)va[m * 64 + k] * vb[k * 4 + n];
                ok = ok && got[m * 4 + n] == (float)w;
            }
        CHECK(ok, "matmul after OOM is wrong");
        free(got);
        tx_tensor_destroy(ctx, y);
    }
    TX_DESTROY(ctx, b2, a);
    free(va);
    free(vb);
    free(back);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

static void test_driver_refuses_texture(void) {
    if (!tx_test_begin("driver refuses a texture: out of memory, context usable"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){0});
    float v[4] = {1, -2, 3, -4};
    tx_tensor keep = mk1(ctx, 4, v);
    tx_stats s0 = stats(ctx);
    tx_tensor t = {0};
    ctx->fault_tex_create = 2; /* the first try and the retry after trimming */
    tx_status st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {100, 100}}, &t);
    CHECK(st == TX_STATUS_OUT_OF_MEMORY, "got %s", tx_status_name(st));
    CHECK(strstr(tx_last_error(ctx), "tx_tensor_create") &&
              strstr(tx_last_error(ctx), "RGBA32F texture ("),
          "%s", tx_last_error(ctx));
    tx_stats s1 = stats(ctx);
    CHECK(s1.live_tensors == s0.live_tensors && s1.live_texture_bytes == s0.live_texture_bytes,
          "live state changed");
    CHECK(read_eq(ctx, keep, v, 4), "live tensor changed");
    ctx->fault_tex_create = 1; /* the retry after trimming the pool succeeds */
    CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {100, 100}}, &t), "%s",
          tx_last_error(ctx));
    TX_DESTROY(ctx, t, keep);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

static void test_gl_error_after_draw(void) {
    if (!tx_test_begin("GL error after a draw: status names the op, nothing leaks"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){0});
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (float)(i - 8);
    tx_tensor x = mk1(ctx, 16, v), m = mk(ctx, 2, (int64_t[]){16, 16}, NULL);
    tx_tensor eye = mk(ctx, 2, (int64_t[]){16, 16}, NULL);
    {
        float id[256] = {0};
        for (int i = 0; i < 16; i++)
            id[i * 17] = 1;
        tx_tensor_write(ctx, eye, id, sizeof id);
        tx_tensor_write(ctx, m, id, sizeof id);
    }
    const char *names[4] = {"relu", "clip", "add", "matmul"};
    for (int op = 0; op < 4; op++) {
        for (int round = 0; round < 2; round++) {
            bool fault = round == 0;
            ctx->fault_draw_error = fault;
            tx_stats s0 = stats(ctx);
            tx_tensor y = {0};
            tx_status st;
            switch (op) {
            case 0: st = tx_unary(ctx, TX_OP_RELU, x, &y); break;
            case 1: st = tx_clip(ctx, x, -1, 1, &y); break;
            case 2: st = tx_binary(ctx, TX_OP_ADD, x, x, &y); break;
            default: st = tx_matmul(ctx, m, eye, NULL, &y); break;
            }
            if (fault) {
                CHECK(st == TX_STATUS_GL_ERROR, "%s: got %s", names[op], tx_status_name(st));
                CHECK(strstr(tx_last_error(ctx), names[op]) &&
                          strstr(tx_last_error(ctx), "GL_INVALID_VALUE"),
                      "%s", tx_last_error(ctx));
                tx_stats s1 = stats(ctx);
                CHECK(s1.live_tensors == s0.live_tensors &&
                          s1.live_texture_bytes == s0.live_texture_bytes,
                      "%s: the failed output leaked", names[op]);
                CHECK(tx_gl_error() == 0, "a GL error escaped");
                continue;
            }
            CHECK(st == TX_STATUS_OK, "%s after the error: %s", names[op], tx_last_error(ctx));
            float got[256];
            int n = op == 3 ? 256 : 16;
            CHECK(!tx_tensor_read(ctx, y, got, (size_t)n * sizeof(float)), "read");
            for (int i = 0; i < 16; i++) {
                float w = op == 0   ? (v[i] < 0 ? 0 : v[i])
                          : op == 1 ? fminf(fmaxf(v[i], -1), 1)
                          : op == 2 ? 2 * v[i]
                                    : (i == 0 ? 1.0f : 0.0f);
                CHECK(got[i] == w, "%s elem %d = %g, want %g", names[op], i, (double)got[i],
                      (double)w);
            }
            tx_tensor_destroy(ctx, y);
        }
    }
    TX_DESTROY(ctx, x, m, eye);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

/* WebGL's mode (web/texel_web.c): draws, texture creation and the start of
 * an async read skip glGetError, a round trip to the GPU process each. An
 * error they leave must fail the next read, blocking or async, never hand
 * its values over, and an error queued before a texture is created must not
 * be taken for that texture's refusal. */
static void test_deferred_errors(void) {
    if (!tx_test_begin("deferred GL errors fail the next read, sync or async"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){0});
    ctx->gl.defer_errors = true;
    float v[8] = {1, -2, 3, -4, 5, -6, 7, -8}, want[8];
    for (int i = 0; i < 8; i++)
        want[i] = v[i] < 0 ? 0 : v[i];
    tx_tensor x = mk1(ctx, 8, v);
    for (int async = 0; async < 2; async++) {
        tx_tensor y = {0}, z = {0};
        ctx->fault_draw_error = true;
        tx_status st = tx_unary(ctx, TX_OP_RELU, x, &y);
        CHECK(st == TX_STATUS_OK, "deferred: the draw itself reports nothing (%s)",
              tx_status_name(st));
        /* a texture made while the error waits is not refused for it */
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {37, 41}}, &z);
        CHECK(st == TX_STATUS_OK, "create after a deferred error: %s", tx_last_error(ctx));
        float got[8] = {0};
        if (async) {
            tx_readback r;
            st = tx_tensor_read_async(ctx, y, &r);
            CHECK(st == TX_STATUS_OK, "read_async: %s", tx_last_error(ctx));
            bool ready = false;
            for (int i = 0; st == TX_STATUS_OK && !ready && i < 100000; i++)
                st = tx_readback_poll(ctx, r, &ready);
            st = tx_readback_finish(ctx, r, got, sizeof got);
        } else {
            st = tx_tensor_read(ctx, y, got, sizeof got);
        }
        CHECK(st == TX_STATUS_GL_ERROR, "%s read: got %s", async ? "async" : "blocking",
              tx_status_name(st));
        CHECK(strstr(tx_last_error(ctx), "GL_INVALID_VALUE"), "%s", tx_last_error(ctx));
        CHECK(tx_gl_error() == 0, "a GL error escaped");
        /* reported once: the same read again has the values */
        CHECK(read_eq(ctx, y, want, 8), "%s: the read after the error",
              async ? "async" : "blocking");
        TX_DESTROY(ctx, y, z);
    }
    TX_DESTROY(ctx, x);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

/* Deferred checks and textures: one the driver gives no storage (as out of
 * memory leaves it; the test hook passes an invalid size) is refused where
 * it is made, or at the end of a batch (a session's weights), never handed
 * out; an earlier op's error found there is kept for the next read; and an
 * async read pending while another check reports an error fails too. */
static void test_deferred_textures(void) {
    if (!tx_test_begin("deferred GL errors: textures without storage, batches, pending reads"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){0});
    ctx->gl.defer_errors = true;
    float v[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    tx_tensor t = {0};
    /* refused once: the pool's retry gets a working texture */
    ctx->gl.fault_storage = 1;
    tx_status st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &t);
    CHECK(st == TX_STATUS_OK && read_eq(ctx, t, v, 8), "retry: %s", tx_last_error(ctx));
    TX_DESTROY(ctx, t);
    /* refused twice: out of memory, nothing live */
    tx_pool_trim(ctx, 0); /* no pooled texture to hand out instead */
    tx_stats s0 = stats(ctx);
    ctx->gl.fault_storage = 2;
    st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &t);
    CHECK(st == TX_STATUS_OUT_OF_MEMORY, "twice refused: %s", tx_status_name(st));
    CHECK(stats(ctx).live_tensors == s0.live_tensors, "a refused tensor is live");
    CHECK(tx_gl_error() == 0, "a GL error escaped");
    /* a batch: checked once at its end */
    for (int fault = 0; fault < 2; fault++) {
        tx_tensor a = {0}, b = {0};
        tx_pool_trim(ctx, 0);
        tx_gl_batch_begin(&ctx->gl);
        ctx->gl.fault_storage = fault;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &a) &&
                  !tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &b),
              "batch creates: %s", tx_last_error(ctx));
        bool ok = tx_gl_batch_end(&ctx->gl);
        CHECK(ok == !fault, "batch with %d refused: end says %d", fault, ok);
        if (!fault)
            CHECK(read_eq(ctx, a, v, 8) && read_eq(ctx, b, v, 8), "batch values");
        TX_DESTROY(ctx, a, b);
        tx_pool_trim(ctx, 0); /* what a session does after a failed batch */
        CHECK(tx_gl_error() == 0, "a GL error escaped the batch");
    }
    /* an earlier op's error found at a texture's or a batch's check: the
     * texture is fine, the next read reports the error */
    for (int batch = 0; batch < 2; batch++) {
        tx_tensor x = mk1(ctx, 8, v), y = {0}, z = {0};
        ctx->fault_draw_error = true;
        CHECK(!tx_unary(ctx, TX_OP_RELU, x, &y), "deferred draw");
        tx_pool_trim(ctx, 0); /* z's texture is made, not pooled */
        if (batch)
            tx_gl_batch_begin(&ctx->gl);
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &z),
              "create after the error: %s", tx_last_error(ctx));
        if (batch)
            CHECK(tx_gl_batch_end(&ctx->gl), "the batch took the draw's error for its own");
        float got[8];
        CHECK(tx_tensor_read(ctx, y, got, sizeof got) == TX_STATUS_GL_ERROR,
              "batch %d: the draw's error was lost", batch);
        CHECK(read_eq(ctx, z, v, 8), "batch %d: the texture made meanwhile", batch);
        TX_DESTROY(ctx, x, y, z);
    }
    /* an async read pending while another read reports an error fails too */
    {
        tx_tensor x = mk1(ctx, 8, v), y = {0};
        tx_readback r;
        CHECK(!tx_tensor_read_async(ctx, x, &r), "read_async");
        ctx->fault_draw_error = true;
        CHECK(!tx_unary(ctx, TX_OP_RELU, x, &y), "deferred draw");
        float got[8];
        CHECK(tx_tensor_read(ctx, y, got, sizeof got) == TX_STATUS_GL_ERROR, "the other read");
        st = tx_readback_finish(ctx, r, got, sizeof got);
        CHECK(st == TX_STATUS_GL_ERROR && strstr(tx_last_error(ctx), "pending"),
              "pending read: %s (%s)", tx_status_name(st), tx_last_error(ctx));
        CHECK(read_eq(ctx, x, v, 8), "x afterwards");
        TX_DESTROY(ctx, x, y);
    }
    tx_host_close(g_host, ctx);
    tx_test_end();
}

/* Context creation probes the driver in one draw (tx_gl_probe_all) where
 * it can: that draw must find what the three one-draw probes find, and what
 * the context reports. */
static void test_probe_all_agrees(void) {
    if (!tx_test_begin("the one-draw driver probe agrees with the probes one by one and caps"))
        return;
    tx_ctx *ctx = open_ctx((tx_ctx_desc){0});
    bool f32 = false, f16 = false, div = false;
    bool s32 = tx_gl_probe_render(&ctx->gl, false), s16 = tx_gl_probe_render(&ctx->gl, true),
         sdiv = tx_gl_probe_div(&ctx->gl);
    /* a driver that refuses the 3-target draw gets the probes one by one
     * (context.c): then the caps must say what those say */
    if (tx_gl_probe_all(&ctx->gl, &f32, &f16, &div)) {
        CHECK(f32 == s32, "float32 render: %d", f32);
        CHECK(f16 == s16, "float16 render: %d", f16);
        CHECK(div == sdiv, "division exact: %d", div);
    } else {
        printf("  (this driver refuses the one-draw probe: the probes one by one)\n");
        f32 = s32;
        f16 = s16;
        div = sdiv;
    }
    tx_caps c;
    CHECK(!tx_ctx_caps(ctx, &c), "caps");
    CHECK(c.float32_render == f32 && c.float16_render == f16 && c.emulated_division == !div,
          "caps %d %d %d, probe %d %d %d", c.float32_render, c.float16_render, c.emulated_division,
          f32, f16, div);
    /* a drawing context afterwards: the probe left no state behind */
    float v[4] = {1, -2, 3, -4}, want[4] = {1, 0, 3, 0};
    tx_tensor x = mk1(ctx, 4, v), y = {0};
    CHECK(!tx_unary(ctx, TX_OP_RELU, x, &y) && read_eq(ctx, y, want, 4), "relu after the probe");
    TX_DESTROY(ctx, x, y);
    tx_host_close(g_host, ctx);
    tx_test_end();
}

static void test_link_failures(void) {
    if (tx_test_begin("generic link failure: clear status, numbered source logged, retry works")) {
        tx_ctx *ctx = open_ctx((tx_ctx_desc){.specialize_after = TX_SPECIALIZE_NEVER});
        float v[4] = {-1, 0, 1, 2};
        tx_tensor x = mk1(ctx, 4, v), y = {0};
        tx_stats s0 = stats(ctx);
        ctx->fault_generic = true;
        capture_begin();
        tx_status st = tx_unary(ctx, TX_OP_NEG, x, &y);
        char *log = capture_end();
        CHECK(st == TX_STATUS_GL_ERROR, "got %s", tx_status_name(st));
        CHECK(strstr(tx_last_error(ctx), "neg") && strstr(tx_last_error(ctx), "generic"), "%s",
              tx_last_error(ctx));
        CHECK(strstr(log, "injected fault") && strstr(log, "   1  #version 300 es") &&
                  strstr(log, "tx_u_neg"),
              "stderr lacks the driver log or the numbered source:\n%.300s", log);
        free(log);
        tx_stats s1 = stats(ctx);
        CHECK(s1.compile_failures == s0.compile_failures + 1 && s1.live_tensors == s0.live_tensors,
              "%llu failures, %llu live", (unsigned long long)s1.compile_failures,
              (unsigned long long)s1.live_tensors);
        CHECK(!tx_unary(ctx, TX_OP_NEG, x, &y), "retry: %s", tx_last_error(ctx));
        CHECK(read_eq(ctx, y, (float[]){1, -0.0f, -1, -2}, 4), "retry result wrong");
        TX_DESTROY(ctx, y, x);
        tx_host_close(g_host, ctx);
        tx_test_end();
    }
    if (tx_test_begin("specialized link failure in matmul (4 render targets) falls back")) {
        tx_ctx *ctx = open_ctx((tx_ctx_desc){.specialize_after = TX_SPECIALIZE_ALWAYS});
        float a[256], id[256] = {0};
        for (int i = 0; i < 256; i++)
            a[i] = (float)(i % 13) - 6;
        for (int i = 0; i < 16; i++)
            id[i * 17] = 1;
        tx_tensor ta = mk(ctx, 2, (int64_t[]){16, 16}, a), tb = mk(ctx, 2, (int64_t[]){16, 16}, id),
                  y = {0};
        ctx->fault_specialized = true;
        capture_begin();
        tx_status st = tx_matmul(ctx, ta, tb, NULL, &y);
        char *log = capture_end();
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(ctx));
        CHECK(strstr(log, "specialized") && strstr(log, "   1  #version 300 es"),
              "no numbered source logged");
        free(log);
        float got[256];
        CHECK(!tx_tensor_read(ctx, y, got, sizeof got) && memcmp(got, a, sizeof a) == 0,
              "fallback result wrong");
        tx_stats s = stats(ctx);
        CHECK(s.compile_failures == 1 && s.generic_runs >= 1, "%llu failures, %llu generic runs",
              (unsigned long long)s.compile_failures, (unsigned long long)s.generic_runs);
        TX_DESTROY(ctx, y, ta, tb);
        tx_host_close(g_host, ctx);
        tx_test_end();
    }
}

#define EXPECT_LOST(call)                                                                          \
    do {                                                                                           \
        tx_status s_ = (call);                                                                     \
        CHECK(s_ == TX_STATUS_CONTEXT_LOST, "%s returned %s (%s)", #call, tx_status_name(s_),      \
              tx_last_error(ctx));                                                                 \
        CHECK(strstr(tx_last_error(ctx), "lost") != NULL, "%s: message \"%s\"", #call,             \
              tx_last_error(ctx));                                                                 \
    } while (0)

static void test_context_loss(void) {
    if (!tx_test_begin("lost context: every call fails until restore; old handles say so"))
        return;
    /* Compiles in the foreground: with a driver's parallel compile, 3 calls
     * after the restore need not have made the specialized program ready
     * (the count below; cache_test counts the same way). */
    tx_ctx *ctx = open_ctx((tx_ctx_desc){.specialize_after = 1, .no_parallel_compile = true});
    float v[8] = {-4, -3, -2, -1, 1, 2, 3, 4}, r[8] = {0, 0, 0, 0, 1, 2, 3, 4}, buf[8];
    tx_tensor a = mk1(ctx, 8, v), y = {0}, view = {0};
    CHECK(!tx_unary(ctx, TX_OP_RELU, a, &y) && read_eq(ctx, y, r, 8), "before the loss");
    CHECK(!tx_tensor_reshape(ctx, a, 2, (int64_t[]){2, 4}, &view), "view");
    tx_stats s0 = stats(ctx);
    tx_gl_tex a_name = tx_slot_get(ctx, a)->st->tex.gl;
    int gen0 = tx_ctx_generation(ctx);

    ctx->gl.fault_lost = true; /* the driver loses the context */
    tx_tensor z = {0};
    EXPECT_LOST(tx_unary(ctx, TX_OP_RELU, a, &z));
    CHECK(strstr(tx_last_error(ctx), "relu") && strstr(tx_last_error(ctx), "tx_ctx_restore"), "%s",
          tx_last_error(ctx));
    CHECK(z.id == 0, "output written");
    CHECK(tx_ctx_is_lost(ctx), "not reported lost");
    EXPECT_LOST(tx_unary(ctx, TX_OP_SIGMOID, a, &z));
    EXPECT_LOST(tx_clip(ctx, a, 0, 1, &z));
    EXPECT_LOST(tx_binary(ctx, TX_OP_ADD, a, a, &z));
    EXPECT_LOST(tx_matmul(ctx, view, view, &(tx_matmul_desc){.transpose_b = true}, &z));
    EXPECT_LOST(tx_op_run(ctx, TX_OP_ABS, &a, 1, NULL, &z));
    EXPECT_LOST(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}}, &z));
    EXPECT_LOST(tx_tensor_write(ctx, a, v, sizeof v));
    EXPECT_LOST(tx_tensor_read(ctx, y, buf, sizeof buf));
    EXPECT_LOST(tx_tensor_reshape(ctx, a, 1, (int64_t[]){8}, &z));
    EXPECT_LOST(tx_ctx_finish(ctx));
    tx_stats s1 = stats(ctx);
    CHECK(s1.context_losses == 1 && s1.context_losses > s0.context_losses, "%llu losses",
          (unsigned long long)s1.context_losses);
    int rank = 0;
    int64_t shape[TX_MAX_RANK];
    CHECK(!tx_tensor_shape(ctx, view, &rank, shape, NULL) && rank == 2 && shape[1] == 4,
          "shape while lost");
    CHECK(!tx_tensor_destroy(ctx, y), "destroy while lost: %s", tx_last_error(ctx));

    EXPECT_LOST(tx_ctx_restore(ctx));
    CHECK(strstr(tx_last_error(ctx), "still lost"), "%s", tx_last_error(ctx));
    ctx->gl.fault_lost = false; /* the driver gives a working context back */
    CHECK(!tx_ctx_restore(ctx), "restore: %s", tx_last_error(ctx));
    CHECK(!tx_ctx_is_lost(ctx), "still lost after restore");
    CHECK(tx_ctx_generation(ctx) == gen0 + 1, "generation %d after one loss (was %d)",
          tx_ctx_generation(ctx), gen0);
    /* The driver reported the loss: no old name was deleted (in a real loss
     * it could belong to the new context by now). The simulated loss left
     * the context alive, so the texture is still there to see. */
    CHECK(tx_gl_tex_exists(a_name), "texture %u of a lost context was deleted", TX_GL_NAME(a_name));

    EXPECT_LOST(tx_tensor_read(ctx, a, buf, sizeof buf));
    CHECK(strstr(tx_last_error(ctx), "created before the GL context was lost"), "%s",
          tx_last_error(ctx));
    EXPECT_LOST(tx_unary(ctx, TX_OP_RELU, view, &z));
    CHECK(strstr(tx_last_error(ctx), "relu") && strstr(tx_last_error(ctx), "x (handle"), "%s",
          tx_last_error(ctx));
    CHECK(!tx_tensor_shape(ctx, a, &rank, shape, NULL) && rank == 1 && shape[0] == 8, "old shape");

    tx_stats s2 = stats(ctx);
    CHECK(s2.live_texture_bytes == 0 && s2.pooled_texture_bytes == 0 &&
              s2.specialized_programs == 0 && s2.context_restores == 1,
          "after restore: %llu live bytes, %llu pooled, %llu specialized",
          (unsigned long long)s2.live_texture_bytes, (unsigned long long)s2.pooled_texture_bytes,
          (unsigned long long)s2.specialized_programs);
    tx_tensor b = mk1(ctx, 8, v);
    for (int i = 0; i < 3; i++) {
        CHECK(!tx_unary(ctx, TX_OP_RELU, b, &z), "new tensor after restore: %s",
              tx_last_error(ctx));
        CHECK(read_eq(ctx, z, r, 8), "relu after restore wrong (call %d)", i);
        tx_tensor_destroy(ctx, z);
    }
    tx_stats s3 = stats(ctx);
    CHECK(s3.generic_compiles == s2.generic_compiles + 1 && s3.specialized_ready >= 1,
          "programs not rebuilt lazily: %llu generic, %llu specialized ready",
          (unsigned long long)(s3.generic_compiles - s2.generic_compiles),
          (unsigned long long)s3.specialized_ready);
    CHECK(!tx_tensor_destroy(ctx, a) && !tx_tensor_destroy(ctx, view), "destroy old handles");
    CHECK(tx_tensor_destroy(ctx, a) == TX_STATUS_STALE_HANDLE, "double destroy");

    /* Loss noticed by a read alone (no failing draw before it). */
    ctx->gl.fault_lost = true;
    EXPECT_LOST(tx_tensor_read(ctx, b, buf, sizeof buf));
    ctx->gl.fault_lost = false;
    CHECK(!tx_ctx_restore(ctx), "second restore: %s", tx_last_error(ctx));
    EXPECT_LOST(tx_tensor_read(ctx, b, buf, sizeof buf));
    tx_tensor_destroy(ctx, b);
    tx_stats s4 = stats(ctx);
    CHECK(s4.live_tensors == 0 && s4.live_texture_bytes == 0 && s4.context_losses == 2,
          "%llu tensors, %llu bytes live, %llu losses", (unsigned long long)s4.live_tensors,
          (unsigned long long)s4.live_texture_bytes, (unsigned long long)s4.context_losses);

    /* A healthy context is not restored until the host reports the loss
     * (a desktop host that re-created its context marks the old one lost
     * first). Marking it drops everything at once, deleting what the still
     * living context holds; destroying a context while lost is safe. */
    tx_tensor c = mk1(ctx, 8, v);
    tx_gl_tex c_name = tx_slot_get(ctx, c)->st->tex.gl;
    CHECK(tx_ctx_restore(ctx) == TX_STATUS_INVALID_ARGUMENT &&
              strstr(tx_last_error(ctx), "tx_ctx_mark_lost"),
          "restore of a healthy context: %s", tx_last_error(ctx));
    CHECK(read_eq(ctx, c, v, 8), "a refused restore lost a tensor");
    CHECK(tx_gl_tex_exists(c_name), "no texture behind a live tensor");
    tx_ctx_mark_lost(ctx);
    tx_stats s5 = stats(ctx);
    CHECK(s5.context_losses == 3 && s5.live_texture_bytes == 0 && s5.live_tensors == 1,
          "after mark_lost: %llu losses, %llu live bytes, %llu tensors",
          (unsigned long long)s5.context_losses, (unsigned long long)s5.live_texture_bytes,
          (unsigned long long)s5.live_tensors);
    CHECK(!tx_gl_tex_exists(c_name), "a healthy context marked lost kept texture %u",
          TX_GL_NAME(c_name));
    CHECK(tx_ctx_is_lost(ctx), "not lost after tx_ctx_mark_lost");
    EXPECT_LOST(tx_unary(ctx, TX_OP_RELU, c, &z));
    tx_ctx_mark_lost(ctx); /* twice is harmless */
    CHECK(stats(ctx).context_losses == 3, "a second mark counted as another loss");
    CHECK(!tx_ctx_restore(ctx), "restore after mark_lost: %s", tx_last_error(ctx));
    CHECK(tx_ctx_generation(ctx) == gen0 + 3, "generation %d after three losses",
          tx_ctx_generation(ctx));
    EXPECT_LOST(tx_tensor_read(ctx, c, buf, sizeof buf));
    CHECK(strstr(tx_last_error(ctx), "created before the GL context was lost"), "%s",
          tx_last_error(ctx));
    ctx->gl.fault_lost = true;
    EXPECT_LOST(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}}, &z));
    tx_host_close(g_host, ctx); /* c is still allocated: destroy frees it */
    tx_test_end();
}

/* An engine context destroyed on a GL context that lives on (texel bench,
 * an app that remakes its engine) takes every GL object it made with it:
 * textures, programs (generic and specialized), shaders, framebuffers, the
 * vertex array. */
static void test_destroy_leaves_no_gl_objects(void) {
    if (!tx_test_begin("a destroyed context leaves no GL objects"))
        return;
    tx_ctx *first = open_ctx((tx_ctx_desc){0});
    tx_ctx_destroy(first); /* the host's GL context stays current */
    int before = tx_gl_count_objects(4096);
    for (int round = 0; round < 3; round++) {
        tx_ctx *ctx = NULL;
        tx_status st = tx_host_new_ctx(
            g_host, &(tx_ctx_desc){.specialize_after = 1, .emulate_division = round == 2}, &ctx);
        CHECK(!st, "tx_host_new_ctx: %s", tx_status_name(st));
        if (st)
            break;
        float v[64];
        for (int i = 0; i < 64; i++)
            v[i] = (float)(i % 7) - 3.0f;
        tx_tensor a = mk(ctx, 2, (int64_t[]){8, 8}, v), b = mk(ctx, 2, (int64_t[]){8, 8}, v);
        for (int call = 0; call < 3; call++) { /* generic, then specialized programs */
            tx_tensor y = {0}, z = {0};
            CHECK(!tx_matmul(ctx, a, b, NULL, &y), "%s", tx_last_error(ctx));
            CHECK(!tx_binary(ctx, TX_OP_DIV, y, a, &z), "%s", tx_last_error(ctx));
            float out[64];
            CHECK(!tx_tensor_read(ctx, z, out, sizeof out), "%s", tx_last_error(ctx));
            TX_DESTROY(ctx, y, z);
        }
        TX_DESTROY(ctx, a, b);
        tx_ctx_destroy(ctx);
        int after = tx_gl_count_objects(4096);
        CHECK(after == before, "round %d: %d GL objects before the context, %d after it", round,
              before, after);
    }
    tx_host_close(g_host, NULL);
    g_host = NULL;
    tx_test_end();
}

/* relu(x w + x w) for x [33, 40], w [40, 24], read into y; false if any
 * call failed (a scrambled context may make uploads fail). */
static bool shared_run(tx_ctx *ctx, float *y) {
    static float xv[33 * 40], wv[40 * 24];
    for (int i = 0; i < 33 * 40; i++)
        xv[i] = (float)((i * 7) % 13) * 0.25f - 1.5f;
    for (int i = 0; i < 40 * 24; i++)
        wv[i] = (float)((i * 5) % 11) * 0.125f - 0.6f;
    tx_tensor x = {0}, w = {0}, m = {0}, s = {0}, r = {0};
    bool ok =
        !tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {33, 40}, .data = xv}, &x) &&
        !tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {40, 24}, .data = wv}, &w) &&
        !tx_matmul(ctx, x, w, NULL, &m) && !tx_binary(ctx, TX_OP_ADD, m, m, &s) &&
        !tx_unary(ctx, TX_OP_RELU, s, &r) && !tx_tensor_read(ctx, r, y, 33 * 24 * 4);
    tx_tensor all[5] = {x, w, m, s, r};
    for (int i = 0; i < 5; i++)
        if (all[i].id)
            tx_tensor_destroy(ctx, all[i]);
    return ok;
}

/* Within rounding: the first call's program and the steady one sum in
 * different orders. */
static bool shared_same(const float *got, const float *want) {
    for (int i = 0; i < 33 * 24; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i]))))
            return false;
    return true;
}

static void test_shared_gl_state(void) {
    if (!tx_test_begin("a shared GL context: the caller's state, another tx_ctx, "
                       "tx_ctx_reset_gl_state"))
        return;
    tx_ctx *a = open_ctx((tx_ctx_desc){0});
    static float want[33 * 24], got[33 * 24];
    CHECK(shared_run(a, want), "%s", tx_last_error(a));
    for (int i = 0; i < 33; i++) /* against the formula */
        for (int j = 0; j < 24; j++) {
            double acc = 0;
            for (int k = 0; k < 40; k++)
                acc += (double)((float)(((i * 40 + k) * 7) % 13) * 0.25f - 1.5f) *
                       ((float)(((k * 24 + j) * 5) % 11) * 0.125f - 0.6f);
            acc = acc + acc > 0 ? acc + acc : 0;
            CHECK(fabs(want[i * 24 + j] - acc) < 1e-4, "y[%d, %d] = %g, want %g", i, j,
                  (double)want[i * 24 + j], acc);
        }
    /* the caller draws behind texel's back: without a reset the results go
     * wrong (or calls fail), which shows the scramble bites */
    tx_gl_test_scramble();
    bool ok = shared_run(a, got);
    CHECK(!ok || !shared_same(got, want), "the scrambled state changed nothing");
    tx_gl_test_scramble();
    CHECK(!tx_ctx_reset_gl_state(a), "%s", tx_last_error(a));
    CHECK(shared_run(a, got) && shared_same(got, want), "after the reset: %s", tx_last_error(a));
    /* a second tx_ctx on the scrambled context starts from the state it needs */
    tx_gl_test_scramble();
    tx_ctx *b = NULL;
    CHECK(!tx_host_new_ctx(g_host, &(tx_ctx_desc){0}, &b), "second context");
    if (b) {
        CHECK(shared_run(b, got) && shared_same(got, want), "second context: %s", tx_last_error(b));
        tx_ctx_destroy(b);
    }
    /* and the first one, told so, carries on */
    CHECK(!tx_ctx_reset_gl_state(a), "%s", tx_last_error(a));
    CHECK(shared_run(a, got) && shared_same(got, want), "first context again: %s",
          tx_last_error(a));
    /* the caller's drawing took texel's render target off the framebuffer
     * texel left bound (the scramble does): after the reset, reading a tensor
     * that stayed alive attaches it again rather than trusting the old cache */
    {
        static const float v[6] = {-2, -1, 0, 0.5f, 1, 3};
        float back[6] = {0};
        tx_tensor t = {0}, u = {0};
        CHECK(!tx_tensor_create(a, &(tx_tensor_desc){.rank = 1, .shape = {6}, .data = v}, &t) &&
                  !tx_unary(a, TX_OP_RELU, t, &u) && !tx_tensor_read(a, u, back, sizeof back),
              "%s", tx_last_error(a));
        tx_gl_test_scramble();
        CHECK(!tx_ctx_reset_gl_state(a), "%s", tx_last_error(a));
        memset(back, 0, sizeof back);
        CHECK(!tx_tensor_read(a, u, back, sizeof back), "read after the reset: %s",
              tx_last_error(a));
        for (int i = 0; i < 6; i++)
            CHECK(back[i] == (v[i] > 0 ? v[i] : 0), "relu[%d] = %g after the reset", i,
                  (double)back[i]);
        if (t.id)
            tx_tensor_destroy(a, t);
        if (u.id)
            tx_tensor_destroy(a, u);
    }
    CHECK(tx_ctx_reset_gl_state(NULL) == TX_STATUS_INVALID_ARGUMENT, "NULL context");
    tx_ctx_mark_lost(a);
    CHECK(tx_ctx_reset_gl_state(a) == TX_STATUS_CONTEXT_LOST, "a lost context");
    tx_host_close(g_host, a);
    g_host = NULL;
    tx_test_end();
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    test_destroy_leaves_no_gl_objects();
    test_pool_random_shapes();
    test_pool_age_and_limit();
    test_oom_inside_op();
    test_driver_refuses_texture();
    test_gl_error_after_draw();
    test_deferred_errors();
    test_deferred_textures();
    test_probe_all_agrees();
    test_link_failures();
    test_context_loss();
    test_shared_gl_state();
    return tx_test_finish();
}
