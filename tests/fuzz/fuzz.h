/* fuzz.h - the fuzz targets, shared by the libFuzzer harnesses (built with
 * --enable-fuzzing) and by tests/test_fuzz, which replays the seed corpus
 * and every input a fuzzer ever found (tests/fuzz/regress/) under the
 * normal and sanitizer builds.  A target returns 0; it aborts (FUZZ_FAIL)
 * when an oracle fails, so that libFuzzer records the input. */
#ifndef COMMSIM_FUZZ_H
#define COMMSIM_FUZZ_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A failed oracle: say why and abort (libFuzzer then saves the input). */
#define FUZZ_FAIL(...)         \
  do {                         \
    g_printerr(__VA_ARGS__);   \
    g_printerr("\n");          \
    abort();                   \
  } while (0)

/* YAML text -> validated scenario -> network -> routes, or a located error. */
int cs_fuzz_scenario(const uint8_t *data, size_t size);
/* The first byte picks a parser (bandwidth, time, size, buffer, count,
 * probability, real); the rest is its text.  Whatever parses must format
 * and parse back to the same value. */
int cs_fuzz_units(const uint8_t *data, size_t size);

#endif
