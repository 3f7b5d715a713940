/* main.c - the `commsim` program: global options and command dispatch.
 * All simulation work lives in libcommsim; this file only routes argv. */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "commsim/csv.h"

static char *commands_description(void) {
  GString *s = g_string_new(NULL);
  if (cs_commands[0].name == NULL) {
    g_string_append(s, "No simulation commands are built into this version yet.\n");
  } else {
    g_string_append(s, "Commands:\n");
    for (const CsCommand *c = cs_commands; c->name; c++)
      g_string_append_printf(s, "  %-10s %s\n", c->name, c->summary);
    g_string_append(s, "\n'commsim COMMAND --help' describes a command's options.\n");
  }
  g_string_append(s, "\nExit status: 0 success, 1 runtime failure, 2 bad usage or bad scenario.\n");
  return g_string_free(s, FALSE);
}

int main(int argc, char **argv) {
  cs_locale_init(); /* the user's, but numbers as in C: files write 0.5, never 0,5 */
  if (argc > 1 && argv[1][0] != '-') {
    for (const CsCommand *c = cs_commands; c->name; c++)
      if (strcmp(c->name, argv[1]) == 0) {
        /* --help's usage line reads "commsim run ...", not "run ..." */
        g_autofree char *prg = g_strdup_printf("commsim %s", c->name);
        g_set_prgname(prg);
        int status = c->run(argc - 1, argv + 1);
        /* a summary lost to a full disk or a closed pipe is a failure too */
        if (fflush(stdout) != 0 || ferror(stdout)) {
          int e = errno;
          fprintf(stderr, "commsim %s: error: cannot write to standard output: %s\n", c->name,
                  e ? g_strerror(e) : "write error");
          if (status == CS_EXIT_OK) status = CS_EXIT_RUNTIME;
        }
        return status;
      }
    fprintf(stderr, "commsim: unknown command '%s' (see 'commsim --help')\n", argv[1]);
    return CS_EXIT_USAGE;
  }

  gboolean version = FALSE;
  GOptionEntry entries[] = {
      {"version", 'V', 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("COMMAND [ARGS...]");
  g_option_context_set_summary(ctx,
                               "commsim: a discrete-event network simulator for the communication\n"
                               "of distributed deep-learning training.");
  g_autofree char *desc = commands_description();
  g_option_context_set_description(ctx, desc);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    fprintf(stderr, "commsim: %s (see 'commsim --help')\n", error->message);
    return CS_EXIT_USAGE;
  }
  if (version) {
    printf("commsim %s\n", PACKAGE_VERSION);
    return CS_EXIT_OK;
  }
  /* No command: the help, as a usage error. */
  g_autofree char *help = g_option_context_get_help(ctx, TRUE, NULL);
  fputs(help, stderr);
  return CS_EXIT_USAGE;
}
