/* MOVE family: data movement (ONNX semantics). Every output element reads
 * one input element at an index computed from its coordinates, so one
 * template (glsl-templates/move.glsl) serves three kinds:
 *
 *  - map: transpose, slice, pad, expand, tile, depth/space and split are all
 *    "output dim d walks input stride st_d, from an offset, with a step,
 *    maybe through a border rule" (move_map below). The host merges dims
 *    that stay contiguous, so a slice of [N, C, H, W] along C is a 3-dim
 *    map, and picks a fast path when the innermost dim is contiguous and 4
 *    elements long or more per row: a texel copy when aligned, two fetches
 *    and a lane shift when not, one fetch when broadcast.
 *  - concat: up to 4 inputs per draw; more inputs chain draws
 *    that pass the partial result along.
 *  - gather: indices are data (int32 tensor); out-of-range ones are clamped,
 *    as texel.h documents, since a shader cannot report them.
 *
 * Identity, flatten, squeeze and unsqueeze are views; split is one map draw
 * per output. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "../internal.h"

static const char *const k_od[6] = {"p_od0", "p_od1", "p_od2", "p_od3", "p_od4", "p_od5"};
static const char *const k_st[6] = {"p_st0", "p_st1", "p_st2", "p_st3", "p_st4", "p_st5"};
static const char *const k_mul[6] = {"p_mul0", "p_mul1", "p_mul2", "p_mul3", "p_mul4", "p_mul5"};
static const char *const k_off[6] = {"p_off0", "p_off1", "p_off2", "p_off3", "p_off4", "p_off5"};
static const char *const k_in[6] = {"p_in0", "p_in1", "p_in2", "p_in3", "p_in4", "p_in5"};
static const char *const k_ws[4] = {"p_ws0", "p_ws1", "p_ws2", "p_ws3"};
static const char *const k_b[4] = {"p_b0", "p_b1", "p_b2", "p_b3"};
static const char *const k_l[4] = {"p_l0", "p_l1", "p_l2", "p_l3"};

/* Inputs one concat draw reads (move.glsl's concat kind names u_in0..3). */
#define CONCAT_PER_DRAW 4
_Static_assert(CONCAT_PER_DRAW <= TX_MAX_INPUTS, "concat draws more inputs than a draw binds");

/* Border rules of the map kind (TX_BMODE); constant..wrap follow tx_pad_mode. */
enum { BORDER_NONE = 0, BORDER_CONSTANT, BORDER_REFLECT, BORDER_EDGE, BORDER_WRAP };

/* Output dim d (outermost first) reads input coordinate c = o * mul + off
 * (through the border rule when `border`, against extent `in`) at stride st. */
typedef struct move_dim {
    int64_t od, mul, off, in, st;
    bool border;
} move_dim;

typedef struct move_map {
    int n;
    move_dim d[TX_MAX_RANK];
    int bmode;
    float value;
} move_map;

static void strides_of(int rank, const int64_t *shape, int64_t *st) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= shape[i];
    }
}

static int norm_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

static const char *dtype_name(tx_dtype t) { return t == TX_DTYPE_INT32 ? "int32" : "float32"; }

/* Starts a map that copies x as is: output dim i = input dim i. */
static void map_identity(move_map *m, const tx_slot *xs) {
    memset(m, 0, sizeof *m);
    int64_t st[TX_MAX_RANK];
    strides_of(xs->rank, xs->shape, st);
    m->n = xs->rank;
    for (int i = 0; i < xs->rank; i++)
        m->d[i] = (move_dim){.od = xs->shape[i], .mul = 1, .in = xs->shape[i], .st = st[i]};
}

/* Simplified form for the shader: offsets and steps of plain dims folded
 * into strides and a base, size-1 plain dims dropped, contiguous neighbours
 * merged. Returns the base index. */
static int64_t map_simplify(move_map *m) {
    int64_t base = 0;
    move_dim out[TX_MAX_RANK];
    int n = 0;
    for (int i = 0; i < m->n; i++) {
        move_dim d = m->d[i];
        if (!d.border) {
            base += d.off * d.st;
            d.st *= d.mul;
            d.mul = 1;
            d.off = 0;
            d.in = d.od;
            if (d.od == 1)
                continue;
            if (n > 0 && !out[n - 1].border && out[n - 1].st == d.od * d.st) {
                out[n - 1].od *= d.od;
                out[n - 1].st = d.st;
                out[n - 1].in = out[n - 1].od;
                continue;
            }
        }
        out[n++] = d;
    }
    if (n == 0)
        out[n++] = (move_dim){.od = 1, .mul = 1, .in = 1};
    memcpy(m->d, out, sizeof out);
    m->n = n;
    return base;
}

static bool fits_int(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

/* Binds the program for r and draws it from ins into out. */
static tx_status bind_draw(tx_ctx *ctx, const char *name, const tx_program_req *r,
                           const tx_texture *const *ins, int n_in, const tx_texture *out) {
    tx_status st = tx_cache_bind(ctx, name, r);
    return st ? st : tx_draw(ctx, name, ins, n_in, &out, 1);
}

/* Draws map m from x into y (y's slot already allocated, numel > 0). */
static tx_status map_draw(tx_ctx *ctx, const char *name, tx_tensor x, move_map m, tx_tensor y) {
    tx_slot *xs = tx_slot_get(ctx, x), *ys = tx_slot_get(ctx, y);
    int64_t base = map_simplify(&m);
    const move_dim *inner = &m.d[m.n - 1];
    int vec = 0;
    if (!inner->border && inner->od % 4 == 0) {
        if (inner->st == 1) {
            bool aligned = base % 4 == 0;
            for (int i = 0; i < m.n - 1; i++)
                aligned = aligned && m.d[i].st % 4 == 0;
            vec = aligned ? 1 : 2;
        } else if (inner->st == 0) {
            vec = 3;
        }
    }
    int bmask = 0;
    for (int k = 0; k < m.n; k++)
        if (m.d[m.n - 1 - k].border)
            bmask |= 1 << k;
    tx_program_req r;
    tx_req_init(&r, TX_FAMILY_MOVE, "move", 1, 1);
    tx_req_define_int(&r, "TX_KIND", 0);
    tx_req_define_int(&r, "TX_NDIM", m.n);
    tx_req_define_int(&r, "TX_BMASK", bmask);
    tx_req_define_int(&r, "TX_BMODE", bmask ? m.bmode : BORDER_NONE);
    tx_req_define_int(&r, "TX_VEC", vec);
    tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
    tx_req_int(&r, "p_n", (int)ys->numel);
    tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
    tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
    TX_ASSERT(fits_int(base));
    tx_req_int(&r, "p_base", (int)base);
    for (int k = 0; k < m.n; k++) {
        const move_dim *d = &m.d[m.n - 1 - k];
        TX_ASSERT(fits_int(d->od) && fits_int(d->st) && fits_int(d->mul) && fits_int(d->off));
        if (k < m.n - 1)
            tx_req_int(&r, k_od[k], (int)d->od);
        tx_req_int(&r, k_st[k], (int)d->st);
        if (bmask) {
            tx_req_int(&r, k_mul[k], (int)d->mul);
            tx_req_int(&r, k_off[k], (int)d->off);
            tx_req_int(&r, k_in[k], (int)d->in);
        }
    }
    if (bmask && m.bmode == BORDER_CONSTANT)
        tx_req_float(&r, "p_value", m.value);
    const tx_texture *ins[1] = {&xs->st->tex};
    return bind_draw(ctx, name, &r, ins, 1, &ys->st->tex);
}

/* Allocates the output of shape oshape and draws map m into it. */
static tx_status map_run(tx_ctx *ctx, const char *name, tx_tensor x, int rank,
                         const int64_t *oshape, const move_map *m, tx_tensor *out) {
    tx_dtype dtype = tx_slot_get(ctx, x)->dtype;
    tx_tensor y;
    tx_status st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, rank, oshape, dtype, &y);
    if (st)
        return st;
    if (tx_slot_get(ctx, y)->numel > 0) {
        st = map_draw(ctx, name, x, *m, y);
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
}

/* Common argument checks: ctx, out, context, the input tensor. */
static tx_status check_args(tx_ctx *ctx, const char *name, tx_tensor x, const void *out,
                            tx_slot **xs) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: out is NULL", name);
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", name);
    return tx_check_tensor(ctx, name, "x", x, xs);
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
        return fail_shape(ctx, TX_STATUS_INVALID_ARGUMENT, "squeeze", xs,
                          "%d axes (or NULL axes)", n_axes);
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
        return fail_shape(ctx, rank > TX_MAX_RANK ? TX_STATUS_RANK_TOO_HIGH
                                                  : TX_STATUS_INVALID_ARGUMENT,
                          "unsqueeze", xs, "%d axes give rank %d (max %d)", n_axes, rank,
                          TX_MAX_RANK);
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
static tx_status transpose_view(tx_ctx *ctx, const char *name, tx_tensor x, int rank,
                                const int64_t *shape, const int *perm, int orank,
                                const int64_t *oshape, tx_tensor *out) {
    int64_t st[TX_MAX_RANK];
    strides_of(rank, shape, st);
    move_map m = {.n = rank};
    for (int i = 0; i < rank; i++)
        m.d[i] = (move_dim){.od = shape[perm[i]], .mul = 1, .in = shape[perm[i]],
                            .st = st[perm[i]]};
    return map_run(ctx, name, x, orank, oshape, &m, out);
}

tx_status tx_transpose(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out) {
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
    int64_t oshape[TX_MAX_RANK];
    for (int i = 0; i < rank; i++)
        oshape[i] = xs->shape[p[i]];
    return transpose_view(ctx, name, x, rank, xs->shape, p, rank, oshape, out);
}

tx_status tx_slice(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out) {
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
        int64_t dim = xs->shape[a], step = desc->steps[i] ? desc->steps[i] : 1;
        /* any step past the dim takes one element: clamping keeps the math in range */
        if (step > dim + 1)
            step = dim + 1;
        if (step < -(dim + 1))
            step = -(dim + 1);
        int64_t b = desc->starts[i], e = desc->ends[i];
        if (b < 0)
            b = b < -dim ? -1 : b + dim;
        if (e < 0)
            e = e < -dim ? -1 : e + dim;
        int64_t len;
        if (step > 0) {
            b = b < 0 ? 0 : (b > dim ? dim : b);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            len = e > b ? (e - b + step - 1) / step : 0;
        } else {
            b = b < 0 ? 0 : (b > dim - 1 ? dim - 1 : b);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            len = b > e ? (b - e - step - 1) / -step : 0;
        }
        if (dim == 0)
            len = 0;
        oshape[a] = len;
        m.d[a].od = len;
        m.d[a].mul = step;
        m.d[a].off = len > 0 ? b : 0;
    }
    return map_run(ctx, name, x, xs->rank, oshape, &m, out);
}

tx_status tx_pad(tx_ctx *ctx, tx_tensor x, const tx_pad_desc *desc, tx_tensor *out) {
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
    m.bmode = BORDER_CONSTANT + (int)desc->mode;
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
    return map_run(ctx, name, x, xs->rank, oshape, &m, out);
}

tx_status tx_expand(tx_ctx *ctx, tx_tensor x, int rank, const int64_t *shape, tx_tensor *out) {
    const char *name = "expand";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (rank < 0 || rank > TX_MAX_RANK || (rank > 0 && !shape))
        return fail_shape(ctx, rank > TX_MAX_RANK ? TX_STATUS_RANK_TOO_HIGH
                                                  : TX_STATUS_INVALID_ARGUMENT,
                          name, xs, "target rank %d (max %d) or NULL shape", rank,
                          TX_MAX_RANK);
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
        m.d[i] = (move_dim){.od = oshape[i], .mul = 1, .in = oshape[i],
                            .st = dx == 1 ? 0 : st_in[ix]};
    }
    return map_run(ctx, name, x, orank, oshape, &m, out);
}

tx_status tx_tile(tx_ctx *ctx, tx_tensor x, const int64_t *repeats, tx_tensor *out) {
    const char *name = "tile";
    tx_slot *xs;
    tx_status st = check_args(ctx, name, x, out, &xs);
    if (st)
        return st;
    if (!repeats && xs->rank > 0)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tile: repeats is NULL");
    move_map m;
    map_identity(&m, xs);
    m.bmode = BORDER_WRAP;
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
    return map_run(ctx, name, x, xs->rank, oshape, &m, out);
}

/* Depth/space: a transpose of 6-dim views of x and y. */
static tx_status depth_space(tx_ctx *ctx, const char *name, tx_tensor x, int b, bool to_space,
                             tx_depth_mode mode, tx_tensor *out) {
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
    return transpose_view(ctx, name, x, 6, v, perm, 4, o, out);
}

tx_status tx_depth_to_space(tx_ctx *ctx, tx_tensor x, int blocksize, tx_depth_mode mode,
                            tx_tensor *out) {
    return depth_space(ctx, "depth_to_space", x, blocksize, true, mode, out);
}

tx_status tx_space_to_depth(tx_ctx *ctx, tx_tensor x, int blocksize, tx_tensor *out) {
    return depth_space(ctx, "space_to_depth", x, blocksize, false, TX_DEPTH_DCR, out);
}

tx_status tx_split(tx_ctx *ctx, tx_tensor x, int axis, const int64_t *split, int n,
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
        st = map_run(ctx, name, x, xs->rank, oshape, &m, &y);
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

tx_status tx_concat(tx_ctx *ctx, const tx_tensor *xs_in, int n, int axis, tx_tensor *out) {
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
    }
    if (n == 1)
        return tx_tensor_reshape(ctx, xs_in[0], rank, s0->shape, out);
    tx_dtype dtype = s0->dtype;
    int64_t inner = 1;
    for (int d = a + 1; d < rank; d++)
        inner *= oshape[d];
    int64_t L = oshape[a] * inner;
    tx_tensor y, tmp = {0};
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, rank, oshape, dtype, &y);
    if (st)
        return st;
    int64_t numel = tx_slot_get(ctx, y)->numel;
    /* inputs that contribute, with their row offset and row length */
    int nk = 0;
    bool vec = L % 4 == 0;
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        int64_t len = tx_slot_get(ctx, xs_in[i])->shape[a] * inner;
        if (len > 0)
            nk++;
        vec = vec && len % 4 == 0 && at % 4 == 0;
        at += len;
    }
    int per_first = CONCAT_PER_DRAW, per_next = CONCAT_PER_DRAW - 1;
    int draws = nk <= per_first ? 1 : 1 + (nk - per_first + per_next - 1) / per_next;
    if (numel > 0 && draws > 1)
        st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, rank, oshape, dtype, &tmp);
    int q = vec ? 4 : 1; /* vec: rows and regions in texels */
    int next = 0;        /* next input to place */
    at = 0;
    for (int dr = 0; numel > 0 && !st && dr < draws; dr++) {
        tx_tensor target = (draws - 1 - dr) % 2 == 0 ? y : tmp;
        tx_tensor prev = target.id == y.id ? tmp : y;
        tx_program_req r;
        const tx_texture *ins[CONCAT_PER_DRAW];
        int nin = 0;
        if (dr > 0)
            ins[nin++] = &tx_slot_get(ctx, prev)->st->tex;
        tx_req_init(&r, TX_FAMILY_MOVE, "move", 0, 1);
        tx_req_int(&r, "p_L", (int)(L / q));
        while (nin < CONCAT_PER_DRAW && next < n) {
            tx_slot *s = tx_slot_get(ctx, xs_in[next++]);
            int64_t len = s->shape[a] * inner;
            at += len;
            if (len == 0)
                continue;
            tx_req_int(&r, k_b[nin], (int)((at - len) / q));
            tx_req_int(&r, k_l[nin], (int)(len / q));
            ins[nin++] = &s->st->tex;
        }
        for (int k = 0; k < nin; k++)
            tx_req_int(&r, k_ws[k], ins[k]->wshift);
        r.n_inputs = nin;
        tx_slot *ts = tx_slot_get(ctx, target);
        tx_req_define_int(&r, "TX_KIND", 1);
        tx_req_define_int(&r, "TX_NIN", nin);
        tx_req_define_int(&r, "TX_PREV", dr > 0);
        tx_req_define_int(&r, "TX_VEC", vec);
        tx_req_int(&r, "p_ntex", (int)((numel + 3) / 4));
        tx_req_int(&r, "p_n", (int)numel);
        tx_req_int(&r, "p_out_ws", ts->st->tex.wshift);
        st = bind_draw(ctx, name, &r, ins, nin, &ts->st->tex);
    }
    if (tmp.id)
        tx_tensor_destroy(ctx, tmp);
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}

tx_status tx_gather(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out) {
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
    int orank = xs->rank - 1 + is->rank;
    if (orank > TX_MAX_RANK) {
        char p[160], q[160];
        tx_shape_str(p, sizeof p, xs->rank, xs->shape);
        tx_shape_str(q, sizeof q, is->rank, is->shape);
        return tx_fail(ctx, TX_STATUS_RANK_TOO_HIGH,
                       "gather: x %s with indices %s gives rank %d > %d", p, q, orank,
                       TX_MAX_RANK);
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
    int64_t dim = xs->shape[a];
    tx_tensor y;
    st = tx_tensor_alloc(ctx, name, TX_DEVICE_GPU, orank, oshape, xs->dtype, &y);
    if (st)
        return st;
    xs = tx_slot_get(ctx, x);
    is = tx_slot_get(ctx, indices);
    tx_slot *ys = tx_slot_get(ctx, y);
    if (ys->numel > 0 && dim == 0) {
        char p[160];
        tx_shape_str(p, sizeof p, xs->rank, xs->shape);
        tx_tensor_destroy(ctx, y);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "gather: axis %d of x %s is empty: no index can be valid", a, p);
    }
    if (ys->numel > 0) {
        bool vec = inner % 4 == 0;
        tx_program_req r;
        tx_req_init(&r, TX_FAMILY_MOVE, "move", 2, 1);
        tx_req_define_int(&r, "TX_KIND", 2);
        tx_req_define_int(&r, "TX_VEC", vec);
        tx_req_int(&r, "p_ntex", (int)((ys->numel + 3) / 4));
        tx_req_int(&r, "p_n", (int)ys->numel);
        tx_req_int(&r, "p_out_ws", ys->st->tex.wshift);
        tx_req_int(&r, "p_ws0", xs->st->tex.wshift);
        tx_req_int(&r, "p_ws1", is->st->tex.wshift);
        tx_req_int(&r, "p_dim", (int)dim);
        tx_req_int(&r, "p_nidx", (int)is->numel);
        tx_req_int(&r, vec ? "p_inner4" : "p_inner", (int)(vec ? inner / 4 : inner));
        const tx_texture *ins[2] = {&xs->st->tex, &is->st->tex};
        st = bind_draw(ctx, name, &r, ins, 2, &ys->st->tex);
        if (st) {
            tx_tensor_destroy(ctx, y);
            return st;
        }
    }
    *out = y;
    return TX_STATUS_OK;
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
                                  "perm has %d entries, x has rank %d", a.move.n_perm,
                                  xs->rank);
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
