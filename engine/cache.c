/* Program cache and adaptive specialization.
 *
 * Two tables. *Generic* programs are keyed by template + structural defines +
 * input/output counts; there are few of them and they live as long as the
 * context. *Signatures* are keyed by the generic key plus every parameter's
 * name and value — exactly what codegen bakes into the specialized source —
 * and count identical invocations. When a signature has been seen k times the
 * specialized program is issued (after the k-th draw, so with
 * KHR_parallel_shader_compile it compiles while the generic program keeps
 * serving); later invocations use it once it has linked. k = 0 compiles it
 * before the first draw; k < 0 never does. Specialized programs are capped
 * (LRU); the signature table is bounded too, so dynamic shapes cannot grow
 * memory without limit.
 *
 * Where the driver compiles in the foreground (no KHR_parallel_shader_compile:
 * Firefox, Safari, most GLES drivers) with the default k on a GPU, the
 * specialized compiles that are not needed yet are paced (spec_may_issue):
 * a session's second run would otherwise compile one program per signature
 * before it returns (OCR cls: 142). */
#include <math.h>
#include <string.h>

#include "hash.h"
#include "internal.h"

/* Pacing of specialized compiles that block (spec_may_issue): their share
 * of the wall time, and the longest burst. */
#define TX_SPEC_SHARE    0.25
#define TX_SPEC_BURST_MS 50.0

typedef enum { SPEC_NONE, SPEC_PENDING, SPEC_READY, SPEC_FAILED } spec_state;

typedef struct prog_info {
    tx_gl_prog prog;
    bool prepared; /* samplers bound, uniform locations queried */
    int n_params;
    int loc[TX_MAX_PARAMS];
    uint32_t last[TX_MAX_PARAMS]; /* last uniform bits set, to skip redundant calls */
    bool have_last;
    bool drawn; /* its first draw was timed (drivers that JIT at first draw) */
    bool specialized;
    double draw_debited; /* specialized: its first draw's estimate, debited at issue */
} prog_info;

typedef struct entry {
    uint64_t hash;
    char *key;
    size_t key_len;
    bool used;
    /* generic table */
    prog_info gen;
    bool gen_pending; /* issued by tx_cache_warm, its link status not yet read */
    /* signature table */
    int count;
    spec_state state;
    prog_info spec;
    uint64_t last_use;
} entry;

typedef struct table {
    entry *e;
    int n, cap;
    int *index; /* open addressing over e[]; -1 empty */
    int index_cap;
} table;

struct tx_cache {
    table generic;
    table sigs;
    uint64_t tick;
    int max_sigs;
    /* the signature to specialize after the current draw */
    int todo_sig;
    tx_program_req todo_req;
    /* what the last bind chose, for the draw that follows it */
    prog_info *bound;
    tx_compile_family *bound_fam;
    /* compile cost per program family (template) */
    tx_compile_family fams[TX_MAX_COMPILE_FAMILIES];
    int n_fams;
    /* pacing (spec_may_issue): compile ms the specialized programs may still
     * spend, refilled at spec_at; the first draws timed so far */
    double spec_tokens, spec_at;
    double drawn_ms;
    int drawn_n;
    char keybuf[8192];
};

/* The family of r's programs; families past the table's size share its last
 * slot, renamed "other". */
static tx_compile_family *family(tx_cache *c, const tx_program_req *r) {
    for (int i = 0; i < c->n_fams; i++)
        if (strcmp(c->fams[i].name, r->template_name) == 0)
            return &c->fams[i];
    if (c->n_fams == TX_MAX_COMPILE_FAMILIES) {
        c->fams[c->n_fams - 1].name = "other";
        return &c->fams[c->n_fams - 1];
    }
    tx_compile_family *f = &c->fams[c->n_fams++];
    memset(f, 0, sizeof *f);
    f->name = r->template_name;
    return f;
}

/* Synchronous compile time: the context's total and r's family. */
static void account(tx_ctx *ctx, const tx_program_req *r, double ms) {
    ctx->stats.compile_ms += ms;
    family(ctx->cache, r)->compile_ms += ms;
}

static void table_reindex(table *t) {
    int cap = 64;
    while (cap < t->n * 2 + 2)
        cap *= 2;
    if (cap != t->index_cap) {
        free(t->index);
        t->index = malloc((size_t)cap * sizeof *t->index);
        TX_ASSERT(t->index);
        t->index_cap = cap;
    }
    for (int i = 0; i < cap; i++)
        t->index[i] = -1;
    for (int i = 0; i < t->n; i++) {
        int s = (int)(t->e[i].hash & (uint64_t)(cap - 1));
        while (t->index[s] >= 0)
            s = (s + 1) & (cap - 1);
        t->index[s] = i;
    }
}

static int table_find(const table *t, uint64_t h, const char *key, size_t len) {
    if (!t->index_cap)
        return -1;
    int s = (int)(h & (uint64_t)(t->index_cap - 1));
    while (t->index[s] >= 0) {
        const entry *e = &t->e[t->index[s]];
        if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
            return t->index[s];
        s = (s + 1) & (t->index_cap - 1);
    }
    return -1;
}

static int table_add(table *t, uint64_t h, const char *key, size_t len) {
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 32;
        entry *n = realloc(t->e, (size_t)cap * sizeof *n);
        TX_ASSERT(n);
        t->e = n;
        t->cap = cap;
    }
    entry *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->key = malloc(len);
    TX_ASSERT(e->key);
    memcpy(e->key, key, len);
    e->key_len = len;
    t->n++;
    if (t->n * 2 + 2 > t->index_cap)
        table_reindex(t);
    else {
        int s = (int)(h & (uint64_t)(t->index_cap - 1));
        while (t->index[s] >= 0)
            s = (s + 1) & (t->index_cap - 1);
        t->index[s] = t->n - 1;
    }
    return t->n - 1;
}

static void table_free(tx_ctx *ctx, table *t) {
    for (int i = 0; i < t->n; i++) {
        if (t->e[i].gen.prog)
            tx_gl_program_delete(&ctx->gl, t->e[i].gen.prog);
        if (t->e[i].spec.prog)
            tx_gl_program_delete(&ctx->gl, t->e[i].spec.prog);
        free(t->e[i].key);
    }
    free(t->e);
    free(t->index);
    memset(t, 0, sizeof *t);
}

tx_status tx_cache_create(tx_ctx *ctx) {
    tx_cache *c = calloc(1, sizeof *c);
    if (!c)
        return TX_STATUS_OUT_OF_MEMORY;
    c->max_sigs = ctx->max_specialized * 8 + 1024;
    c->todo_sig = -1;
    c->spec_tokens = TX_SPEC_BURST_MS;
    c->spec_at = tx_now_ms();
    ctx->cache = c;
    return TX_STATUS_OK;
}

void tx_cache_destroy(tx_ctx *ctx) {
    if (!ctx->cache)
        return;
    table_free(ctx, &ctx->cache->generic);
    table_free(ctx, &ctx->cache->sigs);
    free(ctx->cache);
    ctx->cache = NULL;
}

/* Serializes the generic key, then (if `with_params`) every parameter. */
static size_t make_key(tx_cache *c, const tx_program_req *r, bool with_params) {
    char *k = c->keybuf;
    size_t cap = sizeof c->keybuf;
    int n = snprintf(k, cap, "%s|%d|%d|%u|%s|", r->template_name, r->n_inputs, r->n_outputs,
                     r->array_inputs, r->defines);
    TX_ASSERT(n > 0 && (size_t)n < cap);
    size_t len = (size_t)n;
    if (with_params) {
        for (int i = 0; i < r->n_params; i++) {
            size_t nl = strlen(r->params[i].name);
            TX_ASSERT(len + nl + 6 < cap);
            memcpy(k + len, r->params[i].name, nl);
            len += nl;
            k[len++] = r->params[i].type == TX_PARAM_INT ? '=' : '~';
            memcpy(k + len, &r->params[i].v, 4);
            len += 4;
        }
    }
    return len;
}

static void log_failure(const char *op, const char *what, const char *src, const char *log) {
    fprintf(stderr, "texel: %s: %s program failed to compile/link:\n%s\n--- source ---\n", op, what,
            log);
    int line = 1;
    const char *p = src;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "%4d  %.*s\n", line++, len, p);
        if (!nl)
            break;
        p = nl + 1;
    }
}

/* Starts compiling r's program (with KHR_parallel_shader_compile the driver
 * works in the background until its link status is read). */
static tx_gl_prog compile_issue(tx_ctx *ctx, const char *op, const tx_program_req *r,
                                bool specialized) {
    char *src = tx_codegen(r, specialized, ctx->caps.emulated_division);
    if (ctx->log_shaders)
        fprintf(stderr, "texel: %s %s program:\n%s\n", op, specialized ? "specialized" : "generic",
                src);
    double t0 = tx_now_ms();
    tx_gl_prog p = tx_gl_program_begin(&ctx->gl, src);
    account(ctx, r, tx_now_ms() - t0);
    free(src);
    return p;
}

/* Reads the link status of what compile_issue began (waiting for it);
 * returns p, or 0 after logging and deleting it on failure. */
static tx_gl_prog compile_finish(tx_ctx *ctx, const char *op, const tx_program_req *r,
                                 bool specialized, tx_gl_prog p) {
    double t0 = tx_now_ms();
    char log[4096];
    bool ok = tx_gl_program_ok(&ctx->gl, p, log, sizeof log);
    if (ok && !specialized && ctx->fault_generic) {
        ctx->fault_generic = false;
        snprintf(log, sizeof log, "injected fault: link failure simulated by the test hook");
        ok = false;
    }
    account(ctx, r, tx_now_ms() - t0);
    if (ok)
        return p;
    /* A lost context fails every link: that is no shader bug to log. */
    if (!tx_gl_context_lost(&ctx->gl)) {
        char *src = tx_codegen(r, specialized, ctx->caps.emulated_division);
        log_failure(op, specialized ? "specialized" : "generic", src, log);
        free(src);
    }
    ctx->stats.compile_failures++;
    tx_gl_program_delete(&ctx->gl, p);
    return 0;
}

/* Compiles synchronously; returns 0 and logs on failure. */
static tx_gl_prog compile_now(tx_ctx *ctx, const char *op, const tx_program_req *r,
                              bool specialized) {
    return compile_finish(ctx, op, r, specialized, compile_issue(ctx, op, r, specialized));
}

static void prepare(tx_ctx *ctx, prog_info *pi, const tx_program_req *r, bool specialized) {
    tx_gl_use(&ctx->gl, pi->prog);
    if (pi->prepared)
        return;
    for (int i = 0; i < r->n_inputs; i++) {
        char name[16];
        snprintf(name, sizeof name, "u_in%d", i);
        tx_gl_uniform_i(tx_gl_uniform_location(pi->prog, name), tx_gl_unit_base(r->n_outputs) + i);
    }
    pi->n_params = specialized ? 0 : r->n_params;
    for (int i = 0; i < pi->n_params; i++)
        pi->loc[i] = tx_gl_uniform_location(pi->prog, r->params[i].name);
    pi->have_last = false;
    pi->prepared = true;
}

static void set_params(prog_info *pi, const tx_program_req *r) {
    for (int i = 0; i < pi->n_params; i++) {
        uint32_t bits;
        memcpy(&bits, &r->params[i].v, 4);
        if (pi->have_last && pi->last[i] == bits)
            continue;
        pi->last[i] = bits;
        if (r->params[i].type == TX_PARAM_INT)
            tx_gl_uniform_i(pi->loc[i], r->params[i].v.i);
        else
            tx_gl_uniform_f(pi->loc[i], r->params[i].v.f);
    }
    pi->have_last = true;
}

static void evict_specialized(tx_ctx *ctx) {
    tx_cache *c = ctx->cache;
    while ((int)ctx->stats.specialized_programs > ctx->max_specialized) {
        int victim = -1;
        for (int i = 0; i < c->sigs.n; i++) {
            entry *e = &c->sigs.e[i];
            if (!e->spec.prog || i == c->todo_sig)
                continue;
            if (victim < 0 || e->last_use < c->sigs.e[victim].last_use)
                victim = i;
        }
        if (victim < 0)
            return;
        entry *e = &c->sigs.e[victim];
        tx_gl_program_delete(&ctx->gl, e->spec.prog);
        memset(&e->spec, 0, sizeof e->spec);
        e->state = SPEC_NONE;
        e->count = 0;
        ctx->stats.specialized_programs--;
        ctx->stats.specialized_evicted++;
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Drops the least recently used half of the signature table. */
static void shrink_sigs(tx_ctx *ctx) {
    tx_cache *c = ctx->cache;
    table *t = &c->sigs;
    uint64_t *ticks = malloc((size_t)t->n * sizeof *ticks);
    TX_ASSERT(ticks);
    for (int i = 0; i < t->n; i++)
        ticks[i] = t->e[i].last_use;
    /* median tick: sort a copy */
    qsort(ticks, (size_t)t->n, sizeof *ticks, cmp_u64);
    uint64_t cut = ticks[t->n / 2];
    free(ticks);
    int w = 0;
    for (int i = 0; i < t->n; i++) {
        entry *e = &t->e[i];
        if (e->last_use < cut) {
            if (e->spec.prog) {
                tx_gl_program_delete(&ctx->gl, e->spec.prog);
                ctx->stats.specialized_programs--;
                ctx->stats.specialized_evicted++;
            }
            free(e->key);
            continue;
        }
        t->e[w++] = *e;
    }
    t->n = w;
    table_reindex(t);
    c->todo_sig = -1;
}

/* Link status of a specialized program, with the test hook that simulates a
 * driver rejecting it. */
static bool specialized_ok(tx_ctx *ctx, tx_gl_prog p, char *log, size_t n) {
    if (ctx->fault_specialized) {
        ctx->fault_specialized = false;
        snprintf(log, n, "injected fault: link failure simulated by the test hook");
        return false;
    }
    return tx_gl_program_ok(&ctx->gl, p, log, n);
}

/* Pacing the specialized compiles a call does not need yet, where they block
 * the call (no background compile) on a GPU with the default k: a token
 * bucket lets them spend at most TX_SPEC_SHARE of the wall time, in bursts of
 * at most TX_SPEC_BURST_MS. A compile is debited its own time plus its first
 * draw's (drivers that compile at the first draw: llvmpipe, many mobile
 * GPUs), estimated at issue from the first draws so far and corrected when
 * it happens. Software rasterizers pace by work instead (sig_k), drivers
 * with a background compile need no pacing, and an explicit k is exact.
 * Measured on llvmpipe treated as such a GPU (a local change): OCR cls's
 * second run compiled 142 programs, 2.2 s, and its third paid their first
 * draws, 5.1 s; paced, 0.35 s and 0.22 s. */
static bool spec_paced(const tx_ctx *ctx) {
    return ctx->k_default && ctx->k > 0 && !ctx->software_gl && !ctx->gl.has_parallel;
}

/* Whether a specialized compile that can wait may be issued now. */
static bool spec_may_issue(tx_ctx *ctx) {
    if (!spec_paced(ctx))
        return true;
    tx_cache *c = ctx->cache;
    double now = tx_now_ms();
    c->spec_tokens = fmin(TX_SPEC_BURST_MS, c->spec_tokens + (now - c->spec_at) * TX_SPEC_SHARE);
    c->spec_at = now;
    return c->spec_tokens > 0;
}

static void spec_debit(tx_ctx *ctx, double ms) {
    if (spec_paced(ctx))
        ctx->cache->spec_tokens -= ms;
}

static void issue_specialized(tx_ctx *ctx, const char *op, int si, const tx_program_req *r,
                              bool wait) {
    tx_cache *c = ctx->cache;
    entry *e = &c->sigs.e[si];
    char *src = tx_codegen(r, true, ctx->caps.emulated_division);
    if (ctx->log_shaders)
        fprintf(stderr, "texel: %s specialized program:\n%s\n", op, src);
    double t0 = tx_now_ms();
    e->spec.prog = tx_gl_program_begin(&ctx->gl, src);
    ctx->stats.specialized_compiles++;
    family(c, r)->specialized++;
    ctx->stats.specialized_programs++;
    e->state = SPEC_PENDING;
    if (wait || !ctx->gl.has_parallel) {
        /* No background compile: finish now so the failure (if any) is
         * reported with its source. */
        char log[4096];
        if (specialized_ok(ctx, e->spec.prog, log, sizeof log)) {
            e->state = SPEC_READY;
            ctx->stats.specialized_ready++;
        } else {
            if (!tx_gl_context_lost(&ctx->gl))
                log_failure(op, "specialized", src, log);
            ctx->stats.compile_failures++;
            tx_gl_program_delete(&ctx->gl, e->spec.prog);
            memset(&e->spec, 0, sizeof e->spec);
            ctx->stats.specialized_programs--;
            e->state = SPEC_FAILED;
        }
    }
    double ms = tx_now_ms() - t0;
    account(ctx, r, ms);
    if (e->state != SPEC_FAILED) { /* its first draw, estimated as the first draws so far */
        e->spec.specialized = true;
        e->spec.draw_debited = c->drawn_n ? c->drawn_ms / c->drawn_n : 0;
    }
    spec_debit(ctx, ms + ctx->fault_compile_ms + e->spec.draw_debited);
    free(src);
    evict_specialized(ctx);
}

/* A pending background compile has finished: check it (cheap now). */
static void settle_pending(tx_ctx *ctx, const char *op, entry *e, const tx_program_req *r) {
    char log[4096];
    if (specialized_ok(ctx, e->spec.prog, log, sizeof log)) {
        e->state = SPEC_READY;
        ctx->stats.specialized_ready++;
        return;
    }
    if (!tx_gl_context_lost(&ctx->gl)) {
        char *src = tx_codegen(r, true, ctx->caps.emulated_division);
        log_failure(op, "specialized", src, log);
        free(src);
    }
    ctx->stats.compile_failures++;
    tx_gl_program_delete(&ctx->gl, e->spec.prog);
    memset(&e->spec, 0, sizeof e->spec);
    ctx->stats.specialized_programs--;
    e->state = SPEC_FAILED;
}

/* A software rasterizer runs a draw of this many multiply-adds in ~20 ms or
 * more (SwiftShader ~1.5 GFLOP/s; llvmpipe ~10-20 on two cores): about one
 * compile. From there a draw's specialized program is compiled before its
 * first draw, whatever k (with the default k, from a k-th of it: at_once):
 * the generic program's draw costs more than the compile it saves (Chromium
 * on SwiftShader, matmul 512: generic 78-89 ms a call vs 63 specialized;
 * first call 150-168 vs 121-125 ms), and a repeated shape compiles one
 * program, not two. A GPU draws it in well under a millisecond, where the
 * generic program is the right first call. */
#define TX_SPECIALIZE_AT_ONCE_MACS (1 << 25)

static bool at_once(const tx_ctx *ctx, const tx_program_req *r) {
    if (ctx->k <= 0 || r->generic_only || !ctx->software_gl)
        return false;
    /* With the default k, so does a draw whose k calls do that much work:
     * its signature would be specialized at its k-th call anyway (sig_k),
     * and waiting adds a generic compile (Chromium on SwiftShader,
     * mobilenet_head's 1x1 convs at 2^24.6: first ten calls 1191-1308 ->
     * 1122-1128 ms). */
    double at = TX_SPECIALIZE_AT_ONCE_MACS / (ctx->k_default ? (double)ctx->k : 1.0);
    return r->macs >= at;
}

/* The other end of the same trade: a small draw on a software rasterizer
 * saves a fraction of a millisecond a call once specialized, and its compile
 * (with the translation at its first draw) costs 20-60 ms. With the default
 * k such a signature waits until its calls have done about a compile's worth
 * of work (TX_SPECIALIZE_AT_ONCE_MACS in all: ski rental, never more than
 * twice the best choice made knowing the number of calls), and at most
 * TX_SPECIALIZE_SOFT_MAX calls (internal.h), so that a long run still ends up
 * specialized.
 * A draw's work is its multiply-adds where the op counts them, else 16 per
 * output texel. Chromium on SwiftShader, the bench's training steps, first
 * three steps with k = 2: MLP 292 + 383 + 76 ms, CNN 556 + 263 + 401 ms; never
 * specialized, the CNN's 60 steps took 1.3 s instead of 2.0 s at the same
 * steady speed; an epoch of `texel train --model cnn` on llvmpipe 7.2 s
 * against 4.6 s. */
#define TX_WORK_PER_TEXEL 16.0

/* The compile TX_SPECIALIZE_AT_ONCE_MACS stands for (SwiftShader's, the
 * translation at the first draw included). Where this context's compiles
 * cost less (llvmpipe with a warm Mesa shader cache: 2-4 ms a program,
 * first draw included, against 50-90 ms cold), the rental ends sooner, in
 * proportion, down to a sixteenth. OCR rec on llvmpipe, 30 runs, warm
 * cache: every signature waiting for the whole work, 8.9-12.0 s in all
 * (steady 280-370 ms); specialized at the k-th call, 8.1-9.3 s (256-297). */
#define TX_COMPILE_REF_MS 20.0

/* The rent's scale on this context: what its programs cost the caller's
 * thread so far, the mean compile (a background compile: its issue) plus
 * the mean first draw, against TX_COMPILE_REF_MS (1 before any), within
 * [1/16, 1]: never later than the fixed rule. The cache's own counts, which
 * start again with the context after a loss. In the browser it stays 1:
 * WebGL runs in the GPU process, whose translation at a first draw the
 * page's clock does not see (SwiftShader: 30-80 ms, timed as 0.3), so the
 * mean would read low. */
static double compile_price(const tx_ctx *ctx) {
    double ms = TX_COMPILE_REF_MS;
    if (ctx->fault_price_ms > 0) {
        ms = ctx->fault_price_ms;
    } else {
#ifndef __EMSCRIPTEN__
        const tx_cache *c = ctx->cache;
        double compile_ms = 0;
        uint32_t n = 0;
        for (int i = 0; i < c->n_fams; i++) {
            compile_ms += c->fams[i].compile_ms;
            n += c->fams[i].generic + c->fams[i].specialized;
        }
        if (n > 0 && c->drawn_n > 0)
            ms = compile_ms / n + c->drawn_ms / c->drawn_n;
#endif
    }
    return fmin(1.0, fmax(1.0 / 16, ms / TX_COMPILE_REF_MS));
}

/* The calls of r's signature before its specialized program is compiled. */
static int sig_k(const tx_ctx *ctx, const tx_program_req *r, double texels) {
    if (!ctx->k_default || !ctx->software_gl || ctx->k <= 0)
        return ctx->k;
    double price = compile_price(ctx);
    double most = ceil(TX_SPECIALIZE_SOFT_MAX * price);
    double work = r->macs > 0 ? r->macs : texels * TX_WORK_PER_TEXEL;
    double calls = work > 0 ? ceil(TX_SPECIALIZE_AT_ONCE_MACS * price / work) : most;
    return (int)fmax(ctx->k, fmin(calls, most));
}

/* Signatures called k times or more (a one-off shape is not waiting for
 * anything) whose specialized program is not issued yet. */
int tx_cache_waiting(const tx_ctx *ctx) {
    const tx_cache *c = ctx->cache;
    int n = 0;
    for (int i = 0; c && !ctx->lost && ctx->k > 0 && i < c->sigs.n; i++)
        n += c->sigs.e[i].state == SPEC_NONE && c->sigs.e[i].count >= ctx->k;
    return n;
}

/* The index of r's signature (added when new; a full table is shrunk first). */
static int sig_index(tx_ctx *ctx, const tx_program_req *r) {
    tx_cache *c = ctx->cache;
    size_t len = make_key(c, r, true);
    uint64_t h = tx_fnv1a(c->keybuf, len);
    int si = table_find(&c->sigs, h, c->keybuf, len);
    if (si < 0) {
        if (c->sigs.n >= c->max_sigs) {
            shrink_sigs(ctx);
            len = make_key(c, r, true);
        }
        si = table_add(&c->sigs, h, c->keybuf, len);
    }
    return si;
}

tx_status tx_cache_bind(tx_ctx *ctx, const char *op, const tx_program_req *r, double texels) {
    /* A loss latched earlier in this op (an allocation, a previous pass):
     * no program of that context may be used, and after a drop none exist. */
    if (ctx->lost || !ctx->cache)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_cache *c = ctx->cache;
    c->tick++;
    c->todo_sig = -1;
    c->bound = NULL;
    bool compiled = false;

    /* Which specialized program, if any, serves this call. */
    entry *sig = NULL;
    if (ctx->k >= 0 && !r->generic_only) {
        int si = sig_index(ctx, r);
        sig = &c->sigs.e[si];
        sig->count++;
        sig->last_use = c->tick;
        bool now = ctx->k == 0 || at_once(ctx, r);
        if (sig->state == SPEC_NONE && now) {
            issue_specialized(ctx, op, si, r, true);
            compiled = true;
            sig = &c->sigs.e[si];
        }
        /* a big draw waits for its specialized program (warmed at load) */
        if (sig->state == SPEC_PENDING && (now || tx_gl_program_done(&ctx->gl, sig->spec.prog)))
            settle_pending(ctx, op, sig, r);
        if (sig->state == SPEC_NONE && sig->count >= sig_k(ctx, r, texels)) {
            c->todo_sig = si;
            c->todo_req = *r;
        }
        if (sig->state == SPEC_READY) {
            prepare(ctx, &sig->spec, r, true);
            c->bound = &sig->spec;
            c->bound_fam = family(c, r);
            ctx->stats.specialized_runs++;
            if (!compiled)
                ctx->stats.cache_hits++;
            return TX_STATUS_OK;
        }
    }

    /* The generic program. */
    size_t len = make_key(c, r, false);
    uint64_t h = tx_fnv1a(c->keybuf, len);
    int gi = table_find(&c->generic, h, c->keybuf, len);
    tx_gl_prog p = gi < 0 ? 0 : c->generic.e[gi].gen.prog;
    if (gi >= 0 && c->generic.e[gi].gen_pending) { /* warmed: read its link status */
        c->generic.e[gi].gen_pending = false;
        p = c->generic.e[gi].gen.prog = compile_finish(ctx, op, r, false, p);
        compiled = true;
    } else if (!p) {
        p = compile_now(ctx, op, r, false);
        compiled = true;
        if (p) {
            ctx->stats.generic_compiles++;
            family(c, r)->generic++;
            if (gi < 0) {
                len = make_key(c, r, false);
                gi = table_add(&c->generic, h, c->keybuf, len);
            }
            c->generic.e[gi].gen.prog = p;
        }
    }
    if (!p) {
        if (tx_gl_context_lost(&ctx->gl))
            return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, op, "linking a program");
        return tx_fail(ctx, TX_STATUS_GL_ERROR,
                       "%s: the generic %s program failed to compile (driver log and "
                       "source on stderr); the op cannot run on this device",
                       op, r->template_name);
    }
    entry *g = &c->generic.e[gi];
    prepare(ctx, &g->gen, r, false);
    set_params(&g->gen, r);
    c->bound = &g->gen;
    c->bound_fam = family(c, r);
    ctx->stats.generic_runs++;
    if (!compiled)
        ctx->stats.cache_hits++;
    return TX_STATUS_OK;
}

bool tx_cache_steady(tx_ctx *ctx, const char *op, const tx_program_req *r) {
    tx_cache *c = ctx->cache;
    if (ctx->k <= 0 || r->generic_only || ctx->lost || !c)
        return true;
    if (ctx->compile_only) /* the load-time walk warms the first calls' programs */
        return false;
    int si = sig_index(ctx, r);
    entry *sig = &c->sigs.e[si];
    sig->last_use = ++c->tick;
    if (sig->state == SPEC_PENDING && tx_gl_program_done(&ctx->gl, sig->spec.prog))
        settle_pending(ctx, op, sig, r);
    if (sig->state == SPEC_NONE && ++sig->count >= sig_k(ctx, r, 0) && spec_may_issue(ctx)) {
        issue_specialized(ctx, op, si, r, false);
        sig = &c->sigs.e[si];
    }
    /* a failed specialization: the steady variant's generic program serves */
    return sig->state == SPEC_READY || sig->state == SPEC_FAILED;
}

tx_status tx_cache_warm(tx_ctx *ctx, const char *op, const tx_program_req *r) {
    if (ctx->lost || !ctx->cache)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_cache *c = ctx->cache;
    ctx->warm_requests++;
    if (at_once(ctx, r)) { /* the program its first call will use */
        int si = sig_index(ctx, r);
        if (c->sigs.e[si].state == SPEC_NONE)
            issue_specialized(ctx, op, si, r, false);
        return TX_STATUS_OK;
    }
    size_t len = make_key(c, r, false);
    uint64_t h = tx_fnv1a(c->keybuf, len);
    if (table_find(&c->generic, h, c->keybuf, len) >= 0)
        return TX_STATUS_OK;
    tx_gl_prog p = compile_issue(ctx, op, r, false);
    len = make_key(c, r, false);
    int gi = table_add(&c->generic, h, c->keybuf, len);
    c->generic.e[gi].gen.prog = p;
    c->generic.e[gi].gen_pending = true;
    ctx->stats.generic_compiles++;
    family(c, r)->generic++;
    return TX_STATUS_OK;
}

int tx_cache_compiling(tx_ctx *ctx) {
    tx_cache *c = ctx->cache;
    int n = 0;
    if (!c || ctx->lost)
        return 0;
    if (ctx->fault_compiling > 0) {
        ctx->fault_compiling--;
        n++;
    }
    for (int i = 0; i < c->generic.n; i++)
        n += c->generic.e[i].gen_pending && !tx_gl_program_done(&ctx->gl, c->generic.e[i].gen.prog);
    for (int i = 0; i < c->sigs.n; i++)
        n += c->sigs.e[i].state == SPEC_PENDING &&
             !tx_gl_program_done(&ctx->gl, c->sigs.e[i].spec.prog);
    return n;
}

/* Called after the draw: issue the specialized compile that became due. */
static void cache_after_draw(tx_ctx *ctx, const char *op) {
    tx_cache *c = ctx->cache;
    if (c->todo_sig < 0)
        return;
    int si = c->todo_sig;
    c->todo_sig = -1;
    if (spec_may_issue(ctx)) /* else a later call issues it */
        issue_specialized(ctx, op, si, &c->todo_req, false);
}

/* Each pass's inputs sit in its half of the units (tx_gl_unit_base). */
_Static_assert(TX_MAX_INPUTS <= TX_GL_UNITS / 2, "TX_MAX_INPUTS exceeds half the texture units");

tx_status tx_draw(tx_ctx *ctx, const char *op, const tx_texture *const *ins, int n_in,
                  const tx_texture *const *outs, int n_out) {
    tx_gl_tex in_gl[TX_MAX_INPUTS], out_gl[TX_MAX_OUTPUTS];
    TX_ASSERT(n_in <= TX_MAX_INPUTS && n_out <= TX_MAX_OUTPUTS && n_out >= 1);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    for (int i = 0; i < n_in; i++)
        in_gl[i] = ins[i]->gl;
    for (int i = 0; i < n_out; i++) {
        out_gl[i] = outs[i]->gl;
        TX_ASSERT(outs[i]->w == outs[0]->w && outs[i]->h == outs[0]->h);
    }
    /* A program's first draw is timed into its family: drivers that compile
     * the machine code at the first draw (llvmpipe) pay their compile here. */
    tx_cache *c = ctx->cache;
    const void *prog = c && c->bound ? (const void *)c->bound : (const void *)op;
    uint64_t draw[3] = {(uint64_t)(uintptr_t)prog, (uint64_t)outs[0]->w, (uint64_t)outs[0]->h};
    ctx->work_key = (ctx->work_key ^ tx_fnv1a(draw, sizeof draw)) * 1099511628211ull;
    prog_info *first = c && c->bound && !c->bound->drawn ? c->bound : NULL;
    double t0 = first ? tx_now_ms() : 0;
    tx_gl_draw(&ctx->gl, in_gl, n_in, out_gl, n_out, outs[0]->w, outs[0]->h);
    if (first) {
        double ms = tx_now_ms() - t0;
        first->drawn = true;
        c->bound_fam->first_draw_ms += ms;
        c->drawn_ms += ms;
        c->drawn_n++;
        if (first->specialized)
            spec_debit(ctx, ms - first->draw_debited);
    }
    if (c)
        c->bound = NULL;
    ctx->stats.draws++;
    if (ctx->fault_draw_error) {
        ctx->fault_draw_error = false;
        tx_gl_inject_error();
    }
    unsigned e = tx_gl_op_error(&ctx->gl);
    if (e) {
        char what[64];
        snprintf(what, sizeof what, "the draw (%s)", tx_gl_error_name(e));
        return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, op, what);
    }
    cache_after_draw(ctx, op);
    return TX_STATUS_OK;
}

int tx_ctx_compile_families(const tx_ctx *ctx, tx_compile_family *out, int max) {
    if (!ctx || !ctx->cache)
        return 0;
    const tx_cache *c = ctx->cache;
    for (int i = 0; i < c->n_fams && i < max && out; i++)
        out[i] = c->fams[i];
    return c->n_fams;
}
