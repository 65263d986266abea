/* NARY family: where(cond, a, b) and the variadic sum / mean / min_n / max_n,
 * with numpy broadcasting over every input. One draw folds up to 4 inputs;
 * more inputs take more passes, each reading the running result as its
 * input 0 (a full-size operand: texel reads, no index math). */
#include <string.h>

#include "../internal.h"

#define NX_PER_PASS 4

static const char *const k_w[4] = {"p_w0", "p_w1", "p_w2", "p_w3"};
static const char *const k_d[6] = {"p_d0", "p_d1", "p_d2", "p_d3", "p_d4", "p_d5"};
static const char *const k_s[4][6] = {
    {"p_s0_0", "p_s0_1", "p_s0_2", "p_s0_3", "p_s0_4", "p_s0_5"},
    {"p_s1_0", "p_s1_1", "p_s1_2", "p_s1_3", "p_s1_4", "p_s1_5"},
    {"p_s2_0", "p_s2_1", "p_s2_2", "p_s2_3", "p_s2_4", "p_s2_5"},
    {"p_s3_0", "p_s3_1", "p_s3_2", "p_s3_3", "p_s3_4", "p_s3_5"},
};

/* One pass over `n` inputs (slots s, each either full-size or broadcast). */
static tx_status nary_pass(tx_ctx *ctx, tx_op op, tx_slot *const *s, int n, const int64_t *dout,
                           const tx_slot *ys, float scale) {
    const char *name = tx_op_name(op);
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_NARY, "nary", n, 1);
    tx_req_define_int(&r, "TX_N", n);
    if (op == TX_OP_WHERE)
        tx_req_define(&r, "TX_WHERE", "1");
    else
        tx_req_define(&r, "TX_OP",
                      op == TX_OP_MIN_N ? "nx_min" : (op == TX_OP_MAX_N ? "nx_max" : "nx_sum"));
    if (scale != 1.0f)
        tx_req_define(&r, "TX_SCALE", "1");
    bool general = false;
    int mode[NX_PER_PASS];
    for (int k = 0; k < n; k++) {
        mode[k] = s[k]->numel == ys->numel ? 0 : (s[k]->numel == 1 ? 1 : 2);
        general |= mode[k] == 2;
        char def[8];
        snprintf(def, sizeof def, "TX_M%d", k);
        tx_req_define_int(&r, def, mode[k]);
    }
    if (general)
        tx_req_define(&r, "TX_GENERAL", "1");
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_n", (int)ys->numel);
    for (int k = 0; k < n; k++)
        tx_req_int(&r, k_w[k], s[k]->st->tex.wshift);
    if (general)
        for (int i = 0; i < 6; i++)
            tx_req_int(&r, k_d[i], (int)dout[i]);
    for (int k = 0; k < n; k++) {
        if (mode[k] != 2)
            continue;
        int64_t e = 1;
        int64_t st[6];
        for (int i = 5; i >= 0; i--) {
            int ii = i - (6 - s[k]->rank);
            int64_t dk = ii >= 0 ? s[k]->shape[ii] : 1;
            st[i] = dk == 1 ? 0 : e;
            e *= dk;
        }
        for (int i = 0; i < 6; i++)
            tx_req_int(&r, k_s[k][i], (int)st[i]);
    }
    if (scale != 1.0f)
        tx_req_float(&r, "p_scale", scale);
    tx_status st = tx_cache_bind(ctx, name, &r);
    if (!st) {
        const tx_texture *ins[NX_PER_PASS];
        for (int k = 0; k < n; k++)
            ins[k] = &s[k]->st->tex;
        const tx_texture *outs[1] = {&ys->st->tex};
        st = tx_draw(ctx, name, ins, n, outs, 1);
    }
    return st;
}

tx_status tx_nary(tx_ctx *ctx, tx_op op, const tx_tensor *inputs, int n_inputs, tx_tensor *out) {
    tx_status st = tx_op_enter(ctx, op, TX_FAMILY_NARY, "tx_nary", "an n-ary op", out);
    if (st)
        return st;
    const char *name = tx_op_name(op);
    if (!inputs)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: inputs is NULL", name);
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
    /* Passes: the result of pass p is input 0 of pass p + 1. */
    int per_first = op == TX_OP_WHERE ? 3 : NX_PER_PASS;
    int n_pass = 1, left = n_inputs - per_first;
    while (left > 0) {
        n_pass++;
        left -= NX_PER_PASS - 1;
    }
    tx_tensor acc[2] = {{0}, {0}};
    st = TX_STATUS_OK;
    int next = 0;
    for (int p = 0; p < n_pass && !st; p++) {
        int cur = p % 2;
        st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, rank, oshape, dtype, &acc[cur]);
        if (st)
            break;
        tx_slot *s[NX_PER_PASS];
        int n = 0;
        if (p > 0)
            s[n++] = tx_slot_get(ctx, acc[1 - cur]);
        while (n < NX_PER_PASS && next < n_inputs && !(op == TX_OP_WHERE && n == 3))
            s[n++] = tx_slot_get(ctx, inputs[next++]);
        tx_slot *ys = tx_slot_get(ctx, acc[cur]);
        float scale = op == TX_OP_MEAN && p == n_pass - 1 ? 1.0f / (float)n_inputs : 1.0f;
        if (ys->numel > 0)
            st = nary_pass(ctx, op, s, n, dout, ys, scale);
        if (p > 0) {
            tx_tensor_destroy(ctx, acc[1 - cur]);
            acc[1 - cur] = (tx_tensor){0};
        }
    }
    TX_ASSERT(st || next == n_inputs);
    int last = (n_pass - 1) % 2;
    if (st) {
        for (int i = 0; i < 2; i++)
            if (acc[i].id)
                tx_tensor_destroy(ctx, acc[i]);
        return st;
    }
    *out = acc[last];
    return TX_STATUS_OK;
}
