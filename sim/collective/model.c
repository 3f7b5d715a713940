/* model.c - closed forms of the collectives, with packetization. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "commsim/collective.h"
#include "commsim/model.h"
#include "commsim/workload.h"

double cs_model_message_s(const CsScenario *s, const CsTopology *t, const CsRoutes *r, uint32_t a, uint32_t b_host,
                          uint64_t payload, bool acks_share_link) {
  uint32_t ports[4096];
  int h = cs_routes_path(r, a, b_host, 0, ports, 4096);
  g_assert(h > 0);
  double lat = 0, bmin = INFINITY;
  for (int i = 0; i < h; i++) {
    const CsLink *l = &t->links[t->ports[ports[i]].link];
    lat += (double)l->spec.latency * 1e-12;
    bmin = fmin(bmin, (double)l->spec.bandwidth);
  }
  uint64_t mss = (uint64_t)(s->transport.mtu - s->transport.header);
  uint64_t n = (payload + mss - 1) / mss;
  if (n == 0) n = 1;
  double wire = (double)payload + (double)n * (double)s->transport.header;
  if (acks_share_link) wire += (double)n * (double)s->transport.ack;
  double last = (double)(payload - (n - 1) * mss) + (double)s->transport.header;
  double tail = 0;
  for (int i = 1; i < h; i++) tail += 8.0 * last / (double)t->links[t->ports[ports[i]].link].spec.bandwidth;
  return lat + 8.0 * wire / bmin + tail;
}

static uint64_t piece(uint64_t n, uint32_t parts, uint32_t i) { return n / parts + (i < n % parts); }

void cs_model_clear(CsModel *m) {
  g_free(m->formula);
  g_free(m->terms);
  memset(m, 0, sizeof *m);
}

bool cs_model_estimate(const CsScenario *s, const CsTopology *t, const CsRoutes *r, CsModel *m, GError **error) {
  memset(m, 0, sizeof *m);
  const CsWorkloadSpec *w = &s->workload;
  if (!w->present) {
    g_set_error(error, CS_SCENARIO_ERROR, CS_SCENARIO_ERROR_INVALID,
                "%s: error: model estimates training iterations: the scenario has no workload:", s->file);
    return false;
  }
  CsCodecParams codec;
  CsCodecCost cost;
  if (!cs_workload_codec(s, &codec, &cost, error)) return false;
  uint32_t P = t->n_workers;
  uint64_t n = (uint64_t)w->params;
  uint32_t a = t->workers[0];
  /* the peer a worker talks to: the next worker, or the first server */
  uint32_t peer_host = (uint32_t)t->nodes[P > 1 ? t->workers[1] : t->workers[0]].host;
  if (w->collective == CS_COLL_PS) peer_host = (uint32_t)t->nodes[t->servers[0]].host;
  uint32_t ports[4096];
  int h = P > 1 || w->collective == CS_COLL_PS ? cs_routes_path(r, a, peer_host, 0, ports, 4096) : 0;
  double lat = 0, bmin = INFINITY;
  for (int i = 0; i < h; i++) {
    const CsLink *l = &t->links[t->ports[ports[i]].link];
    lat += (double)l->spec.latency * 1e-12;
    bmin = fmin(bmin, (double)l->spec.bandwidth);
  }
  m->hops = (uint32_t)h;
  m->alpha_s = lat + (h > 1 ? (h - 1) * 8.0 * (double)s->transport.mtu / bmin : 0);
  m->beta_s_per_byte = h ? 8.0 / bmin : 0;
#define T(bytes, acks) cs_model_message_s(s, t, r, a, peer_host, (bytes), (acks))
#define PAY(elems) cs_coll_payload_bytes(&codec, (elems))
#define COST(ps, elems) ((ps) * (double)(elems) * 1e-12)
  double red = cost.decode_ps + cost.reduce_ps + cost.encode_ps;
  GString *terms = g_string_new(NULL);
  uint32_t L = 0;
  while ((1u << L) < P) L++;
  switch (w->collective) {
  case CS_COLL_RING: {
    uint64_t chunk = piece(n, P, 0), bytes = PAY(chunk);
    m->formula = g_strdup("ring: 2 (P-1) T(n/P) + (P-1) reduce(n/P) + decode(n)   [T(m) = alpha + beta * wire(m)]");
    m->comm_s = P > 1 ? 2.0 * (P - 1) * T(bytes, true) : 0;
    m->codec_s = (P - 1) * COST(red, chunk) + COST(cost.decode_ps, n);
    m->wire_bytes = 2.0 * (P - 1) * (double)bytes;
    g_string_append_printf(terms, "P = %u, n/P = %" G_GUINT64_FORMAT " elements = %" G_GUINT64_FORMAT " payload bytes", P, chunk, bytes);
    break;
  }
  case CS_COLL_HALVING_DOUBLING: {
    m->formula = g_strdup("halving-doubling: 2 sum_{k=1..log2 P} T(n/2^k) + sum_k reduce(n/2^k) + decode(n)");
    uint64_t size = n;
    for (uint32_t k = 0; k < L; k++) {
      uint64_t half = size - size / 2; /* rank 0 sends the upper half */
      m->comm_s += 2.0 * T(PAY(half), true);
      m->codec_s += COST(red, size / 2);
      m->wire_bytes += 2.0 * (double)PAY(half);
      size /= 2;
    }
    m->codec_s += COST(cost.decode_ps, n);
    g_string_append_printf(terms, "P = %u, log2 P = %u", P, L);
    break;
  }
  case CS_COLL_TREE: {
    uint32_t C = (uint32_t)w->chunks;
    uint64_t chunk = piece(n, C, 0), bytes = PAY(chunk);
    m->formula = g_strdup("tree: 2 (ceil(log2 P) + C - 1) T(n/C) + ceil(log2 P) reduce(n) + decode(n)   [C chunks pipelined]");
    m->comm_s = P > 1 ? 2.0 * (L + C - 1) * T(bytes, false) : 0;
    m->codec_s = L * COST(red, n) + COST(cost.decode_ps, n);
    m->wire_bytes = 2.0 * (double)PAY(n);
    g_string_append_printf(terms, "P = %u, ceil(log2 P) = %u, C = %u", P, L, C);
    break;
  }
  case CS_COLL_ALLGATHER: {
    uint64_t bytes = PAY(n);
    m->formula = g_strdup("allgather: (P-1) T(wire(n)) + P (decode + add)(n)");
    m->comm_s = P > 1 ? (P - 1) * T(bytes, true) : 0;
    m->codec_s = P * COST(cost.decode_ps + cost.reduce_ps, n);
    m->wire_bytes = (double)(P - 1) * (double)bytes;
    g_string_append_printf(terms, "P = %u, wire(n) = %" G_GUINT64_FORMAT " bytes", P, bytes);
    break;
  }
  case CS_COLL_PS: {
    uint32_t S = w->servers->len ? w->servers->len : t->n_servers;
    uint64_t shard = piece(n, S, 0), bytes = PAY(shard);
    /* A server's downlink takes P pushes.  A worker's host queue sends its
     * S shards one after another (FIFO, and windows this large never make
     * it interleave), so server j's pushes start j shard-times late: the
     * last server finishes after P + S - 1 shard-times. */
    uint32_t k = P + S - 1;
    double one = T(bytes, false);
    uint64_t mss = (uint64_t)(s->transport.mtu - s->transport.header);
    double shard_wire_s = h ? 8.0 * (double)(bytes + (bytes + mss - 1) / mss * (uint64_t)s->transport.header) / bmin : 0;
    double push = one + (k - 1) * shard_wire_s, pull = one + (P - 1) * shard_wire_s;
    m->formula = g_strdup(w->pull ? "ps: push T(n/S) + (P + S - 2) beta wire(n/S), pull T(n/S) + (P - 1) beta wire(n/S)   [incast at the servers]"
                                  : "ps (push only): T(n/S) + (P + S - 2) beta wire(n/S)");
    m->comm_s = w->pull ? push + pull : push;
    m->codec_s = P * COST(cost.decode_ps + cost.reduce_ps, shard) + (w->pull ? COST(cost.encode_ps, shard) + COST(cost.decode_ps, n) : 0);
    m->wire_bytes = (double)S * (double)bytes;
    g_string_append_printf(terms, "P = %u, S = %u, n/S = %" G_GUINT64_FORMAT " elements = %" G_GUINT64_FORMAT " payload bytes", P, S, shard, bytes);
    break;
  }
  }
  m->codec_s += COST(cost.encode_ps, n); /* each worker encodes its gradient first */
  double compute = (double)w->compute * 1e-12 * (double)w->accumulation;
  m->compute_s = compute;
  m->iter_serial_s = compute + m->codec_s + m->comm_s;
  double backward = (double)w->compute * 1e-12 * w->backward_fraction;
  double hidden = w->buckets > 0 ? fmin(backward, m->comm_s + m->codec_s) : 0;
  m->iter_overlap_s = m->iter_serial_s - hidden;
  g_string_append_printf(terms, "; h = %u hops, alpha = %.3f us, beta = %.6f ns/byte (B = %.6g Gbps)", m->hops,
                         m->alpha_s * 1e6, m->beta_s_per_byte * 1e9, h ? bmin / 1e9 : 0.0);
  m->terms = g_string_free(terms, FALSE);
#undef T
#undef PAY
#undef COST
  return true;
}
