/* ONNX elementwise ops: math, activations, Clip, arithmetic, logic, Where, Mod, IsInf. */
#include <math.h>
#include <string.h>

#include "common.h"
#include "ref/ref.h"

/* The engine op of a unary or binary/variadic row's op_type (TX_OP_NONE for
 * the others). */
static tx_op engine_op(const char *op_type) {
    static const tx_onnx_name_op k[] = {
        /* unary */
        {"Relu", TX_OP_RELU},
        {"Sigmoid", TX_OP_SIGMOID},
        {"Tanh", TX_OP_TANH},
        {"Exp", TX_OP_EXP},
        {"Log", TX_OP_LOG},
        {"Sqrt", TX_OP_SQRT},
        {"Abs", TX_OP_ABS},
        {"Neg", TX_OP_NEG},
        {"Erf", TX_OP_ERF},
        {"Gelu", TX_OP_GELU},
        {"Softplus", TX_OP_SOFTPLUS},
        {"Softsign", TX_OP_SOFTSIGN},
        {"HardSwish", TX_OP_HARD_SWISH},
        {"Sin", TX_OP_SIN},
        {"Cos", TX_OP_COS},
        {"Tan", TX_OP_TAN},
        {"Floor", TX_OP_FLOOR},
        {"Ceil", TX_OP_CEIL},
        {"Round", TX_OP_ROUND},
        {"Sign", TX_OP_SIGN},
        {"Reciprocal", TX_OP_RECIPROCAL},
        {"Not", TX_OP_NOT},
        {"Sinh", TX_OP_SINH},
        {"Cosh", TX_OP_COSH},
        {"Asin", TX_OP_ASIN},
        {"Acos", TX_OP_ACOS},
        {"Atan", TX_OP_ATAN},
        {"Asinh", TX_OP_ASINH},
        {"Acosh", TX_OP_ACOSH},
        {"Atanh", TX_OP_ATANH},
        {"Mish", TX_OP_MISH},
        {"IsNaN", TX_OP_IS_NAN},
        /* binary, variadic, logic */
        {"Add", TX_OP_ADD},
        {"Sub", TX_OP_SUB},
        {"Mul", TX_OP_MUL},
        {"Div", TX_OP_DIV},
        {"Pow", TX_OP_POW},
        {"Min", TX_OP_MIN},
        {"Max", TX_OP_MAX},
        {"Sum", TX_OP_ADD},
        {"Mean", TX_OP_MEAN},
        {"PRelu", TX_OP_PRELU},
        {"And", TX_OP_AND},
        {"Or", TX_OP_OR},
        {"Xor", TX_OP_XOR},
        {"Equal", TX_OP_EQUAL},
        {"Less", TX_OP_LESS},
        {"Greater", TX_OP_GREATER},
        {"LessOrEqual", TX_OP_LESS_EQUAL},
        {"GreaterOrEqual", TX_OP_GREATER_EQUAL},
    };
    return tx_onnx_name_to_op(k, TX_COUNTOF(k), op_type);
}

static bool unary_is_bool(tx_op op) {
    return op == TX_OP_NOT || op == TX_OP_IS_NAN;
}

static tx_status exec_unary(tx_xnode *x) {
    tx_op op = engine_op(x->node->op_type);
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
        tx_hval o;
        tx_status st = tx_x_host_like(x, 0, oelem ? oelem : TX_ONNX_FLOAT, &h, &o);
        if (st)
            return st;
        for (int64_t k = 0; k < o.numel; k++) {
            double v = tx_ref_unary_scalar(op, tx_hval_get(h, k));
            if (o.f)
                o.f[k] = (float)v;
            else
                o.i[k] = isfinite(v) ? tx_sat_i64(v) : 0;
        }
        return tx_x_set_host(x, 0, &o);
    }
    /* int inputs (Abs, Neg, Sign of int64; Not of bool) run as float */
    tx_tmp_list l = {0};
    tx_tensor t, y;
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_unary(x->ctx, op, t, &y);
    tx_tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev_typed(x, 0, y, oelem, !unary_is_bool(op));
    return st;
}

/* Inference status st, with output 0 (when known) made bool. */
static tx_status out_bool(tx_xnode *x, tx_status st) {
    if (x->out[0])
        x->out[0]->elem = TX_ONNX_BOOL;
    return st;
}

static tx_status infer_bool_same(tx_xnode *x) {
    return out_bool(x, tx_x_infer_same(x));
}

bool tx_onnx_act_attrs(const tx_onnx_node *n, tx_op *op, float *alpha, float *beta) {
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
             {"Shrink", "lambd", "bias", TX_OP_SHRINK, 0.5f, 0},
             {"Affine", "alpha", "beta", TX_OP_AFFINE, 1.0f, 0},
             {"Swish", "alpha", NULL, TX_OP_SWISH, 1.0f, 0}};
    for (size_t i = 0; i < TX_COUNTOF(k); i++)
        if (strcmp(k[i].name, n->op_type) == 0) {
            *op = k[i].op;
            *alpha = tx_attr_float(n, k[i].a_name, k[i].a);
            *beta = k[i].b_name ? tx_attr_float(n, k[i].b_name, k[i].b) : k[i].b;
            return true;
        }
    return false;
}

static tx_status exec_act(tx_xnode *x) {
    tx_op op = TX_OP_NONE;
    float a = 0, b = 0;
    tx_onnx_act_attrs(x->node, &op, &a, &b); /* the table routes only these here */
    if (!isfinite(a) || !isfinite(b))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "attributes %g / %g must be finite",
                         (double)a, (double)b);
    int elem = tx_x_elem(x, 0);
    tx_tmp_list l = {0};
    tx_tensor t, y;
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_activation(x->ctx, op, t, a, b, &y);
    tx_tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev_typed(x, 0, y, elem, true);
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
    tx_tmp_list l = {0}; /* int inputs are clipped as float (exact to 2^24) */
    tx_tensor t, y;
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &t);
    if (!st)
        st = tx_clip(x->ctx, t, lo, hi, &y);
    tx_tmps_free(x, &l);
    if (!st)
        st = tx_x_set_dev_typed(x, 0, y, elem, true);
    return st;
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
    case TX_OP_POW: return tx_sat_i64(pow((double)a, (double)b));
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
    if (!tx_bcast_shapes(a->rank, a->shape, b->rank, b->shape, &rank, shape))
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
            o->i[k] = tx_ref_binary_scalar(op, tx_hval_get(a, ia), tx_hval_get(b, ib), false) != 0;
        else if (isf)
            o->f[k] = (float)host_bin_f(op, tx_hval_get(a, ia), tx_hval_get(b, ib));
        else
            o->i[k] = host_bin_i(op, a->i[ia], b->i[ib]);
    }
    return TX_STATUS_OK;
}

/* PRelu before opset 7: a 1-D slope of C entries applies per channel of
 * x [N, C, ...] (a view of it as [C, 1, ...]). */
static tx_status prelu_legacy_slope(tx_xnode *x, tx_tensor in, tx_tensor *slope, tx_tmp_list *l) {
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
    tx_op op = engine_op(x->node->op_type);
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
    int oelem =
        op_is_logic(op) ? TX_ONNX_BOOL : (isf && !tx_onnx_type_is_float(e0) ? TX_ONNX_FLOAT : e0);
    /* one dtype for all (Pow(float, int64) exponents, bools of both storages) */
    tx_tmp_list l = {0};
    tx_tensor ts[64], y;
    tx_status st = tx_x_dev_same(x, idx, n, &l, ts);
    if (!st && op == TX_OP_PRELU && x->opset < 7)
        st = prelu_legacy_slope(x, ts[0], &ts[1], &l);
    if (!st && n == 1 && op != TX_OP_MEAN) /* Min/Max/Sum of one input: a view */
        st = tx_identity(x->ctx, ts[0], &y);
    else if (!st && (n > 2 || op == TX_OP_MEAN))
        st = tx_nary(x->ctx, nary_of(op), ts, n, &y);
    else if (!st)
        st = tx_binary(x->ctx, op, ts[0], ts[1], &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, oelem);
}

/* PRelu before opset 7 broadcasts its slope along the channels (the run
 * reshapes it): the output is X's shape. */
static tx_status infer_prelu(tx_xnode *x) {
    return x->opset < 7 ? tx_x_infer_same(x) : tx_x_infer_bcast(x);
}

static tx_status infer_logic(tx_xnode *x) {
    return out_bool(x, tx_x_infer_bcast(x));
}

/* Where(cond, a, b), numpy broadcasting over all three. */
static tx_status exec_where(tx_xnode *x) {
    int idx[2] = {1, 2};
    tx_tmp_list l = {0};
    tx_tensor ts[3], y;
    tx_status st = tx_x_dev(x, 0, &ts[0]);
    if (!st)
        st = tx_x_dev_same(x, idx, 2, &l, ts + 1);
    if (!st)
        st = tx_nary(x->ctx, TX_OP_WHERE, ts, 3, &y);
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, tx_x_elem(x, 1));
}

static tx_status infer_where(tx_xnode *x) {
    tx_status st = tx_x_infer_bcast(x);
    if (x->out[0] && tx_x_elem(x, 1))
        x->out[0]->elem = tx_x_elem(x, 1);
    return st;
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
    tx_tmp_list l = {0};
    tx_tensor a, b, y = {0};
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &a);
    if (!st)
        st = tx_x_dev_as(x, 1, TX_DTYPE_FLOAT32, &l, &b);
    /* each step's result joins the temporaries; the last one is y */
    tx_tensor *t = l.t;
#define STEP(call)                                                                                 \
    do {                                                                                           \
        if (!st && !(st = (call)))                                                                 \
            l.n++;                                                                                 \
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
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev_typed(x, 0, y, elem, true);
}

/* IsInf: x == +inf (detect_positive) or x == -inf (detect_negative). */
static tx_status exec_is_inf(tx_xnode *x) {
    bool pos = tx_attr_int(x->node, "detect_positive", 1) != 0,
         neg = tx_attr_int(x->node, "detect_negative", 1) != 0;
    tx_tmp_list l = {0};
    tx_tensor in, y = {0};
    tx_status st = tx_x_dev_as(x, 0, TX_DTYPE_FLOAT32, &l, &in);
    tx_tensor hit[2];
    int n = 0;
    for (int sign = 0; sign < 2 && !st; sign++) {
        if (!(sign ? neg : pos))
            continue;
        tx_tensor inf;
        st = tx_x_scalar(x, sign ? -INFINITY : INFINITY, &inf);
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
    tx_tmps_free(x, &l);
    return st ? st : tx_x_set_dev(x, 0, y, TX_ONNX_BOOL);
}

/* ---- rows ---- */

#define H TX_OPF_HOST

static const tx_onnx_op k_ops[] = {
    /* unary: elementwise float functions (int inputs run as float) */
    {"Relu", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Sigmoid", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Tanh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Exp", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Log", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Sqrt", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Abs", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Neg", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Erf", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Gelu", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Softplus", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Softsign", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"HardSwish", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Sin", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Cos", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Tan", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Floor", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Ceil", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Round", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Sign", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Reciprocal", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Not", exec_unary, infer_bool_same, H, 1, 1, 0},
    {"Sinh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Cosh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Asin", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Acos", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Atan", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Asinh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Acosh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Atanh", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"Mish", exec_unary, tx_x_infer_same, H, 1, 1, 0},
    {"IsNaN", exec_unary, infer_bool_same, H, 1, 1, 0},
    {"IsInf", exec_is_inf, infer_bool_same, 0, 1, 1, 0},
    /* alpha / beta activations, Clip */
    {"HardSigmoid", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Affine", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Swish", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"LeakyRelu", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Elu", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Selu", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Celu", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"ThresholdedRelu", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Shrink", exec_act, tx_x_infer_same, 0, 1, 1, 0},
    {"Clip", exec_clip, tx_x_infer_same, 0, 1, 3, 6},
    /* binary, logic, variadic */
    {"Add", exec_binary, tx_x_infer_bcast, H, 2, 2, 0},
    {"Sub", exec_binary, tx_x_infer_bcast, H, 2, 2, 0},
    {"Mul", exec_binary, tx_x_infer_bcast, H, 2, 2, 0},
    {"Div", exec_binary, tx_x_infer_bcast, H, 2, 2, 0},
    {"Pow", exec_binary, tx_x_infer_bcast, H, 2, 2, 0},
    {"Mod", exec_mod, tx_x_infer_bcast, 0, 2, 2, 0},
    {"Min", exec_binary, tx_x_infer_bcast, H, 1, -1, 0},
    {"Max", exec_binary, tx_x_infer_bcast, H, 1, -1, 0},
    {"Sum", exec_binary, tx_x_infer_bcast, H, 1, -1, 0},
    {"Mean", exec_binary, tx_x_infer_bcast, 0, 1, -1, 0},
    {"PRelu", exec_binary, infer_prelu, H, 2, 2, 0},
    {"And", exec_binary, infer_logic, H, 2, 2, 0},
    {"Or", exec_binary, infer_logic, H, 2, 2, 0},
    {"Xor", exec_binary, infer_logic, H, 2, 2, 0},
    {"Equal", exec_binary, infer_logic, H, 2, 2, 0},
    {"Less", exec_binary, infer_logic, H, 2, 2, 0},
    {"Greater", exec_binary, infer_logic, H, 2, 2, 0},
    {"LessOrEqual", exec_binary, infer_logic, H, 2, 2, 0},
    {"GreaterOrEqual", exec_binary, infer_logic, H, 2, 2, 0},
    {"Where", exec_where, infer_where, 0, 3, 3, 0},
};

#undef H

const tx_onnx_family tx_onnx_ops_elementwise = {k_ops, TX_COUNTOF(k_ops)};
