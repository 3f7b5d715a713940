#!/usr/bin/env bash
# Every configuration measured on the Linux TCP testbed (real kernels in
# network namespaces: 100 Mbit/s and 1 ms per link, 16 MiB per rank),
# simulated by commsim with validation/linux-ring4.yaml, over seeds 1-3,
# beside the testbed's median of three runs (2026-12-03, docs/network.md
# "Against Linux TCP").  Time = the last message's end, as the testbed's
# time is the slowest rank's.
# Usage: validation/testbed.sh   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-5s %2s %-6s %6s %10s %28s %8s\n' mode N cc loss testbed_s "commsim_s (seeds 1, 2, 3)" "diff"
while read -r mode n cc loss measured; do
  sets=(--set transport.protocol="$cc" --set defaults.loss="$loss")
  if [ "$mode" = ps ]; then
    sets+=(--set topology.workers=$((n - 1)) --set topology.servers=1 --set workload.collective=ps)
  else
    sets+=(--set topology.workers="$n")
  fi
  times=()
  for seed in 1 2 3; do
    sim/commsim run validation/linux-ring4.yaml -q -o "$out/r" --set seed=$seed "${sets[@]}"
    times+=("$(awk -F, 'NR > 1 && $8 > m { m = $8 } END { printf "%.3f", m }' "$out/r/messages.csv")")
  done
  mean=$(printf '%s\n' "${times[@]}" | awk '{ s += $1 } END { printf "%.3f", s / NR }')
  diff=$(awk -v a="$mean" -v b="$measured" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
  printf '%-5s %2s %-6s %6s %10s %28s %8s\n' "$mode" "$n" "$cc" "$loss" "$measured" "${times[*]}" "$diff"
done <<'TABLE'
ring 4 cubic 0 2.176
ring 4 cubic 0.001 3.687
ring 4 cubic 0.01 14.645
ring 4 bbr 0 2.163
ring 4 bbr 0.01 2.255
ring 4 reno 0 2.184
ring 4 reno 0.01 10.684
ring 8 cubic 0.005 10.152
ring 8 bbr 0.005 2.739
ps 4 cubic 0 8.454
ps 4 cubic 0.01 18.108
TABLE
