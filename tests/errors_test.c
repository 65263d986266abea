/* Bad input gets a status and a message naming the op and the shapes; no GL
 * error escapes; the context stays usable afterwards. */
#include "glctx.h"
#include "harness.h"
#include "internal.h"
#include "expect.h"

static tx_host *g_host;

static tx_ctx *open_ctx(tx_ctx_desc d) {
    tx_ctx *ctx = NULL;
    int rc = tx_host_open(&d, &g_host, &ctx);
    if (rc == TX_HOST_NO_CONTEXT)
        exit(77);
    if (rc)
        exit(1);
    return ctx;
}

static tx_tensor mk(tx_ctx *ctx, int rank, int64_t d0, int64_t d1, int64_t d2) {
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = rank, .shape = {d0, d1, d2}};
    if (tx_tensor_create(ctx, &d, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}


int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_ctx *ctx = open_ctx((tx_ctx_desc){.max_texture_size = 64, .memory_budget = 1 << 20});
    tx_tensor y = {0};

    if (tx_test_begin("binary shapes that do not broadcast")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 3, 5, 0);
        EXPECT(tx_binary(ctx, TX_OP_ADD, a, b, &y), TX_STATUS_SHAPE_MISMATCH, "add", "[3, 4]",
               "[3, 5]");
        tx_tensor_destroy(ctx, a);
        tx_tensor_destroy(ctx, b);
        tx_test_end();
    }
    if (tx_test_begin("matmul inner dims differ")) {
        tx_tensor a = mk(ctx, 2, 3, 4, 0), b = mk(ctx, 2, 5, 6, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "matmul", "[3, 4]",
               "[5, 6]");
        tx_tensor_destroy(ctx, a);
        tx_tensor_destroy(ctx, b);
        tx_test_end();
    }
    if (tx_test_begin("matmul batch dims do not broadcast; bad bias; bad activation")) {
        tx_tensor a = mk(ctx, 3, 2, 3, 4), b = mk(ctx, 3, 3, 4, 5), c = mk(ctx, 1, 4, 0, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "matmul", "batch");
        tx_tensor b2 = mk(ctx, 2, 4, 5, 0);
        EXPECT(tx_matmul(ctx, a, b2, &(tx_matmul_desc){.bias = c}, &y), TX_STATUS_SHAPE_MISMATCH,
               "bias", "[4]");
        EXPECT(tx_matmul(ctx, a, b2, &(tx_matmul_desc){.activation = TX_OP_ADD}, &y),
               TX_STATUS_INVALID_ARGUMENT, "activation");
        tx_tensor_destroy(ctx, a);
        tx_tensor_destroy(ctx, b);
        tx_tensor_destroy(ctx, b2);
        tx_tensor_destroy(ctx, c);
        tx_test_end();
    }
    if (tx_test_begin("rank above 6")) {
        tx_tensor t;
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 7}, &t), TX_STATUS_RANK_TOO_HIGH,
               "rank 7", "6");
        tx_tensor a = mk(ctx, 1, 8, 0, 0), v;
        EXPECT(tx_tensor_reshape(ctx, a, 7, (int64_t[]){1, 1, 1, 1, 1, 1, 8}, &v),
               TX_STATUS_RANK_TOO_HIGH, "reshape");
        tx_tensor_destroy(ctx, a);
        tx_test_end();
    }
    if (tx_test_begin("negative and overflowing dims")) {
        tx_tensor t;
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, -1}}, &t),
               TX_STATUS_INVALID_ARGUMENT, "negative", "[3, -1]");
        EXPECT(tx_tensor_create(ctx,
                                &(tx_tensor_desc){.rank = 3,
                                                  .shape = {1LL << 40, 1LL << 40, 1LL << 40}},
                                &t),
               TX_STATUS_TOO_LARGE, "too many elements");
        tx_test_end();
    }
    if (tx_test_begin("stale handles")) {
        tx_tensor a = mk(ctx, 1, 4, 0, 0), b = mk(ctx, 1, 4, 0, 0);
        tx_tensor_destroy(ctx, a);
        tx_tensor a2 = mk(ctx, 1, 4, 0, 0); /* may reuse the slot: generation differs */
        EXPECT(tx_binary(ctx, TX_OP_ADD, a, b, &y), TX_STATUS_STALE_HANDLE, "add", "a");
        EXPECT(tx_tensor_destroy(ctx, a), TX_STATUS_STALE_HANDLE, "destroy");
        EXPECT(tx_tensor_read(ctx, a, (float[4]){0}, 16), TX_STATUS_STALE_HANDLE, "read");
        EXPECT(tx_unary(ctx, TX_OP_RELU, (tx_tensor){0}, &y), TX_STATUS_STALE_HANDLE, "relu");
        EXPECT(tx_unary(ctx, TX_OP_RELU, (tx_tensor){0xFFFFFFFFu}, &y), TX_STATUS_STALE_HANDLE,
               "relu");
        tx_tensor_destroy(ctx, a2);
        tx_tensor_destroy(ctx, b);
        tx_test_end();
    }
    if (tx_test_begin("tensor over the device texture limit")) {
        tx_tensor t;
        /* 64 × 64 texels × 4 = 16384 values fit; one more does not */
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {16385}}, &t),
               TX_STATUS_TOO_LARGE, "16385", "MAX_TEXTURE_SIZE 64");
        tx_tensor a = mk(ctx, 2, 120, 8, 0), b = mk(ctx, 2, 8, 140, 0);
        EXPECT(tx_matmul(ctx, a, b, NULL, &y), TX_STATUS_TOO_LARGE, "matmul", "[120, 140]",
               "16800 elements");
        tx_tensor_destroy(ctx, a);
        tx_tensor_destroy(ctx, b);
        tx_test_end();
    }
    if (tx_test_begin("memory budget: out-of-memory status, live tensors intact")) {
        float v[1024];
        for (int i = 0; i < 1024; i++)
            v[i] = (float)i;
        tx_tensor keep;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {1024}, .data = v},
                                &keep),
              "%s", tx_last_error(ctx));
        tx_tensor many[64];
        int n = 0;
        tx_status s = TX_STATUS_OK;
        while (n < 64 && !(s = tx_tensor_create(
                               ctx, &(tx_tensor_desc){.rank = 1, .shape = {16000}}, &many[n])))
            n++;
        CHECK(s == TX_STATUS_OUT_OF_MEMORY, "got %s after %d tensors", tx_status_name(s), n);
        CHECK(strstr(tx_last_error(ctx), "budget") != NULL, "%s", tx_last_error(ctx));
        float back[1024];
        CHECK(!tx_tensor_read(ctx, keep, back, sizeof back), "%s", tx_last_error(ctx));
        CHECK(memcmp(back, v, sizeof v) == 0, "live tensor changed");
        for (int i = 0; i < n; i++)
            tx_tensor_destroy(ctx, many[i]);
        tx_tensor again;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {16000}}, &again),
              "usable after OOM: %s", tx_last_error(ctx));
        tx_tensor_destroy(ctx, again);
        tx_tensor_destroy(ctx, keep);
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        CHECK(st.live_texture_bytes + st.pooled_texture_bytes <= (1u << 20),
              "live + pooled %llu over budget",
              (unsigned long long)(st.live_texture_bytes + st.pooled_texture_bytes));
        tx_test_end();
    }
    if (tx_test_begin("null pointers and bad enums")) {
        tx_tensor a = mk(ctx, 1, 4, 0, 0);
        EXPECT(tx_unary(ctx, TX_OP_RELU, a, NULL), TX_STATUS_INVALID_ARGUMENT, "out");
        EXPECT(tx_tensor_create(ctx, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "desc");
        EXPECT(tx_tensor_read(ctx, a, NULL, 16), TX_STATUS_INVALID_ARGUMENT, "dst");
        EXPECT(tx_tensor_read(ctx, a, (float[2]){0}, 8), TX_STATUS_SHAPE_MISMATCH, "8 bytes");
        EXPECT(tx_unary(ctx, TX_OP_ADD, a, &y), TX_STATUS_INVALID_ARGUMENT, "not a unary");
        EXPECT(tx_binary(ctx, TX_OP_RELU, a, a, &y), TX_STATUS_INVALID_ARGUMENT, "not a binary");
        EXPECT(tx_op_run(ctx, (tx_op)9999, &a, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
               "unknown op");
        EXPECT(tx_clip(ctx, a, 2, 1, &y), TX_STATUS_INVALID_ARGUMENT, "clip");
        EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = 9}, &y),
               TX_STATUS_INVALID_ARGUMENT, "dtype");
        CHECK(tx_ctx_create(NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "null out");
        CHECK(tx_unary(NULL, TX_OP_RELU, a, &y) == TX_STATUS_INVALID_ARGUMENT, "null ctx");
        tx_tensor_destroy(ctx, a);
        tx_test_end();
    }
    if (tx_test_begin("dtype mismatch")) {
        tx_tensor f = mk(ctx, 1, 4, 0, 0), i;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = TX_DTYPE_INT32}, &i), "create");
        EXPECT(tx_binary(ctx, TX_OP_ADD, f, i, &y), TX_STATUS_DTYPE_MISMATCH, "add", "int32");
        EXPECT(tx_matmul(ctx, i, i, NULL, &y), TX_STATUS_DTYPE_MISMATCH, "matmul");
        tx_tensor_destroy(ctx, f);
        tx_tensor_destroy(ctx, i);
        tx_test_end();
    }
    if (tx_test_begin("reshape views: no draw, shared storage, bad shapes refused")) {
        float v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        tx_tensor a, r;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {3, 4}, .data = v}, &a), "create");
        tx_stats s0;
        tx_ctx_stats(ctx, &s0);
        CHECK(!tx_tensor_reshape(ctx, a, 3, (int64_t[]){2, -1, 3}, &r), "%s", tx_last_error(ctx));
        int rank;
        int64_t sh[TX_MAX_RANK];
        tx_tensor_shape(ctx, r, &rank, sh, NULL);
        CHECK(rank == 3 && sh[1] == 2, "inferred dim %lld", (long long)sh[1]);
        tx_stats s1;
        tx_ctx_stats(ctx, &s1);
        CHECK(s1.draws == s0.draws && s1.live_texture_bytes == s0.live_texture_bytes, "view drew or allocated");
        tx_tensor_destroy(ctx, a);
        float back[12];
        CHECK(!tx_tensor_read(ctx, r, back, sizeof back) && memcmp(back, v, sizeof v) == 0,
              "view must outlive its source");
        EXPECT(tx_tensor_reshape(ctx, r, 2, (int64_t[]){5, 3}, &y), TX_STATUS_SHAPE_MISMATCH,
               "12 elements", "[5, 3]");
        EXPECT(tx_tensor_reshape(ctx, r, 2, (int64_t[]){-1, -1}, &y), TX_STATUS_INVALID_ARGUMENT,
               "-1");
        tx_tensor_destroy(ctx, r);
        tx_test_end();
    }
    tx_host_close(g_host, ctx);

    if (tx_test_begin("specialized compile failure falls back to generic, results right")) {
        ctx = open_ctx((tx_ctx_desc){.specialize_after = 1, .no_parallel_compile = true});
        float v[8] = {-1, 2, -3, 4, -5, 6, -7, 8}, out[8];
        tx_tensor a;
        CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = v}, &a), "create");
        printf("  (an injected link failure follows; its log below is expected)\n");
        ctx->fault_specialized = true;
        for (int i = 0; i < 4; i++) {
            CHECK(!tx_unary(ctx, TX_OP_RELU, a, &y), "%s", tx_last_error(ctx));
            CHECK(!tx_tensor_read(ctx, y, out, sizeof out), "read");
            for (int j = 0; j < 8; j++)
                CHECK(out[j] == (v[j] < 0 ? 0 : v[j]), "call %d elem %d = %g", i, j, (double)out[j]);
            tx_tensor_destroy(ctx, y);
        }
        tx_stats s;
        tx_ctx_stats(ctx, &s);
        CHECK(s.compile_failures == 1 && s.specialized_runs == 0 && s.generic_runs == 4,
              "%llu failures, %llu specialized runs, %llu generic runs",
              (unsigned long long)s.compile_failures, (unsigned long long)s.specialized_runs,
              (unsigned long long)s.generic_runs);
        tx_host_close(g_host, ctx);
        tx_test_end();
    }
    return tx_test_finish();
}
