/* The tests' way to get a context: a host GL context and an engine context on it. */
#ifndef TX_TEST_OPEN_CTX_H
#define TX_TEST_OPEN_CTX_H

#include <stdlib.h>

#include "glctx.h"

/* Opens a context with desc d (its host in *host). Without a GL context the
 * program exits 77 (meson: skipped); any other failure exits 1. */
static inline tx_ctx *tx_test_open_ctx(tx_ctx_desc d, tx_host **host) {
    tx_ctx *ctx = NULL;
    int rc = tx_host_open(&d, host, &ctx);
    if (rc == TX_HOST_NO_CONTEXT)
        exit(77);
    if (rc)
        exit(1);
    return ctx;
}

#endif
