/* TX_DEVICE_AUTO: which device a session's next run uses, and why (see
 * tx_session_desc in texel.h for the rules). */
#ifndef TX_MODEL_CHOOSE_H
#define TX_MODEL_CHOOSE_H

#include <stddef.h>

#include "texel.h"

typedef struct tx_session_choice {
    tx_device mode;    /* GPU, CPU or AUTO */
    tx_device current; /* the device the next run uses */
    bool decided;
    int trial;      /* auto: runs measured so far */
    int gpu_trials; /* auto: GPU runs the trial makes (until specialized) */
    double gpu_ms, cpu_ms;
    uint64_t runs[TX_DEVICE_COUNT_];
    uint64_t model_hash;
    char cache_path[512]; /* "": remember nothing */
    char reason[192];
} tx_session_choice;

/* Fixed devices are decided at once; auto looks at the renderer and the
 * cache file first. */
void tx_choice_init(tx_ctx *ctx, tx_session_choice *c, const tx_session_desc *desc,
                    const void *bytes, size_t len);
/* After a successful run on c->current that took `ms`: counts it, advances
 * auto's trial and, at its end, decides (and remembers the decision). */
void tx_choice_record(tx_ctx *ctx, tx_session_choice *c, double ms);

#endif
