/* Reference: REDUCE family (ONNX Reduce* with axes / keepdims /
 * noop_with_empty_axes, ArgMax / ArgMin with select_last_index). Each output
 * gathers its elements in increasing index order, in double precision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

/* Fills mask from attrs the ONNX way; -1 on bad axes. */
static int axes_mask(tx_op op, const tx_ref_tensor *x, const tx_reduce_desc *d, bool *mask,
                     bool *noop) {
    memset(mask, 0, TX_MAX_RANK * sizeof *mask);
    *noop = false;
    bool arg = op == TX_OP_ARGMAX || op == TX_OP_ARGMIN;
    int n = d->n_axes;
    int axes[TX_MAX_RANK];
    memcpy(axes, d->axes, sizeof axes);
    if (arg) {
        if (n > 1 || x->rank == 0)
            return -1;
        if (n == 0)
            axes[0] = 0;
        n = 1;
    }
    if (n == 0) {
        *noop = d->noop_with_empty_axes;
        for (int i = 0; i < x->rank; i++)
            mask[i] = !*noop;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        int a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (a < 0 || a >= x->rank || mask[a])
            return -1;
        mask[a] = true;
    }
    return 0;
}

static int run(tx_op op, const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
               tx_ref_tensor *out) {
    if (n_in != 1)
        return -1;
    const tx_ref_tensor *x = &in[0];
    tx_reduce_desc d = attrs ? attrs->reduce : (tx_reduce_desc){0};
    bool mask[TX_MAX_RANK], noop;
    if (axes_mask(op, x, &d, mask, &noop))
        return -1;
    bool arg = op == TX_OP_ARGMAX || op == TX_OP_ARGMIN;
    *out = (tx_ref_tensor){.dtype = arg ? TX_DTYPE_INT32 : x->dtype};
    int64_t kept[TX_MAX_RANK];
    int nk = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i])
            kept[nk++] = x->shape[i];
        if (!mask[i] || !d.drop_dims)
            out->shape[out->rank++] = mask[i] ? 1 : x->shape[i];
    }
    int64_t no = tx_ref_numel(out), nx = tx_ref_numel(x);
    if (arg && nx == 0 && no > 0)
        return -1;
    out->data = malloc((size_t)(no ? no : 1) * sizeof(float));
    double *acc = calloc((size_t)(no ? no : 1), sizeof(double));
    double *aux = calloc((size_t)(no ? no : 1), sizeof(double));
    int64_t *cnt = calloc((size_t)(no ? no : 1), sizeof(int64_t));
    if (!out->data || !acc || !aux || !cnt) {
        free(acc), free(aux), free(cnt);
        return -1;
    }
    /* two sweeps: LSE needs the max first */
    for (int sweep = 0; sweep < 2; sweep++) {
        for (int64_t i = 0; i < nx; i++) {
            int64_t r = i, o = 0, os = 1, j = 0, js = 1;
            for (int dd = x->rank - 1, k = nk - 1; dd >= 0; dd--) {
                int64_t c = r % x->shape[dd];
                r /= x->shape[dd];
                if (!mask[dd]) {
                    o += c * os;
                    os *= kept[k--];
                } else {
                    j += c * js;
                    js *= x->shape[dd];
                }
            }
            double v = x->data[i];
            double *a = &acc[o];
            bool first = cnt[o]++ == 0;
            if (noop) {
                *a = v;
                continue;
            }
            switch (op) {
            case TX_OP_REDUCE_SUM:
            case TX_OP_REDUCE_LOG_SUM:
            case TX_OP_REDUCE_MEAN: *a += v; break;
            case TX_OP_REDUCE_L1: *a += fabs(v); break;
            case TX_OP_REDUCE_L2:
            case TX_OP_REDUCE_SUM_SQUARE: *a += v * v; break;
            case TX_OP_REDUCE_PROD: *a = first ? v : *a * v; break;
            case TX_OP_REDUCE_MAX:
            case TX_OP_REDUCE_LOG_SUM_EXP:
                if (sweep == 1 && op == TX_OP_REDUCE_LOG_SUM_EXP) {
                    if (!isinf(*a) || v == *a)
                        aux[o] += isinf(*a) ? 1 : exp(v - *a);
                } else if (sweep == 0)
                    *a = first || isnan(v) || v > *a ? (isnan(*a) && !first ? *a : v) : *a;
                break;
            case TX_OP_REDUCE_MIN:
                *a = first || isnan(v) || v < *a ? (isnan(*a) && !first ? *a : v) : *a;
                break;
            case TX_OP_ARGMAX:
            case TX_OP_ARGMIN: {
                /* NaN beats every number (numpy): the first NaN, or the last */
                bool better = op == TX_OP_ARGMAX ? (d.select_last_index ? v >= *a : v > *a)
                                                 : (d.select_last_index ? v <= *a : v < *a);
                if (isnan(*a))
                    better = d.select_last_index && isnan(v);
                else if (isnan(v))
                    better = true;
                if (first || better) {
                    *a = v;
                    aux[o] = (double)j;
                }
                break;
            }
            default: return -1;
            }
        }
        if (op != TX_OP_REDUCE_LOG_SUM_EXP || sweep == 1)
            break;
        memset(cnt, 0, (size_t)(no ? no : 1) * sizeof *cnt);
    }
    int64_t R = no ? nx / no : 0;
    for (int64_t o = 0; o < no; o++) {
        double a = acc[o];
        if (!noop && cnt[o] == 0) { /* empty reduction: the identity */
            switch (op) {
            case TX_OP_REDUCE_PROD: a = 1; break;
            case TX_OP_REDUCE_MAX:
            case TX_OP_REDUCE_LOG_SUM:
            case TX_OP_REDUCE_LOG_SUM_EXP: a = -INFINITY; break;
            case TX_OP_REDUCE_MIN: a = INFINITY; break;
            case TX_OP_REDUCE_MEAN: a = NAN; break;
            default: a = 0; break;
            }
        } else if (!noop) {
            switch (op) {
            case TX_OP_REDUCE_MEAN: a /= (double)R; break;
            case TX_OP_REDUCE_L2: a = sqrt(a); break;
            case TX_OP_REDUCE_LOG_SUM: a = log(a); break;
            case TX_OP_REDUCE_LOG_SUM_EXP: a = a + log(aux[o]); break;
            case TX_OP_ARGMAX:
            case TX_OP_ARGMIN: a = aux[o]; break;
            default: break;
            }
        }
        out->data[o] = (float)a;
    }
    free(acc), free(aux), free(cnt);
    return 0;
}

#define REDUCE_REF(ENUM, name) TX_REF_RUN(ENUM, name)
REDUCE_REF(REDUCE_SUM, reduce_sum)
REDUCE_REF(REDUCE_MEAN, reduce_mean)
REDUCE_REF(REDUCE_MAX, reduce_max)
REDUCE_REF(REDUCE_MIN, reduce_min)
REDUCE_REF(REDUCE_PROD, reduce_prod)
REDUCE_REF(REDUCE_L2, reduce_l2)
REDUCE_REF(REDUCE_SUM_SQUARE, reduce_sum_square)
REDUCE_REF(REDUCE_LOG_SUM_EXP, reduce_log_sum_exp)
REDUCE_REF(REDUCE_L1, reduce_l1)
REDUCE_REF(REDUCE_LOG_SUM, reduce_log_sum)
REDUCE_REF(ARGMAX, argmax)
REDUCE_REF(ARGMIN, argmin)
