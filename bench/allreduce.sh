#!/usr/bin/env bash
# Wall time, events, events/s and peak memory of `commsim run` for one ring
# all-reduce of 25.6M fp32 parameters on 8, 32 and 128 workers
# (bench/ring-allreduce.yaml), and how wall time grows with P.
# Usage: bench/allreduce.sh [P...]   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "bench/allreduce.sh needs GNU time (apt-get install time)"; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ $# -gt 0 ] || set -- 8 32 128
printf "%5s %9s %12s %12s %10s %14s %10s %12s\n" P wall_s events "events/s" "hops/s" "sim_iter_s" "rss_MiB" "wall/P"
for P in "$@"; do
  /usr/bin/time -f "%e %M" -o "$out/time" sim/commsim run bench/ring-allreduce.yaml -o "$out" \
    --set topology.workers="$P" > "$out/run.txt"
  read -r wall rss < "$out/time"
  line=$(grep '^simulated' "$out/run.txt")
  events=$(echo "$line" | sed -n 's/.*wall time: \([0-9]*\) events.*/\1/p')
  hops=$(echo "$line" | sed -n 's/.*events ([^)]*), \([0-9]*\) packet-hops.*/\1/p')
  iter=$(grep '^  iteration' "$out/run.txt" | awk '{print $2}')
  awk -v P="$P" -v w="$wall" -v e="$events" -v h="$hops" -v i="$iter" -v m="$rss" 'BEGIN {
    printf "%5d %9.2f %12d %12.3e %10.3e %14s %10.1f %12.4f\n", P, w, e, e / w, h / w, i, m / 1024, w / P }'
done
