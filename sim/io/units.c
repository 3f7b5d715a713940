/* units.c - exact decimal parsing of quantities with units.
 *
 * A number is read as an integer mantissa M and a decimal exponent E
 * (value = M * 10^E), multiplied by the suffix's integer scale in 128-bit
 * arithmetic, and accepted only when the result is a whole number of base
 * units that fits in int64.  Floating point never touches a time, size or
 * bandwidth, so "0.1us" is 100000 ps, not 99999.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "commsim/units.h"

G_DEFINE_QUARK(cs-units-error-quark, cs_units_error)

typedef unsigned __int128 u128;

typedef struct {
  const char *suffix;
  uint64_t scale; /* base units per 1 of the suffix */
} Suffix;

typedef struct {
  const char *what;     /* "a bandwidth" */
  const char *base;     /* "bits per second" */
  const char *example;  /* "10Gbps" */
  const char *accepted; /* "bps, Kbps, Mbps, Gbps or Tbps" */
  const Suffix *suffixes;
  uint64_t bare_scale; /* scale of a number with no suffix */
} Kind;

static const Suffix bw_suffixes[] = {
    {"bps", 1}, {"Kbps", 1000ULL}, {"Mbps", 1000000ULL}, {"Gbps", 1000000000ULL},
    {"Tbps", 1000000000000ULL}, {NULL, 0}};
static const Suffix time_suffixes[] = {
    {"ps", 1}, {"ns", 1000ULL}, {"us", 1000000ULL}, {"ms", 1000000000ULL},
    {"s", 1000000000000ULL}, {NULL, 0}};
static const Suffix size_suffixes[] = {
    {"B", 1},           {"KB", 1000ULL},     {"MB", 1000000ULL}, {"GB", 1000000000ULL},
    {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {NULL, 0}};
static const Suffix count_suffixes[] = {
    {"K", 1000ULL}, {"M", 1000000ULL}, {"G", 1000000000ULL}, {NULL, 0}};

static const Kind BANDWIDTH = {"a bandwidth", "bits per second", "10Gbps",
                               "bps, Kbps, Mbps, Gbps or Tbps", bw_suffixes, 1};
static const Kind TIME = {"a time", "picoseconds (the resolution of simulated time)", "1.5us",
                          "ps, ns, us, ms or s", time_suffixes, 1000000000000ULL};
static const Kind SIZE = {"a size", "bytes", "1500B", "B, KB, MB, GB, KiB, MiB or GiB",
                          size_suffixes, 1};
static const Kind COUNT = {"a count", NULL, "25.6M", "K, M or G (or no suffix)",
                           count_suffixes, 1};

static const Kind *const all_kinds[] = {&BANDWIDTH, &TIME, &SIZE, &COUNT};

static bool fail(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, CS_UNITS_ERROR, CS_UNITS_ERROR_INVALID, msg);
  g_free(msg);
  return false;
}

/* The decimal number at the start of `s`: M * 10^E, and where it ends.
 * Returns false if no digits are there. */
typedef struct {
  u128 mant;
  int exp10;
  bool negative;
  bool too_many_digits;
  const char *end;
} Number;

static bool scan_number(const char *s, Number *n) {
  memset(n, 0, sizeof *n);
  const char *p = s;
  if (*p == '+' || *p == '-') n->negative = (*p++ == '-');
  bool digits = false;
  const u128 limit = ((u128)1) << 120;
  for (; g_ascii_isdigit(*p); p++) {
    digits = true;
    if (n->mant < limit) n->mant = n->mant * 10 + (u128)(*p - '0');
    else if (*p != '0') n->too_many_digits = true;
    else n->exp10++;
  }
  if (*p == '.') {
    p++;
    for (; g_ascii_isdigit(*p); p++) {
      digits = true;
      if (n->mant < limit) {
        n->mant = n->mant * 10 + (u128)(*p - '0');
        n->exp10--;
      } else if (*p != '0') {
        n->too_many_digits = true;
      }
    }
  }
  if (!digits) return false;
  if ((*p == 'e' || *p == 'E') &&
      (g_ascii_isdigit(p[1]) || ((p[1] == '+' || p[1] == '-') && g_ascii_isdigit(p[2])))) {
    p++;
    int sign = 1;
    if (*p == '+' || *p == '-') sign = (*p++ == '-') ? -1 : 1;
    long e = 0;
    for (; g_ascii_isdigit(*p); p++)
      if (e < 100000) e = e * 10 + (*p - '0');
    n->exp10 += (int)(sign * e);
  }
  /* Normalise: trailing zeros of the mantissa into the exponent. */
  while (n->mant != 0 && n->mant % 10 == 0) {
    n->mant /= 10;
    n->exp10++;
  }
  if (n->mant == 0) n->exp10 = 0;
  n->end = p;
  return true;
}

static const char *skip_space(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* Which kind, if any, owns this suffix exactly (for "a time, not a size"). */
static const Kind *owner_of(const char *suffix) {
  for (size_t k = 0; k < G_N_ELEMENTS(all_kinds); k++)
    for (const Suffix *s = all_kinds[k]->suffixes; s->suffix; s++)
      if (strcmp(s->suffix, suffix) == 0) return all_kinds[k];
  return NULL;
}

static bool unknown_suffix(const char *text, const Kind *kind, const char *suffix,
                           GError **error) {
  for (const Suffix *s = kind->suffixes; s->suffix; s++)
    if (g_ascii_strcasecmp(s->suffix, suffix) == 0)
      return fail(error, "'%s' is not %s: use %s (suffixes are case-sensitive: did you mean '%s'?)",
                  text, kind->what, kind->accepted, s->suffix);
  const Kind *other = owner_of(suffix);
  if (other && other != kind)
    return fail(error, "'%s' is %s, not %s: use %s", text, other->what, kind->what,
                kind->accepted);
  return fail(error, "'%s' is not %s: use %s", text, kind->what, kind->accepted);
}

/* 10^k for 0 <= k <= 38, in 128 bits. */
static u128 pow10_128(int k) {
  u128 r = 1;
  while (k-- > 0) r *= 10;
  return r;
}

static bool parse_kind(const char *text, const Kind *kind, int64_t *out, bool allow_pkt,
                       bool *is_pkt, GError **error) {
  if (is_pkt) *is_pkt = false;
  if (text == NULL || *skip_space(text) == '\0')
    return fail(error, "empty value: expected %s such as %s", kind->what, kind->example);
  Number n;
  const char *p = skip_space(text);
  if (!scan_number(p, &n))
    return fail(error, "'%s' is not %s: expected a number with a unit such as %s", text,
                kind->what, kind->example);
  p = skip_space(n.end);
  const char *suf_start = p;
  while (*p && *p != ' ' && *p != '\t') p++;
  g_autofree char *suffix = g_strndup(suf_start, (gsize)(p - suf_start));
  if (*skip_space(p) != '\0')
    return fail(error, "'%s' is not %s: unexpected text after the unit", text, kind->what);

  uint64_t scale;
  if (suffix[0] == '\0') {
    scale = kind->bare_scale;
  } else if (allow_pkt && strcmp(suffix, "pkt") == 0) {
    scale = 1;
    *is_pkt = true;
  } else {
    scale = 0;
    for (const Suffix *s = kind->suffixes; s->suffix; s++)
      if (strcmp(s->suffix, suffix) == 0) scale = s->scale;
    if (scale == 0) {
      if (kind == &SIZE && strcmp(suffix, "pkt") == 0)
        return fail(error, "'%s': packets ('pkt') measure buffers only; use %s", text,
                    kind->accepted);
      return unknown_suffix(text, kind, suffix, error);
    }
  }
  if (n.negative && n.mant != 0)
    return fail(error, "'%s' is negative: %s must be zero or more", text, kind->what);
  if (n.too_many_digits)
    return fail(error, "'%s' has more significant digits than can be represented", text);

  const char *base = (is_pkt && *is_pkt) ? "packets" : kind->base;
  if (!base) base = "units";
  u128 v = n.mant;
  if (v == 0) {
    *out = 0;
    return true;
  }
  /* v * scale * 10^exp10 must be a whole number <= INT64_MAX. */
  const u128 max = (u128)INT64_MAX;
  if (v > (~(u128)0) / scale) goto too_large;
  v *= scale;
  if (n.exp10 >= 0) {
    for (int i = 0; i < n.exp10; i++) {
      if (v > max) goto too_large;
      v *= 10;
    }
  } else {
    if (n.exp10 < -38) goto not_whole;
    u128 d = pow10_128(-n.exp10);
    if (v % d != 0) goto not_whole;
    v /= d;
  }
  if (v > max) goto too_large;
  *out = (int64_t)v;
  return true;

not_whole:
  if (kind == &COUNT) return fail(error, "'%s' is not a whole number", text);
  return fail(error, "'%s' is not a whole number of %s", text, base);
too_large:
  if (kind == &TIME)
    return fail(error, "'%s' is too large: simulated time ends after 9223372s (about 106 days)",
                text);
  if (kind == &COUNT) return fail(error, "'%s' is too large: a count must be below 2^63", text);
  return fail(error, "'%s' is too large: %s must be below 2^63 %s", text, kind->what, base);
}

bool cs_parse_bandwidth(const char *text, int64_t *bps, GError **error) {
  return parse_kind(text, &BANDWIDTH, bps, false, NULL, error);
}

bool cs_parse_time(const char *text, CsTime *ps, GError **error) {
  int64_t v;
  if (!parse_kind(text, &TIME, &v, false, NULL, error)) return false;
  *ps = v;
  return true;
}

bool cs_parse_size(const char *text, int64_t *bytes, GError **error) {
  return parse_kind(text, &SIZE, bytes, false, NULL, error);
}

bool cs_parse_buffer(const char *text, int64_t *value, bool *packets, GError **error) {
  bool pk = false;
  if (!parse_kind(text, &SIZE, value, true, &pk, error)) return false;
  if (packets) *packets = pk;
  return true;
}

bool cs_parse_count(const char *text, int64_t *count, GError **error) {
  return parse_kind(text, &COUNT, count, false, NULL, error);
}

bool cs_parse_real(const char *text, double *value, GError **error) {
  if (text == NULL || *skip_space(text) == '\0')
    return fail(error, "empty value: expected a number");
  const char *p = skip_space(text);
  Number n;
  if (!scan_number(p, &n)) return fail(error, "'%s' is not a number", text);
  if (*skip_space(n.end) != '\0') return fail(error, "'%s' is not a number: unexpected text", text);
  char *end = NULL;
  double v = g_ascii_strtod(p, &end);
  if (!isfinite(v)) return fail(error, "'%s' is out of range", text);
  *value = v;
  return true;
}

bool cs_parse_probability(const char *text, double *p, GError **error) {
  if (text == NULL || *skip_space(text) == '\0')
    return fail(error, "empty value: expected a probability such as 0.01 or 1%%");
  const char *s = skip_space(text);
  Number n;
  if (!scan_number(s, &n))
    return fail(error, "'%s' is not a probability: use a number in [0, 1] or a percentage such as 1%%",
                text);
  const char *rest = skip_space(n.end);
  bool percent = false;
  if (*rest == '%') {
    percent = true;
    rest = skip_space(rest + 1);
  }
  if (*rest != '\0')
    return fail(error, "'%s' is not a probability: use a number in [0, 1] or a percentage such as 1%%",
                text);
  double v = g_ascii_strtod(s, NULL);
  if (percent) v /= 100.0;
  if (!(v >= 0.0 && v <= 1.0))
    return fail(error, "'%s' is not a probability: it must lie in [0, 1] (or [0%%, 100%%])", text);
  *p = v;
  return true;
}

/* ---- formatting ---- */

/* value / scale written exactly, trailing zeros trimmed, then the suffix. */
static void format_exact(int64_t value, uint64_t scale, const char *suffix, char *buf) {
  uint64_t mag = value < 0 ? (uint64_t)(-(value + 1)) + 1 : (uint64_t)value;
  uint64_t ip = mag / scale, fp = mag % scale;
  int len = snprintf(buf, CS_FORMAT_LEN, "%s%" G_GUINT64_FORMAT, value < 0 ? "-" : "", ip);
  if (fp) {
    /* scale is a power of ten here (binary scales are used only when exact). */
    char frac[24];
    int digits = 0;
    for (uint64_t s = scale; s > 1 && digits < 20; s /= 10) digits++;
    /* fp < scale: write its `digits` decimal digits, zero-padded */
    frac[digits] = '\0';
    for (int i = digits - 1; i >= 0; i--, fp /= 10) frac[i] = (char)('0' + fp % 10);
    for (int i = digits - 1; i > 0 && frac[i] == '0'; i--) frac[i] = '\0';
    len += snprintf(buf + len, (size_t)(CS_FORMAT_LEN - len), ".%s", frac);
  }
  snprintf(buf + len, (size_t)(CS_FORMAT_LEN - len), "%s", suffix);
}

/* The largest suffix whose scale does not exceed |value| (scales ascend). */
static void format_decimal(int64_t value, const Suffix *suffixes, char *buf) {
  uint64_t mag = value < 0 ? (uint64_t)(-(value + 1)) + 1 : (uint64_t)value;
  const Suffix *best = &suffixes[0];
  for (const Suffix *s = suffixes; s->suffix; s++)
    if (mag >= s->scale && s->scale >= best->scale) best = s;
  format_exact(value, best->scale, best->suffix, buf);
}

const char *cs_format_bandwidth(int64_t bps, char buf[CS_FORMAT_LEN]) {
  format_decimal(bps, bw_suffixes, buf);
  return buf;
}

const char *cs_format_time(CsTime ps, char buf[CS_FORMAT_LEN]) {
  if (ps == 0) {
    snprintf(buf, CS_FORMAT_LEN, "0s");
    return buf;
  }
  format_decimal(ps, time_suffixes, buf);
  return buf;
}

const char *cs_format_size(int64_t bytes, char buf[CS_FORMAT_LEN]) {
  /* The shortest exact form: bytes, a decimal unit, or a whole number of a
   * binary unit; ties go to the earlier (1500B before 1.5KB). */
  static const Suffix decimal[] = {{"KB", 1000ULL}, {"MB", 1000000ULL}, {"GB", 1000000000ULL}};
  static const Suffix binary[] = {{"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}};
  snprintf(buf, CS_FORMAT_LEN, "%" G_GINT64_FORMAT "B", (gint64)bytes);
  if (bytes <= 0) return buf;
  char alt[CS_FORMAT_LEN];
  for (size_t i = 0; i < G_N_ELEMENTS(decimal); i++) {
    if ((uint64_t)bytes < decimal[i].scale) break;
    format_exact(bytes, decimal[i].scale, decimal[i].suffix, alt);
    if (strlen(alt) < strlen(buf)) memcpy(buf, alt, strlen(alt) + 1);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(binary); i++) {
    if ((uint64_t)bytes % binary[i].scale != 0) break;
    snprintf(alt, sizeof alt, "%" G_GUINT64_FORMAT "%s", (uint64_t)bytes / binary[i].scale, binary[i].suffix);
    if (strlen(alt) < strlen(buf)) memcpy(buf, alt, strlen(alt) + 1);
  }
  return buf;
}

const char *cs_format_count(int64_t count, char buf[CS_FORMAT_LEN]) {
  static const Suffix with_unit[] = {
      {"", 1}, {"K", 1000ULL}, {"M", 1000000ULL}, {"G", 1000000000ULL}, {NULL, 0}};
  format_decimal(count, with_unit, buf);
  return buf;
}

/* value / 1000^k with the largest k that leaves at least 1, to 4 significant digits */
static const char *human(double v, const char *const *units, int n, double step, char buf[CS_FORMAT_LEN]) {
  int k = 0;
  double a = fabs(v);
  while (k + 1 < n && a >= step) a /= step, v /= step, k++;
  if (k == 0 && a == floor(a)) snprintf(buf, CS_FORMAT_LEN, "%.0f %s", v, units[k]);
  else snprintf(buf, CS_FORMAT_LEN, "%.4g %s", v, units[k]);
  return buf;
}

const char *cs_format_human_bytes(double bytes, char buf[CS_FORMAT_LEN]) {
  static const char *const u[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  return human(bytes, u, 6, 1000, buf);
}

const char *cs_format_human_bps(double bps, char buf[CS_FORMAT_LEN]) {
  static const char *const u[] = {"bps", "Kbps", "Mbps", "Gbps", "Tbps"};
  return human(bps, u, 5, 1000, buf);
}

const char *cs_format_human_seconds(double s, char buf[CS_FORMAT_LEN]) {
  static const char *const u[] = {"s", "ms", "us", "ns", "ps"};
  int k = 0;
  double a = fabs(s);
  while (k + 1 < 5 && a > 0 && a < 1) a *= 1000, s *= 1000, k++;
  snprintf(buf, CS_FORMAT_LEN, "%.4g %s", s, u[k]);
  return buf;
}
