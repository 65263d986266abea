/* What every status a fuzzed call returns must satisfy, for the targets that drive a context. */
#ifndef TX_FUZZ_STATUS_H
#define TX_FUZZ_STATUS_H

#include <stdlib.h>

#include "internal.h"

/* A finding (abort) unless s is a known status, a failure says why in
 * tx_last_error(ctx), and no GL error escaped the call. */
static inline void tx_fuzz_check_status(tx_ctx *ctx, tx_status s) {
    if ((unsigned)s >= TX_STATUS_COUNT_)
        abort();
    if (s != TX_STATUS_OK && tx_last_error(ctx)[0] == 0)
        abort(); /* every failure says why */
    if (tx_gl_error() != 0)
        abort(); /* no GL error escapes a call */
}

#endif
