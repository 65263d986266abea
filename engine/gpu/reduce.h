/* The GPU's reduction passes (engine/gpu/reduce.c), shared by the REDUCE,
 * SOFTMAX and NORM kernels for their row statistics. */
#ifndef TX_GPU_REDUCE_H
#define TX_GPU_REDUCE_H

#include "../device.h"

/* Runs the passes over x's texture. With final_out, the last pass writes
 * finished values (reduce.glsl's TX_FIN `fin`) into it; otherwise *states gets a
 * pooled texture with one state texel per output (the caller releases it). */
tx_status tx_reduce_run(tx_ctx *ctx, const char *name, const tx_texture *x, const tx_reduce_plan *p,
                        tx_reduce_acc acc, int fin, bool last, const tx_texture *final_out,
                        tx_texture *states);

/* The plan of x viewed as [G, S, B] reducing S (softmax rows, norm groups):
 * the plan tx_reduce_plan_make gives for x's own shape and mask whenever
 * the dims before, in and after the mask are each contiguous runs. */
void tx_reduce_plan_rows(int64_t G, int64_t S, int64_t B, tx_reduce_plan *p);

#endif
