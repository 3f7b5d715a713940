/* background.c - open-loop packet sources that compete with training
 * traffic (SPEC 3.4): cbr, poisson and onoff.  Each source owns a random
 * stream derived from the seed and its index; its packets share queues
 * and links with everything else and are counted apart. */
#include "config.h"

#include <math.h>

#include "net_private.h"

/* Picoseconds for `bytes` at `rate` bit/s. */
static double gap_ps(const BgSource *b) { return (double)b->spec.size * 8e12 / (double)b->spec.rate; }

static void on_emit(CsEngine *e, void *ctx, uint64_t arg);

#define ONOFF_DRAWN 64 /* at most this many bursts per packet (on average) are drawn one by one */

/* onoff: the next emission, a packet time of burst (on-time) after the
 * one at `now`: the rest of the current burst, then bursts of Exp(on),
 * each after a silence of Exp(off).  A packet's bits carry over from one
 * burst to the next (as ns-3's OnOffApplication keeps its residual bits):
 * the mean rate is rate x on / (on + off) however short the bursts.  (Each
 * burst used to begin with a whole packet: 1 Gbps in bursts of 1 us every
 * 10 us sent 1.22 Gbps, not 0.1; bursts of 1 ps, a packet per picosecond.)
 * When a packet spans many bursts they are not drawn one by one: the
 * bursts that end within the on-time still needed are a Poisson count
 * (their lengths are exponential), the silences after them a Gamma sum,
 * both drawn as normals (more than ONOFF_DRAWN of them on average). */
static CsTime onoff_next(BgSource *b, CsTime now) {
  double need = gap_ps(b), left = (double)(b->on_end - now);
  if (need < left) return cs_time_add_real(now, need);
  need -= left;
  double on = (double)b->spec.on, off = (double)b->spec.off, t = (double)b->on_end;
  if (need <= ONOFF_DRAWN * on) {
    for (;;) {
      t += cs_rng_exponential(&b->rng, off);
      double len = MAX(1.0, cs_rng_exponential(&b->rng, on));
      if (need < len) {
        b->on_end = cs_time_add_real(0, t + len);
        return cs_time_add_real(0, t + need);
      }
      need -= len;
      t += len;
    }
  }
  double lam = need / on, k = 1 + fmax(0, round(cs_rng_normal(&b->rng, lam, sqrt(lam)))); /* the current burst's end, and those within */
  t += need + fmax(0, cs_rng_normal(&b->rng, k * off, sqrt(k) * off));
  b->on_end = cs_time_add_real(0, t + MAX(1.0, cs_rng_exponential(&b->rng, on)));
  return cs_time_add_real(0, t);
}

static void emit_at(CsNet *net, uint32_t i, CsTime when) {
  cs_engine_schedule_at(net->engine, when, on_emit, net, i);
}

static void on_emit(CsEngine *e, void *ctx, uint64_t arg) {
  CsNet *net = ctx;
  uint32_t i = (uint32_t)arg;
  BgSource *b = &net->bg[i];
  if (b->stopped) return;
  CsTime now = cs_engine_now(e);
  Packet pkt, *pk = &pkt;
  cs_net_packet_new(net, pk, PKT_BG);
  pk->stamp = now;
  pk->owner = i;
  pk->seq = 0;
  pk->sack = 0;
  pk->bytes = (uint32_t)b->spec.size;
  pk->path = b->path;
  pk->hops = b->hops;
  pk->xmit = 0;
  cs_net_inject(net, pk);
  b = &net->bg[i];
  CsTime next;
  switch (b->spec.pattern) {
  case CS_PATTERN_CBR: {
    /* emission k at origin + k * gap: exact, no drift */
    b->cbr_k++;
    unsigned __int128 num = (unsigned __int128)b->cbr_k * (uint64_t)b->spec.size * 8u * 1000000000000ULL;
    unsigned __int128 off = num / (unsigned __int128)b->spec.rate;
    next = off > (unsigned __int128)(CS_TIME_MAX - b->cbr_origin) ? CS_TIME_MAX : b->cbr_origin + (CsTime)off;
    break;
  }
  case CS_PATTERN_POISSON: next = cs_time_add_real(now, cs_rng_exponential(&b->rng, gap_ps(b))); break;
  default: /* onoff: back to back at `rate` within bursts */
    next = onoff_next(b, now);
    break;
  }
  if (next <= now) next = cs_time_add(now, 1);
  emit_at(net, i, next);
}

void cs_background_init(CsNet *net) {
  const CsNetConfig *cfg = net->cfg;
  net->n_bg = cfg->n_background;
  net->bg = g_new0(BgSource, net->n_bg + 1);
  for (uint32_t i = 0; i < net->n_bg; i++) {
    BgSource *b = &net->bg[i];
    b->spec = cfg->background[i];
    uint32_t src = (uint32_t)cs_topology_find(net->t, b->spec.src);
    uint32_t dst = (uint32_t)cs_topology_find(net->t, b->spec.dst);
    b->src_node = src;
    cs_rng_init(&b->rng, cfg->seed, cs_rng_stream_id("background", i, 0));
    b->path = cs_net_add_path(net, src, (uint32_t)net->t->nodes[dst].host, cs_rng_stream_id("bg-path", i, 0),
                              &b->hops);
    b->stopped = true;
  }
}

void cs_net_start_background(CsNet *net) {
  CsTime now = cs_engine_now(net->engine);
  for (uint32_t i = 0; i < net->n_bg; i++) {
    BgSource *b = &net->bg[i];
    b->stopped = false;
    b->cbr_origin = now;
    b->cbr_k = 0;
    CsTime first = now;
    if (b->spec.pattern == CS_PATTERN_POISSON)
      first = cs_time_add_real(now, cs_rng_exponential(&b->rng, gap_ps(b)));
    if (b->spec.pattern == CS_PATTERN_ONOFF)
      b->on_end = cs_time_add_real(now, MAX(1.0, cs_rng_exponential(&b->rng, (double)b->spec.on)));
    emit_at(net, i, first);
  }
}

void cs_net_stop_background(CsNet *net) {
  for (uint32_t i = 0; i < net->n_bg; i++) net->bg[i].stopped = true;
}

void cs_background_receive(CsNet *net, const Packet *pk) {
  net->bg_delay_sum_s += (double)(cs_engine_now(net->engine) - pk->stamp) * 1e-12;
  cs_net_packet_gone(net, pk);
}

const char *const *cs_pattern_names(void) {
  static const char *const names[] = {"cbr", "poisson", "onoff", NULL};
  return names;
}
