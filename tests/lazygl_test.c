/* A context whose GL context is made at the first GPU use
 * (tx_ctx_desc.make_gl, host/ tx_host_later): nothing on the CPU device
 * makes it; the first GPU tensor, op, transfer or session does, once; an
 * 'auto' session's first run is the CPU's without it and the context comes
 * before its second; a make_gl that fails leaves a context of the CPU
 * device only, every GPU call naming why. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "add_model.h"
#include "glctx.h"
#include "harness.h"
#include "npy.h" /* tx_read_file */
#include "texel.h"

/* make_gl that counts its calls and hands over to the host's (or fails) */
typedef struct {
    tx_host *host;
    bool (*host_make)(void *, char *, size_t);
    void *host_user;
    int calls;
    bool fail;
    bool lie; /* says it made a context, makes none */
} counter;

static bool counted_make_gl(void *user, char *why, size_t n) {
    counter *c = user;
    c->calls++;
    if (c->fail) {
        snprintf(why, n, "the test's make_gl refuses");
        return false;
    }
    if (c->lie)
        return true;
    return c->host_make(c->host_user, why, n);
}

/* A lazy context on the CPU device (device gpu when `gpu`), make_gl counted. */
static tx_ctx *lazy_ctx(counter *c, bool gpu, bool fail) {
    tx_ctx_desc d = {.device = gpu ? TX_DEVICE_GPU : TX_DEVICE_CPU, .cpu_threads = 2};
    memset(c, 0, sizeof *c);
    c->host = tx_host_later(&d);
    c->host_make = d.make_gl;
    c->host_user = d.make_gl_user;
    c->fail = fail;
    d.make_gl = counted_make_gl;
    d.make_gl_user = c;
    tx_ctx *ctx = NULL;
    tx_status st = c->host ? tx_ctx_create(&d, &ctx) : TX_STATUS_OUT_OF_MEMORY;
    CHECK(!st && ctx, "tx_ctx_create(make_gl): %s", tx_status_name(st));
    return ctx;
}

static bool says(tx_ctx *ctx, const char *what) {
    return strstr(tx_last_error(ctx), what) != NULL;
}

/* y = a @ b on `dev`, read back: [[4, 5], [10, 11]] */
static tx_status matmul_on(tx_ctx *ctx, tx_device dev, float y[4]) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1};
    tx_tensor ta = {0}, tb = {0}, tc = {0};
    tx_status st =
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {2, 3}, .data = a}, &ta);
    st = st ? st
            : tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, 2}, .data = b}, &tb);
    tx_tensor ga = {0}, gb = {0};
    if (!st && dev == TX_DEVICE_GPU) {
        st = tx_tensor_to(ctx, ta, TX_DEVICE_GPU, &ga);
        st = st ? st : tx_tensor_to(ctx, tb, TX_DEVICE_GPU, &gb);
    }
    st = st ? st : tx_matmul(ctx, ga.id ? ga : ta, gb.id ? gb : tb, NULL, &tc);
    st = st ? st : tx_tensor_read(ctx, tc, y, 4 * sizeof(float));
    tx_tensor all[5] = {ta, tb, ga, gb, tc};
    for (int i = 0; i < 5; i++)
        if (all[i].id) /* destroying {0} would replace the error */
            tx_tensor_destroy(ctx, all[i]);
    return st;
}

static bool is_product(const float y[4]) {
    return y[0] == 4 && y[1] == 5 && y[2] == 10 && y[3] == 11;
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    /* auto's own rules here, and no remembered choice from earlier runs */
    unsetenv("TEXEL_DEVICE");
    unsetenv("TEXEL_AUTO_MEASURE");
    char dir[] = "/tmp/texel-lazygl-XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL mkdtemp\n0 passed, 1 failed\n");
        return 1;
    }
    setenv("TEXEL_CACHE_DIR", dir, 1);
    tx_status st;

    if (tx_test_begin("create: no_gpu with make_gl is refused")) {
        tx_ctx *ctx = NULL;
        counter c = {0};
        st = tx_ctx_create(
            &(tx_ctx_desc){.no_gpu = true, .make_gl = counted_make_gl, .make_gl_user = &c}, &ctx);
        CHECK(st == TX_STATUS_INVALID_ARGUMENT && !ctx && c.calls == 0, "%s", tx_status_name(st));
        tx_test_end();
    }

    /* first: GL never loaded in this process yet, so a context that does not
     * load must not be unbound or deleted through unloaded pointers */
    if (tx_test_begin("make_gl that makes no context current: refused, not a crash")) {
        counter c;
        tx_ctx *ctx = lazy_ctx(&c, false, false);
        c.lie = true;
        float y[4] = {0};
        st = matmul_on(ctx, TX_DEVICE_GPU, y);
        CHECK(st == TX_STATUS_UNSUPPORTED && says(ctx, "no GPU context") && c.calls == 1, "%s: %s",
              tx_status_name(st), tx_last_error(ctx));
        st = matmul_on(ctx, TX_DEVICE_CPU, y);
        CHECK(!st && is_product(y), "the CPU still works: %s", tx_last_error(ctx));
        tx_host_close(c.host, ctx);
        tx_test_end();
    }

    if (tx_test_begin("CPU work makes no GL context; the first GPU tensor makes it once")) {
        counter c;
        tx_ctx *ctx = lazy_ctx(&c, false, false);
        tx_caps caps;
        float y[4] = {0};
        st = matmul_on(ctx, TX_DEVICE_CPU, y);
        CHECK(!st && is_product(y), "cpu matmul: %s", tx_last_error(ctx));
        CHECK(!tx_ctx_caps(ctx, &caps) && caps.gl_pending && !caps.no_gpu && !caps.renderer[0] &&
                  !caps.max_texture_size,
              "caps before: pending %d no_gpu %d '%s'", caps.gl_pending, caps.no_gpu,
              caps.renderer);
        CHECK(!tx_ctx_is_lost(ctx), "a context whose GL is still to come is not lost");
        CHECK(!tx_ctx_finish(ctx) && !tx_ctx_reset_gl_state(ctx), "finish: %s", tx_last_error(ctx));
        st = tx_ctx_restore(ctx);
        CHECK(st == TX_STATUS_INVALID_ARGUMENT && says(ctx, "not made yet"), "restore: %s: %s",
              tx_status_name(st), tx_last_error(ctx));
        tx_stats s0;
        tx_ctx_stats(ctx, &s0);
        CHECK(c.calls == 0 && s0.gl_start_ms == 0 && s0.draws == 0, "make_gl calls %d", c.calls);

        memset(y, 0, sizeof y);
        st = matmul_on(ctx, TX_DEVICE_GPU, y);
        CHECK(!st && is_product(y), "gpu matmul: %s", tx_last_error(ctx));
        tx_stats s1;
        tx_ctx_stats(ctx, &s1);
        CHECK(c.calls == 1 && s1.gl_start_ms > 0 && s1.draws > 0, "calls %d start %.3f draws %llu",
              c.calls, s1.gl_start_ms, (unsigned long long)s1.draws);
        CHECK(!tx_ctx_caps(ctx, &caps) && !caps.gl_pending && !caps.no_gpu && caps.renderer[0] &&
                  caps.max_texture_size > 0 && caps.float32_render,
              "caps after: pending %d renderer '%s' max %d", caps.gl_pending, caps.renderer,
              caps.max_texture_size);
        /* once made, nothing more is made */
        st = matmul_on(ctx, TX_DEVICE_GPU, y);
        CHECK(!st && is_product(y) && c.calls == 1 && !tx_ctx_start_gl(ctx), "again: calls %d",
              c.calls);
        tx_host_close(c.host, ctx);
        tx_test_end();
    }

    if (tx_test_begin("a transfer to the default device (the GPU) makes it")) {
        counter c;
        tx_ctx *ctx = lazy_ctx(&c, true, false);
        float a[4] = {-1, 2, -3, 4}, y[4] = {0};
        tx_tensor x = {0}, r = {0};
        st = tx_tensor_create(
            ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .data = a, .device = TX_DEVICE_CPU},
            &x);
        CHECK(!st && c.calls == 0, "cpu tensor on a gpu-default context: calls %d", c.calls);
        tx_tensor g = {0};
        st = st ? st : tx_tensor_to(ctx, x, TX_DEVICE_DEFAULT, &g);
        st = st ? st : tx_unary(ctx, TX_OP_RELU, g, &r);
        st = st ? st : tx_tensor_read(ctx, r, y, sizeof y);
        CHECK(!st && c.calls == 1 && y[0] == 0 && y[1] == 2 && y[2] == 0 && y[3] == 4,
              "relu on the gpu: %s (calls %d)", tx_last_error(ctx), c.calls);
        tx_tensor_destroy(ctx, x);
        tx_tensor_destroy(ctx, g);
        tx_tensor_destroy(ctx, r);
        tx_host_close(c.host, ctx);
        tx_test_end();
    }

    if (tx_test_begin("make_gl that fails: the CPU device only, every GPU call says why")) {
        counter c;
        tx_ctx *ctx = lazy_ctx(&c, false, true);
        float y[4] = {0};
        st = matmul_on(ctx, TX_DEVICE_GPU, y);
        CHECK(st == TX_STATUS_UNSUPPORTED && says(ctx, "the test's make_gl refuses") &&
                  says(ctx, "tx_tensor_to") && says(ctx, "no GPU context"),
              "gpu: %s: %s", tx_status_name(st), tx_last_error(ctx));
        tx_tensor g = {0};
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .device = 1}, &g);
        CHECK(st == TX_STATUS_UNSUPPORTED && !g.id && says(ctx, "the test's make_gl refuses") &&
                  c.calls == 1,
              "asked once: %s: %s (calls %d)", tx_status_name(st), tx_last_error(ctx), c.calls);
        st = tx_ctx_start_gl(ctx);
        CHECK(st == TX_STATUS_UNSUPPORTED && c.calls == 1, "start_gl: %s", tx_status_name(st));
        tx_caps caps;
        CHECK(!tx_ctx_caps(ctx, &caps) && caps.no_gpu && !caps.gl_pending, "caps");
        st = matmul_on(ctx, TX_DEVICE_CPU, y);
        CHECK(!st && is_product(y), "the CPU still works: %s", tx_last_error(ctx));
        tx_host_close(c.host, ctx);
        tx_test_end();
    }

    size_t len = 0;
    void *bytes = tx_read_file(MODEL, &len);
    if (!bytes || !len) {
        tx_test_skip("sessions", MODEL " missing (scripts/setup.sh installs it)");
    } else {
        if (tx_test_begin("auto: the first run on the CPU without GL; the context before the "
                          "second")) {
            counter c;
            tx_ctx *ctx = lazy_ctx(&c, false, false);
            tx_session *s = NULL;
            st = tx_session_create(ctx, bytes, len, NULL, &s);
            CHECK(!st && s && c.calls == 0, "create: %s (calls %d)", tx_last_error(ctx), c.calls);
            tx_session_stats ss = {0};
            float last = 0;
            for (int run = 0; s && run < 3; run++) {
                st = run_add(ctx, s, TX_DEVICE_CPU, &last);
                CHECK(!st && last == 88.5f, "run %d: %s %g: %s", run, tx_status_name(st), last,
                      tx_last_error(ctx));
                tx_session_stats_get(s, &ss);
                if (run == 0)
                    CHECK(c.calls == 0 && ss.device == TX_DEVICE_CPU && !ss.decided &&
                              strstr(ss.reason, "no GL context yet"),
                          "after run 1: calls %d reason '%s'", c.calls, ss.reason);
            }
            /* llvmpipe: the renderer names a software rasterizer, the probe
             * confirms it */
            CHECK(c.calls == 1 && ss.decided && ss.device == TX_DEVICE_CPU &&
                      strstr(ss.reason, "software rasterizer") && strstr(ss.reason, "probe"),
                  "calls %d decided %d reason '%s'", c.calls, ss.decided, ss.reason);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);
            tx_test_end();
        }

        if (tx_test_begin("auto with the host's look at the GPU (tx_ctx_gpu_hint): the CPU "
                          "serves while it looks; a slow software rasterizer makes no context")) {
            counter c;
            tx_ctx *ctx = lazy_ctx(&c, false, false);
            tx_session *s = NULL;
            CHECK(tx_ctx_gpu_hint(NULL, "", 0) == TX_STATUS_INVALID_ARGUMENT, "NULL ctx");
            CHECK(!tx_ctx_gpu_hint(ctx, NULL, 0), "looking");
            st = tx_session_create(ctx, bytes, len, NULL, &s);
            CHECK(!st && s, "create: %s", tx_last_error(ctx));
            tx_session_stats ss = {0};
            float last = 0;
            for (int run = 0; s && !st && run < 4; run++) {
                st = run_add(ctx, s, TX_DEVICE_CPU, &last);
                CHECK(!st && last == 88.5f, "run %d: %s", run, tx_last_error(ctx));
            }
            tx_session_stats_get(s, &ss);
            CHECK(c.calls == 0 && !ss.decided && ss.runs_cpu == 4 && ss.cpu_ms > 0 &&
                      strstr(ss.reason, "looks at the GPU"),
                  "while looking: calls %d decided %d reason '%s'", c.calls, ss.decided, ss.reason);
            /* it found a software rasterizer, timed slow: the CPU for good */
            tx_ctx_gpu_hint(ctx, "ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device))", 3.5);
            for (int run = 0; s && !st && run < 3; run++)
                st = run_add(ctx, s, TX_DEVICE_CPU, &last);
            tx_session_stats_get(s, &ss);
            CHECK(!st && c.calls == 0 && ss.decided && ss.device == TX_DEVICE_CPU &&
                      strstr(ss.reason, "software rasterizer (ANGLE") &&
                      strstr(ss.reason, "3.5 GFLOP/s") && strstr(ss.reason, "no GL context made"),
                  "hinted: calls %d decided %d reason '%s'", c.calls, ss.decided, ss.reason);
            /* a session made after the hint is decided at creation */
            tx_session *s2 = NULL;
            st = tx_session_create(ctx, bytes, len, NULL, &s2);
            CHECK(!st && s2 && !tx_session_stats_get(s2, &ss) && ss.decided &&
                      strstr(ss.reason, "no GL context made") && c.calls == 0,
                  "second session: '%s'", ss.reason);
            tx_session_destroy(s2);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);

            /* software but fast (or between half the probe's threshold and
             * it), a GPU's name, nothing found, or TEXEL_AUTO_MEASURE: auto as
             * without a hint, the context made before the next run, whose
             * renderer (llvmpipe here) the matmul probe then confirms */
            const char *found[] = {"llvmpipe (LLVM 15.0.6, 256 bits)", "SwiftShader Device",
                                   "NVIDIA H200/PCIe/SSE2", "", "SwiftShader Device"};
            double rate[] = {200, 20, 5, 0, 3};
            for (int i = 0; i < 5; i++) {
                if (i == 4)
                    setenv("TEXEL_AUTO_MEASURE", "1", 1);
                ctx = lazy_ctx(&c, false, false);
                tx_ctx_gpu_hint(ctx, NULL, 0);
                st = tx_session_create(ctx, bytes, len, NULL, &s);
                st = st ? st : run_add(ctx, s, TX_DEVICE_CPU, &last);
                if (i < 4) /* (measuring: the look is not waited for) */
                    tx_ctx_gpu_hint(ctx, found[i], rate[i]);
                st = st ? st : run_add(ctx, s, TX_DEVICE_CPU, &last);
                tx_session_stats_get(s, &ss);
                CHECK(!st && c.calls == 1 && !strstr(ss.reason, "no GL context made") &&
                          (i == 4 || strstr(ss.reason, "probe: matmul")),
                      "'%s' at %g: calls %d reason '%s'", found[i], rate[i], c.calls, ss.reason);
                tx_session_destroy(s);
                tx_host_close(c.host, ctx);
                unsetenv("TEXEL_AUTO_MEASURE");
            }

            /* a GPU tensor makes the context while the host looks: auto goes
             * on with it, and an answer after it is ignored */
            ctx = lazy_ctx(&c, false, false);
            tx_ctx_gpu_hint(ctx, NULL, 0);
            st = tx_session_create(ctx, bytes, len, NULL, &s);
            st = st ? st : run_add(ctx, s, TX_DEVICE_CPU, &last);
            float y[4] = {0};
            st = st ? st : matmul_on(ctx, TX_DEVICE_GPU, y);
            CHECK(!st && is_product(y) && c.calls == 1, "gpu matmul while looking: %s",
                  tx_last_error(ctx));
            tx_ctx_gpu_hint(ctx, "SwiftShader Device", 3);
            st = st ? st : run_add(ctx, s, TX_DEVICE_CPU, &last);
            tx_session_stats_get(s, &ss);
            CHECK(!st && ss.decided && strstr(ss.reason, "probe: matmul") && c.calls == 1,
                  "after the context: '%s'", ss.reason);
            st = tx_session_create(ctx, bytes, len, NULL, &s2);
            CHECK(!st && s2 && !tx_session_stats_get(s2, &ss) &&
                      !strstr(ss.reason, "no GL context made"),
                  "a session after the context: '%s'", ss.reason);
            tx_session_destroy(s2);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);
            tx_test_end();
        }

        if (tx_test_begin("auto measuring: the trial goes on from the first CPU run")) {
            setenv("TEXEL_AUTO_MEASURE", "1", 1);
            counter c;
            tx_ctx *ctx = lazy_ctx(&c, false, false);
            tx_session *s = NULL;
            st = tx_session_create(ctx, bytes, len, NULL, &s);
            CHECK(!st && s, "create: %s", tx_last_error(ctx));
            tx_session_stats ss = {0};
            float last = 0;
            for (int run = 0; s && !st && run < 80 && !ss.decided; run++) {
                st = run_add(ctx, s, TX_DEVICE_CPU, &last);
                CHECK(!st && last == 88.5f, "run %d: %s %g: %s", run, tx_status_name(st), last,
                      tx_last_error(ctx));
                tx_session_stats_get(s, &ss);
            }
            CHECK(c.calls == 1 && ss.decided && strstr(ss.reason, "measured") && ss.runs_gpu > 0 &&
                      ss.runs_cpu >= 1 && ss.cpu_ms > 0 && ss.gpu_ms > 0,
                  "calls %d decided %d reason '%s' runs gpu %llu cpu %llu", c.calls, ss.decided,
                  ss.reason, (unsigned long long)ss.runs_gpu, (unsigned long long)ss.runs_cpu);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);
            unsetenv("TEXEL_AUTO_MEASURE");
            tx_test_end();
        }

        if (tx_test_begin("auto without a GL context to be had: the CPU, saying why")) {
            counter c;
            tx_ctx *ctx = lazy_ctx(&c, false, true);
            tx_session *s = NULL;
            st = tx_session_create(ctx, bytes, len, NULL, &s);
            float last = 0;
            for (int run = 0; s && run < 3; run++) {
                st = run_add(ctx, s, TX_DEVICE_CPU, &last);
                CHECK(!st && last == 88.5f, "run %d: %s: %s", run, tx_status_name(st),
                      tx_last_error(ctx));
            }
            tx_session_stats ss = {0};
            CHECK(s && !tx_session_stats_get(s, &ss) && c.calls == 1 && ss.decided &&
                      ss.device == TX_DEVICE_CPU && strstr(ss.reason, "no GPU context") &&
                      strstr(ss.reason, "the test's make_gl refuses") && ss.runs_cpu == 3,
                  "calls %d reason '%s'", c.calls, ss.reason);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);
            tx_test_end();
        }

        if (tx_test_begin("a gpu session makes the context at creation")) {
            counter c;
            tx_ctx *ctx = lazy_ctx(&c, false, false);
            tx_session *s = NULL;
            st =
                tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s);
            CHECK(!st && s && c.calls == 1, "create: %s (calls %d)", tx_last_error(ctx), c.calls);
            float last = 0;
            st = s ? run_add(ctx, s, TX_DEVICE_CPU, &last) : st;
            tx_session_stats ss = {0};
            CHECK(!st && last == 88.5f && s && !tx_session_stats_get(s, &ss) && ss.runs_gpu == 1,
                  "run: %s %g", tx_last_error(ctx), last);
            tx_session_destroy(s);
            tx_host_close(c.host, ctx);

            ctx = lazy_ctx(&c, false, true);
            st =
                tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = TX_DEVICE_GPU}, &s);
            CHECK(st == TX_STATUS_UNSUPPORTED && says(ctx, "tx_session_create") &&
                      says(ctx, "the test's make_gl refuses"),
                  "refused: %s: %s", tx_status_name(st), tx_last_error(ctx));
            tx_host_close(c.host, ctx);
            tx_test_end();
        }
    }
    free(bytes);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0)
        printf("note: could not remove %s\n", dir);
    return tx_test_finish();
}
