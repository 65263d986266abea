/* RESIZE family on the GPU (glsl-templates/resize.glsl): one texel per
 * fragment, the interpolating dims' taps combined by a tap counter. */
#include "../device.h"

static const char *const k_od[6] = {"p_od0", "p_od1", "p_od2", "p_od3", "p_od4", "p_od5"};
static const char *const k_in[6] = {"p_in0", "p_in1", "p_in2", "p_in3", "p_in4", "p_in5"};
static const char *const k_st[6] = {"p_st0", "p_st1", "p_st2", "p_st3", "p_st4", "p_st5"};
static const char *const k_sc[6] = {"p_sc0", "p_sc1", "p_sc2", "p_sc3", "p_sc4", "p_sc5"};

tx_status tx_gpu_resize(tx_ctx *ctx, const tx_resize_call *c) {
    const char *name = "resize";
    const tx_slot *xs = c->x, *ys = c->y;
    int n = c->n;
    /* resampled dim k takes digit pos of the shader's tap counter */
    int rmask = 0, nres = 0, pos = 0;
    for (int k = 0; k < n; k++)
        if (c->d[n - 1 - k].resampled) {
            rmask |= 1 << k;
            pos |= nres++ << (3 * k);
        }
    int taps = c->mode == TX_RESIZE_NEAREST ? 1 : (c->mode == TX_RESIZE_LINEAR ? 2 : 4);
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_RESIZE, "resize", c->resid ? 2 : 1, 1);
    if (c->resid)
        tx_req_resid(&r, 1, &c->resid->st->tex, c->resid->numel, c->y->numel);
    tx_req_define_int(&r, "TX_NDIM", n);
    tx_req_define_int(&r, "TX_RMASK", rmask);
    tx_req_define_int(&r, "TX_COORD", (int)c->coord);
    tx_req_define_int(&r, "TX_TAPS", taps);
    if (taps == 1) {
        tx_req_define_int(&r, "TX_NEAREST", (int)c->nearest);
    } else {
        tx_req_define_int(&r, "TX_LOG", taps == 2 ? 1 : 2);
        tx_req_define_int(&r, "TX_NRES", nres);
        tx_req_define_int(&r, "TX_POS", pos);
    }
    if (taps == 4) {
        tx_req_float(&r, "p_a", c->cubic_a);
        if (c->exclude_outside)
            tx_req_define(&r, "TX_EXCLUDE", "1");
    }
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
    for (int k = 0; k < n; k++) {
        const tx_resize_dim *e = &c->d[n - 1 - k];
        tx_req_int(&r, k_od[k], (int)e->od);
        tx_req_int(&r, k_in[k], (int)e->in);
        tx_req_int(&r, k_st[k], (int)e->st);
        /* p_sc carries what the coordinate mode needs (resize.glsl) */
        float v = e->sc;
        if (c->coord == TX_RESIZE_ALIGN_CORNERS)
            v = e->len;
        else if (c->coord == TX_RESIZE_PYTORCH_HALF_PIXEL && e->len == 1.0f)
            v = 0.0f;
        tx_req_float(&r, k_sc[k], v);
    }
    const tx_texture *ins[2] = {&xs->st->tex, c->resid ? &c->resid->st->tex : NULL};
    const tx_texture *outs[1] = {&ys->st->tex};
    return tx_gpu_run(ctx, name, &r, ins, c->resid ? 2 : 1, outs, 1);
}
