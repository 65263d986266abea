/* IEEE special values through every op of the list (unary, clip, binary,
 * matmul): NaN, ±Inf, ±0, denormals, the largest and smallest normals, and
 * values that overflow exp/pow, compared with engine/ref/ (C's libm in double,
 * rounded to float). NaN must meet NaN, an infinity the same infinity, finite
 * results the op's tolerance.
 *
 * Denormals: GLSL ES 3.00 lets a device flush them to zero, and llvmpipe does
 * (its threads run with FTZ/DAZ). So a denormal input may act as a zero of the
 * same sign, and a result the reference makes denormal may come back as zero:
 * both are accepted, nothing else. */
#include <float.h>
#include <math.h>

#include "harness.h"
#include "internal.h"
#include "open_ctx.h"
#include "ref/ref.h"
#include "tensors.h"

static tx_host *g_host;
static tx_ctx *ctx;

static const float k_special[] = {
    NAN,  INFINITY, -INFINITY, 0.0f,  -0.0f, 1e-44f, -1e-44f, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
    1.0f, -1.0f,    0.5f,      -2.5f, 3.0f,  100.0f, -100.0f, 1e30f,   -1e30f,   89.0f,   -104.0f,
};
#define N_SPECIAL ((int)TX_COUNTOF(k_special))

static bool is_denormal(float x) {
    return x != 0 && fabsf(x) < FLT_MIN && isfinite(x);
}
static float flushed(float x) {
    return is_denormal(x) ? copysignf(0.0f, x) : x;
}

static bool close_enough(float got, float want, double atol, double rtol) {
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    if (is_denormal(want) && got == 0)
        return true;
    return fabs((double)got - want) <= atol + rtol * fabs((double)want);
}

/* sin, cos and tan of |x| >= 2^24: float32 holds no phase there (floats are
 * 2 or more apart) and no float32 reduction on a GPU matches libm's exact
 * one, so these lanes are not compared with the reference. The result must
 * still be a value the function takes: finite, within [-1, 1] for sin and cos
 * (shaders/elementwise.glsl, tx_sin_q). */
static bool phase_lost(tx_op op, float x) {
    return (op == TX_OP_SIN || op == TX_OP_COS || op == TX_OP_TAN) && isfinite(x) &&
           fabsf(x) >= 16777216.0f;
}

/* Runs the reference on `ins` (and on denormal-flushed inputs) and accepts
 * `got[i]` if it matches either. Returns the number of mismatches and prints
 * the first few. */
static int compare(tx_op op, const tx_op_attrs *attrs, tx_ref_tensor *ins, int n_in,
                   const float *got, int64_t k, const char *what) {
    tx_ref_tensor want, want_ftz;
    tx_ref_tensor flat[3];
    for (int i = 0; i < n_in; i++) {
        flat[i] = ins[i];
        int64_t n = tx_ref_numel(&ins[i]);
        flat[i].data = malloc((size_t)(n ? n : 1) * sizeof(float));
        for (int64_t j = 0; j < n; j++)
            flat[i].data[j] = flushed(ins[i].data[j]);
    }
    if (tx_ref_table[op](ins, n_in, attrs, &want) ||
        tx_ref_table[op](flat, n_in, attrs, &want_ftz)) {
        CHECK(0, "%s: the reference rejected the inputs", what);
        return 1;
    }
    double atol, rtol;
    tx_ref_tolerance(op, k, &atol, &rtol);
    if (op == TX_OP_MATMUL && attrs && attrs->matmul.activation) {
        double a2, r2;
        tx_ref_tolerance(attrs->matmul.activation, 1, &a2, &r2);
        rtol += r2;
        atol += a2;
    }
    int bad = 0;
    int64_t n = tx_ref_numel(&want);
    for (int64_t i = 0; i < n; i++) {
        if (n_in == 1 && phase_lost(op, ins[0].data[i])) {
            if (isfinite(got[i]) && (op == TX_OP_TAN || fabsf(got[i]) <= 1.0f))
                continue;
        } else if (close_enough(got[i], want.data[i], atol, rtol) ||
                   close_enough(got[i], want_ftz.data[i], atol, rtol)) {
            continue;
        }
        if (bad++ < 6) {
            char in[96] = "";
            if (n_in == 2 && op != TX_OP_MATMUL && ins[0].rank == 1)
                snprintf(in, sizeof in, "(%.9g, %.9g)", (double)ins[0].data[i],
                         (double)ins[1].data[i]);
            else if (op != TX_OP_MATMUL)
                snprintf(in, sizeof in, "(%.9g)", (double)ins[0].data[i]);
            printf("  %s: element %lld%s = %.9g, reference %.9g\n", what, (long long)i, in,
                   (double)got[i], (double)want.data[i]);
        }
    }
    tx_ref_free(&want);
    tx_ref_free(&want_ftz);
    for (int i = 0; i < n_in; i++)
        tx_ref_free(&flat[i]);
    return bad;
}

/* Uploads `ins`, runs `op`, reads the result back. */
static float *run_gpu(tx_op op, const tx_op_attrs *attrs, tx_ref_tensor *ins, int n_in,
                      int64_t *numel) {
    tx_tensor t[3] = {{0}};
    float *got = NULL;
    for (int i = 0; i < n_in; i++) {
        tx_tensor_desc d = {.rank = ins[i].rank, .data = ins[i].data};
        memcpy(d.shape, ins[i].shape, sizeof d.shape);
        if (tx_tensor_create(ctx, &d, &t[i]))
            goto out;
    }
    tx_tensor y;
    tx_status s = tx_op_run(ctx, op, t, n_in, attrs, &y);
    CHECK(s == TX_STATUS_OK, "%s: %s", tx_op_name(op), tx_last_error(ctx));
    if (s)
        goto out;
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_tensor_shape(ctx, y, &rank, shape, NULL);
    *numel = 1;
    for (int i = 0; i < rank; i++)
        *numel *= shape[i];
    got = malloc((size_t)(*numel ? *numel : 1) * sizeof(float));
    CHECK(!tx_tensor_read(ctx, y, got, (size_t)*numel * sizeof(float)), "read");
    tx_tensor_destroy(ctx, y);
out:
    for (int i = 0; i < n_in; i++)
        if (t[i].id)
            tx_tensor_destroy(ctx, t[i]);
    return got;
}

static void check_op(tx_op op, const tx_op_attrs *attrs, tx_ref_tensor *ins, int n_in, int64_t k,
                     const char *what) {
    int64_t n = 0;
    float *got = run_gpu(op, attrs, ins, n_in, &n);
    if (got) {
        int bad = compare(op, attrs, ins, n_in, got, k, what);
        CHECK(bad == 0, "%s: %d of %lld elements differ from the reference", what, bad,
              (long long)n);
        free(got);
    }
}

static void test_elementwise(tx_family fam) {
    for (int op = 1; op < TX_OP_COUNT_; op++) {
        if (tx_op_family((tx_op)op) != fam)
            continue;
        char name[96];
        snprintf(name, sizeof name, "specials through %s", tx_op_name((tx_op)op));
        if (!tx_test_begin(name))
            continue;
        if (fam == TX_FAMILY_BINARY) {
            /* every pair of specials, same shape (texel-wise path) */
            float *a = malloc(N_SPECIAL * N_SPECIAL * sizeof(float));
            float *b = malloc(N_SPECIAL * N_SPECIAL * sizeof(float));
            for (int i = 0; i < N_SPECIAL; i++)
                for (int j = 0; j < N_SPECIAL; j++) {
                    a[i * N_SPECIAL + j] = k_special[i];
                    b[i * N_SPECIAL + j] = k_special[j];
                }
            tx_ref_tensor ins[2] = {{.rank = 1, .shape = {N_SPECIAL * N_SPECIAL}, .data = a},
                                    {.rank = 1, .shape = {N_SPECIAL * N_SPECIAL}, .data = b}};
            check_op((tx_op)op, NULL, ins, 2, 1, name);
            /* and broadcast: each special against a column of all of them */
            tx_ref_tensor bc[2] = {{.rank = 2, .shape = {N_SPECIAL, 1}, .data = (float *)k_special},
                                   {.rank = 1, .shape = {N_SPECIAL}, .data = (float *)k_special}};
            snprintf(name, sizeof name, "specials through %s (broadcast)", tx_op_name((tx_op)op));
            check_op((tx_op)op, NULL, bc, 2, 1, name);
            free(a);
            free(b);
        } else if (fam == TX_FAMILY_CLIP) {
            const float bounds[][2] = {
                {0, 6}, {-1, 1}, {-INFINITY, 0.5f}, {-2, INFINITY}, {-INFINITY, INFINITY}, {3, 3}};
            for (size_t i = 0; i < TX_COUNTOF(bounds); i++) {
                tx_op_attrs at = {.lo = bounds[i][0], .hi = bounds[i][1]};
                tx_ref_tensor in = {.rank = 1, .shape = {N_SPECIAL}, .data = (float *)k_special};
                char w[128];
                snprintf(w, sizeof w, "clip [%g, %g]", (double)at.lo, (double)at.hi);
                check_op((tx_op)op, &at, &in, 1, 1, w);
            }
        } else {
            tx_ref_tensor in = {.rank = 1, .shape = {N_SPECIAL}, .data = (float *)k_special};
            check_op((tx_op)op, NULL, &in, 1, 1, name);
        }
        tx_test_end();
    }
}

static uint64_t g_rng = 99;
static uint32_t rnd(uint32_t n) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 33) % n;
}

/* Mostly ordinary values with a sprinkle of specials, so that some outputs
 * stay finite and each path (NaN, ±Inf, Inf·0, Inf − Inf) is hit. */
static void fill(float *v, int64_t n) {
    static const float ordinary[] = {1, -1, 0.5f, 2, -0.25f, 3};
    static const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-44f};
    for (int64_t i = 0; i < n; i++)
        v[i] = rnd(6) == 0 ? special[rnd(6)] : ordinary[rnd(6)];
}

static void test_matmul(void) {
    if (!tx_test_begin("specials through matmul (every kernel path)"))
        return;
    struct {
        const char *what;
        int64_t a[3], b[3];
        int ra, rb;
        tx_matmul_desc d;
        bool bias;
    } cases[] = {
        {"4x4 tiles", {16, 8}, {8, 12}, 2, 2, {0}, false},
        {"1x4 tiles", {3, 5}, {5, 8}, 2, 2, {0}, false},
        {"dot products (N % 4 != 0)", {5, 7}, {7, 3}, 2, 2, {0}, false},
        {"transposed A, 4-row tiles", {8, 12}, {8, 8}, 2, 2, {.transpose_a = true}, false},
        {"transposed B", {9, 8}, {12, 8}, 2, 2, {.transpose_b = true}, false},
        {"batched, bias + relu", {2, 8, 4}, {4, 8}, 3, 2, {.activation = TX_OP_RELU}, true},
        {"bias + sigmoid, dot path", {4, 6}, {6, 5}, 2, 2, {.activation = TX_OP_SIGMOID}, true},
    };
    for (size_t c = 0; c < TX_COUNTOF(cases); c++) {
        tx_ref_tensor ins[3] = {{.rank = cases[c].ra}, {.rank = cases[c].rb}, {.rank = 1}};
        int64_t na = 1, nb = 1;
        for (int i = 0; i < cases[c].ra; i++)
            na *= ins[0].shape[i] = cases[c].a[i];
        for (int i = 0; i < cases[c].rb; i++)
            nb *= ins[1].shape[i] = cases[c].b[i];
        int64_t N = cases[c].d.transpose_b ? cases[c].b[0] : cases[c].b[cases[c].rb - 1];
        int64_t K = cases[c].d.transpose_b ? cases[c].b[1] : cases[c].b[0];
        ins[2].shape[0] = N;
        ins[0].data = malloc((size_t)na * sizeof(float));
        ins[1].data = malloc((size_t)nb * sizeof(float));
        ins[2].data = malloc((size_t)N * sizeof(float));
        fill(ins[0].data, na);
        fill(ins[1].data, nb);
        fill(ins[2].data, N);
        tx_op_attrs at = {.matmul = cases[c].d};
        check_op(TX_OP_MATMUL, &at, ins, cases[c].bias ? 3 : 2, K, cases[c].what);
        for (int i = 0; i < 3; i++)
            free(ins[i].data);
    }
    tx_test_end();
}

/* out = a / b on the GPU, n elements of dtype dt (4 bytes each); false after
 * a failed check. */
static bool divide(int64_t n, tx_dtype dt, const void *a, const void *b, void *out) {
    tx_tensor_desc d = {.rank = 1, .shape = {n}, .dtype = dt, .data = a};
    tx_tensor ta = {0}, tb = {0}, ty = {0};
    tx_status st = tx_tensor_create(ctx, &d, &ta);
    d.data = b;
    if (!st)
        st = tx_tensor_create(ctx, &d, &tb);
    if (!st)
        st = tx_binary(ctx, TX_OP_DIV, ta, tb, &ty);
    if (!st)
        st = tx_tensor_read(ctx, ty, out, (size_t)n * 4);
    CHECK(!st, "divide: %s", tx_last_error(ctx));
    TX_DESTROY(ctx, ta, tb, ty);
    return !st;
}

/* int32 tensors are float texels: integer division by zero leaves NaN or
 * ±Inf there, and reading them back saturates (0/0 -> 0, x/0 -> INT32_MAX or
 * INT32_MIN) rather than casting, which C leaves undefined (found by
 * fuzz_api). Ordinary quotients truncate toward zero. */
static void test_int32_division(void) {
    if (!tx_test_begin("int32 division by zero reads back saturated"))
        return;
    const int32_t a[8] = {0, 7, -7, 6, 5, -9, 0, 16777216};
    const int32_t b[8] = {0, 0, 0, 4, -2, 2, 3, 0};
    const int32_t want[8] = {0, INT32_MAX, INT32_MIN, 1, -2, -4, 0, INT32_MAX};
    int32_t got[8] = {0};
    if (divide(8, TX_DTYPE_INT32, a, b, got))
        for (int i = 0; i < 8; i++)
            CHECK(got[i] == want[i], "%d / %d read back %d, want %d", a[i], b[i], got[i], want[i]);
    tx_test_end();
}

/* Division where the driver's is not IEEE (tx_caps.emulated_division, forced
 * here with desc.emulate_division): tx_div's integer long division must give
 * the IEEE 754 quotient bit for bit, on random operands and on the ties that
 * quantization and nearest resizing meet (DynamicQuantizeLinear's -2.5 /
 * (5 / 255) is -127.49999 in float32, not -127.5). */
static void test_exact_division(void) {
    if (!tx_test_begin("emulated division is IEEE 754 bit for bit"))
        return;
    tx_caps caps;
    CHECK(!tx_ctx_caps(ctx, &caps) && caps.emulated_division, "desc.emulate_division did not take");
    enum { N = 1 << 16 };
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *got = malloc(N * sizeof *got);
    TX_ASSERT(a && b && got);
    const float ties[][2] = {{-2.5f, 5.0f / 255.0f}, {3.5f, 3.5f}, {1.0f, 3.0f},
                             {0.5f, 0.1f},           {7.0f, 7.0f}, {-1.0f, 1e-30f},
                             {1e30f, 1e-8f},         {6.0f, 3.0f}, {2.0f, 0.019607844f}};
    int nt = (int)TX_COUNTOF(ties);
    for (int i = 0; i < N; i++) {
        if (i < nt) {
            a[i] = ties[i][0];
            b[i] = ties[i][1];
            continue;
        }
        /* normal operands of either sign, exponents 2^-27 .. 2^27: normal quotients */
        uint32_t ua = ((uint32_t)rnd(2) << 31) | ((100u + rnd(55)) << 23) | (rnd(1u << 23));
        uint32_t ub = ((uint32_t)rnd(2) << 31) | ((100u + rnd(55)) << 23) | (rnd(1u << 23));
        memcpy(&a[i], &ua, 4);
        memcpy(&b[i], &ub, 4);
    }
    if (divide(N, TX_DTYPE_FLOAT32, a, b, got)) {
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float want = a[i] / b[i];
            if (memcmp(&got[i], &want, 4) != 0 && bad++ < 4)
                CHECK(false, "%.9g / %.9g gave %.9g, IEEE 754 says %.9g", (double)a[i],
                      (double)b[i], (double)got[i], (double)want);
        }
        CHECK(bad == 0, "%d of %d quotients differ", bad, N);
    }
    free(a);
    free(b);
    free(got);
    tx_test_end();
}

/* Rounds to the nearest float16 value (ties to even), as a float. */
static float to_half(float x) {
    if (!isfinite(x) || x == 0)
        return x;
    if (fabsf(x) >= 65520.0f) /* rounds past the largest half, 65504 */
        return copysignf(INFINITY, x);
    int e;
    frexpf(x, &e);                                       /* |x| = m · 2^e, m in [0.5, 1) */
    int bits = e - 1 >= -14 ? 11 : 11 - (-14 - (e - 1)); /* subnormal halves have fewer */
    float scale = ldexpf(1.0f, bits - e);
    return nearbyintf(x * scale) / scale;
}

/* Float16 storage (tx_caps.float16_storage): simulated on this device with
 * desc.float16_storage. Inputs and every op output are rounded to half; the
 * reference runs on the rounded inputs, and the documented tolerance is
 * 2^-10 relative (one rounding of the output, either direction) on top of
 * the op's own, plus 2^-10 of the largest input for cancellation. */
static void test_float16_storage(void) {
    if (!tx_test_begin("float16 storage: flagged in caps, results within 2^-10"))
        return;
    tx_host *host;
    tx_ctx *c16;
    int rc = tx_host_open(&(tx_ctx_desc){.float16_storage = true}, &host, &c16);
    if (rc) {
        CHECK(0, "no float16 context (%d)", rc);
        tx_test_end();
        return;
    }
    tx_caps caps;
    tx_ctx_caps(c16, &caps);
    CHECK(caps.float16_storage, "caps.float16_storage not set");
    tx_ctx *saved = ctx;
    ctx = c16;
    const tx_op ops[] = {TX_OP_RELU, TX_OP_EXP, TX_OP_SIGMOID, TX_OP_ADD,
                         TX_OP_MUL,  TX_OP_DIV, TX_OP_MATMUL};
    for (size_t o = 0; o < TX_COUNTOF(ops); o++) {
        tx_op op = ops[o];
        int n_in = tx_op_arity(op);
        tx_ref_tensor ins[2];
        for (int i = 0; i < n_in; i++) {
            ins[i] = (tx_ref_tensor){.rank = 2, .shape = {9, 12}};
            if (op == TX_OP_MATMUL && i == 1)
                ins[i].shape[0] = 12, ins[i].shape[1] = 8;
            ins[i].data = malloc(12 * 9 * sizeof(float));
            float lo, hi;
            tx_ref_input_range(op, i, &lo, &hi);
            for (int j = 0; j < 12 * 9; j++)
                ins[i].data[j] = to_half(lo + (hi - lo) * (float)rnd(10007) / 10006.0f);
        }
        int64_t n = 0;
        float *got = run_gpu(op, NULL, ins, n_in, &n);
        tx_ref_tensor want;
        CHECK(got && !tx_ref_table[op](ins, n_in, NULL, &want), "%s ran", tx_op_name(op));
        if (got) {
            double atol, rtol;
            tx_ref_tolerance(op, 12, &atol, &rtol);
            double big = 0;
            for (int i = 0; i < n_in; i++)
                for (int j = 0; j < 12 * 9; j++)
                    big = fmax(big, fabs(ins[i].data[j]));
            atol += ldexp(1, -10) * (op == TX_OP_MATMUL ? 12 * big * big : big);
            rtol += ldexp(1, -10);
            int bad = 0;
            double worst = 0;
            for (int64_t i = 0; i < n; i++) {
                double e = fabs((double)got[i] - want.data[i]);
                worst = fmax(worst, e / fmax(fabs(want.data[i]), 1e-30));
                if (!(e <= atol + rtol * fabs(want.data[i])) && bad++ < 3)
                    printf("  f16 %s: element %lld = %.9g, reference %.9g\n", tx_op_name(op),
                           (long long)i, (double)got[i], (double)want.data[i]);
                /* what was stored must be a half */
                if (to_half(got[i]) != got[i] && bad++ < 3)
                    printf("  f16 %s: element %lld = %.9g is no float16 value\n", tx_op_name(op),
                           (long long)i, (double)got[i]);
            }
            CHECK(bad == 0, "%s: %d elements off", tx_op_name(op), bad);
            printf("  float16 %s: worst relative error %.2g\n", tx_op_name(op), worst);
            tx_ref_free(&want);
            free(got);
        }
        for (int i = 0; i < n_in; i++)
            free(ins[i].data);
    }
    /* Floats are rounded to the nearest half, ties to even, whatever the
     * driver would do with them (Mesa truncates): 1 + 3/4096 is 1 + 1/1024. */
    float near[4] = {1.0f + 3.0f / 4096, 1.0f + 1.0f / 4096, -(1.0f + 3.0f / 4096),
                     1.0f + 3.0f / 2048},
          near_got[4];
    tx_tensor tn;
    CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .data = near}, &tn) &&
              !tx_tensor_read(ctx, tn, near_got, sizeof near_got),
          "create / read");
    CHECK(near_got[0] == 1.0f + 1.0f / 1024 && near_got[1] == 1.0f &&
              near_got[2] == -(1.0f + 1.0f / 1024) && near_got[3] == 1.0f + 2.0f / 1024,
          "floats to halves: %.9g %.9g %.9g %.9g", (double)near_got[0], (double)near_got[1],
          (double)near_got[2], (double)near_got[3]);
    tx_tensor_destroy(ctx, tn);
    /* NaN and Inf still travel; 65504 is the largest finite value. */
    float sp[4] = {NAN, INFINITY, 65504.0f, 1e5f}, out[4];
    tx_tensor t, y;
    CHECK(!tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 1, .shape = {4}, .data = sp}, &t),
          "create");
    CHECK(!tx_unary(ctx, TX_OP_NEG, t, &y) && !tx_tensor_read(ctx, y, out, sizeof out), "neg");
    /* Above 65504 an upload overflows to Inf or clamps (Mesa clamps). */
    CHECK(isnan(out[0]) && out[1] == -INFINITY && out[2] == -65504.0f &&
              (out[3] == -INFINITY || out[3] == -65504.0f),
          "neg of specials: %g %g %g %g", (double)out[0], (double)out[1], (double)out[2],
          (double)out[3]);
    TX_DESTROY(ctx, t, y);
    tx_stats st;
    tx_ctx_stats(ctx, &st);
    CHECK(st.peak_texture_bytes > 0 && st.peak_texture_bytes % 8 == 0, "bytes");
    ctx = saved;
    tx_host_close(host, c16);
    tx_test_end();
}

/* The half value of bit pattern h, computed apart from the engine's. */
static float half_value(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    float v = e == 31 ? (m ? NAN : INFINITY)
              : e     ? ldexpf((float)(m | 1024), e - 25)
                      : ldexpf((float)m, -24);
    return h & 0x8000 ? -v : v;
}

/* Every half value read back as the float it widens to; got[i] for
 * pattern i (NaN patterns must read NaN). */
static int check_halves(const char *where, const float *got) {
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        float want = half_value((uint16_t)i);
        bool ok = isnan(want) ? isnan(got[i]) : memcmp(&want, &got[i], 4) == 0;
        if (!ok && bad++ < 3)
            printf("  %s: half 0x%04x read %.9g, want %.9g\n", where, (unsigned)i, (double)got[i],
                   (double)want);
    }
    return bad;
}

/* tx_tensor_desc.data_f16: all 65,536 half patterns through tx_tensor_create
 * on the GPU (float32 storage, float16 storage, split across textures) and
 * the CPU, each read back as exactly its value; the host conversions both
 * ways (tx_float_to_half_bits rounds to nearest even, as to_half). */
static void test_half_data(void) {
    if (!tx_test_begin("half-float data: every pattern exact on each storage"))
        return;
    uint16_t *h = malloc(65536 * sizeof *h);
    float *got = malloc(65536 * sizeof *got);
    for (int i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    int bad = 0, nan_kept = 0;
    for (int i = 0; i < 65536; i++) {
        uint32_t u = tx_half_bits_to_float_bits((uint16_t)i);
        memcpy(&got[i], &u, 4);
        uint16_t back = tx_float_to_half_bits(got[i]);
        nan_kept += isnan(got[i]) && (back & 0x7fff) > 0x7c00 && (back & 0x8000) == (i & 0x8000);
        bad += !isnan(got[i]) && back != i;
    }
    CHECK(bad == 0 && nan_kept == 2 * 1023, "round trip: %d patterns changed, %d NaNs kept", bad,
          nan_kept);
    CHECK(check_halves("host widening", got) == 0, "host widening");
    uint64_t seed = 12345;
    bad = 0;
    for (int k = 0; k < 200000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t u = (uint32_t)(seed >> 32);
        float x;
        memcpy(&x, &u, 4);
        if (k % 2) /* the half range and a little past it, subnormals included */
            x = ldexpf((float)(u & 0xffffff) / 16777216.0f, (int)(u >> 24 & 63) - 40) *
                (u >> 31 ? -1.0f : 1.0f);
        if (isnan(x))
            continue;
        uint32_t w = tx_half_bits_to_float_bits(tx_float_to_half_bits(x));
        float r, want = to_half(x);
        memcpy(&r, &w, 4);
        if (memcmp(&r, &want, 4) != 0 && !(r == 0 && want == 0 && signbit(r) == signbit(x)) &&
            bad++ < 3)
            printf("  float %.9g rounds to %.9g, want %.9g\n", (double)x, (double)r, (double)want);
    }
    CHECK(bad == 0, "float to half: %d of 200000 off", bad);

    struct {
        const char *name;
        tx_ctx_desc desc;
        tx_device device;
    } runs[] = {
        {"gpu float32 storage", {0}, TX_DEVICE_GPU},
        {"gpu float16 storage", {.float16_storage = true}, TX_DEVICE_GPU},
        {"gpu split across 64x64 textures", {.max_texture_size = 64}, TX_DEVICE_GPU},
        {"gpu float16 split", {.float16_storage = true, .max_texture_size = 64}, TX_DEVICE_GPU},
        {"cpu", {0}, TX_DEVICE_CPU},
    };
    for (size_t r = 0; r < TX_COUNTOF(runs); r++) {
        tx_host *host;
        tx_ctx *c;
        if (tx_host_open(&runs[r].desc, &host, &c)) {
            CHECK(0, "%s: no context", runs[r].name);
            continue;
        }
        tx_stats before, after;
        tx_ctx_stats(c, &before);
        /* 65,536 values, and a ragged 65,535 (the last texel staged) */
        for (int64_t n = 65536; n >= 65535; n--) {
            tx_tensor t = {0};
            memset(got, 0, 65536 * sizeof *got);
            tx_status st = tx_tensor_create(
                c,
                &(tx_tensor_desc){
                    .rank = 1, .shape = {n}, .data = h, .data_f16 = true, .device = runs[r].device},
                &t);
            CHECK(!st && !tx_tensor_read(c, t, got, (size_t)n * 4), "%s: create / read: %s",
                  runs[r].name, tx_last_error(c));
            if (n == 65535)
                got[65535] = half_value(65535);
            CHECK(check_halves(runs[r].name, got) == 0, "%s, %lld values", runs[r].name,
                  (long long)n);
            tx_tensor_destroy(c, t);
        }
        tx_ctx_stats(c, &after);
        uint64_t up = after.bytes_uploaded - before.bytes_uploaded;
        if (runs[r].device == TX_DEVICE_GPU) /* halves go as halves to RGBA16F only */
            CHECK(up == (runs[r].desc.float16_storage ? 2u : 4u) * 2 * 65536, "%s: uploaded %llu B",
                  runs[r].name, (unsigned long long)up);
        tx_tensor bad_t;
        CHECK(
            tx_tensor_create(
                c,
                &(tx_tensor_desc){
                    .rank = 1, .shape = {4}, .dtype = TX_DTYPE_INT32, .data = h, .data_f16 = true},
                &bad_t) == TX_STATUS_INVALID_ARGUMENT &&
                strstr(tx_last_error(c), "data_f16"),
            "int32 with data_f16 refused by name: %s", tx_last_error(c));
        tx_host_close(host, c);
    }
    free(h);
    free(got);
    tx_test_end();
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    /* Each op both ways: generic programs and specialized ones (constant
     * folding must not change IEEE results either). */
    const int modes[2] = {TX_SPECIALIZE_NEVER, TX_SPECIALIZE_ALWAYS};
    for (int m = 0; m < 2; m++) {
        ctx = tx_test_open_ctx((tx_ctx_desc){.specialize_after = modes[m]}, &g_host);
        printf("%s programs:\n", m ? "specialized" : "generic");
        test_elementwise(TX_FAMILY_UNARY);
        test_elementwise(TX_FAMILY_CLIP);
        test_elementwise(TX_FAMILY_BINARY);
        test_matmul();
        test_int32_division();
        tx_host_close(g_host, ctx);
    }
    /* The division emulation of drivers whose own is not IEEE (NVIDIA's),
     * forced on this one. */
    for (int m = 0; m < 2; m++) {
        ctx = tx_test_open_ctx(
            (tx_ctx_desc){.specialize_after = modes[m], .emulate_division = true}, &g_host);
        printf("%s programs, emulated division:\n", m ? "specialized" : "generic");
        test_exact_division();
        test_elementwise(TX_FAMILY_BINARY);
        test_int32_division();
        tx_host_close(g_host, ctx);
    }
    ctx = NULL;
    test_float16_storage();
    test_half_data();
    return tx_test_finish();
}
