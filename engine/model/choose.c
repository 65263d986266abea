/* TX_DEVICE_AUTO: software rasterizers go to the CPU; otherwise a trial over
 * the first runs (CPU first, and the CPU serving while the GPU programs
 * compile in the background, so results never wait on shader compiles; then
 * the GPU until specialized) keeps the faster steady state, remembered per
 * model hash + renderer in a file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "choose.h"
#include "hash.h"
#include "internal.h" /* ctx->probe_ms */

/* The timed probe that confirms a renderer string naming a software
 * rasterizer: GFLOP/s of a 256x256x256 matmul on the GPU (after a warm
 * call; the best of 3, each waited for by a one-texel read). GPUs do well over 100; llvmpipe
 * about 10 on two cores, SwiftShader about 2. Made once per context; a
 * failure (a lost context) counts as slow. */
#define TX_PROBE_N               256
#define TX_PROBE_SOFTWARE_GFLOPS 30.0
static double probe_gflops(tx_ctx *ctx) {
    if (ctx->probe_gflops > 0)
        return ctx->probe_gflops;
    char keep[sizeof ctx->err]; /* the probe's errors are not the caller's */
    snprintf(keep, sizeof keep, "%s", ctx->err);
    tx_tensor a = {0}, y = {0};
    double best = 1e30;
    tx_status st = tx_tensor_create(
        ctx,
        &(tx_tensor_desc){.rank = 2, .shape = {TX_PROBE_N, TX_PROBE_N}, .device = TX_DEVICE_GPU},
        &a);
    for (int i = 0; i < 4 && !st; i++) {
        double t0 = tx_now_ms();
        st = tx_matmul(ctx, a, a, NULL, &y);
        if (!st)
            st = tx_gpu_wait(ctx, y);
        tx_tensor_destroy(ctx, y);
        y = (tx_tensor){0};
        double ms = tx_now_ms() - t0;
        if (i > 0 && ms < best)
            best = ms;
    }
    tx_tensor_destroy(ctx, a);
    snprintf(ctx->err, sizeof ctx->err, "%s", keep);
    ctx->probe_gflops = st ? 1e-3 : 2.0 * TX_PROBE_N * TX_PROBE_N * TX_PROBE_N / (best * 1e6);
    return ctx->probe_gflops;
}

/* mkdir -p of path's directory. */
void tx_choice_make_parent(const char *path) {
    char d[512];
    snprintf(d, sizeof d, "%s", path);
    for (char *p = d + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            return;
        *p = '/';
    }
}

static void cache_path(const tx_session_desc *desc, char *out, size_t n) {
    if (desc && desc->choice_cache) {
        out[0] = 0;
#ifndef __EMSCRIPTEN__
        snprintf(out, n, "%s", desc->choice_cache);
#endif
        return;
    }
    tx_choice_default_file(out, n);
}

void tx_choice_default_file(char *out, size_t n) {
    out[0] = 0;
#ifdef __EMSCRIPTEN__
    (void)n; /* the page remembers (web/texel.js: localStorage) */
#else
    const char *dir = getenv("TEXEL_CACHE_DIR");
    if (dir) {
        if (*dir)
            snprintf(out, n, "%.480s/device-choices", dir);
        return;
    }
    const char *home = getenv("HOME");
    if (home && *home)
        snprintf(out, n, "%.460s/.cache/texel/device-choices", home);
#endif
}

bool tx_choice_line(char *line, tx_choice_rec *out) {
    int used = 0;
    if (sscanf(line, "%llx %31s %lf %lf %n", &out->hash, out->what, &out->a, &out->b, &used) != 4 ||
        !used)
        return false;
    out->renderer = line + used;
    out->renderer[strcspn(out->renderer, "\n")] = 0;
    return true;
}

/* One line per decision: hash, device, gpu ms, cpu ms, renderer. The last
 * line for a model + renderer wins. */
static bool cache_lookup(tx_session_choice *c, const char *renderer) {
    FILE *f = c->cache_path[0] ? fopen(c->cache_path, "r") : NULL;
    if (!f)
        return false;
    char line[512];
    bool found = false;
    tx_choice_rec rec;
    while (fgets(line, sizeof line, f)) {
        if (!tx_choice_line(line, &rec))
            continue;
        double g = rec.a, cp = rec.b;
        tx_device d = tx_device_from_name(rec.what);
        if (rec.hash != c->model_hash || strcmp(rec.renderer, renderer) != 0 ||
            (d != TX_DEVICE_GPU && d != TX_DEVICE_CPU))
            continue;
        c->current = d;
        c->gpu_ms = g;
        c->cpu_ms = cp;
        found = true;
    }
    fclose(f);
    if (found)
        snprintf(c->reason, sizeof c->reason, "remembered: gpu %.2f ms, cpu %.2f ms (%.100s)",
                 c->gpu_ms, c->cpu_ms, c->cache_path);
    return found;
}

static void cache_store(const tx_session_choice *c, const char *renderer) {
    if (!c->cache_path[0])
        return;
    tx_choice_make_parent(c->cache_path);
    FILE *f = fopen(c->cache_path, "a");
    if (!f)
        return; /* remembering is an optimisation: a read-only home is fine */
    fprintf(f, "%016llx %s %.3f %.3f %s\n", (unsigned long long)c->model_hash,
            tx_device_name(c->current), c->gpu_ms, c->cpu_ms, renderer);
    fclose(f);
}

/* auto's start once the GL context is there: the renderer, the file of
 * remembered choices, else the trial. */
static void by_renderer(tx_ctx *ctx, tx_session_choice *c) {
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);
    /* TEXEL_AUTO_MEASURE: measure even on a software rasterizer (tests, and
     * users who want to see the numbers) */
    if (tx_software_renderer(caps.renderer) && !getenv("TEXEL_AUTO_MEASURE")) {
        /* the CPU; the probe that confirms it waits for the second run (and
         * a software rasterizer's choice is not remembered) */
        c->cache_path[0] = 0;
        c->current = TX_DEVICE_CPU;
        c->phase = TX_TRIAL_PROBE;
        snprintf(c->reason, sizeof c->reason, "software rasterizer (%.150s)", caps.renderer);
        return;
    }
    if (cache_lookup(c, caps.renderer)) {
        c->decided = true;
        return;
    }
    int k = tx_ctx_specialize_after(ctx);
    c->gpu_trials = (k < 0 ? 0 : k) + 2;
    c->current = TX_DEVICE_CPU;
    c->phase = TX_TRIAL_CPU_FIRST;
    snprintf(c->reason, sizeof c->reason, "trial: first result on the CPU");
}

/* The host's look at the GPU before the GL context (tx_ctx_gpu_hint): a
 * renderer named a software rasterizer, its fragment shader timed below
 * half the probe's threshold, decides the CPU without the context. The
 * host's timing is another benchmark than the matmul probe (SwiftShader:
 * 2.6-4.5 GFLOP/s against the probe's 4.4-5.5), hence the margin: between
 * the two, the probe decides once the context is made. (TEXEL_AUTO_MEASURE:
 * never.) */
#define TX_HINT_SOFTWARE_GFLOPS (TX_PROBE_SOFTWARE_GFLOPS / 2)
static bool hinted_software(const tx_ctx *ctx, tx_session_choice *c) {
    if (!ctx->gl_pending || !ctx->hint_renderer[0] || getenv("TEXEL_AUTO_MEASURE") ||
        !tx_software_renderer(ctx->hint_renderer) || !(ctx->hint_gflops > 0) ||
        ctx->hint_gflops >= TX_HINT_SOFTWARE_GFLOPS)
        return false;
    c->cache_path[0] = 0; /* (no measurement: not remembered) */
    c->current = TX_DEVICE_CPU;
    c->decided = true;
    char rate[8]; /* (below the threshold: two digits and one) */
    snprintf(rate, sizeof rate, "%.1f", ctx->hint_gflops);
    snprintf(c->reason, sizeof c->reason,
             "software rasterizer (%.100s; probe: a fragment shader at %s GFLOP/s, "
             "no GL context made)",
             ctx->hint_renderer, rate);
    return true;
}

/* The host is still looking (tx_ctx_gpu_hint(ctx, NULL, ...)): the CPU
 * serves meanwhile. */
static bool host_looking(const tx_ctx *ctx) {
    return ctx->gl_pending && ctx->hint_looking && !getenv("TEXEL_AUTO_MEASURE");
}

void tx_choice_init(tx_ctx *ctx, tx_session_choice *c, const tx_session_desc *desc,
                    const void *bytes, size_t len) {
    memset(c, 0, sizeof *c);
    tx_device want = desc ? desc->device : TX_DEVICE_DEFAULT;
    const char *env = getenv("TEXEL_DEVICE"); /* a default for whole runs (tests, CLI) */
    /* (not on a context without GL: the env default is for whole runs) */
    if (want == TX_DEVICE_DEFAULT && env && tx_device_from_name(env) != TX_DEVICE_COUNT_ &&
        !ctx->no_gpu)
        want = tx_device_from_name(env);
    c->mode = want == TX_DEVICE_DEFAULT ? TX_DEVICE_AUTO : want;
    if (c->mode == TX_DEVICE_AUTO && ctx->no_gpu) {
        c->current = TX_DEVICE_CPU;
        c->decided = true;
        snprintf(c->reason, sizeof c->reason, "no GPU context");
        return;
    }
    if (c->mode != TX_DEVICE_AUTO) {
        c->current = c->mode;
        c->decided = true;
        snprintf(c->reason, sizeof c->reason, "fixed by %s",
                 desc && desc->device ? "the session's desc" : "TEXEL_DEVICE");
        return;
    }
    c->model_hash = tx_fnv1a(bytes, len);
    cache_path(desc, c->cache_path, sizeof c->cache_path);
    if (hinted_software(ctx, c))
        return;
    if (ctx->gl_pending) {
        /* every trial's first run is the CPU's: the context waits for the second */
        c->current = TX_DEVICE_CPU;
        c->phase = TX_TRIAL_GL_LATER;
        snprintf(c->reason, sizeof c->reason, "trial: first result on the CPU (no GL context yet)");
        return;
    }
    by_renderer(ctx, c);
}

/* the waiting calls and the k + 2 after them, rounded up */
#define TX_TRIAL_MAX_GPU_RUNS (TX_SPECIALIZE_SOFT_MAX + 8)

static void decide(tx_ctx *ctx, tx_session_choice *c) {
    c->current = c->gpu_ms < c->cpu_ms ? TX_DEVICE_GPU : TX_DEVICE_CPU;
    c->decided = true;
    int n = snprintf(c->reason, sizeof c->reason, "measured: gpu %.2f ms, cpu %.2f ms", c->gpu_ms,
                     c->cpu_ms);
    if (c->served_compiling > 0 && n > 0 && (size_t)n < sizeof c->reason)
        snprintf(c->reason + n, sizeof c->reason - (size_t)n,
                 " (the CPU served %d run%s while GPU programs compiled)", c->served_compiling,
                 c->served_compiling == 1 ? "" : "s");
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);
    cache_store(c, caps.renderer);
}

static void to_gpu(tx_session_choice *c) {
    c->phase = TX_TRIAL_GPU;
    c->current = TX_DEVICE_GPU;
    snprintf(c->reason, sizeof c->reason, "trial: GPU runs until specialized");
}

void tx_choice_warmed(tx_session_choice *c, bool ok, const char *why) {
    if (c->decided || c->phase != TX_TRIAL_WARMING)
        return;
    if (!ok) {
        to_gpu(c);
        snprintf(c->reason, sizeof c->reason, "trial: GPU runs compile as they go (%.140s)", why);
        return;
    }
    c->phase = TX_TRIAL_COMPILING;
    c->current = TX_DEVICE_CPU;
    snprintf(c->reason, sizeof c->reason, "trial: the CPU serves while GPU programs compile");
}

void tx_choice_start_gl(tx_ctx *ctx, tx_session_choice *c) {
    if (c->decided || c->phase != TX_TRIAL_GL_LATER || hinted_software(ctx, c))
        return;
    if (host_looking(ctx)) {
        snprintf(c->reason, sizeof c->reason,
                 "trial: the CPU serves while the host looks at the GPU (no GL context yet)");
        return;
    }
    char keep[sizeof ctx->err]; /* the caller's last error stays theirs */
    snprintf(keep, sizeof keep, "%s", ctx->err);
    tx_status st = tx_ctx_need_gl(ctx, "auto");
    if (st || ctx->no_gpu) {
        c->decided = true;
        c->current = TX_DEVICE_CPU;
        snprintf(c->reason, sizeof c->reason, "no GPU context (%.150s)",
                 ctx->no_gpu_why[0] ? ctx->no_gpu_why : "made without GL");
    } else {
        double cpu_ms = c->cpu_ms; /* the CPU runs' so far (the fastest) */
        by_renderer(ctx, c);
        if (!c->decided) {
            c->cpu_ms = cpu_ms;
            if (c->phase == TX_TRIAL_CPU_FIRST) /* that first run was made */
                c->phase = TX_TRIAL_WARMING;
        }
    }
    snprintf(ctx->err, sizeof ctx->err, "%s", keep);
}

void tx_choice_probe(tx_ctx *ctx, tx_session_choice *c) {
    if (c->decided || c->phase != TX_TRIAL_PROBE)
        return;
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);
    double gflops = probe_gflops(ctx);
    if (gflops < TX_PROBE_SOFTWARE_GFLOPS) {
        c->decided = true;
        snprintf(c->reason, sizeof c->reason,
                 "software rasterizer (%.120s; probe: matmul at %.1f GFLOP/s)", caps.renderer,
                 gflops);
        return;
    }
    /* named software but fast: measure like any GPU */
    c->phase = TX_TRIAL_WARMING;
    snprintf(c->reason, sizeof c->reason,
             "trial: the renderer says software, the probe %.0f GFLOP/s", gflops);
}

void tx_choice_poll(tx_session_choice *c, int compiling) {
    if (!c->decided && c->phase == TX_TRIAL_COMPILING && compiling == 0)
        to_gpu(c);
}

void tx_choice_record(tx_ctx *ctx, tx_session_choice *c, double ms, int compiling) {
    c->runs[c->current]++;
    if (c->decided)
        return;
    c->trial++;
    switch (c->phase) {
    case TX_TRIAL_CPU_FIRST: /* cold: replaced by a warm run if faster */
        c->cpu_ms = ms;
        c->phase = TX_TRIAL_WARMING;
        break;
    case TX_TRIAL_GL_LATER: /* the first run (more while the host looks at the GPU) */
    case TX_TRIAL_PROBE:    /* the first run; the session probes before the next */
        c->cpu_ms = c->cpu_ms > 0 && c->cpu_ms < ms ? c->cpu_ms : ms;
        if (c->trial > 1) /* a warm one: the trial need not time the CPU again */
            c->cpu_warm_runs++;
        break;
    case TX_TRIAL_WARMING: /* not reached: the session makes the pass first */ break;
    case TX_TRIAL_COMPILING:
        c->cpu_ms = ms < c->cpu_ms ? ms : c->cpu_ms;
        c->cpu_warm_runs++;
        c->served_compiling++;
        tx_choice_poll(c, compiling);
        break;
    case TX_TRIAL_GPU:
        /* with the default k on a software rasterizer a small draw's
         * signature waits for up to TX_SPECIALIZE_SOFT_MAX calls (cache.c):
         * while one waits, the trial goes on to the second run of its
         * specialized program (the first may pay its translation) */
        if (tx_cache_waiting(ctx) > 0 && c->gpu_trials < c->gpu_runs + 4 &&
            c->gpu_runs < TX_TRIAL_MAX_GPU_RUNS)
            c->gpu_trials = c->gpu_runs + 4;
        /* the runs after the k-th are specialized (once compiled) */
        if (++c->gpu_runs > c->gpu_trials - 2)
            c->gpu_ms = c->gpu_ms > 0 && c->gpu_ms < ms ? c->gpu_ms : ms;
        /* with background compiles the specialized programs may still be
         * linking: a few more runs wait for them */
        if (c->gpu_runs < c->gpu_trials || (compiling > 0 && c->gpu_runs < c->gpu_trials + 8))
            break;
        if (c->cpu_warm_runs > 0) {
            decide(ctx, c);
            return;
        }
        c->phase = TX_TRIAL_CPU_WARM;
        c->current = TX_DEVICE_CPU;
        snprintf(c->reason, sizeof c->reason, "trial: one warm CPU run");
        break;
    case TX_TRIAL_CPU_WARM:
        c->cpu_ms = ms < c->cpu_ms ? ms : c->cpu_ms;
        c->cpu_warm_runs++;
        decide(ctx, c);
        return;
    }
}
