/* A protobuf writer for the ONNX models tests build in C (ModelProto,
 * GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto). */
#ifndef TX_TEST_ONNX_WRITER_H
#define TX_TEST_ONNX_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model/model.h"

typedef struct buf {
    uint8_t *d;
    size_t n, cap;
} buf;

static inline void put(buf *b, const void *p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        TX_ASSERT(b->d);
    }
    if (n) /* p may be NULL for an empty field (memcpy's arguments must not be) */
        memcpy(b->d + b->n, p, n);
    b->n += n;
}
static inline void varint(buf *b, uint64_t v) {
    do {
        uint8_t c = (uint8_t)(v & 127);
        v >>= 7;
        if (v)
            c |= 128;
        put(b, &c, 1);
    } while (v);
}
static inline void key(buf *b, int f, int w) {
    varint(b, (uint64_t)f << 3 | (uint64_t)w);
}
static inline void bytes_field(buf *b, int f, const void *p, size_t n) {
    key(b, f, 2);
    varint(b, n);
    put(b, p, n);
}
static inline void str_field(buf *b, int f, const char *s) {
    bytes_field(b, f, s, strlen(s));
}
static inline void int_field(buf *b, int f, int64_t v) {
    key(b, f, 0);
    varint(b, (uint64_t)v);
}
static inline void msg_field(buf *b, int f, buf *m) {
    bytes_field(b, f, m->d, m->n);
    free(m->d);
    *m = (buf){0};
}

/* NodeProto into graph g; attrs: pre-encoded AttributeProtos (may be NULL). */
static inline void node(buf *g, const char *op, const char *name, const char *const *ins, int n_in,
                        const char *const *outs, int n_out, buf *attrs, int n_attrs) {
    buf n = {0};
    for (int i = 0; i < n_in; i++)
        str_field(&n, 1, ins[i]);
    for (int i = 0; i < n_out; i++)
        str_field(&n, 2, outs[i]);
    str_field(&n, 3, name);
    str_field(&n, 4, op);
    for (int i = 0; i < n_attrs; i++)
        msg_field(&n, 5, &attrs[i]);
    msg_field(g, 1, &n);
}

static inline buf attr_f(const char *name, float v) {
    buf a = {0};
    str_field(&a, 1, name);
    key(&a, 2, 5);
    put(&a, &v, 4);
    int_field(&a, 20, TX_ATTR_FLOAT);
    return a;
}

static inline buf attr_i(const char *name, int64_t v) {
    buf a = {0};
    str_field(&a, 1, name);
    int_field(&a, 3, v);
    int_field(&a, 20, TX_ATTR_INT);
    return a;
}

static inline buf attr_s(const char *name, const char *v) {
    buf a = {0};
    str_field(&a, 1, name);
    bytes_field(&a, 4, v, strlen(v));
    int_field(&a, 20, TX_ATTR_STRING);
    return a;
}

static inline buf attr_is(const char *name, const int64_t *v, int n) {
    buf a = {0};
    str_field(&a, 1, name);
    for (int i = 0; i < n; i++)
        int_field(&a, 8, v[i]);
    int_field(&a, 20, TX_ATTR_INTS);
    return a;
}

static inline buf attr_fs(const char *name, const float *v, int n) {
    buf a = {0};
    str_field(&a, 1, name);
    for (int i = 0; i < n; i++) {
        key(&a, 7, 5);
        put(&a, &v[i], 4);
    }
    int_field(&a, 20, TX_ATTR_FLOATS);
    return a;
}

static inline buf attr_ss(const char *name, const char *const *v, int n) {
    buf a = {0};
    str_field(&a, 1, name);
    for (int i = 0; i < n; i++)
        str_field(&a, 9, v[i]);
    int_field(&a, 20, TX_ATTR_STRINGS);
    return a;
}

static inline void tensor_msg(buf *t, const char *name, const int64_t *dims, int rank, int elem,
                              const void *raw, size_t raw_len) {
    for (int i = 0; i < rank; i++)
        int_field(t, 1, dims[i]);
    int_field(t, 2, elem);
    str_field(t, 8, name);
    bytes_field(t, 9, raw, raw_len);
}

/* A graph initializer of element type elem, width bytes per value. */
static inline void init_elem(buf *g, const char *name, const int64_t *dims, int rank, int elem,
                             const void *v, size_t width) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    buf t = {0};
    tensor_msg(&t, name, dims, rank, elem, v, (size_t)n * width);
    msg_field(g, 5, &t);
}

static inline void init_f(buf *g, const char *name, const int64_t *dims, int rank, const float *v) {
    init_elem(g, name, dims, rank, TX_ONNX_FLOAT, v, 4);
}

static inline void init_i64(buf *g, const char *name, const int64_t *dims, int rank,
                            const int64_t *v) {
    init_elem(g, name, dims, rank, TX_ONNX_INT64, v, 8);
}

/* ValueInfoProto (field 11 input, 12 output, 13 value_info); dims < 0 become
 * dim_param "N"; rank -1 declares no shape at all. */
static inline void vinfo(buf *g, int field, const char *name, int elem, const int64_t *dims,
                         int rank) {
    buf shape = {0}, tt = {0}, type = {0}, vi = {0};
    for (int i = 0; i < rank; i++) {
        buf d = {0};
        if (dims[i] >= 0)
            int_field(&d, 1, dims[i]);
        else
            str_field(&d, 2, "N");
        msg_field(&shape, 1, &d);
    }
    int_field(&tt, 1, elem);
    if (rank >= 0)
        msg_field(&tt, 2, &shape);
    msg_field(&type, 1, &tt);
    str_field(&vi, 1, name);
    msg_field(&vi, 2, &type);
    msg_field(g, field, &vi);
}

static inline buf model(buf *g, int opset) {
    buf m = {0}, os = {0};
    int_field(&m, 1, 8);
    int_field(&os, 2, opset);
    msg_field(&m, 8, &os);
    msg_field(&m, 7, g);
    return m;
}

#endif
