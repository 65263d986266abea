/* Per-device kernel variant choice by measurement (tune.c). */
#ifndef TX_GPU_TUNE_H
#define TX_GPU_TUNE_H

#include "../internal.h"

/* The remembered variant of `kernel` for size class `cls` on this renderer
 * (0: none remembered). */
int tx_tune_lookup(tx_ctx *ctx, const char *kernel, int cls);
/* Remembers the winner (appends to the device-choices file). */
void tx_tune_store(tx_ctx *ctx, const char *kernel, int cls, int variant, double ms);

#endif
