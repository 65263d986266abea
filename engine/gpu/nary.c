/* NARY family on the GPU (glsl-templates/nary.glsl): one draw folds up to 4
 * inputs; more inputs take more passes, each reading the running result as
 * its input 0 (a full-size operand: texel reads, no index math). */
#include "../device.h"

#define NX_PER_PASS 4

static const char *const k_w[4] = {"p_w0", "p_w1", "p_w2", "p_w3"};
static const char *const k_d[6] = {"p_d0", "p_d1", "p_d2", "p_d3", "p_d4", "p_d5"};
static const char *const k_s[4][6] = {
    {"p_s0_0", "p_s0_1", "p_s0_2", "p_s0_3", "p_s0_4", "p_s0_5"},
    {"p_s1_0", "p_s1_1", "p_s1_2", "p_s1_3", "p_s1_4", "p_s1_5"},
    {"p_s2_0", "p_s2_1", "p_s2_2", "p_s2_3", "p_s2_4", "p_s2_5"},
    {"p_s3_0", "p_s3_1", "p_s3_2", "p_s3_3", "p_s3_4", "p_s3_5"},
};

/* One operand of a pass: an input, or the running result (full-size). */
typedef struct nx_in {
    const tx_texture *tex;
    const tx_slot *s; /* NULL: the running result */
} nx_in;

/* s's vary bits (tx_slot.vary) aligned right to y's rank. */
static unsigned vary_in_y(const tx_slot *s, int yrank) {
    return s ? (unsigned)s->vary << (yrank - s->rank) : 0;
}

/* Operand k's mode: 0 full-size, 1 a scalar, 2 broadcast (index math). With
 * varying dims (tx_slot.vary) only a mode that holds for every size: full
 * where it has y's shape and varies wherever another operand does, a scalar
 * only when nothing of it varies. */
static int nx_mode(const nx_in *in, int n, int k, const tx_slot *y) {
    const tx_slot *s = in[k].s;
    if (!s)
        return 0;
    unsigned all = 0;
    for (int i = 0; i < n; i++)
        all |= vary_in_y(in[i].s, y->rank);
    if (!all)
        return s->numel == y->numel ? 0 : (s->numel == 1 ? 1 : 2);
    bool same = s->rank == y->rank && vary_in_y(s, y->rank) == all;
    for (int d = 0; same && d < y->rank; d++)
        same = s->shape[d] == y->shape[d];
    return same ? 0 : (s->numel == 1 && !s->vary ? 1 : 2);
}

/* One pass over `n` operands into `out`. */
static tx_status nary_pass(tx_ctx *ctx, const tx_nary_call *c, const nx_in *in, int n,
                           const tx_texture *out, float scale) {
    const char *name = tx_op_name(c->op);
    int64_t numel = c->y->numel;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_NARY, "nary", n, 1);
    tx_req_define_int(&r, "TX_N", n);
    if (c->op == TX_OP_WHERE)
        tx_req_define(&r, "TX_WHERE", "1");
    else
        tx_req_define(&r, "TX_OP",
                      c->op == TX_OP_MIN_N ? "nx_min"
                                           : (c->op == TX_OP_MAX_N ? "nx_max" : "nx_sum"));
    if (scale != 1.0f)
        tx_req_define(&r, "TX_SCALE", "1");
    bool general = false;
    int mode[NX_PER_PASS];
    for (int k = 0; k < n; k++) {
        mode[k] = nx_mode(in, n, k, c->y);
        general |= mode[k] == 2;
        char def[8];
        snprintf(def, sizeof def, "TX_M%d", k);
        tx_req_define_int(&r, def, mode[k]);
    }
    if (general)
        tx_req_define(&r, "TX_GENERAL", "1");
    tx_req_int(&r, "p_ntex", (int)((numel + 3) / 4));
    tx_req_int(&r, "p_out_ws", out->wshift);
    tx_req_int(&r, "p_n", (int)numel);
    for (int k = 0; k < n; k++)
        tx_req_int(&r, k_w[k], in[k].tex->wshift);
    if (general)
        for (int i = 0; i < 6; i++)
            tx_req_int(&r, k_d[i], (int)c->dims[i]);
    for (int k = 0; k < n; k++) {
        if (mode[k] != 2)
            continue;
        int64_t st[6];
        tx_nary_strides(in[k].s, st);
        for (int i = 0; i < 6; i++)
            tx_req_int(&r, k_s[k][i], (int)st[i]);
    }
    if (scale != 1.0f)
        tx_req_float(&r, "p_scale", scale);
    const tx_texture *ins[NX_PER_PASS];
    for (int k = 0; k < n; k++)
        ins[k] = in[k].tex;
    return tx_gpu_run(ctx, name, &r, ins, n, &out, 1);
}

tx_status tx_gpu_nary(tx_ctx *ctx, const tx_nary_call *c) {
    const char *name = tx_op_name(c->op);
    /* Passes: the result of pass p is input 0 of pass p + 1; the last
     * writes y, the others pooled textures. */
    int per_first = c->op == TX_OP_WHERE ? 3 : NX_PER_PASS;
    int n_pass = 1, left = c->n - per_first;
    while (left > 0) {
        n_pass++;
        left -= NX_PER_PASS - 1;
    }
    int64_t texels = (c->y->numel + 3) / 4;
    tx_texture acc[2] = {{0}, {0}};
    bool have[2] = {false, false};
    tx_status st = TX_STATUS_OK;
    int next = 0;
    for (int p = 0; p < n_pass && !st; p++) {
        int cur = p % 2;
        const tx_texture *out = &c->y->st->tex;
        if (p < n_pass - 1) {
            st = tx_pool_acquire(ctx, name, texels, &acc[cur]);
            if (st)
                break;
            have[cur] = true;
            out = &acc[cur];
        }
        nx_in in[NX_PER_PASS];
        int n = 0;
        if (p > 0)
            in[n++] = (nx_in){&acc[1 - cur], NULL};
        while (n < NX_PER_PASS && next < c->n && !(c->op == TX_OP_WHERE && n == 3)) {
            const tx_slot *s = c->xs[next++];
            in[n++] = (nx_in){&s->st->tex, s};
        }
        st = nary_pass(ctx, c, in, n, out, p == n_pass - 1 ? c->scale : 1.0f);
        if (p > 0) {
            tx_pool_release(ctx, &acc[1 - cur]);
            have[1 - cur] = false;
        }
    }
    TX_ASSERT(st || next == c->n);
    for (int i = 0; i < 2; i++)
        if (have[i])
            tx_pool_release(ctx, &acc[i]);
    return st;
}
