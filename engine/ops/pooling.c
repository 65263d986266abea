/* POOL family front: MaxPool, AveragePool and their global forms, NCHW;
 * kernels in engine/gpu/pool.c and engine/cpu/pool.c. */
#include <string.h>

#include "../device.h"

static tx_status pool_run(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_pool_desc *desc,
                          tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_POOL, "tx_pooling", "a pool op", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    bool global = op == TX_OP_GLOBALMAXPOOL || op == TX_OP_GLOBALAVERAGEPOOL;
    bool is_max = op == TX_OP_MAXPOOL || op == TX_OP_GLOBALMAXPOOL;
    if (!global && !desc)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: desc (kernel_shape) is NULL", name);
    tx_slot *xs;
    st = tx_check_input(ctx, name, "x", x, true, &xs);
    if (st)
        return st;
    tx_window g;
    int64_t oshape[TX_MAX_RANK];
    if (global) {
        char s[160];
        tx_shape_str(s, sizeof s, xs->rank, xs->shape);
        if (xs->rank < 3 || xs->rank > 4)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: x %s must be [N, C, H, W] or [N, C, W]", name, s);
        memset(&g, 0, sizeof g);
        g.n = xs->shape[0];
        g.c = xs->shape[1];
        g.h = xs->rank == 4 ? xs->shape[2] : 1;
        g.w = xs->shape[xs->rank - 1];
        g.ho = g.wo = 1;
    } else {
        tx_pool_desc d = *desc;
        st = tx_window_geom(ctx, name, xs, d.kernel_shape, d.strides, d.dilations, d.pads,
                            d.auto_pad, d.ceil_mode, &g);
        if (st)
            return st;
    }
    if (g.h * g.w == 0 && g.n * g.c > 0) {
        char s[160];
        tx_shape_str(s, sizeof s, xs->rank, xs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: x %s has empty planes to pool", name, s);
    }
    oshape[0] = g.n;
    oshape[1] = g.c;
    if (xs->rank == 4)
        oshape[2] = g.ho;
    oshape[xs->rank - 1] = g.wo;
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){xs}, 1, xs->rank, oshape, TX_DTYPE_FLOAT32,
                      &dev, &y);
    if (st)
        return st;
    tx_pool_call c = {.op = op,
                      .global = global,
                      .is_max = is_max,
                      .include_pad = !global && !is_max && desc->count_include_pad,
                      .g = g,
                      .x = tx_slot_get(ctx, x),
                      .y = tx_slot_get(ctx, y)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, pool, c), y, out);
}

tx_status tx_maxpool_tiles_grad(tx_ctx *ctx, tx_tensor x, tx_tensor y, tx_tensor g,
                                const tx_window *w, tx_tensor *dx) {
    const char *name = "maxpool (gradient)";
    tx_slot *s[3];
    tx_status st = tx_check_inputs(ctx, name, 3, (const char *const[]){"x", "y", "g"},
                                   (const tx_tensor[]){x, y, g}, true, s);
    if (st)
        return st;
    TX_ASSERT(w->sh == w->kh && w->sw == w->kw && w->dh == 1 && w->dw == 1 && !w->pt && !w->pl &&
              !w->pb && !w->pr && w->ho * w->kh <= w->h && w->wo * w->kw <= w->w);
    int64_t planes = w->n * w->c;
    if (s[0]->numel != planes * w->h * w->w || s[1]->numel != planes * w->ho * w->wo ||
        s[2]->numel != s[1]->numel)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "%s: x, y and g hold %lld, %lld and %lld elements for %lld planes of "
                       "%lldx%lld pooled to %lldx%lld",
                       name, (long long)s[0]->numel, (long long)s[1]->numel, (long long)s[2]->numel,
                       (long long)planes, (long long)w->h, (long long)w->w, (long long)w->ho,
                       (long long)w->wo);
    tx_device dev;
    tx_tensor out;
    st = tx_op_output(ctx, name, (const tx_slot *[]){s[0], s[1], s[2]}, 3, s[0]->rank, s[0]->shape,
                      TX_DTYPE_FLOAT32, &dev, &out);
    if (st)
        return st;
    tx_pool_call c = {.op = TX_OP_MAXPOOL,
                      .is_max = true,
                      .g = *w,
                      .x = tx_slot_get(ctx, x),
                      .gy = tx_slot_get(ctx, y),
                      .gg = tx_slot_get(ctx, g),
                      .y = tx_slot_get(ctx, out)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, pool, c), out, dx);
}

tx_status tx_pooling(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_pool_desc *desc, tx_tensor *out) {
    tx_status st = pool_run(ctx, op, x, desc, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs at = {0};
        if (desc)
            at.pool = *desc;
        tx_tape_note(ctx, op, &x, 1, &at, NULL, *out, (tx_tensor){0});
    }
    return st;
}
