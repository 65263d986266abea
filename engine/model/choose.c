/* TX_DEVICE_AUTO: software rasterizers go to the CPU; otherwise a trial over
 * the first runs (CPU first, so the first result never waits on shader
 * compiles; then the GPU until specialized; then the CPU warm) keeps the
 * faster steady state, remembered per model hash + renderer in a file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "choose.h"
#include "hash.h"

static bool software_renderer(const char *renderer) {
    static const char *const soft[] = {"llvmpipe", "softpipe",     "swiftshader",
                                       "swrast",   "basic render", "software"};
    char low[128];
    size_t n = 0;
    for (; renderer[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)renderer[n]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof soft / sizeof soft[0]; i++)
        if (strstr(low, soft[i]))
            return true;
    return false;
}

/* mkdir -p of path's directory. */
static void make_parent(const char *path) {
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
    out[0] = 0;
#ifdef __EMSCRIPTEN__
    (void)desc; /* the page remembers (web/texel.js: localStorage) */
    (void)n;
#else
    if (desc && desc->choice_cache) {
        snprintf(out, n, "%s", desc->choice_cache);
        return;
    }
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

/* One line per decision: hash, device, gpu ms, cpu ms, renderer. The last
 * line for a model + renderer wins. */
static bool cache_lookup(tx_session_choice *c, const char *renderer) {
    FILE *f = c->cache_path[0] ? fopen(c->cache_path, "r") : NULL;
    if (!f)
        return false;
    char line[512];
    bool found = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long long h;
        char dev[8];
        double g, cp;
        int used = 0;
        if (sscanf(line, "%llx %7s %lf %lf %n", &h, dev, &g, &cp, &used) != 4 || !used)
            continue;
        char *r = line + used;
        r[strcspn(r, "\n")] = 0;
        tx_device d = tx_device_from_name(dev);
        if (h != c->model_hash || strcmp(r, renderer) != 0 ||
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
    make_parent(c->cache_path);
    FILE *f = fopen(c->cache_path, "a");
    if (!f)
        return; /* remembering is an optimisation: a read-only home is fine */
    fprintf(f, "%016llx %s %.3f %.3f %s\n", (unsigned long long)c->model_hash,
            tx_device_name(c->current), c->gpu_ms, c->cpu_ms, renderer);
    fclose(f);
}

void tx_choice_init(tx_ctx *ctx, tx_session_choice *c, const tx_session_desc *desc,
                    const void *bytes, size_t len) {
    memset(c, 0, sizeof *c);
    tx_device want = desc ? desc->device : TX_DEVICE_DEFAULT;
    const char *env = getenv("TEXEL_DEVICE"); /* a default for whole runs (tests, CLI) */
    if (want == TX_DEVICE_DEFAULT && env && tx_device_from_name(env) != TX_DEVICE_COUNT_)
        want = tx_device_from_name(env);
    c->mode = want == TX_DEVICE_DEFAULT ? TX_DEVICE_AUTO : want;
    if (c->mode != TX_DEVICE_AUTO) {
        c->current = c->mode;
        c->decided = true;
        snprintf(c->reason, sizeof c->reason, "fixed by %s",
                 desc && desc->device ? "the session's desc" : "TEXEL_DEVICE");
        return;
    }
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);
    /* TEXEL_AUTO_MEASURE: measure even on a software rasterizer (tests, and
     * users who want to see the numbers) */
    if (software_renderer(caps.renderer) && !getenv("TEXEL_AUTO_MEASURE")) {
        c->current = TX_DEVICE_CPU;
        c->decided = true;
        snprintf(c->reason, sizeof c->reason, "software rasterizer (%.150s)", caps.renderer);
        return;
    }
    c->model_hash = tx_fnv1a(bytes, len);
    cache_path(desc, c->cache_path, sizeof c->cache_path);
    if (cache_lookup(c, caps.renderer)) {
        c->decided = true;
        return;
    }
    int k = tx_ctx_specialize_after(ctx);
    c->gpu_trials = (k < 0 ? 0 : k) + 2;
    c->current = TX_DEVICE_CPU;
    snprintf(c->reason, sizeof c->reason, "trial run 1 of %d (first result on the CPU)",
             c->gpu_trials + 2);
}

void tx_choice_record(tx_ctx *ctx, tx_session_choice *c, double ms) {
    c->runs[c->current]++;
    if (c->decided)
        return;
    int t = c->trial++;
    if (t == 0) {
        c->cpu_ms = ms; /* cold: replaced by the warm run if faster */
        c->current = TX_DEVICE_GPU;
    } else if (t <= c->gpu_trials) {
        if (t >= c->gpu_trials - 1) /* the specialized runs */
            c->gpu_ms = c->gpu_ms > 0 && c->gpu_ms < ms ? c->gpu_ms : ms;
        if (t == c->gpu_trials)
            c->current = TX_DEVICE_CPU;
    } else {
        c->cpu_ms = ms < c->cpu_ms ? ms : c->cpu_ms;
        c->current = c->gpu_ms < c->cpu_ms ? TX_DEVICE_GPU : TX_DEVICE_CPU;
        c->decided = true;
        snprintf(c->reason, sizeof c->reason, "measured: gpu %.2f ms, cpu %.2f ms", c->gpu_ms,
                 c->cpu_ms);
        tx_caps caps;
        tx_ctx_caps(ctx, &caps);
        cache_store(c, caps.renderer);
        return;
    }
    snprintf(c->reason, sizeof c->reason, "trial run %d of %d", c->trial + 1, c->gpu_trials + 2);
}
