/* NARY family front: where(cond, a, b) and the variadic sum / mean / min_n /
 * max_n, with numpy broadcasting over every input; kernels in
 * engine/gpu/nary.c and engine/cpu/nary.c. */
#include <string.h>

#include "../device.h"

static tx_status nary_run(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs,
                          tx_tensor *out) {
    tx_status st = tx_op_enter_n(ctx, op, TX_FAMILY_NARY, "tx_nary", "an n-ary op", inputs, out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    if (op == TX_OP_WHERE ? n_inputs != 3 : (n_inputs < 1 || n_inputs > 1024))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %d inputs given", name, n_inputs);
    int64_t dout[6] = {1, 1, 1, 1, 1, 1};
    int rank = 0;
    tx_dtype dtype = TX_DTYPE_FLOAT32;
    for (int k = 0; k < n_inputs; k++) {
        char arg[32];
        snprintf(arg, sizeof arg, "input %d", k);
        tx_slot *s;
        st = tx_check_tensor(ctx, name, arg, inputs[k], &s);
        if (st)
            return st;
        /* where's condition may be any dtype; the values decide the result's */
        int first = op == TX_OP_WHERE ? 1 : 0;
        if (k == first)
            dtype = s->dtype;
        else if (k > first && s->dtype != dtype)
            return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: input %d is %s, input %d is %s",
                           name, k, s->dtype == TX_DTYPE_INT32 ? "int32" : "float32", first,
                           dtype == TX_DTYPE_INT32 ? "int32" : "float32");
        if (s->rank > rank)
            rank = s->rank;
        for (int i = 0; i < s->rank; i++) {
            int64_t *d = &dout[6 - s->rank + i];
            int64_t v = s->shape[i];
            if (*d != v && *d != 1 && v != 1) {
                char a[160];
                tx_shape_str(a, sizeof a, s->rank, s->shape);
                return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                               "%s: input %d %s does not broadcast with the inputs before it "
                               "(dim %lld vs %lld)",
                               name, k, a, (long long)*d, (long long)v);
            }
            if (*d == 1)
                *d = v;
        }
    }
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < rank; i++)
        oshape[i] = dout[6 - rank + i];
    tx_device dev;
    tx_tensor y = {0};
    const tx_slot **slots;
    st = tx_op_output_n(ctx, name, inputs, n_inputs, rank, oshape, dtype, &dev, &y, &slots);
    if (st)
        return st;
    tx_nary_call c = {.op = op,
                      .n = n_inputs,
                      .scale = op == TX_OP_MEAN ? 1.0f / (float)n_inputs : 1.0f,
                      .xs = slots,
                      .y = tx_slot_get(ctx, y)};
    memcpy(c.dims, dout, sizeof c.dims);
    st = TX_OP_KERNEL(ctx, dev, nary, c);
    free(slots);
    return tx_op_finish(ctx, st, y, out);
}

tx_status tx_nary(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs, tx_tensor *out) {
    tx_status st = nary_run(ctx, op, inputs, n_inputs, out);
    if (!st)
        tx_tape_note(ctx, op, inputs, n_inputs, NULL, NULL, *out, (tx_tensor){0});
    return st;
}
