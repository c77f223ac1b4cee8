#!/usr/bin/env python3
"""Relay memory probe for hack/bench/relay.sh: the supervisor's RSS with many
idle relayed connections.

usage: relay_conns.py --supervisor PID --shell-pid PID --port PORT [-n 500] [--settle S]

1. samples the supervisor (VmRSS, RssAnon, VmHWM, open fds, threads): "before";
2. opens N TCP connections to 127.0.0.1:PORT (the exposed port on the
   host) and sends nothing on them; waits until N connections to PORT are
   established inside the shell (counted in /proc/SHELL_PID/net/tcp{,6},
   i.e. in the shell's network namespace: proof that every connection was
   relayed), then SETTLE seconds, and samples again: "open";
3. closes them all, waits until none is left inside, SETTLE seconds, and
   samples again: "after".

Prints one line of key=value words (sizes in KiB, as /proc reports them):
rss_before, rss_open, rss_after, hwm, fds_before, fds_open, fds_after,
thr_before, thr_open, thr_after, inside_open (established inside with N
open), hung_up (of the N, closed by the relay while open), inside_after,
open_ms (time until all N were established inside).
Exit 1 when the supervisor is gone or not all N connections got through.
"""
import argparse
import os
import resource
import socket
import sys
import time


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "VmHWM", "Threads"):
                out[k] = int(v.split()[0])
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


def inside(shell_pid, port):
    """Established TCP connections inside the shell whose local port is PORT
    (the server's side of each relayed connection)."""
    n = 0
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{shell_pid}/net/{name}") as f:
                next(f)
                for line in f:
                    w = line.split()
                    if w[3] == "01" and int(w[1].rsplit(":", 1)[1], 16) == port:
                        n += 1
        except FileNotFoundError:
            pass
    return n


def hung_up(s):
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while True:
        if pred():
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--supervisor", type=int, required=True)
    ap.add_argument("--shell-pid", type=int, required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("-n", type=int, default=500)
    ap.add_argument("--settle", type=float, default=1.0)
    a = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < a.n + 64:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, a.n + 64), hard))

    ok = True
    r = {}
    s0 = status(a.supervisor)
    base = inside(a.shell_pid, a.port)
    socks = []
    t0 = time.monotonic()
    try:
        for _ in range(a.n):
            s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
            s.setblocking(False)  # plain non-blocking: the probes below must not wait
            socks.append(s)
        if not wait_for(lambda: inside(a.shell_pid, a.port) - base >= a.n, 10):
            ok = False
        r["open_ms"] = round((time.monotonic() - t0) * 1000)
        time.sleep(a.settle)
        r["inside_open"] = inside(a.shell_pid, a.port) - base
        s1 = status(a.supervisor)
        # a relay that hung up on a client shows here as end of file
        r["hung_up"] = sum(hung_up(s) for s in socks)
    finally:
        for s in socks:
            s.close()
    wait_for(lambda: inside(a.shell_pid, a.port) <= base, 10)
    time.sleep(a.settle)
    r["inside_after"] = inside(a.shell_pid, a.port) - base
    s2 = status(a.supervisor)
    for key, st in (("before", s0), ("open", s1), ("after", s2)):
        r[f"rss_{key}"] = st["VmRSS"]
        r[f"anon_{key}"] = st["RssAnon"]
        r[f"fds_{key}"] = st["fds"]
        r[f"thr_{key}"] = st["Threads"]
    r["hwm"] = s2["VmHWM"]
    r["n"] = a.n
    print(" ".join(f"{k}={v}" for k, v in r.items()))
    if not ok or r["inside_open"] < a.n or r["hung_up"]:
        print(f"relay_conns.py: only {r['inside_open']} of {a.n} connections reached the shell",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
