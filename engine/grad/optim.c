/* Optimizers: SGD, momentum (and Nesterov), Adam, AdamW.
 *
 * Each parameter's update is one fused kernel (tx_optim_call in device.h:
 * one draw on the GPU writing the new values and the new state to up to 3
 * render targets, glsl-templates/optim.glsl; one pass on the CPU). Its
 * coefficients, bias corrections included, are a small tensor read as data,
 * so the program stays the same from step to step. The new values then
 * replace the parameter's storage under its handle (swap_storage), so the
 * caller's tensor is updated in place, and the state tensors (velocity,
 * Adam's moments) stay on the device between steps. */
#include <math.h>
#include <stdlib.h>

#include "../device.h"
#include "grad.h"

struct tx_optim {
    tx_optim_desc d;
    int64_t t;          /* steps taken */
    tx_tensor *s1, *s2; /* per parameter: velocity or first moment; second moment */
    int n;
};

static const char *k_kind[] = {"sgd", "momentum", "adam", "adamw"};

tx_status tx_optim_create(tx_ctx *ctx, const tx_optim_desc *desc, tx_optim **out) {
    tx_status st = tx_check_arg(ctx, "tx_optim_create", "out", out != NULL);
    if (st)
        return st;
    tx_optim_desc d = desc ? *desc : (tx_optim_desc){0};
    if ((unsigned)d.kind >= TX_OPTIM_COUNT_)
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT, "tx_optim_create: unknown kind %d",
                       (int)d.kind);
    bool adam = d.kind == TX_OPTIM_ADAM || d.kind == TX_OPTIM_ADAMW;
    if (d.lr == 0)
        d.lr = adam ? 0.001f : 0.01f;
    if (d.momentum == 0)
        d.momentum = 0.9f;
    if (d.beta1 == 0)
        d.beta1 = 0.9f;
    if (d.beta2 == 0)
        d.beta2 = 0.999f;
    if (d.epsilon == 0)
        d.epsilon = 1e-8f;
    if (!(d.lr > 0) || !isfinite(d.lr) || !(d.momentum >= 0 && d.momentum < 1) ||
        !(d.beta1 >= 0 && d.beta1 < 1) || !(d.beta2 >= 0 && d.beta2 < 1) || !(d.epsilon > 0) ||
        !(d.weight_decay >= 0) || !isfinite(d.weight_decay))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_optim_create (%s): lr %g must be > 0, momentum %g and betas %g, %g in "
                       "[0, 1), epsilon %g > 0, weight_decay %g >= 0",
                       k_kind[d.kind], (double)d.lr, (double)d.momentum, (double)d.beta1,
                       (double)d.beta2, (double)d.epsilon, (double)d.weight_decay);
    tx_optim *o = calloc(1, sizeof *o);
    if (!o)
        return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_optim_create: out of host memory");
    o->d = d;
    *out = o;
    return TX_STATUS_OK;
}

static void free_state(tx_ctx *ctx, tx_optim *o) {
    for (int i = 0; i < o->n; i++) {
        if (o->s1[i].id)
            tx_tensor_destroy(ctx, o->s1[i]);
        if (o->s2[i].id)
            tx_tensor_destroy(ctx, o->s2[i]);
    }
    free(o->s1);
    free(o->s2);
    o->s1 = o->s2 = NULL;
    o->n = 0;
}

void tx_optim_destroy(tx_ctx *ctx, tx_optim *opt) {
    if (!opt)
        return;
    if (ctx)
        free_state(ctx, opt);
    free(opt);
}

/* One fused step of parameter i (one kernel: tx_optim_call in device.h). */
static tx_status step_one(tx_ctx *ctx, tx_optim *o, int i, tx_tensor p, tx_tensor g,
                          tx_tensor coefs, const float coef[8]) {
    const tx_optim_desc *d = &o->d;
    int kind = d->kind == TX_OPTIM_SGD ? 0 : d->kind == TX_OPTIM_MOMENTUM ? 1 : 2;
    const tx_slot *ps = gx_slot(ctx, p);
    tx_device dev;
    tx_status st =
        tx_op_device(ctx, "tx_optim_step",
                     (const tx_slot *[]){ps, gx_slot(ctx, g), gx_slot(ctx, coefs)}, 3, &dev);
    if (st)
        return st;
    gx_tmps l = {0};
    if (kind == 2 && !o->s1[i].id) { /* Adam's moments start at zero */
        st = gx_fill(ctx, dev, ps->rank, ps->shape, 0.0f, &l, &o->s1[i]);
        if (!st)
            st = gx_fill(ctx, dev, ps->rank, ps->shape, 0.0f, &l, &o->s2[i]);
        if (st) {
            gx_free(ctx, &l);
            o->s1[i] = o->s2[i] = (tx_tensor){0};
            return st;
        }
        l.n = 0; /* the optimizer's now */
    }
    int64_t shape[TX_MAX_RANK];
    int rank = ps->rank;
    for (int k = 0; k < rank; k++)
        shape[k] = ps->shape[k];
    tx_tensor y = {0}, s1 = {0}, s2 = {0};
    st = tx_tensor_alloc(ctx, "tx_optim_step", dev, rank, shape, TX_DTYPE_FLOAT32, &y);
    if (!st && kind >= 1)
        st = tx_tensor_alloc(ctx, "tx_optim_step", dev, rank, shape, TX_DTYPE_FLOAT32, &s1);
    if (!st && kind == 2)
        st = tx_tensor_alloc(ctx, "tx_optim_step", dev, rank, shape, TX_DTYPE_FLOAT32, &s2);
    if (!st) { /* slots after the allocations (they may move the table) */
        tx_optim_call c = {.kind = kind,
                           .nesterov = d->nesterov,
                           .first = kind == 1 && !o->s1[i].id,
                           .p = tx_slot_get(ctx, p),
                           .g = tx_slot_get(ctx, g),
                           .s1 = o->s1[i].id ? tx_slot_get(ctx, o->s1[i]) : NULL,
                           .s2 = o->s2[i].id ? tx_slot_get(ctx, o->s2[i]) : NULL,
                           .coefs = tx_slot_get(ctx, coefs),
                           .y = tx_slot_get(ctx, y),
                           .s1_out = s1.id ? tx_slot_get(ctx, s1) : NULL,
                           .s2_out = s2.id ? tx_slot_get(ctx, s2) : NULL};
        for (int k = 0; k < 8; k++)
            c.coef[k] = coef[k];
        st = TX_OP_KERNEL(ctx, dev, optim, c);
    }
    if (st) {
        tx_tensor made[3] = {y, s1, s2};
        for (int k = 0; k < 3; k++)
            if (made[k].id)
                tx_tensor_destroy(ctx, made[k]);
        return st;
    }
    tx_tensor_swap_storage(ctx, p, y); /* p's handle gets the new values */
    tx_tensor_destroy(ctx, y);
    tx_tensor *state[2] = {&o->s1[i], &o->s2[i]}, made[2] = {s1, s2};
    for (int k = 0; k < 2; k++)
        if (made[k].id) {
            if (state[k]->id)
                tx_tensor_destroy(ctx, *state[k]);
            *state[k] = made[k];
        }
    return TX_STATUS_OK;
}

tx_status tx_optim_step(tx_ctx *ctx, tx_optim *opt, const tx_tensor *params, const tx_tensor *grads,
                        int n) {
    tx_status st = tx_check_arg(ctx, "tx_optim_step", "opt", opt != NULL);
    if (!st)
        st = tx_check_arg(ctx, "tx_optim_step", "params and grads", n == 0 || (params && grads));
    if (st)
        return st;
    if (n < 0 || (opt->n && n != opt->n))
        return tx_fail(ctx, TX_STATUS_INVALID_ARGUMENT,
                       "tx_optim_step: %d parameters, the optimizer's state is for %d", n, opt->n);
    for (int i = 0; i < n; i++) {
        tx_slot *ps, *gs;
        st = tx_check_input(ctx, "tx_optim_step", "param", params[i], true, &ps);
        if (!st)
            st = tx_check_input(ctx, "tx_optim_step", "grad", grads[i], true, &gs);
        if (st)
            return st;
        if (ps->numel != gs->numel || ps->rank != gs->rank)
            return tx_fail(ctx, TX_STATUS_SHAPE_MISMATCH,
                           "tx_optim_step: param %d has %lld elements, its grad %lld", i,
                           (long long)ps->numel, (long long)gs->numel);
    }
    if (!opt->n && n) {
        opt->s1 = calloc((size_t)n, sizeof *opt->s1);
        opt->s2 = calloc((size_t)n, sizeof *opt->s2);
        if (!opt->s1 || !opt->s2) {
            free_state(ctx, opt);
            return tx_fail(ctx, TX_STATUS_OUT_OF_MEMORY, "tx_optim_step: out of host memory");
        }
        opt->n = n;
    }
    opt->t++;
    const tx_optim_desc *d = &opt->d;
    bool adam = d->kind == TX_OPTIM_ADAM || d->kind == TX_OPTIM_ADAMW;
    bool decoupled = d->kind == TX_OPTIM_ADAMW;
    double t = (double)opt->t;
    float coef[8] = {d->lr,
                     decoupled ? 0.0f : d->weight_decay,
                     adam ? d->beta1 : d->momentum,
                     d->beta2,
                     d->epsilon,
                     (float)(1.0 / (1.0 - pow(d->beta1, t))),
                     (float)(1.0 / (1.0 - pow(d->beta2, t))),
                     decoupled ? 1.0f - d->lr * d->weight_decay : 1.0f};
    tx_tape_pause(ctx);
    /* the coefficients: one small tensor per step and device, shared by the params */
    tx_tensor coefs[TX_DEVICE_COUNT_] = {{0}};
    for (int i = 0; i < n && !st; i++) {
        tx_device dev = gx_slot(ctx, params[i])->st->dev;
        if (!coefs[dev].id)
            st = tx_tensor_create(
                ctx, &(tx_tensor_desc){.rank = 1, .shape = {8}, .data = coef, .device = dev},
                &coefs[dev]);
        if (!st)
            st = step_one(ctx, opt, i, params[i], grads[i], coefs[dev], coef);
    }
    for (int k = 0; k < TX_DEVICE_COUNT_; k++)
        if (coefs[k].id)
            tx_tensor_destroy(ctx, coefs[k]);
    tx_tape_resume(ctx);
    return st;
}
