/* UNARY, CLIP, ACT and CAST families on the GPU: one texel per fragment
 * (glsl-templates/unary.glsl, functions in shaders/elementwise.glsl). */
#include <math.h>

#include "../device.h"

tx_status tx_gpu_unary(tx_ctx *ctx, const tx_unary_call *c) {
    const char *name = tx_op_name(c->op);
    tx_program_req r;
    tx_req_init(&r, c->family, "unary", 1, 1);
    char fn[48];
    snprintf(fn, sizeof fn, "tx_u_%s", name);
    if (c->family == TX_FAMILY_CAST) /* bool first: NaN is true, not 0 */
        snprintf(fn, sizeof fn, "%s",
                 c->hi != 0 ? "tx_u_cast_bool"
                            : (c->to == TX_DTYPE_INT32 ? "tx_u_cast_int" : "tx_u_cast_float"));
    tx_req_define(&r, "TX_FN", fn);
    tx_req_int(&r, "p_ntex", (int)((c->x->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", c->y->st->tex.wshift);
    tx_req_int(&r, "p_in_ws", c->x->st->tex.wshift);
    tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", &c->x->st->tex);
    tx_req_here(&r, "TX_HERE", &c->x->st->tex, &c->y->st->tex);
    if (c->family == TX_FAMILY_CLIP)
        tx_req_clip(&r, c->lo, c->hi);
    if (c->family == TX_FAMILY_ACT) {
        tx_req_define(&r, "TX_HAS_ALPHA", "1");
        tx_req_float(&r, "p_alpha", c->lo);
        tx_req_float(&r, "p_beta", c->hi);
    }
    const tx_texture *ins[1] = {&c->x->st->tex};
    const tx_texture *outs[1] = {&c->y->st->tex};
    return tx_gpu_run(ctx, name, &r, ins, 1, outs, 1);
}
