/* POOL family on the GPU (glsl-templates/pool.glsl).
 *
 * Pools are cheap next to the convs around them (k*k reads per output, no
 * FMAs to share), so one output texel per fragment straight from the
 * row-major input is enough; only the global pools take texel-wide steps. */
#include "../device.h"

/* A tiled max pool's gradient (tx_pool_call's gy, gg): one dx texel per
 * fragment, each element counting its window's ties (pool.glsl TX_MAX_GRAD);
 * where a texel holds whole windows of one row, with a texel per window row
 * (SwiftShader, the digits CNN's two: 1068 and 536 µs -> 224 and 206). */
static tx_status max_grad(tx_ctx *ctx, const tx_pool_call *c) {
    const tx_slot *xs = c->x, *ys = c->y;
    const tx_window *g = &c->g;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_POOL, "pool", 3, 1);
    tx_req_define(&r, "TX_MAX_GRAD", "1");
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
    tx_req_int(&r, "p_y_ws", c->gy->st->tex.wshift);
    tx_req_int(&r, "p_g_ws", c->gg->st->tex.wshift);
    tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", &xs->st->tex);
    tx_req_int(&r, "p_H", (int)g->h);
    tx_req_int(&r, "p_W", (int)g->w);
    tx_req_int(&r, "p_Ho", (int)g->ho);
    tx_req_int(&r, "p_Wo", (int)g->wo);
    tx_req_int(&r, "p_kh", g->kh);
    tx_req_int(&r, "p_kw", g->kw);
    /* rows of whole texels, whole windows per texel: a texel per window row */
    if (g->w % 4 == 0 && (g->kw == 1 || g->kw == 2 || g->kw == 4)) {
        tx_req_define_int(&r, "TX_GRAD_KW", g->kw);
        tx_req_here(&r, "TX_HERE", &xs->st->tex, &ys->st->tex);
    }
    const tx_texture *ins[3] = {&xs->st->tex, &c->gy->st->tex, &c->gg->st->tex};
    return tx_gpu_run(ctx, "maxpool_grad", &r, ins, 3, (const tx_texture *[]){&ys->st->tex}, 1);
}

tx_status tx_gpu_pool(tx_ctx *ctx, const tx_pool_call *c) {
    if (c->gy)
        return max_grad(ctx, c);
    const char *name = tx_op_name(c->op);
    const tx_slot *xs = c->x, *ys = c->y;
    const tx_window *g = &c->g;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_POOL, "pool", 1, 1);
    tx_req_define(&r, c->is_max ? "TX_MAX" : "TX_AVG", "1");
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_in_ws", xs->st->tex.wshift);
    tx_req_int(&r, "p_H", (int)g->h);
    tx_req_int(&r, "p_W", (int)g->w);
    if (c->global) {
        tx_req_define(&r, "TX_GLOBAL", "1");
        if ((g->h * g->w) % 4 == 0)
            tx_req_define(&r, "TX_GVEC", "1");
    } else {
        if (c->include_pad)
            tx_req_define(&r, "TX_INCLUDE_PAD", "1");
        tx_req_int(&r, "p_Ho", (int)g->ho);
        tx_req_int(&r, "p_Wo", (int)g->wo);
        tx_req_int(&r, "p_kh", g->kh);
        tx_req_int(&r, "p_kw", g->kw);
        tx_req_int(&r, "p_sh", g->sh);
        tx_req_int(&r, "p_sw", g->sw);
        tx_req_int(&r, "p_dh", g->dh);
        tx_req_int(&r, "p_dw", g->dw);
        tx_req_int(&r, "p_pt", g->pt);
        tx_req_int(&r, "p_pl", g->pl);
        tx_req_int(&r, "p_He", (int)g->h + g->pb);
        tx_req_int(&r, "p_We", (int)g->w + g->pr);
        /* windows 2 wide tiling rows of whole texels: texel-wide reads
         * (SwiftShader, the digits CNN's pools: 220 and 126 -> 30 and 15 µs) */
        bool tiles = g->sh == g->kh && g->sw == 2 && g->kw == 2 && g->dh == 1 && g->dw == 1 &&
                     !g->pt && !g->pl && !g->pb && !g->pr && g->ho * g->kh <= g->h &&
                     g->w % 4 == 0 && g->wo * 2 == g->w && !xs->vary;
        if (tiles) {
            tx_req_define(&r, "TX_TILE2", "1");
            tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", &xs->st->tex);
        }
    }
    return tx_gpu_run(ctx, name, &r, (const tx_texture *[]){&xs->st->tex}, 1,
                      (const tx_texture *[]){&ys->st->tex}, 1);
}
