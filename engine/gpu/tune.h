/* Per-device kernel variant choice by measurement (tune.c). */
#ifndef TX_GPU_TUNE_H
#define TX_GPU_TUNE_H

#include "../internal.h"

/* The remembered variant of `kernel` for size class `cls` on this renderer
 * (0: none remembered). */
int tx_tune_lookup(tx_ctx *ctx, const char *kernel, int cls);
/* Remembers the winner (appends to the device-choices file). */
void tx_tune_store(tx_ctx *ctx, const char *kernel, int cls, int variant, double ms);

/* One kernel call with a given variant. */
typedef tx_status (*tx_tune_fn)(tx_ctx *ctx, const void *call, int variant);
/* Runs call with kernel's variant for the size class of `work` (e.g. its
 * multiply-adds): the one given (tx_ctx_set_kernel_choice), remembered or
 * measured before if it is among cand; else, with TEXEL_TUNE, each of cand
 * once to compile and once timed, keeping and remembering the fastest (the
 * last run's output stands: every variant writes the whole result); else
 * dflt. */
tx_status tx_tune_run(tx_ctx *ctx, const char *kernel, double work, const int *cand, int n,
                      int dflt, tx_tune_fn run, const void *call);

#endif
