#!/bin/bash
# roce-fairness.sh - the DCQCN fairness figures of docs/network.md ("RoCE
# and DCQCN"): N flows of 240/N MB into one 40 Gbps port with PFC and ECN
# marking (Kmin 5 KB, Kmax 200 KB, Pmax 1 %), with the DCQCN paper's
# settings and with the defaults.  For each: Jain's index of the bytes
# each flow delivered, the bottleneck queue's mean as packets found it,
# and the port's use, over [0.5, 0.8] and [0, 0.5] of 240 MB / 40 Gbps
# (tests/test_roce.c's fair_run uses the first window); pause frames.
# Needs pandas (/usr/bin/python3).  Run from the project root.
set -euo pipefail
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
paper='{alpha_period: 55us, time_reset: 55us, byte_reset: 10MB, threshold: 5, ai_rate: 40Mbps, hai_rate: 200Mbps}'
for n in 2 8; do
  for mode in paper default; do
    {
      echo 'defaults: {bandwidth: 40Gbps, latency: 1us, buffer: 2MB, pfc: {xoff: 1MB}, ecn: {kmin: 5KB, kmax: 200KB, pmax: 0.01}}'
      echo "topology: {type: star, workers: $((n + 1))}"
      if [ $mode = paper ]; then echo "transport: {protocol: roce, dcqcn: $paper}"; else echo 'transport: {protocol: roce}'; fi
      echo 'output: {traces: [summary, messages, packets]}'
      echo 'flows:'
      for i in $(seq 1 $n); do echo "  - {src: w$i, dst: w0, size: $((240 / n))MB}"; done
    } > "$d/f.yaml"
    sim/commsim run "$d/f.yaml" -q -o "$d/out"
    /usr/bin/python3 - "$n" "$mode" "$d/out" <<'PY'
import sys, pandas as pd
n, mode, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
span = 240e6 * 8 / 40e9
p = pd.read_csv(f"{out}/packets.csv")
s = pd.read_csv(f"{out}/summary.csv")
for lo, hi in ((0.5, 0.8), (0.0, 0.5)):
    a, b = lo * span, hi * span
    w = p[(p.time_s >= a) & (p.time_s < b) & (p.bytes > 100)]
    x = w[w.event == "deliver"].groupby("flow").bytes.sum()
    q = w[(w.event == "enqueue") & (w.src == "sw0") & (w.dst == "w0")].queue_bytes
    jain = x.sum() ** 2 / len(x) / (x ** 2).sum()
    gbps = " ".join(f"{v * 8 / (b - a) / 1e9:.2f}" for v in x)
    print(f"{n} flows, {mode}, {a * 1e3:.0f}-{b * 1e3:.0f} ms: Jain {jain:.4f}, Gbps {gbps}, "
          f"queue mean {q.mean() / 1e3:.0f} KB, port {x.sum() * 8 / (b - a) / 40e9:.1%} busy")
print(f"{n} flows, {mode}: pause frames {s.pause_frames.iloc[0]}")
PY
  done
done
