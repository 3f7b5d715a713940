/* cmd_keys.c - `commsim keys`: every scenario key from the parameter
 * table (params.h), with its default, its values and what it means; the
 * values of keys that name a registry row (protocols, collectives, ...)
 * with each row's own line.  `--markdown` prints the reference's table
 * rows, as docs/scenario.md holds them. */
#include "config.h"

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "commsim/params.h"
#include "commsim/yamltree.h"

static int usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "commsim keys: %s (see 'commsim keys --help')\n", msg);
  return CS_EXIT_USAGE;
}

/* The reference's cells carry markdown backquotes; a terminal does not need them. */
static char *plain(const char *text) {
  GString *s = g_string_new(NULL);
  for (const char *c = text; *c; c++)
    if (*c != '`') g_string_append_c(s, *c);
  return g_string_free(s, FALSE);
}

static bool matches(const CsParam *p, const char *prefix) {
  if (!prefix) return true;
  size_t n = strlen(prefix);
  return !strncmp(p->key, prefix, n) && (p->key[n] == '\0' || p->key[n] == '.' || p->key[n] == '[');
}

static void print_key(const CsParam *p) {
  g_autofree char *values = plain(p->values), *dflt = plain(p->doc_default), *help = plain(p->help);
  printf("%s", p->key);
  if (*dflt) printf("  (default: %s)", dflt);
  printf("\n");
  if (*values) printf("    values: %s\n", values);
  printf("    %s\n", help);
  if (p->kind == CS_KEY_ENUM && p->names && p->choice_help)
    for (uint32_t i = 0; p->names()[i]; i++) printf("      %-18s %s\n", p->names()[i], p->choice_help(i));
}

int cs_cmd_keys(int argc, char **argv) {
  gboolean markdown = FALSE;
  GOptionEntry entries[] = {
      {"markdown", 0, 0, G_OPTION_ARG_NONE, &markdown,
       "Print the rows of the reference's tables (docs/scenario.md) instead", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("[KEY] - list the scenario keys");
  g_option_context_set_summary(ctx,
                               "Lists every key a scenario file takes, with its default, its values and what it\n"
                               "means; KEY (a dotted key or a section such as transport or workload.compression)\n"
                               "limits the list to it.  List items are written with [], as links[].latency.");
  g_option_context_set_description(ctx, "Exit status: 0 success, 2 bad usage.\n");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) return usage_error("%s", error->message);
  if (argc > 2) return usage_error("unexpected argument '%s'", argv[2]);
  const char *prefix = argc == 2 ? argv[1] : NULL;
  int shown = 0;
  for (const CsParam *p = cs_params; p->key; p++) {
    if (!matches(p, prefix)) continue;
    if (markdown) {
      g_autofree char *row = cs_param_reference_row(p);
      printf("%s\n", row);
    } else {
      print_key(p);
    }
    shown++;
  }
  if (shown == 0) {
    GPtrArray *keys = g_ptr_array_new();
    for (const CsParam *p = cs_params; p->key; p++) g_ptr_array_add(keys, (char *)p->key);
    g_ptr_array_add(keys, NULL);
    const char *close = cs_closest(prefix, (const char *const *)keys->pdata);
    int status = close ? usage_error("no key or section '%s' (did you mean '%s'?)", prefix, close)
                       : usage_error("no key or section '%s'", prefix);
    g_ptr_array_free(keys, TRUE);
    return status;
  }
  return CS_EXIT_OK;
}
