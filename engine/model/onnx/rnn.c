/* ONNX recurrent ops: RNN, GRU, LSTM, composed from engine ops.
 *
 * The input projection X·Wᵀ (+ both biases where they add outside a gate's
 * product) is one matmul over every time step; each step then runs the
 * recurrent matmul H·Rᵀ and the gates' elementwise ops on [batch, hidden]
 * tensors. sequence_lens becomes a 0/1 mask per step: a batch entry past its
 * length keeps its state and writes zeros to Y (the reverse direction then
 * starts at its last valid step, as ONNX defines it). Both devices run it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "build.h"

enum { K_RNN, K_GRU, K_LSTM };

/* One activation function of the `activations` attribute. */
typedef struct rnn_act {
    int kind; /* A_* */
    float alpha, beta;
} rnn_act;

enum {
    A_SIGMOID,
    A_TANH,
    A_RELU,
    A_SOFTSIGN,
    A_SOFTPLUS,
    A_AFFINE,
    A_LEAKY,
    A_THRESH,
    A_SCALED_TANH,
    A_HARD_SIGMOID,
    A_ELU
};

typedef struct rnn_act_name {
    const char *name;
    int kind;
    int n_params;      /* alpha, then beta, consumed from the attribute lists */
    float alpha, beta; /* ONNX defaults */
} rnn_act_name;

static const rnn_act_name k_acts[] = {
    {"Sigmoid", A_SIGMOID, 0, 0, 0},
    {"Tanh", A_TANH, 0, 0, 0},
    {"Relu", A_RELU, 0, 0, 0},
    {"Softsign", A_SOFTSIGN, 0, 0, 0},
    {"Softplus", A_SOFTPLUS, 0, 0, 0},
    {"Affine", A_AFFINE, 2, 1.0f, 0.0f},
    {"LeakyRelu", A_LEAKY, 1, 0.01f, 0},
    {"ThresholdedRelu", A_THRESH, 1, 1.0f, 0},
    {"ScaledTanh", A_SCALED_TANH, 2, 1.0f, 1.0f},
    {"HardSigmoid", A_HARD_SIGMOID, 2, 0.2f, 0.5f},
    {"Elu", A_ELU, 1, 1.0f, 0},
};

typedef struct rnn {
    int kind, n_gates, n_fn; /* gates per direction; activations per direction */
    int64_t T, B, I, H, D;
    int layout;
    bool has_clip, lbr, input_forget;
    float clip;
    rnn_act act[2][3];
} rnn;

static tx_tensor apply(tx_xb *b, const rnn *r, const rnn_act *a, tx_tensor t) {
    if (r->has_clip)
        t = tx_xb_clip(b, t, -r->clip, r->clip);
    switch (a->kind) {
    case A_SIGMOID: return tx_xb_unary(b, TX_OP_SIGMOID, t);
    case A_TANH: return tx_xb_unary(b, TX_OP_TANH, t);
    case A_RELU: return tx_xb_unary(b, TX_OP_RELU, t);
    case A_SOFTSIGN: return tx_xb_unary(b, TX_OP_SOFTSIGN, t);
    case A_SOFTPLUS: return tx_xb_unary(b, TX_OP_SOFTPLUS, t);
    case A_LEAKY: return tx_xb_act(b, TX_OP_LEAKY_RELU, t, a->alpha, 0);
    case A_THRESH: return tx_xb_act(b, TX_OP_THRESHOLDED_RELU, t, a->alpha, 0);
    case A_HARD_SIGMOID: return tx_xb_act(b, TX_OP_HARD_SIGMOID, t, a->alpha, a->beta);
    case A_ELU: return tx_xb_act(b, TX_OP_ELU, t, a->alpha, 0);
    case A_AFFINE:
        t = tx_xb_binary(b, TX_OP_MUL, t, tx_xb_scalar(b, a->alpha));
        return tx_xb_binary(b, TX_OP_ADD, t, tx_xb_scalar(b, a->beta));
    default: /* A_SCALED_TANH */
        t = tx_xb_unary(b, TX_OP_TANH, tx_xb_binary(b, TX_OP_MUL, t, tx_xb_scalar(b, a->beta)));
        return tx_xb_binary(b, TX_OP_MUL, t, tx_xb_scalar(b, a->alpha));
    }
}

/* The `activations` attribute (with its alpha/beta lists) or the defaults. */
static tx_status parse_acts(tx_xnode *x, rnn *r) {
    static const char *const defaults[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const tx_onnx_attr *names = tx_attr_find(x->node, "activations");
    const tx_onnx_attr *al = tx_attr_find(x->node, "activation_alpha");
    const tx_onnx_attr *be = tx_attr_find(x->node, "activation_beta");
    int n = names && names->type == TX_ATTR_STRINGS ? names->n_strings : 0;
    if (n && n != r->n_fn * r->D)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT,
                         "activations has %d entries, expected %d (%d per direction)", n,
                         (int)(r->n_fn * r->D), r->n_fn);
    int ia = 0, ib = 0;
    for (int d = 0; d < r->D; d++)
        for (int f = 0; f < r->n_fn; f++) {
            const char *s = n ? names->strings[d * r->n_fn + f] : defaults[r->kind][f];
            const rnn_act_name *k = NULL;
            for (size_t j = 0; j < TX_COUNTOF(k_acts); j++)
                if (strcasecmp(s, k_acts[j].name) == 0)
                    k = &k_acts[j];
            if (!k)
                return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "activation \"%s\" is unsupported", s);
            rnn_act *a = &r->act[d][f];
            a->kind = k->kind;
            a->alpha = k->alpha;
            a->beta = k->beta;
            if (k->n_params >= 1 && al && al->type == TX_ATTR_FLOATS && ia < al->n_floats)
                a->alpha = al->floats[ia++];
            if (k->n_params >= 2 && be && be->type == TX_ATTR_FLOATS && ib < be->n_floats)
                a->beta = be->floats[ib++];
        }
    return TX_STATUS_OK;
}

/* Input i must have `rank` dims equal to `want` (where want >= 0). */
static tx_status check_shape(tx_xnode *x, int i, const char *what, int rank, const int64_t *want) {
    int r;
    int64_t s[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, i, &r, s);
    if (st)
        return st;
    bool ok = r == rank;
    for (int d = 0; ok && d < rank; d++)
        ok = s[d] == want[d];
    if (!ok) {
        char a[160], e[160];
        tx_shape_str(a, sizeof a, r, s);
        tx_shape_str(e, sizeof e, rank, want);
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "%s (input %d) is %s, expected %s", what, i,
                         a, e);
    }
    return TX_STATUS_OK;
}

static tx_status parse(tx_xnode *x, rnn *r) {
    const char *t = x->node->op_type;
    r->kind = strcmp(t, "RNN") == 0 ? K_RNN : strcmp(t, "GRU") == 0 ? K_GRU : K_LSTM;
    r->n_gates = r->kind == K_RNN ? 1 : r->kind == K_GRU ? 3 : 4;
    r->n_fn = r->kind + 1;
    const char *dir = tx_attr_str(x->node, "direction", "forward");
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "direction \"%s\"", dir);
    r->D = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    r->layout = (int)tx_attr_int(x->node, "layout", 0);
    if (r->layout != 0 && r->layout != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "layout %d", r->layout);
    r->lbr = tx_attr_int(x->node, "linear_before_reset", 0) != 0;
    r->input_forget = tx_attr_int(x->node, "input_forget", 0) != 0;
    r->has_clip = tx_attr_find(x->node, "clip") != NULL;
    r->clip = tx_attr_float(x->node, "clip", INFINITY);
    if (r->has_clip && !(r->clip > 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "clip %g (must be > 0)", (double)r->clip);
    int64_t hs = tx_attr_int(x->node, "hidden_size", -1);
    int rank;
    int64_t xs[TX_MAX_RANK], ws[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, xs);
    if (!st && rank != 3)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "X has rank %d, expected 3", rank);
    if (!st)
        st = tx_x_shape(x, 1, &rank, ws);
    if (st)
        return st;
    if (rank != 3 || ws[0] != r->D || ws[2] != xs[2] || ws[1] % r->n_gates)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH,
                         "W must be [%lld, %d * hidden_size, %lld] for X's input size",
                         (long long)r->D, r->n_gates, (long long)xs[2]);
    r->H = ws[1] / r->n_gates;
    if (hs >= 0 && hs != r->H)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "hidden_size %lld but W has %lld rows",
                         (long long)hs, (long long)ws[1]);
    if (r->H < 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "hidden size 0");
    r->T = xs[r->layout ? 1 : 0];
    r->B = xs[r->layout ? 0 : 1];
    r->I = xs[2];
    if (r->T < 1 || r->B < 1)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "an empty sequence or batch is unsupported");
    int64_t G = r->n_gates * r->H;
    st = check_shape(x, 2, "R", 3, (int64_t[]){r->D, G, r->H});
    if (!st && tx_x_has(x, 3))
        st = check_shape(x, 3, "B", 2, (int64_t[]){r->D, 2 * G});
    if (!st && tx_x_has(x, 4))
        st = check_shape(x, 4, "sequence_lens", 1, (int64_t[]){r->B});
    int64_t hshape[3] = {r->D, r->B, r->H};
    if (r->layout)
        hshape[0] = r->B, hshape[1] = r->D;
    for (int i = 5; i <= (r->kind == K_LSTM ? 6 : 5) && !st; i++)
        if (tx_x_has(x, i))
            st = check_shape(x, i, i == 5 ? "initial_h" : "initial_c", 3, hshape);
    if (!st && r->kind == K_LSTM && tx_x_has(x, 7))
        st = check_shape(x, 7, "P", 2, (int64_t[]){r->D, 3 * r->H});
    for (int i = 0; i < x->n_in && !st; i++)
        if (i != 4)
            st = tx_x_float_input_only(x, i);
    return st ? st : parse_acts(x, r);
}

/* Direction d's rows [g0, g1) of gates of a [D, n_gates * H, ...] input, as [rows, cols]. */
static tx_tensor gate_rows(tx_xb *b, const rnn *r, tx_tensor w, int d, int g0, int g1) {
    int64_t s[TX_MAX_RANK];
    if (tx_xb_shape(b, w, s) < 0)
        return (tx_tensor){0};
    tx_tensor t = tx_xb_slice(b, w, 0, d, d + 1, 1);
    t = tx_xb_slice(b, t, 1, g0 * r->H, g1 * r->H, 1);
    return tx_xb_reshape(b, t, 2, (int64_t[]){(g1 - g0) * r->H, s[2]});
}

/* R's gate rows [g0, g1) of direction d: [rows, H] when tb, else [H, rows]. */
static tx_tensor r_rows(tx_xb *b, const rnn *r, tx_tensor rr, int d, int g0, int g1, bool tb) {
    tx_tensor t = gate_rows(b, r, rr, d, g0, g1);
    return tb ? t : tx_xb_transpose(b, t, (const int[]){1, 0});
}

/* Direction d's bias entries [g0, g1) gates of Wb (half 0) or Rb (half 1), or {0}. */
static tx_tensor bias_part(tx_xb *b, const rnn *r, tx_tensor bias, int d, int half, int g0,
                           int g1) {
    if (!bias.id)
        return (tx_tensor){0};
    int64_t base = (int64_t)half * r->n_gates * r->H;
    tx_tensor t = tx_xb_slice(b, bias, 0, d, d + 1, 1);
    t = tx_xb_slice(b, t, 1, base + g0 * r->H, base + g1 * r->H, 1);
    return tx_xb_reshape(b, t, 1, (int64_t[]){(g1 - g0) * r->H});
}

static tx_tensor add_opt(tx_xb *b, tx_tensor a, tx_tensor c) {
    return !a.id ? c : !c.id ? a : tx_xb_binary(b, TX_OP_ADD, a, c);
}

/* Direction d's slice of initial_h / initial_c as [B, H], or zeros. */
static tx_tensor initial(tx_xb *b, const rnn *r, int i, int d) {
    int64_t bh[2] = {r->B, r->H};
    if (!tx_x_has(b->x, i))
        return tx_xb_const(b, 2, bh, TX_DTYPE_FLOAT32, NULL);
    tx_tensor t = tx_xb_slice(b, tx_xb_in(b, i), r->layout ? 1 : 0, d, d + 1, 1);
    return tx_xb_reshape(b, t, 2, bh);
}

/* The state after one step: new where the mask is 1, old where it is 0. */
static tx_tensor masked(tx_xb *b, tx_tensor m, tx_tensor old, tx_tensor cand) {
    if (!m.id)
        return cand;
    tx_tensor diff = tx_xb_binary(b, TX_OP_SUB, cand, old);
    return tx_xb_binary(b, TX_OP_ADD, old, tx_xb_binary(b, TX_OP_MUL, m, diff));
}

/* Per-direction inputs, prepared once. */
typedef struct rnn_dir {
    tx_tensor xw, xw_h; /* X·Wᵀ + biases: [T, B, G·H] (GRU: z,r in xw and h in xw_h) */
    tx_tensor rw, rw_h; /* R rows: all gates (GRU: z,r; h in rw_h), transposed unless tb */
    bool tb;
    tx_tensor rb_h; /* GRU linear_before_reset: Rb of h */
    tx_tensor p[3]; /* LSTM peepholes i, o, f ([H]) or {0} */
} rnn_dir;

static void prepare(tx_xb *b, const rnn *r, tx_tensor xt, int d, rnn_dir *p) {
    tx_tensor w = tx_xb_in(b, 1), rr = tx_xb_in(b, 2);
    tx_tensor bias = tx_x_has(b->x, 3) ? tx_xb_in(b, 3) : (tx_tensor){0};
    int G = r->n_gates, zr = r->kind == K_GRU ? 2 : G; /* gates whose biases simply add */
    tx_tensor bsum =
        add_opt(b, bias_part(b, r, bias, d, 0, 0, zr), bias_part(b, r, bias, d, 1, 0, zr));
    p->xw = tx_xb_matmul(b, xt, gate_rows(b, r, w, d, 0, zr), true, bsum);
    /* With batch > 1, R's rows are transposed once to [H, rows]: the CPU GEMM
     * packs the right operand on every call, and a row-major one packs fast.
     * One batch entry is a matrix-vector product, faster on R as it is. */
    p->tb = r->B == 1;
    p->rw = r_rows(b, r, rr, d, 0, zr, p->tb);
    if (r->kind == K_GRU) {
        tx_tensor bh = bias_part(b, r, bias, d, 0, 2, 3);
        if (!r->lbr)
            bh = add_opt(b, bh, bias_part(b, r, bias, d, 1, 2, 3));
        else
            p->rb_h = bias_part(b, r, bias, d, 1, 2, 3);
        p->xw_h = tx_xb_matmul(b, xt, gate_rows(b, r, w, d, 2, 3), true, bh);
        p->rw_h = r_rows(b, r, rr, d, 2, 3, p->tb);
    }
    if (r->kind == K_LSTM && tx_x_has(b->x, 7)) {
        tx_tensor pp = tx_xb_slice(b, tx_xb_in(b, 7), 0, d, d + 1, 1);
        for (int k = 0; k < 3; k++)
            p->p[k] =
                tx_xb_reshape(b, tx_xb_slice(b, pp, 1, k * r->H, (k + 1) * r->H, 1), 1, &r->H);
    }
}

/* Time step ti's [B, cols] rows of a [T, B, cols] tensor: a Gather at the
 * index tensor ti ([1] int32), so that every step runs the same program (a
 * Slice at each step's offset would be a program per step once specialized). */
static tx_tensor step_rows(tx_xb *b, const rnn *r, tx_tensor a, tx_tensor ti) {
    int64_t s[TX_MAX_RANK];
    if (tx_xb_shape(b, a, s) < 0)
        return (tx_tensor){0};
    return tx_xb_reshape(b, tx_xb_gather(b, a, ti, 0), 2, (int64_t[]){r->B, s[2]});
}

/* Gate k of a [B, n·H] tensor. */
static tx_tensor gate(tx_xb *b, const rnn *r, tx_tensor a, int k) {
    return tx_xb_slice(b, a, 1, k * r->H, (k + 1) * r->H, 1);
}

/* One step of direction d at time index t ([1] int32): new h (and c) from the old ones. */
static void step(tx_xb *b, const rnn *r, const rnn_dir *p, int d, tx_tensor t, tx_tensor *h,
                 tx_tensor *c) {
    const rnn_act *f = r->act[d];
    tx_tensor none = {0};
    tx_tensor g = tx_xb_binary(b, TX_OP_ADD, step_rows(b, r, p->xw, t),
                               tx_xb_matmul(b, *h, p->rw, p->tb, none));
    if (r->kind == K_RNN) {
        *h = apply(b, r, &f[0], g);
    } else if (r->kind == K_GRU) {
        tx_tensor fa = apply(b, r, &f[0], g); /* g holds the z and r gates only */
        tx_tensor z = gate(b, r, fa, 0), rs = gate(b, r, fa, 1);
        tx_tensor hh;
        if (r->lbr)
            hh = tx_xb_binary(b, TX_OP_MUL, rs, tx_xb_matmul(b, *h, p->rw_h, p->tb, p->rb_h));
        else
            hh = tx_xb_matmul(b, tx_xb_binary(b, TX_OP_MUL, rs, *h), p->rw_h, p->tb, none);
        hh = apply(b, r, &f[1], tx_xb_binary(b, TX_OP_ADD, step_rows(b, r, p->xw_h, t), hh));
        /* h' = (1 - z) ⊙ hh + z ⊙ h = hh + z ⊙ (h - hh) */
        tx_tensor zd = tx_xb_binary(b, TX_OP_MUL, z, tx_xb_binary(b, TX_OP_SUB, *h, hh));
        *h = tx_xb_binary(b, TX_OP_ADD, hh, zd);
    } else if (!p->p[0].id) { /* LSTM without peepholes: f over every gate at once */
        tx_tensor fa = apply(b, r, &f[0], g);
        tx_tensor i = gate(b, r, fa, 0), o = gate(b, r, fa, 1);
        tx_tensor fg = r->input_forget ? tx_xb_binary(b, TX_OP_SUB, tx_xb_scalar(b, 1.0f), i)
                                       : gate(b, r, fa, 2);
        tx_tensor cc = apply(b, r, &f[1], gate(b, r, g, 3));
        *c = tx_xb_binary(b, TX_OP_ADD, tx_xb_binary(b, TX_OP_MUL, fg, *c),
                          tx_xb_binary(b, TX_OP_MUL, i, cc));
        *h = tx_xb_binary(b, TX_OP_MUL, o, apply(b, r, &f[2], *c));
    } else { /* LSTM with peepholes: gates i, o, f, c one by one */
        tx_tensor gi = gate(b, r, g, 0), go = gate(b, r, g, 1), gf = gate(b, r, g, 2);
        gi = tx_xb_binary(b, TX_OP_ADD, gi, tx_xb_binary(b, TX_OP_MUL, p->p[0], *c));
        tx_tensor i = apply(b, r, &f[0], gi), fg;
        if (r->input_forget) {
            fg = tx_xb_binary(b, TX_OP_SUB, tx_xb_scalar(b, 1.0f), i);
        } else {
            gf = tx_xb_binary(b, TX_OP_ADD, gf, tx_xb_binary(b, TX_OP_MUL, p->p[2], *c));
            fg = apply(b, r, &f[0], gf);
        }
        tx_tensor cc = apply(b, r, &f[1], gate(b, r, g, 3));
        *c = tx_xb_binary(b, TX_OP_ADD, tx_xb_binary(b, TX_OP_MUL, fg, *c),
                          tx_xb_binary(b, TX_OP_MUL, i, cc));
        go = tx_xb_binary(b, TX_OP_ADD, go, tx_xb_binary(b, TX_OP_MUL, p->p[1], *c));
        tx_tensor o = apply(b, r, &f[0], go);
        *h = tx_xb_binary(b, TX_OP_MUL, o, apply(b, r, &f[2], *c));
    }
}

/* The [T, B, 1] 0/1 mask of t < sequence_lens[b], or {0} when every length is T. */
static tx_tensor seq_mask(tx_xb *b, const rnn *r) {
    if (!tx_x_has(b->x, 4))
        return (tx_tensor){0};
    if (tx_x_is_host(b->x, 4)) {
        const tx_hval *h;
        if (!b->st)
            b->st = tx_x_host(b->x, 4, &h);
        if (b->st)
            return (tx_tensor){0};
        bool full = true;
        for (int64_t k = 0; k < h->numel; k++) {
            double v = tx_hval_get(h, k);
            if (v < 0 || v > (double)r->T) {
                tx_xb_fail(b, TX_STATUS_INVALID_ARGUMENT,
                           "a sequence_lens entry is outside [0, T]");
                return (tx_tensor){0};
            }
            full &= v == (double)r->T;
        }
        if (full)
            return (tx_tensor){0};
    }
    float *ramp = malloc(sizeof(float) * (size_t)r->T);
    if (!ramp) {
        tx_xb_fail(b, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        return (tx_tensor){0};
    }
    for (int64_t t = 0; t < r->T; t++)
        ramp[t] = (float)t;
    tx_tensor tr = tx_xb_const(b, 3, (int64_t[]){r->T, 1, 1}, TX_DTYPE_FLOAT32, ramp);
    free(ramp);
    tx_tensor len = tx_xb_in(b, 4);
    if (!b->st && tx_x_dtype_of(b->x, len) != TX_DTYPE_FLOAT32)
        len = tx_xb_cast(b, len, TX_DTYPE_FLOAT32);
    len = tx_xb_reshape(b, len, 3, (int64_t[]){1, r->B, 1});
    return tx_xb_binary(b, TX_OP_LESS, tr, len);
}

/* Runs direction d; ys[t] gets Y's [1, 1, B, H] rows when ys is set. */
static void run_dir(tx_xb *b, const rnn *r, tx_tensor xt, tx_tensor mask, int d, bool reverse,
                    tx_tensor *ys, tx_tensor *h_out, tx_tensor *c_out) {
    rnn_dir p = {0};
    prepare(b, r, xt, d, &p);
    tx_tensor h = tx_xb_untrack(b, initial(b, r, 5, d));
    tx_tensor c = r->kind == K_LSTM ? tx_xb_untrack(b, initial(b, r, 6, d)) : (tx_tensor){0};
    for (int64_t k = 0; k < r->T && !b->st; k++) {
        int64_t t = reverse ? r->T - 1 - k : k;
        int n0 = b->n;
        int32_t t32 = (int32_t)t;
        tx_tensor ti = tx_xb_const(b, 1, (int64_t[]){1}, TX_DTYPE_INT32, &t32);
        tx_tensor nh = h, nc = c, m = mask.id ? step_rows(b, r, mask, ti) : (tx_tensor){0};
        step(b, r, &p, d, ti, &nh, &nc);
        if (ys) {
            tx_tensor y = m.id ? tx_xb_binary(b, TX_OP_MUL, m, nh) : nh;
            ys[t] = tx_xb_untrack(b, tx_xb_reshape(b, y, 4, (int64_t[]){1, 1, r->B, r->H}));
        }
        nh = tx_xb_untrack(b, masked(b, m, h, nh));
        if (r->kind == K_LSTM)
            nc = tx_xb_untrack(b, masked(b, m, c, nc));
        tx_xb_release_from(b, n0);
        if (b->st) { /* the new states are the caller's (untracked) */
            if (nh.id && nh.id != h.id)
                tx_tensor_destroy(b->x->ctx, nh);
            if (nc.id && nc.id != c.id)
                tx_tensor_destroy(b->x->ctx, nc);
            break;
        }
        tx_tensor_destroy(b->x->ctx, h);
        h = nh;
        if (r->kind == K_LSTM) {
            tx_tensor_destroy(b->x->ctx, c);
            c = nc;
        }
    }
    if (b->st) {
        if (h.id)
            tx_tensor_destroy(b->x->ctx, h);
        if (c.id)
            tx_tensor_destroy(b->x->ctx, c);
        *h_out = *c_out = (tx_tensor){0};
        return;
    }
    *h_out = tx_xb_track(b, TX_STATUS_OK, h);
    *c_out = c.id ? tx_xb_track(b, TX_STATUS_OK, c) : c;
}

/* [D, B, H] from per-direction [B, H] (layout 1: [B, D, H]). */
static tx_tensor stack_state(tx_xb *b, const rnn *r, const tx_tensor *s) {
    tx_tensor v[2];
    for (int d = 0; d < r->D; d++)
        v[d] = tx_xb_reshape(b, s[d], 3, (int64_t[]){1, r->B, r->H});
    tx_tensor y = tx_xb_concat(b, v, (int)r->D, 0);
    return r->layout ? tx_xb_transpose(b, y, (int[]){1, 0, 2}) : y;
}

static tx_status exec_rnn(tx_xnode *x) {
    rnn r = {0};
    tx_status st = parse(x, &r);
    if (st)
        return st;
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_xb b = {.x = x};
    tx_tensor xt = tx_xb_in(&b, 0);
    if (r.layout)
        xt = tx_xb_transpose(&b, xt, (int[]){1, 0, 2});
    tx_tensor mask = seq_mask(&b, &r);
    bool want_y = x->n_out > 0 && x->out[0];
    tx_tensor *ys = want_y ? calloc((size_t)(r.T * r.D), sizeof(tx_tensor)) : NULL;
    if (want_y && !ys)
        tx_xb_fail(&b, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    const char *dir = tx_attr_str(x->node, "direction", "forward");
    tx_tensor hs[2] = {{0}}, cs[2] = {{0}}, yd[2];
    for (int d = 0; d < r.D && !b.st; d++) {
        bool rev = d == 1 || strcmp(dir, "reverse") == 0;
        run_dir(&b, &r, xt, mask, d, rev, ys ? ys + d * r.T : NULL, &hs[d], &cs[d]);
        if (ys) /* [T, 1, B, H] */
            yd[d] = tx_xb_concat_tree(&b, ys + d * r.T, (int)r.T, 0);
    }
    if (ys) {
        for (int64_t k = 0; k < r.T * r.D; k++)
            if (ys[k].id)
                tx_tensor_destroy(x->ctx, ys[k]);
        free(ys);
        tx_tensor y = tx_xb_concat(&b, yd, (int)r.D, 1);
        if (r.layout) /* [B, T, D, H] */
            y = tx_xb_transpose(&b, y, (int[]){2, 0, 1, 3});
        tx_xb_output(&b, 0, y, TX_ONNX_FLOAT);
    }
    if (x->n_out > 1 && x->out[1])
        tx_xb_output(&b, 1, stack_state(&b, &r, hs), TX_ONNX_FLOAT);
    if (x->n_out > 2 && x->out[2] && r.kind == K_LSTM)
        tx_xb_output(&b, 2, stack_state(&b, &r, cs), TX_ONNX_FLOAT);
    return tx_xb_free(&b);
}

/* Static output shapes (T, B, D, H from X, W and the attributes). */
static tx_status infer_rnn(tx_xnode *x) {
    int e, rx, rw;
    int64_t xs[TX_MAX_RANK], ws[TX_MAX_RANK];
    tx_x_info(x, 0, &e, &rx, xs);
    tx_x_info(x, 1, &e, &rw, ws);
    if (rx != 3 || rw != 3)
        return TX_STATUS_OK;
    bool l1 = tx_attr_int(x->node, "layout", 0) == 1;
    int64_t T = xs[l1 ? 1 : 0], B = xs[l1 ? 0 : 1], D = ws[0];
    int64_t H = tx_attr_int(x->node, "hidden_size", -1);
    int64_t y[4] = {T, D, B, H}, yb[4] = {B, T, D, H}, s[3] = {D, B, H}, sb[3] = {B, D, H};
    tx_x_set_info(x, 0, TX_ONNX_FLOAT, 4, l1 ? yb : y);
    for (int o = 1; o < 3; o++)
        tx_x_set_info(x, o, TX_ONNX_FLOAT, 3, l1 ? sb : s);
    return TX_STATUS_OK;
}

/* ---- rows ---- */

static const tx_onnx_op k_ops[] = {
    {"RNN", exec_rnn, infer_rnn, 0, 3, 6, 0},
    {"GRU", exec_rnn, infer_rnn, 0, 3, 6, 0},
    {"LSTM", exec_rnn, infer_rnn, 0, 3, 8, 0},
};

const tx_onnx_family tx_onnx_ops_rnn = {k_ops, TX_COUNTOF(k_ops)};
