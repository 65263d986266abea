/* NORM family front: batch_norm (inference), instance_norm, layer_norm;
 * kernels in engine/gpu/norm.c and engine/cpu/norm.c. */
#include <string.h>

#include "../device.h"

static tx_status fail_param(tx_ctx *ctx, const char *name, const char *arg, const tx_slot *xs,
                            const tx_slot *ps, const char *want) {
    char a[160], b[160];
    tx_shape_str(a, sizeof a, xs->rank, xs->shape);
    tx_shape_str(b, sizeof b, ps->rank, ps->shape);
    return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: %s %s does not fit x %s (want %s)", name,
                   arg, b, a, want);
}

/* layer_norm's scale/bias: its shape (leading 1s dropped) must be a trailing
 * part of the normalized dims; returns the period in elements or -1. */
static int64_t trailing_period(const tx_slot *xs, int axis, const tx_slot *ps) {
    int pr = ps->rank;
    int lead = 0;
    while (lead < pr && ps->shape[lead] == 1)
        lead++;
    int m = pr - lead;
    if (m > xs->rank - axis)
        return -1;
    int64_t period = 1;
    for (int i = 0; i < m; i++) {
        if (ps->shape[pr - 1 - i] != xs->shape[xs->rank - 1 - i])
            return -1;
        period *= ps->shape[pr - 1 - i];
    }
    return period;
}

static tx_status norm_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                          const tx_norm_desc *desc, tx_tensor *out) {
    tx_status st =
        tx_op_enter_n(ctx, op, TX_FAMILY_NORM, "tx_norm", "a normalization", inputs, out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    int want = tx_op_arity(op);
    bool ln = op == TX_OP_LAYER_NORM;
    if (n_inputs != want && !(ln && n_inputs == 2))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: takes %d inputs, got %d", name, want,
                       n_inputs);
    tx_norm_desc d = desc ? *desc : (tx_norm_desc){0};
    float eps = d.epsilon == 0 ? 1e-5f : d.epsilon;
    if (!(eps > 0))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: epsilon %g must be positive", name,
                       (double)eps);
    static const char *const k_args[5] = {"x", "scale", "B", "mean", "var"};
    static const char *const k_ln_args[3] = {"x", "scale", "bias"};
    tx_slot *s[5];
    st = tx_check_inputs(ctx, name, n_inputs, ln ? k_ln_args : k_args, inputs, true, s);
    if (st)
        return st;
    tx_slot *xs = s[0];
    int64_t S = 1, C = 1, ap = 1, bp = 1;
    if (ln) {
        bool mask[TX_MAX_RANK]; /* validates the axis */
        st = tx_axes_mask(ctx, name, xs, 1, &d.axis, mask);
        if (st)
            return st;
        int axis = d.axis < 0 ? d.axis + xs->rank : d.axis;
        for (int i = axis; i < xs->rank; i++)
            S *= xs->shape[i];
        ap = trailing_period(xs, axis, s[1]);
        if (ap < 0)
            return fail_param(ctx, name, "scale", xs, s[1], "the normalized dims");
        if (n_inputs == 3) {
            bp = trailing_period(xs, axis, s[2]);
            if (bp < 0)
                return fail_param(ctx, name, "bias", xs, s[2], "the normalized dims");
        }
    } else {
        if (xs->rank < 2) {
            char a[160];
            tx_shape_str(a, sizeof a, xs->rank, xs->shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: x %s needs rank >= 2 (N, C, ...)",
                           name, a);
        }
        C = xs->shape[1];
        for (int i = 2; i < xs->rank; i++)
            S *= xs->shape[i];
        char want_c[48];
        snprintf(want_c, sizeof want_c, "[%lld]", (long long)C);
        for (int i = 1; i < n_inputs; i++)
            if (s[i]->numel != C || s[i]->rank != 1)
                return fail_param(ctx, name, k_args[i], xs, s[i], want_c);
    }
    tx_device dev;
    tx_tensor y;
    st = tx_op_output(ctx, name, (const tx_slot *const *)s, n_inputs, xs->rank, xs->shape,
                      TX_DTYPE_FLOAT32, &dev, &y);
    if (st)
        return st;
    for (int i = 0; i < n_inputs; i++)
        s[i] = tx_slot_get(ctx, inputs[i]);
    bool bn = op == TX_OP_BATCH_NORM;
    tx_norm_call c = {.op = op,
                      .eps = eps,
                      .G = S > 0 ? s[0]->numel / S : 0,
                      .S = S,
                      .C = C,
                      .ap = ap,
                      .bp = bp,
                      .x = s[0],
                      .scale = s[1],
                      .bias = n_inputs > 2 ? s[2] : NULL,
                      .mean = bn ? s[3] : NULL,
                      .var = bn ? s[4] : NULL,
                      .y = tx_slot_get(ctx, y)};
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, norm, c), y, out);
}

tx_status tx_norm(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                  const tx_norm_desc *desc, tx_tensor *out) {
    tx_status st = norm_run(ctx, op, inputs, n_inputs, desc, out);
    if (!st && tx_tape_recording(ctx))
        tx_tape_note(ctx, op, inputs, n_inputs,
                     &(tx_op_attrs){.norm = desc ? *desc : (tx_norm_desc){0}}, NULL, *out,
                     (tx_tensor){0});
    return st;
}
