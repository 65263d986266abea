/* Private to engine/grad/: training on the engine's own ops.
 *
 * loss.c     the losses (softmax cross-entropy, negative log-likelihood, mean
 *            squared error), composed from engine ops on the inputs' device
 * tape.c     the tape: ops run on the context inside tx_tape_begin/end are
 *            recorded (engine/ops/ fronts call tx_tape_note on success), and
 *            tx_tape_grad walks them backwards
 * grad_*.c   one file per op family: the backward of its ops, written with
 *            forward ops (conv's input gradient is a conv_transpose, its weight
 *            gradient a conv, matmul's are matmuls ...), so they run on either
 *            device and through the same program cache as the forward ops
 * optim.c    SGD, momentum, Adam, AdamW
 *
 * Everything a backward makes goes into a gx_tmps list and is destroyed when
 * the op's backward is done; the gradients it hands on are owned by the tape. */
#ifndef TX_GRAD_H
#define TX_GRAD_H

#include "../internal.h"

/* Tensors made while computing one thing, destroyed together. */
typedef struct gx_tmps {
    tx_tensor t[64];
    int n;
} gx_tmps;

/* Keeps t in l (TX_ASSERTs the list has room) and returns it. */
tx_tensor gx_keep(gx_tmps *l, tx_tensor t);
void gx_free(tx_ctx *ctx, gx_tmps *l);

/* A tensor of `shape` on `dev` filled with v (float32), kept in l. */
tx_status gx_fill(tx_ctx *ctx, tx_device dev, int rank, const int64_t *shape, float v, gx_tmps *l,
                  tx_tensor *out);
/* A float32 scalar-shaped ([1]) tensor on the device of `like`, kept in l. */
tx_status gx_scalar(tx_ctx *ctx, tx_tensor like, float v, gx_tmps *l, tx_tensor *out);
/* y = a (op) b kept in l. */
tx_status gx_bin(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, gx_tmps *l, tx_tensor *out);
/* y = a (op) scalar v kept in l. */
tx_status gx_bin_s(tx_ctx *ctx, tx_op op, tx_tensor a, float v, gx_tmps *l, tx_tensor *out);
/* st, after keeping *t in l when st is TX_STATUS_OK: wraps a call that makes *t. */
tx_status gx_kept(tx_status st, gx_tmps *l, tx_tensor *t);
/* y = op(x) (a unary op) kept in l. */
tx_status gx_un(tx_ctx *ctx, tx_op op, tx_tensor x, gx_tmps *l, tx_tensor *out);
/* The reduction op of t by d, kept in l. */
tx_status gx_red(tx_ctx *ctx, tx_op op, tx_tensor t, const tx_reduce_desc *d, gx_tmps *l,
                 tx_tensor *out);
/* A view of t with another shape, kept in l. */
tx_status gx_view(tx_ctx *ctx, tx_tensor t, int rank, const int64_t *shape, gx_tmps *l,
                  tx_tensor *out);
/* reduce_sum of g down to `shape` (numpy broadcasting undone): sums the
 * leading dims g has beyond rank and every dim where shape has 1; kept in l
 * (g itself when nothing is summed). */
tx_status gx_unbroadcast(tx_ctx *ctx, tx_tensor g, int rank, const int64_t *shape, gx_tmps *l,
                         tx_tensor *out);
/* The output_padding that makes a conv_transpose with window w's strides,
 * dilations and pads map w's output size back to exactly its input size. */
void gx_output_padding(const tx_window *w, int out[2]);
/* The slot of t (live, checked by the caller before). */
const tx_slot *gx_slot(tx_ctx *ctx, tx_tensor t);

/* ---- the tape (tape.c) ---- */

/* One recorded op. Inputs and output are kept alive by views the tape owns
 * (in[i].keep, out.keep); ids are the caller's handles, what gradients are
 * keyed by. */
#define GX_MAX_IN 8
typedef struct gx_node {
    int op; /* a tx_op, or one of the GX_OP_ extras (internal.h) */
    tx_op_attrs a;
    int n_in;
    uint32_t in_id[GX_MAX_IN];
    tx_tensor in[GX_MAX_IN];
    uint32_t out_id;
    tx_tensor out;
    tx_loss_desc loss; /* the losses (weight: in[2]) */
    tx_tensor aux;     /* a value saved by the forward (the losses: log_prob) */
    unsigned need;     /* bit i: input i's gradient is asked for (it is one of the sources,
                          or depends on one); set by tx_tape_grad before the walk */
} gx_node;

/* Does the walk want input i's gradient? A backward may skip the others
 * (a matmul's data input, a loss's targets): they would be thrown away. */
static inline bool gx_need(const gx_node *nd, int i) {
    return (nd->need >> i) & 1u;
}

/* ---- backward of one node (grad_*.c) ----
 * g: the gradient of the node's output; gin[i] (zeroed by the caller) gets
 * input i's gradient, or stays {0} when input i takes none (labels, or an
 * op's integer inputs). Results go into l; the tape copies what it keeps. */
typedef tx_status (*gx_backward_fn)(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,
                                    tx_tensor gin[GX_MAX_IN]);
#define GX_BACKWARD(family)                                                                        \
    tx_status gx_backward_##family(tx_ctx *ctx, const gx_node *nd, tx_tensor g, gx_tmps *l,        \
                                   tx_tensor gin[GX_MAX_IN])
GX_BACKWARD(elementwise); /* grad_elementwise.c: UNARY, CLIP, ACT, BINARY */
GX_BACKWARD(linear);      /* grad_linear.c: matmul, conv */
GX_BACKWARD(pool);        /* grad_pool.c */
GX_BACKWARD(reduce);      /* grad_reduce.c: REDUCE, SOFTMAX */
GX_BACKWARD(move);        /* grad_move.c: views and MOVE */
GX_BACKWARD(nary);        /* grad_nary.c */
GX_BACKWARD(norm);        /* grad_norm.c */
GX_BACKWARD(loss);        /* loss.c */
/* Whether gx_activation_grad can work from the output alone (else the
 * pre-activation value is recomputed and gx_unary_grad used). */
bool gx_activation_from_output(tx_op act);
/* g · f'(x) for a unary, clip (lo, hi) or ACT (alpha, beta) op; y = f(x). */
tx_status gx_unary_grad(tx_ctx *ctx, tx_op op, float lo, float hi, tx_tensor x, tx_tensor y,
                        tx_tensor g, gx_tmps *l, tx_tensor *out);
tx_status gx_activation_grad(tx_ctx *ctx, tx_op act, float lo, float hi, tx_tensor y, tx_tensor g,
                             gx_tmps *l, tx_tensor *out);

#endif
