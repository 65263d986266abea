/* NORM family on the GPU. instance_norm and layer_norm first reduce each
 * group to its moments with the reduction passes (gpu/reduce.c,
 * TX_REDUCE_ACC_MOMENTS: sums of x - K and (x - K)^2 with K the group's first
 * element, so var does not cancel); one elementwise pass
 * (glsl-templates/norm.glsl) then normalizes, scales and shifts. batch_norm
 * takes its mean and var as inputs: one pass. */
#include "reduce.h"

tx_status tx_gpu_norm(tx_ctx *ctx, const tx_norm_call *c) {
    const char *name = tx_op_name(c->op);
    bool bn = c->op == TX_OP_BATCH_NORM, ln = c->op == TX_OP_LAYER_NORM;
    const tx_slot *xs = c->x, *ys = c->y;
    tx_texture stats = {0};
    if (!bn) {
        tx_reduce_plan plan;
        tx_reduce_plan_rows(c->G, c->S, 1, &plan);
        tx_status st = tx_reduce_run(ctx, name, &xs->st->tex, &plan, TX_REDUCE_ACC_MOMENTS, 0,
                                     false, NULL, &stats);
        if (st)
            return st;
    }
    tx_program_req r;
    int n_in = bn ? 5 : 3 + (c->bias ? 1 : 0);
    tx_req_init(&r, TX_FAMILY_NORM, "norm", n_in, 1);
    tx_req_define_int(&r, "TX_MODE", bn ? 0 : 1);
    if (!ln)
        tx_req_define(&r, "TX_PCHAN", "1");
    if (c->bias)
        tx_req_define(&r, "TX_BIAS", "1");
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_x_ws", xs->st->tex.wshift);
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_S", (int)c->S);
    tx_req_float(&r, "p_eps", c->eps);
    const tx_texture *ins[5];
    ins[0] = &xs->st->tex;
    if (bn) {
        ins[1] = &c->scale->st->tex;
        ins[2] = &c->bias->st->tex;
        ins[3] = &c->mean->st->tex;
        ins[4] = &c->var->st->tex;
        tx_req_int(&r, "p_a_ws", c->scale->st->tex.wshift);
        tx_req_int(&r, "p_b_ws", c->bias->st->tex.wshift);
        tx_req_int(&r, "p_s_ws", c->mean->st->tex.wshift);
        tx_req_int(&r, "p_v_ws", c->var->st->tex.wshift);
    } else {
        ins[1] = &stats;
        ins[2] = &c->scale->st->tex;
        if (c->bias)
            ins[3] = &c->bias->st->tex;
        tx_req_int(&r, "p_s_ws", stats.wshift);
        tx_req_int(&r, "p_a_ws", c->scale->st->tex.wshift);
        tx_req_int(&r, "p_b_ws", c->bias ? c->bias->st->tex.wshift : 0);
        tx_req_int(&r, "p_R", (int)c->S);
    }
    tx_req_int(&r, "p_C", (int)c->C);
    if (ln) {
        tx_req_int(&r, "p_ap", (int)c->ap);
        tx_req_int(&r, "p_bp", (int)c->bp);
    }
    /* A texel within one group: statistics, and per-channel or single
     * parameters, are fetched once per texel instead of per lane. */
    if (c->S % 4 == 0) {
        tx_req_define(&r, "TX_LANEVEC", "1");
        if (!ln || c->ap == 1)
            tx_req_define(&r, "TX_ASCALAR", "1");
        else if (c->ap % 4 == 0)
            tx_req_define(&r, "TX_AVEC", "1");
        if (!ln || c->bp == 1)
            tx_req_define(&r, "TX_BSCALAR", "1");
        else if (c->bp % 4 == 0)
            tx_req_define(&r, "TX_BVEC", "1");
    }
    const tx_texture *outs[1] = {&ys->st->tex};
    tx_status st = tx_gpu_run(ctx, name, &r, ins, n_in, outs, 1);
    if (!bn)
        tx_pool_release(ctx, &stats);
    return st;
}
