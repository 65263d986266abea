/* texel: the desktop CLI.
 *   texel info [--json]
 *   texel op NAME --shape AxB[,CxD[,N]] [--repeat N] [--specialize-after K]
 *            [--transpose-a] [--transpose-b] [--activation OP] [--lo V --hi V]
 *            [--seed S] [--max-texture-size N] [--json]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "glctx.h"

static int usage(void) {
    fprintf(stderr,
            "usage:\n"
            "  texel info [--json]\n"
            "  texel op NAME --shape AxB[,CxD[,N]] [--repeat N] [--specialize-after K]\n"
            "           [--transpose-a] [--transpose-b] [--bias] [--activation OP]\n"
            "           [--lo V] [--hi V] [--seed S] [--max-texture-size N] [--json]\n"
            "ops:");
    for (int i = 1; i < TX_OP_COUNT_; i++)
        fprintf(stderr, " %s", tx_op_name((tx_op)i));
    fprintf(stderr, "\n");
    return 2;
}

static void print_stats_json(const tx_stats *s) {
    printf("\"generic_compiles\": %llu, \"specialized_compiles\": %llu, "
           "\"specialized_ready\": %llu, \"compile_failures\": %llu, \"cache_hits\": %llu, "
           "\"generic_runs\": %llu, \"specialized_runs\": %llu, \"draws\": %llu, "
           "\"bytes_uploaded\": %llu, \"bytes_downloaded\": %llu, "
           "\"live_texture_bytes\": %llu, \"pooled_texture_bytes\": %llu, "
           "\"peak_texture_bytes\": %llu, \"compile_ms\": %.3f",
           (unsigned long long)s->generic_compiles, (unsigned long long)s->specialized_compiles,
           (unsigned long long)s->specialized_ready, (unsigned long long)s->compile_failures,
           (unsigned long long)s->cache_hits, (unsigned long long)s->generic_runs,
           (unsigned long long)s->specialized_runs, (unsigned long long)s->draws,
           (unsigned long long)s->bytes_uploaded, (unsigned long long)s->bytes_downloaded,
           (unsigned long long)s->live_texture_bytes,
           (unsigned long long)s->pooled_texture_bytes,
           (unsigned long long)s->peak_texture_bytes, s->compile_ms);
}

static void print_stats_text(const tx_stats *s) {
    printf("programs: %llu generic, %llu specialized (%llu ready, %llu failed); "
           "cache hits %llu; runs %llu generic / %llu specialized\n",
           (unsigned long long)s->generic_compiles, (unsigned long long)s->specialized_compiles,
           (unsigned long long)s->specialized_ready, (unsigned long long)s->compile_failures,
           (unsigned long long)s->cache_hits, (unsigned long long)s->generic_runs,
           (unsigned long long)s->specialized_runs);
    printf("draws %llu; uploaded %llu B, downloaded %llu B; textures live %llu B, pooled %llu "
           "B, peak %llu B; compile %.1f ms\n",
           (unsigned long long)s->draws, (unsigned long long)s->bytes_uploaded,
           (unsigned long long)s->bytes_downloaded, (unsigned long long)s->live_texture_bytes,
           (unsigned long long)s->pooled_texture_bytes,
           (unsigned long long)s->peak_texture_bytes, s->compile_ms);
}

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static int cmd_info(int argc, char **argv) {
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = true;
        else
            return usage();
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
        json_str(c.renderer);
        printf(", \"version\": ");
        json_str(c.version);
        printf(", \"glsl_version\": ");
        json_str(c.glsl_version);
        printf(", \"max_texture_size\": %d, \"max_draw_buffers\": %d, \"float32_render\": %s, "
               "\"float16_render\": %s, \"parallel_compile\": %s, \"specialize_after\": %d, "
               "\"float16_storage\": %s}\n",
               c.max_texture_size, c.max_draw_buffers, c.float32_render ? "true" : "false",
               c.float16_render ? "true" : "false", c.parallel_compile ? "true" : "false",
               tx_ctx_specialize_after(ctx), c.float16_storage ? "true" : "false");
    } else {
        printf("renderer:          %s\nGL version:        %s\nGLSL version:      %s\n",
               c.renderer, c.version, c.glsl_version);
        printf("max texture size:  %d\nmax draw buffers:  %d\n", c.max_texture_size,
               c.max_draw_buffers);
        printf("float32 render:    %s (probed by drawing and reading back)\n",
               c.float32_render ? "yes" : "no");
        printf("float16 render:    %s\n", c.float16_render ? "yes" : "no");
        if (c.float16_storage)
            printf("storage:           float16 (results carry ~3 significant digits)\n");
        printf("parallel compile:  %s\n", c.parallel_compile ? "yes (KHR_parallel_shader_compile)"
                                                             : "no");
        int k = tx_ctx_specialize_after(ctx);
        if (k < 0)
            printf("specialize after:  never\n");
        else
            printf("specialize after:  %d identical calls\n", k);
    }
    tx_host_close(h, ctx);
    return 0;
}

static int cmd_op(int argc, char **argv) {
    if (argc < 1)
        return usage();
    tx_check_desc d = {.seed = 42};
    d.op = tx_op_from_name(argv[0]);
    if (d.op == TX_OP_NONE) {
        fprintf(stderr, "texel op: unknown op \"%s\"\n", argv[0]);
        return usage();
    }
    const char *shapes = NULL;
    bool json = false, bias = false;
    int repeat = 5;
    tx_ctx_desc cd = {0};
    d.attrs.lo = 0;
    d.attrs.hi = 6;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0)
            json = true;
        else if (strcmp(a, "--transpose-a") == 0)
            d.attrs.matmul.transpose_a = true;
        else if (strcmp(a, "--transpose-b") == 0)
            d.attrs.matmul.transpose_b = true;
        else if (strcmp(a, "--bias") == 0)
            bias = true;
        else if (!v)
            return usage();
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
        else if (strcmp(a, "--activation") == 0) {
            d.attrs.matmul.activation = tx_op_from_name(v);
            if (d.attrs.matmul.activation == TX_OP_NONE) {
                fprintf(stderr, "texel op: unknown activation \"%s\"\n", v);
                return 2;
            }
            i++;
        } else if (strcmp(a, "--specialize-after") == 0) {
            int k = atoi(v);
            cd.specialize_after = k == 0 ? TX_SPECIALIZE_ALWAYS
                                         : (k < 0 ? TX_SPECIALIZE_NEVER : k);
            i++;
        } else
            return usage();
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
        if (ns == 3 || (d.rank[ns] = tx_parse_shape(tok, d.shape[ns])) < 0) {
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
    if (bias && d.op == TX_OP_MATMUL && ns == 2) {
        int rb = d.rank[1];
        int64_t nn = rb == 1 ? 1 : d.shape[1][d.attrs.matmul.transpose_b ? rb - 2 : rb - 1];
        d.rank[2] = 1;
        d.shape[2][0] = nn;
        ns = 3;
    }
    if (ns != arity && !(d.op == TX_OP_MATMUL && ns == 3)) {
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
        json_str(shapes);
        printf(", \"status\": \"%s\", ", tx_status_name(r.status));
        if (r.status) {
            printf("\"error\": ");
            json_str(r.error);
            printf(", ");
        }
        printf("\"specialize_after\": %d, \"repeat\": %d, \"first_ms\": %.3f, \"median_ms\": "
               "%.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"call_ms\": [",
               k, repeat, r.first_ms, med, mn, mx);
        for (int i = 0; i < repeat; i++)
            printf(i ? ", %.3f" : "%.3f", r.call_ms[i]);
        printf("], \"gflops\": %.3f, \"max_abs_err\": %.3g, \"mismatches\": %lld, ", gflops,
               r.max_abs_err, (long long)r.bad);
        print_stats_json(&st);
        printf("}\n");
    } else {
        if (r.status) {
            printf("%s %s: %s: %s\n", tx_op_name(d.op), shapes, tx_status_name(r.status),
                   r.error);
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
        print_stats_text(&st);
    }
    free(r.call_ms);
    tx_host_close(h, ctx);
    return r.status ? 1 : (r.bad ? 3 : 0);
}

int main(int argc, char **argv) {
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 2, argv + 2);
    if (strcmp(argv[1], "op") == 0)
        return cmd_op(argc - 2, argv + 2);
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage();
        return 0;
    }
    fprintf(stderr, "texel: unknown command \"%s\"\n", argv[1]);
    return usage();
}
