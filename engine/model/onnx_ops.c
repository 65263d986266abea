/* ONNX node executors: op_type → a C function that validates the node's
 * attributes and calls the engine's public ops.
 *
 * How to add an op
 * ----------------
 * 1. Write `static tx_status exec_<name>(tx_xnode *x)`:
 *    - read attributes with tx_attr_int/float/str/ints(x->node, ...);
 *    - get inputs with tx_x_dev(x, i, &t) (a device tensor; constants are
 *      uploaded once) or, for shape-like inputs, tx_x_host(x, i, &hval);
 *    - call the engine (tx_unary, tx_binary, tx_conv ...) and hand each result
 *      to tx_x_set_dev(x, i, tensor, onnx_elem_type);
 *    - report bad attributes/inputs with tx_x_fail(x, status, "...") and
 *      features you do not support with TX_STATUS_UNSUPPORTED.
 *    At plan time the same function runs with x->fold set when all inputs are
 *    constants: tx_x_dev then returns TX_STATUS_DEFER (just return it) and a
 *    host path (if the op has one, flag TX_OPF_HOST) computes the output with
 *    tx_x_set_host. If the op can take a fused activation (Conv), honour
 *    x->act and flag TX_OPF_FUSE_ACT: the fusion pass then folds a following
 *    Relu/Sigmoid/Tanh/Gelu/Clip(0,6) into it.
 * 2. Optionally write `static tx_status infer_<name>(tx_xnode *x)` setting
 *    static output shapes with tx_x_set_info (infer_same, infer_bcast exist).
 * 3. Add one line to k_ops below:
 *    {"OpType", exec, infer, flags, min_in, max_in, host_in}
 *    (host_in: bit i set when input i is read with tx_x_host, e.g. axes).
 */
#include <math.h>
#include <string.h>

#include "ref/ref.h"
#include "session.h"

/* ---- small helpers ---- */

/* Static info of input i (plan-time knowledge; constants exact). */
static void sinfo(const tx_xnode *x, int i, int *elem, int *rank, int64_t *shape) {
    const tx_session_val *v = x->in[i];
    *elem = v->is_const ? v->c.elem : v->elem;
    *rank = v->is_const ? v->c.rank : v->rank;
    memcpy(shape, v->is_const ? v->c.shape : v->shape, sizeof(int64_t) * TX_MAX_RANK);
}

static tx_status infer_same(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    sinfo(x, 0, &elem, &rank, shape);
    tx_x_set_info(x, 0, elem, rank, shape);
    return TX_STATUS_OK;
}

/* numpy broadcasting of static shapes (-1: unknown). false if incompatible. */
static bool bcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *o) {
    int r = ra > rb ? ra : rb;
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
    *ro = r;
    return true;
}

static tx_status infer_bcast(tx_xnode *x) {
    int elem = 0, rank = 0, e2, r2;
    int64_t shape[TX_MAX_RANK] = {0}, s2[TX_MAX_RANK];
    bool known = true;
    int first = 1;
    for (int i = 0; i < x->n_in; i++) {
        if (!x->in[i])
            continue;
        sinfo(x, i, &e2, &r2, s2);
        if (r2 < 0) {
            known = false;
            continue;
        }
        if (first) {
            elem = e2;
            rank = r2;
            memcpy(shape, s2, sizeof shape);
            first = 0;
        } else if (!bcast(rank, shape, r2, s2, &rank, shape)) {
            known = false;
        }
    }
    if (!first)
        tx_x_set_info(x, 0, elem, known ? rank : -1, shape);
    return TX_STATUS_OK;
}

static int64_t numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

static int norm_axis(int64_t a, int rank) { return (int)(a < 0 ? a + rank : a); }

/* A host value's entries as int64 (shape-like inputs). */
static tx_status host_ints(tx_xnode *x, int i, const char *what, int64_t *out, int max,
                           int *n) {
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

/* A copy of host input i with a new shape (views of host values). */
static tx_status host_reshaped(tx_xnode *x, int i, int rank, const int64_t *shape) {
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    tx_hval o;
    if (!tx_hval_copy(&o, h))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    o.rank = rank;
    memset(o.shape, 0, sizeof o.shape);
    memcpy(o.shape, shape, sizeof(int64_t) * (size_t)rank);
    return tx_x_set_host(x, 0, &o);
}

/* Output 0 = input 0 with a new shape: a host copy or a device view. */
static tx_status emit_view(tx_xnode *x, int rank, const int64_t *shape) {
    if (rank > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d exceeds %d", rank,
                         TX_MAX_RANK);
    if (tx_x_is_host(x, 0))
        return host_reshaped(x, 0, rank, shape);
    tx_tensor t, y;
    tx_status st = tx_x_dev(x, 0, &t);
    if (!st)
        st = tx_tensor_reshape(x->ctx, t, rank, shape, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
    return st;
}

/* ---- unary ---- */

static tx_op unary_op(const char *op_type) {
    static const struct {
        const char *name;
        tx_op op;
    } k[] = {{"Relu", TX_OP_RELU}, {"Sigmoid", TX_OP_SIGMOID}, {"Tanh", TX_OP_TANH},
             {"Exp", TX_OP_EXP},   {"Log", TX_OP_LOG},         {"Sqrt", TX_OP_SQRT},
             {"Abs", TX_OP_ABS},   {"Neg", TX_OP_NEG},         {"Erf", TX_OP_ERF},
             {"Gelu", TX_OP_GELU}};
    for (size_t i = 0; i < TX_COUNTOF(k); i++)
        if (strcmp(k[i].name, op_type) == 0)
            return k[i].op;
    return TX_OP_NONE;
}

static tx_status exec_unary(tx_xnode *x) {
    tx_op op = unary_op(x->node->op_type);
    TX_ASSERT(op != TX_OP_NONE);
    if (op == TX_OP_GELU && strcmp(tx_attr_str(x->node, "approximate", "none"), "none") != 0)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "approximate=\"%s\" is unsupported",
                         tx_attr_str(x->node, "approximate", ""));
    int elem = tx_x_elem(x, 0);
    if (tx_x_is_host(x, 0) && tx_onnx_type_is_float(elem)) {
        /* constant folding: the plain-C reference's scalar function */
        const tx_hval *h;
        tx_status st = tx_x_host(x, 0, &h);
        if (st)
            return st;
        tx_hval o;
        if (!tx_hval_copy(&o, h))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t k = 0; k < o.numel; k++)
            o.f[k] = (float)tx_ref_unary_scalar(op, o.f[k]);
        return tx_x_set_host(x, 0, &o);
    }
    if (elem && !tx_onnx_type_is_float(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                         x->node->op_type, tx_onnx_type_name(elem));
    tx_tensor t, y;
    tx_status st = tx_x_dev(x, 0, &t);
    if (!st)
        st = tx_unary(x->ctx, op, t, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, elem);
    return st;
}

static tx_status exec_clip(tx_xnode *x) {
    float lo = -INFINITY, hi = INFINITY;
    if (x->opset < 11) {
        lo = tx_attr_float(x->node, "min", -INFINITY);
        hi = tx_attr_float(x->node, "max", INFINITY);
    } else {
        for (int i = 1; i <= 2; i++) {
            if (!tx_x_has(x, i))
                continue;
            const tx_hval *h;
            tx_status st = tx_x_host(x, i, &h);
            if (st)
                return st;
            if (h->numel != 1)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s must be a scalar",
                                 i == 1 ? "min" : "max");
            *(i == 1 ? &lo : &hi) = (float)tx_hval_get(h, 0);
        }
    }
    int elem = tx_x_elem(x, 0);
    if (elem && !tx_onnx_type_is_float(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "Clip on %s tensors is unsupported",
                         tx_onnx_type_name(elem));
    if (lo > hi) /* ONNX: min > max sets every output to max */
        lo = hi;
    tx_tensor t, y;
    tx_status st = tx_x_dev(x, 0, &t);
    if (!st)
        st = tx_clip(x->ctx, t, lo, hi, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, elem);
    return st;
}

/* ---- binary (numpy broadcasting) ---- */

static tx_op binary_op(const char *op_type) {
    static const struct {
        const char *name;
        tx_op op;
    } k[] = {{"Add", TX_OP_ADD}, {"Sub", TX_OP_SUB}, {"Mul", TX_OP_MUL}, {"Div", TX_OP_DIV},
             {"Pow", TX_OP_POW}, {"Min", TX_OP_MIN}, {"Max", TX_OP_MAX}};
    for (size_t i = 0; i < TX_COUNTOF(k); i++)
        if (strcmp(k[i].name, op_type) == 0)
            return k[i].op;
    return TX_OP_NONE;
}

static double host_bin_f(tx_op op, double a, double b) {
    switch (op) {
    case TX_OP_ADD: return a + b;
    case TX_OP_SUB: return a - b;
    case TX_OP_MUL: return a * b;
    case TX_OP_DIV: return a / b;
    case TX_OP_POW: return pow(a, b);
    case TX_OP_MIN: return isnan(a) || isnan(b) ? a + b : (a < b ? a : b);
    case TX_OP_MAX: return isnan(a) || isnan(b) ? a + b : (a > b ? a : b);
    default: return 0;
    }
}

static int64_t host_bin_i(tx_op op, int64_t a, int64_t b) {
    switch (op) {
    case TX_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case TX_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case TX_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case TX_OP_DIV: return b == 0 ? 0 : (b == -1 ? -a : a / b);
    case TX_OP_POW: return (int64_t)pow((double)a, (double)b);
    case TX_OP_MIN: return a < b ? a : b;
    case TX_OP_MAX: return a > b ? a : b;
    default: return 0;
    }
}

/* y = a (op) b on the host with broadcasting. */
static tx_status host_binary(tx_xnode *x, tx_op op, const tx_hval *a, const tx_hval *b,
                             tx_hval *o) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (!bcast(a->rank, a->shape, b->rank, b->shape, &rank, shape))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "shapes do not broadcast");
    bool isf = a->f || b->f;
    if (!tx_hval_alloc(o, isf ? (a->f ? a->elem : b->elem) : a->elem, rank, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], ea = 1, eb = 1;
    for (int d = rank - 1; d >= 0; d--) {
        int ia = d - (rank - a->rank), ib = d - (rank - b->rank);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        sa[d] = da == 1 ? 0 : ea;
        sb[d] = db == 1 ? 0 : eb;
        ea *= da;
        eb *= db;
    }
    for (int64_t k = 0; k < o->numel; k++) {
        int64_t r = k, ia = 0, ib = 0;
        for (int d = rank - 1; d >= 0; d--) {
            int64_t c = r % shape[d];
            r /= shape[d];
            ia += c * sa[d];
            ib += c * sb[d];
        }
        if (isf)
            o->f[k] = (float)host_bin_f(op, tx_hval_get(a, ia), tx_hval_get(b, ib));
        else
            o->i[k] = host_bin_i(op, a->i[ia], b->i[ib]);
    }
    return TX_STATUS_OK;
}

/* Input i on the device as float: a host int input of a float op (the int64
 * exponent of Pow(float, int64)) is converted. */
static tx_status dev_as_float(tx_xnode *x, int i, tx_tensor *t, bool *temp) {
    *temp = false;
    int e = tx_x_elem(x, i);
    if (!tx_onnx_type_is_int(e))
        return tx_x_dev(x, i, t);
    if (!tx_x_is_host(x, i))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "mixing float and %s device tensors is unsupported",
                         tx_onnx_type_name(e));
    const tx_hval *h;
    tx_status st = tx_x_host(x, i, &h);
    if (st)
        return st;
    tx_hval f;
    if (!tx_hval_alloc(&f, TX_ONNX_FLOAT, h->rank, h->shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < h->numel; k++)
        f.f[k] = (float)h->i[k];
    st = x->fold ? TX_STATUS_DEFER : tx_hval_upload(x->ctx, x->node->name, &f, t);
    tx_hval_free(&f);
    *temp = !st;
    return st;
}

static tx_status exec_binary(tx_xnode *x) {
    tx_op op = binary_op(x->node->op_type);
    TX_ASSERT(op != TX_OP_NONE);
    int n = 0, idx[64];
    if (x->n_in > 64)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 64 inputs");
    for (int i = 0; i < x->n_in; i++)
        if (x->in[i])
            idx[n++] = i;
    if (n == 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "no inputs");
    if (tx_x_all_host(x)) {
        const tx_hval *a;
        tx_status st = tx_x_host(x, idx[0], &a);
        if (st)
            return st;
        tx_hval acc;
        if (!tx_hval_copy(&acc, a))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int j = 1; j < n && !st; j++) {
            const tx_hval *b;
            tx_hval o;
            st = tx_x_host(x, idx[j], &b);
            if (!st)
                st = host_binary(x, op, &acc, b, &o);
            if (!st) {
                tx_hval_free(&acc);
                acc = o;
            }
        }
        if (st) {
            tx_hval_free(&acc);
            return st;
        }
        return tx_x_set_host(x, 0, &acc);
    }
    int e0 = tx_x_elem(x, idx[0]);
    bool isf = tx_onnx_type_is_float(e0);
    for (int j = 1; j < n; j++)
        isf |= tx_onnx_type_is_float(tx_x_elem(x, idx[j]));
    tx_tensor acc = {0};
    bool acc_temp = false;
    tx_status st = isf ? dev_as_float(x, idx[0], &acc, &acc_temp) : tx_x_dev(x, idx[0], &acc);
    if (st)
        return st;
    if (n == 1) { /* Min/Max of one input: a view */
        int rank;
        int64_t shape[TX_MAX_RANK];
        tx_tensor y;
        st = tx_tensor_shape(x->ctx, acc, &rank, shape, NULL);
        if (!st)
            st = tx_tensor_reshape(x->ctx, acc, rank, shape, &y);
        if (acc_temp)
            tx_tensor_destroy(x->ctx, acc);
        return st ? st : tx_x_set_dev(x, 0, y, e0);
    }
    for (int j = 1; j < n && !st; j++) {
        tx_tensor b, y;
        bool b_temp = false;
        st = isf ? dev_as_float(x, idx[j], &b, &b_temp) : tx_x_dev(x, idx[j], &b);
        if (!st)
            st = tx_binary(x->ctx, op, acc, b, &y);
        if (b_temp)
            tx_tensor_destroy(x->ctx, b);
        if (acc_temp)
            tx_tensor_destroy(x->ctx, acc);
        if (!st) {
            acc = y;
            acc_temp = true;
        }
    }
    if (st)
        return st;
    return tx_x_set_dev(x, 0, acc, isf && !tx_onnx_type_is_float(e0) ? TX_ONNX_FLOAT : e0);
}

/* ---- MatMul, Gemm ---- */

static tx_status apply_act(tx_xnode *x, tx_tensor *y) {
    if (x->act == TX_OP_NONE)
        return TX_STATUS_OK;
    tx_tensor z;
    tx_status st = x->act == TX_OP_RELU6 ? tx_clip(x->ctx, *y, 0, 6, &z)
                                        : tx_unary(x->ctx, x->act, *y, &z);
    tx_tensor_destroy(x->ctx, *y);
    if (!st)
        *y = z;
    return st;
}

static tx_status check_float_inputs(tx_xnode *x) {
    for (int i = 0; i < x->n_in; i++) {
        int e = tx_x_elem(x, i);
        if (x->in[i] && e && !tx_onnx_type_is_float(e))
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                             x->node->op_type, tx_onnx_type_name(e));
    }
    return TX_STATUS_OK;
}

static tx_status exec_matmul(tx_xnode *x) {
    tx_status st = check_float_inputs(x);
    if (st)
        return st;
    tx_tensor a, b, y;
    tx_matmul_desc d = {.activation = x->act};
    st = tx_x_dev(x, 0, &a);
    if (!st)
        st = tx_x_dev(x, 1, &b);
    if (!st && x->bias) {
        tx_session_val *in[1] = {x->bias};
        tx_xnode bx = *x;
        bx.in = in;
        bx.n_in = 1;
        st = tx_x_dev(&bx, 0, &d.bias);
    }
    if (!st)
        st = tx_matmul(x->ctx, a, b, &d, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    return st;
}

static tx_status scalar_tensor(tx_xnode *x, float v, tx_tensor *out) {
    return tx_tensor_create(x->ctx, &(tx_tensor_desc){.rank = 0, .data = &v}, out);
}

static tx_status exec_gemm(tx_xnode *x) {
    tx_status st = check_float_inputs(x);
    if (st)
        return st;
    float alpha = tx_attr_float(x->node, "alpha", 1.0f), beta = tx_attr_float(x->node, "beta",
                                                                              1.0f);
    tx_matmul_desc d = {.transpose_a = tx_attr_int(x->node, "transA", 0) != 0,
                        .transpose_b = tx_attr_int(x->node, "transB", 0) != 0};
    int ra, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK];
    st = tx_x_shape(x, 0, &ra, sa);
    if (!st)
        st = tx_x_shape(x, 1, &rb, sb);
    if (st)
        return st;
    if (ra != 2 || rb != 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "A and B must be 2-D (got rank %d and %d)",
                         ra, rb);
    int64_t n = d.transpose_b ? sb[0] : sb[1];
    tx_tensor a, b, c = {0}, y;
    st = tx_x_dev(x, 0, &a);
    if (!st)
        st = tx_x_dev(x, 1, &b);
    if (st)
        return st;
    bool c_in_matmul = false;
    if (x->bias) {
        tx_session_val *in[1] = {x->bias};
        tx_xnode bx = *x;
        bx.in = in;
        bx.n_in = 1;
        st = tx_x_dev(&bx, 0, &d.bias);
        c_in_matmul = true;
    } else if (tx_x_has(x, 2)) {
        int rc;
        int64_t sc[TX_MAX_RANK];
        st = tx_x_shape(x, 2, &rc, sc);
        if (!st)
            st = tx_x_dev(x, 2, &c);
        if (!st && alpha == 1.0f && beta == 1.0f && numel_of(rc, sc) == n &&
            (rc == 1 || (rc == 2 && sc[0] == 1))) {
            d.bias = c;
            c_in_matmul = true;
        }
    }
    if (st)
        return st;
    bool post = alpha != 1.0f || (c.id && !c_in_matmul);
    if (!post)
        d.activation = x->act;
    st = tx_matmul(x->ctx, a, b, &d, &y);
    if (!st && alpha != 1.0f) {
        tx_tensor s, z;
        st = scalar_tensor(x, alpha, &s);
        if (!st) {
            st = tx_binary(x->ctx, TX_OP_MUL, y, s, &z);
            tx_tensor_destroy(x->ctx, s);
            tx_tensor_destroy(x->ctx, y);
            y = z;
        }
    }
    if (!st && c.id && !c_in_matmul) {
        tx_tensor cb = c, s, z;
        bool cb_temp = false;
        if (beta != 1.0f) {
            st = scalar_tensor(x, beta, &s);
            if (!st) {
                st = tx_binary(x->ctx, TX_OP_MUL, c, s, &cb);
                tx_tensor_destroy(x->ctx, s);
                cb_temp = !st;
            }
        }
        if (!st) {
            st = tx_binary(x->ctx, TX_OP_ADD, y, cb, &z);
            tx_tensor_destroy(x->ctx, y);
            y = z;
        }
        if (cb_temp)
            tx_tensor_destroy(x->ctx, cb);
    }
    if (!st && post)
        st = apply_act(x, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    return st;
}

static tx_status infer_matmul(tx_xnode *x) {
    int ea, ra, eb, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], o[TX_MAX_RANK + 2];
    sinfo(x, 0, &ea, &ra, sa);
    sinfo(x, 1, &eb, &rb, sb);
    if (ra < 1 || rb < 1)
        return TX_STATUS_OK;
    int64_t m = ra >= 2 ? sa[ra - 2] : 1, n = rb >= 2 ? sb[rb - 1] : 1;
    int rbat;
    int64_t bat[TX_MAX_RANK];
    if (!bcast(ra > 2 ? ra - 2 : 0, sa, rb > 2 ? rb - 2 : 0, sb, &rbat, bat))
        return TX_STATUS_OK;
    int r = 0;
    for (int i = 0; i < rbat; i++)
        o[r++] = bat[i];
    if (ra >= 2)
        o[r++] = m;
    if (rb >= 2)
        o[r++] = n;
    if (r <= TX_MAX_RANK)
        tx_x_set_info(x, 0, TX_ONNX_FLOAT, r, o);
    return TX_STATUS_OK;
}

static tx_status infer_gemm(tx_xnode *x) {
    int ea, ra, eb, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK];
    sinfo(x, 0, &ea, &ra, sa);
    sinfo(x, 1, &eb, &rb, sb);
    if (ra != 2 || rb != 2)
        return TX_STATUS_OK;
    int64_t o[2] = {tx_attr_int(x->node, "transA", 0) ? sa[1] : sa[0],
                    tx_attr_int(x->node, "transB", 0) ? sb[0] : sb[1]};
    tx_x_set_info(x, 0, TX_ONNX_FLOAT, 2, o);
    return TX_STATUS_OK;
}

/* ---- views: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout ---- */

/* Resolves a Reshape target: 0 copies the input dim (unless allowzero), one -1
 * is inferred from numel. */
static tx_status reshape_target(tx_xnode *x, int in_rank, const int64_t *in_shape, int n,
                                const int64_t *spec, bool allowzero, int64_t *out) {
    if (n > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "target rank %d exceeds %d", n,
                         TX_MAX_RANK);
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = spec[i];
        if (d == 0 && !allowzero) {
            if (i >= in_rank)
                return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "0 at dim %d copies a dim the "
                                                              "input lacks", i);
            d = in_shape[i];
        }
        if (d == -1) {
            if (infer >= 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "more than one -1 in the shape");
            infer = i;
        } else if (d < 0) {
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "negative dim %lld in the shape",
                             (long long)d);
        } else {
            known *= d;
        }
        out[i] = d;
    }
    int64_t total = numel_of(in_rank, in_shape);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "cannot infer the -1 dim");
        out[infer] = total / known;
        known = total;
    }
    if (known != total) {
        char a[160], b[160];
        tx_shape_str(a, sizeof a, in_rank, in_shape);
        tx_shape_str(b, sizeof b, n, out);
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "cannot reshape %s to %s", a, b);
    }
    return TX_STATUS_OK;
}

static tx_status reshape_spec(tx_xnode *x, int64_t *spec, int *n) {
    if (x->opset < 5) {
        const int64_t *v;
        *n = tx_attr_ints(x->node, "shape", &v);
        if (*n < 0 || *n > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs a shape attribute of rank "
                                                            "<= %d", TX_MAX_RANK);
        memcpy(spec, v, sizeof(int64_t) * (size_t)*n);
        return TX_STATUS_OK;
    }
    return host_ints(x, 1, "the shape", spec, TX_MAX_RANK, n);
}

static tx_status exec_reshape(tx_xnode *x) {
    int64_t spec[TX_MAX_RANK], out[TX_MAX_RANK], in_shape[TX_MAX_RANK];
    int n, in_rank;
    tx_status st = reshape_spec(x, spec, &n);
    if (!st)
        st = tx_x_shape(x, 0, &in_rank, in_shape);
    if (!st)
        st = reshape_target(x, in_rank, in_shape, n, spec, tx_attr_int(x->node, "allowzero", 0),
                            out);
    return st ? st : emit_view(x, n, out);
}

static tx_status infer_reshape(tx_xnode *x) {
    int64_t spec[TX_MAX_RANK], out[TX_MAX_RANK], in_shape[TX_MAX_RANK];
    int n, in_rank;
    if (reshape_spec(x, spec, &n))
        return TX_STATUS_OK; /* the target is only known at run time */
    tx_status st = tx_x_shape(x, 0, &in_rank, in_shape);
    if (!st)
        st = reshape_target(x, in_rank, in_shape, n, spec, tx_attr_int(x->node, "allowzero", 0),
                            out);
    if (st == TX_STATUS_DEFER) { /* input shape unknown: rank still known */
        for (int i = 0; i < n; i++)
            out[i] = spec[i] > 0 ? spec[i] : -1;
        st = TX_STATUS_OK;
    }
    if (!st)
        tx_x_set_info(x, 0, tx_x_elem(x, 0), n, out);
    return st;
}

static tx_status flatten_shape(tx_xnode *x, int rank, const int64_t *shape, int64_t *out) {
    int64_t axis = tx_attr_int(x->node, "axis", 1);
    if (axis < -rank || axis > rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside [-%d, %d]",
                         (long long)axis, rank, rank);
    int a = norm_axis(axis, rank);
    out[0] = numel_of(a, shape);
    out[1] = numel_of(rank - a, shape + a);
    return TX_STATUS_OK;
}

static tx_status exec_flatten(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK], out[2];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = flatten_shape(x, rank, shape, out);
    return st ? st : emit_view(x, 2, out);
}

static tx_status infer_flatten(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK], out[2];
    if (!tx_x_shape(x, 0, &rank, shape) && !flatten_shape(x, rank, shape, out))
        tx_x_set_info(x, 0, tx_x_elem(x, 0), 2, out);
    return TX_STATUS_OK;
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 from 13. */
static tx_status axes_of(tx_xnode *x, int64_t *axes, int *n, bool *given) {
    *given = true;
    if (x->opset < 13) {
        const int64_t *v;
        *n = tx_attr_ints(x->node, "axes", &v);
        if (*n < 0) {
            *n = 0;
            *given = false;
            return TX_STATUS_OK;
        }
        if (*n > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "too many axes");
        memcpy(axes, v, sizeof(int64_t) * (size_t)*n);
        return TX_STATUS_OK;
    }
    if (!tx_x_has(x, 1)) {
        *n = 0;
        *given = false;
        return TX_STATUS_OK;
    }
    return host_ints(x, 1, "axes", axes, TX_MAX_RANK, n);
}

/* Validates and normalizes axes against rank into mark[] (repeats refused). */
static tx_status mark_axes(tx_xnode *x, const int64_t *axes, int n, int rank, bool *mark) {
    memset(mark, 0, sizeof(bool) * TX_MAX_RANK);
    for (int i = 0; i < n; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                             (long long)axes[i], rank);
        int a = norm_axis(axes[i], rank);
        if (mark[a])
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %d is repeated", a);
        mark[a] = true;
    }
    return TX_STATUS_OK;
}

static tx_status squeeze_shape(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                               int64_t *out) {
    int64_t axes[TX_MAX_RANK];
    int n;
    bool given;
    tx_status st = axes_of(x, axes, &n, &given);
    if (st)
        return st;
    bool drop[TX_MAX_RANK];
    if ((st = mark_axes(x, axes, n, rank, drop)))
        return st;
    for (int a = 0; a < rank; a++)
        if (drop[a] && shape[a] != 1)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "dim %d is %lld, not 1", a,
                             (long long)shape[a]);
    *orank = 0;
    for (int d = 0; d < rank; d++)
        if (!(given ? drop[d] : shape[d] == 1))
            out[(*orank)++] = shape[d];
    return TX_STATUS_OK;
}

static tx_status unsqueeze_shape(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                                 int64_t *out) {
    int64_t axes[TX_MAX_RANK];
    int n;
    bool given;
    tx_status st = axes_of(x, axes, &n, &given);
    if (st)
        return st;
    int r = rank + n;
    if (r > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d exceeds %d", r,
                         TX_MAX_RANK);
    bool ins[TX_MAX_RANK];
    if ((st = mark_axes(x, axes, n, r, ins)))
        return st;
    int j = 0;
    for (int d = 0; d < r; d++)
        out[d] = ins[d] ? 1 : shape[j++];
    *orank = r;
    return TX_STATUS_OK;
}

typedef tx_status (*shape_fn)(tx_xnode *x, int rank, const int64_t *shape, int *orank,
                              int64_t *out);

static tx_status exec_shaped(tx_xnode *x, shape_fn f) {
    int rank, orank;
    int64_t shape[TX_MAX_RANK], out[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = f(x, rank, shape, &orank, out);
    return st ? st : emit_view(x, orank, out);
}

static tx_status infer_shaped(tx_xnode *x, shape_fn f) {
    int rank, orank;
    int64_t shape[TX_MAX_RANK], out[TX_MAX_RANK];
    if (!tx_x_shape(x, 0, &rank, shape) && !f(x, rank, shape, &orank, out))
        tx_x_set_info(x, 0, tx_x_elem(x, 0), orank, out);
    return TX_STATUS_OK;
}

static tx_status exec_squeeze(tx_xnode *x) { return exec_shaped(x, squeeze_shape); }
static tx_status exec_unsqueeze(tx_xnode *x) { return exec_shaped(x, unsqueeze_shape); }
static tx_status infer_squeeze(tx_xnode *x) { return infer_shaped(x, squeeze_shape); }
static tx_status infer_unsqueeze(tx_xnode *x) { return infer_shaped(x, unsqueeze_shape); }

static tx_status exec_identity(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (tx_x_has(x, 2)) { /* Dropout's training_mode */
        const tx_hval *h;
        tx_status st = tx_x_host(x, 2, &h);
        if (st)
            return st;
        if (h->numel == 1 && tx_hval_get(h, 0) != 0)
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "training_mode is unsupported");
    }
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = emit_view(x, rank, shape);
    if (!st && x->n_out > 1 && x->out[1]) { /* Dropout's mask: all true at inference */
        tx_hval m;
        if (!st && !tx_hval_alloc(&m, TX_ONNX_BOOL, rank, shape))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        if (!st) {
            for (int64_t k = 0; k < m.numel; k++)
                m.i[k] = 1;
            st = tx_x_set_host(x, 1, &m);
        }
    }
    return st;
}

/* ---- shape computations (host) ---- */

static tx_status set_host_ints(tx_xnode *x, int o, int rank, const int64_t *shape,
                               const int64_t *v) {
    tx_hval h;
    if (!tx_hval_alloc(&h, TX_ONNX_INT64, rank, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    memcpy(h.i, v, sizeof(int64_t) * (size_t)h.numel);
    return tx_x_set_host(x, o, &h);
}

static tx_status exec_shape(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t start = tx_attr_int(x->node, "start", 0), end = tx_attr_int(x->node, "end", rank);
    if (start < 0)
        start += rank;
    if (end < 0)
        end += rank;
    start = start < 0 ? 0 : (start > rank ? rank : start);
    end = end < 0 ? 0 : (end > rank ? rank : end);
    int64_t n = end > start ? end - start : 0;
    return set_host_ints(x, 0, 1, &n, shape + start);
}

static tx_status infer_shape(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    sinfo(x, 0, &elem, &rank, shape);
    int64_t n = rank; /* before start/end; good enough when they are absent */
    bool plain = !tx_attr_find(x->node, "start") && !tx_attr_find(x->node, "end");
    tx_x_set_info(x, 0, TX_ONNX_INT64, 1, (int64_t[]){plain && rank >= 0 ? n : -1});
    return TX_STATUS_OK;
}

static tx_status exec_size(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t n = numel_of(rank, shape);
    return set_host_ints(x, 0, 0, NULL, &n);
}

static tx_status hval_from_attr(tx_xnode *x, const tx_onnx_attr *a, tx_hval *out) {
    switch (a->type) {
    case TX_ATTR_TENSOR:
        if (!a->t || !tx_hval_copy(out, a->t))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        return TX_STATUS_OK;
    case TX_ATTR_FLOAT:
        if (!tx_hval_alloc(out, TX_ONNX_FLOAT, 0, NULL))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        out->f[0] = a->f;
        return TX_STATUS_OK;
    case TX_ATTR_INT:
        if (!tx_hval_alloc(out, TX_ONNX_INT64, 0, NULL))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        out->i[0] = a->i;
        return TX_STATUS_OK;
    case TX_ATTR_FLOATS:
    case TX_ATTR_INTS: {
        int64_t n = a->type == TX_ATTR_FLOATS ? a->n_floats : a->n_ints;
        if (!tx_hval_alloc(out, a->type == TX_ATTR_FLOATS ? TX_ONNX_FLOAT : TX_ONNX_INT64, 1, &n))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t k = 0; k < n; k++) {
            if (out->f)
                out->f[k] = a->floats[k];
            else
                out->i[k] = a->ints[k];
        }
        return TX_STATUS_OK;
    }
    default:
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "attribute \"%s\" of this type (%d: "
                                                   "strings, sparse) is unsupported",
                         a->name, a->type);
    }
}

static tx_status exec_constant(tx_xnode *x) {
    if (x->node->n_attrs != 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs exactly one value attribute");
    tx_hval h;
    tx_status st = hval_from_attr(x, &x->node->attrs[0], &h);
    return st ? st : tx_x_set_host(x, 0, &h);
}

static tx_status exec_constant_of_shape(tx_xnode *x) {
    int64_t shape[TX_MAX_RANK];
    int n;
    tx_status st = host_ints(x, 0, "the shape", shape, TX_MAX_RANK, &n);
    if (st)
        return st;
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "negative dim %lld",
                             (long long)shape[i]);
    const tx_onnx_attr *a = tx_attr_find(x->node, "value");
    tx_hval v = {0};
    if (a && (st = hval_from_attr(x, a, &v)))
        return st;
    int elem = a ? v.elem : TX_ONNX_FLOAT;
    double fill = a && v.numel ? tx_hval_get(&v, 0) : 0.0;
    tx_hval_free(&v);
    tx_hval o;
    if (!tx_hval_alloc(&o, elem, n, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < o.numel; k++) {
        if (o.f)
            o.f[k] = (float)fill;
        else
            o.i[k] = (int64_t)fill;
    }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_range(tx_xnode *x) {
    const tx_hval *h[3];
    for (int i = 0; i < 3; i++) {
        tx_status st = tx_x_host(x, i, &h[i]);
        if (st)
            return st;
        if (h[i]->numel != 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d must be a scalar", i);
    }
    double start = tx_hval_get(h[0], 0), limit = tx_hval_get(h[1], 0),
           delta = tx_hval_get(h[2], 0);
    if (delta == 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "delta is 0");
    double cnt = ceil((limit - start) / delta);
    int64_t n = cnt > 0 ? (int64_t)cnt : 0;
    if (n > (1 << 26))
        return tx_x_fail(x, TX_STATUS_TOO_LARGE, "%lld elements", (long long)n);
    tx_hval o;
    if (!tx_hval_alloc(&o, h[0]->elem, 1, &n))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < n; k++) {
        if (o.f)
            o.f[k] = (float)(start + (double)k * delta);
        else
            o.i[k] = h[0]->i[0] + k * h[2]->i[0];
    }
    return tx_x_set_host(x, 0, &o);
}

/* Host paths of data-movement ops that shape subgraphs use (Gather of a
 * Shape, Concat of dims, Slice of a shape, Cast of ints). Device versions
 * belong to the data-movement family; until it lands these nodes only run
 * where their inputs are host values. */

static tx_status exec_cast(tx_xnode *x) {
    int64_t to = tx_attr_int(x->node, "to", 0);
    if (to == TX_ONNX_BFLOAT16 || (!tx_onnx_type_is_float((int)to) && !tx_onnx_type_is_int((int)to)))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "cast to %s is unsupported",
                         tx_onnx_type_name((int)to));
    int from = tx_x_elem(x, 0);
    if (tx_x_is_host(x, 0)) {
        const tx_hval *h;
        tx_status st = tx_x_host(x, 0, &h);
        if (st)
            return st;
        tx_hval o;
        if (!tx_hval_alloc(&o, (int)to, h->rank, h->shape))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t k = 0; k < h->numel; k++) {
            double v = tx_hval_get(h, k);
            if (o.f)
                o.f[k] = (float)v;
            else if (to == TX_ONNX_BOOL)
                o.i[k] = v != 0;
            else
                o.i[k] = isfinite(v) ? (int64_t)v : 0;
        }
        return tx_x_set_host(x, 0, &o);
    }
    if (tx_onnx_type_is_float(from) != tx_onnx_type_is_float((int)to) || to == TX_ONNX_BOOL ||
        !from)
        return TX_STATUS_DEFER; /* needs a device cast kernel */
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (!st)
        st = emit_view(x, rank, shape);
    if (!st)
        x->out[0]->elem = (int)to;
    return st;
}

static tx_status infer_cast(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    sinfo(x, 0, &elem, &rank, shape);
    tx_x_set_info(x, 0, (int)tx_attr_int(x->node, "to", 0), rank, shape);
    return TX_STATUS_OK;
}

static tx_status exec_gather(tx_xnode *x) {
    const tx_hval *d, *ix;
    tx_status st = tx_x_host(x, 0, &d);
    if (!st)
        st = tx_x_host(x, 1, &ix);
    if (st)
        return st;
    int r = d->rank;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (r < 1 || axis < -r || axis >= r)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)axis, r);
    int a = norm_axis(axis, r);
    int orank = r - 1 + ix->rank;
    if (orank > TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_RANK_TOO_HIGH, "result rank %d", orank);
    int64_t oshape[TX_MAX_RANK];
    int j = 0;
    for (int i = 0; i < a; i++)
        oshape[j++] = d->shape[i];
    for (int i = 0; i < ix->rank; i++)
        oshape[j++] = ix->shape[i];
    for (int i = a + 1; i < r; i++)
        oshape[j++] = d->shape[i];
    int64_t outer = numel_of(a, d->shape), inner = numel_of(r - a - 1, d->shape + a + 1);
    int64_t n = d->shape[a];
    tx_hval o;
    if (!tx_hval_alloc(&o, d->elem, orank, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t k = 0;
    for (int64_t p = 0; p < outer; p++)
        for (int64_t q = 0; q < ix->numel; q++) {
            int64_t id = (int64_t)tx_hval_get(ix, q);
            if (id < 0)
                id += n;
            if (id < 0 || id >= n) {
                tx_hval_free(&o);
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "index %lld is outside 0..%lld",
                                 (long long)id, (long long)n - 1);
            }
            for (int64_t s = 0; s < inner; s++, k++) {
                int64_t src = (p * n + id) * inner + s;
                if (o.f)
                    o.f[k] = d->f[src];
                else
                    o.i[k] = d->i[src];
            }
        }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_concat(tx_xnode *x) {
    const tx_hval *h[64];
    int n = 0;
    if (x->n_in > 64)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 64 inputs");
    for (int i = 0; i < x->n_in; i++) {
        if (!x->in[i])
            continue;
        tx_status st = tx_x_host(x, i, &h[n]);
        if (st)
            return st;
        n++;
    }
    if (!n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "no inputs");
    int r = h[0]->rank;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (r < 1 || axis < -r || axis >= r)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld is outside the rank %d",
                         (long long)axis, r);
    int a = norm_axis(axis, r);
    int64_t oshape[TX_MAX_RANK];
    memcpy(oshape, h[0]->shape, sizeof oshape);
    oshape[a] = 0;
    for (int i = 0; i < n; i++) {
        bool ok = h[i]->rank == r && (h[i]->f != NULL) == (h[0]->f != NULL);
        for (int d = 0; d < r && ok; d++)
            ok = d == a || h[i]->shape[d] == h[0]->shape[d];
        if (!ok)
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input %d does not match input 0", i);
        oshape[a] += h[i]->shape[a];
    }
    tx_hval o;
    if (!tx_hval_alloc(&o, h[0]->elem, r, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t outer = numel_of(a, oshape), inner = numel_of(r - a - 1, oshape + a + 1), k = 0;
    for (int64_t p = 0; p < outer; p++)
        for (int i = 0; i < n; i++) {
            int64_t len = h[i]->shape[a] * inner;
            for (int64_t s = 0; s < len; s++, k++) {
                if (o.f)
                    o.f[k] = h[i]->f[p * len + s];
                else
                    o.i[k] = h[i]->i[p * len + s];
            }
        }
    return tx_x_set_host(x, 0, &o);
}

static tx_status exec_slice(tx_xnode *x) {
    const tx_hval *d;
    tx_status st = tx_x_host(x, 0, &d);
    if (st)
        return st;
    int r = d->rank;
    int64_t starts[TX_MAX_RANK], ends[TX_MAX_RANK], axes[TX_MAX_RANK], steps[TX_MAX_RANK];
    int n, ne, na = -1, ns = -1;
    if (x->opset < 10) {
        const int64_t *v;
        n = tx_attr_ints(x->node, "starts", &v);
        if (n < 0 || n > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad starts");
        memcpy(starts, v, sizeof(int64_t) * (size_t)n);
        ne = tx_attr_ints(x->node, "ends", &v);
        if (ne != n)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad ends");
        memcpy(ends, v, sizeof(int64_t) * (size_t)n);
        na = tx_attr_ints(x->node, "axes", &v);
        if (na > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "bad axes");
        if (na >= 0)
            memcpy(axes, v, sizeof(int64_t) * (size_t)na);
    } else {
        st = host_ints(x, 1, "starts", starts, TX_MAX_RANK, &n);
        if (!st)
            st = host_ints(x, 2, "ends", ends, TX_MAX_RANK, &ne);
        if (!st && tx_x_has(x, 3))
            st = host_ints(x, 3, "axes", axes, TX_MAX_RANK, &na);
        if (!st && tx_x_has(x, 4))
            st = host_ints(x, 4, "steps", steps, TX_MAX_RANK, &ns);
        if (st)
            return st;
    }
    if (ne != n || (na >= 0 && na != n) || (ns >= 0 && ns != n))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "starts/ends/axes/steps differ in length");
    int64_t lo[TX_MAX_RANK], step[TX_MAX_RANK], oshape[TX_MAX_RANK];
    for (int i = 0; i < r; i++) {
        lo[i] = 0;
        step[i] = 1;
        oshape[i] = d->shape[i];
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = na >= 0 ? axes[i] : i;
        if (ax < -r || ax >= r)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)ax);
        int a = norm_axis(ax, r);
        int64_t dim = d->shape[a], sp = ns >= 0 ? steps[i] : 1;
        if (sp == 0)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "step 0");
        int64_t s = starts[i], e = ends[i];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (sp > 0) {
            s = s < 0 ? 0 : (s > dim ? dim : s);
            e = e < 0 ? 0 : (e > dim ? dim : e);
            oshape[a] = e > s ? (e - s + sp - 1) / sp : 0;
        } else {
            s = s < 0 ? -1 : (s > dim - 1 ? dim - 1 : s);
            e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
            oshape[a] = s > e ? (s - e - sp - 1) / -sp : 0;
        }
        lo[a] = s;
        step[a] = sp;
    }
    tx_hval o;
    if (!tx_hval_alloc(&o, d->elem, r, oshape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < o.numel; k++) {
        int64_t rem = k, src = 0, mul = 1;
        for (int dd = r - 1; dd >= 0; dd--) {
            int64_t c = rem % oshape[dd];
            rem /= oshape[dd];
            src += (lo[dd] + c * step[dd]) * mul;
            mul *= d->shape[dd];
        }
        if (o.f)
            o.f[k] = d->f[src];
        else
            o.i[k] = d->i[src];
    }
    return tx_x_set_host(x, 0, &o);
}

/* ---- the table ---- */

#define H TX_OPF_HOST
#define HO (TX_OPF_HOST | TX_OPF_HOST_ONLY)

static const tx_onnx_op k_ops[] = {
    {"Relu", exec_unary, infer_same, H, 1, 1, 0},
    {"Sigmoid", exec_unary, infer_same, H, 1, 1, 0},
    {"Tanh", exec_unary, infer_same, H, 1, 1, 0},
    {"Exp", exec_unary, infer_same, H, 1, 1, 0},
    {"Log", exec_unary, infer_same, H, 1, 1, 0},
    {"Sqrt", exec_unary, infer_same, H, 1, 1, 0},
    {"Abs", exec_unary, infer_same, H, 1, 1, 0},
    {"Neg", exec_unary, infer_same, H, 1, 1, 0},
    {"Erf", exec_unary, infer_same, H, 1, 1, 0},
    {"Gelu", exec_unary, infer_same, H, 1, 1, 0},
    {"Clip", exec_clip, infer_same, 0, 1, 3, 6},
    {"Add", exec_binary, infer_bcast, H, 2, 2, 0},
    {"Sub", exec_binary, infer_bcast, H, 2, 2, 0},
    {"Mul", exec_binary, infer_bcast, H, 2, 2, 0},
    {"Div", exec_binary, infer_bcast, H, 2, 2, 0},
    {"Pow", exec_binary, infer_bcast, H, 2, 2, 0},
    {"Min", exec_binary, infer_bcast, H, 1, -1, 0},
    {"Max", exec_binary, infer_bcast, H, 1, -1, 0},
    {"MatMul", exec_matmul, infer_matmul, TX_OPF_FUSE_ACT, 2, 2, 0},
    {"Gemm", exec_gemm, infer_gemm, TX_OPF_FUSE_ACT, 2, 3, 0},
    {"Reshape", exec_reshape, infer_reshape, H, 1, 2, 2},
    {"Flatten", exec_flatten, infer_flatten, H, 1, 1, 0},
    {"Squeeze", exec_squeeze, infer_squeeze, H, 1, 2, 2},
    {"Unsqueeze", exec_unsqueeze, infer_unsqueeze, H, 1, 2, 2},
    {"Identity", exec_identity, infer_same, H, 1, 1, 0},
    {"Dropout", exec_identity, infer_same, H, 1, 3, 6},
    {"Shape", exec_shape, infer_shape, TX_OPF_SHAPE_ONLY, 1, 1, 0},
    {"Size", exec_size, NULL, TX_OPF_SHAPE_ONLY, 1, 1, 0},
    {"Constant", exec_constant, NULL, H, 0, 0, 0},
    {"ConstantOfShape", exec_constant_of_shape, NULL, H, 1, 1, 1},
    {"Range", exec_range, NULL, H, 3, 3, 7},
    {"Cast", exec_cast, infer_cast, H, 1, 1, 0},
    {"Gather", exec_gather, NULL, HO, 2, 2, 0},
    {"Concat", exec_concat, NULL, HO, 1, -1, 0},
    {"Slice", exec_slice, NULL, HO, 1, 5, 30},
};

#undef H
#undef HO

const tx_onnx_op *tx_onnx_op_find(const char *domain, const char *op_type) {
    if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0)
        return NULL;
    for (size_t i = 0; i < TX_COUNTOF(k_ops); i++)
        if (strcmp(k_ops[i].op_type, op_type) == 0)
            return &k_ops[i];
    return NULL;
}
