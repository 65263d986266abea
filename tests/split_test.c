/* Tensors larger than one texture (engine/split.h), on a context whose
 * textures are capped at 64×64 (16,384 floats each) so the tables stay small:
 * round trips, Gather from a split table (axis 0, negative and out-of-range
 * indices, and axis 1), MatMul with a split a, a b split along K, along N
 * (transpose_b) and along its batch, elementwise ops, Slice and Concat, all
 * against the plain-C references of engine/ref; then the refusals (an op
 * without a split path, the memory budget) and no tensor left behind. */
#include <math.h>

#include "glctx.h"
#include "harness.h"
#include "open_ctx.h"
#include "ref/ref.h"
#include "tensors.h"
#include "texel.h"

#define CAP 64 /* max_texture_size: 64² texels = 16,384 floats */

static uint32_t g_rng = 12345u;
static float rnd(void) {
    g_rng = g_rng * 1664525u + 1013904223u;
    return (float)(g_rng >> 8) / 16777216.0f - 0.5f;
}

typedef struct host {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dtype;
    float *v; /* int32 values held as floats, as the references take them */
    int64_t n;
} host;

static host hrand(int rank, const int64_t *shape) {
    host h = {.rank = rank, .dtype = TX_DTYPE_FLOAT32, .n = 1};
    for (int d = 0; d < rank; d++)
        h.shape[d] = shape[d], h.n *= shape[d];
    h.v = malloc((size_t)h.n * sizeof(float));
    for (int64_t i = 0; i < h.n; i++)
        h.v[i] = rnd();
    return h;
}

static tx_tensor up(tx_ctx *ctx, const host *h) {
    if (h->dtype == TX_DTYPE_INT32) {
        int32_t *iv = malloc((size_t)h->n * sizeof(int32_t));
        for (int64_t i = 0; i < h->n; i++)
            iv[i] = (int32_t)h->v[i];
        tx_tensor t = tx_test_tensor(ctx, h->rank, h->shape, h->dtype, iv);
        free(iv);
        return t;
    }
    return tx_test_tensor(ctx, h->rank, h->shape, h->dtype, h->v);
}

static tx_ref_tensor rt(const host *h) {
    tx_ref_tensor r = {.rank = h->rank, .dtype = h->dtype, .data = h->v};
    memcpy(r.shape, h->shape, sizeof r.shape);
    return r;
}

/* y (engine) against the reference of op on ins with attrs. */
static void expect_ref(tx_ctx *ctx, const char *what, tx_status st, tx_tensor y, tx_op op,
                       const host *ins, int n, const tx_op_attrs *attrs, double tol) {
    CHECK(st == TX_STATUS_OK, "%s: %s", what, tx_last_error(ctx));
    if (st)
        return;
    tx_ref_tensor in[4], want;
    for (int i = 0; i < n; i++)
        in[i] = rt(&ins[i]);
    if (tx_ref_table[op](in, n, attrs, &want)) {
        CHECK(false, "%s: the reference refused its inputs", what);
        return;
    }
    int rank;
    int64_t shape[TX_MAX_RANK], numel = 1;
    tx_tensor_shape(ctx, y, &rank, shape, NULL);
    bool same = rank == want.rank;
    for (int d = 0; d < rank && same; d++)
        same = shape[d] == want.shape[d];
    for (int d = 0; d < want.rank; d++)
        numel *= want.shape[d];
    CHECK(same, "%s: shape differs from the reference's", what);
    float *got = malloc((size_t)(numel ? numel : 1) * sizeof(float));
    st = same ? tx_tensor_read(ctx, y, got, (size_t)numel * sizeof(float)) : TX_STATUS_OK;
    CHECK(st == TX_STATUS_OK, "%s: read: %s", what, tx_last_error(ctx));
    double worst = 0;
    for (int64_t i = 0; same && !st && i < numel; i++) {
        double e = fabs((double)got[i] - (double)want.data[i]) / fmax(1, fabs(want.data[i]));
        worst = e > worst || isnan(e) ? e : worst;
    }
    CHECK(worst <= tol, "%s: worst relative error %g", what, worst);
    free(got);
    free(want.data);
}

/* The engine's live texture count says how many textures a tensor took. */
static uint64_t live_tensors(tx_ctx *ctx) {
    tx_stats s;
    tx_ctx_stats(ctx, &s);
    return s.live_tensors;
}

static void test_round_trip(tx_ctx *ctx) {
    if (!tx_test_begin("a [600, 64] table (3 textures' worth) and an int32 one round-trip"))
        return;
    uint64_t before = live_tensors(ctx);
    host h = hrand(2, (int64_t[]){600, 64});
    tx_tensor t = up(ctx, &h);
    CHECK(t.id != 0, "create: %s", tx_last_error(ctx));
    CHECK(live_tensors(ctx) == before + 1 + 3, "a handle and 3 parts: %llu",
          (unsigned long long)(live_tensors(ctx) - before));
    float *back = malloc((size_t)h.n * sizeof(float));
    CHECK(tx_tensor_read(ctx, t, back, (size_t)h.n * 4) == TX_STATUS_OK, "read");
    CHECK(memcmp(back, h.v, (size_t)h.n * 4) == 0, "values differ");
    tx_tensor c = {0}, r = {0};
    CHECK(tx_tensor_to(ctx, t, TX_DEVICE_CPU, &c) == TX_STATUS_OK, "to cpu: %s",
          tx_last_error(ctx));
    memset(back, 0, (size_t)h.n * 4);
    CHECK(tx_tensor_read(ctx, c, back, (size_t)h.n * 4) == TX_STATUS_OK &&
              memcmp(back, h.v, (size_t)h.n * 4) == 0,
          "the CPU copy differs");
    /* a reshape view reads the same elements */
    CHECK(tx_tensor_reshape(ctx, t, 1, (int64_t[]){600 * 64}, &r) == TX_STATUS_OK, "reshape");
    memset(back, 0, (size_t)h.n * 4);
    CHECK(tx_tensor_read(ctx, r, back, (size_t)h.n * 4) == TX_STATUS_OK &&
              memcmp(back, h.v, (size_t)h.n * 4) == 0,
          "the view differs");
    tx_readback rb;
    bool ready = false;
    memset(back, 0, (size_t)h.n * 4);
    CHECK(tx_tensor_read_async(ctx, t, &rb) == TX_STATUS_OK &&
              tx_readback_poll(ctx, rb, &ready) == TX_STATUS_OK && ready &&
              tx_readback_finish(ctx, rb, back, (size_t)h.n * 4) == TX_STATUS_OK &&
              memcmp(back, h.v, (size_t)h.n * 4) == 0,
          "an asynchronous read of a split tensor (ready at once): %s", tx_last_error(ctx));
    host hi = hrand(2, (int64_t[]){1000, 40});
    hi.dtype = TX_DTYPE_INT32;
    for (int64_t i = 0; i < hi.n; i++)
        hi.v[i] = (float)(i % 100000 - 50000);
    tx_tensor ti = up(ctx, &hi);
    int32_t *ib = malloc((size_t)hi.n * sizeof(int32_t));
    CHECK(tx_tensor_read(ctx, ti, ib, (size_t)hi.n * 4) == TX_STATUS_OK, "int read");
    bool ok = true;
    for (int64_t i = 0; i < hi.n; i++)
        ok &= ib[i] == (int32_t)hi.v[i];
    CHECK(ok, "int32 values differ");
    free(ib);
    free(back);
    free(h.v);
    free(hi.v);
    TX_DESTROY(ctx, t, c, r, ti);
    CHECK(live_tensors(ctx) == before, "tensors left: %llu",
          (unsigned long long)(live_tensors(ctx) - before));
    tx_test_end();
}

static void test_gather(tx_ctx *ctx) {
    if (!tx_test_begin("gather from a split [600, 64] table (axis 0 and 1), and results larger "
                       "than a texture, equal the reference"))
        return;
    host x = hrand(2, (int64_t[]){600, 64});
    host idx = hrand(2, (int64_t[]){5, 7});
    idx.dtype = TX_DTYPE_INT32;
    for (int64_t i = 0; i < idx.n; i++) /* every part, negatives, and a few clamped */
        idx.v[i] = (float)((int)(i * 97 % 1200) - 600);
    idx.v[3] = 700, idx.v[4] = -900, idx.v[5] = 599, idx.v[6] = 256, idx.v[7] = 255;
    tx_tensor tx = up(ctx, &x), ti = up(ctx, &idx), y = {0}, y1 = {0};
    tx_op_attrs at = {0};
    tx_status st = tx_gather(ctx, tx, ti, 0, &y);
    expect_ref(ctx, "axis 0", st, y, TX_OP_GATHER, (host[]){x, idx}, 2, &at, 0);
    host i1 = hrand(1, (int64_t[]){3});
    i1.dtype = TX_DTYPE_INT32;
    i1.v[0] = 63, i1.v[1] = -1, i1.v[2] = 5;
    tx_tensor t1 = up(ctx, &i1);
    at.move.axis = 1;
    st = tx_gather(ctx, tx, t1, 1, &y1);
    expect_ref(ctx, "axis 1", st, y1, TX_OP_GATHER, (host[]){x, i1}, 2, &at, 0);
    /* unsplit operands, a result larger than a texture: by result rows */
    host small = hrand(2, (int64_t[]){100, 64}), many = hrand(1, (int64_t[]){300});
    many.dtype = TX_DTYPE_INT32;
    for (int64_t i = 0; i < many.n; i++)
        many.v[i] = (float)((int)(i * 37 % 200) - 100);
    tx_tensor ts = up(ctx, &small), tm = up(ctx, &many), y2 = {0}, y3 = {0};
    at.move.axis = 0;
    st = tx_gather(ctx, ts, tm, 0, &y2);
    expect_ref(ctx, "[300, 64] gathered from [100, 64]", st, y2, TX_OP_GATHER,
               (host[]){small, many}, 2, &at, 0);
    host narrow = hrand(2, (int64_t[]){300, 8}), cols = hrand(1, (int64_t[]){64});
    cols.dtype = TX_DTYPE_INT32;
    for (int64_t i = 0; i < cols.n; i++)
        cols.v[i] = (float)(i % 8);
    tx_tensor tn = up(ctx, &narrow), tc = up(ctx, &cols);
    at.move.axis = 1;
    st = tx_gather(ctx, tn, tc, 1, &y3);
    expect_ref(ctx, "[300, 64] gathered along axis 1 of [300, 8]", st, y3, TX_OP_GATHER,
               (host[]){narrow, cols}, 2, &at, 0);
    for (host *h = (host[]){x, idx, i1, small, many, narrow, cols}, *e = h + 7; h < e; h++)
        free(h->v);
    TX_DESTROY(ctx, tx, ti, y, t1, y1, ts, tm, y2, tn, tc, y3);
    tx_test_end();
}

static void test_matmul(tx_ctx *ctx) {
    if (!tx_test_begin("matmul with a split operand (a rows, b along K, N, batch) equals the "
                       "reference"))
        return;
    const double tol = 1e-5;
    /* a split along M, with bias and relu */
    host a = hrand(2, (int64_t[]){600, 64}), b = hrand(2, (int64_t[]){64, 24});
    host bias = hrand(1, (int64_t[]){24});
    tx_tensor ta = up(ctx, &a), tb = up(ctx, &b), tbias = up(ctx, &bias), y = {0};
    tx_op_attrs at = {.matmul = {.activation = TX_OP_RELU}};
    tx_status st =
        tx_matmul(ctx, ta, tb, &(tx_matmul_desc){.bias = tbias, .activation = TX_OP_RELU}, &y);
    expect_ref(ctx, "a [600, 64] split", st, y, TX_OP_MATMUL, (host[]){a, b, bias}, 3, &at, tol);
    TX_DESTROY(ctx, tb, tbias, y);
    free(b.v);
    free(bias.v);
    /* b [600, 40] split along K */
    host a2 = hrand(2, (int64_t[]){5, 600}), b2 = hrand(2, (int64_t[]){600, 40});
    host bias2 = hrand(1, (int64_t[]){40});
    tx_tensor ta2 = up(ctx, &a2), tb2 = up(ctx, &b2), tbias2 = up(ctx, &bias2);
    st = tx_matmul(ctx, ta2, tb2, &(tx_matmul_desc){.bias = tbias2, .activation = TX_OP_RELU}, &y);
    expect_ref(ctx, "b [600, 40] split along K", st, y, TX_OP_MATMUL, (host[]){a2, b2, bias2}, 3,
               &at, tol);
    tx_tensor_destroy(ctx, y);
    /* b = the split [600, 64] table transposed (tied embeddings): N = 600 */
    host a3 = hrand(2, (int64_t[]){7, 64});
    tx_tensor ta3 = up(ctx, &a3);
    at = (tx_op_attrs){.matmul = {.transpose_b = true}};
    st = tx_matmul(ctx, ta3, ta, &(tx_matmul_desc){.transpose_b = true}, &y);
    expect_ref(ctx, "a × table^T, split along N", st, y, TX_OP_MATMUL, (host[]){a3, a}, 2, &at,
               tol);
    tx_tensor_destroy(ctx, y);
    /* a [3, 200, 64] split along its batch × b [3, 64, 8] */
    host a4 = hrand(3, (int64_t[]){3, 200, 64}), b4 = hrand(3, (int64_t[]){3, 64, 8});
    tx_tensor ta4 = up(ctx, &a4), tb4 = up(ctx, &b4);
    at = (tx_op_attrs){0};
    st = tx_matmul(ctx, ta4, tb4, NULL, &y);
    expect_ref(ctx, "batched a split", st, y, TX_OP_MATMUL, (host[]){a4, b4}, 2, &at, tol);
    tx_tensor_destroy(ctx, y);
    for (host *h = (host[]){a, a2, b2, bias2, a3, a4, b4}, *e = h + 7; h < e; h++)
        free(h->v);
    TX_DESTROY(ctx, ta, ta2, tb2, tbias2, ta3, ta4, tb4);
    tx_test_end();
}

static void test_elementwise_slice_concat(tx_ctx *ctx) {
    if (!tx_test_begin("elementwise ops, transpose, slice and concat on split tensors equal the "
                       "reference"))
        return;
    host x = hrand(2, (int64_t[]){600, 64}), z = hrand(2, (int64_t[]){600, 64});
    host row = hrand(1, (int64_t[]){64}), col = hrand(2, (int64_t[]){600, 1});
    tx_tensor tx = up(ctx, &x), tz = up(ctx, &z), trow = up(ctx, &row), tcol = up(ctx, &col);
    tx_tensor y = {0};
    tx_op_attrs at = {0};
    expect_ref(ctx, "relu", tx_unary(ctx, TX_OP_RELU, tx, &y), y, TX_OP_RELU, &x, 1, &at, 0);
    tx_tensor_destroy(ctx, y);
    expect_ref(ctx, "split + split", tx_binary(ctx, TX_OP_ADD, tx, tz, &y), y, TX_OP_ADD,
               (host[]){x, z}, 2, &at, 0);
    tx_tensor_destroy(ctx, y);
    expect_ref(ctx, "[64] - split", tx_binary(ctx, TX_OP_SUB, trow, tx, &y), y, TX_OP_SUB,
               (host[]){row, x}, 2, &at, 0);
    tx_tensor_destroy(ctx, y);
    expect_ref(ctx, "split * [600, 1]", tx_binary(ctx, TX_OP_MUL, tx, tcol, &y), y, TX_OP_MUL,
               (host[]){x, col}, 2, &at, 0);
    tx_tensor_destroy(ctx, y);
    expect_ref(ctx, "[600, 1] + [64]: a split result", tx_binary(ctx, TX_OP_ADD, tcol, trow, &y), y,
               TX_OP_ADD, (host[]){col, row}, 2, &at, 0);
    tx_tensor_destroy(ctx, y);
    /* slices: rows across a part boundary with columns, and columns only */
    at.move.slice = (tx_slice_desc){.n = 2,
                                    .starts = {100, 8},
                                    .ends = {500, 40},
                                    .axes = {0, 1},
                                    .steps = {1, 1},
                                    .has_axes = true};
    expect_ref(ctx, "slice rows 100..500, cols 8..40", tx_slice(ctx, tx, &at.move.slice, &y), y,
               TX_OP_SLICE, &x, 1, &at, 0);
    tx_tensor_destroy(ctx, y);
    at.move.slice =
        (tx_slice_desc){.n = 2, .starts = {0, 60}, .ends = {INT64_MAX, 2}, .steps = {1, -3}};
    expect_ref(ctx, "slice cols backwards", tx_slice(ctx, tx, &at.move.slice, &y), y, TX_OP_SLICE,
               &x, 1, &at, 0);
    tx_tensor_destroy(ctx, y);
    /* transposes: dim 0 moved (the parts concatenated along dim 1), and kept */
    at.move.n_perm = 2, at.move.perm[0] = 1, at.move.perm[1] = 0;
    expect_ref(ctx, "transpose [600, 64]", tx_transpose(ctx, tx, NULL, &y), y, TX_OP_TRANSPOSE, &x,
               1, &at, 0);
    tx_tensor_destroy(ctx, y);
    host x3 = hrand(3, (int64_t[]){300, 8, 8});
    tx_tensor tx3 = up(ctx, &x3);
    at.move.n_perm = 3, at.move.perm[0] = 0, at.move.perm[1] = 2, at.move.perm[2] = 1;
    expect_ref(ctx, "transpose [300, 8, 8] keeping dim 0", tx_transpose(ctx, tx3, at.move.perm, &y),
               y, TX_OP_TRANSPOSE, &x3, 1, &at, 0);
    TX_DESTROY(ctx, y, tx3);
    free(x3.v);
    /* concat: two small halves into a split result, and split + small along dim 1 */
    host h0 = hrand(2, (int64_t[]){300, 64}), h1 = hrand(2, (int64_t[]){300, 64});
    host nar = hrand(2, (int64_t[]){600, 8});
    tx_tensor th0 = up(ctx, &h0), th1 = up(ctx, &h1), tnar = up(ctx, &nar);
    at = (tx_op_attrs){0};
    expect_ref(ctx, "concat of halves along 0", tx_concat(ctx, (tx_tensor[]){th0, th1}, 2, 0, &y),
               y, TX_OP_CONCAT, (host[]){h0, h1}, 2, &at, 0);
    tx_tensor_destroy(ctx, y);
    at.move.axis = 1;
    expect_ref(ctx, "concat split + [600, 8] along 1",
               tx_concat(ctx, (tx_tensor[]){tx, tnar}, 2, 1, &y), y, TX_OP_CONCAT, (host[]){x, nar},
               2, &at, 0);
    tx_tensor_destroy(ctx, y);
    for (host *h = (host[]){x, z, row, col, h0, h1, nar}, *e = h + 7; h < e; h++)
        free(h->v);
    TX_DESTROY(ctx, tx, tz, trow, tcol, th0, th1, tnar);
    tx_test_end();
}

static void test_refusals(tx_ctx *ctx, tx_host *host_) {
    (void)host_;
    if (!tx_test_begin("an op without a split path and an over-budget split are refused"))
        return;
    host x = hrand(2, (int64_t[]){600, 64});
    tx_tensor tx = up(ctx, &x), y = {0};
    tx_status st = tx_softmax(ctx, TX_OP_SOFTMAX, tx, NULL, &y);
    CHECK(st == TX_STATUS_TOO_LARGE && strstr(tx_last_error(ctx), "split across"),
          "softmax: %d: %s", st, tx_last_error(ctx));
    if (!st)
        tx_tensor_destroy(ctx, y);
    tx_tensor_destroy(ctx, tx);
    free(x.v);
    tx_test_end();
}

static void test_budget(tx_host **h) {
    if (!tx_test_begin("a split tensor over the memory budget is OUT_OF_MEMORY, nothing kept"))
        return;
    tx_ctx *ctx = NULL;
    /* two 64 KiB textures and a third part do not fit 100 KiB */
    int rc =
        tx_host_open(&(tx_ctx_desc){.max_texture_size = CAP, .memory_budget = 100 << 10}, h, &ctx);
    CHECK(rc == 0, "context");
    if (rc == 0) {
        host x = hrand(2, (int64_t[]){600, 64});
        tx_tensor t = {0};
        tx_status st = tx_tensor_create(
            ctx, &(tx_tensor_desc){.rank = 2, .shape = {600, 64}, .data = x.v}, &t);
        CHECK(st == TX_STATUS_OUT_OF_MEMORY, "got %d: %s", st, tx_last_error(ctx));
        tx_test_expect_clean(ctx);
        free(x.v);
        tx_host_close(*h, ctx);
    }
    tx_test_end();
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    tx_host *h;
    tx_ctx *ctx = tx_test_open_ctx_counted((tx_ctx_desc){.max_texture_size = CAP}, &h);
    test_round_trip(ctx);
    test_gather(ctx);
    test_matmul(ctx);
    test_elementwise_slice_concat(ctx);
    test_refusals(ctx, h);
    if (tx_test_begin("no tensor is left behind")) {
        tx_test_expect_clean(ctx);
        tx_test_end();
    }
    tx_host_close(h, ctx);
    test_budget(&h);
    return tx_test_finish();
}
