#!/usr/bin/env python3
"""Collectives at packet level, at flow fidelity and in the model, side by side.

Every case is one iteration of one collective with no compute and no
compression (10 Gbps, 1 us links, 64 MB buffers, reno), so the iteration is
the communication alone; it runs at `fidelity: packet` and `fidelity: flow`
and through `commsim model`, and the script prints how many cases each
fidelity has within 1, 2 and 5 % of the packet run, their mean distance
from it, how many flow runs are within those of the model, and the cases
furthest from it. The grid: ring, tree in 1 and 4 pieces, halving-doubling,
all-gather, ps with 1 and 3 servers and hierarchical on machines of 2 and 4
GPUs, on a star, a k = 4 fat-tree (ECMP), a 4 x 4 torus and a ring, with 2 to
16 workers and 1K, 10K and 25M fp32 parameters. Python's standard library
only.

Usage (from the top of a built tree):
  validation/fidelity-sweep.py [-j N] [-o OUT.csv] [--only SUBSTRING] [--size 1K,10K]
      [--bin sim/commsim] [--against OLD.csv]

About a minute on 2 cores with -j 2 for the whole grid. `--against` reads an earlier
OUT.csv and prints the cases whose flow or model ratio moved by more than
0.1 %.
"""
import argparse
import concurrent.futures as cf
import csv
import os
import re
import subprocess
import sys
import tempfile

BASE = """name: {name}
seed: 1
routing: ecmp
defaults:
  bandwidth: 10Gbps
  latency: 1us
  buffer: 64MB
topology:
{topology}
transport:
  protocol: reno
workload:
  params: {size}
  dtype: fp32
  iterations: 1
  compute: 0
  collective: {collective}
  compression:
    method: none
{extra}
output:
  traces: [summary, links]
"""

TOPOLOGIES = {
    # name: (YAML lines for topology given workers P, servers S; host limit)
    "star": (lambda p, s: f"  type: star\n  workers: {p}\n  servers: {s}", None),
    "fat-tree": (lambda p, s: f"  type: fat-tree\n  k: 4\n  workers: {p}\n  servers: {s}", 16),
    "torus": (lambda p, s: f"  type: torus2d\n  x: 4\n  y: 4\n  workers: {p}\n  servers: {s}", 16),
    "ring": (lambda p, s: f"  type: ring\n  workers: {p}\n  servers: {s}", None),
}

COLLECTIVES = {
    # name: (collective, extra workload lines, servers, gpus per host)
    "ring": ("ring", "", 0, 1),
    "tree": ("tree", "", 0, 1),
    "tree4": ("tree", "  chunks: 4", 0, 1),
    "hd": ("halving-doubling", "", 0, 1),
    "allgather": ("allgather", "", 0, 1),
    "ps1": ("ps", "", 1, 1),
    "ps3": ("ps", "", 3, 1),
    "hier2": ("hierarchical", "", 0, 2),
    "hier4": ("hierarchical", "", 0, 4),
}

WORKERS = [2, 3, 4, 7, 8, 16]
# uncongested: no retransmissions, and no switch's egress queue past three
# packets in the packet run (a packet and the ACKs interleaved with it)
IDLE_QUEUE = 3 * 1500
SIZES = ["1K", "10K", "25M"]


def cases(sizes):
    for topo, (lines, limit) in TOPOLOGIES.items():
        for coll, (cname, extra, servers, gpus) in COLLECTIVES.items():
            for p in WORKERS:
                if cname == "halving-doubling" and p & (p - 1):
                    continue
                if gpus > 1 and (p % gpus or p // gpus < 2):
                    continue
                if cname == "ps" and p < 2:
                    continue
                hosts = p // gpus + servers
                if limit is not None and hosts > limit:
                    continue
                if topo == "ring" and hosts > 8:
                    continue  # long rings are congested by construction
                for size in sizes:
                    name = f"{topo}-{coll}-{p}-{size}"
                    t = lines(p, servers)
                    if gpus > 1:
                        t += (
                            f"\n  gpus_per_host: {gpus}\n"
                            "  intra: {bandwidth: 100Gbps, latency: 500ns}")
                    yield name, BASE.format(name=name, topology=t, size=size,
                                            collective=cname, extra=extra)


def summary(path):
    with open(os.path.join(path, "summary.csv"), newline="") as f:
        return next(csv.DictReader(f))


HOST = re.compile(r"^(w|ps|host)[0-9]+$")


def switch_queue_max(path):
    """The longest queue at a switch's egress in a packet run's links.csv."""
    most = 0
    with open(os.path.join(path, "links.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if not HOST.match(row["src"]) and row["queue_max_bytes"]:
                most = max(most, int(float(row["queue_max_bytes"])))
    return most


MODEL_RE = re.compile(r"\(mean over workers; the last worker ([0-9.]+) s\)")
MODEL_ITER_RE = re.compile(r"iteration ([0-9.]+) s with no overlap")


def run_case(binary, name, text, tmp):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    yml = os.path.join(d, "case.yaml")
    with open(yml, "w") as f:
        f.write(text)
    out = {"case": name}
    for fid in ("packet", "flow"):
        o = os.path.join(d, fid)
        r = subprocess.run([binary, "run", yml, "-q", "-o", o, "--force",
                            "--set", f"fidelity={fid}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            out["error"] = f"{fid}: exit {r.returncode}: {r.stderr.strip()[:200]}"
            return out
        row = summary(o)
        out[fid] = float(row["iter_mean_s"])
        if fid == "packet":
            out["retransmissions"] = int(row["retransmissions"] or 0)
            out["switch_queue_max"] = switch_queue_max(o)
    r = subprocess.run([binary, "model", yml], capture_output=True, text=True)
    m = MODEL_ITER_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        out["error"] = f"model: exit {r.returncode}: {r.stderr.strip()[:200]}"
        return out
    out["model"] = float(m.group(1))
    return out


def die(msg):
    print(f"fidelity-sweep.py: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="runs at once (default: the cores)")
    ap.add_argument("-o", default="fidelity-sweep.csv", help="the CSV to write (default: fidelity-sweep.csv)")
    ap.add_argument("--only", default="", help="cases whose name holds this (e.g. star-ring-, -10K)")
    ap.add_argument("--size", default=",".join(SIZES), help="parameter counts, comma-separated (default: 1K,10K,25M)")
    ap.add_argument("--bin", default="sim/commsim", help="the commsim to run (default: sim/commsim)")
    ap.add_argument("--against", help="an earlier OUT.csv to compare with")
    a = ap.parse_args()
    if not (os.path.isfile(a.bin) and os.access(a.bin, os.X_OK)):
        die(f"{a.bin}: not an executable (build first, or give --bin)")
    if a.j < 1:
        die(f"-j {a.j}: at least 1")
    if a.against and not os.path.isfile(a.against):
        die(f"--against {a.against}: no such file")
    sizes = a.size.split(",")
    for z in sizes:
        if not re.fullmatch(r"[0-9]+(\.[0-9]+)?[KMG]?", z):
            die(f"--size {a.size}: '{z}' is not a parameter count (1K, 10K, 25M: a number, K, M or G)")
    todo = [c for c in cases(sizes) if a.only in c[0]]
    if not todo:
        die(f"no case's name holds '{a.only}' (names: TOPOLOGY-COLLECTIVE-WORKERS-SIZE)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, \
            cf.ThreadPoolExecutor(a.j) as pool:
        futs = [pool.submit(run_case, a.bin, n, t, tmp) for n, t in todo]
        tty = sys.stderr.isatty()  # (a log gets no count: it would be one long line)
        for i, f in enumerate(cf.as_completed(futs)):
            rows.append(f.result())
            if tty:
                print(f"\r{i + 1}/{len(todo)}", end="", file=sys.stderr, flush=True)
    if tty:
        print(file=sys.stderr)
    order = {n: i for i, (n, _) in enumerate(todo)}
    rows.sort(key=lambda r: order[r["case"]])
    for r in rows:
        if "error" not in r:
            r["flow_ratio"] = r["flow"] / r["packet"]
            r["model_ratio"] = r["model"] / r["packet"]
    with open(a.o, "w", newline="") as f:
        w = csv.DictWriter(f, ["case", "packet", "flow", "model", "flow_ratio",
                               "model_ratio", "retransmissions",
                               "switch_queue_max", "error"])
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.12g}" if isinstance(v, float) else v)
                        for k, v in r.items()})
    ok = [r for r in rows if "error" not in r]
    for r in rows:
        if "error" in r:
            print(f"{r['case']}: {r['error']}")
    print(f"{len(ok)} cases ran ({len(rows) - len(ok)} refused); written to {a.o}")
    idle = [r for r in ok if r["retransmissions"] == 0
            and r["switch_queue_max"] <= IDLE_QUEUE]
    for what, rs in (("all cases", ok), ("uncongested", idle)):
        print(f"{what} ({len(rs)}):")
        for k in ("flow", "model"):
            within = [sum(abs(r[k + "_ratio"] - 1) <= e for r in rs) for e in (0.01, 0.02, 0.05)]
            mean = 100 * sum(abs(r[k + "_ratio"] - 1) for r in rs) / len(rs) if rs else 0
            print(f"  {k:6s} within 1 / 2 / 5 % of packet: {within[0]} / {within[1]} / {within[2]}"
                  f" (mean distance {mean:.2f} %)")
        # (the flow fidelity against the closed form: two quick answers that should agree)
        within = [sum(abs(r["flow"] / r["model"] - 1) <= e for r in rs) for e in (0.01, 0.02, 0.05)]
        print(f"  flow   within 1 / 2 / 5 % of model:  {within[0]} / {within[1]} / {within[2]}")
    worst = sorted(ok, key=lambda r: -abs(r["flow_ratio"] - 1))[:25]
    print("furthest at flow fidelity (case, packet s, flow / packet, model / packet,"
          " retransmissions, longest switch queue B):")
    for r in worst:
        print(f"  {r['case']:28s} {r['packet']:.6g} {r['flow_ratio']:.4f} {r['model_ratio']:.4f}"
              f" {r['retransmissions']:6d} {r['switch_queue_max']:9d}")
    worst = sorted(idle, key=lambda r: -abs(r["flow_ratio"] - 1))[:15]
    print("furthest among the uncongested:")
    for r in worst:
        print(f"  {r['case']:28s} {r['packet']:.6g} {r['flow_ratio']:.4f} {r['model_ratio']:.4f}")
    if a.against:
        with open(a.against, newline="") as f:
            old = {r["case"]: r for r in csv.DictReader(f)}
        print(f"moved by more than 0.1 % against {a.against} (old -> new):")
        for r in ok:
            o = old.get(r["case"])
            if not o or not o.get("flow_ratio"):
                continue
            for k in ("flow_ratio", "model_ratio"):
                if abs(float(o[k]) - r[k]) > 0.001:
                    print(f"  {r['case']:28s} {k:11s} {float(o[k]):.4f} -> {r[k]:.4f}")


if __name__ == "__main__":
    main()
