#!/usr/bin/env bash
# ns-3 3.37's ring reference (anchors: ring --P=8 --S=100000000 --minRtoMs=1
# --delAck=1 [--per=P --run=R] [--tcp=ns3::TcpNewReno]), simulated by
# commsim with validation/ns3-ring8.yaml over seeds 1-3, beside ns-3's
# times measured on 2026-12-03 (docs/network.md, "Against ns-3").
# Usage: validation/ns3.sh   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-6s %6s %-26s %5s %-24s %s\n' tcp per "ns-3 (s)" RTOs "commsim (s)" "timeouts"
while read -r cc per ns3 rtos; do
  times=()
  for seed in 1 2 3; do
    sim/commsim run validation/ns3-ring8.yaml -o "$out/r" --set seed=$seed --set transport.protocol="$cc" \
      --set defaults.loss="$per" > "$out/console"
    times+=("$(awk -F, 'NR > 1 && $8 > m { m = $8 } END { printf "%.4f", m }' "$out/r/messages.csv")")
  done
  timeouts=$(sed -n 's/.*timeouts \([0-9]*\),.*/\1/p' "$out/console")
  printf '%-6s %6s %-26s %5s %-24s %s\n' "$cc" "$per" "$ns3" "$rtos" "${times[*]}" "$timeouts"
done <<'TABLE'
cubic 0 0.1507 0
cubic 0.001 0.2039,0.2013,0.2148 8,4,10
cubic 0.01 0.4519,0.4417,0.4438 937,912,928
reno 0.001 0.1805 3
reno 0.01 0.2974 467
TABLE
