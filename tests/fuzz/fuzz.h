/* Shared by the fuzz targets and replay_main.c. */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* libFuzzer's entry point; each fuzz_<t>.c defines it. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant of the code under test: on failure print where and abort, so both libFuzzer and
 * the ctest replay report it (assert() would vanish under NDEBUG). */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
