/* Op tables generated from texel_ops.def, and tx_op_run. */
#include <string.h>

#include "../internal.h"

static const char *const k_names[TX_OP_COUNT_] = {
    [TX_OP_NONE] = "none",
#define TX_OP(ENUM, name, family, arity) [TX_OP_##ENUM] = #name,
#include "texel_ops.def"
#undef TX_OP
};

static const tx_family k_families[TX_OP_COUNT_] = {
#define TX_OP(ENUM, name, family, arity) [TX_OP_##ENUM] = TX_FAMILY_##family,
#include "texel_ops.def"
#undef TX_OP
};

static const int k_arity[TX_OP_COUNT_] = {
#define TX_OP(ENUM, name, family, arity) [TX_OP_##ENUM] = arity,
#include "texel_ops.def"
#undef TX_OP
};

const char *tx_op_name(tx_op op) {
    if ((unsigned)op >= TX_OP_COUNT_)
        return "?";
    return k_names[op];
}

tx_op tx_op_from_name(const char *name) {
    if (!name)
        return TX_OP_NONE;
    for (int i = 1; i < TX_OP_COUNT_; i++)
        if (strcmp(k_names[i], name) == 0)
            return (tx_op)i;
    return TX_OP_NONE;
}

int tx_op_arity(tx_op op) {
    return (unsigned)op < TX_OP_COUNT_ ? k_arity[op] : 0;
}

tx_family tx_op_family(tx_op op) {
    if (op <= TX_OP_NONE || op >= TX_OP_COUNT_)
        return TX_FAMILY_COUNT_;
    return k_families[op];
}

tx_status tx_op_begin(tx_ctx *ctx, const char *name, const void *out) {
    /* no lost-context check here: tx_op_device refuses GPU work while lost,
     * and the CPU device runs on */
    return tx_check_arg(ctx, name, "out", out != NULL);
}

tx_status tx_op_begin_operands(tx_ctx *ctx, const char *name, const void *out,
                               const char *const names[3], tx_tensor a, tx_tensor b, tx_tensor bias,
                               tx_slot *s[3]) {
    tx_status st = tx_op_begin(ctx, name, out);
    s[0] = s[1] = s[2] = NULL;
    return st ? st
              : tx_check_inputs(ctx, name, bias.id ? 3 : 2, names, (const tx_tensor[]){a, b, bias},
                                false, s);
}

tx_status tx_op_enter(tx_ctx *ctx, tx_op op, tx_family fam, const char *api, const char *what,
                      const void *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (tx_op_family(op) != fam)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s (%d) is not %s", api,
                       tx_op_name(op), (int)op, what);
    return tx_op_begin(ctx, tx_op_name(op), out);
}

tx_status tx_op_enter_n(tx_ctx *ctx, tx_op op, tx_family fam, const char *api, const char *what,
                        const tx_tensor *inputs, const void *out) {
    tx_status st = tx_op_enter(ctx, op, fam, api, what, out);
    return st ? st : tx_check_arg(ctx, tx_op_name(op), "inputs", inputs != NULL);
}

tx_status tx_op_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                    const tx_op_attrs *attrs, tx_tensor *out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!inputs || !out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_op_run: %s is NULL",
                       !inputs ? "inputs" : "out");
    tx_family fam = tx_op_family(op);
    if (fam == TX_FAMILY_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_op_run: unknown op %d", (int)op);
    int want = k_arity[op];
    /* optional inputs: a matmul's or conv's bias (third) and residual
     * (fourth), a resize's residual (second), layer_norm's bias; a variadic
     * op (want 0) takes any number */
    bool biased =
        fam == TX_FAMILY_MATMUL || fam == TX_FAMILY_CONV || fam == TX_FAMILY_CONV_TRANSPOSE;
    bool optional_last = (biased && (n_inputs == 3 || n_inputs == 4)) ||
                         ((op == TX_OP_LAYER_NORM || op == TX_OP_RESIZE) && n_inputs == 2) ||
                         (want == 0 && n_inputs >= 1);
    if (n_inputs != want && !optional_last)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: takes %d inputs, got %d", k_names[op],
                       want, n_inputs);
    tx_op_attrs a = attrs ? *attrs : (tx_op_attrs){0};
    if (tx_op_outputs(op, &a) != 1)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: has %d outputs here: use tx_op_run_multi", k_names[op],
                       tx_op_outputs(op, &a));
    switch (fam) {
    case TX_FAMILY_UNARY: return tx_unary(ctx, op, inputs[0], out);
    case TX_FAMILY_CLIP: return tx_clip(ctx, inputs[0], a.lo, a.hi, out);
    case TX_FAMILY_BINARY: return tx_binary(ctx, op, inputs[0], inputs[1], out);
    case TX_FAMILY_MATMUL:
        if (n_inputs >= 3) /* a, b, bias[, residual] */
            a.matmul.bias = inputs[2];
        if (n_inputs == 4)
            a.matmul.residual = inputs[3];
        return tx_matmul(ctx, inputs[0], inputs[1], &a.matmul, out);
    case TX_FAMILY_CONV:
    case TX_FAMILY_CONV_TRANSPOSE:
        if (n_inputs >= 3) /* x, w, bias[, residual] */
            a.conv.bias = inputs[2];
        if (n_inputs == 4)
            a.conv.residual = inputs[3];
        return fam == TX_FAMILY_CONV ? tx_conv(ctx, inputs[0], inputs[1], &a.conv, out)
                                     : tx_conv_transpose(ctx, inputs[0], inputs[1], &a.conv, out);
    case TX_FAMILY_POOL: return tx_pooling(ctx, op, inputs[0], &a.pool, out);
    case TX_FAMILY_REDUCE: return tx_reduce(ctx, op, inputs[0], &a.reduce, out);
    case TX_FAMILY_SOFTMAX: return tx_softmax(ctx, op, inputs[0], &a.softmax, out);
    case TX_FAMILY_NORM: return tx_norm(ctx, op, inputs, n_inputs, &a.norm, out);
    case TX_FAMILY_ACT: return tx_activation(ctx, op, inputs[0], a.alpha, a.beta, out);
    case TX_FAMILY_CAST: return tx_cast(ctx, inputs[0], a.cast_to, a.cast_bool, out);
    case TX_FAMILY_NARY: return tx_nary(ctx, op, inputs, n_inputs, out);
    case TX_FAMILY_MOVE: return tx_move_run(ctx, op, inputs, n_inputs, &a, out, 1);
    case TX_FAMILY_RESIZE:
        if (n_inputs == 2) /* x[, residual] */
            a.move.resize.residual = inputs[1];
        return tx_resize(ctx, inputs[0], &a.move.resize, out);
    default: break;
    }
    return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_op_run: unknown op %d", (int)op);
}

int tx_op_outputs(tx_op op, const tx_op_attrs *attrs) {
    if (op == TX_OP_SPLIT && attrs && attrs->move.n_split > 1)
        return attrs->move.n_split;
    return 1;
}

tx_status tx_op_run_multi(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                          const tx_op_attrs *attrs, tx_tensor *outs, int n_outs) {
    tx_status st = tx_check_arg(ctx, "tx_op_run_multi", "outs", outs != NULL);
    if (st)
        return st;
    if (n_outs != tx_op_outputs(op, attrs))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: has %d outputs, %d requested",
                       tx_op_name(op), tx_op_outputs(op, attrs), n_outs);
    if (n_outs == 1)
        return tx_op_run(ctx, op, inputs, n_inputs, attrs, outs);
    if (!inputs)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_op_run_multi: inputs is NULL");
    if (n_inputs != k_arity[op])
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: takes %d inputs, got %d", k_names[op],
                       k_arity[op], n_inputs);
    return tx_move_run(ctx, op, inputs, n_inputs, attrs, outs, n_outs);
}
