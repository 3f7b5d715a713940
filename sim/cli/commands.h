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

enum { CS_EXIT_OK = 0, CS_EXIT_RUNTIME = 1, CS_EXIT_USAGE = 2 };

#endif
