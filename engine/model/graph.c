/* Plan-time graph passes, in order:
 *   1. value table (initializers, inputs, node outputs) and topological order
 *   2. support check: every op type without an executor is named at once
 *   3. constant folding + shape inference, one walk in topological order:
 *      a node whose inputs are all constants (or that reads only a statically
 *      known shape: Shape, Size) runs its executor's host path now; the rest
 *      get static output shapes from their op's infer function
 *   4. fusion (fuse.c): Conv ← BatchNormalization (weights rewritten on the
 *      host), MatMul/Gemm + Add(bias) + activation → one tx_matmul
 *   5. memory plan: each intermediate is freed right after its last consumer,
 *      so its texture goes back to the pool for the next op to reuse */
#include <string.h>

#include "session.h"

static uint32_t hash_str(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int tx_graph_find(const tx_session *s, const char *name) {
    if (!s->index_cap)
        return -1;
    uint32_t m = (uint32_t)s->index_cap - 1;
    for (uint32_t h = hash_str(name) & m;; h = (h + 1) & m) {
        int i = s->index[h];
        if (i < 0)
            return -1;
        if (strcmp(s->vals[i].name, name) == 0)
            return i;
    }
}

static tx_status index_rebuild(tx_session *s, int cap) {
    int *idx = malloc((size_t)cap * sizeof *idx);
    if (!idx)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    for (int i = 0; i < cap; i++)
        idx[i] = -1;
    free(s->index);
    s->index = idx;
    s->index_cap = cap;
    uint32_t m = (uint32_t)cap - 1;
    for (int i = 0; i < s->n_vals; i++) {
        uint32_t h = hash_str(s->vals[i].name) & m;
        while (idx[h] >= 0)
            h = (h + 1) & m;
        idx[h] = i;
    }
    return TX_STATUS_OK;
}

/* Adds a value (names must be unique); returns its index or -1 (error set). */
int tx_graph_val_add(tx_session *s, const char *name) {
    if (s->n_vals == s->cap_vals) {
        int cap = s->cap_vals ? s->cap_vals * 2 : 64;
        tx_session_val *v = realloc(s->vals, (size_t)cap * sizeof *v);
        if (!v) {
            tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
            return -1;
        }
        s->vals = v;
        s->cap_vals = cap;
    }
    int i = s->n_vals++;
    tx_session_val *v = &s->vals[i];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->rank = -1;
    v->decl_rank = -1;
    v->producer = -1;
    v->last_use = -1;
    if (s->n_vals * 2 > s->index_cap) {
        if (index_rebuild(s, s->index_cap ? s->index_cap * 2 : 256))
            return -1;
    } else {
        uint32_t m = (uint32_t)s->index_cap - 1;
        uint32_t h = hash_str(name) & m;
        while (s->index[h] >= 0)
            h = (h + 1) & m;
        s->index[h] = i;
    }
    return i;
}

static void set_info_from(tx_session_val *v, const tx_onnx_vinfo *vi) {
    if (vi->elem)
        v->elem = vi->elem;
    if (vi->rank >= 0) {
        v->rank = vi->rank;
        memcpy(v->shape, vi->shape, sizeof v->shape);
        memcpy(v->dim_names, vi->dim_param, sizeof v->dim_names);
        v->decl_rank = vi->rank;
        memcpy(v->decl_shape, vi->shape, sizeof v->decl_shape);
    }
}

/* Whether two shapes can be the same tensor's: ranks equal, and every dim
 * both know equal (-1 is unknown). */
static bool shapes_agree(int ra, const int64_t *a, int rb, const int64_t *b) {
    if (ra != rb)
        return false;
    for (int d = 0; d < ra; d++)
        if (a[d] >= 0 && b[d] >= 0 && a[d] != b[d])
            return false;
    return true;
}

/* ---- 1. values and topological order ---- */

static tx_status build(tx_session *s) {
    tx_onnx_model *m = &s->m;
    tx_ctx *ctx = s->ctx;
    for (int i = 0; i < m->n_inits; i++) {
        if (tx_graph_find(s, m->inits[i].name) >= 0)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "onnx: initializer \"%s\" is defined twice", m->inits[i].name);
        int k = tx_graph_val_add(s, m->inits[i].name);
        if (k < 0)
            return TX_STATUS_OUT_OF_MEMORY;
        tx_session_val *v = &s->vals[k];
        v->is_const = true;
        v->c = m->inits[i].v;
        v->elem = v->c.elem;
        v->rank = v->c.rank;
        memcpy(v->shape, v->c.shape, sizeof v->shape);
    }
    s->inputs = malloc((size_t)(m->n_inputs + 1) * sizeof(int));
    s->outputs = malloc((size_t)(m->n_outputs + 1) * sizeof(int));
    if (!s->inputs || !s->outputs)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    for (int i = 0; i < m->n_inputs; i++) {
        const tx_onnx_vinfo *vi = &m->inputs[i];
        int k = tx_graph_find(s, vi->name);
        if (k >= 0 && s->vals[k].is_const) {
            /* IR < 4 lists initializers as inputs too: not a real input, but
             * what it declares must be what the weights are */
            const tx_session_val *c = &s->vals[k];
            if (vi->rank >= 0 && !shapes_agree(vi->rank, vi->shape, c->rank, c->shape)) {
                char a[160], b[160];
                tx_shape_str(a, sizeof a, vi->rank, vi->shape);
                tx_shape_str(b, sizeof b, c->rank, c->shape);
                return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                               "onnx: input \"%s\" is declared %s but its initializer is %s",
                               vi->name, a, b);
            }
            if (vi->elem && tx_onnx_type_is_float(vi->elem) != tx_onnx_type_is_float(c->elem))
                return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH,
                               "onnx: input \"%s\" is declared %s but its initializer is %s",
                               vi->name, tx_onnx_type_name(vi->elem), tx_onnx_type_name(c->elem));
            continue;
        }
        if (k >= 0)
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "onnx: input \"%s\" is listed twice",
                           vi->name);
        if (vi->not_tensor)
            return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                           "onnx: input \"%s\" is not a tensor (sequence/map/optional types are "
                           "unsupported)",
                           vi->name);
        if (vi->elem == TX_ONNX_BFLOAT16 ||
            (vi->elem && !tx_onnx_type_is_float(vi->elem) && !tx_onnx_type_is_int(vi->elem)))
            return tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                           "onnx: input \"%s\" has element type %s (unsupported)", vi->name,
                           tx_onnx_type_name(vi->elem));
        k = tx_graph_val_add(s, vi->name);
        if (k < 0)
            return TX_STATUS_OUT_OF_MEMORY;
        set_info_from(&s->vals[k], vi);
        s->vals[k].is_input = true;
        s->inputs[s->n_inputs++] = k;
    }
    /* node outputs */
    int *prod = NULL;
    s->steps = calloc((size_t)(m->n_nodes + 1), sizeof *s->steps);
    int *order = malloc((size_t)(m->n_nodes + 1) * sizeof *order);
    int *pending = calloc((size_t)(m->n_nodes + 1), sizeof *pending);
    tx_status st = TX_STATUS_OK;
    if (!s->steps || !order || !pending) {
        st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        goto done;
    }
    for (int n = 0; n < m->n_nodes && !st; n++) {
        const tx_onnx_node *nd = &m->nodes[n];
        for (int o = 0; o < nd->n_out && !st; o++) {
            if (!nd->out[o][0])
                continue;
            if (tx_graph_find(s, nd->out[o]) >= 0) {
                st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                             "onnx: value \"%s\" is produced twice (node \"%s\")", nd->out[o],
                             nd->name);
                break;
            }
            int k = tx_graph_val_add(s, nd->out[o]);
            if (k < 0)
                st = TX_STATUS_OUT_OF_MEMORY;
            else
                s->vals[k].producer = n; /* node index for now; step index below */
        }
    }
    if (st)
        goto done;
    /* Kahn's algorithm over node indices: pending[n] = inputs not yet produced */
    prod = malloc((size_t)(s->n_vals + 1) * sizeof *prod);
    if (!prod) {
        st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        goto done;
    }
    for (int i = 0; i < s->n_vals; i++)
        prod[i] = s->vals[i].producer;
    for (int n = 0; n < m->n_nodes; n++) {
        const tx_onnx_node *nd = &m->nodes[n];
        for (int i = 0; i < nd->n_in; i++) {
            if (!nd->in[i][0])
                continue;
            int k = tx_graph_find(s, nd->in[i]);
            if (k < 0) {
                st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                             "onnx: node \"%s\" (%s) reads \"%s\", which nothing produces",
                             nd->name, nd->op_type, nd->in[i]);
                goto done;
            }
            if (prod[k] >= 0)
                pending[n]++;
        }
    }
    int head = 0, tail = 0;
    for (int n = 0; n < m->n_nodes; n++)
        if (!pending[n])
            order[tail++] = n;
    while (head < tail) {
        int n = order[head++];
        const tx_onnx_node *nd = &m->nodes[n];
        for (int o = 0; o < nd->n_out; o++) {
            if (!nd->out[o][0])
                continue;
            prod[tx_graph_find(s, nd->out[o])] = -1;
        }
        /* wake the consumers (a scan over pending nodes: fine for graphs of
         * a few thousand nodes) */
        for (int c = 0; c < m->n_nodes; c++) {
            if (pending[c] <= 0)
                continue;
            const tx_onnx_node *cn = &m->nodes[c];
            for (int i = 0; i < cn->n_in; i++) {
                if (!cn->in[i][0])
                    continue;
                int k = tx_graph_find(s, cn->in[i]);
                if (s->vals[k].producer == n) {
                    if (--pending[c] == 0)
                        order[tail++] = c;
                }
            }
        }
    }
    if (tail != m->n_nodes) {
        st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "onnx: the graph has a cycle");
        goto done;
    }
    /* steps in topological order */
    for (int k = 0; k < m->n_nodes; k++) {
        int n = order[k];
        const tx_onnx_node *nd = &m->nodes[n];
        tx_step *sp = &s->steps[k];
        sp->node = nd;
        sp->bias = -1;
        sp->n_in = nd->n_in;
        sp->n_out = nd->n_out;
        sp->in = malloc((size_t)(nd->n_in + 3) * sizeof(int));
        sp->out = malloc((size_t)(nd->n_out + 1) * sizeof(int));
        if (!sp->in || !sp->out) {
            st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
            goto done;
        }
        for (int i = 0; i < nd->n_in; i++)
            sp->in[i] = nd->in[i][0] ? tx_graph_find(s, nd->in[i]) : -1;
        for (int o = 0; o < nd->n_out; o++) {
            sp->out[o] = nd->out[o][0] ? tx_graph_find(s, nd->out[o]) : -1;
            if (sp->out[o] >= 0)
                s->vals[sp->out[o]].producer = k;
        }
    }
    s->n_steps = m->n_nodes;
    int io = 4;
    for (int n = 0; n < m->n_nodes; n++)
        if (m->nodes[n].n_in + m->nodes[n].n_out + 4 > io)
            io = m->nodes[n].n_in + m->nodes[n].n_out + 4;
    s->io = malloc((size_t)io * sizeof *s->io);
    if (!s->io) {
        st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        goto done;
    }
    /* declared shapes: value_info and outputs */
    for (int i = 0; i < m->n_vinfos; i++) {
        int k = tx_graph_find(s, m->vinfos[i].name);
        if (k >= 0 && !s->vals[k].is_const)
            set_info_from(&s->vals[k], &m->vinfos[i]);
    }
    for (int i = 0; i < m->n_outputs; i++) {
        int k = tx_graph_find(s, m->outputs[i].name);
        if (k < 0) {
            st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                         "onnx: graph output \"%s\" is never produced", m->outputs[i].name);
            goto done;
        }
        if (m->outputs[i].not_tensor) {
            st = tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                         "onnx: output \"%s\" is not a tensor (sequence/map/optional types are "
                         "unsupported)",
                         m->outputs[i].name);
            goto done;
        }
        if (m->outputs[i].elem == TX_ONNX_BFLOAT16 || m->outputs[i].elem == TX_ONNX_STRING) {
            st = tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                         "onnx: output \"%s\" has element type %s (unsupported)",
                         m->outputs[i].name, tx_onnx_type_name(m->outputs[i].elem));
            goto done;
        }
        if (!s->vals[k].is_const && !s->vals[k].is_input)
            set_info_from(&s->vals[k], &m->outputs[i]);
        s->vals[k].is_output = true;
        s->outputs[s->n_outputs++] = k;
    }
done:
    free(prod);
    free(order);
    free(pending);
    return st;
}

/* ---- 2. support check ---- */

static tx_status check_support(tx_session *s) {
    char list[768] = "", nodes[512] = "";
    int missing = 0;
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        const tx_onnx_node *nd = sp->node;
        sp->op = tx_onnx_op_find(nd->domain, nd->op_type);
        if (sp->op)
            continue;
        char item[160];
        if (nd->domain[0] && strcmp(nd->domain, "ai.onnx") != 0)
            snprintf(item, sizeof item, "\"%s:%s\"", nd->domain, nd->op_type);
        else
            snprintf(item, sizeof item, "\"%s\"", nd->op_type);
        if (strstr(list, item))
            continue;
        if (strlen(list) + strlen(item) + 8 < sizeof list) {
            if (missing)
                strcat(list, ", ");
            strcat(list, item);
            char nn[96];
            snprintf(nn, sizeof nn, "%s\"%.80s\"", missing ? ", " : "", nd->name);
            if (strlen(nodes) + strlen(nn) + 1 < sizeof nodes)
                strcat(nodes, nn);
        }
        missing++;
    }
    if (missing)
        return tx_fail(s->ctx, TX_STATUS_UNSUPPORTED,
                       "onnx: unsupported op_type%s %s (first at node%s %s)",
                       missing > 1 ? "s" : "", list, missing > 1 ? "s" : "", nodes);
    bool default_domain = false; /* ai.onnx.preview.training models import only that */
    for (int k = 0; k < s->n_steps; k++)
        default_domain = default_domain || !s->steps[k].node->domain[0] ||
                         strcmp(s->steps[k].node->domain, "ai.onnx") == 0;
    if (default_domain && s->m.opset < 1)
        return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                       "onnx: the model imports no default-domain opset");
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        int n_in = sp->n_in;
        while (n_in > 0 && sp->in[n_in - 1] < 0)
            n_in--;
        if (n_in < sp->op->min_in || (sp->op->max_in >= 0 && n_in > sp->op->max_in))
            return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                           "onnx: %s node \"%s\" has %d inputs (takes %d..%d)", sp->node->op_type,
                           sp->node->name, n_in, sp->op->min_in, sp->op->max_in);
        if (sp->n_out < 1)
            return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                           "onnx: %s node \"%s\" has no outputs", sp->node->op_type,
                           sp->node->name);
        /* an empty name marks an optional input as absent; the required
         * ones (the first min_in) must be there */
        for (int i = 0; i < sp->op->min_in; i++)
            if (sp->in[i] < 0)
                return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                               "onnx: %s node \"%s\": input %d is required but empty",
                               sp->node->op_type, sp->node->name, i);
    }
    return TX_STATUS_OK;
}

/* ---- 3. constant folding and shape inference ---- */

void tx_graph_xnode(tx_session *s, int k, tx_xnode *x) {
    tx_step *sp = &s->steps[k];
    tx_session_val **in = s->io, **out = s->io + sp->n_in;
    memset(x, 0, sizeof *x);
    x->s = s;
    x->ctx = s->ctx;
    x->node = sp->node;
    x->opset = s->m.opset;
    x->n_in = sp->n_in;
    x->n_out = sp->n_out;
    x->in = in;
    x->out = out;
    for (int i = 0; i < sp->n_in; i++)
        in[i] = sp->in[i] >= 0 ? &s->vals[sp->in[i]] : NULL;
    for (int o = 0; o < sp->n_out; o++)
        out[o] = sp->out[o] >= 0 ? &s->vals[sp->out[o]] : NULL;
    x->act = sp->act;
    x->act_alpha = sp->act_alpha;
    x->act_beta = sp->act_beta;
    x->x_affine = sp->x_affine;
    x->x_scale = sp->x_scale;
    x->x_shift = sp->x_shift;
    x->resid_pad = sp->resid_pad;
    x->bias = sp->bias >= 0 ? &s->vals[sp->bias] : NULL;
}

/* Runs f over step k's xnode (fold mode). */
static tx_status with_xnode(tx_session *s, int k, tx_onnx_exec_fn f) {
    tx_xnode x;
    tx_graph_xnode(s, k, &x);
    x.fold = true;
    return f(&x);
}

/* A step's outputs after folding or inference: within TX_DIM_MAX (what later
 * nodes compute from the shapes must not overflow), and agreeing with what
 * the file declares: weights that contradict the declared shapes make the
 * file wrong, and running it anyway would hand out numbers of a shape the
 * caller was told otherwise. */
static tx_status check_outputs(tx_session *s, const tx_step *sp) {
    for (int o = 0; o < sp->n_out; o++) {
        const tx_session_val *v = sp->out[o] >= 0 ? &s->vals[sp->out[o]] : NULL;
        if (!v || v->rank < 0)
            continue;
        if (!tx_dims_in_range(v->rank, v->shape, TX_DIM_MAX, true))
            return tx_fail(s->ctx, TX_STATUS_TOO_LARGE,
                           "onnx: %s node \"%s\": output \"%s\" would have more than 2^40 "
                           "elements",
                           sp->node->op_type, sp->node->name, v->name);
        if (v->decl_rank >= 0 && !shapes_agree(v->rank, v->shape, v->decl_rank, v->decl_shape)) {
            char a[160], b[160];
            tx_shape_str(a, sizeof a, v->rank, v->shape);
            tx_shape_str(b, sizeof b, v->decl_rank, v->decl_shape);
            return tx_fail(s->ctx, TX_STATUS_SHAPE_MISMATCH,
                           "onnx: %s node \"%s\" makes \"%s\" %s from its inputs, but the "
                           "model declares it %s",
                           sp->node->op_type, sp->node->name, v->name, a, b);
        }
    }
    return TX_STATUS_OK;
}

static tx_status fold_and_infer(tx_session *s) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        const tx_onnx_op *op = sp->op;
        bool all_const = true, all_host = true;
        for (int i = 0; i < sp->n_in; i++) {
            if (sp->in[i] < 0)
                continue;
            tx_session_val *v = &s->vals[sp->in[i]];
            all_const &= v->is_const;
            all_host &= v->is_const || v->host_static;
        }
        if ((all_const && (op->flags & TX_OPF_HOST)) || (op->flags & TX_OPF_SHAPE_ONLY)) {
            tx_status st = with_xnode(s, k, op->exec);
            if (st == TX_STATUS_OK) {
                sp->dead = true;
                s->folded++;
                st = check_outputs(s, sp);
                if (st)
                    return st;
                continue;
            }
            if (st != TX_STATUS_DEFER)
                return st;
        }
        if ((op->flags & TX_OPF_HOST_ONLY) && !all_host)
            return tx_fail(s->ctx, TX_STATUS_UNSUPPORTED,
                           "onnx: unsupported op_type \"%s\" on device tensors (node \"%s\": "
                           "only its host path for shape computations exists)",
                           sp->node->op_type, sp->node->name);
        bool host_out = (op->flags & TX_OPF_SHAPE_ONLY) || ((op->flags & TX_OPF_HOST) && all_host);
        for (int o = 0; o < sp->n_out; o++)
            if (sp->out[o] >= 0)
                s->vals[sp->out[o]].host_static = host_out;
        if (op->infer) {
            tx_status st = with_xnode(s, k, op->infer);
            if (st && st != TX_STATUS_DEFER)
                return st;
        }
        tx_status st = check_outputs(s, sp);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

/* ---- 5. memory plan ---- */

/* Recounts every value's readers and last reading step (live steps only). */
void tx_graph_count_uses(tx_session *s) {
    for (int i = 0; i < s->n_vals; i++) {
        s->vals[i].n_uses = 0;
        s->vals[i].last_use = -1;
    }
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        for (int i = 0; i < sp->n_in; i++) {
            if (sp->in[i] >= 0) {
                s->vals[sp->in[i]].n_uses++;
                s->vals[sp->in[i]].last_use = k;
            }
        }
        if (sp->bias >= 0) {
            s->vals[sp->bias].n_uses++;
            s->vals[sp->bias].last_use = k;
        }
    }
}

/* The step after which value i is released: its last reader, or its
 * producer when nothing reads it (Dropout's mask, unused outputs); -1 for
 * values the plan never frees (constants, outputs, feeds, dead steps' outputs). */
static int free_point(const tx_session *s, int i) {
    const tx_session_val *v = &s->vals[i];
    if (v->is_const || v->is_output || v->producer < 0 || s->steps[v->producer].dead)
        return -1;
    return v->last_use >= 0 ? v->last_use : v->producer;
}

static tx_status memory_plan(tx_session *s) {
    tx_graph_count_uses(s);
    int *cnt = calloc((size_t)s->n_steps + 1, sizeof *cnt);
    if (!cnt)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    for (int i = 0; i < s->n_vals; i++)
        if (free_point(s, i) >= 0)
            cnt[free_point(s, i)]++;
    for (int k = 0; k < s->n_steps; k++) {
        s->steps[k].frees = malloc((size_t)(cnt[k] + 1) * sizeof(int));
        if (!s->steps[k].frees) {
            free(cnt);
            return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
        }
    }
    for (int i = 0; i < s->n_vals; i++) {
        int at = free_point(s, i);
        if (at >= 0) {
            tx_step *sp = &s->steps[at];
            sp->frees[sp->n_frees++] = i;
        }
    }
    /* feeds stay to the end of the run: the caller owns them */
    free(cnt);
    return TX_STATUS_OK;
}

/* The fusion passes (fuse.c, fuse_qdq.c) read the constants of these ops as
 * floats: conv weights and biases, BatchNormalization's, the operands of
 * per-channel affines, LayerNormalization's decomposition, Clip bounds,
 * Concat's zeros, quantization scales. Their float16 constants get floats
 * for the passes (tx_val_narrow goes back to the halves where nothing was
 * folded in); the others (MatMul and Gather weights) are never widened, so
 * a float16 model's big tables never take float32 space at creation. */
static tx_status widen_for_folds(tx_session *s) {
    static const char *const readers[] = {"Conv",
                                          "ConvTranspose",
                                          "BatchNormalization",
                                          "Mul",
                                          "Add",
                                          "Sub",
                                          "Div",
                                          "Pow",
                                          "Clip",
                                          "Concat",
                                          "Sqrt",
                                          "Sigmoid",
                                          "HardSigmoid",
                                          "DequantizeLinear",
                                          "QuantizeLinear"};
    for (int k = 0; k < s->n_steps; k++) {
        const tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        bool reads = false;
        for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++)
            reads |= strcmp(sp->node->op_type, readers[r]) == 0;
        for (int i = 0; reads && i < sp->n_in; i++)
            if (sp->in[i] >= 0 && !tx_val_widen(&s->vals[sp->in[i]]))
                return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY, "onnx: out of host memory");
    }
    return TX_STATUS_OK;
}

tx_status tx_graph_plan(tx_session *s) {
    tx_status st = build(s);
    if (!st)
        st = check_support(s);
    if (!st)
        st = fold_and_infer(s);
    if (!st) {
        tx_graph_count_uses(s);
        if (!s->no_fusion)
            st = widen_for_folds(s);
        if (!st && !s->no_fusion)
            st = tx_graph_fuse(s);
        for (int i = 0; i < s->n_vals; i++)
            tx_val_narrow(s, &s->vals[i]);
    }
    if (!st)
        st = memory_plan(s);
    return st;
}

void tx_graph_free(tx_session *s) {
    for (int i = 0; i < s->n_vals; i++) {
        if (s->vals[i].c_owned)
            tx_hval_free(&s->vals[i].c);
        if (s->vals[i].c_half_owned)
            free(s->vals[i].c_half);
    }
    for (int k = 0; k < s->n_steps; k++) {
        free(s->steps[k].in);
        free(s->steps[k].out);
        free(s->steps[k].frees);
    }
    free(s->steps);
    free(s->io);
    free(s->vals);
    free(s->index);
    free(s->inputs);
    free(s->outputs);
}
