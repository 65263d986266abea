/* The recurrent ops (RNN, GRU, LSTM) against a plain-C reference, on what the
 * conformance data leaves out: both directions, sequence_lens shorter than the
 * sequence (fed at run time and as a constant), initial states, peepholes,
 * clip, input_forget, linear_before_reset, layout 1 and activations with
 * their alpha/beta. The reference runs each batch entry on its own over its
 * own length, so it shares nothing with the executor's per-step masking. */
#include <math.h>

#include "harness.h"
#include "internal.h"
#include "onnx_writer.h"
#include "open_ctx.h"

enum { K_RNN, K_GRU, K_LSTM };

typedef struct act {
    const char *name;
    float alpha, beta;
} act;

typedef struct rcase {
    const char *title;
    int kind;
    int T, B, I, H;
    const char *direction;
    int layout;
    float clip; /* 0: none */
    bool lbr, input_forget, peepholes, init, lens_input;
    const int64_t *lens; /* NULL: none */
    int n_acts;          /* 0: the defaults */
    act acts[6];
    int runs; /* 0: 2; more to reach specialization (and count its programs) */
} rcase;

static double act_ref(const act *a, double x) {
    const char *n = a->name;
    if (!strcmp(n, "Sigmoid"))
        return 1.0 / (1.0 + exp(-x));
    if (!strcmp(n, "Tanh"))
        return tanh(x);
    if (!strcmp(n, "Relu"))
        return x > 0 ? x : 0;
    if (!strcmp(n, "LeakyRelu"))
        return x >= 0 ? x : a->alpha * x;
    if (!strcmp(n, "HardSigmoid"))
        return fmax(0.0, fmin(1.0, a->alpha * x + a->beta));
    if (!strcmp(n, "Affine"))
        return a->alpha * x + a->beta;
    if (!strcmp(n, "ScaledTanh"))
        return a->alpha * tanh(a->beta * x);
    if (!strcmp(n, "Softsign"))
        return x / (1 + fabs(x));
    if (!strcmp(n, "Elu"))
        return x >= 0 ? x : a->alpha * (exp(x) - 1);
    abort();
}

/* The sizes and data of one case, layout 0 ([T, B, ...]). */
typedef struct rdata {
    int D, G;
    float *x, *w, *r, *b, *h0, *c0, *p;
    double *y, *yh, *yc;
} rdata;

static double ap(const rcase *c, const act *a, double v) {
    if (c->clip > 0)
        v = fmax(-c->clip, fmin(c->clip, v));
    return act_ref(a, v);
}

static void reference(const rcase *c, rdata *d) {
    int H = c->H, G = d->G, I = c->I, B = c->B, T = c->T;
    double h[64], cc[64], g[256], hr[256];
    for (int dir = 0; dir < d->D; dir++) {
        bool rev = dir == 1 || !strcmp(c->direction, "reverse");
        const act *f = &c->acts[dir * (c->kind + 1)];
        const float *W = d->w + dir * G * H * I, *R = d->r + dir * G * H * H;
        const float *Wb = d->b + dir * 2 * G * H, *Rb = Wb + G * H, *P = d->p + dir * 3 * H;
        for (int bi = 0; bi < B; bi++) {
            int L = c->lens ? (int)c->lens[bi] : T;
            for (int k = 0; k < H; k++) {
                h[k] = d->h0[(dir * B + bi) * H + k];
                cc[k] = d->c0[(dir * B + bi) * H + k];
            }
            for (int s = 0; s < L; s++) {
                int t = rev ? L - 1 - s : s;
                const float *xt = d->x + (t * B + bi) * I;
                for (int j = 0; j < G * H; j++) {
                    double a = Wb[j], r = Rb[j];
                    for (int i = 0; i < I; i++)
                        a += xt[i] * W[j * I + i];
                    for (int k = 0; k < H; k++)
                        r += h[k] * R[j * H + k];
                    g[j] = a;
                    hr[j] = r; /* h·Rᵀ + Rb */
                }
                double nh[64];
                for (int k = 0; k < H; k++) {
                    if (c->kind == K_RNN) {
                        nh[k] = ap(c, &f[0], g[k] + hr[k]);
                    } else if (c->kind == K_LSTM) {
                        double pi = P[k], po = P[H + k], pf = P[2 * H + k];
                        double i = ap(c, &f[0], g[k] + hr[k] + pi * cc[k]);
                        double fg = c->input_forget
                                        ? 1 - i
                                        : ap(c, &f[0], g[2 * H + k] + hr[2 * H + k] + pf * cc[k]);
                        double ct = ap(c, &f[1], g[3 * H + k] + hr[3 * H + k]);
                        cc[k] = fg * cc[k] + i * ct;
                        double o = ap(c, &f[0], g[H + k] + hr[H + k] + po * cc[k]);
                        nh[k] = o * ap(c, &f[2], cc[k]);
                    }
                }
                if (c->kind == K_GRU) {
                    double z[64], r[64];
                    for (int k = 0; k < H; k++) {
                        z[k] = ap(c, &f[0], g[k] + hr[k]);
                        r[k] = ap(c, &f[0], g[H + k] + hr[H + k]);
                    }
                    for (int k = 0; k < H; k++) {
                        double v;
                        if (c->lbr) {
                            v = g[2 * H + k] + r[k] * hr[2 * H + k];
                        } else {
                            v = g[2 * H + k] + Rb[2 * H + k];
                            for (int m = 0; m < H; m++)
                                v += r[m] * h[m] * R[(2 * H + k) * H + m];
                        }
                        double hh = ap(c, &f[1], v);
                        nh[k] = (1 - z[k]) * hh + z[k] * h[k];
                    }
                }
                for (int k = 0; k < H; k++) {
                    h[k] = nh[k];
                    d->y[((t * d->D + dir) * B + bi) * H + k] = h[k];
                }
            }
            for (int k = 0; k < H; k++) {
                d->yh[(dir * B + bi) * H + k] = h[k];
                d->yc[(dir * B + bi) * H + k] = cc[k];
            }
        }
    }
}

static uint32_t g_seed = 12345;
static float rnd(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)(g_seed >> 8) / (float)(1 << 24) * 2.0f - 1.0f;
}
static float *rnd_array(int64_t n, float scale) {
    float *v = calloc((size_t)n, sizeof(float));
    for (int64_t i = 0; i < n; i++)
        v[i] = rnd() * scale;
    return v;
}

/* [a, b, c] <-> [b, a, c] (layout 1's batch-major tensors). */
static float *swap01(const float *v, int a, int b, int c) {
    float *o = malloc(sizeof(float) * (size_t)(a * b * c));
    for (int i = 0; i < a; i++)
        for (int j = 0; j < b; j++)
            memcpy(o + (j * a + i) * c, v + (i * b + j) * c, sizeof(float) * (size_t)c);
    return o;
}

static tx_tensor mk_typed(tx_ctx *ctx, int rank, const int64_t *shape, tx_dtype dt,
                          const void *data) {
    tx_tensor t = {0};
    tx_tensor_desc d = {.rank = rank, .dtype = dt, .data = data};
    memcpy(d.shape, shape, sizeof(int64_t) * (size_t)rank);
    if (tx_tensor_create(ctx, &d, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}

/* Compares output t with want's n values. */
static void compare(tx_ctx *ctx, const char *what, tx_tensor t, const double *want, int64_t n) {
    float *got = malloc(sizeof(float) * (size_t)n);
    CHECK(tx_tensor_read(ctx, t, got, (size_t)n * 4) == TX_STATUS_OK, "%s: read: %s", what,
          tx_last_error(ctx));
    int bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= 2e-5 + 2e-5 * fabs(want[i])) && bad++ < 3)
            printf("  %s[%lld]: got %.7g want %.7g\n", what, (long long)i, got[i], want[i]);
    CHECK(bad == 0, "%s: %d values differ", what, bad);
    free(got);
}

/* Layout 1's order of a layout-0 result: [a, b, c] -> [b, a, c] in place. */
static void to_layout1(double *v, int a, int b, int c) {
    double *o = malloc(sizeof(double) * (size_t)(a * b * c));
    for (int i = 0; i < a; i++)
        for (int j = 0; j < b; j++)
            memcpy(o + (j * a + i) * c, v + (i * b + j) * c, sizeof(double) * (size_t)c);
    memcpy(v, o, sizeof(double) * (size_t)(a * b * c));
    free(o);
}

static void run_case(tx_ctx *ctx, const rcase *c) {
    if (!tx_test_begin(c->title))
        return;
    static const char *const kinds[] = {"RNN", "GRU", "LSTM"};
    rdata d = {.D = strcmp(c->direction, "bidirectional") ? 1 : 2};
    d.G = c->kind == K_RNN ? 1 : c->kind == K_GRU ? 3 : 4;
    int T = c->T, B = c->B, I = c->I, H = c->H, D = d.D, G = d.G;
    d.x = rnd_array(T * B * I, 1.5f);
    d.w = rnd_array(D * G * H * I, 0.6f);
    d.r = rnd_array(D * G * H * H, 0.6f);
    d.b = rnd_array(D * 2 * G * H, 0.5f);
    d.h0 = c->init ? rnd_array(D * B * H, 0.8f) : calloc((size_t)(D * B * H), 4);
    d.c0 = c->init ? rnd_array(D * B * H, 0.8f) : calloc((size_t)(D * B * H), 4);
    d.p = c->peepholes ? rnd_array(D * 3 * H, 0.5f) : calloc((size_t)(D * 3 * H), 4);
    d.y = calloc((size_t)(T * D * B * H), sizeof(double));
    d.yh = calloc((size_t)(D * B * H), sizeof(double));
    d.yc = calloc((size_t)(D * B * H), sizeof(double));
    rcase cc = *c;
    static const act defaults[3][3] = {{{"Tanh", 0, 0}},
                                       {{"Sigmoid", 0, 0}, {"Tanh", 0, 0}},
                                       {{"Sigmoid", 0, 0}, {"Tanh", 0, 0}, {"Tanh", 0, 0}}};
    if (!c->n_acts)
        for (int dir = 0; dir < D; dir++)
            for (int k = 0; k <= c->kind; k++)
                cc.acts[dir * (c->kind + 1) + k] = defaults[c->kind][k];
    reference(&cc, &d);
    if (c->layout) { /* Y [T, D, B, H] -> [B, T, D, H]; states [D, B, H] -> [B, D, H] */
        to_layout1(d.y, T * D, B, H);
        to_layout1(d.yh, D, B, H);
        to_layout1(d.yc, D, B, H);
    }

    /* the model: X (and initial states, lengths) fed; weights constant */
    buf g = {0}, attrs[8];
    int na = 0;
    attrs[na++] = attr_i("hidden_size", H);
    attrs[na++] = attr_s("direction", c->direction);
    if (c->layout)
        attrs[na++] = attr_i("layout", 1);
    if (c->clip > 0)
        attrs[na++] = attr_f("clip", c->clip);
    if (c->lbr)
        attrs[na++] = attr_i("linear_before_reset", 1);
    if (c->input_forget)
        attrs[na++] = attr_i("input_forget", 1);
    if (c->n_acts) {
        const char *names[6];
        float al[6], be[6];
        int nal = 0, nbe = 0;
        for (int k = 0; k < c->n_acts; k++) {
            names[k] = c->acts[k].name;
            const char *n = names[k];
            bool a1 = !strcmp(n, "LeakyRelu") || !strcmp(n, "Elu") || !strcmp(n, "HardSigmoid") ||
                      !strcmp(n, "Affine") || !strcmp(n, "ScaledTanh");
            bool b1 = !strcmp(n, "HardSigmoid") || !strcmp(n, "Affine") || !strcmp(n, "ScaledTanh");
            if (a1)
                al[nal++] = c->acts[k].alpha;
            if (b1)
                be[nbe++] = c->acts[k].beta;
        }
        attrs[na++] = attr_ss("activations", names, c->n_acts);
        if (nal)
            attrs[na++] = attr_fs("activation_alpha", al, nal);
        if (nbe)
            attrs[na++] = attr_fs("activation_beta", be, nbe);
    }
    init_f(&g, "W", (int64_t[]){D, G * H, I}, 3, d.w);
    init_f(&g, "R", (int64_t[]){D, G * H, H}, 3, d.r);
    init_f(&g, "B", (int64_t[]){D, 2 * G * H}, 2, d.b);
    if (c->peepholes)
        init_f(&g, "P", (int64_t[]){D, 3 * H}, 2, d.p);
    if (c->lens && !c->lens_input)
        init_i64(&g, "L", (int64_t[]){B}, 1, c->lens);
    int64_t xs[3] = {T, B, I}, hs[3] = {D, B, H};
    if (c->layout)
        xs[0] = B, xs[1] = T, hs[0] = B, hs[1] = D;
    vinfo(&g, 11, "X", TX_ONNX_FLOAT, xs, 3);
    if (c->init) {
        vinfo(&g, 11, "h0", TX_ONNX_FLOAT, hs, 3);
        if (c->kind == K_LSTM)
            vinfo(&g, 11, "c0", TX_ONNX_FLOAT, hs, 3);
    }
    if (c->lens && c->lens_input)
        vinfo(&g, 11, "L", TX_ONNX_INT64, (int64_t[]){B}, 1);
    const char *ins[8] = {"X",
                          "W",
                          "R",
                          "B",
                          c->lens ? "L" : "",
                          c->init ? "h0" : "",
                          c->init ? "c0" : "",
                          c->peepholes ? "P" : ""};
    int n_in = c->kind == K_LSTM ? 8 : 6;
    int n_out = c->kind == K_LSTM ? 3 : 2;
    node(&g, kinds[c->kind], "rnn", ins, n_in, (const char *[]){"Y", "Y_h", "Y_c"}, n_out, attrs,
         na);
    for (int o = 0; o < n_out; o++)
        vinfo(&g, 12, (const char *[]){"Y", "Y_h", "Y_c"}[o], TX_ONNX_FLOAT, NULL, -1);
    buf m = model(&g, 14);
    tx_session *s = NULL;
    tx_status st = tx_session_create(ctx, m.d, m.n, NULL, &s);
    CHECK(st == TX_STATUS_OK, "create: %s", tx_last_error(ctx));
    free(m.d);
    if (!st) {
        float *xl = c->layout ? swap01(d.x, T, B, I) : NULL;
        float *h0l = c->layout ? swap01(d.h0, D, B, H) : NULL;
        float *c0l = c->layout ? swap01(d.c0, D, B, H) : NULL;
        tx_feed f[4];
        int nf = 0;
        f[nf++] = (tx_feed){"X", mk_typed(ctx, 3, xs, TX_DTYPE_FLOAT32, xl ? xl : d.x)};
        if (c->init) {
            f[nf++] = (tx_feed){"h0", mk_typed(ctx, 3, hs, TX_DTYPE_FLOAT32, h0l ? h0l : d.h0)};
            if (c->kind == K_LSTM)
                f[nf++] = (tx_feed){"c0", mk_typed(ctx, 3, hs, TX_DTYPE_FLOAT32, c0l ? c0l : d.c0)};
        }
        if (c->lens && c->lens_input) {
            int32_t l32[16];
            for (int k = 0; k < B; k++)
                l32[k] = (int32_t)c->lens[k];
            f[nf++] = (tx_feed){"L", mk_typed(ctx, 1, (int64_t[]){B}, TX_DTYPE_INT32, l32)};
        }
        tx_tensor out[3] = {{0}};
        tx_stats s0, s1;
        tx_ctx_stats(ctx, &s0);
        int runs = c->runs ? c->runs : 2;
        for (int run = 0; run < runs && !st; run++) { /* later runs reuse the plan */
            st = tx_session_run(s, f, nf, NULL, n_out, out);
            CHECK(st == TX_STATUS_OK, "run: %s", tx_last_error(ctx));
            if (st)
                break;
            compare(ctx, "Y", out[0], d.y, (int64_t)T * D * B * H);
            compare(ctx, "Y_h", out[1], d.yh, (int64_t)D * B * H);
            if (c->kind == K_LSTM)
                compare(ctx, "Y_c", out[2], d.yc, (int64_t)D * B * H);
            for (int o = 0; o < n_out; o++)
                tx_tensor_destroy(ctx, out[o]);
        }
        /* every time step runs the same programs: their number must not grow
         * with T (a per-step offset folded into a specialized program would;
         * scripts/test.sh runs this on the GPU) */
        tx_ctx_stats(ctx, &s1);
        uint64_t programs = s1.generic_compiles - s0.generic_compiles + s1.specialized_compiles -
                            s0.specialized_compiles;
        if (c->runs) /* (the first cases compile the generic programs too) */
            CHECK(programs < (uint64_t)T / 2, "%llu programs compiled over %d steps",
                  (unsigned long long)programs, T);
        if (c->runs && getenv("TEXEL_TEST_VERBOSE"))
            printf("  %llu programs over %d runs of %d steps\n", (unsigned long long)programs, runs,
                   T);
        for (int k = 0; k < nf; k++)
            tx_tensor_destroy(ctx, f[k].tensor);
        free(xl);
        free(h0l);
        free(c0l);
        tx_session_destroy(s);
    }
    free(d.x), free(d.w), free(d.r), free(d.b), free(d.h0), free(d.c0), free(d.p);
    free(d.y), free(d.yh), free(d.yc);
    tx_test_end();
}

int main(int argc, char **argv) {
    tx_host *host = NULL;
    tx_ctx *ctx = tx_test_start(argc, argv, (tx_ctx_desc){0}, &host);
    static const int64_t lens3[3] = {4, 2, 1}, lens2[2] = {1, 3}, lens3b[3] = {80, 33, 1};
    const rcase cases[] = {
        {"LSTM bidirectional, sequence_lens fed, initial states, peepholes", K_LSTM, 4, 3, 5, 4,
         "bidirectional", .init = true, .peepholes = true, .lens = lens3, .lens_input = true},
        {"LSTM reverse, constant sequence_lens, clip, input_forget, layout 1", K_LSTM, 3, 2, 3, 5,
         "reverse", .layout = 1, .clip = 0.7f, .input_forget = true, .lens = lens2, .init = true},
        {"LSTM forward, activations with alpha/beta", K_LSTM, 3, 2, 4, 3, "forward", .n_acts = 3,
         .acts = {{"HardSigmoid", 0.3f, 0.4f}, {"LeakyRelu", 0.2f, 0}, {"ScaledTanh", 1.5f, 0.8f}}},
        {"GRU bidirectional, sequence_lens, initial state", K_GRU, 4, 3, 2, 5, "bidirectional",
         .init = true, .lens = lens3, .lens_input = true},
        {"GRU linear_before_reset, layout 1, bidirectional", K_GRU, 3, 2, 3, 4, "bidirectional",
         .lbr = true, .layout = 1, .init = true},
        {"GRU reverse, linear_before_reset, activations", K_GRU, 3, 2, 3, 4, "reverse", .lbr = true,
         .n_acts = 2, .acts = {{"HardSigmoid", 0.25f, 0.45f}, {"Softsign", 0, 0}}},
        {"RNN bidirectional, sequence_lens, initial state, per-direction activations", K_RNN, 4, 3,
         3, 4, "bidirectional", .init = true, .lens = lens3, .n_acts = 2,
         .acts = {{"Relu", 0, 0}, {"Affine", 0.5f, 0.1f}}},
        {"LSTM, 80 steps with sequence_lens, run until specialized: programs do not grow with T",
         K_LSTM, 80, 3, 3, 4, "bidirectional", .lens = lens3b, .runs = 6, .init = true},
        {"RNN reverse, clip, layout 1, Elu", K_RNN, 5, 2, 3, 3, "reverse", .clip = 0.9f,
         .layout = 1, .n_acts = 1, .acts = {{"Elu", 0.7f, 0}}},
    };
    for (size_t i = 0; i < TX_COUNTOF(cases); i++)
        run_case(ctx, &cases[i]);
    tx_host_close(host, ctx);
    return tx_test_finish();
}
