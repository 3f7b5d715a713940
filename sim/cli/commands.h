/* commands.h - the table of `commsim` commands.
 *
 * Each command is one file in sim/cli/ with a `cs_cmd_NAME(argc, argv)`
 * entry point that parses its own options (argv[0] is the command name)
 * and returns the exit status: 0 success, 1 runtime failure, 2 bad usage
 * or bad scenario.  A command appears in the table, and so in --help,
 * only once it exists.
 */
#ifndef COMMSIM_CLI_COMMANDS_H
#define COMMSIM_CLI_COMMANDS_H

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} CsCommand;

/* Terminated by an entry whose name is NULL. */
extern const CsCommand cs_commands[];

int cs_cmd_validate(int argc, char **argv);
int cs_cmd_run(int argc, char **argv);
int cs_cmd_model(int argc, char **argv);
int cs_cmd_sweep(int argc, char **argv);
int cs_cmd_plot(int argc, char **argv);
int cs_cmd_codecs(int argc, char **argv);
int cs_cmd_keys(int argc, char **argv);

enum { CS_EXIT_OK = 0, CS_EXIT_RUNTIME = 1, CS_EXIT_USAGE = 2 };

#include <signal.h>
/* The signal (SIGINT, SIGTERM) that asked the run to stop, or 0. */
extern volatile sig_atomic_t cs_cli_signal;
/* From now on the first SIGINT or SIGTERM sets cs_cli_signal (runs stop
 * cleanly within 1024 events); after it a SIGINT kills as usual, a
 * repeated SIGTERM is ignored. */
void cs_cli_catch_signals(void);
/* The exit status after a signal: 128 + its number, as a shell reports. */
int cs_cli_signal_status(void);

#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"

/* The --set option of every command that reads a scenario (sets: a GStrv). */
#define CS_CLI_SET_OPTION(sets) \
  {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &(sets), "Override a key by its dotted path: a value, [a, b] or {k: v}", "KEY=VALUE"}

/* A scenario with its network and routes, for commands that need no run. */
typedef struct {
  CsScenario *s;
  CsTopology *t;
  CsRoutes *r;
} CsCliWorld;
/* Parse `FILE.yaml [--set KEY=VALUE]...` and build the world; -1 when it is
 * ready, else the exit status (the error is printed). */
int cs_cli_load_world(const char *command, const char *summary, int argc, char **argv, CsCliWorld *w);
void cs_cli_world_clear(CsCliWorld *w);

#endif
