/* ONNX BitShift and MeanVarianceNormalization, composed from engine ops.
 *
 * BitShift (unsigned ints): x * 2^y (LEFT) or floor(x / 2^y) (RIGHT) in
 * float32, then int32; LEFT wraps modulo 2^8 / 2^16 for uint8 / uint16 as
 * ONNX does (x - floor(x / 2^b) * 2^b). Values are exact to 2^24, the device
 * integers' range; constant inputs are shifted on the host in 64 bits.
 * MeanVarianceNormalization is ONNX's function body: (X - E[X]) /
 * (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes` (default 0, 2, 3). */
#include <stdlib.h>
#include <string.h>

#include "chain.h"

static int uint_bits(int elem) {
    return elem == TX_ONNX_UINT8    ? 8
           : elem == TX_ONNX_UINT16 ? 16
           : elem == TX_ONNX_UINT32 ? 32
                                    : 64;
}

static tx_status bitshift_host(tx_xnode *x, bool left) {
    const tx_hval *a, *b;
    tx_status st = tx_x_host2(x, 0, &a, 1, &b);
    if (st)
        return st;
    int r;
    int64_t s[TX_MAX_RANK];
    if (!a->i || !b->i || !tx_bcast_shapes(a->rank, a->shape, b->rank, b->shape, &r, s))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "X and Y must be broadcastable integers");
    tx_hval o;
    if (!tx_hval_alloc(&o, a->elem, r, s))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int bits = uint_bits(a->elem);
    uint64_t mask = bits == 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    for (int64_t k = 0; k < o.numel; k++) {
        int64_t ia = 0, ib = 0, rem = k, sa = 1, sb = 1;
        for (int d = r - 1; d >= 0; d--) { /* broadcast: trailing dims align */
            int64_t c = rem % s[d];
            rem /= s[d];
            int da = d - (r - a->rank), db = d - (r - b->rank);
            if (da >= 0) {
                ia += (a->shape[da] == 1 ? 0 : c) * sa;
                sa *= a->shape[da];
            }
            if (db >= 0) {
                ib += (b->shape[db] == 1 ? 0 : c) * sb;
                sb *= b->shape[db];
            }
        }
        uint64_t v = (uint64_t)a->i[ia], n = (uint64_t)b->i[ib];
        v = n >= 64 ? 0 : left ? (v << n) & mask : (v & mask) >> n;
        o.i[k] = (int64_t)v;
    }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_bit_shift(tx_xnode *x) {
    const char *dir = tx_attr_str(x->node, "direction", "");
    bool left = strcmp(dir, "LEFT") == 0;
    if (!left && strcmp(dir, "RIGHT") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "direction \"%s\" (LEFT or RIGHT)", dir);
    int elem = tx_x_elem(x, 0);
    if (elem && elem != TX_ONNX_UINT8 && elem != TX_ONNX_UINT16 && elem != TX_ONNX_UINT32 &&
        elem != TX_ONNX_UINT64)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "X must be an unsigned integer, got %s",
                         tx_onnx_type_name(elem));
    if (tx_x_all_host(x))
        return bitshift_host(x, left);
    tx_chain *c = calloc(1, sizeof *c);
    if (!c)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    c->x = x;
    tx_tmp_list l = {0};
    tx_tensor a, b, y = {0};
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &a);
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_FLOAT32, &l, &b);
    if (!st) {
        tx_tensor p = ch_bin(c, TX_OP_POW, ch_scalar(c, 2), b);
        tx_tensor v =
            left ? ch_bin(c, TX_OP_MUL, a, p) : ch_un(c, TX_OP_FLOOR, ch_bin(c, TX_OP_DIV, a, p));
        int bits = uint_bits(elem);
        if (left && bits < 32) {
            float m = (float)(1 << bits);
            tx_tensor q = ch_un(c, TX_OP_FLOOR, ch_bin_s(c, TX_OP_MUL, v, 1.0f / m));
            v = ch_bin(c, TX_OP_SUB, v, ch_bin_s(c, TX_OP_MUL, q, m));
        }
        st = c->st ? c->st : tx_cast(x->ctx, v, TX_DTYPE_INT32, false, &y);
    }
    tx_chain_free(c);
    free(c);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, elem ? elem : TX_ONNX_UINT32);
}

static tx_status exec_mvn(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK], axes[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rank, shape)))
        return st;
    int na;
    if ((st = tx_x_attr_ints(x, "axes", axes, TX_MAX_RANK, &na)))
        return st;
    if (na < 0) {
        na = 3;
        axes[0] = 0, axes[1] = 2, axes[2] = 3;
    }
    tx_reduce_desc rd = {.n_axes = na};
    for (int i = 0; i < na; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d",
                             (long long)axes[i], rank);
        rd.axes[i] = tx_norm_axis(axes[i], rank);
    }
    tx_tensor in, y = {0};
    if ((st = tx_x_dev(x, 0, &in)))
        return st;
    tx_chain *c = calloc(1, sizeof *c);
    if (!c)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    c->x = x;
    tx_tensor mean = {0}, ex2 = {0};
    mean = ch_keep(c, tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, in, &rd, &mean), mean);
    tx_tensor sq = ch_bin(c, TX_OP_MUL, in, in);
    ex2 = ch_keep(c, c->st ? c->st : tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, sq, &rd, &ex2), ex2);
    tx_tensor var = ch_bin(c, TX_OP_SUB, ex2, ch_bin(c, TX_OP_MUL, mean, mean));
    tx_tensor sd = ch_bin_s(c, TX_OP_ADD, ch_un(c, TX_OP_SQRT, var), 1e-9f);
    tx_tensor r = ch_bin(c, TX_OP_DIV, ch_bin(c, TX_OP_SUB, in, mean), sd);
    st = c->st ? c->st : tx_identity(x->ctx, r, &y);
    tx_chain_free(c);
    free(c);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"BitShift", exec_bit_shift, tx_x_infer_bcast, TX_OPF_HOST, 2, 2, 0},
    {"MeanVarianceNormalization", exec_mvn, tx_x_infer_same, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_bits = {k_ops, TX_COUNTOF(k_ops)};
