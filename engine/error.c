/* Status and error reporting: status names, the last error, shapes in messages. */
#include <string.h>

#include "internal.h"

#define NAME(s) [s] = #s
static const char *const k_status_names[TX_STATUS_COUNT_] = {
    NAME(TX_STATUS_OK),
    NAME(TX_STATUS_INVALID_ARGUMENT),
    NAME(TX_STATUS_SHAPE_MISMATCH),
    NAME(TX_STATUS_RANK_TOO_HIGH),
    NAME(TX_STATUS_DTYPE_MISMATCH),
    NAME(TX_STATUS_STALE_HANDLE),
    NAME(TX_STATUS_TOO_LARGE),
    NAME(TX_STATUS_OUT_OF_MEMORY),
    NAME(TX_STATUS_UNSUPPORTED),
    NAME(TX_STATUS_GL_ERROR),
    NAME(TX_STATUS_CONTEXT_LOST),
    NAME(TX_STATUS_DEVICE_MISMATCH),
};
#undef NAME

const char *tx_status_name(tx_status s) {
    if ((unsigned)s >= TX_STATUS_COUNT_)
        return "TX_STATUS_?";
    return k_status_names[s];
}

tx_status tx_fail(tx_ctx *ctx, tx_status s, const char *fmt, ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
        va_end(ap);
        /* A context made without GL is lost from birth (context.c): its
         * refusals name that instead, keeping the op name before the ':'. */
        if (s == TX_STATUS_CONTEXT_LOST && ctx->no_gpu) {
            const char *colon = strchr(ctx->err, ':');
            int op_len = colon && colon - ctx->err < 96 ? (int)(colon - ctx->err) : 0;
            char op[96];
            snprintf(op, sizeof op, "%.*s", op_len, ctx->err);
            if (ctx->no_gpu_why[0]) /* tx_ctx_desc.make_gl failed (context.c) */
                snprintf(ctx->err, sizeof ctx->err,
                         "%s%sno GPU context (%s): only the CPU device works here", op,
                         op_len ? ": " : "", ctx->no_gpu_why);
            else
                snprintf(ctx->err, sizeof ctx->err,
                         "%s%sno GPU context (this context was made without GL, "
                         "tx_ctx_desc.no_gpu): only the CPU device works here",
                         op, op_len ? ": " : "");
            return TX_STATUS_UNSUPPORTED;
        }
        /* A path that reached GPU work without tx_ctx_need_gl (a bug): it
         * must not read as a loss the caller should restore. */
        if (s == TX_STATUS_CONTEXT_LOST && ctx->gl_pending && n >= 0 && (size_t)n < sizeof ctx->err)
            snprintf(ctx->err + n, sizeof ctx->err - (size_t)n,
                     " (the GL context is not made yet: tx_ctx_start_gl makes it)");
        /* Say once, for every op's message, what gets the caller out. */
        else if (s == TX_STATUS_CONTEXT_LOST && ctx->lost && n >= 0 && (size_t)n < sizeof ctx->err)
            snprintf(ctx->err + n, sizeof ctx->err - (size_t)n,
                     " (every call fails until tx_ctx_restore)");
    }
    return s;
}

tx_status tx_check_arg(tx_ctx *ctx, const char *fn, const char *arg, bool given) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!given)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
    return TX_STATUS_OK;
}

void tx_shape_str(char *buf, size_t n, int rank, const int64_t *shape) {
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

const char *tx_last_error(const tx_ctx *ctx) {
    if (!ctx)
        return "no context";
    return ctx->err;
}
