/* The plain-C reference trainer: the digits MLP written out by hand (forward,
 * softmax cross-entropy, backward, SGD with momentum), double accumulation.
 * `texel train --check-reference` runs it on the same data, weights and
 * batches as the engine and compares every step's loss and the final weights. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* y[b, j] = sum_i x[b, i] w[i, j] + bias[j] */
static void dense(const float *x, const float *w, const float *bias, int B, int I, int J,
                  float *y) {
    for (int b = 0; b < B; b++)
        for (int j = 0; j < J; j++) {
            double s = bias[j];
            for (int i = 0; i < I; i++)
                s += (double)x[b * I + i] * w[i * J + j];
            y[b * J + j] = (float)s;
        }
}

/* dw = x^T g, db = sum_b g, dx = g w^T (dx may be NULL) */
static void dense_back(const float *x, const float *w, const float *g, int B, int I, int J,
                       float *dw, float *db, float *dx) {
    for (int i = 0; i < I; i++)
        for (int j = 0; j < J; j++) {
            double s = 0;
            for (int b = 0; b < B; b++)
                s += (double)x[b * I + i] * g[b * J + j];
            dw[i * J + j] = (float)s;
        }
    for (int j = 0; j < J; j++) {
        double s = 0;
        for (int b = 0; b < B; b++)
            s += g[b * J + j];
        db[j] = (float)s;
    }
    for (int b = 0; dx && b < B; b++)
        for (int i = 0; i < I; i++) {
            double s = 0;
            for (int j = 0; j < J; j++)
                s += (double)g[b * J + j] * w[i * J + j];
            dx[b * I + i] = (float)s;
        }
}

static void momentum(float *p, float *v, const float *g, int n, float lr) {
    for (int i = 0; i < n; i++) {
        v[i] = 0.9f * v[i] + g[i];
        p[i] -= lr * v[i];
    }
}

void tx_mlp_ref_train(tx_mlp_ref *m, const tx_digits *train, int batch, int epochs, float lr,
                      uint64_t seed, double *loss) {
    int H = m->hidden, steps = train->n / batch, n1 = 64 * H, n2 = H * 10;
    float *buf = calloc((size_t)(2 * (n1 + H + n2 + 10) + batch * (64 + 3 * H + 20)), 4);
    int *order = malloc(sizeof(int) * (size_t)train->n);
    if (!buf || !order) {
        free(buf);
        free(order);
        return;
    }
    float *g1 = buf, *gb1 = g1 + n1, *g2 = gb1 + H, *gb2 = g2 + n2;
    float *v1 = gb2 + 10, *vb1 = v1 + n1, *v2 = vb1 + H, *vb2 = v2 + n2;
    float *x = vb2 + 10, *h = x + batch * 64, *dh = h + batch * H, *z = dh + batch * H;
    float *lg = z + batch * H, *dl = lg + batch * 10;
    for (int e = 0, k = 0; e < epochs; e++) {
        tx_epoch_order(train->n, seed, e, order);
        for (int s = 0; s < steps; s++, k++) {
            for (int b = 0; b < batch; b++)
                memcpy(x + b * 64, train->x + (size_t)order[s * batch + b] * 64, 64 * 4);
            dense(x, m->w1, m->b1, batch, 64, H, z);
            for (int i = 0; i < batch * H; i++)
                h[i] = z[i] > 0 ? z[i] : 0;
            dense(h, m->w2, m->b2, batch, H, 10, lg);
            double total = 0;
            for (int b = 0; b < batch; b++) { /* softmax - one-hot, / batch */
                int lab = train->y[order[s * batch + b]];
                double mx = -INFINITY, se = 0;
                for (int c = 0; c < 10; c++)
                    mx = fmax(mx, lg[b * 10 + c]);
                for (int c = 0; c < 10; c++)
                    se += exp(lg[b * 10 + c] - mx);
                total += -(lg[b * 10 + lab] - mx - log(se));
                for (int c = 0; c < 10; c++)
                    dl[b * 10 + c] =
                        (float)((exp(lg[b * 10 + c] - mx) / se - (c == lab)) / (double)batch);
            }
            loss[k] = total / batch;
            dense_back(h, m->w2, dl, batch, H, 10, g2, gb2, dh);
            for (int i = 0; i < batch * H; i++)
                dh[i] = z[i] > 0 ? dh[i] : 0;
            dense_back(x, m->w1, dh, batch, 64, H, g1, gb1, NULL);
            momentum(m->w1, v1, g1, n1, lr);
            momentum(m->b1, vb1, gb1, H, lr);
            momentum(m->w2, v2, g2, n2, lr);
            momentum(m->b2, vb2, gb2, 10, lr);
        }
    }
    free(buf);
    free(order);
}
