#!/usr/bin/env python3
"""Random small messages at packet level and at flow fidelity, message by message.

Each case draws N messages between random pairs of hosts (sizes 200 B to
14,000 B: bursts of 1 to 10 packets, which pass the hops after their first
as trains at flow fidelity off a star) at random whole microseconds in
[0, SPAN), on a ring of 8 hosts, a 4 x 4 torus and a k = 4 fat-tree (ECMP),
10 Gbps and 1 us links, 64 MB buffers, reno. It runs each case at both
fidelities and prints, per case, the mean over messages of
|log(flow duration / packet duration)| and the sum of the flow durations
over the sum of the packet ones. A short SPAN loads the hosts that forward
(rings, tori) far past their links' rate: the packet runs queue, the fluid
and the trains less so. With --big K, K transfers of 6.25 MB between
random hosts start at 0 and the small messages from 1 ms on, behind the
queues those keep standing in their hosts' queues; the figures are then
the small messages' alone. Python's standard library only.

Usage (from the top of a built tree):
  validation/random-bursts.py [--seeds 1,2] [-n 100] [--spans 400,100]
      [--topologies ring,torus,fat-tree] [--big K] [--buffer 64MB] [--bin sim/commsim]
      [--vs OTHER_BIN]

--vs adds a column for another build's flow fidelity (the packet runs are
this build's). Bad arguments exit 2.
"""
import argparse
import csv
import math
import os
import random
import subprocess
import sys
import tempfile

TOPOLOGIES = {
    "ring": (8, "topology: {type: ring, workers: 8}\n"),
    "torus": (16, "topology: {type: torus2d, x: 4, y: 4, workers: 16}\nrouting: ecmp\n"),
    "fat-tree": (16, "topology: {type: fat-tree, k: 4, workers: 16}\nrouting: ecmp\n"),
}
SIZES = [200, 1500, 3000, 9000, 14000]


def die(msg):
    print(f"random-bursts.py: {msg}", file=sys.stderr)
    sys.exit(2)


BIG_START_US = 1000  # the small messages' offset with --big


def scenario(topo, seed, n, span, big, buffer):
    hosts, head = TOPOLOGIES[topo]
    rng = random.Random(seed)
    flows = []
    for _ in range(big):
        a = rng.randrange(hosts)
        b = (a + rng.randrange(1, hosts)) % hosts
        flows.append(f"{{src: w{a}, dst: w{b}, size: 6250000B}}")
    offset = BIG_START_US if big else 0
    for _ in range(n):
        a = rng.randrange(hosts)
        b = (a + rng.randrange(1, hosts)) % hosts
        flows.append(f"{{src: w{a}, dst: w{b}, size: {rng.choice(SIZES)}B, "
                     f"start: {offset + rng.randrange(span)}us}}")
    return (head + f"defaults: {{bandwidth: 10Gbps, latency: 1us, buffer: {buffer}}}\n"
            "transport: {protocol: reno}\n"
            "flows: [" + ", ".join(flows) + "]\n"
            "output: {traces: [summary, messages]}\n")


def durations(binary, yml, fidelity, out):
    r = subprocess.run([binary, "run", yml, "-q", "-o", out, "--force", "--set",
                        f"fidelity={fidelity}"], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"{binary} {fidelity}: exit {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(out, "messages.csv"), newline="") as f:
        return [float(x["end_s"]) - float(x["start_s"]) for x in csv.DictReader(f)]


def compare(packet, flow):
    if len(packet) != len(flow) or not packet:
        die("the runs delivered different messages")
    logs = [abs(math.log(f / p)) for p, f in zip(packet, flow)]
    return sum(logs) / len(logs), sum(flow) / sum(packet)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--spans", default="400,100", help="microseconds, comma-separated")
    ap.add_argument("--topologies", default="ring,torus,fat-tree")
    ap.add_argument("--big", type=int, default=0, help="large transfers beside the small messages")
    ap.add_argument("--buffer", default="64MB", help="every link's buffer (defaults.buffer)")
    ap.add_argument("--bin", default="sim/commsim")
    ap.add_argument("--vs")
    a = ap.parse_args()
    try:
        seeds = [int(s) for s in a.seeds.split(",")]
        spans = [int(s) for s in a.spans.split(",")]
    except ValueError:
        die("--seeds and --spans take comma-separated integers")
    if a.n < 1 or any(s < 1 for s in spans):
        die("-n and each span must be at least 1")
    if a.big < 0:
        die("--big must be at least 0")
    topos = a.topologies.split(",")
    for t in topos:
        if t not in TOPOLOGIES:
            die(f"--topologies: no topology '{t}' (ring, torus, fat-tree)")
    for b in [a.bin] + ([a.vs] if a.vs else []):
        if not os.access(b, os.X_OK):
            die(f"{b}: not an executable (build first)")
    cols = "flow" + (" | vs" if a.vs else "")
    print(f"case: mean |log(flow / packet)| of a message's duration / sum of durations, flow over packet ({cols})")
    with tempfile.TemporaryDirectory() as tmp:
        for topo in topos:
            for seed in seeds:
                for span in spans:
                    yml = os.path.join(tmp, "case.yaml")
                    with open(yml, "w") as f:
                        f.write(scenario(topo, seed, a.n, span, a.big, a.buffer))
                    # (messages.csv lists messages in the order they were sent: the big ones first)
                    packet = durations(a.bin, yml, "packet", os.path.join(tmp, "p"))[a.big:]
                    line = f"{topo:8s} seed {seed} {a.n} messages in {span} us:"
                    m, s = compare(packet, durations(a.bin, yml, "flow", os.path.join(tmp, "f"))[a.big:])
                    line += f" {m:.3f} / {s:.3f}"
                    if a.vs:
                        m, s = compare(packet, durations(a.vs, yml, "flow", os.path.join(tmp, "v"))[a.big:])
                        line += f" | {m:.3f} / {s:.3f}"
                    print(line, flush=True)


if __name__ == "__main__":
    main()
