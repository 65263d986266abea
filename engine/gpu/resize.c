/* RESIZE family on the GPU (glsl-templates/resize.glsl): one texel per
 * fragment, the interpolating dims' taps combined by a tap counter. */
#include "../device.h"

static const char *const k_od[6] = {"p_od0", "p_od1", "p_od2", "p_od3", "p_od4", "p_od5"};
static const char *const k_in[6] = {"p_in0", "p_in1", "p_in2", "p_in3", "p_in4", "p_in5"};
static const char *const k_st[6] = {"p_st0", "p_st1", "p_st2", "p_st3", "p_st4", "p_st5"};
static const char *const k_sc[6] = {"p_sc0", "p_sc1", "p_sc2", "p_sc3", "p_sc4", "p_sc5"};

/* Nearest upsampling by whole factors along the two innermost dims, in a
 * mode where output o reads input o / s: asymmetric with floor (ONNX
 * Upsample, PyTorch's nearest export), or half_pixel (pytorch_half_pixel
 * past length 1) with either rounding, whose coordinate (o + 0.5) / s - 0.5
 * rounds to o / s for every whole s. Where the output's rows are whole
 * texels, resize.glsl's TX_UP reads one input texel per output texel (the
 * general path decomposes each of the 4 elements by division). Sets *sx,
 * *sy (1: that dim is a copy); false where the mode, the dims or this
 * call's row alignment do not allow it. */
static bool up_factors(const tx_resize_call *c, int *sx, int *sy) {
    bool coord_ok =
        (c->coord == TX_RESIZE_ASYMMETRIC && c->nearest == TX_RESIZE_FLOOR) ||
        ((c->coord == TX_RESIZE_HALF_PIXEL || c->coord == TX_RESIZE_PYTORCH_HALF_PIXEL) &&
         (c->nearest == TX_RESIZE_ROUND_PREFER_FLOOR || c->nearest == TX_RESIZE_ROUND_PREFER_CEIL));
    if (c->mode != TX_RESIZE_NEAREST || !coord_ok || c->n > 3)
        return false;
    int s[2] = {1, 1};
    for (int k = 0; k < c->n; k++) {
        const tx_resize_dim *e = &c->d[c->n - 1 - k];
        /* contiguous input: dim k's stride is the product of the inner ones */
        int64_t want_st = k == 0   ? 1
                          : k == 1 ? c->d[c->n - 1].in
                                   : c->d[c->n - 1].in * c->d[c->n - 2].in;
        if (e->st != want_st)
            return false;
        if (!e->resampled)
            continue;
        if (k > 1 || e->in < 1 || e->od % e->in != 0 || e->od / e->in > 64)
            return false;
        int f = (int)(e->od / e->in);
        if (e->sc != (float)f || (c->coord == TX_RESIZE_PYTORCH_HALF_PIXEL && e->len == 1.0f))
            return false;
        s[k] = f;
    }
    const tx_resize_dim *d0 = &c->d[c->n - 1];
    if ((s[0] > 2 && s[0] % 4 != 0) || d0->od % 4 != 0 || (s[0] < 4 && d0->in % 4 != 0))
        return false;
    *sx = s[0];
    *sy = s[1];
    return true;
}

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
    /* TX_UP where this call's rows are aligned. Where sizes may change
     * between runs, a length that is not aligned takes the general program
     * (a second one at most), as a test of uniforms in one program would
     * run both paths on software rasterizers until it is specialized (OCR
     * det on llvmpipe, default k: its six resizes 6 -> 25 ms a run). */
    int sx = 1, sy = 1;
    if (up_factors(c, &sx, &sy)) {
        tx_req_define_int(&r, "TX_UP", 1);
        tx_req_define_int(&r, "TX_SX", sx);
        tx_req_define_int(&r, "TX_SY", sy);
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
