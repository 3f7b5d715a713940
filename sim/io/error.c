/* error.c - located errors (error.h). */
#include "config.h"

#include <stdarg.h>

#include "commsim/error.h"

G_DEFINE_QUARK(cs-scenario-error-quark, cs_scenario_error)

void cs_note_at(GString *out, CsLoc at, const char *fmt, ...) {
  if (out->len) g_string_append_c(out, '\n');
  if (at.file && at.line > 0) g_string_append_printf(out, "%s:%d:%d: note: ", at.file, at.line, at.col);
  else if (at.file) g_string_append_printf(out, "%s: note: ", at.file);
  else g_string_append(out, "note: ");
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(out, fmt, ap);
  va_end(ap);
}

void cs_error_at(GError **error, CsLoc at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (at.file && at.line > 0)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s:%d:%d: error: %s", at.file, at.line, at.col,
                msg);
  else if (at.file)
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "%s: error: %s", at.file, msg);
  else
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID, "error: %s", msg);
}
