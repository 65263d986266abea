/* TX_DEVICE_AUTO: which device a session's next run uses, and why (see
 * tx_session_desc in texel.h for the rules). */
#ifndef TX_MODEL_CHOOSE_H
#define TX_MODEL_CHOOSE_H

#include <stddef.h>

#include "texel.h"

/* auto's trial, in order: the first run on the CPU; then, where the driver
 * compiles in the background, a warm-up pass (at the start of the second
 * run) issues the GPU programs and
 * the CPU serves (and is timed warm) until they have compiled; then GPU runs
 * until specialized; then, if the CPU was not timed warm yet, one CPU run. */
typedef enum {
    TX_TRIAL_GL_LATER, /* no GL context yet (tx_ctx_desc.make_gl): the CPU, and
                          the context is made before the second run (or, while
                          the host looks at the GPU, tx_ctx_gpu_hint, before
                          the first run after its answer) */
    TX_TRIAL_PROBE,    /* a software rasterizer by name: the CPU, to be confirmed */
    TX_TRIAL_CPU_FIRST,
    TX_TRIAL_WARMING, /* the session makes its warm-up pass before the next run */
    TX_TRIAL_COMPILING,
    TX_TRIAL_GPU,
    TX_TRIAL_CPU_WARM,
} tx_trial_phase;

typedef struct tx_session_choice {
    tx_device mode;    /* GPU, CPU or AUTO */
    tx_device current; /* the device the next run uses */
    bool decided;
    tx_trial_phase phase;
    int trial;            /* auto: runs measured so far */
    int gpu_trials;       /* auto: GPU runs the trial makes (until specialized) */
    int gpu_runs;         /* auto: GPU runs made in the trial */
    int cpu_warm_runs;    /* auto: CPU runs timed after the first */
    int served_compiling; /* auto: runs the CPU served while GPU programs compiled */
    double gpu_ms, cpu_ms;
    uint64_t runs[TX_DEVICE_COUNT_];
    uint64_t model_hash;
    char cache_path[512]; /* "": remember nothing */
    char reason[192];
} tx_session_choice;

/* Fixed devices are decided at once; auto looks at the renderer and the
 * cache file first. */
void tx_choice_init(tx_ctx *ctx, tx_session_choice *c, const tx_session_desc *desc,
                    const void *bytes, size_t len);
/* After a successful run on c->current that took `ms`: counts it, advances
 * auto's trial and, at its end, decides (and remembers the decision).
 * `compiling`: GPU programs still compiling in the background. */
void tx_choice_record(tx_ctx *ctx, tx_session_choice *c, double ms, int compiling);
/* Before a run after the first, in the GL_LATER phase: makes the GL context
 * (tx_ctx_need_gl) and goes on as auto would have from the start with it:
 * the renderer and the remembered choices are read; no GL context decides
 * the CPU. */
void tx_choice_start_gl(tx_ctx *ctx, tx_session_choice *c);
/* Before a run after the first: a renderer that names a software rasterizer
 * is timed (tx_ctx's probe, once per context); slow, the CPU is decided,
 * fast, the trial measures as on any GPU. */
void tx_choice_probe(tx_ctx *ctx, tx_session_choice *c);
/* Before a run: in the compiling phase, the GPU's turn comes when nothing
 * is compiling any more. */
void tx_choice_poll(tx_session_choice *c, int compiling);
/* The warm-up pass was made (ok) or could not be (no background compile, or
 * it failed: the GPU trial then compiles as it runs). */
void tx_choice_warmed(tx_session_choice *c, bool ok, const char *why);

/* The file of remembered choices when no desc names one ("" in the browser
 * and when TEXEL_CACHE_DIR is ""). Besides the device choices (hash, device,
 * ms, ms, renderer) it holds per-device kernel choices in the same line
 * format, their second field naming the variant (engine/gpu/tune.c); each
 * reader skips the other's lines. */
void tx_choice_default_file(char *out, size_t n);
/* mkdir -p of path's directory. */
void tx_choice_make_parent(const char *path);
/* One line of that file, parsed in place: false when it is not one. */
typedef struct tx_choice_rec {
    unsigned long long hash;
    char what[32]; /* a device name, or a kernel variant */
    double a, b;
    char *renderer; /* points into the line */
} tx_choice_rec;
bool tx_choice_line(char *line, tx_choice_rec *out);

#endif
