/* The device seam and the session's device choice: tensors on either device,
 * the counted crossing between them, mismatches refused, CPU tensors through
 * a GL context loss, and TX_DEVICE_AUTO (software rasterizer → CPU; the
 * measured trial: first run on the CPU, then the GPU until specialized, the
 * faster kept and remembered). */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "add_model.h"
#include "glctx.h"
#include "harness.h"
#include "internal.h" /* the test hook ctx->fault_compiling */
#include "tensors.h"
#include "texel.h"

static void *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n);
    *len = p && fread(p, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return p;
}

static tx_tensor mk(tx_ctx *ctx, tx_device dev, int64_t n, float base) {
    float v[64];
    for (int64_t i = 0; i < n; i++)
        v[i] = base + (float)i;
    tx_tensor t = {0};
    tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {n}, .data = v, .device = dev}, &t);
    return t;
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    unsetenv("TEXEL_DEVICE"); /* this test says each session's device itself */
    tx_host *h;
    tx_ctx *ctx;
    int rc = tx_host_open(&(tx_ctx_desc){.cpu_threads = 2}, &h, &ctx);
    if (rc == TX_HOST_NO_CONTEXT) {
        printf("no GL context: skipping\n");
        return 77;
    }
    if (rc)
        return 1;
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);

    if (tx_test_begin("tensors: create, read, device on each device")) {
        for (int d = TX_DEVICE_GPU; d <= TX_DEVICE_CPU; d++) {
            tx_tensor t = mk(ctx, (tx_device)d, 7, 1.0f);
            tx_device got = TX_DEVICE_DEFAULT;
            float v[7] = {0};
            CHECK(t.id && !tx_tensor_device(ctx, t, &got) && got == (tx_device)d, "device %d", d);
            CHECK(!tx_tensor_read(ctx, t, v, sizeof v) && v[6] == 7.0f, "read %g", (double)v[6]);
            tx_tensor_destroy(ctx, t);
        }
        tx_tensor t = {0};
        CHECK(tx_tensor_create(ctx,
                               &(tx_tensor_desc){.rank = 1, .shape = {2}, .device = TX_DEVICE_AUTO},
                               &t) == TX_STATUS_INVALID_ARGUMENT,
              "a tensor on 'auto' was accepted");
        CHECK(strstr(tx_last_error(ctx), "gpu or cpu") != NULL, "%s", tx_last_error(ctx));
        tx_test_end();
    }

    if (tx_test_begin("tensors: tx_tensor_to is the counted crossing")) {
        tx_stats s0, s1, s2;
        tx_tensor g = mk(ctx, TX_DEVICE_GPU, 8, 0.0f), c = {0}, g2 = {0};
        tx_ctx_stats(ctx, &s0);
        CHECK(!tx_tensor_to(ctx, g, TX_DEVICE_CPU, &c), "%s", tx_last_error(ctx));
        tx_ctx_stats(ctx, &s1);
        CHECK(s1.bytes_downloaded - s0.bytes_downloaded == 32, "downloaded %llu",
              (unsigned long long)(s1.bytes_downloaded - s0.bytes_downloaded));
        CHECK(!tx_tensor_to(ctx, c, TX_DEVICE_GPU, &g2), "%s", tx_last_error(ctx));
        tx_ctx_stats(ctx, &s2);
        CHECK(s2.bytes_uploaded - s1.bytes_uploaded == 32, "uploaded %llu",
              (unsigned long long)(s2.bytes_uploaded - s1.bytes_uploaded));
        float v[8] = {0};
        CHECK(!tx_tensor_read(ctx, g2, v, sizeof v) && v[7] == 7.0f, "round trip %g", (double)v[7]);
        TX_DESTROY(ctx, g, c, g2);
        tx_test_end();
    }

    if (tx_test_begin("ops: run where the inputs live; mixed devices are refused")) {
        tx_tensor a = mk(ctx, TX_DEVICE_CPU, 5, 1.0f), b = mk(ctx, TX_DEVICE_CPU, 5, 2.0f);
        tx_tensor g = mk(ctx, TX_DEVICE_GPU, 5, 2.0f), y = {0}, bad = {0};
        tx_stats s0, s1;
        tx_ctx_stats(ctx, &s0);
        CHECK(!tx_binary(ctx, TX_OP_MUL, a, b, &y), "%s", tx_last_error(ctx));
        tx_ctx_stats(ctx, &s1);
        tx_device dev = TX_DEVICE_DEFAULT;
        tx_tensor_device(ctx, y, &dev);
        CHECK(dev == TX_DEVICE_CPU, "output on %s", tx_device_name(dev));
        CHECK(s1.cpu_ops == s0.cpu_ops + 1 && s1.draws == s0.draws, "cpu_ops +%llu, draws +%llu",
              (unsigned long long)(s1.cpu_ops - s0.cpu_ops),
              (unsigned long long)(s1.draws - s0.draws));
        float v[5] = {0};
        tx_tensor_read(ctx, y, v, sizeof v);
        CHECK(v[4] == 30.0f, "5 * 6 = %g", (double)v[4]);
        CHECK(tx_binary(ctx, TX_OP_ADD, a, g, &bad) == TX_STATUS_DEVICE_MISMATCH,
              "mixed devices ran");
        CHECK(strstr(tx_last_error(ctx), "tx_tensor_to") != NULL, "%s", tx_last_error(ctx));
        TX_DESTROY(ctx, a, b, g, y);
        tx_test_end();
    }

    if (tx_test_begin("tensors: CPU tensors keep their values and run ops through a context "
                      "loss")) {
        tx_tensor c = mk(ctx, TX_DEVICE_CPU, 4, 3.0f), g = mk(ctx, TX_DEVICE_GPU, 4, 3.0f);
        tx_ctx_mark_lost(ctx);
        float v[4] = {0};
        CHECK(!tx_tensor_read(ctx, c, v, sizeof v) && v[3] == 6.0f, "%s", tx_last_error(ctx));
        CHECK(tx_tensor_read(ctx, g, v, sizeof v) == TX_STATUS_CONTEXT_LOST, "gpu read");
        /* the CPU device needs no GL: its ops run while the context is lost */
        tx_tensor y = {0}, r = {0};
        CHECK(!tx_binary(ctx, TX_OP_ADD, c, c, &y), "cpu op while lost: %s", tx_last_error(ctx));
        CHECK(!tx_tensor_reshape(ctx, y, 2, (int64_t[]){2, 2}, &r), "reshape while lost: %s",
              tx_last_error(ctx));
        CHECK(!tx_tensor_read(ctx, r, v, sizeof v) && v[3] == 12.0f, "3 + 3 = %g", (double)v[3]);
        CHECK(tx_binary(ctx, TX_OP_ADD, g, g, &y) == TX_STATUS_CONTEXT_LOST, "gpu op while lost");
        tx_readback rb;
        bool ready = false;
        float w[4] = {0};
        CHECK(!tx_tensor_read_async(ctx, r, &rb) && !tx_readback_poll(ctx, rb, &ready) && ready &&
                  !tx_readback_finish(ctx, rb, w, sizeof w) && w[0] == 6.0f,
              "async read while lost: %s", tx_last_error(ctx));
        tx_tensor_destroy(ctx, r);
        tx_tensor_destroy(ctx, y);
        CHECK(tx_ctx_restore(ctx) == TX_STATUS_OK, "%s", tx_last_error(ctx));
        CHECK(!tx_tensor_read(ctx, c, v, sizeof v) && v[3] == 6.0f, "after restore: %s",
              tx_last_error(ctx));
        TX_DESTROY(ctx, c, g);
        tx_test_end();
    }

    size_t len = 0;
    void *bytes = read_all(MODEL, &len);
    char cache[256];
    snprintf(cache, sizeof cache, "/tmp/texel-device-test-%d", (int)getpid());
    unlink(cache);

    if (tx_test_begin("session: fixed devices run there, feeds from the other device move")) {
        CHECK(bytes != NULL, "cannot read %s", MODEL);
        for (int d = TX_DEVICE_GPU; bytes && d <= TX_DEVICE_CPU; d++) {
            tx_session *s = NULL;
            tx_status st = tx_session_create(
                ctx, bytes, len, &(tx_session_desc){.device = (tx_device)d, .choice_cache = ""},
                &s);
            CHECK(!st, "%s", tx_last_error(ctx));
            float y = 0;
            tx_stats c0, c1;
            tx_ctx_stats(ctx, &c0);
            tx_device other = d == TX_DEVICE_GPU ? TX_DEVICE_CPU : TX_DEVICE_GPU;
            CHECK(!st && !run_add(ctx, s, other, &y), "%s", tx_last_error(ctx));
            tx_ctx_stats(ctx, &c1);
            CHECK(y == 59.0f * 1.5f, "y[59] = %g", (double)y);
            tx_session_stats ss;
            tx_session_stats_get(s, &ss);
            CHECK(ss.device == (tx_device)d && ss.decided, "ran on %s", tx_device_name(ss.device));
            /* two feeds of 60 floats crossed: counted on the GPU side */
            uint64_t crossed = d == TX_DEVICE_CPU ? c1.bytes_downloaded - c0.bytes_downloaded : 0;
            CHECK(d == TX_DEVICE_GPU || crossed >= 2 * 240, "crossing counted %llu",
                  (unsigned long long)crossed);
            tx_session_destroy(s);
        }
        tx_test_end();
    }

    if (tx_test_begin("session: auto on a software rasterizer runs on the CPU")) {
        tx_session *s = NULL;
        CHECK(!tx_session_create(ctx, bytes, len, &(tx_session_desc){.choice_cache = cache}, &s),
              "%s", tx_last_error(ctx));
        tx_session_stats ss;
        tx_session_stats_get(s, &ss);
        bool soft = strstr(caps.renderer, "llvmpipe") || strstr(caps.renderer, "SwiftShader") ||
                    strstr(caps.renderer, "softpipe");
        CHECK(!ss.decided, "decided before any run: %s", ss.reason);
        if (soft) {
            /* the name sends it to the CPU; the probe before the second run
             * confirms it (llvmpipe: about 10 GFLOP/s) */
            CHECK(ss.device == TX_DEVICE_CPU && strstr(ss.reason, "software rasterizer"), "%s: %s",
                  tx_device_name(ss.device), ss.reason);
            tx_stats a, b;
            float y = 0;
            tx_ctx_stats(ctx, &a);
            CHECK(!run_add(ctx, s, TX_DEVICE_CPU, &y), "%s", tx_last_error(ctx));
            tx_ctx_stats(ctx, &b);
            CHECK(b.draws == a.draws, "the first run drew %llu times (a probe before it?)",
                  (unsigned long long)(b.draws - a.draws));
            CHECK(!run_add(ctx, s, TX_DEVICE_CPU, &y), "%s", tx_last_error(ctx));
            tx_session_stats_get(s, &ss);
            CHECK(ss.decided && ss.device == TX_DEVICE_CPU && strstr(ss.reason, "probe: matmul") &&
                      ss.runs_gpu == 0 && ss.runs_cpu == 2,
                  "%s: %s", tx_device_name(ss.device), ss.reason);
            printf("  %s\n", ss.reason);
        }
        tx_session_destroy(s);
        tx_test_end();
    }

    if (tx_test_begin("session: auto measures (CPU first and while the GPU compiles, then the "
                      "GPU until specialized), keeps the faster and remembers it")) {
        setenv("TEXEL_AUTO_MEASURE", "1", 1);
        /* a context of its own: no program of the model compiled yet */
        tx_ctx *main_ctx = ctx;
        if (tx_host_new_ctx(h, &(tx_ctx_desc){.cpu_threads = 2}, &ctx) != TX_STATUS_OK) {
            CHECK(false, "second context: %s", tx_last_error(main_ctx));
            ctx = main_ctx;
        }
        tx_caps caps;
        tx_ctx_caps(ctx, &caps);
        /* llvmpipe links at once (its JIT waits for the first draw): the test
         * hook keeps the programs "compiling" for a few polls, as a driver
         * with a real background compiler would */
        ctx->fault_compiling = 8;
        tx_session *s = NULL;
        CHECK(!tx_session_create(ctx, bytes, len, &(tx_session_desc){.choice_cache = cache}, &s),
              "%s", tx_last_error(ctx));
        enum { MAX_RUNS = 128 }; /* the default k on llvmpipe: a trial of up to 70 GPU runs */
        tx_device seq[MAX_RUNS];
        int runs = 0;
        tx_stats c0, c1, first, second;
        tx_ctx_stats(ctx, &c0);
        tx_session_stats ss = {0};
        for (; s && runs < MAX_RUNS && !ss.decided; runs++) {
            float y = 0;
            CHECK(!run_add(ctx, s, TX_DEVICE_CPU, &y) && y == 59.0f * 1.5f, "run %d: %s %g", runs,
                  tx_last_error(ctx), (double)y);
            tx_session_stats_get(s, &ss);
            seq[runs] = ss.device;
            if (runs == 0)
                tx_ctx_stats(ctx, &first);
            if (runs == 1)
                tx_ctx_stats(ctx, &second);
        }
        tx_ctx_stats(ctx, &c1);
        CHECK(runs > 0 && seq[0] == TX_DEVICE_CPU, "first run on %s", tx_device_name(seq[0]));
        /* the first result compiled and drew nothing */
        CHECK(first.generic_compiles == c0.generic_compiles && first.draws == c0.draws,
              "first run: %llu generic compiles, %llu draws",
              (unsigned long long)(first.generic_compiles - c0.generic_compiles),
              (unsigned long long)(first.draws - c0.draws));
        if (caps.parallel_compile && runs > 1) {
            /* the warm-up pass at the start of the second run started every
             * GPU program; no later run compiled a generic program */
            CHECK(second.generic_compiles > first.generic_compiles,
                  "warm-up: %llu generic compiles",
                  (unsigned long long)(second.generic_compiles - first.generic_compiles));
            CHECK(c1.generic_compiles == second.generic_compiles,
                  "%llu generic programs compiled during later runs",
                  (unsigned long long)(c1.generic_compiles - second.generic_compiles));
            /* while they compiled, the CPU served */
            CHECK(runs > 2 && seq[1] == TX_DEVICE_CPU && seq[2] == TX_DEVICE_CPU &&
                      strstr(ss.reason, "while GPU programs compiled"),
                  "runs 2 and 3 on %s, %s; %s", tx_device_name(seq[1]), tx_device_name(seq[2]),
                  ss.reason);
        }
        /* CPU runs, then GPU runs, then at most one CPU run */
        int g0 = 0;
        while (g0 < runs && seq[g0] == TX_DEVICE_CPU)
            g0++;
        int g1 = g0;
        while (g1 < runs && seq[g1] == TX_DEVICE_GPU)
            g1++;
        int k = tx_ctx_specialize_after(ctx);
        CHECK(g1 - g0 >= (k < 0 ? 0 : k) + 2, "%d GPU runs from run %d", g1 - g0, g0);
        CHECK(runs - g1 <= 1, "%d runs after the GPU's", runs - g1);
        CHECK(c1.specialized_runs > c0.specialized_runs, "the GPU trial never specialized");
        CHECK(ss.decided && strstr(ss.reason, "measured") && ss.gpu_ms > 0 && ss.cpu_ms > 0, "%s",
              ss.reason);
        tx_device want = ss.gpu_ms < ss.cpu_ms ? TX_DEVICE_GPU : TX_DEVICE_CPU;
        CHECK(ss.next_device == want, "decided: the next run on %s, measured gpu %.3f cpu %.3f",
              tx_device_name(ss.next_device), ss.gpu_ms, ss.cpu_ms);
        CHECK(ss.runs_cpu == (uint64_t)(runs - (g1 - g0)) && ss.runs_gpu == (uint64_t)(g1 - g0),
              "runs %llu cpu %llu gpu", (unsigned long long)ss.runs_cpu,
              (unsigned long long)ss.runs_gpu);
        printf("  auto's trial: %d CPU runs, %d GPU runs, %d CPU run after; %s\n", g0, g1 - g0,
               runs - g1, ss.reason);
        float y = 0;
        CHECK(!run_add(ctx, s, TX_DEVICE_CPU, &y), "%s", tx_last_error(ctx));
        tx_session_stats after;
        tx_session_stats_get(s, &after);
        CHECK(after.device == want, "kept %s, measured gpu %.3f cpu %.3f",
              tx_device_name(after.device), ss.gpu_ms, ss.cpu_ms);
        tx_session_destroy(s);
        /* the same bytes on the same renderer: decided without measuring */
        s = NULL;
        CHECK(!tx_session_create(ctx, bytes, len, &(tx_session_desc){.choice_cache = cache}, &s),
              "%s", tx_last_error(ctx));
        tx_session_stats again;
        tx_session_stats_get(s, &again);
        CHECK(again.decided && again.device == want && strstr(again.reason, "remembered"),
              "second session: %s on %s", again.reason, tx_device_name(again.device));
        tx_session_destroy(s);
        if (ctx != main_ctx)
            tx_ctx_destroy(ctx);
        ctx = main_ctx;
        unsetenv("TEXEL_AUTO_MEASURE");
        tx_test_end();
    }

    if (tx_test_begin("session: a bad device is refused")) {
        tx_session *s = NULL;
        CHECK(tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = 99}, &s) ==
                  TX_STATUS_INVALID_ARGUMENT,
              "device 99 accepted");
        CHECK(strstr(tx_last_error(ctx), "gpu, cpu or auto") != NULL, "%s", tx_last_error(ctx));
        tx_test_end();
    }
    unlink(cache);
    free(bytes);

    if (tx_test_begin("no leaks")) {
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        CHECK(st.live_tensors == 0 && st.live_host_bytes == 0, "%llu tensors, %llu host bytes",
              (unsigned long long)st.live_tensors, (unsigned long long)st.live_host_bytes);
        tx_test_end();
    }
    tx_host_close(h, ctx);
    return tx_test_finish();
}
