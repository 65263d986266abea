/* Kernel variants chosen per device by measurement (env TEXEL_TUNE=1).
 *
 * A kernel with several variants (matmul's tile rows: 1, 4, or 8 on 8 render
 * targets) times each on its first use per size class: one call to compile,
 * one timed after tx_gl_finish. The winner is kept in the context and
 * appended to the file of remembered device choices (choose.c) as
 * "<hash of kernel + class> <kernel><variant> <ms> 0 <renderer>", so a later
 * context on the same renderer takes it without measuring. */
#include <math.h>
#include <string.h>

#include "../device.h"
#include "../hash.h"
#include "../model/choose.h"
#include "tune.h"

/* The context's slot for kernel's choice in class cls, or NULL. */
static signed char *slot(tx_ctx *ctx, const char *kernel, int cls) {
    if (!ctx || !kernel || cls < 0 || cls >= TX_TUNE_CLASSES)
        return NULL;
    if (strcmp(kernel, "matmul-tm") == 0)
        return &ctx->matmul_tm[cls];
    if (strcmp(kernel, "conv-tp") == 0)
        return &ctx->conv_tp[cls];
    return NULL;
}

int tx_ctx_kernel_choice(const tx_ctx *ctx, const char *kernel, int size_class) {
    signed char *s = slot((tx_ctx *)ctx, kernel, size_class);
    return s ? *s : 0;
}

tx_status tx_ctx_set_kernel_choice(tx_ctx *ctx, const char *kernel, int size_class, int variant) {
    signed char *s = slot(ctx, kernel, size_class);
    if (!s || (variant != 0 && variant != 1 && variant != 4 && variant != 8))
        return ctx ? tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                             "tx_ctx_set_kernel_choice: no kernel \"%s\" with class %d and "
                             "variant %d (matmul-tm, conv-tp: classes 0..%d, variants 0, 1, 4, "
                             "8)",
                             kernel ? kernel : "(null)", size_class, variant, TX_TUNE_CLASSES - 1)
                   : TX_STATUS_INVALID_ARGUMENT;
    *s = (signed char)variant;
    return TX_STATUS_OK;
}

static uint64_t key_hash(const char *kernel, int cls) {
    char k[64];
    int n = snprintf(k, sizeof k, "tune/%s/%d", kernel, cls);
    return tx_fnv1a(k, (size_t)n);
}

int tx_tune_lookup(tx_ctx *ctx, const char *kernel, int cls) {
    char path[512];
    tx_choice_default_file(path, sizeof path);
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    uint64_t want = key_hash(kernel, cls);
    size_t kl = strlen(kernel);
    char line[512];
    int found = 0;
    tx_choice_rec rec;
    while (fgets(line, sizeof line, f)) {
        if (!tx_choice_line(line, &rec) || rec.hash != want || strncmp(rec.what, kernel, kl) != 0 ||
            strcmp(rec.renderer, ctx->caps.renderer) != 0)
            continue;
        int v = atoi(rec.what + kl);
        if (v > 0)
            found = v; /* the last line wins */
    }
    fclose(f);
    return found;
}

void tx_tune_store(tx_ctx *ctx, const char *kernel, int cls, int variant, double ms) {
    char path[512];
    tx_choice_default_file(path, sizeof path);
    if (!path[0])
        return;
    tx_choice_make_parent(path);
    FILE *f = fopen(path, "a");
    if (!f)
        return; /* remembering is an optimisation */
    fprintf(f, "%016llx %s%d %.3f 0 %s\n", (unsigned long long)key_hash(kernel, cls), kernel,
            variant, ms, ctx->caps.renderer);
    fclose(f);
}

static bool among(int v, const int *cand, int n) {
    for (int i = 0; i < n; i++)
        if (cand[i] == v)
            return true;
    return false;
}

tx_status tx_tune_run(tx_ctx *ctx, const char *kernel, double work, const int *cand, int n,
                      int dflt, tx_tune_fn run, const void *call) {
    int cls = (int)(log2(work > 1 ? work : 1) / 3);
    cls = cls >= TX_TUNE_CLASSES ? TX_TUNE_CLASSES - 1 : cls;
    signed char *known = slot(ctx, kernel, cls);
    TX_ASSERT(known);
    if (!*known && ctx->tune_kernels && !ctx->compile_only)
        *known = (signed char)tx_tune_lookup(ctx, kernel, cls);
    if (among(*known, cand, n))
        return run(ctx, call, *known);
    if (!ctx->tune_kernels || ctx->compile_only || n < 2)
        return run(ctx, call, dflt);
    double best_ms = 0;
    int best = dflt;
    tx_status st = TX_STATUS_OK;
    ctx->tune_measuring = true;
    for (int i = 0; i < n && !st; i++) {
        st = run(ctx, call, cand[i]);
        tx_gl_finish();
        double t0 = tx_now_ms();
        st = st ? st : run(ctx, call, cand[i]);
        tx_gl_finish();
        double ms = tx_now_ms() - t0;
        if (!st && (i == 0 || ms < best_ms)) {
            best_ms = ms;
            best = cand[i];
        }
    }
    ctx->tune_measuring = false;
    if (st)
        return st;
    *known = (signed char)best;
    tx_tune_store(ctx, kernel, cls, best, best_ms);
    return run(ctx, call, best);
}
