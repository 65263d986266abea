/* Gradients from the tape against central finite differences of the plain-C
 * references, in three modes: GPU generic programs, GPU specialized, and the
 * CPU device.
 *
 * Each case runs one op on seeded inputs under a tape, reduces its output to
 * L = sum(y * R) with a fixed random R (losses: L is the loss, or sum(loss * R)
 * for reduction none), and asks the tape for dL/d(input). The same L is then
 * computed on the host with the op's reference (engine/ref/, or the plain-C
 * losses below) at x ± h for sampled elements of each input:
 * (L(x + h) - L(x - h)) / 2h must match within 1e-2 + 3e-2 |value|. Inputs of
 * ops with kinks (relu, clip, abs, max) are kept 0.05 away from them. */
#include <math.h>
#include <stdint.h>

#include "../engine/ref/ref.h"
#include "harness.h"
#include "open_ctx.h"
#include "tensors.h"
#include "texel.h"

#define TX_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

enum { K_OP = 0, K_RESHAPE, K_SPLIT, K_SCE, K_NLL, K_MSE };

typedef struct gcase {
    const char *name;
    int kind;           /* K_OP: op below; else a view or a loss */
    tx_op op;           /* K_OP */
    const char *shapes; /* "AxB,C": one shape per input (losses: x, labels[, weight]) */
    tx_op_attrs a;
    tx_loss_desc loss; /* the losses (weight: the third shape) */
    float lo, hi;      /* input range (0, 0: [-2, 2]) */
    float kink;        /* inputs kept 0.05 away from kink and -kink (NAN: none) */
    int n_kinks;
    bool grid;        /* ops that pick one of several values (max, pools): inputs on a
                         0.1 grid plus distinct offsets, so no two are within 2h */
    unsigned int_in;  /* bit i: input i is int32 indices in [-dim, dim) of input 0's axis */
    unsigned bool_in; /* bit i: input i holds 0/1 (float), not differentiated */
    unsigned pos_in;  /* bit i: input i in [0.5, 2] (variances) */
} gcase;

#define MM(...)       .a = {.matmul = {__VA_ARGS__}}
#define CONV(...)     .a = {.conv = {__VA_ARGS__}}
#define POOL(...)     .a = {.pool = {__VA_ARGS__}}
#define RED(...)      .a = {.reduce = {__VA_ARGS__}}
#define G(n, k, o, s) .name = n, .kind = k, .op = o, .shapes = s
#define MOVE(...)     .a = {.move = {__VA_ARGS__}}
#define NORM(...)     .a = {.norm = {__VA_ARGS__}}
#define KINK(v)       .kink = (v), .n_kinks = 1

/* clang-format off */
static const gcase k_cases[] = {
    {G("relu", K_OP, TX_OP_RELU, "3x5"), KINK(0)},
    {G("sigmoid", K_OP, TX_OP_SIGMOID, "3x5")},
    {G("tanh", K_OP, TX_OP_TANH, "4x3")},
    {G("exp", K_OP, TX_OP_EXP, "7")},
    {G("log", K_OP, TX_OP_LOG, "2x5"), .lo = 0.5f, .hi = 2},
    {G("sqrt", K_OP, TX_OP_SQRT, "2x5"), .lo = 0.5f, .hi = 2},
    {G("abs", K_OP, TX_OP_ABS, "9"), KINK(0)},
    {G("neg", K_OP, TX_OP_NEG, "2x3")},
    {G("softplus", K_OP, TX_OP_SOFTPLUS, "2x3")},
    {G("gelu", K_OP, TX_OP_GELU, "3x4")},
    {G("sin", K_OP, TX_OP_SIN, "5")},
    {G("cos", K_OP, TX_OP_COS, "5")},
    {G("reciprocal", K_OP, TX_OP_RECIPROCAL, "5"), .lo = 0.5f, .hi = 2},
    {G("clip", K_OP, TX_OP_CLIP, "4x4"), .a = {.lo = -1, .hi = 1}, KINK(1)},
    {G("relu6", K_OP, TX_OP_RELU6, "4x4"), .lo = -1, .hi = 7, KINK(6)},
    {G("leaky_relu", K_OP, TX_OP_LEAKY_RELU, "3x4"), .a = {.alpha = 0.1f}, KINK(0)},
    {G("elu", K_OP, TX_OP_ELU, "3x4"), .a = {.alpha = 1}, KINK(0)},
    {G("erf", K_OP, TX_OP_ERF, "3x4")},
    {G("softsign", K_OP, TX_OP_SOFTSIGN, "3x4"), KINK(0)},
    {G("hard_swish", K_OP, TX_OP_HARD_SWISH, "4x5"), .lo = -5, .hi = 5, KINK(3)},
    {G("tan", K_OP, TX_OP_TAN, "2x5"), .lo = -1, .hi = 1},
    {G("sinh", K_OP, TX_OP_SINH, "2x5")},
    {G("cosh", K_OP, TX_OP_COSH, "2x5")},
    {G("asin", K_OP, TX_OP_ASIN, "2x5"), .lo = -0.9f, .hi = 0.9f},
    {G("acos", K_OP, TX_OP_ACOS, "2x5"), .lo = -0.9f, .hi = 0.9f},
    {G("atan", K_OP, TX_OP_ATAN, "2x5")},
    {G("asinh", K_OP, TX_OP_ASINH, "2x5")},
    {G("acosh", K_OP, TX_OP_ACOSH, "2x5"), .lo = 1.2f, .hi = 3},
    {G("atanh", K_OP, TX_OP_ATANH, "2x5"), .lo = -0.9f, .hi = 0.9f},
    {G("mish", K_OP, TX_OP_MISH, "3x4")},
    {G("hard_sigmoid", K_OP, TX_OP_HARD_SIGMOID, "4x5"), .a = {.alpha = 0.2f, .beta = 0.5f}, .lo = -4, .hi = 4, KINK(2.5f)},
    {G("selu", K_OP, TX_OP_SELU, "3x4"), .a = {.alpha = 1.67326319f, .beta = 1.05070102f}, KINK(0)},
    {G("celu", K_OP, TX_OP_CELU, "3x4"), .a = {.alpha = 0.8f}, KINK(0)},
    {G("swish", K_OP, TX_OP_SWISH, "3x4"), .a = {.alpha = 1.5f}},
    {G("swish/silu", K_OP, TX_OP_SWISH, "3x4"), .a = {.alpha = 1}},
    {G("thresholded_relu", K_OP, TX_OP_THRESHOLDED_RELU, "3x4"), .a = {.alpha = 1}, KINK(1)},
    {G("shrink", K_OP, TX_OP_SHRINK, "3x4"), .a = {.alpha = 0.5f, .beta = 0.2f}, KINK(0.5f)},
    {G("affine", K_OP, TX_OP_AFFINE, "3x4"), .a = {.alpha = -1.5f, .beta = 0.25f}},
    {G("cast/float", K_OP, TX_OP_CAST, "3x4"), .a = {.cast_to = TX_DTYPE_FLOAT32}},
    {G("prelu", K_OP, TX_OP_PRELU, "3x4,4"), KINK(0)},
    {G("greater", K_OP, TX_OP_GREATER, "3x4,3x4"), .grid = true},
    {G("add/broadcast", K_OP, TX_OP_ADD, "3x4,4")},
    {G("sub/broadcast", K_OP, TX_OP_SUB, "2x3x4,3x1")},
    {G("mul", K_OP, TX_OP_MUL, "3x4,3x4")},
    {G("mul/broadcast", K_OP, TX_OP_MUL, "1x4,3x1")},
    {G("div", K_OP, TX_OP_DIV, "3x4,1x4"), .lo = 0.5f, .hi = 2},
    {G("pow", K_OP, TX_OP_POW, "3x4,3x4"), .lo = 0.5f, .hi = 2},
    {G("max", K_OP, TX_OP_MAX, "3x4,3x4"), .grid = true},
    {G("min", K_OP, TX_OP_MIN, "3x4,4"), .grid = true},
    {G("matmul", K_OP, TX_OP_MATMUL, "3x5,5x4")},
    {G("matmul/transpose_a", K_OP, TX_OP_MATMUL, "5x3,5x4"), MM(.transpose_a = true)},
    {G("matmul/transpose_b", K_OP, TX_OP_MATMUL, "3x5,4x5"), MM(.transpose_b = true)},
    {G("matmul/transpose_ab", K_OP, TX_OP_MATMUL, "5x3,4x5"), MM(.transpose_a = true, .transpose_b = true)},
    {G("matmul/bias_relu", K_OP, TX_OP_MATMUL, "6x5,5x4,4"), MM(.activation = TX_OP_RELU)},
    {G("matmul/bias_sigmoid", K_OP, TX_OP_MATMUL, "3x5,5x4,4"), MM(.activation = TX_OP_SIGMOID)},
    {G("matmul/gelu", K_OP, TX_OP_MATMUL, "3x5,5x4"), MM(.activation = TX_OP_GELU)},
    {G("matmul/batched", K_OP, TX_OP_MATMUL, "2x3x5,5x4")},
    {G("matmul/vector_a", K_OP, TX_OP_MATMUL, "5,2x5x4")},
    {G("matmul/vector_b", K_OP, TX_OP_MATMUL, "2x3x5,5")},
    {G("matmul/vectors", K_OP, TX_OP_MATMUL, "5,5")},
    {G("matmul/vector_flags", K_OP, TX_OP_MATMUL, "5,4x5"), MM(.transpose_a = true, .transpose_b = true)},
    {G("matmul/residual_gelu", K_OP, TX_OP_MATMUL, "2x5x6,6x4,4,2x5x4"), MM(.activation = TX_OP_GELU)},
    {G("matmul/leaky_relu", K_OP, TX_OP_MATMUL, "6x5,5x4,4"), MM(.activation = TX_OP_LEAKY_RELU, .alpha = 0.1f)},
    {G("matmul/residual_elu", K_OP, TX_OP_MATMUL, "2x5x6,6x4,4,2x5x4"), MM(.activation = TX_OP_ELU, .alpha = 0.7f)},
    {G("conv", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3")},
    {G("conv/pad_bias_relu", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4"), CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU)},
    {G("conv/pad_bias", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4"), CONV(.pads = {1, 1, 1, 1})},
    {G("conv/pad_bias_leaky_relu", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4"), CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_LEAKY_RELU, .alpha = 0.2f)},
    {G("conv/1x1_hard_sigmoid", K_OP, TX_OP_CONV, "1x3x5x5,4x3x1x1,4"), CONV(.activation = TX_OP_HARD_SIGMOID, .alpha = 0.3f, .beta = 0.5f)},
    {G("conv/residual_selu", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4,2x4x6x6"), CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_SELU, .alpha = 1.6732632f, .beta = 1.0507010f)},
    {G("conv/residual_relu", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4,2x4x6x6"), CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU)},
    /* residual_pad: 2 of the 4 channels' residual; padded under the tape, so it gets its gradient */
    {G("conv/residual_pad", K_OP, TX_OP_CONV, "1x3x6x6,4x3x3x3,4,1x2x6x6"), CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_TANH, .residual_pad = true)},
    {G("conv_transpose/residual", K_OP, TX_OP_CONV_TRANSPOSE, "1x3x4x4,3x2x3x3,2,1x2x8x7"), CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, .output_padding = {1, 0})},
    {G("conv/stride2", K_OP, TX_OP_CONV, "1x2x7x7,3x2x3x3"), CONV(.strides = {2, 2}, .pads = {1, 1, 0, 0})},
    {G("conv/dilation2", K_OP, TX_OP_CONV, "1x2x7x6,3x2x2x2"), CONV(.dilations = {2, 2})},
    {G("conv/depthwise", K_OP, TX_OP_CONV, "2x3x6x6,3x1x3x3,3"), CONV(.group = 3, .pads = {1, 1, 1, 1})},
    {G("conv/x_affine", K_OP, TX_OP_CONV, "2x3x6x6,4x3x3x3,4"), CONV(.pads = {1, 1, 1, 1}, .x_affine = true, .x_scale = -1.5f, .x_shift = 0.4f)},
    {G("conv/depthwise_x_affine", K_OP, TX_OP_CONV, "1x4x5x8,4x1x3x3"), CONV(.group = 4, .pads = {1, 1, 1, 1}, .x_affine = true, .x_scale = 0.7f, .x_shift = -0.6f)},
    {G("conv/group2", K_OP, TX_OP_CONV, "1x4x5x5,6x2x3x3"), CONV(.group = 2, .strides = {2, 1})},
    {G("conv/depthwise16_x2", K_OP, TX_OP_CONV, "1x16x4x4,32x1x3x3"), CONV(.group = 16, .strides = {2, 2}, .pads = {1, 1, 1, 1})},
    {G("conv/depthwise70", K_OP, TX_OP_CONV, "2x70x3x3,70x1x3x3,70"), CONV(.group = 70)},
    {G("conv/group70", K_OP, TX_OP_CONV, "1x140x3x3,70x2x3x3"), CONV(.group = 70)},
    {G("conv/1d", K_OP, TX_OP_CONV, "2x3x9,4x3x3"), CONV(.pads = {1, 1})},
    {G("conv/pads_dilation", K_OP, TX_OP_CONV, "2x3x8x7,4x3x3x3,4"), CONV(.pads = {1, 2, 1, 3}, .dilations = {1, 2})},
    {G("conv/group2_stride_rows", K_OP, TX_OP_CONV, "1x4x5x8,6x2x3x3"), CONV(.group = 2, .pads = {1, 1, 1, 1}, .strides = {2, 1})},
    {G("conv/same_upper", K_OP, TX_OP_CONV, "1x2x6x6,2x2x3x3"), CONV(.auto_pad = TX_AUTO_PAD_SAME_UPPER, .strides = {2, 2})},
    {G("conv_transpose", K_OP, TX_OP_CONV_TRANSPOSE, "1x3x4x4,3x2x3x3,2"), CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, .output_padding = {1, 0})},
    {G("conv_transpose/group", K_OP, TX_OP_CONV_TRANSPOSE, "2x4x3x5,4x1x2x3"), CONV(.group = 2, .dilations = {2, 1})},
    {G("conv_transpose/1d", K_OP, TX_OP_CONV_TRANSPOSE, "1x2x6,2x3x3"), CONV(.strides = {2}, .pads = {1, 0})},
    {G("conv_transpose/output_shape", K_OP, TX_OP_CONV_TRANSPOSE, "1x2x3x4,2x3x3x3"), CONV(.strides = {2, 2}, .output_shape = {6, 8})},
    {G("conv_transpose/same_upper", K_OP, TX_OP_CONV_TRANSPOSE, "1x2x3x3,2x2x3x2"), CONV(.strides = {2, 1}, .auto_pad = TX_AUTO_PAD_SAME_UPPER)},
    {G("conv_transpose/same_lower_1d", K_OP, TX_OP_CONV_TRANSPOSE, "2x2x5,2x1x4"), CONV(.strides = {2}, .auto_pad = TX_AUTO_PAD_SAME_LOWER)},
    {G("conv_transpose/valid", K_OP, TX_OP_CONV_TRANSPOSE, "1x2x3x3,2x2x2x3"), CONV(.strides = {2, 2}, .auto_pad = TX_AUTO_PAD_VALID)},
    {G("maxpool", K_OP, TX_OP_MAXPOOL, "2x3x6x6"), POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .grid = true},
    {G("maxpool/cut", K_OP, TX_OP_MAXPOOL, "1x2x7x5"), POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .grid = true},
    /* rows of whole texels (W % 4 == 0): a texel per window row, 1, 2 or 4
     * windows per texel, a last row no window covers */
    {G("maxpool/texels", K_OP, TX_OP_MAXPOOL, "2x3x5x8"), POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .grid = true},
    {G("maxpool/texels_kw1", K_OP, TX_OP_MAXPOOL, "1x2x6x4"), POOL(.kernel_shape = {3, 1}, .strides = {3, 1}), .grid = true},
    {G("maxpool/texels_kw4", K_OP, TX_OP_MAXPOOL, "1x2x3x8"), POOL(.kernel_shape = {1, 4}, .strides = {1, 4}), .grid = true},
    {G("maxpool/overlap", K_OP, TX_OP_MAXPOOL, "1x2x6x7"), POOL(.kernel_shape = {3, 3}, .strides = {1, 1}), .grid = true},
    {G("maxpool/pad_stride", K_OP, TX_OP_MAXPOOL, "2x2x7x6"), POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}), .grid = true},
    {G("maxpool/dilated_1d", K_OP, TX_OP_MAXPOOL, "2x2x9"), POOL(.kernel_shape = {2}, .strides = {1}, .dilations = {2}), .grid = true},
    {G("maxpool/ceil", K_OP, TX_OP_MAXPOOL, "1x2x7x7"), POOL(.kernel_shape = {3, 2}, .strides = {2, 2}, .ceil_mode = true), .grid = true},
    {G("averagepool", K_OP, TX_OP_AVERAGEPOOL, "2x3x6x6"), POOL(.kernel_shape = {3, 3}, .strides = {3, 3})},
    {G("averagepool/overlap_pad", K_OP, TX_OP_AVERAGEPOOL, "2x2x6x7"), POOL(.kernel_shape = {3, 3}, .strides = {2, 1}, .pads = {1, 1, 1, 0}, .count_include_pad = true)},
    {G("averagepool/exclude_pad", K_OP, TX_OP_AVERAGEPOOL, "1x3x5x5"), POOL(.kernel_shape = {3, 2}, .strides = {1, 2}, .pads = {1, 0, 1, 1})},
    {G("averagepool/dilated_1d", K_OP, TX_OP_AVERAGEPOOL, "2x2x9"), POOL(.kernel_shape = {3}, .strides = {2}, .dilations = {2})},
    {G("averagepool/ceil", K_OP, TX_OP_AVERAGEPOOL, "1x2x7x6"), POOL(.kernel_shape = {3, 2}, .strides = {2, 2}, .pads = {1, 0, 1, 0}, .ceil_mode = true)},
    {G("averagepool/ceil_include_pad", K_OP, TX_OP_AVERAGEPOOL, "1x2x6x7"), POOL(.kernel_shape = {2, 3}, .strides = {2, 2}, .pads = {0, 1, 0, 1}, .ceil_mode = true, .count_include_pad = true)},
    {G("averagepool/ceil_1d", K_OP, TX_OP_AVERAGEPOOL, "2x2x8"), POOL(.kernel_shape = {3}, .strides = {2}, .ceil_mode = true)},
    {G("globalaveragepool", K_OP, TX_OP_GLOBALAVERAGEPOOL, "2x3x4x5")},
    {G("globalmaxpool", K_OP, TX_OP_GLOBALMAXPOOL, "2x3x4x5"), .grid = true},
    {G("reduce_sum", K_OP, TX_OP_REDUCE_SUM, "3x4x5"), RED(.n_axes = 1, .axes = {1})},
    {G("reduce_sum/drop", K_OP, TX_OP_REDUCE_SUM, "3x4x5"), RED(.n_axes = 2, .axes = {0, 2}, .drop_dims = true)},
    {G("reduce_mean", K_OP, TX_OP_REDUCE_MEAN, "3x4x5")},
    {G("reduce_sum_square", K_OP, TX_OP_REDUCE_SUM_SQUARE, "3x4"), RED(.n_axes = 1, .axes = {-1})},
    {G("reduce_max", K_OP, TX_OP_REDUCE_MAX, "3x4x5"), RED(.n_axes = 1, .axes = {2}), .grid = true},
    {G("reduce_prod", K_OP, TX_OP_REDUCE_PROD, "3x4"), RED(.n_axes = 1, .axes = {1}), .lo = 0.5f, .hi = 1.5f},
    {G("reduce_prod/signs", K_OP, TX_OP_REDUCE_PROD, "2x3x2"), RED(.n_axes = 2, .axes = {0, 2}, .drop_dims = true), .lo = -1.5f, .hi = 1.5f},
    {G("reduce_l1", K_OP, TX_OP_REDUCE_L1, "3x4"), RED(.n_axes = 1, .axes = {0}), KINK(0)},
    {G("reduce_l2", K_OP, TX_OP_REDUCE_L2, "3x4x2"), RED(.n_axes = 1, .axes = {1})},
    {G("reduce_log_sum", K_OP, TX_OP_REDUCE_LOG_SUM, "3x4"), RED(.n_axes = 1, .axes = {1}), .lo = 0.5f, .hi = 2},
    {G("reduce_log_sum_exp", K_OP, TX_OP_REDUCE_LOG_SUM_EXP, "3x4x5"), RED(.n_axes = 1, .axes = {-1})},
    {G("softmax", K_OP, TX_OP_SOFTMAX, "3x5"), .a = {.softmax = {.axis = -1}}},
    {G("log_softmax", K_OP, TX_OP_LOG_SOFTMAX, "2x4x3"), .a = {.softmax = {.axis = 1}}},
    {G("softmax/coerce_2d", K_OP, TX_OP_SOFTMAX, "2x3x4"), .a = {.softmax = {.axis = 1, .coerce_2d = true}}},
    {G("log_softmax/coerce_2d", K_OP, TX_OP_LOG_SOFTMAX, "3x2x4"), .a = {.softmax = {.axis = 1, .coerce_2d = true}}},
    {G("transpose", K_OP, TX_OP_TRANSPOSE, "2x3x4"), .a = {.move = {.n_perm = 3, .perm = {2, 0, 1}}}},
    {G("slice", K_OP, TX_OP_SLICE, "4x6"), MOVE(.slice = {.n = 2, .starts = {1, -4}, .ends = {3, 100}})},
    {G("slice/axes", K_OP, TX_OP_SLICE, "2x5x3"), MOVE(.slice = {.n = 1, .starts = {1}, .ends = {4}, .axes = {1}, .has_axes = true})},
    {G("pad", K_OP, TX_OP_PAD, "3x4"), MOVE(.pad = {.begin = {1, 0}, .end = {2, 3}, .value = 0.5f})},
    {G("pad/crop", K_OP, TX_OP_PAD, "3x5"), MOVE(.pad = {.begin = {0, -2}, .end = {1, 1}})},
    {G("slice/steps", K_OP, TX_OP_SLICE, "6x7"), MOVE(.slice = {.n = 2, .starts = {1, -1}, .ends = {6, INT64_MIN}, .steps = {2, -2}})},
    {G("slice/step3_axes", K_OP, TX_OP_SLICE, "2x10x3"), MOVE(.slice = {.n = 1, .starts = {-9}, .ends = {100}, .axes = {1}, .steps = {3}, .has_axes = true})},
    {G("slice/reverse", K_OP, TX_OP_SLICE, "4x5"), MOVE(.slice = {.n = 1, .starts = {3}, .ends = {0}, .axes = {1}, .steps = {-1}, .has_axes = true})},
    {G("pad/reflect", K_OP, TX_OP_PAD, "3x5"), MOVE(.pad = {.mode = TX_PAD_REFLECT, .begin = {2, 1}, .end = {1, 3}})},
    {G("pad/reflect_bounce", K_OP, TX_OP_PAD, "2x3"), MOVE(.pad = {.mode = TX_PAD_REFLECT, .begin = {0, 4}, .end = {1, 5}})},
    {G("pad/edge", K_OP, TX_OP_PAD, "4x3"), MOVE(.pad = {.mode = TX_PAD_EDGE, .begin = {1, 2}, .end = {2, 0}})},
    {G("pad/wrap_crop", K_OP, TX_OP_PAD, "3x4"), MOVE(.pad = {.mode = TX_PAD_WRAP, .begin = {-1, 2}, .end = {1, 5}})},
    {G("depth_to_space", K_OP, TX_OP_DEPTH_TO_SPACE, "1x8x2x3"), MOVE(.blocksize = 2)},
    {G("depth_to_space/crd", K_OP, TX_OP_DEPTH_TO_SPACE, "2x8x2x2"), MOVE(.blocksize = 2, .depth_mode = TX_DEPTH_CRD)},
    {G("space_to_depth", K_OP, TX_OP_SPACE_TO_DEPTH, "1x2x4x6"), MOVE(.blocksize = 2)},
    {G("resize/nearest", K_OP, TX_OP_RESIZE, "1x2x3x4"), MOVE(.resize = {.scales = {1, 1, 2, 1.5f}})},
    /* a residual (the second input): resize and add under the tape, both get gradients */
    {G("resize/linear/residual", K_OP, TX_OP_RESIZE, "1x2x3x4,1x2x6x6"), MOVE(.resize = {.mode = TX_RESIZE_LINEAR, .scales = {1, 1, 2, 1.5f}})},
    {G("resize/linear_sizes", K_OP, TX_OP_RESIZE, "1x1x4x5"), MOVE(.resize = {.mode = TX_RESIZE_LINEAR, .sizes = {1, 1, 7, 3}})},
    {G("resize/cubic_align", K_OP, TX_OP_RESIZE, "1x2x4x4"), MOVE(.resize = {.mode = TX_RESIZE_CUBIC, .coord = TX_RESIZE_ALIGN_CORNERS, .scales = {1, 1, 1.5f, 2}})},
    {G("resize/tf_half_pixel_nearest", K_OP, TX_OP_RESIZE, "1x2x3x4"), MOVE(.resize = {.coord = TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 1.7f, 0.8f}})},
    {G("resize/linear_down", K_OP, TX_OP_RESIZE, "2x3x10"), MOVE(.resize = {.mode = TX_RESIZE_LINEAR, .coord = TX_RESIZE_ASYMMETRIC, .scales = {1, 1, 0.6f}})},
    {G("resize/cubic_exclude", K_OP, TX_OP_RESIZE, "1x1x5x3"), MOVE(.resize = {.mode = TX_RESIZE_CUBIC, .exclude_outside = true, .cubic_a = -0.5f, .scales = {1, 1, 0.8f, 2.5f}})},
    {G("expand", K_OP, TX_OP_EXPAND, "3x1"), MOVE(.rank = 3, .shape = {2, 3, 4})},
    {G("tile", K_OP, TX_OP_TILE, "2x3"), MOVE(.repeats = {2, 3})},
    {G("concat", K_OP, TX_OP_CONCAT, "2x3,2x1,2x4"), MOVE(.axis = 1)},
    {G("gather", K_OP, TX_OP_GATHER, "5x3,4"), .int_in = 2},
    {G("gather/axis1", K_OP, TX_OP_GATHER, "2x5x3,2x2"), MOVE(.axis = 1), .int_in = 2},
    {G("where", K_OP, TX_OP_WHERE, "3x4,3x4,4"), .bool_in = 1},
    {G("sum", K_OP, TX_OP_SUM, "3x4,4,3x1")},
    {G("mean", K_OP, TX_OP_MEAN, "3x4,3x4")},
    {G("max_n", K_OP, TX_OP_MAX_N, "3x4,3x4,4"), .grid = true},
    {G("batch_norm", K_OP, TX_OP_BATCH_NORM, "2x3x4x4,3,3,3,3"), .pos_in = 16},
    {G("layer_norm", K_OP, TX_OP_LAYER_NORM, "3x4x5,5,5"), NORM(.axis = -1)},
    {G("layer_norm/axis1", K_OP, TX_OP_LAYER_NORM, "2x3x4,3x4"), NORM(.axis = 1)},
    {G("instance_norm", K_OP, TX_OP_INSTANCE_NORM, "2x3x4x5,3,3")},
    {G("split", K_SPLIT, TX_OP_NONE, "3x6")},
    {G("reshape", K_RESHAPE, TX_OP_NONE, "2x3x4")},
    {G("sce/mean", K_SCE, TX_OP_NONE, "4x5,4")},
    {G("sce/none_weight_ii", K_SCE, TX_OP_NONE, "3x4x2,3x2,4"), .loss = {.reduction = TX_LOSS_NONE, .has_ignore_index = true, .ignore_index = 1}},
    {G("sce/mean_weight", K_SCE, TX_OP_NONE, "5x3,5,3")},
    {G("nll/sum", K_NLL, TX_OP_NONE, "4x5,4"), .loss = {.reduction = TX_LOSS_SUM}},
    {G("nll/mean_weight_ii", K_NLL, TX_OP_NONE, "6x3x2,6x2,3"), .loss = {.has_ignore_index = true, .ignore_index = 2}},
    {G("mse", K_MSE, TX_OP_NONE, "3x4,3x4")},
    {G("mse/broadcast_sum", K_MSE, TX_OP_NONE, "3x4,4"), .loss = {.reduction = TX_LOSS_SUM}},
    {G("mse/none", K_MSE, TX_OP_NONE, "2x5,2x5"), .loss = {.reduction = TX_LOSS_NONE}},
};
/* clang-format on */

/* ---- host side ---- */

static uint64_t g_rng;
static float frand(float lo, float hi) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_rng >> 40) & 0xffffff) / 16777216.0f;
}

static int parse_shapes(const char *s, tx_ref_tensor *t) {
    int n = 0;
    while (*s) {
        tx_ref_tensor *c = &t[n++];
        memset(c, 0, sizeof *c);
        for (;;) {
            c->shape[c->rank++] = strtol(s, (char **)&s, 10);
            if (*s != 'x')
                break;
            s++;
        }
        if (*s == ',')
            s++;
    }
    return n;
}

/* The plain-C losses: loss per label, reduced as the desc says. */
static double ref_loss(int kind, const tx_ref_tensor *in, int n, const tx_loss_desc *d,
                       const float *r) {
    if (kind == K_MSE) {
        int64_t dims[TX_MAX_RANK], da[TX_MAX_RANK], db[TX_MAX_RANK];
        int rank = in[0].rank > in[1].rank ? in[0].rank : in[1].rank;
        tx_ref_broadcast(in[0].rank, in[0].shape, in[1].rank, in[1].shape, rank, da, db, dims);
        int64_t total = 1;
        for (int i = 0; i < rank; i++)
            total *= dims[i];
        double s = 0;
        for (int64_t i = 0; i < total; i++) {
            int64_t ia, ib;
            tx_ref_broadcast_at(rank, dims, da, db, i, &ia, &ib);
            double v = (double)in[0].data[ia] - in[1].data[ib];
            s += d->reduction == TX_LOSS_NONE ? v * v * r[i] : v * v; /* none: weighed by R */
        }
        return d->reduction == TX_LOSS_MEAN ? s / (double)total : s;
    }
    int64_t N = in[0].shape[0], C = in[0].shape[1], D = tx_ref_numel(&in[0]) / (N * C);
    double num = 0, den = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = 0; k < D; k++) {
            int lab = (int)in[1].data[i * D + k];
            if (d->has_ignore_index && lab == d->ignore_index)
                continue;
            double w = n > 2 ? in[2].data[lab] : 1.0;
            double v;
            if (kind == K_SCE) {
                double mx = -INFINITY, se = 0;
                for (int64_t c = 0; c < C; c++)
                    mx = fmax(mx, in[0].data[(i * C + c) * D + k]);
                for (int64_t c = 0; c < C; c++)
                    se += exp(in[0].data[(i * C + c) * D + k] - mx);
                v = in[0].data[(i * C + lab) * D + k] - mx - log(se);
            } else {
                v = in[0].data[(i * C + lab) * D + k];
            }
            double loss = -v * w;
            num += d->reduction == TX_LOSS_NONE ? loss * r[i * D + k] : loss;
            den += w;
        }
    return d->reduction == TX_LOSS_MEAN ? num / den : num;
}

/* L at the host inputs: sum(ref(in) * r), or the loss. */
static double host_objective(const gcase *c, tx_ref_tensor *in, int n, const float *r) {
    if (c->kind == K_SCE || c->kind == K_NLL || c->kind == K_MSE)
        return ref_loss(c->kind, in, n, &c->loss, r);
    tx_ref_tensor out = {0};
    if (c->kind == K_SPLIT) { /* concat(split(x, 2 halves on axis 1) reversed) */
        double s = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 6; j++)
                s += (double)in[0].data[i * 6 + (j + 3) % 6] * r[i * 6 + j];
        return s;
    }
    if (c->kind == K_RESHAPE) {
        out = in[0];
        double s = 0;
        for (int64_t i = 0; i < tx_ref_numel(&out); i++)
            s += (double)out.data[i] * r[i];
        return s;
    }
    if (tx_ref_table[c->op](in, n, &c->a, &out) != 0)
        return NAN;
    double s = 0;
    for (int64_t i = 0; i < tx_ref_numel(&out); i++)
        s += (double)out.data[i] * r[i];
    tx_ref_free(&out);
    return s;
}

/* ---- engine side ---- */

static tx_tensor make(tx_ctx *ctx, const tx_ref_tensor *t, bool labels) {
    int32_t buf[256];
    const void *data = t->data;
    if (labels) {
        for (int64_t i = 0; i < tx_ref_numel(t); i++)
            buf[i] = (int32_t)t->data[i];
        data = buf;
    }
    return tx_test_tensor(ctx, t->rank, t->shape, labels ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32, data);
}

/* Runs the case under a tape; grads[i] for the float inputs. */
static tx_status engine_grads(tx_ctx *ctx, const gcase *c, const tx_ref_tensor *in, int n,
                              const float *r, int64_t r_n, tx_tensor *grads) {
    tx_tensor t[5] = {{0}}, y = {0}, rt = {0}, p = {0}, l = {0};
    bool is_loss = c->kind >= K_SCE;
    for (int i = 0; i < n; i++)
        t[i] = make(ctx, &in[i], (is_loss && c->kind != K_MSE && i == 1) || ((c->int_in >> i) & 1));
    tx_tape *tape;
    tx_status st = tx_tape_begin(ctx, &tape);
    if (st)
        return st;
    tx_loss_desc d = c->loss;
    if (n > 2 && is_loss)
        d.weight = t[2];
    switch (c->kind) {
    case K_OP: st = tx_op_run(ctx, c->op, t, n, &c->a, &y); break;
    case K_RESHAPE: st = tx_tensor_reshape(ctx, t[0], 2, (int64_t[]){4, -1}, &y); break;
    case K_SPLIT: {
        tx_tensor h[2];
        st = tx_split(ctx, t[0], 1, NULL, 2, h);
        if (!st) {
            st = tx_concat(ctx, (tx_tensor[]){h[1], h[0]}, 2, 1, &y);
            TX_DESTROY(ctx, h[0], h[1]);
        }
        break;
    }
    case K_SCE: st = tx_softmax_cross_entropy(ctx, t[0], t[1], &d, &y, NULL); break;
    case K_NLL: st = tx_nll_loss(ctx, t[0], t[1], &d, &y); break;
    default: st = tx_mse_loss(ctx, t[0], t[1], d.reduction, &y); break;
    }
    bool weigh = !st && (!is_loss || d.reduction == TX_LOSS_NONE);
    if (weigh) {
        int rank;
        int64_t shape[TX_MAX_RANK];
        tx_tensor_shape(ctx, y, &rank, shape, NULL);
        rt = tx_test_tensor(ctx, rank, shape, TX_DTYPE_FLOAT32, r);
        (void)r_n;
        st = tx_binary(ctx, TX_OP_MUL, y, rt, &p);
        if (!st)
            st = tx_reduce(ctx, TX_OP_REDUCE_SUM, p, NULL, &l);
    }
    if (!st)
        st = tx_tape_grad(ctx, tape, weigh ? l : y, t, is_loss && c->kind != K_MSE ? 1 : n, grads);
    tx_tape_end(ctx, tape);
    tx_tensor all[] = {t[0], t[1], t[2], t[3], t[4], y, rt, p, l};
    for (size_t i = 0; i < TX_COUNTOF(all); i++)
        if (all[i].id)
            tx_tensor_destroy(ctx, all[i]);
    return st;
}

static void run_case(tx_ctx *ctx, const char *mode, const gcase *c) {
    char name[128];
    snprintf(name, sizeof name, "%s/%s", mode, c->name);
    if (!tx_test_begin(name))
        return;
    tx_ref_tensor in[5];
    int n = parse_shapes(c->shapes, in);
    g_rng = 1469598103934665603ull; /* FNV-1a of the name: each case its own inputs */
    for (const char *p = c->name; *p; p++)
        g_rng = (g_rng ^ (uint8_t)*p) * 1099511628211ull;
    float lo = c->lo != c->hi ? c->lo : -2, hi = c->lo != c->hi ? c->hi : 2;
    bool is_loss = c->kind >= K_SCE;
    for (int i = 0; i < n; i++) {
        int64_t m = tx_ref_numel(&in[i]);
        in[i].data = malloc(sizeof(float) * (size_t)m);
        for (int64_t j = 0; j < m; j++) {
            float v = frand(lo, hi);
            if (is_loss && c->kind != K_MSE && i == 1) /* labels; ii sometimes */
                v = (float)(int)frand(0, (float)in[0].shape[1] - 0.01f);
            else if (is_loss && i == 2)
                v = frand(0.5f, 2);
            for (int k = 0; k < c->n_kinks && !((c->int_in >> i) & 1); k++)
                for (float s = -1; s <= 1; s += 2)
                    if (fabsf(v - s * c->kink) < 0.05f)
                        v += 0.1f;
            if (c->grid)
                v = roundf(v * 10) / 10 + 0.0045f * (float)i + 0.011f * (float)(j % 7);
            if ((c->pos_in >> i) & 1)
                v = frand(0.5f, 2);
            if ((c->bool_in >> i) & 1)
                v = v > 0 ? 1.0f : 0.0f;
            if ((c->int_in >> i) & 1) {
                int ax = c->a.move.axis < 0 ? c->a.move.axis + in[0].rank : c->a.move.axis;
                float dim = (float)in[0].shape[ax];
                v = floorf(frand(-dim, dim - 0.01f));
                in[i].dtype = TX_DTYPE_INT32;
            }
            in[i].data[j] = v;
        }
    }
    float r[512];
    for (int i = 0; i < 512; i++)
        r[i] = frand(-1, 1);
    tx_tensor grads[5] = {{0}};
    int n_diff = is_loss && c->kind != K_MSE ? 1 : n;
    tx_status st = engine_grads(ctx, c, in, n, r, 512, grads);
    CHECK(st == TX_STATUS_OK, "%s: %s", tx_status_name(st), tx_last_error(ctx));
    const float h = c->grid ? 1e-3f : 5e-3f;
    for (int i = 0; i < n_diff && !st; i++) {
        if (((c->int_in | c->bool_in) >> i) & 1)
            continue;
        int64_t m = tx_ref_numel(&in[i]);
        float *got = malloc(sizeof(float) * (size_t)m);
        CHECK(!tx_tensor_read(ctx, grads[i], got, sizeof(float) * (size_t)m), "read grad %d: %s", i,
              tx_last_error(ctx));
        int64_t step = m > 24 ? m / 24 : 1;
        for (int64_t j = 0; j < m && !tx_t.cur_failed; j += step) {
            float keep = in[i].data[j];
            in[i].data[j] = keep + h;
            double up = host_objective(c, in, n, r);
            in[i].data[j] = keep - h;
            double down = host_objective(c, in, n, r);
            in[i].data[j] = keep;
            double want = (up - down) / (2 * (double)h);
            CHECK(fabs(got[j] - want) <= 1e-2 + 3e-2 * fabs(want),
                  "d/d input %d [%lld] = %g, finite differences %g", i, (long long)j,
                  (double)got[j], want);
        }
        free(got);
    }
    for (int i = 0; i < n_diff; i++)
        if (grads[i].id)
            tx_tensor_destroy(ctx, grads[i]);
    for (int i = 0; i < n; i++)
        free(in[i].data);
    tx_test_end();
}

/* What the tape refuses, and what it must leave behind. */
static void run_edges(tx_ctx *ctx, const char *mode) {
    char name[128];
    snprintf(name, sizeof name, "%s/edges", mode);
    if (!tx_test_begin(name))
        return;
    float v[2 * 2 * 5 * 5];
    for (int i = 0; i < 100; i++)
        v[i] = (float)((i * 37) % 11);
    tx_tensor x = tx_test_tensor(ctx, 4, (int64_t[]){2, 2, 5, 5}, TX_DTYPE_FLOAT32, v), y, g, s;
    tx_tape *tape, *other;
    CHECK(!tx_tape_begin(ctx, &tape), "%s", tx_last_error(ctx));
    CHECK(tx_tape_begin(ctx, &other) == TX_STATUS_INVALID_ARGUMENT, "a second tape");
    /* a resize mode without a gradient: refused, said by name */
    CHECK(!tx_resize(ctx, x,
                     &(tx_resize_desc){.mode = TX_RESIZE_LINEAR,
                                       .coord = TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST,
                                       .scales = {1, 1, 2, 2}},
                     &y),
          "%s", tx_last_error(ctx));
    CHECK(!tx_reduce(ctx, TX_OP_REDUCE_SUM, y, NULL, &s), "%s", tx_last_error(ctx));
    CHECK(tx_tape_grad(ctx, tape, s, &x, 1, &g) == TX_STATUS_UNSUPPORTED, "tf_half_pixel resize");
    CHECK(strstr(tx_last_error(ctx), "resize") != NULL, "message: %s", tx_last_error(ctx));
    /* the caller's handles may go before the tape's gradient: it kept views */
    tx_tensor_destroy(ctx, y);
    tx_tape_end(ctx, tape);
    CHECK(!tx_tape_begin(ctx, &tape), "a new tape after the end: %s", tx_last_error(ctx));
    CHECK(!tx_unary(ctx, TX_OP_TANH, x, &y), "%s", tx_last_error(ctx));
    tx_tensor_destroy(ctx, s);
    CHECK(!tx_reduce(ctx, TX_OP_REDUCE_SUM, y, NULL, &s), "%s", tx_last_error(ctx));
    tx_tensor_destroy(ctx, y);
    /* a value s does not depend on gets zeros */
    tx_tensor z = tx_test_tensor(ctx, 1, (int64_t[]){3}, TX_DTYPE_FLOAT32, v), gs[2];
    CHECK(!tx_tape_grad(ctx, tape, s, (tx_tensor[]){x, z}, 2, gs), "%s", tx_last_error(ctx));
    float zg[3] = {1, 1, 1};
    CHECK(!tx_tensor_read(ctx, gs[1], zg, sizeof zg) && zg[0] == 0 && zg[2] == 0, "zeros");
    tx_tape_end(ctx, tape);
    /* reduce_prod's gradient at zeros (finite differences never land on one):
     * the product of the others, 0 where a group holds two zeros */
    tx_tensor pz = tx_test_tensor(ctx, 2, (int64_t[]){3, 3}, TX_DTYPE_FLOAT32,
                                  (float[]){0, 2, 3, 0, 0, 5, -1, 2, 4}),
              pp, pg;
    CHECK(!tx_tape_begin(ctx, &tape), "%s", tx_last_error(ctx));
    CHECK(!tx_reduce(ctx, TX_OP_REDUCE_PROD, pz,
                     &(tx_reduce_desc){.n_axes = 1, .axes = {1}, .drop_dims = true}, &pp),
          "%s", tx_last_error(ctx));
    tx_tensor_destroy(ctx, s);
    CHECK(!tx_reduce(ctx, TX_OP_REDUCE_SUM, pp, NULL, &s), "%s", tx_last_error(ctx));
    CHECK(!tx_tape_grad(ctx, tape, s, &pz, 1, &pg), "%s", tx_last_error(ctx));
    float pgv[9], pwant[9] = {6, 0, 0, 0, 0, 0, 8, -4, -2};
    CHECK(!tx_tensor_read(ctx, pg, pgv, sizeof pgv), "%s", tx_last_error(ctx));
    for (int i = 0; i < 9; i++)
        CHECK(pgv[i] == pwant[i], "d reduce_prod [%d] = %g, want %g", i, (double)pgv[i],
              (double)pwant[i]);
    tx_tape_end(ctx, tape);
    TX_DESTROY(ctx, pz, pp, pg);
    /* bad input to the losses and optimizers is a status naming it */
    tx_optim *o;
    CHECK(tx_optim_create(ctx, &(tx_optim_desc){.kind = TX_OPTIM_ADAM, .lr = -1}, &o) ==
              TX_STATUS_INVALID_ARGUMENT,
          "negative lr");
    CHECK(tx_optim_create(ctx, &(tx_optim_desc){.kind = TX_OPTIM_COUNT_}, &o) ==
              TX_STATUS_INVALID_ARGUMENT,
          "unknown kind");
    tx_tensor lab = tx_test_tensor(ctx, 1, (int64_t[]){3}, TX_DTYPE_INT32, (int32_t[]){0, 1, 2}), l;
    CHECK(tx_softmax_cross_entropy(ctx, x, lab, NULL, &l, NULL) == TX_STATUS_SHAPE_MISMATCH &&
              strstr(tx_last_error(ctx), "labels") != NULL,
          "labels [3] for x [2, 2, 5, 5]: %s", tx_last_error(ctx));
    CHECK(tx_nll_loss(ctx, x, z, NULL, &l) == TX_STATUS_DTYPE_MISMATCH, "float labels: %s",
          tx_last_error(ctx));
    CHECK(tx_mse_loss(ctx, x, z, TX_LOSS_MEAN, &l) == TX_STATUS_SHAPE_MISMATCH, "no broadcast");
    TX_DESTROY(ctx, x, s, z, gs[0], gs[1], lab);
    tx_test_expect_clean(ctx);
    tx_test_end();
}

/* d sum(op(x)) / dx for x [n] (or the 4-D shape given), read into got. */
static tx_status grad_of_sum(tx_ctx *ctx, tx_op op, const tx_op_attrs *a, int rank,
                             const int64_t *shape, const float *x, float *got, size_t bytes) {
    tx_tensor t = tx_test_tensor(ctx, rank, shape, TX_DTYPE_FLOAT32, x), y = {0}, s = {0}, g = {0};
    tx_tape *tape;
    tx_status st = tx_tape_begin(ctx, &tape);
    if (!st)
        st = tx_op_run(ctx, op, &t, 1, a, &y);
    if (!st)
        st = tx_reduce(ctx, TX_OP_REDUCE_SUM, y, NULL, &s);
    if (!st)
        st = tx_tape_grad(ctx, tape, s, &t, 1, &g);
    if (!st)
        st = tx_tensor_read(ctx, g, got, bytes);
    if (tape)
        tx_tape_end(ctx, tape);
    tx_tensor all[] = {t, y, s, g};
    for (size_t i = 0; i < TX_COUNTOF(all); i++)
        if (all[i].id)
            tx_tensor_destroy(ctx, all[i]);
    return st;
}

/* Gradients at points finite differences do not reach: far out on the
 * activations' flat sides (no cancellation, no inf - inf), l2 of zeros, ties
 * in max pools (shared evenly), and what stays refused. */
static void run_exact(tx_ctx *ctx, const char *mode) {
    char name[128];
    snprintf(name, sizeof name, "%s/exact", mode);
    if (!tx_test_begin(name))
        return;
    float got[8];
    const int64_t two[1] = {2};
    CHECK(!grad_of_sum(ctx, TX_OP_CELU, &(tx_op_attrs){.alpha = 0.1f}, 1, two, (float[]){100, -1},
                       got, 2 * sizeof(float)),
          "%s", tx_last_error(ctx));
    CHECK(got[0] == 1 && fabsf(got[1] - expf(-10)) < 1e-8f, "celu' at 100, -1: %g %g",
          (double)got[0], (double)got[1]);
    CHECK(!grad_of_sum(ctx, TX_OP_SELU, &(tx_op_attrs){.alpha = 1.67326319f, .beta = 1.05070102f},
                       1, two, (float[]){1e5f, 2}, got, 2 * sizeof(float)),
          "%s", tx_last_error(ctx));
    CHECK(got[0] == 1.05070102f && got[1] == 1.05070102f, "selu' at 1e5, 2: %g %g", (double)got[0],
          (double)got[1]);
    CHECK(!grad_of_sum(ctx, TX_OP_REDUCE_L2, &(tx_op_attrs){.reduce = {.n_axes = 1, .axes = {1}}},
                       2, (int64_t[]){2, 2}, (float[]){0, 0, 3, 4}, got, 4 * sizeof(float)),
          "%s", tx_last_error(ctx));
    CHECK(got[0] == 0 && got[1] == 0 && fabsf(got[2] - 0.6f) < 1e-6f &&
              fabsf(got[3] - 0.8f) < 1e-6f,
          "reduce_l2' of [[0, 0], [3, 4]]: %g %g %g %g", (double)got[0], (double)got[1],
          (double)got[2], (double)got[3]);
    /* ties: 2x2/2 (the fast path) and 2x2/1 (the one-hot convs) */
    CHECK(!grad_of_sum(ctx, TX_OP_MAXPOOL,
                       &(tx_op_attrs){.pool = {.kernel_shape = {2, 2}, .strides = {2, 2}}}, 4,
                       (int64_t[]){1, 1, 2, 2}, (float[]){1, 1, 0, 1}, got, 4 * sizeof(float)),
          "%s", tx_last_error(ctx));
    CHECK(fabsf(got[0] - 1.0f / 3) < 1e-6f && fabsf(got[1] - 1.0f / 3) < 1e-6f && got[2] == 0 &&
              fabsf(got[3] - 1.0f / 3) < 1e-6f,
          "maxpool 2x2/2 ties: %g %g %g %g", (double)got[0], (double)got[1], (double)got[2],
          (double)got[3]);
    /* the MSE loss's values and, under a tape, both sides' gradients (the
     * difference the forward pass keeps) */
    {
        const int64_t four[1] = {4};
        tx_tensor a = tx_test_tensor(ctx, 1, four, TX_DTYPE_FLOAT32, (float[]){1, 2, 3, 4});
        tx_tensor b = tx_test_tensor(ctx, 1, four, TX_DTYPE_FLOAT32, (float[]){0, 2, 5, 1});
        float v[4] = {0}, ga[4] = {0}, gb[4] = {0};
        tx_tensor l = {0}, gs[2] = {{0}, {0}};
        CHECK(!tx_mse_loss(ctx, a, b, TX_LOSS_SUM, &l) && !tx_tensor_read(ctx, l, v, 4), "%s",
              tx_last_error(ctx));
        CHECK(v[0] == 14, "mse sum: %g", (double)v[0]);
        TX_DESTROY(ctx, l);
        CHECK(!tx_mse_loss(ctx, a, b, TX_LOSS_NONE, &l) && !tx_tensor_read(ctx, l, v, sizeof v),
              "%s", tx_last_error(ctx));
        CHECK(v[0] == 1 && v[1] == 0 && v[2] == 4 && v[3] == 9, "mse none: %g %g %g %g",
              (double)v[0], (double)v[1], (double)v[2], (double)v[3]);
        TX_DESTROY(ctx, l);
        tx_tape *tape = NULL;
        CHECK(!tx_tape_begin(ctx, &tape) && !tx_mse_loss(ctx, a, b, TX_LOSS_MEAN, &l) &&
                  !tx_tape_grad(ctx, tape, l, (tx_tensor[]){a, b}, 2, gs) &&
                  !tx_tensor_read(ctx, l, v, 4) && !tx_tensor_read(ctx, gs[0], ga, sizeof ga) &&
                  !tx_tensor_read(ctx, gs[1], gb, sizeof gb),
              "%s", tx_last_error(ctx));
        if (tape)
            tx_tape_end(ctx, tape);
        CHECK(v[0] == 3.5f, "mse mean: %g", (double)v[0]);
        const float want[4] = {0.5f, 0, -1, 1.5f};
        bool ok = true;
        for (int i = 0; i < 4; i++)
            ok = ok && fabsf(ga[i] - want[i]) < 1e-6f && fabsf(gb[i] + want[i]) < 1e-6f;
        CHECK(ok, "mse mean gradients: %g %g %g %g / %g %g %g %g", (double)ga[0], (double)ga[1],
              (double)ga[2], (double)ga[3], (double)gb[0], (double)gb[1], (double)gb[2],
              (double)gb[3]);
        TX_DESTROY(ctx, a, b, l, gs[0], gs[1]);
    }
    /* ... and where a texel holds two windows of one row (W % 4 == 0) */
    float tie2[8];
    CHECK(!grad_of_sum(ctx, TX_OP_MAXPOOL,
                       &(tx_op_attrs){.pool = {.kernel_shape = {2, 2}, .strides = {2, 2}}}, 4,
                       (int64_t[]){1, 1, 2, 4}, (float[]){1, 1, 5, 0, 0, 1, 5, 5}, tie2,
                       sizeof tie2),
          "%s", tx_last_error(ctx));
    float third = 1.0f / 3;
    const float want2[8] = {third, third, third, 0, 0, third, third, third};
    bool ok2 = true;
    for (int i = 0; i < 8; i++)
        ok2 = ok2 && fabsf(tie2[i] - want2[i]) < 1e-6f;
    CHECK(ok2, "maxpool 2x2/2 ties on 2x4: %g %g %g %g / %g %g %g %g", (double)tie2[0],
          (double)tie2[1], (double)tie2[2], (double)tie2[3], (double)tie2[4], (double)tie2[5],
          (double)tie2[6], (double)tie2[7]);
    /* ... where the windows leave a row and a column of x uncovered: 0 there */
    float cut[9];
    CHECK(!grad_of_sum(ctx, TX_OP_MAXPOOL,
                       &(tx_op_attrs){.pool = {.kernel_shape = {2, 2}, .strides = {2, 2}}}, 4,
                       (int64_t[]){1, 1, 3, 3}, (float[]){1, 3, 7, 2, 3, 8, 9, 9, 9}, cut,
                       sizeof cut),
          "%s", tx_last_error(ctx));
    CHECK(cut[0] == 0 && fabsf(cut[1] - 0.5f) < 1e-6f && cut[2] == 0 && cut[3] == 0 &&
              fabsf(cut[4] - 0.5f) < 1e-6f && cut[5] == 0 && cut[6] == 0 && cut[7] == 0 &&
              cut[8] == 0,
          "maxpool 2x2/2 on 3x3: %g %g %g / %g %g %g / %g %g %g", (double)cut[0], (double)cut[1],
          (double)cut[2], (double)cut[3], (double)cut[4], (double)cut[5], (double)cut[6],
          (double)cut[7], (double)cut[8]);
    CHECK(!grad_of_sum(ctx, TX_OP_MAXPOOL,
                       &(tx_op_attrs){.pool = {.kernel_shape = {2, 2}, .strides = {1, 1}}}, 4,
                       (int64_t[]){1, 1, 2, 3}, (float[]){1, 1, 1, 0, 0, 0}, got,
                       6 * sizeof(float)),
          "%s", tx_last_error(ctx));
    CHECK(fabsf(got[0] - 0.5f) < 1e-6f && fabsf(got[1] - 1) < 1e-6f &&
              fabsf(got[2] - 0.5f) < 1e-6f && got[3] == 0 && got[4] == 0 && got[5] == 0,
          "maxpool 2x2/1 ties: %g %g %g", (double)got[0], (double)got[1], (double)got[2]);
    /* resize with tf_half_pixel_for_nearest moves scale-1 dims in linear mode:
     * refused by name, not approximated */
    tx_status st =
        grad_of_sum(ctx, TX_OP_RESIZE,
                    &(tx_op_attrs){.move = {.resize = {.mode = TX_RESIZE_LINEAR,
                                                       .coord = TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST,
                                                       .scales = {1, 1, 2, 2}}}},
                    4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4}, got, 4 * sizeof(float));
    CHECK(st == TX_STATUS_UNSUPPORTED && strstr(tx_last_error(ctx), "tf_half_pixel") != NULL,
          "%s: %s", tx_status_name(st), tx_last_error(ctx));
    tx_test_expect_clean(ctx);
    tx_test_end();
}

/* The optimizers against their formulas in plain C: three steps of each on
 * a 7-element parameter with fixed gradients. */
static void run_optimizers(tx_ctx *ctx, const char *mode) {
    static const struct {
        const char *name;
        tx_optim_desc d;
    } k[] = {
        {"sgd", {.kind = TX_OPTIM_SGD, .lr = 0.1f}},
        {"sgd/decay", {.kind = TX_OPTIM_SGD, .lr = 0.1f, .weight_decay = 0.01f}},
        {"momentum", {.kind = TX_OPTIM_MOMENTUM, .lr = 0.1f, .momentum = 0.8f}},
        {"nesterov", {.kind = TX_OPTIM_MOMENTUM, .lr = 0.1f, .nesterov = true}},
        {"adam", {.kind = TX_OPTIM_ADAM, .lr = 0.01f}},
        {"adam/decay", {.kind = TX_OPTIM_ADAM, .lr = 0.01f, .weight_decay = 0.1f}},
        {"adamw", {.kind = TX_OPTIM_ADAMW, .lr = 0.01f, .weight_decay = 0.1f, .beta2 = 0.99f}},
    };
    for (size_t c = 0; c < TX_COUNTOF(k); c++) {
        char name[128];
        snprintf(name, sizeof name, "%s/optim/%s", mode, k[c].name);
        if (!tx_test_begin(name))
            continue;
        tx_optim_desc d = k[c].d;
        double p[7], v[7] = {0}, m[7] = {0};
        float pf[7], g[3][7];
        for (int i = 0; i < 7; i++) {
            p[i] = pf[i] = 0.3f * (float)i - 1;
            for (int s = 0; s < 3; s++)
                g[s][i] = (float)((i * 5 + s * 3) % 7) / 7.0f - 0.4f;
        }
        tx_tensor pt = tx_test_tensor(ctx, 1, (int64_t[]){7}, TX_DTYPE_FLOAT32, pf);
        tx_optim *opt;
        CHECK(!tx_optim_create(ctx, &d, &opt), "%s", tx_last_error(ctx));
        double mu = d.momentum ? d.momentum : 0.9, b1 = 0.9, b2 = d.beta2 ? d.beta2 : 0.999;
        for (int s = 0; s < 3 && !tx_t.cur_failed; s++) {
            tx_tensor gt = tx_test_tensor(ctx, 1, (int64_t[]){7}, TX_DTYPE_FLOAT32, g[s]);
            tx_stats a, b;
            tx_device dev;
            tx_tensor_device(ctx, pt, &dev);
            tx_ctx_stats(ctx, &a);
            CHECK(!tx_optim_step(ctx, opt, &pt, &gt, 1), "%s", tx_last_error(ctx));
            tx_ctx_stats(ctx, &b);
            /* one fused kernel a parameter: one draw, or one CPU op */
            CHECK(dev == TX_DEVICE_GPU ? b.draws - a.draws == 1 : b.cpu_ops - a.cpu_ops == 1,
                  "step %d: %llu draws, %llu CPU ops", s, (unsigned long long)(b.draws - a.draws),
                  (unsigned long long)(b.cpu_ops - a.cpu_ops));
            tx_tensor_destroy(ctx, gt);
            for (int i = 0; i < 7; i++) {
                double gi = g[s][i];
                if (d.kind != TX_OPTIM_ADAMW)
                    gi += d.weight_decay * p[i];
                if (d.kind == TX_OPTIM_SGD) {
                    p[i] -= d.lr * gi;
                } else if (d.kind == TX_OPTIM_MOMENTUM) {
                    v[i] = s ? mu * v[i] + gi : gi;
                    p[i] -= d.lr * (d.nesterov ? gi + mu * v[i] : v[i]);
                } else {
                    m[i] = b1 * m[i] + (1 - b1) * gi;
                    v[i] = b2 * v[i] + (1 - b2) * gi * gi;
                    double mh = m[i] / (1 - pow(b1, s + 1)), vh = v[i] / (1 - pow(b2, s + 1));
                    if (d.kind == TX_OPTIM_ADAMW)
                        p[i] -= d.lr * d.weight_decay * p[i];
                    p[i] -= d.lr * mh / (sqrt(vh) + 1e-8);
                }
            }
        }
        CHECK(!tx_tensor_read(ctx, pt, pf, sizeof pf), "%s", tx_last_error(ctx));
        for (int i = 0; i < 7; i++)
            CHECK(fabs(pf[i] - p[i]) <= 1e-5 + 1e-5 * fabs(p[i]), "p[%d] = %.7g, want %.7g", i,
                  (double)pf[i], p[i]);
        CHECK(tx_optim_step(ctx, opt, (tx_tensor[]){pt, pt}, (tx_tensor[]){pt, pt}, 2) ==
                  TX_STATUS_INVALID_ARGUMENT,
              "another parameter count");
        tx_optim_destroy(ctx, opt);
        tx_tensor_destroy(ctx, pt);
        tx_test_end();
    }
}

/* Fine-tuning an ONNX model: pytorch-converted/test_Linear is a Gemm
 * y = x W^T + b with W [8, 10] and b [8] initializers. Under a tape the
 * session's run is recorded like any op, so d sum(y R) / dW = R^T x and
 * d / db = sum_n R; one SGD step later the session computes with the new
 * weights. */
static void run_finetune(tx_ctx *ctx, const char *mode, tx_device dev) {
    char name[128];
    snprintf(name, sizeof name, "%s/onnx_finetune", mode);
    if (!tx_test_begin(name))
        return;
    FILE *f =
        fopen("/usr/share/libonnx-testdata/data/pytorch-converted/test_Linear/model.onnx", "rb");
#ifdef __EMSCRIPTEN__
    if (!f) { /* no file system in the browser: web/test/api.js fine-tunes there */
        tx_test_skip(name, "no libonnx-testdata in the browser");
        return;
    }
#endif
    static unsigned char bytes[4096];
    size_t len = f ? fread(bytes, 1, sizeof bytes, f) : 0;
    if (f)
        fclose(f);
    CHECK(len > 0 && len < sizeof bytes, "read test_Linear/model.onnx (libonnx-testdata)");
    tx_session *sess = NULL;
    if (!tx_t.cur_failed)
        CHECK(!tx_session_create(ctx, bytes, len, &(tx_session_desc){.device = dev}, &sess), "%s",
              tx_last_error(ctx));
    if (tx_t.cur_failed) {
        tx_test_end();
        return;
    }
    float x[40], r[32], w[80], b[8], w2[80], b2[8], y[32];
    for (int i = 0; i < 40; i++)
        x[i] = (float)((i * 7) % 11) / 5.0f - 1;
    for (int i = 0; i < 32; i++)
        r[i] = (float)((i * 5) % 9) / 4.0f - 1;
    tx_tensor wt = {0}, bt = {0},
              in = tx_test_tensor(ctx, 2, (int64_t[]){4, 10}, TX_DTYPE_FLOAT32, x);
    tx_tensor rt = tx_test_tensor(ctx, 2, (int64_t[]){4, 8}, TX_DTYPE_FLOAT32, r), out, p, l;
    CHECK(tx_session_weight(sess, "0", &wt) == TX_STATUS_INVALID_ARGUMENT, "an input");
    CHECK(!tx_session_weight(sess, "1", &wt) && !tx_session_weight(sess, "2", &bt), "%s",
          tx_last_error(ctx));
    CHECK(!tx_tensor_read(ctx, wt, w, sizeof w) && !tx_tensor_read(ctx, bt, b, sizeof b), "read");
    tx_tape *tape;
    tx_tensor g[2] = {{0}};
    CHECK(!tx_tape_begin(ctx, &tape), "%s", tx_last_error(ctx));
    tx_status st = tx_session_run(sess, &(tx_feed){"0", in}, 1, NULL, 1, &out);
    if (!st)
        st = tx_binary(ctx, TX_OP_MUL, out, rt, &p);
    if (!st)
        st = tx_reduce(ctx, TX_OP_REDUCE_SUM, p, NULL, &l);
    if (!st)
        st = tx_tape_grad(ctx, tape, l, (tx_tensor[]){wt, bt}, 2, g);
    tx_tape_end(ctx, tape);
    CHECK(!st, "%s", tx_last_error(ctx));
    if (!st) {
        CHECK(!tx_tensor_read(ctx, g[0], w2, sizeof w2) &&
                  !tx_tensor_read(ctx, g[1], b2, sizeof b2),
              "read grads");
        for (int j = 0; j < 8; j++) {
            double db = 0;
            for (int n = 0; n < 4; n++)
                db += r[n * 8 + j];
            CHECK(fabs(b2[j] - db) < 1e-4, "db[%d] = %g, want %g", j, (double)b2[j], db);
            for (int i = 0; i < 10; i++) {
                double dw = 0;
                for (int n = 0; n < 4; n++)
                    dw += (double)r[n * 8 + j] * x[n * 10 + i];
                CHECK(fabs(w2[j * 10 + i] - dw) < 1e-4, "dW[%d, %d] = %g, want %g", j, i,
                      (double)w2[j * 10 + i], dw);
            }
        }
        tx_optim *opt;
        CHECK(!tx_optim_create(ctx, &(tx_optim_desc){.kind = TX_OPTIM_SGD, .lr = 0.1f}, &opt),
              "optim");
        CHECK(!tx_optim_step(ctx, opt, (tx_tensor[]){wt, bt}, g, 2), "%s", tx_last_error(ctx));
        tx_optim_destroy(ctx, opt);
        TX_DESTROY(ctx, out, p, l, g[0], g[1]);
        CHECK(!tx_session_run(sess, &(tx_feed){"0", in}, 1, NULL, 1, &out), "%s",
              tx_last_error(ctx));
        CHECK(!tx_tensor_read(ctx, out, y, sizeof y), "read");
        for (int n = 0; n < 4; n++)
            for (int j = 0; j < 8; j++) {
                double want = b[j] - 0.1 * b2[j];
                for (int i = 0; i < 10; i++)
                    want += (double)x[n * 10 + i] * (w[j * 10 + i] - 0.1 * w2[j * 10 + i]);
                CHECK(fabs(y[n * 8 + j] - want) < 1e-4, "y[%d, %d] = %g after a step, want %g", n,
                      j, (double)y[n * 8 + j], want);
            }
        tx_tensor_destroy(ctx, out);
    }
    TX_DESTROY(ctx, in, rt);
    tx_session_destroy(sess);
    tx_test_expect_clean(ctx);
    tx_test_end();
}

/* Work (draws + CPU ops) a tape's backward does for the sources xs, and
 * the first source's gradient read into g0 (n0 floats). */
static uint64_t grad_work(tx_ctx *ctx, tx_tape *tape, tx_tensor loss, const tx_tensor *xs, int n,
                          float *g0, size_t n0) {
    tx_stats a, b;
    tx_ctx_stats(ctx, &a);
    tx_tensor g[8] = {{0}};
    if (n > 8)
        return 0;
    CHECK(!tx_tape_grad(ctx, tape, loss, xs, n, g), "%s", tx_last_error(ctx));
    tx_ctx_stats(ctx, &b);
    CHECK(!tx_tensor_read(ctx, g[0], g0, n0 * 4), "read");
    for (int i = 0; i < n; i++)
        if (g[i].id)
            tx_tensor_destroy(ctx, g[i]);
    return (b.draws - a.draws) + (b.cpu_ops - a.cpu_ops);
}

/* A backward computes only the gradients asked for: a first layer's data
 * input (matmul, conv) and a loss's targets take none, and the gradients
 * that are asked for come out the same. */
static void run_need(tx_ctx *ctx, const char *mode) {
    char name[128];
    snprintf(name, sizeof name, "%s/only the gradients asked for", mode);
    if (!tx_test_begin(name))
        return;
    float xv[24], wv[30], tv[20], iv[36], kv[18], bv[2];
    for (int i = 0; i < 24; i++)
        xv[i] = (float)((i * 7) % 11) / 5.0f - 1;
    for (int i = 0; i < 30; i++)
        wv[i] = (float)((i * 5) % 9) / 4.0f - 1;
    for (int i = 0; i < 20; i++)
        tv[i] = (float)(i % 3) - 1;
    for (int i = 0; i < 36; i++)
        iv[i] = (float)((i * 3) % 7) / 3.0f - 1;
    for (int i = 0; i < 18; i++)
        kv[i] = (float)((i * 5) % 7) / 3.0f - 1;
    bv[0] = 0.25f, bv[1] = -0.5f;
    tx_tensor x = tx_test_tensor(ctx, 2, (int64_t[]){4, 6}, TX_DTYPE_FLOAT32, xv),
              w = tx_test_tensor(ctx, 2, (int64_t[]){6, 5}, TX_DTYPE_FLOAT32, wv),
              t = tx_test_tensor(ctx, 2, (int64_t[]){4, 5}, TX_DTYPE_FLOAT32, tv),
              img = tx_test_tensor(ctx, 4, (int64_t[]){1, 1, 6, 6}, TX_DTYPE_FLOAT32, iv),
              k = tx_test_tensor(ctx, 4, (int64_t[]){2, 1, 3, 3}, TX_DTYPE_FLOAT32, kv),
              b = tx_test_tensor(ctx, 1, (int64_t[]){2}, TX_DTYPE_FLOAT32, bv);
    tx_tape *tape;
    tx_tensor y = {0}, loss = {0}, c = {0}, c2 = {0}, closs = {0}, total = {0};
    CHECK(!tx_tape_begin(ctx, &tape), "%s", tx_last_error(ctx));
    tx_status st = tx_matmul(ctx, x, w, NULL, &y);
    if (!st)
        st = tx_mse_loss(ctx, y, t, TX_LOSS_MEAN, &loss);
    if (!st)
        st = tx_conv(ctx, img, k, &(tx_conv_desc){.pads = {1, 1, 1, 1}, .bias = b}, &c);
    if (!st)
        st = tx_binary(ctx, TX_OP_MUL, c, c, &c2);
    if (!st)
        st = tx_reduce(ctx, TX_OP_REDUCE_SUM, c2, NULL, &closs);
    if (!st)
        st = tx_binary(ctx, TX_OP_ADD, loss, closs, &total);
    CHECK(!st, "%s", tx_last_error(ctx));
    if (!st) {
        float gw1[30], gw2[30], gk1[18], gk2[18];
        /* the weights alone, then with the data and targets too */
        uint64_t few = grad_work(ctx, tape, total, (tx_tensor[]){w, k, b}, 3, gw1, 30);
        uint64_t with_x = grad_work(ctx, tape, total, (tx_tensor[]){w, k, b, x}, 4, gw2, 30);
        uint64_t with_ti = grad_work(ctx, tape, total, (tx_tensor[]){k, w, b, t, img}, 5, gk2, 18);
        grad_work(ctx, tape, total, (tx_tensor[]){k}, 1, gk1, 18);
        /* + x: dX's matmul; + t and the image: the targets' negation and the
         * conv's conv_transpose */
        CHECK(few < with_x && few + 1 < with_ti,
              "work: weights %llu, + x %llu, + t and the image %llu", (unsigned long long)few,
              (unsigned long long)with_x, (unsigned long long)with_ti);
        for (int i = 0; i < 30; i++)
            CHECK(gw1[i] == gw2[i], "dW[%d] %g vs %g", i, (double)gw1[i], (double)gw2[i]);
        for (int i = 0; i < 18; i++)
            CHECK(gk1[i] == gk2[i], "dK[%d] %g vs %g", i, (double)gk1[i], (double)gk2[i]);
        /* dW against the formula: 2 / 20 x^T (x w - t) */
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 5; j++) {
                double d = 0;
                for (int n = 0; n < 4; n++) {
                    double yv = 0;
                    for (int q = 0; q < 6; q++)
                        yv += (double)xv[n * 6 + q] * wv[q * 5 + j];
                    d += xv[n * 6 + i] * (yv - tv[n * 5 + j]) * 2.0 / 20.0;
                }
                CHECK(fabs(gw1[i * 5 + j] - d) < 1e-5, "dW[%d, %d] = %g, want %g", i, j,
                      (double)gw1[i * 5 + j], d);
            }
    }
    tx_tape_end(ctx, tape);
    TX_DESTROY(ctx, x, w, t, img, k, b, y, loss, c, c2, closs, total);
    tx_test_expect_clean(ctx);
    tx_test_end();
}

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    const struct {
        const char *name;
        tx_ctx_desc desc;
    } modes[] = {
        {"generic", {.specialize_after = TX_SPECIALIZE_NEVER}},
        {"specialized", {.specialize_after = TX_SPECIALIZE_ALWAYS}},
        {"cpu", {.device = TX_DEVICE_CPU, .cpu_threads = 2}},
    };
    for (size_t m = 0; m < TX_COUNTOF(modes); m++) {
        tx_host *host;
        tx_ctx *ctx = tx_test_open_ctx(modes[m].desc, &host);
        for (size_t i = 0; i < TX_COUNTOF(k_cases); i++)
            run_case(ctx, modes[m].name, &k_cases[i]);
        run_optimizers(ctx, modes[m].name);
        run_finetune(ctx, modes[m].name, m == 2 ? TX_DEVICE_CPU : TX_DEVICE_GPU);
        run_edges(ctx, modes[m].name);
        run_exact(ctx, modes[m].name);
        run_need(ctx, modes[m].name);
        tx_host_close(host, ctx);
    }
    return tx_test_finish();
}
