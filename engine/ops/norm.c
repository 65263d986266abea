/* NORM family: batch_norm (inference), instance_norm, layer_norm.
 *
 * instance_norm and layer_norm first reduce each group to its moments with
 * the reduction passes (ops/reduce.c, TX_REDUCE_ACC_MOMENTS: sums of x - K
 * and (x - K)^2 with K the group's first element, so var does not cancel);
 * one elementwise pass (glsl-templates/norm.glsl) then normalizes, scales and
 * shifts. batch_norm takes its mean and var as inputs: one pass. */
#include <string.h>

#include "../internal.h"

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

tx_status tx_norm(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                  const tx_norm_desc *desc, tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_NORM, "tx_norm", "a normalization", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    if (!inputs)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: inputs is NULL", name);
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
    for (int i = 0; i < n_inputs; i++) {
        st = tx_check_tensor(ctx, name, ln ? k_ln_args[i] : k_args[i], inputs[i], &s[i]);
        if (st)
            return st;
        if (s[i]->dtype != TX_DTYPE_FLOAT32)
            return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: %s must be float32", name,
                           ln ? k_ln_args[i] : k_args[i]);
    }
    tx_slot *xs = s[0];
    int64_t S = 1, C = 1, ap = 1, bp = 1;
    bool mask[TX_MAX_RANK] = {false};
    if (ln) {
        st = tx_axes_mask(ctx, name, xs, 1, &d.axis, mask);
        if (st)
            return st;
        int axis = d.axis < 0 ? d.axis + xs->rank : d.axis;
        for (int i = axis; i < xs->rank; i++) {
            mask[i] = true;
            S *= xs->shape[i];
        }
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
        for (int i = 2; i < xs->rank; i++) {
            mask[i] = true;
            S *= xs->shape[i];
        }
        char want_c[48];
        snprintf(want_c, sizeof want_c, "[%lld]", (long long)C);
        for (int i = 1; i < n_inputs; i++)
            if (s[i]->numel != C || s[i]->rank != 1)
                return fail_param(ctx, name, k_args[i], xs, s[i], want_c);
    }
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, xs->rank, xs->shape, TX_DTYPE_FLOAT32, &y);
    if (st)
        return st;
    for (int i = 0; i < n_inputs; i++)
        s[i] = tx_slot_get(ctx, inputs[i]);
    xs = s[0];
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel > 0) {
        tx_texture stats = {0};
        bool have_stats = false;
        tx_reduce_plan plan;
        if (op != TX_OP_BATCH_NORM) {
            tx_reduce_plan_make(xs->rank, xs->shape, mask, &plan);
            st = tx_reduce_run(ctx, name, &xs->st->tex, &plan, TX_REDUCE_ACC_MOMENTS, 0, false,
                               NULL, &stats);
            have_stats = !st;
        }
        if (!st) {
            tx_program_req r;
            int n_in = op == TX_OP_BATCH_NORM ? 5 : (have_stats ? 1 : 0) + n_inputs;
            tx_req_init(&r, TX_FAMILY_NORM, "norm", n_in, 1);
            tx_req_define_int(&r, "TX_MODE", op == TX_OP_BATCH_NORM ? 0 : 1);
            if (!ln)
                tx_req_define(&r, "TX_PCHAN", "1");
            if (op != TX_OP_LAYER_NORM || n_inputs == 3)
                tx_req_define(&r, "TX_BIAS", "1");
            tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
            tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
            tx_req_int(&r, "p_x_ws", xs->st->tex.wshift);
            tx_req_int(&r, "p_n", (int)ys->numel);
            tx_req_int(&r, "p_S", (int)S);
            tx_req_float(&r, "p_eps", eps);
            const tx_texture *ins[5];
            ins[0] = &xs->st->tex;
            if (op == TX_OP_BATCH_NORM) {
                for (int i = 1; i < 5; i++)
                    ins[i] = &s[i]->st->tex;
                tx_req_int(&r, "p_a_ws", s[1]->st->tex.wshift);
                tx_req_int(&r, "p_b_ws", s[2]->st->tex.wshift);
                tx_req_int(&r, "p_s_ws", s[3]->st->tex.wshift);
                tx_req_int(&r, "p_v_ws", s[4]->st->tex.wshift);
            } else {
                ins[1] = &stats;
                for (int i = 1; i < n_inputs; i++)
                    ins[i + 1] = &s[i]->st->tex;
                tx_req_int(&r, "p_s_ws", stats.wshift);
                tx_req_int(&r, "p_a_ws", s[1]->st->tex.wshift);
                tx_req_int(&r, "p_b_ws", n_inputs > 2 ? s[2]->st->tex.wshift : 0);
                tx_req_int(&r, "p_R", (int)S);
            }
            tx_req_int(&r, "p_C", (int)C);
            if (ln) {
                tx_req_int(&r, "p_ap", (int)ap);
                tx_req_int(&r, "p_bp", (int)bp);
            }
            /* A texel within one group: statistics, and per-channel or single
             * parameters, are fetched once per texel instead of per lane. */
            if (S % 4 == 0) {
                tx_req_define(&r, "TX_LANEVEC", "1");
                if (!ln || ap == 1)
                    tx_req_define(&r, "TX_ASCALAR", "1");
                else if (ap % 4 == 0)
                    tx_req_define(&r, "TX_AVEC", "1");
                if (!ln || bp == 1)
                    tx_req_define(&r, "TX_BSCALAR", "1");
                else if (bp % 4 == 0)
                    tx_req_define(&r, "TX_BVEC", "1");
            }
            st = tx_cache_bind(ctx, name, &r);
            if (!st) {
                const tx_texture *outs[1] = {&ys->st->tex};
                st = tx_draw(ctx, name, ins, n_in, outs, 1);
            }
        }
        if (have_stats)
            tx_pool_release(ctx, &stats);
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
}
