/* BINARY family on the GPU: one output texel per fragment, with fast modes
 * for the broadcasts that keep whole texels (glsl-templates/binary.glsl).
 * Where a dim may change size between runs (tx_slot.vary), a fast mode is
 * taken only where it holds for every size as far as the varying dims tell
 * (else a later size compiles another program): same shapes (see
 * same_shape), a static scalar, a static row over a static last dim, a
 * per-channel operand that does not broadcast along a dim where it varies. */
#include "../device.h"

/* Whether a and b have the same shape, at every size as far as the varying
 * dims tell: where one varies and the other does not, the static one is
 * not 1 (a valid model cannot broadcast it then; a varying batch beside a
 * static 1 may). Dims inferred as varying that are static in fact (a
 * Resize's channels) still take the fast mode. */
static bool same_shape(const tx_slot *a, const tx_slot *b) {
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i] || ((a->vary ^ b->vary) >> i & 1 && a->shape[i] == 1))
            return false;
    return true;
}

/* Whether `part` holds one value per *inner consecutive output elements, in
 * order and repeating, and `full` is y's shape (a per-channel scale:
 * [N, C, H, W] x [1, C, 1, 1]): its value for output element i is then
 * (i / inner) % numel. sp: part's strides per output dim. Where dims vary,
 * this must hold at every size as far as they tell: part does not
 * broadcast along a dim where it varies (a varying part dim is taken to
 * vary with full's, as a batch does; inner may change: it is a
 * parameter). */
static bool per_channel(const tx_binary_call *c, const tx_slot *full, const tx_slot *part,
                        const int64_t *sp, int64_t *inner) {
    if (part->numel <= 1 || c->y->numel == 0 || full->numel != c->y->numel || full->rank > 6 ||
        part->rank > full->rank)
        return false;
    int lo = -1, hi = -1;
    for (int d = 0; d < 6; d++)
        if (sp[d] != 0 && c->dims[d] > 1) {
            lo = lo < 0 ? d : lo;
            hi = d;
        }
    int64_t n = 1;
    for (int d = lo; d <= hi && lo >= 0; d++) {
        if (c->dims[d] > 1 && sp[d] == 0)
            return false; /* broadcast inside part's dims: not one run */
        n *= c->dims[d];
    }
    if (lo < 0 || n != part->numel)
        return false;
    for (int j = 0; j < part->rank; j++) {
        int i = j + full->rank - part->rank; /* full's dim at part's dim j */
        if ((part->vary >> j & 1) && part->shape[j] == 1 && full->shape[i] > 1)
            return false;
    }
    *inner = 1;
    for (int d = hi + 1; d < 6; d++)
        *inner *= c->dims[d];
    return true;
}

static const char *const k_dims[6] = {"p_d0", "p_d1", "p_d2", "p_d3", "p_d4", "p_d5"};
static const char *const k_as[6] = {"p_as0", "p_as1", "p_as2", "p_as3", "p_as4", "p_as5"};
static const char *const k_bs[6] = {"p_bs0", "p_bs1", "p_bs2", "p_bs3", "p_bs4", "p_bs5"};

tx_status tx_gpu_binary(tx_ctx *ctx, const tx_binary_call *c) {
    const char *name = tx_op_name(c->op);
    const tx_slot *as = c->a, *bs = c->b, *ys = c->y;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_BINARY, "binary", 2, 1);
    char fn[48];
    snprintf(fn, sizeof fn, "tx_b_%s", name);
    tx_req_define(&r, "TX_OP", fn);
    if (c->dtype == TX_DTYPE_INT32)
        tx_req_define(&r, "TX_INT", "1");
    int mode = 0;
    int64_t last = c->dims[5], inner = 0;
    bool b_is_row = c->sb[5] == 1;
    for (int i = 0; i < 5; i++)
        b_is_row = b_is_row && c->sb[i] == 0;
    bool vary = as->vary || bs->vary, a_last_vary = as->rank && (as->vary >> (as->rank - 1) & 1);
    if (as->numel == ys->numel && bs->numel == ys->numel && (!vary || same_shape(as, bs)))
        mode = 1;
    else if (bs->numel == 1 && as->numel == ys->numel && !bs->vary)
        mode = 2;
    else if (as->numel == 1 && bs->numel == ys->numel && !as->vary)
        mode = 3;
    else if (as->numel == ys->numel && bs->numel == last && last % 4 == 0 && b_is_row &&
             !bs->vary && !a_last_vary)
        mode = 4;
    else if (per_channel(c, as, bs, c->sb, &inner))
        mode = 5;
    else if (per_channel(c, bs, as, c->sa, &inner))
        mode = 6;
    tx_req_define_int(&r, "TX_MODE", mode);
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_a_ws", as->st->tex.wshift);
    tx_req_int(&r, "p_b_ws", bs->st->tex.wshift);
    if (mode != 0) {
        tx_req_tex_inv(&r, "p_a_iw", "p_a_ih", &as->st->tex);
        tx_req_tex_inv(&r, "p_b_iw", "p_b_ih", &bs->st->tex);
        /* the operands read at texel t (not a broadcast one) */
        if (mode != 3 && mode != 6)
            tx_req_here(&r, "TX_A_HERE", &as->st->tex, &ys->st->tex);
        if (mode == 1 || mode == 3 || mode == 6)
            tx_req_here(&r, "TX_B_HERE", &bs->st->tex, &ys->st->tex);
    }
    if (mode == 4)
        tx_req_int(&r, "p_bn4", (int)(last / 4));
    if (mode == 5 || mode == 6) {
        tx_req_int(&r, "p_inner", (int)inner);
        tx_req_int(&r, "p_np", (int)(mode == 5 ? bs : as)->numel);
    }
    if (mode == 0) {
        tx_req_int(&r, "p_n", (int)ys->numel);
        for (int i = 0; i < 6; i++) {
            tx_req_int(&r, k_dims[i], (int)c->dims[i]);
            tx_req_int(&r, k_as[i], (int)c->sa[i]);
            tx_req_int(&r, k_bs[i], (int)c->sb[i]);
        }
    }
    const tx_texture *ins[2] = {&as->st->tex, &bs->st->tex};
    const tx_texture *outs[1] = {&ys->st->tex};
    return tx_gpu_run(ctx, name, &r, ins, 2, outs, 1);
}
