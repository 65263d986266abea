/* host/: a hidden GLFW window with an OpenGL ES 3.0 context, handed to the
 * engine. The engine itself never creates windows or contexts. */
#ifndef TX_HOST_GLCTX_H
#define TX_HOST_GLCTX_H

#include <stdio.h>
#include <stdlib.h>

#include "texel.h"

typedef struct tx_host tx_host;

/* Exit code for "no GL context here" (meson treats 77 as skipped). */
#define TX_HOST_NO_CONTEXT 77

/* Opens the window + context and creates the engine context with `desc`
 * (get_proc_address is filled in). Returns 0, TX_HOST_NO_CONTEXT when no
 * display/context is available, or 1 when the engine refused the context. */
int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx);
void tx_host_close(tx_host *host, tx_ctx *ctx);
/* For a context whose GL comes at the first GPU use (tx_ctx_desc.make_gl):
 * fills desc's make_gl, make_gl_user and get_proc_address so that the
 * window and context are made then, on the road tx_host_open would take
 * (GLFW where DISPLAY is set, else EGL; TEXEL_GL picks). Pass the host to
 * tx_host_close with the engine context. NULL: out of memory. */
tx_host *tx_host_later(tx_ctx_desc *desc);
/* tx_host_open with the context made that way: 0, or 1 when the engine
 * refused the desc (a missing display shows only at the first GPU use). */
static inline int tx_host_open_later(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx) {
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    *ctx = NULL;
    *host = tx_host_later(&d);
    tx_status s = *host ? tx_ctx_create(&d, ctx) : TX_STATUS_OUT_OF_MEMORY;
    if (s != TX_STATUS_OK) {
        fprintf(stderr, "texel: tx_ctx_create failed: %s\n", tx_status_name(s));
        free(*host); /* nothing opened yet: the host is its allocation */
        *host = NULL;
        return 1;
    }
    return 0;
}
/* Another engine context on the host's GL context (e.g. a fresh program cache). */
tx_status tx_host_new_ctx(tx_host *host, const tx_ctx_desc *desc, tx_ctx **ctx);

/* Monotonic milliseconds. */
double tx_host_ms(void);

#endif
