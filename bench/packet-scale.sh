#!/usr/bin/env bash
# Events per second of the packet fidelity as the network grows: SimGrid's
# ring (bench/flow-ring-1024.yaml at fidelity packet: a star, 10 Gbps,
# 1 us, 1,000-byte packets, 1-byte ACKs) on P workers for 4,096/P ms
# (rounded up), so that every size runs about 20 M events of its steady
# state.  Each binary runs ROUNDS times per size, the binaries in turn;
# the best rate `run` prints is reported (the machine's noise only ever
# slows a run down).
#
# Usage: bench/packet-scale.sh [-r ROUNDS] [-p "8 32 128 ..."] [BIN...]
#   BIN defaults to this tree's sim/commsim; give two to compare (an older
#   build first, e.g. /tmp/commsim-ref-REV/sim/commsim from
#   bench/identical.sh REV).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
sizes="8 32 128 512 1024 2048"
while getopts "r:p:" opt; do
  case $opt in
  r) rounds=$OPTARG ;;
  p) sizes=$OPTARG ;;
  *) echo "usage: bench/packet-scale.sh [-r ROUNDS] [-p \"P...\"] [BIN...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- sim/commsim
for b in "$@"; do [ -x "$b" ] || { echo "bench/packet-scale.sh: $b: not an executable (build first)" >&2; exit 2; }; done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sed 's/^fidelity: flow/fidelity: packet/' bench/flow-ring-1024.yaml > "$out/pring.yaml"
grep -q '^fidelity: packet' "$out/pring.yaml" || { echo "bench/packet-scale.sh: bench/flow-ring-1024.yaml has no 'fidelity: flow' line" >&2; exit 2; }
printf '%-8s' workers
for b in "$@"; do # a column by its tree's name (this tree: "here")
  t=$(basename "$(dirname "$(dirname "$(realpath "$b")")")")
  [ "$(realpath "$b")" = "$(realpath sim/commsim 2>/dev/null || true)" ] && t=here
  printf ' %22s' "$t"
done
printf '   (M events/s, best of %d)\n' "$rounds"
for p in $sizes; do
  best=()
  for ((r = 0; r < rounds; r++)); do
    for ((i = 1; i <= $#; i++)); do
      b=${!i}
      rate=$("$b" run "$out/pring.yaml" -o "$out/run" --set duration=$(((4096 + p - 1) / p))ms --set topology.workers="$p" 2>&1 |
        sed -n 's/.* events (\([0-9.]*\) M\/s).*/\1/p')
      [ -n "$rate" ] || { echo "bench/packet-scale.sh: $b printed no rate at $p workers" >&2; exit 1; }
      cur=${best[$i]:-0}
      best[$i]=$(awk -v a="$cur" -v b="$rate" 'BEGIN { print (b > a ? b : a) }')
    done
  done
  printf '%-8s' "$p"
  for ((i = 1; i <= $#; i++)); do printf ' %22s' "${best[$i]}"; done
  printf '\n'
done
