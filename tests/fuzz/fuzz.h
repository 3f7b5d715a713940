/* fuzz.h - the fuzz targets, shared by the libFuzzer harnesses (built with
 * --enable-fuzzing) and by tests/test_fuzz, which replays the seed corpus
 * and every input a fuzzer ever found (tests/fuzz/regress/) under the
 * normal and sanitizer builds.  A target returns 0; it aborts (through
 * g_error) when an oracle fails, so that libFuzzer records the input. */
#ifndef COMMSIM_FUZZ_H
#define COMMSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* YAML text -> validated scenario -> network -> routes, or a located error. */
int cs_fuzz_scenario(const uint8_t *data, size_t size);
/* The first byte picks a parser (bandwidth, time, size, buffer, count,
 * probability, real); the rest is its text.  Whatever parses must format
 * and parse back to the same value. */
int cs_fuzz_units(const uint8_t *data, size_t size);

#endif
