/* ONNX Conv, ConvTranspose and the pools, with the window attributes they share. */
#include <string.h>

#include "common.h"

/* Rank of input 0, which must be 3 or 4 (1-D or 2-D spatial): the conv and
 * pool kernels' layouts. */
static tx_status spatial_rank(tx_xnode *x, int *spatial) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank != 3 && rank != 4)
        return tx_x_fail(x, rank > 4 ? TX_STATUS_UNSUPPORTED : TX_STATUS_SHAPE_MISMATCH,
                         "input rank %d: only 1-D and 2-D spatial inputs (rank 3, 4) are "
                         "supported",
                         rank);
    *spatial = rank - 2;
    return TX_STATUS_OK;
}

static tx_status auto_pad_of(tx_xnode *x, tx_auto_pad *out) {
    const char *s = tx_attr_str(x->node, "auto_pad", "NOTSET");
    static const char *names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (tx_auto_pad)i;
            return TX_STATUS_OK;
        }
    return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                     "auto_pad \"%s\" is not one of NOTSET, "
                     "SAME_UPPER, SAME_LOWER, VALID",
                     s);
}

/* An INTS attribute of exactly `want` entries into int out[] (absent: left). */
static tx_status attr_spatial(tx_xnode *x, const char *name, int want, int *out) {
    int64_t v[2 * TX_MAX_RANK];
    int n;
    tx_status st = tx_x_attr_ints(x, name, v, 2 * TX_MAX_RANK, &n);
    if (st || n < 0)
        return st;
    if (n != want)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s has %d entries, want %d", name, n,
                         want);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > INT32_MAX)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s[%d] = %lld is out of range", name,
                             i, (long long)v[i]);
        out[i] = (int)v[i];
    }
    return TX_STATUS_OK;
}

/* The window attributes conv and pool share; explicit pads are dropped when
 * auto_pad decides them. */
static tx_status window_attrs(tx_xnode *x, int spatial, tx_auto_pad *auto_pad, int *strides,
                              int *dilations, int *pads) {
    tx_status st = auto_pad_of(x, auto_pad);
    if (!st)
        st = attr_spatial(x, "strides", spatial, strides);
    if (!st)
        st = attr_spatial(x, "dilations", spatial, dilations);
    if (!st)
        st = attr_spatial(x, "pads", 2 * spatial, pads);
    if (!st && *auto_pad != TX_AUTO_PAD_NOTSET)
        memset(pads, 0, sizeof(int) * 2 * (size_t)spatial);
    return st;
}

static tx_status conv_desc_of(tx_xnode *x, int spatial, tx_conv_desc *d) {
    memset(d, 0, sizeof *d);
    tx_status st = window_attrs(x, spatial, &d->auto_pad, d->strides, d->dilations, d->pads);
    int64_t g = tx_attr_int(x->node, "group", 1);
    if (!st && (g < 1 || g > INT32_MAX))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "group %lld", (long long)g);
    d->group = (int)g;
    /* kernel_shape, when given, must agree with W */
    int64_t ks[TX_MAX_RANK];
    int nk, rw;
    int64_t sw[TX_MAX_RANK];
    if (!st)
        st = tx_x_attr_ints(x, "kernel_shape", ks, TX_MAX_RANK, &nk);
    if (!st)
        st = tx_x_shape(x, 1, &rw, sw);
    if (!st && rw != spatial + 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "W has rank %d, X has %d spatial dims", rw,
                         spatial);
    for (int i = 0; !st && nk >= 0 && i < spatial; i++)
        if (nk != spatial || ks[i] != sw[2 + i])
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "kernel_shape does not match W");
    return st;
}

/* Conv's attributes, and ConvTranspose's two more. */
static tx_status conv_attrs(tx_xnode *x, bool tr, int spatial, tx_conv_desc *d) {
    tx_status st = conv_desc_of(x, spatial, d);
    if (!st && tr) {
        st = attr_spatial(x, "output_padding", spatial, d->output_padding);
        if (!st)
            st = attr_spatial(x, "output_shape", spatial, d->output_shape);
    }
    return st;
}

/* Windowed ops' static output shape: x's unknown N, H, W (dynamic batch and
 * image sizes) are stood in for and come out unknown; the weights must be
 * known for anything to be inferred (a conv's unknown channel count is
 * taken to be what its weights need: the run checks it). */
#define WINDOW_STAND_IN ((int64_t)1 << 20)

static tx_status infer_conv(tx_xnode *x) {
    bool tr = strcmp(x->node->op_type, "ConvTranspose") == 0;
    int ex, rx, ew, rw;
    int64_t sx[TX_MAX_RANK], sw[TX_MAX_RANK], xin[TX_MAX_RANK], o[TX_MAX_RANK];
    tx_x_info(x, 0, &ex, &rx, sx);
    tx_x_info(x, 1, &ew, &rw, sw);
    if ((rx != 3 && rx != 4) || rw != rx)
        return TX_STATUS_OK; /* the run reports it with the real shapes */
    for (int d = 0; d < rw; d++)
        if (sw[d] < 0)
            return TX_STATUS_OK;
    int64_t bias = -1;
    if (tx_x_has(x, 2)) {
        int eb, rb;
        int64_t sb[TX_MAX_RANK];
        tx_x_info(x, 2, &eb, &rb, sb);
        bias = rb == 1 ? sb[0] : -1;
    }
    tx_conv_desc d;
    tx_status st = conv_attrs(x, tr, rx - 2, &d);
    if (st)
        return st;
    for (int i = 0; i < rx; i++)
        xin[i] = sx[i] >= 0 ? sx[i] : i == 0 ? 1 : WINDOW_STAND_IN;
    if (sx[1] < 0)
        xin[1] = tr ? sw[0] : sw[1] * (d.group > 0 ? d.group : 1);
    st = tx_conv_out_shape(x->ctx, tr, rx, xin, sw, bias, &d, o);
    if (st)
        return tx_x_fail(x, st, "%s", tx_last_error(x->ctx));
    for (int i = 0; i < rx; i++)
        if (i != 1 && sx[i] < 0)
            o[i] = -1;
    tx_x_set_info(x, 0, TX_ONNX_FLOAT, rx, o);
    return TX_STATUS_OK;
}

/* Whether input 0 is rank 5 (volume.c's 3-D compositions). */
static bool is_volume(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    return tx_x_shape(x, 0, &rank, shape) == TX_STATUS_OK && rank == 5;
}

/* Conv + the residual input 3 (then x->act): in the conv's own pass where
 * the residual has the conv output's shape, else as the Add it was, with
 * broadcasting. */
static tx_status exec_conv_residual(tx_xnode *x, bool tr, tx_tensor in, tx_tensor w,
                                    tx_conv_desc *d) {
    tx_ctx *ctx = x->ctx;
    tx_tensor r, y;
    tx_status st = tx_x_dev(x, 3, &r);
    if (st)
        return st;
    /* fuse.c's Concat(r, zeros) (resid_pad): in the pass, the front
     * checking r's shape */
    bool in_pass = x->resid_pad;
    if (!in_pass) {
        int xr, wr, rr, br = 0;
        int64_t xs[TX_MAX_RANK], ws[TX_MAX_RANK], rs[TX_MAX_RANK], bs[TX_MAX_RANK], ys[TX_MAX_RANK];
        tx_tensor_shape(ctx, in, &xr, xs, NULL);
        tx_tensor_shape(ctx, w, &wr, ws, NULL);
        tx_tensor_shape(ctx, r, &rr, rs, NULL);
        if (d->bias.id)
            tx_tensor_shape(ctx, d->bias, &br, bs, NULL);
        in_pass = xr == wr && xr == rr &&
                  !tx_conv_out_shape(ctx, tr, xr, xs, ws, d->bias.id ? bs[0] : -1, d, ys) &&
                  !memcmp(ys, rs, sizeof(int64_t) * (size_t)rr);
    }
    if (in_pass) {
        d->residual = r;
        d->residual_pad = x->resid_pad;
        st = tr ? tx_conv_transpose(ctx, in, w, d, &y) : tx_conv(ctx, in, w, d, &y);
        return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    }
    tx_op act = d->activation; /* fuse.c never fuses CLIP: alpha, beta or nothing */
    d->activation = TX_OP_NONE;
    tx_tensor z;
    st = tr ? tx_conv_transpose(ctx, in, w, d, &z) : tx_conv(ctx, in, w, d, &z);
    if (!st)
        st = tx_residual_act(ctx, z, r, act, d->alpha, d->beta, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

static tx_status exec_conv(tx_xnode *x) {
    bool tr = strcmp(x->node->op_type, "ConvTranspose") == 0;
    if (is_volume(x))
        return tx_onnx_conv_volume(x, tr);
    int spatial = 0;
    tx_status st = tx_x_float_input_only(x, 0);
    if (!st)
        st = spatial_rank(x, &spatial);
    tx_conv_desc d;
    if (!st)
        st = conv_attrs(x, tr, spatial, &d);
    tx_tensor in, w, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_x_dev(x, 1, &w);
    if (!st && tx_x_has(x, 2))
        st = tx_x_dev(x, 2, &d.bias);
    if (st)
        return st;
    d.activation = x->act;
    d.alpha = x->act_alpha;
    d.beta = x->act_beta;
    if (x->act == TX_OP_CLIP) { /* fuse.c's gate: its bounds */
        d.lo = x->act_alpha;
        d.hi = x->act_beta;
    }
    d.x_affine = x->x_affine;
    d.x_scale = x->x_scale;
    d.x_shift = x->x_shift;
    if (tx_x_has(x, 3)) /* a fused residual Add (fuse.c) */
        return exec_conv_residual(x, tr, in, w, &d);
    st = tr ? tx_conv_transpose(x->ctx, in, w, &d, &y) : tx_conv(x->ctx, in, w, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

tx_status tx_x_conv_desc(tx_xnode *x, tx_conv_desc *d) {
    int spatial = 0;
    tx_status st = spatial_rank(x, &spatial);
    return st ? st : conv_attrs(x, false, spatial, d);
}

tx_status tx_x_infer_conv(tx_xnode *x) {
    return infer_conv(x);
}

static tx_op pool_op(const tx_onnx_node *n) {
    const char *t = n->op_type;
    return strcmp(t, "MaxPool") == 0         ? TX_OP_MAXPOOL
           : strcmp(t, "AveragePool") == 0   ? TX_OP_AVERAGEPOOL
           : strcmp(t, "GlobalMaxPool") == 0 ? TX_OP_GLOBALMAXPOOL
                                             : TX_OP_GLOBALAVERAGEPOOL;
}

static tx_status pool_attrs(tx_xnode *x, tx_op op, int spatial, tx_pool_desc *d) {
    memset(d, 0, sizeof *d);
    if (op != TX_OP_MAXPOOL && op != TX_OP_AVERAGEPOOL)
        return TX_STATUS_OK;
    tx_status st = attr_spatial(x, "kernel_shape", spatial, d->kernel_shape);
    if (!st && !d->kernel_shape[0])
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "kernel_shape is required");
    if (!st)
        st = window_attrs(x, spatial, &d->auto_pad, d->strides, d->dilations, d->pads);
    d->ceil_mode = tx_attr_int(x->node, "ceil_mode", 0) != 0;
    d->count_include_pad = tx_attr_int(x->node, "count_include_pad", 0) != 0;
    /* storage_order only matters to the Indices output (volume.c) */
    return st;
}

static tx_status infer_pool(tx_xnode *x) {
    tx_op op = pool_op(x->node);
    int ex, rx;
    int64_t sx[TX_MAX_RANK], o[TX_MAX_RANK];
    tx_x_info(x, 0, &ex, &rx, sx);
    if (rx != 3 && rx != 4)
        return TX_STATUS_OK; /* the run reports it with the real shapes */
    tx_pool_desc d;
    tx_status st = pool_attrs(x, op, rx - 2, &d);
    if (st)
        return st;
    memcpy(o, sx, sizeof o);
    if (op == TX_OP_MAXPOOL || op == TX_OP_AVERAGEPOOL) {
        tx_slot xs = {.rank = rx, .dtype = TX_DTYPE_FLOAT32};
        for (int i = 0; i < rx; i++)
            xs.shape[i] = sx[i] >= 0 ? sx[i] : i < 2 ? 1 : WINDOW_STAND_IN;
        tx_window g;
        st = tx_window_geom(x->ctx, tx_op_name(op), &xs, d.kernel_shape, d.strides, d.dilations,
                            d.pads, d.auto_pad, d.ceil_mode, &g);
        if (st)
            return tx_x_fail(x, st, "%s", tx_last_error(x->ctx));
        if (rx == 4)
            o[2] = sx[2] >= 0 ? g.ho : -1;
        o[rx - 1] = sx[rx - 1] >= 0 ? g.wo : -1;
    } else {
        for (int i = 2; i < rx; i++)
            o[i] = 1;
    }
    tx_x_set_info(x, 0, tx_x_elem(x, 0), rx, o);
    return TX_STATUS_OK;
}

static tx_status exec_pool(tx_xnode *x) {
    tx_op op = pool_op(x->node);
    if ((x->n_out > 1 && x->out[1]) || is_volume(x))
        return tx_onnx_pool_volume(x, op);
    int spatial = 0;
    /* MaxPool of ints runs as float (exact to 2^24) */
    tx_status st = op == TX_OP_MAXPOOL ? TX_STATUS_OK : tx_x_float_input_only(x, 0);
    if (!st)
        st = spatial_rank(x, &spatial);
    tx_pool_desc d;
    if (!st)
        st = pool_attrs(x, op, spatial, &d);
    tx_tmp_list l = {0};
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    if (!st)
        st = tx_pooling(x->ctx, op, in, &d, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev_typed(x, 0, y, tx_x_elem(x, 0), true);
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"Conv", exec_conv, infer_conv, TX_OPF_FUSE_ACT, 2, 3, 0},
    {"ConvTranspose", exec_conv, infer_conv, TX_OPF_FUSE_ACT, 2, 3, 0},
    {"MaxPool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"AveragePool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"GlobalMaxPool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"GlobalAveragePool", exec_pool, infer_pool, 0, 1, 1, 0},
};

const tx_onnx_family tx_onnx_ops_conv = {k_ops, TX_COUNTOF(k_ops)};
