/* ONNX semantics the random sweep cannot reach: reduction trees deeper than
 * the sweep's 64-wide textures allow (with their draw counts), ArgMax ties
 * across partial states, NaN propagation, round half to even, casts from
 * int32, and layer_norm on values with a large mean. */
#include <math.h>

#include "check.h"
#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "tensors.h"

static tx_ctx *g_ctx;

static tx_tensor vec(int64_t n, const float *v, tx_dtype dt) {
    tx_tensor t = {0};
    if (tx_tensor_create(g_ctx, &(tx_tensor_desc){.rank = 1, .shape = {n}, .dtype = dt, .data = v},
                         &t))
        printf("  create failed: %s\n", tx_last_error(g_ctx));
    return t;
}

/* Reads t (float32 or int32, as floats) into v[n]. */
static bool fetch(tx_tensor t, float *v, int64_t n) {
    tx_dtype dt;
    int rank;
    if (tx_tensor_shape(g_ctx, t, &rank, NULL, &dt))
        return false;
    if (tx_tensor_read(g_ctx, t, v, (size_t)n * 4))
        return false;
    if (dt == TX_DTYPE_INT32)
        for (int64_t i = 0; i < n; i++) {
            int32_t x;
            memcpy(&x, &v[i], 4);
            v[i] = (float)x;
        }
    return true;
}

static bool same(float got, float want) {
    if (isnan(want))
        return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

static uint64_t draws(void) {
    tx_stats s;
    tx_ctx_stats(g_ctx, &s);
    return s.draws;
}

static void check_case(tx_op op, const char *shape, tx_op_attrs attrs, uint64_t want_draws) {
    tx_check_desc d = {.op = op, .n_inputs = 1, .attrs = attrs, .seed = 3};
    d.rank[0] = tx_parse_shape(shape, d.shape[0]);
    uint64_t d0 = draws();
    tx_check_result r;
    tx_check_run(g_ctx, &d, &r);
    CHECK(r.status == TX_STATUS_OK, "%s", r.error);
    CHECK(r.bad == 0, "%lld of %lld out of tolerance; first at %lld: got %.9g want %.9g",
          (long long)r.bad, (long long)r.numel, (long long)r.first_bad, (double)r.first_bad_got,
          (double)r.first_bad_want);
    if (want_draws)
        CHECK(draws() - d0 == want_draws, "%llu draws, want %llu",
              (unsigned long long)(draws() - d0), (unsigned long long)want_draws);
    free(r.call_ms);
}

/* ArgMax/ArgMin of x with or without select_last_index, and the index each
 * must give: want[0] over plain numbers, want[1] once x holds NaNs. */
typedef struct {
    tx_op op;
    bool last;
    float want[2];
} arg_case;

static void check_arg_cases(tx_tensor x, const arg_case *cases, size_t n, bool nan) {
    for (size_t i = 0; i < n; i++) {
        tx_tensor y;
        tx_status s = tx_reduce(g_ctx, cases[i].op, x,
                                &(tx_reduce_desc){.select_last_index = cases[i].last}, &y);
        CHECK(!s, "%s", tx_last_error(g_ctx));
        if (s)
            continue;
        tx_dtype dt;
        int rank;
        float got;
        tx_tensor_shape(g_ctx, y, &rank, NULL, &dt);
        CHECK(dt == TX_DTYPE_INT32 && rank == 1, "dtype %d rank %d", (int)dt, rank);
        float want = cases[i].want[nan];
        CHECK(fetch(y, &got, 1) && got == want, "%s%s last=%d: got %g want %g", nan ? "NaN " : "",
              tx_op_name(cases[i].op), cases[i].last, (double)got, (double)want);
        tx_tensor_destroy(g_ctx, y);
    }
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_host *h;
    g_ctx = tx_test_open_ctx((tx_ctx_desc){.specialize_after = 1}, &h);
    tx_tensor y;

    /* Draws of a tree: a partial pass per 1024 values of x, then passes of 32
     * states per fragment on a GPU, 1024 on a software rasterizer (each pass
     * is a program its first draw translates there): `hw` draws on a GPU, one
     * fewer in every case below on llvmpipe. */
    uint64_t soft = g_ctx->software_gl ? 1 : 0;
    if (tx_test_begin(
            "tree: sum of 1M values is 3 draws on a GPU (1024 -> 32 -> 1), 2 in software")) {
        check_case(TX_OP_REDUCE_SUM, "1048576", (tx_op_attrs){0}, 3 - soft);
        tx_test_end();
    }
    if (tx_test_begin(
            "tree: 1.5M values merge states twice (1536 -> 48 -> 2 -> 1; 1536 -> 2 -> 1)")) {
        /* software: the one case here whose states outnumber a fragment's
         * 1024, so its state-to-state partial pass runs on llvmpipe too */
        check_case(TX_OP_REDUCE_SUM, "1572864", (tx_op_attrs){0}, 4 - soft);
        check_case(TX_OP_REDUCE_MAX, "3x524288",
                   (tx_op_attrs){.reduce = {.n_axes = 2, .axes = {0, 1}}}, 4 - soft);
        tx_test_end();
    }
    if (tx_test_begin("tree: 3 levels (2 in software) for mean over axis 0 and softmax rows")) {
        check_case(TX_OP_REDUCE_MEAN, "40000x3",
                   (tx_op_attrs){.reduce = {.n_axes = 1, .axes = {0}}}, 3 - soft);
        /* 40 partials per row -> 2 -> 1 state, then the normalizing pass */
        check_case(TX_OP_SOFTMAX, "2x40000", (tx_op_attrs){.softmax = {.axis = 1}}, 4 - soft);
        check_case(TX_OP_LOG_SOFTMAX, "3x35001", (tx_op_attrs){.softmax = {.axis = -1}}, 4 - soft);
        check_case(TX_OP_REDUCE_LOG_SUM_EXP, "70000", (tx_op_attrs){0}, 3 - soft);
        /* 4 adjacent outputs per state texel (innermost kept dim % 4 == 0) */
        check_case(TX_OP_REDUCE_MAX, "40000x8", (tx_op_attrs){.reduce = {.n_axes = 1, .axes = {0}}},
                   3 - soft);
        check_case(TX_OP_REDUCE_L1, "3x36000x4",
                   (tx_op_attrs){.reduce = {.n_axes = 1, .axes = {1}}}, 3 - soft);
        tx_test_end();
    }
    if (tx_test_begin("argmax/argmin: ties across partial states keep the first (or last)")) {
        enum { N = 100000 };
        float *v = calloc(N, sizeof(float));
        v[3000] = v[70000] = v[99999] = 5;
        v[50] = v[66000] = -1;
        tx_tensor x = vec(N, v, TX_DTYPE_FLOAT32);
        /* the index without NaNs, then with the NaNs at 40000 and 80000 */
        static const arg_case cases[] = {
            {TX_OP_ARGMAX, false, {3000, 40000}},
            {TX_OP_ARGMAX, true, {99999, 80000}},
            {TX_OP_ARGMIN, false, {50, 40000}},
            {TX_OP_ARGMIN, true, {66000, 80000}},
        };
        check_arg_cases(x, cases, TX_COUNTOF(cases), false);
        /* NaN beats every number (numpy): the first NaN, or the last one */
        v[40000] = v[80000] = NAN;
        tx_tensor_write(g_ctx, x, v, N * sizeof(float));
        check_arg_cases(x, cases, TX_COUNTOF(cases), true);
        tx_tensor_destroy(g_ctx, x);
        free(v);
        tx_test_end();
    }
    if (tx_test_begin("NaN propagates through reductions, softmax, min_n/max_n")) {
        float v[8] = {1, 2, NAN, 4, 5, 6, 7, 8}, out[8];
        tx_tensor x = vec(8, v, TX_DTYPE_FLOAT32), x2;
        tx_tensor_reshape(g_ctx, x, 2, (int64_t[]){2, 4}, &x2);
        tx_op ops[] = {TX_OP_REDUCE_SUM,  TX_OP_REDUCE_MAX,         TX_OP_REDUCE_MIN,
                       TX_OP_REDUCE_PROD, TX_OP_REDUCE_LOG_SUM_EXP, TX_OP_REDUCE_MEAN,
                       TX_OP_REDUCE_L2};
        for (size_t i = 0; i < TX_COUNTOF(ops); i++) {
            CHECK(!tx_reduce(g_ctx, ops[i], x2, &(tx_reduce_desc){.n_axes = 1, .axes = {1}}, &y),
                  "%s", tx_last_error(g_ctx));
            CHECK(fetch(y, out, 2) && isnan(out[0]) && !isnan(out[1]), "%s: got %g %g",
                  tx_op_name(ops[i]), (double)out[0], (double)out[1]);
            tx_tensor_destroy(g_ctx, y);
            /* axis 0: the 4 outputs share texels (packed lane states) */
            CHECK(!tx_reduce(g_ctx, ops[i], x2, &(tx_reduce_desc){.n_axes = 1, .axes = {0}}, &y),
                  "%s", tx_last_error(g_ctx));
            CHECK(fetch(y, out, 4) && isnan(out[2]) && !isnan(out[0]) && !isnan(out[1]) &&
                      !isnan(out[3]),
                  "%s axis 0: got %g %g %g %g", tx_op_name(ops[i]), (double)out[0], (double)out[1],
                  (double)out[2], (double)out[3]);
            tx_tensor_destroy(g_ctx, y);
        }
        CHECK(!tx_softmax(g_ctx, TX_OP_SOFTMAX, x2, NULL, &y), "%s", tx_last_error(g_ctx));
        CHECK(fetch(y, out, 8), "read");
        for (int i = 0; i < 4; i++)
            CHECK(isnan(out[i]) && !isnan(out[4 + i]), "softmax %d: %g / %g", i, (double)out[i],
                  (double)out[4 + i]);
        tx_tensor_destroy(g_ctx, y);
        float w[8] = {0, 9, 0, 0, 9, 0, 0, 0};
        tx_tensor b = vec(8, w, TX_DTYPE_FLOAT32);
        tx_op nops[] = {TX_OP_MIN_N, TX_OP_MAX_N, TX_OP_SUM};
        for (size_t i = 0; i < TX_COUNTOF(nops); i++) {
            CHECK(!tx_nary(g_ctx, nops[i], (tx_tensor[]){b, x, b}, 3, &y), "%s",
                  tx_last_error(g_ctx));
            CHECK(fetch(y, out, 8) && isnan(out[2]) && !isnan(out[3]), "%s: %g %g",
                  tx_op_name(nops[i]), (double)out[2], (double)out[3]);
            tx_tensor_destroy(g_ctx, y);
        }
        TX_DESTROY(g_ctx, x, x2, b);
        tx_test_end();
    }
    if (tx_test_begin("every unary, clip and alpha/beta activation maps NaN to NaN")) {
        float v[4] = {NAN, -NAN, 1, -1}, out[4];
        tx_tensor x = vec(4, v, TX_DTYPE_FLOAT32);
        for (int op = 1; op < TX_OP_COUNT_; op++) {
            tx_family f = tx_op_family((tx_op)op);
            if (f != TX_FAMILY_UNARY && f != TX_FAMILY_ACT)
                continue;
            tx_status s = f == TX_FAMILY_ACT ? tx_activation(g_ctx, (tx_op)op, x, 0.5f, 0.5f, &y)
                                             : tx_unary(g_ctx, (tx_op)op, x, &y);
            CHECK(!s, "%s", tx_last_error(g_ctx));
            if (s)
                continue;
            CHECK(fetch(y, out, 4), "read");
            if (op == TX_OP_NOT) /* a NaN boolean is true */
                CHECK(out[0] == 0 && out[1] == 0, "not(NaN) = %g", (double)out[0]);
            else if (op == TX_OP_IS_NAN)
                CHECK(out[0] == 1 && out[1] == 1 && out[2] == 0, "is_nan: %g %g", (double)out[0],
                      (double)out[2]);
            else
                CHECK(isnan(out[0]) && isnan(out[1]), "%s(NaN) = %g, %g", tx_op_name((tx_op)op),
                      (double)out[0], (double)out[1]);
            tx_tensor_destroy(g_ctx, y);
        }
        CHECK(!tx_clip(g_ctx, x, -0.5f, 0.5f, &y), "%s", tx_last_error(g_ctx));
        CHECK(fetch(y, out, 4) && isnan(out[0]) && out[2] == 0.5f && out[3] == -0.5f,
              "clip: %g %g %g", (double)out[0], (double)out[2], (double)out[3]);
        TX_DESTROY(g_ctx, y, x);
        tx_test_end();
    }
    if (tx_test_begin("comparisons, where and sign with NaN; round half to even")) {
        float a[8] = {NAN, 1, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f};
        float b[8] = {NAN, 1, 0, 0, 0, 0, 0, 0};
        float out[8];
        tx_tensor ta = vec(8, a, TX_DTYPE_FLOAT32), tb = vec(8, b, TX_DTYPE_FLOAT32);
        struct {
            tx_op op;
            float w0, w1;
        } cmp[] = {
            {TX_OP_EQUAL, 0, 1},   {TX_OP_LESS, 0, 0},       {TX_OP_GREATER_EQUAL, 0, 1},
            {TX_OP_GREATER, 0, 0}, {TX_OP_LESS_EQUAL, 0, 1},
        };
        for (size_t i = 0; i < TX_COUNTOF(cmp); i++) {
            CHECK(!tx_binary(g_ctx, cmp[i].op, ta, tb, &y), "%s", tx_last_error(g_ctx));
            CHECK(fetch(y, out, 8) && out[0] == cmp[i].w0 && out[1] == cmp[i].w1, "%s: %g %g",
                  tx_op_name(cmp[i].op), (double)out[0], (double)out[1]);
            tx_tensor_destroy(g_ctx, y);
        }
        /* NaN is nonzero: where picks a; and/or treat it as true */
        CHECK(!tx_nary(g_ctx, TX_OP_WHERE, (tx_tensor[]){ta, tb, ta}, 3, &y), "%s",
              tx_last_error(g_ctx));
        CHECK(fetch(y, out, 8) && isnan(out[0]) && out[1] == 1 && out[2] == 0, "where %g %g %g",
              (double)out[0], (double)out[1], (double)out[2]);
        tx_tensor_destroy(g_ctx, y);
        CHECK(!tx_unary(g_ctx, TX_OP_SIGN, ta, &y), "%s", tx_last_error(g_ctx));
        CHECK(fetch(y, out, 8) && isnan(out[0]) && out[2] == -1 && out[5] == 1, "sign");
        tx_tensor_destroy(g_ctx, y);
        CHECK(!tx_unary(g_ctx, TX_OP_ROUND, ta, &y), "%s", tx_last_error(g_ctx));
        float want[8] = {NAN, 1, -2, -2, -0.0f, 0, 2, 2};
        CHECK(fetch(y, out, 8), "read");
        for (int i = 0; i < 8; i++)
            CHECK(same(out[i], want[i]), "round(%g) = %g, want %g", (double)a[i], (double)out[i],
                  (double)want[i]);
        TX_DESTROY(g_ctx, y, ta, tb);
        tx_test_end();
    }
    if (tx_test_begin("cast between float32, int32 and bool; int32 reductions")) {
        float f[6] = {-3.7f, 3.7f, NAN, 0, -0.5f, 16777216};
        int32_t iv[6] = {-3, 0, 7, 16777216, -1, 5};
        float out[6];
        tx_tensor tf = vec(6, f, TX_DTYPE_FLOAT32), ti = vec(6, (const float *)iv, TX_DTYPE_INT32);
        CHECK(!tx_cast(g_ctx, tf, TX_DTYPE_INT32, false, &y), "%s", tx_last_error(g_ctx));
        float w1[6] = {-3, 3, 0, 0, 0, 16777216};
        CHECK(fetch(y, out, 6), "read");
        for (int i = 0; i < 6; i++)
            CHECK(out[i] == w1[i], "int(%g) = %g", (double)f[i], (double)out[i]);
        tx_tensor_destroy(g_ctx, y);
        CHECK(!tx_cast(g_ctx, tf, TX_DTYPE_FLOAT32, true, &y), "%s", tx_last_error(g_ctx));
        float w2[6] = {1, 1, 1, 0, 1, 1};
        CHECK(fetch(y, out, 6), "read");
        for (int i = 0; i < 6; i++)
            CHECK(out[i] == w2[i], "bool(%g) = %g", (double)f[i], (double)out[i]);
        tx_tensor_destroy(g_ctx, y);
        CHECK(!tx_cast(g_ctx, ti, TX_DTYPE_FLOAT32, false, &y), "%s", tx_last_error(g_ctx));
        tx_dtype dt;
        int rank;
        tx_tensor_shape(g_ctx, y, &rank, NULL, &dt);
        CHECK(dt == TX_DTYPE_FLOAT32 && fetch(y, out, 6), "dtype %d", (int)dt);
        for (int i = 0; i < 6; i++)
            CHECK(out[i] == (float)iv[i], "float(%d) = %g", iv[i], (double)out[i]);
        tx_tensor_destroy(g_ctx, y);
        CHECK(!tx_reduce(g_ctx, TX_OP_REDUCE_SUM, ti, NULL, &y), "%s", tx_last_error(g_ctx));
        tx_tensor_shape(g_ctx, y, &rank, NULL, &dt);
        CHECK(dt == TX_DTYPE_INT32 && fetch(y, out, 1) && out[0] == 16777224.0f,
              "int sum %g (dtype %d)", (double)out[0], (int)dt);
        TX_DESTROY(g_ctx, y, tf, ti);
        tx_test_end();
    }
    if (tx_test_begin("layer_norm and instance_norm on values with a large mean")) {
        float v[8], out[8], one = 1, zero = 0;
        for (int i = 0; i < 8; i++)
            v[i] = 10000.0f + 0.5f * (float)i;
        tx_tensor x = vec(8, v, TX_DTYPE_FLOAT32), s = vec(1, &one, TX_DTYPE_FLOAT32),
                  b = vec(1, &zero, TX_DTYPE_FLOAT32), x3;
        CHECK(!tx_norm(g_ctx, TX_OP_LAYER_NORM, (tx_tensor[]){x, s, b}, 3,
                       &(tx_norm_desc){.axis = 0}, &y),
              "%s", tx_last_error(g_ctx));
        double mean = 10001.75, var = 0.25 * 5.25;
        CHECK(fetch(y, out, 8), "read");
        for (int i = 0; i < 8; i++) {
            double want = (v[i] - mean) / sqrt(var + 1e-5);
            CHECK(fabs(out[i] - want) < 1e-4, "[%d] %g want %g", i, (double)out[i], want);
        }
        tx_tensor_destroy(g_ctx, y);
        tx_tensor_reshape(g_ctx, x, 3, (int64_t[]){1, 1, 8}, &x3);
        CHECK(!tx_norm(g_ctx, TX_OP_INSTANCE_NORM, (tx_tensor[]){x3, s, b}, 3, NULL, &y), "%s",
              tx_last_error(g_ctx));
        CHECK(fetch(y, out, 8), "read");
        for (int i = 0; i < 8; i++) {
            double want = (v[i] - mean) / sqrt(var + 1e-5);
            CHECK(fabs(out[i] - want) < 1e-4, "[%d] %g want %g", i, (double)out[i], want);
        }
        TX_DESTROY(g_ctx, y, x, x3, s, b);
        tx_test_end();
    }
    if (tx_test_begin("no leaks, no failed compiles")) {
        tx_test_expect_clean(g_ctx);
        tx_test_end();
    }
    tx_host_close(h, g_ctx);
    return tx_test_finish();
}
