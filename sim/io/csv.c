/* csv.c - buffered CSV rows, written atomically. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commsim/csv.h"
#include "commsim/yamltree.h"

/* Rows are formatted into a block by hand and written a block at a time:
 * a ring of 4,096 workers writes 33.5 M rows of messages.csv, and stdio
 * (a locked call per character, printf per number) took about 0.5 us a
 * row, more than the simulation's own time per message.
 *
 * A file past CS_CSV_WRITE_BEHIND bytes is written on by a thread of its
 * own: the caller hands it each full block and goes on formatting the
 * next.  Below that the kernel copies a block into the page cache quickly
 * and handing it to another core costs more processor time than it saves
 * (resnet50-lossy-link's 238 MB packets.csv: wall time the same, 21 %
 * more processor time); past the page cache's share of dirty pages, the
 * writes wait on the disk, and a thread lets the run go on meanwhile (a
 * ring of 16,384 workers, 33 GB of messages.csv: 194 s in place, 148 s
 * with the thread past the first GiB).  At most CSV_BLOCKS blocks exist
 * per file, so a writer slower than the rows holds the caller back
 * instead of growing.
 * The bytes are those written in place, in the same order. */
#define CSV_BUF (1u << 16)
#define CSV_FIELD 48 /* room for any number field: flushed before when less is left */
#define CSV_BLOCKS 4

typedef struct {
  size_t len;
  char data[CSV_BUF];
} Block;

struct CsCsv {
  FILE *f;
  char *tmp, *final;
  bool first; /* no field yet on this row */
  size_t len; /* bytes in buf */
  char *buf;  /* cur's data */
  Block *cur; /* the block being filled */
  GThread *writer;           /* none until `behind` is spent */
  uint64_t behind;           /* bytes to write in place before a thread writes (all, when none could start) */
  GAsyncQueue *full, *spare; /* blocks to write; blocks written */
  int werr;                  /* the writer's first failed write's errno (read after the join) */
};

static Block stop_block; /* tells the writer to end */

static gpointer writer_main(gpointer p) {
  CsCsv *c = p;
  for (;;) {
    Block *b = g_async_queue_pop(c->full);
    if (b == &stop_block) return NULL;
    if (!c->werr && fwrite(b->data, 1, b->len, c->f) != b->len) c->werr = errno ? errno : EIO;
    g_async_queue_push(c->spare, b);
  }
}

/* The writer and the spare blocks, with every signal blocked in the
 * thread (SIGINT and SIGTERM are the run's, and the write is not to be
 * interrupted); false when no thread could be started. */
static bool start_writer(CsCsv *c) {
  c->full = g_async_queue_new();
  c->spare = g_async_queue_new();
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  c->writer = g_thread_try_new("csv", writer_main, c, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!c->writer) {
    g_async_queue_unref(c->full);
    g_async_queue_unref(c->spare);
    c->full = c->spare = NULL;
    return false;
  }
  for (int i = 1; i < CSV_BLOCKS; i++) g_async_queue_push(c->spare, g_new(Block, 1));
  return true;
}

static void flush_buf(CsCsv *c) {
  if (!c->len) return;
  if (!c->writer && c->behind < c->len && !start_writer(c)) c->behind = UINT64_MAX;
  if (!c->writer) {
    if (!c->werr && fwrite(c->buf, 1, c->len, c->f) != c->len) c->werr = errno ? errno : EIO;
    c->behind -= MIN(c->behind, c->len);
    c->len = 0;
    return;
  }
  c->cur->len = c->len;
  g_async_queue_push(c->full, c->cur);
  c->cur = g_async_queue_pop(c->spare);
  c->buf = c->cur->data;
  c->len = 0;
}

/* The writer stopped and joined, the blocks freed (before the file is
 * closed or removed). */
static void stop_writer(CsCsv *c) {
  if (c->writer) {
    g_async_queue_push(c->full, &stop_block);
    g_thread_join(c->writer);
    c->writer = NULL;
    for (Block *b; (b = g_async_queue_try_pop(c->spare));) g_free(b);
    g_async_queue_unref(c->full);
    g_async_queue_unref(c->spare);
  }
  g_free(c->cur);
  c->cur = NULL;
}

/* Room for n bytes at the end of buf (n <= CSV_BUF). */
static inline char *room(CsCsv *c, size_t n) {
  if (CSV_BUF - c->len < n) flush_buf(c);
  return c->buf + c->len;
}

static void put(CsCsv *c, const char *s, size_t n) {
  while (n > CSV_BUF - c->len) { /* (a field longer than what is left: in pieces) */
    size_t k = CSV_BUF - c->len;
    memcpy(c->buf + c->len, s, k);
    c->len += k;
    s += k, n -= k;
    flush_buf(c);
  }
  memcpy(c->buf + c->len, s, n);
  c->len += n;
}

static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                            "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                            "8081828384858687888990919293949596979899";

/* v's decimal digits ending at end, two at a time; returns where they start. */
static inline char *digits(char *end, uint64_t v) {
  while (v >= 100) {
    unsigned d = (unsigned)(v % 100);
    v /= 100;
    end -= 2;
    memcpy(end, pairs + 2 * d, 2);
  }
  if (v >= 10) {
    end -= 2;
    memcpy(end, pairs + 2 * v, 2);
  } else {
    *--end = (char)('0' + v);
  }
  return end;
}

/* v < 10^(2 k) as exactly 2 k digits ending at end. */
static inline char *digits_fixed(char *end, uint32_t v, int k) {
  for (int i = 0; i < k; i++) {
    end -= 2;
    memcpy(end, pairs + 2 * (v % 100), 2);
    v /= 100;
  }
  return end;
}

void cs_locale_init(void) {
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
}

/* ps as seconds with 12 decimals into buf (at least 32 bytes, not
 * terminated); returns its length. */
static size_t time_text(CsTime ps, char *buf) {
  uint64_t mag = ps < 0 ? (uint64_t)(-(ps + 1)) + 1 : (uint64_t)ps;
  char tmp[32], *end = tmp + sizeof tmp, *p = end;
  uint64_t frac = mag % 1000000000000ULL;
  p = digits_fixed(p, (uint32_t)(frac % 1000000), 3);
  p = digits_fixed(p, (uint32_t)(frac / 1000000), 3);
  *--p = '.';
  p = digits(p, mag / 1000000000000ULL);
  if (ps < 0) *--p = '-';
  size_t n = (size_t)(end - p);
  memcpy(buf, p, n);
  return n;
}

const char *cs_csv_format_time(CsTime ps, char *buf) {
  buf[time_text(ps, buf)] = '\0';
  return buf;
}

CsCsv *cs_csv_open(const char *dir, const char *name, const char *const *columns, GError **error) {
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    int e = errno;
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot create the output folder: %s", dir,
                g_strerror(e));
    return NULL;
  }
  CsCsv *c = g_new0(CsCsv, 1);
  c->final = g_build_filename(dir, name, NULL);
  c->tmp = cs_csv_temp_name(dir, name);
  c->f = fopen(c->tmp, "w");
  if (!c->f) {
    int e = errno;
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write: %s", c->final, g_strerror(e));
    g_free(c->tmp);
    g_free(c->final);
    g_free(c);
    return NULL;
  }
  c->cur = g_new(Block, 1);
  c->buf = c->cur->data;
  c->behind = CS_CSV_WRITE_BEHIND;
  c->first = true;
  for (const char *const *col = columns; *col; col++) cs_csv_str(c, *col);
  cs_csv_end_row(c);
  return c;
}

void cs_csv_write_behind(CsCsv *c, uint64_t after) { c->behind = after; }

static inline void sep(CsCsv *c) {
  if (!c->first) *room(c, 1) = ',', c->len++;
  c->first = false;
}

void cs_csv_str(CsCsv *c, const char *s) {
  sep(c);
  if (strpbrk(s, ",\"\r\n")) {
    put(c, "\"", 1);
    for (const char *p = s; *p; p++) {
      if (*p == '"') put(c, "\"", 1);
      put(c, p, 1);
    }
    put(c, "\"", 1);
  } else {
    put(c, s, strlen(s));
  }
}

void cs_csv_int(CsCsv *c, int64_t v) {
  sep(c);
  char tmp[24], *end = tmp + sizeof tmp;
  char *p = digits(end, v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v);
  if (v < 0) *--p = '-';
  put(c, p, (size_t)(end - p));
}

void cs_csv_uint(CsCsv *c, uint64_t v) {
  sep(c);
  char tmp[24], *end = tmp + sizeof tmp, *p = digits(end, v);
  put(c, p, (size_t)(end - p));
}

void cs_csv_time(CsCsv *c, CsTime ps) {
  sep(c);
  c->len += time_text(ps, room(c, CSV_FIELD));
}

void cs_csv_real(CsCsv *c, double v) {
  sep(c);
  char tmp[40];
  int n = snprintf(tmp, sizeof tmp, "%.9g", v);
  put(c, tmp, (size_t)n);
}

void cs_csv_empty(CsCsv *c) { sep(c); }

void cs_csv_end_row(CsCsv *c) {
  put(c, "\r\n", 2);
  c->first = true;
}

bool cs_csv_close(CsCsv *c, GError **error) {
  flush_buf(c);
  stop_writer(c);
  bool ok = !c->werr && fflush(c->f) == 0 && !ferror(c->f);
  int e = c->werr ? c->werr : errno;
  if (fclose(c->f) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (ok && g_rename(c->tmp, c->final) != 0) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_IO, "%s: error: cannot write: %s", c->final, g_strerror(e));
    g_unlink(c->tmp);
  }
  g_free(c->tmp);
  g_free(c->final);
  g_free(c);
  return ok;
}

/* (a row at a time, for files of a row per message: see csv.h) */
bool cs_csv_each_row(const char *dir, const char *name, CsCsvRowFn fn, void *ctx) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  GString *row = g_string_new(NULL);  /* the row's fields, each ended by a NUL */
  GArray *starts = g_array_new(FALSE, FALSE, sizeof(gsize));
  GPtrArray *fields = g_ptr_array_new();
  guint ncols = 0;
  bool quoted = false, in_field = false, after_quote = false, pending_cr = false;
  char buf[1 << 16];
  size_t got;
  bool eof = false;
  while (!eof) {
    got = fread(buf, 1, sizeof buf, f);
    eof = got < sizeof buf;
    for (size_t i = 0; i <= got; i++) {
      bool end_of_file = i == got;
      if (end_of_file && !eof) break;
      char ch = end_of_file ? '\n' : buf[i];
      if (end_of_file && !in_field && starts->len == 0) break; /* (the last row ended with its line) */
      if (pending_cr) { /* \r\n ends a row once */
        pending_cr = false;
        if (ch == '\n') continue;
      }
      if (quoted) {
        if (ch == '"') quoted = false, after_quote = true;
        else g_string_append_c(row, ch);
        continue;
      }
      if (ch == '"' && after_quote) { /* "" in a quoted field */
        g_string_append_c(row, '"');
        quoted = true, after_quote = false;
        continue;
      }
      after_quote = false;
      if (!in_field) {
        gsize at = row->len;
        g_array_append_val(starts, at);
        in_field = true;
        if (ch == '"') {
          quoted = true;
          continue;
        }
      }
      if (ch != ',' && ch != '\r' && ch != '\n') {
        g_string_append_c(row, ch);
        continue;
      }
      g_string_append_c(row, '\0');
      in_field = false;
      if (ch == ',') continue;
      pending_cr = ch == '\r';
      /* the row is whole */
      g_ptr_array_set_size(fields, 0);
      for (guint k = 0; k < starts->len; k++) g_ptr_array_add(fields, row->str + g_array_index(starts, gsize, k));
      bool empty = fields->len == 1 && !*(char *)fields->pdata[0];
      if (!empty) {
        if (ncols == 0) {
          ncols = fields->len;
          fn(ctx, (char **)fields->pdata, fields->len, true);
        } else if (fields->len == ncols) {
          fn(ctx, (char **)fields->pdata, fields->len, false);
        }
      }
      g_string_truncate(row, 0);
      g_array_set_size(starts, 0);
    }
  }
  fclose(f);
  g_string_free(row, TRUE);
  g_array_free(starts, TRUE);
  g_ptr_array_free(fields, TRUE);
  return ncols > 0;
}

/* A time as cs_csv_time writes it (seconds with 12 decimals: whole
 * picoseconds) is that integer / 1e12, which is also strtod's correctly
 * rounded value while it stays below 2^53 ps; anything else goes to
 * g_ascii_strtod (half of `plot`'s time on messages.csv went there). */
double cs_csv_number(const char *s) {
  uint64_t ps = 0;
  const char *q = s;
  while (*q >= '0' && *q <= '9' && q - s < 6) ps = ps * 10 + (uint64_t)(*q++ - '0');
  if (q > s && *q == '.') {
    const char *f = ++q;
    while (*q >= '0' && *q <= '9' && q - f < 12) ps = ps * 10 + (uint64_t)(*q++ - '0');
    if (!*q && q - f == 12 && ps < ((uint64_t)1 << 53)) return (double)ps / 1e12;
  }
  char *e;
  double v = g_ascii_strtod(s, &e);
  return *s && e != s ? v : NAN;
}

char *cs_csv_temp_name(const char *dir, const char *name) {
  g_autofree char *base = g_strdup_printf(".%s.tmp.%s.%d", name, g_get_host_name(), (int)getpid());
  return g_build_filename(dir, base, NULL);
}

/* Whether process pid of this host may still write its file: it exists
 * (or is not ours to signal) and is not a zombie.  A killed sweep rank
 * whose parent died is reparented, and where PID 1 does not reap (a
 * container's shell) it stays a zombie, which kill(pid, 0) still finds:
 * its files were left on every rerun (test_mpi's killed rank). */
static bool process_alive(pid_t pid) {
  if (kill(pid, 0) != 0) return errno != ESRCH;
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
  g_autofree char *stat = NULL;
  if (!g_file_get_contents(path, &stat, NULL, NULL)) return true; /* no /proc: as kill says */
  const char *close = strrchr(stat, ')'); /* "pid (comm) S ...": comm may hold anything */
  return !(close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
}

unsigned cs_csv_remove_stale(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d) return 0;
  unsigned removed = 0;
  const char *n;
  g_autofree char *mine = g_strdup_printf(".tmp.%s.", g_get_host_name());
  while ((n = g_dir_read_name(d))) {
    const char *tmp = n[0] == '.' ? strstr(n, mine) : NULL;
    guint64 pid;
    if (!tmp || !g_ascii_string_to_unsigned(tmp + strlen(mine), 10, 1, G_MAXINT, &pid, NULL)) continue;
    if (process_alive((pid_t)pid)) continue; /* (or not ours to judge) */
    g_autofree char *path = g_build_filename(dir, n, NULL);
    removed += g_unlink(path) == 0;
  }
  g_dir_close(d);
  return removed;
}

void cs_csv_abort(CsCsv *c) {
  stop_writer(c);
  fclose(c->f);
  g_unlink(c->tmp);
  g_free(c->tmp);
  g_free(c->final);
  g_free(c);
}
