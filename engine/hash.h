/* FNV-1a, the one byte hash of the engine (program-cache keys, model files). */
#ifndef TX_HASH_H
#define TX_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t tx_fnv1a(const void *bytes, size_t len) {
    const unsigned char *p = bytes;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif
