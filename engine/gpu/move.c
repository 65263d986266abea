/* MOVE family on the GPU (glsl-templates/move.glsl): one texel per
 * fragment. A map picks a fast path when the innermost dim is contiguous and
 * 4 elements long or more per row: a texel copy when aligned, two fetches
 * and a lane shift when not, one fetch when broadcast. Concat reads up to 4
 * inputs per draw; more inputs chain draws that pass the partial result
 * along. */
#include <limits.h>

#include "../device.h"

static const char *const k_od[6] = {"p_od0", "p_od1", "p_od2", "p_od3", "p_od4", "p_od5"};
static const char *const k_st[6] = {"p_st0", "p_st1", "p_st2", "p_st3", "p_st4", "p_st5"};
static const char *const k_mul[6] = {"p_mul0", "p_mul1", "p_mul2", "p_mul3", "p_mul4", "p_mul5"};
static const char *const k_off[6] = {"p_off0", "p_off1", "p_off2", "p_off3", "p_off4", "p_off5"};
static const char *const k_in[6] = {"p_in0", "p_in1", "p_in2", "p_in3", "p_in4", "p_in5"};
static const char *const k_ws[4] = {"p_ws0", "p_ws1", "p_ws2", "p_ws3"};
static const char *const k_b[4] = {"p_b0", "p_b1", "p_b2", "p_b3"};
static const char *const k_l[4] = {"p_l0", "p_l1", "p_l2", "p_l3"};

/* Inputs one concat draw reads (move.glsl's concat kind names u_in0..3). */
#define CONCAT_PER_DRAW 4
_Static_assert(CONCAT_PER_DRAW <= TX_MAX_INPUTS, "concat draws more inputs than a draw binds");

static bool fits_int(int64_t v) {
    return v >= INT_MIN && v <= INT_MAX;
}

static tx_status map_draw(tx_ctx *ctx, const char *name, const tx_move_call *c) {
    const tx_slot *xs = c->x, *ys = c->y;
    const tx_move_dim *inner = &c->d[c->n - 1];
    int vec = 0;
    /* varying sizes (tx_move_call.vary_*): a variant that serves them all */
    if (!inner->border && inner->od % 4 == 0 && !c->vary_inner) {
        if (inner->st == 1) {
            bool aligned = c->base % 4 == 0 && !c->vary_align;
            for (int i = 0; i < c->n - 1; i++)
                aligned = aligned && c->d[i].st % 4 == 0;
            vec = aligned ? 1 : 2;
        } else if (inner->st == 0) {
            vec = 3;
        }
    }
    int bmask = 0;
    for (int k = 0; k < c->n; k++)
        if (c->d[c->n - 1 - k].border)
            bmask |= 1 << k;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MOVE, "move", 1, 1);
    tx_req_define_int(&r, "TX_KIND", 0);
    tx_req_define_int(&r, "TX_NDIM", c->n);
    tx_req_define_int(&r, "TX_BMASK", bmask);
    tx_req_define_int(&r, "TX_BMODE", bmask ? (int)c->bmode : TX_MOVE_BORDER_NONE);
    tx_req_define_int(&r, "TX_VEC", vec);
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
    TX_ASSERT(fits_int(c->base));
    tx_req_int(&r, "p_base", (int)c->base);
    for (int k = 0; k < c->n; k++) {
        const tx_move_dim *d = &c->d[c->n - 1 - k];
        TX_ASSERT(fits_int(d->od) && fits_int(d->st) && fits_int(d->mul) && fits_int(d->off));
        if (k < c->n - 1)
            tx_req_int(&r, k_od[k], (int)d->od);
        tx_req_int(&r, k_st[k], (int)d->st);
        if (bmask) {
            tx_req_int(&r, k_mul[k], (int)d->mul);
            tx_req_int(&r, k_off[k], (int)d->off);
            tx_req_int(&r, k_in[k], (int)d->in);
        }
    }
    if (bmask && c->bmode == TX_MOVE_BORDER_CONSTANT)
        tx_req_float(&r, "p_value", c->value);
    const tx_texture *ins[1] = {&xs->st->tex};
    const tx_texture *outs[1] = {&ys->st->tex};
    return tx_gpu_run(ctx, name, &r, ins, 1, outs, 1);
}

static tx_status concat_draw(tx_ctx *ctx, const char *name, const tx_move_call *c) {
    int64_t numel = c->y->numel, L = c->L;
    /* inputs that contribute, with their row offset and row length */
    int nk = 0;
    bool vec = L % 4 == 0;
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        int64_t len = c->xs[i]->shape[c->axis] * c->inner;
        if (len > 0)
            nk++;
        vec = vec && len % 4 == 0 && at % 4 == 0;
        at += len;
    }
    int per_first = CONCAT_PER_DRAW, per_next = CONCAT_PER_DRAW - 1;
    int draws = nk <= per_first ? 1 : 1 + (nk - per_first + per_next - 1) / per_next;
    tx_texture tmp = {0};
    tx_status st = draws > 1 ? tx_pool_acquire(ctx, name, (numel + 3) / 4, &tmp) : TX_STATUS_OK;
    bool have_tmp = draws > 1 && !st;
    int q = vec ? 4 : 1; /* vec: rows and regions in texels */
    int next = 0;        /* next input to place */
    at = 0;
    for (int dr = 0; !st && dr < draws; dr++) {
        /* the chain ends in y: draws alternate between y and tmp */
        const tx_texture *target = (draws - 1 - dr) % 2 == 0 ? &c->y->st->tex : &tmp;
        const tx_texture *prev = target == &tmp ? &c->y->st->tex : &tmp;
        tx_program_req r;
        const tx_texture *ins[CONCAT_PER_DRAW];
        int nin = 0;
        if (dr > 0)
            ins[nin++] = prev;
        tx_req_init(&r, TX_FAMILY_MOVE, "move", 0, 1);
        tx_req_int(&r, "p_L", (int)(L / q));
        while (nin < CONCAT_PER_DRAW && next < c->n_in) {
            const tx_slot *s = c->xs[next++];
            int64_t len = s->shape[c->axis] * c->inner;
            at += len;
            if (len == 0)
                continue;
            tx_req_int(&r, k_b[nin], (int)((at - len) / q));
            tx_req_int(&r, k_l[nin], (int)(len / q));
            ins[nin++] = &s->st->tex;
        }
        for (int k = 0; k < nin; k++)
            tx_req_int(&r, k_ws[k], ins[k]->wshift);
        r.n_inputs = nin;
        tx_req_define_int(&r, "TX_KIND", 1);
        tx_req_define_int(&r, "TX_NIN", nin);
        tx_req_define_int(&r, "TX_PREV", dr > 0);
        tx_req_define_int(&r, "TX_VEC", vec);
        tx_req_int(&r, "p_ntex", (int)((numel + 3) / 4));
        tx_req_int(&r, "p_n", (int)numel);
        tx_req_int(&r, "p_out_ws", target->wshift);
        st = tx_gpu_run(ctx, name, &r, ins, nin, &target, 1);
    }
    if (have_tmp)
        tx_pool_release(ctx, &tmp);
    return st;
}

static tx_status gather_draw(tx_ctx *ctx, const char *name, const tx_move_call *c) {
    const tx_slot *xs = c->x, *is = c->indices, *ys = c->y;
    bool vec = c->inner % 4 == 0;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MOVE, "move", 2, 1);
    tx_req_define_int(&r, "TX_KIND", 2);
    tx_req_define_int(&r, "TX_VEC", vec);
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
    tx_req_int(&r, "p_ws1", is->st->tex.wshift);
    tx_req_int(&r, "p_dim", (int)c->dim);
    tx_req_int(&r, "p_nidx", (int)c->nidx);
    tx_req_int(&r, vec ? "p_inner4" : "p_inner", (int)(vec ? c->inner / 4 : c->inner));
    const tx_texture *ins[2] = {&xs->st->tex, &is->st->tex};
    const tx_texture *outs[1] = {&ys->st->tex};
    return tx_gpu_run(ctx, name, &r, ins, 2, outs, 1);
}

tx_status tx_gpu_move(tx_ctx *ctx, const tx_move_call *c) {
    const char *name = tx_op_name(c->op);
    switch (c->kind) {
    case TX_MOVE_MAP: return map_draw(ctx, name, c);
    case TX_MOVE_CONCAT: return concat_draw(ctx, name, c);
    default: return gather_draw(ctx, name, c);
    }
}
