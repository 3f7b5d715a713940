/* units.h - quantities with units, parsed at the edge (YAML, command line)
 * into integer base units, and formatted back for output.
 *
 * Kinds (SPEC section 2): bandwidth in bit/s, time in picoseconds, size in
 * bytes (or packets, for buffers), count, probability.  A bare number is
 * in the kind's base unit (seconds for time).  Parsing is exact decimal
 * arithmetic, not floating point: "2.5Gbps" is 2500000000 bit/s and
 * "1.1us" is 1100000 ps, exactly.  Negative values, values that do not fit
 * in 64 bits, fractions of a base unit and unknown suffixes are errors
 * whose message quotes the value and lists the accepted suffixes; the
 * caller adds the location.
 *
 * Layer 0 (base; docs/design.md). Owns parsing and formatting quantities with
 * units; does not touch scenario or simulator types.
 */
#ifndef COMMSIM_UNITS_H
#define COMMSIM_UNITS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"

#define CS_UNITS_ERROR (cs_units_error_quark())
GQuark cs_units_error_quark(void);
typedef enum { CS_UNITS_ERROR_INVALID } CsUnitsError;

bool cs_parse_bandwidth(const char *text, int64_t *bps, GError **error);
bool cs_parse_time(const char *text, CsTime *ps, GError **error);
bool cs_parse_size(const char *text, int64_t *bytes, GError **error);
/* A size or a number of packets ("64pkt"); *packets tells which. */
bool cs_parse_buffer(const char *text, int64_t *value, bool *packets, GError **error);
bool cs_parse_count(const char *text, int64_t *count, GError **error);
/* A number in [0, 1] or a percentage ("1%"). */
bool cs_parse_probability(const char *text, double *p, GError **error);
/* A plain finite real number with no unit (ratios, factors). */
bool cs_parse_real(const char *text, double *value, GError **error);

/* Formatting into a caller's buffer, exact and shortest: the result parses
 * back to the same value ("10Gbps", "1.5us", "512KiB", "0s"). */
#define CS_FORMAT_LEN 48
const char *cs_format_bandwidth(int64_t bps, char buf[CS_FORMAT_LEN]);
const char *cs_format_time(CsTime ps, char buf[CS_FORMAT_LEN]);
const char *cs_format_size(int64_t bytes, char buf[CS_FORMAT_LEN]);
const char *cs_format_count(int64_t count, char buf[CS_FORMAT_LEN]);

/* For people, not for parsing back: four significant digits and a
 * decimal unit with a space ("186.4 MB", "1.5 KB", "512 B"; "9.3 Gbps",
 * "1.25 ms"). */
const char *cs_format_human_bytes(double bytes, char buf[CS_FORMAT_LEN]);
const char *cs_format_human_bps(double bps, char buf[CS_FORMAT_LEN]);
const char *cs_format_human_seconds(double s, char buf[CS_FORMAT_LEN]);

#endif
