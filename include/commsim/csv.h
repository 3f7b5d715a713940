/* csv.h - RFC 4180 CSV files that exist only when whole.
 *
 * A file is written under a temporary name in its folder and renamed to
 * its own name by cs_csv_close(), so a file that exists is complete (a run
 * stopped half-way leaves the old file or none).  Times are written in
 * seconds with 12 decimals: exactly the simulated picoseconds.
 *
 * Layer 0 (base; docs/design.md). Owns CSV files written whole or not at all;
 * does not touch what the rows mean.
 */
#ifndef COMMSIM_CSV_H
#define COMMSIM_CSV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "commsim/engine.h"

typedef struct CsCsv CsCsv;

/* The locale for a program that writes commsim's files: the user's for
 * messages and characters, "C" for numbers, so that a half is written
 * 0.5 and not 0,5 (which splits a CSV column in two) whatever LANG or
 * LC_ALL say.  commsim's main() calls it first; a
 * program that embeds the library and sets a locale must keep LC_NUMERIC
 * at "C" as well. */
void cs_locale_init(void);

/* Create DIR (and parents) if needed and open DIR/NAME for writing, with
 * the header row.  `columns` is NULL-terminated. */
CsCsv *cs_csv_open(const char *dir, const char *name, const char *const *columns, GError **error);
void cs_csv_str(CsCsv *c, const char *s);
void cs_csv_int(CsCsv *c, int64_t v);
void cs_csv_uint(CsCsv *c, uint64_t v);
void cs_csv_time(CsCsv *c, CsTime ps);
void cs_csv_real(CsCsv *c, double v);
void cs_csv_empty(CsCsv *c);
void cs_csv_end_row(CsCsv *c);
/* Past this many bytes a file is written by a thread of its own while
 * the caller goes on (the writes of a file larger than the page cache's
 * share wait on the disk); cs_csv_write_behind() sets it per file, 0: from
 * the first full block.  The bytes are the same. */
#define CS_CSV_WRITE_BEHIND (UINT64_C(1) << 30)
void cs_csv_write_behind(CsCsv *c, uint64_t after);
/* Flush, check every write, rename into place; frees c either way. */
bool cs_csv_close(CsCsv *c, GError **error);
/* Give up: remove the temporary file; frees c. */
void cs_csv_abort(CsCsv *c);

/* The temporary name of DIR/NAME: DIR/.NAME.tmp.HOST.PID (to free). */
char *cs_csv_temp_name(const char *dir, const char *name);
/* Remove the temporary files that processes of this host no longer alive
 * (gone, or zombies) left in DIR (a run killed by SIGKILL cannot remove
 * its own); files of other hosts (a sweep's ranks on a shared file
 * system) are left alone.  Returns how many. */
unsigned cs_csv_remove_stale(const char *dir);

/* "%d.%012d" seconds of a time, into buf (at least 32 bytes). */
const char *cs_csv_format_time(CsTime ps, char *buf);

/* Reading.  DIR/NAME a row at a time, without holding the file (a
 * messages.csv of a ring of 16,384 workers is 33 GB): RFC 4180 fields,
 * quoted ones unquoted ("" for a quote; a quoted field may hold commas
 * and line breaks), rows ended by \r\n or \n; the header goes to fn with
 * `header` true, then each row with as many fields (others, and empty
 * lines, are left out).  The fields are valid during the call.  False
 * when the file cannot be opened or has no row. */
typedef void (*CsCsvRowFn)(void *ctx, char **fields, unsigned n, bool header);
bool cs_csv_each_row(const char *dir, const char *name, CsCsvRowFn fn, void *ctx);
/* A field's number (g_ascii_strtod's value, NAN for an empty or
 * non-numeric field), a time written by cs_csv_time without a call to it. */
double cs_csv_number(const char *s);

#endif
