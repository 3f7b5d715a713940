/* protocols.c - the protocol table: one row per congestion-control
 * algorithm, each in a file of its own beside this one.  Adding one: its
 * file, its row here (and its name in the docs' reference). */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "commsim/cc.h"

extern const CsCcOps cs_cc_fixed, cs_cc_reno, cs_cc_dctcp;

const CsProtocolDef cs_protocols[] = {
    {"fixed", "a fixed window of transport.window packets, whatever happens", &cs_cc_fixed},
    {"reno", "NewReno: slow start, AIMD, fast retransmit and recovery", &cs_cc_reno},
    {"dctcp", "DCTCP: Reno with a cut proportional to the ECN-marked fraction (ECN-capable)", &cs_cc_dctcp},
    {NULL, NULL, NULL},
};

const CsProtocolDef *cs_protocol_find(const char *name) {
  for (const CsProtocolDef *p = cs_protocols; p->name; p++)
    if (!strcmp(p->name, name)) return p;
  return NULL;
}

const char *const *cs_protocol_names(void) {
  static const char **names = NULL; /* built once: sweeps read it from threads */
  if (g_once_init_enter(&names)) {
    const char **n = g_new0(const char *, G_N_ELEMENTS(cs_protocols));
    for (size_t i = 0; cs_protocols[i].name; i++) n[i] = cs_protocols[i].name;
    g_once_init_leave(&names, n);
  }
  return names;
}

const char *cs_protocol_name(uint32_t protocol) { return cs_protocols[protocol].name; }
