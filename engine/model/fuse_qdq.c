/* Plan-time QDQ folding: the pattern quantize_static's QDQ format writes,
 *
 *     DequantizeLinear(xq) ─┐
 *     DequantizeLinear(wq) ─┼─ Conv / MatMul ── QuantizeLinear → yq
 *   [ DequantizeLinear(bq) ─┘ ]
 *
 * becomes one QLinearConv / QLinearMatMul reading xq, wq and bq directly
 * (engine/model/onnx/qlinear.c): the accumulation is exact in integers and
 * the result is requantized once, saturate(round(acc · sx · sw / sy) + zy),
 * which is what onnxruntime computes for the same file (it fuses the same
 * pattern). The float chain it replaces rounds every product and sum of the
 * dequantized values, and where that moves a value across a rounding
 * boundary of QuantizeLinear the two differ by one quantum; the fused form is
 * the exact one. Folded only where the fused op means the same thing:
 * per-tensor scales for x and y, per-tensor or per-output-channel (axis 0
 * for Conv weights) scales for w, constant scales and zero points, a bias
 * that is int32 with zero point 0 and scale sx · sw exactly (float32), and
 * the Conv / MatMul output read by nothing but the QuantizeLinear. */
#include <stdlib.h>
#include <string.h>

#include "session.h"

static bool live_or_folded_op(const tx_step *sp, const char *op_type) {
    return strcmp(sp->node->op_type, op_type) == 0 &&
           (!sp->node->domain[0] || strcmp(sp->node->domain, "ai.onnx") == 0);
}

static const tx_session_val *cval(const tx_session *s, const tx_step *sp, int i) {
    if (i >= sp->n_in || sp->in[i] < 0)
        return NULL;
    const tx_session_val *v = &s->vals[sp->in[i]];
    return v->is_const ? v : NULL;
}

/* The DequantizeLinear step producing value v, or NULL. Its scale (and zero
 * point, when present) must be constants; per_tensor: one scale; else one
 * per index of axis 0 of a constant quantized input is also accepted. */
static const tx_step *dq_of(const tx_session *s, int v, bool per_tensor) {
    int p = v >= 0 ? s->vals[v].producer : -1;
    if (p < 0)
        return NULL;
    const tx_step *d = &s->steps[p];
    if (!live_or_folded_op(d, "DequantizeLinear") || d->n_in < 2 || d->in[0] < 0)
        return NULL;
    const tx_session_val *sc = cval(s, d, 1), *zp = cval(s, d, 2);
    if (!sc || (d->n_in > 2 && d->in[2] >= 0 && !zp) || !sc->c.f)
        return NULL;
    int elem = s->vals[d->in[0]].elem;
    if (elem != TX_ONNX_UINT8 && elem != TX_ONNX_INT8 && elem != TX_ONNX_INT32)
        return NULL;
    if (sc->c.numel == 1)
        return d;
    const tx_session_val *q = cval(s, d, 0);
    if (per_tensor || !q || q->c.rank < 1 || sc->c.rank != 1 || sc->c.numel != q->c.shape[0] ||
        tx_attr_int(d->node, "axis", 1) != 0 || tx_attr_int(d->node, "block_size", 0) != 0)
        return NULL;
    return d;
}

static bool zero_point_zero(const tx_session *s, const tx_step *d) {
    const tx_session_val *zp = cval(s, d, 2);
    if (!zp)
        return d->n_in < 3 || d->in[2] < 0;
    for (int64_t k = 0; k < zp->c.numel; k++)
        if (tx_hval_get(&zp->c, k) != 0)
            return false;
    return true;
}

/* The bias DequantizeLinear b is int32, zero point 0, scale sx · sw[m]. */
static bool bias_ok(const tx_session *s, const tx_step *b, const tx_step *dx, const tx_step *dw) {
    if (s->vals[b->in[0]].elem != TX_ONNX_INT32 || !zero_point_zero(s, b))
        return false;
    const tx_hval *bs = &cval(s, b, 1)->c, *xs = &cval(s, dx, 1)->c, *ws = &cval(s, dw, 1)->c;
    if (bs->numel != ws->numel && bs->numel != 1)
        return false;
    for (int64_t m = 0; m < ws->numel; m++)
        if (bs->f[bs->numel == 1 ? 0 : m] != xs->f[0] * ws->f[m])
            return false;
    return true;
}

/* Rewrites step k (Conv or MatMul) into its QLinear form. */
static tx_status fold_one(tx_session *s, int k, const tx_onnx_op *qop, const char *qname) {
    tx_step *sp = &s->steps[k];
    bool conv = strcmp(qname, "QLinearConv") == 0;
    if (sp->n_out != 1 || sp->act || sp->bias >= 0 || sp->n_in < 2 || (!conv && sp->n_in != 2) ||
        s->vals[sp->out[0]].is_output)
        return TX_STATUS_OK;
    int c = s->vals[sp->out[0]].n_uses == 1 ? s->vals[sp->out[0]].last_use : -1;
    if (c < 0)
        return TX_STATUS_OK;
    tx_step *q = &s->steps[c];
    if (q->dead || !live_or_folded_op(q, "QuantizeLinear") || q->in[0] != sp->out[0] ||
        q->n_in < 3 || q->in[2] < 0 || !cval(s, q, 1) || !cval(s, q, 2) ||
        cval(s, q, 1)->c.numel != 1 || tx_attr_int(q->node, "output_dtype", 0) != 0)
        return TX_STATUS_OK;
    const tx_step *dx = dq_of(s, sp->in[0], true), *dw = dq_of(s, sp->in[1], !conv), *db = NULL;
    if (!dx || !dw || s->vals[dx->in[0]].elem == TX_ONNX_INT32 ||
        s->vals[dw->in[0]].elem == TX_ONNX_INT32)
        return TX_STATUS_OK;
    bool has_b = conv && sp->n_in > 2 && sp->in[2] >= 0;
    if (has_b && (!(db = dq_of(s, sp->in[2], false)) || !bias_ok(s, db, dx, dw)))
        return TX_STATUS_OK;
    /* QLinear inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B] */
    int n_in = has_b ? 9 : 8;
    int *in = malloc(sizeof(int) * 9); /* the step's own array (tx_graph_free frees it) */
    const char **io = tx_arena_alloc(s->m.arena, sizeof(char *) * 10);
    tx_onnx_node *n = tx_arena_alloc(s->m.arena, sizeof *n);
    if (!in || !io || !n) {
        free(in);
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    }
    const tx_step *src[3] = {dx, dw, q};
    for (int j = 0; j < 3; j++) {
        in[3 * j] = j == 2 ? -1 : src[j]->in[0];
        in[3 * j + 1] = src[j]->in[1];
        in[3 * j + 2] = src[j]->n_in > 2 ? src[j]->in[2] : -1;
    }
    /* y_scale, y_zp come from q's inputs 1, 2: slots 6, 7 */
    in[6] = q->in[1];
    in[7] = q->in[2];
    in[8] = has_b ? db->in[0] : -1;
    for (int i = 0; i < n_in; i++)
        io[i] = in[i] >= 0 ? s->vals[in[i]].name : "";
    io[n_in] = s->vals[q->out[0]].name;
    *n = *sp->node;
    n->op_type = qname;
    n->domain = "";
    n->n_in = n_in;
    n->n_out = 1;
    n->in = io;
    n->out = io + n_in;
    if (!conv)
        n->n_attrs = 0;
    int dxs = (int)(dx - s->steps), xf = sp->in[0];
    s->vals[sp->out[0]].producer = -1; /* the float output is no more */
    sp->node = n;
    sp->op = qop;
    free(sp->in);
    sp->in = in;
    sp->n_in = n_in;
    sp->out[0] = q->out[0];
    s->vals[sp->out[0]].producer = k;
    q->dead = true;
    s->fused++;
    tx_graph_count_uses(s);
    if (s->vals[xf].n_uses == 0 && !s->vals[xf].is_output && !s->steps[dxs].dead) {
        s->steps[dxs].dead = true;
        s->fused++;
    }
    return TX_STATUS_OK;
}

tx_status tx_graph_fuse_qdq(tx_session *s) {
    const tx_onnx_op *qconv = tx_onnx_op_find("", "QLinearConv"),
                     *qmm = tx_onnx_op_find("", "QLinearMatMul");
    /* the xnode scratch (graph.c sizes it for the file's nodes) must hold a
     * QLinear step's 9 inputs and 1 output */
    int io = 14;
    for (int k = 0; k < s->m.n_nodes; k++)
        if (s->m.nodes[k].n_in + s->m.nodes[k].n_out + 4 > io)
            io = s->m.nodes[k].n_in + s->m.nodes[k].n_out + 4;
    tx_session_val **grown = realloc(s->io, (size_t)io * sizeof *grown);
    if (!grown)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    s->io = grown;
    tx_status st = TX_STATUS_OK;
    for (int k = 0; k < s->n_steps && !st && qconv && qmm; k++) {
        const tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        if (live_or_folded_op(sp, "Conv"))
            st = fold_one(s, k, qconv, "QLinearConv");
        else if (live_or_folded_op(sp, "MatMul"))
            st = fold_one(s, k, qmm, "QLinearMatMul");
    }
    return st;
}
