/* error.h - located errors.
 *
 * Every refusal of a scenario says where: FILE:LINE:COLUMN (or the --set
 * that gave the value) before "error:".  A spec keeps the CsLoc of the
 * YAML node it was read from, so that a check made long after reading -
 * once the network is built, say - still points at the key.
 *
 * Layer 0 (base; docs/design.md). Owns located errors (CsLoc) and their
 * messages; does not touch anything above the base.
 */
#ifndef COMMSIM_ERROR_H
#define COMMSIM_ERROR_H

#include <glib.h>

#define CS_SCENARIO_ERROR (cs_scenario_error_quark())
GQuark cs_scenario_error_quark(void);
typedef enum {
  CS_SCENARIO_ERROR_INVALID,     /* a bad scenario or usage */
  CS_SCENARIO_ERROR_IO,          /* a file that cannot be read or written */
  CS_SCENARIO_ERROR_INTERNAL,    /* a broken invariant: a bug */
  CS_SCENARIO_ERROR_INTERRUPTED, /* stopped by a signal (SIGINT, SIGTERM) */
  CS_SCENARIO_ERROR_STUCK,       /* ended with messages that could never arrive (a PFC deadlock, the watchdog) */
} CsScenarioError;

/* Where a value came from: a file (or a "--set K=V" text) and a 1-based
 * line and column (0: none, as for a --set).  `file` is owned by whoever
 * owns the spec (a scenario interns it). */
typedef struct {
  const char *file;
  int line, col;
} CsLoc;

/* A name used somewhere in the file (a server, a node), with where. */
typedef struct {
  char *name;
  CsLoc at;
} CsNameRef;

/* Set `error` (CS_SCENARIO_ERROR_INVALID) to "FILE:LINE:COL: error: MESSAGE",
 * "FILE: error: MESSAGE" without a line, "error: MESSAGE" without a file. */
void cs_error_at(GError **error, CsLoc at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* Append to `out` a note located as cs_error_at locates an error
 * ("FILE:LINE:COL: note: MESSAGE", ...), on a line of its own. */
void cs_note_at(GString *out, CsLoc at, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
