/* texel train [--model mlp|cnn] [--epochs N] [--batch B] [--lr LR]
 *             [--optim sgd|momentum|adam|adamw] [--hidden H] [--seed S]
 *             [--device gpu|cpu] [--data FILE] [--test N] [--smoke]
 *             [--min-accuracy A] [--check-reference] [--json]
 *
 * Trains a small classifier on the sklearn digits (1,797 8x8 images; the CSV
 * that scripts/setup.sh extracts from Debian's python3-sklearn) with the
 * engine's tape and optimizers, and reports the loss per epoch and the
 * accuracy on the held-out rows (the last --test of a seeded shuffle).
 *   mlp: 64 -> hidden (relu) -> 10
 *   cnn: conv 3x3 x8 (relu) -> maxpool 2 -> conv 3x3 x16 (relu) -> maxpool 2 -> dense 10
 * --smoke: 3 epochs unless --epochs says otherwise; fails (exit 1) unless the
 * last epoch's mean loss is below the first's. --min-accuracy: fails below it.
 * --check-reference (mlp): trains with SGD + momentum 0.9 and compares every
 * step's loss and the final weights with the plain-C trainer (host/train_ref.c)
 * on the same data, weights and batches: |engine - reference| must stay
 * within 1e-3 + 1e-3 |reference|. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cmds.h"
#include "glctx.h"
#include "texel.h"
#include "train.h"

typedef struct opts {
    bool cnn, smoke, check_ref, json;
    int epochs, batch, hidden, test;
    float lr, min_acc;
    tx_optim_kind optim;
    uint64_t seed;
    tx_device device;
    const char *data;
} opts;

typedef struct model {
    int n;
    tx_tensor p[6];
} model;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

const char tx_usage_train[] =
    "usage: texel train [--model mlp|cnn] [--epochs N] [--batch B] [--lr LR]\n"
    "           [--optim sgd|momentum|adam|adamw] [--hidden H] [--seed S]\n"
    "           [--device gpu|cpu] [--data FILE] [--test N] [--smoke]\n"
    "           [--min-accuracy A] [--check-reference] [--json]\n";

/* A usage error naming the option (and its value) that was wrong. */
static int bad_value(const char *a, const char *v) {
    return tx_cli_usage_error("train", tx_usage_train, "%s %s: not a valid value", a, v);
}

/* The parameters' shapes and fan-ins, in order. */
static int param_shapes(const opts *o, int64_t shapes[6][4], int ranks[6], int fans[6]) {
    if (!o->cnn) {
        int64_t s[4][2] = {{64, o->hidden}, {o->hidden}, {o->hidden, 10}, {10}};
        int r[4] = {2, 1, 2, 1}, f[4] = {64, 0, o->hidden, 0};
        for (int i = 0; i < 4; i++) {
            memcpy(shapes[i], s[i], sizeof s[i]);
            ranks[i] = r[i];
            fans[i] = f[i];
        }
        return 4;
    }
    int64_t s[6][4] = {{8, 1, 3, 3}, {8}, {16, 8, 3, 3}, {16}, {64, 10}, {10}};
    int r[6] = {4, 1, 4, 1, 2, 1}, f[6] = {9, 0, 72, 0, 64, 0};
    for (int i = 0; i < 6; i++) {
        memcpy(shapes[i], s[i], sizeof s[i]);
        ranks[i] = r[i];
        fans[i] = f[i];
    }
    return 6;
}

/* Seeded initial weights (biases 0), uploaded; host copies in init[i] if given. */
static tx_status model_create(tx_ctx *ctx, const opts *o, model *m, float *init[6]) {
    int64_t shapes[6][4];
    int ranks[6], fans[6];
    m->n = param_shapes(o, shapes, ranks, fans);
    uint64_t rng = o->seed;
    for (int i = 0; i < m->n; i++) {
        int64_t n = 1;
        for (int j = 0; j < ranks[i]; j++)
            n *= shapes[i][j];
        float *w = calloc((size_t)n, sizeof *w);
        if (!w)
            return TX_STATUS_OUT_OF_MEMORY;
        if (fans[i])
            tx_init_weights(w, n, fans[i], &rng);
        tx_tensor_desc d = {.rank = ranks[i], .data = w, .device = o->device};
        memcpy(d.shape, shapes[i], sizeof(int64_t) * 4);
        tx_status st = tx_tensor_create(ctx, &d, &m->p[i]);
        if (init)
            init[i] = w;
        else
            free(w);
        if (st)
            return st;
    }
    return TX_STATUS_OK;
}

/* logits [B, 10] of x [B, 64]. */
static tx_status forward(tx_ctx *ctx, const opts *o, const model *m, tx_tensor x, int64_t B,
                         tx_tensor *logits) {
    if (!o->cnn) {
        tx_tensor h;
        tx_status st = tx_matmul(ctx, x, m->p[0],
                                 &(tx_matmul_desc){.bias = m->p[1], .activation = TX_OP_RELU}, &h);
        if (st)
            return st;
        st = tx_matmul(ctx, h, m->p[2], &(tx_matmul_desc){.bias = m->p[3]}, logits);
        tx_tensor_destroy(ctx, h);
        return st;
    }
    tx_tensor t[7] = {{0}};
    tx_pool_desc pool = {.kernel_shape = {2, 2}, .strides = {2, 2}};
    tx_status st = tx_tensor_reshape(ctx, x, 4, (int64_t[]){B, 1, 8, 8}, &t[0]);
    for (int k = 0; k < 4 && !st; k += 2) { /* two conv + relu + 2x2 max-pool blocks */
        st = tx_conv(
            ctx, t[k], m->p[k],
            &(tx_conv_desc){.pads = {1, 1, 1, 1}, .bias = m->p[k + 1], .activation = TX_OP_RELU},
            &t[k + 1]);
        if (!st)
            st = tx_pooling(ctx, TX_OP_MAXPOOL, t[k + 1], &pool, &t[k + 2]);
    }
    if (!st)
        st = tx_tensor_reshape(ctx, t[4], 2, (int64_t[]){B, 64}, &t[5]);
    if (!st)
        st = tx_matmul(ctx, t[5], m->p[4], &(tx_matmul_desc){.bias = m->p[5]}, logits);
    for (int i = 0; i < 7; i++)
        if (t[i].id)
            tx_tensor_destroy(ctx, t[i]);
    return st;
}

static tx_status batch_tensors(tx_ctx *ctx, const opts *o, const tx_digits *d, const int *rows,
                               int B, tx_tensor *x, tx_tensor *y) {
    float *xb = malloc(sizeof(float) * 64 * (size_t)B);
    int32_t *yb = malloc(sizeof(int32_t) * (size_t)B);
    tx_status st = TX_STATUS_OUT_OF_MEMORY;
    if (xb && yb) {
        for (int b = 0; b < B; b++) {
            int r = rows ? rows[b] : b;
            memcpy(xb + (size_t)b * 64, d->x + (size_t)r * 64, sizeof(float) * 64);
            yb[b] = d->y[r];
        }
        st = tx_tensor_create(
            ctx, &(tx_tensor_desc){.rank = 2, .shape = {B, 64}, .data = xb, .device = o->device},
            x);
        if (!st && y) {
            st = tx_tensor_create(ctx,
                                  &(tx_tensor_desc){.rank = 1,
                                                    .shape = {B},
                                                    .dtype = TX_DTYPE_INT32,
                                                    .data = yb,
                                                    .device = o->device},
                                  y);
            if (st)
                tx_tensor_destroy(ctx, *x);
        }
    }
    free(xb);
    free(yb);
    return st;
}

/* One step: loss (read back) and the optimizer's update. */
static tx_status step(tx_ctx *ctx, const opts *o, model *m, tx_optim *opt, tx_tensor x, tx_tensor y,
                      float *loss) {
    tx_tape *tape;
    tx_tensor logits = {0}, l = {0}, grads[6] = {{0}};
    tx_status st = tx_tape_begin(ctx, &tape);
    if (st)
        return st;
    int64_t shape[TX_MAX_RANK];
    tx_tensor_shape(ctx, x, &(int){0}, shape, NULL);
    int64_t B = shape[0];
    st = forward(ctx, o, m, x, B, &logits);
    if (!st)
        st = tx_softmax_cross_entropy(ctx, logits, y, NULL, &l, NULL);
    if (!st)
        st = tx_tape_grad(ctx, tape, l, m->p, m->n, grads);
    tx_tape_end(ctx, tape);
    if (!st)
        st = tx_tensor_read(ctx, l, loss, sizeof *loss);
    if (!st)
        st = tx_optim_step(ctx, opt, m->p, grads, m->n);
    for (int i = 0; i < m->n; i++)
        if (grads[i].id)
            tx_tensor_destroy(ctx, grads[i]);
    if (logits.id)
        tx_tensor_destroy(ctx, logits);
    if (l.id)
        tx_tensor_destroy(ctx, l);
    return st;
}

/* Held-out accuracy in [0, 1]. */
static tx_status evaluate(tx_ctx *ctx, const opts *o, const model *m, const tx_digits *d,
                          double *acc) {
    int right = 0;
    float *lg = malloc(sizeof(float) * 10 * 512);
    if (!lg)
        return TX_STATUS_OUT_OF_MEMORY;
    tx_status st = TX_STATUS_OK;
    for (int at = 0; at < d->n && !st; at += 512) {
        int B = d->n - at < 512 ? d->n - at : 512;
        tx_digits part = {.n = B, .x = d->x + (size_t)at * 64, .y = d->y + at};
        tx_tensor x, logits;
        st = batch_tensors(ctx, o, &part, NULL, B, &x, NULL);
        if (st)
            break;
        st = forward(ctx, o, m, x, B, &logits);
        tx_tensor_destroy(ctx, x);
        if (st)
            break;
        st = tx_tensor_read(ctx, logits, lg, sizeof(float) * 10 * (size_t)B);
        tx_tensor_destroy(ctx, logits);
        for (int b = 0; b < B && !st; b++) {
            int best = 0;
            for (int c = 1; c < 10; c++)
                if (lg[b * 10 + c] > lg[b * 10 + best])
                    best = c;
            right += best == part.y[b];
        }
    }
    free(lg);
    *acc = d->n ? (double)right / d->n : 0;
    return st;
}

static int parse(int argc, char **argv, opts *o) {
    *o = (opts){.epochs = 0,
                .batch = 32,
                .hidden = 64,
                .test = 360,
                .seed = 1,
                .optim = TX_OPTIM_ADAM,
                .device = TX_DEVICE_GPU,
                .min_acc = -1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool more = true;
        static const char *const value_opts[] = {
            "--model",        "--epochs", "--batch", "--hidden", "--test",  "--lr",
            "--min-accuracy", "--seed",   "--data",  "--device", "--optim", NULL};
        if (tx_cli_is_help(a))
            return -1;
        if (strcmp(a, "--smoke") == 0)
            o->smoke = true, more = false;
        else if (strcmp(a, "--check-reference") == 0)
            o->check_ref = true, more = false;
        else if (strcmp(a, "--json") == 0)
            o->json = true, more = false;
        else if (!tx_cli_in(a, value_opts))
            return tx_cli_unknown("train", tx_usage_train, a);
        else if (!v)
            return tx_cli_no_value("train", tx_usage_train, a);
        else if (strcmp(a, "--model") == 0 && (!strcmp(v, "mlp") || !strcmp(v, "cnn")))
            o->cnn = strcmp(v, "cnn") == 0;
        else if (strcmp(a, "--epochs") == 0 && (o->epochs = atoi(v)) > 0) {
        } else if (strcmp(a, "--batch") == 0 && (o->batch = atoi(v)) > 0) {
        } else if (strcmp(a, "--hidden") == 0 && (o->hidden = atoi(v)) > 0) {
        } else if (strcmp(a, "--test") == 0 && (o->test = atoi(v)) > 0) {
        } else if (strcmp(a, "--lr") == 0 && (o->lr = strtof(v, NULL)) > 0) {
        } else if (strcmp(a, "--min-accuracy") == 0)
            o->min_acc = strtof(v, NULL);
        else if (strcmp(a, "--seed") == 0)
            o->seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--data") == 0)
            o->data = v;
        else if (strcmp(a, "--device") == 0 && (!strcmp(v, "gpu") || !strcmp(v, "cpu")))
            o->device = tx_device_from_name(v);
        else if (strcmp(a, "--optim") == 0) {
            const char *k[] = {"sgd", "momentum", "adam", "adamw"};
            int f = -1;
            for (int j = 0; j < 4; j++)
                if (strcmp(v, k[j]) == 0)
                    f = j;
            if (f < 0)
                return bad_value(a, v);
            o->optim = (tx_optim_kind)f;
        } else
            return bad_value(a, v);
        i += more;
    }
    if (o->check_ref) {
        if (o->cnn)
            return tx_cli_usage_error("train", tx_usage_train,
                                      "--check-reference trains the MLP (not --model cnn)");
        o->optim = TX_OPTIM_MOMENTUM;
    }
    if (!o->epochs)
        o->epochs = o->smoke || o->check_ref ? (o->check_ref ? 2 : 3) : (o->cnn ? 25 : 30);
    if (o->lr == 0)
        o->lr = o->optim == TX_OPTIM_ADAM || o->optim == TX_OPTIM_ADAMW ? 0.005f : 0.05f;
    return 0;
}

/* --check-reference: the plain-C trainer from the same initial weights; the
 * worst step-loss and final-weight differences. */
static int check_reference(tx_ctx *ctx, const opts *o, const model *m, float *init[6],
                           const tx_digits *train, const double *losses, int total) {
    tx_mlp_ref r = {
        .hidden = o->hidden, .w1 = init[0], .b1 = init[1], .w2 = init[2], .b2 = init[3]};
    double *ref = calloc((size_t)total, sizeof *ref), dl = 0, dw = 0;
    if (!ref)
        return 1;
    tx_mlp_ref_train(&r, train, o->batch, o->epochs, o->lr, o->seed, ref);
    bool ok = true;
    for (int k = 0; k < total; k++) {
        double d = fabs(losses[k] - ref[k]);
        dl = d > dl ? d : dl;
        ok = ok && d <= 1e-3 + 1e-3 * fabs(ref[k]);
    }
    int64_t sizes[4] = {64 * o->hidden, o->hidden, o->hidden * 10, 10};
    for (int i = 0; i < 4; i++) {
        float *got = malloc(sizeof(float) * (size_t)sizes[i]);
        if (!got || tx_tensor_read(ctx, m->p[i], got, sizeof(float) * (size_t)sizes[i])) {
            free(got);
            free(ref);
            return 1;
        }
        for (int64_t j = 0; j < sizes[i]; j++) {
            double d = fabs((double)got[j] - init[i][j]);
            dw = d > dw ? d : dw;
            ok = ok && d <= 1e-3 + 1e-3 * fabs(init[i][j]);
        }
        free(got);
    }
    printf("reference (plain C, host/train_ref.c): %d steps, max |loss - reference| %.3g, "
           "max |weight - reference| %.3g (tolerance 1e-3 + 1e-3 |reference|): %s\n",
           total, dl, dw, ok ? "ok" : "MISMATCH");
    free(ref);
    return ok ? 0 : 1;
}

static int train_run(tx_ctx *ctx, const opts *o, const tx_digits *train, const tx_digits *held) {
    model m = {0};
    float *init[6] = {0};
    tx_optim *opt = NULL;
    int steps = train->n / o->batch, total = steps * o->epochs, rc = 0;
    double *losses = calloc((size_t)total, sizeof *losses);
    double *epoch_loss = calloc((size_t)o->epochs, sizeof *epoch_loss), acc = 0;
    int *order = malloc(sizeof(int) * (size_t)train->n);
    tx_status st = losses && epoch_loss && order ? TX_STATUS_OK : TX_STATUS_OUT_OF_MEMORY;
    if (!st)
        st = model_create(ctx, o, &m, o->check_ref ? init : NULL);
    if (!st)
        st = tx_optim_create(ctx, &(tx_optim_desc){.kind = o->optim, .lr = o->lr}, &opt);
    double t0 = now_s();
    for (int e = 0, k = 0; e < o->epochs && !st; e++) {
        tx_epoch_order(train->n, o->seed, e, order);
        double sum = 0, te = now_s();
        for (int s = 0; s < steps && !st; s++, k++) {
            tx_tensor x, y;
            float loss = 0;
            st = batch_tensors(ctx, o, train, order + s * o->batch, o->batch, &x, &y);
            if (st)
                break;
            st = step(ctx, o, &m, opt, x, y, &loss);
            tx_tensor_destroy(ctx, x);
            tx_tensor_destroy(ctx, y);
            losses[k] = loss;
            sum += loss;
        }
        if (!st)
            st = evaluate(ctx, o, &m, held, &acc);
        epoch_loss[e] = sum / steps;
        if (!st && !o->json)
            printf("epoch %d: loss %.4f, held-out accuracy %.2f%%, %.2f s\n", e + 1, epoch_loss[e],
                   100 * acc, now_s() - te);
    }
    if (st) {
        fprintf(stderr, "texel train: %s: %s\n", tx_status_name(st), tx_last_error(ctx));
        rc = 1;
    } else {
        double secs = now_s() - t0;
        bool fell = epoch_loss[o->epochs - 1] < epoch_loss[0];
        if (o->json)
            printf("{\"model\": \"%s\", \"device\": \"%s\", \"optim\": \"%s\", \"epochs\": %d, "
                   "\"batch\": %d, \"steps\": %d, \"first_loss\": %.6f, \"last_loss\": %.6f, "
                   "\"held_out\": %d, \"accuracy\": %.6f, \"seconds\": %.3f, "
                   "\"ms_per_step\": %.3f}\n",
                   o->cnn ? "cnn" : "mlp", tx_device_name(o->device),
                   (const char *[]){"sgd", "momentum", "adam", "adamw"}[o->optim], o->epochs,
                   o->batch, total, epoch_loss[0], epoch_loss[o->epochs - 1], held->n, acc, secs,
                   1000 * secs / total);
        else
            printf("%s on the %s: %d epochs x %d steps of %d in %.2f s (%.2f ms a step incl. "
                   "evaluation); held-out accuracy %.2f%% of %d\n",
                   o->cnn ? "cnn" : "mlp", tx_device_name(o->device), o->epochs, steps, o->batch,
                   secs, 1000 * secs / total, 100 * acc, held->n);
        FILE *say = o->json ? stderr : stdout;
        if (o->smoke && !fell) {
            fprintf(say, "smoke: FAIL: the loss did not fall (%.4f -> %.4f)\n", epoch_loss[0],
                    epoch_loss[o->epochs - 1]);
            rc = 1;
        } else if (o->smoke) {
            fprintf(say, "smoke: ok: the loss fell (%.4f -> %.4f)\n", epoch_loss[0],
                    epoch_loss[o->epochs - 1]);
        }
        if (o->min_acc >= 0 && 100 * acc < o->min_acc) {
            fprintf(say, "FAIL: held-out accuracy %.2f%% is below %.2f%%\n", 100 * acc,
                    (double)o->min_acc);
            rc = 1;
        }
        if (o->check_ref && check_reference(ctx, o, &m, init, train, losses, total))
            rc = 1;
    }
    tx_optim_destroy(ctx, opt);
    for (int i = 0; i < m.n; i++) {
        if (m.p[i].id)
            tx_tensor_destroy(ctx, m.p[i]);
        free(init[i]);
    }
    free(losses);
    free(epoch_loss);
    free(order);
    return rc;
}

int tx_cmd_train(int argc, char **argv) {
    opts o;
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc < 0 ? tx_cli_help(tx_usage_train) : rc;
    char path[1024], err[256];
    const char *cache = getenv("TEXEL_CACHE"), *home = getenv("HOME");
    if (o.data)
        snprintf(path, sizeof path, "%s", o.data);
    else if (cache && cache[0])
        snprintf(path, sizeof path, "%s/digits/digits.csv", cache);
    else
        snprintf(path, sizeof path, "%s/.cache/texel/digits/digits.csv", home ? home : ".");
    tx_digits all, train, held;
    if (tx_digits_load(path, &all, err, sizeof err)) {
        fprintf(stderr, "texel train: %s\n", err);
        return 1;
    }
    if (o.test >= all.n || all.n - o.test < o.batch ||
        tx_digits_split(&all, o.seed, o.test, &train, &held)) {
        fprintf(stderr, "texel train: %d rows cannot give %d held out and a batch of %d\n", all.n,
                o.test, o.batch);
        tx_digits_free(&all);
        return 2;
    }
    tx_host *h;
    tx_ctx *ctx;
    if (tx_host_open(&(tx_ctx_desc){0}, &h, &ctx)) {
        fprintf(stderr, "texel train: no GL context\n");
        return 1;
    }
    rc = train_run(ctx, &o, &train, &held);
    tx_host_close(h, ctx);
    tx_digits_free(&all);
    tx_digits_free(&train);
    tx_digits_free(&held);
    return rc;
}
