/* The model's arena: zeroed bump allocations in 64 KiB blocks, freed all at once. */
#include <string.h>

#include "model.h"

/* Under AddressSanitizer the free part of each block stays poisoned and every
 * allocation is followed by a poisoned redzone, so an overflow of one arena
 * array into the next is reported like a heap overflow (without this, arrays
 * sharing a block hide each other's overruns from ASan and the fuzzers). */
#if defined(__SANITIZE_ADDRESS__)
#define TX_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TX_ARENA_ASAN 1
#endif
#endif
#ifdef TX_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define ARENA_REDZONE 16
#else
#define ASAN_POISON_MEMORY_REGION(p, n)   ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ARENA_REDZONE                     0
#endif

typedef struct tx_arena_block {
    struct tx_arena_block *next;
    size_t used, cap;
    bool alone; /* holds one allocation (a big one, or tx_arena_alloc_alone's) */
    max_align_t data[];
} tx_arena_block;

struct tx_arena {
    tx_arena_block *head;
};

tx_arena *tx_arena_create(void) {
    return calloc(1, sizeof(tx_arena));
}

static void *arena_alloc(tx_arena *a, size_t want, bool alone) {
    if (want > SIZE_MAX / 2)
        return NULL;
    size_t n = ((want + 15) & ~(size_t)15) + ARENA_REDZONE;
    if (n == 0)
        n = 16;
    tx_arena_block *b = alone ? NULL : a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 || alone ? n : 65536;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->alone = n > 65536 || alone;
        ASAN_POISON_MEMORY_REGION(b->data, cap);
        /* a big payload gets its own block behind the current one, so the
         * current block's free space stays usable */
        if (a->head && (n > 65536 || alone)) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    ASAN_UNPOISON_MEMORY_REGION(p, want);
    memset(p, 0, want);
    return p;
}

void *tx_arena_alloc(tx_arena *a, size_t want) {
    return arena_alloc(a, want, false);
}

void *tx_arena_alloc_alone(tx_arena *a, size_t want) {
    return arena_alloc(a, want, true);
}

void tx_arena_release(tx_arena *a, void *p) {
    for (tx_arena_block **at = a ? &a->head : NULL; at && *at; at = &(*at)->next) {
        tx_arena_block *b = *at;
        if ((void *)b->data == p) {
            if (!b->alone) /* a shared block: stays */
                return;
            *at = b->next;
            ASAN_UNPOISON_MEMORY_REGION(b->data, b->cap);
            free(b);
            return;
        }
    }
}

size_t tx_arena_bytes(const tx_arena *a) {
    size_t n = 0;
    for (const tx_arena_block *b = a ? a->head : NULL; b; b = b->next)
        n += sizeof *b + b->cap;
    return n;
}

void tx_arena_destroy(tx_arena *a) {
    if (!a)
        return;
    for (tx_arena_block *b = a->head; b;) {
        tx_arena_block *n = b->next;
        ASAN_UNPOISON_MEMORY_REGION(b->data, b->cap);
        free(b);
        b = n;
    }
    free(a);
}
