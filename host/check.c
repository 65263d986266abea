#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glctx.h"

int tx_parse_shape(const char *s, int64_t shape[TX_MAX_RANK]) {
    int rank = 0;
    if (!s || !*s)
        return -1;
    if (strcmp(s, "scalar") == 0)
        return 0;
    const char *p = s;
    while (*p) {
        if (rank == TX_MAX_RANK)
            return -1;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0)
            return -1;
        shape[rank++] = v;
        p = end;
        if (*p == 'x' || *p == 'X')
            p++;
        else if (*p)
            return -1;
    }
    return rank;
}

static uint64_t rng_next(uint64_t *s) {
    /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tx_median(const double *v, int n) {
    if (n <= 0 || !v)
        return 0;
    double *c = malloc((size_t)n * sizeof *c);
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static int64_t numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

/* Terms summed per output element of a conv (C/group·kH·kW); 1 for others. */
static int64_t conv_terms(const tx_check_desc *d) {
    if ((d->op != TX_OP_CONV && d->op != TX_OP_CONV_TRANSPOSE) || d->n_inputs < 2 || d->rank[1] < 3)
        return 1;
    int64_t k = numel_of(d->rank[1] - 2, d->shape[1] + 2);
    int64_t groups = d->attrs.conv.group > 0 ? d->attrs.conv.group : 1;
    return k * (d->op == TX_OP_CONV ? d->shape[1][1] : d->shape[1][0] / groups);
}

/* Reads tensor t as floats (int32 tensors are converted). */
static tx_status read_floats(tx_ctx *ctx, tx_tensor t, float *dst, int64_t n) {
    tx_dtype dt;
    tx_tensor_shape(ctx, t, NULL, NULL, &dt);
    if (dt != TX_DTYPE_INT32)
        return tx_tensor_read(ctx, t, dst, (size_t)n * sizeof(float));
    int32_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    tx_status st = tx_tensor_read(ctx, t, tmp, (size_t)n * sizeof *tmp);
    for (int64_t i = 0; !st && i < n; i++)
        dst[i] = (float)tmp[i];
    free(tmp);
    return st;
}

/* Compares one output with its reference; adds to r's counts. */
static void compare(const float *got, int64_t base, const tx_ref_tensor *want, double atol,
                    double rtol, tx_check_result *r) {
    int64_t wn = tx_ref_numel(want);
    for (int64_t i = 0; i < wn; i++) {
        double g = got[i], w = want->data[i];
        bool ok;
        if (isnan(w) || isnan(g))
            ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g))
            ok = g == w;
        else {
            double e = fabs(g - w);
            if (e > r->max_abs_err)
                r->max_abs_err = e;
            ok = e <= atol + rtol * fabs(w);
        }
        if (!ok) {
            if (r->first_bad < 0) {
                r->first_bad = base + i;
                r->first_bad_got = (float)g;
                r->first_bad_want = (float)w;
            }
            r->bad++;
        }
    }
}

void tx_check_run(tx_ctx *ctx, const tx_check_desc *d, tx_check_result *r) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    uint64_t seed = d->seed ? d->seed : 1;
    tx_ref_tensor ins[TX_CHECK_MAX_INPUTS];
    tx_tensor ts[TX_CHECK_MAX_INPUTS] = {{0}};
    int n = d->n_inputs < TX_CHECK_MAX_INPUTS ? d->n_inputs : TX_CHECK_MAX_INPUTS;
    for (int i = 0; i < n; i++) {
        ins[i] = (tx_ref_tensor){.rank = d->rank[i], .dtype = TX_DTYPE_FLOAT32};
        memcpy(ins[i].shape, d->shape[i], sizeof ins[i].shape);
    }
    for (int i = 0; i < n; i++) {
        int64_t ne = numel_of(d->rank[i], d->shape[i]);
        ins[i].data = malloc((size_t)(ne ? ne : 1) * sizeof(float));
        float lo, hi;
        tx_dtype dt = tx_ref_input_dtype(d->op, i, ins, n, &d->attrs, &lo, &hi);
        if (d->dtype[i] == TX_DTYPE_INT32)
            dt = TX_DTYPE_INT32;
        ins[i].dtype = dt;
        double step = tx_ref_input_step(d->op, i);
        for (int64_t j = 0; j < ne; j++) {
            double u = (double)(rng_next(&seed) >> 11) / 9007199254740992.0;
            double v = lo + (hi - lo) * u;
            ins[i].data[j] = dt == TX_DTYPE_INT32 ? (float)floor(lo + (hi - lo + 1) * u)
                                                  : (float)(step > 0 ? floor(v / step) * step : v);
        }
    }
    for (int i = 0; i < n && !r->status; i++) {
        int64_t ne = numel_of(ins[i].rank, ins[i].shape);
        int32_t *iv = NULL;
        if (ins[i].dtype == TX_DTYPE_INT32) {
            iv = malloc((size_t)(ne ? ne : 1) * sizeof *iv);
            for (int64_t j = 0; j < ne; j++)
                iv[j] = (int32_t)ins[i].data[j];
        }
        tx_tensor_desc td = {.rank = ins[i].rank,
                             .dtype = ins[i].dtype,
                             .data = iv ? (const void *)iv : ins[i].data};
        memcpy(td.shape, ins[i].shape, sizeof td.shape);
        r->status = tx_tensor_create(ctx, &td, &ts[i]);
        free(iv);
    }
    int n_out = tx_op_outputs(d->op, &d->attrs);
    r->n_outputs = n_out;
    tx_tensor *ys = calloc((size_t)n_out, sizeof *ys);
    int64_t *out_numel = calloc((size_t)n_out, sizeof *out_numel);
    tx_ref_tensor *shapes = calloc((size_t)n_out, sizeof *shapes); /* outputs' shapes only */
    float *got = NULL;
    if (!r->status) {
        tx_ctx_finish(ctx);
        double t0 = tx_host_ms();
        r->status = tx_op_run_multi(ctx, d->op, ts, n, &d->attrs, ys, n_out);
        if (!r->status) {
            tx_tensor_shape(ctx, ys[0], &r->out_rank, r->out_shape, &r->out_dtype);
            for (int j = 0; j < n_out; j++) {
                tx_tensor_shape(ctx, ys[j], &shapes[j].rank, shapes[j].shape, NULL);
                out_numel[j] = numel_of(shapes[j].rank, shapes[j].shape);
                r->numel += out_numel[j];
            }
            got = malloc((size_t)(r->numel ? r->numel : 1) * sizeof(float));
            for (int64_t j = 0, at = 0; j < n_out && !r->status; at += out_numel[j], j++)
                r->status = read_floats(ctx, ys[j], got + at, out_numel[j]);
            r->first_ms = tx_host_ms() - t0;
            for (int j = 0; j < n_out; j++)
                tx_tensor_destroy(ctx, ys[j]);
        }
        if (!r->status && d->repeat > 0) {
            r->call_ms = calloc((size_t)d->repeat, sizeof(double));
            for (int i = 0; i < d->repeat && !r->status; i++) {
                double t1 = tx_host_ms();
                r->status = tx_op_run_multi(ctx, d->op, ts, n, &d->attrs, ys, n_out);
                if (!r->status) {
                    for (int64_t j = 0, at = 0; j < n_out && !r->status; at += out_numel[j], j++)
                        r->status = read_floats(ctx, ys[j], got + at, out_numel[j]);
                    for (int j = 0; j < n_out; j++)
                        tx_tensor_destroy(ctx, ys[j]);
                }
                r->call_ms[i] = tx_host_ms() - t1;
            }
        }
        if (r->status)
            snprintf(r->error, sizeof r->error, "%s", tx_last_error(ctx));
    } else {
        snprintf(r->error, sizeof r->error, "%s", tx_last_error(ctx));
    }
    if (!r->status && d->op == TX_OP_MATMUL) {
        int64_t k = d->shape[0][d->rank[0] - 1];
        if (d->attrs.matmul.transpose_a && d->rank[0] >= 2)
            k = d->shape[0][d->rank[0] - 2];
        r->flops = 2.0 * (double)r->numel * (double)k;
    }
    if (!r->status && d->op == TX_OP_CONV)
        r->flops = 2.0 * (double)r->numel * (double)conv_terms(d);
    if (!r->status && d->op == TX_OP_CONV_TRANSPOSE) /* each input element × its footprint */
        r->flops = 2.0 * (double)numel_of(d->rank[1], d->shape[1]) / (double)d->shape[1][0] *
                   (double)numel_of(d->rank[0], d->shape[0]);
    if (!r->status && !d->skip_reference) {
        tx_ref_tensor *want = calloc((size_t)n_out, sizeof *want);
        if (tx_ref_table[d->op](ins, n, &d->attrs, want) != 0) {
            r->status = TX_STATUS_INVALID_ARGUMENT;
            snprintf(r->error, sizeof r->error, "the reference rejected these inputs");
        } else {
            /* reduction length: matmul's K, conv's terms, or inputs per output */
            int64_t k = 1;
            if (d->op == TX_OP_MATMUL)
                k = (int64_t)(r->flops / 2.0 / (double)(r->numel ? r->numel : 1));
            else if (d->op == TX_OP_CONV || d->op == TX_OP_CONV_TRANSPOSE)
                k = conv_terms(d);
            else if (n > 0 && r->numel > 0)
                k = numel_of(d->rank[0], d->shape[0]) / r->numel;
            k = k < 1 ? 1 : k;
            double atol, rtol;
            tx_ref_tolerance(d->op, k, &atol, &rtol);
            tx_op act = d->op == TX_OP_MATMUL ? d->attrs.matmul.activation
                        : (d->op == TX_OP_CONV || d->op == TX_OP_CONV_TRANSPOSE)
                            ? d->attrs.conv.activation
                            : TX_OP_NONE;
            if (act != TX_OP_NONE) {
                double a2, r2;
                tx_ref_tolerance(act, 1, &a2, &r2);
                rtol += r2;
            }
            if (want[0].dtype != r->out_dtype) {
                r->bad = r->numel ? r->numel : 1;
                snprintf(r->error, sizeof r->error, "output dtype differs from the reference");
            }
            for (int64_t j = 0, at = 0; j < n_out && !r->bad; at += out_numel[j], j++) {
                int64_t wn = tx_ref_numel(&want[j]);
                if (wn != out_numel[j] || want[j].rank != shapes[j].rank ||
                    memcmp(want[j].shape, shapes[j].shape,
                           (size_t)want[j].rank * sizeof(int64_t)) != 0) {
                    r->bad += wn > out_numel[j] ? wn : out_numel[j];
                    r->bad = r->bad ? r->bad : 1;
                    snprintf(r->error, sizeof r->error,
                             "output %d: shape differs from the reference", (int)j);
                    continue;
                }
                compare(got + at, at, &want[j], atol, rtol, r);
            }
        }
        for (int j = 0; j < n_out; j++)
            tx_ref_free(&want[j]);
        free(want);
    }
    free(got);
    free(ys);
    free(out_numel);
    free(shapes);
    for (int i = 0; i < n; i++) {
        if (ts[i].id)
            tx_tensor_destroy(ctx, ts[i]);
        free(ins[i].data);
    }
}
