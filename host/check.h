/* Runs one op on the GPU and through the plain-C reference on the same seeded
 * random inputs and compares. Shared by `texel op`, the tests and bench. */
#ifndef TX_HOST_CHECK_H
#define TX_HOST_CHECK_H

#include "ref/ref.h"
#include "texel.h"

#define TX_CHECK_MAX_INPUTS 8

typedef struct tx_check_desc {
    tx_op op;
    int n_inputs; /* matmul, conv: 2, 3 with bias, 4 with a residual; variadic
                     ops: any */
    int rank[TX_CHECK_MAX_INPUTS];
    int64_t shape[TX_CHECK_MAX_INPUTS][TX_MAX_RANK];
    tx_dtype dtype[TX_CHECK_MAX_INPUTS]; /* int32: whole values from the input's range
                                            (tx_ref_input_dtype may ask for int32 too) */
    tx_op_attrs attrs;
    uint64_t seed;
    int repeat;          /* timed calls after the first; 0 = none */
    bool skip_reference; /* timing only */
} tx_check_desc;

typedef struct tx_check_result {
    tx_status status;   /* of the GPU run */
    char error[1024];   /* tx_last_error when status != OK */
    int n_outputs;      /* tx_op_outputs(op, attrs): split has several */
    int out_rank;       /* of the first output */
    tx_dtype out_dtype; /* of the first output */
    int64_t out_shape[TX_MAX_RANK];
    int64_t numel; /* all outputs together */
    double max_abs_err;
    int64_t bad; /* elements outside tolerance (NaN/Inf mismatch included) */
    int64_t first_bad;
    float first_bad_got, first_bad_want;
    double first_ms; /* first call: compile + run + download */
    double *call_ms; /* repeat entries, each run + download; caller frees */
    double flops;    /* per call (matmul) */
} tx_check_result;

/* Parses "2x3x4" into a shape; returns the rank or -1. */
int tx_parse_shape(const char *s, int64_t shape[TX_MAX_RANK]);
void tx_check_run(tx_ctx *ctx, const tx_check_desc *d, tx_check_result *r);
double tx_median(const double *v, int n);

#endif
