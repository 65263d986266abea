/* Latching context loss, and the status after a driver failure (the design is in context.c). */
#include "internal.h"

void tx_ctx_set_lost(tx_ctx *ctx) {
    if (!ctx->lost)
        ctx->stats.context_losses++;
    ctx->lost = true;
    if (tx_gl_context_lost(&ctx->gl))
        ctx->gl.lost = true;
}

tx_status tx_gl_failure(tx_ctx *ctx, tx_status otherwise, const char *op, const char *what) {
    if (ctx->lost || tx_gl_context_lost(&ctx->gl)) {
        tx_ctx_set_lost(ctx);
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context was lost (%s)", op, what);
    }
    unsigned e = tx_gl_taken_error(&ctx->gl);
    if (ctx->gl.defer_errors) {
        /* named here: an error a draw or a texture left surfaces at a read,
         * whose own message says nothing of it (a refused texture is
         * GL_OUT_OF_MEMORY: the status says so) */
        if (e && tx_gl_error_is_oom(e) && otherwise == TX_STATUS_GL_ERROR)
            otherwise = TX_STATUS_OUT_OF_MEMORY;
        return tx_fail(ctx, otherwise,
                       "%s: the driver failed %s (%s; with deferred GL error checks the error "
                       "may come from an earlier op or texture)",
                       op, what, e ? tx_gl_error_name(e) : "no GL error reported");
    }
    return tx_fail(ctx, otherwise, "%s: the driver failed %s", op, what);
}

bool tx_ctx_is_lost(tx_ctx *ctx) {
    if (!ctx)
        return true;
    if (ctx->gl_pending) /* no GL context yet, none to lose */
        return false;
    if (!ctx->lost && tx_gl_context_lost(&ctx->gl))
        tx_ctx_set_lost(ctx);
    return ctx->lost;
}
