#!/usr/bin/env bash
# Issue 16's speed goal: packet-hops per second of the RoCE incast (PFC
# and DCQCN on, bench/roce-incast.yaml) against the same incast with plain
# reno and no PFC (bench/pfc-incast.yaml, pfc.xoff=0), 200 MB per sender
# by default.  The two run in turn, N pairs, so that a busy host slows
# both alike; each pair's ratio is roce's packet-hops per second (as the
# run prints them) over reno's, and the median of the pairs is the figure.
# Usage: bench/roce-vs-reno.sh [PAIRS [SIZE]]   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-10}
size=${2:-200MB}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sets=()
for i in $(seq 0 14); do sets+=(--set "flows.$i.size=$size"); done
rate() { # packet-hops per second of a run's "simulated" line, in M/s
  sed -n 's/.* packet-hops (\([0-9.]*\) M\/s).*/\1/p' "$1"
}
for p in $(seq 1 "$pairs"); do
  sim/commsim run bench/roce-incast.yaml -o "$out/roce" "${sets[@]}" > "$out/roce.txt"
  sim/commsim run bench/pfc-incast.yaml -o "$out/reno" --set defaults.pfc.xoff=0 "${sets[@]}" > "$out/reno.txt"
  a=$(rate "$out/roce.txt")
  b=$(rate "$out/reno.txt")
  echo "pair $p: roce $a M packet-hops/s, reno $b M/s, ratio $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
done | tee "$out/pairs"
awk '{ print $NF }' "$out/pairs" | sort -n | awk '{ r[NR] = $1 } END {
  m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
  printf "median ratio over %d pairs: %.3f (goal: 0.75 or more)\n", NR, m }'
