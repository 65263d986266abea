/* MOVE family front (ONNX semantics): every output element reads one input
 * element at an index computed from its coordinates, so every op is one of
 * three kinds of tx_move_call (device.h):
 *
 *  - map: transpose, slice, pad, expand, tile, depth/space and split are all
 *    "output dim d walks input stride st_d, from an offset, with a step,
 *    maybe through a border rule" (move_map below). The front merges dims
 *    that stay contiguous, so a slice of [N, C, H, W] along C is a 3-dim
 *    map; split is one map per output.
 *  - concat: rows of the inputs placed side by side.
 *  - gather: indices are data (int32 tensor); out-of-range ones are clamped,
 *    as texel.h documents, since a shader cannot report them.
 *
 * Identity, flatten, squeeze and unsqueeze are views on either device.
 * Kernels in engine/gpu/move.c and engine/cpu/move.c. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "../device.h"
#include "../split.h"

/* Output dim d (outermost first) reads input coordinate c = o * mul + off
 * (through the border rule when `border`, against extent `in`) at stride st. */
typedef tx_move_dim move_dim;

typedef struct move_map {
    int n;
    move_dim d[TX_MAX_RANK];
    tx_move_border bmode;
    float value;
    /* x's dims may change size between runs (tx_slot.vary): per output dim,
     * whether its size (vod) or its stride (vst) may */
    bool vary;
    bool vod[TX_MAX_RANK], vst[TX_MAX_RANK];
    bool vary_inner, vary_align; /* map_simplify's verdict for the kernel */
} move_map;

/* The vary flags of a map whose output dim i reads x's dim perm[i] (i
 * without perm) at x's own strides. */
static void map_vary_from(move_map *m, const tx_slot *xs, const int *perm) {
    m->vary = xs->vary != 0;
    for (int i = 0; m->vary && i < xs->rank; i++) {
        int k = perm ? perm[i] : i;
        m->vod[i] = xs->vary >> k & 1;
        m->vst[i] = (xs->vary >> (k + 1)) != 0;
    }
}

static void strides_of(int rank, const int64_t *shape, int64_t *st) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= shape[i];
    }
}

static int norm_axis(int axis, int rank) {
    return axis < 0 ? axis + rank : axis;
}

static const char *dtype_name(tx_dtype t) {
    return t == TX_DTYPE_INT32 ? "int32" : "float32";
}

/* Starts a map that copies x as is: output dim i = input dim i. */
static void map_identity(move_map *m, const tx_slot *xs) {
    memset(m, 0, sizeof *m);
    int64_t st[TX_MAX_RANK];
    strides_of(xs->rank, xs->shape, st);
    m->n = xs->rank;
    for (int i = 0; i < xs->rank; i++)
        m->d[i] = (move_dim){.od = xs->shape[i], .mul = 1, .in = xs->shape[i], .st = st[i]};
    map_vary_from(m, xs, NULL);
}

/* Simplified form for the shader: offsets and steps of plain dims folded
 * into strides and a base, size-1 plain dims dropped, contiguous neighbours
 * merged. Returns the base index. With varying dims (m->vary) only what holds
 * for every size: a dim whose size varies is never dropped, and neighbours
 * merge only where neither stride nor the inner one's size varies (so a
 * sequence of 1 does not merge what a longer one keeps apart). */
static int64_t map_simplify(move_map *m) {
    int64_t base = 0;
    move_dim out[TX_MAX_RANK];
    bool vod[TX_MAX_RANK] = {false}, vst[TX_MAX_RANK] = {false};
    int n = 0;
    for (int i = 0; i < m->n; i++) {
        move_dim d = m->d[i];
        bool dvod = m->vary && m->vod[i], dvst = m->vary && m->vst[i];
        if (!d.border) {
            base += d.off * d.st;
            d.st *= d.mul;
            d.mul = 1;
            d.off = 0;
            d.in = d.od;
            if (d.od == 1 && !dvod)
                continue;
            if (n > 0 && !out[n - 1].border && out[n - 1].st == d.od * d.st &&
                !(m->vary && (vst[n - 1] || dvst || dvod))) {
                out[n - 1].od *= d.od;
                out[n - 1].st = d.st;
                out[n - 1].in = out[n - 1].od;
                vst[n - 1] = dvst;
                continue;
            }
        }
        vod[n] = dvod, vst[n] = dvst;
        out[n++] = d;
    }
    if (n == 0)
        out[n++] = (move_dim){.od = 1, .mul = 1, .in = 1};
    memcpy(m->d, out, sizeof out);
    m->n = n;
    bool any_vst = false;
    for (int i = 0; i < n; i++)
        any_vst |= vst[i];
    m->vary_inner = m->vary && vod[n - 1];
    m->vary_align = m->vary && (any_vst || m->vary_inner);
    return base;
}

/* Allocates the output of shape oshape on x's device and runs map m into it. */
static tx_status map_run(tx_ctx *ctx, tx_op op, tx_tensor x, int rank, const int64_t *oshape,
                         const move_map *m, tx_tensor *out) {
    const char *name = tx_op_name(op);
    tx_slot *xs = tx_slot_get(ctx, x);
    tx_device dev;
    tx_tensor y;
    tx_status st =
        tx_op_output(ctx, name, (const tx_slot *[]){xs}, 1, rank, oshape, xs->dtype, &dev, &y);
    if (st)
        return st;
    move_map s = *m;
    tx_move_call c = {.op = op,
                      .kind = TX_MOVE_MAP,
                      .base = map_simplify(&s),
                      .value = s.value,
                      .x = tx_slot_get(ctx, x),
                      .y = tx_slot_get(ctx, y)};
    c.n = s.n;
    c.vary_inner = s.vary_inner;
    c.vary_align = s.vary_align;
    memcpy(c.d, s.d, sizeof c.d);
    for (int k = 0; k < s.n; k++)
        if (s.d[k].border)
            c.bmode = s.bmode;
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, move, c), y, out);
}

/* Common argument checks: ctx, out, context, the input tensor. */
static tx_status check_args(tx_ctx *ctx, const char *name, tx_tensor x, const void *out,
                            tx_slot **xs) {
    return tx_check_out_tensor(ctx, name, out, "x", x, xs);
}

static tx_status fail_shape(tx_ctx *ctx, tx_status s, const char *name, const tx_slot *xs,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* "<op>: <why> (x <shape>)" */
static tx_status fail_shape(tx_ctx *ctx, tx_status s, const char *name, const tx_slot *xs,
                            const char *fmt, ...) {
    char x[160], why[320];
    tx_shape_str(x, sizeof x, xs->rank, xs->shape);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tx_fail(ctx, s, "%s: %s (x %s)", name, why, x);
}

tx_status tx_identity(tx_ctx *ctx, tx_tensor x, tx_tensor *out) {
    tx_slot *xs;
    tx_status st = check_args(ctx, "identity", x, out, &xs);
    if (st)
        return st;
    return tx_tensor_reshape(ctx, x, xs->rank, xs->shape, out);
}

tx_status tx_flatten(tx_ctx *ctx, tx_tensor x, int axis, tx_tensor *out) {
    tx_slot *xs;
    tx_status st = check_args(ctx, "flatten", x, out, &xs);
    if (st)
        return st;
    int a = axis < 0 ? axis + xs->rank : axis;
    if (a < 0 || a > xs->rank)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "flatten", xs,
                          "axis %d is outside [-%d, %d]", axis, xs->rank, xs->rank);
    int64_t shape[2] = {1, 1};
    for (int i = 0; i < xs->rank; i++)
        shape[i >= a] *= xs->shape[i];
    return tx_tensor_reshape(ctx, x, 2, shape, out);
}

tx_status tx_squeeze(tx_ctx *ctx, tx_tensor x, const int *axes, int n_axes, tx_tensor *out) {
    tx_slot *xs;
    tx_status st = check_args(ctx, "squeeze", x, out, &xs);
    if (st)
        return st;
    if (n_axes < 0 || n_axes > xs->rank || (n_axes > 0 && !axes))
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "squeeze", xs, "%d axes (or NULL axes)",
                          n_axes);
    bool drop[TX_MAX_RANK] = {false};
    for (int i = 0; i < xs->rank; i++)
        drop[i] = n_axes == 0 && xs->shape[i] == 1;
    for (int i = 0; i < n_axes; i++) {
        int a = norm_axis(axes[i], xs->rank);
        if (a < 0 || a >= xs->rank || drop[a] || xs->shape[a] != 1)
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "squeeze", xs,
                              "axes[%d] = %d is out of range, repeated or not a dim of 1", i,
                              axes[i]);
        drop[a] = true;
    }
    int64_t shape[TX_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < xs->rank; i++)
        if (!drop[i])
            shape[rank++] = xs->shape[i];
    return tx_tensor_reshape(ctx, x, rank, shape, out);
}

tx_status tx_unsqueeze(tx_ctx *ctx, tx_tensor x, const int *axes, int n_axes, tx_tensor *out) {
    tx_slot *xs;
    tx_status st = check_args(ctx, "unsqueeze", x, out, &xs);
    if (st)
        return st;
    int rank = xs->rank + n_axes;
    if (n_axes < 0 || (n_axes > 0 && !axes) || rank > TX_MAX_RANK)
        return fail_shape(
            ctx, rank > TX_MAX_RANK ? TX_STATUS_RANK_TOO_HIGH : TX_STATUS_INVALID_ARGUMENT,
            "unsqueeze", xs, "%d axes give rank %d (max %d)", n_axes, rank, TX_MAX_RANK);
    bool one[TX_MAX_RANK] = {false};
    for (int i = 0; i < n_axes; i++) {
        int a = norm_axis(axes[i], rank);
        if (a < 0 || a >= rank || one[a])
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "unsqueeze", xs,
                              "axes[%d] = %d is out of range or repeated", i, axes[i]);
        one[a] = true;
    }
    int64_t shape[TX_MAX_RANK];
    for (int i = 0, k = 0; i < rank; i++)
        shape[i] = one[i] ? 1 : xs->shape[k++];
    return tx_tensor_reshape(ctx, x, rank, shape, out);
}

/* Transposes the view `shape` (rank dims) of x's storage by perm. */
static tx_status transpose_view(tx_ctx *ctx, tx_op op, tx_tensor x, int rank, const int64_t *shape,
                                const int *perm, int orank, const int64_t *oshape, tx_tensor *out) {
    int64_t st[TX_MAX_RANK];
    strides_of(rank, shape, st);
    move_map m = {.n = rank};
    for (int i = 0; i < rank; i++)
        m.d[i] =
            (move_dim){.od = shape[perm[i]], .mul = 1, .in = shape[perm[i]], .st = st[perm[i]]};
    const tx_slot *xs = tx_slot_get(ctx, x);
    if (xs->rank == rank && !memcmp(xs->shape, shape, sizeof(int64_t) * (size_t)rank))
        map_vary_from(&m, xs, perm);
    return map_run(ctx, op, x, orank, oshape, &m, out);
}

static tx_status transpose_run(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out) {
    const char *name = "transpose";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    int p[TX_MAX_RANK], rank = xs->rank;
    bool seen[TX_MAX_RANK] = {false};
    for (int i = 0; i < rank; i++) {
        p[i] = perm ? perm[i] : rank - 1 - i;
        if (p[i] < 0 || p[i] >= rank || seen[p[i]])
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                              "perm[%d] = %d is out of range or repeated", i, p[i]);
        seen[p[i]] = true;
    }
    if (xs->st->n_parts)
        return tx_split_transpose(ctx, x, p, out);
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < rank; i++)
        oshape[i] = xs->shape[p[i]];
    return transpose_view(ctx, TX_OP_TRANSPOSE, x, rank, xs->shape, p, rank, oshape, out);
}

int64_t tx_slice_dim(int64_t dim, int64_t start, int64_t end, int64_t *step, int64_t *first) {
    int64_t sp = *step > dim + 1 ? dim + 1 : (*step < -(dim + 1) ? -(dim + 1) : *step);
    int64_t b = start < 0 ? (start < -dim ? -1 : start + dim) : start;
    int64_t e = end < 0 ? (end < -dim ? -1 : end + dim) : end;
    int64_t len;
    if (sp > 0) {
        b = b < 0 ? 0 : (b > dim ? dim : b);
        e = e < 0 ? 0 : (e > dim ? dim : e);
        len = e > b ? (e - b + sp - 1) / sp : 0;
    } else {
        b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
        e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
        len = b > e ? (b - e - sp - 1) / -sp : 0;
    }
    if (dim == 0)
        len = 0;
    *step = sp;
    *first = len > 0 ? b : 0;
    return len;
}

static tx_status slice_run(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out) {
    const char *name = "slice";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (!desc)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "slice: desc is NULL");
    if (desc->n < 0 || desc->n > xs->rank)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                          "%d entries for a rank-%d tensor", desc->n, xs->rank);
    if (xs->st->n_parts)
        return tx_split_slice(ctx, x, desc, out);
    move_map m;
    map_identity(&m, xs);
    int64_t oshape[TX_MAX_RANK];
    memcpy(oshape, xs->shape, sizeof oshape);
    bool seen[TX_MAX_RANK] = {false};
    for (int i = 0; i < desc->n; i++) {
        int64_t a = desc->has_axes ? desc->axes[i] : i;
        if (a < 0)
            a += xs->rank;
        if (a < 0 || a >= xs->rank || seen[a])
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                              "axes[%d] = %lld is out of range or repeated", i,
                              (long long)(desc->has_axes ? desc->axes[i] : i));
        seen[a] = true;
        int64_t dim = xs->shape[a], step = desc->steps[i] ? desc->steps[i] : 1, first;
        int64_t len = tx_slice_dim(dim, desc->starts[i], desc->ends[i], &step, &first);
        oshape[a] = len;
        m.d[a].od = len;
        m.d[a].mul = step;
        m.d[a].off = first;
    }
    return map_run(ctx, TX_OP_SLICE, x, xs->rank, oshape, &m, out);
}

static tx_status pad_run(tx_ctx *ctx, tx_tensor x, const tx_pad_desc *desc, tx_tensor *out) {
    const char *name = "pad";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (!desc)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "pad: desc is NULL");
    if ((unsigned)desc->mode >= TX_PAD_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "pad: unknown mode %d", (int)desc->mode);
    move_map m;
    map_identity(&m, xs);
    m.bmode = (tx_move_border)(TX_MOVE_BORDER_CONSTANT + (int)desc->mode);
    m.value = xs->dtype == TX_DTYPE_INT32 ? truncf(desc->value) : desc->value;
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        int64_t b = desc->begin[i], e = desc->end[i], dim = xs->shape[i];
        if (b < -dim || e < -dim || dim + b + e < 0)
            return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                              "dim %d: pads %lld, %lld crop more than the dim holds", i,
                              (long long)b, (long long)e);
        if (dim == 0 && dim + b + e > 0 && desc->mode != TX_PAD_CONSTANT)
            return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                              "dim %d is empty: only constant mode can pad it", i);
        if (b > INT_MAX / 4 || e > INT_MAX / 4)
            return fail_shape(ctx, TX_STATUS_TOO_LARGE, name, xs, "pads %lld, %lld are too large",
                              (long long)b, (long long)e);
        oshape[i] = dim + b + e;
        m.d[i].od = oshape[i];
        m.d[i].off = -b;
        m.d[i].border = b > 0 || e > 0;
    }
    return map_run(ctx, TX_OP_PAD, x, xs->rank, oshape, &m, out);
}

static tx_status expand_run(tx_ctx *ctx, tx_tensor x, int rank, const int64_t *shape,
                            tx_tensor *out) {
    const char *name = "expand";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (rank < 0 || rank > TX_MAX_RANK || (rank > 0 && !shape))
        return fail_shape(ctx,
                          rank > TX_MAX_RANK ? TX_STATUS_RANK_TOO_HIGH : TX_STATUS_INVALID_ARGUMENT,
                          name, xs, "target rank %d (max %d) or NULL shape", rank, TX_MAX_RANK);
    int orank = rank > xs->rank ? rank : xs->rank;
    int64_t oshape[TX_MAX_RANK], st_in[TX_MAX_RANK];
    strides_of(xs->rank, xs->shape, st_in);
    move_map m = {.n = orank};
    for (int i = 0; i < orank; i++) {
        int ix = i - (orank - xs->rank), is = i - (orank - rank);
        int64_t dx = ix >= 0 ? xs->shape[ix] : 1, ds = is >= 0 ? shape[is] : 1;
        if (ds < 0 || (dx != ds && dx != 1 && ds != 1)) {
            char a[160], b[160];
            tx_shape_str(a, sizeof a, xs->rank, xs->shape);
            tx_shape_str(b, sizeof b, rank, shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "expand: x %s does not broadcast to %s (dim %d)", a, b, i);
        }
        oshape[i] = dx == 1 ? ds : dx;
        m.d[i] =
            (move_dim){.od = oshape[i], .mul = 1, .in = oshape[i], .st = dx == 1 ? 0 : st_in[ix]};
    }
    return map_run(ctx, TX_OP_EXPAND, x, orank, oshape, &m, out);
}

static tx_status tile_run(tx_ctx *ctx, tx_tensor x, const int64_t *repeats, tx_tensor *out) {
    const char *name = "tile";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (!repeats && xs->rank > 0)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tile: repeats is NULL");
    move_map m;
    map_identity(&m, xs);
    m.bmode = TX_MOVE_BORDER_WRAP;
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        if (repeats[i] < 0 || (repeats[i] > 0 && xs->shape[i] > INT64_MAX / 16 / repeats[i]))
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                              "repeats[%d] = %lld is negative or too large", i,
                              (long long)repeats[i]);
        oshape[i] = xs->shape[i] * repeats[i];
        m.d[i].od = oshape[i];
        m.d[i].border = repeats[i] > 1;
    }
    return map_run(ctx, TX_OP_TILE, x, xs->rank, oshape, &m, out);
}

/* Depth/space: a transpose of 6-dim views of x and y. */
static tx_status depth_space(tx_ctx *ctx, tx_op op, tx_tensor x, int b, bool to_space,
                             tx_depth_mode mode, tx_tensor *out) {
    const char *name = tx_op_name(op);
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if ((unsigned)mode >= TX_DEPTH_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: unknown mode %d", name, (int)mode);
    if (b < 1)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs, "blocksize %d < 1", b);
    if (xs->rank != 4)
        return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                          "x must be [N, C, H, W], has rank %d", xs->rank);
    int64_t N = xs->shape[0], C = xs->shape[1], H = xs->shape[2], W = xs->shape[3];
    int64_t v[6], o[4];
    int perm[6];
    if (to_space) {
        if (C % ((int64_t)b * b))
            return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                              "C is not a multiple of blocksize^2 = %d", b * b);
        int64_t c = C / b / b;
        if (mode == TX_DEPTH_DCR) { /* [N, b, b, c, H, W] -> [N, c, H, b, W, b] */
            int64_t vv[6] = {N, b, b, c, H, W};
            int pp[6] = {0, 3, 4, 1, 5, 2};
            memcpy(v, vv, sizeof v);
            memcpy(perm, pp, sizeof perm);
        } else { /* CRD: [N, c, b, b, H, W] -> [N, c, H, b, W, b] */
            int64_t vv[6] = {N, c, b, b, H, W};
            int pp[6] = {0, 1, 4, 2, 5, 3};
            memcpy(v, vv, sizeof v);
            memcpy(perm, pp, sizeof perm);
        }
        o[0] = N, o[1] = c, o[2] = H * b, o[3] = W * b;
    } else {
        if (H % b || W % b)
            return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                              "H and W must be multiples of blocksize %d", b);
        /* [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b] */
        int64_t vv[6] = {N, C, H / b, b, W / b, b};
        int pp[6] = {0, 3, 5, 1, 2, 4};
        memcpy(v, vv, sizeof v);
        memcpy(perm, pp, sizeof perm);
        o[0] = N, o[1] = C * b * b, o[2] = H / b, o[3] = W / b;
    }
    return transpose_view(ctx, op, x, 6, v, perm, 4, o, out);
}

static void note(tx_ctx *ctx, tx_status st, tx_op op, const tx_tensor *ins, int n,
                 const tx_op_attrs *a, const tx_tensor *out);

tx_status tx_depth_to_space(tx_ctx *ctx, tx_tensor x, int blocksize, tx_depth_mode mode,
                            tx_tensor *out) {
    tx_status st = depth_space(ctx, TX_OP_DEPTH_TO_SPACE, x, blocksize, true, mode, out);
    note(ctx, st, TX_OP_DEPTH_TO_SPACE, &x, 1,
         &(tx_op_attrs){.move = {.blocksize = blocksize, .depth_mode = mode}}, out);
    return st;
}

tx_status tx_space_to_depth(tx_ctx *ctx, tx_tensor x, int blocksize, tx_tensor *out) {
    tx_status st = depth_space(ctx, TX_OP_SPACE_TO_DEPTH, x, blocksize, false, TX_DEPTH_DCR, out);
    note(ctx, st, TX_OP_SPACE_TO_DEPTH, &x, 1, &(tx_op_attrs){.move = {.blocksize = blocksize}},
         out);
    return st;
}

static tx_status split_run(tx_ctx *ctx, tx_tensor x, int axis, const int64_t *split, int n,
                           tx_tensor *outs) {
    const char *name = "split";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, outs, &xs);
    if (st)
        return st;
    int a = norm_axis(axis, xs->rank);
    if (a < 0 || a >= xs->rank)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                          "axis %d is out of range for rank %d", axis, xs->rank);
    if (n < 1)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs, "%d outputs", n);
    int64_t dim = xs->shape[a], sum = 0;
    for (int i = 0; i < n; i++) {
        if (split && split[i] < 0)
            return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                              "split[%d] = %lld is negative", i, (long long)split[i]);
        sum += split ? split[i] : 0;
    }
    if (split && sum != dim)
        return fail_shape(ctx, TX_STATUS_SHAPE_MISMATCH, name, xs,
                          "split sizes sum to %lld, axis %d has %lld", (long long)sum, a,
                          (long long)dim);
    int64_t part = (dim + n - 1) / n, at = 0;
    tx_tensor *made = malloc((size_t)n * sizeof *made);
    if (!made)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "split: out of host memory");
    for (int i = 0; i < n; i++) {
        int64_t len = split ? split[i] : (at + part <= dim ? part : dim - at);
        move_map m;
        map_identity(&m, xs);
        m.d[a].od = len;
        m.d[a].off = at;
        int64_t oshape[TX_MAX_RANK];
        memcpy(oshape, xs->shape, sizeof oshape);
        oshape[a] = len;
        tx_tensor y;
        st = map_run(ctx, TX_OP_SPLIT, x, xs->rank, oshape, &m, &y);
        if (st) {
            for (int j = 0; j < i; j++)
                tx_tensor_destroy(ctx, made[j]);
            free(made);
            return st;
        }
        xs = tx_slot_get(ctx, x);
        made[i] = y;
        at += len;
    }
    memcpy(outs, made, (size_t)n * sizeof *made);
    free(made);
    return TX_STATUS_OK;
}

static tx_status concat_run(tx_ctx *ctx, const tx_tensor *xs_in, int n, int axis, tx_tensor *out) {
    const char *name = "concat";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!xs_in || n < 1)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "concat: %s",
                       !xs_in ? "xs is NULL" : "needs at least one input");
    tx_slot *s0;
    tx_status st = check_args(ctx, name, xs_in[0], out, &s0);
    if (st)
        return st;
    int rank = s0->rank, a = norm_axis(axis, rank);
    if (a < 0 || a >= rank)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, s0,
                          "axis %d is out of range for rank %d", axis, rank);
    int64_t oshape[TX_MAX_RANK];
    memcpy(oshape, s0->shape, sizeof oshape);
    oshape[a] = 0;
    bool any_split = false;
    for (int i = 0; i < n; i++) {
        tx_slot *s;
        char arg[32];
        snprintf(arg, sizeof arg, "xs[%d]", i);
        st = tx_check_tensor(ctx, name, arg, xs_in[i], &s);
        if (st)
            return st;
        if (s->dtype != s0->dtype)
            return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "concat: xs[0] is %s, xs[%d] is %s",
                           dtype_name(s0->dtype), i, dtype_name(s->dtype));
        bool ok = s->rank == rank;
        for (int d = 0; ok && d < rank; d++)
            ok = d == a || s->shape[d] == s0->shape[d];
        if (!ok) {
            char p[160], q[160];
            tx_shape_str(p, sizeof p, rank, s0->shape);
            tx_shape_str(q, sizeof q, s->rank, s->shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "concat: xs[0] %s and xs[%d] %s differ outside axis %d", p, i, q, a);
        }
        oshape[a] += s->shape[a];
        any_split |= s->st->n_parts > 0;
    }
    if (n == 1)
        return tx_tensor_reshape(ctx, xs_in[0], rank, s0->shape, out);
    int64_t total = 1;
    for (int d = 0; d < rank; d++)
        total *= oshape[d];
    s0 = tx_slot_get(ctx, xs_in[0]);
    if (any_split || tx_needs_split(ctx, s0->st->dev, total))
        return tx_split_concat(ctx, xs_in, n, a, out);
    int64_t inner = 1;
    for (int d = a + 1; d < rank; d++)
        inner *= oshape[d];
    tx_device dev;
    tx_tensor y = {0};
    const tx_slot **slots;
    st = tx_op_output_n(ctx, name, xs_in, n, rank, oshape, s0->dtype, &dev, &y, &slots);
    if (st)
        return st;
    tx_move_call c = {.op = TX_OP_CONCAT,
                      .kind = TX_MOVE_CONCAT,
                      .n_in = n,
                      .xs = slots,
                      .axis = a,
                      .inner = inner,
                      .L = oshape[a] * inner,
                      .y = tx_slot_get(ctx, y)};
    st = TX_OP_KERNEL(ctx, dev, move, c);
    free(slots);
    return tx_op_finish(ctx, st, y, out);
}

static tx_status gather_run(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out) {
    const char *name = "gather";
    tx_slot *xs, *is;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (!st)
        st = tx_check_tensor(ctx, name, "indices", indices, &is);
    if (st)
        return st;
    if (is->dtype != TX_DTYPE_INT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "gather: indices must be int32, not %s",
                       dtype_name(is->dtype));
    int a = norm_axis(axis, xs->rank);
    if (a < 0 || a >= xs->rank)
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, name, xs,
                          "axis %d is out of range for rank %d", axis, xs->rank);
    if (xs->st->n_parts || is->st->n_parts)
        return tx_split_gather(ctx, x, indices, axis, out);
    int orank = xs->rank - 1 + is->rank;
    if (orank > TX_MAX_RANK) {
        char p[160], q[160];
        tx_shape_str(p, sizeof p, xs->rank, xs->shape);
        tx_shape_str(q, sizeof q, is->rank, is->shape);
        return tx_fail(ctx, TX_STATUS_RANK_TOO_HIGH,
                       "gather: x %s with indices %s gives rank %d > %d", p, q, orank, TX_MAX_RANK);
    }
    int64_t oshape[TX_MAX_RANK], inner = 1;
    int k = 0;
    for (int d = 0; d < a; d++)
        oshape[k++] = xs->shape[d];
    for (int d = 0; d < is->rank; d++)
        oshape[k++] = is->shape[d];
    for (int d = a + 1; d < xs->rank; d++) {
        oshape[k++] = xs->shape[d];
        inner *= xs->shape[d];
    }
    int64_t dim = xs->shape[a], ynumel = 1;
    for (int d = 0; d < orank; d++)
        ynumel *= oshape[d];
    if (tx_needs_split(ctx, xs->st->dev, ynumel))
        return tx_split_gather(ctx, x, indices, axis, out);
    bool empty = false; /* y has no element */
    for (int d = 0; d < orank; d++)
        empty = empty || oshape[d] == 0;
    if (!empty && dim == 0) {
        char p[160];
        tx_shape_str(p, sizeof p, xs->rank, xs->shape);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "gather: axis %d of x %s is empty: no index can be valid", a, p);
    }
    tx_device dev;
    tx_tensor y;
    st =
        tx_op_output(ctx, name, (const tx_slot *[]){xs, is}, 2, orank, oshape, xs->dtype, &dev, &y);
    if (st)
        return st;
    tx_move_call c = {.op = TX_OP_GATHER,
                      .kind = TX_MOVE_GATHER,
                      .inner = inner,
                      .dim = dim,
                      .x = tx_slot_get(ctx, x),
                      .indices = tx_slot_get(ctx, indices),
                      .y = tx_slot_get(ctx, y)};
    c.nidx = c.indices->numel;
    return tx_op_finish(ctx, TX_OP_KERNEL(ctx, dev, move, c), y, out);
}

tx_status tx_move_run(tx_ctx *ctx, tx_op op, const tx_tensor *in, int n_in,
                      const tx_op_attrs *attrs, tx_tensor *outs, int n_outs) {
    const tx_op_attrs a = attrs ? *attrs : (tx_op_attrs){0};
    switch (op) {
    case TX_OP_IDENTITY: return tx_identity(ctx, in[0], outs);
    case TX_OP_TRANSPOSE:
        if (a.move.n_perm) {
            tx_slot *xs;
            tx_status st = tx_check_tensor(ctx, "transpose", "x", in[0], &xs);
            if (st)
                return st;
            if (a.move.n_perm != xs->rank)
                return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "transpose", xs,
                                  "perm has %d entries, x has rank %d", a.move.n_perm, xs->rank);
        }
        return tx_transpose(ctx, in[0], a.move.n_perm ? a.move.perm : NULL, outs);
    case TX_OP_SLICE: return tx_slice(ctx, in[0], &a.move.slice, outs);
    case TX_OP_PAD: return tx_pad(ctx, in[0], &a.move.pad, outs);
    case TX_OP_EXPAND: return tx_expand(ctx, in[0], a.move.rank, a.move.shape, outs);
    case TX_OP_TILE: return tx_tile(ctx, in[0], a.move.repeats, outs);
    case TX_OP_DEPTH_TO_SPACE:
        return tx_depth_to_space(ctx, in[0], a.move.blocksize, a.move.depth_mode, outs);
    case TX_OP_SPACE_TO_DEPTH: return tx_space_to_depth(ctx, in[0], a.move.blocksize, outs);
    case TX_OP_SPLIT: {
        bool sized = false;
        for (int i = 0; i < n_outs && i < (int)TX_COUNTOF(a.move.split); i++)
            sized = sized || a.move.split[i] != 0;
        if (sized && n_outs > (int)TX_COUNTOF(a.move.split))
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                           "split: attrs hold sizes for at most %d outputs",
                           (int)TX_COUNTOF(a.move.split));
        return tx_split(ctx, in[0], a.move.axis, sized ? a.move.split : NULL, n_outs, outs);
    }
    case TX_OP_CONCAT: return tx_concat(ctx, in, n_in, a.move.axis, outs);
    case TX_OP_GATHER: return tx_gather(ctx, in[0], in[1], a.move.axis, outs);
    default: break;
    }
    return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_op_run: %s is not a move op",
                   tx_op_name(op));
}

tx_status tx_transpose(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out) {
    tx_status st = transpose_run(ctx, x, perm, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs at = {0};
        const tx_slot *ys = tx_slot_get(ctx, *out);
        for (int i = 0; perm && i < ys->rank; i++)
            at.move.perm[at.move.n_perm++] = perm[i];
        tx_tape_note(ctx, TX_OP_TRANSPOSE, &x, 1, &at, NULL, *out, (tx_tensor){0});
    }
    return st;
}

/* ---- the public entries: run, then tell a recording tape (engine/grad/) ---- */

static void note(tx_ctx *ctx, tx_status st, tx_op op, const tx_tensor *ins, int n,
                 const tx_op_attrs *a, const tx_tensor *out) {
    if (!st && tx_tape_recording(ctx))
        tx_tape_note(ctx, op, ins, n, a, NULL, *out, (tx_tensor){0});
}

tx_status tx_slice(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out) {
    tx_status st = slice_run(ctx, x, desc, out);
    note(ctx, st, TX_OP_SLICE, &x, 1,
         &(tx_op_attrs){.move = {.slice = desc ? *desc : (tx_slice_desc){0}}}, out);
    return st;
}

tx_status tx_pad(tx_ctx *ctx, tx_tensor x, const tx_pad_desc *desc, tx_tensor *out) {
    tx_status st = pad_run(ctx, x, desc, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs a = {0};
        a.move.pad = *desc;
        note(ctx, st, TX_OP_PAD, &x, 1, &a, out);
    }
    return st;
}

tx_status tx_expand(tx_ctx *ctx, tx_tensor x, int rank, const int64_t *shape, tx_tensor *out) {
    tx_status st = expand_run(ctx, x, rank, shape, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs a = {0};
        a.move.rank = rank;
        memcpy(a.move.shape, shape, sizeof(int64_t) * (size_t)rank);
        note(ctx, st, TX_OP_EXPAND, &x, 1, &a, out);
    }
    return st;
}

tx_status tx_tile(tx_ctx *ctx, tx_tensor x, const int64_t *repeats, tx_tensor *out) {
    tx_status st = tile_run(ctx, x, repeats, out);
    if (!st && tx_tape_recording(ctx)) {
        tx_op_attrs a = {0};
        const tx_slot *xs = tx_slot_get(ctx, x);
        memcpy(a.move.repeats, repeats, sizeof(int64_t) * (size_t)xs->rank);
        note(ctx, st, TX_OP_TILE, &x, 1, &a, out);
    }
    return st;
}

tx_status tx_concat(tx_ctx *ctx, const tx_tensor *xs_in, int n, int axis, tx_tensor *out) {
    tx_status st = concat_run(ctx, xs_in, n, axis, out);
    note(ctx, st, TX_OP_CONCAT, xs_in, n, &(tx_op_attrs){.move = {.axis = axis}}, out);
    return st;
}

tx_status tx_gather(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out) {
    tx_status st = gather_run(ctx, x, indices, axis, out);
    note(ctx, st, TX_OP_GATHER, (tx_tensor[]){x, indices}, 2,
         &(tx_op_attrs){.move = {.axis = axis}}, out);
    return st;
}

/* Each output of a split is recorded as the slice it is, so its gradient is
 * the slice's (zeros around it) and the outputs' gradients add up in x's. */
tx_status tx_split(tx_ctx *ctx, tx_tensor x, int axis, const int64_t *split, int n,
                   tx_tensor *outs) {
    tx_status st = split_run(ctx, x, axis, split, n, outs);
    if (st || !tx_tape_recording(ctx))
        return st;
    const tx_slot *xs = tx_slot_get(ctx, x);
    int a = axis < 0 ? axis + xs->rank : axis;
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        int64_t len = tx_slot_get(ctx, outs[i])->shape[a];
        tx_op_attrs at_i = {0};
        at_i.move.slice = (tx_slice_desc){
            .n = 1, .starts = {at}, .ends = {at + len}, .axes = {a}, .has_axes = true};
        note(ctx, st, TX_OP_SLICE, &x, 1, &at_i, &outs[i]);
        at += len;
    }
    return st;
}
