#!/usr/bin/env bash
# What each trace costs: wall time of `commsim run topologies/resnet50-ring.yaml`
# with no trace but summary.csv, and with each trace alone (best of 3 runs).
# Usage: bench/traces.sh   (from the top of a built tree)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf "%-12s %8s %12s\n" traces wall_s "files_MB"
for t in summary iterations messages links packets timeline; do
  best=""
  for round in 1 2 3; do
    rm -rf "$out/r"
    s=$(date +%s.%N)
    sim/commsim run topologies/resnet50-ring.yaml -q -o "$out/r" --set "output.traces=[summary, $t]"
    e=$(date +%s.%N)
    best=$(awk -v s="$s" -v e="$e" -v b="$best" 'BEGIN { w = e - s; print (b == "" || w < b) ? w : b }')
  done
  mb=$(du -sm "$out/r" | cut -f1)
  printf "%-12s %8.2f %12s\n" "$t" "$best" "$mb"
done
