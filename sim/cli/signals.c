/* signals.c - SIGINT and SIGTERM ask a run or a sweep to stop cleanly. */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "commands.h"

volatile sig_atomic_t cs_cli_signal = 0;

static void on_signal(int sig) { cs_cli_signal = sig; }

void cs_cli_catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* the first signal asks; a second one (the default action) kills */
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cs_cli_signal_status(void) { return 128 + (int)cs_cli_signal; }
