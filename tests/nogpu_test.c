/* A context made without GL (tx_ctx_desc.no_gpu): no window system, no
 * current context, no GL loader. The CPU device computes ops and sessions;
 * every GPU request is refused with TX_STATUS_UNSUPPORTED naming why; caps
 * say there is no GPU. Runs without Xvfb (nothing here may touch GL). */
#include <math.h>
#include <stdint.h>

#include "add_model.h"
#include "harness.h"
#include "npy.h" /* tx_read_file */
#include "texel.h"

static bool says_no_gpu(tx_ctx *ctx) {
    return strstr(tx_last_error(ctx), "no GPU context") != NULL;
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    setenv("TEXEL_DEVICE", "gpu", 1); /* a whole-run default: a GL-less context ignores it */
    tx_ctx *ctx = NULL;
    tx_status st = tx_ctx_create(&(tx_ctx_desc){.no_gpu = true, .cpu_threads = 2}, &ctx);
    if (st || !ctx) {
        printf("FAIL tx_ctx_create(no_gpu): %s\n0 passed, 1 failed\n", tx_status_name(st));
        return 1;
    }

    if (tx_test_begin("create: desc.device gpu with no_gpu is refused")) {
        tx_ctx *other = NULL;
        tx_status s =
            tx_ctx_create(&(tx_ctx_desc){.no_gpu = true, .device = TX_DEVICE_GPU}, &other);
        CHECK(s == TX_STATUS_UNSUPPORTED && !other, "%s", tx_status_name(s));
        tx_ctx_destroy(other);
        tx_test_end();
    }

    if (tx_test_begin("caps: no GPU")) {
        tx_caps c;
        CHECK(!tx_ctx_caps(ctx, &c), "caps");
        CHECK(c.no_gpu && !c.float32_render && !c.max_texture_size && !c.renderer[0],
              "no_gpu %d f32 %d max_tex %d renderer '%s'", c.no_gpu, c.float32_render,
              c.max_texture_size, c.renderer);
        tx_test_end();
    }

    if (tx_test_begin("ops: matmul on the default device (the CPU)")) {
        float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, y[4] = {0};
        tx_tensor ta = {0}, tb = {0}, tc = {0};
        tx_device dev = TX_DEVICE_DEFAULT;
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {2, 3}, .data = a}, &ta);
        st = st ? st
                : tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, 2}, .data = b},
                                   &tb);
        st = st ? st : tx_matmul(ctx, ta, tb, NULL, &tc);
        st = st ? st : tx_tensor_read(ctx, tc, y, sizeof y);
        CHECK(!st, "%s: %s", tx_status_name(st), tx_last_error(ctx));
        CHECK(y[0] == 4 && y[1] == 5 && y[2] == 10 && y[3] == 11, "y = %g %g %g %g", y[0], y[1],
              y[2], y[3]);
        CHECK(!tx_tensor_device(ctx, tc, &dev) && dev == TX_DEVICE_CPU, "device %d", dev);
        CHECK(tx_ctx_finish(ctx) == TX_STATUS_OK, "finish: %s", tx_last_error(ctx));

        /* GPU requests: a tensor, a move, an op's output */
        tx_tensor g = {0}, moved = {0};
        st = tx_tensor_create(
            ctx, &(tx_tensor_desc){.rank = 2, .shape = {2, 3}, .data = a, .device = TX_DEVICE_GPU},
            &g);
        CHECK(st == TX_STATUS_UNSUPPORTED && !g.id && says_no_gpu(ctx), "gpu tensor: %s: %s",
              tx_status_name(st), tx_last_error(ctx));
        CHECK(strstr(tx_last_error(ctx), "tx_tensor_create") != NULL, "op named: %s",
              tx_last_error(ctx));
        st = tx_tensor_to(ctx, ta, TX_DEVICE_GPU, &moved);
        CHECK(st == TX_STATUS_UNSUPPORTED && !moved.id && says_no_gpu(ctx), "to gpu: %s: %s",
              tx_status_name(st), tx_last_error(ctx));
        st = tx_ctx_restore(ctx);
        CHECK(st == TX_STATUS_UNSUPPORTED, "restore: %s", tx_status_name(st));
        /* the CPU still works after the refusals, and the values are kept */
        float y2[4] = {0};
        tx_tensor td = {0};
        st = tx_matmul(ctx, ta, tb, NULL, &td);
        st = st ? st : tx_tensor_read(ctx, td, y2, sizeof y2);
        CHECK(!st && y2[3] == 11, "after refusals: %s %g", tx_status_name(st), y2[3]);
        tx_tensor_destroy(ctx, ta);
        tx_tensor_destroy(ctx, tb);
        tx_tensor_destroy(ctx, tc);
        tx_tensor_destroy(ctx, td);
        tx_test_end();
    }

    if (tx_test_begin("ops: a NaN makes its softmax, log_softmax and log-sum-exp row NaN")) {
        /* rows of 13: the CPU kernels' vector body and their tail; NaN at 10
         * (body) in row 0, at 12 (tail) in row 2; rows 1 and 3 clean */
        enum { R = 13 };
        float v[4 * R];
        for (int i = 0; i < 4 * R; i++)
            v[i] = (float)((i * 7) % 11) * 0.5f - 2.0f;
        v[10] = NAN;
        v[2 * R + 12] = NAN;
        tx_tensor x = {0};
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {4, R}, .data = v}, &x);
        CHECK(!st, "%s", tx_last_error(ctx));
        const tx_op ops[] = {TX_OP_SOFTMAX, TX_OP_LOG_SOFTMAX, TX_OP_REDUCE_LOG_SUM_EXP};
        for (size_t k = 0; !st && k < sizeof ops / sizeof ops[0]; k++) {
            tx_tensor y = {0};
            float out[4 * R];
            bool lse = ops[k] == TX_OP_REDUCE_LOG_SUM_EXP;
            st = lse ? tx_reduce(ctx, ops[k], x, &(tx_reduce_desc){.n_axes = 1, .axes = {1}}, &y)
                     : tx_softmax(ctx, ops[k], x, NULL, &y);
            int w = lse ? 1 : R;
            st = st ? st : tx_tensor_read(ctx, y, out, sizeof(float) * (size_t)(4 * w));
            CHECK(!st, "%s: %s", tx_op_name(ops[k]), tx_last_error(ctx));
            for (int r = 0; !st && r < 4; r++) {
                double sum = 0;
                for (int i = 0; i < w; i++) {
                    float o = out[r * w + i];
                    CHECK((r % 2 == 0) == (isnan(o) != 0), "%s row %d [%d] = %g",
                          tx_op_name(ops[k]), r, i, (double)o);
                    sum += ops[k] == TX_OP_SOFTMAX ? o : 0;
                }
                if (ops[k] == TX_OP_SOFTMAX && r % 2)
                    CHECK(fabs(sum - 1.0) < 1e-5, "softmax row %d sums to %g", r, sum);
            }
            tx_tensor_destroy(ctx, y);
        }
        tx_tensor_destroy(ctx, x);
        tx_test_end();
    }

    if (tx_test_begin("ops: log_softmax keeps log(sum) beside a large max (rows and columns)")) {
        /* x - (m + log s) rounded m + log s to float: [-1e30, -1e30] gave 0 */
        float v[4] = {-1e30f, -1e30f, 1e30f, 1e30f};
        tx_tensor x = {0};
        st = tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {2, 2}, .data = v}, &x);
        CHECK(!st, "%s", tx_last_error(ctx));
        for (int axis = 0; !st && axis < 2; axis++) { /* 1: rows; 0: columns (the tiled path) */
            tx_tensor y = {0};
            float out[4];
            st = tx_softmax(ctx, TX_OP_LOG_SOFTMAX, x, &(tx_softmax_desc){.axis = axis}, &y);
            st = st ? st : tx_tensor_read(ctx, y, out, sizeof out);
            CHECK(!st, "%s", tx_last_error(ctx));
            for (int i = 0; !st && i < 4; i++) {
                /* rows: each row's two equal values give -log 2; columns: the
                 * larger value 0, the other -inf-ish (x - m = -2e30) */
                double want = axis == 1 ? -log(2.0) : (i >= 2 ? 0.0 : -2e30);
                CHECK(fabs(out[i] - want) <= 1e-6 * fmax(1.0, fabs(want)),
                      "axis %d [%d] = %g, want %g", axis, i, (double)out[i], want);
            }
            tx_tensor_destroy(ctx, y);
        }
        tx_tensor_destroy(ctx, x);
        tx_test_end();
    }

    size_t len = 0;
    void *bytes = tx_read_file(MODEL, &len);
    if (!bytes || !len) {
        tx_test_skip("sessions", MODEL " missing (scripts/setup.sh installs it)");
    } else if (tx_test_begin("sessions: auto decides the CPU at once; gpu is refused")) {
        tx_session *s = NULL;
        st = tx_session_create(ctx, bytes, len, NULL, &s);
        CHECK(!st && s, "auto: %s: %s", tx_status_name(st), tx_last_error(ctx));
        float last = 0;
        for (int run = 0; s && run < 3; run++) {
            st = run_add(ctx, s, TX_DEVICE_DEFAULT, &last);
            CHECK(!st && last == 88.5f, "run %d: %s %g: %s", run, tx_status_name(st), last,
                  tx_last_error(ctx));
        }
        tx_session_stats ss = {0};
        CHECK(s && !tx_session_stats_get(s, &ss) && ss.device == TX_DEVICE_CPU && ss.decided &&
                  !strcmp(ss.reason, "no GPU context") && ss.runs_gpu == 0 && ss.runs_cpu == 3,
              "device %d decided %d reason '%s' runs gpu %llu cpu %llu", ss.device, ss.decided,
              ss.reason, (unsigned long long)ss.runs_gpu, (unsigned long long)ss.runs_cpu);
        tx_session_destroy(s);

        tx_session *g = NULL;
        st = tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = TX_DEVICE_GPU}, &g);
        CHECK(st == TX_STATUS_UNSUPPORTED && !g && says_no_gpu(ctx), "gpu session: %s: %s",
              tx_status_name(st), tx_last_error(ctx));
        tx_session *c = NULL;
        st = tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = TX_DEVICE_CPU}, &c);
        CHECK(!st && c && !run_add(ctx, c, TX_DEVICE_DEFAULT, &last) && last == 88.5f,
              "cpu session: %s", tx_last_error(ctx));
        tx_session_destroy(c);
        tx_test_end();
    }
    free(bytes);
    tx_ctx_destroy(ctx);
    return tx_test_finish();
}
