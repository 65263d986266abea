/* host/: a hidden GLFW window with an OpenGL ES 3.0 context, handed to the
 * engine. The engine itself never creates windows or contexts. */
#ifndef TX_HOST_GLCTX_H
#define TX_HOST_GLCTX_H

#include "texel.h"

typedef struct tx_host tx_host;

/* Exit code for "no GL context here" (meson treats 77 as skipped). */
#define TX_HOST_NO_CONTEXT 77

/* Opens the window + context and creates the engine context with `desc`
 * (get_proc_address is filled in). Returns 0, TX_HOST_NO_CONTEXT when no
 * display/context is available, or 1 when the engine refused the context. */
int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx);
void tx_host_close(tx_host *host, tx_ctx *ctx);
/* Another engine context on the host's GL context (e.g. a fresh program cache). */
tx_status tx_host_new_ctx(tx_host *host, const tx_ctx_desc *desc, tx_ctx **ctx);

/* Monotonic milliseconds. */
double tx_host_ms(void);

#endif
