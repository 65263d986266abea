/* Reference: NARY family (where; variadic sum, mean, min_n, max_n) with numpy
 * broadcasting over all inputs. */
#include <math.h>
#include <stdlib.h>

#include "ref.h"

static int run(tx_op op, const tx_ref_tensor *in, int n_in, tx_ref_tensor *out) {
    if (n_in < 1 || n_in > 64 || (op == TX_OP_WHERE && n_in != 3))
        return -1;
    int rank = 0;
    for (int k = 0; k < n_in; k++)
        rank = in[k].rank > rank ? in[k].rank : rank;
    *out = (tx_ref_tensor){.rank = rank, .dtype = in[op == TX_OP_WHERE ? 1 : 0].dtype};
    for (int i = 0; i < rank; i++) {
        out->shape[i] = 1;
        for (int k = 0; k < n_in; k++) {
            int ii = i - (rank - in[k].rank);
            int64_t d = ii >= 0 ? in[k].shape[ii] : 1;
            if (d != 1 && out->shape[i] != 1 && d != out->shape[i])
                return -1;
            if (d != 1)
                out->shape[i] = d;
        }
    }
    int64_t n = tx_ref_numel(out);
    out->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (!out->data)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        double v[64];
        int nv = n_in < 64 ? n_in : 64;
        for (int k = 0; k < nv; k++) {
            int64_t r = i, idx = 0, stride = 1;
            for (int d = rank - 1; d >= 0; d--) {
                int64_t c = r % out->shape[d];
                r /= out->shape[d];
                int dk = d - (rank - in[k].rank);
                if (dk >= 0) {
                    if (in[k].shape[dk] != 1)
                        idx += c * stride;
                    stride *= in[k].shape[dk];
                }
            }
            v[k] = in[k].data[idx];
        }
        double y = v[0];
        if (op == TX_OP_WHERE) {
            y = v[0] != 0 || isnan(v[0]) ? v[1] : v[2];
        } else {
            for (int k = 1; k < nv; k++) {
                if (op == TX_OP_SUM || op == TX_OP_MEAN)
                    y += v[k];
                else if (isnan(y) || isnan(v[k]))
                    y = NAN;
                else if (op == TX_OP_MIN_N)
                    y = v[k] < y ? v[k] : y;
                else
                    y = v[k] > y ? v[k] : y;
            }
            if (op == TX_OP_MEAN)
                y /= n_in;
        }
        out->data[i] = (float)y;
    }
    return 0;
}

#define NARY_REF(ENUM, name) TX_REF_RUN_NO_ATTRS(ENUM, name)
NARY_REF(WHERE, where)
NARY_REF(SUM, sum)
NARY_REF(MEAN, mean)
NARY_REF(MIN_N, min_n)
NARY_REF(MAX_N, max_n)
