/* The device seam: what an op's front hands a device's kernel, and the table
 * of storage and kernel functions a device provides (after ggml's backend
 * interface). The front (engine/ops/<family>.c) validates, infers the output
 * shape, normalises attributes into a tx_<family>_call, allocates the output
 * on the inputs' device and calls that device's kernel; the kernels
 * (engine/gpu/<family>.c, engine/cpu/<family>.c) only compute. */
#ifndef TX_DEVICE_H
#define TX_DEVICE_H

#include "internal.h"

/* ---- the calls: one per family, filled by its front ----
 * Slots are valid for the duration of the kernel call only. A call is never
 * made for an empty output (numel == 0). */

/* UNARY, CLIP, ACT, CAST: y = f(x) elementwise. */
typedef struct tx_unary_call {
    tx_op op;
    tx_family family;
    float lo, hi; /* CLIP: bounds (±INFINITY: open); ACT: alpha, beta; CAST: hi != 0 → 0/1 */
    tx_dtype to;  /* CAST: the output dtype */
    const tx_slot *x;
    tx_slot *y;
} tx_unary_call;

/* BINARY: y = a (op) b, numpy broadcasting over dims right-aligned to 6. */
typedef struct tx_binary_call {
    tx_op op;
    tx_dtype dtype;  /* of a, b and y */
    int64_t dims[6]; /* the output's dims, padded in front with 1 */
    int64_t sa[6];   /* a's element strides per output dim (0: broadcast) */
    int64_t sb[6];   /* b's */
    const tx_slot *a, *b;
    tx_slot *y;
} tx_binary_call;

/* The other families' calls are declared in their section below. */
typedef struct tx_matmul_call tx_matmul_call;
typedef struct tx_conv_call tx_conv_call;
typedef struct tx_pool_call tx_pool_call;
typedef struct tx_reduce_call tx_reduce_call;
typedef struct tx_softmax_call tx_softmax_call;
typedef struct tx_norm_call tx_norm_call;
typedef struct tx_nary_call tx_nary_call;
typedef struct tx_move_call tx_move_call;
typedef struct tx_resize_call tx_resize_call;

/* ---- matmul ---- */

/* MATMUL: y[b] = act(op(a[b]) × op(b[b]) + bias) for each batch b of y,
 * M×N = (M×K)·(K×N). A rank-1 a is 1×K, a rank-1 b K×1 (never transposed).
 * y is [batch..., M, N] row-major; batches are numbered row-major over bd. */
typedef struct tx_matmul_call {
    int64_t M, N, K;
    bool ta, tb;          /* a holds K×M / b holds N×K matrices */
    int64_t nbatch;       /* the product of bd */
    int64_t bd[4];        /* y's batch dims, padded in front with 1 */
    int64_t sa[4], sb[4]; /* a's / b's strides in whole matrices per batch dim (0: broadcast) */
    tx_op act;            /* a UNARY op, an ACT op, CLIP (GPU only: a 1x1 conv's), or NONE */
    float lo, hi;         /* CLIP's bounds, or the ACT op's alpha, beta */
    const tx_slot *a, *b;
    const tx_slot *bias;  /* N values added to every row, or NULL */
    bool bias_rows;       /* bias holds M values instead, one per row (a 1x1 conv's) */
    const tx_slot *resid; /* y's shape, added before act (a residual), or NULL */
    tx_slot *y;
} tx_matmul_call;

/* ---- conv, conv_transpose ---- */

/* CONV / CONV_TRANSPOSE, NCHW (1-D as H = 1), ONNX semantics, attributes
 * resolved (auto_pad, output_shape, zero strides/dilations). Conv:
 *   y[n, m, oy, ox] = act(bias[m] + Σ x[n, g·cg + ci, oy·sh - pt + ky·dh,
 *                                      ox·sw - pl + kx·dw] · w[m, ci, ky, kx])
 * (g = m / mg; out-of-range x reads 0). ConvTranspose scatters instead:
 *   y[n, g·mg + mi, iy·sh - pt + ky·dh, ix·sw - pl + kx·dw] +=
 *       x[n, ci, iy, ix] · w[ci, mi, ky, kx]     (g = ci / cg)
 * keeping what lands in [0, ho) × [0, wo), then bias, resid and act.
 * With swap_nc (tx_conv_nc_swapped: a conv, group 1, no bias, residual or
 * activation), x and wt are stored with their first two dims swapped, [c,
 * n, h, w] and [cg, m, kh, kw], and read as their transposes, and y is the
 * output transposed and cut to its first yh x yw positions, [m, n, yh, yw]. */
typedef struct tx_conv_call {
    bool transpose;
    int64_t n, c, h, w;     /* x's dims */
    int64_t m, ho, wo;      /* y: [n, m, ho, wo] */
    int64_t groups, cg, mg; /* channels per group: cg = c / groups in, mg = m / groups out */
    int kh, kw;             /* kernel */
    int sh, sw, dh, dw;     /* strides, dilations (>= 1) */
    int pt, pl;             /* begin pads (ConvTranspose: may be negative) */
    bool xa;                /* x read as x·xs + xb inside x (pads stay 0): GPU, conv only */
    float xs, xb;           /* its scale and shift */
    tx_op act;              /* NONE, a UNARY op, an ACT op, or CLIP */
    float lo, hi;           /* CLIP's bounds (±INFINITY: open), or the ACT op's alpha, beta */
    const tx_slot *x, *wt;  /* input, weights */
    const tx_slot *bias;    /* m values, or NULL */
    const tx_slot *resid;   /* y's shape, added before act (a residual), or NULL */
    bool swap_nc;           /* x, wt and y stored with their first two dims swapped */
    int yh, yw;             /* swap_nc: the positions y keeps (<= ho, wo) */
    tx_slot *y;
} tx_conv_call;

/* ---- pool ---- */

/* POOL: MaxPool / AveragePool over windows of each of the n·c planes, or the
 * global forms (g.ho = g.wo = 1, the whole plane). Windows read x at
 * (oy·sh - pt + ky·dh, ox·sw - pl + kx·dw) and skip what lies outside x; an
 * average divides by the positions read, or with include_pad by those inside
 * [-pt, h + pb) × [-pl, w + pr). A window reading nothing gives -inf (max).
 * With gy and gg set, the call is a max pool's gradient over windows that
 * tile x (stride = kernel, dilation 1, no pads): gy is the pool's output, gg
 * its gradient, and y (x's shape) gets dx = (x == gy) * gg / (the window's
 * count of x == gy), 0 where no whole window covers x. */
typedef struct tx_pool_call {
    tx_op op;
    bool global, is_max, include_pad;
    tx_window g; /* n, c, h, w, ho, wo; kernel, strides, dilations, pads (not global) */
    const tx_slot *x;
    const tx_slot *gy, *gg; /* the gradient form, or NULL */
    tx_slot *y;
} tx_pool_call;

/* ---- reduce ---- */

/* REDUCE: each output reduces R elements of x; the plan (ops/reduce.c) is x
 * canonicalised into up to 3 kept and 3 reduced groups (sizes, element
 * strides), outputs row-major over the kept groups, whatever keepdims. Also
 * ArgMax / ArgMin (int32 indices as floats). */
typedef struct tx_reduce_call {
    tx_op op;
    tx_reduce_acc acc;   /* the accumulator (noop_with_empty_axes: SUM over nothing) */
    int fin;             /* the final value, as reduce.glsl's TX_FIN: 0 s, 1 s / R, 2 sqrt(s),
                            3 max + log(sum exp), 4 the index, 5 log(s) */
    bool last;           /* ARG*: select_last_index */
    tx_reduce_plan plan; /* plan.nout == y's numel */
    const tx_slot *x;
    tx_slot *y;
} tx_reduce_call;

/* ---- softmax ---- */

/* SOFTMAX: x viewed as [A, R, B] (R: the axis, or with coerce_2d the
 * flattened trailing dims, then B = 1); softmax or log_softmax over R for
 * every (a, b). y has x's shape. */
typedef struct tx_softmax_call {
    tx_op op; /* SOFTMAX or LOG_SOFTMAX */
    int64_t A, R, B;
    const tx_slot *x;
    tx_slot *y;
} tx_softmax_call;

/* ---- norm ---- */

/* NORM: x as G groups of S contiguous elements, y = (x - mean) /
 * sqrt(var + eps) * scale + bias per group. batch_norm: mean and var are
 * inputs, per channel g % C; instance_norm: moments of the group (N·C groups
 * over the spatial dims), scale/bias per channel g % C; layer_norm (C = 1):
 * moments of the group (the dims from axis on), element s of a group takes
 * scale[s % ap] and bias[s % bp]. */
typedef struct tx_norm_call {
    tx_op op;
    float eps;       /* > 0 */
    int64_t G, S, C; /* groups, elements per group, channels */
    int64_t ap, bp;  /* layer_norm: scale / bias periods (else 1) */
    const tx_slot *x, *scale;
    const tx_slot *bias;       /* NULL: none (layer_norm without bias) */
    const tx_slot *mean, *var; /* batch_norm only, else NULL */
    tx_slot *y;
} tx_norm_call;

/* ---- nary ---- */

/* NARY: where(x0, x1, x2) (x0 != 0, NaN included, takes x1) or the fold of
 * x0..x(n-1) left to right by sum (SUM, MEAN), min (MIN_N) or max (MAX_N),
 * NaN propagating, times `scale`. Every input broadcasts numpy-style to
 * dims (right-aligned, padded in front with 1): tx_nary_strides. */
typedef struct tx_nary_call {
    tx_op op;
    int n;           /* inputs: 3 for WHERE, 1..1024 else */
    int64_t dims[6]; /* the output's dims, padded in front with 1 */
    float scale;     /* MEAN: 1 / n; else 1 */
    const tx_slot *const *xs;
    tx_slot *y;
} tx_nary_call;

/* Input s's element strides per output dim (0: broadcast). */
static inline void tx_nary_strides(const tx_slot *s, int64_t st[6]) {
    int64_t e = 1;
    for (int i = 5; i >= 0; i--) {
        int ii = i - (6 - s->rank);
        int64_t d = ii >= 0 ? s->shape[ii] : 1;
        st[i] = d == 1 ? 0 : e;
        e *= d;
    }
}

/* ---- move ---- */

/* MOVE: every output element reads one input element. Three kinds:
 *  - MAP (transpose, slice, pad, expand, tile, depth/space, split): y's
 *    elements as n dims, outermost first, d[k].od long. Element (o_k) reads
 *    x at base + sum c_k * d[k].st, where c_k = o_k, or for a `border` dim
 *    c_k = o_k * mul + off sent through the border rule `bmode` against
 *    the extent d[k].in (CONSTANT: outside any extent, y is `value`). The
 *    front has simplified the map: offsets and steps of plain dims folded
 *    into base and st, size-1 plain dims dropped, contiguous plain
 *    neighbours merged (n >= 1).
 *  - CONCAT: y as [outer, L] rows; xs[k] has rows of len_k =
 *    shape[axis] * inner elements, placed one after another in each row.
 *  - GATHER: y as [outer, nidx, inner]; element (o, j, c) reads x at
 *    (o * dim + k) * inner + c, k = indices[j] (+ dim when negative),
 *    clamped to [0, dim - 1] (dim >= 1). */
typedef enum tx_move_kind { TX_MOVE_MAP, TX_MOVE_CONCAT, TX_MOVE_GATHER } tx_move_kind;

/* Border rules; the values are move.glsl's TX_BMODE. */
typedef enum tx_move_border {
    TX_MOVE_BORDER_NONE,
    TX_MOVE_BORDER_CONSTANT,
    TX_MOVE_BORDER_REFLECT, /* mirror without repeating the edge */
    TX_MOVE_BORDER_EDGE,    /* clamp */
    TX_MOVE_BORDER_WRAP,    /* modulo */
} tx_move_border;

typedef struct tx_move_dim {
    int64_t od, mul, off, in, st;
    bool border;
} tx_move_dim;

typedef struct tx_move_call {
    tx_op op;
    tx_move_kind kind;
    /* MAP */
    int n;
    tx_move_dim d[TX_MAX_RANK];
    int64_t base;
    tx_move_border bmode; /* NONE when no dim is a border dim */
    float value;          /* CONSTANT's fill */
    /* x has dims that may change size between runs (tx_slot.vary): the
     * innermost dim's size, or some stride or the base, may change too */
    bool vary_inner, vary_align;
    /* CONCAT */
    int n_in;
    const tx_slot *const *xs; /* n_in inputs, empty ones included */
    int axis;
    int64_t inner, L;
    /* GATHER */
    int64_t dim, nidx; /* and inner */
    const tx_slot *indices;
    const tx_slot *x; /* MAP, GATHER */
    tx_slot *y;
} tx_move_call;

/* ---- resize ---- */

/* RESIZE: y's elements as n dims, outermost first (the front merged the
 * dims that are plain copies and dropped size-1 ones). A plain dim reads x
 * at o * st; a resampled dim maps o to the input coordinate by `coord`
 * (from sc, the scale, and len, the unrounded resized length in * sc), then
 * takes the nearest element (by `nearest`) or the linear (2) or cubic (4,
 * coefficient cubic_a; exclude_outside drops and renormalises taps outside
 * the input) taps, indices clamped to [0, in - 1]. Interpolating dims
 * combine their taps (cubic: at most 3 resampled dims). Arithmetic in
 * float32 in onnxruntime's order (resize.glsl). */
typedef struct tx_resize_dim {
    int64_t od, in, st;
    float sc, len;
    bool resampled;
} tx_resize_dim;

typedef struct tx_resize_call {
    tx_resize_mode mode;
    tx_resize_coord coord;
    tx_resize_nearest nearest;
    float cubic_a; /* never 0 (the default -0.75 filled in) */
    bool exclude_outside;
    int n;    /* 1..TX_MAX_RANK */
    int nres; /* resampled dims */
    tx_resize_dim d[TX_MAX_RANK];
    const tx_slot *x;
    const tx_slot *resid; /* y's shape (float32), added to y, or NULL */
    tx_slot *y;
} tx_resize_call;

/* One fused optimizer step on one parameter (engine/grad/optim.c): p' and the
 * new state from p, its gradient g and the old state, in one kernel.
 *   g' = g + coef[1] p (L2; coef[1] = 0 for AdamW)
 *   sgd:      p' = p - lr g'
 *   momentum: v' = first ? g' : mu v + g'; p' = p - lr (nesterov ? g' + mu v' : v')
 *   adam:     m' = b1 m + (1 - b1) g'; v' = b2 v + (1 - b2) g'^2;
 *             p' = keep p - lr (m' inv_c1) / (sqrt(v' inv_c2) + eps)
 * coef = {lr, l2, mu or b1, b2, eps, inv_c1, inv_c2, keep}; on the GPU also
 * in the 2-texel tensor `coefs`, read as data, so that a step count changing
 * every step does not make every step a new program. */
typedef struct tx_optim_call {
    int kind; /* 0 sgd, 1 momentum, 2 adam */
    bool nesterov, first;
    float coef[8];
    const tx_slot *p, *g, *s1, *s2, *coefs; /* s1, s2: NULL where the kind has none */
    tx_slot *y, *s1_out, *s2_out;           /* y: p' */
} tx_optim_call;

/* ---- the device table ---- */

typedef struct tx_device_i {
    const char *name; /* "gpu", "cpu" */
    /* Storage for `numel` elements (int32 values are stored as floats on
     * every device). On failure: a status with the message set. */
    tx_status (*alloc)(tx_ctx *ctx, const char *op, int64_t numel, tx_storage *st);
    void (*release)(tx_ctx *ctx, tx_storage *st);
    /* numel values in: floats, or half bit patterns (uint16_t) when `half`;
     * `vals` NULL writes zeros. */
    tx_status (*write)(tx_ctx *ctx, const char *op, tx_storage *st, const void *vals, bool half,
                       int64_t numel);
    /* numel floats out. */
    tx_status (*read)(tx_ctx *ctx, const char *op, const tx_storage *st, float *vals,
                      int64_t numel);
    /* Kernels; NULL: the family does not run on this device. */
    tx_status (*unary)(tx_ctx *ctx, const tx_unary_call *c);
    tx_status (*binary)(tx_ctx *ctx, const tx_binary_call *c);
    tx_status (*matmul)(tx_ctx *ctx, const tx_matmul_call *c);
    tx_status (*conv)(tx_ctx *ctx, const tx_conv_call *c);
    tx_status (*pool)(tx_ctx *ctx, const tx_pool_call *c);
    tx_status (*reduce)(tx_ctx *ctx, const tx_reduce_call *c);
    tx_status (*softmax)(tx_ctx *ctx, const tx_softmax_call *c);
    tx_status (*norm)(tx_ctx *ctx, const tx_norm_call *c);
    tx_status (*nary)(tx_ctx *ctx, const tx_nary_call *c);
    tx_status (*move)(tx_ctx *ctx, const tx_move_call *c);
    tx_status (*resize)(tx_ctx *ctx, const tx_resize_call *c);
    tx_status (*optim)(tx_ctx *ctx, const tx_optim_call *c);
} tx_device_i;

extern const tx_device_i tx_gpu_device; /* engine/gpu/device.c */
extern const tx_device_i tx_cpu_device; /* engine/cpu/device.c */

/* The table of a (resolved, never DEFAULT) device. */
const tx_device_i *tx_device_of(tx_device dev);

/* The device an op runs on: that of its inputs (NULL entries skipped), which
 * must all agree, else TX_STATUS_DEVICE_MISMATCH naming them. With no input,
 * the context's default. GPU inputs left as a matmul's row tiles
 * (tx_phases) are made row-major first (tx_gpu_flatten), but for those whose
 * bit is set in `keep`: their kernel takes them as they are, or flattens them. */
tx_status tx_op_device_keep(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n,
                            unsigned keep, tx_device *out);
tx_status tx_op_device(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n,
                       tx_device *out);

/* Numpy broadcasting of shapes a (rank ra) and b (rank rb), right-aligned
 * and padded in front with 1 to p dims: pa, pb the padded shapes, dims the
 * result's, sa / sb each operand's strides per dim (in units of its
 * innermost dim; 0 where it broadcasts). Returns the first (leftmost)
 * padded dim where they do not broadcast, else -1. */
int tx_broadcast(int p, int ra, const int64_t *a, int rb, const int64_t *b, int64_t *pa,
                 int64_t *pb, int64_t *dims, int64_t *sa, int64_t *sb);

/* tx_op_device, then the output tensor y (rank, shape, dtype) on that
 * device. The alloc may move slots: fetch them again after it. */
tx_status tx_op_output(tx_ctx *ctx, const char *op, const tx_slot *const *ins, int n, int rank,
                       const int64_t *shape, tx_dtype dtype, tx_device *dev, tx_tensor *y);

/* tx_op_output over n input tensors; on success *slots is their slot array,
 * fetched after the alloc, which the caller frees. */
tx_status tx_op_output_n(tx_ctx *ctx, const char *op, const tx_tensor *ins, int n, int rank,
                         const int64_t *shape, tx_dtype dtype, tx_device *dev, tx_tensor *y,
                         const tx_slot ***slots);

/* Runs `kernel` of device dev on call c, or nothing when c's output is
 * empty; the status. */
#define TX_OP_KERNEL(ctx, dev, kernel, c)                                                          \
    ((c).y->numel > 0 ? tx_device_of(dev)->kernel(ctx, &(c)) : TX_STATUS_OK)

/* The end every op front shares: on failure the output is destroyed and the
 * status returned; on success *out = y. */
tx_status tx_op_finish(tx_ctx *ctx, tx_status st, tx_tensor y, tx_tensor *out);

/* The GPU draw tail: picks (compiling when needed) and binds the program for
 * `req`, sets its parameters and draws it over `outs`. In a warm-up pass
 * (ctx->compile_only) it only starts the program's compile. */
tx_status tx_gpu_run(tx_ctx *ctx, const char *op, const tx_program_req *req,
                     const tx_texture *const *ins, int n_in, const tx_texture *const *outs,
                     int n_out);

#endif
