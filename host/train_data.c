/* The digits data, the seeded generator, initial weights and batch order
 * shared by the engine trainer and the reference trainer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

uint64_t tx_rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float tx_rng_uniform(uint64_t *s, float lo, float hi) {
    return lo + (hi - lo) * (float)(tx_rng_next(s) >> 40) / 16777216.0f;
}

void tx_init_weights(float *w, int64_t n, int fan_in, uint64_t *rng) {
    float a = sqrtf(6.0f / (float)fan_in);
    for (int64_t i = 0; i < n; i++)
        w[i] = tx_rng_uniform(rng, -a, a);
}

void tx_epoch_order(int n, uint64_t seed, int epoch, int *order) {
    uint64_t s = seed * 1000003u + (uint64_t)epoch + 1;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tx_rng_next(&s) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

void tx_digits_free(tx_digits *d) {
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

int tx_digits_load(const char *path, tx_digits *d, char *err, size_t err_len) {
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_len,
                 "cannot open %s (scripts/setup.sh fetches the digits; or pass --data FILE)", path);
        return -1;
    }
    int cap = 2048;
    d->x = malloc(sizeof(float) * 64 * (size_t)cap);
    d->y = malloc(sizeof(int32_t) * (size_t)cap);
    char line[1024];
    int bad = 0;
    while (d->x && d->y && fgets(line, sizeof line, f)) {
        if (d->n == cap) {
            bad = 1;
            snprintf(err, err_len, "%s: more than %d rows", path, cap);
            break;
        }
        char *p = line;
        float v[65];
        int k = 0;
        for (; k < 65; k++) {
            char *end;
            v[k] = strtof(p, &end);
            if (end == p)
                break;
            p = *end == ',' ? end + 1 : end;
        }
        if (k != 65 || v[64] < 0 || v[64] > 9 || v[64] != (float)(int)v[64]) {
            bad = 1;
            snprintf(err, err_len, "%s: line %d: want 64 pixel values and a label 0..9", path,
                     d->n + 1);
            break;
        }
        for (int i = 0; i < 64; i++)
            d->x[(size_t)d->n * 64 + (size_t)i] = v[i] / 16.0f;
        d->y[d->n++] = (int32_t)v[64];
    }
    fclose(f);
    if (!d->x || !d->y) {
        snprintf(err, err_len, "out of memory");
        bad = 1;
    }
    if (!bad && d->n < 20) {
        snprintf(err, err_len, "%s: %d rows: too few to train on", path, d->n);
        bad = 1;
    }
    if (bad) {
        tx_digits_free(d);
        return -1;
    }
    return 0;
}

int tx_digits_split(const tx_digits *d, uint64_t seed, int test, tx_digits *train,
                    tx_digits *held) {
    int *order = malloc(sizeof(int) * (size_t)d->n);
    if (!order)
        return -1;
    tx_epoch_order(d->n, seed, -1, order);
    tx_digits *parts[2] = {train, held};
    int counts[2] = {d->n - test, test};
    for (int p = 0, at = 0; p < 2; p++) {
        tx_digits *o = parts[p];
        o->n = counts[p];
        o->x = malloc(sizeof(float) * 64 * (size_t)(o->n ? o->n : 1));
        o->y = malloc(sizeof(int32_t) * (size_t)(o->n ? o->n : 1));
        if (!o->x || !o->y) {
            free(order);
            return -1;
        }
        for (int i = 0; i < o->n; i++, at++) {
            memcpy(o->x + (size_t)i * 64, d->x + (size_t)order[at] * 64, sizeof(float) * 64);
            o->y[i] = d->y[order[at]];
        }
    }
    free(order);
    return 0;
}
