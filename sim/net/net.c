/* net.c - the packet network as one object: its links (link.c), its
 * transport (transport.c) and its background sources (background.c)
 * assembled from a topology, its routes and a CsNetConfig.  It also tells
 * the links who receives each kind of packet, so that link.c, which moves
 * packets, needs neither the transport nor the background sources. */
#include "config.h"

#include "net_private.h"

CsNet *cs_net_new(CsEngine *engine, const CsNetConfig *cfg, const CsTopology *t, const CsRoutes *r) {
  CsNet *net = g_new0(CsNet, 1);
  const CsTransportSpec *tr = &cfg->transport;
  net->engine = engine;
  net->cfg = cfg;
  net->transport = *tr;
  net->seed = cfg->seed;
  net->t = t;
  net->routes = r;
  net->free_msg = UINT32_MAX; /* no free message slot */
  net->arena = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  net->node_injected = g_new0(uint64_t, t->n_nodes + 1);
  net->node_delivered = g_new0(uint64_t, t->n_nodes + 1);
  cs_link_init(net);
  net->header = (uint32_t)tr->header;
  net->mss = (uint32_t)(tr->mtu - tr->header);
  net->ack_bytes = (uint32_t)tr->ack;
  net->window = tr->window_bytes ? (uint32_t)MAX(1, (tr->window + tr->mtu - 1) / tr->mtu)
                                 : (uint32_t)MIN(tr->window, (int64_t)UINT32_MAX);
  net->cc = cs_protocols[tr->protocol].ops;
  net->roce = tr->protocol == CS_PROTO_ROCE;
  if (net->roce) net->cc = tr->roce_cc == CS_ROCE_CC_DCQCN ? &cs_cc_dcqcn : &cs_cc_roce_none;
  net->gbn = net->roce && tr->retransmit == CS_RETX_GO_BACK_N;
  net->init_cwnd = (uint32_t)MIN(tr->init_cwnd, (int64_t)UINT32_MAX);
  net->max_timeouts = (uint32_t)tr->max_timeouts;
  net->host_queue = tr->host_queue < 0 ? UINT64_MAX : (uint64_t)tr->host_queue;
  net->pairs = g_hash_table_new_full(cs_int64_hash, g_int64_equal, g_free, NULL);
  net->persistent = tr->connections == CS_CONN_PERSISTENT;
  net->rack = !net->roce && cs_recovery_resolve(tr->recovery, tr->protocol) == CS_RECOVERY_RACK;
  net->idle_restart = tr->idle_restart;
  net->delayed_ack = (uint32_t)MAX(tr->delayed_ack, 1);
  net->ack_delay = tr->ack_delay;
  net->n_paths = cs_routes_mode(r) == CS_ROUTING_ECMP_PACKET ? CS_ECMP_PACKET_PATHS : 1;
  net->cc_cfg = (CsCcConfig){.init_cwnd = (double)net->init_cwnd,
                             .max_cwnd = (double)net->window,
                             .mss = net->mss,
                             .mtu = (uint32_t)tr->mtu,
                             .cubic_c = tr->cubic_c,
                             .cubic_beta = tr->cubic_beta,
                             .cubic_fast_convergence = tr->cubic_fast_convergence,
                             .cubic_reno_friendly = tr->cubic_reno_friendly,
                             .hystart = tr->hystart,
                             .bbr_high_gain = tr->bbr_startup_gain,
                             .bbr_probe_rtt_interval = tr->bbr_probe_rtt_interval,
                             .bbr_probe_rtt_time = tr->bbr_probe_rtt_time,
                             .dcqcn = tr->dcqcn};
  cs_cc_config_prepare(&net->cc_cfg);
  net->deliver[PKT_DATA] = cs_transport_receive;
  net->deliver[PKT_ACK] = cs_transport_receive;
  net->deliver[PKT_BG] = cs_background_receive;
  cs_background_init(net);
  return net;
}

void cs_net_free(CsNet *net) {
  if (!net) return;
  for (uint32_t i = 0; i < 2 * net->t->n_links; i++) {
    CS_RING_FREE(net->dirs[i].q);
    CS_RING_FREE(net->dirs[i].pipe);
  }
  g_aligned_free(net->dirs);
  g_free(net->node_pausing);
  g_free(net->stuck);
  if (net->woken) g_array_free(net->woken, TRUE);
  g_free(net->node_injected);
  g_free(net->node_delivered);
  g_array_free(net->arena, TRUE);
  cs_transport_free(net);
  cs_hybrid_free(net->hybrid);
  g_free(net->bg);
  g_free(net);
}

CsNetTotals cs_net_totals(const CsNet *net) {
  CsNetTotals tot = {0};
  tot.data = net->counts[PKT_DATA];
  tot.ack = net->counts[PKT_ACK];
  tot.bg = net->counts[PKT_BG];
  tot.retransmissions = net->retransmissions;
  tot.timeouts = net->timeouts;
  tot.hops = net->hops;
  tot.marks = net->marks;
  tot.cnps = net->cnps;
  tot.nacks = net->nacks;
  tot.bg_delay_sum_s = net->bg_delay_sum_s;
  tot.pool_packets = net->alive_max;
  tot.fast_forwarded = cs_net_fast_forwarded(net, &tot.jumps, &tot.watch_events);
  return tot;
}

double cs_transport_burst_packets(const CsTransportSpec *tr) {
  const CsCcOps *cc = cs_protocols[tr->protocol].ops;
  double window = tr->window_bytes ? (double)tr->window / (double)tr->mtu : (double)tr->window;
  if (tr->protocol == CS_PROTO_ROCE) return INFINITY;
  if (cc->rate) return 0; /* paced (bbr, once it has a round trip): its packets leave apart */
  return cc->cong_avoid ? fmin((double)tr->init_cwnd, window) : window;
}

double cs_transport_host_queue_bytes(const CsTransportSpec *tr, double link_bps) {
  return tr->host_queue < 0 ? fmax(link_bps / 80000.0, 2.0 * (double)tr->mtu) : (double)tr->host_queue;
}
