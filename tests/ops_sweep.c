/* Every op of texel_ops.def × {generic forced, specialized forced, adaptive,
 * adaptive on tiny textures} × its family's shape sets, against engine/ref/.
 * An op added to the list is swept here without further edits. */
#include <math.h>

#include "check.h"
#include "glctx.h"
#include "harness.h"
#include "internal.h"
#include "tensors.h"

typedef struct shape_case {
    const char *shapes; /* as for `texel op --shape` */
    tx_op_attrs attrs;
    bool bias;
    const char *label; /* names the attributes in the test name */
    tx_op op;          /* TX_OP_NONE: every op of the family; else only this op */
    bool int32;        /* every input is int32 */
    bool big;          /* more than one 64×64 texture holds: not in the adaptive-tex64 mode */
} shape_case;

/* The case tables: one case per line, several where they are short. */
/* clang-format off */
static const shape_case k_unary[] = {
    {.shapes = "1"}, {.shapes = "3"}, {.shapes = "4"}, {.shapes = "17"}, {.shapes = "5x7x11x13"}, {.shapes = "64x65"}, {.shapes = "2x3x4x5x6x7"}, {.shapes = "0"}, {.shapes = "scalar"},
};
static const shape_case k_clip[] = {
    {.shapes = "5x7x11x13", .attrs = {.lo = 0, .hi = 6}},
    {.shapes = "17", .attrs = {.lo = -1.5f, .hi = 0.25f}},
    {.shapes = "33x9", .attrs = {.lo = -INFINITY, .hi = 1}},
    {.shapes = "33x9", .attrs = {.lo = -2, .hi = INFINITY}},
};
static const shape_case k_binary[] = {
    {.shapes = "1,1"},          {.shapes = "5x7x11x13,5x7x11x13"}, {.shapes = "5x7x11x13,13"}, {.shapes = "5x1x11x1,7x1x13"},
    {.shapes = "1,4x5"},        {.shapes = "4x5,1"},               {.shapes = "scalar,3x3"},   {.shapes = "2x1x4,3x1"},
    {.shapes = "64x8,8"},       {.shapes = "8,64x8"},              {.shapes = "65x33,65x1"},   {.shapes = "2x3x4x5x6x7,7"},
    {.shapes = "1x3x1x5x1x7,2x1x4x1x6x1"}, {.shapes = "0x3,3"},
    /* one operand per channel (binary.glsl modes 5, 6): a texel's 4 elements
     * share its value (64, 4 per channel) or not (7, 5x1, 9, 1); a gap in b's
     * dims is not one run */
    {.shapes = "2x6x8x8,1x6x1x1"}, {.shapes = "1x6x1x1,2x6x8x8"}, {.shapes = "4x6x2x2,6x1x1"},
    {.shapes = "3x5x7,5x1"}, {.shapes = "2x3x4x5,3x4x1"}, {.shapes = "7x1,7x9"}, {.shapes = "3x5,5"}, {.shapes = "2x3x4,2x1x4"},
};
static const shape_case k_matmul[] = {
    {.shapes = "1x1,1x1"},
    {.shapes = "5x7,7x3"},
    {.shapes = "33x17,17x12"},
    {.shapes = "64x64,64x64"},
    {.shapes = "9x16,16x20"},
    {.shapes = "12x5,5x8"},
    {.shapes = "13x6,6x9"},
    {.shapes = "2x3x5x8,8x12"},
    {.shapes = "3x1x6x4,2x4x8"},
    {.shapes = "7,7x4"},
    {.shapes = "4x7,7"},
    {.shapes = "7,7"},
    {.shapes = "16x12,20x12", .attrs = {.matmul = {.transpose_b = true}}},
    {.shapes = "12x16,12x20", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "20x18,20x8", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "2x40x12,12x16", .attrs = {.matmul = {.activation = TX_OP_TANH}}, .bias = true},
    {.shapes = "10x6,9x10", .attrs = {.matmul = {.transpose_a = true, .transpose_b = true}}},
    {.shapes = "3x16x8,3x16x8", .attrs = {.matmul = {.transpose_a = true}}},
    /* A^T read as texels on 8-row tiles, M % 8 == 4 (the last tile's rows
     * 4..7 past M); B^T rows as unaligned runs (K % 4 != 0), batched */
    {.shapes = "12x20,12x16", .attrs = {.matmul = {.transpose_a = true}}, .bias = true},
    {.shapes = "16x10,20x10", .attrs = {.matmul = {.transpose_b = true}}},
    {.shapes = "2x17x10,2x12x10", .attrs = {.matmul = {.transpose_b = true, .activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "20x16,16x24", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "5x7,7x6", .attrs = {.matmul = {.activation = TX_OP_GELU}}, .bias = true},
    {.shapes = "33x32,32x8", .attrs = {.matmul = {.activation = TX_OP_RELU6}}, .bias = true},
    {.shapes = "2x8x8,8x13", .attrs = {.matmul = {.activation = TX_OP_SIGMOID}}, .bias = true},
    {.shapes = "37x29,29x21", .attrs = {.matmul = {.activation = TX_OP_HARD_SWISH}}, .bias = true},
    /* the CPU's paths: many small batches side by side, a long K, a matrix-vector */
    {.shapes = "24x4x6,24x6x5", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "9x400,400x33"},
    {.shapes = "1x300,40x300", .attrs = {.matmul = {.transpose_b = true}}},
    /* N % 4 != 0 on the GPU: unaligned rows of B, matrix-vector columns,
     * texels across rows and batches */
    {.shapes = "2x9x16,16x1", .bias = true},
    {.shapes = "11x13,13x7", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "8x6,8x10", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "3x5x12,3x12x1"},
    {.shapes = "2x12x8,2x12x1", .attrs = {.matmul = {.transpose_a = true}}, .bias = true},
    {.shapes = "9x5,9x1", .attrs = {.matmul = {.transpose_a = true}}},
    {.shapes = "6x8,10x8", .attrs = {.matmul = {.transpose_b = true}}, .bias = true},
    /* N % 4 != 0 on row tiles: padded tile rows, the interleave gathering
     * texels across rows and batches (A^T, B^T, a partial last row tile) */
    {.shapes = "12x16,12x10", .attrs = {.matmul = {.transpose_a = true}}, .bias = true},
    {.shapes = "16x12,10x12", .attrs = {.matmul = {.transpose_b = true, .activation = TX_OP_RELU}}, .bias = true},
    {.shapes = "3x10x7,7x9", .attrs = {.matmul = {.activation = TX_OP_TANH}}},
    {.shapes = "70x64,64x70"},
    /* a residual (a, b, bias, residual of y's shape) on the 8- and 4-row tiles'
     * interleave, 1-row tiles, unaligned rows, a matrix-vector product, batches */
    {.shapes = "20x16,16x24,24,20x24", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .label = "residual/relu"},
    {.shapes = "2x40x12,12x16,16,2x40x16", .attrs = {.matmul = {.activation = TX_OP_TANH}}, .label = "residual/batch"},
    {.shapes = "5x7,7x8,8,5x8", .label = "residual/1-row"},
    {.shapes = "11x13,13x7,7,11x7", .attrs = {.matmul = {.activation = TX_OP_GELU}}, .label = "residual/unaligned"},
    {.shapes = "2x9x16,16x1,1,2x9x1", .label = "residual/matvec"},
    {.shapes = "3x1x6x4,2x4x8,8,3x2x6x8", .label = "residual/broadcast-batch"},
    {.shapes = "3x1x16x4,2x4x8,8,3x2x16x8", .attrs = {.matmul = {.activation = TX_OP_RELU}}, .label = "residual/broadcast-batch/tiles"},
    {.shapes = "16x12,20x12,20,16x20", .attrs = {.matmul = {.transpose_b = true}}, .label = "residual"},
    {.shapes = "12x16,12x20,20,16x20", .attrs = {.matmul = {.transpose_a = true, .activation = TX_OP_SIGMOID}}, .label = "residual"},
    {.shapes = "130x40,40x128,128,130x128", .label = "residual/split-at-64x64"},
    /* activations with alpha / beta (tx_activation's ops) on each tile: the
     * 8-row tiles, 1-row tiles, unaligned N, a residual, split tensors */
    {.shapes = "20x16,16x24", .attrs = {.matmul = {.activation = TX_OP_LEAKY_RELU, .alpha = 0.1f}}, .bias = true, .label = "leaky_relu"},
    {.shapes = "5x7,7x6", .attrs = {.matmul = {.activation = TX_OP_HARD_SIGMOID, .alpha = 0.1666667f, .beta = 0.5f}}, .bias = true, .label = "hard_sigmoid/1-row"},
    {.shapes = "20x16,16x24", .attrs = {.matmul = {.activation = TX_OP_SWISH, .alpha = 1}}, .bias = true, .label = "swish"},
    {.shapes = "11x13,13x7", .attrs = {.matmul = {.activation = TX_OP_ELU, .alpha = 0.7f}}, .label = "elu/unaligned"},
    {.shapes = "2x17x10,2x12x10", .attrs = {.matmul = {.transpose_b = true, .activation = TX_OP_SELU, .alpha = 1.6732632f, .beta = 1.0507010f}}, .label = "selu/batch"},
    {.shapes = "20x16,16x24,24,20x24", .attrs = {.matmul = {.activation = TX_OP_SHRINK, .alpha = 0.3f, .beta = 0.1f}}, .label = "residual/shrink"},
    {.shapes = "130x40,40x128", .attrs = {.matmul = {.activation = TX_OP_LEAKY_RELU, .alpha = 0.2f}}, .bias = true, .label = "split-at-64x64/leaky_relu"},
};

#define CONV(...) .attrs = {.conv = {__VA_ARGS__}}
static const shape_case k_conv[] = {
    {.shapes = "1x1x1x1,1x1x1x1"},
    {.shapes = "1x3x5x7,4x3x3x3"},
    {.shapes = "2x3x6x7,5x3x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU), .bias = true, .label = "pad1/relu"},
    {.shapes = "1x8x9x11,8x8x3x3", CONV(.pads = {1, 1, 1, 1}), .label = "pad1"},
    {.shapes = "1x8x16x16,12x8x3x3", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU6), .bias = true, .label = "s2/pad1/relu6"},
    {.shapes = "1x8x10x12,8x1x3x3", CONV(.group = 8, .pads = {1, 1, 1, 1}), .bias = true, .label = "depthwise"},
    {.shapes = "1x6x11x13,6x1x3x3", CONV(.group = 6, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU), .label = "depthwise/s2"},
    {.shapes = "1x6x7x9,4x3x3x3", CONV(.group = 2, .pads = {1, 0, 1, 2}), .bias = true, .label = "group2"},
    {.shapes = "1x4x6x6,8x1x3x3", CONV(.group = 4), .label = "group4/multiplier2"},
    {.shapes = "1x4x9x9,4x4x3x3", CONV(.dilations = {2, 2}, .pads = {2, 2, 2, 2}), .label = "dilation2"},
    {.shapes = "1x3x12x13,4x3x3x3", CONV(.dilations = {2, 2}, .strides = {2, 2}), .label = "s2/dilation2"},
    {.shapes = "1x3x9x10,5x3x3x2", CONV(.strides = {2, 1}, .pads = {0, 1, 2, 0}), .label = "s21/asympad"},
    {.shapes = "1x3x7x8,4x3x3x3", CONV(.strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_UPPER), .label = "same_upper/s2"},
    {.shapes = "1x3x7x8,4x3x4x4", CONV(.auto_pad = TX_AUTO_PAD_SAME_LOWER), .label = "same_lower"},
    {.shapes = "1x3x7x8,4x3x3x3", CONV(.auto_pad = TX_AUTO_PAD_VALID, .pads = {5, 5, 5, 5}), .label = "valid"},
    {.shapes = "2x4x17,6x4x5", CONV(.strides = {2}, .pads = {2, 2}), .bias = true, .label = "1d"},
    {.shapes = "1x16x7x7,24x16x1x1", CONV(.activation = TX_OP_SIGMOID), .bias = true, .label = "1x1/sigmoid"},
    {.shapes = "1x5x6x8,7x5x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_CLIP, .lo = -0.5f, .hi = 0.5f), .label = "clip"},
    {.shapes = "1x24x20x20,32x24x3x3", CONV(.pads = {1, 1, 1, 1}), .bias = true, .label = "pad1"},
    {.shapes = "3x2x5x5,3x2x2x2", CONV(.strides = {1, 1}), .label = "batch3"},
    {.shapes = "1x4x3x19,8x4x1x3", CONV(.activation = TX_OP_TANH), .bias = true, .label = "8-wide-tile/tail"},
    {.shapes = "1x8x9x10,16x8x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_HARD_SWISH), .bias = true, .label = "hard_swish"},
    {.shapes = "1x12x9x9,12x1x3x3", CONV(.group = 12, .pads = {1, 1, 1, 1}, .activation = TX_OP_HARD_SWISH), .bias = true, .label = "depthwise/hard_swish"},
    {.shapes = "2x8x5x9,20x8x1x1", CONV(.activation = TX_OP_RELU), .bias = true, .label = "1x1/odd-blocks"},
    {.shapes = "1x8x9x9,12x8x1x1", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}), .label = "1x1/s2/pad1"},
    /* depthwise convs the GPU runs in one pass (W, Wo % 4 == 0, kw <= 7,
     * x stride 1 or 2): every window offset (pl mod 4), rows cut by pads,
     * stride 2 both ways and along x only, 1- to 4-wide taps, batches */
    {.shapes = "2x5x7x16,5x1x3x3", CONV(.group = 5, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU6), .bias = true, .label = "depthwise/direct/k3"},
    {.shapes = "1x6x9x16,6x1x3x3", CONV(.group = 6, .strides = {2, 2}, .pads = {1, 1, 1, 1}), .bias = true, .label = "depthwise/direct/s2"},
    {.shapes = "1x4x8x16,4x1x3x3", CONV(.group = 4, .strides = {2, 2}, .pads = {0, 0, 1, 1}, .activation = TX_OP_CLIP, .lo = -0.5f, .hi = 0.5f), .label = "depthwise/direct/s2/asympad"},
    {.shapes = "1x3x6x16,3x1x2x4", CONV(.group = 3, .strides = {1, 2}, .pads = {1, 2, 0, 1}), .bias = true, .label = "depthwise/direct/k2x4/pl2"},
    {.shapes = "1x3x5x8,3x1x1x1", CONV(.group = 3, .pads = {0, 0, 0, 0}), .label = "depthwise/direct/k1"},
    {.shapes = "1x2x6x8,2x1x3x3", CONV(.group = 2, .pads = {3, 3, 3, 3}), .label = "depthwise/direct/pl3"},
    {.shapes = "1x3x7x4,3x1x5x3", CONV(.group = 3, .strides = {2, 1}, .pads = {2, 1, 2, 1}, .activation = TX_OP_SIGMOID), .bias = true, .label = "depthwise/direct/k5x3/sh2"},
    {.shapes = "1x4x9x16,4x1x5x5", CONV(.group = 4, .pads = {2, 2, 2, 2}, .activation = TX_OP_RELU), .bias = true, .label = "depthwise/direct/k5"},
    {.shapes = "2x3x8x16,3x1x3x7", CONV(.group = 3, .strides = {2, 2}, .pads = {1, 3, 1, 2}), .label = "depthwise/direct/k7/s2"},
    {.shapes = "1x2x6x16,2x1x3x7", CONV(.group = 2, .strides = {1, 2}, .pads = {1, 1, 1, 4}), .bias = true, .label = "depthwise/direct/k7/s2/last-lane"},
    {.shapes = "1x2x5x8,2x1x2x7", CONV(.group = 2, .pads = {0, 5, 1, 1}), .label = "depthwise/direct/k7/pl5"},
    {.shapes = "1x2x5x12,2x1x2x6", CONV(.group = 2, .pads = {0, 2, 1, 3}, .activation = TX_OP_RELU), .label = "depthwise/direct/k6"},
    /* 1x1 convs the GPU runs as a matmul per image: rows of 4 positions
     * (H*W % 4 == 0) in 8-row tiles, a K tail, clip bounds, batches */
    {.shapes = "2x12x8x8,20x12x1x1", CONV(.activation = TX_OP_RELU6), .bias = true, .label = "1x1/matmul/relu6"},
    {.shapes = "1x6x4x10,9x6x1x1", CONV(.activation = TX_OP_CLIP, .lo = -0.25f, .hi = 0.75f), .bias = true, .label = "1x1/matmul/clip"},
    {.shapes = "3x40x6x6,64x40x1x1", CONV(.activation = TX_OP_HARD_SWISH), .bias = true, .label = "1x1/matmul/batch3"},
    {.shapes = "1x5x3x8,4x5x1x1", .label = "1x1/matmul/4-rows"},
    /* the CPU's paths: depthwise 3x3 / 5x5 at strides 1 and 2 over rows wider
     * than a vector, generic depthwise, grouped 1x1, im2col in several tiles */
    {.shapes = "2x3x13x21,3x1x3x3", CONV(.group = 3, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU6), .bias = true, .label = "depthwise/k3/relu6"},
    {.shapes = "1x4x14x19,4x1x3x3", CONV(.group = 4, .strides = {2, 2}, .pads = {0, 0, 1, 1}), .bias = true, .label = "depthwise/k3/s2/asympad"},
    {.shapes = "1x3x12x23,3x1x5x5", CONV(.group = 3, .pads = {2, 2, 2, 2}, .activation = TX_OP_SIGMOID), .label = "depthwise/k5"},
    {.shapes = "1x3x15x22,3x1x5x5", CONV(.group = 3, .strides = {2, 2}, .pads = {1, 2, 2, 1}, .activation = TX_OP_RELU), .bias = true, .label = "depthwise/k5/s2"},
    {.shapes = "1x2x11x12,2x1x3x2", CONV(.group = 2, .strides = {1, 3}, .dilations = {2, 2}, .pads = {2, 1, 2, 1}), .label = "depthwise/generic"},
    {.shapes = "1x8x5x7,6x4x1x1", CONV(.group = 2), .bias = true, .label = "1x1/group2"},
    {.shapes = "1x16x20x20,8x16x5x5", CONV(.pads = {2, 2, 2, 2}, .activation = TX_OP_RELU), .bias = true, .label = "im2col-tiles"},
    /* a residual (x, w, bias, residual of y's shape) on each GPU route: the
     * unpack pass (Wo % 4 == 0 or not), the 1x1 matmul (8-row tiles and 1-row
     * tiles), the one-pass depthwise; the CPU's GEMM, Winograd and depthwise */
    {.shapes = "1x8x9x12,8x8x3x3,8,1x8x9x12", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU), .label = "residual/relu"},
    {.shapes = "2x3x6x7,5x3x3x3,5,2x5x6x7", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_CLIP, .lo = -0.5f, .hi = 0.5f), .label = "residual/clip/unaligned"},
    {.shapes = "1x8x16x16,12x8x3x3,12,1x12x8x8", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}), .label = "residual/s2"},
    {.shapes = "2x12x8x8,20x12x1x1,20,2x20x8x8", CONV(.activation = TX_OP_RELU6), .label = "residual/1x1/matmul"},
    {.shapes = "1x5x3x8,4x5x1x1,4,1x4x3x8", CONV(.activation = TX_OP_SIGMOID), .label = "residual/1x1/matmul/1-row"},
    {.shapes = "1x6x9x16,6x1x3x3,6,1x6x9x16", CONV(.group = 6, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU), .label = "residual/depthwise/direct"},
    {.shapes = "1x4x9x9,4x1x3x3,4,1x4x9x9", CONV(.group = 4, .pads = {1, 1, 1, 1}, .activation = TX_OP_HARD_SWISH), .label = "residual/depthwise"},
    {.shapes = "1x16x19x19,16x16x3x3,16,1x16x17x17", .label = "residual/winograd"},
    /* residual_pad: a residual of fewer channels, the rest adding 0, on each
     * GPU route (the unpack, the 1x1 matmul's 8- and 1-row tiles, the
     * one-pass depthwise, the one-position dot); a partial last texel and
     * a batch take the padding first on the GPU (the CPU adds per image) */
    {.shapes = "1x8x9x12,12x8x3x3,12,1x8x9x12", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU, .residual_pad = true), .label = "residual_pad/relu"},
    {.shapes = "1x8x8x8,20x8x1x1,20,1x12x8x8", CONV(.activation = TX_OP_RELU6, .residual_pad = true), .label = "residual_pad/1x1/matmul"},
    {.shapes = "1x5x3x8,4x5x1x1,4,1x1x3x8", CONV(.residual_pad = true), .label = "residual_pad/1x1/matmul/1-row"},
    {.shapes = "1x6x9x16,6x1x3x3,6,1x4x9x16", CONV(.group = 6, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU, .residual_pad = true), .label = "residual_pad/depthwise/direct"},
    {.shapes = "1x8x1x1,12x8x1x1,12,1x8x1x1", CONV(.activation = TX_OP_SIGMOID, .residual_pad = true), .label = "residual_pad/1x1/one-position"},
    {.shapes = "1x3x5x7,6x3x3x3,6,1x2x5x7", CONV(.pads = {1, 1, 1, 1}, .residual_pad = true), .label = "residual_pad/partial-texel"},
    {.shapes = "2x4x6x8,6x4x3x3,6,2x3x6x8", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU, .residual_pad = true), .label = "residual_pad/batch2"},
    {.shapes = "1x8x9x12,8x8x3x3,8,1x8x9x12", CONV(.pads = {1, 1, 1, 1}, .residual_pad = true), .label = "residual_pad/all-channels"},
    /* convs of one position (H = W = 1, 1x1 kernel: squeeze-excite), which
     * the GPU runs in one draw: channels in whole texels or not, outputs whose
     * texels straddle images, a residual, a parameterized activation */
    {.shapes = "2x6x1x1,10x6x1x1", CONV(.activation = TX_OP_RELU), .bias = true, .label = "1x1/one-position/c6/batch2"},
    {.shapes = "1x48x1x1,192x48x1x1", CONV(.activation = TX_OP_HARD_SWISH), .bias = true, .label = "1x1/one-position/c48"},
    {.shapes = "3x8x1x1,6x8x1x1,6,3x6x1x1", CONV(.activation = TX_OP_SIGMOID), .label = "residual/1x1/one-position"},
    {.shapes = "2x20x1x1,50x20x1x1", CONV(.activation = TX_OP_LEAKY_RELU, .alpha = 0.15f), .label = "1x1/one-position/leaky_relu"},
    /* the CPU's Winograd F(2x2, 3x3) (where its GEMM is 4-wide: wasm): groups,
     * asymmetric pads, an activation run afterwards, odd output sizes
     * (partial tiles), several strips */
    {.shapes = "2x32x19x17,32x16x3x3", CONV(.group = 2, .pads = {1, 0, 0, 1}, .activation = TX_OP_SIGMOID), .bias = true, .label = "winograd/group2/sigmoid", .big = true},
    {.shapes = "1x16x19x19,16x16x3x3", .label = "winograd/nopad/odd"},
    /* activations with alpha / beta (tx_activation's ops) on every route:
     * the packing passes (4- and 8-wide tiles), the 1x1 matmul, the one-pass
     * and packed depthwise, a residual, the CPU's Winograd and GEMM */
    {.shapes = "1x8x9x10,16x8x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_LEAKY_RELU, .alpha = 0.1f), .bias = true, .label = "leaky_relu"},
    {.shapes = "1x4x3x19,8x4x1x3", CONV(.activation = TX_OP_ELU, .alpha = 0.5f), .bias = true, .label = "8-wide-tile/elu"},
    {.shapes = "2x12x8x8,20x12x1x1", CONV(.activation = TX_OP_HARD_SIGMOID, .alpha = 0.1666667f, .beta = 0.5f), .bias = true, .label = "1x1/matmul/hard_sigmoid"},
    {.shapes = "1x24x1x1,6x24x1x1", CONV(.activation = TX_OP_HARD_SIGMOID, .alpha = 0.2f, .beta = 0.5f), .bias = true, .label = "1x1/squeeze/hard_sigmoid"},
    /* swish (SiLU) fused: the packing route, the one-pass depthwise */
    {.shapes = "1x8x9x12,8x8x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_SWISH, .alpha = 1), .bias = true, .label = "swish"},
    {.shapes = "1x6x9x16,6x1x3x3", CONV(.group = 6, .pads = {1, 1, 1, 1}, .activation = TX_OP_SWISH, .alpha = 1.702f), .bias = true, .label = "depthwise/direct/swish"},
    {.shapes = "2x5x7x16,5x1x3x3", CONV(.group = 5, .pads = {1, 1, 1, 1}, .activation = TX_OP_LEAKY_RELU, .alpha = 0.1f), .bias = true, .label = "depthwise/direct/leaky_relu"},
    {.shapes = "1x12x9x9,12x1x3x3", CONV(.group = 12, .pads = {1, 1, 1, 1}, .activation = TX_OP_SELU, .alpha = 1.6732632f, .beta = 1.0507010f), .bias = true, .label = "depthwise/selu"},
    {.shapes = "1x8x9x12,8x8x3x3,8,1x8x9x12", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_THRESHOLDED_RELU, .alpha = 0.2f), .label = "residual/thresholded_relu"},
    {.shapes = "1x16x19x19,16x16x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_CELU, .alpha = 0.8f), .bias = true, .label = "winograd/celu"},
    {.shapes = "1x16x20x20,8x16x5x5", CONV(.pads = {2, 2, 2, 2}, .activation = TX_OP_AFFINE, .alpha = -0.5f, .beta = 0.25f), .bias = true, .label = "im2col/affine"},
    {.shapes = "1x160x15x15,16x160x3x3", CONV(.pads = {1, 1, 1, 1}, .activation = TX_OP_RELU), .bias = true, .label = "winograd/strips", .big = true},
    /* x_affine (x read as x * x_scale + x_shift inside x, the padding 0) on
     * every route: the dense and depthwise packs, the one-pass depthwise, one
     * position, a 1x1 (not the matmul route then), a residual, strides; the
     * CPU runs it as an affine op first */
#define XAFF(s, b) .x_affine = true, .x_scale = s, .x_shift = b
    {.shapes = "1x8x9x11,8x8x3x3", CONV(.pads = {1, 1, 1, 1}, XAFF(-1.5f, 0.75f)), .bias = true, .label = "x_affine/pad1"},
    {.shapes = "1x12x9x9,12x1x3x3", CONV(.group = 12, .pads = {1, 1, 1, 1}, .activation = TX_OP_HARD_SWISH, XAFF(0.5f, 1.0f)), .bias = true, .label = "x_affine/depthwise"},
    {.shapes = "2x5x7x16,5x1x3x3", CONV(.group = 5, .pads = {1, 1, 1, 1}, XAFF(2.0f, -0.5f)), .bias = true, .label = "x_affine/depthwise/direct"},
    {.shapes = "1x4x9x16,4x1x5x5", CONV(.group = 4, .strides = {2, 2}, .pads = {2, 2, 2, 2}, .activation = TX_OP_RELU, XAFF(0.8f, 0.3f)), .label = "x_affine/depthwise/direct/k5/s2"},
    {.shapes = "2x6x1x1,10x6x1x1", CONV(.activation = TX_OP_RELU, XAFF(1.25f, -0.2f)), .bias = true, .label = "x_affine/one-position"},
    {.shapes = "1x48x1x1,16x48x1x1", CONV(XAFF(-0.5f, 0.1f)), .label = "x_affine/one-position/c48"},
    {.shapes = "2x12x8x8,20x12x1x1", CONV(.activation = TX_OP_RELU6, XAFF(0.9f, 0.4f)), .bias = true, .label = "x_affine/1x1"},
    {.shapes = "1x6x9x16,6x1x3x3,6,1x6x9x16", CONV(.group = 6, .pads = {1, 1, 1, 1}, .activation = TX_OP_RELU, XAFF(1.1f, -0.3f)), .label = "x_affine/residual/depthwise/direct"},
    {.shapes = "1x8x16x16,12x8x3x3", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, XAFF(0.0f, 2.0f)), .bias = true, .label = "x_affine/s2/scale0"},
};
static const shape_case k_conv_transpose[] = {
    {.shapes = "1x1x3x3,1x2x3x3"},
    {.shapes = "1x2x4x5,2x3x3x3", CONV(.strides = {2, 2}), .bias = true, .label = "s2"},
    {.shapes = "1x4x5x5,4x4x3x3", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, .output_padding = {1, 1}), .label = "s2/pad1/outpad1"},
    {.shapes = "1x4x3x4,4x3x3x3", CONV(.group = 2, .strides = {2, 2}), .bias = true, .label = "group2/s2"},
    {.shapes = "1x2x4x4,2x2x3x3", CONV(.dilations = {2, 2}, .pads = {1, 0, 0, 1}), .label = "dilation2"},
    {.shapes = "1x1x3x3,1x2x3x3", CONV(.strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_UPPER), .label = "same_upper"},
    {.shapes = "1x1x3x3,1x2x3x3", CONV(.strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_LOWER), .label = "same_lower"},
    {.shapes = "1x1x3x3,1x2x3x3", CONV(.strides = {3, 2}, .output_shape = {10, 8}), .label = "output_shape"},
    {.shapes = "1x3x7,3x2x4", CONV(.strides = {2}, .pads = {1, 1}), .bias = true, .label = "1d"},
    {.shapes = "1x4x5x5,4x1x3x3", CONV(.group = 4, .strides = {2, 2}, .activation = TX_OP_RELU), .label = "depthwise/s2/relu"},
    {.shapes = "1x2x6x6,2x2x3x3", CONV(.pads = {3, 3, 3, 3}), .label = "pad3-crops"},
    {.shapes = "2x8x5x6,8x4x4x4", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}), .bias = true, .label = "k4/s2"},
    {.shapes = "1x4x4x9,4x4x3x3", CONV(.strides = {2, 2}), .label = "8-wide-tile/tail"},
    {.shapes = "1x4x3x5,4x6x1x1", CONV(.strides = {2, 2}), .bias = true, .label = "1x1/s2"},
    /* a residual (x, w, bias, residual of y's shape), added before the activation */
    {.shapes = "1x2x4x5,2x3x3x3,3,1x3x9x11", CONV(.strides = {2, 2}, .activation = TX_OP_RELU), .label = "s2/residual/relu"},
    {.shapes = "1x4x5x5,4x4x3x3", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, .activation = TX_OP_LEAKY_RELU, .alpha = 0.1f), .bias = true, .label = "s2/leaky_relu"},
    {.shapes = "1x4x5x5,4x4x3x3", CONV(.strides = {2, 2}, .pads = {1, 1, 1, 1}, XAFF(-0.7f, 0.25f)), .bias = true, .label = "s2/x_affine"},
    /* 2x2 kernels at stride 2, which the GPU runs in one draw: planes of
     * whole texels and not (H * W % 4 == 2), batches, one output channel,
     * a residual, end pads with output_padding (still 2H x 2W); odd W and
     * groups take the packing passes */
    {.shapes = "1x3x4x6,3x5x2x2", CONV(.strides = {2, 2}), .bias = true, .label = "k2s2"},
    {.shapes = "1x3x4x6,3x6x2x2,6,1x4x8x12", CONV(.strides = {2, 2}, .residual_pad = true), .label = "k2s2/residual_pad"},
    {.shapes = "2x5x3x6,5x4x2x2", CONV(.strides = {2, 2}, .activation = TX_OP_RELU), .bias = true, .label = "k2s2/plane-half-texel/batch2"},
    {.shapes = "1x24x5x8,24x1x2x2", CONV(.strides = {2, 2}, .activation = TX_OP_SIGMOID), .bias = true, .label = "k2s2/m1"},
    {.shapes = "1x4x3x4,4x6x2x2,6,1x6x6x8", CONV(.strides = {2, 2}, .activation = TX_OP_LEAKY_RELU, .alpha = 0.2f), .label = "k2s2/residual"},
    {.shapes = "1x3x3x4,3x2x2x2", CONV(.strides = {2, 2}, .pads = {0, 0, 1, 1}, .output_padding = {1, 1}), .label = "k2s2/endpad-outpad"},
    {.shapes = "1x2x3x5,2x3x2x2", CONV(.strides = {2, 2}), .bias = true, .label = "k2s2/odd-w"},
    {.shapes = "1x4x4x4,4x2x2x2", CONV(.group = 2, .strides = {2, 2}), .label = "k2s2/group2"},
    /* kernel = stride, which the CPU writes once per output: 3x3 (no zip),
     * and input rows in several tiles of its col scratch */
    {.shapes = "1x3x4x5,3x4x3x3", CONV(.strides = {3, 3}, .activation = TX_OP_HARD_SWISH), .bias = true, .label = "k3s3"},
    {.shapes = "1x2x120x37,2x64x2x2", CONV(.strides = {2, 2}, .activation = TX_OP_RELU), .bias = true, .label = "k2s2/row-tiles", .big = true},
};
#undef CONV
#define POOL(...) .attrs = {.pool = {__VA_ARGS__}}
static const shape_case k_pool[] = {
    {.shapes = "1x1x4x4", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .label = "k2/s2"},
    /* windows 2 wide tiling rows of whole texels: texel-wide reads (a last
     * row no window covers; 3 rows high; 1-D; Wo 2, an odd count of pairs) */
    {.shapes = "2x3x7x16", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .label = "k2/s2/texels"},
    {.shapes = "1x2x9x8", POOL(.kernel_shape = {3, 2}, .strides = {3, 2}), .label = "k3x2/texels"},
    {.shapes = "2x3x8", POOL(.kernel_shape = {2}, .strides = {2}), .label = "1d/texels"},
    {.shapes = "1x3x3x4", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .label = "k2/s2/wo2/texels"},
    /* the CPU's 2x2 path: four outputs at a time and a tail (Wo 6), an odd
     * width and height; end pads (inside the input all the same) */
    {.shapes = "2x3x9x13", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}), .label = "k2/s2/wo6/odd"},
    {.shapes = "1x2x8x16", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}, .pads = {0, 0, 1, 1}, .count_include_pad = true), .label = "k2/s2/endpad/include_pad"},
    {.shapes = "2x3x7x9", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}), .label = "k3/s2/pad1"},
    {.shapes = "1x2x7x7", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .ceil_mode = true), .label = "ceil"},
    {.shapes = "1x2x6x8", POOL(.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}, .count_include_pad = true), .label = "pad1/include_pad"},
    {.shapes = "1x2x5x5", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 1, 1}, .ceil_mode = true, .count_include_pad = true), .label = "ceil/pad1/include_pad"},
    {.shapes = "1x3x9x10", POOL(.kernel_shape = {2, 3}, .strides = {2, 1}, .dilations = {2, 1}), .label = "dilation"},
    {.shapes = "1x2x8x8", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_UPPER), .label = "same_upper"},
    {.shapes = "1x2x7x7", POOL(.kernel_shape = {2, 2}, .strides = {2, 2}, .auto_pad = TX_AUTO_PAD_SAME_LOWER), .label = "same_lower"},
    {.shapes = "2x3x11", POOL(.kernel_shape = {3}, .strides = {2}, .pads = {1, 1}), .label = "1d"},
    {.shapes = "1x5x8x8", POOL(.kernel_shape = {8, 8}), .label = "whole"},
    {.shapes = "1x3x3x5", POOL(.kernel_shape = {2, 2}), .label = "k2"},
    {.shapes = "1x16x20x20", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}), .label = "k3/s2"},
    {.shapes = "1x2x9x9", POOL(.kernel_shape = {3, 3}, .strides = {2, 2}, .pads = {1, 1, 2, 2}, .dilations = {2, 2}, .ceil_mode = true, .count_include_pad = true), .label = "dilation/ceil/include_pad"},
};
#undef POOL
#define AX(...) .n_axes = (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), .axes = {__VA_ARGS__}
static const shape_case k_reduce[] = {
    {.shapes = "1", .label = "all"},
    {.shapes = "scalar", .label = "all"},
    {.shapes = "5x7x11x13", .label = "all"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(1)}}, .label = "1"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(-1), .drop_dims = true}}, .label = "-1/drop"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(0, 2)}}, .label = "0,2"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(3, 1), .drop_dims = true}}, .label = "3,1/drop"},
    {.shapes = "2x3x4x5x6x7", .attrs = {.reduce = {AX(0, 2, 4)}}, .label = "0,2,4"},
    {.shapes = "2x3x4x5x6x7", .attrs = {.reduce = {AX(1, 3, -1), .drop_dims = true}}, .label = "1,3,5/drop"},
    {.shapes = "7x1x5", .attrs = {.reduce = {AX(1)}}, .label = "1"},
    {.shapes = "16x1000", .attrs = {.reduce = {AX(1)}}, .label = "1"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(-1)}}, .label = "-1"},
    {.shapes = "1000x16", .attrs = {.reduce = {AX(0)}}, .label = "0"},
    {.shapes = "2000x8", .attrs = {.reduce = {AX(0)}}, .label = "0"},
    {.shapes = "6x5x8", .attrs = {.reduce = {AX(1), .drop_dims = true}}, .label = "1/drop"},
    {.shapes = "3x4x5x12", .attrs = {.reduce = {AX(0, 2)}}, .label = "0,2"},
    {.shapes = "16000", .label = "all"},
    {.shapes = "4x4096", .attrs = {.reduce = {AX(0, 1), .drop_dims = true}}, .label = "0,1/drop"},
    {.shapes = "5x7", .attrs = {.reduce = {.noop_with_empty_axes = true}}, .label = "noop"},
    {.shapes = "3x0", .attrs = {.reduce = {AX(1)}}, .label = "empty"},
    {.shapes = "0x3", .attrs = {.reduce = {AX(1)}}, .label = "1"},
};
static const shape_case k_arg[] = {
    {.shapes = "17", .label = "default"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(1)}}, .label = "1"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(-1), .drop_dims = true}}, .label = "-1/drop"},
    {.shapes = "5x7x11x13", .attrs = {.reduce = {AX(2), .select_last_index = true}}, .label = "2/last"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(1)}}, .label = "1"},
    {.shapes = "3x4999", .attrs = {.reduce = {AX(1), .select_last_index = true}}, .label = "1/last"},
    {.shapes = "2x4096", .attrs = {.reduce = {AX(1), .select_last_index = true}}, .label = "1/last"},
    {.shapes = "1000x16", .attrs = {.reduce = {AX(0), .select_last_index = true}}, .label = "0/last"},
};
static const shape_case k_softmax[] = {
    {.shapes = "17", .attrs = {.softmax = {.axis = 0}}, .label = "0"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = -1}}, .label = "-1"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 1}}, .label = "1"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 0}}, .label = "0"},
    {.shapes = "5x7x11x13", .attrs = {.softmax = {.axis = 1, .coerce_2d = true}}, .label = "1/2d"},
    {.shapes = "16x1000", .attrs = {.softmax = {.axis = -1}}, .label = "-1"},
    {.shapes = "3x4999", .attrs = {.softmax = {.axis = 1}}, .label = "1"},
    {.shapes = "0x3", .attrs = {.softmax = {.axis = 1}}, .label = "1"},
};
static const shape_case k_batch_norm[] = {
    {.shapes = "2x3x5x7,3,3,3,3"},
    {.shapes = "4x6,6,6,6,6", .attrs = {.norm = {.epsilon = 1e-3f}}, .label = "eps"},
    {.shapes = "1x8x16x17,8,8,8,8"},
};
static const shape_case k_instance_norm[] = {
    {.shapes = "2x3x5x7,3,3"},
    {.shapes = "1x4x1000,4,4"},
    {.shapes = "2x3x17x3,3,3", .attrs = {.norm = {.epsilon = 1e-2f}}, .label = "eps"},
};
static const shape_case k_layer_norm[] = {
    {.shapes = "5x7x11x13,13,13", .attrs = {.norm = {.axis = -1}}, .label = "-1"},
    {.shapes = "5x7x11x13,11x13,11x13", .attrs = {.norm = {.axis = -2}}, .label = "-2"},
    {.shapes = "5x7x11x13,13", .attrs = {.norm = {.axis = 2}}, .label = "2/trailing-scale"},
    {.shapes = "4x1000,1000,1000", .attrs = {.norm = {.axis = 1}}, .label = "1"},
    {.shapes = "6x10,1,1x1", .attrs = {.norm = {.axis = 0, .epsilon = 1e-3f}}, .label = "0/scalar"},
    {.shapes = "3x4x6,6,6", .attrs = {.norm = {.axis = 1}}, .label = "1/period6"},
    {.shapes = "5x8,8", .attrs = {.norm = {.axis = -1}}, .label = "-1/no-bias"},
    {.shapes = "3x4x6,4x6,6", .attrs = {.norm = {.axis = 1}}, .label = "1/periods24,6"},
};
static const shape_case k_act[] = {
    {.shapes = "5x7x11x13", .attrs = {.alpha = 0.2f, .beta = 0.5f}, .label = "a.2,b.5"},
    {.shapes = "17", .attrs = {.alpha = 1.6732632f, .beta = 1.0507009f}, .label = "selu"},
    {.shapes = "64x65", .attrs = {.alpha = 0.01f, .beta = 0}, .label = "a.01"},
    {.shapes = "scalar", .attrs = {.alpha = 2, .beta = -1}, .label = "a2,b-1"},
};
static const shape_case k_cast[] = {
    {.shapes = "5x7x11x13", .attrs = {.cast_to = TX_DTYPE_INT32}, .label = "int32"},
    {.shapes = "17", .attrs = {.cast_to = TX_DTYPE_FLOAT32}, .label = "float32"},
    {.shapes = "33x9", .attrs = {.cast_bool = true}, .label = "bool"},
    {.shapes = "33x9", .attrs = {.cast_to = TX_DTYPE_INT32, .cast_bool = true}, .label = "bool-int32"},
};
static const shape_case k_where[] = {
    {.shapes = "5x7x11,5x7x11,5x7x11"},
    {.shapes = "2x1x4,3x1,4"},
    {.shapes = "scalar,3x3,1"},
    {.shapes = "7x1,1x9,7x9"},
};
static const shape_case k_variadic[] = {
    {.shapes = "5x7"},
    {.shapes = "5x7,5x7"},
    {.shapes = "2x1x4,3x1,4"},
    {.shapes = "5x7x11,11,7x1,1x1x1,5x7x11,scalar"},
    {.shapes = "9,9,9,9,9,9,9,9"},
    {.shapes = "0x3,3"},
};
/* MOVE: each case names its op (attributes differ per op). */
#define MV(OP, SH, TAG, ...) {.shapes = SH, .op = TX_OP_##OP, .label = TAG, .attrs = {.move = {__VA_ARGS__}}}
#define MVI(OP, SH, TAG, ...)                                                                    \
    {.shapes = SH, .op = TX_OP_##OP, .label = TAG, .int32 = true, .attrs = {.move = {__VA_ARGS__}}}
static const shape_case k_move[] = {
    MV(IDENTITY, "5x7x11x13", "", .axis = 0), MV(IDENTITY, "scalar", "", .axis = 0), MV(IDENTITY, "0x3", "", .axis = 0),
    MV(TRANSPOSE, "5x7x11x13", "nchw-nhwc", .n_perm = 4, .perm = {0, 2, 3, 1}),
    MV(TRANSPOSE, "5x7x11x13", "reverse", .n_perm = 0),
    MV(TRANSPOSE, "2x3x4x5x6x7", "6d", .n_perm = 6, .perm = {5, 0, 4, 1, 3, 2}),
    MV(TRANSPOSE, "3x5x8", "rows-aligned", .n_perm = 3, .perm = {1, 0, 2}),
    MV(TRANSPOSE, "3x5x6", "rows", .n_perm = 3, .perm = {1, 0, 2}),
    MV(TRANSPOSE, "64x65", "2d", .n_perm = 2, .perm = {1, 0}),
    MV(TRANSPOSE, "1x1x7", "unit-dims", .n_perm = 3, .perm = {2, 1, 0}),
    MVI(TRANSPOSE, "4x6x5", "int32", .n_perm = 3, .perm = {2, 0, 1}),
    MV(TRANSPOSE, "0x3", "empty", .n_perm = 0),
    MV(SLICE, "5x7x11x13", "axes", .slice = {.n = 2, .starts = {1, 2}, .ends = {4, -1}, .axes = {1, 3}, .has_axes = true}),
    MV(SLICE, "9x10", "neg-steps", .slice = {.n = 2, .starts = {-1, 8}, .ends = {INT64_MIN, 1}, .steps = {-2, -3}}),
    MV(SLICE, "17", "clamp", .slice = {.n = 1, .starts = {-100}, .ends = {100}}),
    MV(SLICE, "6x8", "empty", .slice = {.n = 1, .starts = {10}, .ends = {20}}),
    MV(SLICE, "6x8", "reversed-empty", .slice = {.n = 1, .starts = {2}, .ends = {4}, .steps = {-1}}),
    MV(SLICE, "4x16", "unaligned-rows", .slice = {.n = 1, .starts = {1}, .ends = {13}, .axes = {1}, .has_axes = true}),
    MV(SLICE, "4x16", "aligned-rows", .slice = {.n = 1, .starts = {4}, .ends = {12}, .axes = {-1}, .has_axes = true}),
    MV(SLICE, "2x3x4x5x6x7", "6d", .slice = {.n = 2, .starts = {0, INT64_MAX}, .ends = {INT64_MAX, -100}, .axes = {-1, -3}, .steps = {2, -1}, .has_axes = true}),
    MV(PAD, "5x7x11x13", "constant", .pad = {.begin = {0, 0, 1, 2}, .end = {0, 0, 2, 1}, .value = 1.5f}),
    MV(PAD, "3x7x9", "reflect", .pad = {.mode = TX_PAD_REFLECT, .begin = {0, 2, 3}, .end = {1, 3, 2}}),
    MV(PAD, "2x3", "reflect-wide", .pad = {.mode = TX_PAD_REFLECT, .begin = {0, 5}, .end = {1, 7}}),
    MV(PAD, "4x5", "edge", .pad = {.mode = TX_PAD_EDGE, .begin = {2, 3}, .end = {1, 4}}),
    MV(PAD, "4x5", "wrap", .pad = {.mode = TX_PAD_WRAP, .begin = {1, 6}, .end = {2, 3}}),
    MV(PAD, "6x8", "crop", .pad = {.begin = {-1, 2}, .end = {1, -3}, .value = -1}),
    MV(PAD, "3x4x8", "outer-constant", .pad = {.begin = {1, 0, 0}, .end = {0, 1, 0}, .value = 7}),
    MV(PAD, "3x4x8", "outer-edge", .pad = {.mode = TX_PAD_EDGE, .begin = {1, 2, 0}, .end = {2, 0, 0}}),
    MV(PAD, "0x3", "from-empty", .pad = {.begin = {1, 0}, .end = {1, 0}, .value = 2}),
    MV(PAD, "3x9", "wrap-wide", .pad = {.mode = TX_PAD_WRAP, .begin = {0, 20}, .end = {2, 13}}),
    MV(PAD, "3x9", "edge-inner-crop", .pad = {.mode = TX_PAD_EDGE, .begin = {0, -2}, .end = {0, 5}}),
    MVI(PAD, "5x6", "int32", .pad = {.begin = {1, 1}, .end = {1, 1}, .value = 3.7f}),
    MV(EXPAND, "3x1", "", .rank = 3, .shape = {2, 3, 4}),
    MV(EXPAND, "1x8", "outer", .rank = 2, .shape = {5, 8}),
    MV(EXPAND, "5x1", "inner", .rank = 2, .shape = {5, 8}),
    MV(EXPAND, "2x1x3", "both-ways", .rank = 3, .shape = {2, 4, 1}),
    MV(EXPAND, "scalar", "scalar", .rank = 2, .shape = {3, 5}),
    MV(TILE, "3x5", "", .repeats = {2, 3}),
    MV(TILE, "2x3x4", "inner", .repeats = {1, 2, 2}),
    MV(TILE, "2x8", "outer", .repeats = {3, 1}),
    MV(TILE, "4", "zero", .repeats = {0}),
    MV(TILE, "3x5x2", "outer-inner", .repeats = {2, 1, 3}),
    MV(DEPTH_TO_SPACE, "2x8x3x5", "dcr", .blocksize = 2),
    MV(DEPTH_TO_SPACE, "2x8x3x5", "crd", .blocksize = 2, .depth_mode = TX_DEPTH_CRD),
    MV(DEPTH_TO_SPACE, "1x18x2x3", "b3", .blocksize = 3),
    MV(SPACE_TO_DEPTH, "2x3x4x6", "b2", .blocksize = 2),
    MV(SPACE_TO_DEPTH, "1x2x6x9", "b3", .blocksize = 3),
    MV(SPLIT, "6x10", "sizes", .axis = 1, .n_split = 3, .split = {2, 3, 5}),
    MV(SPLIT, "7x5", "equal", .axis = 0, .n_split = 3),
    MV(SPLIT, "2x3x16", "aligned", .axis = -1, .n_split = 2, .split = {8, 8}),
    MV(SPLIT, "3x9", "mixed", .axis = 1, .n_split = 2, .split = {4, 5}),
    MV(SPLIT, "4x3", "one", .axis = 0),
    MV(CONCAT, "5x7x3,5x2x3", "axis1", .axis = 1),
    MV(CONCAT, "4x8,4x4,4x12", "aligned", .axis = 1),
    MV(CONCAT, "2x3,2x3,2x3,2x3,2x3,2x3", "six", .axis = 0),
    MV(CONCAT, "1x3,2x3,1x3,3x3,1x3,1x3,2x3,1x3", "eight", .axis = 0),
    MV(CONCAT, "3x5,3x0,3x2", "empty-part", .axis = -1),
    MV(CONCAT, "2x3x4x5x6x7,2x3x4x5x6x1", "6d", .axis = 5),
    MV(CONCAT, "7x2", "single", .axis = 0),
    MVI(CONCAT, "3x4,3x4", "int32", .axis = 0),
    MV(GATHER, "5x7,3", "rows", .axis = 0),
    MV(GATHER, "5x8x4,2x3", "aligned", .axis = 1),
    MV(GATHER, "6x7,2x2", "last-axis", .axis = -1),
    MV(GATHER, "10,scalar", "scalar-index", .axis = 0),
    MV(GATHER, "3x4x5,2x1x2", "3d", .axis = 2),
    MVI(GATHER, "7x3,4", "int32", .axis = 0),
    MV(GATHER, "5x3,0", "no-indices", .axis = 0),
};
#define RZ(SH, TAG, ...) {.shapes = SH, .label = TAG, .attrs = {.move = {.resize = {__VA_ARGS__}}}}
static const shape_case k_resize[] = {
    RZ("1x2x5x7", "nearest", .scales = {1, 1, 2, 2}),
    RZ("1x3x4x4", "upsample", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 2, 3}),
    RZ("1x2x8x8", "down-floor-ties", .scales = {1, 1, 0.5f, 0.5f}),
    RZ("1x2x8x8", "down-ceil-ties", .nearest = TX_RESIZE_ROUND_PREFER_CEIL, .scales = {1, 1, 0.5f, 0.5f}),
    RZ("2x3x5", "tf-ceil", .coord = TX_RESIZE_TF_HALF_PIXEL_FOR_NEAREST, .nearest = TX_RESIZE_CEIL, .sizes = {2, 3, 9}),
    RZ("1x2x5x7", "linear", .mode = TX_RESIZE_LINEAR, .scales = {1, 1, 2, 2}),
    RZ("1x1x4x6", "align-corners", .mode = TX_RESIZE_LINEAR, .coord = TX_RESIZE_ALIGN_CORNERS, .sizes = {1, 1, 7, 11}),
    RZ("1x1x2x4", "align-fractional", .mode = TX_RESIZE_LINEAR, .coord = TX_RESIZE_ALIGN_CORNERS, .scales = {1, 1, 0.6f, 0.6f}),
    RZ("3x4", "pytorch-len-1.2", .coord = TX_RESIZE_PYTORCH_HALF_PIXEL, .nearest = TX_RESIZE_CEIL, .scales = {1, 0.3f}),
    RZ("2x3x4", "asymmetric", .mode = TX_RESIZE_LINEAR, .coord = TX_RESIZE_ASYMMETRIC, .scales = {1, 1.5f, 2.5f}),
    RZ("1x2x6x4", "pytorch", .mode = TX_RESIZE_LINEAR, .coord = TX_RESIZE_PYTORCH_HALF_PIXEL, .sizes = {1, 2, 3, 1}),
    RZ("2x3x4x5", "trilinear", .mode = TX_RESIZE_LINEAR, .scales = {1, 2, 2, 2}),
    RZ("2x3x2x3x2x3", "6d", .mode = TX_RESIZE_LINEAR, .scales = {1, 2, 1, 2, 1, 2}),
    RZ("3x9", "down-linear", .mode = TX_RESIZE_LINEAR, .sizes = {2, 4}),
    RZ("1x2x5x7", "cubic", .mode = TX_RESIZE_CUBIC, .scales = {1, 1, 2, 2}),
    RZ("1x2x8x9", "cubic-exclude", .mode = TX_RESIZE_CUBIC, .cubic_a = -0.5f, .exclude_outside = true, .scales = {1, 1, 0.6f, 0.8f}),
    RZ("2x6x7", "cubic-align", .mode = TX_RESIZE_CUBIC, .coord = TX_RESIZE_ALIGN_CORNERS, .sizes = {2, 11, 4}),
    RZ("3x4x5x6", "tricubic", .mode = TX_RESIZE_CUBIC, .coord = TX_RESIZE_ASYMMETRIC, .scales = {1, 1.5f, 2, 0.5f}),
    RZ("4x6", "cubic-pytorch-len-1", .mode = TX_RESIZE_CUBIC, .coord = TX_RESIZE_PYTORCH_HALF_PIXEL, .sizes = {1, 9}),
    {.shapes = "2x3x3", .label = "int32", .int32 = true, .attrs = {.move = {.resize = {.scales = {1, 2, 2}}}}},
    RZ("2x6x8", "nearest-rows", .nearest = TX_RESIZE_FLOOR, .scales = {1, 1.5f, 1}),
    RZ("2x5x8", "linear-rows", .mode = TX_RESIZE_LINEAR, .scales = {1, 1.6f, 1}),
    /* a residual of y's shape (the second input) added where y is written:
     * a feature pyramid's 2x nearest, linear, y of 35 elements (the last
     * texel partly past the end), a merged 1-D problem */
    RZ("1x4x5x8,1x4x10x16", "residual/nearest-2x", .scales = {1, 1, 2, 2}),
    RZ("2x3x4x6,2x3x8x12", "residual/linear", .mode = TX_RESIZE_LINEAR, .scales = {1, 1, 2, 2}),
    RZ("1x1x3x4,1x1x5x7", "residual/unaligned", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .sizes = {1, 1, 5, 7}),
    RZ("6x4,6x12", "residual/rows", .mode = TX_RESIZE_CUBIC, .scales = {1, 3}),
    /* whole-factor nearest upsampling (gpu/resize.c up_factors): 2x, 4x from
     * rows that are not whole texels, rows only, 8x in pytorch_half_pixel
     * rounding up, 3-D; and where it does not apply (3x, asymmetric with
     * round_prefer_floor, rows of 6 at 2x): the general path */
    RZ("1x2x3x4", "up/asymmetric-2x", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 2, 2}),
    RZ("2x3x3x3", "up/4x", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 4, 4}),
    RZ("1x3x5x8", "up/rows-only", .scales = {1, 1, 2, 1}),
    RZ("1x1x4x8", "up/pytorch-8x", .coord = TX_RESIZE_PYTORCH_HALF_PIXEL, .nearest = TX_RESIZE_ROUND_PREFER_CEIL, .scales = {1, 1, 8, 8}),
    RZ("2x4x4", "up/3d", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 2, 2}),
    RZ("1x2x4x12", "up/3x", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 2, 3}),
    RZ("1x2x4x8", "up/asymmetric-round", .coord = TX_RESIZE_ASYMMETRIC, .scales = {1, 1, 2, 2}),
    RZ("1x2x3x6", "up/rows-of-6", .coord = TX_RESIZE_ASYMMETRIC, .nearest = TX_RESIZE_FLOOR, .scales = {1, 1, 2, 2}),
};
/* clang-format on */

typedef struct family_cases {
    const shape_case *cases;
    int n;
} family_cases;

#define CASES(a) ((family_cases){a, (int)TX_COUNTOF(a)})
static family_cases cases_for(tx_op op) {
    switch (op) { /* ops whose inputs or attributes differ from their family's */
    case TX_OP_ARGMAX:
    case TX_OP_ARGMIN: return CASES(k_arg);
    case TX_OP_BATCH_NORM: return CASES(k_batch_norm);
    case TX_OP_INSTANCE_NORM: return CASES(k_instance_norm);
    case TX_OP_LAYER_NORM: return CASES(k_layer_norm);
    case TX_OP_WHERE: return CASES(k_where);
    default: break;
    }
    switch (tx_op_family(op)) {
    case TX_FAMILY_REDUCE: return CASES(k_reduce);
    case TX_FAMILY_SOFTMAX: return CASES(k_softmax);
    case TX_FAMILY_ACT: return CASES(k_act);
    case TX_FAMILY_CAST: return CASES(k_cast);
    case TX_FAMILY_NARY: return CASES(k_variadic);
    case TX_FAMILY_UNARY: return (family_cases){k_unary, (int)TX_COUNTOF(k_unary)};
    case TX_FAMILY_CLIP: return (family_cases){k_clip, (int)TX_COUNTOF(k_clip)};
    case TX_FAMILY_BINARY: return (family_cases){k_binary, (int)TX_COUNTOF(k_binary)};
    case TX_FAMILY_MATMUL: return (family_cases){k_matmul, (int)TX_COUNTOF(k_matmul)};
    case TX_FAMILY_CONV: return (family_cases){k_conv, (int)TX_COUNTOF(k_conv)};
    case TX_FAMILY_CONV_TRANSPOSE:
        return (family_cases){k_conv_transpose, (int)TX_COUNTOF(k_conv_transpose)};
    case TX_FAMILY_POOL: return (family_cases){k_pool, (int)TX_COUNTOF(k_pool)};
    case TX_FAMILY_MOVE: return (family_cases){k_move, (int)TX_COUNTOF(k_move)};
    case TX_FAMILY_RESIZE: return (family_cases){k_resize, (int)TX_COUNTOF(k_resize)};
    default: return (family_cases){NULL, 0};
    }
}

static bool parse_case(tx_op op, const shape_case *c, tx_check_desc *d) {
    memset(d, 0, sizeof *d);
    d->op = op;
    d->attrs = c->attrs;
    d->seed = 7;
    for (int i = 0; i < TX_CHECK_MAX_INPUTS; i++)
        d->dtype[i] = c->int32 ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", c->shapes);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (d->n_inputs == TX_CHECK_MAX_INPUTS)
            return false;
        d->rank[d->n_inputs] = tx_parse_shape(tok, d->shape[d->n_inputs]);
        if (d->rank[d->n_inputs] < 0)
            return false;
        d->n_inputs++;
    }
    if (c->bias) {
        int rb = d->rank[1];
        d->rank[2] = 1;
        d->shape[2][0] = d->shape[1][d->attrs.matmul.transpose_b ? rb - 2 : rb - 1];
        if (op == TX_OP_CONV) /* [M] */
            d->shape[2][0] = d->shape[1][0];
        if (op == TX_OP_CONV_TRANSPOSE) /* [M/group · group] */
            d->shape[2][0] = d->shape[1][1] * (c->attrs.conv.group ? c->attrs.conv.group : 1);
        d->n_inputs = 3;
    }
    int arity = tx_op_arity(op);
    bool resid = op == TX_OP_CONV || op == TX_OP_CONV_TRANSPOSE || op == TX_OP_MATMUL;
    return d->n_inputs == arity || (arity == 0 && d->n_inputs >= 1) ||
           (c->bias && d->n_inputs == 3) || (resid && !c->bias && d->n_inputs == 4) ||
           ((op == TX_OP_LAYER_NORM || op == TX_OP_RESIZE) && d->n_inputs == 2);
}

typedef struct mode {
    const char *name;
    tx_ctx_desc desc;
    int calls;     /* calls per case: adaptive needs k + 1 to reach the specialized variant */
    int matmul_tm; /* > 0: only the matmul family, every size class with this row tiling */
} mode;

int main(int argc, char **argv) {
    if (argc > 1)
        tx_t.filter = argv[1];
    const mode modes[] = {
        {"generic", {.specialize_after = TX_SPECIALIZE_NEVER}, 1, 0},
        {"specialized", {.specialize_after = TX_SPECIALIZE_ALWAYS}, 1, 0},
        {"adaptive", {.specialize_after = 2}, 4, 0},
        {"adaptive-tex64", {.specialize_after = 1, .max_texture_size = 64}, 2, 0},
        /* the CPU device: the same cases against the same references, with
         * two threads so the threaded paths run too */
        {"cpu", {.device = TX_DEVICE_CPU, .cpu_threads = 2}, 2, 0},
        /* each matmul row tiling on every case (the default picks one by M and
         * device; TEXEL_TUNE may pick any), generic and specialized (adaptive
         * runs a shape's first calls with 1-row tiles) */
        {"matmul-tm1", {.specialize_after = 2}, 4, 1},
        {"matmul-tm4", {.specialize_after = TX_SPECIALIZE_NEVER}, 1, 4},
        {"matmul-tm4-specialized", {.specialize_after = TX_SPECIALIZE_ALWAYS}, 1, 4},
        {"matmul-tm8", {.specialize_after = TX_SPECIALIZE_NEVER}, 1, 8},
        {"matmul-tm8-specialized", {.specialize_after = TX_SPECIALIZE_ALWAYS}, 1, 8},
    };
    for (size_t m = 0; m < TX_COUNTOF(modes); m++) {
        tx_host *h;
        tx_ctx *ctx;
        int rc = tx_host_open(&modes[m].desc, &h, &ctx);
        if (rc == TX_HOST_NO_CONTEXT) {
            printf("no GL context: skipping the op sweep\n");
            return 77;
        }
        if (rc)
            return 1;
        for (int cls = 0; modes[m].matmul_tm && cls < TX_TUNE_CLASSES; cls++)
            if (tx_ctx_set_kernel_choice(ctx, "matmul-tm", cls, modes[m].matmul_tm)) {
                fprintf(stderr, "ops_sweep: %s\n", tx_last_error(ctx));
                return 1;
            }
        for (int op = 1; op < TX_OP_COUNT_; op++) {
            if (modes[m].matmul_tm && tx_op_family((tx_op)op) != TX_FAMILY_MATMUL)
                continue;
            family_cases fc = cases_for((tx_op)op);
            int mine = 0; /* cases for this op (a case may name one op of its family) */
            for (int ci = 0; ci < fc.n; ci++)
                mine += fc.cases[ci].op == TX_OP_NONE || fc.cases[ci].op == (tx_op)op;
            if (!mine) {
                char name[96];
                snprintf(name, sizeof name, "%s/%s", modes[m].name, tx_op_name((tx_op)op));
                if (tx_test_begin(name)) {
                    CHECK(mine > 0, "no shape case for this op");
                    tx_test_end();
                }
                continue;
            }
            for (int ci = 0; ci < fc.n; ci++) {
                char name[192];
                const shape_case *c = &fc.cases[ci];
                if ((c->op != TX_OP_NONE && c->op != (tx_op)op) ||
                    (c->big && modes[m].desc.max_texture_size))
                    continue;
                snprintf(name, sizeof name, "%s/%s/%s%s%s%s%s%s", modes[m].name,
                         tx_op_name((tx_op)op), c->shapes, c->attrs.matmul.transpose_a ? "/ta" : "",
                         c->attrs.matmul.transpose_b ? "/tb" : "", c->bias ? "/bias" : "",
                         c->label && *c->label ? "/" : "", c->label ? c->label : "");
                if (!tx_test_begin(name))
                    continue;
                tx_check_desc d;
                CHECK(parse_case((tx_op)op, c, &d), "bad case table entry");
                for (int call = 0; call < modes[m].calls && !tx_t.cur_failed; call++) {
                    d.seed = 7 + (uint64_t)call;
                    tx_check_result r;
                    tx_check_run(ctx, &d, &r);
                    CHECK(r.status == TX_STATUS_OK, "call %d: %s: %s", call,
                          tx_status_name(r.status), r.error);
                    CHECK(r.bad == 0,
                          "call %d: %lld of %lld elements out of tolerance; first at %lld: got "
                          "%.9g want %.9g (max abs err %.3g)",
                          call, (long long)r.bad, (long long)r.numel, (long long)r.first_bad,
                          (double)r.first_bad_got, (double)r.first_bad_want, r.max_abs_err);
                    free(r.call_ms);
                }
                tx_test_end();
            }
        }
        tx_stats st;
        tx_ctx_stats(ctx, &st);
        char name[96];
        snprintf(name, sizeof name, "%s/variants-used", modes[m].name);
        if (tx_test_begin(name)) {
            if (modes[m].desc.device == TX_DEVICE_CPU) {
                CHECK(st.draws == 0 && st.cpu_ops > 0,
                      "cpu mode drew %llu times and ran %llu CPU ops", (unsigned long long)st.draws,
                      (unsigned long long)st.cpu_ops);
                CHECK(st.live_host_bytes == 0, "%llu bytes of host tensors leaked",
                      (unsigned long long)st.live_host_bytes);
            } else if (modes[m].desc.specialize_after == TX_SPECIALIZE_NEVER) {
                CHECK(st.specialized_compiles == 0, "generic mode specialized %llu programs",
                      (unsigned long long)st.specialized_compiles);
            } else {
                CHECK(st.specialized_runs > 0, "no run used a specialized program");
            }
            tx_test_expect_clean(ctx);
            tx_test_end();
        }
        tx_host_close(h, ctx);
    }
    return tx_test_finish();
}
