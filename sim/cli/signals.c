/* signals.c - SIGINT and SIGTERM ask a run or a sweep to stop cleanly. */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "commands.h"

volatile sig_atomic_t cs_cli_signal = 0;

/* The first signal asks for a clean stop and decides the exit status.
 * After it, a SIGINT (a second Ctrl-C, however the first came) kills at
 * once; a repeated SIGTERM does not, because a batch system and mpirun may
 * both send one to the same process for one stop.  signal() is
 * async-signal-safe. */
static void on_signal(int sig) {
  if (cs_cli_signal == 0) cs_cli_signal = sig;
  signal(SIGINT, SIG_DFL);
}

void cs_cli_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cs_cli_signal_status(void) { return 128 + (int)cs_cli_signal; }
