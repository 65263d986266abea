/* REDUCE family on the GPU (glsl-templates/reduce.glsl), and the reduction
 * passes that the softmax and norm kernels reuse for their row statistics.
 *
 * A large reduction is a tree: no fragment loops over more than
 * TX_REDUCE_CHUNK_X elements of x or TX_REDUCE_CHUNK_STATES partial states,
 * so a sum of 1M values is three short draws (two on a software rasterizer,
 * below), each spread over thousands of fragments, instead of one fragment
 * walking a million texels. */
#include "reduce.h"

/* Elements of x one fragment reduces in a partial pass, and partial states
 * one fragment merges. On llvmpipe (2 cores) a sum of 16M values took 5-15 ms
 * for chunks of 64..2048 (noise dominated) and ~1 ms for 1M; one fragment
 * looping over everything is not only slow in principle but wrong there:
 * llvmpipe caps a loop at 65535 iterations. Chunks keep every loop far below. */
#define TX_REDUCE_CHUNK_X               1024
#define TX_REDUCE_CHUNK_STATES          32
/* On a software rasterizer a fragment merging 1024 states costs little (no
 * GPU to keep busy), and each pass's program is translated at its first
 * draw (~25 ms on SwiftShader): 1M values reduce in two passes, not three. */
#define TX_REDUCE_CHUNK_STATES_SOFTWARE 1024

static const char *const k_ksz[3] = {"p_k0", "p_k1", "p_k2"};
static const char *const k_kst[3] = {"p_ks0", "p_ks1", "p_ks2"};
static const char *const k_rsz[3] = {"p_r0", "p_r1", "p_r2"};
static const char *const k_rst[3] = {"p_rs0", "p_rs1", "p_rs2"};

/* One pass. src_states: the source is a state texture with n states per
 * output (else x with p's geometry); out_final: write finished values. */
static tx_status reduce_pass(tx_ctx *ctx, const char *name, const tx_reduce_plan *p,
                             tx_reduce_acc acc, int fin, bool last, bool packed,
                             const tx_texture *src, bool src_states, int64_t n, int64_t chunk,
                             int64_t parts, const tx_texture *dst, bool out_final) {
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_REDUCE, "reduce", 1, 1);
    tx_req_define_int(&r, "TX_ACC", (int)acc);
    tx_req_define_int(&r, "TX_FIN", fin);
    tx_req_define_int(&r, "TX_SRC", src_states ? 1 : 0);
    tx_req_define_int(&r, "TX_DST", out_final ? 1 : 0);
    if (!src_states && p->vec)
        tx_req_define(&r, "TX_VEC", "1");
    if (last)
        tx_req_define(&r, "TX_LAST", "1");
    if (packed)
        tx_req_define(&r, "TX_KVEC", "1");
    int64_t rows = packed ? p->nout / 4 : p->nout; /* state rows: outputs or quads */
    int64_t ntex = out_final ? (p->nout + 3) / 4 : rows * parts;
    tx_req_int(&r, "p_ntex", (int)ntex);
    tx_req_int(&r, "p_out_ws", dst->wshift);
    tx_req_int(&r, "p_in_ws", src->wshift);
    tx_req_tex_inv(&r, "p_in_iw", "p_in_ih", src);
    tx_req_int(&r, "p_R", (int)p->R);
    if (out_final) {
        tx_req_int(&r, "p_nout", (int)p->nout);
    } else {
        tx_req_int(&r, "p_C", (int)chunk);
        tx_req_int(&r, "p_P", (int)parts);
    }
    if (src_states) {
        tx_req_int(&r, "p_Pin", (int)n);
    } else {
        for (int i = 1; i < 3; i++)
            tx_req_int(&r, k_ksz[i], p->ksz[i]);
        for (int i = 0; i < 3; i++)
            tx_req_int(&r, k_kst[i], p->kst[i]);
        for (int i = 1; i < 3; i++)
            tx_req_int(&r, k_rsz[i], p->rsz[i]);
        for (int i = 0; i < 3; i++)
            tx_req_int(&r, k_rst[i], p->rst[i]);
    }
    (void)k_ksz[0];
    (void)k_rsz[0];
    const tx_texture *ins[1] = {src};
    const tx_texture *outs[1] = {dst};
    return tx_gpu_run(ctx, name, &r, ins, 1, outs, 1);
}

tx_status tx_reduce_run(tx_ctx *ctx, const char *name, const tx_texture *x, const tx_reduce_plan *p,
                        tx_reduce_acc acc, int fin, bool last, const tx_texture *final_out,
                        tx_texture *states) {
    TX_ASSERT(p->nout > 0);
    /* One-value states of outputs adjacent in x pack 4 to a texel. */
    bool packed =
        p->kvec && final_out &&
        (acc == TX_REDUCE_ACC_SUM || acc == TX_REDUCE_ACC_SUMSQ || acc == TX_REDUCE_ACC_L1 ||
         acc == TX_REDUCE_ACC_PROD || acc == TX_REDUCE_ACC_MAX || acc == TX_REDUCE_ACC_MIN);
    int64_t rows = packed ? p->nout / 4 : p->nout;
    const tx_texture *src = x;
    bool src_states = false;
    int64_t n = p->R;
    tx_texture tmp[2];
    int cur = -1; /* which tmp holds src, if any */
    tx_status st = TX_STATUS_OK;
    for (;;) {
        int64_t chunk = !src_states        ? TX_REDUCE_CHUNK_X
                        : ctx->software_gl ? TX_REDUCE_CHUNK_STATES_SOFTWARE
                                           : TX_REDUCE_CHUNK_STATES;
        if (n <= chunk) {
            if (final_out) {
                st = reduce_pass(ctx, name, p, acc, fin, last, packed, src, src_states, n, 0, 0,
                                 final_out, true);
            } else {
                st = tx_pool_acquire(ctx, name, p->nout, states);
                if (!st) {
                    st = reduce_pass(ctx, name, p, acc, fin, last, packed, src, src_states, n, n, 1,
                                     states, false);
                    if (st)
                        tx_pool_release(ctx, states);
                }
            }
            break;
        }
        int64_t parts = (n + chunk - 1) / chunk;
        int nxt = cur == 0 ? 1 : 0;
        st = tx_pool_acquire(ctx, name, rows * parts, &tmp[nxt]);
        if (st)
            break;
        st = reduce_pass(ctx, name, p, acc, fin, last, packed, src, src_states, n, chunk, parts,
                         &tmp[nxt], false);
        if (cur >= 0)
            tx_pool_release(ctx, &tmp[cur]);
        cur = nxt;
        if (st)
            break;
        src = &tmp[cur];
        src_states = true;
        n = parts;
    }
    if (cur >= 0)
        tx_pool_release(ctx, &tmp[cur]);
    return st;
}

void tx_reduce_plan_rows(int64_t G, int64_t S, int64_t B, tx_reduce_plan *p) {
    int64_t shape[3] = {G, S, B};
    bool mask[3] = {false, true, false};
    tx_reduce_plan_make(3, shape, mask, p);
}

tx_status tx_gpu_reduce(tx_ctx *ctx, const tx_reduce_call *c) {
    return tx_reduce_run(ctx, tx_op_name(c->op), &c->x->st->tex, &c->plan, c->acc, c->fin, c->last,
                         &c->y->st->tex, NULL);
}
