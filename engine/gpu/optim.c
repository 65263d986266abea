/* Fused optimizer steps on the GPU (glsl-templates/optim.glsl): one draw per
 * parameter writes the new values and the new state to 1-3 render targets. */
#include "../device.h"

tx_status tx_gpu_optim(tx_ctx *ctx, const tx_optim_call *c) {
    tx_program_req r;
    int n_out = c->kind + 1;
    tx_req_init(&r, TX_FAMILY_OPTIM, "optim", 5, n_out);
    tx_req_define_int(&r, "TX_KIND", c->kind);
    if (c->nesterov)
        tx_req_define(&r, "TX_NESTEROV", "1");
    if (c->first)
        tx_req_define(&r, "TX_FIRST", "1");
    /* absent state: the gradient stands in (the template does not read it) */
    const tx_slot *in[5] = {c->p, c->g, c->s1 ? c->s1 : c->g, c->s2 ? c->s2 : c->g, c->coefs};
    static const char *const k_w[5] = {"p_w0", "p_w1", "p_w2", "p_w3", "p_w4"};
    const tx_texture *ins[5], *outs[3] = {&c->y->st->tex, c->s1_out ? &c->s1_out->st->tex : NULL,
                                          c->s2_out ? &c->s2_out->st->tex : NULL};
    for (int i = 0; i < 5; i++) {
        ins[i] = &in[i]->st->tex;
        tx_req_int(&r, k_w[i], ins[i]->wshift);
    }
    tx_req_int(&r, "p_ntex", (int)((c->y->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", outs[0]->wshift);
    return tx_gpu_run(ctx, "optim", &r, ins, 5, outs, n_out);
}
