/* cmd_codecs.c - `commsim codecs`: run every real codec on a synthetic
 * gradient and print what it costs and what it does to the gradient:
 * wire bits per element, compression ratio, encode / decode / reduce
 * speed, and the normalized error ||x - x'||^2 / ||x||^2.
 *
 * Speeds are only comparable within one run on a shared machine, so the
 * run measures memcpy of the same buffer as its reference and reports
 * each kernel's speed as a ratio to it too.  Every timing is the best of
 * --repeat rounds; the rounds interleave the methods so that a burst of
 * noise does not land on one method only.
 */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "commsim/codec.h"
#include "commsim/rng.h"
#include "commsim/units.h"

typedef struct {
  CsCodecParams params;
  char *label;
  double bits_per_element, ratio, nmse;
  double encode_s, decode_s, reduce_s; /* best times */
  void *a, *b;                         /* payloads of x and of x2 */
  size_t a_len, b_len, cap;
  CsCodec *codec;
} Row;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fill_gradient(float *x, size_t n, bool laplace, double scale, uint64_t seed) {
  CsRng r;
  cs_rng_init(&r, seed, cs_rng_stream_id("codecs-gradient", 0, 0));
  if (laplace) {
    /* Laplace(0, b) has standard deviation b sqrt(2) */
    double b = scale / sqrt(2.0);
    for (size_t i = 0; i < n; i++) {
      double e = cs_rng_exponential(&r, b);
      x[i] = (float)((cs_rng_next(&r) >> 63) ? e : -e);
    }
  } else {
    for (size_t i = 0; i < n; i++) x[i] = (float)cs_rng_normal(&r, 0.0, scale);
  }
}

static double nmse(const float *x, const float *y, size_t n) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)x[i] - (double)y[i];
    num += d * d;
    den += (double)x[i] * (double)x[i];
  }
  return den > 0.0 ? num / den : 0.0;
}

static void *payload_alloc(size_t bytes) {
  /* 64-byte aligned (8 is required), and touched once so that page faults
   * are not timed */
  void *p = g_aligned_alloc0(1, MAX(bytes, 64), 64);
  return p;
}

/* One timed reduction of x and x2's payloads (or decoded arrays). */
static bool run_reduce(Row *row, float *acc, const float *y, size_t n, void *scratch,
                       size_t scratch_cap, GError **error) {
  size_t len;
  switch (row->params.method) {
    case CS_CODEC_TOPK:
    case CS_CODEC_RANDK:
      return cs_codec_sparse_merge(row->a, row->a_len, row->b, row->b_len, scratch, scratch_cap,
                                   &len, error);
    case CS_CODEC_SIGN: {
      const void *p[2] = {row->a, row->b};
      size_t l[2] = {row->a_len, row->b_len};
      return cs_codec_sign_vote(p, l, 2, scratch, scratch_cap, &len, error);
    }
    default:
      cs_codec_add(acc, y, n);
      return true;
  }
}

typedef struct {
  gint64 elements;
  bool laplace;
  double scale;
  guint64 seed;
  int repeat;
  CsCodecParams base;
} Options;

static void add_row(GPtrArray *rows, const CsCodecParams *p) {
  Row *row = g_new0(Row, 1);
  row->params = *p;
  row->label = cs_codec_params_describe(p);
  g_ptr_array_add(rows, row);
}

static void row_free(gpointer data) {
  Row *row = data;
  g_free(row->label);
  g_aligned_free(row->a);
  g_aligned_free(row->b);
  cs_codec_free(row->codec);
  g_free(row);
}

static GString *format_csv(GPtrArray *rows, double memcpy_s, size_t n) {
  GString *s = g_string_new(
      "method,params,bits_per_element,compression_ratio,encode_gbps,encode_ns_per_element,"
      "decode_gbps,decode_ns_per_element,reduce_ns_per_element,encode_vs_memcpy,"
      "decode_vs_memcpy,nmse\n");
  double bytes = 4.0 * (double)n;
  char buf[10][G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(s, "memcpy,fp32,32,1,%s,%s,%s,%s,,1,1,0\n",
                         g_ascii_formatd(buf[0], sizeof buf[0], "%.4g", bytes / memcpy_s / 1e9),
                         g_ascii_formatd(buf[1], sizeof buf[1], "%.4g", memcpy_s / n * 1e9),
                         g_ascii_formatd(buf[2], sizeof buf[2], "%.4g", bytes / memcpy_s / 1e9),
                         g_ascii_formatd(buf[3], sizeof buf[3], "%.4g", memcpy_s / n * 1e9));
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index(rows, i);
    g_string_append_printf(
        s, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", cs_codec_method_name(r->params.method),
        r->label, g_ascii_formatd(buf[0], sizeof buf[0], "%.6g", r->bits_per_element),
        g_ascii_formatd(buf[1], sizeof buf[1], "%.6g", r->ratio),
        g_ascii_formatd(buf[2], sizeof buf[2], "%.4g", bytes / r->encode_s / 1e9),
        g_ascii_formatd(buf[3], sizeof buf[3], "%.4g", r->encode_s / n * 1e9),
        g_ascii_formatd(buf[4], sizeof buf[4], "%.4g", bytes / r->decode_s / 1e9),
        g_ascii_formatd(buf[5], sizeof buf[5], "%.4g", r->decode_s / n * 1e9),
        g_ascii_formatd(buf[6], sizeof buf[6], "%.4g", r->reduce_s / n * 1e9),
        g_ascii_formatd(buf[7], sizeof buf[7], "%.3f", memcpy_s / r->encode_s),
        g_ascii_formatd(buf[8], sizeof buf[8], "%.3f", memcpy_s / r->decode_s),
        g_ascii_formatd(buf[9], sizeof buf[9], "%.4e", r->nmse));
  }
  return s;
}

static void print_table(const Options *o, GPtrArray *rows, double memcpy_s, size_t n) {
  double bytes = 4.0 * (double)n;
  char count[CS_FORMAT_LEN];
  printf("codecs: %s elements (%s, std %g), seed %" G_GUINT64_FORMAT ", best of %d, kernels %s\n",
         cs_format_count((int64_t)n, count), o->laplace ? "laplace" : "normal", o->scale,
         (guint64)o->seed, o->repeat, cs_codec_kernel_isa());
  printf("%-10s %-18s %8s %7s %8s %7s %8s %7s %7s %6s %6s %10s\n", "method", "params", "bits/el",
         "ratio", "enc GB/s", "ns/el", "dec GB/s", "ns/el", "red ns", "enc/mc", "dec/mc",
         "nmse");
  printf("%-10s %-18s %8.3f %7.2f %8.2f %7.3f %8.2f %7.3f %7s %6.2f %6.2f %10s\n", "memcpy",
         "fp32", 32.0, 1.0, bytes / memcpy_s / 1e9, memcpy_s / n * 1e9, bytes / memcpy_s / 1e9,
         memcpy_s / n * 1e9, "-", 1.0, 1.0, "0");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = g_ptr_array_index(rows, i);
    printf("%-10s %-18s %8.3f %7.2f %8.2f %7.3f %8.2f %7.3f %7.3f %6.2f %6.2f %10.3e\n",
           cs_codec_method_name(r->params.method), r->label, r->bits_per_element, r->ratio,
           bytes / r->encode_s / 1e9, r->encode_s / n * 1e9, bytes / r->decode_s / 1e9,
           r->decode_s / n * 1e9, r->reduce_s / n * 1e9, memcpy_s / r->encode_s,
           memcpy_s / r->decode_s, r->nmse);
  }
}

static int usage_error(GOptionContext *ctx, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int usage_error(GOptionContext *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "commsim codecs: %s (see 'commsim codecs --help')\n", msg);
  g_free(msg);
  (void)ctx;
  return CS_EXIT_USAGE;
}

int cs_cmd_codecs(int argc, char **argv) {
  g_autofree char *elements = NULL, *distribution = NULL, *seed = NULL, *ratio = NULL,
                  *bucket = NULL, *dtype = NULL, *scale = NULL, *methods = NULL, *csv_path = NULL;
  Options o = {.repeat = 3};
  int bits = CS_CODEC_DEFAULT_BITS, index_bits = CS_CODEC_DEFAULT_INDEX_BITS;
  GOptionEntry entries[] = {
      {"elements", 'n', 0, G_OPTION_ARG_STRING, &elements,
       "Gradient elements, a count such as 16M or 25.6M (default 16M)", "N"},
      {"distribution", 'd', 0, G_OPTION_ARG_STRING, &distribution,
       "Synthetic gradient: normal or laplace (default normal)", "D"},
      {"scale", 0, 0, G_OPTION_ARG_STRING, &scale,
       "Standard deviation of the gradient (default 0.001)", "S"},
      {"seed", 's', 0, G_OPTION_ARG_STRING, &seed,
       "Seed of the gradient and of the codecs' random streams (default 1)", "N"},
      {"repeat", 'r', 0, G_OPTION_ARG_INT, &o.repeat,
       "Timed rounds; each figure is the best (default 3)", "N"},
      {"methods", 'm', 0, G_OPTION_ARG_STRING, &methods,
       "Comma-separated methods to run (default all)", "LIST"},
      {"bits", 0, 0, G_OPTION_ARG_INT, &bits, "uniform, stochastic: bits per element (default 8)",
       "B"},
      {"ratio", 0, 0, G_OPTION_ARG_STRING, &ratio,
       "topk, randk: share of elements kept, 0.01 or 1% (default 0.01)", "R"},
      {"index-bits", 0, 0, G_OPTION_ARG_INT, &index_bits,
       "topk: wire bits per index (default 32)", "I"},
      {"bucket", 0, 0, G_OPTION_ARG_STRING, &bucket,
       "Elements per scale: uniform, stochastic, sign, terngrad (default 512)", "M"},
      {"dtype", 0, 0, G_OPTION_ARG_STRING, &dtype,
       "Gradient dtype for none, topk and randk values: fp32, fp16, bf16 or fp64 (default fp32)",
       "T"},
      {"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path,
       "Also write the table as CSV to FILE; '-' writes CSV to stdout instead of the table",
       "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- measure the gradient codecs");
  g_option_context_set_summary(
      ctx,
      "Runs every codec's real kernels on a synthetic gradient and prints, per method: wire\n"
      "bits per element, compression ratio versus fp32, encode, decode and reduce speed (GB/s\n"
      "of fp32 gradient and ns per element, and as a ratio to memcpy of the same buffer in the\n"
      "same run), and the normalized error ||x - x'||^2 / ||x||^2.");
  g_option_context_set_description(ctx,
                                   "Exit status: 0 success, 1 runtime failure, 2 bad usage.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error))
    return usage_error(ctx, "%s", error->message);
  if (argc > 1) return usage_error(ctx, "unexpected argument '%s'", argv[1]);

  o.elements = 16000000;
  if (elements && !cs_parse_count(elements, &o.elements, &error))
    return usage_error(ctx, "--elements: %s", error->message);
  if (o.elements < 1 || (guint64)o.elements > CS_CODEC_MAX_ELEMENTS)
    return usage_error(ctx, "--elements: use 1 to %" G_GUINT64_FORMAT " elements",
                       (guint64)CS_CODEC_MAX_ELEMENTS);
  if (distribution && strcmp(distribution, "normal") != 0 && strcmp(distribution, "laplace") != 0)
    return usage_error(ctx, "--distribution: '%s' is not a distribution: use normal or laplace",
                       distribution);
  o.laplace = distribution && strcmp(distribution, "laplace") == 0;
  o.scale = 1e-3;
  if (scale && (!cs_parse_real(scale, &o.scale, &error) || !(o.scale > 0.0)))
    return usage_error(ctx, "--scale: %s", error ? error->message : "use a number greater than 0");
  o.seed = 1;
  if (seed && !g_ascii_string_to_unsigned(seed, 10, 0, G_MAXUINT64, &o.seed, &error))
    return usage_error(ctx, "--seed: %s", error->message);
  if (o.repeat < 1 || o.repeat > 1000)
    return usage_error(ctx, "--repeat: %d: use 1 to 1000 rounds", o.repeat);

  cs_codec_params_init(&o.base);
  o.base.bits = bits;
  o.base.index_bits = index_bits;
  o.base.seed = o.seed;
  if (ratio && !cs_parse_probability(ratio, &o.base.ratio, &error))
    return usage_error(ctx, "--ratio: %s", error->message);
  if (bucket && !cs_parse_count(bucket, &o.base.bucket, &error))
    return usage_error(ctx, "--bucket: %s", error->message);
  if (dtype && !cs_dtype_parse(dtype, &o.base.dtype, &error))
    return usage_error(ctx, "--dtype: %s", error->message);

  bool want[CS_CODEC_N_METHODS];
  for (int m = 0; m < CS_CODEC_N_METHODS; m++) want[m] = methods == NULL;
  if (methods) {
    g_auto(GStrv) names = g_strsplit(methods, ",", -1);
    if (!names[0]) return usage_error(ctx, "--methods: empty: name one method or more, separated by commas");
    for (char **s = names; *s; s++) {
      CsCodecMethod m;
      if (!cs_codec_method_parse(g_strstrip(*s), &m, &error))
        return usage_error(ctx, "--methods: %s", error->message);
      want[m] = true;
    }
  }
  g_autoptr(GPtrArray) rows = g_ptr_array_new_with_free_func(row_free);
  for (int m = 0; m < CS_CODEC_N_METHODS; m++) {
    if (!want[m]) continue;
    CsCodecParams p = o.base;
    p.method = (CsCodecMethod)m;
    if (!cs_codec_params_validate(&p, &error)) return usage_error(ctx, "%s", error->message);
    add_row(rows, &p);
  }

  size_t n = (size_t)o.elements;
  float *x = g_try_new(float, n), *x2 = g_try_new(float, n), *y = g_try_new(float, n);
  float *dst = g_try_new(float, n);
  if (!x || !x2 || !y || !dst) {
    fprintf(stderr, "commsim codecs: cannot allocate %zu-element buffers\n", n);
    g_free(x), g_free(x2), g_free(y), g_free(dst);
    return CS_EXIT_RUNTIME;
  }
  fill_gradient(x, n, o.laplace, o.scale, o.seed);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) { /* the test gradient itself past float's range: the option's fault, not a codec's */
      const char *what = x[i] > 0 ? "inf" : "-inf";
      g_free(x), g_free(x2), g_free(y), g_free(dst);
      return usage_error(ctx, "--scale: %g makes the test gradient overflow float (element %zu is %s): use a smaller scale",
                         o.scale, i, what);
    }
  /* A second gradient for the reductions: x rotated by half, so that its
   * large elements sit elsewhere (top-k merges then have work to do). */
  memcpy(x2, x + n / 2, (n - n / 2) * sizeof *x);
  memcpy(x2 + (n - n / 2), x, n / 2 * sizeof *x);
  memset(dst, 0, n * sizeof *dst);
  memset(y, 0, n * sizeof *y);

  int status = CS_EXIT_OK;
  size_t scratch_cap = 0;
  for (guint i = 0; i < rows->len; i++) {
    Row *r = g_ptr_array_index(rows, i);
    r->codec = cs_codec_new(&r->params, 0, &error);
    r->cap = cs_codec_payload_size(&r->params, n);
    r->a = payload_alloc(r->cap);
    r->b = payload_alloc(r->cap);
    scratch_cap = MAX(scratch_cap, 2 * r->cap);
    uint64_t wire = cs_codec_wire_bits(&r->params, n);
    r->bits_per_element = (double)wire / (double)n;
    r->ratio = 32.0 * (double)n / (double)wire;
    r->encode_s = r->decode_s = r->reduce_s = INFINITY;
    /* untimed: the error, and the second payload for the reductions */
    if (!cs_codec_encode(r->codec, 0, x, n, r->a, r->cap, &r->a_len, &error) ||
        !cs_codec_decode(r->a, r->a_len, y, n, &error) ||
        !cs_codec_encode(r->codec, 0, x2, n, r->b, r->cap, &r->b_len, &error)) {
      fprintf(stderr, "commsim codecs: %s: %s\n", r->label, error->message);
      status = CS_EXIT_RUNTIME;
      goto out;
    }
    r->nmse = nmse(x, y, n);
  }
  void *scratch = payload_alloc(scratch_cap);
  double memcpy_s = INFINITY;
  for (int round = 0; round < o.repeat; round++) {
    double t0 = now_s();
    memcpy(dst, x, n * sizeof *x);
    memcpy_s = MIN(memcpy_s, now_s() - t0);
    for (guint i = 0; i < rows->len && status == CS_EXIT_OK; i++) {
      Row *r = g_ptr_array_index(rows, i);
      t0 = now_s();
      bool ok = cs_codec_encode(r->codec, 0, x, n, r->a, r->cap, &r->a_len, &error);
      double t1 = now_s();
      ok = ok && cs_codec_decode(r->a, r->a_len, y, n, &error);
      double t2 = now_s();
      ok = ok && run_reduce(r, dst, x2, n, scratch, scratch_cap, &error);
      double t3 = now_s();
      if (!ok) {
        fprintf(stderr, "commsim codecs: %s: %s\n", r->label, error->message);
        status = CS_EXIT_RUNTIME;
        break;
      }
      r->encode_s = MIN(r->encode_s, t1 - t0);
      r->decode_s = MIN(r->decode_s, t2 - t1);
      r->reduce_s = MIN(r->reduce_s, t3 - t2);
    }
  }
  g_aligned_free(scratch);
  if (status != CS_EXIT_OK) goto out;

  bool csv_stdout = csv_path && strcmp(csv_path, "-") == 0;
  if (!csv_stdout) print_table(&o, rows, memcpy_s, n);
  if (csv_path) {
    GString *csv = format_csv(rows, memcpy_s, n);
    if (csv_stdout) {
      fputs(csv->str, stdout);
    } else if (!g_file_set_contents(csv_path, csv->str, (gssize)csv->len, &error)) {
      /* g_file_set_contents writes a temporary file and renames it */
      fprintf(stderr, "commsim codecs: %s\n", error->message);
      status = CS_EXIT_RUNTIME;
    }
    g_string_free(csv, TRUE);
  }
out:
  g_free(x), g_free(x2), g_free(y), g_free(dst);
  return status;
}
