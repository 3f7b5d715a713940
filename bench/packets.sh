#!/usr/bin/env bash
# Packet throughput of the network model: bench/star16.yaml as it is, and
# with 4x the bytes per flow (memory must not grow with packets sent).
# Reports wall time, packet-hops per second and peak memory (GNU time).
# Usage: bench/packets.sh   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench/packets.sh needs GNU time (apt-get install time)"; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for size in 100MB 400MB; do
  for round in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$out/time" sim/commsim run bench/star16.yaml -o "$out" \
      --set flows.0.size=$size \
      $(for i in $(seq 1 15); do echo --set flows.$i.size=$size; done) > "$out/run.txt"
    read -r wall rss < "$out/time"
    line=$(grep '^simulated' "$out/run.txt")
    hops=$(echo "$line" | sed -n 's/.*events ([^)]*), \([0-9]*\) packet-hops.*/\1/p')
    inflight=$(echo "$line" | sed -n 's/.*at most \([0-9]*\) packets in flight.*/\1/p')
    awk -v s="$size" -v r="$round" -v w="$wall" -v m="$rss" -v h="$hops" -v f="$inflight" 'BEGIN {
      printf "size %-6s round %d: wall %6.2f s, %d packet-hops, %6.1f ns/packet-hop (%.2f M/s), peak RSS %d MiB, at most %d packets in flight\n",
        s, r, w, h, w / h * 1e9, h / w / 1e6, m / 1024, f }'
  done
done
