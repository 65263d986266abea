/* texel bench: the desktop benchmark runner over bench/cases.c.
 * For each case and mode (GPU: generic only, specialized only, adaptive with
 * the default k; CPU: the CPU device with all cores, and with one thread) a
 * fresh engine context measures the first call (upload + compile
 * + run + download) and the steady state (median/min/max over --runs calls,
 * each including the download), with the cache counters; the plain-C
 * reference runs once as the CPU baseline. The driver's shader disk cache is
 * disabled so that no earlier run flatters a first call.
 *
 * Between the first call and the steady runs, warm-up calls run until one
 * call compiles nothing and leaves nothing compiling (settled()). Without it
 * the adaptive mode's steady median took in its transition: the k-th
 * identical call still runs the generic program and issues the specialized
 * compile, and the next pays for it (llvmpipe JITs a program at its first
 * draw, so even a background compile lands inside a timed call). With 15
 * runs those two calls sit below the median, but with few runs, or when a
 * noisy machine slows later runs, adaptive reported the generic program's
 * speed although `texel op --repeat 30` showed it equal to always-specialized.
 * The transition is not hidden: warm-up calls and their time are reported
 * (and first10_ms spans the first ten calls, warm-up included). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/cases.h"
#include "check.h"
#include "cli.h"
#include "cmds.h"
#include "glctx.h"

typedef struct mode_result {
    double first_ms, first10_ms, median_ms, min_ms, max_ms;
    int warmup_calls;
    double warmup_ms;
    tx_stats stats;
    uint64_t steady_generic_runs, steady_specialized_runs; /* invocations in the timed runs */
    double max_error; /* the first call's output against the reference's (-1: none) */
    bool wrong;       /* beyond TX_BENCH_TOLERANCE (or another count of values): not timed */
    tx_status status;
    char error[256];
} mode_result;

/* The reference output a mode's first call is checked against. */
typedef struct expected {
    float *data; /* NULL: no reference (its run failed) */
    int64_t n;
} expected;

/* A mode whose first call is further than this from the plain-C reference
 * (|y - ref| / (1 + |ref|), any element) fails: a timing of wrong numbers is
 * no timing. Before 75b5301 a tx_ctx made on a GL context another had used
 * (texel bench makes one per mode) could bind its inputs on stale texture
 * units and compute garbage, fast (llvmpipe matmul_1024 73 ms against 121
 * for the right product). */
#define TX_BENCH_TOLERANCE 1e-3

static int64_t numel(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

static void make_inputs(const tx_bench_case *c, float **vals) {
    for (int i = 0; i < c->n_inputs; i++) {
        int64_t n = numel(c->rank[i], c->shape[i]);
        vals[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        tx_bench_fill(vals[i], n, (uint64_t)i + 1);
    }
}

static tx_status one_call(tx_ctx *ctx, const tx_bench_case *c, const tx_tensor *in, float *dst,
                          size_t dst_bytes) {
    tx_tensor y;
    tx_status s = c->run(ctx, in, &y);
    if (s)
        return s;
    s = tx_tensor_read(ctx, y, dst, dst_bytes);
    tx_tensor_destroy(ctx, y);
    return s;
}

typedef struct bench_mode {
    const char *name;
    int k; /* GPU: 0 always specialize, -1 never, -100 the default k */
    tx_device device;
    int cpu_threads; /* CPU: 0 all cores */
} bench_mode;

/* Warm-up stops after a call that linked, issued and finished nothing, left
 * no specialized compile pending (every one issued is ready or failed) and no
 * signature waiting for more calls (the default k on a software rasterizer
 * lets a small draw's signature wait up to 64 calls: cache.c). */
#define MAX_WARMUP       80
#define TX_BENCH_RAMP_MS 300.0
static bool settled(tx_ctx *ctx, const tx_stats *before) {
    tx_stats now;
    tx_ctx_stats(ctx, &now);
    return now.generic_compiles == before->generic_compiles &&
           now.specialized_compiles == before->specialized_compiles &&
           now.specialized_ready == before->specialized_ready &&
           now.compile_failures == before->compile_failures &&
           now.specialized_compiles <= now.specialized_ready + now.compile_failures &&
           now.specializations_waiting == 0;
}

/* --matmul-tm: the matmul tiling every GPU context uses (0: the default) */
static int g_matmul_tm;

static void run_mode(tx_host *h, const tx_bench_case *c, float **vals, const bench_mode *m,
                     int runs, const expected *want, mode_result *r) {
    memset(r, 0, sizeof *r);
    r->max_error = -1;
    tx_ctx *ctx;
    int k = m->k;
    int kk = k == 0 ? TX_SPECIALIZE_ALWAYS : (k < 0 ? TX_SPECIALIZE_NEVER : k);
    if (k == -100)
        kk = TX_SPECIALIZE_DEFAULT;
    r->status = tx_host_new_ctx(
        h,
        &(tx_ctx_desc){.specialize_after = kk, .device = m->device, .cpu_threads = m->cpu_threads},
        &ctx);
    if (r->status) {
        snprintf(r->error, sizeof r->error, "context: %s", tx_status_name(r->status));
        return;
    }
    for (int cls = 0; g_matmul_tm && cls < TX_TUNE_CLASSES; cls++)
        tx_ctx_set_kernel_choice(ctx, "matmul-tm", cls, g_matmul_tm);
    tx_tensor in[TX_BENCH_MAX_INPUTS] = {{0}};
    float *out = NULL;
    size_t out_bytes = 0;
    double t0 = tx_host_ms();
    for (int i = 0; i < c->n_inputs && !r->status; i++) {
        tx_tensor_desc d = {.rank = c->rank[i], .data = vals[i]};
        memcpy(d.shape, c->shape[i], sizeof d.shape);
        r->status = tx_tensor_create(ctx, &d, &in[i]);
    }
    if (!r->status) {
        tx_tensor y;
        r->status = c->run(ctx, in, &y);
        if (!r->status) {
            int rank;
            int64_t shape[TX_MAX_RANK];
            tx_tensor_shape(ctx, y, &rank, shape, NULL);
            out_bytes = (size_t)numel(rank, shape) * sizeof(float);
            out = malloc(out_bytes ? out_bytes : 4);
            r->status = tx_tensor_read(ctx, y, out, out_bytes);
            tx_tensor_destroy(ctx, y);
        }
    }
    r->first_ms = tx_host_ms() - t0;
    if (!r->status && want->data) {
        int64_t n = (int64_t)(out_bytes / sizeof(float)), worst = 0;
        r->max_error = n == want->n ? 0 : INFINITY;
        for (int64_t i = 0; i < n && n == want->n; i++) {
            double e = fabs((double)out[i] - want->data[i]) / (1 + fabs(want->data[i]));
            if (!(e <= r->max_error)) { /* NaN too */
                r->max_error = isnan(e) ? INFINITY : e;
                worst = i;
            }
        }
        r->wrong = r->max_error > TX_BENCH_TOLERANCE;
        if (n != want->n)
            snprintf(r->error, sizeof r->error, "wrong result: %lld values, the reference %lld",
                     (long long)n, (long long)want->n);
        else if (r->wrong)
            snprintf(r->error, sizeof r->error,
                     "wrong result: y[%lld] = %g, the reference %g (relative error %.3g > %g)",
                     (long long)worst, out[worst], want->data[worst], r->max_error,
                     TX_BENCH_TOLERANCE);
    }
    r->first10_ms = r->first_ms;
    int calls = 1; /* timed calls so far, for first10_ms */
    while (!r->status && !r->wrong && r->warmup_calls < MAX_WARMUP) {
        tx_stats before;
        tx_ctx_stats(ctx, &before);
        double t1 = tx_host_ms();
        r->status = one_call(ctx, c, in, out, out_bytes);
        double dt = tx_host_ms() - t1;
        r->warmup_ms += dt;
        r->warmup_calls++;
        if (calls++ < 10)
            r->first10_ms += dt;
        if (!r->status && settled(ctx, &before))
            break;
    }
    /* Then TX_BENCH_RAMP_MS of calls, untimed, on the programs the timed
     * runs use: after the GPU sat idle (the CPU modes, the reference, a
     * context's setup) its first ~100-300 ms of short calls ran up to 3x
     * slower (H100: mobilenet_head 2.1-3.1 ms a call after 3 s asleep,
     * 1.2-1.4 ms after 200 calls; nvidia-smi's SM clock read 1980 MHz
     * throughout, so some other power state), and llvmpipe's first ~50 calls
     * of softmax_256x1000 1.1-1.4 ms, later 0.9. Counting the warm-up in
     * (adaptive's 65 calls, mostly generic) left adaptive 20% behind
     * specialized on llvmpipe's softmax with the same programs. The medians
     * are of a device at work. */
    double ramp_ms = 0;
    for (int i = 0; !r->status && !r->wrong && ramp_ms < TX_BENCH_RAMP_MS && i < 10000; i++) {
        double t1 = tx_host_ms();
        r->status = one_call(ctx, c, in, out, out_bytes);
        ramp_ms += tx_host_ms() - t1;
    }
    tx_stats steady0;
    tx_ctx_stats(ctx, &steady0);
    double *ms = calloc((size_t)runs, sizeof *ms);
    for (int i = 0; i < runs && !r->status && !r->wrong; i++) {
        double t1 = tx_host_ms();
        r->status = one_call(ctx, c, in, out, out_bytes);
        ms[i] = tx_host_ms() - t1;
        if (calls++ < 10)
            r->first10_ms += ms[i];
    }
    if (r->status) {
        snprintf(r->error, sizeof r->error, "%s", tx_last_error(ctx));
    } else if (!r->wrong) {
        r->median_ms = tx_median(ms, runs);
        r->min_ms = r->max_ms = ms[0];
        for (int i = 1; i < runs; i++) {
            r->min_ms = fmin(r->min_ms, ms[i]);
            r->max_ms = fmax(r->max_ms, ms[i]);
        }
    }
    tx_ctx_stats(ctx, &r->stats);
    r->steady_generic_runs = r->stats.generic_runs - steady0.generic_runs;
    r->steady_specialized_runs = r->stats.specialized_runs - steady0.specialized_runs;
    free(ms);
    free(out);
    for (int i = 0; i < c->n_inputs; i++)
        if (in[i].id)
            tx_tensor_destroy(ctx, in[i]);
    tx_ctx_destroy(ctx);
}

/* The plain-C reference: its ms, and its output into *want (the modes'
 * check; want->data NULL where it failed). */
static double run_reference(const tx_bench_case *c, float **vals, expected *want) {
    tx_ref_tensor in[TX_BENCH_MAX_INPUTS];
    for (int i = 0; i < c->n_inputs; i++) {
        in[i] = (tx_ref_tensor){.rank = c->rank[i], .data = vals[i]};
        memcpy(in[i].shape, c->shape[i], sizeof in[i].shape);
    }
    tx_ref_tensor out;
    *want = (expected){0};
    double t0 = tx_host_ms();
    if (c->ref(in, &out) != 0)
        return -1;
    double ms = tx_host_ms() - t0;
    want->data = out.data; /* float32 outputs only in the bench */
    want->n = numel(out.rank, out.shape);
    return ms;
}

static bool selected(const char *list, const char *name) {
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
            return true;
    return false;
}

const char tx_usage_bench[] =
    "usage: texel bench [--cases a,b] [--smoke] [--runs N] [--json FILE] [--list]\n"
    "           [--no-reference] [--device gpu|cpu|all] [--matmul-tm 1|4|8]\n";

int tx_cmd_bench(int argc, char **argv) {
    const char *cases = NULL, *json_path = NULL;
    int runs = 15;
    bool smoke = false, list = false, no_ref = false;
    tx_device only = TX_DEVICE_DEFAULT; /* --device: gpu or cpu modes only */
    static const char *const value_opts[] = {"--cases",  "--json",      "--runs",
                                             "--device", "--matmul-tm", NULL};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int first = tx_cli_first_look("bench", tx_usage_bench, a, v, value_opts);
        if (first >= 0)
            return first;
        if (strcmp(a, "--smoke") == 0)
            smoke = true;
        else if (strcmp(a, "--list") == 0)
            list = true;
        else if (strcmp(a, "--no-reference") == 0)
            no_ref = true;
        else if (strcmp(a, "--cases") == 0 && v)
            cases = v, i++;
        else if (strcmp(a, "--json") == 0 && v)
            json_path = v, i++;
        else if (strcmp(a, "--runs") == 0 && v)
            runs = atoi(v), i++;
        else if (strcmp(a, "--matmul-tm") == 0 && v &&
                 (strcmp(v, "1") == 0 || strcmp(v, "4") == 0 || strcmp(v, "8") == 0))
            g_matmul_tm = atoi(v), i++;
        else if (strcmp(a, "--device") == 0 && v &&
                 (strcmp(v, "gpu") == 0 || strcmp(v, "cpu") == 0 || strcmp(v, "all") == 0))
            only = tx_device_from_name(v) == TX_DEVICE_COUNT_ ? TX_DEVICE_DEFAULT
                                                              : tx_device_from_name(v),
            i++;
        else if (strcmp(a, "--device") == 0)
            return tx_cli_usage_error("bench", tx_usage_bench, "--device is gpu, cpu or all");
        else if (strcmp(a, "--matmul-tm") == 0)
            return tx_cli_usage_error("bench", tx_usage_bench, "--matmul-tm is 1, 4 or 8");
        else
            return tx_cli_unknown("bench", tx_usage_bench, a);
    }
    if (runs < 1)
        runs = 1;
    if (list) {
        printf("[");
        for (int i = 0; i < tx_bench_case_count; i++) {
            const tx_bench_case *c = &tx_bench_cases[i];
            printf("%s\n {\"name\": \"%s\", \"what\": \"%s\", \"flops\": %.0f, \"smoke\": %s, "
                   "\"inputs\": [",
                   i ? "," : "", c->name, c->what, c->flops, c->smoke ? "true" : "false");
            for (int j = 0; j < c->n_inputs; j++) {
                printf(j ? ", [" : "[");
                for (int d = 0; d < c->rank[j]; d++)
                    printf(d ? ", %lld" : "%lld", (long long)c->shape[j][d]);
                printf("]");
            }
            printf("]}");
        }
        printf("\n]\n");
        return 0;
    }
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
    tx_host *h;
    tx_ctx *probe;
    int rc = tx_host_open(NULL, &h, &probe);
    if (rc)
        return rc;
    tx_caps caps;
    tx_ctx_caps(probe, &caps);
    int default_k = tx_ctx_specialize_after(probe);
    tx_ctx_destroy(probe);

    FILE *js = json_path ? fopen(json_path, "w") : NULL;
    if (json_path && !js) {
        fprintf(stderr, "texel bench: cannot write %s\n", json_path);
        return 1;
    }
    if (js)
        fprintf(js,
                "{\"runner\": \"desktop\", \"renderer\": \"%s\", \"version\": \"%s\", "
                "\"default_k\": %d, \"runs\": %d, \"cases\": [",
                caps.renderer, caps.version, default_k, runs);
    printf("renderer: %s (%s); default k = %d; %d runs per mode\n", caps.renderer, caps.version,
           default_k, runs);
    printf("%-14s %-11s %10s %12s %10s %9s %9s %8s %6s %6s\n", "case", "mode", "first ms",
           "warm-up ms", "median ms", "min", "max", "GFLOP/s", "gen", "spec");
    const bench_mode all_modes[] = {
        {"generic", -1, TX_DEVICE_GPU, 0},    {"specialized", 0, TX_DEVICE_GPU, 0},
        {"adaptive", -100, TX_DEVICE_GPU, 0}, {"cpu", -100, TX_DEVICE_CPU, 0},
        {"cpu-1t", -100, TX_DEVICE_CPU, 1},
    };
    bench_mode modes[sizeof all_modes / sizeof all_modes[0]];
    size_t n_modes = 0;
    for (size_t m = 0; m < sizeof all_modes / sizeof all_modes[0]; m++)
        if (only == TX_DEVICE_DEFAULT || all_modes[m].device == only)
            modes[n_modes++] = all_modes[m];
    int failures = 0, ncase = 0;
    for (int ci = 0; ci < tx_bench_case_count; ci++) {
        const tx_bench_case *c = &tx_bench_cases[ci];
        if ((smoke && !c->smoke) || !selected(cases, c->name))
            continue;
        float *vals[TX_BENCH_MAX_INPUTS];
        make_inputs(c, vals);
        /* run even with --no-reference (no cpu-ref row then): the modes'
         * first outputs are checked against it */
        expected want;
        double ref_ms = run_reference(c, vals, &want);
        if (no_ref)
            ref_ms = -1;
        if (js)
            fprintf(js,
                    "%s\n {\"name\": \"%s\", \"what\": \"%s\", \"flops\": %.0f, "
                    "\"reference_ms\": %.3f, \"modes\": {",
                    ncase ? "," : "", c->name, c->what, c->flops, ref_ms);
        ncase++;
        for (size_t m = 0; m < n_modes; m++) {
            mode_result r;
            run_mode(h, c, vals, &modes[m], runs, &want, &r);
            double gf = (c->flops > 0 && r.median_ms > 0) ? c->flops / (r.median_ms * 1e6) : 0;
            if (r.status || r.wrong) {
                failures++;
                printf("%-14s %-11s failed: %s: %s\n", c->name, modes[m].name,
                       r.wrong ? "WRONG" : tx_status_name(r.status), r.error);
            } else {
                printf("%-14s %-11s %10.2f %8.2f/%-3d %10.3f %9.3f %9.3f %8.2f %6llu %6llu\n",
                       c->name, modes[m].name, r.first_ms, r.warmup_ms, r.warmup_calls, r.median_ms,
                       r.min_ms, r.max_ms, gf, (unsigned long long)r.stats.generic_compiles,
                       (unsigned long long)r.stats.specialized_compiles);
            }
            if (js)
                fprintf(
                    js,
                    "%s\"%s\": {\"status\": \"%s\", \"max_error\": %.3g, \"first_ms\": %.3f, "
                    "\"first10_ms\": %.3f, "
                    "\"warmup_calls\": %d, \"warmup_ms\": %.3f, \"steady_generic_runs\": %llu, "
                    "\"steady_specialized_runs\": %llu, "
                    "\"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"gflops\": %.3f, "
                    "\"generic_compiles\": %llu, \"specialized_compiles\": %llu, "
                    "\"cache_hits\": %llu, \"draws\": %llu, \"compile_ms\": %.3f, "
                    "\"peak_texture_bytes\": %llu}",
                    m ? ", " : "", modes[m].name, r.wrong ? "WRONG" : tx_status_name(r.status),
                    isfinite(r.max_error) ? r.max_error : 1e300, /* JSON has no inf */
                    r.first_ms, r.first10_ms, r.warmup_calls, r.warmup_ms,
                    (unsigned long long)r.steady_generic_runs,
                    (unsigned long long)r.steady_specialized_runs, r.median_ms, r.min_ms, r.max_ms,
                    gf, (unsigned long long)r.stats.generic_compiles,
                    (unsigned long long)r.stats.specialized_compiles,
                    (unsigned long long)r.stats.cache_hits, (unsigned long long)r.stats.draws,
                    r.stats.compile_ms, (unsigned long long)r.stats.peak_texture_bytes);
        }
        if (ref_ms >= 0)
            printf("%-14s %-11s %10s %10.3f %29s\n", c->name, "cpu-ref", "", ref_ms, "");
        if (js)
            fprintf(js, "}}");
        for (int i = 0; i < c->n_inputs; i++)
            free(vals[i]);
        free(want.data);
    }
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    tx_host_close(h, NULL);
    if (ncase == 0) {
        fprintf(stderr, "texel bench: no case selected\n");
        return 2;
    }
    return failures ? 1 : 0;
}
