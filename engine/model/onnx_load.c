/* ModelProto → tx_onnx_model.
 *
 * One pass over the wire format per message. Everything the model keeps
 * (strings, arrays, tensor data) is allocated from one arena, so an error
 * anywhere just destroys the arena: no partial frees on error paths.
 * Repeated fields grow arena arrays by doubling (the old copy is wasted, at
 * most 2x); tensor payloads are sized exactly from their length first.
 *
 * Field numbers are those of onnx/onnx.proto (IR version 3..9). */
#include <stdarg.h>
#include <string.h>

#include "model.h"

/* ---- parser state ---- */

typedef struct parser {
    tx_arena *a;
    char *err;
    size_t err_len;
    tx_status st;
    char where[160]; /* what is being parsed, for messages */
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool
fail(parser *p, tx_status st, const char *fmt, ...) {
    if (p->st == TX_STATUS_OK) {
        p->st = st;
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (p->where[0])
            snprintf(p->err, p->err_len, "onnx: %s: %s", p->where, msg);
        else
            snprintf(p->err, p->err_len, "onnx: %s", msg);
    }
    return false;
}

static bool malformed(parser *p, const char *what) {
    return fail(p, TX_STATUS_INVALID_ARGUMENT, "malformed or truncated %s", what);
}

/* The check after each field of a message: false (stop) when reading it
 * already failed (p->st) or it was malformed, reported as `what`. */
static bool field_ok(parser *p, bool ok, const char *what) {
    return !p->st && (ok || malformed(p, what));
}

static void *alloc(parser *p, size_t n) {
    void *r = tx_arena_alloc(p->a, n);
    if (!r)
        fail(p, TX_STATUS_OUT_OF_MEMORY, "out of host memory (%zu bytes)", n);
    return r;
}

static void *alloc_alone(parser *p, size_t n) {
    void *r = tx_arena_alloc_alone(p->a, n);
    if (!r)
        fail(p, TX_STATUS_OUT_OF_MEMORY, "out of host memory (%zu bytes)", n);
    return r;
}

/* Grows an arena array of `esz`-byte elements to hold n + 1. The new
 * capacity follows n, not *cap: a message that repeats a singular field
 * (two `graph`s in a ModelProto) merges into arrays that already hold
 * entries while the second parse's *cap starts at 0. */
static bool grow(parser *p, void **arr, int n, int *cap, size_t esz) {
    if (n < *cap)
        return true;
    if (n >= (1 << 28))
        return fail(p, TX_STATUS_TOO_LARGE, "more than 2^28 repeated fields");
    int nc = n < 4 ? 8 : n * 2;
    void *d = alloc(p, (size_t)nc * esz);
    if (!d)
        return false;
    if (n)
        memcpy(d, *arr, (size_t)n * esz);
    *arr = d;
    *cap = nc;
    return true;
}

static const char *str_dup(parser *p, tx_pb s) {
    size_t n = (size_t)(s.end - s.p);
    char *r = alloc(p, n + 1);
    if (!r)
        return NULL;
    memcpy(r, s.p, n);
    r[n] = 0;
    if (strlen(r) != n)
        return fail(p, TX_STATUS_INVALID_ARGUMENT, "a string holds a NUL byte"), NULL;
    return r;
}

static bool read_str(parser *p, tx_pb *b, const char **out, const char *what) {
    tx_pb s;
    if (!tx_pb_sub(b, &s))
        return malformed(p, what);
    *out = str_dup(p, s);
    return *out != NULL;
}

/* A repeated integer field, packed (LEN) or one value per key. zigzag is not
 * used by ONNX (int32/int64 fields are plain varints, negatives 10 bytes). */
static bool read_ints(parser *p, tx_pb *b, int wire, int64_t **arr, int *n, int *cap,
                      const char *what) {
    if (wire == TX_PB_VARINT) {
        uint64_t v;
        if (!tx_pb_varint(b, &v))
            return malformed(p, what);
        if (!grow(p, (void **)arr, *n, cap, sizeof **arr))
            return false;
        (*arr)[(*n)++] = (int64_t)v;
        return true;
    }
    if (wire != TX_PB_LEN)
        return malformed(p, what);
    tx_pb s;
    if (!tx_pb_sub(b, &s))
        return malformed(p, what);
    while (s.p < s.end) {
        uint64_t v;
        if (!tx_pb_varint(&s, &v))
            return malformed(p, what);
        if (!grow(p, (void **)arr, *n, cap, sizeof **arr))
            return false;
        (*arr)[(*n)++] = (int64_t)v;
    }
    return true;
}

/* Repeated fixed-width field (float: 4 bytes, double: 8), packed or not. */
static bool read_fixed(parser *p, tx_pb *b, int wire, int width, double **arr, int *n, int *cap,
                       const char *what) {
    tx_pb s;
    if (wire == TX_PB_LEN) {
        if (!tx_pb_sub(b, &s) || (s.end - s.p) % width)
            return malformed(p, what);
    } else if (wire == (width == 4 ? TX_PB_I32 : TX_PB_I64)) {
        if (b->end - b->p < width)
            return malformed(p, what);
        s.p = b->p;
        s.end = b->p + width;
        b->p += width;
    } else {
        return malformed(p, what);
    }
    while (s.p < s.end) {
        double v;
        if (width == 4) {
            uint32_t u;
            tx_pb_fixed32(&s, &u);
            float f;
            memcpy(&f, &u, 4);
            v = f;
        } else {
            uint64_t u;
            tx_pb_fixed64(&s, &u);
            memcpy(&v, &u, 8);
        }
        if (!grow(p, (void **)arr, *n, cap, sizeof **arr))
            return false;
        (*arr)[(*n)++] = v;
    }
    return true;
}

/* ---- TensorProto ---- */

static bool parse_tensor(parser *p, tx_pb b, tx_hval *out, const char **name) {
    int64_t *dims = NULL, *ints = NULL;
    double *fl = NULL;
    int n_dims = 0, c_dims = 0, n_ints = 0, c_ints = 0, n_fl = 0, c_fl = 0;
    int ints_field = 0, fl_field = 0;
    uint64_t elem = 0, location = 0;
    tx_pb raw = {0};
    bool has_raw = false, has_strings = false, has_segment = false;
    const char *nm = "";
    uint32_t f;
    int w, r;
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        bool ok = true;
        switch (f) {
        case 1: ok = read_ints(p, &b, w, &dims, &n_dims, &c_dims, "tensor dims"); break;
        case 2: ok = w == TX_PB_VARINT && tx_pb_varint(&b, &elem); break;
        case 3: has_segment = true, ok = tx_pb_skip(&b, w); break;
        case 4:  /* float_data */
        case 10: /* double_data */
            if (fl_field && fl_field != (int)f)
                return fail(p, TX_STATUS_INVALID_ARGUMENT,
                            "tensor has both float_data and "
                            "double_data");
            fl_field = (int)f;
            ok = read_fixed(p, &b, w, f == 4 ? 4 : 8, &fl, &n_fl, &c_fl, "tensor data");
            break;
        case 5:  /* int32_data */
        case 7:  /* int64_data */
        case 11: /* uint64_data */
            if (ints_field && ints_field != (int)f)
                return fail(p, TX_STATUS_INVALID_ARGUMENT, "tensor mixes integer data fields");
            ints_field = (int)f;
            ok = read_ints(p, &b, w, &ints, &n_ints, &c_ints, "tensor data");
            break;
        case 6: has_strings = true, ok = tx_pb_skip(&b, w); break;
        case 8:
            if (w != TX_PB_LEN)
                return malformed(p, "tensor name");
            ok = read_str(p, &b, &nm, "tensor name");
            break;
        case 9:
            if (w != TX_PB_LEN || !tx_pb_sub(&b, &raw))
                return malformed(p, "tensor raw_data");
            has_raw = true;
            break;
        case 14: ok = w == TX_PB_VARINT && tx_pb_varint(&b, &location); break;
        default: ok = tx_pb_skip(&b, w); break;
        }
        if (!field_ok(p, ok, "tensor"))
            return false;
    }
    if (r < 0)
        return malformed(p, "tensor");
    if (name)
        *name = nm;
    if (location == 1)
        return fail(p, TX_STATUS_UNSUPPORTED,
                    "tensor \"%s\" keeps its data in an external file (unsupported)", nm);
    if (has_segment)
        return fail(p, TX_STATUS_UNSUPPORTED, "tensor \"%s\" is segmented (unsupported)", nm);
    if (elem == TX_ONNX_STRING || has_strings ||
        (!tx_onnx_type_is_float((int)elem) && !tx_onnx_type_is_int((int)elem)))
        return fail(p, TX_STATUS_UNSUPPORTED, "tensor \"%s\" has element type %s (unsupported)", nm,
                    tx_onnx_type_name((int)elem));
    if (n_dims > TX_MAX_RANK)
        return fail(p, TX_STATUS_UNSUPPORTED, "tensor \"%s\" has rank %d above %d (unsupported)",
                    nm, n_dims, TX_MAX_RANK);
    memset(out, 0, sizeof *out);
    out->elem = (int)elem;
    out->rank = n_dims;
    for (int i = 0; i < n_dims; i++)
        if (dims[i] < 0)
            return fail(p, TX_STATUS_INVALID_ARGUMENT, "tensor \"%s\" has negative dim %lld", nm,
                        (long long)dims[i]);
    if (!tx_dims_in_range(n_dims, dims, TX_DIM_MAX, false))
        return fail(p, TX_STATUS_TOO_LARGE,
                    "tensor \"%s\" is too large (dims beyond 2^40 "
                    "elements)",
                    nm);
    int64_t numel = 1;
    for (int i = 0; i < n_dims; i++) {
        numel *= dims[i];
        out->shape[i] = dims[i];
    }
    out->numel = numel;
    bool isf = tx_onnx_type_is_float((int)elem);
    int64_t have;
    if (has_raw) {
        have = (raw.end - raw.p) / tx_onnx_raw_width((int)elem);
        if ((raw.end - raw.p) % tx_onnx_raw_width((int)elem))
            have = -1;
    } else if (elem == TX_ONNX_FLOAT || elem == TX_ONNX_DOUBLE) {
        if (ints_field || (fl_field && fl_field != (elem == TX_ONNX_FLOAT ? 4 : 10)))
            return fail(p, TX_STATUS_INVALID_ARGUMENT,
                        "tensor \"%s\": data in the wrong field "
                        "for %s",
                        nm, tx_onnx_type_name((int)elem));
        have = n_fl;
    } else {
        int want = elem == TX_ONNX_INT64                                ? 7
                   : (elem == TX_ONNX_UINT32 || elem == TX_ONNX_UINT64) ? 11
                                                                        : 5;
        if (fl_field || (ints_field && ints_field != want))
            return fail(p, TX_STATUS_INVALID_ARGUMENT,
                        "tensor \"%s\": data in the wrong field "
                        "for %s",
                        nm, tx_onnx_type_name((int)elem));
        have = n_ints;
    }
    if (have != numel)
        return fail(p, TX_STATUS_INVALID_ARGUMENT,
                    "tensor \"%s\" of %lld elements carries %lld values", nm, (long long)numel,
                    (long long)have);
    if (has_raw && elem == TX_ONNX_FLOAT16 && numel >= TX_HVAL_HALF_MIN) {
        /* a float16 weight stays halves: uploaded as they are */
        out->h16 = alloc_alone(p, (size_t)numel * sizeof(uint16_t));
        if (!out->h16)
            return false;
        for (int64_t k = 0; k < numel; k++)
            out->h16[k] = (uint16_t)(raw.p[2 * k] | raw.p[2 * k + 1] << 8);
        return true;
    }
    size_t bytes = (size_t)(numel ? numel : 1) * (isf ? sizeof(float) : sizeof(int64_t));
    /* a weight gets a block of its own, freed early if a fold replaces it */
    void *data = isf && numel >= TX_HVAL_HALF_MIN ? alloc_alone(p, bytes) : alloc(p, bytes);
    if (!data)
        return false;
    if (isf)
        out->f = data;
    else
        out->i = data;
    for (int64_t k = 0; k < numel; k++) {
        float fv = 0;
        int64_t iv = 0;
        if (has_raw)
            tx_onnx_raw_get(raw.p, (int)elem, k, &fv, &iv);
        else if (elem == TX_ONNX_FLOAT || elem == TX_ONNX_DOUBLE)
            fv = (float)fl[k];
        else if (elem == TX_ONNX_FLOAT16)
            fv = tx_onnx_half_to_float((uint16_t)ints[k]);
        else if (elem == TX_ONNX_BFLOAT16)
            fv = tx_onnx_bf16_to_float((uint16_t)ints[k]);
        else if (elem == TX_ONNX_BOOL)
            iv = ints[k] != 0;
        else
            iv = ints[k];
        if (isf)
            out->f[k] = fv;
        else
            out->i[k] = iv;
    }
    return true;
}

/* ---- ValueInfoProto ---- */

static bool parse_shape(parser *p, tx_pb b, tx_onnx_vinfo *v) {
    uint32_t f;
    int w, r;
    v->rank = 0;
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        if (f != 1 || w != TX_PB_LEN) {
            if (!tx_pb_skip(&b, w))
                return malformed(p, "shape");
            continue;
        }
        tx_pb d;
        if (!tx_pb_sub(&b, &d))
            return malformed(p, "shape dim");
        if (v->rank >= TX_MAX_RANK)
            return fail(p, TX_STATUS_UNSUPPORTED, "value \"%s\" has rank above %d (unsupported)",
                        v->name, TX_MAX_RANK);
        int64_t val = -1;
        const char *param = NULL;
        uint32_t df;
        int dw, dr;
        while ((dr = tx_pb_next(&d, &df, &dw)) == 1) {
            uint64_t u;
            if (df == 1 && dw == TX_PB_VARINT) {
                if (!tx_pb_varint(&d, &u))
                    return malformed(p, "shape dim");
                val = (int64_t)u < 0 ? -1 : (int64_t)u;
            } else if (df == 2 && dw == TX_PB_LEN) {
                if (!read_str(p, &d, &param, "dim_param"))
                    return false;
            } else if (!tx_pb_skip(&d, dw)) {
                return malformed(p, "shape dim");
            }
        }
        if (dr < 0)
            return malformed(p, "shape dim");
        v->dim_param[v->rank] = val < 0 ? param : NULL;
        v->shape[v->rank++] = val;
    }
    if (r == 0 && !tx_dims_in_range(v->rank, v->shape, TX_DIM_MAX, true))
        return fail(p, TX_STATUS_TOO_LARGE,
                    "value \"%s\" is declared with dims beyond 2^40 "
                    "elements",
                    v->name);
    return r == 0 || malformed(p, "shape");
}

static bool parse_vinfo(parser *p, tx_pb b, tx_onnx_vinfo *v) {
    uint32_t f;
    int w, r;
    v->name = "";
    v->rank = -1;
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        if (f == 1 && w == TX_PB_LEN) {
            if (!read_str(p, &b, &v->name, "value name"))
                return false;
        } else if (f == 2 && w == TX_PB_LEN) { /* TypeProto */
            tx_pb t;
            if (!tx_pb_sub(&b, &t))
                return malformed(p, "value type");
            uint32_t tf;
            int tw, tr;
            while ((tr = tx_pb_next(&t, &tf, &tw)) == 1) {
                if (tf == 1 && tw == TX_PB_LEN) { /* TypeProto.Tensor */
                    tx_pb tt;
                    if (!tx_pb_sub(&t, &tt))
                        return malformed(p, "tensor type");
                    uint32_t ef;
                    int ew, er;
                    while ((er = tx_pb_next(&tt, &ef, &ew)) == 1) {
                        uint64_t u;
                        if (ef == 1 && ew == TX_PB_VARINT) {
                            if (!tx_pb_varint(&tt, &u))
                                return malformed(p, "tensor type");
                            v->elem = (int)(u > 64 ? 0 : u);
                        } else if (ef == 2 && ew == TX_PB_LEN) {
                            tx_pb s;
                            if (!tx_pb_sub(&tt, &s) || !parse_shape(p, s, v))
                                return p->st ? false : malformed(p, "tensor shape");
                        } else if (!tx_pb_skip(&tt, ew)) {
                            return malformed(p, "tensor type");
                        }
                    }
                    if (er < 0)
                        return malformed(p, "tensor type");
                } else {
                    if (tf == 4 || tf == 5 || tf == 8 || tf == 9)
                        v->not_tensor = true;
                    if (!tx_pb_skip(&t, tw))
                        return malformed(p, "value type");
                }
            }
            if (tr < 0)
                return malformed(p, "value type");
        } else if (!tx_pb_skip(&b, w)) {
            return malformed(p, "value info");
        }
    }
    return r == 0 || malformed(p, "value info");
}

/* ---- AttributeProto, NodeProto ---- */

static const char *attr_type_name(int t) {
    static const char *names[] = {"UNDEFINED", "FLOAT",  "INT",  "STRING", "TENSOR",
                                  "GRAPH",     "FLOATS", "INTS", "STRINGS"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "?";
}

static bool parse_attr(parser *p, tx_pb b, tx_onnx_attr *a) {
    uint32_t f;
    int w, r;
    int64_t *ints = NULL;
    double *fl = NULL;
    int n_ints = 0, c_ints = 0, n_fl = 0, c_fl = 0, c_str = 0;
    uint64_t type = 0;
    int seen = 0;       /* for files without `type`: which field carried the value */
    unsigned kinds = 0; /* bit k: a field of attribute type k was present */
    a->name = "";
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        bool ok = true;
        uint64_t u = 0;
        uint32_t u32 = 0;
        switch (f) {
        case 1: ok = w == TX_PB_LEN && read_str(p, &b, &a->name, "attribute name"); break;
        case 2:
            ok = w == TX_PB_I32 && tx_pb_fixed32(&b, &u32);
            memcpy(&a->f, &u32, 4);
            seen = TX_ATTR_FLOAT;
            break;
        case 3:
            ok = w == TX_PB_VARINT && tx_pb_varint(&b, &u);
            a->i = (int64_t)u;
            seen = TX_ATTR_INT;
            break;
        case 4:
            ok = w == TX_PB_LEN && read_str(p, &b, &a->s, "attribute string");
            seen = TX_ATTR_STRING;
            break;
        case 5: {
            tx_pb t;
            ok = w == TX_PB_LEN && tx_pb_sub(&b, &t);
            if (ok) {
                a->t = alloc(p, sizeof *a->t);
                ok = a->t && parse_tensor(p, t, a->t, NULL);
            }
            seen = TX_ATTR_TENSOR;
            break;
        }
        case 6: ok = tx_pb_skip(&b, w), seen = TX_ATTR_GRAPH; break;
        case 7:
            ok = read_fixed(p, &b, w, 4, &fl, &n_fl, &c_fl, "attribute floats");
            seen = TX_ATTR_FLOATS;
            break;
        case 8:
            ok = read_ints(p, &b, w, &ints, &n_ints, &c_ints, "attribute ints");
            seen = TX_ATTR_INTS;
            break;
        case 9:
            ok = w == TX_PB_LEN &&
                 grow(p, (void **)&a->strings, a->n_strings, &c_str, sizeof *a->strings) &&
                 read_str(p, &b, &a->strings[a->n_strings], "attribute strings");
            a->n_strings += ok;
            seen = TX_ATTR_STRINGS;
            break;
        case 20: ok = w == TX_PB_VARINT && tx_pb_varint(&b, &type); break;
        default: ok = tx_pb_skip(&b, w); break;
        }
        if (!field_ok(p, ok, "attribute"))
            return false;
        if (f >= 2 && f <= 9)
            kinds |= 1u << seen;
    }
    if (r < 0)
        return malformed(p, "attribute");
    /* A declared type must be what the fields carry: a scalar needs its
     * field, and no field of another type may be there (lists may be empty). */
    if (type >= TX_ATTR_FLOAT && type <= TX_ATTR_STRINGS &&
        ((type <= TX_ATTR_GRAPH && !(kinds & 1u << type)) || (kinds & ~(1u << type))))
        return fail(p, TX_STATUS_INVALID_ARGUMENT, "attribute \"%s\" is declared %s but carries %s",
                    a->name, attr_type_name((int)type), kinds ? attr_type_name(seen) : "no value");
    a->type = type ? (int)(type > 64 ? 0 : type) : seen;
    a->n_ints = n_ints;
    a->ints = ints;
    a->n_floats = n_fl;
    if (n_fl) {
        a->floats = alloc(p, (size_t)n_fl * sizeof(float));
        if (!a->floats)
            return false;
        for (int i = 0; i < n_fl; i++)
            a->floats[i] = (float)fl[i];
    }
    return true;
}

static bool parse_node(parser *p, tx_pb b, tx_onnx_node *n) {
    uint32_t f;
    int w, r;
    int c_in = 0, c_out = 0, c_attr = 0;
    bool named = false; /* p->where names the node, for attribute messages */
    n->name = n->op_type = n->domain = "";
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        bool ok = true;
        if (w != TX_PB_LEN && f <= 7) {
            ok = false;
        } else if (f == 1 || f == 2) {
            const char ***arr = f == 1 ? &n->in : &n->out;
            int *cnt = f == 1 ? &n->n_in : &n->n_out, *cap = f == 1 ? &c_in : &c_out;
            ok = grow(p, (void **)arr, *cnt, cap, sizeof **arr) &&
                 read_str(p, &b, &(*arr)[*cnt], "node input/output");
            if (ok)
                (*cnt)++;
        } else if (f == 3) {
            ok = read_str(p, &b, &n->name, "node name");
        } else if (f == 4) {
            ok = read_str(p, &b, &n->op_type, "node op_type");
        } else if (f == 7) {
            ok = read_str(p, &b, &n->domain, "node domain");
        } else if (f == 5) {
            /* name the node in attribute messages (writers put name and
             * op_type, fields 3 and 4, before the attributes) */
            if (!named) {
                size_t at = strlen(p->where);
                snprintf(p->where + at, sizeof p->where - at, " \"%.64s\" (%.32s)", n->name,
                         n->op_type);
                named = true;
            }
            tx_pb s;
            ok = grow(p, (void **)&n->attrs, n->n_attrs, &c_attr, sizeof *n->attrs) &&
                 tx_pb_sub(&b, &s) && parse_attr(p, s, &n->attrs[n->n_attrs]);
            if (ok)
                n->n_attrs++;
        } else {
            ok = tx_pb_skip(&b, w);
        }
        if (!field_ok(p, ok, "node"))
            return false;
    }
    return r == 0 || malformed(p, "node");
}

/* ---- GraphProto, ModelProto ---- */

static bool parse_graph(parser *p, tx_pb b, tx_onnx_model *m) {
    uint32_t f;
    int w, r;
    int c_nodes = 0, c_inits = 0, c_in = 0, c_out = 0, c_vi = 0;
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        tx_pb s;
        bool ok = true;
        if (f == 1 || f == 5 || f == 11 || f == 12 || f == 13 || f == 15) {
            if (w != TX_PB_LEN || !tx_pb_sub(&b, &s))
                return malformed(p, "graph");
        }
        switch (f) {
        case 1:
            snprintf(p->where, sizeof p->where, "node %d", m->n_nodes);
            ok = grow(p, (void **)&m->nodes, m->n_nodes, &c_nodes, sizeof *m->nodes) &&
                 parse_node(p, s, &m->nodes[m->n_nodes]);
            if (ok)
                m->n_nodes++;
            break;
        case 5:
            snprintf(p->where, sizeof p->where, "initializer %d", m->n_inits);
            ok = grow(p, (void **)&m->inits, m->n_inits, &c_inits, sizeof *m->inits) &&
                 parse_tensor(p, s, &m->inits[m->n_inits].v, &m->inits[m->n_inits].name);
            if (ok)
                m->n_inits++;
            break;
        case 11:
        case 12:
        case 13: {
            tx_onnx_vinfo **arr = f == 11 ? &m->inputs : f == 12 ? &m->outputs : &m->vinfos;
            int *cnt = f == 11 ? &m->n_inputs : f == 12 ? &m->n_outputs : &m->n_vinfos;
            int *cap = f == 11 ? &c_in : f == 12 ? &c_out : &c_vi;
            snprintf(p->where, sizeof p->where, "graph %s %d",
                     f == 11   ? "input"
                     : f == 12 ? "output"
                               : "value_info",
                     *cnt);
            ok = grow(p, (void **)arr, *cnt, cap, sizeof **arr) && parse_vinfo(p, s, &(*arr)[*cnt]);
            if (ok)
                (*cnt)++;
            break;
        }
        case 15: return fail(p, TX_STATUS_UNSUPPORTED, "sparse initializers are unsupported");
        default: ok = tx_pb_skip(&b, w); break;
        }
        if (!field_ok(p, ok, "graph"))
            return false;
    }
    p->where[0] = 0;
    return r == 0 || malformed(p, "graph");
}

tx_status tx_onnx_load(const void *bytes, size_t len, tx_onnx_model *m, char *err, size_t err_len) {
    memset(m, 0, sizeof *m);
    if (err_len)
        err[0] = 0;
    if (!bytes && len)
        return TX_STATUS_INVALID_ARGUMENT;
    parser p = {.a = tx_arena_create(), .err = err, .err_len = err_len};
    if (!p.a) {
        snprintf(err, err_len, "onnx: out of host memory");
        return TX_STATUS_OUT_OF_MEMORY;
    }
    m->arena = p.a;
    m->opset = -1;
    tx_pb b = {bytes, (const uint8_t *)bytes + len};
    uint32_t f;
    int w, r;
    bool have_graph = false;
    while ((r = tx_pb_next(&b, &f, &w)) == 1) {
        bool ok = true;
        uint64_t u;
        tx_pb s;
        if (f == 1 && w == TX_PB_VARINT) {
            ok = tx_pb_varint(&b, &u);
            m->ir_version = (int64_t)u;
        } else if (f == 7 && w == TX_PB_LEN) {
            ok = tx_pb_sub(&b, &s) && parse_graph(&p, s, m);
            have_graph = true;
        } else if (f == 8 && w == TX_PB_LEN) { /* OperatorSetIdProto */
            ok = tx_pb_sub(&b, &s);
            const char *domain = "";
            int64_t version = 0;
            uint32_t of;
            int ow, orr;
            while (ok && (orr = tx_pb_next(&s, &of, &ow)) == 1) {
                if (of == 1 && ow == TX_PB_LEN)
                    ok = read_str(&p, &s, &domain, "opset domain");
                else if (of == 2 && ow == TX_PB_VARINT)
                    ok = tx_pb_varint(&s, &u), version = (int64_t)u;
                else
                    ok = tx_pb_skip(&s, ow);
            }
            if (ok && orr < 0)
                ok = false;
            if (ok && (!domain[0] || strcmp(domain, "ai.onnx") == 0))
                m->opset = version;
        } else {
            ok = tx_pb_skip(&b, w);
        }
        if (p.st)
            break;
        if (!ok) {
            malformed(&p, "model");
            break;
        }
    }
    if (!p.st && r < 0)
        malformed(&p, "model");
    if (!p.st && !have_graph)
        fail(&p, TX_STATUS_INVALID_ARGUMENT, "the file holds no graph (is it an ONNX model?)");
    if (m->opset < 0)
        m->opset = 0; /* only other domains: their ops are reported unsupported */
    if (!p.st && m->opset > 21)
        fail(&p, TX_STATUS_UNSUPPORTED, "opset %lld is outside 1..21", (long long)m->opset);
    if (p.st) {
        tx_status st = p.st;
        tx_onnx_model_free(m);
        return st;
    }
    return TX_STATUS_OK;
}

void tx_onnx_model_free(tx_onnx_model *m) {
    if (!m)
        return;
    tx_arena_destroy(m->arena);
    memset(m, 0, sizeof *m);
}

tx_status tx_onnx_load_tensor(const void *bytes, size_t len, tx_hval *out, char **name, char *err,
                              size_t err_len) {
    memset(out, 0, sizeof *out);
    if (name)
        *name = NULL;
    if (err_len)
        err[0] = 0;
    parser p = {.a = tx_arena_create(), .err = err, .err_len = err_len};
    if (!p.a)
        return TX_STATUS_OUT_OF_MEMORY;
    tx_pb b = {bytes, (const uint8_t *)bytes + len};
    tx_hval v;
    const char *nm = NULL;
    if (bytes && parse_tensor(&p, b, &v, &nm)) {
        /* the caller reads floats: a float16 tensor's halves (in the arena)
         * widened into malloc'd floats, anything else copied */
        bool ok = v.h16 ? tx_hval_widen(&v) : tx_hval_copy(out, &v);
        if (ok && v.h16) {
            *out = v;
            out->h16 = NULL;
        }
        if (!ok)
            fail(&p, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        else if (name && !(*name = strdup(nm))) {
            tx_hval_free(out);
            fail(&p, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        }
    } else if (!bytes) {
        fail(&p, TX_STATUS_INVALID_ARGUMENT, "no bytes");
    }
    tx_arena_destroy(p.a);
    return p.st;
}
