/* fabric_packet.c - the packet network (net.h) as a message fabric. */
#include "config.h"

#include "commsim/fabric.h"
#include "commsim/net.h"

static void *packet_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r) {
  return cs_net_new(engine, config, t, r);
}

static uint32_t packet_send(void *impl, uint32_t src, uint32_t dst, uint64_t bytes, CsDeliverFn fn, void *ctx) {
  return cs_net_send(impl, src, dst, bytes, fn, ctx);
}
static void packet_tag(void *impl, uint32_t msg, uint32_t iteration, uint32_t step) {
  cs_net_tag_message(impl, msg, iteration, step);
}
static uint32_t packet_messages(const void *impl) { return cs_net_messages(impl); }
static const CsMessageStats *packet_message(const void *impl, uint32_t msg) { return cs_net_message(impl, msg); }
static uint32_t packet_active(const void *impl) { return cs_net_active(impl); }
static uint32_t packet_failed(const void *impl) { return cs_net_failed(impl); }
static void packet_set_idle(void *impl, CsIdleFn fn, void *ctx) { cs_net_set_idle_fn(impl, fn, ctx); }
static void packet_start_bg(void *impl) { cs_net_start_background(impl); }
static void packet_stop_bg(void *impl) { cs_net_stop_background(impl); }
static CsLinkStats packet_link_stats(void *impl, uint32_t link, int dir) { return cs_net_link_stats(impl, link, dir); }
static void packet_sample(void *impl, CsTime t0, CsLinkSampleFn fn, void *ctx) { cs_net_sample_links(impl, t0, fn, ctx); }
static bool packet_busy(const void *impl) { return cs_net_packets_in_flight(impl) > 0; }
static CsNetTotals packet_totals(const void *impl) { return cs_net_totals(impl); }
static bool packet_accounting(const void *impl, GError **error) { return cs_net_check_accounting(impl, error); }
static bool packet_state(const void *impl, GError **error) { return cs_net_check_state(impl, error); }
static void packet_trace(void *impl, CsPacketTraceFn fn, void *ctx) { cs_net_set_packet_trace(impl, fn, ctx); }
static char *packet_stuck(const void *impl) { return cs_net_stuck_report(impl); }
static void packet_free(void *impl) { cs_net_free(impl); }
static void packet_set_retire(void *impl, CsRetireFn fn, void *ctx) { cs_net_set_retire(impl, fn, ctx); }
static uint32_t packet_first_message(const void *impl) { return cs_net_first_message(impl); }

void *cs_packet_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
void *cs_packet_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r) {
  return packet_new(engine, config, t, r);
}

/* fidelity hybrid: the same network, fast-forwarded while steady */
void *cs_hybrid_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r);
void *cs_hybrid_fabric_new(CsEngine *engine, const void *config, const CsTopology *t, const CsRoutes *r) {
  const CsNetConfig *cfg = config;
  CsNet *net = cs_net_new(engine, cfg, t, r);
  cs_net_enable_hybrid(net, cfg->hybrid_rounds, cfg->hybrid_tolerance);
  return net;
}

const CsFabricOps cs_packet_fabric_ops = {
    .send = packet_send,
    .tag = packet_tag,
    .messages = packet_messages,
    .message = packet_message,
    .active = packet_active,
    .failed = packet_failed,
    .set_idle = packet_set_idle,
    .start_background = packet_start_bg,
    .stop_background = packet_stop_bg,
    .link_stats = packet_link_stats,
    .sample_links = packet_sample,
    .busy = packet_busy,
    .totals = packet_totals,
    .check_accounting = packet_accounting,
    .check_state = packet_state,
    .stuck = packet_stuck,
    .set_packet_trace = packet_trace,
    .set_retire = packet_set_retire,
    .first_message = packet_first_message,
    .free = packet_free,
};
