#!/usr/bin/env python3
"""Interleaved port-relay measurement for hack/bench/relay.sh.

usage: relay_bench.py [-r ROUNDS] [-t IPERF_S] [-d WRK_S] [--tsv FILE] [--title T]
                      LABEL=IPERF_HOST:PORT,HTTP_HOST:PORT ...

The first path is the reference (plain loopback). Every round measures each
path once, in an order that rotates from round to round, so that a drifting
shared machine hits all paths alike. Per path and round:

  tput   iperf3 -c HOST -p PORT -t IPERF_S -O 1 -J     1 TCP stream, host -> server;
                                                      Gbit/s received (the omitted
                                                      first second is not counted)
  new1   wrk -t1 -c1  -d WRK_S -H 'Connection: close'  a new connection per request,
                                                      one at a time
  new16  wrk -t2 -c16 -d WRK_S -H 'Connection: close'  a new connection per request,
                                                      16 at a time
  keep   wrk -t1 -c1  -d WRK_S                         requests on one keep-alive
                                                      connection

Prints one table: per path and metric the median over the rounds, and the
median of the per-round ratios to the reference (x). A failed measurement
counts as missing (nan) and is reported on stderr; the table marks paths
with missing samples. --tsv writes label, metric, median, min, max, ratio,
samples, failures (one line per path and metric) for the calling script.
"""
import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import time

METRICS = [
    ("tput", "Gbit/s"),
    ("new1", "new conn c1 req/s"),
    ("new16", "new conn c16 req/s"),
    ("keep", "keep-alive c1 req/s"),
]


def warn(msg):
    print(f"# {msg}", file=sys.stderr, flush=True)


def iperf(addr, secs):
    host, port = addr.rsplit(":", 1)
    cmd = ["iperf3", "-c", host, "-p", port, "-t", str(secs), "-O", "1", "-J"]
    for attempt in (1, 2):  # a server still busy with the last test says so once
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=secs + 20)
            j = json.loads(out.stdout)
            if "error" in j:
                raise ValueError(j["error"])
            return j["end"]["sum_received"]["bits_per_second"] / 1e9
        except (subprocess.TimeoutExpired, ValueError, KeyError) as e:
            warn(f"iperf3 -> {addr} (try {attempt}) failed: {e}")
            time.sleep(0.5)
    return math.nan


def wrk(addr, secs, conns, threads, close):
    cmd = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{secs}s"]
    if close:
        cmd += ["-H", "Connection: close"]
    cmd.append(f"http://{addr}/")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=secs + 20)
    except subprocess.TimeoutExpired:
        warn(f"{' '.join(cmd)}: timed out")
        return math.nan
    m = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    err = re.search(r"Socket errors:.*|Non-2xx or 3xx responses:.*", out.stdout)
    if err:
        warn(f"{' '.join(cmd)}: {err.group(0)}")
    if not m:
        warn(f"{' '.join(cmd)}: no result: {out.stdout[-200:]!r} {out.stderr[-200:]!r}")
        return math.nan
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("-t", type=int, default=3)
    ap.add_argument("-d", type=int, default=2)
    ap.add_argument("--tsv")
    ap.add_argument("--title", default="")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()

    paths = []
    for p in a.paths:
        label, _, rest = p.partition("=")
        ia, _, ha = rest.partition(",")
        if not (label and ia and ha):
            ap.error(f"bad path {p!r}: want LABEL=IPERF_HOST:PORT,HTTP_HOST:PORT")
        paths.append((label, ia, ha))

    run = {
        "tput": lambda ia, ha: iperf(ia, a.t),
        "new1": lambda ia, ha: wrk(ha, a.d, 1, 1, True),
        "new16": lambda ia, ha: wrk(ha, a.d, 16, 2, True),
        "keep": lambda ia, ha: wrk(ha, a.d, 1, 1, False),
    }
    res = {(l, m): [] for l, _, _ in paths for m, _ in METRICS}
    t0 = time.monotonic()
    for r in range(a.r):
        k = r % len(paths)
        for label, ia, ha in paths[k:] + paths[:k]:
            for m, _ in METRICS:
                res[(label, m)].append(run[m](ia, ha))
        warn(f"round {r + 1}/{a.r} done after {time.monotonic() - t0:.0f} s")

    ref = paths[0][0]
    rows = []
    for label, _, _ in paths:
        row = {"label": label}
        for m, _ in METRICS:
            xs = res[(label, m)]
            ok = [x for x in xs if not math.isnan(x)]
            ratios = [x / y for x, y in zip(xs, res[(ref, m)])
                      if not math.isnan(x) and not math.isnan(y) and y > 0]
            row[m] = {
                "median": statistics.median(ok) if ok else math.nan,
                "min": min(ok) if ok else math.nan,
                "max": max(ok) if ok else math.nan,
                "ratio": statistics.median(ratios) if ratios else math.nan,
                "n": len(ok),
                "fails": len(xs) - len(ok),
            }
        rows.append(row)

    print(f"## {a.title} | rounds={a.r} iperf3 -t {a.t} (-O 1), wrk -d {a.d}s | "
          f"median, (x) = median of per-round ratios to {ref} | "
          f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    w = max(12, max(len(l) for l, _, _ in paths))
    hdr = f"{'path':<{w}}"
    for _, title in METRICS:
        hdr += f"  {title:>24}"
    print(hdr)
    for row in rows:
        line = f"{row['label']:<{w}}"
        for m, _ in METRICS:
            v = row[m]
            if v["n"] == 0:
                cell = "FAILED"
            else:
                num = f"{v['median']:.2f}" if m == "tput" else f"{v['median']:.0f}"
                cell = f"{num} ({v['ratio']:.2f}x)"
                if v["fails"]:
                    cell += f" [{v['fails']} failed]"
            line += f"  {cell:>24}"
        print(line)
    print("# spread (min..max): " + "; ".join(
        f"{row['label']}: " + ", ".join(
            (f"{row[m]['min']:.2f}..{row[m]['max']:.2f}" if m == "tput"
             else f"{row[m]['min']:.0f}..{row[m]['max']:.0f}") for m, _ in METRICS)
        for row in rows))
    print("# paths: " + "; ".join(f"{l}: iperf3 {ia}, http {ha}" for l, ia, ha in paths))

    if a.tsv:
        with open(a.tsv, "w") as f:
            f.write("label\tmetric\tmedian\tmin\tmax\tratio\tsamples\tfails\n")
            for row in rows:
                for m, _ in METRICS:
                    v = row[m]
                    f.write(f"{row['label']}\t{m}\t{v['median']:.4f}\t{v['min']:.4f}\t{v['max']:.4f}"
                            f"\t{v['ratio']:.4f}\t{v['n']}\t{v['fails']}\n")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
