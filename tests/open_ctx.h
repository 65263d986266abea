/* The tests' way to get a context: a host GL context and an engine context on it. */
#ifndef TX_TEST_OPEN_CTX_H
#define TX_TEST_OPEN_CTX_H

#include <stdlib.h>

#include "glctx.h"
#include "harness.h"

static inline tx_ctx *tx_test_open_ctx_(tx_ctx_desc d, tx_host **host, bool say_counts) {
    tx_ctx *ctx = NULL;
    int rc = tx_host_open(&d, host, &ctx);
    if (rc == TX_HOST_NO_CONTEXT) {
        if (say_counts)
            tx_test_finish();
        exit(77);
    }
    if (rc)
        exit(1);
    return ctx;
}

/* Opens a context with desc d (its host in *host). Without a GL context the
 * program exits 77 (meson: skipped); any other failure exits 1. */
static inline tx_ctx *tx_test_open_ctx(tx_ctx_desc d, tx_host **host) {
    return tx_test_open_ctx_(d, host, false);
}

/* tx_test_open_ctx, but the program says its "0 passed, 0 failed" line
 * before it exits 77. */
static inline tx_ctx *tx_test_open_ctx_counted(tx_ctx_desc d, tx_host **host) {
    return tx_test_open_ctx_(d, host, true);
}

/* A test program's start: argv[1], when given, picks the tests whose names
 * hold it; then the context of tx_test_open_ctx. */
static inline tx_ctx *tx_test_start(int argc, char **argv, tx_ctx_desc d, tx_host **host) {
    if (argc > 1)
        tx_t.filter = argv[1];
    return tx_test_open_ctx(d, host);
}

#endif
