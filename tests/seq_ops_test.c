/* The composed ONNX ops beside the recurrent ones, on cases the conformance
 * data lacks, against plain-C references: Einsum (a brute-force sum over every
 * label assignment, so any equation can be checked), Det up to 6 x 6 and at
 * 24 x 24 (the largest M), CumSum on a middle axis, ReverseSequence on rank-3
 * inputs, LRN with an even size, MeanVarianceNormalization over chosen axes;
 * and bad equations and shapes that must fail with a message. */
#include <math.h>

#include "det_ref.h"
#include "harness.h"
#include "internal.h"
#include "onnx_writer.h"
#include "open_ctx.h"

static tx_ctx *g_ctx;

typedef struct operand {
    int rank;
    int64_t shape[TX_MAX_RANK];
    float *v;
} operand;

static uint32_t g_seed = 777;
static float rnd(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)(g_seed >> 8) / (float)(1 << 24) * 2.0f - 1.0f;
}

static int64_t numel(const operand *o) {
    int64_t n = 1;
    for (int i = 0; i < o->rank; i++)
        n *= o->shape[i];
    return n;
}

static operand rand_op(int rank, const int64_t *shape) {
    operand o = {.rank = rank};
    memcpy(o.shape, shape, sizeof(int64_t) * (size_t)rank);
    o.v = malloc(sizeof(float) * (size_t)(numel(&o) ? numel(&o) : 1));
    for (int64_t i = 0; i < numel(&o); i++)
        o.v[i] = rnd();
    return o;
}

/* An int64 constant input after the fed ones (CumSum's axis, sequence_lens). */
typedef struct const_in {
    int rank;
    int64_t n;
    const int64_t *v;
} const_in;

/* Runs one node `op` over inputs x0.. (fed as float tensors) and the constant
 * c (if set), with attrs; *out gets output 0 (malloc'd) and its shape. */
static tx_status run_node_c(const char *op, const operand *in, int n_in, const const_in *c,
                            buf *attrs, int n_attrs, int opset, operand *out) {
    static const char *const names[] = {"x0", "x1", "x2", "c"};
    const char *ins[4];
    buf g = {0};
    for (int i = 0; i < n_in; i++) {
        vinfo(&g, 11, names[i], TX_ONNX_FLOAT, in[i].shape, in[i].rank);
        ins[i] = names[i];
    }
    if (c) {
        init_i64(&g, "c", &c->n, c->rank, c->v);
        ins[n_in] = "c";
    }
    node(&g, op, "n", ins, n_in + (c != NULL), (const char *[]){"y"}, 1, attrs, n_attrs);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, opset);
    tx_session *s = NULL;
    tx_status st = tx_session_create(g_ctx, m.d, m.n, NULL, &s);
    free(m.d);
    tx_feed f[4] = {{0}};
    for (int i = 0; i < n_in && !st; i++) {
        tx_tensor_desc d = {.rank = in[i].rank, .data = in[i].v};
        memcpy(d.shape, in[i].shape, sizeof d.shape);
        st = tx_tensor_create(g_ctx, &d, &f[i].tensor);
        f[i].name = names[i];
    }
    tx_tensor y = {0};
    if (!st)
        st = tx_session_run(s, f, n_in, NULL, 1, &y);
    if (!st)
        st = tx_tensor_shape(g_ctx, y, &out->rank, out->shape, NULL);
    if (!st) {
        out->v = malloc(sizeof(float) * (size_t)(numel(out) ? numel(out) : 1));
        st = tx_tensor_read(g_ctx, y, out->v, (size_t)numel(out) * 4);
    }
    if (y.id)
        tx_tensor_destroy(g_ctx, y);
    for (int i = 0; i < n_in && s; i++)
        if (f[i].tensor.id)
            tx_tensor_destroy(g_ctx, f[i].tensor);
    tx_session_destroy(s);
    return st;
}

static tx_status run_node(const char *op, const operand *in, int n_in, buf *attrs, int n_attrs,
                          int opset, operand *out) {
    return run_node_c(op, in, n_in, NULL, attrs, n_attrs, opset, out);
}

static void expect_close(const operand *got, const double *want, int rank, const int64_t *shape,
                         double tol) {
    bool shape_ok = got->rank == rank;
    for (int i = 0; shape_ok && i < rank; i++)
        shape_ok = got->shape[i] == shape[i];
    CHECK(shape_ok, "output rank %d, want %d", got->rank, rank);
    if (!shape_ok)
        return;
    int bad = 0;
    for (int64_t i = 0; i < numel(got); i++)
        if (!(fabs(got->v[i] - want[i]) <= tol * (1 + fabs(want[i]))) && bad++ < 3)
            printf("  [%lld] got %.7g want %.7g\n", (long long)i, got->v[i], want[i]);
    CHECK(bad == 0, "%d values differ", bad);
}

/* ---- Einsum: brute force over the labels ---- */

/* ref: the equation with letters only and an explicit output (broadcast dims of
 * size 1 read index 0). */
static void einsum_ref(const char *ref, const operand *in, int n_in, double **want, int *rank,
                       int64_t *shape) {
    int64_t size[128] = {0};
    const char *p = ref;
    char terms[5][8] = {{0}};
    int t = 0, k = 0;
    for (; *p; p++) {
        if (*p == ',' || *p == '-') { /* '-' starts the output term */
            t++, k = 0;
            continue;
        }
        terms[t][k++] = *p;
    }
    for (int i = 0; i < n_in; i++)
        for (int d = 0; terms[i][d]; d++)
            if (in[i].shape[d] > size[(int)terms[i][d]])
                size[(int)terms[i][d]] = in[i].shape[d];
    char labels[16];
    int nl = 0;
    for (int c = 'A'; c <= 'z'; c++)
        if (size[c])
            labels[nl++] = (char)c;
    const char *o = terms[n_in];
    *rank = (int)strlen(o);
    int64_t on = 1;
    for (int d = 0; d < *rank; d++)
        on *= shape[d] = size[(int)o[d]];
    *want = calloc((size_t)on, sizeof(double));
    int64_t val[128] = {0};
    for (;;) {
        double prod = 1;
        for (int i = 0; i < n_in; i++) {
            int64_t at = 0;
            for (int d = 0; terms[i][d]; d++)
                at = at * in[i].shape[d] + (in[i].shape[d] == 1 ? 0 : val[(int)terms[i][d]]);
            prod *= in[i].v[at];
        }
        int64_t at = 0;
        for (int d = 0; d < *rank; d++)
            at = at * shape[d] + val[(int)o[d]];
        (*want)[at] += prod;
        int l = nl - 1; /* next assignment */
        while (l >= 0 && ++val[(int)labels[l]] == size[(int)labels[l]])
            val[(int)labels[l--]] = 0;
        if (l < 0)
            break;
    }
}

typedef struct ein_case {
    const char *eq, *ref;
    int n;
    int rank[3];
    int64_t shape[3][4];
} ein_case;

static void einsum_cases(void) {
    static const ein_case cases[] = {
        {"ij,jk->ik", "ij,jk-ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
        {"bij,bkj->bik", "bij,bkj-bik", 2, {3, 3}, {{2, 3, 4}, {2, 5, 4}}},
        {"i,j->ij", "i,j-ij", 2, {1, 1}, {{3}, {4}}},
        {"ij,jk,kl->il", "ij,jk,kl-il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
        {"ii", "ii-", 1, {2}, {{4, 4}}},
        {"ii->i", "ii-i", 1, {2}, {{4, 4}}},
        {"...ij,...jk->...ik", "zij,zjk-zik", 2, {3, 3}, {{2, 3, 4}, {1, 4, 5}}},
        {"bhqd,bhkd->bhqk", "bhqd,bhkd-bhqk", 2, {4, 4}, {{1, 2, 3, 4}, {1, 2, 5, 4}}},
        {"ijk->ki", "ijk-ki", 1, {3}, {{2, 3, 4}}},
        {"ij,ij->i", "ij,ij-i", 2, {2, 2}, {{3, 5}, {3, 5}}},
        {"Ab,bC->AC", "Ab,bC-AC", 2, {2, 2}, {{2, 3}, {3, 4}}},
        {"ba,ac", "ba,ac-bc", 2, {2, 2}, {{2, 3}, {3, 4}}},
        {"i,i", "i,i-", 2, {1, 1}, {{5}, {5}}},
        {"bii->b", "bii-b", 1, {3}, {{2, 3, 3}}},
        {"ij,kj->", "ij,kj-", 2, {2, 2}, {{2, 3}, {4, 3}}},
    };
    for (size_t c = 0; c < TX_COUNTOF(cases); c++) {
        char title[96];
        snprintf(title, sizeof title, "Einsum %s", cases[c].eq);
        if (!tx_test_begin(title))
            continue;
        operand in[3], y = {0};
        for (int i = 0; i < cases[c].n; i++)
            in[i] = rand_op(cases[c].rank[i], cases[c].shape[i]);
        buf a = attr_s("equation", cases[c].eq);
        tx_status st = run_node("Einsum", in, cases[c].n, &a, 1, 12, &y);
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
        if (!st) {
            double *want;
            int rank;
            int64_t shape[TX_MAX_RANK];
            einsum_ref(cases[c].ref, in, cases[c].n, &want, &rank, shape);
            expect_close(&y, want, rank, shape, 1e-5);
            free(want);
        }
        for (int i = 0; i < cases[c].n; i++)
            free(in[i].v);
        free(y.v);
        tx_test_end();
    }
    if (tx_test_begin("Einsum: bad equations fail with a message")) {
        static const char *const bad[] = {"ij,jk->il", "ijk->ij",    "i,i", "ij->iij",
                                          "i.j->i",    "ij,jk->ik,", "",    "ij->j->i"};
        for (size_t i = 0; i < TX_COUNTOF(bad); i++) {
            operand in[2] = {rand_op(2, (int64_t[]){3, 3}), rand_op(2, (int64_t[]){3, 3})}, y = {0};
            buf a = attr_s("equation", bad[i]);
            int n = strchr(bad[i], ',') ? 2 : 1;
            tx_status st = run_node("Einsum", in, n, &a, 1, 12, &y);
            CHECK(st != TX_STATUS_OK && strstr(tx_last_error(g_ctx), "Einsum"),
                  "\"%s\": status %d (%s)", bad[i], st, tx_last_error(g_ctx));
            free(in[0].v), free(in[1].v), free(y.v);
        }
        tx_test_end();
    }
}

/* ---- Det, CumSum, ReverseSequence, LRN, MVN ---- */

static void det_cases(void) {
    for (int n = 1; n <= 6; n++) {
        char title[64];
        snprintf(title, sizeof title, "Det of [2, 3, %d, %d]", n, n);
        if (!tx_test_begin(title))
            continue;
        operand x = rand_op(4, (int64_t[]){2, 3, n, n}), y = {0};
        tx_status st = run_node("Det", &x, 1, NULL, 0, 13, &y);
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
        if (!st) {
            double want[6];
            for (int b = 0; b < 6; b++)
                want[b] = tx_test_det_ref(x.v + b * n * n, n);
            expect_close(&y, want, 2, (int64_t[]){2, 3}, 1e-5);
        }
        free(x.v), free(y.v);
        tx_test_end();
    }
    /* the largest M: ~40 tensors a step, all kept until the end */
    if (tx_test_begin("Det of [2, 24, 24]")) {
        operand x = rand_op(3, (int64_t[]){2, 24, 24}), y = {0};
        tx_status st = run_node("Det", &x, 1, NULL, 0, 13, &y);
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
        if (!st) {
            double want[2] = {tx_test_det_ref(x.v, 24), tx_test_det_ref(x.v + 24 * 24, 24)};
            expect_close(&y, want, 1, (int64_t[]){2}, 1e-3);
        }
        free(x.v), free(y.v);
        tx_test_end();
    }
    if (tx_test_begin("Det: 25 x 25 and non-square inputs are refused with a message")) {
        operand x = rand_op(2, (int64_t[]){25, 25}), z = rand_op(2, (int64_t[]){2, 3}), y = {0};
        CHECK(run_node("Det", &x, 1, NULL, 0, 13, &y) == TX_STATUS_UNSUPPORTED, "25 x 25");
        CHECK(run_node("Det", &z, 1, NULL, 0, 13, &y) == TX_STATUS_SHAPE_MISMATCH &&
                  strstr(tx_last_error(g_ctx), "[..., M, M]"),
              "2 x 3: %s", tx_last_error(g_ctx));
        free(x.v), free(z.v);
        tx_test_end();
    }
}

/* CumSum of [2, n, 3] along axis 1 (n > 512 takes the log-step scan). */
static void cumsum_case(int n, bool excl, bool rev) {
    char title[96];
    snprintf(title, sizeof title, "CumSum of [2, %d, 3] on axis 1%s%s", n,
             excl ? ", exclusive" : "", rev ? ", reverse" : "");
    if (!tx_test_begin(title))
        return;
    operand x = rand_op(3, (int64_t[]){2, n, 3}), y = {0};
    buf a[2] = {attr_i("exclusive", excl), attr_i("reverse", rev)};
    tx_status st = run_node_c("CumSum", &x, 1, &(const_in){0, 1, (int64_t[]){-2}}, a, 2, 14, &y);
    CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
    if (!st) {
        double *want = calloc((size_t)(6 * n), sizeof(double));
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 3; c++) {
                double sum = 0;
                for (int k = 0; k < n; k++) {
                    int i = rev ? n - 1 - k : k;
                    double v = x.v[(b * n + i) * 3 + c];
                    sum += excl ? 0 : v;
                    want[(b * n + i) * 3 + c] = sum;
                    sum += excl ? v : 0;
                }
            }
        expect_close(&y, want, 3, x.shape, 1e-4);
        free(want);
    }
    free(x.v), free(y.v);
    tx_test_end();
}

static void reverse_sequence_case(int batch_axis) {
    char title[80];
    snprintf(title, sizeof title, "ReverseSequence of a rank-3 input, batch_axis %d", batch_axis);
    if (!tx_test_begin(title))
        return;
    enum { T = 4, B = 3, C = 2 };
    static const int64_t lens[B] = {1, 4, 2};
    int64_t shape[3] = {T, B, C};
    if (batch_axis == 0)
        shape[0] = B, shape[1] = T;
    operand x = rand_op(3, shape), y = {0};
    buf a[2] = {attr_i("batch_axis", batch_axis), attr_i("time_axis", !batch_axis)};
    tx_status st = run_node_c("ReverseSequence", &x, 1, &(const_in){1, B, lens}, a, 2, 10, &y);
    CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
    if (!st) {
        double want[T * B * C];
        for (int t = 0; t < T; t++)
            for (int b = 0; b < B; b++)
                for (int c = 0; c < C; c++) {
                    int src = t < lens[b] ? (int)lens[b] - 1 - t : t;
                    int at = batch_axis ? (t * B + b) * C + c : (b * T + t) * C + c;
                    int from = batch_axis ? (src * B + b) * C + c : (b * T + src) * C + c;
                    want[at] = x.v[from];
                }
        expect_close(&y, want, 3, shape, 0);
    }
    free(x.v), free(y.v);
    tx_test_end();
}

static void lrn_mvn_cases(void) {
    if (tx_test_begin("LRN with an even size (4) on [1, 6, 2, 2]")) {
        operand x = rand_op(4, (int64_t[]){1, 6, 2, 2}), y = {0};
        buf a[4] = {attr_i("size", 4), attr_f("alpha", 0.3f), attr_f("beta", 0.6f),
                    attr_f("bias", 1.5f)};
        tx_status st = run_node("LRN", &x, 1, a, 4, 13, &y);
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
        if (!st) {
            double want[24];
            for (int c = 0; c < 6; c++)
                for (int p = 0; p < 4; p++) {
                    double sq = 0; /* channels c - floor((size-1)/2) .. c + ceil((size-1)/2) */
                    for (int k = c - 1; k <= c + 2; k++)
                        if (k >= 0 && k < 6)
                            sq += (double)x.v[k * 4 + p] * x.v[k * 4 + p];
                    want[c * 4 + p] = x.v[c * 4 + p] / pow(1.5 + 0.3 / 4 * sq, 0.6);
                }
            expect_close(&y, want, 4, x.shape, 1e-5);
        }
        free(x.v), free(y.v);
        tx_test_end();
    }
    if (tx_test_begin("MeanVarianceNormalization over axes [1, 2] of [2, 3, 4]")) {
        operand x = rand_op(3, (int64_t[]){2, 3, 4}), y = {0};
        buf a = attr_is("axes", (int64_t[]){1, 2}, 2);
        tx_status st = run_node("MeanVarianceNormalization", &x, 1, &a, 1, 13, &y);
        CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
        if (!st) {
            double want[24];
            for (int b = 0; b < 2; b++) {
                double mean = 0, var = 0;
                for (int i = 0; i < 12; i++)
                    mean += x.v[b * 12 + i] / 12.0;
                for (int i = 0; i < 12; i++)
                    var += (x.v[b * 12 + i] - mean) * (x.v[b * 12 + i] - mean) / 12.0;
                for (int i = 0; i < 12; i++)
                    want[b * 12 + i] = (x.v[b * 12 + i] - mean) / (sqrt(var) + 1e-9);
            }
            expect_close(&y, want, 3, x.shape, 1e-4);
        }
        free(x.v), free(y.v);
        tx_test_end();
    }
}

/* DFT of x [2, L, c] along axis 1 with dft_length n (padding or truncating),
 * as opset 17 (axis attribute) or 20 (axis input). */
static void dft_case(int L, int c, int n, bool inverse, bool onesided, int opset) {
    char title[96];
    snprintf(title, sizeof title, "DFT opset %d of [2, %d, %d], dft_length %d%s%s", opset, L, c, n,
             inverse ? ", inverse" : "", onesided ? ", onesided" : "");
    if (!tx_test_begin(title))
        return;
    operand x = rand_op(3, (int64_t[]){2, L, c}), y = {0};
    buf g = {0}, a[3];
    int na = 0;
    a[na++] = attr_i("inverse", inverse);
    a[na++] = attr_i("onesided", onesided);
    if (opset < 20)
        a[na++] = attr_i("axis", 1);
    init_i64(&g, "n", (int64_t[]){1}, 0, (int64_t[]){n});
    init_i64(&g, "axis", (int64_t[]){1}, 0, (int64_t[]){-2});
    vinfo(&g, 11, "x0", TX_ONNX_FLOAT, x.shape, 3);
    node(&g, "DFT", "n", (const char *[]){"x0", "n", "axis"}, opset < 20 ? 2 : 3,
         (const char *[]){"y"}, 1, a, na);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, opset);
    tx_session *s = NULL;
    tx_tensor xt = {0}, yt = {0};
    tx_status st = tx_session_create(g_ctx, m.d, m.n, NULL, &s);
    tx_tensor_desc d = {.rank = 3, .shape = {2, L, c}, .data = x.v};
    if (!st)
        st = tx_tensor_create(g_ctx, &d, &xt);
    if (!st)
        st = tx_session_run(s, &(tx_feed){"x0", xt}, 1, NULL, 1, &yt);
    CHECK(st == TX_STATUS_OK, "%s", tx_last_error(g_ctx));
    int K = onesided ? n / 2 + 1 : n;
    if (!st) {
        y.rank = 3;
        y.v = malloc(sizeof(float) * (size_t)(2 * K * 2));
        y.shape[0] = 2, y.shape[1] = K, y.shape[2] = 2;
        tx_tensor_read(g_ctx, yt, y.v, (size_t)(2 * K * 2) * 4);
        double *want = calloc((size_t)(2 * K * 2), sizeof(double));
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < K; k++)
                for (int i = 0; i < L && i < n; i++) {
                    double th = 6.283185307179586 * i * k / n * (inverse ? 1 : -1);
                    double xr = x.v[(b * L + i) * c], xi = c == 2 ? x.v[(b * L + i) * c + 1] : 0;
                    double sc = inverse ? 1.0 / n : 1.0;
                    want[(b * K + k) * 2] += (xr * cos(th) - xi * sin(th)) * sc;
                    want[(b * K + k) * 2 + 1] += (xr * sin(th) + xi * cos(th)) * sc;
                }
        expect_close(&y, want, 3, y.shape, 1e-5);
        free(want);
        tx_tensor_destroy(g_ctx, yt);
    }
    if (xt.id)
        tx_tensor_destroy(g_ctx, xt);
    tx_session_destroy(s);
    free(m.d), free(x.v), free(y.v);
    tx_test_end();
}

int main(int argc, char **argv) {
    tx_host *host = NULL;
    g_ctx = tx_test_start(argc, argv, (tx_ctx_desc){0}, &host);
    einsum_cases();
    det_cases();
    cumsum_case(5, true, true);
    cumsum_case(700, false, false);
    cumsum_case(700, true, true);
    reverse_sequence_case(1);
    reverse_sequence_case(0);
    lrn_mvn_cases();
    dft_case(6, 1, 8, false, true, 17);
    dft_case(6, 2, 4, true, false, 20);
    dft_case(5, 2, 5, false, false, 20);
    tx_host_close(host, g_ctx);
    return tx_test_finish();
}
