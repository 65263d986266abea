/* host/ for emscripten: the same tx_host_open as glctx.c, with a WebGL2
 * context on a canvas nobody sees (web/texel_lib.js makes it), so the C test
 * programs run unchanged in a browser. */
#include <emscripten.h>
#include <emscripten/html5.h>
#include <stdio.h>
#include <stdlib.h>

#include "glctx.h"

/* web/texel_lib.js */
extern int txw_js_context_create(void *key);
extern void txw_js_context_destroy(int handle);

struct tx_host {
    int gl;
};

int tx_host_open(const tx_ctx_desc *desc, tx_host **host, tx_ctx **ctx) {
    *host = NULL;
    *ctx = NULL;
    int gl = txw_js_context_create(NULL);
    if (!gl) {
        fprintf(stderr, "texel: this browser gave no WebGL2 context\n");
        return TX_HOST_NO_CONTEXT;
    }
    tx_status s = tx_ctx_create(desc, ctx);
    if (s != TX_STATUS_OK) {
        fprintf(stderr, "texel: tx_ctx_create failed: %s\n", tx_status_name(s));
        txw_js_context_destroy(gl);
        return 1;
    }
    tx_host *h = calloc(1, sizeof *h);
    if (!h) {
        tx_ctx_destroy(*ctx);
        txw_js_context_destroy(gl);
        return 1;
    }
    h->gl = gl;
    *host = h;
    return 0;
}

tx_status tx_host_new_ctx(tx_host *host, const tx_ctx_desc *desc, tx_ctx **ctx) {
    if (!host || !host->gl) { /* a tx_host_later host whose context was not made */
        fprintf(stderr, "texel: tx_host_new_ctx: the host has no GL context yet\n");
        return TX_STATUS_INVALID_ARGUMENT;
    }
    emscripten_webgl_make_context_current(host->gl);
    tx_ctx_desc d = desc ? *desc : (tx_ctx_desc){0};
    return tx_ctx_create(&d, ctx);
}

static bool web_make_gl(void *user, char *why, size_t n) {
    tx_host *h = user;
    h->gl = txw_js_context_create(NULL);
    if (!h->gl)
        snprintf(why, n, "this browser gave no WebGL2 context");
    return h->gl != 0;
}

tx_host *tx_host_later(tx_ctx_desc *desc) {
    tx_host *h = calloc(1, sizeof *h);
    if (h) {
        desc->make_gl = web_make_gl;
        desc->make_gl_user = h;
    }
    return h;
}

void tx_host_close(tx_host *host, tx_ctx *ctx) {
    tx_ctx_destroy(ctx);
    if (host) {
        txw_js_context_destroy(host->gl);
        free(host);
    }
}

double tx_host_ms(void) {
    return emscripten_get_now();
}
