/* protocols.c - the protocol table: one row per congestion-control
 * algorithm, each in a file of its own beside this one.  Adding one: its
 * file, its row here (and its name in the docs' reference). */
#include "config.h"

#include <glib.h>
#include <string.h>

#include "commsim/cc.h"

extern const CsCcOps cs_cc_fixed, cs_cc_reno, cs_cc_dctcp, cs_cc_cubic, cs_cc_bbr;

const CsProtocolDef cs_protocols[] = {
    {"fixed", "a fixed window of transport.window packets, whatever happens", &cs_cc_fixed},
    {"reno", "NewReno: slow start, AIMD, fast retransmit and recovery", &cs_cc_reno},
    {"dctcp", "DCTCP: Reno with a cut proportional to the ECN-marked fraction (ECN-capable)", &cs_cc_dctcp},
    {"cubic", "CUBIC (RFC 9438, Linux's default): a cubic window curve around the last loss, HyStart", &cs_cc_cubic},
    {"bbr", "BBR v1 (Linux's tcp_bbr.c): paced at its estimate of the path's rate, a window of 2 BDP; loss does not cut it", &cs_cc_bbr},
    {"roce", "RoCEv2 queue pairs: no window, line rate or DCQCN's rate (transport.cc), NACKs, go-back-n or selective repeat", &cs_cc_roce_none},
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

const char *cs_cc_mode(const CsCcOps *ops, const CsCc *cc) {
  const char *m = ops->mode ? ops->mode(cc) : NULL;
  return m ? m : cc->cwnd < cc->ssthresh ? "slow_start" : "avoidance";
}
