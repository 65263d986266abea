/* Private to engine/model/onnx/: a chain of engine ops whose temporaries are
 * freed together. Each step returns its result ({0} after a failure); the
 * first failure sticks in st and later steps do nothing, so a composition is
 * written as straight-line expressions and checked once at the end. */
#ifndef TX_ONNX_CHAIN_H
#define TX_ONNX_CHAIN_H

#include "common.h"

typedef struct tx_chain {
    tx_xnode *x;
    tx_status st;
    int n;
    tx_tensor t[768];
    int ns; /* scalars made so far, reused by value (one upload each) */
    float sv[64];
    tx_tensor st_[64];
} tx_chain;

/* Records t (made with status st) as a temporary; returns it. */
tx_tensor ch_keep(tx_chain *c, tx_status st, tx_tensor t);
void tx_chain_free(tx_chain *c);
/* A float32 scalar; equal values share one tensor. */
tx_tensor ch_scalar(tx_chain *c, float v);
tx_tensor ch_bin(tx_chain *c, tx_op op, tx_tensor a, tx_tensor b);
tx_tensor ch_bin_s(tx_chain *c, tx_op op, tx_tensor a, float v);
tx_tensor ch_un(tx_chain *c, tx_op op, tx_tensor a);
tx_tensor ch_clip(tx_chain *c, tx_tensor a, float lo, float hi);
tx_tensor ch_where(tx_chain *c, tx_tensor m, tx_tensor a, tx_tensor b);
tx_tensor ch_reshape(tx_chain *c, tx_tensor a, int rank, const int64_t *shape);
tx_tensor ch_transpose(tx_chain *c, tx_tensor a, const int *perm);
tx_tensor ch_to_int(tx_chain *c, tx_tensor a);
/* Gather along axis 0. */
tx_tensor ch_gather_rows(tx_chain *c, tx_tensor rows, tx_tensor ix);

#endif
