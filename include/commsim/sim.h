/* sim.h - one simulation: a scenario's world, its run, its results.
 *
 * A CsSim owns everything of one run (engine, topology, routes, network),
 * with no global state, so a sweep can run several in threads at once.
 * It starts the scenario's flows and background traffic, runs until the
 * work is done (or `duration`), checks that every packet is accounted
 * for, and writes the output files.
 */
#ifndef COMMSIM_SIM_H
#define COMMSIM_SIM_H

#include <glib.h>
#include <stdbool.h>

#include "commsim/engine.h"
#include "commsim/net.h"
#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"

typedef struct CsSim CsSim;

/* Build the world of a scenario (which must outlive the CsSim). */
CsSim *cs_sim_new(const CsScenario *s, GError **error);
void cs_sim_free(CsSim *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CsSim, cs_sim_free)

/* Run to the end.  False (with an error) only for an internal failure such
 * as broken packet accounting or simulated time overflowing; undelivered
 * messages are reported by cs_sim_failed() and cs_sim_unfinished(). */
bool cs_sim_run(CsSim *sim, GError **error);

CsEngine *cs_sim_engine(CsSim *sim);
CsNet *cs_sim_net(CsSim *sim);
const CsTopology *cs_sim_topology(const CsSim *sim);
/* Simulated time at the end, and wall-clock seconds the run took. */
CsTime cs_sim_end_time(const CsSim *sim);
double cs_sim_wall_seconds(const CsSim *sim);
/* Messages abandoned after max_timeouts, and messages still in progress
 * when `duration` ended the run. */
uint32_t cs_sim_failed(const CsSim *sim);
uint32_t cs_sim_unfinished(const CsSim *sim);

/* Write the output files the scenario asks for (those that exist so far:
 * messages.csv) into `dir`. */
bool cs_sim_write_outputs(CsSim *sim, const char *dir, GError **error);

#endif
