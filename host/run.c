/* texel run MODEL.onnx [--input NAME=FILE[,FILE]...]... [--output NAME]... [--json] [--save DIR]
 *
 * An --input naming several files (comma-separated) runs the one session once
 * per file set (set k feeds every input its k-th file, or its only one), e.g.
 * a transformer at several sequence lengths: each set prints its own report
 * (a JSON line with "set": k) with the context's counters so far, and --save
 * writes set k under DIR/k/.
 * FILE is a .npy or an image (anything stb_image reads): RGB, resized to
 * --resize WxH (default: the model input's H×W when static), scaled to [0, 1],
 * normalized by --mean/--std, laid out --layout nchw (default) or nhwc with a
 * batch of 1. Inputs without --input get seeded random data (uniform [0, 1);
 * ints 0..9) of the input's shape, dynamic dims 1 or --dim NAME=V.
 *
 * --profile: after those runs, --repeat more (at least one) with every step
 * timed (tx_session_profile; each GPU step waited for), reported per
 * op type and for the slowest steps (in --json: every step).
 *
 * --save DIR is created with its parents. Exit status: 0 ok, 1 error, 2 usage, 4 the model needs
 * what texel lacks (TX_STATUS_UNSUPPORTED: the message names the op types), 77 no GL context. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include <stb_image.h>

#include "check.h"
#include "cli.h"
#include "cmds.h"
#include "glctx.h"
#include "npy.h"
#include "report.h"

#define MAX_ARGS 32

typedef struct run_opts {
    const char *model;
    const char *in_name[MAX_ARGS], *in_file[MAX_ARGS];
    int n_in;
    const char *outs[MAX_ARGS];
    int n_outs;
    const char *dim_name[MAX_ARGS];
    int64_t dim_val[MAX_ARGS];
    int n_dims;
    int n_sets; /* file sets: the most files an --input names */
    bool json, no_fusion, quiet, profile;
    const char *save;
    int resize_w, resize_h;
    float mean[3], std[3];
    bool nhwc;
    uint64_t seed;
    int repeat;
    tx_device device; /* --device: 0 = auto */
    tx_ctx_desc cd;
} run_opts;

const char tx_usage_run[] =
    "usage: texel run MODEL.onnx [--input NAME=FILE.npy|IMAGE[,FILE...]]... [--output NAME]...\n"
    "           [--json] [--save DIR] [--resize WxH] [--mean a,b,c] [--std a,b,c]\n"
    "           [--layout nchw|nhwc] [--dim NAME=V] [--seed S] [--repeat N]\n"
    "           [--specialize-after K] [--no-fusion] [--device auto|gpu|cpu]\n"
    "           [--max-texture-size N] [--precision f32|f16] [--quiet] [--profile]\n";

static int usage_run(const char *why) {
    return tx_cli_usage_error("run", tx_usage_run, "%s", why);
}

static bool parse_floats3(const char *s, float v[3]) {
    char *end;
    for (int i = 0; i < 3; i++) {
        v[i] = strtof(s, &end);
        if (end == s)
            return false;
        s = end;
        if (i < 2) {
            if (*s != ',')
                return i == 0 && *s == 0 ? (v[1] = v[2] = v[0], true) : false;
            s++;
        }
    }
    return *s == 0;
}

static int parse_args(int argc, char **argv, run_opts *o) {
    memset(o, 0, sizeof *o);
    o->std[0] = o->std[1] = o->std[2] = 1;
    o->seed = 42;
    o->n_sets = 1;
    static const char *const value_opts[] = {"--input",
                                             "--dim",
                                             "--output",
                                             "--save",
                                             "--resize",
                                             "--mean",
                                             "--std",
                                             "--layout",
                                             "--seed",
                                             "--repeat",
                                             "--device",
                                             "--specialize-after",
                                             "--max-texture-size",
                                             "--precision",
                                             NULL};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--no-fusion") == 0) {
            o->no_fusion = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--profile") == 0) {
            o->profile = true;
        } else if (tx_cli_is_help(a)) {
            return -1;
        } else if (a[0] != '-' || !a[1]) {
            if (o->model)
                return usage_run("more than one model given");
            o->model = a;
        } else if (!tx_cli_in(a, value_opts)) {
            return tx_cli_unknown("run", tx_usage_run, a);
        } else if (!v) {
            return tx_cli_no_value("run", tx_usage_run, a);
        } else if (strcmp(a, "--input") == 0 || strcmp(a, "--dim") == 0) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1])
                return usage_run("want NAME=VALUE");
            if (o->n_in == MAX_ARGS || o->n_dims == MAX_ARGS)
                return usage_run("too many --input/--dim options");
            char *name = strndup(v, (size_t)(eq - v));
            if (a[2] == 'i') {
                int files = 1;
                for (const char *c = eq + 1; *c; c++)
                    files += *c == ',';
                if (files > 1 && o->n_sets > 1 && files != o->n_sets)
                    return usage_run("--input lists of files differ in length");
                if (files > 1)
                    o->n_sets = files;
                o->in_name[o->n_in] = name;
                o->in_file[o->n_in++] = eq + 1;
            } else {
                char *end;
                long long d = strtoll(eq + 1, &end, 10);
                if (*end || d < 0)
                    return usage_run("--dim wants NAME=V with V >= 0");
                o->dim_name[o->n_dims] = name;
                o->dim_val[o->n_dims++] = d;
            }
            i++;
        } else if (strcmp(a, "--output") == 0) {
            if (o->n_outs == MAX_ARGS)
                return usage_run("too many --output options");
            o->outs[o->n_outs++] = v, i++;
        } else if (strcmp(a, "--save") == 0) {
            o->save = v, i++;
        } else if (strcmp(a, "--resize") == 0) {
            if (sscanf(v, "%dx%d", &o->resize_w, &o->resize_h) != 2 || o->resize_w < 1 ||
                o->resize_h < 1 || o->resize_w > 16384 || o->resize_h > 16384)
                return usage_run("--resize wants WxH");
            i++;
        } else if (strcmp(a, "--mean") == 0 || strcmp(a, "--std") == 0) {
            if (!parse_floats3(v, a[2] == 'm' ? o->mean : o->std))
                return usage_run("--mean/--std want a or a,b,c");
            i++;
        } else if (strcmp(a, "--layout") == 0) {
            if (strcmp(v, "nchw") && strcmp(v, "nhwc"))
                return usage_run("--layout is nchw or nhwc");
            o->nhwc = strcmp(v, "nhwc") == 0, i++;
        } else if (strcmp(a, "--seed") == 0) {
            o->seed = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--repeat") == 0) {
            o->repeat = atoi(v), i++;
            if (o->repeat < 0 || o->repeat > 10000)
                return usage_run("--repeat wants 0..10000");
        } else if (strcmp(a, "--device") == 0) {
            o->device = tx_device_from_name(v), i++;
            if (o->device == TX_DEVICE_COUNT_)
                return usage_run("--device is auto, gpu or cpu");
        } else if (strcmp(a, "--max-texture-size") == 0) {
            o->cd.max_texture_size = atoi(v), i++;
            if (o->cd.max_texture_size < 1)
                return usage_run("--max-texture-size wants N >= 1");
        } else if (strcmp(a, "--precision") == 0) {
            /* f16: tensors stored as RGBA16F (EXT_color_buffer_half_float) */
            if (strcmp(v, "f16") != 0 && strcmp(v, "f32") != 0)
                return usage_run("--precision is f32 or f16");
            o->cd.float16_storage = strcmp(v, "f16") == 0;
            i++;
        } else if (strcmp(a, "--specialize-after") == 0) {
            int k = atoi(v);
            o->cd.specialize_after =
                k == 0 ? TX_SPECIALIZE_ALWAYS : (k < 0 ? TX_SPECIALIZE_NEVER : k);
            i++;
        } else {
            return tx_cli_unknown("run", tx_usage_run, a);
        }
    }
    for (int i = 0; i < 3; i++)
        if (o->std[i] == 0)
            return usage_run("--std must not be 0");
    return o->model ? 0 : usage_run("no model given");
}

/* The file of set k in an --input's comma-separated list (its only one if it
 * names one). */
static const char *set_file(const char *list, int k, char *buf, size_t n) {
    if (!strchr(list, ','))
        return list;
    for (int i = 0; i < k; i++)
        list = strchr(list, ',') + 1;
    size_t len = strcspn(list, ",");
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), list);
    return buf;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

/* Output coordinate o of dn along an axis of sn source pixels: the two source
 * pixels it blends (*i0, *i1) and the weight of *i1, half-pixel centres. */
static void bilinear_axis(int o, int sn, int dn, int *i0, int *i1, float *w) {
    float f = ((float)o + 0.5f) * (float)sn / (float)dn - 0.5f;
    if (f < 0)
        f = 0;
    *i0 = (int)f;
    *i1 = *i0 + 1 < sn ? *i0 + 1 : sn - 1;
    *w = f - (float)*i0;
}

/* Bilinear resize with half-pixel centres (what most preprocessors do). */
static void resize_rgb(const unsigned char *src, int sw, int sh, float *dst, int dw, int dh) {
    for (int y = 0; y < dh; y++) {
        int y0, y1;
        float wy;
        bilinear_axis(y, sh, dh, &y0, &y1, &wy);
        for (int x = 0; x < dw; x++) {
            int x0, x1;
            float wx;
            bilinear_axis(x, sw, dw, &x0, &x1, &wx);
            for (int c = 0; c < 3; c++) {
                float a = src[(y0 * sw + x0) * 3 + c], b = src[(y0 * sw + x1) * 3 + c];
                float cc = src[(y1 * sw + x0) * 3 + c], d = src[(y1 * sw + x1) * 3 + c];
                dst[(y * dw + x) * 3 + c] =
                    (a * (1 - wx) + b * wx) * (1 - wy) + (cc * (1 - wx) + d * wx) * wy;
            }
        }
    }
}

/* An image → [1, 3, H, W] (or [1, H, W, 3]) float tensor data. */
static int load_image(const run_opts *o, const char *path, const tx_value_info *info, tx_npy *out,
                      char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    int w, h, c;
    unsigned char *px = stbi_load(path, &w, &h, &c, 3);
    if (!px) {
        snprintf(err, err_len, "cannot read image %s: %s", path, stbi_failure_reason());
        return -1;
    }
    int dw = o->resize_w, dh = o->resize_h;
    if (!dw && info->rank == 4) { /* the model's own static size */
        int64_t mh = o->nhwc ? info->shape[1] : info->shape[2];
        int64_t mw = o->nhwc ? info->shape[2] : info->shape[3];
        if (mh > 0 && mw > 0 && mh <= 16384 && mw <= 16384)
            dw = (int)mw, dh = (int)mh;
    }
    if (!dw)
        dw = w, dh = h;
    float *rgb = malloc((size_t)dw * (size_t)dh * 3 * sizeof(float));
    float *data = malloc((size_t)dw * (size_t)dh * 3 * sizeof(float));
    if (!rgb || !data) {
        free(rgb);
        free(data);
        stbi_image_free(px);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    resize_rgb(px, w, h, rgb, dw, dh);
    stbi_image_free(px);
    for (int y = 0; y < dh; y++)
        for (int x = 0; x < dw; x++)
            for (int ch = 0; ch < 3; ch++) {
                float v = (rgb[(y * dw + x) * 3 + ch] / 255.0f - o->mean[ch]) / o->std[ch];
                size_t at =
                    o->nhwc ? ((size_t)y * dw + x) * 3 + ch : ((size_t)ch * dh + y) * dw + x;
                data[at] = v;
            }
    free(rgb);
    out->rank = 4;
    int64_t s[4] = {1, 3, dh, dw}, sn[4] = {1, dh, dw, 3};
    memcpy(out->shape, o->nhwc ? sn : s, sizeof s);
    out->numel = (int64_t)dw * dh * 3;
    out->dtype = TX_DTYPE_FLOAT32;
    out->data = data;
    strcpy(out->descr, "<f4");
    return 0;
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int random_input(const run_opts *o, const tx_value_info *info, uint64_t *rng, tx_npy *out,
                        char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    if (info->rank < 0) {
        snprintf(err, err_len, "input \"%s\" has no declared shape: give --input", info->name);
        return -1;
    }
    out->rank = info->rank;
    out->numel = 1;
    for (int d = 0; d < info->rank; d++) {
        int64_t v = info->shape[d];
        if (v < 0) {
            v = 1;
            for (int k = 0; k < o->n_dims; k++)
                if (info->dim_names[d] && strcmp(info->dim_names[d], o->dim_name[k]) == 0)
                    v = o->dim_val[k];
        }
        out->shape[d] = v;
        out->numel *= v;
    }
    if (out->numel > ((int64_t)1 << 28)) {
        snprintf(err, err_len, "input \"%s\" would have %lld elements", info->name,
                 (long long)out->numel);
        return -1;
    }
    out->dtype = info->dtype;
    out->data = malloc((size_t)(out->numel ? out->numel : 1) * 4);
    if (!out->data) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < out->numel; i++) {
        uint64_t r = rng_next(rng);
        if (out->dtype == TX_DTYPE_INT32)
            ((int32_t *)out->data)[i] = (int32_t)(r % 10);
        else
            ((float *)out->data)[i] = (float)((r >> 11) * (1.0 / 9007199254740992.0));
    }
    strcpy(out->descr, out->dtype == TX_DTYPE_INT32 ? "<i8" : "<f4");
    return 0;
}

static void sanitize(char *dst, size_t n, const char *name) {
    size_t i = 0;
    for (; name[i] && i + 1 < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || c == '.';
        dst[i] = ok ? c : '_';
    }
    dst[i] = 0;
}

static void shape_text(char *buf, size_t n, int rank, const int64_t *shape) {
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < rank && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

static void print_shape_json(int rank, const int64_t *shape) {
    printf("[");
    for (int d = 0; d < rank; d++)
        printf(d ? ", %lld" : "%lld", (long long)shape[d]);
    printf("]");
}

typedef struct summary {
    double min, max, mean;
    int64_t nan;
    float first[8];
    int n_first;
} summary;

static void summarize(const float *v, int64_t n, summary *s) {
    memset(s, 0, sizeof *s);
    double sum = 0;
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i < 8)
            s->first[s->n_first++] = v[i];
        if (isnan(v[i])) {
            s->nan++;
            continue;
        }
        if (cnt == 0 || v[i] < s->min)
            s->min = v[i];
        if (cnt == 0 || v[i] > s->max)
            s->max = v[i];
        sum += v[i];
        cnt++;
    }
    s->mean = cnt ? sum / (double)cnt : 0;
}

/* The progress line of a load over a second (stderr on a terminal, not
 * --quiet): stopped before anything else is printed. */
static tx_ticker *g_ticker;

static void load_done(void) {
    tx_ticker_stop(g_ticker);
    g_ticker = NULL;
}

static int fail_run(const run_opts *o, tx_status st, const char *msg) {
    load_done();
    if (o->json) {
        printf("{\"model\": ");
        tx_json_str(o->model);
        printf(", \"status\": \"%s\", \"error\": ", tx_status_name(st));
        tx_json_str(msg);
        printf("}\n");
    } else {
        fprintf(stderr, "texel run: %s: %s\n", tx_status_name(st), msg);
    }
    return st == TX_STATUS_UNSUPPORTED ? 4 : 1;
}

/* With the progress line on and the session on the GPU: its programs compiled
 * before the first run, counted on the line (the first run's time includes
 * this). Returns the ms it took. */
static double compile_ahead(tx_session *sess, const tx_feed *feeds, int n, const char *base) {
    tx_session_stats st;
    tx_session_stats_get(sess, &st);
    if (st.device != TX_DEVICE_GPU)
        return 0;
    tx_ticker_set(g_ticker, "texel run: %s: compiling GPU programs", base);
    double t0 = tx_host_ms();
    int programs = 0;
    if (tx_session_compile(sess, feeds, n, &programs) == TX_STATUS_OK) {
        for (int left; (left = tx_session_compiling(sess)) > 0;) {
            tx_ticker_set(g_ticker, "texel run: %s: compiling GPU programs %d/%d", base,
                          programs - left, programs);
            nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
        }
    }
    return tx_host_ms() - t0;
}

/* --profile: the runs timed step by step (tx_session_profile). */
typedef struct prof_result {
    int runs, n;
    double run_ms; /* the median profiled run */
    tx_step_profile *steps;
} prof_result;

static tx_status profile_runs(tx_ctx *ctx, tx_session *sess, const tx_feed *feeds, int n_in,
                              const char *const *fetch, int n_out, tx_tensor *outs, int runs,
                              prof_result *p) {
    tx_status st = tx_session_profile_enable(sess, true);
    if (runs < 1)
        runs = 1;
    double *ms = calloc((size_t)runs, sizeof *ms);
    if (!st && !ms)
        st = TX_STATUS_OUT_OF_MEMORY;
    for (int r = 0; r < runs && !st; r++) {
        for (int i = 0; i < n_out; i++)
            tx_tensor_destroy(ctx, outs[i]);
        double t0 = tx_host_ms();
        st = tx_session_run(sess, feeds, n_in, fetch, n_out, outs);
        if (!st)
            tx_ctx_finish(ctx);
        ms[r] = tx_host_ms() - t0;
        if (st) /* the failed run left no outputs */
            memset(outs, 0, sizeof(tx_tensor) * (size_t)n_out);
    }
    p->runs = runs;
    p->run_ms = st ? 0 : tx_median(ms, runs);
    free(ms);
    p->n = st ? -1 : tx_session_profile(sess, NULL, 0);
    if (p->n > 0) {
        p->steps = calloc((size_t)p->n, sizeof *p->steps);
        if (!p->steps)
            st = TX_STATUS_OUT_OF_MEMORY;
        else
            tx_session_profile(sess, p->steps, p->n);
    }
    tx_session_profile_enable(sess, false); /* the strings stay the session's */
    return st;
}

/* The steps' times summed per op type (a fused activation counts with its
 * step), in first-seen order; returns how many. */
typedef struct prof_op {
    const char *op_type;
    int steps;
    double ms, macs; /* macs: a run's */
    uint64_t draws, compiles;
} prof_op;

static int profile_by_op(const prof_result *p, prof_op *ops, int max) {
    int n = 0;
    for (int i = 0; i < p->n; i++) {
        int j = 0;
        while (j < n && strcmp(ops[j].op_type, p->steps[i].op_type))
            j++;
        if (j == n) {
            if (n == max)
                continue;
            ops[n++] = (prof_op){.op_type = p->steps[i].op_type};
        }
        ops[j].steps++;
        ops[j].ms += p->steps[i].ms;
        ops[j].draws += p->steps[i].draws;
        ops[j].macs += p->steps[i].macs;
        ops[j].compiles += p->steps[i].compiles;
    }
    return n;
}

static int by_ms_desc(const void *a, const void *b) {
    double x = ((const prof_op *)a)->ms, y = ((const prof_op *)b)->ms;
    return (x < y) - (x > y);
}

static int steps_by_ms_desc(const void *a, const void *b) {
    double x = ((const tx_step_profile *)a)->ms, y = ((const tx_step_profile *)b)->ms;
    return (x < y) - (x > y);
}

/* GFLOP/s of `macs` multiply-adds in `ms` (0 where either is 0). */
static double gflops(double macs, double ms) {
    return macs > 0 && ms > 0 ? 2 * macs / (ms * 1e6) : 0;
}

static void print_profile_text(const prof_result *p, double steady) {
    prof_op ops[128];
    int n = profile_by_op(p, ops, 128);
    qsort(ops, (size_t)n, sizeof *ops, by_ms_desc);
    double total = 0;
    for (int i = 0; i < n; i++)
        total += ops[i].ms;
    double per = p->runs ? 1.0 / p->runs : 0;
    printf("profile: %d run%s, every step finished before the next: %.2f ms a run (median; the "
           "steps %.2f ms",
           p->runs, p->runs == 1 ? "" : "s", p->run_ms, total * per);
    if (steady > 0)
        printf("; unprofiled steady %.2f ms", steady);
    printf(")\n  %-24s %6s %10s %7s %11s %8s %9s\n", "op type", "steps", "ms a run", "share",
           "draws a run", "GFLOP/s", "compiles");
    for (int i = 0; i < n; i++) {
        char gf[32] = "-";
        double v = gflops(ops[i].macs, ops[i].ms * per);
        if (v > 0)
            snprintf(gf, sizeof gf, "%.2f", v);
        printf("  %-24s %6d %10.3f %6.1f%% %11.1f %8s %9llu\n", ops[i].op_type, ops[i].steps,
               ops[i].ms * per, total > 0 ? 100 * ops[i].ms / total : 0, (double)ops[i].draws * per,
               gf, (unsigned long long)ops[i].compiles);
    }
    tx_step_profile *sorted = malloc(sizeof *sorted * (size_t)p->n);
    if (!sorted)
        return;
    memcpy(sorted, p->steps, sizeof *sorted * (size_t)p->n);
    qsort(sorted, (size_t)p->n, sizeof *sorted, steps_by_ms_desc);
    int top = p->n < 10 ? p->n : 10;
    printf("  slowest steps:\n");
    for (int i = 0; i < top; i++) {
        const tx_step_profile *e = &sorted[i];
        char act[48] = "";
        if (e->activation != TX_OP_NONE)
            snprintf(act, sizeof act, " + %s", tx_op_name(e->activation));
        char sh[160] = "?";
        if (e->out_rank >= 0)
            shape_text(sh, sizeof sh, e->out_rank, e->out_shape);
        char gf[48] = "";
        double v = gflops(e->macs, e->ms * per);
        if (v > 0)
            snprintf(gf, sizeof gf, ", %.2f GFLOP/s", v);
        char comp[48] = "";
        if (e->compiles)
            snprintf(comp, sizeof comp, ", %llu compile%s in its time",
                     (unsigned long long)e->compiles, e->compiles == 1 ? "" : "s");
        printf("    %9.3f ms  %s%s \"%s\" -> %s on the %s, %.1f draws a run%s%s\n", e->ms * per,
               e->op_type, act, e->name, sh, tx_device_name(e->device), (double)e->draws * per, gf,
               comp);
    }
    free(sorted);
}

static void print_profile_json(const prof_result *p) {
    printf(", \"profile\": {\"runs\": %d, \"run_ms\": %.3f, \"steps\": [", p->runs, p->run_ms);
    for (int i = 0; i < p->n; i++) {
        const tx_step_profile *e = &p->steps[i];
        printf(i ? ", {\"op_type\": " : "{\"op_type\": ");
        tx_json_str(e->op_type);
        printf(", \"name\": ");
        tx_json_str(e->name);
        printf(", \"activation\": ");
        tx_json_str(e->activation != TX_OP_NONE ? tx_op_name(e->activation) : "");
        printf(", \"shape\": ");
        if (e->out_rank >= 0)
            print_shape_json(e->out_rank, e->out_shape);
        else
            printf("null");
        printf(", \"runs\": %d, \"ms\": %.4f, \"draws\": %llu, \"compiles\": %llu, \"macs\": %.0f, "
               "\"device\": \"%s\"}",
               e->runs, e->ms, (unsigned long long)e->draws, (unsigned long long)e->compiles,
               e->macs, tx_device_name(e->device));
    }
    printf("]}");
}

/* One file set through the session: feeds, the first and --repeat runs, the
 * report, --save. */
static int run_set(const run_opts *o, tx_ctx *ctx, tx_session *sess, double create_ms, int set,
                   uint64_t *rng_state) {
    char err[1024], fbuf[1024], save_dir[640];
    int rc = 0, n_out = 0;
    int n_in = tx_session_input_count(sess);
    const char *base = strrchr(o->model, '/') ? strrchr(o->model, '/') + 1 : o->model;
    tx_feed feeds[MAX_ARGS];
    tx_npy data[MAX_ARGS];
    tx_tensor outs[MAX_ARGS];
    const char *fetch[MAX_ARGS];
    tx_status st = TX_STATUS_OK;
    double t0;
    memset(data, 0, sizeof data);
    memset(feeds, 0, sizeof feeds);
    memset(outs, 0, sizeof outs);
    const char *source[MAX_ARGS] = {0};
    const char *save = o->save;
    if (save && o->n_sets > 1) {
        mkdir(save, 0777);
        snprintf(save_dir, sizeof save_dir, "%s/%d", save, set);
        save = save_dir;
    }
    tx_ticker_set(g_ticker, "texel run: %s: making the inputs", base);
    for (int i = 0; i < n_in; i++) {
        tx_value_info info;
        tx_session_input_info(sess, i, &info);
        const char *file = NULL;
        for (int k = 0; k < o->n_in; k++)
            if (strcmp(info.name, o->in_name[k]) == 0)
                file = set_file(o->in_file[k], set, fbuf, sizeof fbuf);
        int r;
        if (!file)
            r = random_input(o, &info, rng_state, &data[i], err, sizeof err);
        else if (has_suffix(file, ".npy"))
            r = tx_npy_read(file, &data[i], err, sizeof err);
        else
            r = load_image(o, file, &info, &data[i], err, sizeof err);
        source[i] = file ? strdup(file) : NULL;
        if (r) {
            rc = fail_run(o, TX_STATUS_INVALID_ARGUMENT, err);
            goto out;
        }
        /* fed on the device the session starts on, so no crossing is counted */
        tx_session_stats first;
        tx_session_stats_get(sess, &first);
        tx_tensor_desc d = {.rank = data[i].rank,
                            .dtype = data[i].dtype,
                            .data = data[i].data,
                            .device = first.device};
        memcpy(d.shape, data[i].shape, sizeof d.shape);
        feeds[i].name = info.name;
        st = tx_tensor_create(ctx, &d, &feeds[i].tensor);
        if (st) {
            feeds[i].tensor = (tx_tensor){0};
            rc = fail_run(o, st, tx_last_error(ctx));
            goto out;
        }
    }
    if (o->n_outs) {
        n_out = o->n_outs;
        memcpy(fetch, o->outs, sizeof(char *) * (size_t)n_out);
    } else {
        n_out = tx_session_output_count(sess);
        if (n_out > MAX_ARGS)
            n_out = MAX_ARGS;
        for (int i = 0; i < n_out; i++) {
            tx_value_info info;
            tx_session_output_info(sess, i, &info);
            fetch[i] = info.name;
        }
    }
    /* first run: compiles every program; then --repeat steady-state runs */
    double *ms = calloc((size_t)o->repeat + 1, sizeof *ms);
    double first_ms = 0;
    tx_device first_dev = TX_DEVICE_DEFAULT;
    double compile_ms = g_ticker && set == 0 ? compile_ahead(sess, feeds, n_in, base) : 0;
    tx_ticker_set(g_ticker, "texel run: %s: first run", base);
    for (int r = 0; r <= o->repeat && !st; r++) {
        if (r > 0)
            for (int i = 0; i < n_out; i++)
                tx_tensor_destroy(ctx, outs[i]);
        t0 = tx_host_ms();
        st = tx_session_run(sess, feeds, n_in, fetch, n_out, outs);
        if (!st) /* wait for the GPU so the time includes its work */
            tx_ctx_finish(ctx);
        double dt = tx_host_ms() - t0 + (r == 0 ? compile_ms : 0);
        if (r == 0)
            load_done();
        if (r == 0) {
            first_ms = dt;
            tx_session_stats rs;
            tx_session_stats_get(sess, &rs);
            first_dev = rs.device;
        } else
            ms[r - 1] = dt;
    }
    if (st) {
        free(ms);
        memset(outs, 0, sizeof outs);
        rc = fail_run(o, st, tx_last_error(ctx));
        goto out;
    }
    prof_result prof = {0};
    if (o->profile && !st)
        st = profile_runs(ctx, sess, feeds, n_in, fetch, n_out, outs, o->repeat ? o->repeat : 1,
                          &prof);
    if (st) {
        free(ms);
        free(prof.steps);
        for (int i = 0; i < n_out; i++) /* the profiled runs' last outputs, where kept */
            if (outs[i].id)
                tx_tensor_destroy(ctx, outs[i]);
        memset(outs, 0, sizeof outs);
        rc = fail_run(o, st, tx_last_error(ctx));
        goto out;
    }
    double steady = o->repeat ? tx_median(ms, o->repeat) : 0;
    double total_ms = first_ms; /* every run, the first included: what a caller waits in all */
    for (int r = 0; r < o->repeat; r++)
        total_ms += ms[r];
    free(ms);
    if (save)
        mkdir(save, 0777);
    if (o->json) {
        printf("{\"model\": ");
        tx_json_str(o->model);
        if (o->n_sets > 1)
            printf(", \"set\": %d", set);
        printf(", \"status\": \"TX_STATUS_OK\", \"inputs\": [");
        for (int i = 0; i < n_in; i++) {
            printf(i ? ", {\"name\": " : "{\"name\": ");
            tx_json_str(feeds[i].name);
            printf(", \"shape\": ");
            print_shape_json(data[i].rank, data[i].shape);
            printf(", \"source\": ");
            tx_json_str(source[i] ? source[i] : "random");
            printf("}");
        }
        printf("], \"outputs\": [");
    } else {
        if (o->n_sets > 1)
            printf("model %s, file set %d\n", o->model, set);
        else
            printf("model %s\n", o->model);
        for (int i = 0; i < n_in; i++) {
            char sh[160];
            shape_text(sh, sizeof sh, data[i].rank, data[i].shape);
            printf("input  %s %s (%s)\n", feeds[i].name, sh, source[i] ? source[i] : "random");
        }
    }
    for (int i = 0; i < n_out && !rc; i++) {
        int rank;
        int64_t shape[TX_MAX_RANK];
        tx_dtype dt;
        tx_tensor_shape(ctx, outs[i], &rank, shape, &dt);
        int64_t n = 1;
        for (int d = 0; d < rank; d++)
            n *= shape[d];
        float *v = malloc((size_t)(n ? n : 1) * 4);
        if (!v || tx_tensor_read(ctx, outs[i], v, (size_t)n * 4)) {
            free(v);
            rc = fail_run(o, TX_STATUS_OUT_OF_MEMORY, "cannot read an output back");
            break;
        }
        if (dt == TX_DTYPE_INT32)
            for (int64_t k = 0; k < n; k++)
                v[k] = (float)((int32_t *)v)[k];
        summary s;
        summarize(v, n, &s);
        if (save) {
            char fn[256], path[1024];
            sanitize(fn, sizeof fn, fetch[i]);
            snprintf(path, sizeof path, "%s/%s.npy", save, fn);
            if (tx_npy_write(path, "<f4", rank, shape, TX_DTYPE_FLOAT32, v))
                fprintf(stderr, "texel run: cannot write %s\n", path);
        }
        free(v);
        if (o->json) {
            printf(i ? ", {\"name\": " : "{\"name\": ");
            tx_json_str(fetch[i]);
            printf(", \"shape\": ");
            print_shape_json(rank, shape);
            printf(", \"dtype\": \"%s\", \"min\": %.9g, \"max\": %.9g, \"mean\": %.9g, "
                   "\"nan\": %lld, \"first\": [",
                   dt == TX_DTYPE_INT32 ? "int32" : "float32", s.min, s.max, s.mean,
                   (long long)s.nan);
            for (int k = 0; k < s.n_first; k++)
                printf(k ? ", %.9g" : "%.9g", isfinite(s.first[k]) ? (double)s.first[k] : 0.0);
            printf("]}");
        } else {
            char sh[160];
            shape_text(sh, sizeof sh, rank, shape);
            printf("output %s %s %s: min %.6g max %.6g mean %.6g%s; first:", fetch[i], sh,
                   dt == TX_DTYPE_INT32 ? "int32" : "float32", s.min, s.max, s.mean,
                   s.nan ? " (has NaN)" : "");
            for (int k = 0; k < s.n_first; k++)
                printf(" %.6g", (double)s.first[k]);
            printf("\n");
        }
    }
    if (save) /* the exact inputs, so a reference runtime can run the same */
        for (int i = 0; i < n_in; i++) {
            char fn[256], path[1024];
            sanitize(fn, sizeof fn, feeds[i].name);
            snprintf(path, sizeof path, "%s/input.%s.npy", save, fn);
            const char *descr = data[i].dtype == TX_DTYPE_INT32 ? "<i8" : "<f4";
            if (tx_npy_write(path, descr, data[i].rank, data[i].shape, data[i].dtype, data[i].data))
                fprintf(stderr, "texel run: cannot write %s\n", path);
        }
    tx_session_stats ss;
    tx_session_stats_get(sess, &ss);
    tx_stats cs;
    tx_ctx_stats(ctx, &cs);
    if (rc) {
    } else if (o->json) {
        printf("], \"create_ms\": %.3f, \"first_ms\": %.3f, \"steady_ms\": %.3f, "
               "\"total_ms\": %.3f, \"repeat\": %d, "
               "\"nodes\": %d, \"steps\": %d, \"folded\": %d, \"fused\": %d, "
               "\"weight_bytes\": %llu, \"host_bytes\": %llu, \"first_device\": \"%s\", "
               "\"device\": \"%s\", "
               "\"device_decided\": %s, \"runs_gpu\": %llu, \"runs_cpu\": %llu, "
               "\"readbacks\": %llu, \"readback_bytes\": %llu, \"device_reason\": ",
               create_ms, first_ms, steady, total_ms, o->repeat, ss.nodes, ss.steps, ss.folded,
               ss.fused, (unsigned long long)ss.weight_bytes, (unsigned long long)ss.host_bytes,
               tx_device_name(first_dev), tx_device_name(ss.device), ss.decided ? "true" : "false",
               (unsigned long long)ss.runs_gpu, (unsigned long long)ss.runs_cpu,
               (unsigned long long)ss.readbacks, (unsigned long long)ss.readback_bytes);
        tx_json_str(ss.reason);
        if (prof.steps)
            print_profile_json(&prof);
        printf(", ");
        tx_print_stats_json(&cs);
        printf(", ");
        tx_print_families_json(ctx);
        printf("}\n");
    } else {
        printf("session: %d nodes -> %d ops (%d folded at plan time, %d fused); weights %llu B "
               "(host %llu B); create %.1f ms\n",
               ss.nodes, ss.steps, ss.folded, ss.fused, (unsigned long long)ss.weight_bytes,
               (unsigned long long)ss.host_bytes, create_ms);
        printf("first run %.2f ms on the %s (compile + run)", first_ms, tx_device_name(first_dev));
        if (o->repeat)
            printf("; steady state median %.2f ms over %d runs; all %d runs %.1f ms", steady,
                   o->repeat, o->repeat + 1, total_ms);
        printf("\n");
        printf("device %s%s: %s (runs: %llu gpu, %llu cpu)\n", tx_device_name(ss.device),
               ss.decided ? "" : " (still measuring)", ss.reason, (unsigned long long)ss.runs_gpu,
               (unsigned long long)ss.runs_cpu);
        if (ss.readbacks)
            printf("read-backs for host paths (data-dependent ops, run-time shapes): %llu, "
                   "%llu B\n",
                   (unsigned long long)ss.readbacks, (unsigned long long)ss.readback_bytes);
        tx_print_stats_text(&cs);
        tx_print_families_text(ctx);
        if (prof.steps)
            print_profile_text(&prof, steady);
    }
    free(prof.steps);
out:
    load_done();
    for (int i = 0; i < n_out; i++)
        if (outs[i].id)
            tx_tensor_destroy(ctx, outs[i]);
    for (int i = 0; i < n_in; i++) {
        if (feeds[i].tensor.id)
            tx_tensor_destroy(ctx, feeds[i].tensor);
        tx_npy_free(&data[i]);
        free((char *)source[i]);
    }
    return rc;
}

int tx_cmd_run(int argc, char **argv) {
    run_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc < 0 ? tx_cli_help(tx_usage_run) : rc;
    if (o.save && !tx_mkdirs(o.save)) {
        fprintf(stderr, "texel run: cannot create --save directory %s: %s\n", o.save,
                strerror(errno));
        return 1;
    }
    const char *base = strrchr(o.model, '/') ? strrchr(o.model, '/') + 1 : o.model;
    g_ticker = tx_ticker_start(o.quiet, 1000);
    tx_ticker_set(g_ticker, "texel run: %s: reading", base);
    size_t len;
    void *bytes = tx_read_file(o.model, &len);
    if (!bytes) {
        load_done();
        fprintf(stderr, "texel run: cannot read %s: %s\n", o.model, strerror(errno));
        return 1;
    }
    tx_host *h;
    tx_ctx *ctx;
    /* the GL context at the first GPU use: a CPU run needs no display, and
     * auto's first run does not wait for it */
    if (o.device == TX_DEVICE_GPU || o.cd.float16_storage) {
        tx_ticker_set(g_ticker, "texel run: %s: opening a GL context", base);
        rc = tx_host_open(&o.cd, &h, &ctx);
    } else {
        rc = tx_host_open_later(&o.cd, &h, &ctx);
    }
    if (rc) {
        load_done();
        free(bytes);
        return rc;
    }
    tx_ticker_set(g_ticker, "texel run: %s: planning, uploading weights (%.1f MB)", base,
                  (double)len / 1e6);
    char err[1024];
    tx_session *sess = NULL;
    double t0 = tx_host_ms();
    tx_status st = tx_session_create(
        ctx, bytes, len, &(tx_session_desc){.no_fusion = o.no_fusion, .device = o.device}, &sess);
    double create_ms = tx_host_ms() - t0;
    free(bytes);
    if (st) {
        rc = fail_run(&o, st, tx_last_error(ctx));
        goto done;
    }
    int n_in = tx_session_input_count(sess);
    if (n_in > MAX_ARGS) {
        rc = fail_run(&o, TX_STATUS_UNSUPPORTED, "more than 32 inputs");
        goto done;
    }
    for (int k = 0; k < o.n_in; k++) {
        bool found = false;
        for (int i = 0; i < n_in; i++) {
            tx_value_info info;
            tx_session_input_info(sess, i, &info);
            found |= strcmp(info.name, o.in_name[k]) == 0;
        }
        if (!found) {
            snprintf(err, sizeof err, "the model has no input \"%s\"", o.in_name[k]);
            rc = fail_run(&o, TX_STATUS_INVALID_ARGUMENT, err);
            goto done;
        }
    }
    uint64_t rng = o.seed * 0x9E3779B97F4A7C15ull + 1;
    for (int set = 0; set < o.n_sets && !rc; set++)
        rc = run_set(&o, ctx, sess, create_ms, set, &rng);
done:
    load_done();
    for (int k = 0; k < o.n_in; k++)
        free((char *)o.in_name[k]);
    for (int k = 0; k < o.n_dims; k++)
        free((char *)o.dim_name[k]);
    tx_session_destroy(sess);
    tx_host_close(h, ctx);
    return rc;
}
