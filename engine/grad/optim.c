/* Optimizers: SGD, momentum (and Nesterov), Adam, AdamW.
 *
 * Each update is a short chain of elementwise engine ops on the parameter's
 * device (not yet one fused draw per parameter); the new values then replace
 * the parameter's storage under its handle (swap_storage), so the caller's
 * tensor is updated in place and the optimizer's state tensors (velocity,
 * Adam's moments) stay on the device between steps. */
#include <math.h>
#include <stdlib.h>

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

/* a · s + b · t (t may be {0}: a · s), kept in l. */
static tx_status axpby(tx_ctx *ctx, tx_tensor s, float a, tx_tensor t, float b, gx_tmps *l,
                       tx_tensor *out) {
    tx_tensor u, v;
    tx_status st = a == 1.0f ? (*out = s, TX_STATUS_OK) : gx_bin_s(ctx, TX_OP_MUL, s, a, l, out);
    if (st || !t.id)
        return st;
    u = *out;
    st = b == 1.0f ? (v = t, TX_STATUS_OK) : gx_bin_s(ctx, TX_OP_MUL, t, b, l, &v);
    return st ? st : gx_bin(ctx, TX_OP_ADD, u, v, l, out);
}

/* Makes `keep` (in l) the new value of the state slot *s (the old one freed). */
static void set_state(tx_ctx *ctx, gx_tmps *l, tx_tensor keep, tx_tensor *s) {
    for (int i = 0; i < l->n; i++)
        if (l->t[i].id == keep.id)
            l->t[i] = l->t[--l->n];
    if (s->id)
        tx_tensor_destroy(ctx, *s);
    *s = keep;
}

/* The new value of one parameter, in *np (kept in l). */
static tx_status update(tx_ctx *ctx, tx_optim *o, int i, tx_tensor p, tx_tensor g, gx_tmps *l,
                        tx_tensor *np) {
    const tx_optim_desc *d = &o->d;
    tx_status st = TX_STATUS_OK;
    bool decoupled = d->kind == TX_OPTIM_ADAMW;
    if (d->weight_decay > 0 && !decoupled)
        st = axpby(ctx, g, 1.0f, p, d->weight_decay, l, &g);
    if (st)
        return st;
    tx_tensor step;
    if (d->kind == TX_OPTIM_SGD) {
        step = g;
    } else if (d->kind == TX_OPTIM_MOMENTUM) {
        tx_tensor v;
        st = o->s1[i].id ? axpby(ctx, o->s1[i], d->momentum, g, 1.0f, l, &v)
                         : tx_identity(ctx, g, &v);
        if (!st && !o->s1[i].id)
            gx_keep(l, v);
        if (st)
            return st;
        set_state(ctx, l, v, &o->s1[i]);
        step = v;
        if (d->nesterov)
            st = axpby(ctx, g, 1.0f, v, d->momentum, l, &step);
    } else {
        tx_tensor m, v, g2, den, mh;
        if (!o->s1[i].id) {
            const tx_slot *ps = gx_slot(ctx, p);
            gx_tmps z = {0};
            st = gx_fill(ctx, ps->st->dev, ps->rank, ps->shape, 0.0f, &z, &o->s1[i]);
            if (!st)
                st = gx_fill(ctx, ps->st->dev, ps->rank, ps->shape, 0.0f, &z, &o->s2[i]);
            if (st) {
                gx_free(ctx, &z);
                o->s1[i] = o->s2[i] = (tx_tensor){0};
                return st;
            }
        }
        double t = (double)o->t;
        float c1 = (float)(1.0 - pow(d->beta1, t)), c2 = (float)(1.0 - pow(d->beta2, t));
        st = axpby(ctx, o->s1[i], d->beta1, g, 1.0f - d->beta1, l, &m);
        if (!st)
            st = gx_bin(ctx, TX_OP_MUL, g, g, l, &g2);
        if (!st)
            st = axpby(ctx, o->s2[i], d->beta2, g2, 1.0f - d->beta2, l, &v);
        if (st)
            return st;
        set_state(ctx, l, m, &o->s1[i]);
        set_state(ctx, l, v, &o->s2[i]);
        /* step = (m / c1) / (sqrt(v / c2) + eps) */
        st = gx_bin_s(ctx, TX_OP_MUL, v, 1.0f / c2, l, &den);
        if (!st)
            st = tx_unary(ctx, TX_OP_SQRT, den, &den);
        if (!st)
            gx_keep(l, den);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_ADD, den, d->epsilon, l, &den);
        if (!st)
            st = gx_bin_s(ctx, TX_OP_MUL, m, 1.0f / c1, l, &mh);
        if (!st)
            st = gx_bin(ctx, TX_OP_DIV, mh, den, l, &step);
    }
    if (st)
        return st;
    float keep = decoupled ? 1.0f - d->lr * d->weight_decay : 1.0f;
    return axpby(ctx, p, keep, step, -d->lr, l, np);
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
    tx_tape_pause(ctx);
    for (int i = 0; i < n && !st; i++) {
        gx_tmps l = {0};
        tx_tensor np;
        st = update(ctx, opt, i, params[i], grads[i], &l, &np);
        if (!st)
            tx_tensor_swap_storage(ctx, params[i], np);
        gx_free(ctx, &l);
    }
    tx_tape_resume(ctx);
    return st;
}
