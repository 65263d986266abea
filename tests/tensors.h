/* The tests' shorthands for making a tensor, destroying several at once and
 * checking that a context ends clean. */
#ifndef TX_TEST_TENSORS_H
#define TX_TEST_TENSORS_H

#include <stddef.h>
#include <stdio.h>

#include "harness.h"
#include "texel.h"

static inline void tx_test_destroy_n(tx_ctx *ctx, const tx_tensor *t, size_t n) {
    for (size_t i = 0; i < n; i++)
        tx_tensor_destroy(ctx, t[i]);
}

/* A tensor of the given shape, element type and data; {0} (said on stdout)
 * when the engine refuses it, for tests that go on to check that refusal. */
static inline tx_tensor tx_test_tensor(tx_ctx *ctx, int rank, const int64_t *shape, tx_dtype dtype,
                                       const void *data) {
    tx_tensor_desc d = {.rank = rank, .dtype = dtype, .data = data};
    for (int i = 0; i < rank; i++)
        d.shape[i] = shape[i];
    tx_tensor t = {0};
    if (tx_tensor_create(ctx, &d, &t))
        printf("  create failed: %s\n", tx_last_error(ctx));
    return t;
}

/* Destroys each tensor given, in order. */
#define TX_DESTROY(ctx, ...)                                                                       \
    tx_test_destroy_n((ctx), (const tx_tensor[]){__VA_ARGS__},                                     \
                      sizeof((const tx_tensor[]){__VA_ARGS__}) / sizeof(tx_tensor))

/* How every test context must end: no tensor left alive and no program
 * that failed to compile. */
static inline void tx_test_expect_clean(tx_ctx *ctx) {
    tx_stats st;
    tx_ctx_stats(ctx, &st);
    CHECK(st.live_tensors == 0, "%llu tensors leaked", (unsigned long long)st.live_tensors);
    CHECK(st.compile_failures == 0, "%llu programs failed to compile",
          (unsigned long long)st.compile_failures);
}

#endif
