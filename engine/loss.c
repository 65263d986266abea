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
    if (ctx->gl.defer_errors)
        return tx_fail(ctx, otherwise,
                       "%s: the driver failed %s (with deferred GL error checks the error may "
                       "come from an earlier op)",
                       op, what);
    return tx_fail(ctx, otherwise, "%s: the driver failed %s", op, what);
}

bool tx_ctx_is_lost(tx_ctx *ctx) {
    if (!ctx)
        return true;
    if (!ctx->lost && tx_gl_context_lost(&ctx->gl))
        tx_ctx_set_lost(ctx);
    return ctx->lost;
}
