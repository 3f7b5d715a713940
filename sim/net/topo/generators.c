/* generators.c - the topology generators' table: one row per
 * `topology.type`, each in its own file beside this one, in the order of
 * CsTopoType.  Adding one: its file (takes, needs, check, hosts, build)
 * and its row here. */
#include "config.h"

#include <string.h>

#include "builder.h"

extern const CsTopoGenerator cs_topo_star, cs_topo_ring, cs_topo_dumbbell, cs_topo_fat_tree, cs_topo_torus2d,
    cs_topo_tree;

/* Row 0 is the explicit topology (nodes: and links:), which no generator builds. */
static const CsTopoGenerator explicit_row = {
    .name = "explicit",
    .help = "nodes: and links: as written",
    .takes = (const char *const[]){NULL},
    .needs = (const char *const[]){NULL},
};

const CsTopoGenerator *const cs_topo_generators[] = {
    &explicit_row, &cs_topo_star, &cs_topo_ring, &cs_topo_dumbbell, &cs_topo_fat_tree, &cs_topo_torus2d, &cs_topo_tree,
    NULL,
};

const char *const *cs_topo_generator_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_topo_generators));
    for (size_t i = 1; cs_topo_generators[i]; i++) n[i - 1] = cs_topo_generators[i]->name;
    g_once_init_leave(&names, n);
  }
  return names;
}

uint32_t cs_topo_add_hosts(CsTopoBuilder *b, int64_t hosts, int64_t workers, int64_t servers) {
  if (workers < 0) workers = hosts - servers;
  uint32_t first = b->nodes->len;
  int64_t idle = 0;
  for (int64_t i = 0; i < hosts; i++) {
    CsNode n = {NULL, CS_ROLE_HOST, 0, 0, -1};
    if (i < workers) n.name = g_strdup_printf("w%" G_GINT64_FORMAT, (gint64)i), n.role = CS_ROLE_WORKER;
    else if (i >= hosts - servers)
      n.name = g_strdup_printf("ps%" G_GINT64_FORMAT, (gint64)(i - (hosts - servers))), n.role = CS_ROLE_SERVER;
    else n.name = g_strdup_printf("h%" G_GINT64_FORMAT, (gint64)idle++);
    g_array_append_val(b->nodes, n);
  }
  return first;
}

uint32_t cs_topo_add_switch(CsTopoBuilder *b) {
  CsNode n = {g_strdup_printf("sw%u", b->switches++), CS_ROLE_SWITCH, 0, 0, -1};
  g_array_append_val(b->nodes, n);
  return b->nodes->len - 1;
}

void cs_topo_add_link(CsTopoBuilder *b, uint32_t a, uint32_t c, const CsLinkSpec *spec) {
  CsLink l = {a, c, *spec};
  g_array_append_val(b->links, l);
}
