/* fixed.c - a fixed window: transport.window packets in flight whatever
 * happens (no cut on loss or timeout, no growth); not ECN-capable. */
#include "config.h"

#include <math.h>

#include "commsim/cc.h"

static void fixed_init(CsCc *cc) {
  cc->cwnd = cc->max_cwnd;
  cc->ssthresh = INFINITY;
}

const CsCcOps cs_cc_fixed = {.name = "fixed", .ect = false, .init = fixed_init};
