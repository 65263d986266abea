/* ONNX windowed ops the 1-D/2-D kernels do not cover, composed from them:
 * 3-D (rank 5) Conv, ConvTranspose, MaxPool and AveragePool, and MaxPool's
 * Indices output at any spatial rank (conv.c hands these nodes here).
 *
 * - 3-D pools are separable: a 2-D pool over (H, W) of X viewed as
 *   [N, C*D, H, W], then a (kD, 1) pool over (D, Ho*Wo). The max of maxes is
 *   the max; the average of averages is the average, since the divisor (the
 *   window's cells, or its cells inside the input) is a product per dim.
 * - 3-D Conv runs the depth as batch: for each kernel depth kd, one 2-D conv
 *   of X as [N*D, C, H, W] by W[:, :, kd], whose depth slices are then picked
 *   (Pad + strided Slice) and summed.
 * - 3-D ConvTranspose likewise: one 2-D transposed conv per kd, its depth
 *   slices spread by the stride (Pad of a new axis + Reshape) and shifted to
 *   kd * dilation - pad (Pad, negative to crop), summed.
 * - MaxPool with Indices gathers every window (a host-built table of flat
 *   input indices, padding pointing at a -FLT_MAX cell appended to X), then
 *   ReduceMax and ArgMax over the window; the index of the winner is read
 *   from the same table (storage_order 1: a column-major one). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"

/* Window attributes of up to 3 spatial dims. */
typedef struct vol_win {
    int sp; /* spatial dims */
    int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
    int64_t op[3]; /* ConvTranspose output_padding */
} vol_win;

static tx_status ints_attr(tx_xnode *x, const char *name, int want, int64_t *out, int64_t def) {
    int64_t v[2 * TX_MAX_RANK];
    int n;
    tx_status st = tx_x_attr_ints(x, name, v, 2 * TX_MAX_RANK, &n);
    if (st)
        return st;
    if (n >= 0 && n != want)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s has %d entries, want %d", name, n,
                         want);
    for (int i = 0; i < want; i++) {
        out[i] = n < 0 ? def : v[i];
        if (out[i] < 0 || out[i] > INT32_MAX)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s[%d] = %lld is out of range", name,
                             i, (long long)out[i]);
    }
    return TX_STATUS_OK;
}

/* Strides, dilations, pads (auto_pad resolved) and the output size per dim,
 * for a forward window (conv, pool); ceil_mode rounds up as PyTorch does. */
static tx_status vol_forward(tx_xnode *x, vol_win *g, bool ceil_mode) {
    int64_t pads[6];
    tx_status st = ints_attr(x, "strides", g->sp, g->s, 1);
    if (!st)
        st = ints_attr(x, "dilations", g->sp, g->d, 1);
    if (!st)
        st = ints_attr(x, "pads", 2 * g->sp, pads, 0);
    if (st)
        return st;
    const char *ap = tx_attr_str(x->node, "auto_pad", "NOTSET");
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "auto_pad \"%s\"", ap);
    for (int i = 0; i < g->sp; i++) {
        if (g->s[i] < 1 || g->d[i] < 1 || g->k[i] < 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                             "kernel, strides and dilations must be positive (dim %d)", i);
        int64_t span = (g->k[i] - 1) * g->d[i] + 1;
        g->pb[i] = strcmp(ap, "NOTSET") ? 0 : pads[i];
        g->pe[i] = strcmp(ap, "NOTSET") ? 0 : pads[g->sp + i];
        if (same) {
            int64_t o = (g->in[i] + g->s[i] - 1) / g->s[i];
            int64_t tot = (o - 1) * g->s[i] + span - g->in[i];
            tot = tot < 0 ? 0 : tot;
            g->pb[i] = !strcmp(ap, "SAME_UPPER") ? tot / 2 : tot - tot / 2;
            g->pe[i] = tot - g->pb[i];
        }
        int64_t room = g->in[i] + g->pb[i] + g->pe[i] - span;
        if (room < 0)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                             "the window (%lld) is larger than the padded input (%lld) on dim %d",
                             (long long)span, (long long)(room + span), i);
        g->out[i] = (ceil_mode ? (room + g->s[i] - 1) / g->s[i] : room / g->s[i]) + 1;
        if (ceil_mode && (g->out[i] - 1) * g->s[i] >= g->in[i] + g->pb[i])
            g->out[i]--;
    }
    return TX_STATUS_OK;
}

/* The output [n, c, out...] within the session's size rule. */
static tx_status out_in_range(tx_xnode *x, int64_t n, int64_t c, const vol_win *g) {
    int64_t s[TX_MAX_RANK] = {n, c};
    memcpy(s + 2, g->out, sizeof(int64_t) * (size_t)g->sp);
    if (!tx_dims_in_range(2 + g->sp, s, TX_DIM_MAX, false))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "the output would be too large");
    return TX_STATUS_OK;
}

static tx_tensor pad_dim(tx_xb *c, tx_tensor a, int dim, int64_t b, int64_t e) {
    tx_pad_desc pd = {.mode = TX_PAD_CONSTANT};
    pd.begin[dim] = b;
    pd.end[dim] = e;
    return tx_xb_pad(c, a, &pd);
}

/* ---- pools ---- */

/* MaxPool / AveragePool of X [N, C, D, H, W] as a 2-D pool over (H, W), then
 * one over (D, Ho*Wo). */
static tx_status pool_3d(tx_xnode *x, tx_op op, tx_tensor in, const int64_t *sx, vol_win *g,
                         tx_tensor *y) {
    tx_pool_desc p = {.ceil_mode = tx_attr_int(x->node, "ceil_mode", 0) != 0,
                      .count_include_pad = tx_attr_int(x->node, "count_include_pad", 0) != 0};
    tx_pool_desc q = p;
    for (int i = 0; i < 2; i++) {
        p.kernel_shape[i] = (int)g->k[1 + i];
        p.strides[i] = (int)g->s[1 + i];
        p.dilations[i] = (int)g->d[1 + i];
        p.pads[i] = (int)g->pb[1 + i];
        p.pads[2 + i] = (int)g->pe[1 + i];
    }
    q.kernel_shape[0] = (int)g->k[0];
    q.kernel_shape[1] = 1;
    q.strides[0] = (int)g->s[0];
    q.strides[1] = 1;
    q.dilations[0] = (int)g->d[0];
    q.dilations[1] = 1;
    q.pads[0] = (int)g->pb[0];
    q.pads[2] = (int)g->pe[0];
    tx_xb cb = {.x = x}, *c = &cb;
    int64_t s1[4] = {sx[0], sx[1] * sx[2], sx[3], sx[4]};
    int64_t s2[4] = {sx[0], sx[1], sx[2], g->out[1] * g->out[2]};
    int64_t s3[5] = {sx[0], sx[1], g->out[0], g->out[1], g->out[2]};
    tx_tensor a = {0}, b = {0};
    tx_tensor v = tx_xb_reshape(c, in, 4, s1);
    a = tx_xb_track(c, c->st ? c->st : tx_pooling(x->ctx, op, v, &p, &a), a);
    v = tx_xb_reshape(c, a, 4, s2);
    b = tx_xb_track(c, c->st ? c->st : tx_pooling(x->ctx, op, v, &q, &b), b);
    tx_status st = c->st ? c->st : tx_tensor_reshape(x->ctx, b, 5, s3, y);
    tx_xb_free(c);
    return st;
}

/* MaxPool's Y and Indices through a gather of every window. */
static tx_status pool_indices(tx_xnode *x, tx_tensor in, int rx, const int64_t *sx, vol_win *g) {
    int sp = g->sp;
    bool col = tx_attr_int(x->node, "storage_order", 0) != 0;
    int64_t planes = sx[0] * sx[1], pin = tx_numel_of(sp, sx + 2), total = planes * pin;
    /* planes * prod(out) * prod(k), each factor at most 2^24, stopped past 2^24 */
    int64_t cells = planes, f[6];
    for (int i = 0; i < sp; i++)
        f[2 * i] = g->out[i], f[2 * i + 1] = g->k[i];
    for (int i = 0; i < 2 * sp && cells <= (1 << 24); i++)
        cells = f[i] > (1 << 24) ? (1 << 25) : cells * f[i];
    if (total + 1 > (1 << 24) || cells > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "MaxPool with Indices on %lld elements, %lld window cells (flat "
                         "indices are exact to 2^24)",
                         (long long)total, (long long)cells);
    int64_t pout = tx_numel_of(sp, g->out), kk = tx_numel_of(sp, g->k);
    int64_t ts[TX_MAX_RANK];
    ts[0] = sx[0];
    ts[1] = sx[1];
    for (int i = 0; i < sp; i++)
        ts[2 + i] = g->out[i];
    ts[2 + sp] = kk;
    tx_hval tab, val;
    if (!tx_hval_alloc(&tab, TX_ONNX_INT64, rx + 1, ts))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    if (!tx_hval_alloc(&val, TX_ONNX_INT64, 1, &tab.numel)) {
        tx_hval_free(&tab);
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    }
    int64_t at = 0;
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t o = 0; o < pout; o++)
            for (int64_t w = 0; w < kk; w++, at++) {
                int64_t ro = o, rw = w, row = 0, colm = 0;
                bool inside = true;
                int64_t cs[3];
                for (int i = sp - 1; i >= 0; i--) {
                    int64_t oi = ro % g->out[i], wi = rw % g->k[i];
                    ro /= g->out[i];
                    rw /= g->k[i];
                    cs[i] = oi * g->s[i] - g->pb[i] + wi * g->d[i];
                    inside = inside && cs[i] >= 0 && cs[i] < sx[2 + i];
                }
                for (int i = 0; i < sp; i++)
                    row = row * sx[2 + i] + cs[i];
                for (int i = sp - 1; i >= 0; i--)
                    colm = colm * sx[2 + i] + cs[i];
                tab.i[at] = inside ? pl * pin + row : total;
                val.i[at] = inside ? pl * pin + (col ? colm : row) : 0;
            }
    tx_tensor y = {0}, idx = {0};
    tx_xb cb = {.x = x}, *c = &cb;
    tx_tensor tt = {0}, tv = {0};
    tt = tx_xb_track(c, tx_hval_upload(x->ctx, x->node->name, &tab, &tt), tt);
    tv = tx_xb_track(c, c->st ? c->st : tx_hval_upload(x->ctx, x->node->name, &val, &tv), tv);
    tx_pad_desc pd = {.mode = TX_PAD_CONSTANT, .value = -FLT_MAX};
    pd.end[0] = 1;
    tx_tensor ext = tx_xb_pad(c, tx_xb_reshape(c, in, 1, &total), &pd);
    tx_tensor win = tx_xb_gather(c, ext, tt, 0); /* [N, C, out..., K] */
    tx_reduce_desc rd = {.n_axes = 1, .axes = {rx}, .drop_dims = true};
    if (!c->st)
        c->st = tx_reduce(x->ctx, TX_OP_REDUCE_MAX, win, &rd, &y);
    tx_tensor am = {0};
    am = tx_xb_track(c, c->st ? c->st : tx_reduce(x->ctx, TX_OP_ARGMAX, win, &rd, &am), am);
    /* the winner's entry of the value table: o * K + argmax */
    int64_t n_out = planes * pout;
    int64_t *base = malloc(sizeof(int64_t) * (size_t)n_out);
    tx_tmp_list l = {0};
    tx_tensor tb = {0};
    if (!base && !c->st)
        c->st = tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t o = 0; base && o < n_out; o++)
        base[o] = o * kk;
    if (!c->st)
        c->st = tx_x_upload_ints(x, rx, ts, base, &l, &tb);
    free(base);
    tx_tensor lin = tx_xb_binary(c, TX_OP_ADD, am, tb);
    if (!c->st)
        c->st = tx_gather(x->ctx, tv, lin, 0, &idx);
    tx_tmps_free(x, &l);
    tx_status st = tx_xb_free(c);
    tx_hval_free(&tab);
    tx_hval_free(&val);
    if (st) {
        if (y.id)
            tx_tensor_destroy(x->ctx, y);
        return st;
    }
    st = tx_x_set_dev_typed(x, 0, y, tx_x_elem(x, 0), true);
    tx_status s2 = tx_x_set_dev(x, 1, idx, TX_ONNX_INT64);
    return st ? st : s2;
}

/* A global pool of [N, C, D, H, W] as one of [N, C, D, H*W]. */
static tx_status global_volume(tx_xnode *x, tx_op op, int rx, const int64_t *sx) {
    int64_t s4[4] = {sx[0], sx[1], sx[2], tx_numel_of(rx - 3, sx + 3)}, so[TX_MAX_RANK];
    for (int i = 0; i < rx; i++)
        so[i] = i < 2 ? sx[i] : 1;
    tx_tmp_list l = {0};
    tx_tensor in, v, p, y;
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, 4, s4, &v)))
        l.t[l.n++] = v;
    if (!st && !(st = tx_pooling(x->ctx, op, v, NULL, &p)))
        l.t[l.n++] = p;
    if (!st)
        st = tx_tensor_reshape(x->ctx, p, rx, so, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev_typed(x, 0, y, tx_x_elem(x, 0), true);
}

tx_status tx_onnx_pool_volume(tx_xnode *x, tx_op op) {
    int rx;
    int64_t sx[TX_MAX_RANK];
    tx_status st = op == TX_OP_MAXPOOL ? TX_STATUS_OK : tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape(x, 0, &rx, sx)))
        return st;
    if (rx < 3 || rx > 5)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "input rank %d (1-D to 3-D pools)", rx);
    if (op == TX_OP_GLOBALMAXPOOL || op == TX_OP_GLOBALAVERAGEPOOL)
        return global_volume(x, op, rx, sx);
    vol_win g = {.sp = rx - 2};
    memcpy(g.in, sx + 2, sizeof(int64_t) * (size_t)g.sp);
    if ((st = ints_attr(x, "kernel_shape", g.sp, g.k, 0)))
        return st;
    if ((st = vol_forward(x, &g, tx_attr_int(x->node, "ceil_mode", 0) != 0)) ||
        (st = out_in_range(x, sx[0], sx[1], &g)))
        return st;
    tx_tmp_list l = {0};
    tx_tensor in, y;
    st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    bool want_idx = x->n_out > 1 && x->out[1];
    if (!st && want_idx)
        st = pool_indices(x, in, rx, sx, &g);
    else if (!st && !(st = pool_3d(x, op, in, sx, &g, &y)))
        st = tx_x_set_dev_typed(x, 0, y, tx_x_elem(x, 0), true);
    tx_tmps_free(x, &l);
    return st;
}

/* ---- Conv, ConvTranspose ---- */

/* The 2-D part of a 3-D window for tx_conv / tx_conv_transpose. */
static void conv_desc_2d(const vol_win *g, int group, tx_conv_desc *d) {
    memset(d, 0, sizeof *d);
    d->group = group;
    for (int i = 0; i < 2; i++) {
        d->strides[i] = (int)g->s[1 + i];
        d->dilations[i] = (int)g->d[1 + i];
        d->pads[i] = (int)g->pb[1 + i];
        d->pads[2 + i] = (int)g->pe[1 + i];
        d->output_padding[i] = (int)g->op[1 + i];
    }
}

/* ConvTranspose's pads and output size (output_shape or auto_pad decide the
 * pads as ONNX's reference does). */
static tx_status vol_transpose(tx_xnode *x, vol_win *g) {
    int64_t pads[6], os[3];
    tx_status st = ints_attr(x, "strides", 3, g->s, 1);
    if (!st)
        st = ints_attr(x, "dilations", 3, g->d, 1);
    if (!st)
        st = ints_attr(x, "pads", 6, pads, 0);
    if (!st)
        st = ints_attr(x, "output_padding", 3, g->op, 0);
    if (!st)
        st = ints_attr(x, "output_shape", 3, os, 0);
    if (st)
        return st;
    const char *ap = tx_attr_str(x->node, "auto_pad", "NOTSET");
    bool has_os = tx_attr_find(x->node, "output_shape") != NULL;
    for (int i = 0; i < 3; i++) {
        if (g->s[i] < 1 || g->d[i] < 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "strides, dilations must be positive");
        int64_t full = g->s[i] * (g->in[i] - 1) + g->op[i] + (g->k[i] - 1) * g->d[i] + 1;
        if (has_os || !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t want = has_os ? os[i] : g->in[i] * g->s[i];
            int64_t tot = full - want;
            if (tot < 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "output_shape %lld > %lld",
                                 (long long)want, (long long)full);
            bool upper = strcmp(ap, "SAME_LOWER") != 0;
            g->pb[i] = upper ? tot / 2 : tot - tot / 2;
            g->pe[i] = tot - g->pb[i];
        } else {
            g->pb[i] = strcmp(ap, "VALID") ? pads[i] : 0;
            g->pe[i] = strcmp(ap, "VALID") ? pads[3 + i] : 0;
        }
        g->out[i] = full - g->pb[i] - g->pe[i];
        if (g->out[i] < 1)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "output dim %d would be %lld", i,
                             (long long)g->out[i]);
    }
    return TX_STATUS_OK;
}

tx_status tx_onnx_conv_volume(tx_xnode *x, bool tr) {
    int rx, rw;
    int64_t sx[TX_MAX_RANK], sw[TX_MAX_RANK];
    tx_status st = tx_x_float_input_only(x, 0);
    if (st || (st = tx_x_shape2(x, &rx, sx, &rw, sw)))
        return st;
    int64_t group = tx_attr_int(x->node, "group", 1);
    if (rx != 5 || rw != 5 || group < 1 || sx[1] % group ||
        (tr ? sw[0] != sx[1] : sw[1] * group != sx[1]))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "X %d-D [N, C, D, H, W] and W %d-D with C = %lld, group %lld", rx, rw,
                         (long long)sx[1], (long long)group);
    vol_win g = {.sp = 3};
    memcpy(g.in, sx + 2, sizeof g.in);
    memcpy(g.k, sw + 2, sizeof g.k);
    int64_t ks[3];
    if ((st = ints_attr(x, "kernel_shape", 3, ks, 0)))
        return st;
    if (tx_attr_find(x->node, "kernel_shape") && memcmp(ks, g.k, sizeof ks))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "kernel_shape does not match W");
    int64_t n = sx[0], dd = sx[2], m = tr ? sw[1] * group : sw[0];
    if ((st = tr ? vol_transpose(x, &g) : vol_forward(x, &g, false)) ||
        (st = out_in_range(x, n, m, &g)))
        return st;
    tx_conv_desc d2;
    conv_desc_2d(&g, (int)group, &d2);
    tx_tensor in, w, bias = {0}, y = {0};
    if ((st = tx_x_dev(x, 0, &in)) || (st = tx_x_dev(x, 1, &w)) ||
        (tx_x_has(x, 2) && (st = tx_x_dev(x, 2, &bias))))
        return st;
    tx_xb cb = {.x = x}, *c = &cb;
    /* X as [N*D, C, H, W] */
    int p5[5] = {0, 2, 1, 3, 4};
    int64_t xb[4] = {n * dd, sx[1], sx[3], sx[4]};
    tx_tensor xs = tx_xb_reshape(c, tx_xb_transpose(c, in, p5), 4, xb);
    int64_t f = m * g.out[1] * g.out[2];
    tx_tensor acc = {0};
    for (int64_t kd = 0; kd < g.k[0] && !c->st; kd++) {
        int64_t w4[4] = {sw[0], sw[1], sw[3], sw[4]};
        tx_tensor wk = tx_xb_reshape(c, tx_xb_slice(c, w, 2, kd, kd + 1, 1), 4, w4);
        tx_tensor z = {0};
        z = tx_xb_track(c,
                        c->st ? c->st
                        : tr  ? tx_conv_transpose(x->ctx, xs, wk, &d2, &z)
                              : tx_conv(x->ctx, xs, wk, &d2, &z),
                        z);
        int64_t z3[3] = {n, dd, f};
        tx_tensor t;
        if (!tr) {
            /* output depth o reads input depth o * s + kd * dil - pad */
            tx_tensor zp = pad_dim(c, tx_xb_reshape(c, z, 3, z3), 1, g.pb[0], g.pe[0]);
            int64_t b0 = kd * g.d[0];
            t = tx_xb_slice(c, zp, 1, b0, b0 + (g.out[0] - 1) * g.s[0] + 1, g.s[0]);
        } else {
            /* input depth i lands on i * s + kd * dil - pad */
            int64_t z4[4] = {n, dd, 1, f}, zs[3] = {n, dd * g.s[0], f};
            tx_tensor sp = pad_dim(c, tx_xb_reshape(c, z, 4, z4), 2, 0, g.s[0] - 1);
            int64_t sh = kd * g.d[0] - g.pb[0];
            t = pad_dim(c, tx_xb_reshape(c, sp, 3, zs), 1, sh, g.out[0] - sh - dd * g.s[0]);
        }
        acc = acc.id ? tx_xb_binary(c, TX_OP_ADD, acc, t) : t;
    }
    int64_t y5[5] = {n, g.out[0], m, g.out[1], g.out[2]};
    tx_tensor r = tx_xb_transpose(c, tx_xb_reshape(c, acc, 5, y5), p5);
    if (bias.id) {
        int64_t b4[4] = {m, 1, 1, 1};
        r = tx_xb_binary(c, TX_OP_ADD, r, tx_xb_reshape(c, bias, 4, b4));
    }
    if (x->act != TX_OP_NONE)
        r = tx_xb_act(c, x->act, r, x->act_alpha, x->act_beta);
    st = c->st ? c->st : tx_identity(x->ctx, r, &y);
    tx_xb_free(c);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}
