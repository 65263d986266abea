/* Fuzz target: the CLI's shape syntax ("2x3x4", "scalar"), the one parser of
 * caller text in the engine core today. Invariants: a rank in -1..6, and for
 * a parsed shape only non-negative dims. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    int64_t shape[TX_MAX_RANK];
    int rank = tx_parse_shape(s, shape);
    if (rank < -1 || rank > TX_MAX_RANK)
        abort();
    for (int i = 0; i < rank; i++)
        if (shape[i] < 0)
            abort();
    free(s);
    return 0;
}
