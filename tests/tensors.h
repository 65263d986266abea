/* The tests' shorthand for destroying several tensors at once. */
#ifndef TX_TEST_TENSORS_H
#define TX_TEST_TENSORS_H

#include <stddef.h>

#include "texel.h"

static inline void tx_test_destroy_n(tx_ctx *ctx, const tx_tensor *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        tx_tensor_destroy(ctx, t[i]);
}

/* Destroys each tensor given, in order. */
#define TX_DESTROY(ctx, ...)                                                                       \
    tx_test_destroy_n((ctx), (const tx_tensor[]){__VA_ARGS__},                                     \
                      sizeof((const tx_tensor[]){__VA_ARGS__}) / sizeof(tx_tensor))

#endif
