/* Bad input at every public entry of texel.h: each case expects a specific
 * status and words of its message, leaves the output untouched, lets no GL
 * error escape, and the context keeps working afterwards. Walks texel.h top to
 * bottom; a new public function gets its cases here. */
#include <math.h>

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include "expect.h"
#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "tensors.h"

static tx_host *g_host;
static tx_ctx *ctx;
static const tx_tensor k_sentinel = {0xC0FFEEu};

/* As EXPECT, for calls with a tx_tensor output `y` that must stay untouched. */
#define EXPECT_NO_OUT(call, status, ...)                                                           \
    do {                                                                                           \
        y = k_sentinel;                                                                            \
        EXPECT(call, status, __VA_ARGS__);                                                         \
        CHECK(y.id == k_sentinel.id, "%s wrote its output on failure", #call);                     \
    } while (0)

static tx_tensor mk(int rank, const int64_t *shape, tx_dtype dtype, const void *data) {
    return tx_test_tensor(ctx, rank, shape, dtype, data);
}

static tx_glproc get_proc(const char *name) {
    return (tx_glproc)glfwGetProcAddress(name);
}

static void test_context_entries(void) {
    if (!tx_test_begin("context entries: tx_ctx_* with NULL and bad desc fields"))
        return;
    tx_ctx *c2 = (tx_ctx *)&c2;
    CHECK(tx_ctx_create(NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "null out");
    CHECK(tx_ctx_create(&(tx_ctx_desc){0}, &c2) == TX_STATUS_INVALID_ARGUMENT && c2 == NULL,
          "NULL get_proc_address");
    c2 = (tx_ctx *)&c2;
    CHECK(tx_ctx_create(&(tx_ctx_desc){.get_proc_address = get_proc, .max_texture_size = -4},
                        &c2) == TX_STATUS_INVALID_ARGUMENT &&
              c2 == NULL,
          "negative max_texture_size");
    CHECK(tx_ctx_create(&(tx_ctx_desc){.get_proc_address = get_proc, .max_specialized = -1}, &c2) ==
              TX_STATUS_INVALID_ARGUMENT,
          "negative max_specialized");
    tx_ctx_destroy(NULL);
    tx_ctx_trim(NULL);
    CHECK(strcmp(tx_last_error(NULL), "no context") == 0, "tx_last_error(NULL)");
    tx_caps caps;
    tx_stats st;
    CHECK(tx_ctx_caps(NULL, &caps) == TX_STATUS_INVALID_ARGUMENT, "caps ctx");
    CHECK(tx_ctx_caps(ctx, NULL) == TX_STATUS_INVALID_ARGUMENT, "caps out");
    CHECK(tx_ctx_stats(NULL, &st) == TX_STATUS_INVALID_ARGUMENT, "stats ctx");
    CHECK(tx_ctx_stats(ctx, NULL) == TX_STATUS_INVALID_ARGUMENT, "stats out");
    CHECK(tx_ctx_finish(NULL) == TX_STATUS_INVALID_ARGUMENT, "finish");
    CHECK(tx_ctx_specialize_after(NULL) == -1, "specialize_after");
    CHECK(tx_ctx_is_lost(NULL), "is_lost(NULL): no context is no usable context");
    tx_ctx_mark_lost(NULL);
    CHECK(tx_ctx_restore(NULL) == TX_STATUS_INVALID_ARGUMENT, "restore");
    CHECK(tx_ctx_generation(NULL) == 0, "generation");
    CHECK(tx_ctx_add_restore_hook(NULL, NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "add hook");
    CHECK(tx_ctx_add_restore_hook(ctx, NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "NULL hook");
    CHECK(tx_ctx_remove_restore_hook(NULL, NULL, NULL) == TX_STATUS_INVALID_ARGUMENT,
          "remove hook");
    CHECK(tx_ctx_remove_restore_hook(ctx, NULL, NULL) == TX_STATUS_INVALID_ARGUMENT,
          "remove a hook never added");
    CHECK(tx_ctx_restore(ctx) == TX_STATUS_INVALID_ARGUMENT &&
              strstr(tx_last_error(ctx), "tx_ctx_mark_lost"),
          "restore of a healthy context: %s", tx_last_error(ctx));
    tx_test_end();
}

static void test_status_and_op_tables(void) {
    if (!tx_test_begin("tx_status_name / tx_op_* with out-of-range values"))
        return;
    for (int s = 0; s < TX_STATUS_COUNT_; s++) {
        const char *n = tx_status_name((tx_status)s);
        CHECK(strncmp(n, "TX_STATUS_", 10) == 0 && strcmp(n, "TX_STATUS_?") != 0,
              "status %d named \"%s\"", s, n);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(n, tx_status_name((tx_status)t)) != 0, "statuses %d and %d share a name",
                  s, t);
    }
    CHECK(strcmp(tx_status_name((tx_status)-1), "TX_STATUS_?") == 0, "-1");
    CHECK(strcmp(tx_status_name(TX_STATUS_COUNT_), "TX_STATUS_?") == 0, "COUNT_");
    CHECK(strcmp(tx_op_name((tx_op)-1), "?") == 0 && strcmp(tx_op_name(TX_OP_COUNT_), "?") == 0,
          "op names");
    CHECK(tx_op_from_name(NULL) == TX_OP_NONE && tx_op_from_name("") == TX_OP_NONE &&
              tx_op_from_name("none") == TX_OP_NONE && tx_op_from_name("RELU") == TX_OP_NONE,
          "from_name");
    CHECK(tx_op_from_name("relu") == TX_OP_RELU, "relu");
    CHECK(tx_op_arity((tx_op)-3) == 0 && tx_op_arity(TX_OP_COUNT_) == 0, "arity");
    tx_test_end();
}

static void test_tensor_create(void) {
    if (!tx_test_begin("tx_tensor_create: NULLs, ranks, dims, overflow, dtypes, size"))
        return;
    tx_tensor y;
    CHECK(tx_tensor_create(NULL, &(tx_tensor_desc){.rank = 1, .shape = {4}}, &y) ==
              TX_STATUS_INVALID_ARGUMENT,
          "null ctx");
    EXPECT_NO_OUT(tx_tensor_create(ctx, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "desc");
    EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}}, NULL),
           TX_STATUS_INVALID_ARGUMENT, "out");
    EXPECT_NO_OUT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = -1}, &y),
                  TX_STATUS_INVALID_ARGUMENT, "negative rank -1");
    EXPECT_NO_OUT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = TX_MAX_RANK + 1}, &y),
                  TX_STATUS_RANK_TOO_HIGH, "rank 7", "6");
    EXPECT_NO_OUT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 3, .shape = {2, -3, 4}}, &y),
                  TX_STATUS_INVALID_ARGUMENT, "negative dimension", "[2, -3, 4]");
    /* 2^32 × 2^32 wraps to 0 in 64-bit arithmetic; caught before. */
    EXPECT_NO_OUT(
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {1LL << 32, 1LL << 32}}, &y),
        TX_STATUS_TOO_LARGE, "too many elements", "[4294967296, 4294967296]");
    EXPECT_NO_OUT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {INT64_MAX, 2}}, &y),
                  TX_STATUS_TOO_LARGE, "too many elements");
    /* Empty, but a dim no shader int can hold. */
    EXPECT_NO_OUT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {0, 1LL << 33}}, &y),
                  TX_STATUS_TOO_LARGE, "dimension 1", "2147483647");
    EXPECT_NO_OUT(
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = -1}, &y),
        TX_STATUS_INVALID_ARGUMENT, "unknown dtype -1");
    EXPECT_NO_OUT(
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .dtype = TX_DTYPE_COUNT_},
                         &y),
        TX_STATUS_INVALID_ARGUMENT, "unknown dtype");
    /* max_texture_size 64: 64 × 64 texels × 4 values; more is split across
     * textures (engine/split.h) unless even that exceeds the memory budget. */
    EXPECT_NO_OUT(
        tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {1 << 16, 1 << 14}}, &y),
        TX_STATUS_OUT_OF_MEMORY, "tx_tensor_create", "memory budget");
    EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {129, 128}}, &y),
           TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, y);
    /* The limits themselves are fine. */
    EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 2, .shape = {128, 128}}, &y),
           TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, y);
    EXPECT(tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 6, .shape = {1, 1, 0, 1, 1, 1}}, &y),
           TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, y);
    tx_test_end();
}

static void test_tensor_io(void) {
    if (!tx_test_begin("tx_tensor_destroy/write/read/shape: stale, NULL, byte counts"))
        return;
    float v[6] = {1, 2, 3, 4, 5, 6}, back[8];
    tx_tensor t = mk(2, (int64_t[]){2, 3}, TX_DTYPE_FLOAT32, v),
              dead = mk(1, (int64_t[]){1}, TX_DTYPE_FLOAT32, NULL);
    tx_tensor_destroy(ctx, dead);
    CHECK(tx_tensor_destroy(NULL, t) == TX_STATUS_INVALID_ARGUMENT, "destroy null ctx");
    EXPECT(tx_tensor_destroy(ctx, dead), TX_STATUS_STALE_HANDLE, "tx_tensor_destroy", "not a live");
    EXPECT(tx_tensor_destroy(ctx, (tx_tensor){0}), TX_STATUS_STALE_HANDLE, "0x00000000");
    EXPECT(tx_tensor_destroy(ctx, (tx_tensor){0xFFFFFu}), TX_STATUS_STALE_HANDLE, "0x000fffff");

    CHECK(tx_tensor_write(NULL, t, v, sizeof v) == TX_STATUS_INVALID_ARGUMENT, "write ctx");
    EXPECT(tx_tensor_write(ctx, dead, v, sizeof v), TX_STATUS_STALE_HANDLE, "tx_tensor_write");
    EXPECT(tx_tensor_write(ctx, t, NULL, sizeof v), TX_STATUS_INVALID_ARGUMENT, "data is NULL");
    EXPECT(tx_tensor_write(ctx, t, v, sizeof v - 4), TX_STATUS_SHAPE_MISMATCH, "20 bytes",
           "6 elements");
    EXPECT(tx_tensor_write(ctx, t, v, sizeof v + 4), TX_STATUS_SHAPE_MISMATCH, "28 bytes");
    EXPECT(tx_tensor_write(ctx, t, v, SIZE_MAX), TX_STATUS_SHAPE_MISMATCH, "24 bytes");

    CHECK(tx_tensor_read(NULL, t, back, sizeof back) == TX_STATUS_INVALID_ARGUMENT, "read ctx");
    EXPECT(tx_tensor_read(ctx, dead, back, sizeof back), TX_STATUS_STALE_HANDLE, "tx_tensor_read");
    EXPECT(tx_tensor_read(ctx, t, NULL, 24), TX_STATUS_INVALID_ARGUMENT, "dst is NULL");
    EXPECT(tx_tensor_read(ctx, t, back, 23), TX_STATUS_SHAPE_MISMATCH, "23 bytes", "needs 24");
    EXPECT(tx_tensor_read(ctx, t, back, sizeof back), TX_STATUS_OK, ""); /* more room is fine */
    CHECK(memcmp(back, v, sizeof v) == 0, "failed writes changed the tensor");

    int rank = -1;
    CHECK(tx_tensor_shape(NULL, t, &rank, NULL, NULL) == TX_STATUS_INVALID_ARGUMENT, "shape ctx");
    EXPECT(tx_tensor_shape(ctx, dead, &rank, NULL, NULL), TX_STATUS_STALE_HANDLE,
           "tx_tensor_shape");
    CHECK(rank == -1, "rank written on failure");
    EXPECT(tx_tensor_shape(ctx, t, NULL, NULL, NULL), TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, t);
    tx_test_end();
}

static void test_reshape(void) {
    if (!tx_test_begin("tx_tensor_reshape: NULLs, ranks, -1, negative, overflow, count"))
        return;
    tx_tensor t = mk(2, (int64_t[]){3, 4}, TX_DTYPE_FLOAT32, NULL), y;
    CHECK(tx_tensor_reshape(NULL, t, 1, (int64_t[]){12}, &y) == TX_STATUS_INVALID_ARGUMENT, "ctx");
    EXPECT(tx_tensor_reshape(ctx, t, 1, (int64_t[]){12}, NULL), TX_STATUS_INVALID_ARGUMENT, "out");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 2, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "shape");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, -1, (int64_t[]){12}, &y), TX_STATUS_INVALID_ARGUMENT,
                  "rank -1");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 7, (int64_t[]){1, 1, 1, 1, 1, 3, 4}, &y),
                  TX_STATUS_RANK_TOO_HIGH, "rank 7");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 2, (int64_t[]){-1, -1}, &y), TX_STATUS_INVALID_ARGUMENT,
                  "more than one -1");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 2, (int64_t[]){-2, 6}, &y), TX_STATUS_INVALID_ARGUMENT,
                  "negative dimension -2");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 3, (int64_t[]){1LL << 31, 1LL << 31, 4}, &y),
                  TX_STATUS_TOO_LARGE, "2147483648");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 3, (int64_t[]){1 << 30, 1 << 30, 1 << 30}, &y),
                  TX_STATUS_SHAPE_MISMATCH, "overflows", "[1073741824, 1073741824, 1073741824]");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 2, (int64_t[]){5, -1}, &y), TX_STATUS_SHAPE_MISMATCH,
                  "cannot infer", "[3, 4]");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 2, (int64_t[]){0, -1}, &y), TX_STATUS_SHAPE_MISMATCH,
                  "cannot infer");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 1, (int64_t[]){13}, &y), TX_STATUS_SHAPE_MISMATCH,
                  "12 elements", "[13]");
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 0, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "[]");
    tx_tensor_destroy(ctx, t);
    EXPECT_NO_OUT(tx_tensor_reshape(ctx, t, 1, (int64_t[]){12}, &y), TX_STATUS_STALE_HANDLE,
                  "tx_tensor_reshape");
    tx_test_end();
}

static void test_unary_clip(void) {
    if (!tx_test_begin("tx_unary / tx_clip: ops of other families, NULL, dtype, bounds"))
        return;
    tx_tensor f = mk(1, (int64_t[]){5}, TX_DTYPE_FLOAT32, NULL),
              i = mk(1, (int64_t[]){5}, TX_DTYPE_INT32, NULL), y;
    CHECK(tx_unary(NULL, TX_OP_RELU, f, &y) == TX_STATUS_INVALID_ARGUMENT, "ctx");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_NONE, f, &y), TX_STATUS_INVALID_ARGUMENT, "not a unary op");
    EXPECT_NO_OUT(tx_unary(ctx, (tx_op)-7, f, &y), TX_STATUS_INVALID_ARGUMENT, "(-7)");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_COUNT_, f, &y), TX_STATUS_INVALID_ARGUMENT, "not a unary");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_MATMUL, f, &y), TX_STATUS_INVALID_ARGUMENT, "matmul");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_CLIP, f, &y), TX_STATUS_INVALID_ARGUMENT, "tx_clip");
    EXPECT(tx_unary(ctx, TX_OP_RELU, f, NULL), TX_STATUS_INVALID_ARGUMENT, "relu", "out");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_EXP, i, &y), TX_STATUS_DTYPE_MISMATCH, "exp", "float32");
    EXPECT_NO_OUT(tx_unary(ctx, TX_OP_EXP, (tx_tensor){0}, &y), TX_STATUS_STALE_HANDLE, "exp",
                  "x is not a live tensor");
    CHECK(tx_clip(NULL, f, 0, 1, &y) == TX_STATUS_INVALID_ARGUMENT, "clip ctx");
    EXPECT_NO_OUT(tx_clip(ctx, f, 1, 0, &y), TX_STATUS_INVALID_ARGUMENT, "clip", "[1, 0]");
    EXPECT_NO_OUT(tx_clip(ctx, f, NAN, 0, &y), TX_STATUS_INVALID_ARGUMENT, "clip", "nan");
    EXPECT_NO_OUT(tx_clip(ctx, f, 0, NAN, &y), TX_STATUS_INVALID_ARGUMENT, "clip");
    EXPECT_NO_OUT(tx_clip(ctx, i, 0, 1, &y), TX_STATUS_DTYPE_MISMATCH, "clip");
    EXPECT(tx_clip(ctx, f, 0, NULL == NULL ? 0.0f : 1.0f, &y), TX_STATUS_OK, ""); /* lo == hi */
    TX_DESTROY(ctx, y, f, i);
    tx_test_end();
}

static void test_binary(void) {
    if (!tx_test_begin("tx_binary: family, NULL, stale a/b, dtypes, broadcast"))
        return;
    tx_tensor f = mk(2, (int64_t[]){2, 3}, TX_DTYPE_FLOAT32, NULL),
              g = mk(2, (int64_t[]){3, 2}, TX_DTYPE_FLOAT32, NULL),
              i = mk(2, (int64_t[]){2, 3}, TX_DTYPE_INT32, NULL), y;
    CHECK(tx_binary(NULL, TX_OP_ADD, f, f, &y) == TX_STATUS_INVALID_ARGUMENT, "ctx");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_NONE, f, f, &y), TX_STATUS_INVALID_ARGUMENT,
                  "not a binary op");
    EXPECT_NO_OUT(tx_binary(ctx, (tx_op)12345, f, f, &y), TX_STATUS_INVALID_ARGUMENT, "(12345)");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_EXP, f, f, &y), TX_STATUS_INVALID_ARGUMENT, "exp");
    EXPECT(tx_binary(ctx, TX_OP_ADD, f, f, NULL), TX_STATUS_INVALID_ARGUMENT, "add", "out");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_MUL, (tx_tensor){7}, f, &y), TX_STATUS_STALE_HANDLE, "mul",
                  "a is not");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_MUL, f, (tx_tensor){7}, &y), TX_STATUS_STALE_HANDLE, "mul",
                  "b is not");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_SUB, f, i, &y), TX_STATUS_DTYPE_MISMATCH, "sub",
                  "a is float32, b is int32");
    EXPECT_NO_OUT(tx_binary(ctx, TX_OP_DIV, f, g, &y), TX_STATUS_SHAPE_MISMATCH, "div", "[2, 3]",
                  "[3, 2]");
    TX_DESTROY(ctx, f, g, i);
    tx_test_end();
}

static void test_matmul(void) {
    if (!tx_test_begin("tx_matmul: NULL, stale, dtypes, ranks, inner/batch/bias, activation"))
        return;
    tx_tensor a = mk(2, (int64_t[]){3, 4}, TX_DTYPE_FLOAT32, NULL),
              b = mk(2, (int64_t[]){4, 5}, TX_DTYPE_FLOAT32, NULL),
              ai = mk(2, (int64_t[]){3, 4}, TX_DTYPE_INT32, NULL),
              s = mk(0, NULL, TX_DTYPE_FLOAT32, NULL),
              bias4 = mk(1, (int64_t[]){4}, TX_DTYPE_FLOAT32, NULL),
              bias5i = mk(1, (int64_t[]){5}, TX_DTYPE_INT32, NULL),
              a3 = mk(3, (int64_t[]){2, 3, 4}, TX_DTYPE_FLOAT32, NULL),
              b3 = mk(3, (int64_t[]){3, 4, 5}, TX_DTYPE_FLOAT32, NULL), y;
    CHECK(tx_matmul(NULL, a, b, NULL, &y) == TX_STATUS_INVALID_ARGUMENT, "ctx");
    EXPECT(tx_matmul(ctx, a, b, NULL, NULL), TX_STATUS_INVALID_ARGUMENT, "matmul", "out");
    EXPECT_NO_OUT(tx_matmul(ctx, (tx_tensor){1}, b, NULL, &y), TX_STATUS_STALE_HANDLE, "a is not");
    EXPECT_NO_OUT(tx_matmul(ctx, a, (tx_tensor){1}, NULL, &y), TX_STATUS_STALE_HANDLE, "b is not");
    EXPECT_NO_OUT(tx_matmul(ctx, a, b, &(tx_matmul_desc){.bias = {99}}, &y), TX_STATUS_STALE_HANDLE,
                  "bias is not");
    EXPECT_NO_OUT(tx_matmul(ctx, ai, b, NULL, &y), TX_STATUS_DTYPE_MISMATCH, "float32");
    EXPECT_NO_OUT(tx_matmul(ctx, a, b, &(tx_matmul_desc){.bias = bias5i}, &y),
                  TX_STATUS_DTYPE_MISMATCH, "float32");
    EXPECT_NO_OUT(tx_matmul(ctx, s, b, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "rank >= 1", "a []");
    EXPECT_NO_OUT(tx_matmul(ctx, a, a, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "inner",
                  "a [3, 4], b [3, 4]");
    EXPECT_NO_OUT(tx_matmul(ctx, a3, b3, NULL, &y), TX_STATUS_SHAPE_MISMATCH, "batch");
    EXPECT_NO_OUT(tx_matmul(ctx, a, b, &(tx_matmul_desc){.bias = bias4}, &y),
                  TX_STATUS_SHAPE_MISMATCH, "bias [4]", "N = 5");
    EXPECT_NO_OUT(tx_matmul(ctx, a, b, &(tx_matmul_desc){.activation = TX_OP_CLIP}, &y),
                  TX_STATUS_INVALID_ARGUMENT, "activation");
    EXPECT_NO_OUT(tx_matmul(ctx, a, b, &(tx_matmul_desc){.activation = (tx_op)-2}, &y),
                  TX_STATUS_INVALID_ARGUMENT, "activation -2");
    tx_tensor all[] = {a, b, ai, s, bias4, bias5i, a3, b3};
    for (size_t k = 0; k < TX_COUNTOF(all); k++)
        tx_tensor_destroy(ctx, all[k]);
    tx_test_end();
}

static void test_op_run(void) {
    if (!tx_test_begin("tx_op_run: NULLs, unknown ops, input counts"))
        return;
    tx_tensor a = mk(1, (int64_t[]){4}, TX_DTYPE_FLOAT32, NULL),
              m = mk(2, (int64_t[]){4, 4}, TX_DTYPE_FLOAT32, NULL), y;
    tx_tensor in3[5] = {m, m, a, a, m}; /* a, b, bias, then a residual, then one too many */
    CHECK(tx_op_run(NULL, TX_OP_RELU, &a, 1, NULL, &y) == TX_STATUS_INVALID_ARGUMENT, "ctx");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_RELU, NULL, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
                  "inputs is NULL");
    EXPECT(tx_op_run(ctx, TX_OP_RELU, &a, 1, NULL, NULL), TX_STATUS_INVALID_ARGUMENT,
           "out is NULL");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_NONE, &a, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
                  "unknown op 0");
    EXPECT_NO_OUT(tx_op_run(ctx, (tx_op)-1, &a, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
                  "unknown op -1");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_ADD, &a, 1, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "add",
                  "takes 2 inputs, got 1");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_RELU, in3, 3, NULL, &y), TX_STATUS_INVALID_ARGUMENT, "relu",
                  "got 3");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_RELU, &a, -1, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
                  "got -1");
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_MATMUL, in3, 5, NULL, &y), TX_STATUS_INVALID_ARGUMENT,
                  "matmul", "got 5");
    /* a fourth input is the residual, of y's shape */
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_MATMUL, in3, 4, NULL, &y), TX_STATUS_SHAPE_MISMATCH,
                  "matmul", "residual [4] must have y's shape [4, 4]");
    /* three inputs: the third is the bias, validated as such */
    EXPECT(tx_op_run(ctx, TX_OP_MATMUL, in3, 3, NULL, &y), TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, y);
    in3[2] = m;
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_MATMUL, in3, 3, NULL, &y), TX_STATUS_SHAPE_MISMATCH,
                  "bias [4, 4]");
    TX_DESTROY(ctx, a, m);
    tx_test_end();
}

static void test_resize_residual(void) {
    if (!tx_test_begin("tx_resize: a residual of another shape, dtype or a stale one"))
        return;
    tx_tensor x = mk(4, (int64_t[]){1, 2, 3, 4}, TX_DTYPE_FLOAT32, NULL),
              r = mk(4, (int64_t[]){1, 2, 6, 7}, TX_DTYPE_FLOAT32, NULL),
              ri = mk(4, (int64_t[]){1, 2, 6, 8}, TX_DTYPE_INT32, NULL),
              xi = mk(4, (int64_t[]){1, 2, 3, 4}, TX_DTYPE_INT32, NULL),
              rf = mk(4, (int64_t[]){1, 2, 6, 8}, TX_DTYPE_FLOAT32, NULL), y;
    tx_resize_desc d = {.scales = {1, 1, 2, 2}, .residual = r};
    EXPECT_NO_OUT(tx_resize(ctx, x, &d, &y), TX_STATUS_SHAPE_MISMATCH,
                  "resize: residual [1, 2, 6, 7] must have y's shape [1, 2, 6, 8]");
    d.residual = ri;
    EXPECT_NO_OUT(tx_resize(ctx, x, &d, &y), TX_STATUS_DTYPE_MISMATCH,
                  "resize: residual must be float32");
    d.residual = rf; /* an int32 x: its nearest resize takes no residual */
    EXPECT_NO_OUT(tx_resize(ctx, xi, &d, &y), TX_STATUS_DTYPE_MISMATCH,
                  "resize: a residual needs float32 x (x [1, 2, 3, 4] is int32)");
    tx_tensor_destroy(ctx, r);
    d.residual = r; /* destroyed: stale */
    EXPECT_NO_OUT(tx_resize(ctx, x, &d, &y), TX_STATUS_STALE_HANDLE, "resize: residual",
                  "not a live tensor");
    /* under a recording tape (resize, then add) the residual is checked
     * the same way: no broadcast */
    tx_tape *tape;
    CHECK(!tx_tape_begin(ctx, &tape), "%s", tx_last_error(ctx));
    tx_tensor rb = mk(4, (int64_t[]){1, 2, 1, 1}, TX_DTYPE_FLOAT32, NULL);
    d.residual = rb;
    EXPECT_NO_OUT(tx_resize(ctx, x, &d, &y), TX_STATUS_SHAPE_MISMATCH,
                  "resize: residual [1, 2, 1, 1] must have y's shape [1, 2, 6, 8]");
    tx_tape_end(ctx, tape);
    tx_tensor_destroy(ctx, rb);
    /* through tx_op_run: the second input is the residual */
    EXPECT_NO_OUT(tx_op_run(ctx, TX_OP_RESIZE, (tx_tensor[]){x, x}, 2,
                            &(tx_op_attrs){.move = {.resize = {.scales = {1, 1, 2, 2}}}}, &y),
                  TX_STATUS_SHAPE_MISMATCH, "residual [1, 2, 3, 4] must have y's shape");
    TX_DESTROY(ctx, x, ri, xi, rf);
    tx_test_end();
}

static void test_conv_residual_pad(void) {
    if (!tx_test_begin("tx_conv residual_pad: more channels than y, another spatial size"))
        return;
    tx_tensor x = mk(4, (int64_t[]){1, 2, 4, 4}, TX_DTYPE_FLOAT32, NULL),
              w = mk(4, (int64_t[]){3, 2, 1, 1}, TX_DTYPE_FLOAT32, NULL),
              r4 = mk(4, (int64_t[]){1, 4, 4, 4}, TX_DTYPE_FLOAT32, NULL),
              rs = mk(4, (int64_t[]){1, 2, 4, 5}, TX_DTYPE_FLOAT32, NULL),
              r2 = mk(4, (int64_t[]){1, 2, 4, 4}, TX_DTYPE_FLOAT32, NULL), y;
    tx_conv_desc d = {.residual = r4, .residual_pad = true};
    EXPECT_NO_OUT(tx_conv(ctx, x, w, &d, &y), TX_STATUS_SHAPE_MISMATCH,
                  "conv: residual [1, 4, 4, 4] must have y's shape [1, 3, 4, 4] but for 1 to 3 "
                  "channels (residual_pad)");
    d.residual = rs;
    EXPECT_NO_OUT(tx_conv(ctx, x, w, &d, &y), TX_STATUS_SHAPE_MISMATCH, "residual [1, 2, 4, 5]");
    d.residual_pad = false; /* without the flag fewer channels are an error */
    d.residual = r2;
    EXPECT_NO_OUT(tx_conv(ctx, x, w, &d, &y), TX_STATUS_SHAPE_MISMATCH,
                  "conv: residual [1, 2, 4, 4] must have y's shape [1, 3, 4, 4]");
    d.residual_pad = true;
    EXPECT(tx_conv(ctx, x, w, &d, &y), TX_STATUS_OK, "");
    tx_tensor_destroy(ctx, y);
    TX_DESTROY(ctx, x, w, r4, rs, r2);
    tx_test_end();
}

static void test_foreign_handle(void) {
    if (!tx_test_begin("a handle from another context is stale, not another tensor"))
        return;
    /* One tx_ctx per GL context (the engine caches GL bindings): the other
     * engine context gets its own window. */
    GLFWwindow *ours = glfwGetCurrentContext();
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    GLFWwindow *win = glfwCreateWindow(16, 16, "other", NULL, NULL);
    CHECK(win != NULL, "second window");
    tx_ctx *other = NULL;
    tx_tensor theirs = {0};
    if (win) {
        glfwMakeContextCurrent(win);
        CHECK(!tx_ctx_create(&(tx_ctx_desc){.get_proc_address = get_proc}, &other), "second ctx");
        if (other)
            CHECK(!tx_tensor_create(other, &(tx_tensor_desc){.rank = 1, .shape = {4}}, &theirs),
                  "create in other");
        glfwMakeContextCurrent(ours);
    }
    if (other) {
        /* Fill every slot of ours, so that their handle's slot index names a
         * live tensor here: only the generation tells them apart. */
        int n = ctx->n_slots + 1;
        tx_tensor *fill = calloc((size_t)n, sizeof *fill);
        for (int k = 0; k < n; k++)
            fill[k] = mk(1, (int64_t[]){1}, TX_DTYPE_FLOAT32, NULL);
        tx_tensor mine = fill[0], y;
        CHECK(tx_slot_get(ctx, (tx_tensor){theirs.id & 0xFFFFFu}) == NULL &&
                  tx_slot_at(ctx, (int)(theirs.id & 0xFFFFFu) - 1)->live,
              "their slot index is not live here");
        EXPECT_NO_OUT(tx_unary(ctx, TX_OP_RELU, theirs, &y), TX_STATUS_STALE_HANDLE,
                      "another context");
        EXPECT(tx_unary(ctx, TX_OP_RELU, mine, &y), TX_STATUS_OK, "");
        tx_tensor_destroy(ctx, y);
        for (int k = 0; k < n; k++)
            tx_tensor_destroy(ctx, fill[k]);
        free(fill);
        glfwMakeContextCurrent(win);
        tx_ctx_destroy(other);
        glfwMakeContextCurrent(ours);
    }
    if (win)
        glfwDestroyWindow(win);
    tx_test_end();
}

static void test_still_usable(void) {
    if (!tx_test_begin("after all of the above the context computes and holds nothing"))
        return;
    float v[4] = {-1, 2, -3, 4}, out[4];
    tx_tensor x = mk(1, (int64_t[]){4}, TX_DTYPE_FLOAT32, v), y = {0};
    CHECK(!tx_unary(ctx, TX_OP_ABS, x, &y), "%s", tx_last_error(ctx));
    CHECK(!tx_tensor_read(ctx, y, out, sizeof out) && out[0] == 1 && out[2] == 3, "abs");
    TX_DESTROY(ctx, x, y);
    tx_stats s;
    tx_ctx_stats(ctx, &s);
    CHECK(s.live_tensors == 0 && s.live_texture_bytes == 0, "%llu tensors leaked",
          (unsigned long long)s.live_tensors);
    tx_test_end();
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    ctx = tx_test_open_ctx((tx_ctx_desc){.max_texture_size = 64}, &g_host);
    test_context_entries();
    test_status_and_op_tables();
    test_tensor_create();
    test_tensor_io();
    test_reshape();
    test_unary_clip();
    test_binary();
    test_matmul();
    test_op_run();
    test_resize_residual();
    test_conv_residual_pad();
    test_foreign_handle();
    test_still_usable();
    tx_host_close(g_host, ctx);
    return tx_test_finish();
}
