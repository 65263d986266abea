/* libFuzzer entry points every target defines (tests/fuzz/README.md). The
 * same target builds two ways: with clang -fsanitize=fuzzer for
 * `bash tests/fuzz/run.sh TARGET SECONDS`, and with any compiler against
 * standalone.c, which replays the committed corpus (seeds and every input
 * that ever crashed) in the ordinary test suite. */
#ifndef TX_FUZZ_H
#define TX_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Once per process; may exit(77) when the target needs a GL context and
 * none can be had. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
/* One input; returns 0. A crash, a sanitizer report or abort() is a finding. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
