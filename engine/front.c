/* The steps every op front shares around its device kernel (declared in device.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

tx_status tx_op_device_keep(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n,
                            unsigned keep, tx_device *out) {
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (!ins[i])
            continue;
        if (ins[i]->st->n_parts) { /* fronts that take split tensors never get here with one */
            char b[160];
            tx_shape_str(b, sizeof b, ins[i]->rank, ins[i]->shape);
            return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                           "%s: input %d (shape %s) is split across %d textures (larger than one "
                           "MAX_TEXTURE_SIZE %d texture); only gather, matmul, elementwise ops, "
                           "transpose, concat and slice take split tensors",
                           op, i, b, ins[i]->st->n_parts, ctx->max_tex);
        }
        if (first < 0)
            first = i;
        else if (ins[i]->st->dev != ins[first]->st->dev)
            return tx_fail(ctx, TX_STATUS_DEVICE_MISMATCH,
                           "%s: input %d is on the %s, input %d on the %s: move one with "
                           "tx_tensor_to",
                           op, first, tx_device_name(ins[first]->st->dev), i,
                           tx_device_name(ins[i]->st->dev));
    }
    *out = first < 0 ? ctx->device : ins[first]->st->dev;
    tx_status st = *out == TX_DEVICE_GPU ? tx_ctx_need_gl(ctx, op) : TX_STATUS_OK;
    if (st)
        return st;
    if (*out == TX_DEVICE_GPU && ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    for (int i = 0; i < n && *out == TX_DEVICE_GPU; i++)
        if (ins[i] && !(i < 32 && (keep >> i & 1u)) && (st = tx_gpu_flatten(ctx, op, ins[i]->st)))
            return st;
    return TX_STATUS_OK;
}

tx_status tx_op_device(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n,
                       tx_device *out) {
    return tx_op_device_keep(ctx, op, ins, n, 0, out);
}

int tx_broadcast(int p, int ra, const int64_t *a, int rb, const int64_t *b, int64_t *pa,
                 int64_t *pb, int64_t *dims, int64_t *sa, int64_t *sb) {
    for (int i = 0; i < p; i++) {
        int ia = i - (p - ra), ib = i - (p - rb);
        pa[i] = ia >= 0 ? a[ia] : 1;
        pb[i] = ib >= 0 ? b[ib] : 1;
        if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1)
            return i;
        dims[i] = pa[i] == 1 ? pb[i] : pa[i];
    }
    int64_t ea = 1, eb = 1;
    for (int i = p - 1; i >= 0; i--) {
        sa[i] = pa[i] == 1 ? 0 : ea;
        sb[i] = pb[i] == 1 ? 0 : eb;
        ea *= pa[i];
        eb *= pb[i];
    }
    return -1;
}

tx_status tx_check_residual(tx_ctx *ctx, const char *op, tx_tensor r, const tx_slot *x, int rank,
                            const int64_t *shape, tx_slot **rs) {
    tx_status st = tx_check_input(ctx, op, "residual", r, true, rs);
    if (st)
        return st;
    if ((*rs)->st->dev != x->st->dev)
        return tx_fail(ctx, TX_STATUS_DEVICE_MISMATCH,
                       "%s: the residual is on the %s, input 0 on the %s: move one with "
                       "tx_tensor_to",
                       op, tx_device_name((*rs)->st->dev), tx_device_name(x->st->dev));
    if ((*rs)->rank == rank && !memcmp((*rs)->shape, shape, sizeof(int64_t) * (size_t)rank))
        return TX_STATUS_OK;
    char want[160], got[160];
    tx_shape_str(want, sizeof want, rank, shape);
    tx_shape_str(got, sizeof got, (*rs)->rank, (*rs)->shape);
    return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: residual %s must have y's shape %s", op, got,
                   want);
}

tx_status tx_check_act(tx_ctx *ctx, const char *op, tx_op act, bool clip_ok, float lo, float hi,
                       float alpha, float beta) {
    if (act == TX_OP_NONE)
        return TX_STATUS_OK;
    bool clip = clip_ok && act == TX_OP_CLIP, par = tx_op_family(act) == TX_FAMILY_ACT;
    if (tx_op_family(act) != TX_FAMILY_UNARY && !clip && !par)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: activation %d is not a unary op%s or an activation with alpha/beta", op,
                       (int)act, clip_ok ? ", clip" : "");
    if (clip && (isnan(lo) || isnan(hi) || lo > hi))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: clip bounds [%g, %g] are not ordered",
                       op, (double)lo, (double)hi);
    if (par && (!isfinite(alpha) || !isfinite(beta)))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: %s's alpha %g and beta %g must be finite", op, tx_op_name(act),
                       (double)alpha, (double)beta);
    return TX_STATUS_OK;
}

tx_status tx_apply_act(tx_ctx *ctx, tx_op act, float lo, float hi, tx_tensor x, tx_tensor *out) {
    if (act == TX_OP_CLIP)
        return tx_clip(ctx, x, lo, hi, out);
    if (tx_op_family(act) == TX_FAMILY_ACT)
        return tx_activation(ctx, act, x, lo, hi, out);
    return tx_unary(ctx, act, x, out);
}

void tx_act_floats(tx_op act, float lo, float hi, float alpha, float beta, float out[2]) {
    bool clip = act == TX_OP_CLIP, par = tx_op_family(act) == TX_FAMILY_ACT;
    out[0] = clip ? lo : par ? alpha : 0;
    out[1] = clip ? hi : par ? beta : 0;
}

tx_status tx_residual_act(tx_ctx *ctx, tx_tensor z, tx_tensor r, tx_op act, float lo, float hi,
                          tx_tensor *out) {
    tx_tensor sum;
    tx_status st = tx_binary(ctx, TX_OP_ADD, z, r, &sum);
    tx_tensor_destroy(ctx, z);
    if (st || act == TX_OP_NONE) {
        if (!st)
            *out = sum;
        return st;
    }
    st = tx_apply_act(ctx, act, lo, hi, sum, out);
    tx_tensor_destroy(ctx, sum);
    return st;
}

tx_status tx_op_output(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n, int rank,
                       const int64_t *shape, tx_dtype dtype, tx_device *dev, tx_tensor *y) {
    tx_status st = tx_op_device(ctx, op, ins, n, dev);
    if (st)
        return st;
    return tx_tensor_alloc(ctx, op, *dev, rank, shape, dtype, y);
}

tx_status tx_op_output_n(tx_ctx *ctx, const char *op, const tx_tensor *ins, int n, int rank,
                         const int64_t *shape, tx_dtype dtype, tx_device *dev, tx_tensor *y,
                         const tx_slot ***slots) {
    const tx_slot **s = calloc((size_t)n, sizeof *s);
    if (!s)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    for (int i = 0; i < n; i++)
        s[i] = tx_slot_get(ctx, ins[i]);
    tx_status st = tx_op_output(ctx, op, s, n, rank, shape, dtype, dev, y);
    if (st) {
        free(s);
        return st;
    }
    for (int i = 0; i < n; i++) /* the alloc may have moved the slots */
        s[i] = tx_slot_get(ctx, ins[i]);
    *slots = s;
    return TX_STATUS_OK;
}

tx_status tx_op_finish(tx_ctx *ctx, tx_status st, tx_tensor y, tx_tensor *out) {
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}
