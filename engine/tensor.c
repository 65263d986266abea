/* Tensor handles, upload/download, views.
 *
 * A handle is {index + 1 in the low 20 bits, generation in the high 12}. Freed
 * slots are reused first-in first-out, so a stale handle meets a different
 * generation for the next 4095 reuses of its slot rather than the next one. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "device.h"

#define IDX_BITS 20u
#define IDX_MASK ((1u << IDX_BITS) - 1u)
#define GEN_MASK 0xFFFu

static tx_tensor make_handle(uint32_t idx, uint32_t gen) {
    return (tx_tensor){((gen & GEN_MASK) << IDX_BITS) | (idx + 1u)};
}

tx_slot *tx_slot_get(tx_ctx *ctx, tx_tensor t) {
    uint32_t idx = (t.id & IDX_MASK);
    if (idx == 0 || idx > (uint32_t)ctx->n_slots)
        return NULL;
    tx_slot *s = tx_slot_at(ctx, (int)idx - 1);
    if (!s->live || (s->gen & GEN_MASK) != (t.id >> IDX_BITS))
        return NULL;
    return s;
}

/* A live handle, whether or not its contents survived a context loss. */
static tx_status check_handle(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t,
                              tx_slot **out) {
    tx_slot *s = tx_slot_get(ctx, t);
    if (!s)
        return tx_fail(ctx, TX_STATUS_STALE_HANDLE,
                       "%s: %s is not a live tensor (handle 0x%08x: destroyed, never "
                       "created, or from another context)",
                       op, arg, t.id);
    *out = s;
    return TX_STATUS_OK;
}

tx_status tx_check_out_tensor(tx_ctx *ctx, const char *fn, const void *out, const char *arg,
                              tx_tensor t, tx_slot **ts) {
    tx_status st = tx_check_arg(ctx, fn, "out", out != NULL);
    return st ? st : tx_check_tensor(ctx, fn, arg, t, ts);
}

tx_status tx_check_tensor(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t,
                          tx_slot **out) {
    tx_status st = check_handle(ctx, op, arg, t, out);
    if (st)
        return st;
    /* GPU storage from before the last drop of a lost context's objects. */
    if ((*out)->st->dev == TX_DEVICE_GPU && (*out)->st->generation != ctx->generation)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST,
                       "%s: %s (handle 0x%08x) was created before the GL context was lost; "
                       "its contents are gone: destroy it and create it again",
                       op, arg, t.id);
    return TX_STATUS_OK;
}

tx_status tx_check_input(tx_ctx *ctx, const char *op, const char *arg, tx_tensor t, bool float_only,
                         tx_slot **out) {
    tx_status st = tx_check_tensor(ctx, op, arg, t, out);
    if (!st && float_only && (*out)->dtype != TX_DTYPE_FLOAT32)
        st = tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH, "%s: %s must be float32", op, arg);
    return st;
}

tx_status tx_check_inputs(tx_ctx *ctx, const char *op, int n, const char *const *args,
                          const tx_tensor *t, bool float_only, tx_slot **out) {
    tx_status st = TX_STATUS_OK;
    for (int i = 0; i < n && !st; i++)
        st = tx_check_input(ctx, op, args[i], t[i], float_only, &out[i]);
    return st;
}

/* Each context starts its slots' generations somewhere else, so a handle
 * from another context is caught as stale (unless the 12-bit generations
 * happen to collide: 1 in 4095), not taken for one of ours. */
static uint32_t first_gen(const tx_ctx *ctx, uint32_t idx) {
    return (ctx->handle_salt + idx * 7u) % GEN_MASK + 1u;
}

/* Slot idx made live with the given shape (dims past rank zero); the
 * caller fills in the rest. */
void tx_tensor_set_vary(tx_ctx *ctx, tx_tensor t, unsigned mask) {
    tx_slot *s = tx_slot_get(ctx, t);
    if (s)
        s->vary = (uint8_t)(mask & ((1u << s->rank) - 1));
}

static tx_slot *slot_open(tx_ctx *ctx, uint32_t idx, int rank, const int64_t *shape) {
    tx_slot *s = tx_slot_at(ctx, (int)idx);
    s->live = true;
    s->rank = rank;
    s->vary = 0;
    memset(s->shape, 0, sizeof s->shape);
    for (int i = 0; i < rank; i++)
        s->shape[i] = shape[i];
    return s;
}

static tx_status slot_new(tx_ctx *ctx, uint32_t *idx_out) {
    if (ctx->n_free_slots > 0) {
        *idx_out = ctx->free_slots[0];
        memmove(ctx->free_slots, ctx->free_slots + 1,
                (size_t)(ctx->n_free_slots - 1) * sizeof *ctx->free_slots);
        ctx->n_free_slots--;
        return TX_STATUS_OK;
    }
    if ((uint32_t)ctx->n_slots >= IDX_MASK)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tensor: more than %u live tensors",
                       IDX_MASK - 1u);
    if (ctx->n_slots == ctx->cap_slots) { /* one more chunk; the others stay where they are */
        int chunks = ctx->cap_slots / TX_SLOT_CHUNK, cap = ctx->cap_slots + TX_SLOT_CHUNK;
        tx_slot **c = realloc(ctx->slot_chunks, (size_t)(chunks + 1) * sizeof *c);
        if (c)
            ctx->slot_chunks = c;
        uint32_t *f = realloc(ctx->free_slots, (size_t)cap * sizeof *f);
        if (f)
            ctx->free_slots = f;
        tx_slot *chunk = c && f ? calloc(TX_SLOT_CHUNK, sizeof *chunk) : NULL;
        if (!chunk)
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tensor: out of host memory");
        ctx->slot_chunks[chunks] = chunk;
        ctx->cap_slots = cap;
    }
    tx_slot *s = tx_slot_at(ctx, ctx->n_slots);
    memset(s, 0, sizeof *s);
    s->gen = first_gen(ctx, (uint32_t)ctx->n_slots);
    *idx_out = (uint32_t)ctx->n_slots++;
    return TX_STATUS_OK;
}

static void slot_free(tx_ctx *ctx, uint32_t idx) {
    tx_slot *s = tx_slot_at(ctx, (int)idx);
    s->live = false;
    s->gen = (s->gen + 1) & GEN_MASK;
    if (s->gen == 0)
        s->gen = 1;
    ctx->free_slots[ctx->n_free_slots++] = idx;
}

/* ---- split storage (engine/split.h): a GPU tensor larger than one texture
 * as parts, internal tensors holding consecutive ranges of its elements ---- */

static void split_release(tx_ctx *ctx, tx_storage *stg);

/* Makes stg a split GPU storage of numel elements for a tensor of `shape`:
 * whole dim-0 rows per part where a row fits a texture, else whole texels.
 * OUT_OF_MEMORY, before any part is made, where even the split exceeds the
 * memory budget. */
static tx_status split_alloc(tx_ctx *ctx, const char *op, int rank, const int64_t *shape,
                             int64_t numel, tx_dtype dtype, tx_storage *stg) {
    int64_t row = 1, cap = (int64_t)ctx->max_tex * ctx->max_tex * 4;
    for (int d = 1; d < rank; d++)
        row *= shape[d];
    /* whole rows per part where a row fits; else whole texels */
    int64_t per = row > 0 && row <= cap ? cap / row * row : cap;
    int64_t n = (numel + per - 1) / per;
    /* refused before any part is made where even the split cannot fit */
    if ((uint64_t)numel * 4u > (uint64_t)(ctx->budget - ctx->stats.live_texture_bytes))
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                       "%s: %lld elements split across %lld textures would exceed the memory "
                       "budget of %zu bytes (%llu live)",
                       op, (long long)numel, (long long)n, ctx->budget,
                       (unsigned long long)ctx->stats.live_texture_bytes);
    stg->parts = calloc((size_t)n, sizeof *stg->parts);
    if (!stg->parts)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    for (int64_t p = 0; p < n; p++) {
        int64_t cnt = numel - p * per < per ? numel - p * per : per;
        tx_status st = tx_tensor_alloc(ctx, op, TX_DEVICE_GPU, 1, &cnt, dtype, &stg->parts[p]);
        if (st) {
            stg->n_parts = (int)p;
            split_release(ctx, stg);
            return st;
        }
    }
    stg->n_parts = (int)n;
    return TX_STATUS_OK;
}

static void split_release(tx_ctx *ctx, tx_storage *stg) {
    for (int p = 0; p < stg->n_parts; p++)
        tx_tensor_destroy(ctx, stg->parts[p]);
    free(stg->parts);
    stg->parts = NULL;
    stg->n_parts = 0;
}

static tx_status storage_write(tx_ctx *ctx, const char *op, tx_storage *stg, const void *vals,
                               bool half, int64_t numel) {
    if (!stg->n_parts)
        return tx_device_of(stg->dev)->write(ctx, op, stg, vals, half, numel);
    size_t width = half ? sizeof(uint16_t) : sizeof(float);
    int64_t off = 0;
    for (int p = 0; p < stg->n_parts; p++) {
        tx_slot *s = tx_slot_get(ctx, stg->parts[p]);
        const void *part = vals ? (const char *)vals + (size_t)off * width : NULL;
        tx_status st = tx_device_of(s->st->dev)->write(ctx, op, s->st, part, half, s->numel);
        if (st)
            return st;
        off += s->numel;
    }
    return TX_STATUS_OK;
}

tx_status tx_storage_read(tx_ctx *ctx, const char *op, tx_storage *stg, float *vals,
                          int64_t numel) {
    ctx->work_key = 0; /* the queued work is done once this read returns */
    if (!stg->n_parts) {
        tx_status st = tx_gpu_flatten(ctx, op, stg); /* a matmul's row tiles: rows first */
        return st ? st : tx_device_of(stg->dev)->read(ctx, op, stg, vals, numel);
    }
    int64_t off = 0;
    for (int p = 0; p < stg->n_parts && off < numel; p++) {
        tx_slot *s = tx_slot_get(ctx, stg->parts[p]);
        tx_status st = tx_storage_read(ctx, op, s->st, vals + off, s->numel);
        if (st)
            return st;
        off += s->numel;
    }
    return TX_STATUS_OK;
}

static void release_storage(tx_ctx *ctx, tx_storage *stg) {
    if (stg->n_parts)
        split_release(ctx, stg);
    else
        tx_device_of(stg->dev)->release(ctx, stg);
}

/* Validates rank/shape and computes numel, guarding every overflow. */
static tx_status check_shape(tx_ctx *ctx, const char *op, int rank, const int64_t *shape,
                             int64_t *numel) {
    if (rank < 0)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: negative rank %d", op, rank);
    if (rank > TX_MAX_RANK)
        return tx_fail(ctx, TX_STATUS_RANK_TOO_HIGH, "%s: rank %d exceeds the maximum of %d", op,
                       rank, TX_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) {
            char b[160];
            tx_shape_str(b, sizeof b, rank, shape);
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: negative dimension in shape %s",
                           op, b);
        }
        if (shape[i] > 0 && n > INT64_MAX / 16 / shape[i]) {
            char b[160];
            tx_shape_str(b, sizeof b, rank, shape);
            return tx_fail(ctx, TX_STATUS_TOO_LARGE, "%s: shape %s has too many elements", op, b);
        }
        n *= shape[i];
    }
    for (int i = 0; i < rank; i++) {
        if (shape[i] > INT32_MAX) {
            /* Even an empty tensor's dims reach shaders as 32-bit ints. */
            char b[160];
            tx_shape_str(b, sizeof b, rank, shape);
            return tx_fail(ctx, TX_STATUS_TOO_LARGE, "%s: dimension %d of shape %s exceeds %d", op,
                           i, b, INT32_MAX);
        }
    }
    *numel = n;
    return TX_STATUS_OK;
}

/* Slot idx (new) made live over stg (new, its only holder); *out its handle. */
static tx_slot *adopt_storage(tx_ctx *ctx, uint32_t idx, tx_storage *stg, int rank,
                              const int64_t *shape, int64_t numel, tx_dtype dtype, tx_tensor *out) {
    stg->refs = 1;
    stg->numel = numel;
    stg->generation = ctx->generation;
    tx_slot *s = slot_open(ctx, idx, rank, shape);
    s->numel = numel;
    s->dtype = dtype;
    s->st = stg;
    ctx->stats.live_tensors++;
    *out = make_handle(idx, s->gen);
    return s;
}

/* A new tensor; with may_split (caller data: create, tx_tensor_to) a GPU
 * tensor larger than one texture is split across textures (split.h), while
 * an op's output of that size is refused. */
static tx_status make_tensor(tx_ctx *ctx, const char *op, tx_device dev, int rank,
                             const int64_t *shape_in, tx_dtype dtype, bool may_split,
                             tx_tensor *out, tx_slot **slot_out) {
    int64_t numel = 0;
    tx_status st = check_shape(ctx, op, rank, shape_in, &numel);
    if (st)
        return st;
    /* a copy: callers pass another slot's shape, and slot_new (or a split's
     * parts) may move the slot array */
    int64_t shape[TX_MAX_RANK];
    memcpy(shape, shape_in, sizeof(int64_t) * (size_t)rank);
    if ((unsigned)dtype >= TX_DTYPE_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: unknown dtype %d", op, (int)dtype);
    if (dev == TX_DEVICE_DEFAULT)
        dev = ctx->device;
    if (dev != TX_DEVICE_GPU && dev != TX_DEVICE_CPU)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: device %d is not one a tensor can live on (gpu or cpu)", op, (int)dev);
    if (dev == TX_DEVICE_GPU && (st = tx_ctx_need_gl(ctx, op)) != TX_STATUS_OK)
        return st;
    if (dev == TX_DEVICE_GPU && ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    int64_t texels = (numel + 3) / 4;
    /* Shaders index elements with 32-bit ints, and the host copies up to
     * numel × 16 bytes: refuse what either cannot address (on wasm32 size_t
     * is 32 bits), and what one texture of this device cannot hold. The CPU
     * device shares the element limit, so a tensor can always move. */
    int64_t addressable = INT32_MAX;
    if ((uint64_t)(SIZE_MAX / 16u) < (uint64_t)addressable)
        addressable = (int64_t)(SIZE_MAX / 16u);
    bool too_wide = dev == TX_DEVICE_GPU && texels > (int64_t)ctx->max_tex * ctx->max_tex;
    bool split = too_wide && may_split && numel <= addressable;
    if ((too_wide && !split) || numel > addressable) {
        char b[160];
        tx_shape_str(b, sizeof b, rank, shape);
        /* The device limit first: it is the one a caller meets and can act on. */
        if (too_wide)
            return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                           "%s: a tensor of shape %s (%lld elements) needs %lld RGBA texels, "
                           "more than one %d×%d texture holds on this device "
                           "(MAX_TEXTURE_SIZE %d); only tensors made from data and the "
                           "results of gather, matmul, elementwise ops, transpose, concat and "
                           "slice are "
                           "split across textures",
                           op, b, (long long)numel, (long long)texels, ctx->max_tex, ctx->max_tex,
                           ctx->max_tex);
        return tx_fail(ctx, TX_STATUS_TOO_LARGE,
                       "%s: a tensor of shape %s has %lld elements, more than texel can "
                       "address (%lld)",
                       op, b, (long long)numel, (long long)addressable);
    }
    tx_storage *stg = calloc(1, sizeof *stg);
    if (!stg)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    stg->dev = dev;
    st = split ? split_alloc(ctx, op, rank, shape, numel, dtype, stg)
               : tx_device_of(dev)->alloc(ctx, op, numel, stg);
    if (st) {
        free(stg);
        return st;
    }
    uint32_t idx;
    st = slot_new(ctx, &idx);
    if (st) {
        release_storage(ctx, stg);
        free(stg);
        return st;
    }
    tx_slot *s = adopt_storage(ctx, idx, stg, rank, shape, numel, dtype, out);
    if (slot_out)
        *slot_out = s;
    return TX_STATUS_OK;
}

tx_status tx_tensor_alloc(tx_ctx *ctx, const char *op, tx_device dev, int rank,
                          const int64_t *shape, tx_dtype dtype, tx_tensor *out) {
    return make_tensor(ctx, op, dev, rank, shape, dtype, false, out, NULL);
}

tx_status tx_tensor_wrap(tx_ctx *ctx, const char *op, tx_storage *stg, int rank,
                         const int64_t *shape, tx_dtype dtype, tx_tensor *out) {
    int64_t numel = 0;
    tx_status st = check_shape(ctx, op, rank, shape, &numel);
    uint32_t idx;
    if (!st)
        st = slot_new(ctx, &idx);
    if (st) {
        release_storage(ctx, stg);
        free(stg);
        return st;
    }
    adopt_storage(ctx, idx, stg, rank, shape, numel, dtype, out);
    return TX_STATUS_OK;
}

/* Caller values (float32, float16 bit patterns when `half`, or int32
 * converted to the floats storage holds) into s's storage; NULL data writes
 * zeros. */
static tx_status write_values(tx_ctx *ctx, const char *op, tx_slot *s, const void *data,
                              bool half) {
    if (!data || s->dtype == TX_DTYPE_FLOAT32)
        return storage_write(ctx, op, s->st, data, half && data, s->numel);
    float *buf = malloc((size_t)(s->numel ? s->numel : 1) * sizeof(float));
    if (!buf)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    const int32_t *src = data;
    for (int64_t i = 0; i < s->numel; i++)
        buf[i] = (float)src[i];
    tx_status st = storage_write(ctx, op, s->st, buf, false, s->numel);
    free(buf);
    return st;
}

uint32_t tx_half_bits_to_float_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 31) /* inf, NaN (the payload kept) */
        return sign | 0x7f800000u | m << 13;
    if (e)
        return sign | (e + 112u) << 23 | m << 13;
    if (!m)
        return sign;
    float v = (float)m * 0x1p-24f; /* subnormal: exact in float */
    uint32_t u;
    memcpy(&u, &v, 4);
    return sign | u;
}

uint16_t tx_float_to_half_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet, the payload's top bits kept */
        return sign | 0x7e00u | (uint16_t)(a >> 13 & 0x3ffu);
    if (a >= 0x477ff000u) /* rounds past 65504: infinity */
        return sign | 0x7c00u;
    if (a < 0x38800000u) { /* below 2^-14: a subnormal half, rounded to even */
        float m = f < 0 ? -f : f;
        return sign | (uint16_t)lrintf(m * 0x1p24f);
    }
    uint32_t r = a + 0x0fffu + (a >> 13 & 1u); /* to nearest, ties to even */
    return sign | (uint16_t)((r - 0x38000000u) >> 13);
}

void tx_halves_to_floats(const uint16_t *h, float *f, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u = tx_half_bits_to_float_bits(h[i]);
        memcpy(f + i, &u, 4);
    }
}

void tx_floats_to_halves(const float *f, uint16_t *h, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        h[i] = tx_float_to_half_bits(f[i]);
}

tx_status tx_tensor_create(tx_ctx *ctx, const tx_tensor_desc *desc, tx_tensor *out) {
    tx_status st = tx_check_arg(ctx, "tx_tensor_create", "desc", desc != NULL);
    if (!st)
        st = tx_check_arg(ctx, "tx_tensor_create", "out", out != NULL);
    if (st)
        return st;
    if (desc->data_f16 && desc->dtype == TX_DTYPE_INT32)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_tensor_create: desc.data_f16 (half floats) with dtype int32");
    tx_slot *s;
    tx_tensor t;
    st = make_tensor(ctx, "tx_tensor_create", desc->device, desc->rank, desc->shape, desc->dtype,
                     true, &t, &s);
    if (st)
        return st;
    st = write_values(ctx, "tensor upload", s, desc->data, desc->data_f16);
    if (st) {
        tx_tensor_destroy(ctx, t);
        return st;
    }
    *out = t;
    return TX_STATUS_OK;
}

tx_status tx_tensor_destroy(tx_ctx *ctx, tx_tensor t) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_slot *s = NULL;
    tx_status st = check_handle(ctx, "tx_tensor_destroy", "tensor", t, &s);
    if (st)
        return st;
    if (--s->st->refs == 0) {
        /* GPU storage of a lost context owns no texture any more. */
        if (s->st->n_parts) /* the parts' slots know their own generation */
            split_release(ctx, s->st);
        else if (s->st->dev != TX_DEVICE_GPU || s->st->generation == ctx->generation)
            tx_device_of(s->st->dev)->release(ctx, s->st);
        free(s->st);
    }
    s->st = NULL;
    ctx->stats.live_tensors--;
    slot_free(ctx, (t.id & IDX_MASK) - 1u);
    return TX_STATUS_OK;
}

void tx_tensors_release_all(tx_ctx *ctx) {
    for (int i = 0; i < ctx->n_slots; i++) {
        tx_slot *s = tx_slot_at(ctx, i);
        if (!s->live)
            continue;
        tx_tensor_destroy(ctx, make_handle((uint32_t)i, s->gen));
    }
}

/* The checks tx_tensor_write and tx_tensor_read open with: ctx, the tensor,
 * then the host buffer `buf` (named `arg`) not NULL. */
static tx_status io_check(tx_ctx *ctx, const char *fn, tx_tensor t, const char *arg,
                          const void *buf, tx_slot **s) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_status st = tx_check_tensor(ctx, fn, "tensor", t, s);
    if (!st && !buf)
        st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
    return st;
}

tx_status tx_tensor_write(tx_ctx *ctx, tx_tensor t, const void *data, size_t bytes) {
    tx_slot *s;
    tx_status st = io_check(ctx, "tx_tensor_write", t, "data", data, &s);
    if (st)
        return st;
    if (bytes != (size_t)s->numel * 4u)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "tx_tensor_write: %zu bytes given, the tensor holds %lld elements "
                       "(%lld bytes)",
                       bytes, (long long)s->numel, (long long)s->numel * 4);
    if (ctx->lost && s->st->dev == TX_DEVICE_GPU)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_tensor_write: the GL context is lost");
    return write_values(ctx, "tensor upload", s, data, false);
}

/* int32 values live in float texels, where integer division by zero leaves
 * NaN (0/0) or ±Inf: those read back saturated (NaN 0, +Inf INT32_MAX, -Inf
 * INT32_MIN), as does any value past int32's range, instead of a C cast that
 * is undefined for them (found by fuzz_api). */
static int32_t float_to_i32(float v) {
    int64_t i = tx_sat_i64(v);
    return i > INT32_MAX ? INT32_MAX : i < INT32_MIN ? INT32_MIN : (int32_t)i;
}

int64_t tx_sat_i64(double v) {
    if (!(v == v))
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

void tx_texels_to_values(tx_dtype dtype, const float *texels, int64_t numel, void *dst) {
    if (dtype == TX_DTYPE_INT32) {
        int32_t *d = dst;
        for (int64_t i = 0; i < numel; i++)
            d[i] = float_to_i32(texels[i]);
    } else {
        memcpy(dst, texels, (size_t)numel * 4u);
    }
}

tx_status tx_tensor_read(tx_ctx *ctx, tx_tensor t, void *dst, size_t bytes) {
    tx_slot *s;
    tx_status st = io_check(ctx, "tx_tensor_read", t, "dst", dst, &s);
    if (st)
        return st;
    if (bytes < (size_t)s->numel * 4u)
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                       "tx_tensor_read: %zu bytes given, the tensor needs %lld", bytes,
                       (long long)s->numel * 4);
    if (ctx->lost && s->st->dev == TX_DEVICE_GPU)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_tensor_read: the GL context is lost");
    if (s->numel == 0)
        return TX_STATUS_OK;
    if (s->dtype == TX_DTYPE_FLOAT32)
        return tx_storage_read(ctx, "tx_tensor_read", s->st, dst, s->numel);
    float *buf = malloc((size_t)s->numel * sizeof(float));
    if (!buf)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_tensor_read: out of host memory");
    st = tx_storage_read(ctx, "tx_tensor_read", s->st, buf, s->numel);
    if (!st)
        tx_texels_to_values(s->dtype, buf, s->numel, dst);
    free(buf);
    return st;
}

tx_status tx_tensor_to(tx_ctx *ctx, tx_tensor t, tx_device device, tx_tensor *out) {
    const char *op = "tx_tensor_to";
    tx_slot *s;
    tx_status st = tx_check_out_tensor(ctx, op, out, "tensor", t, &s);
    if (st)
        return st;
    if (device == TX_DEVICE_DEFAULT)
        device = ctx->device;
    if (device != TX_DEVICE_GPU && device != TX_DEVICE_CPU)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: device %d is not one a tensor can live on (gpu or cpu)", op,
                       (int)device);
    if (device == TX_DEVICE_GPU && (st = tx_ctx_need_gl(ctx, op)) != TX_STATUS_OK)
        return st;
    if (ctx->lost && (s->st->dev == TX_DEVICE_GPU || device == TX_DEVICE_GPU))
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_tensor y;
    tx_slot *ys;
    st = make_tensor(ctx, op, device, s->rank, s->shape, s->dtype, true, &y, &ys);
    if (st)
        return st;
    s = tx_slot_get(ctx, t);
    float *buf = malloc((size_t)(s->numel ? s->numel : 1) * sizeof(float));
    if (!buf)
        st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    if (!st && s->numel > 0)
        st = tx_storage_read(ctx, op, s->st, buf, s->numel);
    if (!st)
        st = storage_write(ctx, op, ys->st, s->numel > 0 ? buf : NULL, false, s->numel);
    free(buf);
    if (st) {
        tx_tensor_destroy(ctx, y);
        return st;
    }
    *out = y;
    return TX_STATUS_OK;
}

tx_status tx_tensor_device(tx_ctx *ctx, tx_tensor t, tx_device *out) {
    tx_status st = tx_check_arg(ctx, "tx_tensor_device", "out", out != NULL);
    if (st)
        return st;
    tx_slot *s = NULL;
    st = check_handle(ctx, "tx_tensor_device", "tensor", t, &s);
    if (st)
        return st;
    *out = s->st->dev;
    return TX_STATUS_OK;
}

const char *tx_device_name(tx_device device) {
    switch (device) {
    case TX_DEVICE_DEFAULT: return "default";
    case TX_DEVICE_GPU: return "gpu";
    case TX_DEVICE_CPU: return "cpu";
    case TX_DEVICE_AUTO: return "auto";
    default: return "?";
    }
}

tx_device tx_device_from_name(const char *name) {
    for (int d = TX_DEVICE_GPU; name && d < TX_DEVICE_COUNT_; d++)
        if (strcmp(name, tx_device_name((tx_device)d)) == 0)
            return (tx_device)d;
    return TX_DEVICE_COUNT_;
}

tx_status tx_tensor_shape(tx_ctx *ctx, tx_tensor t, int *rank, int64_t shape[TX_MAX_RANK],
                          tx_dtype *dtype) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_slot *s = NULL; /* metadata survives a context loss: callers re-create from it */
    tx_status st = check_handle(ctx, "tx_tensor_shape", "tensor", t, &s);
    if (st)
        return st;
    if (rank)
        *rank = s->rank;
    if (shape)
        memcpy(shape, s->shape, sizeof s->shape);
    if (dtype)
        *dtype = s->dtype;
    return TX_STATUS_OK;
}

static tx_status reshape_view(tx_ctx *ctx, tx_tensor t, int rank, const int64_t *shape,
                              tx_tensor *out) {
    const char *op = "tx_tensor_reshape";
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out || (rank > 0 && !shape))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", op,
                       !out ? "out" : "shape");
    tx_slot *s;
    tx_status st = tx_check_tensor(ctx, op, "tensor", t, &s);
    if (st)
        return st;
    if (ctx->lost && s->st->dev == TX_DEVICE_GPU)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    if (rank < 0 || rank > TX_MAX_RANK)
        return tx_fail(ctx, rank < 0 ? TX_STATUS_INVALID_ARGUMENT : TX_STATUS_RANK_TOO_HIGH,
                       "%s: rank %d is outside 0..%d", op, rank, TX_MAX_RANK);
    int64_t dims[TX_MAX_RANK];
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < rank; i++) {
        dims[i] = shape[i];
        if (dims[i] == -1) {
            if (infer >= 0)
                return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: more than one -1 dimension",
                               op);
            infer = i;
        } else if (dims[i] < 0) {
            return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: negative dimension %lld", op,
                           (long long)dims[i]);
        } else if (dims[i] > INT32_MAX) {
            return tx_fail(ctx, TX_STATUS_TOO_LARGE, "%s: dimension %d (%lld) exceeds %d", op, i,
                           (long long)dims[i], INT32_MAX);
        } else {
            if (dims[i] > 0 && known > INT64_MAX / dims[i]) {
                char b[160];
                tx_shape_str(b, sizeof b, rank, shape);
                return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                               "%s: the element count of shape %s overflows", op, b);
            }
            known *= dims[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || s->numel % known != 0) {
            char a[160];
            tx_shape_str(a, sizeof a, s->rank, s->shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: cannot infer the -1 dimension reshaping %s", op, a);
        }
        dims[infer] = s->numel / known;
        known = s->numel;
    }
    if (known != s->numel) {
        char a[160], b[160];
        tx_shape_str(a, sizeof a, s->rank, s->shape);
        tx_shape_str(b, sizeof b, rank, dims);
        return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH, "%s: %s has %lld elements, %s has %lld", op,
                       a, (long long)s->numel, b, (long long)known);
    }
    uint32_t idx;
    st = slot_new(ctx, &idx);
    if (st)
        return st;
    tx_slot *v = slot_open(ctx, idx, rank, dims);
    v->numel = s->numel;
    v->dtype = s->dtype;
    v->st = s->st;
    v->st->refs++;
    ctx->stats.live_tensors++;
    *out = make_handle(idx, v->gen);
    return TX_STATUS_OK;
}

tx_status tx_tensor_retype(tx_ctx *ctx, tx_tensor t, tx_dtype dtype, tx_tensor *out) {
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_status st = tx_tensor_shape(ctx, t, &rank, shape, NULL);
    if (!st)
        st = reshape_view(ctx, t, rank, shape, out); /* not on a tape: a view */
    tx_slot *s;
    if (!st && !(st = tx_check_tensor(ctx, "tx_tensor_retype", "tensor", *out, &s)))
        s->dtype = dtype;
    return st;
}
tx_status tx_tensor_reshape(tx_ctx *ctx, tx_tensor t, int rank, const int64_t *shape,
                            tx_tensor *out) {
    tx_status st = reshape_view(ctx, t, rank, shape, out);
    if (!st)
        tx_tape_note(ctx, GX_OP_RESHAPE, &t, 1, NULL, NULL, *out, (tx_tensor){0});
    return st;
}

void tx_tensor_swap_storage(tx_ctx *ctx, tx_tensor a, tx_tensor b) {
    tx_slot *sa = tx_slot_get(ctx, a), *sb = tx_slot_get(ctx, b);
    TX_ASSERT(sa && sb && sa->numel == sb->numel);
    tx_storage *t = sa->st;
    sa->st = sb->st;
    sb->st = t;
}
