/* The detection, indexing and volume ops of engine/model/onnx/ (detect.c,
 * scatter.c, sample.c, volume.c) beyond what libonnx-testdata's node tests
 * reach: 3-D Conv / ConvTranspose / pools with strides, pads, dilations,
 * groups and ceil_mode, MaxPool's column-major Indices in 3-D, scatter
 * reductions over duplicates, GridSample reflecting coordinates more than
 * once, each against a direct loop here; the counted read-back of NonZero;
 * and the errors bad indices and boxes give. Runs on the context's default
 * device (TEXEL_DEVICE=cpu for the CPU one). */
#include <float.h>
#include <math.h>

#include "det_ref.h"
#include "glctx.h"
#include "harness.h"
#include "onnx_writer.h"
#include "open_ctx.h"

static tx_ctx *g_ctx;

static int64_t numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

/* A deterministic value in [-1, 1). */
static float val(int64_t i, int salt) {
    uint32_t h = (uint32_t)(i * 2654435761u) ^ (uint32_t)(salt * 40503u);
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (float)(h % 20000) / 10000.0f - 1.0f;
}

static float *fill(int64_t n, int salt) {
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        v[i] = val(i, salt);
    return v;
}

/* Runs model m on feeds (name, rank, shape, data), fetching n_out outputs
 * into host arrays got[o] (malloc'd; NULL on failure). */
typedef struct feed {
    const char *name;
    int rank;
    int64_t shape[TX_MAX_RANK];
    const float *data;
    bool i32; /* fed as int32 (an int64 input), from the whole floats in data */
} feed;

static tx_tensor feed_tensor(const feed *f) {
    int64_t n = numel_of(f->rank, f->shape);
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = f->rank};
    memcpy(d.shape, f->shape, sizeof d.shape);
    if (!f->i32) {
        d.data = f->data;
        tx_tensor_create(g_ctx, &d, &t);
        return t;
    }
    int32_t *v = malloc(sizeof(int32_t) * (size_t)(n + 1));
    for (int64_t k = 0; k < n; k++)
        v[k] = (int32_t)f->data[k];
    d.dtype = TX_DTYPE_INT32;
    d.data = v;
    tx_tensor_create(g_ctx, &d, &t);
    free(v);
    return t;
}

static tx_status run_model(buf *m, const feed *f, int n_feed, int n_out, float **got,
                           int64_t *numel, tx_session_stats *ss) {
    tx_session *s = NULL;
    tx_status st = tx_session_create(g_ctx, m->d, m->n, NULL, &s);
    free(m->d);
    *m = (buf){0};
    for (int o = 0; o < n_out; o++)
        got[o] = NULL;
    if (st)
        return st;
    tx_feed fd[4];
    for (int i = 0; i < n_feed; i++)
        fd[i] = (tx_feed){f[i].name, feed_tensor(&f[i])};
    tx_tensor out[4];
    st = tx_session_run(s, fd, n_feed, NULL, n_out, out);
    for (int o = 0; o < n_out && !st; o++) {
        int rank;
        int64_t shape[TX_MAX_RANK];
        tx_dtype dt;
        tx_tensor_shape(g_ctx, out[o], &rank, shape, &dt);
        numel[o] = numel_of(rank, shape);
        got[o] = malloc(sizeof(float) * (size_t)(numel[o] + 1));
        st = tx_tensor_read(g_ctx, out[o], got[o], (size_t)numel[o] * 4);
        if (dt == TX_DTYPE_INT32)
            for (int64_t k = 0; k < numel[o]; k++) {
                int32_t v;
                memcpy(&v, &got[o][k], 4);
                got[o][k] = (float)v;
            }
    }
    if (!st)
        for (int o = 0; o < n_out; o++)
            tx_tensor_destroy(g_ctx, out[o]);
    if (ss)
        tx_session_stats_get(s, ss);
    for (int i = 0; i < n_feed; i++)
        tx_tensor_destroy(g_ctx, fd[i].tensor);
    tx_session_destroy(s);
    return st;
}

/* got[0..n) within tol (relative to max(1, |want|)) of want; counts misses. */
static void expect_close(const char *what, const float *got, int64_t got_n, const float *want,
                         int64_t n, float tol) {
    CHECK(got && got_n == n, "%s: %lld values (want %lld)", what, (long long)got_n, (long long)n);
    if (!got || got_n != n)
        return;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= tol * fmaxf(1, fabsf(want[i]))) && bad++ == 0)
            first = i;
    CHECK(bad == 0, "%s: %lld of %lld off; first at %lld: got %g want %g", what, (long long)bad,
          (long long)n, (long long)first, first >= 0 ? got[first] : 0.0,
          first >= 0 ? want[first] : 0.0);
}

static int64_t at5(const int64_t *s, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return (((a * s[1] + b) * s[2] + c) * s[3] + d) * s[4] + e;
}

/* Builds op(x, W, B) with attributes a, runs it on x and compares with want;
 * frees x, w, b and want. */
static void check_conv3d(const char *op, const int64_t *sx, const int64_t *sw, int64_t m_out,
                         buf *a, int na, float *x, float *w, float *b, float *want, int64_t ny) {
    buf g = {0};
    init_f(&g, "W", sw, 5, w);
    init_f(&g, "B", &m_out, 1, b);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, sx, 5);
    node(&g, op, "c", (const char *[]){"x", "W", "B"}, 3, (const char *[]){"y"}, 1, a, na);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 18);
    float *got[1];
    int64_t n[1];
    feed f = {"x", 5, {0}, x, false};
    memcpy(f.shape, sx, sizeof(int64_t) * 5);
    tx_status st = run_model(&m, &f, 1, 1, got, n, NULL);
    CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
    if (!st)
        expect_close("y", got[0], n[0], want, ny, 1e-4f);
    free(got[0]);
    free(x), free(w), free(b), free(want);
}

/* ---- 3-D Conv ---- */

static void test_conv3d(void) {
    if (!tx_test_begin("3-D Conv: strides, pads, dilations, group 2, bias against a loop"))
        return;
    int64_t sx[5] = {1, 4, 5, 6, 5}, sw[5] = {6, 2, 3, 2, 3}, st_[3] = {2, 1, 2},
            pd[6] = {1, 0, 1, 1, 1, 0}, dl[3] = {1, 2, 1}, so[5] = {1, 6, 0, 0, 0};
    for (int i = 0; i < 3; i++)
        so[2 + i] = (sx[2 + i] + pd[i] + pd[3 + i] - ((sw[2 + i] - 1) * dl[i] + 1)) / st_[i] + 1;
    int64_t nx = numel_of(5, sx), nw = numel_of(5, sw), ny = numel_of(5, so);
    float *x = fill(nx, 1), *w = fill(nw, 2), *b = fill(6, 3), *want = calloc((size_t)ny, 4);
    for (int64_t m = 0; m < 6; m++) {
        int64_t g = m / 3;
        for (int64_t od = 0; od < so[2]; od++)
            for (int64_t oh = 0; oh < so[3]; oh++)
                for (int64_t ow = 0; ow < so[4]; ow++) {
                    double acc = b[m];
                    for (int64_t c = 0; c < 2; c++)
                        for (int64_t kd = 0; kd < 3; kd++)
                            for (int64_t kh = 0; kh < 2; kh++)
                                for (int64_t kw = 0; kw < 3; kw++) {
                                    int64_t id = od * st_[0] - pd[0] + kd * dl[0];
                                    int64_t ih = oh * st_[1] - pd[1] + kh * dl[1];
                                    int64_t iw = ow * st_[2] - pd[2] + kw * dl[2];
                                    if (id < 0 || id >= sx[2] || ih < 0 || ih >= sx[3] || iw < 0 ||
                                        iw >= sx[4])
                                        continue;
                                    acc += (double)x[at5(sx, 0, g * 2 + c, id, ih, iw)] *
                                           w[at5(sw, m, c, kd, kh, kw)];
                                }
                    want[at5(so, 0, m, od, oh, ow)] = (float)acc;
                }
    }
    buf a[4] = {attr_is("strides", st_, 3), attr_is("pads", pd, 6), attr_is("dilations", dl, 3),
                attr_i("group", 2)};
    check_conv3d("Conv", sx, sw, 6, a, 4, x, w, b, want, ny);
    tx_test_end();
}

/* ---- 3-D ConvTranspose ---- */

static void test_conv_transpose3d(void) {
    if (!tx_test_begin("3-D ConvTranspose: strides, pads, output_padding, dilation, bias"))
        return;
    int64_t sx[5] = {1, 2, 3, 2, 3}, sw[5] = {2, 3, 2, 3, 2}, s_[3] = {2, 1, 2},
            pd[6] = {1, 0, 0, 0, 1, 1}, op[3] = {1, 0, 1}, dl[3] = {1, 1, 2}, so[5] = {1, 3};
    for (int i = 0; i < 3; i++)
        so[2 + i] =
            s_[i] * (sx[2 + i] - 1) + op[i] + (sw[2 + i] - 1) * dl[i] + 1 - pd[i] - pd[3 + i];
    int64_t nx = numel_of(5, sx), nw = numel_of(5, sw), ny = numel_of(5, so);
    float *x = fill(nx, 4), *w = fill(nw, 5), *b = fill(3, 6), *want = calloc((size_t)ny, 4);
    for (int64_t m = 0; m < 3; m++)
        for (int64_t k = 0; k < ny / 3; k++)
            want[m * (ny / 3) + k] = b[m];
    for (int64_t c = 0; c < 2; c++)
        for (int64_t id = 0; id < sx[2]; id++)
            for (int64_t ih = 0; ih < sx[3]; ih++)
                for (int64_t iw = 0; iw < sx[4]; iw++)
                    for (int64_t m = 0; m < 3; m++)
                        for (int64_t kd = 0; kd < sw[2]; kd++)
                            for (int64_t kh = 0; kh < sw[3]; kh++)
                                for (int64_t kw = 0; kw < sw[4]; kw++) {
                                    int64_t od = id * s_[0] + kd * dl[0] - pd[0];
                                    int64_t oh = ih * s_[1] + kh * dl[1] - pd[1];
                                    int64_t ow = iw * s_[2] + kw * dl[2] - pd[2];
                                    if (od < 0 || od >= so[2] || oh < 0 || oh >= so[3] || ow < 0 ||
                                        ow >= so[4])
                                        continue;
                                    want[at5(so, 0, m, od, oh, ow)] +=
                                        x[at5(sx, 0, c, id, ih, iw)] * w[at5(sw, c, m, kd, kh, kw)];
                                }
    buf a[4] = {attr_is("strides", s_, 3), attr_is("pads", pd, 6), attr_is("output_padding", op, 3),
                attr_is("dilations", dl, 3)};
    check_conv3d("ConvTranspose", sx, sw, 3, a, 4, x, w, b, want, ny);
    tx_test_end();
}

/* ---- 3-D pools ---- */

/* A 3-D pool by a direct loop: kind 0 max, 1 average without pads in the
 * count, 2 average with them; ceil mode as PyTorch (a window starts inside
 * the input or its begin padding). idx: MaxPool's column-major Indices. */
static void pool_ref(int kind, const float *x, const int64_t *sx, const int64_t *k,
                     const int64_t *s, const int64_t *pd, bool ceil_mode, int64_t *so, float *y,
                     float *idx) {
    so[0] = sx[0];
    so[1] = sx[1];
    for (int i = 0; i < 3; i++) {
        int64_t room = sx[2 + i] + pd[i] + pd[3 + i] - k[i];
        so[2 + i] = (ceil_mode ? (room + s[i] - 1) / s[i] : room / s[i]) + 1;
        if (ceil_mode && (so[2 + i] - 1) * s[i] >= sx[2 + i] + pd[i])
            so[2 + i]--;
    }
    if (!y)
        return;
    for (int64_t c = 0; c < sx[1]; c++)
        for (int64_t od = 0; od < so[2]; od++)
            for (int64_t oh = 0; oh < so[3]; oh++)
                for (int64_t ow = 0; ow < so[4]; ow++) {
                    double acc = kind ? 0 : -INFINITY;
                    int64_t cnt = 0, cells = 0, best = -1;
                    int64_t o[3] = {od, oh, ow};
                    for (int64_t kd = 0; kd < k[0]; kd++)
                        for (int64_t kh = 0; kh < k[1]; kh++)
                            for (int64_t kw = 0; kw < k[2]; kw++) {
                                int64_t p[3], kk[3] = {kd, kh, kw};
                                bool in_pad = true, in = true;
                                for (int i = 0; i < 3; i++) {
                                    p[i] = o[i] * s[i] - pd[i] + kk[i];
                                    in = in && p[i] >= 0 && p[i] < sx[2 + i];
                                    in_pad = in_pad && p[i] < sx[2 + i] + pd[3 + i];
                                }
                                cells += in_pad;
                                if (!in)
                                    continue;
                                cnt++;
                                float v = x[at5(sx, 0, c, p[0], p[1], p[2])];
                                if (kind)
                                    acc += v;
                                else if (v > acc) {
                                    acc = v;
                                    best = c * sx[2] * sx[3] * sx[4] + p[0] + p[1] * sx[2] +
                                           p[2] * sx[2] * sx[3];
                                }
                            }
                    int64_t at = at5(so, 0, c, od, oh, ow);
                    y[at] = (float)(kind == 0 ? acc : acc / (double)(kind == 1 ? cnt : cells));
                    if (idx)
                        idx[at] = (float)best;
                }
}

static void test_pools3d(void) {
    if (!tx_test_begin("3-D MaxPool / AveragePool: pads, strides, ceil_mode, count_include_pad; "
                       "MaxPool's column-major Indices"))
        return;
    int64_t sx[5] = {1, 2, 5, 6, 7}, k[3] = {2, 3, 2}, s[3] = {2, 2, 1}, pd[6] = {1, 1, 0, 0, 1, 1},
            so[5];
    int64_t nx = numel_of(5, sx);
    float *x = fill(nx, 7);
    for (int kind = 0; kind < 4; kind++) {
        bool ceil_mode = kind != 3, with_idx = kind == 3;
        int rk = kind == 3 ? 0 : kind;
        pool_ref(rk, x, sx, k, s, pd, ceil_mode, so, NULL, NULL);
        int64_t ny = numel_of(5, so);
        float *want = calloc((size_t)ny, 4), *wi = calloc((size_t)ny, 4);
        pool_ref(rk, x, sx, k, s, pd, ceil_mode, so, want, wi);
        buf g = {0},
            a[5] = {attr_is("kernel_shape", k, 3), attr_is("strides", s, 3), attr_is("pads", pd, 6),
                    attr_i("ceil_mode", ceil_mode),
                    rk ? attr_i("count_include_pad", rk == 2) : attr_i("storage_order", 1)};
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, sx, 5);
        node(&g, rk ? "AveragePool" : "MaxPool", "p", (const char *[]){"x"}, 1,
             (const char *[]){"y", "i"}, with_idx ? 2 : 1, a, 5);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
        if (with_idx)
            vinfo(&g, 12, "i", TX_ONNX_INT64, NULL, -1);
        buf m = model(&g, 18);
        float *got[2];
        int64_t n[2];
        tx_status st = run_model(&m, &(feed){"x", 5, {1, 2, 5, 6, 7}, x, false}, 1,
                                 with_idx ? 2 : 1, got, n, NULL);
        CHECK(st == TX_STATUS_OK, "case %d: %s", kind, tx_last_error(g_ctx));
        if (!st) {
            expect_close(kind == 0   ? "max"
                         : kind == 1 ? "average"
                         : kind == 2 ? "average+pad"
                                     : "max+idx",
                         got[0], n[0], want, ny, 1e-5f);
            if (with_idx)
                expect_close("indices", got[1], n[1], wi, ny, 0);
        }
        for (int o = 0; o < (with_idx ? 2 : 1); o++)
            free(got[o]);
        free(want);
        free(wi);
    }
    free(x);
    tx_test_end();
}

/* ---- scatters ---- */

/* Runs the one scatter node op (attributes a) on x = data [3, 4] with the
 * initializers I (int64 indices, shape si) and U (updates, shape su); got, n
 * as run_model's. */
static tx_status run_scatter(const char *op, const int64_t *si, const int64_t *idx,
                             const int64_t *su, const float *upd, buf *a, int n_a,
                             const float *data, float **got, int64_t *n) {
    buf g = {0};
    init_i64(&g, "I", si, 2, idx);
    init_f(&g, "U", su, 2, upd);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){3, 4}, 2);
    node(&g, op, "s", (const char *[]){"x", "I", "U"}, 3, (const char *[]){"y"}, 1, a, n_a);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 18);
    return run_model(&m, &(feed){"x", 2, {3, 4}, data, false}, 1, 1, got, n, NULL);
}

static void test_scatter(void) {
    if (!tx_test_begin("ScatterElements max/mul over duplicates; ScatterND min; a bad index"))
        return;
    const char *reds[] = {"max", "mul"};
    int64_t si[2] = {3, 2};
    int64_t idx[6] = {1, 3, 1, 1, 1, 3}; /* axis 1: (0,1) (0,3) (1,1) (1,1) (2,1) (2,3) */
    float upd[6] = {5, -2, 0.5f, 3, -1, 7};
    float *data = fill(12, 8);
    for (int r = 0; r < 2; r++) {
        float want[12];
        memcpy(want, data, sizeof want);
        for (int u = 0; u < 6; u++) {
            float *t = &want[(u / 2) * 4 + idx[u]];
            *t = r == 0 ? fmaxf(*t, upd[u]) : *t * upd[u];
        }
        buf a[2] = {attr_i("axis", 1), attr_s("reduction", reds[r])};
        float *got[1];
        int64_t n[1];
        tx_status st = run_scatter("ScatterElements", si, idx, si, upd, a, 2, data, got, n);
        CHECK(st == TX_STATUS_OK, "%s: %s", reds[r], tx_last_error(g_ctx));
        if (!st)
            expect_close(reds[r], got[0], n[0], want, 12, 1e-6f);
        free(got[0]);
    }
    /* ScatterND min: rows 2, 0, 2 of [3, 4] */
    {
        float want[12], rows[12];
        int64_t ri[3] = {2, 0, 2};
        for (int i = 0; i < 12; i++)
            rows[i] = val(i, 9);
        memcpy(want, data, sizeof want);
        for (int u = 0; u < 3; u++)
            for (int e = 0; e < 4; e++)
                want[ri[u] * 4 + e] = fminf(want[ri[u] * 4 + e], rows[u * 4 + e]);
        buf a[1] = {attr_s("reduction", "min")};
        float *got[1];
        int64_t n[1];
        tx_status st = run_scatter("ScatterND", (int64_t[]){3, 1}, ri, (int64_t[]){3, 4}, rows, a,
                                   1, data, got, n);
        CHECK(st == TX_STATUS_OK, "ScatterND: %s", tx_last_error(g_ctx));
        if (!st)
            expect_close("ScatterND min", got[0], n[0], want, 12, 1e-6f);
        free(got[0]);
    }
    /* index 4 on an axis of 4 */
    {
        int64_t bad[6] = {1, 4, 0, 0, 0, 0};
        buf a[1] = {attr_i("axis", 1)};
        float *got[1];
        int64_t n[1];
        tx_status st = run_scatter("ScatterElements", si, bad, si, upd, a, 1, data, got, n);
        CHECK(st == TX_STATUS_INVALID_ARGUMENT && strstr(tx_last_error(g_ctx), "index 4"), "%s: %s",
              tx_status_name(st), tx_last_error(g_ctx));
        free(got[0]);
    }
    free(data);
    tx_test_end();
}

/* ---- NonZero's read-back, NMS's checks ---- */

static void test_nonzero_readback(void) {
    if (!tx_test_begin("NonZero on a device value: coordinates, one counted read-back; "
                       "NonMaxSuppression names bad boxes"))
        return;
    float x[12] = {0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4};
    buf g = {0};
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){3, 4}, 2);
    node(&g, "Relu", "r", (const char *[]){"x"}, 1, (const char *[]){"h"}, 1, NULL, 0);
    node(&g, "NonZero", "nz", (const char *[]){"h"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    vinfo(&g, 12, "y", TX_ONNX_INT64, NULL, -1);
    buf m = model(&g, 13);
    float *got[1];
    int64_t n[1];
    tx_session_stats ss = {0};
    tx_status st = run_model(&m, &(feed){"x", 2, {3, 4}, x, false}, 1, 1, got, n, &ss);
    CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
    float want[8] = {0, 0, 1, 2, 1, 3, 2, 3};
    if (!st)
        expect_close("coordinates", got[0], n[0], want, 8, 0);
    CHECK(ss.readbacks == 1 && ss.readback_bytes == 12 * 4, "read-backs %llu, %llu B",
          (unsigned long long)ss.readbacks, (unsigned long long)ss.readback_bytes);
    free(got[0]);
    /* all zeros: an empty [2, 0] result */
    float zeros[12] = {0};
    buf gz = {0};
    vinfo(&gz, 11, "x", TX_ONNX_FLOAT, (int64_t[]){3, 4}, 2);
    node(&gz, "NonZero", "nz", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    vinfo(&gz, 12, "y", TX_ONNX_INT64, NULL, -1);
    m = model(&gz, 13);
    st = run_model(&m, &(feed){"x", 2, {3, 4}, zeros, false}, 1, 1, got, n, NULL);
    CHECK(st == TX_STATUS_OK && n[0] == 0, "all zeros: %s, %lld values", tx_status_name(st),
          (long long)n[0]);
    free(got[0]);

    buf g2 = {0};
    vinfo(&g2, 11, "b", TX_ONNX_FLOAT, (int64_t[]){1, 3, 5}, 3);
    vinfo(&g2, 11, "s", TX_ONNX_FLOAT, (int64_t[]){1, 1, 3}, 3);
    node(&g2, "NonMaxSuppression", "n", (const char *[]){"b", "s"}, 2, (const char *[]){"y"}, 1,
         NULL, 0);
    vinfo(&g2, 12, "y", TX_ONNX_INT64, NULL, -1);
    m = model(&g2, 13);
    float bx[15] = {0}, sc[3] = {0};
    st = run_model(&m, (feed[]){{"b", 3, {1, 3, 5}, bx, false}, {"s", 3, {1, 1, 3}, sc, false}}, 2,
                   1, got, n, NULL);
    CHECK(st == TX_STATUS_SHAPE_MISMATCH && strstr(tx_last_error(g_ctx), "[B, N, 4]"), "%s: %s",
          tx_status_name(st), tx_last_error(g_ctx));
    free(got[0]);
    tx_test_end();
}

/* ---- shape-like inputs fed at run time ---- */

static void test_runtime_shapes(void) {
    if (!tx_test_begin("Range, ConstantOfShape, Expand and Tile with caller-fed int inputs: "
                       "results, and each read back once"))
        return;
    /* r = Range(0, limit, 1.5); z = ConstantOfShape(shp); e = Expand(x, shp); t = Tile(x, rep) */
    buf g = {0};
    float zero = 0, step = 1.5f;
    init_f(&g, "s0", NULL, 0, &zero);
    init_f(&g, "d", NULL, 0, &step);
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){1, 3}, 2);
    vinfo(&g, 11, "limit", TX_ONNX_FLOAT, NULL, 0);
    vinfo(&g, 11, "shp", TX_ONNX_INT64, (int64_t[]){2}, 1);
    vinfo(&g, 11, "rep", TX_ONNX_INT64, (int64_t[]){2}, 1);
    node(&g, "Range", "r", (const char *[]){"s0", "limit", "d"}, 3, (const char *[]){"r"}, 1, NULL,
         0);
    node(&g, "ConstantOfShape", "c", (const char *[]){"shp"}, 1, (const char *[]){"z"}, 1, NULL, 0);
    node(&g, "Expand", "e", (const char *[]){"x", "shp"}, 2, (const char *[]){"e"}, 1, NULL, 0);
    node(&g, "Tile", "t", (const char *[]){"x", "rep"}, 2, (const char *[]){"t"}, 1, NULL, 0);
    const char *outs[] = {"r", "z", "e", "t"};
    for (int o = 0; o < 4; o++)
        vinfo(&g, 12, outs[o], TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 13);
    tx_session *s = NULL;
    tx_status st = tx_session_create(g_ctx, m.d, m.n, NULL, &s);
    free(m.d);
    CHECK(st == TX_STATUS_OK, "create: %s", tx_last_error(g_ctx));
    if (st) {
        tx_test_end();
        return;
    }
    float xv[3] = {1, 2, 3}, lim = 5;
    int32_t shp[2] = {4, 3}, rep[2] = {2, 2};
    tx_tensor in[4] = {feed_tensor(&(feed){"x", 2, {1, 3}, xv, false}),
                       feed_tensor(&(feed){"limit", 0, {0}, &lim, false})},
              out[4];
    tx_tensor_create(
        g_ctx, &(tx_tensor_desc){.rank = 1, .shape = {2}, .dtype = TX_DTYPE_INT32, .data = shp},
        &in[2]);
    tx_tensor_create(
        g_ctx, &(tx_tensor_desc){.rank = 1, .shape = {2}, .dtype = TX_DTYPE_INT32, .data = rep},
        &in[3]);
    tx_feed fd[4] = {{"x", in[0]}, {"limit", in[1]}, {"shp", in[2]}, {"rep", in[3]}};
    st = tx_session_run(s, fd, 4, outs, 4, out);
    CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
    if (!st) {
        int64_t want_n[4] = {4, 12, 12, 12};
        float r_want[4] = {0, 1.5f, 3, 4.5f}, got[12];
        for (int o = 0; o < 4; o++) {
            int rank;
            int64_t shape[TX_MAX_RANK];
            tx_tensor_shape(g_ctx, out[o], &rank, shape, NULL);
            int64_t n = numel_of(rank, shape);
            CHECK(n == want_n[o], "%s has %lld values", outs[o], (long long)n);
            if (n == want_n[o] && !tx_tensor_read(g_ctx, out[o], got, (size_t)n * 4))
                for (int64_t k = 0; k < n; k++) {
                    float w = o == 0 ? r_want[k] : o == 1 ? 0 : xv[k % 3];
                    CHECK(got[k] == w, "%s[%lld] = %g, want %g", outs[o], (long long)k, got[k], w);
                }
            tx_tensor_destroy(g_ctx, out[o]);
        }
        tx_session_stats ss;
        tx_session_stats_get(s, &ss);
        /* limit, shp (read once for two nodes), rep */
        CHECK(ss.readbacks == 3, "%llu read-backs", (unsigned long long)ss.readbacks);
    }
    for (int i = 0; i < 4; i++)
        tx_tensor_destroy(g_ctx, in[i]);
    tx_session_destroy(s);
    tx_test_end();
}

/* ---- RoiAlign max ---- */

/* onnxruntime's RoiAlign for one roi, mode max, output_half_pixel. */
static void roi_max_ref(const float *img, int64_t h, int64_t w, const float *roi, int64_t oh,
                        int64_t ow, float *out) {
    float x1 = roi[0], y1 = roi[1], rw = fmaxf(roi[2] - roi[0], 1), rh = fmaxf(roi[3] - roi[1], 1);
    float bw = rw / (float)ow, bh = rh / (float)oh;
    int64_t gy = (int64_t)ceilf(rh / (float)oh), gx = (int64_t)ceilf(rw / (float)ow);
    for (int64_t py = 0; py < oh; py++)
        for (int64_t px = 0; px < ow; px++) {
            float best = -INFINITY;
            for (int64_t iy = 0; iy < gy; iy++)
                for (int64_t ix = 0; ix < gx; ix++) {
                    float yy = y1 + (float)py * bh + ((float)iy + 0.5f) * bh / (float)gy;
                    float xx = x1 + (float)px * bw + ((float)ix + 0.5f) * bw / (float)gx;
                    float v = 0;
                    if (!(yy < -1 || yy > (float)h || xx < -1 || xx > (float)w)) {
                        yy = fmaxf(yy, 0), xx = fmaxf(xx, 0);
                        int64_t yl = (int64_t)yy, xl = (int64_t)xx;
                        int64_t yh = yl >= h - 1 ? (yl = h - 1) : yl + 1;
                        int64_t xh = xl >= w - 1 ? (xl = w - 1) : xl + 1;
                        yy = yl == h - 1 && yh == yl ? (float)yl : yy;
                        xx = xl == w - 1 && xh == xl ? (float)xl : xx;
                        float ly = yy - (float)yl, lx = xx - (float)xl;
                        v = fmaxf(
                            fmaxf((1 - ly) * (1 - lx) * img[yl * w + xl],
                                  (1 - ly) * lx * img[yl * w + xh]),
                            fmaxf(ly * (1 - lx) * img[yh * w + xl], ly * lx * img[yh * w + xh]));
                    }
                    best = fmaxf(best, v);
                }
            out[py * ow + px] = best;
        }
}

static void test_roi_align_max(void) {
    if (!tx_test_begin("RoiAlign max with adaptive sampling: rois of different sample counts"))
        return;
    enum { H = 6, W = 7, OH = 2, OW = 3 };
    float *x = fill(4 * H * W, 12);
    for (int i = 0; i < 4 * H * W; i++)
        x[i] -= 1.5f; /* mostly negative: zero-weight padding would show */
    float rois[8] = {0.5f, 1, 5.5f, 4.2f, 1, 0.2f, 2.5f, 2};
    float bi[2] = {1, 0}, want[2 * 2 * OH * OW];
    for (int r = 0; r < 2; r++)
        for (int ch = 0; ch < 2; ch++)
            roi_max_ref(x + ((int)bi[r] * 2 + ch) * H * W, H, W, rois + r * 4, OH, OW,
                        want + (r * 2 + ch) * OH * OW);
    buf g = {0},
        a[4] = {attr_s("mode", "max"), attr_i("output_height", OH), attr_i("output_width", OW),
                attr_s("coordinate_transformation_mode", "output_half_pixel")};
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 2, H, W}, 4);
    vinfo(&g, 11, "rois", TX_ONNX_FLOAT, (int64_t[]){2, 4}, 2);
    vinfo(&g, 11, "bi", TX_ONNX_INT64, (int64_t[]){2}, 1);
    node(&g, "RoiAlign", "r", (const char *[]){"x", "rois", "bi"}, 3, (const char *[]){"y"}, 1, a,
         4);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 16);
    float *got[1];
    int64_t n[1];
    tx_status st = run_model(&m,
                             (feed[]){{"x", 4, {2, 2, H, W}, x, false},
                                      {"rois", 2, {2, 4}, rois, false},
                                      {"bi", 1, {2}, bi, true}},
                             3, 1, got, n, NULL);
    CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
    if (!st)
        expect_close("max", got[0], n[0], want, 2 * 2 * OH * OW, 1e-5f);
    free(got[0]);
    free(x);
    tx_test_end();
}

/* ---- BitShift ---- */

static void test_bit_shift(void) {
    if (!tx_test_begin("BitShift: uint8 LEFT wraps modulo 256, RIGHT floors, on device values"))
        return;
    float xv[4] = {200, 7, 255, 128}, yv[4] = {1, 3, 4, 7};
    float want[2][4] = {{144, 56, 240, 0}, {100, 0, 15, 1}};
    for (int r = 0; r < 2; r++) {
        buf g = {0}, a[1] = {attr_s("direction", r ? "RIGHT" : "LEFT")};
        vinfo(&g, 11, "x", TX_ONNX_UINT8, (int64_t[]){4}, 1);
        vinfo(&g, 11, "y", TX_ONNX_UINT8, (int64_t[]){4}, 1);
        node(&g, "BitShift", "b", (const char *[]){"x", "y"}, 2, (const char *[]){"z"}, 1, a, 1);
        vinfo(&g, 12, "z", TX_ONNX_UINT8, NULL, -1);
        buf m = model(&g, 11);
        float *got[1];
        int64_t n[1];
        tx_status st = run_model(&m, (feed[]){{"x", 1, {4}, xv, true}, {"y", 1, {4}, yv, true}}, 2,
                                 1, got, n, NULL);
        CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
        if (!st)
            expect_close(r ? "right" : "left", got[0], n[0], want[r], 4, 0);
        free(got[0]);
    }
    tx_test_end();
}

/* ---- DFT ---- */

static void test_dft(void) {
    if (!tx_test_begin("DFT onesided with dft_length past the signal (zero-padded) and cropped, "
                       "and the inverse of a complex signal, against a direct sum"))
        return;
    enum { B = 2, N = 6, C = 3 };
    float *xr = fill(B * N * C, 13), *xc = fill(B * N * C * 2, 14);
    for (int cs = 0; cs < 3; cs++) {
        int64_t len = cs == 0 ? 9 : cs == 1 ? 4 : N;
        bool inverse = cs == 2, onesided = cs < 2;
        int64_t k = onesided ? len / 2 + 1 : len;
        int comps = inverse ? 2 : 1;
        const float *x = inverse ? xc : xr;
        float *want = calloc((size_t)(B * k * C * 2), 4);
        for (int b = 0; b < B; b++)
            for (int64_t f = 0; f < k; f++)
                for (int ch = 0; ch < C; ch++) {
                    double re = 0, im = 0;
                    for (int64_t j = 0; j < len && j < N; j++) {
                        double a =
                            (inverse ? 2 : -2) * 3.141592653589793 * (double)(f * j) / (double)len;
                        double vr = x[((b * N + j) * C + ch) * comps];
                        double vi = comps == 2 ? x[((b * N + j) * C + ch) * comps + 1] : 0;
                        re += vr * cos(a) - vi * sin(a);
                        im += vr * sin(a) + vi * cos(a);
                    }
                    if (inverse)
                        re /= (double)len, im /= (double)len;
                    want[((b * k + f) * C + ch) * 2] = (float)re;
                    want[((b * k + f) * C + ch) * 2 + 1] = (float)im;
                }
        buf g = {0},
            a[3] = {attr_i("axis", 1), attr_i("onesided", onesided), attr_i("inverse", inverse)};
        init_i64(&g, "L", NULL, 0, &len);
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){B, N, C, comps}, 4);
        node(&g, "DFT", "d", (const char *[]){"x", "L"}, 2, (const char *[]){"y"}, 1, a, 3);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
        buf m = model(&g, 17);
        float *got[1];
        int64_t n[1];
        tx_status st =
            run_model(&m, &(feed){"x", 4, {B, N, C, comps}, x, false}, 1, 1, got, n, NULL);
        CHECK(st == TX_STATUS_OK, "case %d: %s", cs, tx_last_error(g_ctx));
        if (!st)
            expect_close(cs == 0   ? "padded"
                         : cs == 1 ? "cropped"
                                   : "inverse",
                         got[0], n[0], want, B * k * C * 2, 1e-4f);
        free(got[0]);
        free(want);
    }
    free(xr);
    free(xc);
    tx_test_end();
}

/* ---- Det ---- */

static void test_det(void) {
    if (!tx_test_begin(
            "Det: 5x5 matrices needing pivots, a permutation (-1) and a singular one (0)"))
        return;
    enum { B = 4, M = 5 };
    float *x = fill(B * M * M, 15), want[B];
    /* matrix 2: a row permutation with a zero leading pivot; matrix 3: two equal rows */
    memset(x + 2 * M * M, 0, sizeof(float) * M * M);
    for (int r = 0; r < M; r++)
        x[2 * M * M + r * M + (r + 1) % M] = 1;
    memcpy(x + 3 * M * M + M, x + 3 * M * M, sizeof(float) * M);
    for (int b = 0; b < B; b++)
        want[b] = (float)tx_test_det_ref(x + b * M * M, M);
    buf g = {0};
    vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){2, 2, M, M}, 4);
    node(&g, "Det", "d", (const char *[]){"x"}, 1, (const char *[]){"y"}, 1, NULL, 0);
    vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 11);
    float *got[1];
    int64_t n[1];
    tx_status st = run_model(&m, &(feed){"x", 4, {2, 2, M, M}, x, false}, 1, 1, got, n, NULL);
    CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(g_ctx));
    if (!st) {
        expect_close("det", got[0], n[0], want, B, 1e-4f);
        CHECK(got[0][2] == 1 && got[0][3] == 0, "permutation %g (want 1: a 5-cycle), singular %g",
              got[0][2], got[0][3]);
    }
    free(got[0]);
    free(x);
    tx_test_end();
}

/* ---- GridSample ---- */

/* onnxruntime's GsReflect. */
static float reflect(float v, float lo, float hi) {
    float range = hi - lo;
    if (v < lo) {
        float dx = lo - v;
        int n = (int)(dx / range);
        float r = dx - (float)n * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        float dx = v - hi;
        int n = (int)(dx / range);
        float r = dx - (float)n * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return v;
}

static float pixel(const float *x, int64_t h, int64_t w, int64_t yy, int64_t xx, int pad,
                   bool align) {
    if (pad == 0)
        return yy < 0 || yy >= h || xx < 0 || xx >= w ? 0 : x[yy * w + xx];
    if (pad == 1) {
        yy = yy < 0 ? 0 : yy >= h ? h - 1 : yy;
        xx = xx < 0 ? 0 : xx >= w ? w - 1 : xx;
    } else {
        yy = (int64_t)reflect((float)yy, align ? 0 : -0.5f, align ? (float)h - 1 : (float)h - 0.5f);
        xx = (int64_t)reflect((float)xx, align ? 0 : -0.5f, align ? (float)w - 1 : (float)w - 0.5f);
    }
    return x[yy * w + xx];
}

static void test_grid_sample(void) {
    if (!tx_test_begin("GridSample bilinear/nearest, 2 images: border and reflection padding "
                       "far outside the image, both align_corners"))
        return;
    enum { N = 2, H = 3, W = 4, HO = 5, WO = 6 };
    float *x = fill(N * 2 * H * W, 10), grid[N * HO * WO * 2];
    for (int i = 0; i < N * HO * WO * 2; i++)
        grid[i] = val(i, 11) * 4.5f; /* up to 4.5 widths outside: several reflections */
    const char *pads[] = {"zeros", "border", "reflection"};
    for (int c = 0; c < 12; c++) {
        int pad = c % 3;
        bool align = (c / 3) % 2, nearest = c >= 6;
        float want[N * 2 * HO * WO];
        for (int nc = 0; nc < N * 2; nc++)
            for (int o = 0; o < HO * WO; o++) {
                const float *gp = grid + ((nc / 2) * HO * WO + o) * 2;
                float gx = gp[0], gy = gp[1];
                float ux = align ? (gx + 1) / 2 * (W - 1) : ((gx + 1) * W - 1) / 2;
                float uy = align ? (gy + 1) / 2 * (H - 1) : ((gy + 1) * H - 1) / 2;
                const float *img = x + nc * H * W;
                if (nearest) {
                    want[nc * HO * WO + o] = pixel(img, H, W, (int64_t)nearbyintf(uy),
                                                   (int64_t)nearbyintf(ux), pad, align);
                    continue;
                }
                int64_t x1 = (int64_t)floorf(ux), y1 = (int64_t)floorf(uy);
                float dx = ux - (float)x1, dy = uy - (float)y1;
                want[nc * HO * WO + o] =
                    (1 - dy) * ((1 - dx) * pixel(img, H, W, y1, x1, pad, align) +
                                dx * pixel(img, H, W, y1, x1 + 1, pad, align)) +
                    dy * ((1 - dx) * pixel(img, H, W, y1 + 1, x1, pad, align) +
                          dx * pixel(img, H, W, y1 + 1, x1 + 1, pad, align));
            }
        buf g = {0}, a[3] = {attr_s("mode", nearest ? "nearest" : "bilinear"),
                             attr_s("padding_mode", pads[pad]), attr_i("align_corners", align)};
        vinfo(&g, 11, "x", TX_ONNX_FLOAT, (int64_t[]){N, 2, H, W}, 4);
        vinfo(&g, 11, "g", TX_ONNX_FLOAT, (int64_t[]){N, HO, WO, 2}, 4);
        node(&g, "GridSample", "s", (const char *[]){"x", "g"}, 2, (const char *[]){"y"}, 1, a, 3);
        vinfo(&g, 12, "y", TX_ONNX_FLOAT, NULL, -1);
        buf m = model(&g, 16);
        float *got[1];
        int64_t n[1];
        tx_status st = run_model(
            &m, (feed[]){{"x", 4, {N, 2, H, W}, x, false}, {"g", 4, {N, HO, WO, 2}, grid, false}},
            2, 1, got, n, NULL);
        CHECK(st == TX_STATUS_OK, "case %d: %s", c, tx_last_error(g_ctx));
        char what[64];
        snprintf(what, sizeof what, "%s %s align %d", nearest ? "nearest" : "bilinear", pads[pad],
                 align);
        if (!st)
            expect_close(what, got[0], n[0], want, N * 2 * HO * WO, 1e-4f);
        free(got[0]);
    }
    free(x);
    tx_test_end();
}

int main(int argc, char **argv) {
    tx_t.filter = argc > 1 ? argv[1] : NULL;
    tx_host *host = NULL;
    g_ctx = tx_test_open_ctx_counted((tx_ctx_desc){0}, &host);
    test_conv3d();
    test_conv_transpose3d();
    test_pools3d();
    test_scatter();
    test_nonzero_readback();
    test_runtime_shapes();
    test_roi_align_max();
    test_bit_shift();
    test_dft();
    test_det();
    test_grid_sample();
    tx_stats cs;
    tx_ctx_stats(g_ctx, &cs);
    if (tx_test_begin("no tensor leaks")) {
        CHECK(cs.live_tensors == 0, "%llu tensors live", (unsigned long long)cs.live_tensors);
        tx_test_end();
    }
    tx_host_close(host, g_ctx);
    return tx_test_finish();
}
