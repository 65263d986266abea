/* Private to engine/model/onnx/: a builder for executors that compose many
 * engine ops (the recurrent ops, Einsum, CumSum, Det, GridSample, 3-D Conv ...).
 *
 * Every call records the first failure in b->st and returns {0} from then on,
 * so a chain of calls checks once at the end. Each result is tracked in the
 * builder and destroyed by tx_xb_free (or tx_xb_release_from, for the tensors
 * of one loop iteration) unless tx_xb_untrack hands it to the caller. A
 * builder starts as {.x = x} and ends with one tx_xb_free. */
#ifndef TX_ONNX_BUILD_H
#define TX_ONNX_BUILD_H

#include "common.h"

typedef struct tx_xb {
    tx_xnode *x;
    tx_status st;
    tx_tensor *t; /* tracked tensors */
    int n, cap;
    int ns; /* scalars made so far, shared by value (one upload each) */
    float sv[64];
    tx_tensor sc[64];
} tx_xb;

/* Tracks t (a tensor the caller made); returns it. */
tx_tensor tx_xb_track(tx_xb *b, tx_status st, tx_tensor t);
/* Stops tracking t (the caller now owns it); returns it. */
tx_tensor tx_xb_untrack(tx_xb *b, tx_tensor t);
/* Destroys the tracked tensors from index n0 on (a mark taken from b->n). */
void tx_xb_release_from(tx_xb *b, int n0);
/* Destroys every tracked tensor and the list; returns b->st. */
tx_status tx_xb_free(tx_xb *b);

tx_tensor tx_xb_in(tx_xb *b, int i); /* input i on the device (not tracked: the session owns it) */
tx_tensor tx_xb_unary(tx_xb *b, tx_op op, tx_tensor a);
tx_tensor tx_xb_binary(tx_xb *b, tx_op op, tx_tensor a, tx_tensor c);
/* any fused activation (tx_apply_act): an ACT op with alpha, beta, a UNARY op, or CLIP [alpha,
 * beta] */
tx_tensor tx_xb_act(tx_xb *b, tx_op op, tx_tensor a, float alpha, float beta);
tx_tensor tx_xb_clip(tx_xb *b, tx_tensor a, float lo, float hi);
/* a op v (a float32 scalar). */
tx_tensor tx_xb_binary_s(tx_xb *b, tx_op op, tx_tensor a, float v);
/* m ? a : c */
tx_tensor tx_xb_where(tx_xb *b, tx_tensor m, tx_tensor a, tx_tensor c);
/* A float32 scalar; equal values (bitwise) share one tensor while it is tracked. */
tx_tensor tx_xb_scalar(tx_xb *b, float v);
/* a [.., M, K] x c [.., K, N] (c given as [.., N, K] when tb), plus bias [N] if set. */
tx_tensor tx_xb_matmul(tx_xb *b, tx_tensor a, tx_tensor c, bool tb, tx_tensor bias);
tx_tensor tx_xb_reshape(tx_xb *b, tx_tensor a, int rank, const int64_t *shape);
tx_tensor tx_xb_transpose(tx_xb *b, tx_tensor a, const int *perm);
/* a[start:end:step] along one axis. */
tx_tensor tx_xb_slice(tx_xb *b, tx_tensor a, int axis, int64_t start, int64_t end, int64_t step);
tx_tensor tx_xb_pad(tx_xb *b, tx_tensor a, const tx_pad_desc *d);
/* a gathered along axis by the int32 indices ix. */
tx_tensor tx_xb_gather(tx_xb *b, tx_tensor a, tx_tensor ix, int axis);
/* a[..., k, ...] along axis (that axis dropped). */
tx_tensor tx_xb_take(tx_xb *b, tx_tensor a, int32_t k, int axis);
tx_tensor tx_xb_concat(tx_xb *b, const tx_tensor *xs, int n, int axis);
/* The same as a tree of 4-way concats: every draw of a level has the same
 * shapes (one program for all of them, where a chain would make a program
 * per offset) and each element is copied log4(n) times, not n/3. */
tx_tensor tx_xb_concat_tree(tx_xb *b, const tx_tensor *xs, int n, int axis);
tx_tensor tx_xb_reduce(tx_xb *b, tx_op op, tx_tensor a, const int *axes, int n_axes, bool keep);
tx_tensor tx_xb_cast(tx_xb *b, tx_tensor a, tx_dtype to);
/* A float32 (or int32) tensor from host values. */
tx_tensor tx_xb_const(tx_xb *b, int rank, const int64_t *shape, tx_dtype dt, const void *data);
/* Shape of a; rank -1 after a failure. */
int tx_xb_shape(tx_xb *b, tx_tensor a, int64_t shape[TX_MAX_RANK]);
/* Output i of the node: a handle of tracked t that the session owns, with
 * element type elem (converted to its device dtype: int32 for integer types);
 * a failure stays in b->st. Nothing happens after an earlier failure. */
void tx_xb_output(tx_xb *b, int i, tx_tensor t, int elem);
/* Records a failure naming the node (the first one wins); returns it. */
tx_status tx_xb_fail(tx_xb *b, tx_status st, const char *msg);

#endif
