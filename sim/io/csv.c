/* csv.c - buffered CSV rows, written atomically. */
#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commsim/csv.h"
#include "commsim/yamltree.h"

struct CsCsv {
  FILE *f;
  char *tmp, *final;
  bool first; /* no field yet on this row */
};

void cs_locale_init(void) {
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
}

const char *cs_csv_format_time(CsTime ps, char *buf) {
  uint64_t mag = ps < 0 ? (uint64_t)(-(ps + 1)) + 1 : (uint64_t)ps;
  snprintf(buf, 32, "%s%" G_GUINT64_FORMAT ".%012" G_GUINT64_FORMAT, ps < 0 ? "-" : "",
           (guint64)(mag / 1000000000000ULL), (guint64)(mag % 1000000000000ULL));
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
  setvbuf(c->f, NULL, _IOFBF, 1 << 16);
  c->first = true;
  for (const char *const *col = columns; *col; col++) cs_csv_str(c, *col);
  cs_csv_end_row(c);
  return c;
}

static void sep(CsCsv *c) {
  if (!c->first) fputc(',', c->f);
  c->first = false;
}

void cs_csv_str(CsCsv *c, const char *s) {
  sep(c);
  if (strpbrk(s, ",\"\r\n")) {
    fputc('"', c->f);
    for (const char *p = s; *p; p++) {
      if (*p == '"') fputc('"', c->f);
      fputc(*p, c->f);
    }
    fputc('"', c->f);
  } else {
    fputs(s, c->f);
  }
}

void cs_csv_int(CsCsv *c, int64_t v) {
  sep(c);
  fprintf(c->f, "%" G_GINT64_FORMAT, (gint64)v);
}

void cs_csv_uint(CsCsv *c, uint64_t v) {
  sep(c);
  fprintf(c->f, "%" G_GUINT64_FORMAT, (guint64)v);
}

void cs_csv_time(CsCsv *c, CsTime ps) {
  char buf[32];
  sep(c);
  fputs(cs_csv_format_time(ps, buf), c->f);
}

void cs_csv_real(CsCsv *c, double v) {
  sep(c);
  fprintf(c->f, "%.9g", v);
}

void cs_csv_empty(CsCsv *c) { sep(c); }

void cs_csv_end_row(CsCsv *c) {
  fputs("\r\n", c->f);
  c->first = true;
}

bool cs_csv_close(CsCsv *c, GError **error) {
  bool ok = fflush(c->f) == 0 && !ferror(c->f);
  int e = errno;
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

char *cs_csv_temp_name(const char *dir, const char *name) {
  g_autofree char *base = g_strdup_printf(".%s.tmp.%s.%d", name, g_get_host_name(), (int)getpid());
  return g_build_filename(dir, base, NULL);
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
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to judge) */
    g_autofree char *path = g_build_filename(dir, n, NULL);
    removed += g_unlink(path) == 0;
  }
  g_dir_close(d);
  return removed;
}

void cs_csv_abort(CsCsv *c) {
  fclose(c->f);
  g_unlink(c->tmp);
  g_free(c->tmp);
  g_free(c->final);
  g_free(c);
}
