/* Plain-C reference for every op: the tests' oracle and the CPU fallback.
 * Written for clarity and accuracy (double accumulation), not speed. Each
 * reference computes its output shape itself, independently of the engine. */
#ifndef TX_REF_H
#define TX_REF_H

#include "texel.h"

typedef struct tx_ref_tensor {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dtype;
    float *data; /* int32 tensors hold their values as floats here too */
} tx_ref_tensor;

/* Returns 0 and fills *out (data malloc'd) or -1 when the inputs are invalid.
 * Ops with several outputs (split) fill out[0..k-1], k = tx_op_outputs(op,
 * attrs). */
typedef int (*tx_ref_fn)(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,
                         tx_ref_tensor *out);

/* Every op in texel_ops.def must have its reference: a missing one does not link. */
#define TX_OP(ENUM, name, family, arity)                                                           \
    int tx_ref_##name(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,                 \
                      tx_ref_tensor *out);
#include "texel_ops.def"
#undef TX_OP

extern const tx_ref_fn tx_ref_table[TX_OP_COUNT_];

/* Defines tx_ref_<name> as the family file's static run() for TX_OP_<ENUM>:
 * run(op, in, n_in, attrs, out), or run(op, in, n_in, out) for families whose
 * ops take no attributes. */
#define TX_REF_RUN(ENUM, name)                                                                     \
    int tx_ref_##name(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,                 \
                      tx_ref_tensor *out) {                                                        \
        return run(TX_OP_##ENUM, in, n_in, attrs, out);                                            \
    }
#define TX_REF_RUN_NO_ATTRS(ENUM, name)                                                            \
    int tx_ref_##name(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs,                 \
                      tx_ref_tensor *out) {                                                        \
        (void)attrs;                                                                               \
        return run(TX_OP_##ENUM, in, n_in, out);                                                   \
    }

int64_t tx_ref_numel(const tx_ref_tensor *t);
/* Numpy broadcasting of shapes a (rank ra) and b (rank rb), right-aligned
 * and padded in front with 1 to rank r: da, db the padded shapes, dims the
 * result's. -1 where they do not broadcast, else 0. */
int tx_ref_broadcast(int ra, const int64_t *a, int rb, const int64_t *b, int r, int64_t *da,
                     int64_t *db, int64_t *dims);
/* The offsets in a and b (padded shapes da, db) of element i of their
 * broadcast result (dims, rank r), both row-major. */
void tx_ref_broadcast_at(int r, const int64_t *dims, const int64_t *da, const int64_t *db,
                         int64_t i, int64_t *ia, int64_t *ib);
/* The one input of a single-input op that needs attrs: &in[0], or NULL when
 * n_in is not 1 or attrs is NULL. */
const tx_ref_tensor *tx_ref_one_input(const tx_ref_tensor *in, int n_in, const tx_op_attrs *attrs);
/* Applies a UNARY op's scalar function (also used for fused activations). */
double tx_ref_unary_scalar(tx_op op, double x);
/* An ACT op's scalar function with its alpha, beta (tx_activation's ops);
 * any other op's as tx_ref_unary_scalar. */
double tx_ref_act_scalar(tx_op op, double alpha, double beta, double x);
/* A BINARY op's scalar function (is_int: integer division / pow); the ONNX
 * loader folds comparisons and logic on host values with it. */
double tx_ref_binary_scalar(tx_op op, double a, double b, bool is_int);
void tx_ref_free(tx_ref_tensor *t);

/* Where random test inputs of an op should come from (input i), so that the
 * sweep exercises the op's real domain (log of positives, pow bases > 0). */
void tx_ref_input_range(tx_op op, int input, float *lo, float *hi);
/* 0, or a step the inputs are rounded down to, so that ties, zeros, exact
 * halves and 0/1 booleans occur (argmax ties, round half to even, and/or). */
double tx_ref_input_step(tx_op op, int input);
/* The dtype of input `input` of `op` in tests, and for int32 inputs the
 * inclusive range of whole values to draw. `in` holds every input's rank and
 * shape (not yet its data), for ranges that depend on shapes: gather's
 * indices span [-dim - 2, dim + 1], negative and clamped ones included.
 * Float inputs: float32, with tx_ref_input_range. */
tx_dtype tx_ref_input_dtype(tx_op op, int input, const tx_ref_tensor *in, int n_in,
                            const tx_op_attrs *attrs, float *lo, float *hi);
/* Allowed |got - want| <= atol + rtol·|want|; `k` is the reduction length
 * (matmul's K, conv's C/group·kH·kW) where error grows with it. */
void tx_ref_tolerance(tx_op op, int64_t k, double *atol, double *rtol);

#endif
