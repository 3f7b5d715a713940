/* tree.c - binomial tree: reduce to rank 0, then broadcast back, the
 * message in `chunks` pieces, pipelined.  Each rank runs two lanes at
 * once: the reduce (a piece from each child in turn, rendezvous rounds,
 * then on to its parent) and the broadcast (a piece from its parent, then
 * to each child in turn, largest subtree first); the root broadcasts a
 * piece as soon as it has reduced it, while it reduces the next.  One
 * piece: the reduce, then the broadcast. */
#include "config.h"

#include <math.h>

#include "commsim/closed_form.h"

static void build(CsCollPlan *plan, const CsCollSpec *s) {
  uint32_t P = s->n_workers, C = s->chunks ? s->chunks : 1;
  const CsCodecCost *c = &s->cost;
  for (uint32_t r = 0; r < P; r++) {
    uint32_t low = r ? (uint32_t)__builtin_ctz(r) : 32; /* r's parent is r - 2^low */
    /* children: r + 2^k for k < low, ascending for the reduce */
    for (uint32_t ch = 0; ch < C; ch++) {
      uint64_t n = cs_coll_piece(s->elements, C, ch);
      cs_coll_set_lane(plan, 0);
      for (uint32_t k = 0; k < low && r + (1u << k) < P; k++)
        cs_coll_add_round_recv(plan, r, (int32_t)(r + (1u << k)), cs_coll_cost(c->decode_ps + c->reduce_ps + c->encode_ps, n));
      if (r) cs_coll_add_step(plan, r, (int32_t)(r - (1u << low)), cs_coll_payload_bytes(&s->codec, n), -1, 0);
      else if (cs_coll_plan_count(plan, r) > 0) { /* the root broadcasts each piece once it has reduced it */
        uint32_t reduced = cs_coll_plan_count(plan, r) - 1; /* the piece's last receive */
        bool first = true;
        cs_coll_set_lane(plan, 1);
        for (int k = 31; k >= 0; k--)
          if ((uint32_t)k < low && r + (1u << k) < P) {
            cs_coll_add_round_send(plan, r, (int32_t)(r + (1u << k)), cs_coll_payload_bytes(&s->codec, n));
            if (first) cs_coll_add_after(plan, r, reduced), first = false; /* the lane's order does the rest */
          }
      }
    }
    cs_coll_set_lane(plan, 1);
    if (r) /* the broadcast: from the parent, on to the children, largest subtree first */
      for (uint32_t ch = 0; ch < C; ch++) {
        uint64_t n = cs_coll_piece(s->elements, C, ch);
        cs_coll_add_round_recv(plan, r, (int32_t)(r - (1u << low)), 0);
        for (int k = 31; k >= 0; k--)
          if ((uint32_t)k < low && r + (1u << k) < P)
            cs_coll_add_round_send(plan, r, (int32_t)(r + (1u << k)), cs_coll_payload_bytes(&s->codec, n));
      }
    cs_coll_add_step(plan, r, -1, 0, -1, cs_coll_cost(c->decode_ps, s->elements));
  }
}

/* Level k joins r to its parent r - 2^k (r's lowest set bit k); a level's
 * messages (one chunk each) travel at once, up then down, each taking its
 * own time in its level's round (cs_model_round_each).  The replay of
 * the plan (closed_form.c) runs the pieces through the lanes with these
 * times.  Pipelined (C pieces), a level's pieces going up travel beside
 * earlier pieces coming down the same links the other way, and share
 * those links with their ACKs.  Piece i goes up level k about k + i
 * piece-times after the start and comes down it about 2 L - 1 - k + i,
 * so C - |2 L - 1 - 2 k| of the level's pieces each way (none, if that is
 * not positive) take their times in a round of the level's messages both
 * ways, the others alone, and a pair's time is the mean over its C
 * pieces.  Two workers on a star (L = 1), 25M fp32 in 4 pieces: at packet
 * level the pieces take 5.204 ms alone, 5.41-5.64 ms beside one the other
 * way; 0.977 of the run while each took its time alone, 1.007 now (until
 * 2026-12-13).  A rank's piece going up is not charged for what it sends
 * down to its children of other levels at the same time (timing every
 * level at once overshoots: up to 2.5 times the run). */
static void model(CsModelOp *o) {
  uint32_t P = o->spec.n_workers, L = 0, C = o->spec.chunks ? o->spec.chunks : 1;
  while ((1u << L) < P) L++;
  uint64_t chunk = cs_coll_piece(o->spec.elements, C, 0);
  double *both = C > 1 ? g_new(double, 2 * (size_t)P + 1) : NULL;
  CsModelMsg *two = C > 1 ? g_new(CsModelMsg, 2 * (size_t)P + 1) : NULL;
  for (int down = 0; down < 2; down++)
    for (uint32_t k = 0; k < L; k++) {
      uint32_t m = 0;
      for (uint32_t r = 1; r < P; r++)
        if ((uint32_t)__builtin_ctz(r) == k) {
          uint32_t parent = r - (1u << k);
          uint32_t a = cs_model_node(o, r), b = cs_model_node(o, parent);
          o->msgs[m++] = down ? (CsModelMsg){b, a, cs_model_payload(o, chunk)} : (CsModelMsg){a, b, cs_model_payload(o, chunk)};
        }
      if (both) { /* (the level's messages, then the same the other way) */
        for (uint32_t i = 0; i < m; i++) {
          two[i] = o->msgs[i];
          two[m + i] = (CsModelMsg){o->msgs[i].dst, o->msgs[i].src, o->msgs[i].payload};
        }
        cs_model_round_each(o, two, 2 * m, both);
      }
      /* (piece i goes up level k about k + i piece-times after the start,
       * and down it about 2 L - 1 - k + i: so many of the level's pieces
       * meet one the other way) */
      int32_t gap = 2 * (int32_t)L - 1 - 2 * (int32_t)k;
      double ov = fmax(0, (double)C - fabs((double)gap));
      CsModelStep st = cs_model_round_each(o, o->msgs, m, o->each);
      g_autofree char *label = g_strdup_printf("%s level %u (ranks r with lowest bit %u)", down ? "broadcast" : "reduce", k, k);
      cs_model_record(o, st, label, C);
      for (uint32_t r = 1, i = 0; r < P; r++)
        if ((uint32_t)__builtin_ctz(r) == k) {
          uint32_t parent = r - (1u << k);
          double sec = both ? ((C - ov) * o->each[i] + ov * both[i]) / C : o->each[i];
          if (down) cs_model_pair(o, parent, r, sec, o->msgs[i].payload);
          else cs_model_pair(o, r, parent, sec, o->msgs[i].payload);
          i++;
        }
    }
  g_free(both);
  g_free(two);
}

static const char *formula(const CsCollSpec *s) {
  if (s->chunks <= 1)
    return "tree: ceil(log2 P) rounds up and as many down, each message n taking its pair's time in its binomial "
           "level's round; ceil(log2 P) reduce(n) at the root; decode(n)";
  return "tree, pipelined: C pieces of n/C, each taking its pair's time in its level's round (beside the level's "
         "pieces the other way, but for the first up and the last down), replayed with the reduce of a piece beside "
         "the broadcast of earlier ones (a lower bound where a rank also sends to or takes from other levels at "
         "once); ceil(log2 P) reduce(n) at the root; decode(n)";
}

const CsCollectiveDef cs_coll_tree = {
    .name = "tree",
    .help = "binomial tree to rank 0 and back, in workload.chunks pieces, pipelined",
    .flags = CS_COLLF_REDUCES | CS_COLLF_CHUNKS,
    .chain = CS_CHAIN_BINOMIAL,
    .build = build,
    .formula = formula,
    .model = model,
};
