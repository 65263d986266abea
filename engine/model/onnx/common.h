/* Private to engine/model/onnx/: the op-family tables and the helpers their executors share.
 *
 * Layout
 * ------
 * One file per ONNX op family, each ending in its own table of rows:
 *
 *   elementwise.c  unary math, alpha/beta activations, Clip, binary and
 *                  variadic arithmetic, comparisons and logic, Where, Mod, IsInf
 *   matmul.c       MatMul, Gemm
 *   conv.c         Conv, ConvTranspose, the pools
 *   norm.c         Batch/Instance/LayerNormalization, Softmax, LogSoftmax, Hardmax
 *   reduce.c       Reduce*, ArgMax, ArgMin
 *   shape.c        views (Reshape, Flatten, Squeeze, Unsqueeze, Identity,
 *                  Dropout) and Shape, Size
 *   constant.c     Constant, ConstantOfShape, Range, EyeLike
 *   move.c         Cast, Concat, Slice, Transpose, Split, Pad, Expand, Tile,
 *                  DepthToSpace, SpaceToDepth, Trilu
 *   gather.c       Gather, GatherElements, GatherND, OneHot
 *   resize.c       Resize, Upsample
 *   rnn.c          RNN, GRU, LSTM (composed per time step; build.c's builder)
 *   seq.c          CumSum, ReverseSequence, LRN, MeanVarianceNormalization,
 *                  BitShift, Det, the window functions
 *   einsum.c       Einsum
 *   dft.c          DFT, STFT (matmuls with a host-built cos/sin matrix),
 *                  MelWeightMatrix
 *   detect.c       NonZero, Compress, Unique, NonMaxSuppression, TopK (after
 *                  a counted read-back)
 *   scatter.c      ScatterND, ScatterElements, Scatter, MaxUnpool
 *   sample.c       GridSample, RoiAlign
 *   linalg.c       Det (elimination with partial pivoting)
 *   volume.c       3-D Conv, ConvTranspose and pools, MaxPool's Indices
 *                  (reached through conv.c's rows)
 *   build.c        the builder (build.h) of the compositions of engine ops:
 *                  results freed together, the first failure carried along
 *   quant.c        QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
 *   qlinear.c      MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
 *   loss.c         SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss
 *   training.c     Adagrad, Momentum, Adam (domain ai.onnx.preview.training)
 *   common.c       these helpers, and tx_onnx_op_find over every family
 *
 * How to add an op
 * ----------------
 * 1. In its family's file write `static tx_status exec_<name>(tx_xnode *x)`:
 *    - read attributes with tx_attr_int/float/str/ints(x->node, ...);
 *    - get inputs with tx_x_dev(x, i, &t) (a device tensor; constants are
 *      uploaded once) or, for shape-like inputs, tx_x_host(x, i, &hval)
 *      (tx_x_host_ints for int lists);
 *    - call the engine (tx_unary, tx_binary, tx_conv ...) and hand each result
 *      to tx_x_set_dev(x, i, tensor, onnx_elem_type);
 *    - report bad attributes/inputs with tx_x_fail(x, status, "...") and
 *      features you do not support with TX_STATUS_UNSUPPORTED.
 *    At plan time the same function runs with x->fold set when all inputs are
 *    constants: tx_x_dev then returns TX_STATUS_DEFER (just return it) and a
 *    host path (if the op has one, flag TX_OPF_HOST) computes the output with
 *    tx_x_set_host. If the op can take a fused activation (Conv), honour
 *    x->act and flag TX_OPF_FUSE_ACT: the fusion pass then folds a following
 *    Relu/Sigmoid/Tanh/Gelu/HardSwish/Mish/Softplus/Clip(0,6) into it.
 * 2. Optionally write `static tx_status infer_<name>(tx_xnode *x)` setting
 *    static output shapes with tx_x_set_info (tx_x_infer_same and
 *    tx_x_infer_bcast exist).
 * 3. Add one row to the file's k_ops:
 *    {"OpType", exec, infer, flags, min_in, max_in, host_in}
 *    (host_in: bit i set when input i is read with tx_x_host, e.g. axes).
 * A new family is a new file whose table common.c's k_families lists. */
#ifndef TX_ONNX_COMMON_H
#define TX_ONNX_COMMON_H

#include "../session.h"

/* One family's rows. */
typedef struct tx_onnx_family {
    const tx_onnx_op *ops;
    size_t n;
} tx_onnx_family;

extern const tx_onnx_family tx_onnx_ops_elementwise, tx_onnx_ops_matmul, tx_onnx_ops_conv,
    tx_onnx_ops_norm, tx_onnx_ops_reduce, tx_onnx_ops_shape, tx_onnx_ops_constant, tx_onnx_ops_move,
    tx_onnx_ops_gather, tx_onnx_ops_resize, tx_onnx_ops_quant, tx_onnx_ops_qlinear,
    tx_onnx_ops_loss, tx_onnx_ops_training;
extern const tx_onnx_family tx_onnx_ops_rnn, tx_onnx_ops_seq, tx_onnx_ops_einsum, tx_onnx_ops_dft;
/* BatchNormalization with training_mode = 1 (seq.c): batch statistics and the
 * running mean / variance outputs. */
tx_status tx_onnx_batch_norm_training(tx_xnode *x);
/* detection and indexing (detect.c, scatter.c, sample.c) */
extern const tx_onnx_family tx_onnx_ops_detect, tx_onnx_ops_scatter, tx_onnx_ops_sample,
    tx_onnx_ops_linalg;
/* volume.c: 3-D Conv/ConvTranspose/pools and MaxPool's Indices, for conv.c */
tx_status tx_onnx_conv_volume(tx_xnode *x, bool transpose);
tx_status tx_onnx_pool_volume(tx_xnode *x, tx_op op);
/* sample.c: Resize's tf_crop_and_resize, for resize.c (out: the output shape) */
tx_status tx_onnx_resize_crop(tx_xnode *x, tx_resize_mode mode, tx_resize_nearest nm, int rank,
                              const int64_t *in, const int64_t *out);

/* ---- static shapes ---- */

/* Static info of input i (plan-time knowledge; constants exact). */
void tx_x_info(const tx_xnode *x, int i, int *elem, int *rank, int64_t *shape);
/* Shapes of inputs 0 and 1 (tx_x_shape of each; the first failure). */
tx_status tx_x_shape2(tx_xnode *x, int *r0, int64_t s0[TX_MAX_RANK], int *r1,
                      int64_t s1[TX_MAX_RANK]);
/* Output 0 has input 0's static info. */
tx_status tx_x_infer_same(tx_xnode *x);
/* Output 0 is the numpy broadcast of every present input (input 0's type). */
tx_status tx_x_infer_bcast(tx_xnode *x);
/* numpy broadcasting of static shapes (-1: unknown). false if incompatible.
 * o may be a or b: the result is built aside first. */
bool tx_bcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *out);
int64_t tx_numel_of(int rank, const int64_t *shape);
/* A negative axis counted from the end (no range check). */
int tx_norm_axis(int64_t a, int rank);
/* axes = 0 .. rank-1 (an absent axes list means every axis); returns rank. */
int tx_all_axes(int rank, int64_t *axes);

/* ---- host values and attributes ---- */

/* Host inputs i and j, for ops that read two (a failure is already reported). */
tx_status tx_x_host2(tx_xnode *x, int i, const tx_hval **hi, int j, const tx_hval **hj);
/* Host input i, and o allocated (zeroed) with its shape and element type elem. */
tx_status tx_x_host_like(tx_xnode *x, int i, int elem, const tx_hval **h, tx_hval *o);
/* A host value's entries as int64 (shape-like inputs). */
tx_status tx_x_host_ints(tx_xnode *x, int i, const char *what, int64_t *out, int max, int *n);
/* An INTS attribute copied into out (at most max entries); *n = -1 when absent. */
tx_status tx_x_attr_ints(tx_xnode *x, const char *name, int64_t *out, int max, int *n);
/* An int list that is attribute `name` before opset `since` and host input i
 * from it on (Reduce axes, Split split, Pad pads ...); *n = -1 when absent. */
tx_status tx_x_ints_attr_or_input(tx_xnode *x, const char *name, int64_t since, int i, int64_t *out,
                                  int max, int *n);
/* UNSUPPORTED when input i is present with a known non-float type. */
tx_status tx_x_float_input_only(tx_xnode *x, int i);

/* ---- device dtypes ----
 * Int and bool values live as TX_DTYPE_INT32 tensors, except the 0/1 results
 * of comparisons and logic on float tensors, which stay float32 (a cast per
 * node would cost a draw). Ops needing one dtype across inputs harmonise with
 * tx_x_dev_as. */

/* Tensors created while executing one node, destroyed when it finishes. */
typedef struct tx_tmp_list {
    tx_tensor t[64];
    int n;
} tx_tmp_list;

void tx_tmps_free(tx_xnode *x, tx_tmp_list *l);
tx_dtype tx_x_dtype_of(tx_xnode *x, tx_tensor t);
/* t converted to `want` (a cast kept in l) or t itself. */
tx_status tx_x_to_dtype(tx_xnode *x, tx_tensor t, tx_dtype want, tx_tmp_list *l, tx_tensor *out);
/* Input i on the device as dtype `want`. */
tx_status tx_x_dev_as(tx_xnode *x, int i, tx_dtype want, tx_tmp_list *l, tx_tensor *out);
/* Inputs idx[0..n) on the device with one dtype: int32 when all are int32,
 * else float32. */
tx_status tx_x_dev_same(tx_xnode *x, const int *idx, int n, tx_tmp_list *l, tx_tensor *ts);
/* Sets output i, converted to the device dtype of elem when `exact` (int
 * results of float computations must be int32 for integer arithmetic). */
tx_status tx_x_set_dev_typed(tx_xnode *x, int i, tx_tensor y, int elem, bool exact);
/* Host int64 values uploaded (as int32) and added to l. */
tx_status tx_x_upload_ints(tx_xnode *x, int rank, const int64_t *shape, const int64_t *v,
                           tx_tmp_list *l, tx_tensor *out);
/* A float32 scalar tensor (the caller destroys it). */
tx_status tx_x_scalar(tx_xnode *x, float v, tx_tensor *out);

/* ---- shared between families ---- */

/* MatMul's static output shape from inputs 0 and 1 (matmul.c). */
tx_status tx_x_infer_matmul(tx_xnode *x);
/* Conv's attributes (X: input 0, W: input 1) and static output shape (conv.c). */
tx_status tx_x_conv_desc(tx_xnode *x, tx_conv_desc *d);
tx_status tx_x_infer_conv(tx_xnode *x);
/* The saturation range of a quantized element type; UNSUPPORTED for others (quant.c). */
tx_status tx_x_qrange(tx_xnode *x, int elem, float *lo, float *hi);
/* Input i on the device as float32: an int32 tensor (quantized values) is
 * viewed as float32, not cast (tx_tensor_retype: no pass over it). The view
 * is a temporary in l (quant.c). */
tx_status tx_x_dev_float(tx_xnode *x, int i, tx_tmp_list *l, tx_tensor *out);
/* Sets output i (element type elem) to y, a float32 tensor of integral values
 * clipped to elem's range, viewed as int32 (no cast pass; y is consumed). */
tx_status tx_x_set_dev_int(tx_xnode *x, int i, tx_tensor y, int elem);
/* Whether zero-point input i is absent or a constant of zeros (quant.c). */
bool tx_x_zero_point_zero(tx_xnode *x, int i);
/* out = clip(round(v / s) + zp, lo, hi) (v * s when !divide; zp {0}: none),
 * float32, rounding half to even (quant.c). */
tx_status tx_x_requantize(tx_xnode *x, tx_tensor v, tx_tensor s, bool divide, tx_tensor zp,
                          float lo, float hi, tx_tensor *out);

#endif
