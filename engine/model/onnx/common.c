/* The helpers the ONNX op families share, and the op lookup over every family's rows. */
#include <string.h>

#include "common.h"

void tx_x_info(const tx_xnode *x, int i, int *elem, int *rank, int64_t *shape) {
    const tx_session_val *v = x->in[i];
    *elem = v->is_const ? v->c.elem : v->elem;
    *rank = v->is_const ? v->c.rank : v->rank;
    memcpy(shape, v->is_const ? v->c.shape : v->shape, sizeof(int64_t) * TX_MAX_RANK);
}

tx_status tx_x_shape2(tx_xnode *x, int *r0, int64_t s0[TX_MAX_RANK], int *r1,
                      int64_t s1[TX_MAX_RANK]) {
    tx_status st = tx_x_shape(x, 0, r0, s0);
    return st ? st : tx_x_shape(x, 1, r1, s1);
}

tx_status tx_x_infer_same(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    tx_x_info(x, 0, &elem, &rank, shape);
    tx_x_set_info(x, 0, elem, rank, shape);
    return TX_STATUS_OK;
}

bool tx_bcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *out) {
    int r = ra > rb ? ra : rb;
    int64_t o[TX_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da == 1)
            o[i] = db;
        else if (db == 1)
            o[i] = da;
        else if (da < 0 || db < 0)
            o[i] = da < 0 ? db : da;
        else if (da != db)
            return false;
        else
            o[i] = da;
    }
    memcpy(out, o, sizeof(int64_t) * (size_t)r);
    *ro = r;
    return true;
}

tx_status tx_x_infer_bcast(tx_xnode *x) {
    int elem = 0, rank = 0, e2, r2;
    int64_t shape[TX_MAX_RANK] = {0}, s2[TX_MAX_RANK];
    bool known = true;
    int first = 1;
    for (int i = 0; i < x->n_in; i++) {
        if (!x->in[i])
            continue;
        tx_x_info(x, i, &e2, &r2, s2);
        if (r2 < 0) {
            known = false;
            continue;
        }
        if (first) {
            elem = e2;
            rank = r2;
            memcpy(shape, s2, sizeof shape);
            first = 0;
        } else if (!tx_bcast_shapes(rank, shape, r2, s2, &rank, shape)) {
            char a[160], b[160];
            tx_shape_str(a, sizeof a, rank, shape);
            tx_shape_str(b, sizeof b, r2, s2);
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "%s %s and input %d %s do not broadcast",
                             i == 1 ? "input 0" : "the inputs before", a, i, b);
        }
    }
    if (!first)
        tx_x_set_info(x, 0, elem, known ? rank : -1, shape);
    return TX_STATUS_OK;
}

int64_t tx_numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

int tx_norm_axis(int64_t a, int rank) {
    return (int)(a < 0 ? a + rank : a);
}

int tx_all_axes(int rank, int64_t *axes) {
    for (int i = 0; i < rank; i++)
        axes[i] = i;
    return rank;
}

tx_status tx_x_host2(tx_xnode *x, int i, const tx_hval **hi, int j, const tx_hval **hj) {
    tx_status st = tx_x_host(x, i, hi);
    return st ? st : tx_x_host(x, j, hj);
}

tx_status tx_x_host_like(tx_xnode *x, int i, int elem, const tx_hval **h, tx_hval *o) {
    tx_status st = tx_x_host(x, i, h);
    if (st)
        return st;
    if (!tx_hval_alloc(o, elem, (*h)->rank, (*h)->shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    return TX_STATUS_OK;
}

tx_status tx_x_host_ints(tx_xnode *x, int i, const char *what, int64_t *out, int max, int *n) {
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    if (h->numel > max)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s has %lld entries (at most %d)", what,
                         (long long)h->numel, max);
    for (int64_t k = 0; k < h->numel; k++)
        out[k] = h->i ? h->i[k] : (int64_t)h->f[k];
    *n = (int)h->numel;
    return TX_STATUS_OK;
}

void tx_tmps_free(tx_xnode *x, tx_tmp_list *l) {
    for (int i = 0; i < l->n; i++)
        tx_tensor_destroy(x->ctx, l->t[i]);
    l->n = 0;
}

tx_dtype tx_x_dtype_of(tx_xnode *x, tx_tensor t) {
    tx_dtype dt = TX_DTYPE_FLOAT32;
    tx_tensor_shape(x->ctx, t, NULL, NULL, &dt);
    return dt;
}

tx_status tx_x_to_dtype(tx_xnode *x, tx_tensor t, tx_dtype want, tx_tmp_list *l, tx_tensor *out) {
    if (tx_x_dtype_of(x, t) == want) {
        *out = t;
        return TX_STATUS_OK;
    }
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    tx_status st = tx_cast(x->ctx, t, want, false, out);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

tx_status tx_x_dev_as(tx_xnode *x, int i, tx_dtype want, tx_tmp_list *l, tx_tensor *out) {
    tx_tensor t;
    tx_status st = tx_x_dev(x, i, &t);
    return st ? st : tx_x_to_dtype(x, t, want, l, out);
}

tx_status tx_x_dev_same(tx_xnode *x, const int *idx, int n, tx_tmp_list *l, tx_tensor *ts) {
    bool all_int = true;
    for (int j = 0; j < n; j++) {
        tx_status st = tx_x_dev(x, idx[j], &ts[j]);
        if (st)
            return st;
        all_int &= tx_x_dtype_of(x, ts[j]) == TX_DTYPE_INT32;
    }
    for (int j = 0; j < n && !all_int; j++) {
        tx_status st = tx_x_to_dtype(x, ts[j], TX_DTYPE_FLOAT32, l, &ts[j]);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

tx_status tx_x_set_dev_typed(tx_xnode *x, int i, tx_tensor y, int elem, bool exact) {
    tx_dtype want = tx_onnx_type_is_int(elem) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    if (exact && tx_x_dtype_of(x, y) != want) {
        tx_tensor z;
        tx_status st = tx_cast(x->ctx, y, want, false, &z);
        tx_tensor_destroy(x->ctx, y);
        if (st)
            return st;
        y = z;
    }
    return tx_x_set_dev(x, i, y, elem);
}

tx_status tx_x_scalar(tx_xnode *x, float v, tx_tensor *out) {
    return tx_tensor_create(x->ctx, &(tx_tensor_desc){.rank = 0, .data = &v}, out);
}

tx_status tx_x_attr_ints(tx_xnode *x, const char *name, int64_t *out, int max, int *n) {
    const int64_t *v;
    *n = tx_attr_ints(x->node, name, &v);
    if (*n > max)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s has %d entries (at most %d)", name, *n, max);
    if (*n > 0)
        memcpy(out, v, sizeof(int64_t) * (size_t)*n);
    return TX_STATUS_OK;
}

tx_status tx_x_ints_attr_or_input(tx_xnode *x, const char *name, int64_t since, int i, int64_t *out,
                                  int max, int *n) {
    if (x->opset < since)
        return tx_x_attr_ints(x, name, out, max, n);
    *n = -1;
    if (!tx_x_has(x, i))
        return TX_STATUS_OK;
    return tx_x_host_ints(x, i, name, out, max, n);
}

tx_status tx_x_float_input_only(tx_xnode *x, int i) {
    int e = tx_x_elem(x, i);
    if (tx_x_has(x, i) && e && !tx_onnx_type_is_float(e))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                         x->node->op_type, tx_onnx_type_name(e));
    return TX_STATUS_OK;
}

/* A host int64 tensor uploaded as a node temporary. */
tx_status tx_x_upload_ints(tx_xnode *x, int rank, const int64_t *shape, const int64_t *v,
                           tx_tmp_list *l, tx_tensor *out) {
    tx_hval h;
    if (!tx_hval_alloc(&h, TX_ONNX_INT64, rank, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    memcpy(h.i, v, sizeof(int64_t) * (size_t)h.numel);
    tx_status st = tx_hval_upload(x->ctx, x->node->name, &h, out);
    tx_hval_free(&h);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

/* ---- the lookup ---- */

/* clang-format off */
static const tx_onnx_family *const k_families[] = {
    &tx_onnx_ops_elementwise, &tx_onnx_ops_matmul, &tx_onnx_ops_shape, &tx_onnx_ops_constant,
    &tx_onnx_ops_move,        &tx_onnx_ops_gather, &tx_onnx_ops_conv,  &tx_onnx_ops_norm,
    &tx_onnx_ops_reduce,      &tx_onnx_ops_resize,
    /* quantized tensors */
    &tx_onnx_ops_quant, &tx_onnx_ops_qlinear,
    /* sequence models and their companions */
    &tx_onnx_ops_rnn, &tx_onnx_ops_seq, &tx_onnx_ops_einsum, &tx_onnx_ops_dft,
    /* detection and indexing */
    &tx_onnx_ops_detect, &tx_onnx_ops_scatter, &tx_onnx_ops_sample, &tx_onnx_ops_linalg,
    /* losses */
    &tx_onnx_ops_loss,
};
/* clang-format on */

tx_op tx_onnx_name_to_op(const tx_onnx_name_op *k, size_t n, const char *op_type) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(k[i].name, op_type) == 0)
            return k[i].op;
    return TX_OP_NONE;
}

static const tx_onnx_op *find_in(const tx_onnx_family *f, const char *op_type) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->ops[i].op_type, op_type) == 0)
            return &f->ops[i];
    return NULL;
}

const tx_onnx_op *tx_onnx_op_find(const char *domain, const char *op_type) {
    if (domain && strcmp(domain, "ai.onnx.preview.training") == 0)
        return find_in(&tx_onnx_ops_training, op_type);
    if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0)
        return NULL;
    for (size_t f = 0; f < TX_COUNTOF(k_families); f++)
        for (size_t i = 0; i < k_families[f]->n; i++)
            if (strcmp(k_families[f]->ops[i].op_type, op_type) == 0)
                return &k_families[f]->ops[i];
    return NULL;
}
