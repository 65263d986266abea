/* `texel train`: what the engine trainer (host/train.c) and the plain-C
 * reference trainer (host/train_ref.c) share, so that both see the same data,
 * the same initial weights and the same batches (host/train_data.c). */
#ifndef TX_HOST_TRAIN_H
#define TX_HOST_TRAIN_H

#include <stddef.h>
#include <stdint.h>

/* The sklearn digits: n images of 8x8 pixels scaled to [0, 1], labels 0..9. */
typedef struct tx_digits {
    int n;
    float *x; /* n * 64 */
    int32_t *y;
} tx_digits;

/* Reads digits.csv (64 pixel values 0..16 and the label per line). */
int tx_digits_load(const char *path, tx_digits *d, char *err, size_t err_len);
void tx_digits_free(tx_digits *d);
/* Splits d by a seeded shuffle: the last `test` rows held out. */
int tx_digits_split(const tx_digits *d, uint64_t seed, int test, tx_digits *train, tx_digits *held);

/* A seeded generator (splitmix64); uniform floats in [lo, hi). */
uint64_t tx_rng_next(uint64_t *s);
float tx_rng_uniform(uint64_t *s, float lo, float hi);
/* He-uniform initial weights: U(-sqrt(6 / fan_in), +sqrt(6 / fan_in)). */
void tx_init_weights(float *w, int64_t n, int fan_in, uint64_t *rng);
/* The order of the training rows in epoch e (a permutation of 0..n-1). */
void tx_epoch_order(int n, uint64_t seed, int epoch, int *order);

/* The MLP 64 -> hidden (relu) -> 10, softmax cross-entropy (mean), trained
 * by SGD with momentum 0.9 in plain C: the reference the engine's training
 * must match. w1 [64, hidden], b1 [hidden], w2 [hidden, 10], b2 [10] hold
 * the initial weights and are updated; loss[step] gets each step's loss. */
typedef struct tx_mlp_ref {
    int hidden;
    float *w1, *b1, *w2, *b2;
} tx_mlp_ref;
void tx_mlp_ref_train(tx_mlp_ref *m, const tx_digits *train, int batch, int epochs, float lr,
                      uint64_t seed, double *loss);

#endif
