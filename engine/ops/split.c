/* Op fronts on tensors split across textures (engine/split.h). Each runs the
 * ordinary ops on the split operand's dim-0 row ranges (one part at a time,
 * every piece within one texture) and joins the results along dim 0:
 *
 *   unary, clip, act, cast  the op on each part
 *   binary                  each part of the split operand with the same rows
 *                           of the other one (or all of it where it broadcasts);
 *                           a broadcast result larger than a texture: by row
 *                           ranges of the result
 *   matmul                  a split along its rows (or batch): a part × b;
 *                           a result larger than a texture: row ranges of a
 *                           whose products fit, joined;
 *                           b split along K: Σ a[.., Kp] × b_p (bias on the
 *                           first, the activation after the sum); b split
 *                           along N (transpose_b): a × b_p joined along N
 *   gather                  axis > 0: each part; axis 0: each part gathers
 *                           the indices that fall in its rows (shifted and
 *                           clamped into it) and a where keeps them; a result
 *                           larger than a texture: by row ranges of the
 *                           indices (axis 0) or of x
 *   transpose               each part transposed; joined along dim 0, or
 *                           concatenated along the dim dim 0 moves to
 *   slice                   dim 0 cut to the parts it touches, the other
 *                           dims sliced per part
 *   concat                  along dim 0 copies of the inputs' rows; along
 *                           another dim one concat per row range that fits
 *
 * Negative slice steps on dim 0, a split operand broadcast along dim 0 and a
 * split bias are refused (TOO_LARGE, naming the case). */
#include <stdlib.h>
#include <string.h>

#include "../split.h"

static tx_status refuse(tx_ctx *ctx, const char *op, const char *why) {
    return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                   "%s: an operand or the result is larger than one MAX_TEXTURE_SIZE %d texture "
                   "and cannot be split across textures: %s",
                   op, ctx->max_tex, why);
}

static const tx_slot *slot(tx_ctx *ctx, tx_tensor t) {
    return tx_slot_get(ctx, t);
}

/* ---- per part, joined ---- */

typedef tx_status (*part_fn)(tx_ctx *ctx, tx_tensor part, int64_t r0, int64_t r1, const void *arg,
                             tx_tensor *y);

/* fn on each part of split t (a [rows, ...] view), its results in *ys[0, *k)
 * (*ys calloc'd, the caller frees it; NULL when out of memory). */
static tx_status map_parts(tx_ctx *ctx, const char *op, tx_tensor t, part_fn fn, const void *arg,
                           tx_tensor **ys, int *k) {
    int n = tx_split_parts(ctx, t);
    *k = 0;
    *ys = calloc((size_t)n, sizeof **ys);
    if (!*ys)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    tx_status st = TX_STATUS_OK;
    for (int p = 0; p < n && !st; p++) {
        int64_t r0, r1;
        tx_tensor v;
        st = tx_split_part_rows(ctx, op, t, p, &r0, &r1, &v);
        if (st)
            break;
        st = fn(ctx, v, r0, r1, arg, &(*ys)[*k]);
        *k += !st;
        tx_tensor_destroy(ctx, v);
    }
    return st;
}

/* fn on each part of split t (a [rows, ...] view); the results joined. */
static tx_status over_parts(tx_ctx *ctx, const char *op, tx_tensor t, part_fn fn, const void *arg,
                            tx_tensor *out) {
    tx_tensor *ys;
    int k;
    tx_status st = map_parts(ctx, op, t, fn, arg, &ys, &k);
    if (!ys)
        return st;
    st = tx_join_or_drop(ctx, op, st, ys, k, out);
    free(ys);
    return st;
}

/* fn on each part of split t; the results concatenated along axis. */
static tx_status concat_parts(tx_ctx *ctx, const char *op, tx_tensor t, part_fn fn, const void *arg,
                              int axis, tx_tensor *out) {
    tx_tensor *ys;
    int k;
    tx_status st = map_parts(ctx, op, t, fn, arg, &ys, &k);
    if (!ys)
        return st;
    if (!st)
        st = tx_concat(ctx, ys, k, axis, out);
    for (int i = 0; i < k; i++)
        tx_tensor_destroy(ctx, ys[i]);
    free(ys);
    return st;
}

typedef tx_status (*rows_fn)(tx_ctx *ctx, int64_t r0, int64_t r1, const void *arg, tx_tensor *y);

/* A result of `rows` dim-0 rows of `row` elements each, larger than one
 * texture: fn makes rows [r0, r1) for ranges that fit one, the pieces
 * joined. */
static tx_status over_rows(tx_ctx *ctx, const char *op, int64_t rows, int64_t row, rows_fn fn,
                           const void *arg, tx_tensor *out) {
    int64_t cap = (int64_t)ctx->max_tex * ctx->max_tex * 4;
    if (row > cap)
        return refuse(ctx, op, "one row of the result is larger than a texture");
    int64_t per = row ? cap / row : rows;
    int64_t chunks = rows && per ? (rows + per - 1) / per : 1;
    tx_tensor *ys = calloc((size_t)chunks, sizeof *ys);
    if (!ys)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    tx_status st = TX_STATUS_OK;
    int k = 0;
    for (int64_t c = 0; c < chunks && !st; c++) {
        int64_t r0 = c * per, r1 = r0 + per < rows ? r0 + per : rows;
        st = fn(ctx, r0, r1, arg, &ys[k]);
        k += !st;
    }
    st = tx_join_or_drop(ctx, op, st, ys, k, out);
    free(ys);
    return st;
}

/* Rows [r0, r1) of t, or t itself (a new handle either way) when `all`. */
static tx_status rows_or_all(tx_ctx *ctx, const char *op, tx_tensor t, bool all, int64_t r0,
                             int64_t r1, tx_tensor *out) {
    return all ? tx_identity(ctx, t, out) : tx_rows_of(ctx, op, t, r0, r1, out);
}

/* ---- unary ---- */

typedef struct unary_arg {
    tx_op op;
    float lo, hi;
    tx_dtype to;
} unary_arg;

static tx_status unary_part(tx_ctx *ctx, tx_tensor x, int64_t r0, int64_t r1, const void *arg,
                            tx_tensor *y) {
    const unary_arg *u = arg;
    (void)r0, (void)r1;
    return tx_unary_run(ctx, u->op, x, u->lo, u->hi, u->to, y);
}

tx_status tx_split_unary(tx_ctx *ctx, tx_op op, tx_tensor x, float lo, float hi, tx_dtype to,
                         tx_tensor *out) {
    unary_arg u = {op, lo, hi, to};
    return over_parts(ctx, tx_op_name(op), x, unary_part, &u, out);
}

/* ---- binary ---- */

typedef struct binary_arg {
    tx_op op;
    tx_tensor other;
    bool split_is_a, other_rows; /* other: take the part's rows, or all of it */
} binary_arg;

static tx_status binary_part(tx_ctx *ctx, tx_tensor x, int64_t r0, int64_t r1, const void *arg,
                             tx_tensor *y) {
    const binary_arg *b = arg;
    const char *op = tx_op_name(b->op);
    tx_tensor o = b->other;
    tx_status st = b->other_rows ? tx_rows_of(ctx, op, o, r0, r1, &o) : TX_STATUS_OK;
    if (st)
        return st;
    st = b->split_is_a ? tx_binary(ctx, b->op, x, o, y) : tx_binary(ctx, b->op, o, x, y);
    if (b->other_rows)
        tx_tensor_destroy(ctx, o);
    return st;
}

/* Whether t (of rank r) runs along the result's dim 0 of size d0 (rank R). */
static bool along_dim0(const tx_slot *t, int R, int64_t d0) {
    return t->rank == R && t->shape[0] == d0 && d0 != 1;
}

typedef struct binrows_arg {
    tx_op op;
    tx_tensor a, b;
    bool a_rows, b_rows;
} binrows_arg;

static tx_status binary_chunk(tx_ctx *ctx, int64_t r0, int64_t r1, const void *arg, tx_tensor *y) {
    const binrows_arg *m = arg;
    const char *name = tx_op_name(m->op);
    tx_tensor ac = {0}, bc = {0};
    tx_status st = rows_or_all(ctx, name, m->a, !m->a_rows, r0, r1, &ac);
    if (!st)
        st = rows_or_all(ctx, name, m->b, !m->b_rows, r0, r1, &bc);
    if (!st)
        st = tx_binary(ctx, m->op, ac, bc, y);
    if (ac.id)
        tx_tensor_destroy(ctx, ac);
    if (bc.id)
        tx_tensor_destroy(ctx, bc);
    return st;
}

tx_status tx_split_binary(tx_ctx *ctx, tx_op op, tx_tensor a, tx_tensor b, tx_tensor *out) {
    const char *name = tx_op_name(op);
    const tx_slot *as = slot(ctx, a), *bs = slot(ctx, b);
    int R = as->rank > bs->rank ? as->rank : bs->rank;
    int64_t d0 = 1, numel = 1;
    if (as->rank == R && as->shape[0] != 1)
        d0 = as->shape[0];
    if (bs->rank == R && bs->shape[0] != 1)
        d0 = bs->shape[0];
    for (int i = 0; i < R; i++) { /* the broadcast result's elements */
        int ia = i - (R - as->rank), ib = i - (R - bs->rank);
        int64_t da = ia >= 0 ? as->shape[ia] : 1, db = ib >= 0 ? bs->shape[ib] : 1;
        numel *= da == 1 ? db : da;
    }
    if (!as->st->n_parts && !bs->st->n_parts) { /* only the result is too large */
        binrows_arg m = {op, a, b, along_dim0(as, R, d0), along_dim0(bs, R, d0)};
        return over_rows(ctx, name, d0, d0 ? numel / d0 : 0, binary_chunk, &m, out);
    }
    bool a_split = as->st->n_parts > 0;
    const tx_slot *ss = a_split ? as : bs, *os = a_split ? bs : as;
    if (!along_dim0(ss, R, d0))
        return refuse(ctx, name, "is broadcast along the result's first dim");
    binary_arg arg = {op, a_split ? b : a, a_split, along_dim0(os, R, d0)};
    if (!arg.other_rows && os->st->n_parts)
        return refuse(ctx, name, "the other one, also split, is broadcast along it");
    return over_parts(ctx, name, a_split ? a : b, binary_part, &arg, out);
}

/* ---- matmul ---- */

typedef struct matmul_arg {
    tx_tensor other; /* the unsplit operand */
    const tx_matmul_desc *d;
    bool other_rows; /* batched along the split one's dim 0: take the part's rows */
    bool part_is_a;
    tx_tensor b; /* matmul_chunk's b */
} matmul_arg;

/* A part of the split operand (a by rows or batch, or b by batch) times the
 * other one (or its matching batch rows). */
static tx_status matmul_part(tx_ctx *ctx, tx_tensor part, int64_t r0, int64_t r1, const void *arg,
                             tx_tensor *y) {
    const matmul_arg *m = arg;
    tx_tensor o = m->other;
    tx_status st = m->other_rows ? tx_rows_of(ctx, "matmul", o, r0, r1, &o) : TX_STATUS_OK;
    if (st)
        return st;
    st = m->part_is_a ? tx_matmul(ctx, part, o, m->d, y) : tx_matmul(ctx, o, part, m->d, y);
    if (m->other_rows)
        tx_tensor_destroy(ctx, o);
    return st;
}

/* x sliced to [lo, hi) along `axis`. */
static tx_status cut(tx_ctx *ctx, tx_tensor x, int axis, int64_t lo, int64_t hi, tx_tensor *out) {
    tx_slice_desc s = {
        .n = 1, .starts = {lo}, .ends = {hi}, .axes = {axis}, .steps = {1}, .has_axes = true};
    return tx_slice(ctx, x, &s, out);
}

/* b [K, N] split along K: Σ_p a[.., K_p] × b_p, bias on the first, then act. */
static tx_status matmul_sum_k(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *d,
                              tx_tensor *out) {
    const tx_slot *as = slot(ctx, a);
    int kaxis = as->rank == 1 ? 0 : (d->transpose_a ? as->rank - 2 : as->rank - 1);
    int n = tx_split_parts(ctx, b);
    tx_tensor acc = {0};
    tx_status st = TX_STATUS_OK;
    for (int p = 0; p < n && !st; p++) {
        int64_t r0, r1;
        tx_tensor bp, ap, y;
        st = tx_split_part_rows(ctx, "matmul", b, p, &r0, &r1, &bp);
        if (st)
            break;
        st = cut(ctx, a, kaxis, r0, r1, &ap);
        if (!st) {
            tx_matmul_desc dp = *d;
            dp.activation = TX_OP_NONE;
            if (p > 0)
                dp.bias = (tx_tensor){0};
            st = tx_matmul(ctx, ap, bp, &dp, &y);
            tx_tensor_destroy(ctx, ap);
        }
        tx_tensor_destroy(ctx, bp);
        if (st)
            break;
        if (p == 0) {
            acc = y;
        } else {
            tx_tensor s;
            st = tx_binary(ctx, TX_OP_ADD, acc, y, &s);
            tx_tensor_destroy(ctx, y);
            tx_tensor_destroy(ctx, acc);
            acc = st ? (tx_tensor){0} : s;
        }
    }
    if (!st && d->activation != TX_OP_NONE) {
        tx_tensor s;
        st = tx_apply_act(ctx, d->activation, d->alpha, d->beta, acc, &s);
        tx_tensor_destroy(ctx, acc);
        acc = st ? (tx_tensor){0} : s;
    }
    if (st) {
        if (acc.id)
            tx_tensor_destroy(ctx, acc);
        return st;
    }
    *out = acc;
    return TX_STATUS_OK;
}

typedef struct cat_n_arg {
    tx_tensor a;
    const tx_matmul_desc *d;
} cat_n_arg;

/* a × b_p for part b_p (rows [r0, r1) of b's N), with those entries of the bias. */
static tx_status matmul_cat_part(tx_ctx *ctx, tx_tensor bp, int64_t r0, int64_t r1, const void *arg,
                                 tx_tensor *y) {
    const cat_n_arg *c = arg;
    tx_matmul_desc dp = *c->d;
    tx_tensor bias = {0};
    tx_status st = TX_STATUS_OK;
    if (c->d->bias.id)
        st = cut(ctx, c->d->bias, -1, r0, r1, &bias);
    dp.bias = bias;
    if (!st)
        st = tx_matmul(ctx, c->a, bp, &dp, y);
    if (bias.id)
        tx_tensor_destroy(ctx, bias);
    return st;
}

/* b [N, K] (transpose_b) split along N: a × b_p per part, joined along N. */
static tx_status matmul_cat_n(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *d,
                              tx_tensor *out) {
    cat_n_arg c = {a, d};
    return concat_parts(ctx, "matmul", b, matmul_cat_part, &c, -1, out);
}

/* Neither operand split, the result is: a's dim-0 row ranges whose products
 * fit a texture each, joined. */
static tx_status matmul_chunk(tx_ctx *ctx, int64_t r0, int64_t r1, const void *arg, tx_tensor *y) {
    const matmul_arg *m = arg; /* other: a here; other_rows: b batched like a */
    tx_tensor ac = {0}, bc = {0};
    tx_status st = tx_rows_of(ctx, "matmul", m->other, r0, r1, &ac);
    if (!st)
        st = rows_or_all(ctx, "matmul", m->b, !m->other_rows, r0, r1, &bc);
    if (!st)
        st = tx_matmul(ctx, ac, bc, m->d, y);
    if (ac.id)
        tx_tensor_destroy(ctx, ac);
    if (bc.id)
        tx_tensor_destroy(ctx, bc);
    return st;
}

/* Neither operand split, the result is: a's dim-0 row ranges whose products
 * fit a texture each, joined. */
static tx_status matmul_rows(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *d,
                             tx_tensor *out) {
    const tx_slot *as = slot(ctx, a), *bs = slot(ctx, b);
    if (as->rank < 2 || (as->rank == 2 && d->transpose_a) || bs->rank > as->rank ||
        (bs->rank == as->rank && as->rank > 2 && as->shape[0] != bs->shape[0]))
        return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                       "matmul: the result is larger than one MAX_TEXTURE_SIZE %d texture and a's "
                       "first dim is not the result's",
                       ctx->max_tex);
    int64_t row = d->transpose_b ? bs->shape[bs->rank - 2] : bs->shape[bs->rank - 1];
    for (int i = 1; i < as->rank - 1; i++) /* result elements per row of a's dim 0 */
        row *= as->shape[i];
    matmul_arg m = {a, d, bs->rank == as->rank && as->rank > 2, true, b};
    return over_rows(ctx, "matmul", as->shape[0], row, matmul_chunk, &m, out);
}

tx_status tx_split_matmul(tx_ctx *ctx, tx_tensor a, tx_tensor b, const tx_matmul_desc *desc,
                          tx_tensor *out) {
    tx_matmul_desc d = desc ? *desc : (tx_matmul_desc){0};
    const tx_slot *as = slot(ctx, a), *bs = slot(ctx, b);
    if (d.bias.id && tx_is_split(ctx, d.bias))
        return refuse(ctx, "matmul", "so is the bias");
    if (!as->st->n_parts && !bs->st->n_parts)
        return matmul_rows(ctx, a, b, &d, out);
    if (as->st->n_parts) {
        if (as->rank < 2 || (as->rank == 2 && d.transpose_a))
            return refuse(ctx, "matmul", "is a vector or transposed a");
        if (bs->rank > as->rank)
            return refuse(ctx, "matmul", "b has more batch dims than a");
        matmul_arg m = {
            b, &d, bs->rank == as->rank && as->rank > 2 && bs->shape[0] != 1, true, {0}};
        return over_parts(ctx, "matmul", a, matmul_part, &m, out);
    }
    if (bs->rank == 1)
        return refuse(ctx, "matmul", "b is a vector");
    if (bs->rank == 2)
        return d.transpose_b ? matmul_cat_n(ctx, a, b, &d, out) : matmul_sum_k(ctx, a, b, &d, out);
    if (as->rank > bs->rank)
        return refuse(ctx, "matmul", "a has more batch dims than b");
    matmul_arg m = {a, &d, as->rank == bs->rank && as->shape[0] != 1, false, {0}};
    return over_parts(ctx, "matmul", b, matmul_part, &m, out);
}

/* ---- gather ---- */

typedef struct gather_arg {
    tx_tensor idx;
    int axis;
} gather_arg;

static tx_status gather_part(tx_ctx *ctx, tx_tensor x, int64_t r0, int64_t r1, const void *arg,
                             tx_tensor *y) {
    const gather_arg *g = arg;
    (void)r0, (void)r1;
    return tx_gather(ctx, x, g->idx, g->axis, y);
}

/* Split indices: each part's gather is the result's rows (x is not split). */
static tx_status gather_idx_part(tx_ctx *ctx, tx_tensor idx, int64_t r0, int64_t r1,
                                 const void *arg, tx_tensor *y) {
    const gather_arg *g = arg;
    (void)r0, (void)r1;
    return tx_gather(ctx, g->idx, idx, 0, y);
}

/* A scalar on dev. */
static tx_status scalar(tx_ctx *ctx, tx_device dev, float v, tx_tensor *out) {
    return tx_tensor_create(ctx, &(tx_tensor_desc){.rank = 0, .data = &v, .device = dev}, out);
}

/* A binary op with a scalar b; `x` is replaced (and destroyed) on success. */
static tx_status with_scalar(tx_ctx *ctx, tx_op op, tx_tensor *x, float v, tx_device dev,
                             bool keep_x) {
    tx_tensor s, y;
    tx_status st = scalar(ctx, dev, v, &s);
    if (st)
        return st;
    st = tx_binary(ctx, op, *x, s, &y);
    tx_tensor_destroy(ctx, s);
    if (st)
        return st;
    if (!keep_x)
        tx_tensor_destroy(ctx, *x);
    *x = y;
    return TX_STATUS_OK;
}

/* Rows [r0, r1) of split x at float indices f (normalized into [0, D)):
 * *mask = 1 where an index falls in them, *g = x's rows at the indices
 * shifted and clamped into the part. */
static tx_status gather_rows(tx_ctx *ctx, tx_device dev, tx_tensor part, int64_t r0, int64_t r1,
                             tx_tensor f, tx_tensor *mask, tx_tensor *g) {
    tx_tensor loc = f, ge = {0}, lt = {0}, cl = {0}, ci = {0};
    tx_status st = with_scalar(ctx, TX_OP_SUB, &loc, (float)r0, dev, true);
    if (st)
        return st;
    ge = loc, lt = loc;
    st = with_scalar(ctx, TX_OP_GREATER_EQUAL, &ge, 0, dev, true);
    if (!st)
        st = with_scalar(ctx, TX_OP_LESS, &lt, (float)(r1 - r0), dev, true);
    if (!st)
        st = tx_binary(ctx, TX_OP_MUL, ge, lt, mask);
    if (!st)
        st = tx_clip(ctx, loc, 0, (float)(r1 - r0 - 1), &cl);
    if (!st)
        st = tx_cast(ctx, cl, TX_DTYPE_INT32, false, &ci);
    if (!st)
        st = tx_gather(ctx, part, ci, 0, g);
    tx_tensor tmp[5] = {loc, ge.id != loc.id ? ge : (tx_tensor){0},
                        lt.id != loc.id ? lt : (tx_tensor){0}, cl, ci};
    for (int i = 0; i < 5; i++)
        if (tmp[i].id)
            tx_tensor_destroy(ctx, tmp[i]);
    return st;
}

/* x split, axis 0: per part, where(index in the part's rows, its gather, acc). */
static tx_status gather_axis0(tx_ctx *ctx, tx_tensor x, tx_tensor indices, tx_tensor *out) {
    const tx_slot *xs = slot(ctx, x), *is = slot(ctx, indices);
    tx_device dev = is->st->dev;
    float D = (float)xs->shape[0];
    int rank = xs->rank, irank = is->rank;
    int64_t mshape[TX_MAX_RANK];
    memcpy(mshape, is->shape, sizeof(int64_t) * (size_t)irank);
    for (int d = 0; d < rank - 1; d++)
        mshape[irank + d] = 1;
    /* indices as floats in [0, D): clamped like the kernel, negatives wrapped */
    tx_tensor f, neg;
    tx_status st = tx_cast(ctx, indices, TX_DTYPE_FLOAT32, false, &f);
    if (st)
        return st;
    tx_tensor c;
    st = tx_clip(ctx, f, -D, D - 1, &c);
    tx_tensor_destroy(ctx, f);
    if (st)
        return st;
    f = c, neg = c;
    st = with_scalar(ctx, TX_OP_LESS, &neg, 0, dev, true);
    if (!st)
        st = with_scalar(ctx, TX_OP_MUL, &neg, D, dev, false);
    if (!st) {
        st = tx_binary(ctx, TX_OP_ADD, f, neg, &c);
        tx_tensor_destroy(ctx, neg);
    }
    tx_tensor_destroy(ctx, f);
    if (st)
        return st;
    f = c;
    tx_tensor acc = {0};
    int n = tx_split_parts(ctx, x);
    for (int p = 0; p < n && !st; p++) {
        int64_t r0, r1;
        tx_tensor part, mask = {0}, g = {0}, mr, y;
        st = tx_split_part_rows(ctx, "gather", x, p, &r0, &r1, &part);
        if (st)
            break;
        st = gather_rows(ctx, dev, part, r0, r1, f, &mask, &g);
        tx_tensor_destroy(ctx, part);
        if (!st && p == 0) {
            acc = g, g = (tx_tensor){0};
        } else if (!st) {
            st = tx_tensor_reshape(ctx, mask, irank + rank - 1, mshape, &mr);
            if (!st) {
                st = tx_nary(ctx, TX_OP_WHERE, (tx_tensor[]){mr, g, acc}, 3, &y);
                tx_tensor_destroy(ctx, mr);
            }
            if (!st) {
                tx_tensor_destroy(ctx, acc);
                acc = y;
            }
        }
        if (mask.id)
            tx_tensor_destroy(ctx, mask);
        if (g.id)
            tx_tensor_destroy(ctx, g);
    }
    tx_tensor_destroy(ctx, f);
    if (st) {
        if (acc.id)
            tx_tensor_destroy(ctx, acc);
        return st;
    }
    *out = acc;
    return TX_STATUS_OK;
}

typedef struct gather_rows_arg {
    tx_tensor x, idx;
    int axis;
} gather_rows_arg;

/* Rows [r0, r1) of the result: of the indices (axis 0) or of x. */
static tx_status gather_chunk(tx_ctx *ctx, int64_t r0, int64_t r1, const void *arg, tx_tensor *y) {
    const gather_rows_arg *g = arg;
    tx_tensor t;
    tx_status st = tx_rows_of(ctx, "gather", g->axis ? g->x : g->idx, r0, r1, &t);
    if (st)
        return st;
    st = g->axis ? tx_gather(ctx, t, g->idx, g->axis, y) : tx_gather(ctx, g->x, t, 0, y);
    tx_tensor_destroy(ctx, t);
    return st;
}

static tx_status gather_rows_result(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int a,
                                    tx_tensor *out) {
    const tx_slot *xs = slot(ctx, x), *is = slot(ctx, indices);
    int64_t numel = is->numel;
    for (int d = 0; d < xs->rank; d++)
        numel *= d == a ? 1 : xs->shape[d];
    if (a == 0 && is->rank < 1)
        return refuse(ctx, "gather", "the indices are a scalar");
    int64_t rows = a ? xs->shape[0] : is->shape[0];
    gather_rows_arg g = {x, indices, a};
    return over_rows(ctx, "gather", rows, rows ? numel / rows : 0, gather_chunk, &g, out);
}

tx_status tx_split_gather(tx_ctx *ctx, tx_tensor x, tx_tensor indices, int axis, tx_tensor *out) {
    const tx_slot *xs = slot(ctx, x), *is = slot(ctx, indices);
    if (is->dtype != TX_DTYPE_INT32)
        return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "gather: indices must be int32");
    int a = axis < 0 ? axis + xs->rank : axis;
    if (a < 0 || a >= xs->rank)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "gather: axis %d is out of range for rank %d", axis, xs->rank);
    if (!xs->st->n_parts && !is->st->n_parts) /* only the result is too large */
        return gather_rows_result(ctx, x, indices, a, out);
    if (!xs->st->n_parts) { /* only the indices are split */
        if (a != 0 || is->rank < 1)
            return refuse(ctx, "gather", "the indices are not gathered along axis 0");
        gather_arg g = {x, 0};
        return over_parts(ctx, "gather", indices, gather_idx_part, &g, out);
    }
    if (a > 0) {
        gather_arg g = {indices, a};
        return over_parts(ctx, "gather", x, gather_part, &g, out);
    }
    return gather_axis0(ctx, x, indices, out);
}

/* ---- transpose ---- */

static tx_status transpose_part(tx_ctx *ctx, tx_tensor x, int64_t r0, int64_t r1, const void *arg,
                                tx_tensor *y) {
    (void)r0, (void)r1;
    return tx_transpose(ctx, x, arg, y);
}

tx_status tx_split_transpose(tx_ctx *ctx, tx_tensor x, const int *perm, tx_tensor *out) {
    int at = 0;
    if (perm[0] == 0)
        return over_parts(ctx, "transpose", x, transpose_part, perm, out);
    while (perm[at] != 0)
        at++;
    /* dim 0 went to dim `at`: the parts follow each other there */
    return concat_parts(ctx, "transpose", x, transpose_part, perm, at, out);
}

/* ---- slice ---- */

typedef struct slice_arg {
    const tx_slice_desc *d;
} slice_arg;

static tx_status slice_part(tx_ctx *ctx, tx_tensor x, int64_t r0, int64_t r1, const void *arg,
                            tx_tensor *y) {
    (void)r0, (void)r1;
    return tx_slice(ctx, x, ((const slice_arg *)arg)->d, y);
}

tx_status tx_split_slice(tx_ctx *ctx, tx_tensor x, const tx_slice_desc *desc, tx_tensor *out) {
    const tx_slot *xs = slot(ctx, x);
    if (!desc || desc->n < 0 || desc->n > xs->rank)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "slice: bad desc for a rank-%d tensor",
                       xs->rank);
    /* the entries in axes form, dim 0's taken out */
    tx_slice_desc rest = {.has_axes = true};
    int64_t b = 0, e = xs->shape[0];
    bool cut0 = false;
    for (int i = 0; i < desc->n; i++) {
        int64_t ax = desc->has_axes ? desc->axes[i] : i;
        if (ax < 0)
            ax += xs->rank;
        if (ax != 0) {
            rest.starts[rest.n] = desc->starts[i];
            rest.ends[rest.n] = desc->ends[i];
            rest.steps[rest.n] = desc->steps[i];
            rest.axes[rest.n++] = ax;
            continue;
        }
        if (desc->steps[i] != 0 && desc->steps[i] != 1)
            return refuse(ctx, "slice", "dim 0 is sliced with a step other than 1");
        int64_t dim = xs->shape[0];
        b = desc->starts[i], e = desc->ends[i];
        b = b < 0 ? (b < -dim ? 0 : b + dim) : (b > dim ? dim : b);
        e = e < 0 ? (e < -dim ? 0 : e + dim) : (e > dim ? dim : e);
        if (e < b)
            e = b;
        cut0 = true;
    }
    if (!cut0) {
        slice_arg s = {&rest};
        return over_parts(ctx, "slice", x, slice_part, &s, out);
    }
    tx_tensor rows;
    tx_status st = tx_rows_of(ctx, "slice", x, b, e, &rows);
    if (st || rest.n == 0) {
        if (!st)
            *out = rows;
        return st;
    }
    st = tx_slice(ctx, rows, &rest, out);
    tx_tensor_destroy(ctx, rows);
    return st;
}

/* ---- concat ---- */

typedef struct concat_arg {
    const tx_tensor *xs;
    int n, axis;
} concat_arg;

static tx_status concat_chunk(tx_ctx *ctx, int64_t r0, int64_t r1, const void *arg, tx_tensor *y) {
    const concat_arg *c = arg;
    tx_tensor *ins = calloc((size_t)c->n, sizeof *ins);
    if (!ins)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "concat: out of host memory");
    tx_status st = TX_STATUS_OK;
    int m = 0;
    for (int i = 0; i < c->n && !st; i++) {
        st = tx_rows_of(ctx, "concat", c->xs[i], r0, r1, &ins[m]);
        m += !st;
    }
    if (!st)
        st = tx_concat(ctx, ins, m, c->axis, y);
    for (int i = 0; i < m; i++)
        tx_tensor_destroy(ctx, ins[i]);
    free(ins);
    return st;
}

tx_status tx_split_concat(tx_ctx *ctx, const tx_tensor *xs, int n, int axis, tx_tensor *out) {
    const tx_slot *s0 = slot(ctx, xs[0]);
    int rank = s0->rank, a = axis < 0 ? axis + rank : axis;
    int64_t d0 = s0->shape[0], row = 1; /* the result's row: every dim after 0 */
    for (int d = 1; d < rank; d++) {
        int64_t v = s0->shape[d];
        if (d == a)
            for (int i = 1; i < n; i++)
                v += slot(ctx, xs[i])->shape[d];
        row *= v;
    }
    if (a == 0) {
        /* copies of every input's rows, joined */
        tx_tensor *pieces = calloc((size_t)n, sizeof *pieces);
        if (!pieces)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "concat: out of host memory");
        tx_status st = TX_STATUS_OK;
        int k = 0;
        for (int i = 0; i < n && !st; i++) {
            st = tx_rows_of(ctx, "concat", xs[i], 0, slot(ctx, xs[i])->shape[0], &pieces[k]);
            k += !st;
        }
        st = tx_join_or_drop(ctx, "concat", st, pieces, k, out);
        free(pieces);
        return st;
    }
    /* along another dim: row ranges whose result fits a texture */
    concat_arg c = {xs, n, a};
    return over_rows(ctx, "concat", d0, row, concat_chunk, &c, out);
}
