/* SOFTMAX family on the GPU. The reduction passes (gpu/reduce.c) compute
 * each row's (max, sum of exp(x - max)) as a tree in one sweep over x (the
 * online log-sum-exp recurrence); one elementwise pass
 * (glsl-templates/softmax.glsl) then writes exp(x - max) / sum or
 * x - max - log(sum). Max subtraction keeps exp from overflowing. */
#include "reduce.h"

tx_status tx_gpu_softmax(tx_ctx *ctx, const tx_softmax_call *c) {
    const char *name = tx_op_name(c->op);
    const tx_slot *xs = c->x, *ys = c->y;
    tx_reduce_plan plan;
    tx_reduce_plan_rows(c->A, c->R, c->B, &plan);
    /* a dim that may change size between runs (tx_slot.vary): the variant
     * for rows of any length, so a new length needs no new program */
    bool vary = xs->vary != 0;
    if (vary)
        plan.vec = plan.kvec = false;
    tx_texture stats;
    tx_status st =
        tx_reduce_run(ctx, name, &xs->st->tex, &plan, TX_REDUCE_ACC_LSE, 0, false, NULL, &stats);
    if (st)
        return st;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_SOFTMAX, "softmax", 2, 1);
    if (c->op == TX_OP_LOG_SOFTMAX)
        tx_req_define(&r, "TX_LOG", "1");
    bool rowvec = c->B == 1 && c->R % 4 == 0 && !vary;
    if (rowvec)
        tx_req_define(&r, "TX_ROWVEC", "1");
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
    tx_req_int(&r, "p_st_ws", stats.wshift);
    tx_req_int(&r, "p_R", (int)c->R);
    tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", &xs->st->tex);
    tx_req_tex_inv(&r, "p_st_iw", "p_st_ih", &stats);
    tx_req_here(&r, "TX_HERE", &xs->st->tex, &ys->st->tex);
    if (!rowvec) {
        tx_req_int(&r, "p_n", (int)ys->numel);
        tx_req_int(&r, "p_B", (int)c->B);
    }
    const tx_texture *ins[2] = {&xs->st->tex, &stats};
    const tx_texture *outs[1] = {&ys->st->tex};
    st = tx_gpu_run(ctx, name, &r, ins, 2, outs, 1);
    tx_pool_release(ctx, &stats);
    return st;
}
