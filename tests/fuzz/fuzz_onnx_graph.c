/* Fuzz target: graph construction, everything tx_session_create does before
 * the first draw: loading, value table, topological order, support check,
 * constant folding, shape inference, fusion, memory plan, weight upload.
 * fuzz_onnx_run.c builds this file with FUZZ_ONNX_RUN, which also runs the
 * session once (feeds of the declared shapes, dynamic dims 1 for the batch
 * and 16 elsewhere) when the inputs are small.
 *
 * One real context (256 MiB budget, never specializing: runs compile one
 * program per op signature and no more). Invariants: no crash or sanitizer
 * report, a known status, a message on every failure, no GL error escapes,
 * infos consistent with the counts, and once the session and the fetched
 * outputs are destroyed nothing is live. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_status.h"
#include "glctx.h"
#include "internal.h"

static tx_ctx *g_ctx;
static tx_host *g_host;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    int rc = tx_host_open(
        &(tx_ctx_desc){.memory_budget = 256u << 20, .specialize_after = TX_SPECIALIZE_NEVER},
        &g_host, &g_ctx);
    if (rc == TX_HOST_NO_CONTEXT)
        exit(77);
    return rc ? 1 : 0;
}

static void check_status(tx_status st) {
    tx_fuzz_check_status(g_ctx, st);
}

static void check_info(const tx_value_info *v) {
    if (!v->name || v->rank < -1 || v->rank > TX_MAX_RANK)
        abort();
    for (int d = 0; d < v->rank; d++)
        if (v->shape[d] < -1)
            abort();
    if (v->dtype != TX_DTYPE_FLOAT32 && v->dtype != TX_DTYPE_INT32)
        abort();
}

#ifdef FUZZ_ONNX_RUN
#define MAX_FEED_ELEMS (1 << 16)
#define MAX_IO         16

/* Runs the session once with every input fed (declared shape, values
 * i % 7 - 3), fetching every output. */
static void run_once(tx_session *s) {
    int n_in = tx_session_input_count(s), n_out = tx_session_output_count(s);
    if (n_in > MAX_IO || n_out > MAX_IO || n_out < 1)
        return;
    static float buf[MAX_FEED_ELEMS];
    tx_feed feeds[MAX_IO];
    const char *fetch[MAX_IO];
    tx_tensor outs[MAX_IO];
    int64_t total = 0;
    int made = 0;
    bool ok = true;
    for (int i = 0; i < n_in && ok; i++) {
        tx_value_info v;
        check_status(tx_session_input_info(s, i, &v));
        tx_tensor_desc d = {.rank = v.rank < 0 ? 1 : v.rank, .dtype = v.dtype, .data = buf};
        int64_t n = 1;
        for (int k = 0; k < d.rank; k++) {
            /* a dynamic batch is 1, other dynamic dims 16 (a 3x3 window fits) */
            d.shape[k] = v.rank >= 0 && v.shape[k] >= 0 ? v.shape[k] : k == 0 ? 1 : 16;
            n *= d.shape[k];
            if (n > MAX_FEED_ELEMS)
                break;
        }
        total += n;
        if (n > MAX_FEED_ELEMS || total > MAX_FEED_ELEMS) {
            ok = false;
            break;
        }
        for (int64_t k = 0; k < n; k++) {
            int x = (int)(k % 7) - 3;
            if (v.dtype == TX_DTYPE_INT32)
                memcpy(&buf[k], &x, sizeof x);
            else
                buf[k] = (float)x;
        }
        tx_status st = tx_tensor_create(g_ctx, &d, &feeds[i].tensor);
        check_status(st);
        if (st) {
            ok = false;
            break;
        }
        feeds[i].name = v.name;
        made++;
    }
    for (int i = 0; i < n_out && ok; i++) {
        tx_value_info v;
        check_status(tx_session_output_info(s, i, &v));
        fetch[i] = v.name;
    }
    if (ok) {
        tx_status st = tx_session_run(s, feeds, n_in, fetch, n_out, outs);
        check_status(st);
        if (st == TX_STATUS_OK)
            for (int i = 0; i < n_out; i++)
                check_status(tx_tensor_destroy(g_ctx, outs[i]));
    }
    for (int i = 0; i < made; i++)
        check_status(tx_tensor_destroy(g_ctx, feeds[i].tensor));
}
#endif

/* Loads (and with FUZZ_ONNX_RUN runs) the model as a session on `dev`. */
static void one_session(const uint8_t *data, size_t size, tx_device dev) {
    tx_stats before, after;
    tx_ctx_stats(g_ctx, &before);
    tx_session *s = NULL;
    tx_status st = tx_session_create(g_ctx, data, size,
                                     &(tx_session_desc){.device = dev, .choice_cache = ""}, &s);
    check_status(st);
    if (st != TX_STATUS_OK) {
        if (s)
            abort(); /* a failed create hands out nothing */
    } else {
        int n_in = tx_session_input_count(s), n_out = tx_session_output_count(s);
        if (n_in < 0 || n_out < 0)
            abort();
        tx_value_info v;
        for (int i = 0; i < n_in; i++) {
            check_status(tx_session_input_info(s, i, &v));
            check_info(&v);
        }
        for (int i = 0; i < n_out; i++) {
            check_status(tx_session_output_info(s, i, &v));
            check_info(&v);
        }
        if (tx_session_input_info(s, n_in, &v) != TX_STATUS_INVALID_ARGUMENT ||
            tx_session_output_info(s, -1, &v) != TX_STATUS_INVALID_ARGUMENT)
            abort();
        tx_session_stats ss;
        check_status(tx_session_stats_get(s, &ss));
#ifdef FUZZ_ONNX_RUN
        run_once(s);
#endif
        tx_session_destroy(s);
    }
    tx_ctx_stats(g_ctx, &after);
    if (after.live_tensors != before.live_tensors ||
        after.live_texture_bytes != before.live_texture_bytes ||
        after.live_host_bytes != before.live_host_bytes)
        abort(); /* the session left tensors behind */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    one_session(data, size, TX_DEVICE_GPU);
#ifdef FUZZ_ONNX_RUN
    /* the executors' run-time checks reach the CPU kernels too */
    one_session(data, size, TX_DEVICE_CPU);
#endif
    return 0;
}
