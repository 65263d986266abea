/* ONNX MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv, composed
 * from the engine's matmul and conv kernels (both devices).
 *
 * Exactness. Both devices keep tensors and accumulate in float32 (the CPU
 * reuses its SGEMM). The operands are shifted by their zero points first, so
 * every product is an integer of magnitude at most amax · bmax (the largest
 * |q - zero point| of each operand: from the constant's values when it is a
 * constant, else the element type's range, 255 for 8-bit types), and any
 * partial sum of at most kc = floor(2^24 / (amax · bmax)) products is an
 * integer below 2^24, which float32 holds exactly whatever the summation
 * order or blocking. When the reduction length K exceeds kc, the executor
 * splits K into chunks of at most kc (a matmul or conv per chunk) and adds
 * the chunk results, which stays exact while the running sums stay below
 * 2^24 (texel's int32 range: an int32 result beyond it is not representable
 * in a float texel anyway). For full-range uint8 × int8 operands kc = 257;
 * quantize_dynamic's weights use |w - zp| <= 127, giving kc = 514.
 *
 * QLinear*: y = saturate(round(acc · (sa · sb / sy)) + zy), acc the exact
 * integer accumulation, as onnxruntime's reference kernels do. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define EXACT_F32 16777216.0 /* 2^24 */

/* A node whose inputs are x's inputs ix[0..n) (-1: absent). */
static tx_xnode sub_node(tx_xnode *x, tx_session_val **in, const int *ix, int n) {
    tx_xnode s = *x;
    for (int j = 0; j < n; j++)
        in[j] = ix[j] >= 0 && ix[j] < x->n_in ? x->in[ix[j]] : NULL;
    s.in = in;
    s.n_in = n;
    return s;
}

/* [*lo, *hi] becomes the range of constant input i's values (left as is
 * when i is absent or not a constant). */
static void const_range(tx_xnode *x, int i, double *lo, double *hi) {
    const tx_hval *h;
    if (!tx_x_is_host(x, i) || tx_x_host(x, i, &h) || h->numel <= 0)
        return;
    *lo = *hi = tx_hval_get(h, 0);
    for (int64_t k = 1; k < h->numel; k++) {
        double v = tx_hval_get(h, k);
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
}

/* The largest |q - zp| of input i with zero point input z (see the header). */
static tx_status qmax_abs(tx_xnode *x, int i, int z, bool scan, double *out) {
    float lo, hi;
    tx_status st = tx_x_qrange(x, tx_x_elem(x, i), &lo, &hi);
    if (st)
        return st;
    double qmin = lo, qmax = hi, zmin = 0, zmax = 0;
    if (scan)
        const_range(x, i, &qmin, &qmax);
    if (tx_x_has(x, z)) {
        zmin = lo, zmax = hi;
        const_range(x, z, &zmin, &zmax);
    }
    double a = qmax - zmin, b = zmax - qmin;
    *out = a > b ? a : b;
    if (*out < 1)
        *out = 1;
    return TX_STATUS_OK;
}

/* The longest exact reduction for operands i, j with zero points zi, zj. */
static tx_status exact_k(tx_xnode *x, int i, int zi, int j, int zj, int64_t k, int64_t *kc) {
    tx_status st = TX_STATUS_OK;
    /* the types' ranges first; a constant's values are scanned only when
     * those do not cover a reduction of k */
    for (int scan = 0; scan < 2 && !st; scan++) {
        double a, b;
        st = qmax_abs(x, i, zi, scan, &a);
        if (!st)
            st = qmax_abs(x, j, zj, scan, &b);
        *kc = st ? 1 : (int64_t)(EXACT_F32 / (a * b));
        if (*kc < 1)
            *kc = 1;
        if (k <= *kc)
            break;
    }
    return st;
}

/* Input i - zero point input z as a float32 temporary in l. A zero point of
 * more than one value has its values along dim `axis` of a rank-`rank` shape
 * (a per-row zero point of A is [M, 1]; one per output channel of W is [M, 1, 1, 1]). */
static tx_status shifted(tx_xnode *x, int i, int z, int rank, int axis, tx_tmp_list *l,
                         tx_tensor *out) {
    tx_tensor v, zp, zr;
    tx_status st = tx_x_dev_float(x, i, l, &v);
    if (st || tx_x_zero_point_zero(x, z)) {
        *out = v;
        return st;
    }
    int rz;
    int64_t sz[TX_MAX_RANK], shape[TX_MAX_RANK];
    if ((st = tx_x_shape(x, z, &rz, sz)) || (st = tx_x_dev_float(x, z, l, &zp)))
        return st;
    int64_t n = tx_numel_of(rz, sz);
    if (n > 1 && rank > 0) {
        if (rz != 1)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "zero point of input %d must be a scalar or 1-D", i);
        for (int d = 0; d < rank; d++)
            shape[d] = d == axis ? n : 1;
        if ((st = tx_tensor_reshape(x->ctx, zp, rank, shape, &zr)))
            return st;
        l->t[l->n++] = zr;
        zp = zr;
    }
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    st = tx_binary(x->ctx, TX_OP_SUB, v, zp, out);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

/* acc (destroyed) + y (destroyed) → *acc; *acc {0}: y. */
static tx_status accumulate(tx_xnode *x, tx_tensor *acc, tx_tensor y) {
    if (!acc->id) {
        *acc = y;
        return TX_STATUS_OK;
    }
    tx_tensor s;
    tx_status st = tx_binary(x->ctx, TX_OP_ADD, *acc, y, &s);
    tx_tensor_destroy(x->ctx, *acc);
    tx_tensor_destroy(x->ctx, y);
    *acc = st ? (tx_tensor){0} : s;
    return st;
}

/* [k0, k1) of dim `axis` of t. */
static tx_status chunk(tx_xnode *x, tx_tensor t, int axis, int64_t k0, int64_t k1, tx_tensor *out) {
    tx_slice_desc d = {.n = 1, .has_axes = true};
    d.starts[0] = k0, d.ends[0] = k1, d.axes[0] = axis;
    return tx_slice(x->ctx, t, &d, out);
}

/* The reduction of a and b (matmul or conv, op) over n indices of dims
 * axa / axb, run in chunks of at most `step` indices whose results are added
 * (one call when n <= step). *acc: the sum ({0} on failure). */
typedef tx_status (*reduce_fn)(tx_xnode *x, tx_tensor a, tx_tensor b, void *desc, tx_tensor *y);

static tx_status chunked(tx_xnode *x, tx_tensor a, int axa, tx_tensor b, int axb, int64_t n,
                         int64_t step, reduce_fn op, void *desc, tx_tensor *acc) {
    *acc = (tx_tensor){0};
    if (n <= step)
        return op(x, a, b, desc, acc);
    tx_status st = TX_STATUS_OK;
    for (int64_t k0 = 0; !st && k0 < n; k0 += step) {
        int64_t k1 = k0 + step < n ? k0 + step : n;
        tx_tensor ac, bc, y;
        if ((st = chunk(x, a, axa, k0, k1, &ac)))
            break;
        st = chunk(x, b, axb, k0, k1, &bc);
        if (!st) {
            st = op(x, ac, bc, desc, &y);
            tx_tensor_destroy(x->ctx, bc);
        }
        tx_tensor_destroy(x->ctx, ac);
        if (!st)
            st = accumulate(x, acc, y);
    }
    if (st && acc->id) {
        tx_tensor_destroy(x->ctx, *acc);
        *acc = (tx_tensor){0};
    }
    return st;
}

static tx_status matmul_op(tx_xnode *x, tx_tensor a, tx_tensor b, void *desc, tx_tensor *y) {
    return tx_matmul(x->ctx, a, b, desc, y);
}

/* A conv chunk; the bias is added once, with the first chunk. */
static tx_status conv_op(tx_xnode *x, tx_tensor a, tx_tensor b, void *desc, tx_tensor *y) {
    tx_conv_desc *d = desc;
    tx_status st = tx_conv(x->ctx, a, b, d, y);
    d->bias = (tx_tensor){0};
    return st;
}

/* A grouped conv whose per-group reduction needs chunks: each group as a conv
 * of its own (its input channels, its output channels and bias), chunked,
 * and the groups' results concatenated along the channels. */
static tx_status grouped(tx_xnode *x, tx_tensor in, tx_tensor w, const tx_conv_desc *d,
                         int64_t step, tx_tensor *out) {
    int rx, rw, g = d->group;
    int64_t sx[TX_MAX_RANK], sw[TX_MAX_RANK];
    tx_status st = tx_tensor_shape(x->ctx, in, &rx, sx, NULL);
    if (!st)
        st = tx_tensor_shape(x->ctx, w, &rw, sw, NULL);
    if (st)
        return st;
    if (sx[1] != (int64_t)g * sw[1] || sw[0] % g)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "group %d does not divide X's %lld channels into W's %lld per group "
                         "and its %lld outputs",
                         g, (long long)sx[1], (long long)sw[1], (long long)sw[0]);
    tx_tensor *parts = calloc((size_t)g, sizeof *parts);
    if (!parts)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t cg = sw[1], mg = sw[0] / g;
    for (int k = 0; k < g && !st; k++) {
        tx_tensor xk = {0}, wk = {0}, bk = {0};
        tx_conv_desc dk = *d;
        dk.group = 1;
        st = chunk(x, in, 1, k * cg, (k + 1) * cg, &xk);
        if (!st)
            st = chunk(x, w, 0, k * mg, (k + 1) * mg, &wk);
        if (!st && d->bias.id)
            st = chunk(x, d->bias, 0, k * mg, (k + 1) * mg, &bk);
        dk.bias = bk;
        if (!st)
            st = chunked(x, xk, 1, wk, 1, cg, step, conv_op, &dk, &parts[k]);
        tx_tensor bufs[3] = {xk, wk, bk};
        for (int j = 0; j < 3; j++)
            if (bufs[j].id)
                tx_tensor_destroy(x->ctx, bufs[j]);
    }
    if (!st)
        st = tx_concat(x->ctx, parts, g, 1, out);
    for (int k = 0; k < g; k++)
        if (parts[k].id)
            tx_tensor_destroy(x->ctx, parts[k]);
    free(parts);
    return st;
}

/* (A - a_zp) @ (B - b_zp) as an exact float32 tensor: A, B, a_zp, b_zp are
 * inputs 0..3 of x. */
static tx_status int_matmul(tx_xnode *x, tx_tensor *out) {
    int ra, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], kc;
    tx_status st = tx_x_shape2(x, &ra, sa, &rb, sb);
    if (!st && (ra < 1 || rb < 1))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "A and B must have rank >= 1");
    if (!st)
        st = exact_k(x, 0, 2, 1, 3, sa[ra - 1], &kc);
    if (st)
        return st;
    tx_tmp_list l = {0};
    tx_tensor a, b;
    st = shifted(x, 0, 2, ra >= 2 ? 2 : 0, 0, &l, &a);
    if (!st)
        st = shifted(x, 1, 3, 0, 0, &l, &b);
    tx_matmul_desc md = {0};
    tx_tensor acc = {0};
    if (!st)
        st = chunked(x, a, ra - 1, b, rb >= 2 ? rb - 2 : 0, sa[ra - 1], kc, matmul_op, &md, &acc);
    tx_tmps_free(x, &l);
    *out = acc;
    return st;
}

/* QLinearConv's int32 bias as float32 (a temporary in l). A constant whose
 * values reach beyond 2^24, which an int32 device tensor cannot hold (the
 * session leaves it on the host), becomes the nearest float32 on each run
 * (relative error 2^-24 of the bias, far below the output's quantum); any
 * other bias is the device constant uploaded with the weights. */
static tx_status bias_dev(tx_xnode *x, int i, tx_tmp_list *l, tx_tensor *out) {
    double lo = 0, hi = 0;
    const_range(x, i, &lo, &hi);
    if (lo >= -EXACT_F32 && hi <= EXACT_F32)
        return tx_x_dev_float(x, i, l, out);
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    if (h->rank != 1)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "B must be 1-D (rank %d)", h->rank);
    float *v = malloc(sizeof(float) * (size_t)(h->numel ? h->numel : 1));
    if (!v)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < h->numel; k++)
        v[k] = (float)tx_hval_get(h, k);
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    st =
        tx_tensor_create(x->ctx, &(tx_tensor_desc){.rank = 1, .shape = {h->numel}, .data = v}, out);
    free(v);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

/* conv(X - x_zp, W - w_zp) + bias as an exact float32 tensor: X, W, x_zp,
 * w_zp, bias (float, optional) are inputs 0..4 of x. */
static tx_status int_conv(tx_xnode *x, tx_tensor *out) {
    tx_conv_desc d;
    int rw;
    int64_t sw[TX_MAX_RANK], kc;
    tx_status st = tx_x_conv_desc(x, &d);
    if (!st)
        st = tx_x_shape(x, 1, &rw, sw);
    int64_t taps = st ? 1 : tx_numel_of(rw - 2, sw + 2), c = st ? 1 : sw[1];
    if (!st)
        st = exact_k(x, 0, 2, 1, 3, c * taps, &kc);
    if (st)
        return st;
    tx_tmp_list l = {0};
    tx_tensor in, w, acc = {0};
    st = tx_x_has(x, 4) ? bias_dev(x, 4, &l, &d.bias) : TX_STATUS_OK;
    if (!st)
        st = shifted(x, 0, 2, 0, 0, &l, &in);
    if (!st)
        st = shifted(x, 1, 3, rw, 0, &l, &w);
    int64_t step = kc / taps > 0 ? kc / taps : 1;
    if (!st && d.group > 1 && c > step)
        st = grouped(x, in, w, &d, step, &acc);
    else if (!st)
        st = chunked(x, in, 1, w, 1, c, step, conv_op, &d, &acc);
    tx_tmps_free(x, &l);
    *out = acc;
    return st;
}

static tx_status exec_matmul_integer(tx_xnode *x) {
    tx_tensor y;
    tx_status st = int_matmul(x, &y);
    return st ? st : tx_x_set_dev_int(x, 0, y, TX_ONNX_INT32);
}

static tx_status exec_conv_integer(tx_xnode *x) {
    tx_session_val *in[5];
    tx_xnode s = sub_node(x, in, (const int[]){0, 1, 2, 3, -1}, 5);
    tx_tensor y;
    tx_status st = int_conv(&s, &y);
    return st ? st : tx_x_set_dev_int(x, 0, y, TX_ONNX_INT32);
}

/* sa · sb / sy (inputs ia, ib, iy) as a float32 temporary shaped to
 * broadcast against the accumulator: a per-row A scale as [M, 1] (rank 2),
 * a per-channel W scale with its values along dim `axis_b` of rank `rank_b`. */
static tx_status multiplier(tx_xnode *x, int ia, int ib, int iy, int rank_b, int axis_b,
                            tx_tmp_list *l, tx_tensor *out) {
    tx_tensor sa, sb, sy, p;
    int rank, rankb;
    int64_t shape[TX_MAX_RANK], sh[TX_MAX_RANK];
    tx_status st = tx_x_dev_float(x, ia, l, &sa);
    if (!st)
        st = tx_x_dev_float(x, ib, l, &sb);
    if (!st)
        st = tx_x_dev_float(x, iy, l, &sy);
    if (!st)
        st = tx_x_shape(x, ia, &rank, shape);
    if (!st && tx_numel_of(rank, shape) > 1) {
        int64_t m2[2] = {tx_numel_of(rank, shape), 1};
        if (!(st = tx_tensor_reshape(x->ctx, sa, 2, m2, &p)))
            sa = l->t[l->n++] = p;
    }
    if (!st)
        st = tx_x_shape(x, ib, &rankb, sh);
    if (!st && rank_b > 0 && tx_numel_of(rankb, sh) > 1) {
        for (int d = 0; d < rank_b; d++)
            shape[d] = d == axis_b ? tx_numel_of(rankb, sh) : 1;
        if (!(st = tx_tensor_reshape(x->ctx, sb, rank_b, shape, &p)))
            sb = l->t[l->n++] = p;
    }
    TX_ASSERT(l->n + 2 <= (int)TX_COUNTOF(l->t));
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, sa, sb, &p))) {
        l->t[l->n++] = p;
        if (!(st = tx_binary(x->ctx, TX_OP_DIV, p, sy, out)))
            l->t[l->n++] = *out;
    }
    return st;
}

/* y = saturate(round(acc · m) + y_zp) for the QLinear ops; y_zp is input iz. */
static tx_status requantize_out(tx_xnode *x, tx_tensor acc, tx_tensor m, int iz, tx_tmp_list *l) {
    int elem = tx_x_has(x, iz) ? tx_x_elem(x, iz) : TX_ONNX_UINT8;
    float lo, hi;
    tx_tensor zp = {0}, y;
    tx_status st = tx_x_qrange(x, elem, &lo, &hi);
    if (!st && !tx_x_zero_point_zero(x, iz))
        st = tx_x_dev_float(x, iz, l, &zp);
    if (!st)
        st = tx_x_requantize(x, acc, m, false, zp, lo, hi, &y);
    return st ? st : tx_x_set_dev_int(x, 0, y, elem);
}

static tx_status exec_qlinear_matmul(tx_xnode *x) {
    tx_session_val *in[4];
    tx_xnode s = sub_node(x, in, (const int[]){0, 3, 2, 5}, 4);
    tx_tmp_list l = {0};
    tx_tensor acc, m;
    tx_status st = int_matmul(&s, &acc);
    if (st)
        return st;
    st = multiplier(x, 1, 4, 6, 0, 0, &l, &m);
    if (!st)
        st = requantize_out(x, acc, m, 7, &l);
    tx_tensor_destroy(x->ctx, acc);
    tx_tmps_free(x, &l);
    return st;
}

static tx_status exec_qlinear_conv(tx_xnode *x) {
    tx_session_val *in[5];
    tx_xnode s = sub_node(x, in, (const int[]){0, 3, 2, 5, 8}, 5);
    tx_tmp_list l = {0};
    tx_tensor acc, m;
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rx, sx);
    if (!st)
        st = int_conv(&s, &acc);
    if (st)
        return st;
    st = multiplier(x, 1, 4, 6, rx, 1, &l, &m);
    if (!st)
        st = requantize_out(x, acc, m, 7, &l);
    tx_tensor_destroy(x->ctx, acc);
    tx_tmps_free(x, &l);
    return st;
}

/* ---- static shapes: the float op's, with the integer output type ---- */

static tx_status infer_as(tx_xnode *x, const int *ix, tx_status (*infer)(tx_xnode *), int elem) {
    tx_session_val *in[2];
    tx_xnode s = sub_node(x, in, ix, 2);
    tx_status st = infer(&s);
    const tx_session_val *v = x->n_out > 0 ? x->out[0] : NULL;
    if (!st && v && v->rank >= 0 && !v->is_const)
        tx_x_set_info(x, 0, elem, v->rank, v->shape);
    return st;
}

static int y_elem(tx_xnode *x) {
    int e = tx_x_has(x, 7) ? tx_x_elem(x, 7) : 0;
    return e ? e : TX_ONNX_UINT8;
}

static tx_status infer_matmul_integer(tx_xnode *x) {
    return infer_as(x, (const int[]){0, 1}, tx_x_infer_matmul, TX_ONNX_INT32);
}

static tx_status infer_conv_integer(tx_xnode *x) {
    return infer_as(x, (const int[]){0, 1}, tx_x_infer_conv, TX_ONNX_INT32);
}

static tx_status infer_qlinear_matmul(tx_xnode *x) {
    return infer_as(x, (const int[]){0, 3}, tx_x_infer_matmul, y_elem(x));
}

static tx_status infer_qlinear_conv(tx_xnode *x) {
    return infer_as(x, (const int[]){0, 3}, tx_x_infer_conv, y_elem(x));
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"MatMulInteger", exec_matmul_integer, infer_matmul_integer, 0, 2, 4, 0},
    {"ConvInteger", exec_conv_integer, infer_conv_integer, 0, 2, 4, 0},
    {"QLinearMatMul", exec_qlinear_matmul, infer_qlinear_matmul, 0, 8, 8, 0},
    {"QLinearConv", exec_qlinear_conv, infer_qlinear_conv, 0, 8, 9, 0},
};

const tx_onnx_family tx_onnx_ops_qlinear = {k_ops, TX_COUNTOF(k_ops)};
