/* The op builder of build.h: engine calls that track their results and carry
 * the first failure along. */
#include <stdlib.h>
#include <string.h>

#include "build.h"

tx_tensor tx_xb_track(tx_xb *b, tx_status st, tx_tensor t) {
    if (b->st || st) {
        if (!b->st)
            b->st = st;
        return (tx_tensor){0};
    }
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 64;
        tx_tensor *nt = realloc(b->t, sizeof(tx_tensor) * (size_t)cap);
        if (!nt) {
            tx_tensor_destroy(b->x->ctx, t);
            b->st = tx_x_fail(b->x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
            return (tx_tensor){0};
        }
        b->t = nt;
        b->cap = cap;
    }
    b->t[b->n++] = t;
    return t;
}

/* Drops t from the shared scalars (it is no longer tracked). */
static void forget_scalar(tx_xb *b, tx_tensor t) {
    for (int i = 0; i < b->ns; i++)
        if (b->sc[i].id == t.id) {
            b->ns--;
            b->sv[i] = b->sv[b->ns];
            b->sc[i] = b->sc[b->ns];
            return;
        }
}

tx_tensor tx_xb_untrack(tx_xb *b, tx_tensor t) {
    forget_scalar(b, t);
    for (int i = b->n - 1; i >= 0; i--)
        if (b->t[i].id == t.id) {
            memmove(&b->t[i], &b->t[i + 1], sizeof(tx_tensor) * (size_t)(b->n - i - 1));
            b->n--;
            break;
        }
    return t;
}

void tx_xb_release_from(tx_xb *b, int n0) {
    for (int i = n0; i < b->n; i++) {
        if (b->ns)
            forget_scalar(b, b->t[i]);
        tx_tensor_destroy(b->x->ctx, b->t[i]);
    }
    if (n0 < b->n)
        b->n = n0;
}

tx_status tx_xb_free(tx_xb *b) {
    tx_xb_release_from(b, 0);
    free(b->t);
    b->t = NULL;
    b->cap = b->ns = 0;
    return b->st;
}

tx_status tx_xb_fail(tx_xb *b, tx_status st, const char *msg) {
    if (!b->st)
        b->st = tx_x_fail(b->x, st, "%s", msg);
    return b->st;
}

void tx_xb_output(tx_xb *b, int i, tx_tensor t, int elem) {
    tx_tensor y;
    if (!b->st && !(b->st = tx_identity(b->x->ctx, t, &y)))
        b->st = tx_x_set_dev_typed(b->x, i, y, elem, true);
}

tx_tensor tx_xb_in(tx_xb *b, int i) {
    tx_tensor t = {0};
    if (!b->st)
        b->st = tx_x_dev(b->x, i, &t);
    return b->st ? (tx_tensor){0} : t;
}

tx_tensor tx_xb_unary(tx_xb *b, tx_op op, tx_tensor a) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_unary(b->x->ctx, op, a, &y), y);
}

tx_tensor tx_xb_binary(tx_xb *b, tx_op op, tx_tensor a, tx_tensor c) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_binary(b->x->ctx, op, a, c, &y), y);
}

tx_tensor tx_xb_act(tx_xb *b, tx_op op, tx_tensor a, float alpha, float beta) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_apply_act(b->x->ctx, op, alpha, beta, a, &y), y);
}

tx_tensor tx_xb_clip(tx_xb *b, tx_tensor a, float lo, float hi) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_clip(b->x->ctx, a, lo, hi, &y), y);
}

tx_tensor tx_xb_binary_s(tx_xb *b, tx_op op, tx_tensor a, float v) {
    return tx_xb_binary(b, op, a, tx_xb_scalar(b, v));
}

tx_tensor tx_xb_where(tx_xb *b, tx_tensor m, tx_tensor a, tx_tensor c) {
    tx_tensor y = {0}, w[3] = {m, a, c};
    return tx_xb_track(b, b->st ? b->st : tx_nary(b->x->ctx, TX_OP_WHERE, w, 3, &y), y);
}

tx_tensor tx_xb_scalar(tx_xb *b, float v) {
    for (int i = 0; i < b->ns && !b->st; i++)
        if (memcmp(&b->sv[i], &v, sizeof v) == 0)
            return b->sc[i];
    tx_tensor y = {0};
    y = tx_xb_track(b, b->st ? b->st : tx_x_scalar(b->x, v, &y), y);
    if (y.id && b->ns < (int)TX_COUNTOF(b->sv)) {
        b->sv[b->ns] = v;
        b->sc[b->ns++] = y;
    }
    return y;
}

tx_tensor tx_xb_matmul(tx_xb *b, tx_tensor a, tx_tensor c, bool tb, tx_tensor bias) {
    tx_matmul_desc d = {.transpose_b = tb, .bias = bias};
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_matmul(b->x->ctx, a, c, &d, &y), y);
}

tx_tensor tx_xb_reshape(tx_xb *b, tx_tensor a, int rank, const int64_t *shape) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_tensor_reshape(b->x->ctx, a, rank, shape, &y), y);
}

tx_tensor tx_xb_transpose(tx_xb *b, tx_tensor a, const int *perm) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_transpose(b->x->ctx, a, perm, &y), y);
}

tx_tensor tx_xb_slice(tx_xb *b, tx_tensor a, int axis, int64_t start, int64_t end, int64_t step) {
    tx_slice_desc d = {.n = 1, .has_axes = true};
    d.starts[0] = start;
    d.ends[0] = end;
    d.axes[0] = axis;
    d.steps[0] = step;
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_slice(b->x->ctx, a, &d, &y), y);
}

tx_tensor tx_xb_pad(tx_xb *b, tx_tensor a, const tx_pad_desc *d) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_pad(b->x->ctx, a, d, &y), y);
}

tx_tensor tx_xb_gather(tx_xb *b, tx_tensor a, tx_tensor ix, int axis) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_gather(b->x->ctx, a, ix, axis, &y), y);
}

tx_tensor tx_xb_take(tx_xb *b, tx_tensor a, int32_t k, int axis) {
    return tx_xb_gather(b, a, tx_xb_const(b, 0, NULL, TX_DTYPE_INT32, &k), axis);
}

tx_tensor tx_xb_concat(tx_xb *b, const tx_tensor *xs, int n, int axis) {
    tx_tensor y = {0};
    if (n == 1 && !b->st)
        return tx_xb_track(b, tx_identity(b->x->ctx, xs[0], &y), y);
    return tx_xb_track(b, b->st ? b->st : tx_concat(b->x->ctx, xs, n, axis, &y), y);
}

tx_tensor tx_xb_concat_tree(tx_xb *b, const tx_tensor *xs, int n, int axis) {
    if (b->st || n < 1)
        return (tx_tensor){0};
    if (n == 1)
        return tx_xb_concat(b, xs, 1, axis);
    tx_tensor *lv = malloc(sizeof(tx_tensor) * (size_t)n);
    if (!lv) {
        tx_xb_fail(b, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        return (tx_tensor){0};
    }
    memcpy(lv, xs, sizeof(tx_tensor) * (size_t)n);
    bool owned = false; /* level 0 is the caller's; later levels are ours */
    while (n > 1) {
        int m = 0, i = 0;
        tx_status st = TX_STATUS_OK;
        for (; i < n && !st; i += 4) { /* lv[m] (m <= i / 4) never overwrites what is left */
            int k = n - i < 4 ? n - i : 4;
            tx_tensor y = {0};
            st = k == 1 ? tx_identity(b->x->ctx, lv[i], &y)
                        : tx_concat(b->x->ctx, lv + i, k, axis, &y);
            for (int j = i; j < i + k && owned; j++)
                tx_tensor_destroy(b->x->ctx, lv[j]);
            if (!st)
                lv[m++] = y;
        }
        if (st) {
            for (int j = i; j < n && owned; j++)
                tx_tensor_destroy(b->x->ctx, lv[j]);
            for (int j = 0; j < m; j++)
                tx_tensor_destroy(b->x->ctx, lv[j]);
            free(lv);
            return tx_xb_track(b, st, (tx_tensor){0});
        }
        n = m;
        owned = true;
    }
    tx_tensor y = lv[0];
    free(lv);
    return tx_xb_track(b, TX_STATUS_OK, y);
}

tx_tensor tx_xb_reduce(tx_xb *b, tx_op op, tx_tensor a, const int *axes, int n_axes, bool keep) {
    tx_reduce_desc d = {.n_axes = n_axes, .drop_dims = !keep};
    memcpy(d.axes, axes, sizeof(int) * (size_t)n_axes);
    tx_tensor y = {0};
    if (n_axes == 0 && !b->st) /* nothing to reduce (ONNX would reduce everything) */
        return tx_xb_track(b, tx_identity(b->x->ctx, a, &y), y);
    return tx_xb_track(b, b->st ? b->st : tx_reduce(b->x->ctx, op, a, &d, &y), y);
}

tx_tensor tx_xb_cast(tx_xb *b, tx_tensor a, tx_dtype to) {
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_cast(b->x->ctx, a, to, false, &y), y);
}

tx_tensor tx_xb_const(tx_xb *b, int rank, const int64_t *shape, tx_dtype dt, const void *data) {
    tx_tensor_desc d = {.rank = rank, .dtype = dt, .data = data};
    if (rank > 0)
        memcpy(d.shape, shape, sizeof(int64_t) * (size_t)rank);
    tx_tensor y = {0};
    return tx_xb_track(b, b->st ? b->st : tx_tensor_create(b->x->ctx, &d, &y), y);
}

int tx_xb_shape(tx_xb *b, tx_tensor a, int64_t shape[TX_MAX_RANK]) {
    int rank = -1;
    if (!b->st)
        b->st = tx_tensor_shape(b->x->ctx, a, &rank, shape, NULL);
    return b->st ? -1 : rank;
}
