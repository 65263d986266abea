/* The gradient tape: a list of the ops run while it records, and the
 * reverse-mode walk over it.
 *
 * The fronts of the differentiable ops call tx_tape_note after they succeed;
 * the tape keeps a view of each input and of the output (so the caller may
 * destroy its handles) and their ids, which gradients are keyed by.
 * tx_tape_grad first marks the values that depend on the requested xs
 * (forward over the list), then walks the list backwards from y: each node
 * whose output has a gradient and depends on an x runs its family's backward
 * and adds the input gradients into the table. What a backward makes for
 * itself is freed right after it. */
#include <stdlib.h>
#include <string.h>

#include "grad.h"

struct tx_tape {
    gx_node *nodes;
    int n, cap;
    bool recording;
    tx_status broken; /* a node could not be recorded */
};

typedef struct gx_entry {
    uint32_t id;
    tx_tensor g; /* owned */
} gx_entry;

typedef struct gx_table {
    gx_entry *e;
    int n, cap;
} gx_table;

bool tx_tape_recording(const tx_ctx *ctx) {
    return ctx && ctx->tape && ctx->tape->recording && ctx->tape_paused == 0;
}

void tx_tape_pause(tx_ctx *ctx) {
    if (ctx)
        ctx->tape_paused++;
}

void tx_tape_resume(tx_ctx *ctx) {
    if (ctx && ctx->tape_paused > 0)
        ctx->tape_paused--;
}

static void node_free(tx_ctx *ctx, gx_node *nd) {
    for (int i = 0; i < nd->n_in; i++)
        if (nd->in[i].id)
            tx_tensor_destroy(ctx, nd->in[i]);
    if (nd->out.id)
        tx_tensor_destroy(ctx, nd->out);
    if (nd->aux.id)
        tx_tensor_destroy(ctx, nd->aux);
}

void tx_tape_note(tx_ctx *ctx, int op, const tx_tensor *ins, int n, const tx_op_attrs *a,
                  const tx_loss_desc *loss, tx_tensor out, tx_tensor aux) {
    if (!tx_tape_recording(ctx)) {
        if (aux.id)
            tx_tensor_destroy(ctx, aux);
        return;
    }
    tx_tape *t = ctx->tape;
    if (n > GX_MAX_IN) { /* a concat of many: its gradient would need them all */
        t->broken = TX_STATUS_UNSUPPORTED;
        if (aux.id)
            tx_tensor_destroy(ctx, aux);
        return;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        gx_node *p = realloc(t->nodes, sizeof *p * (size_t)cap);
        if (!p) {
            t->broken = TX_STATUS_OUT_OF_MEMORY;
            if (aux.id)
                tx_tensor_destroy(ctx, aux);
            return;
        }
        t->nodes = p;
        t->cap = cap;
    }
    gx_node *nd = &t->nodes[t->n];
    memset(nd, 0, sizeof *nd);
    nd->op = (tx_op)op;
    nd->n_in = n;
    nd->aux = aux;
    if (a)
        nd->a = *a;
    if (loss)
        nd->loss = *loss;
    tx_status st = TX_STATUS_OK;
    ctx->tape_paused++;
    for (int i = 0; i < n && !st; i++) {
        nd->in_id[i] = ins[i].id;
        if (ins[i].id)
            st = tx_identity(ctx, ins[i], &nd->in[i]);
    }
    nd->out_id = out.id;
    if (!st)
        st = tx_identity(ctx, out, &nd->out);
    ctx->tape_paused--;
    if (st) {
        node_free(ctx, nd);
        t->broken = st;
        return;
    }
    if (loss && n == 3)
        nd->loss.weight = nd->in[2];
    t->n++;
}

tx_status tx_tape_begin(tx_ctx *ctx, tx_tape **out) {
    tx_status st = tx_check_arg(ctx, "tx_tape_begin", "out", out != NULL);
    if (st)
        return st;
    if (ctx->tape)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_tape_begin: a tape is already recording on this context (end it first)");
    tx_tape *t = calloc(1, sizeof *t);
    if (!t)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_begin: out of host memory");
    t->recording = true;
    ctx->tape = t;
    *out = t;
    return TX_STATUS_OK;
}

void tx_tape_end(tx_ctx *ctx, tx_tape *tape) {
    if (!ctx || !tape)
        return;
    for (int i = 0; i < tape->n; i++)
        node_free(ctx, &tape->nodes[i]);
    free(tape->nodes);
    if (ctx->tape == tape)
        ctx->tape = NULL;
    free(tape);
}

/* ---- the backward walk ---- */

static gx_entry *lookup(gx_table *t, uint32_t id) {
    for (int i = 0; i < t->n; i++)
        if (t->e[i].id == id)
            return &t->e[i];
    return NULL;
}

/* Adds g into the table's gradient of id (the table keeps its own handle). */
static tx_status accumulate(tx_ctx *ctx, gx_table *t, uint32_t id, tx_tensor g) {
    gx_entry *e = lookup(t, id);
    tx_tensor sum;
    if (e) {
        tx_status st = tx_binary(ctx, TX_OP_ADD, e->g, g, &sum);
        if (st)
            return st;
        tx_tensor_destroy(ctx, e->g);
        e->g = sum;
        return TX_STATUS_OK;
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        gx_entry *p = realloc(t->e, sizeof *p * (size_t)cap);
        if (!p)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_grad: out of host memory");
        t->e = p;
        t->cap = cap;
    }
    tx_status st = tx_identity(ctx, g, &sum);
    if (st)
        return st;
    t->e[t->n++] = (gx_entry){id, sum};
    return TX_STATUS_OK;
}

static gx_backward_fn backward_of(int op) {
    if (op == GX_OP_RESHAPE)
        return gx_backward_move;
    if (op == GX_OP_SCE || op == GX_OP_NLL || op == GX_OP_MSE)
        return gx_backward_loss;
    switch (tx_op_family((tx_op)op)) {
    case TX_FAMILY_UNARY:
    case TX_FAMILY_CLIP:
    case TX_FAMILY_ACT:
    case TX_FAMILY_BINARY:
    case TX_FAMILY_CAST: return gx_backward_elementwise;
    case TX_FAMILY_MATMUL:
    case TX_FAMILY_CONV:
    case TX_FAMILY_CONV_TRANSPOSE: return gx_backward_linear;
    case TX_FAMILY_POOL: return gx_backward_pool;
    case TX_FAMILY_REDUCE:
    case TX_FAMILY_SOFTMAX: return gx_backward_reduce;
    case TX_FAMILY_MOVE:
    case TX_FAMILY_RESIZE: return gx_backward_move;
    case TX_FAMILY_NARY: return gx_backward_nary;
    case TX_FAMILY_NORM: return gx_backward_norm;
    default: return NULL;
    }
}

static const char *node_name(int op) {
    switch (op) {
    case GX_OP_RESHAPE: return "reshape";
    case GX_OP_SCE: return "softmax_cross_entropy";
    case GX_OP_NLL: return "nll_loss";
    case GX_OP_MSE: return "mse_loss";
    default: return tx_op_name((tx_op)op);
    }
}

/* Marks, per node, whether its output depends on one of xs (dep[k]), and
 * which of its inputs do (or are one of xs): nodes[k].need. */
static bool *depends(tx_tape *tape, const tx_tensor *xs, int n) {
    bool *dep = calloc((size_t)tape->n + 1, sizeof *dep);
    uint32_t *ids = malloc(sizeof *ids * ((size_t)tape->n + (size_t)n + 1));
    if (!dep || !ids) {
        free(dep);
        free(ids);
        return NULL;
    }
    int n_ids = 0;
    for (int i = 0; i < n; i++)
        ids[n_ids++] = xs[i].id;
    for (int k = 0; k < tape->n; k++) {
        gx_node *nd = &tape->nodes[k];
        nd->need = 0;
        for (int i = 0; i < nd->n_in; i++)
            for (int j = 0; j < n_ids && nd->in_id[i] && !gx_need(nd, i); j++)
                if (nd->in_id[i] == ids[j])
                    nd->need |= 1u << i;
        dep[k] = nd->need != 0;
        if (dep[k])
            ids[n_ids++] = nd->out_id;
    }
    free(ids);
    return dep;
}

/* Whether a backward gave input i a gradient of its shape; if not (a texel
 * bug), says so rather than let it broadcast into wrong numbers. */
static bool same_shape(tx_ctx *ctx, const gx_node *nd, int i, tx_tensor g) {
    const tx_slot *gs = gx_slot(ctx, g), *xs = gx_slot(ctx, nd->in[i]);
    bool same = gs->rank == xs->rank;
    for (int d = 0; same && d < xs->rank; d++)
        same = gs->shape[d] == xs->shape[d];
    if (!same) {
        char a[160], b[160];
        tx_shape_str(a, sizeof a, gs->rank, gs->shape);
        tx_shape_str(b, sizeof b, xs->rank, xs->shape);
        tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                "tx_tape_grad: internal error: %s's backward gave input %d a gradient of "
                "shape %s, not %s",
                node_name(nd->op), i, a, b);
    }
    return same;
}

static tx_status walk(tx_ctx *ctx, tx_tape *tape, const bool *dep, gx_table *tab) {
    for (int k = tape->n - 1; k >= 0; k--) {
        const gx_node *nd = &tape->nodes[k];
        gx_entry *e = lookup(tab, nd->out_id);
        if (!dep[k] || !e)
            continue;
        gx_backward_fn fn = backward_of(nd->op);
        if (!fn)
            return tx_fail(ctx, TX_STATUS_UNSUPPORTED, "tx_tape_grad: %s has no gradient yet",
                           node_name(nd->op));
        gx_tmps l = {0};
        tx_tensor gin[GX_MAX_IN] = {{0}};
        tx_status st = fn(ctx, nd, e->g, &l, gin);
        for (int i = 0; i < nd->n_in && !st; i++)
            if (gin[i].id && gx_need(nd, i))
                st = same_shape(ctx, nd, i, gin[i]) ? accumulate(ctx, tab, nd->in_id[i], gin[i])
                                                    : TX_STATUS_SHAPE_MISMATCH;
        gx_free(ctx, &l);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

tx_status tx_tape_grad(tx_ctx *ctx, tx_tape *tape, tx_tensor y, const tx_tensor *xs, int n,
                       tx_tensor *grads) {
    tx_status st = tx_check_arg(ctx, "tx_tape_grad", "tape", tape != NULL);
    if (!st)
        st = tx_check_arg(ctx, "tx_tape_grad", "xs and grads", n == 0 || (xs && grads));
    if (st)
        return st;
    if (tape->broken)
        return tx_fail(ctx, tape->broken,
                       "tx_tape_grad: the tape failed to record an op (%s: out of memory, or an "
                       "op with more than %d inputs)",
                       tx_status_name(tape->broken), GX_MAX_IN);
    tape->recording = false;
    tx_slot *ys;
    st = tx_check_tensor(ctx, "tx_tape_grad", "y", y, &ys);
    for (int i = 0; i < n && !st; i++)
        st = tx_check_tensor(ctx, "tx_tape_grad", "x", xs[i], &(tx_slot *){0});
    if (st)
        return st;
    bool *dep = depends(tape, xs, n);
    if (!dep)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tape_grad: out of host memory");
    gx_table tab = {0};
    gx_tmps l = {0};
    tx_tensor seed;
    ctx->tape_paused++;
    st = gx_fill(ctx, ys->st->dev, ys->rank, ys->shape, 1.0f, &l, &seed);
    if (!st)
        st = accumulate(ctx, &tab, y.id, seed);
    gx_free(ctx, &l);
    if (!st)
        st = walk(ctx, tape, dep, &tab);
    int done = 0;
    for (; done < n && !st; done++) {
        gx_entry *e = lookup(&tab, xs[done].id);
        if (e) {
            st = tx_identity(ctx, e->g, &grads[done]);
        } else {
            const tx_slot *xsl = gx_slot(ctx, xs[done]);
            st = gx_fill(ctx, xsl->st->dev, xsl->rank, xsl->shape, 0.0f, &l, &grads[done]);
            l.n = 0; /* the caller's */
        }
    }
    if (st)
        for (int i = 0; i + 1 < done; i++)
            tx_tensor_destroy(ctx, grads[i]);
    ctx->tape_paused--;
    for (int i = 0; i < tab.n; i++)
        tx_tensor_destroy(ctx, tab.e[i].g);
    free(tab.e);
    free(dep);
    return st;
}
