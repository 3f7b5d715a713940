/* test_traces.c - links.csv, packets.csv and timeline.json: they parse,
 * their totals agree with the run's, and tracing changes no result. */
#include "config.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "commsim/csv.h"
#include "commsim/sim.h"
#include "commsim/sweep.h"

static const char *scenario =
    "seed: 9\n"
    "defaults: {buffer: 64pkt, loss: 0.001}\n"
    "topology: {type: dumbbell, workers: 4, bottleneck: {bandwidth: 10Gbps}}\n"
    "workload: {params: 500K, iterations: 2, compute: 1ms, buckets: 1MB, collective: ring}\n"
    "flows: [{src: w0, dst: w3, size: 2MB}]\n"
    "output: {sample_interval: 50us}\n";

typedef struct {
  CsScenario *s;
  CsSim *sim;
  char *dir;
} Run;

static Run run_yaml(const char *yaml, const char *traces, const char *extra, const char *extra2) {
  Run r = {0};
  GError *e = NULL;
  g_autofree char *set = g_strdup_printf("output.traces=%s", traces);
  const char *sets[] = {set, extra, extra ? extra2 : NULL, NULL};
  r.s = cs_scenario_load_string(yaml, "traces.yaml", sets, &e);
  ck_assert_msg(r.s != NULL, "%s", e ? e->message : "");
  r.dir = g_dir_make_tmp("commsim-tr-XXXXXX", NULL);
  r.sim = cs_sim_new(r.s, &e);
  cs_sim_set_output_dir(r.sim, r.dir);
  ck_assert_msg(cs_sim_run(r.sim, &e), "%s", e ? e->message : "");
  ck_assert_msg(cs_sim_write_outputs(r.sim, r.dir, &e), "%s", e ? e->message : "");
  return r;
}

static Run run_traced_with(const char *traces, const char *extra, const char *extra2) {
  return run_yaml(scenario, traces, extra, extra2);
}

static Run run_traced(const char *traces) { return run_traced_with(traces, NULL, NULL); }

static void done(Run *r) {
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", r->dir);
  ck_assert_int_eq(system(cmd), 0);
  g_free(r->dir);
  cs_sim_free(r->sim);
  cs_scenario_free(r->s);
}

static GPtrArray *read_rows(const char *dir, const char *name, guint *ncols) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "no %s", path);
  g_auto(GStrv) lines = g_strsplit(text, "\r\n", -1);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  g_autoptr(GPtrArray) header = cs_csv_split_line(lines[0]);
  *ncols = header->len;
  for (guint i = 1; lines[i] && *lines[i]; i++) {
    GPtrArray *f = cs_csv_split_line(lines[i]);
    ck_assert_uint_eq(f->len, header->len); /* every row, every column */
    g_ptr_array_add(rows, f);
  }
  return rows;
}

/* Numbers in files use a point whatever the user's locale: the process
 * takes the user's locale but keeps its numeric category at C (with
 * LC_ALL=de_DE.UTF-8, links.csv's utilization was written 0,36, unquoted,
 * splitting it into two columns, and summary.csv's reals "1,43...").
 * C.UTF-8 is on every Debian machine: with
 * it in LC_ALL the numeric category must still read "C".  Where a
 * comma-decimal locale is installed, a half is formatted with it too. */
START_TEST(test_numbers_whatever_the_locale) {
  g_setenv("LC_ALL", "C.UTF-8", TRUE);
  cs_locale_init();
  ck_assert_str_eq(setlocale(LC_NUMERIC, NULL), "C");
  const char *commas[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "it_IT.UTF-8", "es_ES.UTF-8"};
  int tried = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(commas); i++) {
    g_setenv("LC_ALL", commas[i], TRUE);
    cs_locale_init();
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!ctype || strcmp(ctype, commas[i]) != 0) continue; /* not installed here */
    tried++;
    char b[32];
    snprintf(b, sizeof b, "%.1f", 0.5);
    ck_assert_str_eq(b, "0.5");
    ck_assert_str_eq(setlocale(LC_NUMERIC, NULL), "C");
  }
  if (!tried) fprintf(stderr, "test_numbers_whatever_the_locale: no comma-decimal locale installed: the C.UTF-8 check only\n");
  g_unsetenv("LC_ALL");
  setlocale(LC_ALL, "C");
}
END_TEST

/* A small JSON checker: true if `p` holds exactly one JSON value. */
static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
  return p;
}
static const char *value(const char *p);
static const char *string(const char *p) {
  if (*p != '"') return NULL;
  for (p++; *p && *p != '"'; p++)
    if (*p == '\\' && !*++p) return NULL;
  return *p == '"' ? p + 1 : NULL;
}
static const char *value(const char *p) {
  p = ws(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        p = string(ws(p));
        if (!p || *(p = ws(p)) != ':') return NULL;
        p++;
      }
      if (!(p = value(p))) return NULL;
      p = ws(p);
      if (*p == close) return p + 1;
      if (*p != ',') return NULL;
      p++;
    }
  }
  if (*p == '"') return string(p);
  for (const char *const *lit = (const char *const[]){"true", "false", "null", NULL}; *lit; lit++)
    if (g_str_has_prefix(p, *lit)) return p + strlen(*lit);
  char *end;
  g_ascii_strtod(p, &end);
  return end > p ? end : NULL;
}

START_TEST(test_links_csv_totals) {
  Run r = run_traced("[summary, links]");
  guint ncols;
  g_autoptr(GPtrArray) rows = read_rows(r.dir, "links.csv", &ncols);
  ck_assert_uint_eq(ncols, 12);
  ck_assert_uint_gt(rows->len, 10);
  /* per direction, sums of the samples equal the run's counters */
  const CsTopology *t = cs_sim_topology(r.sim);
  uint64_t drops = 0, losses = 0;
  for (uint32_t l = 0; l < t->n_links; l++)
    for (int d = 0; d < 2; d++) {
      const char *a = t->nodes[d ? t->links[l].b : t->links[l].a].name, *b = t->nodes[d ? t->links[l].a : t->links[l].b].name;
      uint64_t bytes = 0, dr = 0, lo = 0;
      for (guint i = 0; i < rows->len; i++) {
        GPtrArray *f = rows->pdata[i];
        if (strcmp(f->pdata[0], a) || strcmp(f->pdata[1], b)) continue;
        bytes += g_ascii_strtoull(f->pdata[4], NULL, 10);
        dr += g_ascii_strtoull(f->pdata[8], NULL, 10);
        lo += g_ascii_strtoull(f->pdata[9], NULL, 10);
        double u = g_ascii_strtod(f->pdata[5], NULL);
        ck_assert(u >= 0 && u <= 1);
      }
      CsLinkStats st = cs_net_link_stats(cs_sim_net(r.sim), l, d);
      ck_assert_uint_eq(bytes, st.bytes); /* no packet is waiting at the end */
      ck_assert_uint_eq(dr, st.drops);
      ck_assert_uint_eq(lo, st.losses);
      drops += dr, losses += lo;
    }
  const CsSummary *m = cs_sim_summary(r.sim);
  ck_assert_uint_eq(drops, m->packets_dropped + m->bg_packets_dropped);
  ck_assert_uint_eq(losses, m->packets_lost + m->bg_packets_lost);
  ck_assert_uint_gt(drops + losses, 0);
  done(&r);
}
END_TEST

START_TEST(test_packets_csv) {
  /* a smaller gradient: one row per packet event is a lot under sanitizers */
  Run r = run_traced_with("[packets]", "workload.params=100K", NULL);
  guint ncols;
  g_autoptr(GPtrArray) rows = read_rows(r.dir, "packets.csv", &ncols);
  ck_assert_uint_eq(ncols, 8);
  CsNetTotals tot = cs_net_totals(cs_sim_net(r.sim));
  uint64_t count[6] = {0};
  const char *names[] = {"enqueue", "transmit", "drop", "loss", "deliver", "ack"};
  for (guint i = 0; i < rows->len; i++)
    for (int k = 0; k < 6; k++)
      if (!strcmp(((GPtrArray *)rows->pdata[i])->pdata[1], names[k])) count[k]++;
  ck_assert_uint_eq(count[0], tot.hops); /* one enqueue and one transmit per hop */
  ck_assert_uint_eq(count[1], tot.hops);
  ck_assert_uint_eq(count[2], tot.data.dropped + tot.ack.dropped);
  ck_assert_uint_eq(count[3], tot.data.lost + tot.ack.lost);
  ck_assert_uint_eq(count[4], tot.data.delivered);
  ck_assert_uint_eq(count[5], tot.ack.delivered);
  done(&r);
}
END_TEST

/* A packet is enqueued before it is transmitted, also when a switch cuts
 * through (its transmission begins before its last bit is in: the
 * enqueue row was written at the arrival, after the transmit row's time). */
START_TEST(test_packets_csv_enqueue_first) {
  for (int cut = 0; cut < 2; cut++) {
    /* the smaller gradient of test_packets_csv, for the sanitizers */
    Run r = run_traced_with("[packets]", "workload.params=100K",
                            cut ? "switching=cut-through" : "switching=store-and-forward");
    guint ncols, pairs = 0;
    g_autoptr(GPtrArray) rows = read_rows(r.dir, "packets.csv", &ncols);
    for (guint i = 0; i + 1 < rows->len; i++) {
      GPtrArray *a = rows->pdata[i], *b = rows->pdata[i + 1];
      if (strcmp(a->pdata[1], "enqueue") || strcmp(b->pdata[1], "transmit")) continue;
      for (int k = 2; k <= 5; k++) ck_assert_str_eq(a->pdata[k], b->pdata[k]); /* the same packet, the same link */
      ck_assert_msg(g_ascii_strtod(a->pdata[0], NULL) <= g_ascii_strtod(b->pdata[0], NULL),
                    "%s: row %u enqueued at %s s, transmitted at %s s", cut ? "cut-through" : "stored", i + 2,
                    (char *)a->pdata[0], (char *)b->pdata[0]);
      pairs++;
    }
    ck_assert_uint_gt(pairs, 1000);
    done(&r);
  }
}
END_TEST

START_TEST(test_timeline_json) {
  Run r = run_traced("[timeline]");
  g_autofree char *path = g_build_filename(r.dir, "timeline.json", NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  const char *end = value(text);
  ck_assert_msg(end != NULL && *ws(end) == '\0', "timeline.json is not one JSON value");
  ck_assert_ptr_nonnull(strstr(text, "\"cat\":\"compute\""));
  ck_assert_ptr_nonnull(strstr(text, "\"cat\":\"codec\""));
  ck_assert_ptr_nonnull(strstr(text, "\"cat\":\"message\""));
  ck_assert_ptr_nonnull(strstr(text, "\"name\":\"thread_name\""));
  ck_assert_ptr_nonnull(strstr(text, "\"args\":{\"name\":\"messages 1\"}"));
  ck_assert_ptr_nonnull(strstr(text, "\"ph\":\"C\"")); /* queue counters */
  /* The trace-event format requires the spans of one track (pid, tid) to
   * nest: two spans of a track either do not overlap or one holds the
   * other.  (The old single track per node broke this.)  Times are whole
   * nanoseconds, so the check is exact. */
  GHashTable *tracks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint spans = 0;
  for (guint i = 0; lines[i]; i++) {
    const char *x = strstr(lines[i], "\"ph\":\"X\",\"pid\":");
    if (!x) continue;
    unsigned pid, tid;
    long long ts_us, ts_ns, dur_us, dur_ns;
    ck_assert_int_eq(sscanf(x, "\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%lld.%lld,\"dur\":%lld.%lld", &pid, &tid,
                            &ts_us, &ts_ns, &dur_us, &dur_ns),
                     6);
    gint64 *key = g_new(gint64, 1);
    *key = ((gint64)pid << 32) | tid;
    GArray *a = g_hash_table_lookup(tracks, key);
    if (!a) {
      a = g_array_new(FALSE, FALSE, sizeof(gint64) * 2);
      g_hash_table_insert(tracks, key, a);
    } else {
      g_free(key);
    }
    gint64 span[2] = {ts_us * 1000 + ts_ns, ts_us * 1000 + ts_ns + dur_us * 1000 + dur_ns};
    g_array_append_val(a, span);
    spans++;
  }
  ck_assert_uint_gt(spans, 100);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, tracks);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    GArray *a = v;
    for (guint i = 0; i < a->len; i++)
      for (guint j = i + 1; j < a->len; j++) {
        const gint64 *p = &g_array_index(a, gint64, 2 * i), *q = &g_array_index(a, gint64, 2 * j);
        bool apart = p[1] <= q[0] || q[1] <= p[0];
        bool nested = (p[0] <= q[0] && q[1] <= p[1]) || (q[0] <= p[0] && p[1] <= q[1]);
        ck_assert_msg(apart || nested, "track pid %u tid %u: spans [%lld, %lld] and [%lld, %lld] ns overlap",
                      (unsigned)(*(gint64 *)k >> 32), (unsigned)(*(gint64 *)k & 0xffffffff), (long long)p[0],
                      (long long)p[1], (long long)q[0], (long long)q[1]);
      }
  }
  g_hash_table_destroy(tracks);
  /* a folder that does not exist yet is made (timeline.json alone once failed there) */
  g_autofree char *sub = g_build_filename(r.dir, "new", "deeper", NULL);
  GError *e = NULL;
  ck_assert_msg(cs_sim_write_outputs(r.sim, sub, &e), "%s", e ? e->message : "");
  g_autofree char *made = g_build_filename(sub, "timeline.json", NULL);
  ck_assert(g_file_test(made, G_FILE_TEST_EXISTS));
  /* and the checker refuses broken JSON */
  ck_assert_ptr_null(value("{\"a\":[1,2,}"));
  done(&r);
}
END_TEST

/* Tracing changes nothing: the summary (wall_s aside) is the same with
 * every trace on and with none. */
START_TEST(test_tracing_changes_nothing) {
  const char *sets[2] = {"[summary]", "[summary, iterations, messages, links, packets, timeline]"};
  char *rows[2];
  for (int k = 0; k < 2; k++) {
    Run r = run_traced(sets[k]);
    GPtrArray *f = cs_sim_summary_fields(r.sim);
    g_free(f->pdata[24]); /* wall_s */
    f->pdata[24] = g_strdup("-");
    g_ptr_array_add(f, NULL);
    rows[k] = g_strjoinv(",", (char **)f->pdata);
    g_ptr_array_free(f, TRUE);
    done(&r);
  }
  ck_assert_str_eq(rows[0], rows[1]);
  g_free(rows[0]);
  g_free(rows[1]);
}
END_TEST

/* messages.csv is written as the fabric forgets finished messages when
 * no other output needs them all at the end (timeline.json, raw flows):
 * memory follows the messages in flight (a ring of 4,096 workers held
 * 33.5 M, 2.2 GB, to write them at the end).  The file is byte for byte
 * the one a run that holds every message writes (timeline.json on), the
 * ones still in progress when `duration` cuts the run (no end_s) written
 * last, in their order; at packet fidelity with loss, and at flow. */
static const char *ring_cut = "seed: 3\n"
                              "defaults: {buffer: 64pkt, loss: 0.001}\n"
                              "topology: {type: star, workers: 8}\n"
                              "workload: {params: 500K, iterations: 4, compute: 200us, buckets: 500KB, collective: ring}\n"
                              "duration: 2ms\n";

START_TEST(test_messages_csv_streamed) {
  for (int k = 0; k < 2; k++) {
    const char *fid = k ? "fidelity=flow" : "fidelity=packet";
    Run a = run_yaml(ring_cut, "[summary, messages]", fid, NULL);
    Run b = run_yaml(ring_cut, "[summary, messages, timeline]", fid, NULL);
    const CsFabric *fa = cs_sim_fabric(a.sim), *fb = cs_sim_fabric(b.sim);
    uint32_t n = cs_fabric_messages(fa);
    ck_assert_uint_eq(n, cs_fabric_messages(fb));
    ck_assert_uint_eq(cs_fabric_first_message(fb), 0);            /* every one held to the end */
    ck_assert_uint_gt(cs_fabric_first_message(fa), n / 2);        /* most forgotten on the way */
    ck_assert_uint_lt(cs_fabric_first_message(fa), n);            /* the run was cut: some in progress */
    g_autofree char *pa = g_build_filename(a.dir, "messages.csv", NULL), *pb = g_build_filename(b.dir, "messages.csv", NULL);
    g_autofree char *ta = NULL, *tb = NULL;
    ck_assert(g_file_get_contents(pa, &ta, NULL, NULL) && g_file_get_contents(pb, &tb, NULL, NULL));
    ck_assert_str_eq(ta, tb);
    guint cols;
    g_autoptr(GPtrArray) rows = read_rows(a.dir, "messages.csv", &cols);
    ck_assert_uint_eq(rows->len, n); /* one row per message */
    const GPtrArray *last = g_ptr_array_index(rows, n - 1);
    ck_assert_str_eq(g_ptr_array_index(last, 7), ""); /* the last is in progress: no end_s */
    done(&a);
    done(&b);
  }
}
END_TEST

/* messages.csv's size told before the run: a ring of 2,048 workers sends
 * 2 x 2,047 x 2,048 = 8,384,512 messages an iteration (counted from the
 * plan of the first workers, past 4 M steps, and scaled), so 3 iterations
 * are 25.15 M rows, about 1.56 GB at 62 bytes a row: past a GiB, a note;
 * 2 iterations (1.04 GB), none; nor without messages.csv, nor without
 * links.csv (whose plan makes the estimate); a duration cuts it in
 * proportion (1 ms of about 0.9 s). */
static char *messages_note(const char *iterations, const char *traces, const char *duration) {
  const char *yaml = "topology: {type: star, workers: 2048}\n"
                     "fidelity: flow\n"
                     "workload: {params: 25M, compute: 0, buckets: 0, collective: ring}\n";
  GError *e = NULL;
  const char *sets[] = {iterations, traces, duration, NULL};
  CsScenario *sc = cs_scenario_load_string(yaml, "big.yaml", sets, &e);
  ck_assert_msg(sc != NULL, "%s", e ? e->message : "");
  CsSim *sim = cs_sim_new(sc, &e);
  ck_assert_msg(sim != NULL, "%s", e ? e->message : "");
  char *note = g_strdup(cs_sim_messages_note(sim));
  cs_sim_free(sim);
  cs_scenario_free(sc);
  return note;
}

START_TEST(test_messages_csv_estimate) {
  g_autofree char *three = messages_note("workload.iterations=3", "output.traces=[summary, messages, links]", NULL);
  ck_assert_ptr_nonnull(three);
  ck_assert_msg(strstr(three, "big.yaml: note: messages.csv will hold about 25.2 M rows, about 1.56 GB") != NULL, "%s",
                three);
  ck_assert_ptr_null(messages_note("workload.iterations=2", "output.traces=[summary, messages, links]", NULL));
  ck_assert_ptr_null(messages_note("workload.iterations=3", "output.traces=[summary, links]", NULL));
  ck_assert_ptr_null(messages_note("workload.iterations=3", "output.traces=[summary, messages]", NULL));
  ck_assert_ptr_null(messages_note("workload.iterations=3", "output.traces=[summary, messages, links]", "duration=1ms"));
}
END_TEST

/* The CSV writer formats numbers by hand (a ring of 4,096 workers writes
 * 33.5 M rows): each field as printf would, at the edges (0, 9, 10, 99,
 * 100, the largest and most negative 64-bit values, times below a second,
 * negative times), a field longer than the writer's 64 KB block, quoting,
 * and 20,000 rows across many blocks; written in place, by the writer's
 * thread from the first block, and by it from half-way (_i: 0, 1, 2). */
START_TEST(test_csv_fields) {
  g_autofree char *dir = g_dir_make_tmp("commsim-csv-XXXXXX", NULL);
  static const char *cols[] = {"u", "i", "t", "s", NULL};
  GError *e = NULL;
  CsCsv *c = cs_csv_open(dir, "x.csv", cols, &e);
  ck_assert_msg(c != NULL, "%s", e ? e->message : "");
  if (_i > 0) cs_csv_write_behind(c, _i == 1 ? 0 : 300000);
  GString *want = g_string_new("u,i,t,s\r\n");
  const uint64_t us[] = {0, 9, 10, 99, 100, 101, 999, 1000, 65535, 4294967296ULL, UINT64_MAX};
  const int64_t is[] = {0, -1, 7, -10, 99, -100, INT64_MAX, INT64_MIN};
  const CsTime ts[] = {0, 1, 999999999999LL, 1000000000000LL, 1000000000001LL, -1, -1000000000000LL, 123456789012345LL,
                       CS_TIME_MAX, -CS_TIME_MAX - 1};
  g_autofree char *big = g_malloc(100001);
  memset(big, 'x', 100000);
  big[100000] = '\0';
  for (int row = 0; row < 20000; row++) {
    uint64_t u = us[row % G_N_ELEMENTS(us)] + (row >= 11 && row % 3 == 0 ? (uint64_t)row : 0);
    int64_t i = is[row % G_N_ELEMENTS(is)];
    CsTime t = ts[row % G_N_ELEMENTS(ts)];
    const char *str = row == 7 ? big : row % 5 == 0 ? "a,\"b\"" : "w12";
    cs_csv_uint(c, u);
    cs_csv_int(c, i);
    cs_csv_time(c, t);
    cs_csv_str(c, str);
    cs_csv_end_row(c);
    uint64_t mag = t < 0 ? (uint64_t)(-(t + 1)) + 1 : (uint64_t)t;
    g_string_append_printf(want, "%" G_GUINT64_FORMAT ",%" G_GINT64_FORMAT ",%s%" G_GUINT64_FORMAT ".%012" G_GUINT64_FORMAT ",%s\r\n",
                           (guint64)u, (gint64)i, t < 0 ? "-" : "", (guint64)(mag / 1000000000000ULL), (guint64)(mag % 1000000000000ULL),
                           row % 5 == 0 ? "\"a,\"\"b\"\"\"" : str);
  }
  ck_assert(cs_csv_close(c, &e));
  g_autofree char *path = g_build_filename(dir, "x.csv", NULL), *got = NULL;
  gsize n;
  ck_assert(g_file_get_contents(path, &got, &n, NULL));
  ck_assert_uint_eq(n, want->len);
  ck_assert(memcmp(got, want->str, n) == 0);
  char buf[32];
  ck_assert_str_eq(cs_csv_format_time(-1, buf), "-0.000000000001");
  ck_assert_str_eq(cs_csv_format_time(1500000000000LL, buf), "1.500000000000");
  g_string_free(want, TRUE);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* A write that fails is reported at close, whether in place or by the
 * writer's thread (here the file size limit: EFBIG), and neither the file
 * nor its temporary is left; a file given up with the thread running
 * leaves nothing either (_i: 0 in place, 1 with the thread). */
START_TEST(test_csv_write_fails) {
  g_autofree char *dir = g_dir_make_tmp("commsim-csv-XXXXXX", NULL);
  static const char *cols[] = {"a", NULL};
  struct rlimit old, lim;
  ck_assert(getrlimit(RLIMIT_FSIZE, &old) == 0);
  lim = old;
  lim.rlim_cur = 200000;
  signal(SIGXFSZ, SIG_IGN);
  ck_assert(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  GError *e = NULL;
  CsCsv *c = cs_csv_open(dir, "x.csv", cols, &e);
  ck_assert(c != NULL);
  cs_csv_write_behind(c, _i ? 0 : CS_CSV_WRITE_BEHIND);
  for (int i = 0; i < 100000; i++) cs_csv_uint(c, 1000000 + (uint64_t)i), cs_csv_end_row(c); /* 900 KB */
  ck_assert(!cs_csv_close(c, &e));
  ck_assert(setrlimit(RLIMIT_FSIZE, &old) == 0);
  ck_assert_ptr_nonnull(e);
  ck_assert_msg(strstr(e->message, "x.csv: error: cannot write: ") && strstr(e->message, g_strerror(EFBIG)), "%s",
                e->message);
  g_clear_error(&e);
  c = cs_csv_open(dir, "y.csv", cols, &e);
  cs_csv_write_behind(c, 0);
  for (int i = 0; i < 100000; i++) cs_csv_uint(c, (uint64_t)i), cs_csv_end_row(c);
  cs_csv_abort(c);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_null(g_dir_read_name(d)); /* nothing left */
  g_rmdir(dir);
}
END_TEST

/* Reading a CSV file a row at a time (plot's messages.csv): quoted fields
 * with commas, quotes and a line break, \r\n and \n endings, an empty
 * line, a row with a field too many (left out), a last row without its
 * line ending, and rows across the reader's 64 KB blocks. */
typedef struct {
  GPtrArray *rows; /* each row's fields joined by '|' */
  guint headers;
} Rows;

static void collect(void *ctx, char **f, unsigned n, bool header) {
  Rows *r = ctx;
  r->headers += header;
  GString *g = g_string_new(NULL);
  for (unsigned i = 0; i < n; i++) g_string_append_printf(g, "%s%s", i ? "|" : "", f[i]);
  g_ptr_array_add(r->rows, g_string_free(g, FALSE));
}

START_TEST(test_csv_each_row) {
  g_autofree char *dir = g_dir_make_tmp("commsim-csvr-XXXXXX", NULL);
  GString *text = g_string_new("a,b,c\r\n"
                               "1,\"x,y\",3\r\n"
                               "\r\n"
                               "\"q\"\"q\",\"two\nlines\",\n"
                               "7,8,9,10\n");
  for (int i = 0; i < 10000; i++) g_string_append_printf(text, "%d,w%d,%d.%012d\r\n", i, i, i, i);
  g_string_append(text, "last,,end");
  g_autofree char *path = g_build_filename(dir, "r.csv", NULL);
  ck_assert(g_file_set_contents(path, text->str, (gssize)text->len, NULL));
  Rows r = {g_ptr_array_new_with_free_func(g_free), 0};
  ck_assert(cs_csv_each_row(dir, "r.csv", collect, &r));
  ck_assert_uint_eq(r.headers, 1);
  ck_assert_uint_eq(r.rows->len, 1 + 2 + 10000 + 1);
  ck_assert_str_eq(g_ptr_array_index(r.rows, 0), "a|b|c");
  ck_assert_str_eq(g_ptr_array_index(r.rows, 1), "1|x,y|3");
  ck_assert_str_eq(g_ptr_array_index(r.rows, 2), "q\"q|two\nlines|");
  ck_assert_str_eq(g_ptr_array_index(r.rows, 3 + 4321), "4321|w4321|4321.000000004321");
  ck_assert_str_eq(g_ptr_array_index(r.rows, r.rows->len - 1), "last||end");
  ck_assert(!cs_csv_each_row(dir, "none.csv", collect, &r));
  g_ptr_array_free(r.rows, TRUE);
  g_string_free(text, TRUE);
  g_unlink(path);
  g_rmdir(dir);
}
END_TEST

/* cs_csv_number gives g_ascii_strtod's value: for times as cs_csv_time
 * writes them (its own path), pseudo-random and at the edges of 2^53
 * ps, and for anything else (its fallback). */
START_TEST(test_csv_number) {
  char buf[40];
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 200000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    CsTime ps = (CsTime)(x % (i % 2 ? 1000000000000ULL : ((uint64_t)1 << 54)));
    cs_csv_format_time(ps, buf);
    ck_assert_msg(cs_csv_number(buf) == g_ascii_strtod(buf, NULL), "%s", buf);
  }
  const CsTime edge[] = {0, 1, ((CsTime)1 << 53) - 1, (CsTime)1 << 53, ((CsTime)1 << 53) + 1, 999999999999999999LL};
  for (size_t i = 0; i < G_N_ELEMENTS(edge); i++) {
    cs_csv_format_time(edge[i], buf);
    ck_assert_msg(cs_csv_number(buf) == g_ascii_strtod(buf, NULL), "%s", buf);
  }
  const char *other[] = {"0.5", "1e-3", "12", "-0.000000000001", "3.1234567890123", "1234567.000000000001", " 1"};
  for (size_t i = 0; i < G_N_ELEMENTS(other); i++) ck_assert(cs_csv_number(other[i]) == g_ascii_strtod(other[i], NULL));
  ck_assert(isnan(cs_csv_number("")));
  ck_assert(isnan(cs_csv_number("w3")));
}
END_TEST

static Suite *traces_suite(void) {
  Suite *s = suite_create("traces");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_numbers_whatever_the_locale);
  tcase_add_test(tc, test_links_csv_totals);
  tcase_add_test(tc, test_packets_csv);
  tcase_add_test(tc, test_packets_csv_enqueue_first);
  tcase_add_test(tc, test_timeline_json);
  tcase_add_test(tc, test_tracing_changes_nothing);
  tcase_add_test(tc, test_messages_csv_streamed);
  tcase_add_test(tc, test_messages_csv_estimate);
  tcase_add_loop_test(tc, test_csv_fields, 0, 3);
  tcase_add_loop_test(tc, test_csv_write_fails, 0, 2);
  tcase_add_test(tc, test_csv_each_row);
  tcase_add_test(tc, test_csv_number);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(traces_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
