/* texel: the desktop CLI.
 *   texel info [--json]
 *   texel op NAME --shape AxB[,CxD[,N]] [--repeat N] [--specialize-after K]
 *            [--transpose-a] [--transpose-b] [--activation OP] [--lo V --hi V]
 *            [--seed S] [--max-texture-size N] [--json]
 *            conv, conv_transpose, pools: [--stride S] [--pad P] [--dilation D]
 *            [--group G] [--auto-pad same_upper|same_lower|valid] [--kernel K]
 *            [--output-padding P] [--output-shape S] [--ceil-mode] [--count-include-pad]
 *            [--x-affine SCALE,SHIFT]
 *            (S, P, D, K: one value for every spatial dim, or AxB; pads: begins then ends)
 *            [--axes A,B] [--drop-dims] [--noop-empty-axes] [--select-last]
 *            [--axis A] [--coerce-2d] [--epsilon E] [--alpha V] [--beta V]
 *            [--to float32|int32] [--bool]
 *   texel bench [--cases a,b] [--smoke] [--runs N] [--json FILE] [--device gpu|cpu|all]
 *               [--matmul-tm 1|4|8]
 *   texel run MODEL.onnx [--input NAME=FILE]... [--output NAME]... [--json] [--save DIR]
 *             [--device auto|gpu|cpu] [--precision f32|f16]
 *   texel conformance [DIR]... [--filter S] [--must-pass FILE] [--json] [--device D]
 *   texel --version
 * `texel CMD --help` prints CMD's usage; exit statuses in host/cli.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "cmds.h"
#include "glctx.h"
#include "report.h"

static const char usage_info[] = "usage: texel info [--json]\n";
static const char usage_op[] =
    "usage: texel op NAME --shape AxB[,CxD[,N]] [--repeat N] [--specialize-after K]\n"
    "           [--transpose-a] [--transpose-b] [--bias] [--activation OP]\n"
    "           [--lo V] [--hi V] [--seed S] [--max-texture-size N] [--json]\n"
    "  conv, conv_transpose, pools: [--stride S] [--pad P] [--dilation D] [--group G]\n"
    "           [--auto-pad same_upper|same_lower|valid] [--kernel K] [--output-padding P]\n"
    "           [--output-shape S] [--ceil-mode] [--count-include-pad]\n"
    "           [--x-affine SCALE,SHIFT] (conv: x read as x * SCALE + SHIFT inside x)\n"
    "           (one value for every spatial dim, or AxB; --pad 0x1x2x0: begins, ends)\n"
    "           reductions: [--axes A,B] [--drop-dims] [--noop-empty-axes]\n"
    "           [--select-last]; softmax, layer_norm: [--axis A] [--coerce-2d]\n"
    "           [--epsilon E]; activations: [--alpha V] [--beta V];\n"
    "           cast: [--to float32|int32] [--bool]\n";

static void print_ops(FILE *f) {
    fprintf(f, "ops:");
    for (int i = 1; i < TX_OP_COUNT_; i++)
        fprintf(f, " %s", tx_op_name((tx_op)i));
    fprintf(f, "\n");
}

/* Every command's usage, the op names and the exit statuses. */
static int usage_all(FILE *f) {
    fprintf(f,
            "texel %s: tensors on GL ES 3.0 fragment shaders and a SIMD CPU device\n%s%s%s%s%s%s",
            tx_version(), usage_info, usage_op, tx_usage_bench, tx_usage_run, tx_usage_conformance,
            tx_usage_train);
    fprintf(f, "  texel --version\n"
               "exit status: 0 ok, 1 error (conformance: a test failed), 2 usage, 3 texel op's\n"
               "  results differ from the reference, 4 the model needs what texel lacks (run),\n"
               "  77 no GL context\n");
    print_ops(f);
    return 2;
}

static int usage(void) {
    return usage_all(stderr);
}

static int cmd_info(int argc, char **argv) {
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else if (tx_cli_is_help(argv[i]))
            return tx_cli_help(usage_info);
        else
            return tx_cli_unknown("info", usage_info, argv[i]);
    }
    tx_host *h;
    tx_ctx *ctx;
    int rc = tx_host_open(NULL, &h, &ctx);
    if (rc)
        return rc;
    tx_caps c;
    tx_ctx_caps(ctx, &c);
    if (json) {
        printf("{\"renderer\": ");
        tx_json_str(c.renderer);
        printf(", \"version\": ");
        tx_json_str(c.version);
        printf(", \"glsl_version\": ");
        tx_json_str(c.glsl_version);
        printf(", \"max_texture_size\": %d, \"max_draw_buffers\": %d, \"float32_render\": %s, "
               "\"float16_render\": %s, \"parallel_compile\": %s, \"specialize_after\": %d, "
               "\"float16_storage\": %s, \"emulated_division\": %s}\n",
               c.max_texture_size, c.max_draw_buffers, c.float32_render ? "true" : "false",
               c.float16_render ? "true" : "false", c.parallel_compile ? "true" : "false",
               tx_ctx_specialize_after(ctx), c.float16_storage ? "true" : "false",
               c.emulated_division ? "true" : "false");
    } else {
        printf("renderer:          %s\nGL version:        %s\nGLSL version:      %s\n", c.renderer,
               c.version, c.glsl_version);
        printf("max texture size:  %d\nmax draw buffers:  %d\n", c.max_texture_size,
               c.max_draw_buffers);
        printf("float32 render:    %s (probed by drawing and reading back)\n",
               c.float32_render ? "yes" : "no");
        printf("float16 render:    %s\n", c.float16_render ? "yes" : "no");
        if (c.float16_storage)
            printf("storage:           float16 (results carry ~3 significant digits)\n");
        printf("parallel compile:  %s\n",
               c.parallel_compile ? "yes (KHR_parallel_shader_compile)" : "no");
        if (!c.float16_storage)
            printf("division:          %s\n",
                   c.emulated_division
                       ? "emulated in integer steps (the driver's is not IEEE 754, or asked for)"
                       : "IEEE 754 (probed)");
        int k = tx_ctx_specialize_after(ctx);
        if (k < 0)
            printf("specialize after:  never\n");
        else
            printf("specialize after:  %d identical calls\n", k);
    }
    tx_host_close(h, ctx);
    return 0;
}

/* A spatial attribute list "3" or "3x2" (pads: up to 4 values). */
typedef struct spatial_arg {
    int n;
    int v[4];
} spatial_arg;

static bool parse_spatial(const char *s, spatial_arg *a) {
    int64_t shape[TX_MAX_RANK];
    int n = tx_parse_shape(s, shape);
    if (n < 1 || n > 4)
        return false;
    a->n = n;
    for (int i = 0; i < n; i++)
        a->v[i] = (int)shape[i];
    return true;
}

/* Fills `dst` (nsp entries, or 2 * nsp for pads) from the list; one value
 * applies to every entry. */
static bool spread(const spatial_arg *a, int want, int *dst) {
    if (!a->n)
        return true;
    if (a->n != 1 && a->n != want)
        return false;
    for (int i = 0; i < want; i++)
        dst[i] = a->v[a->n == 1 ? 0 : i];
    return true;
}

/* ONNX's defaults of the alpha / beta of tx_activation's ops (else unchanged). */
static void act_defaults(tx_op op, float *alpha, float *beta) {
    switch (op) {
    case TX_OP_HARD_SIGMOID: *alpha = 0.2f, *beta = 0.5f; break;
    case TX_OP_LEAKY_RELU: *alpha = 0.01f; break;
    case TX_OP_ELU: *alpha = 1.0f; break;
    case TX_OP_SELU: *alpha = 1.67326319f, *beta = 1.05070102f; break;
    case TX_OP_CELU:
    case TX_OP_THRESHOLDED_RELU: *alpha = 1.0f; break;
    case TX_OP_SHRINK: *alpha = 0.5f; break;
    case TX_OP_AFFINE:
    case TX_OP_SWISH: *alpha = 1.0f; break;
    default: break;
    }
}

static int cmd_op(int argc, char **argv) {
    if (argc < 1)
        return tx_cli_usage_error("op", usage_op, "no op given");
    for (int i = 0; i < argc; i++)
        if (tx_cli_is_help(argv[i])) {
            tx_cli_help(usage_op);
            print_ops(stdout);
            return 0;
        }
    tx_check_desc d = {.seed = 42};
    d.op = tx_op_from_name(argv[0]);
    if (d.op == TX_OP_NONE) {
        fprintf(stderr, "texel op: unknown op \"%s\"\n", argv[0]);
        print_ops(stderr);
        return 2;
    }
    static const char *const value_opts[] = {"--shape",        "--repeat",
                                             "--seed",         "--lo",
                                             "--hi",           "--max-texture-size",
                                             "--group",        "--stride",
                                             "--pad",          "--dilation",
                                             "--kernel",       "--output-padding",
                                             "--output-shape", "--auto-pad",
                                             "--axis",         "--epsilon",
                                             "--alpha",        "--beta",
                                             "--to",           "--axes",
                                             "--activation",   "--specialize-after",
                                             "--x-affine",     NULL};
    const char *shapes = NULL;
    bool json = false, bias = false;
    int repeat = 5;
    tx_ctx_desc cd = {0};
    d.attrs.lo = 0;
    d.attrs.softmax.axis = d.attrs.norm.axis = -1; /* ONNX opset >= 13 defaults */
    act_defaults(d.op, &d.attrs.alpha, &d.attrs.beta);
    bool alpha_set = false, beta_set = false;
    d.attrs.hi = 6;
    spatial_arg stride = {0}, pad = {0}, dil = {0}, kernel = {0}, outpad = {0}, outshape = {0};
    int group = 0;
    tx_auto_pad auto_pad = TX_AUTO_PAD_NOTSET;
    bool ceil_mode = false, include_pad = false;
    bool x_affine = false;
    float x_ab[2] = {1, 0};
    /* the flags without a value: each sets its bool */
    const struct {
        const char *name;
        bool *on;
    } switches[] = {
        {"--json", &json},
        {"--transpose-a", &d.attrs.matmul.transpose_a},
        {"--transpose-b", &d.attrs.matmul.transpose_b},
        {"--bias", &bias},
        {"--ceil-mode", &ceil_mode},
        {"--count-include-pad", &include_pad},
        {"--drop-dims", &d.attrs.reduce.drop_dims},
        {"--noop-empty-axes", &d.attrs.reduce.noop_with_empty_axes},
        {"--select-last", &d.attrs.reduce.select_last_index},
        {"--coerce-2d", &d.attrs.softmax.coerce_2d},
        {"--bool", &d.attrs.cast_bool},
    };
    const size_t n_switches = sizeof switches / sizeof switches[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t sw = 0;
        while (sw < n_switches && strcmp(a, switches[sw].name) != 0)
            sw++;
        if (sw < n_switches)
            *switches[sw].on = true;
        else if (!tx_cli_in(a, value_opts))
            return tx_cli_unknown("op", usage_op, a);
        else if (!v)
            return tx_cli_no_value("op", usage_op, a);
        else if (strcmp(a, "--shape") == 0)
            shapes = v, i++;
        else if (strcmp(a, "--repeat") == 0)
            repeat = atoi(v), i++;
        else if (strcmp(a, "--seed") == 0)
            d.seed = strtoull(v, NULL, 10), i++;
        else if (strcmp(a, "--lo") == 0)
            d.attrs.lo = strtof(v, NULL), i++;
        else if (strcmp(a, "--hi") == 0)
            d.attrs.hi = strtof(v, NULL), i++;
        else if (strcmp(a, "--max-texture-size") == 0)
            cd.max_texture_size = atoi(v), i++;
        else if (strcmp(a, "--group") == 0)
            group = atoi(v), i++;
        else if (strcmp(a, "--stride") == 0 || strcmp(a, "--pad") == 0 ||
                 strcmp(a, "--dilation") == 0 || strcmp(a, "--kernel") == 0 ||
                 strcmp(a, "--output-padding") == 0 || strcmp(a, "--output-shape") == 0) {
            spatial_arg *dst = a[2] == 's' && a[3] == 't'           ? &stride
                               : a[2] == 'p'                        ? &pad
                               : a[2] == 'd'                        ? &dil
                               : a[2] == 'k'                        ? &kernel
                               : strcmp(a, "--output-padding") == 0 ? &outpad
                                                                    : &outshape;
            if (!parse_spatial(v, dst)) {
                fprintf(stderr, "texel op: bad %s \"%s\" (want e.g. 2 or 2x2)\n", a, v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--auto-pad") == 0) {
            static const char *const names[] = {"notset", "same_upper", "same_lower", "valid"};
            int k = 0;
            while (k < 4 && strcmp(v, names[k]) != 0)
                k++;
            if (k == 4) {
                fprintf(stderr, "texel op: unknown --auto-pad \"%s\"\n", v);
                return 2;
            }
            auto_pad = (tx_auto_pad)k;
            i++;
        } else if (strcmp(a, "--axis") == 0)
            d.attrs.softmax.axis = d.attrs.norm.axis = atoi(v), i++;
        else if (strcmp(a, "--epsilon") == 0)
            d.attrs.norm.epsilon = strtof(v, NULL), i++;
        else if (strcmp(a, "--alpha") == 0)
            d.attrs.alpha = strtof(v, NULL), alpha_set = true, i++;
        else if (strcmp(a, "--beta") == 0)
            d.attrs.beta = strtof(v, NULL), beta_set = true, i++;
        else if (strcmp(a, "--to") == 0) {
            if (strcmp(v, "float32") && strcmp(v, "int32")) {
                fprintf(stderr, "texel op: --to takes float32 or int32\n");
                return 2;
            }
            d.attrs.cast_to = strcmp(v, "int32") == 0 ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
            i++;
        } else if (strcmp(a, "--axes") == 0) {
            char *p = (char *)v, *end;
            int n = 0;
            while (*p && n < TX_MAX_RANK) {
                d.attrs.reduce.axes[n++] = (int)strtol(p, &end, 10);
                if (end == p || (*end && *end != ','))
                    break;
                p = *end ? end + 1 : end;
            }
            if (*p) {
                fprintf(stderr, "texel op: bad --axes \"%s\" (want e.g. 0,-1)\n", v);
                return 2;
            }
            d.attrs.reduce.n_axes = n;
            i++;
        } else if (strcmp(a, "--activation") == 0) {
            d.attrs.matmul.activation = tx_op_from_name(v);
            if (d.attrs.matmul.activation == TX_OP_NONE) {
                fprintf(stderr, "texel op: unknown activation \"%s\"\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--x-affine") == 0) {
            char *end;
            x_ab[0] = strtof(v, &end);
            bool ok = end != v && *end == ',';
            if (ok) {
                const char *b = end + 1;
                x_ab[1] = strtof(b, &end);
                ok = end != b && !*end;
            }
            if (!ok) {
                fprintf(stderr, "texel op: bad --x-affine \"%s\" (want SCALE,SHIFT, e.g. 0.5,1)\n",
                        v);
                return 2;
            }
            x_affine = true;
            i++;
        } else if (strcmp(a, "--specialize-after") == 0) {
            int k = atoi(v);
            cd.specialize_after = k == 0 ? TX_SPECIALIZE_ALWAYS : (k < 0 ? TX_SPECIALIZE_NEVER : k);
            i++;
        } else
            return tx_cli_unknown("op", usage_op, a);
    }
    if (!shapes) {
        fprintf(stderr, "texel op: --shape is required\n");
        return 2;
    }
    if (repeat < 0)
        repeat = 0;
    /* shapes: comma separated */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", shapes);
    int ns = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (ns == TX_CHECK_MAX_INPUTS || (d.rank[ns] = tx_parse_shape(tok, d.shape[ns])) < 0) {
            fprintf(stderr, "texel op: bad shape \"%s\" (want e.g. 256x256)\n", tok);
            return 2;
        }
        ns++;
    }
    int arity = tx_op_arity(d.op);
    if (ns == 1 && arity == 2) {
        d.rank[1] = d.rank[0];
        memcpy(d.shape[1], d.shape[0], sizeof d.shape[0]);
        if (d.op == TX_OP_MATMUL && d.rank[0] >= 2) { /* a square-compatible b */
            d.shape[1][d.rank[0] - 2] = d.shape[0][d.rank[0] - 1];
            d.shape[1][d.rank[0] - 1] = d.shape[0][d.rank[0] - 2];
        }
        ns = 2;
    }
    bool conv = d.op == TX_OP_CONV || d.op == TX_OP_CONV_TRANSPOSE;
    /* a fused activation with alpha / beta (--activation leaky_relu): its
     * ONNX defaults where --alpha / --beta do not say */
    float act_ab[2] = {0, 0};
    act_defaults(d.attrs.matmul.activation, &act_ab[0], &act_ab[1]);
    if (alpha_set)
        act_ab[0] = d.attrs.alpha;
    if (beta_set)
        act_ab[1] = d.attrs.beta;
    if (d.op == TX_OP_MATMUL) {
        d.attrs.matmul.alpha = act_ab[0];
        d.attrs.matmul.beta = act_ab[1];
    }
    bool pool = d.op == TX_OP_MAXPOOL || d.op == TX_OP_AVERAGEPOOL || d.op == TX_OP_GLOBALMAXPOOL ||
                d.op == TX_OP_GLOBALAVERAGEPOOL;
    if (conv || pool) {
        int nsp = d.rank[0] > 2 ? d.rank[0] - 2 : 1;
        tx_conv_desc *c = &d.attrs.conv;
        tx_pool_desc *p = &d.attrs.pool;
        bool ok = spread(&stride, nsp, conv ? c->strides : p->strides) &&
                  spread(&dil, nsp, conv ? c->dilations : p->dilations) &&
                  spread(&pad, 2 * nsp, conv ? c->pads : p->pads) &&
                  spread(&kernel, nsp, p->kernel_shape) &&
                  spread(&outpad, nsp, c->output_padding) &&
                  spread(&outshape, nsp, c->output_shape);
        if (!ok) {
            fprintf(stderr, "texel op: spatial attributes need 1 or %d values (pads: 1 or %d)\n",
                    nsp, 2 * nsp);
            return 2;
        }
        if (conv) {
            c->group = group;
            c->auto_pad = auto_pad;
            c->activation = d.attrs.matmul.activation;
            c->lo = d.attrs.lo;
            c->hi = d.attrs.hi;
            c->alpha = act_ab[0];
            c->beta = act_ab[1];
            c->x_affine = x_affine;
            c->x_scale = x_ab[0];
            c->x_shift = x_ab[1];
            d.attrs.matmul.activation = TX_OP_NONE;
            if (bias && ns == 2) {
                d.rank[2] = 1;
                d.shape[2][0] =
                    d.op == TX_OP_CONV ? d.shape[1][0] : d.shape[1][1] * (group ? group : 1);
                ns = 3;
            }
        } else {
            p->auto_pad = auto_pad;
            p->ceil_mode = ceil_mode;
            p->count_include_pad = include_pad;
        }
    }
    if (bias && d.op == TX_OP_MATMUL && ns == 2) {
        int rb = d.rank[1];
        int64_t nn = rb == 1 ? 1 : d.shape[1][d.attrs.matmul.transpose_b ? rb - 2 : rb - 1];
        d.rank[2] = 1;
        d.shape[2][0] = nn;
        ns = 3;
    }
    if (ns != arity && !(bias && ns == 3) && !(d.op == TX_OP_MATMUL && ns == 3) &&
        !(d.op == TX_OP_LAYER_NORM && ns == 2) && !(arity == 0 && ns >= 1)) {
        fprintf(stderr, "texel op: %s takes %d input shape(s), got %d\n", tx_op_name(d.op), arity,
                ns);
        return 2;
    }
    d.n_inputs = ns;
    d.repeat = repeat;

    tx_host *h;
    tx_ctx *ctx;
    int rc = tx_host_open(&cd, &h, &ctx);
    if (rc)
        return rc;
    tx_check_result r;
    tx_check_run(ctx, &d, &r);
    if (!r.call_ms) /* the op failed before the timed calls */
        repeat = 0;
    tx_stats st;
    tx_ctx_stats(ctx, &st);
    double med = tx_median(r.call_ms, repeat);
    double mn = 0, mx = 0;
    for (int i = 0; i < repeat; i++) {
        if (i == 0 || r.call_ms[i] < mn)
            mn = r.call_ms[i];
        if (i == 0 || r.call_ms[i] > mx)
            mx = r.call_ms[i];
    }
    double gflops = (r.flops > 0 && med > 0) ? r.flops / (med * 1e6) : 0;
    int k = tx_ctx_specialize_after(ctx);
    if (json) {
        printf("{\"op\": \"%s\", \"shapes\": ", tx_op_name(d.op));
        tx_json_str(shapes);
        printf(", \"status\": \"%s\", ", tx_status_name(r.status));
        if (r.status) {
            printf("\"error\": ");
            tx_json_str(r.error);
            printf(", ");
        }
        printf("\"specialize_after\": %d, \"repeat\": %d, \"first_ms\": %.3f, \"median_ms\": "
               "%.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"call_ms\": [",
               k, repeat, r.first_ms, med, mn, mx);
        for (int i = 0; i < repeat; i++)
            printf(i ? ", %.3f" : "%.3f", r.call_ms[i]);
        /* %.4g: a slow run (a sanitizer build, a loaded machine) still shows
         * a small rate as nonzero rather than 0.000 */
        printf("], \"gflops\": %.4g, \"max_abs_err\": %.3g, \"mismatches\": %lld, ", gflops,
               r.max_abs_err, (long long)r.bad);
        tx_print_stats_json(&st);
        printf("}\n");
    } else {
        if (r.status) {
            printf("%s %s: %s: %s\n", tx_op_name(d.op), shapes, tx_status_name(r.status), r.error);
        } else {
            char os[160] = "[";
            for (int i = 0; i < r.out_rank; i++)
                snprintf(os + strlen(os), sizeof os - strlen(os), i ? ", %lld" : "%lld",
                         (long long)r.out_shape[i]);
            strncat(os, "]", sizeof os - strlen(os) - 1);
            printf("%s %s -> %s\n", tx_op_name(d.op), shapes, os);
            printf("first call %.2f ms (compile + run + download)\n", r.first_ms);
            if (repeat)
                printf("per call (run + download) median %.3f ms, min %.3f, max %.3f over %d\n",
                       med, mn, mx, repeat);
            if (gflops > 0)
                printf("%.2f GFLOP/s at the median\n", gflops);
            printf("max abs error vs reference %.3g; %lld element(s) out of tolerance\n",
                   r.max_abs_err, (long long)r.bad);
            if (r.bad)
                printf("first mismatch at %lld: got %.9g, want %.9g\n", (long long)r.first_bad,
                       (double)r.first_bad_got, (double)r.first_bad_want);
        }
        if (k < 0)
            printf("specialize after: never\n");
        else
            printf("specialize after: %d\n", k);
        tx_print_stats_text(&st);
    }
    free(r.call_ms);
    tx_host_close(h, ctx);
    return r.status ? 1 : (r.bad ? 3 : 0);
}

/* The subcommands: texel NAME ARGS... runs fn(ARGS). */
static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
} k_cmds[] = {
    {"info", cmd_info},
    {"op", cmd_op},
    {"bench", tx_cmd_bench},
    {"run", tx_cmd_run},
    {"conformance", tx_cmd_conformance},
    {"train", tx_cmd_train},
};

int main(int argc, char **argv) {
    if (argc < 2)
        return usage();
    for (size_t i = 0; i < sizeof k_cmds / sizeof k_cmds[0]; i++)
        if (strcmp(argv[1], k_cmds[i].name) == 0)
            return k_cmds[i].fn(argc - 2, argv + 2);
    if (tx_cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage_all(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("texel %s\n", tx_version());
        return 0;
    }
    fprintf(stderr, "texel: unknown command \"%s\"\n", argv[1]);
    return usage();
}
