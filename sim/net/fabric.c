/* fabric.c - the fidelities (fabric.h): the one place that knows every
 * implementation of the message fabric. */
#include "config.h"

#include <string.h>

#include "commsim/fabric.h"
#include "commsim/net.h"

extern const CsFabricOps cs_packet_fabric_ops, cs_flow_fabric_ops;
void *cs_packet_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
void *cs_flow_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
void *cs_hybrid_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);

const CsFidelityDef cs_fidelities[] = {
    {"packet", "every packet an event: queues, drops, loss, the transport", CS_MODELS_PACKETS | CS_MODELS_OPEN_LOOP,
     cs_packet_fabric_new, &cs_packet_fabric_ops},
    {"flow", "max-min fair fluid flows: no queues, drops or retransmissions; loss caps TCP's rate", 0,
     cs_flow_fabric_new, &cs_flow_fabric_ops},
    {"hybrid", "packets, fast-forwarded while the flows are steady",
     CS_MODELS_PACKETS | CS_MODELS_OPEN_LOOP | CS_MODELS_JUMPS,
     cs_hybrid_fabric_new, &cs_packet_fabric_ops},
    {NULL, NULL, 0, NULL, NULL},
};

const CsFidelityDef *cs_fidelity_find(const char *name) {
  for (const CsFidelityDef *d = cs_fidelities; d->name; d++)
    if (!strcmp(d->name, name)) return d;
  return NULL;
}

const char *const *cs_fidelity_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_fidelities));
    for (size_t i = 0; cs_fidelities[i].name; i++) n[i] = cs_fidelities[i].name;
    g_once_init_leave(&names, n);
  }
  return names;
}

CsFabric *cs_fabric_new(const CsFidelityDef *def, CsEngine *engine, const void *config, const CsTopology *t,
                        const CsRoutes *r) {
  g_assert(def->new != NULL);
  CsFabric *f = g_new0(CsFabric, 1);
  f->fidelity = def->name;
  f->models = def->models;
  f->ops = def->ops;
  f->impl = def->new(engine, config, t, r);
  return f;
}

void cs_fabric_free(CsFabric *f) {
  if (!f) return;
  f->ops->free(f->impl);
  g_free(f);
}
