/* Fuzz target: the public API as a little byte-coded program against one real
 * context (max_texture_size 64, memory_budget 1 MiB, so TOO_LARGE and
 * OUT_OF_MEMORY are reachable). Every entry of texel.h is driven with hostile
 * values: ranks -1..7, dims from a table of overflow edges, unknown op and
 * dtype enums, stale and forged handles, wrong byte counts, and simulated
 * context loss and restore at any point, tensors on either device (so ops
 * meet the CPU kernels and mixed devices). Invariants: no
 * crash or sanitizer report, every status a known one with a message, no GL
 * error escapes, and once the program's tensors are destroyed nothing is
 * live (no leaked texture or slot). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_status.h"
#include "glctx.h"
#include "internal.h"

static tx_ctx *g_ctx;
static tx_host *g_host;
static bool g_trace; /* TEXEL_FUZZ_TRACE=1: print each step */
/* A simulated driver loss (gl.fault_lost) leaves the real context alive, and
 * the engine forgets (never deletes) the objects of a context the driver
 * reports lost: cap restores so the driver's memory stays bounded over a long
 * run. */
#define MAX_RESTORES 200
static int g_restores;
static tx_stats g_st;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    int rc = tx_host_open(&(tx_ctx_desc){.max_texture_size = 64,
                                         .memory_budget = 1u << 20,
                                         .specialize_after = 3,
                                         .max_specialized = 8},
                          &g_host, &g_ctx);
    if (rc == TX_HOST_NO_CONTEXT)
        exit(77);
    if (rc)
        exit(1);
    g_trace = getenv("TEXEL_FUZZ_TRACE") != NULL;
    return 0;
}

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r) {
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint32_t u32(reader *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | u8(r);
    return v;
}

static int64_t dim(reader *r) {
    static const int64_t edge[] = {
        -1, -2,   INT64_MIN, INT64_MAX, INT32_MAX, (int64_t)INT32_MAX + 1, 1LL << 32, 1LL << 62, 65,
        64, 4096, 16384,     16385,     1 << 20};
    uint8_t b = u8(r);
    return b < 240 ? b % 24 : edge[(b - 240) % (sizeof edge / sizeof edge[0])];
}

static float value(reader *r) {
    static const float v[] = {NAN,  INFINITY, -INFINITY, 0.0f, -0.0f, 1e-44f, FLT_MAX, -FLT_MAX,
                              1.0f, -1.0f,    0.5f,      6.0f, 1e30f, -3.0f,  100.0f,  88.0f};
    return v[u8(r) % 16];
}

#define N_HANDLES 16
#define MAX_ELEMS 16384 /* 64 × 64 texels × 4 */
static float g_buf[MAX_ELEMS + 16];

static tx_tensor pick(reader *r, const tx_tensor *h) {
    return h[u8(r) % N_HANDLES];
}

static int64_t numel_of(tx_ctx *ctx, tx_tensor t) {
    int rank = 0;
    int64_t shape[TX_MAX_RANK];
    if (tx_tensor_shape(ctx, t, &rank, shape, NULL))
        return -1;
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    return n;
}

static void check_status(tx_ctx *ctx, tx_status s) {
    tx_fuzz_check_status(ctx, s);
}

/* Keeps an op's output (or destroys it when the table is full). */
static void keep(tx_ctx *ctx, tx_tensor *h, tx_status s, tx_tensor y, reader *r) {
    if (s != TX_STATUS_OK)
        return;
    tx_tensor *slot = &h[u8(r) % N_HANDLES];
    if (slot->id)
        tx_tensor_destroy(ctx, *slot);
    *slot = y;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tx_ctx *ctx = g_ctx;
    reader rd = {data, size}, *r = &rd;
    tx_tensor h[N_HANDLES];
    memset(h, 0, sizeof h);
    for (int step = 0; step < 64 && rd.n; step++) {
        tx_status s = TX_STATUS_OK;
        tx_tensor y = {0};
        uint8_t op_byte = u8(r);
        /* 240..255: context loss commands (below 240 the 12 API commands) */
        int cmd = op_byte < 240 ? op_byte % 12 : 12 + (op_byte - 240) % 4;
        switch (cmd) {
        case 0: { /* create */
            tx_tensor_desc d = {0};
            d.rank = (int)(u8(r) % 9) - 1;
            uint8_t b = u8(r);
            d.dtype = (tx_dtype)((int)(b % 4) - 1);
            /* the high bits pick the device (0 default: the GPU; 3: auto, refused
             * for a tensor), so older seeds keep their meaning */
            d.device = (tx_device)((b / 4) % 4);
            int64_t n = 1;
            bool small = true;
            for (int i = 0; i < TX_MAX_RANK; i++) {
                d.shape[i] = dim(r);
                if (i < d.rank) {
                    small = small && d.shape[i] >= 0 && d.shape[i] <= MAX_ELEMS;
                    n = small ? n * d.shape[i] : 0;
                    small = small && n <= MAX_ELEMS;
                }
            }
            if (small && d.rank >= 0 && (u8(r) & 1)) {
                for (int64_t i = 0; i < n; i++)
                    g_buf[i] = d.dtype == TX_DTYPE_INT32 ? 0.0f : value(r);
                d.data = g_buf; /* int32 reads the zeros as int32 zeros */
            }
            s = tx_tensor_create(ctx, &d, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 1: s = tx_tensor_destroy(ctx, pick(r, h)); break;
        case 2:
        case 3: { /* write / read with a byte count near the right one */
            bool write = cmd == 2;
            tx_tensor t = pick(r, h);
            int64_t n = numel_of(ctx, t);
            size_t exact = n < 0 ? 16 : (size_t)n * 4u;
            size_t bytes;
            switch (u8(r) % 5) {
            case 0: bytes = exact; break;
            case 1: bytes = exact ? exact - 4 : 0; break;
            case 2: bytes = exact + 4; break;
            case 3: bytes = SIZE_MAX; break;
            default: bytes = 0; break;
            }
            /* The caller's side of the contract: the buffer holds `bytes`
             * whenever the engine may touch that many. */
            bool fits = bytes <= sizeof g_buf;
            float *buf = (u8(r) & 7) ? g_buf : NULL;
            if (write)
                s = tx_tensor_write(ctx, t, buf, fits ? bytes : SIZE_MAX);
            else
                s = tx_tensor_read(ctx, t, buf, fits ? bytes : 0);
            break;
        }
        case 4: {
            int rank = (int)(u8(r) % 9) - 1;
            int64_t shape[8];
            for (int i = 0; i < 8; i++)
                shape[i] = u8(r) % 4 == 0 ? -1 : dim(r);
            tx_tensor t = pick(r, h);
            bool null_shape = (u8(r) & 7) == 0;
            s = tx_tensor_reshape(ctx, t, rank, null_shape ? NULL : shape, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        /* Arguments are read one statement at a time: C leaves the order of
         * evaluating call arguments and initializers open, and an input must
         * mean the same under clang (fuzzing) and gcc (corpus replay). */
        case 5: {
            tx_op op = (tx_op)((int)u8(r) - 2);
            tx_tensor x = pick(r, h);
            s = tx_unary(ctx, op, x, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 6: {
            tx_tensor x = pick(r, h);
            float lo = value(r);
            float hi = value(r);
            s = tx_clip(ctx, x, lo, hi, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 7: {
            tx_op op = (tx_op)((int)u8(r) - 2);
            tx_tensor a = pick(r, h);
            tx_tensor b = pick(r, h);
            s = tx_binary(ctx, op, a, b, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 8: {
            uint8_t f = u8(r);
            tx_matmul_desc d = {.transpose_a = f & 1, .transpose_b = (f & 2) != 0};
            if (f & 4)
                d.bias = pick(r, h);
            if (f & 8)
                d.activation = (tx_op)((int)u8(r) - 2);
            tx_tensor a = pick(r, h);
            tx_tensor b = pick(r, h);
            s = tx_matmul(ctx, a, b, (f & 16) ? NULL : &d, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 9: {
            tx_tensor in[4];
            for (int i = 0; i < 4; i++)
                in[i] = pick(r, h);
            tx_op_attrs at = {0};
            at.lo = value(r);
            at.hi = value(r);
            tx_op op = (tx_op)((int)u8(r) - 2);
            int n_in = (int)(u8(r) % 6) - 1;
            bool with_attrs = u8(r) & 1;
            s = tx_op_run(ctx, op, in, n_in, with_attrs ? &at : NULL, &y);
            check_status(ctx, s);
            keep(ctx, h, s, y, r);
            break;
        }
        case 10: {
            int rank;
            int64_t shape[TX_MAX_RANK];
            tx_dtype dt;
            s = tx_tensor_shape(ctx, pick(r, h), &rank, shape, &dt);
            break;
        }
        case 12: /* the driver loses the context, or gives it back */
            if (g_restores < MAX_RESTORES)
                ctx->gl.fault_lost = !ctx->gl.fault_lost;
            break;
        case 13: /* the host reports a loss (if none is latched) and restores */
            if (g_restores < MAX_RESTORES) {
                if (!tx_ctx_is_lost(ctx))
                    tx_ctx_mark_lost(ctx);
                s = tx_ctx_restore(ctx);
                g_restores += s == TX_STATUS_OK;
            }
            break;
        case 14:
            if (tx_ctx_is_lost(ctx)) {
                tx_tensor t = pick(r, h);
                tx_device dev = TX_DEVICE_GPU;
                tx_tensor_device(ctx, t, &dev);
                if (tx_tensor_read(ctx, t, g_buf, sizeof g_buf) == TX_STATUS_OK &&
                    dev == TX_DEVICE_GPU)
                    abort(); /* nothing reads back from a lost context's textures */
            }
            break;
        case 15:
            s = tx_ctx_finish(ctx);
            tx_ctx_trim(ctx);
            break;
        case 11: { /* forge a handle (what it replaces is destroyed: the table
                    * must keep every tensor this input made) */
            tx_tensor *slot = &h[u8(r) % N_HANDLES];
            if (slot->id)
                tx_tensor_destroy(ctx, *slot);
            *slot = (tx_tensor){u32(r)};
            break;
        }
        }
        check_status(ctx, s);
        if (g_trace)
            fprintf(stderr, "step %d: cmd %d -> %s %s (live %llu)\n", step, cmd, tx_status_name(s),
                    s ? tx_last_error(ctx) : "",
                    (unsigned long long)(tx_ctx_stats(ctx, &g_st), g_st.live_tensors));
    }
    /* Polling latches a loss the fault simulates but no call noticed yet. */
    bool lost = tx_ctx_is_lost(ctx);
    ctx->gl.fault_lost = false;
    if (lost) {
        if (tx_ctx_restore(ctx) != TX_STATUS_OK)
            abort(); /* a working context must always be restorable */
        g_restores++;
    }
    for (int i = 0; i < N_HANDLES; i++)
        if (h[i].id)
            tx_tensor_destroy(ctx, h[i]);
    /* Forged handles may have destroyed real ones first; either way every
     * tensor this input made is gone now, and so are their textures. */
    tx_stats st;
    tx_ctx_stats(ctx, &st);
    if (st.live_tensors != 0 || st.live_texture_bytes != 0 || st.live_host_bytes != 0)
        abort();
    tx_gl_error();
    return 0;
}
