/* Plan-time fusion: BN and scales/shifts by constants into Conv, GELU/HardSwish
 * patterns, chains of scalar Mul/Add into one Affine, MatMul/Gemm + bias +
 * activation, Conv / MatMul + residual Add + activation. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

/* The only live consumer step of value v (which must have exactly one use). */
static int sole_consumer(tx_session *s, int v) {
    if (v < 0)
        return -1;
    const tx_session_val *val = &s->vals[v];
    if (val->n_uses != 1 || val->is_output)
        return -1;
    return val->last_use;
}

/* A live step of the default ONNX domain. */
static bool onnx_step(const tx_step *sp) {
    return !sp->dead && (!sp->node->domain[0] || strcmp(sp->node->domain, "ai.onnx") == 0);
}

static bool is_op(const tx_step *sp, const char *op_type) {
    return onnx_step(sp) && strcmp(sp->node->op_type, op_type) == 0;
}

/* The engine activation an ONNX node is (TX_OP_NONE if none); *alpha, *beta
 * (may be NULL) get the parameters of those that take them (tx_activation's
 * ops: HardSigmoid, LeakyRelu, Elu ...; only finite ones fuse). */
static tx_op activation_of(tx_session *s, const tx_step *sp, float *alpha, float *beta) {
    tx_op op;
    float a, b;
    if (onnx_step(sp) && tx_onnx_act_attrs(sp->node, &op, &a, &b)) {
        if (!isfinite(a) || !isfinite(b))
            return TX_OP_NONE;
        if (alpha)
            *alpha = a, *beta = b;
        return op;
    }
    static const tx_onnx_name_op k_acts[] = {
        {"Relu", TX_OP_RELU},        {"Sigmoid", TX_OP_SIGMOID},      {"Tanh", TX_OP_TANH},
        {"Gelu", TX_OP_GELU},        {"HardSwish", TX_OP_HARD_SWISH}, {"Mish", TX_OP_MISH},
        {"Softplus", TX_OP_SOFTPLUS}};
    for (size_t i = 0; i < TX_COUNTOF(k_acts); i++)
        if (is_op(sp, k_acts[i].name)) {
            if (k_acts[i].op == TX_OP_GELU &&
                strcmp(tx_attr_str(sp->node, "approximate", "none"), "none") != 0)
                return TX_OP_NONE;
            return k_acts[i].op;
        }
    if (is_op(sp, "Clip")) { /* relu6: Clip(0, 6) */
        float lo = 0, hi = 0;
        if (s->m.opset < 11) {
            lo = tx_attr_float(sp->node, "min", -1);
            hi = tx_attr_float(sp->node, "max", -1);
        } else {
            if (sp->n_in < 3 || sp->in[1] < 0 || sp->in[2] < 0)
                return TX_OP_NONE;
            const tx_session_val *a = &s->vals[sp->in[1]], *b = &s->vals[sp->in[2]];
            if (!a->is_const || !b->is_const || a->c.numel != 1 || b->c.numel != 1)
                return TX_OP_NONE;
            lo = (float)tx_hval_get(&a->c, 0);
            hi = (float)tx_hval_get(&b->c, 0);
        }
        if (lo == 0 && hi == 6)
            return TX_OP_RELU6;
    }
    return TX_OP_NONE;
}

/* Conv step k's weights and bias become the new host values w and b (taken,
 * freed on failure; w NULL: the weights stay, folded in place), as
 * constants with generated names that cannot clash with the file's
 * ("<node>/texel:<what>_W:<k>"). */
static tx_status set_conv_consts(tx_session *s, int k, const char *what, tx_hval *w, tx_hval *b) {
    const char *node = s->steps[k].node->name;
    tx_hval *hv[2] = {w, b};
    int iv[2] = {s->steps[k].in[1], -1};
    for (int j = !w; j < 2; j++) {
        size_t n = strlen(node) + strlen(what) + 40;
        char *name = tx_arena_alloc(s->m.arena, n);
        iv[j] = name ? (snprintf(name, n, "%s/texel:%s_%s:%d", node, what, j ? "B" : "W", k),
                        tx_graph_val_add(s, name))
                     : -1;
        if (iv[j] < 0) {
            if (w)
                tx_hval_free(w);
            tx_hval_free(b);
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        }
    }
    for (int j = !w; j < 2; j++) {
        tx_session_val *v = &s->vals[iv[j]];
        v->is_const = v->c_owned = true;
        v->c = *hv[j];
        v->elem = v->c.elem;
        v->rank = v->c.rank;
        memcpy(v->shape, v->c.shape, sizeof v->shape);
    }
    tx_step *sp = &s->steps[k];
    sp->in[1] = iv[0];
    sp->in[2] = iv[1];
    if (sp->n_in < 3)
        sp->n_in = 3;
    return TX_STATUS_OK;
}

static bool fold_bn(const tx_hval *w, const tx_hval *b, bool transposed, int64_t group,
                    const tx_hval *gamma, const tx_hval *beta, const tx_hval *mean,
                    const tx_hval *var, float eps, tx_hval *w_out, tx_hval *b_out);

/* BatchNormalization (inference) folded into the Conv or ConvTranspose
 * before it, whose output it alone reads (PaddleOCR det's head:
 * ConvTranspose, BN, Relu). */
static tx_status fuse_bn_into_conv(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        bool tr = is_op(sp, "ConvTranspose");
        /* (its second pass runs before activations, residuals and input
         * affines fuse; the test keeps it right if that order changes) */
        if ((!is_op(sp, "Conv") && !tr) || sp->n_out < 1 || sp->n_in < 2 || sp->n_in > 3 ||
            sp->act || sp->x_affine)
            continue;
        int c = sole_consumer(s, sp->out[0]);
        if (c < 0 || !is_op(&s->steps[c], "BatchNormalization"))
            continue;
        tx_step *bn = &s->steps[c];
        if (bn->n_in != 5 || bn->in[0] != sp->out[0] || tx_attr_int(bn->node, "training_mode", 0))
            continue;
        bool ok = bn->n_out >= 1;
        for (int o = 1; o < bn->n_out; o++)
            ok &= bn->out[o] < 0;
        for (int i = 1; i < 5; i++)
            ok &= bn->in[i] >= 0 && s->vals[bn->in[i]].is_const;
        ok &= sp->in[1] >= 0 && s->vals[sp->in[1]].is_const;
        bool has_b = sp->n_in > 2 && sp->in[2] >= 0;
        if (has_b)
            ok &= s->vals[sp->in[2]].is_const;
        if (!ok)
            continue;
        tx_hval w2, b2;
        float eps = tx_attr_float(bn->node, "epsilon", 1e-5f);
        const tx_hval *w = &s->vals[sp->in[1]].c, *b = has_b ? &s->vals[sp->in[2]].c : NULL;
        const tx_hval *g = &s->vals[bn->in[1]].c, *be = &s->vals[bn->in[2]].c,
                      *mu = &s->vals[bn->in[3]].c, *var = &s->vals[bn->in[4]].c;
        if (!fold_bn(w, b, tr, tx_attr_int(sp->node, "group", 1), g, be, mu, var, eps, &w2, &b2))
            continue;
        tx_status st = set_conv_consts(s, k, "bn_folded", &w2, &b2);
        if (st)
            return st;
        sp->out[0] = bn->out[0];
        s->vals[sp->out[0]].producer = k;
        bn->dead = true;
        s->fused++;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}

/* The erf form of GELU as exporters before opset 20 write it:
 *     y = (x * (1 + erf(x / sqrt 2))) * 0.5    (any grouping of the two Muls,
 *                                               x * 0.7071 for the Div)
 * becomes one Gelu node (the engine's tx_u_gelu), placed where the last Mul
 * was. Every intermediate must have no other reader. */
static bool const_near(const tx_session *s, int v, double want) {
    if (v < 0 || !s->vals[v].is_const || s->vals[v].c.numel != 1 || !s->vals[v].c.f)
        return false;
    return fabs(s->vals[v].c.f[0] - want) <= 1e-3 * fabs(want);
}

/* For a 2-input step, the input that is not `v` (-1 if v is not an input). */
static int other_input(const tx_step *sp, int v) {
    if (sp->n_in != 2)
        return -1;
    return sp->in[0] == v ? sp->in[1] : sp->in[1] == v ? sp->in[0] : -1;
}

/* A new one-input, one-output node `op_type` reading value x and writing value
 * y, in the model's arena (NULL when out of memory): what a fused pattern
 * becomes. */
static tx_onnx_node *unary_node(tx_session *s, const char *name, const char *op_type, int x,
                                int y) {
    tx_onnx_node *n = tx_arena_alloc(s->m.arena, sizeof *n);
    const char **io = tx_arena_alloc(s->m.arena, 2 * sizeof *io);
    if (!n || !io)
        return NULL;
    io[0] = s->vals[x].name;
    io[1] = s->vals[y].name;
    *n = (tx_onnx_node){.name = name,
                        .op_type = op_type,
                        .domain = "",
                        .n_in = 1,
                        .n_out = 1,
                        .in = io,
                        .out = io + 1};
    return n;
}

static tx_status fuse_gelu(tx_session *s) {
    const tx_onnx_op *gelu = tx_onnx_op_find("", "Gelu");
    for (int k = 0; k < s->n_steps && gelu; k++) {
        tx_step *e = &s->steps[k];
        if (!is_op(e, "Erf") || e->n_in != 1)
            continue;
        int di = s->vals[e->in[0]].producer;
        if (di < 0 || sole_consumer(s, e->in[0]) != k)
            continue;
        tx_step *d = &s->steps[di];
        int x = -1;
        if (is_op(d, "Div") && d->n_in == 2 && const_near(s, d->in[1], 1.41421356))
            x = d->in[0];
        else if (is_op(d, "Mul") && d->n_in == 2 && const_near(s, d->in[1], 0.70710678))
            x = d->in[0];
        else if (is_op(d, "Mul") && d->n_in == 2 && const_near(s, d->in[0], 0.70710678))
            x = d->in[1];
        if (x < 0)
            continue;
        int ai = sole_consumer(s, e->out[0]);
        if (ai < 0 || !is_op(&s->steps[ai], "Add") ||
            !const_near(s, other_input(&s->steps[ai], e->out[0]), 1.0))
            continue;
        int a = s->steps[ai].out[0];
        int m1 = sole_consumer(s, a);
        if (m1 < 0 || !is_op(&s->steps[m1], "Mul"))
            continue;
        int o1 = other_input(&s->steps[m1], a), m2 = -1;
        int half = -1; /* the step computing x * 0.5, when that grouping is used */
        bool ok = false;
        if (o1 >= 0 && o1 != x && s->vals[o1].producer >= 0) { /* (x * 0.5) * (1 + erf) */
            half = s->vals[o1].producer;
            tx_step *h = &s->steps[half];
            ok = is_op(h, "Mul") && other_input(h, x) >= 0 &&
                 const_near(s, other_input(h, x), 0.5) && sole_consumer(s, o1) == m1;
            m2 = m1;
        } else if (o1 >= 0) { /* (x * (1 + erf)) * 0.5 or (0.5 * (1 + erf)) * x */
            m2 = sole_consumer(s, s->steps[m1].out[0]);
            int o2 = m2 >= 0 && is_op(&s->steps[m2], "Mul")
                         ? other_input(&s->steps[m2], s->steps[m1].out[0])
                         : -1;
            ok = o2 >= 0 &&
                 ((o1 == x && const_near(s, o2, 0.5)) || (const_near(s, o1, 0.5) && o2 == x));
        }
        if (!ok)
            continue;
        tx_step *last = &s->steps[m2];
        tx_onnx_node *n = unary_node(s, last->node->name, "Gelu", x, last->out[0]);
        if (!n)
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        int y = last->out[0];
        d->dead = e->dead = s->steps[ai].dead = s->steps[m1].dead = true;
        if (half >= 0)
            s->steps[half].dead = true;
        last->dead = false;
        last->node = n;
        last->op = gelu;
        last->n_in = last->n_out = 1;
        last->in[0] = x;
        last->out[0] = y;
        s->fused += half >= 0 ? 5 : 4;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}

/* The trailing axes ReduceMean step sp reduces over x's rank `rank`, kept
 * (keepdims 1): how many (0: not such a reduction). Axes from the
 * attribute (before opset 18) or a constant second input. */
static int trailing_mean_axes(const tx_session *s, const tx_step *sp, int rank) {
    if (!is_op(sp, "ReduceMean") || sp->n_out != 1 || rank < 1 ||
        tx_attr_int(sp->node, "keepdims", 1) != 1)
        return 0;
    int64_t ax[TX_MAX_RANK];
    int na = 0;
    const int64_t *a;
    int n = tx_attr_ints(sp->node, "axes", &a);
    if (n > 0 && n <= TX_MAX_RANK && sp->n_in == 1) {
        memcpy(ax, a, sizeof(int64_t) * (size_t)n);
        na = n;
    } else if (n <= 0 && sp->n_in == 2 && sp->in[1] >= 0 && s->vals[sp->in[1]].is_const &&
               s->vals[sp->in[1]].c.i && s->vals[sp->in[1]].c.numel >= 1 &&
               s->vals[sp->in[1]].c.numel <= TX_MAX_RANK) {
        na = (int)s->vals[sp->in[1]].c.numel;
        memcpy(ax, s->vals[sp->in[1]].c.i, sizeof(int64_t) * (size_t)na);
    }
    /* axes rank - na .. rank - 1, each once, in any order */
    unsigned seen = 0;
    for (int i = 0; i < na; i++) {
        int64_t v = ax[i] < 0 ? ax[i] + rank : ax[i];
        if (v < rank - na || v >= rank || (seen >> v & 1u))
            return 0;
        seen |= 1u << v;
    }
    return na;
}

/* Whether constant value v can be LayerNormalization's scale or bias for
 * x normalized over its last q dims, giving what Mul or Add by it gives: of
 * x's rank at most (no broadcast up to a higher rank), its shape past
 * leading 1s a trailing part of those dims (tx_norm's rule) where x's dims
 * are known; tx_norm checks the rest at run time. */
static bool norm_param(const tx_session *s, int v, const tx_session_val *x, int q) {
    if (v < 0 || !s->vals[v].is_const || !s->vals[v].c.f)
        return false;
    const tx_hval *c = &s->vals[v].c;
    int lead = 0;
    while (lead < c->rank && c->shape[lead] == 1)
        lead++;
    if (c->rank > x->rank || c->rank - lead > q)
        return false;
    for (int i = lead; i < c->rank; i++) {
        int64_t xd = x->shape[x->rank - c->rank + i];
        if (xd > 0 && xd != c->shape[i])
            return false;
    }
    return true;
}

/* LayerNormalization as exporters before opset 17 (Paddle2ONNX, PyTorch's
 * older ones) write it, over x's last axes:
 *     m = ReduceMean(x); d = x - m; v = ReduceMean(d ^ 2)
 *     y = d / Sqrt(v + eps) * gamma + beta    (beta optional)
 * becomes one LayerNormalization step (axis -q, epsilon eps), placed where
 * the last was: one draw for nine (PP-OCRv4 rec's SVTR blocks: 5). d has
 * exactly its two readers, every other intermediate one; gamma and beta
 * are constants of the normalized shape. */
static tx_status fuse_layer_norm(tx_session *s) {
    const tx_onnx_op *ln = tx_onnx_op_find("", "LayerNormalization");
    for (int k = 0; k < s->n_steps && ln; k++) {
        tx_step *dv = &s->steps[k];
        if (!is_op(dv, "Div") || dv->n_in != 2 || dv->n_out != 1 || dv->in[0] < 0 || dv->in[1] < 0)
            continue;
        int d = dv->in[0], sd = dv->in[1];
        int ksq = s->vals[sd].producer, ksub = s->vals[d].producer;
        if (ksq < 0 || ksub < 0 || sole_consumer(s, sd) != k || !is_op(&s->steps[ksq], "Sqrt") ||
            !is_op(&s->steps[ksub], "Sub") || s->steps[ksub].n_in != 2 || s->vals[d].n_uses != 2 ||
            s->vals[d].is_output)
            continue;
        int x = s->steps[ksub].in[0], m = s->steps[ksub].in[1];
        int ve = s->steps[ksq].in[0];
        int kadd = ve >= 0 ? s->vals[ve].producer : -1;
        if (x < 0 || m < 0 || kadd < 0 || sole_consumer(s, ve) != ksq ||
            !is_op(&s->steps[kadd], "Add") || s->steps[kadd].n_in != 2)
            continue;
        const tx_step *ea = &s->steps[kadd];
        int v = -1, ev = -1;
        for (int i = 0; i < 2; i++)
            if (ea->in[i] >= 0 && s->vals[ea->in[i]].is_const)
                ev = ea->in[i], v = ea->in[1 - i];
        const tx_session_val *xv = &s->vals[x];
        int kv = v >= 0 ? s->vals[v].producer : -1, km = s->vals[m].producer;
        /* (eps, and the exponent below, of rank at most x's: no broadcast up) */
        if (ev < 0 || v < 0 || kv < 0 || km < 0 || s->vals[ev].c.numel != 1 || !s->vals[ev].c.f ||
            s->vals[ev].c.rank > xv->rank || !(s->vals[ev].c.f[0] > 0) ||
            !isfinite(s->vals[ev].c.f[0]) || sole_consumer(s, v) != kadd ||
            sole_consumer(s, m) != ksub || !tx_onnx_type_is_float(xv->elem) ||
            s->steps[km].in[0] != x)
            continue;
        int q = trailing_mean_axes(s, &s->steps[km], xv->rank);
        const tx_step *rv = &s->steps[kv];
        int p = rv->in[0];
        int kp = p >= 0 ? s->vals[p].producer : -1;
        if (q < 1 || trailing_mean_axes(s, rv, xv->rank) != q || kp < 0 ||
            sole_consumer(s, p) != kv || !is_op(&s->steps[kp], "Pow") || s->steps[kp].n_in != 2 ||
            s->steps[kp].in[0] != d)
            continue;
        int e2 = s->steps[kp].in[1];
        if (e2 < 0 || !s->vals[e2].is_const || s->vals[e2].c.numel != 1 || !s->vals[e2].c.f ||
            s->vals[e2].c.rank > xv->rank || s->vals[e2].c.f[0] != 2.0f)
            continue;
        /* the scale, then the bias if there is one */
        int kmul = sole_consumer(s, dv->out[0]);
        if (kmul < 0 || !is_op(&s->steps[kmul], "Mul") || s->steps[kmul].n_in != 2)
            continue;
        int gamma = other_input(&s->steps[kmul], dv->out[0]);
        if (!norm_param(s, gamma, xv, q))
            continue;
        int last = kmul, beta = -1;
        int kb = sole_consumer(s, s->steps[kmul].out[0]);
        if (kb >= 0 && is_op(&s->steps[kb], "Add") && s->steps[kb].n_in == 2) {
            int b = other_input(&s->steps[kb], s->steps[kmul].out[0]);
            if (norm_param(s, b, xv, q)) {
                beta = b;
                last = kb;
            }
        }
        tx_step *lp = &s->steps[last];
        int y = lp->out[0];
        tx_onnx_node *n = tx_arena_alloc(s->m.arena, sizeof *n);
        const char **io = tx_arena_alloc(s->m.arena, 4 * sizeof *io);
        tx_onnx_attr *at = tx_arena_alloc(s->m.arena, 2 * sizeof *at);
        if (!n || !io || !at)
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        int n_in = beta >= 0 ? 3 : 2;
        io[0] = s->vals[x].name;
        io[1] = s->vals[gamma].name;
        io[2] = beta >= 0 ? s->vals[beta].name : "";
        io[n_in] = s->vals[y].name;
        at[0] = (tx_onnx_attr){.name = "axis", .type = TX_ATTR_INT, .i = -q};
        at[1] = (tx_onnx_attr){.name = "epsilon", .type = TX_ATTR_FLOAT, .f = s->vals[ev].c.f[0]};
        *n = (tx_onnx_node){.name = lp->node->name,
                            .op_type = "LayerNormalization",
                            .domain = "",
                            .n_in = n_in,
                            .n_out = 1,
                            .in = io,
                            .out = io + n_in,
                            .attrs = at,
                            .n_attrs = 2};
        const int chain[] = {km, ksub, kp, kv, kadd, ksq, k, kmul};
        for (size_t i = 0; i < TX_COUNTOF(chain); i++)
            s->steps[chain[i]].dead = true;
        lp->dead = false;
        lp->node = n;
        lp->op = ln;
        lp->n_in = n_in;
        lp->in[0] = x;
        lp->in[1] = gamma;
        lp->in[2] = beta;
        lp->out[0] = y;
        s->fused += beta >= 0 ? 8 : 7;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}

/* Swish (SiLU at alpha 1), as exporters write it:
 *     y = x * Sigmoid(x)        or   y = x * Sigmoid(x * alpha)
 * (alpha a scalar constant; Paddle2ONNX's swish: PP-OCRv4 rec's 7; every
 * conv of YOLOv5/v8) becomes one Swish step placed where the Mul was, then
 * fused into a preceding Conv or MatMul by fuse_activations. The Sigmoid
 * (and the scaling Mul) must have no other reader. */
static tx_status fuse_swish(tx_session *s) {
    const tx_onnx_op *sw = tx_onnx_op_find("", "Swish");
    for (int k = 0; k < s->n_steps && sw; k++) {
        tx_step *m = &s->steps[k];
        if (!is_op(m, "Mul") || m->n_in != 2 || m->n_out != 1 || m->in[0] < 0 || m->in[1] < 0)
            continue;
        for (int side = 0; side < 2; side++) {
            int x = m->in[1 - side], g = m->in[side];
            int ks = s->vals[g].producer;
            if (ks < 0 || sole_consumer(s, g) != k || !is_op(&s->steps[ks], "Sigmoid") ||
                s->steps[ks].n_in != 1 || !tx_onnx_type_is_float(s->vals[x].elem))
                continue;
            int z = s->steps[ks].in[0], kz = z >= 0 ? s->vals[z].producer : -1;
            double alpha = 1;
            if (z != x) { /* Sigmoid(x * alpha) */
                if (kz < 0 || sole_consumer(s, z) != ks || !is_op(&s->steps[kz], "Mul") ||
                    s->steps[kz].n_in != 2)
                    continue;
                int c = other_input(&s->steps[kz], x);
                if (c < 0 || c == x || !s->vals[c].is_const || s->vals[c].c.numel != 1 ||
                    !s->vals[c].c.f || !isfinite(s->vals[c].c.f[0]) ||
                    s->vals[c].c.rank > s->vals[x].rank)
                    continue;
                alpha = s->vals[c].c.f[0];
            }
            int y = m->out[0];
            tx_onnx_node *n = unary_node(s, m->node->name, "Swish", x, y);
            tx_onnx_attr *at = tx_arena_alloc(s->m.arena, sizeof *at);
            if (!n || !at)
                return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
            *at = (tx_onnx_attr){.name = "alpha", .type = TX_ATTR_FLOAT, .f = (float)alpha};
            n->attrs = at;
            n->n_attrs = 1;
            s->steps[ks].dead = true;
            if (z != x)
                s->steps[kz].dead = true;
            m->node = n;
            m->op = sw;
            m->n_in = 1;
            m->in[0] = x;
            s->fused += z != x ? 2 : 1;
            tx_graph_count_uses(s);
            break;
        }
    }
    return TX_STATUS_OK;
}

/* HardSwish as Paddle2ONNX and others write it:
 *     y = x * Clip(x + 3, 0, 6) / 6      (Mul then Div, or Div then Mul)
 * becomes one HardSwish node (then fused into a preceding Conv by
 * fuse_activations), placed where the last node was. Every intermediate must
 * have no other reader. */
static tx_status fuse_hard_swish(tx_session *s) {
    const tx_onnx_op *hs = tx_onnx_op_find("", "HardSwish");
    for (int k = 0; k < s->n_steps && hs; k++) {
        tx_step *c = &s->steps[k];
        if (!is_op(c, "Clip") || activation_of(s, c, NULL, NULL) != TX_OP_RELU6 || c->n_out != 1)
            continue;
        int ai = s->vals[c->in[0]].producer;
        if (ai < 0 || sole_consumer(s, c->in[0]) != k || !is_op(&s->steps[ai], "Add"))
            continue;
        tx_step *add = &s->steps[ai];
        int x = -1;
        if (add->n_in == 2 && const_near(s, add->in[1], 3.0))
            x = add->in[0];
        else if (add->n_in == 2 && const_near(s, add->in[0], 3.0))
            x = add->in[1];
        if (x < 0)
            continue;
        int f1 = sole_consumer(s, c->out[0]);
        if (f1 < 0 || s->steps[f1].n_out != 1)
            continue;
        tx_step *s1 = &s->steps[f1];
        int f2 = sole_consumer(s, s1->out[0]);
        if (f2 < 0)
            continue;
        tx_step *s2 = &s->steps[f2];
        bool ok = false;
        if (is_op(s1, "Mul") && other_input(s1, c->out[0]) == x) /* (x * clip) / 6 */
            ok = is_op(s2, "Div") && s2->n_in == 2 && s2->in[0] == s1->out[0] &&
                 const_near(s, s2->in[1], 6.0);
        else if (is_op(s1, "Div") && s1->n_in == 2 && s1->in[0] == c->out[0] &&
                 const_near(s, s1->in[1], 6.0)) /* x * (clip / 6) */
            ok = is_op(s2, "Mul") && other_input(s2, s1->out[0]) == x;
        if (!ok || s2->n_out != 1)
            continue;
        tx_onnx_node *n = unary_node(s, s2->node->name, "HardSwish", x, s2->out[0]);
        if (!n)
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        add->dead = c->dead = s1->dead = true;
        s2->node = n;
        s2->op = hs;
        s2->n_in = 1;
        s2->in[0] = x;
        s->fused += 3;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}

/* Step k writes what Add step c wrote, c fused into it. */
static void take_add_output(tx_session *s, int k, int c) {
    tx_step *sp = &s->steps[k];
    sp->out[0] = s->steps[c].out[0];
    s->vals[sp->out[0]].producer = k;
    s->steps[c].dead = true;
    s->fused++;
    tx_graph_count_uses(s);
}

/* Add step c's operand other than value v (step k's output) if it can be
 * a residual k adds where it writes: a float value that exists before k
 * runs; -1 if not. */
static int add_residual(const tx_session *s, int k, int c, int v) {
    const tx_step *add = &s->steps[c];
    int r = add->in[0] == v ? add->in[1] : add->in[0];
    if (r < 0 || r == v || s->vals[r].producer >= k || !tx_onnx_type_is_float(s->vals[r].elem))
        return -1;
    return r;
}

/* Step k takes residual r as input `slot` (the slots from its inputs' end
 * to it omitted; in[] has room for 3 more than the node's inputs) and Add
 * step c's output. */
static void fuse_add_as_input(tx_session *s, int k, int c, int slot, int r) {
    tx_step *sp = &s->steps[k];
    for (int i = sp->n_in; i < slot; i++)
        sp->in[i] = -1;
    sp->in[slot] = r;
    sp->n_in = slot + 1;
    take_add_output(s, k, c);
}

static void fuse_matmul(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        bool mm = is_op(sp, "MatMul"), gemm = is_op(sp, "Gemm");
        if ((!mm && !gemm) || sp->n_out != 1 || sp->bias >= 0 || sp->act)
            continue;
        bool has_c = gemm && sp->n_in > 2 && sp->in[2] >= 0;
        int c = sole_consumer(s, sp->out[0]);
        /* MatMul [.., M, K] x [K, N] + bias [N] or [1, N]: tx_matmul's bias
         * (a following activation is fused by fuse_activations) */
        if (c >= 0 && !has_c && is_op(&s->steps[c], "Add") && s->steps[c].n_in == 2) {
            tx_step *add = &s->steps[c];
            int other = add->in[0] == sp->out[0] ? add->in[1] : add->in[0];
            const tx_session_val *a = &s->vals[sp->in[0]], *b = &s->vals[sp->in[1]];
            int64_t n = -1;
            if (mm && a->rank >= 2 && b->rank >= 2)
                n = b->shape[b->rank - 1];
            if (gemm && b->rank == 2)
                n = b->shape[tx_attr_int(sp->node, "transB", 0) ? 0 : 1];
            bool alpha1 = !gemm || tx_attr_float(sp->node, "alpha", 1.0f) == 1.0f;
            const tx_session_val *bv = other >= 0 ? &s->vals[other] : NULL;
            if (n > 0 && alpha1 && bv && bv->is_const && tx_onnx_type_is_float(bv->elem) &&
                bv->c.numel == n && (bv->rank == 1 || (bv->rank == 2 && bv->shape[0] == 1))) {
                sp->bias = other;
                take_add_output(s, k, c);
            }
        }
    }
}

/* Conv or MatMul (its bias already fused) + Add(output, r) → one step with
 * the residual r as a fourth input (tx_conv_desc / tx_matmul_desc.residual:
 * added where the op writes y); an activation after the Add is then fused
 * by fuse_activations. r must exist before the op runs (a graph input, a
 * constant or an earlier step's output) and the Add must be the op output's
 * only reader. Shapes are checked at run time: a residual that would
 * broadcast runs as the op then add (exec_conv_residual,
 * exec_matmul_residual). 2-D and 1-D convs only (the volume path takes 3
 * inputs). */
static void fuse_residual(tx_session *s);

/* Whether a and b have the same shape, every dim known: an Add of them
 * does not broadcast. */
static bool same_static_shape(const tx_session_val *a, const tx_session_val *b) {
    if (a->rank != b->rank || a->rank < 1)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] < 1 || a->shape[i] != b->shape[i])
            return false;
    return true;
}

/* Whether step sp is Concat(r0, Z) along axis 1 of rank-3 or -4 values, Z a
 * float constant of zeros: r0 padded with zero channels. */
static bool zero_pad_concat(const tx_session *s, const tx_step *sp) {
    if (!is_op(sp, "Concat") || sp->n_in != 2 || sp->n_out != 1 || sp->in[0] < 0 || sp->in[1] < 0)
        return false;
    const tx_session_val *r0 = &s->vals[sp->in[0]], *z = &s->vals[sp->in[1]];
    int64_t axis = tx_attr_int(sp->node, "axis", 0);
    if ((r0->rank != 3 && r0->rank != 4) || (axis != 1 && axis != 1 - r0->rank) || !z->is_const ||
        !z->c.f || z->c.rank != r0->rank || r0->is_const)
        return false;
    for (int64_t i = 0; i < z->c.numel; i++)
        if (z->c.f[i] != 0.0f)
            return false;
    return true;
}

/* Resize + Add(output, r) → one step with r as input 4 (tx_resize_desc.
 * residual: added where the resize writes y), as fuse_residual does for
 * convs: r must exist before the Resize runs and the Add must be the
 * Resize output's only reader; a residual that would broadcast runs as the
 * resize then the add (onnx/resize.c). A feature pyramid's top-down
 * path, y_i = x_i + Resize(y_i+1): 3 in PaddleOCR det. Resize nodes of 2
 * to 4 inputs (in[] has room for 3 more than the node's: index 4 is free);
 * not tf_crop_and_resize, which runs its own way. */
static void fuse_resize_residual(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        if ((!is_op(sp, "Resize") && !is_op(sp, "Upsample")) || sp->n_out != 1 || sp->n_in < 2 ||
            sp->n_in > 4 || sp->in[0] < 0 ||
            strcmp(tx_attr_str(sp->node, "coordinate_transformation_mode", ""),
                   "tf_crop_and_resize") == 0 ||
            !tx_onnx_type_is_float(s->vals[sp->in[0]].elem))
            continue;
        int c = sole_consumer(s, sp->out[0]);
        if (c < 0 || !is_op(&s->steps[c], "Add") || s->steps[c].n_in != 2)
            continue;
        int r = add_residual(s, k, c, sp->out[0]);
        if (r >= 0)
            fuse_add_as_input(s, k, c, 4, r);
    }
}

static void fuse_residual(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        bool conv = is_op(sp, "Conv"), mm = is_op(sp, "MatMul");
        if ((!conv && !mm) || sp->n_out != 1 || sp->n_in > 3 || (mm && sp->n_in != 2) || sp->act ||
            sp->in[0] < 0)
            continue;
        int xr = s->vals[sp->in[0]].rank;
        int c = sole_consumer(s, sp->out[0]);
        if ((conv && xr != 3 && xr != 4) || c < 0 || !is_op(&s->steps[c], "Add") ||
            s->steps[c].n_in != 2)
            continue;
        /* r = Concat(r0, zeros) along the channels, read by this Add alone
         * (BlazeFace's skip path when the channels grow): r0 itself, the
         * other channels adding 0 (tx_conv_desc.residual_pad) */
        const tx_step *add = &s->steps[c];
        int cat = add->in[0] == sp->out[0] ? add->in[1] : add->in[0];
        int kz = conv && cat >= 0 ? s->vals[cat].producer : -1;
        bool pad = kz >= 0 && sole_consumer(s, cat) == c && zero_pad_concat(s, &s->steps[kz]) &&
                   same_static_shape(&s->vals[cat], &s->vals[sp->out[0]]);
        /* (float: as tx_conv takes it, not cast) */
        int r = pad ? s->steps[kz].in[0] : add_residual(s, k, c, sp->out[0]);
        if (pad && (s->vals[r].producer >= k || !tx_onnx_type_is_float(s->vals[r].elem)))
            r = -1;
        if (r < 0)
            continue;
        if (pad) {
            s->steps[kz].dead = true;
            s->fused++;
        }
        sp->resid_pad = pad;
        fuse_add_as_input(s, k, c, 3, r); /* no bias input: MatMul's is sp->bias */
    }
}

/* Fuses a following activation into every op that takes one (MatMul, Gemm;
 * Conv once it exists: its table entry sets TX_OPF_FUSE_ACT). */
static void fuse_activations(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        if (sp->dead || !(sp->op->flags & TX_OPF_FUSE_ACT) || sp->act || sp->n_out < 1)
            continue;
        int c = sole_consumer(s, sp->out[0]);
        if (c < 0)
            continue;
        float alpha = 0, beta = 0;
        tx_op act = activation_of(s, &s->steps[c], &alpha, &beta);
        if (act == TX_OP_NONE || s->steps[c].in[0] != sp->out[0])
            continue;
        sp->act = act;
        sp->act_alpha = alpha;
        sp->act_beta = beta;
        sp->out[0] = s->steps[c].out[0];
        s->vals[sp->out[0]].producer = k;
        s->steps[c].dead = true;
        s->fused++;
        tx_graph_count_uses(s);
    }
}

static tx_status fuse_affine_into_conv(tx_session *s);
static tx_status fuse_gate_residual(tx_session *s);
static tx_status fuse_scalar_affine(tx_session *s);
static tx_status fuse_affine_before_conv(tx_session *s);

tx_status tx_graph_fuse(tx_session *s) {
    /* the constants something reads before fusion (the file's unused
     * initializers stay what they are) */
    int n_before = s->n_vals;
    bool *read = calloc((size_t)n_before + 1, sizeof *read);
    if (!read)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    for (int i = 0; i < n_before; i++)
        read[i] = s->vals[i].n_uses > 0;
    tx_status st = fuse_bn_into_conv(s);
    if (!st)
        st = tx_graph_fuse_qdq(s);
    if (!st && !(st = fuse_gelu(s)) && !(st = fuse_hard_swish(s)) && !(st = fuse_swish(s)))
        st = fuse_layer_norm(s);
    /* after the patterns above, whose Add, Mul and Div by constants are
     * theirs to take */
    if (!st)
        st = fuse_affine_into_conv(s);
    /* a BatchNormalization after an affine the pass above folded
     * (PaddleOCR det's head: ConvTranspose, the Add of its bias, BN) */
    if (!st)
        st = fuse_bn_into_conv(s);
    if (!st)
        st = fuse_scalar_affine(s);
    if (!st)
        st = fuse_affine_before_conv(s);
    fuse_matmul(s);
    fuse_residual(s);
    fuse_resize_residual(s);
    fuse_activations(s);
    if (!st)
        st = fuse_gate_residual(s);
    /* the constants folds replaced (a BN-folded W, the file's W it came
     * from): nothing reads them now. Host copies are freed, the file's
     * weights too where they have an arena block of their own. */
    tx_graph_count_uses(s);
    for (int i = 0; i < s->n_vals; i++) {
        tx_session_val *v = &s->vals[i];
        bool was_read = i >= n_before || read[i];
        if (!v->is_const || v->n_uses || v->is_output || v->is_input || (!v->c_owned && !was_read))
            continue;
        if (v->c_owned) {
            tx_hval_free(&v->c);
        } else {
            tx_arena_release(s->m.arena, v->c.f ? (void *)v->c.f : (void *)v->c.h16);
            memset(&v->c, 0, sizeof v->c);
        }
        v->c_owned = v->is_const = false;
        v->folded_away = was_read;
    }
    free(read);
    return st;
}

/* ---- per-channel affine maps folded into Conv weights ---- */

static tx_status fold_scalar(tx_session *s, int k, bool in, double mul, double add,
                             const char *what);

/* A squeeze-excite gate around a residual, x + x · g with g =
 * HardSigmoid(Conv(..)) (PaddleOCR det's RSE layers: 4 in PP-OCRv4 det),
 * is x · (g + 1): the gate conv computes g + 1 = Clip(α z + β + 1, 1, 2)
 * (z its output, α and β the HardSigmoid's, folded into its weights: W·α,
 * b·α + β + 1), so the full-size Add disappears for a Clip on C values.
 * The Mul must be the Add's, the gate the Mul's, alone; the gate conv's
 * weights constants. Any broadcast keeps the identity: x + x · g and
 * x · (g + 1) have the Mul's shape and the same elements. */
static tx_status fuse_gate_residual(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *add = &s->steps[k];
        if (!is_op(add, "Add") || add->n_in != 2 || add->n_out != 1 || add->in[0] < 0 ||
            add->in[1] < 0)
            continue;
        for (int side = 0; side < 2; side++) {
            int x = add->in[1 - side], mv = add->in[side];
            int mk = s->vals[mv].producer;
            if (mk < 0 || sole_consumer(s, mv) != k)
                continue;
            tx_step *mul = &s->steps[mk];
            if (!is_op(mul, "Mul") || mul->n_in != 2 || (mul->in[0] != x) == (mul->in[1] != x))
                continue;
            int g = mul->in[0] == x ? mul->in[1] : mul->in[0];
            int gk = g >= 0 ? s->vals[g].producer : -1;
            if (gk < 0 || sole_consumer(s, g) != mk)
                continue;
            tx_step *cv = &s->steps[gk];
            if (!is_op(cv, "Conv") || cv->act != TX_OP_HARD_SIGMOID || cv->n_out != 1 ||
                cv->n_in < 2 || cv->n_in > 3 || cv->in[0] < 0 || cv->in[1] < 0 || cv->x_affine ||
                (s->vals[cv->in[0]].rank != 3 && s->vals[cv->in[0]].rank != 4))
                continue;
            tx_session_val *wv = &s->vals[cv->in[1]];
            bool has_b = cv->n_in == 3 && cv->in[2] >= 0;
            const tx_hval *b = has_b ? &s->vals[cv->in[2]].c : NULL;
            int64_t m = wv->c.shape[0];
            if (!wv->is_const || !wv->c.f || wv->c.rank < 3 || m < 1 ||
                (has_b && (!s->vals[cv->in[2]].is_const || !b->f || b->numel != m)))
                continue;
            tx_status st =
                fold_scalar(s, gk, false, cv->act_alpha, (double)cv->act_beta + 1.0, "gate");
            if (st)
                return st;
            cv = &s->steps[gk];
            cv->act = TX_OP_CLIP;
            cv->act_alpha = 1; /* the bounds, for a Clip (onnx/conv.c) */
            cv->act_beta = 2;
            take_add_output(s, mk, k);
            break;
        }
    }
    return TX_STATUS_OK;
}

/* w_out as a copy of W (or W itself: folded in place) and b_out as m new
 * floats; false when out of memory, with nothing left allocated. */
static bool fold_begin(const tx_hval *w, int64_t m, tx_hval *w_out, tx_hval *b_out) {
    if (w_out != w && !tx_hval_copy(w_out, w))
        return false;
    if (tx_hval_alloc(b_out, TX_ONNX_FLOAT, 1, &m))
        return true;
    if (w_out != w)
        tx_hval_free(w_out);
    return false;
}

/* W'[o] = W[o]·scale[o], b'[o] = b[o]·scale[o] + shift[o]: Conv(x, W, b)
 * followed by y·scale + shift per output channel (W [M, C/g, k...], b
 * optional, scale and shift M values). Results are malloc'd; w_out == w
 * folds W in place. */
static bool fold_out_affine(const tx_hval *w, const tx_hval *b, const double *scale,
                            const double *shift, tx_hval *w_out, tx_hval *b_out) {
    int64_t m = w->shape[0];
    if (!fold_begin(w, m, w_out, b_out))
        return false;
    int64_t per = m ? w->numel / m : 0;
    for (int64_t o = 0; o < m; o++) {
        for (int64_t j = 0; j < per; j++)
            w_out->f[o * per + j] = (float)(w->f[o * per + j] * scale[o]);
        b_out->f[o] = (float)((b ? b->f[o] : 0.0) * scale[o] + shift[o]);
    }
    return true;
}

/* fold_out_affine for ConvTranspose, whose W is [C, M/g, k...]: output
 * channel o = g·(M/g) + j is W[c, j] for the input channels c of group g. */
static bool fold_out_affine_t(const tx_hval *w, const tx_hval *b, int64_t group,
                              const double *scale, const double *shift, tx_hval *w_out,
                              tx_hval *b_out) {
    int64_t c = w->shape[0], mg = w->shape[1], m = mg * group;
    if (!fold_begin(w, m, w_out, b_out))
        return false;
    int64_t taps = c && mg ? w->numel / (c * mg) : 0, cg = c / group;
    for (int64_t ci = 0; ci < c; ci++)
        for (int64_t j = 0; j < mg; j++) {
            int64_t o = ci / cg * mg + j;
            float *wp = w_out->f + (ci * mg + j) * taps;
            const float *rp = w->f + (ci * mg + j) * taps;
            for (int64_t t = 0; t < taps; t++)
                wp[t] = (float)(rp[t] * scale[o]);
        }
    for (int64_t o = 0; o < m; o++)
        b_out->f[o] = (float)((b ? b->f[o] : 0.0) * scale[o] + shift[o]);
    return true;
}

/* W'[o, i] = W[o, i]·scale[c], b'[o] = b[o] + Σ_i,k W[o, i, k]·shift[c] (c =
 * o's group's input channel i): Conv of x·scale + shift per input channel,
 * which is exact only where no output reads padding (the zeros would be
 * shifted too). scale and shift hold C = W.shape[1]·group values; w_out ==
 * w folds W in place (each weight is read before it is written). */
static bool fold_in_affine(const tx_hval *w, const tx_hval *b, int64_t group, const double *scale,
                           const double *shift, tx_hval *w_out, tx_hval *b_out) {
    int64_t m = w->shape[0], cg = w->shape[1];
    if (!fold_begin(w, m, w_out, b_out))
        return false;
    int64_t per = m ? w->numel / m : 0, taps = cg ? per / cg : 0;
    for (int64_t o = 0; o < m; o++) {
        int64_t c0 = o / (m / group) * cg;
        double acc = b ? b->f[o] : 0.0;
        for (int64_t i = 0; i < cg; i++)
            for (int64_t t = 0; t < taps; t++) {
                int64_t j = (o * cg + i) * taps + t;
                acc += (double)w->f[j] * shift[c0 + i];
                w_out->f[j] = (float)(w->f[j] * scale[c0 + i]);
            }
        b_out->f[o] = (float)acc;
    }
    return true;
}

/* ---- BatchNormalization folded into the preceding Conv ---- */

/* BN's per-channel scale and shift folded into the output channels of a
 * Conv (W [M, C/group, k...]) or, transposed, a ConvTranspose of `group`
 * groups (W [C, M/group, k...]). */
static bool fold_bn(const tx_hval *w, const tx_hval *b, bool transposed, int64_t group,
                    const tx_hval *gamma, const tx_hval *beta, const tx_hval *mean,
                    const tx_hval *var, float eps, tx_hval *w_out, tx_hval *b_out) {
    if (!w->f || w->rank < 3 || (transposed && (group < 1 || w->shape[0] % group)))
        return false;
    int64_t m = transposed ? w->shape[1] * group : w->shape[0];
    const tx_hval *ch[4] = {gamma, beta, mean, var};
    for (int i = 0; i < 4; i++)
        if (!ch[i]->f || ch[i]->numel != m)
            return false;
    if (b && (!b->f || b->numel != m))
        return false;
    double *sc = malloc(2 * (size_t)m * sizeof *sc + 1);
    if (!sc)
        return false;
    for (int64_t o = 0; o < m; o++) {
        sc[o] = (double)gamma->f[o] / sqrt((double)var->f[o] + (double)eps);
        sc[m + o] = beta->f[o] - mean->f[o] * sc[o];
    }
    bool ok = transposed ? fold_out_affine_t(w, b, group, sc, sc + m, w_out, b_out)
                         : fold_out_affine(w, b, sc, sc + m, w_out, b_out);
    free(sc);
    return ok;
}

bool tx_fold_bn_into_conv(const tx_hval *w, const tx_hval *b, const tx_hval *gamma,
                          const tx_hval *beta, const tx_hval *mean, const tx_hval *var, float eps,
                          tx_hval *w_out, tx_hval *b_out) {
    return fold_bn(w, b, false, 1, gamma, beta, mean, var, eps, w_out, b_out);
}

/* Step sp as y = x·mul + add per channel, for one operand x and a constant
 * the other (Mul, Add, Sub, or Div by the constant) that is a scalar or
 * holds `ch` values along axis 1 of x's rank `rank` (so y has x's shape):
 * x's value, mul and add filled (ch values each); -1 if sp is not such a
 * step, or x must be `want` (>= 0) and is not. */
static int affine_step(const tx_session *s, const tx_step *sp, int want, int rank, int64_t ch,
                       double *mul, double *add) {
    bool is_mul = is_op(sp, "Mul"), is_add = is_op(sp, "Add"), is_sub = is_op(sp, "Sub"),
         is_div = is_op(sp, "Div");
    if ((!is_mul && !is_add && !is_sub && !is_div) || sp->n_in != 2 || sp->n_out != 1)
        return -1;
    int ci = -1; /* which input is the constant */
    for (int i = 0; i < 2 && ci < 0; i++) {
        const tx_session_val *c = sp->in[i] >= 0 ? &s->vals[sp->in[i]] : NULL;
        if (!c || !c->is_const || !c->c.f || c->c.rank > rank ||
            (c->c.numel != 1 && c->c.numel != ch))
            continue;
        bool ok = true;
        for (int j = 0; j < c->c.rank && c->c.numel != 1; j++)
            ok &= c->c.shape[j] == (rank - c->c.rank + j == 1 ? ch : 1);
        for (int64_t j = 0; j < c->c.numel && ok; j++)
            ok &= isfinite(c->c.f[j]) && (!is_div || c->c.f[j] != 0);
        if (ok)
            ci = i;
    }
    int x = ci < 0 ? -1 : sp->in[1 - ci];
    if (x < 0 || (want >= 0 && x != want) || (is_div && ci == 0) || s->vals[x].is_const ||
        !tx_onnx_type_is_float(s->vals[x].elem))
        return -1;
    const tx_hval *c = &s->vals[sp->in[ci]].c;
    for (int64_t o = 0; o < ch; o++) {
        double v = c->f[c->numel == 1 ? 0 : o];
        mul[o] = is_mul ? v : is_div ? 1.0 / v : (is_sub && ci == 0) ? -1.0 : 1.0;
        add[o] = is_add ? v : is_sub ? (ci == 0 ? v : -v) : 0.0;
    }
    return x;
}

/* Conv or ConvTranspose (*transposed) step k's weights (and bias, if any)
 * as host float values: W's rank, or 0 when they are not constants
 * (quantized weights, say). */
static int conv_const_rank(const tx_session *s, const tx_step *sp, bool *transposed) {
    *transposed = is_op(sp, "ConvTranspose");
    if ((!is_op(sp, "Conv") && !*transposed) || sp->n_out != 1 || sp->n_in < 2 || sp->n_in > 3 ||
        sp->act || sp->in[1] < 0)
        return 0;
    const tx_session_val *w = &s->vals[sp->in[1]];
    if (!w->is_const || !w->c.f || w->c.rank < 3 || w->c.shape[0] < 1 || w->c.shape[1] < 1)
        return 0;
    int64_t group = tx_attr_int(sp->node, "group", 1);
    if (*transposed && (group < 1 || w->c.shape[0] % group))
        return 0;
    int64_t m = *transposed ? w->c.shape[1] * group : w->c.shape[0];
    if (sp->n_in == 3 && sp->in[2] >= 0) {
        const tx_session_val *b = &s->vals[sp->in[2]];
        if (!b->is_const || !b->c.f || b->c.numel != m)
            return 0;
    }
    return w->c.rank;
}

/* Whether Conv step sp (weights w) reads no padding, its groups dividing
 * W's rows: an affine of its input folds into w then (fold_in_affine). */
static bool conv_unpadded(const tx_step *sp, const tx_hval *w) {
    const int64_t *pads;
    int np = tx_attr_ints(sp->node, "pads", &pads);
    const char *ap = tx_attr_str(sp->node, "auto_pad", "NOTSET");
    bool unpadded = strcmp(ap, "NOTSET") == 0 || strcmp(ap, "VALID") == 0;
    for (int i = 0; i < np; i++)
        unpadded &= pads[i] == 0;
    int64_t group = tx_attr_int(sp->node, "group", 1);
    return unpadded && group >= 1 && w->shape[0] % group == 0;
}

/* Conv step k's constant weights and bias (the caller checked them) with
 * a scalar affine folded in: of its input (in; the conv reads no padding:
 * W·mul, b + add·ΣW) or of its output (W·mul, b·mul + add). The new
 * constants are named for `what` (set_conv_consts). */
static tx_status fold_scalar(tx_session *s, int k, bool in, double mul, double add,
                             const char *what) {
    tx_step *sp = &s->steps[k];
    tx_session_val *wv = &s->vals[sp->in[1]];
    const tx_hval *w = &wv->c;
    int64_t group = tx_attr_int(sp->node, "group", 1);
    int64_t ch = in ? w->shape[1] * group : w->shape[0];
    double *buf = malloc(2 * (size_t)ch * sizeof *buf);
    bool in_place = wv->n_uses == 1 && !wv->is_output;
    tx_hval w2, b2, *wo = in_place ? &wv->c : &w2;
    const tx_hval *b = sp->n_in == 3 && sp->in[2] >= 0 ? &s->vals[sp->in[2]].c : NULL;
    bool ok = buf != NULL;
    if (ok) {
        for (int64_t c = 0; c < ch; c++) {
            buf[c] = mul;
            buf[ch + c] = add;
        }
        ok = in ? fold_in_affine(w, b, group, buf, buf + ch, wo, &b2)
                : fold_out_affine(w, b, buf, buf + ch, wo, &b2);
    }
    free(buf);
    if (!ok)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    return set_conv_consts(s, k, what, in_place ? NULL : &w2, &b2);
}

/* The learnable affine blocks of PP-LCNetV3 (PaddleOCR v4's backbones) and
 * any scale or shift by constants after a conv:
 *     Conv(x, W, b) → Mul(·, s) → Add(·, t)   (scalars or per channel)
 * fold into Conv(x, W·s, b·s + t), so that an activation after them fuses
 * into the conv too; and before a conv that reads no padding (a 1x1, say):
 *     Mul(h, s) → Add(·, t) → Conv(·, W, b)
 * into Conv(h, W·s, b + Σ W·t). After a ConvTranspose too (PaddleOCR det's
 * head: ConvTranspose → Add(·, per-channel)). Any chain of Mul, Add, Sub and
 * Div by such constants folds; each intermediate must have no other reader. */
#define TX_AFFINE_CHAIN 8
static tx_status fuse_affine_into_conv(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        for (int side = 0; side < 2; side++) {
            tx_step *sp = &s->steps[k];
            bool tr;
            int rank = conv_const_rank(s, sp, &tr);
            /* ConvTranspose: after it only (its input side would need the
             * zeros it inserts between inputs shifted too) */
            if (!rank || (tr && side == 1))
                break;
            const tx_hval *w = &s->vals[sp->in[1]].c;
            int64_t group = tx_attr_int(sp->node, "group", 1);
            int64_t ch = side == 0 && !tr ? w->shape[0] : w->shape[1] * group;
            if (side == 1 && !conv_unpadded(sp, w)) /* every output reads only x */
                break;
            double *buf = malloc(4 * (size_t)ch * sizeof *buf);
            if (!buf)
                return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
            double *sc = buf, *sh = buf + ch, *mul = buf + 2 * ch, *add = buf + 3 * ch;
            for (int64_t o = 0; o < ch; o++) {
                sc[o] = 1;
                sh[o] = 0;
            }
            int chain[TX_AFFINE_CHAIN], n = 0;
            int v = side == 0 ? sp->out[0] : sp->in[0], at = k;
            while (n < TX_AFFINE_CHAIN && v >= 0) {
                int c = side == 0 ? sole_consumer(s, v) : s->vals[v].producer;
                if (c < 0 || (side == 1 && sole_consumer(s, v) != at))
                    break;
                int x = affine_step(s, &s->steps[c], side == 0 ? v : -1, rank, ch, mul, add);
                /* before the conv, x must be what the conv reads, not a
                 * value the constant broadcasts up to it ([N, 1, H, W] by
                 * [1, C, 1, 1], or a lower rank) */
                if (x < 0 || (side == 1 && (s->vals[x].rank != rank || s->vals[x].shape[1] != ch)))
                    break;
                /* after the conv: y = (sc·z + sh)·mul + add; before: conv
                 * input = sc·(x·mul + add) + sh */
                for (int64_t o = 0; o < ch; o++)
                    if (side == 0) {
                        sc[o] *= mul[o];
                        sh[o] = sh[o] * mul[o] + add[o];
                    } else {
                        sh[o] += sc[o] * add[o];
                        sc[o] *= mul[o];
                    }
                chain[n++] = c;
                v = side == 0 ? s->steps[c].out[0] : x;
                at = c;
            }
            /* W read by this conv alone is folded where it is: a copy of a
             * model's weights costs a page fault per 4 KiB */
            tx_session_val *wv = &s->vals[sp->in[1]];
            bool in_place = wv->n_uses == 1 && !wv->is_output;
            tx_hval w2, b2, *wo = in_place ? &wv->c : &w2;
            bool has_b = sp->n_in == 3 && sp->in[2] >= 0;
            const tx_hval *b = has_b ? &s->vals[sp->in[2]].c : NULL;
            bool ok = n > 0 && (side == 1 ? fold_in_affine(w, b, group, sc, sh, wo, &b2)
                                : tr      ? fold_out_affine_t(w, b, group, sc, sh, wo, &b2)
                                          : fold_out_affine(w, b, sc, sh, wo, &b2));
            free(buf);
            if (n > 0 && !ok)
                return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
            if (!n)
                continue;
            tx_status st = set_conv_consts(s, k, side == 0 ? "scaled" : "in_scaled",
                                           in_place ? NULL : &w2, &b2);
            if (st)
                return st;
            sp = &s->steps[k];
            if (side == 0) {
                sp->out[0] = v;
                s->vals[v].producer = k;
            } else {
                sp->in[0] = v;
            }
            for (int i = 0; i < n; i++)
                s->steps[chain[i]].dead = true;
            s->fused += n;
            tx_graph_count_uses(s);
        }
    }
    return TX_STATUS_OK;
}

/* Two or more Mul, Add, Sub or Div by scalar constants in a row, on any
 * float value whose rank is known (what fuse_affine_into_conv left: before a
 * padded conv, after an activation), become one Affine step, alpha x +
 * beta, placed where the last was: one pass over the data, not one each.
 * Every intermediate must have no other reader. */
static tx_status fuse_scalar_affine(tx_session *s) {
    const tx_onnx_op *aff = tx_onnx_op_find("", "Affine");
    for (int k = 0; k < s->n_steps && aff; k++) {
        double mul, add, alpha = 1, beta = 0;
        if (s->steps[k].dead)
            continue;
        /* x: the chain's input, whose shape the scalars keep */
        int x = affine_step(s, &s->steps[k], -1, TX_MAX_RANK, 1, &mul, &add);
        int rank = x >= 0 ? s->vals[x].rank : -1, n = 0, end = -1, v = x;
        for (int c = k; c >= 0 && rank >= 0; c = sole_consumer(s, v)) {
            /* shape arithmetic the planner runs on the host stays there:
             * Affine has no host path */
            if (affine_step(s, &s->steps[c], v, rank, 1, &mul, &add) != v ||
                s->vals[s->steps[c].out[0]].host_static)
                break;
            alpha *= mul;
            beta = beta * mul + add;
            n++;
            end = c;
            v = s->steps[c].out[0];
        }
        if (n < 2 || !(fabs(alpha) <= FLT_MAX) || !(fabs(beta) <= FLT_MAX) ||
            (alpha != 0 && fabs(alpha) < FLT_MIN))
            continue;
        tx_step *e = &s->steps[end];
        tx_onnx_node *nd = unary_node(s, e->node->name, "Affine", x, v);
        tx_onnx_attr *at = tx_arena_alloc(s->m.arena, 2 * sizeof *at);
        if (!nd || !at)
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        at[0] = (tx_onnx_attr){.name = "alpha", .type = TX_ATTR_FLOAT, .f = (float)alpha};
        at[1] = (tx_onnx_attr){.name = "beta", .type = TX_ATTR_FLOAT, .f = (float)beta};
        nd->attrs = at;
        nd->n_attrs = 2;
        for (int c = k; c != end; c = sole_consumer(s, s->steps[c].out[0]))
            s->steps[c].dead = true;
        e->node = nd;
        e->op = aff;
        e->n_in = 1;
        e->in[0] = x;
        s->fused += n - 1;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}

/* Whether step cv is a 1-D or 2-D Conv reading value v as its input (and
 * nowhere else) without an affine of its own yet. */
static bool conv_reads_only_x(const tx_session *s, const tx_step *cv, int v) {
    if (!is_op(cv, "Conv") || cv->n_in < 2 || cv->in[0] != v || cv->x_affine)
        return false;
    for (int i = 1; i < cv->n_in; i++)
        if (cv->in[i] == v)
            return false;
    int rank = s->vals[v].rank;
    return rank == 3 || rank == 4;
}

/* A scalar affine (an Affine step, or one Mul, Add, Sub or Div by a scalar
 * constant) that only Convs read, as their input x: what
 * fuse_affine_into_conv cannot fold into the weights because the convs pad
 * (PP-LCNetV3's learnable affine after a HardSwish, before a padded
 * depthwise conv and sometimes a 1x1 beside it: 13 in PaddleOCR det, 13 in
 * rec). Each padded conv reads its input through it (tx_conv_desc.x_affine:
 * inside x only, the padding 0), so it costs no pass of its own; an
 * unpadded one with constant weights (a 1x1 beside the depthwise) gets it
 * folded into them instead, which keeps it a matmul on the GPU
 * (conv_is_matmul) and one op on the CPU. */
static tx_status fuse_affine_before_conv(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *a = &s->steps[k];
        if (a->dead || a->n_out != 1 || a->act)
            continue;
        double mul = 1, add = 0;
        int x = -1;
        if (is_op(a, "Affine") && a->n_in == 1) {
            x = a->in[0];
            mul = tx_attr_float(a->node, "alpha", 1.0f);
            add = tx_attr_float(a->node, "beta", 0.0f);
        } else {
            x = affine_step(s, a, -1, TX_MAX_RANK, 1, &mul, &add);
        }
        int v = a->out[0];
        /* x of v's rank: a scalar of higher rank ([1, 1, 1, 1] times x [C, H,
         * W]) makes v a rank the conv reads that x is not */
        if (x < 0 || v < 0 || s->vals[v].is_output || s->vals[v].host_static ||
            s->vals[v].n_uses < 1 || s->vals[x].rank != s->vals[v].rank ||
            !(fabs(mul) <= FLT_MAX) || !(fabs(add) <= FLT_MAX) || (mul != 0 && fabs(mul) < FLT_MIN))
            continue;
        int readers = 0;
        bool only_convs = true;
        for (int c = k + 1; c < s->n_steps && only_convs; c++) {
            const tx_step *cv = &s->steps[c];
            bool reads = false;
            for (int i = 0; i < cv->n_in && !cv->dead; i++)
                reads |= cv->in[i] == v;
            if (reads) {
                readers++;
                only_convs = conv_reads_only_x(s, cv, v);
            }
        }
        if (!only_convs || readers != s->vals[v].n_uses)
            continue;
        for (int c = k + 1; c < s->n_steps; c++) {
            tx_step *cv = &s->steps[c];
            if (cv->dead || cv->n_in < 1 || cv->in[0] != v)
                continue;
            bool tr;
            if (conv_const_rank(s, cv, &tr) && conv_unpadded(cv, &s->vals[cv->in[1]].c)) {
                tx_status st = fold_scalar(s, c, true, mul, add, "in_scaled");
                if (st)
                    return st;
                s->steps[c].in[0] = x;
                continue;
            }
            cv->x_affine = true;
            cv->x_scale = (float)mul;
            cv->x_shift = (float)add;
            cv->in[0] = x;
        }
        a->dead = true;
        s->fused++;
        tx_graph_count_uses(s);
    }
    return TX_STATUS_OK;
}
