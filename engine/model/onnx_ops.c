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
 *    Relu/Sigmoid/Tanh/Gelu/HardSwish/Mish/Softplus/Clip(0,6) into it.
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

/* numpy broadcasting of static shapes (-1: unknown). false if incompatible.
 * o may be a or b: the result is built aside first. */
static bool bcast(int ra, const int64_t *a, int rb, const int64_t *b, int *ro, int64_t *out) {
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

static int64_t numel_of(int rank, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

/* double → int64 as a cast would, saturating where the cast is undefined
 * (NaN → 0, beyond ±2^63 → the limit): host math on hostile constants. */
static int64_t sat_i64(double v) {
    if (!(v == v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
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
             {"Gelu", TX_OP_GELU}, {"Softplus", TX_OP_SOFTPLUS}, {"Softsign", TX_OP_SOFTSIGN},
             {"HardSwish", TX_OP_HARD_SWISH}, {"Sin", TX_OP_SIN}, {"Cos", TX_OP_COS},
             {"Tan", TX_OP_TAN}, {"Floor", TX_OP_FLOOR}, {"Ceil", TX_OP_CEIL},
             {"Round", TX_OP_ROUND}, {"Sign", TX_OP_SIGN}, {"Reciprocal", TX_OP_RECIPROCAL},
             {"Not", TX_OP_NOT}, {"Sinh", TX_OP_SINH}, {"Cosh", TX_OP_COSH},
             {"Asin", TX_OP_ASIN}, {"Acos", TX_OP_ACOS}, {"Atan", TX_OP_ATAN},
             {"Asinh", TX_OP_ASINH}, {"Acosh", TX_OP_ACOSH}, {"Atanh", TX_OP_ATANH},
             {"Mish", TX_OP_MISH}, {"IsNaN", TX_OP_IS_NAN}};
    for (size_t i = 0; i < TX_COUNTOF(k); i++)
        if (strcmp(k[i].name, op_type) == 0)
            return k[i].op;
    return TX_OP_NONE;
}

/* ---- device dtypes ----
 * Int and bool values live as TX_DTYPE_INT32 tensors, except the 0/1 results
 * of comparisons and logic on float tensors, which stay float32 (a cast per
 * node would cost a draw). Ops needing one dtype across inputs harmonise with
 * dev_as. */

/* Tensors created while executing one node, destroyed when it finishes. */
typedef struct tmp_list {
    tx_tensor t[64];
    int n;
} tmp_list;

static void tmps_free(tx_xnode *x, tmp_list *l) {
    for (int i = 0; i < l->n; i++)
        tx_tensor_destroy(x->ctx, l->t[i]);
    l->n = 0;
}

static tx_dtype dtype_of(tx_xnode *x, tx_tensor t) {
    tx_dtype dt = TX_DTYPE_FLOAT32;
    tx_tensor_shape(x->ctx, t, NULL, NULL, &dt);
    return dt;
}

/* t converted to `want` (a cast kept in l) or t itself. */
static tx_status to_dtype(tx_xnode *x, tx_tensor t, tx_dtype want, tmp_list *l, tx_tensor *out) {
    if (dtype_of(x, t) == want) {
        *out = t;
        return TX_STATUS_OK;
    }
    TX_ASSERT(l->n < (int)TX_COUNTOF(l->t));
    tx_status st = tx_cast(x->ctx, t, want, false, out);
    if (!st)
        l->t[l->n++] = *out;
    return st;
}

/* Input i on the device as dtype `want`. */
static tx_status dev_as(tx_xnode *x, int i, tx_dtype want, tmp_list *l, tx_tensor *out) {
    tx_tensor t;
    tx_status st = tx_x_dev(x, i, &t);
    return st ? st : to_dtype(x, t, want, l, out);
}

/* Inputs idx[0..n) on the device with one dtype: int32 when all are int32,
 * else float32. */
static tx_status dev_same(tx_xnode *x, const int *idx, int n, tmp_list *l, tx_tensor *ts) {
    bool all_int = true;
    for (int j = 0; j < n; j++) {
        tx_status st = tx_x_dev(x, idx[j], &ts[j]);
        if (st)
            return st;
        all_int &= dtype_of(x, ts[j]) == TX_DTYPE_INT32;
    }
    for (int j = 0; j < n && !all_int; j++) {
        tx_status st = to_dtype(x, ts[j], TX_DTYPE_FLOAT32, l, &ts[j]);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

/* Sets output i, converted to the device dtype of elem when `exact` (int
 * results of float computations must be int32 for integer arithmetic). */
static tx_status set_dev_typed(tx_xnode *x, int i, tx_tensor y, int elem, bool exact) {
    tx_dtype want = tx_onnx_type_is_int(elem) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    if (exact && dtype_of(x, y) != want) {
        tx_tensor z;
        tx_status st = tx_cast(x->ctx, y, want, false, &z);
        tx_tensor_destroy(x->ctx, y);
        if (st)
            return st;
        y = z;
    }
    return tx_x_set_dev(x, i, y, elem);
}

static bool unary_is_bool(tx_op op) { return op == TX_OP_NOT || op == TX_OP_IS_NAN; }

static tx_status exec_unary(tx_xnode *x) {
    tx_op op = unary_op(x->node->op_type);
    TX_ASSERT(op != TX_OP_NONE);
    if (op == TX_OP_GELU && strcmp(tx_attr_str(x->node, "approximate", "none"), "none") != 0)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "approximate=\"%s\" is unsupported",
                         tx_attr_str(x->node, "approximate", ""));
    int elem = tx_x_elem(x, 0);
    if (elem == TX_ONNX_STRING || elem == TX_ONNX_BFLOAT16)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                         x->node->op_type, tx_onnx_type_name(elem));
    int oelem = unary_is_bool(op) ? TX_ONNX_BOOL : elem;
    if (tx_x_is_host(x, 0)) {
        /* constant folding: the plain-C reference's scalar function */
        const tx_hval *h;
        tx_status st = tx_x_host(x, 0, &h);
        if (st)
            return st;
        tx_hval o;
        if (!tx_hval_alloc(&o, oelem ? oelem : TX_ONNX_FLOAT, h->rank, h->shape))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        for (int64_t k = 0; k < o.numel; k++) {
            double v = tx_ref_unary_scalar(op, tx_hval_get(h, k));
            if (o.f)
                o.f[k] = (float)v;
            else
                o.i[k] = isfinite(v) ? sat_i64(v) : 0;
        }
        return tx_x_set_host(x, 0, &o);
    }
    /* int inputs (Abs, Neg, Sign of int64; Not of bool) run as float */
    tmp_list l = {0};
    tx_tensor t, y;
    tx_status st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_unary(x->ctx, op, t, &y);
    tmps_free(x, &l);
    if (!st)
        st = set_dev_typed(x, 0, y, oelem, !unary_is_bool(op));
    return st;
}

static tx_status infer_bool_same(tx_xnode *x) {
    tx_status st = infer_same(x);
    if (x->out[0])
        x->out[0]->elem = TX_ONNX_BOOL;
    return st;
}

/* ---- activations with alpha / beta (tx_activation) ---- */

static tx_status exec_act(tx_xnode *x) {
    static const struct {
        const char *name, *a_name, *b_name;
        tx_op op;
        float a, b;
    } k[] = {{"HardSigmoid", "alpha", "beta", TX_OP_HARD_SIGMOID, 0.2f, 0.5f},
             {"LeakyRelu", "alpha", NULL, TX_OP_LEAKY_RELU, 0.01f, 0},
             {"Elu", "alpha", NULL, TX_OP_ELU, 1.0f, 0},
             {"Selu", "alpha", "gamma", TX_OP_SELU, 1.67326319217681884765625f,
              1.05070102214813232421875f},
             {"Celu", "alpha", NULL, TX_OP_CELU, 1.0f, 0},
             {"ThresholdedRelu", "alpha", NULL, TX_OP_THRESHOLDED_RELU, 1.0f, 0},
             {"Shrink", "lambd", "bias", TX_OP_SHRINK, 0.5f, 0}};
    size_t i = 0;
    while (strcmp(k[i].name, x->node->op_type) != 0)
        i++;
    float a = tx_attr_float(x->node, k[i].a_name, k[i].a);
    float b = k[i].b_name ? tx_attr_float(x->node, k[i].b_name, k[i].b) : k[i].b;
    if (!isfinite(a) || !isfinite(b))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "attributes %g / %g must be finite",
                         (double)a, (double)b);
    int elem = tx_x_elem(x, 0);
    tmp_list l = {0};
    tx_tensor t, y;
    tx_status st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_activation(x->ctx, k[i].op, t, a, b, &y);
    tmps_free(x, &l);
    if (!st)
        st = set_dev_typed(x, 0, y, elem, true);
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
    if (elem == TX_ONNX_STRING || elem == TX_ONNX_BFLOAT16)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "Clip on %s tensors is unsupported",
                         tx_onnx_type_name(elem));
    if (lo > hi) /* ONNX: min > max sets every output to max */
        lo = hi;
    tmp_list l = {0}; /* int inputs are clipped as float (exact to 2^24) */
    tx_tensor t, y;
    tx_status st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_clip(x->ctx, t, lo, hi, &y);
    tmps_free(x, &l);
    if (!st)
        st = set_dev_typed(x, 0, y, elem, true);
    return st;
}

/* ---- binary (numpy broadcasting) ---- */

static tx_op binary_op(const char *op_type) {
    static const struct {
        const char *name;
        tx_op op;
    } k[] = {{"Add", TX_OP_ADD}, {"Sub", TX_OP_SUB}, {"Mul", TX_OP_MUL}, {"Div", TX_OP_DIV},
             {"Pow", TX_OP_POW}, {"Min", TX_OP_MIN}, {"Max", TX_OP_MAX},
             {"Sum", TX_OP_ADD}, {"Mean", TX_OP_MEAN}, {"PRelu", TX_OP_PRELU},
             {"And", TX_OP_AND}, {"Or", TX_OP_OR}, {"Xor", TX_OP_XOR},
             {"Equal", TX_OP_EQUAL}, {"Less", TX_OP_LESS}, {"Greater", TX_OP_GREATER},
             {"LessOrEqual", TX_OP_LESS_EQUAL}, {"GreaterOrEqual", TX_OP_GREATER_EQUAL}};
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
    case TX_OP_PRELU: return a < 0 ? a * b : a;
    default: return 0;
    }
}

static int64_t host_bin_i(tx_op op, int64_t a, int64_t b) {
    switch (op) {
    case TX_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case TX_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case TX_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case TX_OP_DIV: return b == 0 ? 0 : (b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b);
    case TX_OP_POW: return sat_i64(pow((double)a, (double)b));
    case TX_OP_MIN: return a < b ? a : b;
    case TX_OP_MAX: return a > b ? a : b;
    case TX_OP_PRELU: return a < 0 ? (int64_t)((uint64_t)a * (uint64_t)b) : a;
    default: return 0;
    }
}

/* Comparisons and logic: 0/1 results (ONNX bool). */
static bool op_is_logic(tx_op op) {
    return op == TX_OP_AND || op == TX_OP_OR || op == TX_OP_XOR || op == TX_OP_EQUAL ||
           op == TX_OP_LESS || op == TX_OP_GREATER || op == TX_OP_LESS_EQUAL ||
           op == TX_OP_GREATER_EQUAL;
}


/* y = a (op) b on the host with broadcasting. */
static tx_status host_binary(tx_xnode *x, tx_op op, const tx_hval *a, const tx_hval *b,
                             tx_hval *o) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (!bcast(a->rank, a->shape, b->rank, b->shape, &rank, shape))
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "shapes do not broadcast");
    bool isf = a->f || b->f, logic = op_is_logic(op);
    int oelem = logic ? TX_ONNX_BOOL : isf ? (a->f ? a->elem : b->elem) : a->elem;
    if (!tx_hval_alloc(o, oelem, rank, shape))
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
        if (logic)
            o->i[k] =
                tx_ref_binary_scalar(op, tx_hval_get(a, ia), tx_hval_get(b, ib), false) != 0;
        else if (isf)
            o->f[k] = (float)host_bin_f(op, tx_hval_get(a, ia), tx_hval_get(b, ib));
        else
            o->i[k] = host_bin_i(op, a->i[ia], b->i[ib]);
    }
    return TX_STATUS_OK;
}

/* PRelu before opset 7: a 1-D slope of C entries applies per channel of
 * x [N, C, ...] (a view of it as [C, 1, ...]). */
static tx_status prelu_legacy_slope(tx_xnode *x, tx_tensor in, tx_tensor *slope, tmp_list *l) {
    int rx, rs;
    int64_t sx[TX_MAX_RANK], ss[TX_MAX_RANK];
    tx_status st = tx_tensor_shape(x->ctx, in, &rx, sx, NULL);
    if (!st)
        st = tx_tensor_shape(x->ctx, *slope, &rs, ss, NULL);
    if (st || rs != 1 || rx < 3 || ss[0] != sx[1] || ss[0] == 1)
        return st;
    int64_t v[TX_MAX_RANK];
    v[0] = ss[0];
    for (int i = 1; i < rx - 1; i++)
        v[i] = 1;
    st = tx_tensor_reshape(x->ctx, *slope, rx - 1, v, slope);
    if (!st)
        l->t[l->n++] = *slope;
    return st;
}

static tx_op nary_of(tx_op op) {
    switch (op) {
    case TX_OP_ADD: return TX_OP_SUM;
    case TX_OP_MIN: return TX_OP_MIN_N;
    case TX_OP_MAX: return TX_OP_MAX_N;
    default: return op;
    }
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
    for (int j = 0; j < n; j++) {
        int e = tx_x_elem(x, idx[j]);
        if (e == TX_ONNX_STRING || e == TX_ONNX_BFLOAT16)
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                             x->node->op_type, tx_onnx_type_name(e));
    }
    if (tx_x_all_host(x) && op != TX_OP_MEAN) {
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
    int oelem = op_is_logic(op) ? TX_ONNX_BOOL
                                : (isf && !tx_onnx_type_is_float(e0) ? TX_ONNX_FLOAT : e0);
    /* one dtype for all (Pow(float, int64) exponents, bools of both storages) */
    tmp_list l = {0};
    tx_tensor ts[64], y;
    tx_status st = dev_same(x, idx, n, &l, ts);
    if (!st && op == TX_OP_PRELU && x->opset < 7)
        st = prelu_legacy_slope(x, ts[0], &ts[1], &l);
    if (!st && n == 1 && op != TX_OP_MEAN) /* Min/Max/Sum of one input: a view */
        st = tx_identity(x->ctx, ts[0], &y);
    else if (!st && (n > 2 || op == TX_OP_MEAN))
        st = tx_nary(x->ctx, nary_of(op), ts, n, &y);
    else if (!st)
        st = tx_binary(x->ctx, op, ts[0], ts[1], &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, oelem);
}

/* PRelu before opset 7 broadcasts its slope along the channels (the run
 * reshapes it): the output is X's shape. */
static tx_status infer_prelu(tx_xnode *x) {
    return x->opset < 7 ? infer_same(x) : infer_bcast(x);
}

static tx_status infer_logic(tx_xnode *x) {
    tx_status st = infer_bcast(x);
    if (x->out[0])
        x->out[0]->elem = TX_ONNX_BOOL;
    return st;
}

/* Where(cond, a, b), numpy broadcasting over all three. */
static tx_status exec_where(tx_xnode *x) {
    int idx[2] = {1, 2};
    tmp_list l = {0};
    tx_tensor ts[3], y;
    tx_status st = tx_x_dev(x, 0, &ts[0]);
    if (!st)
        st = dev_same(x, idx, 2, &l, ts + 1);
    if (!st)
        st = tx_nary(x->ctx, TX_OP_WHERE, ts, 3, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 1));
}

static tx_status infer_where(tx_xnode *x) {
    tx_status st = infer_bcast(x);
    if (x->out[0] && tx_x_elem(x, 1))
        x->out[0]->elem = tx_x_elem(x, 1);
    return st;
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

static tx_status matmul_mismatch(tx_xnode *x, int ra, const int64_t *sa, int rb,
                                 const int64_t *sb) {
    char a[160], b[160];
    tx_shape_str(a, sizeof a, ra, sa);
    tx_shape_str(b, sizeof b, rb, sb);
    return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "A %s and B %s do not multiply", a, b);
}

static tx_status infer_matmul(tx_xnode *x) {
    int ea, ra, eb, rb;
    int64_t sa[TX_MAX_RANK], sb[TX_MAX_RANK], o[TX_MAX_RANK + 2];
    sinfo(x, 0, &ea, &ra, sa);
    sinfo(x, 1, &eb, &rb, sb);
    if (ra < 1 || rb < 1)
        return TX_STATUS_OK;
    int64_t m = ra >= 2 ? sa[ra - 2] : 1, n = rb >= 2 ? sb[rb - 1] : 1;
    int64_t ka = sa[ra - 1], kb = rb >= 2 ? sb[rb - 2] : sb[0];
    int rbat;
    int64_t bat[TX_MAX_RANK];
    if ((ka >= 0 && kb >= 0 && ka != kb) ||
        !bcast(ra > 2 ? ra - 2 : 0, sa, rb > 2 ? rb - 2 : 0, sb, &rbat, bat))
        return matmul_mismatch(x, ra, sa, rb, sb);
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
    bool ta = tx_attr_int(x->node, "transA", 0) != 0, tb = tx_attr_int(x->node, "transB", 0) != 0;
    int64_t ka = ta ? sa[0] : sa[1], kb = tb ? sb[1] : sb[0];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return matmul_mismatch(x, ra, sa, rb, sb);
    int64_t o[2] = {ta ? sa[1] : sa[0], tb ? sb[0] : sb[1]};
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
        } else if (d > TX_DIM_MAX || (d && known > TX_DIM_MAX / d)) {
            return tx_x_fail(x, TX_STATUS_TOO_LARGE, "the shape has more than 2^40 elements");
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
            o.i[k] = sat_i64(fill);
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
    bool like = strcmp(x->node->op_type, "CastLike") == 0;
    int64_t to = like ? tx_x_elem(x, 1) : tx_attr_int(x->node, "to", 0);
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
                o.i[k] = isfinite(v) ? sat_i64(v) : 0;
        }
        return tx_x_set_host(x, 0, &o);
    }
    if (from == TX_ONNX_STRING || from == TX_ONNX_BFLOAT16)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "cast from %s is unsupported",
                         tx_onnx_type_name(from));
    tx_tensor in, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (st)
        return st;
    tx_dtype want = tx_onnx_type_is_int((int)to) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    if (to == TX_ONNX_BOOL || dtype_of(x, in) != want) {
        st = tx_cast(x->ctx, in, want, to == TX_ONNX_BOOL, &y);
    } else { /* same storage (float16 <-> float, int widths): a view */
        int rank;
        int64_t shape[TX_MAX_RANK];
        st = tx_tensor_shape(x->ctx, in, &rank, shape, NULL);
        if (!st)
            st = tx_tensor_reshape(x->ctx, in, rank, shape, &y);
    }
    return st ? st : tx_x_set_dev(x, 0, y, (int)to);
}

static tx_status infer_cast(tx_xnode *x) {
    int elem, rank;
    int64_t shape[TX_MAX_RANK];
    sinfo(x, 0, &elem, &rank, shape);
    int to = strcmp(x->node->op_type, "CastLike") == 0 ? tx_x_elem(x, 1)
                                                       : (int)tx_attr_int(x->node, "to", 0);
    tx_x_set_info(x, 0, to, rank, shape);
    return TX_STATUS_OK;
}

static tx_status gather_dev(tx_xnode *x);
static tx_status concat_dev(tx_xnode *x);

static tx_status exec_gather(tx_xnode *x) {
    if (!tx_x_is_host(x, 0) || !tx_x_is_host(x, 1))
        return gather_dev(x);
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
    if (!tx_x_all_host(x))
        return concat_dev(x);
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
    tx_status st;
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
    if (!tx_x_is_host(x, 0)) {
        tx_slice_desc sd = {.n = n, .has_axes = na >= 0};
        for (int i = 0; i < n; i++) {
            if (ns >= 0 && steps[i] == 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "step 0");
            sd.starts[i] = starts[i];
            sd.ends[i] = ends[i];
            sd.axes[i] = na >= 0 ? axes[i] : i;
            sd.steps[i] = ns >= 0 ? steps[i] : 1;
        }
        tx_tensor in, y;
        st = tx_x_dev(x, 0, &in);
        if (!st)
            st = tx_slice(x->ctx, in, &sd, &y);
        return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
    }
    st = tx_x_host(x, 0, &d);
    if (st)
        return st;
    int r = d->rank;
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

/* ---- attribute helpers for the NN / data-movement families ---- */

/* An INTS attribute copied into out (at most max entries); *n = -1 when absent. */
static tx_status attr_ints_into(tx_xnode *x, const char *name, int64_t *out, int max, int *n) {
    const int64_t *v;
    *n = tx_attr_ints(x->node, name, &v);
    if (*n > max)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s has %d entries (at most %d)", name, *n,
                         max);
    if (*n > 0)
        memcpy(out, v, sizeof(int64_t) * (size_t)*n);
    return TX_STATUS_OK;
}

/* An int list that is attribute `name` before opset `since` and host input i
 * from it on (Reduce axes, Split split, Pad pads ...); *n = -1 when absent. */
static tx_status ints_attr_or_input(tx_xnode *x, const char *name, int64_t since, int i,
                                    int64_t *out, int max, int *n) {
    if (x->opset < since)
        return attr_ints_into(x, name, out, max, n);
    *n = -1;
    if (!tx_x_has(x, i))
        return TX_STATUS_OK;
    return host_ints(x, i, name, out, max, n);
}

static tx_status float_input_only(tx_xnode *x, int i) {
    int e = tx_x_elem(x, i);
    if (tx_x_has(x, i) && e && !tx_onnx_type_is_float(e))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%s on %s tensors is unsupported",
                         x->node->op_type, tx_onnx_type_name(e));
    return TX_STATUS_OK;
}

/* Rank of input 0, which must be 3 or 4 (1-D or 2-D spatial): the conv and
 * pool kernels' layouts. */
static tx_status spatial_rank(tx_xnode *x, int *spatial) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank != 3 && rank != 4)
        return tx_x_fail(x, rank > 4 ? TX_STATUS_UNSUPPORTED : TX_STATUS_SHAPE_MISMATCH,
                         "input rank %d: only 1-D and 2-D spatial inputs (rank 3, 4) are "
                         "supported", rank);
    *spatial = rank - 2;
    return TX_STATUS_OK;
}

static tx_status auto_pad_of(tx_xnode *x, tx_auto_pad *out) {
    const char *s = tx_attr_str(x->node, "auto_pad", "NOTSET");
    static const char *names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (tx_auto_pad)i;
            return TX_STATUS_OK;
        }
    return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "auto_pad \"%s\" is not one of NOTSET, "
                     "SAME_UPPER, SAME_LOWER, VALID", s);
}

/* An INTS attribute of exactly `want` entries into int out[] (absent: left). */
static tx_status attr_spatial(tx_xnode *x, const char *name, int want, int *out) {
    int64_t v[2 * TX_MAX_RANK];
    int n;
    tx_status st = attr_ints_into(x, name, v, 2 * TX_MAX_RANK, &n);
    if (st || n < 0)
        return st;
    if (n != want)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s has %d entries, want %d", name, n,
                         want);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] > INT32_MAX)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "%s[%d] = %lld is out of range",
                             name, i, (long long)v[i]);
        out[i] = (int)v[i];
    }
    return TX_STATUS_OK;
}

/* The window attributes conv and pool share; explicit pads are dropped when
 * auto_pad decides them. */
static tx_status window_attrs(tx_xnode *x, int spatial, tx_auto_pad *auto_pad, int *strides,
                              int *dilations, int *pads) {
    tx_status st = auto_pad_of(x, auto_pad);
    if (!st)
        st = attr_spatial(x, "strides", spatial, strides);
    if (!st)
        st = attr_spatial(x, "dilations", spatial, dilations);
    if (!st)
        st = attr_spatial(x, "pads", 2 * spatial, pads);
    if (!st && *auto_pad != TX_AUTO_PAD_NOTSET)
        memset(pads, 0, sizeof(int) * 2 * (size_t)spatial);
    return st;
}

/* ---- Conv, ConvTranspose ---- */

static tx_status conv_desc_of(tx_xnode *x, int spatial, tx_conv_desc *d) {
    memset(d, 0, sizeof *d);
    tx_status st = window_attrs(x, spatial, &d->auto_pad, d->strides, d->dilations, d->pads);
    int64_t g = tx_attr_int(x->node, "group", 1);
    if (!st && (g < 1 || g > INT32_MAX))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "group %lld", (long long)g);
    d->group = (int)g;
    /* kernel_shape, when given, must agree with W */
    int64_t ks[TX_MAX_RANK];
    int nk, rw;
    int64_t sw[TX_MAX_RANK];
    if (!st)
        st = attr_ints_into(x, "kernel_shape", ks, TX_MAX_RANK, &nk);
    if (!st)
        st = tx_x_shape(x, 1, &rw, sw);
    if (!st && rw != spatial + 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "W has rank %d, X has %d spatial dims",
                         rw, spatial);
    for (int i = 0; !st && nk >= 0 && i < spatial; i++)
        if (nk != spatial || ks[i] != sw[2 + i])
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "kernel_shape does not match W");
    return st;
}

/* Conv's attributes, and ConvTranspose's two more. */
static tx_status conv_attrs(tx_xnode *x, bool tr, int spatial, tx_conv_desc *d) {
    tx_status st = conv_desc_of(x, spatial, d);
    if (!st && tr) {
        st = attr_spatial(x, "output_padding", spatial, d->output_padding);
        if (!st)
            st = attr_spatial(x, "output_shape", spatial, d->output_shape);
    }
    return st;
}

/* Windowed ops' static output shape: x's unknown N, H, W (dynamic batch and
 * image sizes) are stood in for and come out unknown; the channel count and
 * the weights must be known for anything to be inferred. */
#define WINDOW_STAND_IN ((int64_t)1 << 20)

static tx_status infer_conv(tx_xnode *x) {
    bool tr = strcmp(x->node->op_type, "ConvTranspose") == 0;
    int ex, rx, ew, rw;
    int64_t sx[TX_MAX_RANK], sw[TX_MAX_RANK], xin[TX_MAX_RANK], o[TX_MAX_RANK];
    sinfo(x, 0, &ex, &rx, sx);
    sinfo(x, 1, &ew, &rw, sw);
    if ((rx != 3 && rx != 4) || rw != rx || sx[1] < 0)
        return TX_STATUS_OK; /* the run reports it with the real shapes */
    for (int d = 0; d < rw; d++)
        if (sw[d] < 0)
            return TX_STATUS_OK;
    int64_t bias = -1;
    if (tx_x_has(x, 2)) {
        int eb, rb;
        int64_t sb[TX_MAX_RANK];
        sinfo(x, 2, &eb, &rb, sb);
        bias = rb == 1 ? sb[0] : -1;
    }
    tx_conv_desc d;
    tx_status st = conv_attrs(x, tr, rx - 2, &d);
    if (st)
        return st;
    for (int i = 0; i < rx; i++)
        xin[i] = sx[i] >= 0 ? sx[i] : i == 0 ? 1 : WINDOW_STAND_IN;
    st = tx_conv_out_shape(x->ctx, tr, rx, xin, sw, bias, &d, o);
    if (st)
        return tx_x_fail(x, st, "%s", tx_last_error(x->ctx));
    for (int i = 0; i < rx; i++)
        if (i != 1 && sx[i] < 0)
            o[i] = -1;
    tx_x_set_info(x, 0, TX_ONNX_FLOAT, rx, o);
    return TX_STATUS_OK;
}

static tx_status exec_conv(tx_xnode *x) {
    bool tr = strcmp(x->node->op_type, "ConvTranspose") == 0;
    int spatial;
    tx_status st = float_input_only(x, 0);
    if (!st)
        st = spatial_rank(x, &spatial);
    tx_conv_desc d;
    if (!st)
        st = conv_attrs(x, tr, spatial, &d);
    tx_tensor in, w, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_x_dev(x, 1, &w);
    if (!st && tx_x_has(x, 2))
        st = tx_x_dev(x, 2, &d.bias);
    if (st)
        return st;
    d.activation = x->act;
    st = tr ? tx_conv_transpose(x->ctx, in, w, &d, &y) : tx_conv(x->ctx, in, w, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* ---- pools ---- */

static tx_op pool_op(const tx_onnx_node *n) {
    const char *t = n->op_type;
    return strcmp(t, "MaxPool") == 0         ? TX_OP_MAXPOOL
           : strcmp(t, "AveragePool") == 0   ? TX_OP_AVERAGEPOOL
           : strcmp(t, "GlobalMaxPool") == 0 ? TX_OP_GLOBALMAXPOOL
                                             : TX_OP_GLOBALAVERAGEPOOL;
}

static tx_status pool_attrs(tx_xnode *x, tx_op op, int spatial, tx_pool_desc *d) {
    memset(d, 0, sizeof *d);
    if (op != TX_OP_MAXPOOL && op != TX_OP_AVERAGEPOOL)
        return TX_STATUS_OK;
    tx_status st = attr_spatial(x, "kernel_shape", spatial, d->kernel_shape);
    if (!st && !d->kernel_shape[0])
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "kernel_shape is required");
    if (!st)
        st = window_attrs(x, spatial, &d->auto_pad, d->strides, d->dilations, d->pads);
    d->ceil_mode = tx_attr_int(x->node, "ceil_mode", 0) != 0;
    d->count_include_pad = tx_attr_int(x->node, "count_include_pad", 0) != 0;
    if (!st && tx_attr_int(x->node, "storage_order", 0) != 0 && x->n_out > 1 && x->out[1])
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "storage_order 1 is unsupported");
    return st;
}

static tx_status infer_pool(tx_xnode *x) {
    tx_op op = pool_op(x->node);
    int ex, rx;
    int64_t sx[TX_MAX_RANK], o[TX_MAX_RANK];
    sinfo(x, 0, &ex, &rx, sx);
    if (rx != 3 && rx != 4)
        return TX_STATUS_OK; /* the run reports it with the real shapes */
    tx_pool_desc d;
    tx_status st = pool_attrs(x, op, rx - 2, &d);
    if (st)
        return st;
    memcpy(o, sx, sizeof o);
    if (op == TX_OP_MAXPOOL || op == TX_OP_AVERAGEPOOL) {
        tx_slot xs = {.rank = rx, .dtype = TX_DTYPE_FLOAT32};
        for (int i = 0; i < rx; i++)
            xs.shape[i] = sx[i] >= 0 ? sx[i] : i < 2 ? 1 : WINDOW_STAND_IN;
        tx_window g;
        st = tx_window_geom(x->ctx, tx_op_name(op), &xs, d.kernel_shape, d.strides, d.dilations,
                            d.pads, d.auto_pad, d.ceil_mode, &g);
        if (st)
            return tx_x_fail(x, st, "%s", tx_last_error(x->ctx));
        if (rx == 4)
            o[2] = sx[2] >= 0 ? g.ho : -1;
        o[rx - 1] = sx[rx - 1] >= 0 ? g.wo : -1;
    } else {
        for (int i = 2; i < rx; i++)
            o[i] = 1;
    }
    tx_x_set_info(x, 0, tx_x_elem(x, 0), rx, o);
    return TX_STATUS_OK;
}

static tx_status exec_pool(tx_xnode *x) {
    tx_op op = pool_op(x->node);
    if (x->n_out > 1 && x->out[1])
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "the Indices output is unsupported");
    int spatial;
    /* MaxPool of ints runs as float (exact to 2^24) */
    tx_status st = op == TX_OP_MAXPOOL ? TX_STATUS_OK : float_input_only(x, 0);
    if (!st)
        st = spatial_rank(x, &spatial);
    tx_pool_desc d;
    if (!st)
        st = pool_attrs(x, op, spatial, &d);
    tmp_list l = {0};
    tx_tensor in, y;
    if (!st)
        st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    if (!st)
        st = tx_pooling(x->ctx, op, in, &d, &y);
    tmps_free(x, &l);
    return st ? st : set_dev_typed(x, 0, y, tx_x_elem(x, 0), true);
}

/* ---- reductions ---- */

static tx_status exec_reduce(tx_xnode *x) {
    static const struct {
        const char *name;
        tx_op op;
    } k[] = {{"ReduceSum", TX_OP_REDUCE_SUM},       {"ReduceMean", TX_OP_REDUCE_MEAN},
             {"ReduceMax", TX_OP_REDUCE_MAX},       {"ReduceMin", TX_OP_REDUCE_MIN},
             {"ReduceProd", TX_OP_REDUCE_PROD},     {"ReduceL1", TX_OP_REDUCE_L1},
             {"ReduceL2", TX_OP_REDUCE_L2},         {"ReduceSumSquare", TX_OP_REDUCE_SUM_SQUARE},
             {"ReduceLogSum", TX_OP_REDUCE_LOG_SUM}, {"ReduceLogSumExp", TX_OP_REDUCE_LOG_SUM_EXP},
             {"ArgMax", TX_OP_ARGMAX},              {"ArgMin", TX_OP_ARGMIN}};
    size_t i = 0;
    while (strcmp(k[i].name, x->node->op_type) != 0)
        i++;
    tx_op op = k[i].op;
    bool arg = op == TX_OP_ARGMAX || op == TX_OP_ARGMIN;
    tx_reduce_desc d = {0};
    d.drop_dims = tx_attr_int(x->node, "keepdims", 1) == 0;
    tx_status st = TX_STATUS_OK;
    if (arg) {
        int64_t axis = tx_attr_int(x->node, "axis", 0);
        if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
        d.n_axes = 1;
        d.axes[0] = (int)axis;
        d.select_last_index = tx_attr_int(x->node, "select_last_index", 0) != 0;
    } else {
        int64_t axes[TX_MAX_RANK];
        int n;
        /* axes became an input in opset 13 for ReduceSum, 18 for the rest */
        st = ints_attr_or_input(x, "axes", op == TX_OP_REDUCE_SUM ? 13 : 18, 1, axes,
                                TX_MAX_RANK, &n);
        if (st)
            return st;
        for (int j = 0; j < n; j++) {
            if (axes[j] < -TX_MAX_RANK || axes[j] >= TX_MAX_RANK)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld",
                                 (long long)axes[j]);
            d.axes[j] = (int)axes[j];
        }
        d.n_axes = n > 0 ? n : 0;
        d.noop_with_empty_axes = tx_attr_int(x->node, "noop_with_empty_axes", 0) != 0;
    }
    int elem = tx_x_elem(x, 0);
    bool int_ok = arg || op == TX_OP_REDUCE_SUM || op == TX_OP_REDUCE_MAX ||
                  op == TX_OP_REDUCE_MIN;
    tmp_list l = {0};
    tx_tensor in, y;
    st = tx_x_dev(x, 0, &in);
    if (!st && !int_ok)
        st = to_dtype(x, in, TX_DTYPE_FLOAT32, &l, &in);
    if (!st)
        st = tx_reduce(x->ctx, op, in, &d, &y);
    tmps_free(x, &l);
    if (st)
        return st;
    return arg ? tx_x_set_dev(x, 0, y, TX_ONNX_INT64) : set_dev_typed(x, 0, y, elem, true);
}

/* ---- Softmax, LogSoftmax ---- */

static tx_status exec_softmax(tx_xnode *x) {
    tx_op op = strcmp(x->node->op_type, "Softmax") == 0 ? TX_OP_SOFTMAX : TX_OP_LOG_SOFTMAX;
    bool old = x->opset < 13; /* before 13: normalise the input coerced to 2-D at axis */
    int64_t axis = tx_attr_int(x->node, "axis", old ? 1 : -1);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tx_softmax_desc d = {.axis = (int)axis, .coerce_2d = old};
    tx_tensor in, y;
    tx_status st = float_input_only(x, 0);
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_softmax(x->ctx, op, in, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* ---- BatchNormalization, InstanceNormalization, LayerNormalization ---- */

/* LayerNormalization's optional outputs Mean and InvStdDev (over dims
 * [axis, rank), kept as 1s): separate reductions, only when a model reads them. */
static tx_status layer_norm_stats(tx_xnode *x, tx_tensor in, int axis, float eps) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_tensor_shape(x->ctx, in, &rank, shape, NULL);
    if (st)
        return st;
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %d for rank %d", axis, rank);
    tx_reduce_desc rd = {.n_axes = rank - a};
    for (int i = a; i < rank; i++)
        rd.axes[i - a] = i;
    tmp_list l = {0};
    tx_tensor mean, t[6];
    st = tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, in, &rd, &mean);
    if (st)
        return st;
    st = tx_binary(x->ctx, TX_OP_SUB, in, mean, &t[0]);
    if (!st && (l.t[l.n++] = t[0], true))
        st = tx_binary(x->ctx, TX_OP_MUL, t[0], t[0], &t[1]);
    if (!st && (l.t[l.n++] = t[1], true))
        st = tx_reduce(x->ctx, TX_OP_REDUCE_MEAN, t[1], &rd, &t[2]);
    if (!st && (l.t[l.n++] = t[2], true))
        st = scalar_tensor(x, eps, &t[3]);
    if (!st && (l.t[l.n++] = t[3], true))
        st = tx_binary(x->ctx, TX_OP_ADD, t[2], t[3], &t[4]);
    if (!st && (l.t[l.n++] = t[4], true))
        st = tx_unary(x->ctx, TX_OP_SQRT, t[4], &t[5]);
    tx_tensor inv = {0};
    if (!st && (l.t[l.n++] = t[5], true))
        st = tx_unary(x->ctx, TX_OP_RECIPROCAL, t[5], &inv);
    tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev(x, 1, mean, TX_ONNX_FLOAT);
    else
        tx_tensor_destroy(x->ctx, mean);
    if (!st && x->n_out > 2)
        st = tx_x_set_dev(x, 2, inv, TX_ONNX_FLOAT);
    else if (inv.id)
        tx_tensor_destroy(x->ctx, inv);
    return st;
}

static tx_status exec_norm(tx_xnode *x) {
    const char *t = x->node->op_type;
    tx_op op = strcmp(t, "BatchNormalization") == 0      ? TX_OP_BATCH_NORM
               : strcmp(t, "InstanceNormalization") == 0 ? TX_OP_INSTANCE_NORM
                                                         : TX_OP_LAYER_NORM;
    for (int o = 1; o < x->n_out && op != TX_OP_LAYER_NORM; o++)
        if (x->out[o])
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "output %d (training statistics) is "
                             "unsupported", o);
    if (op == TX_OP_BATCH_NORM && (tx_attr_int(x->node, "training_mode", 0) != 0 ||
                                   tx_attr_int(x->node, "spatial", 1) == 0))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "training_mode / spatial=0 is unsupported");
    float eps = tx_attr_float(x->node, "epsilon", 1e-5f);
    if (!(eps >= 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "epsilon %g", (double)eps);
    tx_norm_desc d = {.epsilon = eps > 0 ? eps : 1e-30f}; /* 0 means the default there */
    if (op == TX_OP_LAYER_NORM) {
        int64_t axis = tx_attr_int(x->node, "axis", -1);
        if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
        d.axis = (int)axis;
    }
    int want = op == TX_OP_BATCH_NORM ? 5 : 3;
    tx_tensor in[5];
    int n = 0;
    tx_status st = TX_STATUS_OK;
    for (int i = 0; i < want && i < x->n_in && !st; i++) {
        if (!tx_x_has(x, i))
            break;
        st = float_input_only(x, i);
        if (!st)
            st = tx_x_dev(x, i, &in[n++]);
    }
    if (st)
        return st;
    if (n < (op == TX_OP_LAYER_NORM ? 2 : want))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs %d inputs, got %d", want, n);
    tx_tensor y;
    st = tx_norm(x->ctx, op, in, n, &d, &y);
    if (!st)
        st = tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
    bool stats = x->n_out > 1 && (x->out[1] || (x->n_out > 2 && x->out[2]));
    if (!st && op == TX_OP_LAYER_NORM && stats)
        st = layer_norm_stats(x, in[0], d.axis, eps);
    return st;
}

/* ---- data movement ---- */

static tx_status exec_transpose(tx_xnode *x) {
    int64_t p[TX_MAX_RANK];
    int n, perm[TX_MAX_RANK];
    tx_status st = attr_ints_into(x, "perm", p, TX_MAX_RANK, &n);
    for (int i = 0; !st && i < n; i++) {
        if (p[i] < 0 || p[i] >= TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "perm[%d] = %lld", i,
                             (long long)p[i]);
        perm[i] = (int)p[i];
    }
    int rank;
    int64_t shape[TX_MAX_RANK];
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (!st && n >= 0 && n != rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "perm has %d entries for rank %d", n,
                         rank);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_transpose(x->ctx, in, n >= 0 ? perm : NULL, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status concat_dev(tx_xnode *x) {
    int idx[64], n = 0;
    for (int i = 0; i < x->n_in; i++)
        if (x->in[i])
            idx[n++] = i;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tmp_list l = {0};
    tx_tensor ts[64], y;
    tx_status st = dev_same(x, idx, n, &l, ts);
    if (!st)
        st = tx_concat(x->ctx, ts, n, (int)axis, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, idx[0]));
}

static tx_status exec_split(tx_xnode *x) {
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    int64_t split[64];
    int ns;
    tx_status st = ints_attr_or_input(x, "split", 13, 1, split, 64, &ns);
    if (st)
        return st;
    int n = x->n_out;
    if (n < 1)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "has no outputs");
    if (n > 64)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "more than 64 outputs");
    if (ns >= 0 && ns != n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "split has %d entries for %d outputs",
                         ns, n);
    int64_t no = tx_attr_int(x->node, "num_outputs", n);
    if (no != n)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "num_outputs %lld but %d outputs",
                         (long long)no, n);
    if (ns < 0 && !tx_attr_find(x->node, "num_outputs")) {
        /* before opset 18 equal parts must divide the dim exactly */
        int rank;
        int64_t shape[TX_MAX_RANK];
        st = tx_x_shape(x, 0, &rank, shape);
        if (st)
            return st;
        int a = norm_axis(axis, rank);
        if (a < 0 || a >= rank || shape[a] % n)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld of a rank-%d input does "
                             "not split into %d equal parts", (long long)axis, rank, n);
    }
    tx_tensor in, outs[64];
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_split(x->ctx, in, (int)axis, ns >= 0 ? split : NULL, n, outs);
    for (int i = 0; i < n && !st; i++)
        st = tx_x_set_dev(x, i, outs[i], tx_x_elem(x, 0));
    return st;
}

static tx_status exec_pad(tx_xnode *x) {
    const char *mode = tx_attr_str(x->node, "mode", "constant");
    tx_pad_desc d = {0};
    if (strcmp(mode, "constant") == 0)
        d.mode = TX_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0)
        d.mode = TX_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0)
        d.mode = TX_PAD_EDGE;
    else if (strcmp(mode, "wrap") == 0)
        d.mode = TX_PAD_WRAP;
    else
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", mode);
    int rank;
    int64_t shape[TX_MAX_RANK], pads[2 * TX_MAX_RANK], axes[TX_MAX_RANK];
    int np, na = -1;
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (x->opset < 11) {
        st = attr_ints_into(x, "pads", pads, 2 * TX_MAX_RANK, &np);
        d.value = tx_attr_float(x->node, "value", 0);
    } else {
        st = host_ints(x, 1, "pads", pads, 2 * TX_MAX_RANK, &np);
        if (!st && tx_x_has(x, 2)) {
            const tx_hval *h;
            st = tx_x_host(x, 2, &h);
            if (!st && h->numel != 1)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "constant_value must be a "
                                 "scalar");
            if (!st)
                d.value = (float)tx_hval_get(h, 0);
        }
        if (!st && tx_x_has(x, 3))
            st = host_ints(x, 3, "axes", axes, TX_MAX_RANK, &na);
    }
    if (st)
        return st;
    if (na < 0) {
        na = rank;
        for (int i = 0; i < rank; i++)
            axes[i] = i;
    }
    if (np != 2 * na)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "pads has %d entries for %d axes", np,
                         na);
    for (int i = 0; i < na; i++) {
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axes[i]);
        int a = norm_axis(axes[i], rank);
        d.begin[a] = pads[i];
        d.end[a] = pads[na + i];
    }
    tx_tensor in, y;
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_pad(x->ctx, in, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status gather_dev(tx_xnode *x) {
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (axis < -TX_MAX_RANK || axis >= TX_MAX_RANK)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    tmp_list l = {0};
    tx_tensor in, ix, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (!st)
        st = dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st)
        st = tx_gather(x->ctx, in, ix, (int)axis, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
 * (7: scales attribute; 9: X, scales). */
static tx_status exec_resize(tx_xnode *x) {
    bool up = strcmp(x->node->op_type, "Upsample") == 0;
    bool v10 = up || x->opset < 11;
    tx_resize_desc d = {0};
    const char *mode = tx_attr_str(x->node, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0)
        d.mode = TX_RESIZE_NEAREST;
    else if (strcmp(mode, "linear") == 0 || (up && strcmp(mode, "bilinear") == 0))
        d.mode = TX_RESIZE_LINEAR;
    else if (strcmp(mode, "cubic") == 0 && !v10)
        d.mode = TX_RESIZE_CUBIC;
    else
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", mode);
    if (v10) {
        d.coord = TX_RESIZE_ASYMMETRIC;
        d.nearest = TX_RESIZE_FLOOR;
    } else {
        static const char *coords[] = {"half_pixel", "asymmetric", "align_corners",
                                       "pytorch_half_pixel", "tf_half_pixel_for_nearest"};
        static const char *nears[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                      "ceil"};
        const char *c = tx_attr_str(x->node, "coordinate_transformation_mode", "half_pixel");
        if (strcmp(c, "tf_half_pixel_for_nn") == 0) /* the opset-10 era name */
            c = "tf_half_pixel_for_nearest";
        const char *nm = tx_attr_str(x->node, "nearest_mode", "round_prefer_floor");
        int ci = -1, ni = -1;
        for (int i = 0; i < 5; i++)
            if (strcmp(c, coords[i]) == 0)
                ci = i;
        for (int i = 0; i < 4; i++)
            if (strcmp(nm, nears[i]) == 0)
                ni = i;
        if (ci < 0 || ni < 0)
            return tx_x_fail(x, strcmp(c, "tf_crop_and_resize") == 0 ? TX_STATUS_UNSUPPORTED
                                                                   : TX_STATUS_INVALID_ARGUMENT,
                             "coordinate_transformation_mode \"%s\" / nearest_mode \"%s\"", c,
                             nm);
        d.coord = (tx_resize_coord)ci;
        d.nearest = (tx_resize_nearest)ni;
        d.cubic_a = tx_attr_float(x->node, "cubic_coeff_a", -0.75f);
        d.exclude_outside = tx_attr_int(x->node, "exclude_outside", 0) != 0;
        if (tx_attr_int(x->node, "antialias", 0) != 0)
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "antialias is unsupported");
        if (strcmp(tx_attr_str(x->node, "keep_aspect_ratio_policy", "stretch"), "stretch"))
            return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "keep_aspect_ratio_policy \"%s\" is "
                             "unsupported", tx_attr_str(x->node, "keep_aspect_ratio_policy", ""));
    }
    int rank;
    int64_t shape[TX_MAX_RANK], axes[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int na;
    st = attr_ints_into(x, "axes", axes, TX_MAX_RANK, &na);
    if (st)
        return st;
    if (na < 0) {
        na = rank;
        for (int i = 0; i < rank; i++)
            axes[i] = i;
    }
    for (int i = 0; i < na; i++)
        if (axes[i] < -rank || axes[i] >= rank)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld", (long long)axes[i]);
    float scales[TX_MAX_RANK];
    int64_t sizes[TX_MAX_RANK];
    int nsc = -1, nsz = -1;
    if (up && x->opset < 9) {
        const tx_onnx_attr *a = tx_attr_find(x->node, "scales");
        if (!a || a->n_floats > TX_MAX_RANK)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs a scales attribute");
        nsc = a->n_floats;
        if (nsc)
            memcpy(scales, a->floats, sizeof(float) * (size_t)nsc);
    } else {
        int si = v10 ? 1 : 2;
        if (tx_x_has(x, si)) {
            const tx_hval *h;
            st = tx_x_host(x, si, &h);
            if (st)
                return st;
            if (h->numel > TX_MAX_RANK)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "scales has %lld entries",
                                 (long long)h->numel);
            nsc = h->numel ? (int)h->numel : -1;
            for (int i = 0; i < nsc; i++)
                scales[i] = (float)tx_hval_get(h, i);
        }
        if (!v10 && tx_x_has(x, 3)) {
            st = host_ints(x, 3, "sizes", sizes, TX_MAX_RANK, &nsz);
            if (st)
                return st;
            if (nsz == 0)
                nsz = -1;
        }
    }
    if ((nsc < 0) == (nsz < 0))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "needs exactly one of scales and sizes");
    if ((nsc >= 0 && nsc != na) || (nsz >= 0 && nsz != na))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "scales/sizes have %d entries for %d "
                         "axes", nsc >= 0 ? nsc : nsz, na);
    for (int i = 0; i < na; i++) {
        int a = norm_axis(axes[i], rank);
        if (nsc >= 0) {
            if (!(scales[i] > 0) || !isfinite(scales[i]))
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "scale %g", (double)scales[i]);
            d.scales[a] = scales[i];
        } else {
            if (sizes[i] <= 0)
                return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "size %lld",
                                 (long long)sizes[i]);
            d.sizes[a] = sizes[i];
        }
    }
    if (nsz >= 0) /* sizes win where set: unlisted axes keep their length */
        for (int i = 0; i < rank; i++)
            if (!d.sizes[i])
                d.sizes[i] = shape[i];
    tx_tensor in, y;
    st = float_input_only(x, 0);
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_resize(x->ctx, in, &d, &y);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

static tx_status exec_expand(tx_xnode *x) {
    int64_t shape[TX_MAX_RANK];
    int n;
    tx_status st = host_ints(x, 1, "shape", shape, TX_MAX_RANK, &n);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_expand(x->ctx, in, n, shape, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_tile(tx_xnode *x) {
    int64_t rep[TX_MAX_RANK];
    int n, rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = host_ints(x, 1, "repeats", rep, TX_MAX_RANK, &n);
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (!st && n != rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "repeats has %d entries for rank %d",
                         n, rank);
    tx_tensor in, y;
    if (!st)
        st = tx_x_dev(x, 0, &in);
    if (!st)
        st = tx_tile(x->ctx, in, rep, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

static tx_status exec_depth_space(tx_xnode *x) {
    bool d2s = strcmp(x->node->op_type, "DepthToSpace") == 0;
    int64_t b = tx_attr_int(x->node, "blocksize", 0);
    if (b < 1 || b > 4096)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "blocksize %lld", (long long)b);
    const char *m = tx_attr_str(x->node, "mode", "DCR");
    if (d2s && strcmp(m, "DCR") != 0 && strcmp(m, "CRD") != 0)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "mode \"%s\"", m);
    tx_tensor in, y;
    tx_status st = tx_x_dev(x, 0, &in);
    if (!st)
        st = d2s ? tx_depth_to_space(x->ctx, in, (int)b,
                                     strcmp(m, "CRD") == 0 ? TX_DEPTH_CRD : TX_DEPTH_DCR, &y)
                 : tx_space_to_depth(x->ctx, in, (int)b, &y);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* Trilu: Where(mask, x, 0) with the [N, M] triangle mask built on the host
 * (it depends only on the shape and k) and broadcast over the batch dims. */
static tx_status exec_trilu(tx_xnode *x) {
    bool upper = tx_attr_int(x->node, "upper", 1) != 0;
    int64_t k = 0;
    if (tx_x_has(x, 1)) {
        int64_t v[1];
        int n;
        tx_status st = host_ints(x, 1, "k", v, 1, &n);
        if (st)
            return st;
        if (n != 1)
            return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "k must be a scalar");
        k = v[0];
    }
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank < 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input rank %d (needs at least 2)", rank);
    tx_tensor t[3], y;
    st = tx_x_dev(x, 0, &t[1]);
    if (st)
        return st;
    tx_hval mask;
    if (!tx_hval_alloc(&mask, TX_ONNX_BOOL, 2, shape + rank - 2))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            mask.i[i * cols + j] = upper ? j - i >= k : j - i <= k;
    st = tx_hval_upload(x->ctx, x->node->name, &mask, &t[0]);
    tx_hval_free(&mask);
    if (st)
        return st;
    tx_dtype dt = dtype_of(x, t[1]);
    float zf = 0;
    int32_t zi = 0;
    st = tx_tensor_create(x->ctx,
                          &(tx_tensor_desc){.rank = 0, .dtype = dt,
                                            .data = dt == TX_DTYPE_INT32 ? (void *)&zi : &zf},
                          &t[2]);
    if (!st) {
        st = tx_nary(x->ctx, TX_OP_WHERE, t, 3, &y);
        tx_tensor_destroy(x->ctx, t[2]);
    }
    tx_tensor_destroy(x->ctx, t[0]);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* Mod as float arithmetic (ints exact to 2^24, as the int32 Div kernel):
 * fmod = 0 (integers, sign of the divisor): a - floor(a / b) * b;
 * fmod = 1 (C fmod, sign of the dividend): sign(a) * (|a| - floor(|a| / |b|) * |b|). */
static tx_status exec_mod(tx_xnode *x) {
    bool fmod_ = tx_attr_int(x->node, "fmod", 0) != 0;
    int elem = tx_x_elem(x, 0);
    if (!fmod_ && tx_onnx_type_is_float(elem))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "fmod must be 1 for %s inputs",
                         tx_onnx_type_name(elem));
    tmp_list l = {0};
    tx_tensor a, b, y = {0};
    tx_status st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &a);
    if (!st)
        st = dev_as(x, 1, TX_DTYPE_FLOAT32, &l, &b);
    /* each step's result joins the temporaries; the last one is y */
    tx_tensor *t = l.t;
#define STEP(call)                                                                             \
    do {                                                                                       \
        if (!st && !(st = (call)))                                                             \
            l.n++;                                                                             \
    } while (0)
    tx_tensor sa = a;
    if (fmod_) {
        STEP(tx_unary(x->ctx, TX_OP_ABS, a, &t[l.n]));
        if (!st)
            a = t[l.n - 1];
        STEP(tx_unary(x->ctx, TX_OP_ABS, b, &t[l.n]));
        if (!st)
            b = t[l.n - 1];
    }
    STEP(tx_binary(x->ctx, TX_OP_DIV, a, b, &t[l.n]));
    STEP(tx_unary(x->ctx, TX_OP_FLOOR, t[l.n - 1], &t[l.n]));
    STEP(tx_binary(x->ctx, TX_OP_MUL, t[l.n - 1], b, &t[l.n]));
    STEP(tx_binary(x->ctx, TX_OP_SUB, a, t[l.n - 1], &t[l.n]));
    if (fmod_) {
        STEP(tx_unary(x->ctx, TX_OP_SIGN, sa, &t[l.n]));
        STEP(tx_binary(x->ctx, TX_OP_MUL, t[l.n - 2], t[l.n - 1], &t[l.n]));
    }
#undef STEP
    if (!st)
        y = t[--l.n]; /* the result leaves the temporaries */
    tmps_free(x, &l);
    return st ? st : set_dev_typed(x, 0, y, elem, true);
}

static tx_status int_scalar(tx_xnode *x, int32_t v, tx_tensor *out) {
    return tx_tensor_create(x->ctx, &(tx_tensor_desc){.rank = 0, .dtype = TX_DTYPE_INT32,
                                                      .data = &v}, out);
}

/* A host int64 tensor uploaded as a node temporary. */
static tx_status upload_ints(tx_xnode *x, int rank, const int64_t *shape, const int64_t *v,
                             tmp_list *l, tx_tensor *out) {
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

/* t + bound * (t < 0), elementwise (bound broadcasts): ONNX's negative
 * indices. t is int32. */
static tx_status wrap_negative(tx_xnode *x, tx_tensor t, tx_tensor bound, tmp_list *l,
                               tx_tensor *out) {
    tx_tensor zero, lt, m;
    tx_status st = int_scalar(x, 0, &zero);
    if (!st && (l->t[l->n++] = zero, !(st = tx_binary(x->ctx, TX_OP_LESS, t, zero, &lt))))
        l->t[l->n++] = lt;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, lt, bound, &m)))
        l->t[l->n++] = m;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_ADD, t, m, out)))
        l->t[l->n++] = *out;
    return st;
}

/* GatherElements as one Gather over x flattened: the flat index of output
 * element c is idx[c] * stride(axis) + base[c], where base (the offset of c's
 * other coordinates) depends only on the shapes and is built on the host.
 * Negative indices get dim added. Flat indices must stay exact: x up to 2^24
 * elements. */
static tx_status exec_gather_elements(tx_xnode *x) {
    int rx, ri;
    int64_t sx[TX_MAX_RANK], si[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rx, sx);
    if (!st)
        st = tx_x_shape(x, 1, &ri, si);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", 0);
    if (rx < 1 || ri != rx || axis < -rx || axis >= rx)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "data rank %d, indices rank %d, axis %lld",
                         rx, ri, (long long)axis);
    int a = norm_axis(axis, rx);
    for (int d = 0; d < rx; d++)
        if (d != a && si[d] > sx[d])
            return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "indices dim %d (%lld) exceeds the "
                             "data's (%lld)", d, (long long)si[d], (long long)sx[d]);
    int64_t nx = numel_of(rx, sx);
    if (nx > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "data of %lld elements (flat indices are "
                         "exact to 2^24)", (long long)nx);
    int64_t stride[TX_MAX_RANK], acc = 1;
    for (int d = rx - 1; d >= 0; d--) {
        stride[d] = acc;
        acc *= sx[d];
    }
    tx_hval base;
    if (!tx_hval_alloc(&base, TX_ONNX_INT64, ri, si))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < base.numel; k++) {
        int64_t rem = k, off = 0;
        for (int d = ri - 1; d >= 0; d--) {
            int64_t c = rem % si[d];
            rem /= si[d];
            if (d != a)
                off += c * stride[d];
        }
        base.i[k] = off;
    }
    tmp_list l = {0};
    tx_tensor in, flat, ix, t, y = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st)
        st = dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st && !(st = tx_hval_upload(x->ctx, x->node->name, &base, &t)))
        l.t[l.n++] = t;
    tx_hval_free(&base);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, 1, &nx, &flat)))
        l.t[l.n++] = flat;
    /* flat = wrapped(idx) * stride + base */
    tx_tensor sc, dim, iw, n1, lin;
    if (!st && !(st = int_scalar(x, (int32_t)stride[a], &sc)))
        l.t[l.n++] = sc;
    if (!st && !(st = int_scalar(x, (int32_t)sx[a], &dim)))
        l.t[l.n++] = dim;
    if (!st)
        st = wrap_negative(x, ix, dim, &l, &iw);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, iw, sc, &n1)))
        l.t[l.n++] = n1;
    if (!st && !(st = tx_binary(x->ctx, TX_OP_ADD, n1, t, &lin)))
        l.t[l.n++] = lin;
    if (!st)
        st = tx_gather(x->ctx, flat, lin, 0, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
}

/* EyeLike: ones on diagonal k of a 2-D shape; only the input's shape is
 * read, so the result is a host value (folded at plan time when static). */
static tx_status exec_eye_like(tx_xnode *x) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    if (rank != 2)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "input rank %d (needs 2)", rank);
    int elem = (int)tx_attr_int(x->node, "dtype", tx_x_elem(x, 0));
    if (!tx_onnx_type_is_float(elem) && !tx_onnx_type_is_int(elem))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "dtype %s is unsupported",
                         tx_onnx_type_name(elem));
    int64_t k = tx_attr_int(x->node, "k", 0);
    tx_hval o;
    if (!tx_hval_alloc(&o, elem, 2, shape))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t i = 0; i < shape[0]; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < shape[1]) {
            if (o.f)
                o.f[i * shape[1] + j] = 1;
            else
                o.i[i * shape[1] + j] = 1;
        }
    }
    return tx_x_set_host(x, 0, &o);
}

/* IsInf: x == +inf (detect_positive) or x == -inf (detect_negative). */
static tx_status exec_is_inf(tx_xnode *x) {
    bool pos = tx_attr_int(x->node, "detect_positive", 1) != 0,
         neg = tx_attr_int(x->node, "detect_negative", 1) != 0;
    tmp_list l = {0};
    tx_tensor in, y = {0};
    tx_status st = dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    tx_tensor hit[2];
    int n = 0;
    for (int sign = 0; sign < 2 && !st; sign++) {
        if (!(sign ? neg : pos))
            continue;
        tx_tensor inf;
        st = scalar_tensor(x, sign ? -INFINITY : INFINITY, &inf);
        if (st)
            break;
        l.t[l.n++] = inf;
        st = tx_binary(x->ctx, TX_OP_EQUAL, in, inf, &hit[n]);
        if (!st)
            l.t[l.n++] = hit[n++];
    }
    if (!st && n == 2)
        st = tx_binary(x->ctx, TX_OP_OR, hit[0], hit[1], &y);
    else if (!st && n == 1)
        st = tx_identity(x->ctx, hit[0], &y);
    else if (!st) /* detects nothing: all false (x < x is, NaN included) */
        st = tx_binary(x->ctx, TX_OP_LESS, in, in, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_BOOL);
}

/* Hardmax: 1 where ArgMax along the axis is (the first maximum), else 0: the
 * argmax compared with an index ramp along the axis. Before opset 13 the input
 * is coerced to 2-D at axis (default 1) and the maximum taken over the
 * flattened trailing dims. */
static tx_status exec_hardmax(tx_xnode *x) {
    bool old = x->opset < 13;
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = float_input_only(x, 0);
    if (!st)
        st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", old ? 1 : -1);
    if (rank < 1 || axis < -rank || axis >= rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d",
                         (long long)axis, rank);
    int a = norm_axis(axis, rank);
    tmp_list l = {0};
    tx_tensor in, v, am, ramp, eq, y = {0};
    int vr = rank;
    int64_t vs[TX_MAX_RANK];
    memcpy(vs, shape, sizeof vs);
    if (old) { /* [prod(:a), prod(a:)], max over dim 1 */
        vr = 2;
        vs[0] = numel_of(a, shape);
        vs[1] = numel_of(rank - a, shape + a);
        a = 1;
    }
    tx_hval r;
    int64_t rs[TX_MAX_RANK];
    for (int d = 0; d < vr; d++)
        rs[d] = d == a ? vs[a] : 1;
    if (!tx_hval_alloc(&r, TX_ONNX_INT64, vr, rs))
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int64_t k = 0; k < r.numel; k++)
        r.i[k] = k;
    st = tx_x_dev(x, 0, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, vr, vs, &v)))
        l.t[l.n++] = v;
    tx_reduce_desc rd = {.n_axes = 1, .axes = {a}};
    if (!st && !(st = tx_reduce(x->ctx, TX_OP_ARGMAX, v, &rd, &am)))
        l.t[l.n++] = am;
    if (!st && !(st = tx_hval_upload(x->ctx, x->node->name, &r, &ramp)))
        l.t[l.n++] = ramp;
    tx_hval_free(&r);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_EQUAL, ramp, am, &eq)))
        l.t[l.n++] = eq;
    tx_tensor f;
    if (!st && !(st = to_dtype(x, eq, TX_DTYPE_FLOAT32, &l, &f)))
        st = tx_tensor_reshape(x->ctx, f, rank, shape, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_FLOAT);
}

/* OneHot(indices, depth, values [off, on]): Where(unsqueezed indices == a
 * ramp of `depth` along axis, on, off). */
static tx_status exec_one_hot(tx_xnode *x) {
    const tx_hval *dh, *vh;
    tx_status st = tx_x_host(x, 1, &dh);
    if (!st)
        st = tx_x_host(x, 2, &vh);
    if (st)
        return st;
    if (dh->numel != 1 || vh->numel != 2)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "depth must be one value, values two");
    int64_t depth = (int64_t)tx_hval_get(dh, 0);
    if (depth < 1 || depth > (1 << 24))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "depth %lld", (long long)depth);
    int rank;
    int64_t shape[TX_MAX_RANK];
    st = tx_x_shape(x, 0, &rank, shape);
    if (st)
        return st;
    int64_t axis = tx_attr_int(x->node, "axis", -1);
    if (rank + 1 > TX_MAX_RANK || axis < -(rank + 1) || axis > rank)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "axis %lld for rank %d",
                         (long long)axis, rank);
    int a = norm_axis(axis, rank + 1);
    int64_t us[TX_MAX_RANK], rs[TX_MAX_RANK], *ramp = malloc(sizeof(int64_t) * (size_t)depth);
    if (!ramp)
        return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
    for (int d = 0, j = 0; d <= rank; d++) {
        us[d] = d == a ? 1 : shape[j++];
        rs[d] = d == a ? depth : 1;
    }
    for (int64_t k = 0; k < depth; k++)
        ramp[k] = k;
    tmp_list l = {0};
    tx_tensor ix, iu, dsc, iw, rt, eq, t[3], y = {0};
    bool isf = vh->f != NULL;
    float fv[2] = {isf ? vh->f[0] : 0, isf ? vh->f[1] : 0};
    int32_t iv[2] = {isf ? 0 : (int32_t)vh->i[0], isf ? 0 : (int32_t)vh->i[1]};
    tx_dtype vdt = isf ? TX_DTYPE_FLOAT32 : TX_DTYPE_INT32;
    st = dev_as(x, 0, TX_DTYPE_INT32, &l, &ix);
    if (!st && !(st = tx_tensor_reshape(x->ctx, ix, rank + 1, us, &iu)))
        l.t[l.n++] = iu;
    if (!st && !(st = int_scalar(x, (int32_t)depth, &dsc)))
        l.t[l.n++] = dsc;
    if (!st)
        st = wrap_negative(x, iu, dsc, &l, &iw);
    if (!st)
        st = upload_ints(x, rank + 1, rs, ramp, &l, &rt);
    free(ramp);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_EQUAL, iw, rt, &eq)))
        l.t[l.n++] = eq;
    for (int k = 0; k < 2 && !st; k++) {
        st = tx_tensor_create(x->ctx, &(tx_tensor_desc){.rank = 0, .dtype = vdt,
                                                        .data = isf ? (void *)&fv[1 - k]
                                                                    : (void *)&iv[1 - k]},
                              &t[1 + k]);
        if (!st)
            l.t[l.n++] = t[1 + k];
    }
    if (!st) {
        t[0] = eq;
        st = tx_nary(x->ctx, TX_OP_WHERE, t, 3, &y);
    }
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, vh->elem);
}

/* GatherND (batch_dims 0) as one Gather over data viewed as
 * [prod(dims[:k]), dims[k:]...]: the row of index tuple i is
 * sum_j idx[i, j] * stride_j (a ReduceSum over the tuple). */
static tx_status exec_gather_nd(tx_xnode *x) {
    if (tx_attr_int(x->node, "batch_dims", 0) != 0)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "batch_dims != 0 is unsupported");
    int rd, ri;
    int64_t sd[TX_MAX_RANK], si[TX_MAX_RANK];
    tx_status st = tx_x_shape(x, 0, &rd, sd);
    if (!st)
        st = tx_x_shape(x, 1, &ri, si);
    if (st)
        return st;
    int k = ri >= 1 ? (int)si[ri - 1] : 0;
    if (ri < 1 || k < 1 || k > rd)
        return tx_x_fail(x, TX_STATUS_SHAPE_MISMATCH, "indices' last dim %d for data rank %d",
                         k, rd);
    int64_t rows = numel_of(k, sd);
    if (rows > (1 << 24))
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED, "%lld index tuples' rows (flat indices "
                         "are exact to 2^24)", (long long)rows);
    int64_t dims[TX_MAX_RANK], strides[TX_MAX_RANK], acc = 1, one = k;
    for (int j = k - 1; j >= 0; j--) {
        dims[j] = sd[j];
        strides[j] = acc;
        acc *= sd[j];
    }
    int64_t vs[TX_MAX_RANK];
    vs[0] = rows;
    for (int j = k; j < rd; j++)
        vs[1 + j - k] = sd[j];
    tmp_list l = {0};
    tx_tensor in, v, ix, dt, stt, iw, prod, lin, y = {0};
    st = tx_x_dev(x, 0, &in);
    if (!st && !(st = tx_tensor_reshape(x->ctx, in, 1 + rd - k, vs, &v)))
        l.t[l.n++] = v;
    if (!st)
        st = dev_as(x, 1, TX_DTYPE_INT32, &l, &ix);
    if (!st)
        st = upload_ints(x, 1, &one, dims, &l, &dt);
    if (!st)
        st = upload_ints(x, 1, &one, strides, &l, &stt);
    if (!st)
        st = wrap_negative(x, ix, dt, &l, &iw);
    if (!st && !(st = tx_binary(x->ctx, TX_OP_MUL, iw, stt, &prod)))
        l.t[l.n++] = prod;
    tx_reduce_desc r = {.n_axes = 1, .axes = {-1}, .drop_dims = true};
    if (!st && !(st = tx_reduce(x->ctx, TX_OP_REDUCE_SUM, prod, &r, &lin)))
        l.t[l.n++] = lin;
    if (!st)
        st = tx_gather(x->ctx, v, lin, 0, &y);
    tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 0));
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
    {"CastLike", exec_cast, infer_cast, H, 2, 2, 0},
    {"Gather", exec_gather, NULL, H, 2, 2, 0},
    {"Concat", exec_concat, NULL, H, 1, -1, 0},
    {"Slice", exec_slice, NULL, H, 1, 5, 30},
    /* unary: elementwise float functions (int inputs run as float) */
    {"Softplus", exec_unary, infer_same, H, 1, 1, 0},
    {"Softsign", exec_unary, infer_same, H, 1, 1, 0},
    {"HardSwish", exec_unary, infer_same, H, 1, 1, 0},
    {"Sin", exec_unary, infer_same, H, 1, 1, 0},
    {"Cos", exec_unary, infer_same, H, 1, 1, 0},
    {"Tan", exec_unary, infer_same, H, 1, 1, 0},
    {"Floor", exec_unary, infer_same, H, 1, 1, 0},
    {"Ceil", exec_unary, infer_same, H, 1, 1, 0},
    {"Round", exec_unary, infer_same, H, 1, 1, 0},
    {"Sign", exec_unary, infer_same, H, 1, 1, 0},
    {"Reciprocal", exec_unary, infer_same, H, 1, 1, 0},
    {"Not", exec_unary, infer_bool_same, H, 1, 1, 0},
    {"Sinh", exec_unary, infer_same, H, 1, 1, 0},
    {"Cosh", exec_unary, infer_same, H, 1, 1, 0},
    {"Asin", exec_unary, infer_same, H, 1, 1, 0},
    {"Acos", exec_unary, infer_same, H, 1, 1, 0},
    {"Atan", exec_unary, infer_same, H, 1, 1, 0},
    {"Asinh", exec_unary, infer_same, H, 1, 1, 0},
    {"Acosh", exec_unary, infer_same, H, 1, 1, 0},
    {"Atanh", exec_unary, infer_same, H, 1, 1, 0},
    {"Mish", exec_unary, infer_same, H, 1, 1, 0},
    {"IsNaN", exec_unary, infer_bool_same, H, 1, 1, 0},
    /* alpha / beta activations */
    {"HardSigmoid", exec_act, infer_same, 0, 1, 1, 0},
    {"LeakyRelu", exec_act, infer_same, 0, 1, 1, 0},
    {"Elu", exec_act, infer_same, 0, 1, 1, 0},
    {"Selu", exec_act, infer_same, 0, 1, 1, 0},
    {"Celu", exec_act, infer_same, 0, 1, 1, 0},
    {"ThresholdedRelu", exec_act, infer_same, 0, 1, 1, 0},
    {"Shrink", exec_act, infer_same, 0, 1, 1, 0},
    /* binary, logic, variadic */
    {"PRelu", exec_binary, infer_prelu, H, 2, 2, 0},
    {"And", exec_binary, infer_logic, H, 2, 2, 0},
    {"Or", exec_binary, infer_logic, H, 2, 2, 0},
    {"Xor", exec_binary, infer_logic, H, 2, 2, 0},
    {"Equal", exec_binary, infer_logic, H, 2, 2, 0},
    {"Less", exec_binary, infer_logic, H, 2, 2, 0},
    {"Greater", exec_binary, infer_logic, H, 2, 2, 0},
    {"LessOrEqual", exec_binary, infer_logic, H, 2, 2, 0},
    {"GreaterOrEqual", exec_binary, infer_logic, H, 2, 2, 0},
    {"Sum", exec_binary, infer_bcast, H, 1, -1, 0},
    {"Mean", exec_binary, infer_bcast, 0, 1, -1, 0},
    {"Where", exec_where, infer_where, 0, 3, 3, 0},
    /* conv, pools, normalizations */
    {"Conv", exec_conv, infer_conv, TX_OPF_FUSE_ACT, 2, 3, 0},
    {"ConvTranspose", exec_conv, infer_conv, 0, 2, 3, 0},
    {"MaxPool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"AveragePool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"GlobalMaxPool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"GlobalAveragePool", exec_pool, infer_pool, 0, 1, 1, 0},
    {"BatchNormalization", exec_norm, infer_same, 0, 5, 5, 0},
    {"InstanceNormalization", exec_norm, infer_same, 0, 3, 3, 0},
    {"LayerNormalization", exec_norm, infer_same, 0, 2, 3, 0},
    /* reductions, softmax */
    {"ReduceSum", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMean", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMax", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceMin", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceProd", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceL1", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceL2", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceSumSquare", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceLogSum", exec_reduce, NULL, 0, 1, 2, 2},
    {"ReduceLogSumExp", exec_reduce, NULL, 0, 1, 2, 2},
    {"ArgMax", exec_reduce, NULL, 0, 1, 1, 0},
    {"ArgMin", exec_reduce, NULL, 0, 1, 1, 0},
    {"Softmax", exec_softmax, infer_same, 0, 1, 1, 0},
    {"LogSoftmax", exec_softmax, infer_same, 0, 1, 1, 0},
    /* data movement */
    {"Transpose", exec_transpose, NULL, 0, 1, 1, 0},
    {"Split", exec_split, NULL, 0, 1, 2, 2},
    {"Pad", exec_pad, NULL, 0, 1, 4, 14},
    {"Resize", exec_resize, NULL, 0, 1, 4, 14},
    {"Upsample", exec_resize, NULL, 0, 1, 2, 2},
    {"Expand", exec_expand, NULL, 0, 2, 2, 2},
    {"Tile", exec_tile, NULL, 0, 2, 2, 2},
    {"DepthToSpace", exec_depth_space, NULL, 0, 1, 1, 0},
    {"Trilu", exec_trilu, infer_same, 0, 1, 2, 2},
    {"Mod", exec_mod, infer_bcast, 0, 2, 2, 0},
    {"GatherElements", exec_gather_elements, NULL, 0, 2, 2, 0},
    {"EyeLike", exec_eye_like, NULL, TX_OPF_SHAPE_ONLY, 1, 1, 0},
    {"IsInf", exec_is_inf, infer_bool_same, 0, 1, 1, 0},
    {"Hardmax", exec_hardmax, infer_same, 0, 1, 1, 0},
    {"OneHot", exec_one_hot, NULL, 0, 3, 3, 6},
    {"GatherND", exec_gather_nd, NULL, 0, 2, 2, 0},
    {"SpaceToDepth", exec_depth_space, NULL, 0, 1, 1, 0},
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
