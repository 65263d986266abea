/* Fuzz target: the ONNX loader (engine/model/pb.c + onnx_load.c), no GL.
 * Each input goes through tx_onnx_load as a ModelProto and through
 * tx_onnx_load_tensor as a TensorProto (the conformance runner's .pb files).
 * Invariants: no crash or sanitizer report, a known status, a message on
 * every failure, and on success a model whose every count, string, array and
 * tensor payload is what its fields say: the walk below reads all of it, so
 * ASan catches a payload shorter than its shape. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "model/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

static volatile uint64_t g_sink; /* keeps the reads below from being dropped */

static void check_status(tx_status st, const char *err) {
    if ((unsigned)st >= TX_STATUS_COUNT_)
        abort();
    if (st != TX_STATUS_OK && err[0] == 0)
        abort(); /* every failure says why */
}

static void touch_str(const char *s) {
    if (!s)
        abort();
    g_sink += strlen(s);
}

static void check_hval(const tx_hval *v) {
    if (v->rank < 0 || v->rank > TX_MAX_RANK)
        abort();
    int64_t n = 1;
    for (int d = 0; d < v->rank; d++) {
        if (v->shape[d] < 0)
            abort();
        n *= v->shape[d];
    }
    if (n != v->numel)
        abort();
    if (n > 0 && (!!v->f + !!v->i + !!v->h16) != 1)
        abort(); /* exactly one of f / i / h16 holds the data */
    uint64_t acc = 0;
    for (int64_t k = 0; k < n; k++)
        acc += v->f     ? (uint64_t)(v->f[k] == v->f[k])
               : v->h16 ? (uint64_t)v->h16[k]
                        : (uint64_t)v->i[k];
    g_sink += acc;
}

static void check_vinfo(const tx_onnx_vinfo *v) {
    touch_str(v->name);
    if (v->rank < -1 || v->rank > TX_MAX_RANK)
        abort();
    for (int d = 0; d < v->rank; d++) {
        if (v->shape[d] < -1)
            abort();
        if (v->dim_param[d])
            touch_str(v->dim_param[d]);
    }
}

static void check_node(const tx_onnx_node *n) {
    touch_str(n->name);
    touch_str(n->op_type);
    touch_str(n->domain);
    if (n->n_in < 0 || n->n_out < 0 || n->n_attrs < 0)
        abort();
    for (int i = 0; i < n->n_in; i++)
        touch_str(n->in[i]);
    for (int i = 0; i < n->n_out; i++)
        touch_str(n->out[i]);
    for (int i = 0; i < n->n_attrs; i++) {
        const tx_onnx_attr *a = &n->attrs[i];
        touch_str(a->name);
        if (a->n_floats < 0 || a->n_ints < 0)
            abort();
        for (int k = 0; k < a->n_floats; k++)
            g_sink += a->floats[k] == a->floats[k];
        for (int k = 0; k < a->n_ints; k++)
            g_sink += (uint64_t)a->ints[k];
        if (a->s)
            touch_str(a->s);
        if (a->type == TX_ATTR_TENSOR && !a->t)
            abort();
        if (a->t)
            check_hval(a->t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[512];
    tx_onnx_model m;
    tx_status st = tx_onnx_load(data, size, &m, err, sizeof err);
    check_status(st, err);
    if (st == TX_STATUS_OK) {
        if (m.n_nodes < 0 || m.n_inits < 0 || m.n_inputs < 0 || m.n_outputs < 0 || m.n_vinfos < 0 ||
            m.opset < 0)
            abort();
        for (int i = 0; i < m.n_nodes; i++)
            check_node(&m.nodes[i]);
        for (int i = 0; i < m.n_inits; i++) {
            touch_str(m.inits[i].name);
            check_hval(&m.inits[i].v);
        }
        for (int i = 0; i < m.n_inputs; i++)
            check_vinfo(&m.inputs[i]);
        for (int i = 0; i < m.n_outputs; i++)
            check_vinfo(&m.outputs[i]);
        for (int i = 0; i < m.n_vinfos; i++)
            check_vinfo(&m.vinfos[i]);
        tx_onnx_model_free(&m);
    } else if (m.arena || m.nodes || m.n_nodes) {
        abort(); /* a failed load leaves the model empty */
    }

    tx_hval v;
    char *name = NULL;
    st = tx_onnx_load_tensor(data, size, &v, &name, err, sizeof err);
    check_status(st, err);
    if (st == TX_STATUS_OK) {
        check_hval(&v);
        touch_str(name);
        tx_hval_free(&v);
        free(name);
    } else if (name || v.f || v.i) {
        abort();
    }
    return 0;
}
