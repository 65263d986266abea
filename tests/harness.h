/* A tiny test harness: CHECK records a failure with its message and goes on;
 * each test program ends with "N passed, N failed" (and ", N skipped"). */
#ifndef TX_TEST_HARNESS_H
#define TX_TEST_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tx_test_state {
    int passed, failed, skipped;
    bool cur_failed;
    const char *cur;
    const char *filter;
} tx_test_state;

static tx_test_state tx_t;

static inline bool tx_test_begin(const char *name) {
    if (tx_t.filter && !strstr(name, tx_t.filter))
        return false;
    tx_t.cur = name;
    tx_t.cur_failed = false;
    return true;
}

static inline void tx_test_end(void) {
    if (tx_t.cur_failed) {
        tx_t.failed++;
        printf("FAIL %s\n", tx_t.cur);
    } else {
        tx_t.passed++;
        if (getenv("TEXEL_TEST_VERBOSE"))
            printf("ok   %s\n", tx_t.cur);
    }
    fflush(stdout);
}

static inline void tx_test_skip(const char *name, const char *why) {
    tx_t.skipped++;
    printf("SKIP %s: %s\n", name, why);
}

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            tx_t.cur_failed = true;                                                            \
            printf("  %s:%d: %s: check failed: %s: ", __FILE__, __LINE__, tx_t.cur, #cond);    \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

static inline int tx_test_finish(void) {
    if (tx_t.skipped)
        printf("%d passed, %d failed, %d skipped\n", tx_t.passed, tx_t.failed, tx_t.skipped);
    else
        printf("%d passed, %d failed\n", tx_t.passed, tx_t.failed);
    return tx_t.failed ? 1 : 0;
}

#endif
