/* The public tx_session_* API, the run loop, and the helpers node executors
 * use to reach their inputs and outputs. */
#include <string.h>

#include "choose.h"
#include "session.h"

/* ---- executor helpers ---- */

bool tx_x_has(const tx_xnode *x, int i) {
    return i >= 0 && i < x->n_in && x->in[i];
}

bool tx_x_is_host(const tx_xnode *x, int i) {
    if (!tx_x_has(x, i))
        return false;
    const tx_session_val *v = x->in[i];
    return v->is_const || (!x->fold && v->kind == TX_VAL_HOST);
}

bool tx_x_all_host(const tx_xnode *x) {
    for (int i = 0; i < x->n_in; i++)
        if (x->in[i] && !tx_x_is_host(x, i))
            return false;
    return true;
}

int tx_x_elem(const tx_xnode *x, int i) {
    if (!tx_x_has(x, i))
        return 0;
    const tx_session_val *v = x->in[i];
    if (v->is_const)
        return v->c.elem;
    if (!x->fold && v->kind == TX_VAL_HOST)
        return v->h.elem;
    if (!x->fold && v->kind == TX_VAL_DEVICE && !v->elem) {
        tx_dtype dt = TX_DTYPE_FLOAT32;
        tx_tensor_shape(x->ctx, v->t, NULL, NULL, &dt);
        return dt == TX_DTYPE_INT32 ? TX_ONNX_INT32 : TX_ONNX_FLOAT;
    }
    return v->elem;
}

tx_status tx_x_fail(tx_xnode *x, tx_status st, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tx_fail(x->ctx, st, "onnx: %s node \"%s\": %s", x->node->op_type, x->node->name, msg);
}

tx_status tx_x_shape(tx_xnode *x, int i, int *rank, int64_t shape[TX_MAX_RANK]) {
    if (!tx_x_has(x, i))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d is missing", i);
    tx_session_val *v = x->in[i];
    if (v->is_const) {
        *rank = v->c.rank;
        memcpy(shape, v->c.shape, sizeof(int64_t) * TX_MAX_RANK);
        return TX_STATUS_OK;
    }
    if (x->fold) {
        if (v->rank < 0)
            return TX_STATUS_DEFER;
        for (int d = 0; d < v->rank; d++)
            if (v->shape[d] < 0)
                return TX_STATUS_DEFER;
        *rank = v->rank;
        memcpy(shape, v->shape, sizeof(int64_t) * TX_MAX_RANK);
        return TX_STATUS_OK;
    }
    if (v->kind == TX_VAL_HOST) {
        *rank = v->h.rank;
        memcpy(shape, v->h.shape, sizeof(int64_t) * TX_MAX_RANK);
        return TX_STATUS_OK;
    }
    if (v->kind == TX_VAL_DEVICE)
        return tx_tensor_shape(x->ctx, v->t, rank, shape, NULL);
    return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input \"%s\" has no value", v->name);
}

bool tx_val_widen(tx_session_val *v) {
    if (!v->is_const || v->c.f || !v->c.h16)
        return true;
    if (!tx_hval_widen(&v->c))
        return false;
    v->c_half = v->c.h16;
    v->c_half_owned = v->c_owned;
    v->c.h16 = NULL;
    v->c_owned = true; /* the floats are malloc'd */
    return true;
}

void tx_val_narrow(tx_session *s, tx_session_val *v) {
    if (v->c_half && v->is_const && v->c_owned && tx_hval_same_halves(&v->c, v->c_half)) {
        free(v->c.f);
        v->c.f = NULL;
        v->c.h16 = v->c_half;
        v->c_owned = v->c_half_owned;
        v->c_half = NULL;
        v->c_half_owned = false;
        return;
    }
    if (v->c_half_owned)
        free(v->c_half);
    else if (v->c_half) /* the file's halves: replaced by what was folded in */
        tx_arena_release(s->m.arena, v->c_half);
    v->c_half = NULL;
    v->c_half_owned = false;
    /* A computed weight (a Cast of float16 weights, a Transpose of them)
     * whose every value is a half is kept as halves: nothing changes. A
     * float16 weight something was folded into, where the device stores
     * halves anyway, too: rounded as the upload would round it. */
    if (!v->is_const || !v->c_owned || !v->c.f || !tx_onnx_type_is_float(v->c.elem) ||
        v->c.numel < TX_HVAL_HALF_MIN)
        return;
    bool exact = true;
    for (int64_t k = 0; k < v->c.numel && exact; k++) {
        uint32_t a = tx_half_bits_to_float_bits(tx_float_to_half_bits(v->c.f[k])), b;
        memcpy(&b, &v->c.f[k], 4);
        exact = a == b;
    }
    if (!exact && !(s->round_halves && v->c.elem == TX_ONNX_FLOAT16))
        return;
    uint16_t *h = malloc((size_t)v->c.numel * sizeof *h);
    if (!h)
        return; /* the floats serve as well */
    tx_floats_to_halves(v->c.f, h, v->c.numel);
    free(v->c.f);
    v->c.f = NULL;
    v->c.h16 = h;
}

tx_status tx_x_host(tx_xnode *x, int i, const tx_hval **out) {
    if (!tx_x_has(x, i))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d is missing", i);
    tx_session_val *v = x->in[i];
    if (v->is_const) {
        /* float16 constants a host path reads keep their floats from then on
         * (plan-time reads go back to the halves after fusion, graph.c) */
        if (!tx_val_widen(v))
            return tx_x_fail(x, TX_STATUS_OUT_OF_MEMORY, "out of host memory");
        *out = &v->c;
        return TX_STATUS_OK;
    }
    if (x->fold)
        return TX_STATUS_DEFER;
    if (v->kind == TX_VAL_HOST || v->h_valid) {
        *out = &v->h;
        return TX_STATUS_OK;
    }
    if (v->kind != TX_VAL_DEVICE)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input \"%s\" has no value", v->name);
    /* The load's compile-only walk (compile_at_load) draws nothing, so a
     * device value holds nothing to read: the walk stops here, and the
     * programs past this op compile in the first run. */
    if (x->ctx->compile_only)
        return tx_x_fail(x, TX_STATUS_UNSUPPORTED,
                         "the compile-only walk stops at a read-back of \"%s\"", v->name);
    /* A device value an op needs on the host (a Reshape's shape fed by the
     * caller): read it back once. Counted in bytes_downloaded. */
    tx_status st = tx_hval_download(x->ctx, v->t, v->elem, &v->h);
    if (st)
        return st;
    x->s->readbacks++;
    x->s->readback_bytes += (uint64_t)v->h.numel * 4u;
    v->h_valid = true;
    *out = &v->h;
    return TX_STATUS_OK;
}

/* The dims of v that shape inference left unknown (every dim when its rank
 * is): in a session with symbolic input dims, the sizes a later run may change. */
static unsigned vary_mask(const tx_session_val *v) {
    if (v->rank < 0)
        return ~0u;
    unsigned m = 0;
    for (int d = 0; d < v->rank; d++)
        m |= v->shape[d] < 0 ? 1u << d : 0;
    return m;
}

tx_status tx_x_dev(tx_xnode *x, int i, tx_tensor *out) {
    if (!tx_x_has(x, i))
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input %d is missing", i);
    if (x->fold)
        return TX_STATUS_DEFER;
    tx_session_val *v = x->in[i];
    if (v->is_const) {
        /* a run's device is the context's default while it lasts */
        tx_tensor *c = &v->c_dev[x->ctx->device];
        if (!c->id) {
            tx_status st = tx_hval_upload(x->ctx, v->name, &v->c, c);
            if (st)
                return st;
        }
        *out = *c;
        return TX_STATUS_OK;
    }
    if (v->kind == TX_VAL_HOST && !v->t.id) {
        tx_status st = tx_hval_upload(x->ctx, v->name, &v->h, &v->t);
        if (st)
            return st;
        v->t_owned = true;
    }
    if (!v->t.id)
        return tx_x_fail(x, TX_STATUS_INVALID_ARGUMENT, "input \"%s\" has no value", v->name);
    *out = v->t;
    if (x->s->dynamic)
        tx_tensor_set_vary(x->ctx, v->t, vary_mask(v));
    return TX_STATUS_OK;
}

/* v becomes the constant h (its data owned by the session, or the model's) */
static void set_const(tx_session_val *v, const tx_hval *h, bool owned) {
    v->is_const = true;
    v->c_owned = owned;
    v->c = *h;
    v->elem = h->elem;
    v->rank = h->rank;
    memcpy(v->shape, h->shape, sizeof v->shape);
}

tx_status tx_x_set_host(tx_xnode *x, int i, tx_hval *h) {
    tx_session_val *v = i < x->n_out ? x->out[i] : NULL;
    if (!v) {
        tx_hval_free(h);
        return TX_STATUS_OK;
    }
    if (x->fold) {
        set_const(v, h, true);
    } else {
        v->kind = TX_VAL_HOST;
        v->h = *h;
        v->h_valid = true;
    }
    memset(h, 0, sizeof *h);
    return TX_STATUS_OK;
}

bool tx_x_set_const_ref(tx_xnode *x, int i, const tx_hval *h) {
    tx_session_val *v = i < x->n_out ? x->out[i] : NULL;
    if (!x->fold || !v)
        return false;
    set_const(v, h, false);
    return true;
}

tx_status tx_x_set_dev(tx_xnode *x, int i, tx_tensor t, int elem) {
    tx_session_val *v = i < x->n_out ? x->out[i] : NULL;
    if (!v)
        return tx_tensor_destroy(x->ctx, t);
    TX_ASSERT(!x->fold);
    v->kind = TX_VAL_DEVICE;
    v->t = t;
    v->t_owned = true;
    if (elem)
        v->elem = elem;
    return TX_STATUS_OK;
}

void tx_x_set_info(tx_xnode *x, int i, int elem, int rank, const int64_t *shape) {
    tx_session_val *v = i < x->n_out ? x->out[i] : NULL;
    if (!v || v->is_const)
        return;
    if (elem)
        v->elem = elem;
    if (rank >= 0 && rank <= TX_MAX_RANK) {
        /* declared dims (value_info) win where inference knows less */
        int64_t merged[TX_MAX_RANK] = {0};
        for (int d = 0; d < rank; d++)
            merged[d] = shape[d] < 0 && v->rank == rank ? v->shape[d] : shape[d];
        v->rank = rank;
        memcpy(v->shape, merged, sizeof v->shape);
    }
}

/* ---- attributes ---- */

const tx_onnx_attr *tx_attr_find(const tx_onnx_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t tx_attr_int(const tx_onnx_node *n, const char *name, int64_t def) {
    const tx_onnx_attr *a = tx_attr_find(n, name);
    return a && a->type == TX_ATTR_INT ? a->i : def;
}

float tx_attr_float(const tx_onnx_node *n, const char *name, float def) {
    const tx_onnx_attr *a = tx_attr_find(n, name);
    if (a && a->type == TX_ATTR_FLOAT)
        return a->f;
    if (a && a->type == TX_ATTR_INT)
        return (float)a->i;
    return def;
}

const char *tx_attr_str(const tx_onnx_node *n, const char *name, const char *def) {
    const tx_onnx_attr *a = tx_attr_find(n, name);
    return a && a->type == TX_ATTR_STRING && a->s ? a->s : def;
}

int tx_attr_ints(const tx_onnx_node *n, const char *name, const int64_t **v) {
    const tx_onnx_attr *a = tx_attr_find(n, name);
    if (!a || a->type != TX_ATTR_INTS)
        return -1;
    static const int64_t none[1];
    *v = a->n_ints ? a->ints : none; /* never NULL: callers memcpy n entries */
    return a->n_ints;
}

/* ---- the session ---- */

static void val_release(tx_ctx *ctx, tx_session_val *v) {
    if (v->t.id && v->t_owned)
        tx_tensor_destroy(ctx, v->t);
    if (v->h_valid)
        tx_hval_free(&v->h);
    v->t = (tx_tensor){0};
    v->t_owned = v->h_valid = false;
    v->kind = TX_VAL_EMPTY;
}

static void release_all(tx_session *s) {
    for (int i = 0; i < s->n_vals; i++)
        val_release(s->ctx, &s->vals[i]);
}

typedef struct tx_session_full {
    struct tx_session s;
    uint64_t weight_bytes;
    int generation;           /* the context generation the weights were uploaded in */
    bool hooked;              /* restore_weights is registered as a restore hook */
    tx_session_choice choice; /* which device runs, and why (choose.c) */
    tx_device last_device;    /* the device of the last run (0: none yet) */
    double load_compile_ms;   /* the load's compile_only walk (compile_at_load) */
} tx_session_full;

/* Ops put their outputs, and tx_x_dev the weights, on the context's default
 * device: a session sets it to its own for the duration of a call. */
static tx_device use_device(tx_ctx *ctx, tx_device dev) {
    tx_device was = ctx->device;
    ctx->device = dev;
    return was;
}

/* Destroys the weights uploaded to `dev` (TX_DEVICE_COUNT_: to every device). */
static void drop_weights(tx_session *s, tx_device dev) {
    for (int i = 0; i < s->n_vals; i++)
        for (int d = 0; d < TX_DEVICE_COUNT_; d++) {
            tx_tensor *c = &s->vals[i].c_dev[d];
            if ((dev == TX_DEVICE_COUNT_ || d == (int)dev) && c->id) {
                tx_tensor_destroy(s->ctx, *c);
                *c = (tx_tensor){0};
            }
        }
}

static tx_status upload_weights_each(tx_session *s, uint64_t *bytes);

/* Uploads every constant a device step reads to the context's current
 * device, so that runs upload nothing but their feeds. The GPU's texture
 * checks are batched: one glGetError for the whole model under WebGL
 * (tx_gl_batch_begin), where it was one or two a weight. A texture the
 * driver gave no storage fails the upload; the GPU weights are dropped and
 * the pool emptied, so that no texture without storage is used again. */
static tx_status upload_weights(tx_session *s, uint64_t *bytes) {
    tx_ctx *ctx = s->ctx;
    bool gl = ctx->device == TX_DEVICE_GPU && !ctx->lost;
    if (gl)
        tx_gl_batch_begin(&ctx->gl);
    tx_status st = upload_weights_each(s, bytes);
    if (gl && !tx_gl_batch_end(&ctx->gl)) {
        drop_weights(s, TX_DEVICE_GPU);
        tx_pool_trim(ctx, 0);
        if (!st)
            st = tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY,
                         "tx_session_create: the driver gave a weight texture no storage "
                         "(out of GPU memory)");
    }
    return st;
}

static tx_status upload_weights_each(tx_session *s, uint64_t *bytes) {
    for (int k = 0; k < s->n_steps; k++) {
        tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        bool host_out = false;
        for (int o = 0; o < sp->n_out; o++)
            host_out |= sp->out[o] >= 0 && s->vals[sp->out[o]].host_static;
        if (host_out)
            continue;
        for (int i = -1; i < sp->n_in; i++) {
            int vi = i < 0 ? sp->bias : sp->in[i];
            if (vi < 0 || (i >= 0 && i < 32 && (sp->op->host_in >> i) & 1))
                continue;
            tx_session_val *v = &s->vals[vi];
            tx_tensor *c = &v->c_dev[s->ctx->device];
            if (!v->is_const || c->id)
                continue;
            tx_status st = tx_hval_upload(s->ctx, v->name, &v->c, c);
            if (st == TX_STATUS_UNSUPPORTED)
                continue; /* e.g. an int64 beyond 2^24 some host path will read */
            if (st)
                return st;
            /* what the weights take on the device: halves in float16 storage */
            bool halves = s->ctx->device == TX_DEVICE_GPU && s->ctx->gl.half_storage &&
                          tx_onnx_type_is_float(v->c.elem);
            *bytes += (uint64_t)v->c.numel * (halves ? 2u : 4u);
        }
    }
    return TX_STATUS_OK;
}

/* After a context loss the weight tensors are stale handles (their storage
 * went with the old context). The host copies stay in the model (c.data:
 * the model's arena or the folded constants the session owns), so a restore
 * re-uploads from them and the same session runs again. */
static tx_status reupload_weights(tx_session_full *f) {
    tx_session *s = &f->s;
    drop_weights(s, TX_DEVICE_GPU); /* frees the stale handles; CPU weights survive */
    f->generation = tx_ctx_generation(s->ctx);
    if (f->choice.current != TX_DEVICE_GPU)
        return TX_STATUS_OK;
    f->weight_bytes = 0;
    /* what fails here (out of memory) is uploaded on first use by tx_x_dev */
    tx_device was = use_device(s->ctx, TX_DEVICE_GPU);
    tx_status st = upload_weights(s, &f->weight_bytes);
    use_device(s->ctx, was);
    return st;
}

static void restore_weights(tx_ctx *ctx, void *user) {
    (void)ctx;
    reupload_weights(user);
}

static void compile_at_load(tx_session_full *f);

tx_status tx_session_create(tx_ctx *ctx, const void *bytes, size_t len, const tx_session_desc *desc,
                            tx_session **out) {
    if (!ctx)
        return TX_STATUS_INVALID_ARGUMENT;
    if (!out || (!bytes && len))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_session_create: %s is NULL",
                       !out ? "out" : "bytes");
    *out = NULL;
    tx_session_full *f = calloc(1, sizeof *f);
    if (!f)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_session_create: out of host memory");
    tx_session *s = &f->s;
    s->ctx = ctx;
    s->no_fusion = desc && desc->no_fusion;
    char err[1024];
    tx_status st = tx_onnx_load(bytes, len, &s->m, err, sizeof err);
    if (st) {
        free(f);
        return tx_fail(ctx, st, "%s", err);
    }
    f->generation = tx_ctx_generation(ctx);
    if (desc && desc->device != TX_DEVICE_DEFAULT && desc->device != TX_DEVICE_GPU &&
        desc->device != TX_DEVICE_CPU && desc->device != TX_DEVICE_AUTO) {
        tx_onnx_model_free(&s->m);
        free(f);
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_session_create: desc.device %d is not gpu, cpu or auto",
                       (int)desc->device);
    }
    tx_choice_init(ctx, &f->choice, desc, bytes, len);
    if (f->choice.current == TX_DEVICE_GPU && ctx->gl_pending &&
        tx_ctx_need_gl(ctx, "tx_session_create")) {
        tx_onnx_model_free(&s->m);
        free(f);
        return TX_STATUS_UNSUPPORTED; /* the message names why */
    }
    if (ctx->no_gpu && f->choice.current == TX_DEVICE_GPU) {
        tx_fail(ctx, TX_STATUS_UNSUPPORTED,
                "tx_session_create: device gpu (%s), but this context has no GPU context (%s)",
                f->choice.reason,
                ctx->no_gpu_why[0] ? ctx->no_gpu_why : "made without GL, tx_ctx_desc.no_gpu");
        tx_onnx_model_free(&s->m);
        free(f);
        return TX_STATUS_UNSUPPORTED;
    }
    s->round_halves =
        f->choice.mode != TX_DEVICE_CPU && (ctx->float16_storage_req || ctx->caps.float16_storage);
    st = tx_graph_plan(s);
    for (int i = 0; !st && i < s->n_inputs; i++) {
        const tx_session_val *v = &s->vals[s->inputs[i]];
        for (int d = 0; d < v->rank; d++)
            s->dynamic |= v->shape[d] < 0;
        s->dynamic |= v->rank < 0;
    }
    if (!st) {
        tx_device was = use_device(ctx, f->choice.current);
        st = upload_weights(s, &f->weight_bytes);
        use_device(ctx, was);
    }
    if (!st)
        compile_at_load(f);
    /* With all hook slots taken the session still recovers: tx_session_run
     * compares generations and re-uploads then. */
    if (!st)
        f->hooked = tx_ctx_add_restore_hook(ctx, restore_weights, f) == TX_STATUS_OK;
    if (st) {
        char keep[sizeof ctx->err];
        memcpy(keep, ctx->err, sizeof keep);
        tx_session_destroy(s);
        memcpy(ctx->err, keep, sizeof keep);
        return st;
    }
    *out = s;
    return TX_STATUS_OK;
}

tx_status tx_session_profile_enable(tx_session *s, bool on) {
    if (!s)
        return TX_STATUS_INVALID_ARGUMENT;
    free(s->prof);
    s->prof = on ? calloc((size_t)(s->n_steps ? s->n_steps : 1), sizeof *s->prof) : NULL;
    if (on && !s->prof)
        return tx_fail(s->ctx, TX_STATUS_OUT_OF_MEMORY,
                       "tx_session_profile_enable: out of host memory");
    return TX_STATUS_OK;
}

int tx_session_profile(const tx_session *s, tx_step_profile *out, int max) {
    if (!s || !s->prof || max < 0 || (max > 0 && !out))
        return -1;
    int n = 0;
    for (int k = 0; k < s->n_steps; k++) {
        const tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        if (n < max) {
            const struct tx_step_prof *p = &s->prof[k];
            out[n] = (tx_step_profile){.op_type = sp->node->op_type,
                                       .name = sp->node->name,
                                       .activation = sp->act,
                                       .runs = p->runs,
                                       .ms = p->ms,
                                       .draws = p->draws,
                                       .compiles = p->compiles,
                                       .device = p->device,
                                       .out_rank = p->out_rank,
                                       .macs = p->macs};
            memcpy(out[n].out_shape, p->out_shape, sizeof p->out_shape);
        }
        n++;
    }
    return n;
}

void tx_session_destroy(tx_session *s) {
    if (!s)
        return;
    tx_session_full *f = (tx_session_full *)s;
    if (f->hooked)
        tx_ctx_remove_restore_hook(s->ctx, restore_weights, f);
    release_all(s);
    drop_weights(s, TX_DEVICE_COUNT_);
    tx_graph_free(s);
    tx_onnx_model_free(&s->m);
    free(s->prof);
    free((tx_session_full *)s);
}

int tx_session_input_count(const tx_session *s) {
    return s ? s->n_inputs : 0;
}
int tx_session_output_count(const tx_session *s) {
    return s ? s->n_outputs : 0;
}

static tx_status value_info(const tx_session *s, int vi, tx_value_info *out) {
    const tx_session_val *v = &s->vals[vi];
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->rank = v->rank;
    for (int d = 0; d < TX_MAX_RANK; d++)
        out->shape[d] = d < v->rank ? v->shape[d] : 0;
    out->onnx_type = v->elem;
    memcpy(out->dim_names, v->dim_names, sizeof out->dim_names);
    out->dtype = tx_onnx_type_is_int(v->elem) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
    return TX_STATUS_OK;
}

/* tx_session_input_info and tx_session_output_info: graph input or output i. */
static tx_status io_info(const tx_session *s, bool output, int i, tx_value_info *out) {
    if (!s || !out)
        return TX_STATUS_INVALID_ARGUMENT;
    int n = output ? s->n_outputs : s->n_inputs;
    if (i < 0 || i >= n)
        return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_session_%s_info: index %d is outside 0..%d", output ? "output" : "input",
                       i, n - 1);
    return value_info(s, output ? s->outputs[i] : s->inputs[i], out);
}

tx_status tx_session_input_info(const tx_session *s, int i, tx_value_info *out) {
    return io_info(s, false, i, out);
}

tx_status tx_session_output_info(const tx_session *s, int i, tx_value_info *out) {
    return io_info(s, true, i, out);
}

tx_status tx_session_stats_get(const tx_session *s, tx_session_stats *out) {
    if (!s || !out)
        return TX_STATUS_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->nodes = s->m.n_nodes;
    for (int k = 0; k < s->n_steps; k++)
        out->steps += !s->steps[k].dead;
    out->folded = s->folded;
    out->fused = s->fused;
    out->readbacks = s->readbacks;
    out->readback_bytes = s->readback_bytes;
    const tx_session_full *f = (const tx_session_full *)s;
    out->weight_bytes = f->weight_bytes;
    out->host_bytes = tx_arena_bytes(s->m.arena);
    for (int i = 0; i < s->n_vals; i++) {
        const tx_session_val *v = &s->vals[i];
        out->host_bytes += v->c_owned ? tx_hval_bytes(&v->c) : 0;
        out->host_bytes += v->c_half_owned ? (uint64_t)v->c.numel * sizeof(uint16_t) : 0;
    }
    out->load_compile_ms = f->load_compile_ms;
    out->device = f->last_device ? f->last_device : f->choice.current;
    out->next_device = f->choice.current;
    out->decided = f->choice.decided;
    snprintf(out->reason, sizeof out->reason, "%s", f->choice.reason);
    out->runs_gpu = f->choice.runs[TX_DEVICE_GPU];
    out->runs_cpu = f->choice.runs[TX_DEVICE_CPU];
    out->gpu_ms = f->choice.gpu_ms;
    out->cpu_ms = f->choice.cpu_ms;
    return TX_STATUS_OK;
}

static tx_status check_feed(tx_session *s, const tx_feed *f, int *vi_out) {
    tx_ctx *ctx = s->ctx;
    const char *op = "tx_session_run";
    if (!f->name)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: a feed has no name", op);
    int vi = tx_graph_find(s, f->name);
    if (vi < 0 || !s->vals[vi].is_input) {
        char names[512] = "";
        for (int i = 0; i < s->n_inputs && strlen(names) < 400; i++) {
            if (i)
                strcat(names, ", ");
            strncat(names, s->vals[s->inputs[i]].name, 100);
        }
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: \"%s\" is not an input of the model (inputs: %s)", op, f->name, names);
    }
    tx_session_val *v = &s->vals[vi];
    if (v->kind != TX_VAL_EMPTY)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: input \"%s\" is fed twice", op,
                       f->name);
    int rank;
    int64_t shape[TX_MAX_RANK];
    tx_dtype dt;
    tx_status st = tx_tensor_shape(ctx, f->tensor, &rank, shape, &dt);
    if (st) { /* keep the engine's reason: disposed, or made before a context loss */
        char why[sizeof ctx->err];
        snprintf(why, sizeof why, "%s", ctx->err);
        return tx_fail(ctx, st, "%s: the tensor fed as \"%s\" is not a live tensor (%s)", op,
                       f->name, why);
    }
    if (v->elem) {
        tx_dtype want = tx_onnx_type_is_int(v->elem) ? TX_DTYPE_INT32 : TX_DTYPE_FLOAT32;
        if (dt != want)
            return tx_fail(ctx, TX_STATUS_DTYPE_MISMATCH,
                           "%s: input \"%s\" is %s (feed a %s tensor), got %s", op, f->name,
                           tx_onnx_type_name(v->elem), want == TX_DTYPE_INT32 ? "int32" : "float32",
                           dt == TX_DTYPE_INT32 ? "int32" : "float32");
    }
    if (v->rank >= 0) {
        bool bad = rank != v->rank;
        for (int d = 0; d < rank && !bad; d++)
            bad = v->shape[d] >= 0 && v->shape[d] != shape[d];
        if (bad) {
            char a[160], b[160];
            tx_shape_str(a, sizeof a, v->rank, v->shape);
            tx_shape_str(b, sizeof b, rank, shape);
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "%s: input \"%s\" has shape %s (-1: any), got %s", op, f->name, a, b);
        }
    }
    *vi_out = vi;
    return TX_STATUS_OK;
}

/* A tensor handle for the caller: a view of device values (the caller owns
 * the handle, storage is shared), an upload of host values. */
static tx_status fetch_value(tx_session *s, tx_session_val *v, tx_tensor *out) {
    if (v->is_const)
        return tx_hval_upload(s->ctx, v->name, &v->c, out);
    if (v->kind == TX_VAL_DEVICE || (v->kind == TX_VAL_HOST && v->t.id)) {
        /* always a new handle: the same output may be fetched twice, and the
         * run's own handle is released with the rest */
        int rank;
        int64_t shape[TX_MAX_RANK];
        tx_status st = tx_tensor_shape(s->ctx, v->t, &rank, shape, NULL);
        return st ? st : tx_tensor_reshape(s->ctx, v->t, rank, shape, out);
    }
    if (v->kind == TX_VAL_HOST)
        return tx_hval_upload(s->ctx, v->name, &v->h, out);
    return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT, "tx_session_run: \"%s\" has no value",
                   v->name);
}

static tx_status run_step(tx_session *s, int k) {
    tx_step *sp = &s->steps[k];
    tx_xnode x;
    tx_graph_xnode(s, k, &x);
    tx_status st = sp->op->exec(&x);
    if (st == TX_STATUS_DEFER) /* a host-only path met a device value */
        st = tx_x_fail(&x, TX_STATUS_UNSUPPORTED,
                       "unsupported op_type \"%s\" on these inputs (host path only)",
                       sp->node->op_type);
    if (st && !strstr(s->ctx->err, sp->node->name)) {
        char keep[sizeof s->ctx->err];
        snprintf(keep, sizeof keep, "%s", s->ctx->err);
        tx_fail(s->ctx, st, "onnx: %s node \"%s\": %s", sp->node->op_type, sp->node->name, keep);
    }
    return st;
}

/* A profiled GPU step that drew ends when its work is done: a texel of its
 * first output read back (WebGL's finish() returns before SwiftShader has
 * drawn; a read cannot), else a finish. */
static tx_status profile_wait(tx_session *s, const tx_step *sp) {
    const tx_session_val *v = sp->n_out > 0 && sp->out[0] >= 0 ? &s->vals[sp->out[0]] : NULL;
    if (v && v->kind == TX_VAL_DEVICE && v->t.id)
        return tx_gpu_wait(s->ctx, v->t);
    return tx_ctx_finish(s->ctx);
}

/* The shape of value vi as the run has it (rank -1: unknown): a device or
 * host value's own, a constant's, else what inference knows. */
static void val_shape(tx_session *s, int vi, int *rank, int64_t shape[TX_MAX_RANK]) {
    *rank = -1;
    const tx_session_val *v = vi >= 0 ? &s->vals[vi] : NULL;
    if (v && v->kind == TX_VAL_DEVICE && v->t.id) {
        if (tx_tensor_shape(s->ctx, v->t, rank, shape, NULL))
            *rank = -1;
    } else if (v && (v->kind == TX_VAL_HOST || v->is_const)) {
        const tx_hval *h = v->kind == TX_VAL_HOST ? &v->h : &v->c;
        *rank = h->rank;
        memcpy(shape, h->shape, sizeof h->shape);
    }
    if (v && *rank < 0 && v->rank >= 0) {
        *rank = v->rank;
        memcpy(shape, v->shape, sizeof v->shape);
    }
    for (int d = 0; d < *rank; d++)
        if (shape[d] < 0)
            *rank = -1;
}

static double numel(int rank, const int64_t *shape) {
    double n = 1;
    for (int d = 0; d < rank; d++)
        n *= (double)shape[d];
    return n;
}

/* The multiply-adds of step sp as it ran, by ONNX's definition of its op
 * (out: its first output's shape): Conv, ConvTranspose, MatMul and Gemm;
 * 0 for the rest, or when a shape is unknown. */
static double step_macs(tx_session *s, const tx_step *sp, int out_rank, const int64_t *out) {
    const char *op = sp->node->op_type;
    bool conv = !strcmp(op, "Conv"), convt = !strcmp(op, "ConvTranspose");
    bool mm = !strcmp(op, "MatMul"), gemm = !strcmp(op, "Gemm");
    if ((!conv && !convt && !mm && !gemm) || sp->n_in < 2 || out_rank < 0)
        return 0;
    int ra, rb;
    int64_t a[TX_MAX_RANK], b[TX_MAX_RANK];
    val_shape(s, sp->in[0], &ra, a);
    val_shape(s, sp->in[1], &rb, b);
    if (ra < 1 || rb < 1)
        return 0;
    if (conv || convt) /* W [Cout, Cin/g, k...] or [Cin, Cout/g, k...] */
        return numel(conv ? out_rank : ra, conv ? out : a) * numel(rb - 1, b + 1);
    int64_t k = a[ra - 1];
    if (gemm && ra == 2) {
        const tx_onnx_attr *t = tx_attr_find(sp->node, "transA");
        k = t && t->i ? a[0] : a[1];
    }
    return numel(out_rank, out) * (double)k;
}

static tx_status run_on(tx_session *s, tx_device dev, const tx_feed *feeds, int n_feeds,
                        const char *const *fetches, int n_fetches, tx_tensor *outs) {
    tx_ctx *ctx = s->ctx;
    const char *op = "tx_session_run";
    if ((n_feeds > 0 && !feeds) || n_feeds < 0 || n_fetches < 0 || (n_fetches > 0 && !outs))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: bad feeds/fetches arguments", op);
    if (!fetches && n_fetches != s->n_outputs)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "%s: fetches is NULL, so n_fetches must be the output count %d, not %d", op,
                       s->n_outputs, n_fetches);
    tx_status gl = dev == TX_DEVICE_GPU ? tx_ctx_need_gl(ctx, op) : TX_STATUS_OK;
    if (gl)
        return gl;
    if (ctx->lost && dev == TX_DEVICE_GPU)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "%s: the GL context is lost", op);
    tx_session_full *full = (tx_session_full *)s;
    if (full->generation != tx_ctx_generation(ctx)) {
        tx_status up = reupload_weights(full);
        if (up)
            return up;
    }
    int *fv = malloc((size_t)(n_fetches + 1) * sizeof *fv);
    if (!fv)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "%s: out of host memory", op);
    tx_status st = TX_STATUS_OK;
    for (int i = 0; i < n_fetches && !st; i++) {
        const char *name = fetches ? fetches[i] : s->vals[s->outputs[i]].name;
        fv[i] = name ? tx_graph_find(s, name) : -1;
        if (fv[i] < 0 || !s->vals[fv[i]].is_output)
            st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                         "%s: \"%s\" is not an output of the "
                         "model",
                         op, name ? name : "(null)");
    }
    release_all(s);
    for (int i = 0; i < n_feeds && !st; i++) {
        int vi;
        st = check_feed(s, &feeds[i], &vi);
        tx_device fed = dev;
        if (!st)
            st = tx_tensor_device(ctx, feeds[i].tensor, &fed);
        if (!st) {
            s->vals[vi].kind = TX_VAL_DEVICE;
            s->vals[vi].t = feeds[i].tensor;
            s->vals[vi].t_owned = false;
        }
        if (!st && fed != dev) { /* the counted crossing: a copy on the run's device */
            st = tx_tensor_to(ctx, feeds[i].tensor, dev, &s->vals[vi].t);
            s->vals[vi].t_owned = !st;
            if (st)
                s->vals[vi].t = (tx_tensor){0};
        }
    }
    for (int i = 0; i < s->n_inputs && !st; i++) {
        tx_session_val *v = &s->vals[s->inputs[i]];
        if (v->kind == TX_VAL_EMPTY) {
            bool used = false; /* an input nothing reads may be left out */
            for (int k = 0; k < s->n_steps && !used; k++)
                for (int j = 0; j < s->steps[k].n_in && !s->steps[k].dead; j++)
                    used |= s->steps[k].in[j] == s->inputs[i];
            if (used || v->is_output)
                st = tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "%s: input \"%s\" is not fed", op,
                             v->name);
        }
    }
    bool timed = s->prof && !ctx->compile_only;
    for (int k = 0; k < s->n_steps && !st; k++) {
        tx_step *sp = &s->steps[k];
        if (sp->dead)
            continue;
        double t0 = timed ? tx_now_ms() : 0;
        uint64_t d0 = ctx->stats.draws;
        uint64_t c0 = ctx->stats.generic_compiles + ctx->stats.specialized_compiles;
        st = run_step(s, k);
        if (timed && !st && dev == TX_DEVICE_GPU && ctx->stats.draws != d0)
            st = profile_wait(s, sp);
        if (timed && !st) {
            struct tx_step_prof *p = &s->prof[k];
            p->ms += tx_now_ms() - t0;
            p->draws += ctx->stats.draws - d0;
            p->compiles += ctx->stats.generic_compiles + ctx->stats.specialized_compiles - c0;
            p->runs++;
            p->device = dev;
            val_shape(s, sp->n_out > 0 ? sp->out[0] : -1, &p->out_rank, p->out_shape);
            p->macs = step_macs(s, sp, p->out_rank, p->out_shape);
        }
        for (int j = 0; j < sp->n_frees && !st; j++)
            val_release(ctx, &s->vals[sp->frees[j]]);
    }
    int done = 0;
    for (; done < n_fetches && !st; done++)
        st = fetch_value(s, &s->vals[fv[done]], &outs[done]);
    if (st)
        for (int i = 0; i < done - 1; i++)
            tx_tensor_destroy(ctx, outs[i]);
    release_all(s);
    free(fv);
    return st;
}

tx_status tx_session_compile(tx_session *s, const tx_feed *feeds, int n_feeds, int *programs) {
    if (programs)
        *programs = 0;
    if (!s || n_feeds < 0 || (n_feeds > 0 && !feeds))
        return TX_STATUS_INVALID_ARGUMENT;
    tx_ctx *ctx = s->ctx;
    tx_status gl = tx_ctx_need_gl(ctx, "tx_session_compile");
    if (gl)
        return gl;
    if (ctx->lost)
        return tx_fail(ctx, TX_STATUS_CONTEXT_LOST, "tx_session_compile: the GL context is lost");
    /* programs the walk asks for: new ones and those already issued (the
     * load issues them too, compile_at_load) */
    uint64_t before = ctx->warm_requests;
    tx_device was = use_device(ctx, TX_DEVICE_GPU);
    ctx->compile_only = true;
    static const char *const no_fetch[1] = {NULL};
    tx_status st = run_on(s, TX_DEVICE_GPU, feeds, n_feeds, no_fetch, 0, NULL);
    ctx->compile_only = false;
    use_device(ctx, was);
    if (programs)
        *programs = (int)(ctx->warm_requests - before);
    return st;
}

int tx_session_compiling(const tx_session *s) {
    return s ? tx_cache_compiling(s->ctx) : 0;
}

/* auto's warm-up pass, before the second run: tx_session_compile, so every
 * generic program starts compiling in the background (and the GPU weights are
 * uploaded) while the CPU serves the next runs. Only where the driver
 * compiles in the background: elsewhere the pass would block as long as a
 * first GPU run. */
static void warm_up(tx_session_full *f, const tx_feed *feeds, int n_feeds) {
    tx_ctx *ctx = f->s.ctx;
    tx_caps caps;
    tx_ctx_caps(ctx, &caps);
    if (!caps.parallel_compile || ctx->lost) {
        tx_choice_warmed(&f->choice, false, "no background compile on this driver");
        return;
    }
    char keep[sizeof ctx->err]; /* the caller's last error stays theirs */
    snprintf(keep, sizeof keep, "%s", ctx->err);
    tx_status st = tx_session_compile(&f->s, feeds, n_feeds, NULL);
    tx_choice_warmed(&f->choice, st == TX_STATUS_OK, ctx->err);
    snprintf(ctx->err, sizeof ctx->err, "%s", keep);
}

/* First result: a session that runs on the GPU issues every generic program
 * at load, by walking its plan once with ctx->compile_only on zero feeds of
 * the declared input shapes (only when every input's shape is static: the
 * programs depend on shapes). With KHR_parallel_shader_compile the driver
 * compiles them in the background while the caller prepares its inputs; the
 * first run only reads their link status. Otherwise the compiles happen here
 * instead of inside the first run. Nothing is drawn; a failure here is left
 * for the first run to report (the caller's last error is kept). Env
 * TEXEL_NO_LOAD_COMPILE=1 turns it off. */
static void compile_at_load(tx_session_full *f) {
    tx_session *s = &f->s;
    tx_ctx *ctx = s->ctx;
    const char *env = getenv("TEXEL_NO_LOAD_COMPILE");
    if (f->choice.current != TX_DEVICE_GPU || ctx->lost || (env && *env && *env != '0'))
        return;
    tx_feed *feeds = calloc((size_t)s->n_inputs + 1, sizeof *feeds);
    if (!feeds)
        return;
    char keep[sizeof ctx->err];
    snprintf(keep, sizeof keep, "%s", ctx->err);
    tx_device was = use_device(ctx, TX_DEVICE_GPU);
    bool ok = true;
    int n = 0;
    for (; n < s->n_inputs && ok; n++) {
        tx_value_info vi;
        value_info(s, s->inputs[n], &vi);
        tx_tensor_desc d = {.rank = vi.rank, .dtype = vi.dtype};
        int64_t numel = 1;
        for (int i = 0; i < vi.rank; i++) {
            ok &= vi.shape[i] >= 0;
            d.shape[i] = vi.shape[i];
            numel *= vi.shape[i] > 0 ? vi.shape[i] : 1;
        }
        void *zeros = ok && vi.rank >= 0 ? calloc((size_t)numel, 4) : NULL;
        d.data = zeros;
        feeds[n].name = vi.name;
        ok = zeros && tx_tensor_create(ctx, &d, &feeds[n].tensor) == TX_STATUS_OK;
        free(zeros);
    }
    if (ok) {
        double t0 = tx_now_ms();
        ctx->compile_only = true;
        static const char *const no_fetch[1] = {NULL};
        run_on(s, TX_DEVICE_GPU, feeds, n, no_fetch, 0, NULL);
        ctx->compile_only = false;
        f->load_compile_ms = tx_now_ms() - t0;
    }
    for (int i = 0; i < n; i++)
        if (feeds[i].tensor.id)
            tx_tensor_destroy(ctx, feeds[i].tensor);
    free(feeds);
    use_device(ctx, was);
    snprintf(ctx->err, sizeof ctx->err, "%s", keep);
}

/* Programs still compiling, asked only while auto measures (a decided
 * session pays nothing for it). */
static int trial_compiling(const tx_session_full *f) {
    return f->choice.decided ? 0 : tx_cache_compiling(f->s.ctx);
}

tx_status tx_session_run(tx_session *s, const tx_feed *feeds, int n_feeds,
                         const char *const *fetches, int n_fetches, tx_tensor *outs) {
    if (!s)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_session_full *f = (tx_session_full *)s;
    bool trial = !f->choice.decided; /* (the context's start may decide: remembered) */
    /* the GL context, the probe and the warm-up wait for the second run:
     * nothing delays the first result */
    if (!f->choice.decided && f->choice.phase == TX_TRIAL_GL_LATER && f->choice.trial > 0)
        tx_choice_start_gl(s->ctx, &f->choice);
    if (!f->choice.decided && f->choice.phase == TX_TRIAL_PROBE && f->choice.trial > 0)
        tx_choice_probe(s->ctx, &f->choice);
    if (!f->choice.decided && f->choice.phase == TX_TRIAL_WARMING)
        warm_up(f, feeds, n_feeds);
    tx_choice_poll(&f->choice, trial_compiling(f));
    tx_device dev = f->choice.current;
    tx_device was = use_device(s->ctx, dev);
    double t0 = tx_now_ms();
    tx_status st = run_on(s, dev, feeds, n_feeds, fetches, n_fetches, outs);
    /* auto's trial times the GPU's work too (a run that fetches nothing
     * times only what was issued) */
    if (!st && dev == TX_DEVICE_GPU && !f->choice.decided && n_fetches > 0)
        st = tx_gpu_wait(s->ctx, outs[0]);
    double ms = tx_now_ms() - t0;
    use_device(s->ctx, was);
    if (st)
        return st;
    f->last_device = dev;
    tx_choice_record(s->ctx, &f->choice, ms, trial_compiling(f));
    if (trial && f->choice.decided) /* the loser's weights go */
        drop_weights(s, f->choice.current == TX_DEVICE_GPU ? TX_DEVICE_CPU : TX_DEVICE_GPU);
    return TX_STATUS_OK;
}

tx_status tx_session_weight(tx_session *s, const char *name, tx_tensor *out) {
    if (!s)
        return TX_STATUS_INVALID_ARGUMENT;
    tx_status st = tx_check_arg(s->ctx, "tx_session_weight", "name and out", name && out);
    if (st)
        return st;
    tx_session_full *f = (tx_session_full *)s;
    int vi = tx_graph_find(s, name);
    if (vi >= 0 && s->vals[vi].folded_away)
        return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_session_weight: \"%s\" was folded into the op that read it (create "
                       "the session with tx_session_desc.no_fusion to fine-tune it)",
                       name);
    if (vi < 0 || !s->vals[vi].is_const)
        return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_session_weight: \"%s\" is not an initializer of the model%s", name,
                       vi < 0 ? "" : " (a graph input or a computed value)");
    if (!f->choice.decided)
        return tx_fail(s->ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_session_weight: the session has not settled on a device: give "
                       "tx_session_desc.device (gpu or cpu) to fine-tune");
    tx_session_val *v = &s->vals[vi];
    tx_tensor *c = &v->c_dev[f->choice.current];
    if (!c->id) {
        tx_device was = use_device(s->ctx, f->choice.current);
        st = tx_hval_upload(s->ctx, v->name, &v->c, c);
        use_device(s->ctx, was);
        if (st)
            return st;
    }
    *out = *c;
    return TX_STATUS_OK;
}
