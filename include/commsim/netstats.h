/* netstats.h - what a network reports, whatever models it: a message's
 * statistics, a link direction's counters and samples, the run's totals,
 * packet events.  The message fabric (fabric.h) hands these out; the
 * packet network (net.h) is the first that fills them.
 *
 * Layer 2 (network; docs/design.md). Owns what any network reports
 * (statistics, samples, traces); does not touch how it is modelled.
 */
#ifndef COMMSIM_NETSTATS_H
#define COMMSIM_NETSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commsim/time.h"

/* A message has arrived (its last byte), or `failed`: was given up on. */
typedef void (*CsDeliverFn)(void *ctx, uint32_t msg, bool failed);
/* Nothing in flight any more (every message sent so far has finished). */
typedef void (*CsIdleFn)(void *ctx);

/* (64 bytes: a fabric holds them in a ring indexed by message number,
 * each in one cache line) */
typedef struct {
  uint32_t src, dst; /* hosts */
  uint64_t payload;  /* bytes */
  uint64_t wire_bytes; /* data bytes the sender put on its first link, headers and retransmissions included */
  CsTime start, end; /* end: delivery of the last byte; 0 while in progress */
  uint32_t iteration, step; /* tags for messages.csv (cs_net_tag_message) */
  uint32_t packets;  /* data packets of the message */
  uint32_t retransmissions;
  uint32_t timeouts;
  bool delivered, failed;
} CsMessageStats;

/* A finished message's statistics, handed over before the fabric forgets
 * them (cs_fabric_set_retire). */
typedef void (*CsRetireFn)(void *ctx, uint32_t msg, const CsMessageStats *st);

/* Packet accounting, by class. */
typedef struct {
  uint64_t sent;       /* created at a host (data, retransmissions, ACKs; or background) */
  uint64_t delivered;  /* reached their destination host */
  uint64_t dropped;    /* by a queue (full, or RED) */
  uint64_t lost;       /* by a link's loss model */
  uint64_t in_flight;  /* in a queue or on a wire now */
} CsPacketCounts;

typedef struct {
  CsPacketCounts data, ack, bg;
  uint64_t retransmissions, timeouts;
  uint64_t hops;           /* link transmissions started (packet-hops) */
  uint64_t marks;          /* ECN CE marks */
  uint64_t cnps, nacks;    /* roce: congestion notifications and NACKs receivers sent */
  double bg_delay_sum_s;   /* background: sum of one-way delays of delivered packets */
  size_t pool_packets;     /* the most packets in flight at once */
  CsTime fast_forwarded;   /* fidelity hybrid: simulated time jumped over (0 otherwise) */
  uint64_t jumps;          /* ... in so many jumps */
  uint64_t watch_events;   /* the engine events hybrid's watch took (not counted as the run's) */
  uint64_t refills;        /* fidelity flow: fills of a component of flows that share directions (0 otherwise) */
  uint64_t refill_flows;   /* ... the flows they took, in all */
} CsNetTotals;

/* Counters of one link direction (dir 0: link.a -> link.b).  Read through
 * cs_net_link_stats, they count what has been transmitted by now: packets
 * still waiting and the unsent part of the one in service are left out. */
typedef struct {
  /* (those a hop updates first: the packet fidelity keeps them in one
   * line with its direction's flags) */
  uint64_t bytes, packets; /* transmitted (lost ones included) */
  CsTime busy;             /* serialization time */
  uint64_t queue_max;      /* bytes waiting, high-water mark */
  double queue_integral;   /* byte-picoseconds waiting, for the time-mean */
  uint64_t drops, losses, marks;
  CsTime paused;           /* PFC: time its sender was paused */
  uint64_t pause_frames;   /* PFC: XOFF frames that paused it */
} CsLinkStats;

/* One link direction over one sampling interval (links.csv). */
typedef struct {
  uint64_t bytes;       /* bytes whose transmission started in the interval */
  double utilization;   /* their serialization time over the interval, at most 1 */
  double queue_mean;    /* time-mean bytes waiting */
  uint64_t queue_max;   /* most bytes waiting at once */
  uint64_t drops, losses, marks;
  double paused_s;      /* PFC: seconds its sender was paused in the interval */
} CsLinkSample;

typedef void (*CsLinkSampleFn)(void *ctx, uint32_t link, int dir, const CsLinkSample *sample);

/* Packet events (packets.csv), when a hook is set.  `link`/`dir` name the
 * link direction for enqueue, transmit, drop and loss; for deliver and
 * ack, `link` is UINT32_MAX.  Transmissions are reported when scheduled,
 * with the time they start, so rows are in the order events become known. */
typedef enum { CS_PKT_ENQUEUE, CS_PKT_TRANSMIT, CS_PKT_DROP, CS_PKT_LOSS, CS_PKT_DELIVER, CS_PKT_ACK } CsPacketEvent;
typedef struct {
  CsTime time;
  CsPacketEvent event;
  uint32_t link;
  int dir;
  uint32_t src_host, dst_host; /* the packet's ends */
  bool background;
  uint32_t owner; /* its message, or its background source (packets.csv's flow) */
  uint32_t seq, bytes;
  uint64_t queue_bytes; /* waiting on that link direction, after the event */
} CsPacketTrace;
typedef void (*CsPacketTraceFn)(void *ctx, const CsPacketTrace *ev);

#endif
