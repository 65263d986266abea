/* Split storage: a GPU tensor larger than one texture as parts (split.h). */
#include <stdlib.h>
#include <string.h>

#include "split.h"

/* Elements one texture holds. */
static int64_t texture_elems(const tx_ctx *ctx) {
    return (int64_t)ctx->max_tex * ctx->max_tex * 4;
}

bool tx_needs_split(const tx_ctx *ctx, tx_device dev, int64_t numel) {
    return dev == TX_DEVICE_GPU && numel > texture_elems(ctx);
}

bool tx_is_split(tx_ctx *ctx, tx_tensor t) {
    tx_slot *s = ctx ? tx_slot_get(ctx, t) : NULL;
    return s && s->st && s->st->n_parts > 0;
}

static int64_t part_numel(tx_ctx *ctx, tx_tensor p) {
    tx_slot *s = tx_slot_get(ctx, p);
    return s ? s->numel : 0;
}

int tx_split_parts(tx_ctx *ctx, tx_tensor t) {
    tx_slot *s = tx_slot_get(ctx, t);
    return s && s->st ? s->st->n_parts : 0;
}

tx_status tx_split_part_rows(tx_ctx *ctx, const char *op, tx_tensor t, int p, int64_t *r0,
                             int64_t *r1, tx_tensor *view) {
    tx_slot *s = tx_slot_get(ctx, t);
    int64_t row = 1, off = 0;
    for (int d = 1; d < s->rank; d++)
        row *= s->shape[d];
    for (int q = 0; q < p; q++)
        off += part_numel(ctx, s->st->parts[q]);
    tx_tensor part = s->st->parts[p];
    int64_t cnt = part_numel(ctx, part);
    if (s->rank < 1 || row == 0 || off % row || cnt % row) {
        char b[160];
        tx_shape_str(b, sizeof b, s->rank, s->shape);
        return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                       "%s: a tensor of shape %s split across %d textures does not hold whole "
                       "rows of its dim 0 in each (a reshaped view of a split tensor)",
                       op, b, s->st->n_parts);
    }
    *r0 = off / row;
    *r1 = (off + cnt) / row;
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, s->shape, sizeof shape);
    shape[0] = *r1 - *r0;
    return tx_tensor_reshape(ctx, part, s->rank, shape, view);
}

/* Rows [r0, r1) of an unsplit tensor: a slice of dim 0 (a view if all). */
static tx_status rows_plain(tx_ctx *ctx, tx_tensor t, int64_t r0, int64_t r1, tx_tensor *out) {
    tx_slice_desc d = {.n = 1, .starts = {r0}, .ends = {r1}, .steps = {1}};
    return tx_slice(ctx, t, &d, out);
}

tx_status tx_rows_of(tx_ctx *ctx, const char *op, tx_tensor t, int64_t r0, int64_t r1,
                     tx_tensor *out) {
    int n = tx_split_parts(ctx, t);
    if (!n)
        return rows_plain(ctx, t, r0, r1, out);
    tx_tensor *pieces = calloc((size_t)n, sizeof *pieces);
    if (!pieces)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    int k = 0;
    tx_status st = TX_STATUS_OK;
    for (int p = 0; p < n && !st; p++) {
        int64_t a, b;
        tx_tensor v;
        st = tx_split_part_rows(ctx, op, t, p, &a, &b, &v);
        if (st)
            break;
        int64_t lo = r0 > a ? r0 : a, hi = r1 < b ? r1 : b;
        if (lo < hi)
            st = rows_plain(ctx, v, lo - a, hi - a, &pieces[k++]);
        tx_tensor_destroy(ctx, v);
        if (st)
            k--;
    }
    if (!st && k == 0) /* no rows: an empty slice of the first part */
        st = rows_plain(ctx, tx_slot_get(ctx, t)->st->parts[0], 0, 0, &pieces[k++]);
    st = tx_join_or_drop(ctx, op, st, pieces, k, out);
    free(pieces);
    return st;
}

tx_status tx_join_or_drop(tx_ctx *ctx, const char *op, tx_status st, tx_tensor *pieces, int n,
                          tx_tensor *out) {
    if (!st)
        return tx_join_rows(ctx, op, pieces, n, out);
    for (int i = 0; i < n; i++)
        tx_tensor_destroy(ctx, pieces[i]);
    return st;
}

tx_status tx_join_rows(tx_ctx *ctx, const char *op, tx_tensor *pieces, int n, tx_tensor *out) {
    tx_status st = TX_STATUS_OK;
    int64_t rows = 0, numel = 0;
    tx_slot *s0 = tx_slot_get(ctx, pieces[0]);
    int rank = s0->rank;
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, s0->shape, sizeof shape);
    tx_dtype dtype = s0->dtype;
    bool any_split = false;
    for (int i = 0; i < n; i++) {
        tx_slot *s = tx_slot_get(ctx, pieces[i]);
        rows += s->shape[0];
        numel += s->numel;
        any_split |= s->st->n_parts > 0;
    }
    shape[0] = rows;
    if (n == 1) {
        *out = pieces[0];
        return TX_STATUS_OK;
    }
    if (!any_split && !tx_needs_split(ctx, s0->st->dev, numel)) {
        st = tx_concat(ctx, pieces, n, 0, out);
    } else {
        /* a split tensor whose parts are the pieces (split pieces give theirs) */
        int np = 0;
        for (int i = 0; i < n; i++) {
            int k = tx_split_parts(ctx, pieces[i]);
            np += k ? k : 1;
        }
        tx_storage *stg = calloc(1, sizeof *stg);
        tx_tensor *parts = calloc((size_t)np, sizeof *parts);
        if (!stg || !parts) {
            free(stg);
            free(parts);
            st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
        }
        int k = 0;
        for (int i = 0; i < n && !st; i++) {
            int m = tx_split_parts(ctx, pieces[i]);
            tx_slot *s = tx_slot_get(ctx, pieces[i]);
            for (int p = 0; p < m && !st; p++) {
                tx_slot *ps = tx_slot_get(ctx, s->st->parts[p]);
                st = tx_tensor_reshape(ctx, s->st->parts[p], 1, &ps->numel, &parts[k]);
                k += !st;
                s = tx_slot_get(ctx, pieces[i]);
            }
            if (!m && !st) {
                st = tx_tensor_reshape(ctx, pieces[i], 1, &s->numel, &parts[k]);
                k += !st;
            }
        }
        if (!st) {
            stg->dev = TX_DEVICE_GPU;
            stg->parts = parts;
            stg->n_parts = k;
            st = tx_tensor_wrap(ctx, op, stg, rank, shape, dtype, out);
        } else if (parts) {
            for (int i = 0; i < k; i++)
                tx_tensor_destroy(ctx, parts[i]);
            free(parts);
            free(stg);
        }
    }
    for (int i = 0; i < n; i++)
        tx_tensor_destroy(ctx, pieces[i]);
    return st;
}
