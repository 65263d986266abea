/* engine/model/: ONNX bytes → graph → passes (fold, fuse) → plan → run.
 *
 *   pb.c        protobuf wire-format reader (every length bounds-checked)
 *   onnx_load.c ModelProto → tx_onnx_model (arena-allocated, host tensors)
 *   onnx_types.c element types: names, classes, raw_data decoding
 *   arena.c     the model's arena allocator
 *   hval.c      host tensors: dtype conversion, upload, host-side math
 *   graph.c     value table, topological order, shape inference, constant
 *               folding, memory plan
 *   fuse.c      fusion passes (BN into Conv, GELU, HardSwish, MatMul+bias+act)
 *   onnx/       the op tables: ONNX op_type → executor, one file per op family
 *               (onnx/common.h says how to add an op)
 *   session.c   the public tx_session_* API
 *
 * Values are either *host* (small int/float tensors computed on the CPU: shape
 * subgraphs, constants) or *device* (tx_tensor in a texture). A host value
 * goes to the GPU only when a device op consumes it (weights: once, at
 * session creation). */
#ifndef TX_MODEL_H
#define TX_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* ---- protobuf wire format (pb.c) ---- */

typedef struct tx_pb {
    const uint8_t *p, *end;
} tx_pb;

enum { TX_PB_VARINT = 0, TX_PB_I64 = 1, TX_PB_LEN = 2, TX_PB_I32 = 5 };

/* Reads the next field key: 1 = got one, 0 = end of buffer, -1 = malformed. */
int tx_pb_next(tx_pb *b, uint32_t *field, int *wire);
bool tx_pb_varint(tx_pb *b, uint64_t *v);
bool tx_pb_fixed32(tx_pb *b, uint32_t *v);
bool tx_pb_fixed64(tx_pb *b, uint64_t *v);
/* A length-delimited field as a sub-buffer (bounds-checked). */
bool tx_pb_sub(tx_pb *b, tx_pb *sub);
bool tx_pb_skip(tx_pb *b, int wire);

/* ---- ONNX element types (TensorProto.DataType) ---- */

enum {
    TX_ONNX_UNDEFINED = 0,
    TX_ONNX_FLOAT = 1,
    TX_ONNX_UINT8 = 2,
    TX_ONNX_INT8 = 3,
    TX_ONNX_UINT16 = 4,
    TX_ONNX_INT16 = 5,
    TX_ONNX_INT32 = 6,
    TX_ONNX_INT64 = 7,
    TX_ONNX_STRING = 8,
    TX_ONNX_BOOL = 9,
    TX_ONNX_FLOAT16 = 10,
    TX_ONNX_DOUBLE = 11,
    TX_ONNX_UINT32 = 12,
    TX_ONNX_UINT64 = 13,
    TX_ONNX_BFLOAT16 = 16,
};
const char *tx_onnx_type_name(int elem);
/* float-like element types are held as float, int-like ones as int64. */
bool tx_onnx_type_is_float(int elem);
bool tx_onnx_type_is_int(int elem);
/* Bytes per element in TensorProto.raw_data (0: not a fixed-width type). */
int tx_onnx_raw_width(int elem);
/* Little-endian raw_data → value k of element type elem: *f for float-like
 * types, *i for int-like ones. */
void tx_onnx_raw_get(const uint8_t *r, int elem, int64_t k, float *f, int64_t *i);
float tx_onnx_half_to_float(uint16_t h);
float tx_onnx_bf16_to_float(uint16_t h);

/* A host tensor. Exactly one of f / i / h16 is set (or none when numel ==
 * 0). h16 holds a float16 tensor's bit patterns as the file gave them (a
 * weight of at least TX_HVAL_HALF_MIN values): uploaded as they are
 * (tx_tensor_desc.data_f16), widened where host code reads the values
 * (tx_hval_widen; the session keeps the halves where nothing changed them). */
typedef struct tx_hval {
    int elem;
    int rank;
    int64_t shape[TX_MAX_RANK];
    int64_t numel;
    float *f;
    int64_t *i;
    uint16_t *h16;
} tx_hval;

#define TX_HVAL_HALF_MIN 256

/* ---- the loaded model (onnx_load.c); everything lives in one arena (arena.c) ---- */

typedef struct tx_arena tx_arena;
tx_arena *tx_arena_create(void);
void *tx_arena_alloc(tx_arena *a, size_t n); /* zeroed; NULL when out of memory */
void tx_arena_destroy(tx_arena *a);
/* tx_arena_alloc in a block of its own, which tx_arena_release can free
 * before the rest (a weight nothing reads any more). */
void *tx_arena_alloc_alone(tx_arena *a, size_t n);
/* Frees the block of an allocation tx_arena_alloc_alone made (p its start);
 * nothing for other pointers. */
void tx_arena_release(tx_arena *a, void *p);
/* The bytes the arena's blocks hold (what it takes from malloc). */
size_t tx_arena_bytes(const tx_arena *a);

enum {
    TX_ATTR_FLOAT = 1,
    TX_ATTR_INT = 2,
    TX_ATTR_STRING = 3,
    TX_ATTR_TENSOR = 4,
    TX_ATTR_GRAPH = 5,
    TX_ATTR_FLOATS = 6,
    TX_ATTR_INTS = 7,
    TX_ATTR_STRINGS = 8,
};

typedef struct tx_onnx_attr {
    const char *name;
    int type;
    float f;
    int64_t i;
    const char *s; /* NUL-terminated copy */
    tx_hval *t;
    int n_floats, n_ints;
    float *floats;
    int64_t *ints;
    int n_strings; /* STRINGS: NUL-terminated copies */
    const char **strings;
} tx_onnx_attr;

typedef struct tx_onnx_node {
    const char *name, *op_type, *domain;
    int n_in, n_out, n_attrs;
    const char **in, **out; /* "" = an omitted optional input */
    tx_onnx_attr *attrs;
} tx_onnx_node;

typedef struct tx_onnx_vinfo {
    const char *name;
    int elem;                           /* 0 when the file gives no tensor type */
    int rank;                           /* -1 when unknown */
    int64_t shape[TX_MAX_RANK];         /* -1 for a symbolic/unknown dim */
    const char *dim_param[TX_MAX_RANK]; /* the symbolic dims' names, or NULL */
    bool not_tensor;                    /* sequence, map, optional ... */
} tx_onnx_vinfo;

typedef struct tx_onnx_init {
    const char *name;
    tx_hval v;
} tx_onnx_init;

typedef struct tx_onnx_model {
    tx_arena *arena;
    int64_t ir_version;
    int64_t opset; /* of the default ("" / "ai.onnx") domain */
    int n_nodes, n_inits, n_inputs, n_outputs, n_vinfos;
    tx_onnx_node *nodes;
    tx_onnx_init *inits;
    tx_onnx_vinfo *inputs, *outputs, *vinfos;
} tx_onnx_model;

/* Parses a ModelProto. On failure returns a status and writes a message into
 * err (the model is left empty). The model owns an arena; free with
 * tx_onnx_model_free. */
tx_status tx_onnx_load(const void *bytes, size_t len, tx_onnx_model *m, char *err, size_t err_len);
void tx_onnx_model_free(tx_onnx_model *m);

/* Parses one TensorProto (the conformance runner's input_*.pb / output_*.pb).
 * The tensor's data is malloc'd (free with tx_hval_free); *name gets a
 * malloc'd copy of its name (may be NULL to ignore). */
tx_status tx_onnx_load_tensor(const void *bytes, size_t len, tx_hval *out, char **name, char *err,
                              size_t err_len);

/* ---- host values (hval.c) ---- */

/* Every shape a session holds (declared, initializer, inferred, host value)
 * keeps each dim in 0..TX_DIM_MAX and the product of its non-zero dims at
 * most TX_DIM_MAX, so numel, strides and any sub-product of its dims fit
 * int64 with room to spare. 2^40 elements is far above what a texture or a
 * host buffer holds; it only separates "huge" from "overflowed". */
#define TX_DIM_MAX ((int64_t)1 << 40)
/* Whether shape meets that rule under `limit` (TX_DIM_MAX, or less);
 * unknown dims (-1) pass when allow_unknown. */
bool tx_dims_in_range(int rank, const int64_t *shape, int64_t limit, bool allow_unknown);

void tx_hval_free(tx_hval *v);
/* Allocates data for elem/rank/shape (zeroed). false on overflow or OOM. */
bool tx_hval_alloc(tx_hval *v, int elem, int rank, const int64_t *shape);
bool tx_hval_copy(tx_hval *dst, const tx_hval *src);
double tx_hval_get(const tx_hval *v, int64_t i);
/* Gives a value held as halves (h16) its floats too (malloc'd; h16 stays):
 * false when out of memory. Nothing to do for other values. */
bool tx_hval_widen(tx_hval *v);
/* Whether v's floats are exactly the halves h16 (v->numel of them). */
bool tx_hval_same_halves(const tx_hval *v, const uint16_t *h16);
/* The bytes v's data takes on the host. */
size_t tx_hval_bytes(const tx_hval *v);
/* The engine dtype a value of this element type lives as on the device. */
tx_status tx_hval_device_dtype(int elem, tx_dtype *out);
/* Uploads (int values must fit the float texture exactly: |v| <= 2^24). */
tx_status tx_hval_upload(tx_ctx *ctx, const char *what, const tx_hval *v, tx_tensor *out);
/* Reads a device tensor back into a host value of element type elem. */
tx_status tx_hval_download(tx_ctx *ctx, tx_tensor t, int elem, tx_hval *out);

/* ---- node executors (onnx/) and the session (session.c) ---- */

/* Returned by executor helpers at plan time when a node cannot be folded on
 * the host (it needs the device, or a value that only exists at run time). */
#define TX_STATUS_DEFER ((tx_status)100)

typedef struct tx_session_val tx_session_val;
typedef struct tx_xnode tx_xnode;

/* One node being executed (or folded, or shape-inferred). */
struct tx_xnode {
    struct tx_session *s;
    tx_ctx *ctx;
    const tx_onnx_node *node;
    int64_t opset;
    bool fold; /* plan time: host paths only, inputs are constants */
    int n_in, n_out;
    tx_session_val **in;       /* NULL = an omitted optional input */
    tx_session_val **out;      /* NULL = an omitted optional output */
    tx_op act;                 /* a fused activation to apply (TX_OP_NONE) */
    float act_alpha, act_beta; /* its alpha, beta where it takes them (tx_activation's ops) */
    bool x_affine;             /* Conv: input 0 read as x · x_scale + x_shift (fuse.c) */
    float x_scale, x_shift;    /* its scale and shift */
    bool resid_pad;            /* Conv: input 3 is a residual_pad residual (fuse.c) */
    tx_session_val *bias;      /* a fused bias (MatMul + Add) */
};

/* Executor flags. */
enum {
    TX_OPF_HOST = 1,       /* computes on the host when all inputs are host values */
    TX_OPF_HOST_ONLY = 2,  /* no device path (yet): inputs must be host values */
    TX_OPF_SHAPE_ONLY = 4, /* reads only its input's shape (Shape, Size): output is host */
    TX_OPF_FUSE_ACT = 8,   /* honours x->act (fused activation) */
};

typedef tx_status (*tx_onnx_exec_fn)(tx_xnode *x);

typedef struct tx_onnx_op {
    const char *op_type;
    tx_onnx_exec_fn exec;  /* runs (or folds) the node */
    tx_onnx_exec_fn infer; /* static output shapes/types; NULL: unknown */
    unsigned flags;
    int min_in, max_in; /* input count bounds (max -1: variadic) */
    unsigned host_in;   /* bit i: input i is read on the host (a shape, axes,
                           bounds): constants there are not uploaded */
} tx_onnx_op;

/* The executor for op_type in the default domain, or NULL (onnx/common.c). */
const tx_onnx_op *tx_onnx_op_find(const char *domain, const char *op_type);
/* An ONNX op_type and the engine op it lowers to: one row of a lookup table. */
typedef struct tx_onnx_name_op {
    const char *name;
    tx_op op;
} tx_onnx_name_op;
/* The engine op that op_type names in the n rows of k; TX_OP_NONE if none. */
tx_op tx_onnx_name_to_op(const tx_onnx_name_op *k, size_t n, const char *op_type);

/* -- helpers for executors (session.c) -- */
bool tx_x_has(const tx_xnode *x, int i);
/* Whether input i is (statically at plan time, actually at run time) a host value. */
bool tx_x_is_host(const tx_xnode *x, int i);
bool tx_x_all_host(const tx_xnode *x);
/* ONNX element type of input i (0 unknown). */
int tx_x_elem(const tx_xnode *x, int i);
/* Shape of input i; DEFER at plan time when not statically known. */
tx_status tx_x_shape(tx_xnode *x, int i, int *rank, int64_t shape[TX_MAX_RANK]);
/* Host data of input i (a device value is read back: only for small shape-like
 * inputs such as Reshape's shape fed by the caller). */
tx_status tx_x_host(tx_xnode *x, int i, const tx_hval **out);
/* Device tensor of input i (a host value is uploaded; constants once). */
tx_status tx_x_dev(tx_xnode *x, int i, tx_tensor *out);
/* Sets output i; takes ownership of v's data / of t. */
tx_status tx_x_set_host(tx_xnode *x, int i, tx_hval *v);
/* At plan time (x->fold), output i becomes the constant v itself, which
 * outlives the session's plan (a tensor in the model's arena): no copy.
 * false, with nothing done, outside plan time. */
bool tx_x_set_const_ref(tx_xnode *x, int i, const tx_hval *v);
tx_status tx_x_set_dev(tx_xnode *x, int i, tx_tensor t, int elem);
/* Static (inferred) output info for shape inference. rank -1 = unknown. */
void tx_x_set_info(tx_xnode *x, int i, int elem, int rank, const int64_t *shape);
/* A failure naming the node: "<op_type> node \"<name>\": message". */
tx_status tx_x_fail(tx_xnode *x, tx_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* -- attributes -- */
const tx_onnx_attr *tx_attr_find(const tx_onnx_node *n, const char *name);
int64_t tx_attr_int(const tx_onnx_node *n, const char *name, int64_t def);
float tx_attr_float(const tx_onnx_node *n, const char *name, float def);
/* An ONNX activation with parameters (HardSigmoid, LeakyRelu, Elu, Selu,
 * Celu, ThresholdedRelu, Shrink, Affine): the engine op and its alpha, beta
 * from the attributes or ONNX's defaults (not checked finite); false for
 * any other node. */
bool tx_onnx_act_attrs(const tx_onnx_node *n, tx_op *op, float *alpha, float *beta);
const char *tx_attr_str(const tx_onnx_node *n, const char *name, const char *def);
/* INTS attribute: returns the count (or -1 when absent); *v points into the model. */
int tx_attr_ints(const tx_onnx_node *n, const char *name, const int64_t **v);

/* -- graph passes exposed for tests (graph.c) -- */
/* Folds y = BatchNormalization(Conv(x, W, b)) into Conv(x, W', b'):
 * W'[m] = W[m]·s[m], b'[m] = (b[m] − mean[m])·s[m] + beta[m], s = γ/√(var + ε).
 * W is [M, C/g, k...]; all of W, b (optional), γ, β, mean, var are host values.
 * Returns false on shape mismatch. Results are malloc'd into w_out / b_out. */
bool tx_fold_bn_into_conv(const tx_hval *w, const tx_hval *b, const tx_hval *gamma,
                          const tx_hval *beta, const tx_hval *mean, const tx_hval *var, float eps,
                          tx_hval *w_out, tx_hval *b_out);

#endif
