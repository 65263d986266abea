/* The session's graph: shared by graph.c (plan-time passes) and session.c
 * (the public API and the run loop). */
#ifndef TX_MODEL_SESSION_H
#define TX_MODEL_SESSION_H

#include "model.h"

enum { TX_VAL_EMPTY, TX_VAL_HOST, TX_VAL_DEVICE };

struct tx_session_val {
    const char *name;
    /* static info (shape inference); rank -1 = unknown, dims -1 = dynamic */
    int elem;
    int rank;
    int64_t shape[TX_MAX_RANK];
    const char *dim_names[TX_MAX_RANK]; /* symbolic dims of inputs, or NULL */
    /* what the file declares (value_info, graph output); decl_rank -1: nothing.
     * Inference must agree with it wherever both know a dim. */
    int decl_rank;
    int64_t decl_shape[TX_MAX_RANK];
    bool is_const; /* initializer, Constant or folded: c holds the data */
    bool c_owned;  /* c's data is malloc'd (folded), not in the model arena */
    tx_hval c;
    /* c.h16 while c holds floats widened from it (tx_val_widen), so that
     * tx_val_narrow can go back to the halves (owned when c_half_owned) */
    uint16_t *c_half;
    bool c_half_owned;
    bool folded_away; /* a constant fusion folded into the op that read it: freed */
    tx_tensor c_dev[TX_DEVICE_COUNT_]; /* the constant on each device, uploaded once */
    bool host_static;                  /* at run time this value is always a host value */
    bool is_input, is_output;
    int producer; /* step index, -1 for inputs/constants */
    int n_uses;
    int last_use; /* last step reading it: the memory plan frees it after */
    /* run time */
    int kind;
    tx_hval h; /* kind HOST, or a DEVICE value read back (h_valid) */
    bool h_valid;
    tx_tensor t;
    bool t_owned; /* false for the caller's feeds */
};

typedef struct tx_step {
    const tx_onnx_node *node;
    const tx_onnx_op *op;
    int n_in, n_out;
    int *in, *out;             /* value indices, -1 = omitted */
    bool dead;                 /* folded into constants or fused into another step */
    tx_op act;                 /* fused activation */
    float act_alpha, act_beta; /* its alpha, beta (tx_activation's ops) */
    bool x_affine;             /* Conv: an Affine before it, fused (tx_conv_desc.x_affine) */
    float x_scale, x_shift;    /* its scale and shift */
    bool resid_pad;            /* Conv: its residual (input 3) was Concat(r, zeros) on
                                  channels: r, with tx_conv_desc.residual_pad */
    int bias;                  /* fused bias value, -1 none */
    int *frees;                /* values whose last use is this step */
    int n_frees;
} tx_step;

struct tx_session {
    tx_ctx *ctx;
    tx_onnx_model m;
    tx_session_val *vals;
    int n_vals, cap_vals;
    int *index; /* name hash → value index, open addressing, -1 empty */
    int index_cap;
    tx_step *steps; /* in topological order */
    int n_steps;
    int *inputs, *outputs; /* value indices of the real graph inputs / outputs */
    int n_inputs, n_outputs;
    bool no_fusion;
    /* float16 weights something was folded into go back to halves
     * (tx_val_narrow's round): the context stores float16 and the session
     * may run on the GPU */
    bool round_halves;
    tx_session_val **io; /* scratch for an xnode's input/output pointers */
    int fused;           /* count of nodes fused away (MatMul+Add+act, BN into Conv) */
    int folded;          /* count of nodes folded into constants at plan time */
    /* device values read back for a host path (tx_x_host): the count and
     * bytes, over every run (NonZero, NonMaxSuppression, Unique, ...) */
    uint64_t readbacks, readback_bytes;
    bool dynamic; /* an input has a dim of unknown size: values get vary masks */
    /* tx_session_profile_enable: per step (steps' order), the time of its
     * runs (the device finished after each) and their draws; NULL: off */
    struct tx_step_prof {
        double ms;
        uint64_t draws, compiles;
        int runs;
        tx_device device;
        int out_rank; /* its first output's shape at the last timed run */
        int64_t out_shape[TX_MAX_RANK];
        double macs; /* its multiply-adds in that run */
    } * prof;
};

/* graph.c */
int tx_graph_find(const struct tx_session *s, const char *name);
/* Builds values, topological steps, folds constants, infers shapes, fuses,
 * computes the memory plan. Fails naming every unsupported op type. */
tx_status tx_graph_plan(struct tx_session *s);
void tx_graph_free(struct tx_session *s);
/* Fills an xnode for step k (its pointer arrays are the session's scratch). */
void tx_graph_xnode(struct tx_session *s, int k, tx_xnode *x);
/* Adds a value (names must be unique); returns its index or -1 (error set). */
int tx_graph_val_add(struct tx_session *s, const char *name);
/* Recounts every value's readers and last reading step (live steps only). */
void tx_graph_count_uses(struct tx_session *s);

/* A constant held as halves (c.h16) as floats for host code to read: c.f
 * malloc'd from them, the halves kept in c_half. false when out of memory. */
bool tx_val_widen(struct tx_session_val *v);
/* Back to the halves where c.f still holds exactly what they widen to
 * (nothing folded into them); otherwise the halves go. A computed constant
 * (owned, TX_HVAL_HALF_MIN values or more) whose values are all halves
 * becomes halves too, and with s->round_halves (the context stores float16)
 * a float16 one in any case, rounded to nearest even as the upload would. */
void tx_val_narrow(struct tx_session *s, struct tx_session_val *v);

/* fuse.c: the fusion passes, run by tx_graph_plan after shape inference. */
/* DequantizeLinear → Conv / MatMul → QuantizeLinear into QLinearConv /
 * QLinearMatMul (fuse_qdq.c; called by tx_graph_fuse). */
tx_status tx_graph_fuse_qdq(struct tx_session *s);
tx_status tx_graph_fuse(struct tx_session *s);

#endif
