/* The GPU device: tensors in pooled RGBA float textures, kernels drawn from
 * generated GLSL (engine/gpu/<family>.c). */
#include <string.h>

#include "../device.h"

static tx_status gpu_alloc(tx_ctx *ctx, const char *op, int64_t numel, tx_storage *st) {
    int64_t texels = (numel + 3) / 4;
    if (texels < 1)
        texels = 1; /* empty tensors still own a texture: every handle is drawable */
    return tx_pool_acquire(ctx, op, texels, &st->tex);
}

static void gpu_release(tx_ctx *ctx, tx_storage *st) {
    tx_pool_release(ctx, &st->tex);
    if (st->packed.gl)
        tx_pool_release(ctx, &st->packed);
}

static tx_status gpu_write(tx_ctx *ctx, const char *op, tx_storage *st, const void *vals, bool half,
                           int64_t numel) {
    tx_status s = tx_gpu_flat_output(ctx, op, st);
    if (s)
        return s;
    int64_t used = (numel + 3) / 4;
    if (used < 1)
        used = 1;
    st->version++; /* what was derived from the old contents is stale */
    /* An RGBA16F texture gets halves: the caller's as they are, floats
     * rounded here to nearest even (drivers differ: Mesa truncates), half
     * the bytes of a float upload either way. Float32 storage gets floats,
     * halves widened. Values that fill whole texels go to GL as they are; a
     * ragged last texel, a conversion or no data (zeros) need a staging copy. */
    bool as_half = ctx->gl.half_storage;
    size_t width = as_half ? sizeof(uint16_t) : sizeof(float);
    bool direct = vals && numel == used * 4 && half == as_half;
    void *buf = direct ? NULL : calloc((size_t)used * 4, width);
    if (!direct && !buf)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tensor: out of host memory for upload");
    if (vals && !direct) {
        if (half && !as_half)
            tx_halves_to_floats(vals, buf, numel);
        else if (!half && as_half)
            tx_floats_to_halves(vals, buf, numel);
        else
            memcpy(buf, vals, (size_t)numel * width);
    }
    tx_gl_tex_upload(&ctx->gl, st->tex.gl, st->tex.w, (int)used, direct ? vals : buf, as_half);
    free(buf);
    ctx->stats.bytes_uploaded += (uint64_t)used * 4u * width;
    unsigned e = tx_gl_op_error(&ctx->gl);
    if (e) {
        char what[64];
        snprintf(what, sizeof what, "uploading (%s)", tx_gl_error_name(e));
        return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, "tensor upload", what);
    }
    return TX_STATUS_OK;
}

static tx_status gpu_read(tx_ctx *ctx, const char *op, const tx_storage *st, float *vals,
                          int64_t numel) {
    int64_t texels = (numel + 3) / 4;
    float *buf = malloc((size_t)texels * 16u);
    if (!buf)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    bool ok = tx_gl_tex_read(&ctx->gl, st->tex.gl, st->tex.w, (int)texels, buf);
    /* Reads are where results reach the caller: a context lost since the
     * last error check (WebGL reports it by getError only once) must not
     * hand back garbage, so ask the driver each time. */
    if (!ok || tx_gl_context_lost(&ctx->gl)) {
        free(buf);
        return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, op, "reading back");
    }
    memcpy(vals, buf, (size_t)numel * sizeof(float));
    free(buf);
    ctx->stats.bytes_downloaded += (uint64_t)texels * 16u;
    return TX_STATUS_OK;
}

tx_status tx_gpu_wait(tx_ctx *ctx, tx_tensor t) {
    tx_slot *s;
    tx_status st = tx_check_tensor(ctx, "tx_gpu_wait", "t", t, &s);
    if (st)
        return st;
    if (s->st->dev != TX_DEVICE_GPU)
        return TX_STATUS_OK;
    if (s->st->n_parts) /* split (engine/split.h): its last part is written last */
        return tx_gpu_wait(ctx, s->st->parts[s->st->n_parts - 1]);
    /* texel 0 (of layer 0 where t is a matmul's row tiles, tx_phases: the
     * draw wrote every layer) */
    float texel[4];
    if (!tx_gl_tex_read(&ctx->gl, s->st->tex.gl, s->st->tex.w, 1, texel) ||
        tx_gl_context_lost(&ctx->gl))
        return tx_gl_failure(ctx, TX_STATUS_GL_ERROR, "tx_gpu_wait", "reading a texel");
    ctx->stats.bytes_downloaded += 16u;
    return TX_STATUS_OK;
}

tx_status tx_gpu_run(tx_ctx *ctx, const char *op, const tx_program_req *req,
                     const tx_texture *const *ins, int n_in, const tx_texture *const *outs,
                     int n_out) {
    if (ctx->compile_only)
        return tx_cache_warm(ctx, op, req);
    for (int i = 0; i < n_in; i++) /* the program declares the sampler type it binds */
        TX_ASSERT(!(ins[i]->gl & TX_GL_ARRAY) == !((req->array_inputs >> i) & 1));
    tx_status st = tx_cache_bind(ctx, op, req, (double)outs[0]->w * outs[0]->h * n_out);
    return st ? st : tx_draw(ctx, op, ins, n_in, outs, n_out);
}

tx_status tx_gpu_unary(tx_ctx *ctx, const tx_unary_call *c);
tx_status tx_gpu_binary(tx_ctx *ctx, const tx_binary_call *c);
tx_status tx_gpu_reduce(tx_ctx *ctx, const tx_reduce_call *c);
tx_status tx_gpu_softmax(tx_ctx *ctx, const tx_softmax_call *c);
tx_status tx_gpu_norm(tx_ctx *ctx, const tx_norm_call *c);
tx_status tx_gpu_matmul(tx_ctx *ctx, const tx_matmul_call *c);
tx_status tx_gpu_conv(tx_ctx *ctx, const tx_conv_call *c);
tx_status tx_gpu_pool(tx_ctx *ctx, const tx_pool_call *c);
tx_status tx_gpu_nary(tx_ctx *ctx, const tx_nary_call *c);
tx_status tx_gpu_optim(tx_ctx *ctx, const tx_optim_call *c);
tx_status tx_gpu_move(tx_ctx *ctx, const tx_move_call *c);
tx_status tx_gpu_resize(tx_ctx *ctx, const tx_resize_call *c);

const tx_device_i tx_gpu_device = {
    .name = "gpu",
    .alloc = gpu_alloc,
    .release = gpu_release,
    .write = gpu_write,
    .read = gpu_read,
    .unary = tx_gpu_unary,
    .binary = tx_gpu_binary,
    .reduce = tx_gpu_reduce,
    .softmax = tx_gpu_softmax,
    .norm = tx_gpu_norm,
    .matmul = tx_gpu_matmul,
    .conv = tx_gpu_conv,
    .pool = tx_gpu_pool,
    .nary = tx_gpu_nary,
    .optim = tx_gpu_optim,
    .move = tx_gpu_move,
    .resize = tx_gpu_resize,
};
