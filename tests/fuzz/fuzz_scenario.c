/* fuzz_scenario.c - fuzz target for the scenario loader and network builder. */
#include "config.h"

#include <string.h>

#include "commsim/routing.h"
#include "commsim/scenario.h"
#include "commsim/topology.h"
#include "fuzz.h"

/* Larger inputs only slow the search; real scenarios are a few KiB. */
#define FUZZ_MAX_INPUT (64 * 1024)
/* Build routes only for networks this small, so that one input stays fast
 * (the route builder's own size limit is tested in the suite). */
#define MAX_ROUTE_CELLS (1u << 20)

static void expect_located(const GError *e, const char *stage) {
  if (!e || !e->message || !*e->message) FUZZ_FAIL("fuzz: %s failed without a message", stage);
  if (!g_utf8_validate(e->message, -1, NULL)) FUZZ_FAIL("fuzz: %s: message is not UTF-8", stage);
}

int cs_fuzz_scenario(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  char *text = g_strndup((const char *)data, size);
  GError *error = NULL;
  CsScenario *s = cs_scenario_load_string(text, "fuzz.yaml", NULL, &error);
  if (!s) {
    expect_located(error, "the scenario loader");
    /* every loader message names the file it is about */
    if (!strstr(error->message, "fuzz.yaml")) FUZZ_FAIL("fuzz: unlocated error: %s", error->message);
  } else {
    CsTopology *t = cs_topology_build(s, &error);
    if (!t) {
      expect_located(error, "the topology builder");
    } else {
      if ((uint64_t)t->n_hosts * t->n_nodes <= MAX_ROUTE_CELLS) {
        CsRoutes *r = cs_routes_build(t, s->routing, &error);
        if (!r) expect_located(error, "the route builder");
        cs_routes_free(r);
      }
      cs_topology_free(t);
    }
    cs_scenario_free(s);
  }
  g_clear_error(&error);
  g_free(text);
  return 0;
}

#ifdef CS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return cs_fuzz_scenario(data, size); }
#endif
