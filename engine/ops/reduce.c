/* REDUCE family front: ReduceSum/Mean/Max/Min/Prod/L2/SumSquare/LogSumExp
 * and ArgMax/ArgMin, and the reduction plan that Softmax and the
 * normalizations share; kernels in engine/gpu/reduce.c and
 * engine/cpu/reduce.c. */
#include <string.h>

#include "../device.h"

void tx_reduce_plan_make(int rank, const int64_t *shape, const bool *reduced, tx_reduce_plan *p) {
    memset(p, 0, sizeof *p);
    int64_t stride[TX_MAX_RANK];
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= shape[i];
    }
    /* Merge runs of kept / reduced dims (size-1 dims belong to neither). */
    int64_t ks[3], kt[3], rs[3], rt[3];
    int nk = 0, nr = 0, last = -1; /* last: 0 kept, 1 reduced */
    p->nout = 1;
    p->R = 1;
    for (int i = 0; i < rank; i++) {
        if (reduced[i])
            p->R *= shape[i];
        else
            p->nout *= shape[i];
        if (shape[i] == 1)
            continue;
        int kind = reduced[i] ? 1 : 0;
        if (kind == last) {
            if (kind) {
                rs[nr - 1] *= shape[i];
                rt[nr - 1] = stride[i];
            } else {
                ks[nk - 1] *= shape[i];
                kt[nk - 1] = stride[i];
            }
        } else if (kind) {
            TX_ASSERT(nr < 3);
            rs[nr] = shape[i];
            rt[nr++] = stride[i];
        } else {
            TX_ASSERT(nk < 3);
            ks[nk] = shape[i];
            kt[nk++] = stride[i];
        }
        last = kind;
    }
    for (int i = 0; i < 3; i++) {
        int ik = i - (3 - nk), ir = i - (3 - nr);
        p->ksz[i] = ik >= 0 ? (int)ks[ik] : 1;
        p->kst[i] = ik >= 0 ? (int)kt[ik] : 0;
        p->rsz[i] = ir >= 0 ? (int)rs[ir] : 1;
        p->rst[i] = ir >= 0 ? (int)rt[ir] : 0;
    }
    if (p->R == 0)
        for (int i = 0; i < 3; i++)
            p->rsz[i] = 1;
    p->vec = nr > 0 && p->R > 0 && p->rst[2] == 1 && p->rsz[2] % 4 == 0;
    p->kvec = nk > 0 && p->kst[2] == 1 && p->ksz[2] % 4 == 0;
}

/* Parses ONNX axes into a mask; fails naming the op and x's shape. */
tx_status tx_axes_mask(tx_ctx *ctx, const char *name, const tx_slot *xs, int n_axes,
                       const int *axes, bool *mask) {
    memset(mask, 0, TX_MAX_RANK * sizeof *mask);
    char sh[160];
    tx_shape_str(sh, sizeof sh, xs->rank, xs->shape);
    if (n_axes < 0 || n_axes > TX_MAX_RANK)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %d axes given for x %s", name, n_axes,
                       sh);
    for (int i = 0; i < n_axes; i++) {
        int a = axes[i];
        if (a < -xs->rank || a >= xs->rank)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "%s: axis %d is out of range for x %s (rank %d)", name, a, sh, xs->rank);
        if (a < 0)
            a += xs->rank;
        if (mask[a])
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "%s: axis %d is repeated in axes for x %s", name, axes[i], sh);
        mask[a] = true;
    }
    return TX_STATUS_OK;
}

/* mean_square: op's checks and naming, the mean of x^2 (the MSE loss's) */
static tx_status reduce_run(tx_ctx *ctx, tx_op op, bool mean_square, tx_tensor x,
                            const tx_reduce_desc *desc, tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_REDUCE, "tx_reduce", "a reduction", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    tx_reduce_desc d = desc ? *desc : (tx_reduce_desc){0};
    bool arg = op == TX_OP_ARGMAX || op == TX_OP_ARGMIN;
    bool int_ok = arg || op == TX_OP_REDUCE_SUM || op == TX_OP_REDUCE_MAX || op == TX_OP_REDUCE_MIN;
    tx_slot *xs;
    st = tx_check_input(ctx, name, "x", x, !int_ok, &xs);
    if (st)
        return st;
    bool mask[TX_MAX_RANK];
    char sh[160];
    tx_shape_str(sh, sizeof sh, xs->rank, xs->shape);
    if (arg) {
        if (d.n_axes > 1)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: takes one axis, got %d (x %s)",
                           name, d.n_axes, sh);
        if (xs->rank == 0)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: x %s has no axis to reduce", name,
                           sh);
        int axis = d.n_axes ? d.axes[0] : 0;
        st = tx_axes_mask(ctx, name, xs, 1, &axis, mask);
        if (!st && xs->shape[axis < 0 ? axis + xs->rank : axis] == 0)
            st = tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: axis %d of x %s is empty", name, axis,
                         sh);
    } else {
        st = tx_axes_mask(ctx, name, xs, d.n_axes, d.axes, mask);
        if (d.n_axes == 0 && !d.noop_with_empty_axes)
            for (int i = 0; i < xs->rank; i++)
                mask[i] = true;
    }
    if (st)
        return st;
    bool noop = !arg && d.n_axes == 0 && d.noop_with_empty_axes;
    int64_t oshape[TX_MAX_RANK];
    int orank = 0;
    for (int i = 0; i < xs->rank; i++) {
        if (!mask[i])
            oshape[orank++] = xs->shape[i];
        else if (!d.drop_dims)
            oshape[orank++] = 1;
    }
    tx_reduce_acc acc = TX_REDUCE_ACC_SUM;
    int fin = 0;
    switch (op) {
    case TX_OP_REDUCE_SUM: break;
    case TX_OP_REDUCE_MEAN: fin = 1; break;
    case TX_OP_REDUCE_MAX: acc = TX_REDUCE_ACC_MAX; break;
    case TX_OP_REDUCE_MIN: acc = TX_REDUCE_ACC_MIN; break;
    case TX_OP_REDUCE_PROD: acc = TX_REDUCE_ACC_PROD; break;
    case TX_OP_REDUCE_L2:
        acc = TX_REDUCE_ACC_SUMSQ;
        fin = 2;
        break;
    case TX_OP_REDUCE_SUM_SQUARE: acc = TX_REDUCE_ACC_SUMSQ; break;
    case TX_OP_REDUCE_L1: acc = TX_REDUCE_ACC_L1; break;
    case TX_OP_REDUCE_LOG_SUM: fin = 5; break;
    case TX_OP_REDUCE_LOG_SUM_EXP:
        acc = TX_REDUCE_ACC_LSE;
        fin = 3;
        break;
    case TX_OP_ARGMAX:
        acc = TX_REDUCE_ACC_ARGMAX;
        fin = 4;
        break;
    case TX_OP_ARGMIN:
        acc = TX_REDUCE_ACC_ARGMIN;
        fin = 4;
        break;
    default: TX_ASSERT(0);
    }
    if (mean_square) {
        acc = TX_REDUCE_ACC_SUMSQ;
        fin = 1;
    }
    if (noop) { /* ONNX: x unchanged, whatever the reduction */
        acc = TX_REDUCE_ACC_SUM;
        fin = 0;
    }
    tx_dtype odt = arg ? TX_DTYPE_INT32 : xs->dtype;
    tx_reduce_plan plan;
    tx_reduce_plan_make(xs->rank, xs->shape, mask, &plan);
    if (plan.R > (1 << 24) && arg)
        return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                       "%s: axis of x %s is longer than 2^24 (indices are floats)", name, sh);
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *[]){xs}, 1, orank, oshape, odt, &dev, &y);
    if (st)
        return st;
    tx_reduce_call c = {.op = op,
                        .acc = acc,
                        .fin = fin,
                        .last = d.select_last_index,
                        .plan = plan,
                        .x = tx_slot_get(ctx, x),
                        .y = tx_slot_get(ctx, y)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, reduce, c), y, out);
}

tx_status tx_reduce(tx_ctx *ctx, tx_op op, tx_tensor x, const tx_reduce_desc *desc,
                    tx_tensor *out) {
    tx_status st = reduce_run(ctx, op, false, x, desc, out);
    if (!st && tx_tape_recording(ctx))
        tx_tape_note(ctx, op, &x, 1, &(tx_op_attrs){.reduce = desc ? *desc : (tx_reduce_desc){0}},
                     NULL, *out, (tx_tensor){0});
    return st;
}

tx_status tx_reduce_mean_square(tx_ctx *ctx, tx_tensor x, tx_tensor *out) {
    return reduce_run(ctx, TX_OP_REDUCE_SUM_SQUARE, true, x, &(tx_reduce_desc){.drop_dims = true},
                      out);
}
