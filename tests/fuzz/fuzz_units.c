/* fuzz_units.c - fuzz target for the unit parsers and formatters. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/units.h"
#include "fuzz.h"

#define FUZZ_MAX_INPUT 256

static void roundtrip(const char *what, const char *text, int64_t v, const char *formatted, int64_t back,
                      bool ok) {
  if (!ok) FUZZ_FAIL("fuzz: %s '%s' = %" G_GINT64_FORMAT " formats as '%s', which does not parse", what, text,
                   (gint64)v, formatted);
  if (back != v)
    FUZZ_FAIL("fuzz: %s '%s' = %" G_GINT64_FORMAT " formats as '%s' = %" G_GINT64_FORMAT, what, text, (gint64)v,
            formatted, (gint64)back);
}

/* The parsers of integer quantities, by selector (the first byte modulo
 * 7; 3 = buffer, 5 = probability, 6 = real are handled apart). */
typedef bool (*ParseInt)(const char *text, int64_t *value, GError **error);
typedef const char *(*FormatInt)(int64_t value, char buf[CS_FORMAT_LEN]);
static const struct {
  const char *what;
  ParseInt parse;
  FormatInt format;
} ints[7] = {
    [0] = {"bandwidth", cs_parse_bandwidth, cs_format_bandwidth},
    [1] = {"time", cs_parse_time, cs_format_time},
    [2] = {"size", cs_parse_size, cs_format_size},
    [4] = {"count", cs_parse_count, cs_format_count},
};

int cs_fuzz_units(const uint8_t *data, size_t size) {
  if (size < 1 || size > FUZZ_MAX_INPUT) return 0;
  char *text = g_strndup((const char *)data + 1, size - 1);
  char buf[CS_FORMAT_LEN];
  GError *error = NULL;
  int64_t v = 0, back = 0;
  double d = 0, dback = 0;
  bool pkt = false, pkt_back = false, ok;
  unsigned kind = data[0] % 7;
  if (ints[kind].parse) {
    if (ints[kind].parse(text, &v, &error)) {
      ints[kind].format(v, buf);
      ok = ints[kind].parse(buf, &back, NULL);
      roundtrip(ints[kind].what, text, v, buf, back, ok);
    }
  } else if (kind == 3) {
    if (cs_parse_buffer(text, &v, &pkt, &error)) {
      if (pkt)
        g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT "pkt", (gint64)v);
      else
        cs_format_size(v, buf);
      ok = cs_parse_buffer(buf, &back, &pkt_back, NULL) && pkt_back == pkt;
      roundtrip("buffer", text, v, buf, back, ok);
    }
  } else if (kind == 5) {
    if (cs_parse_probability(text, &d, &error)) {
      if (!(d >= 0 && d <= 1)) FUZZ_FAIL("fuzz: probability '%s' = %g is outside [0, 1]", text, d);
      g_snprintf(buf, sizeof buf, "%.17g", d);
      if (!cs_parse_probability(buf, &dback, NULL) || dback != d)
        FUZZ_FAIL("fuzz: probability '%s' = %.17g does not read back", text, d);
    }
  } else if (cs_parse_real(text, &d, &error) && !isfinite(d)) {
    FUZZ_FAIL("fuzz: real '%s' is not finite", text);
  }
  if (error && (!error->message || !*error->message)) FUZZ_FAIL("fuzz: unit error without a message");
  g_clear_error(&error);
  g_free(text);
  return 0;
}

#ifdef CS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return cs_fuzz_units(data, size); }
#endif
