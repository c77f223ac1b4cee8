#!/usr/bin/env python3
"""Probes for hack/bench/shells.sh: memory of cshell supervisors, starting
many background shells at once, and what is left after a kill.

usage: shells_probe.py start -n N -- COMMAND...
       shells_probe.py watch [--every SECONDS] STATE_DIR ID
       shells_probe.py rss STATE_DIR
       shells_probe.py tree STATE_DIR
       shells_probe.py left STATE_DIR [--before FILE] [--wait SECONDS]
       shells_probe.py supervisors PREFIX

start        spawns N copies of COMMAND at once (stdin/stdout /dev/null) and
             waits for all; prints wall time of the whole batch, median and
             max of each copy (ms), and how many exited non-zero (quoting
             the first failure's stderr on stderr).
watch        waits for shell ID's supervisor (supervisor_pid in meta.json),
             then samples its VmRSS/VmHWM and the log's size every SECONDS
             (default 0.2) until the supervisor is gone. Prints the last
             VmRSS before the first byte of output (idle, the start settled)
             and the largest after it (write), the sample counts, the last
             VmHWM and the log size.
rss          VmRSS of the supervisor and of the container's init (meta.json
             pid) of every running shell of STATE_DIR: count, mean, max, sum;
             and of the supervisors, the RssAnon / RssFile split (RssFile is
             mostly the cshell binary's page cache, shared by every cshell
             process) and Pss (shared pages divided among their users).
tree         "pid starttime cmd" of every supervisor of STATE_DIR and all of
             its descendants (the shell's processes).
left         how many supervisors of STATE_DIR still run, and (--before, a
             tree listing) how many of the other processes listed there are
             still alive: at the first look, and after waiting up to
             SECONDS (default 0) for all to be gone (gone_ms: when; -1: not).
             Zombies count as gone; how many of the listed processes are
             zombies not yet reaped at the end is shown apart.
supervisors  pids of `cshell __supervise DIR ID` processes with DIR under
             PREFIX (for clean-up).

Sizes are printed in KiB (as /proc reports them), one "key=value" per word,
so that the shell script can read them. A supervisor is recognised by its
command line (argv[1] == "__supervise", argv[2] == the state dir); pids are
paired with their start time against reuse.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return None


def stat(pid):
    """(ppid, starttime, state) of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()  # fields from 3 (state) on
    return int(rest[1]), int(rest[19]), rest[0]


def alive(pid, start):
    """pid runs (not a zombie) and is the process that started at start."""
    st = stat(pid)
    return st is not None and st[1] == start and st[2] != "Z"


def zombie(pid, start):
    st = stat(pid)
    return st is not None and st[1] == start and st[2] == "Z"


def status_kb(pid, *keys):
    """{key: KiB} from /proc/PID/status, or None when it is gone."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in keys:
                    out[k] = int(v.split()[0])
    except OSError:
        return None
    return out if len(out) == len(keys) else None


def pss_kb(pid):
    """Pss of PID in KiB (/proc/PID/smaps_rollup): its resident pages, each
    shared page divided by the number of processes mapping it; None when it
    is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def is_supervisor(pid, state, prefix=False):
    a = cmdline(pid)
    if not a or len(a) != 4 or a[1] != "__supervise":
        return False
    if prefix:
        return a[2].startswith(state.rstrip("/") + "/")
    return os.path.realpath(a[2]) == state


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def read_meta(state, sid):
    try:
        with open(os.path.join(state, "shells", sid, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(**kv):
    return " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in kv.items())


def cmd_start(a):
    argv = a.command
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv or a.n < 1:
        sys.exit("shells_probe.py start: want -n N -- COMMAND...")
    prog = argv[0]
    null = os.open(os.devnull, os.O_RDWR)
    errs, started, ended, codes = {}, {}, {}, {}
    t0 = time.monotonic_ns()
    for i in range(a.n):
        err = tempfile.TemporaryFile(prefix="shells-probe-")
        acts = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
                (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
        s = time.monotonic_ns()
        pid = os.posix_spawn(prog, argv, os.environ, file_actions=acts)
        started[pid], errs[pid] = s, err
    while len(ended) < a.n:
        pid, st = os.waitpid(-1, 0)
        if pid in started:
            ended[pid] = time.monotonic_ns()
            codes[pid] = os.waitstatus_to_exitcode(st)
    wall = (max(ended.values()) - t0) / 1e6
    each = [(ended[p] - started[p]) / 1e6 for p in started]
    failed = [p for p in started if codes[p] != 0]
    if failed:
        e = errs[failed[0]]
        e.seek(0)
        print(f"shells_probe.py start: {len(failed)} of {a.n} failed; first: exit {codes[failed[0]]}: "
              + e.read().decode(errors="replace").strip(), file=sys.stderr)
    print(fmt(wall_ms=wall, median_ms=statistics.median(each), max_ms=max(each), n=a.n, fails=len(failed)))
    return 0


def cmd_watch(a):
    state = os.path.realpath(a.state)
    deadline = time.monotonic() + 10
    sp = None
    while sp is None:
        m = read_meta(state, a.id)
        if m and m.get("supervisor_pid") and is_supervisor(m["supervisor_pid"], state):
            sp = m["supervisor_pid"]
        elif m and m.get("status") not in (None, "starting", "running"):
            sys.exit(f"shells_probe.py watch: shell {a.id} ended before it could be watched")
        elif time.monotonic() > deadline:
            sys.exit(f"shells_probe.py watch: no supervisor for shell {a.id} in {state}")
        else:
            time.sleep(0.01)
    logdir = os.path.join(state, "shells", a.id)

    def logsize():
        total = 0
        for name in ("output.log", "output.log.1"):
            try:
                total += os.stat(os.path.join(logdir, name)).st_size
            except OSError:
                pass
        return total

    idle, write, hwm, size, t0 = [], [], 0, 0, time.monotonic()
    while True:
        size = logsize()  # before the sample: a sample with size 0 is surely idle
        s = status_kb(sp, "VmRSS", "VmHWM")
        if s is None or not is_supervisor(sp, state):
            break
        (write if size > 0 else idle).append(s["VmRSS"])
        hwm = s["VmHWM"]
        time.sleep(a.every)
    took = time.monotonic() - t0
    if not idle or not write:
        sys.exit(f"shells_probe.py watch: {len(idle)} idle and {len(write)} writing samples; "
                 "want both (is the write too short, or no output?)")
    # idle: the last sample before the first byte, once the start has settled
    print(fmt(idle_kb=idle[-1], idle_n=len(idle), write_kb=max(write), write_n=len(write),
              hwm_kb=hwm, seconds=took, log_bytes=logsize()))
    return 0


def cmd_rss(a):
    state = os.path.realpath(a.state)
    sup, init, anon, files, pss, missing = [], [], [], [], [], 0
    root = os.path.join(state, "shells")
    for sid in sorted(os.listdir(root), key=lambda s: (len(s), s)):
        m = read_meta(state, sid)
        if not m or m.get("status") != "running":
            continue
        sp, pid = m.get("supervisor_pid"), m.get("pid")
        s = status_kb(sp, "VmRSS", "RssAnon", "RssFile") if sp and is_supervisor(sp, state) else None
        i = status_kb(pid, "VmRSS") if pid and stat(pid) and stat(pid)[0] == sp else None
        p = pss_kb(sp) if s else None
        if s is None or i is None or p is None:
            missing += 1
            continue
        sup.append(s["VmRSS"])
        anon.append(s["RssAnon"])
        files.append(s["RssFile"])
        pss.append(p)
        init.append(i["VmRSS"])
    if not sup:
        sys.exit(f"shells_probe.py rss: no running shell in {state}")
    print(fmt(n=len(sup), missing=missing, sup_mean_kb=statistics.mean(sup), sup_max_kb=max(sup),
              sup_sum_kb=sum(sup), init_mean_kb=statistics.mean(init), init_max_kb=max(init),
              init_sum_kb=sum(init), anon_mean_kb=statistics.mean(anon), anon_max_kb=max(anon),
              file_mean_kb=statistics.mean(files), pss_mean_kb=statistics.mean(pss),
              pss_sum_kb=sum(pss)))
    return 0


def tree(state):
    kids, sups = {}, []
    for pid in all_pids():
        st = stat(pid)
        if st is None:
            continue
        kids.setdefault(st[0], []).append(pid)
        if is_supervisor(pid, state):
            sups.append(pid)
    out, todo = [], list(sups)
    while todo:
        pid = todo.pop()
        st = stat(pid)
        if st is None:
            continue
        out.append((pid, st[1], " ".join(cmdline(pid) or ["?"])))
        todo.extend(kids.get(pid, []))
    return len(sups), out


def cmd_tree(a):
    _, procs = tree(os.path.realpath(a.state))
    for pid, start, cmd in procs:
        print(pid, start, cmd)
    return 0


def cmd_left(a):
    state = os.path.realpath(a.state)
    before = []
    if a.before:
        with open(a.before) as f:
            for line in f:
                pid, start, cmd = line.rstrip("\n").split(" ", 2)
                before.append((int(pid), int(start), cmd))

    def look():
        sups, _ = tree(state)
        procs = [f"{pid}:{cmd}" for pid, start, cmd in before
                 if not is_supervisor(pid, state) and alive(pid, start)]
        return sups, procs

    t0 = time.monotonic()
    sups0, procs0 = sups, procs = look()
    while (sups or procs) and time.monotonic() - t0 < a.wait:
        time.sleep(0.02)
        sups, procs = look()
    gone = (time.monotonic() - t0) * 1000 if not (sups or procs) else -1
    # Dead but not yet reaped: their parent died first, so whoever adopts
    # orphans (PID 1 or a subreaper) must reap them; they hold no memory.
    zombies = sum(zombie(pid, start) for pid, start, _ in before)
    print(fmt(supervisors=sups, procs=len(procs), first_supervisors=sups0, first_procs=len(procs0),
              gone_ms=gone, zombies=zombies))
    for n in procs[:5]:
        print(f"shells_probe.py left: still alive: {n}", file=sys.stderr)
    return 0


def cmd_supervisors(a):
    prefix = os.path.realpath(a.prefix)
    for pid in all_pids():
        if is_supervisor(pid, prefix, prefix=True):
            print(pid)
    return 0


def main():
    ap = argparse.ArgumentParser(description="Probes for hack/bench/shells.sh; see the module docstring.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("start")
    p.add_argument("-n", type=int, required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("watch")
    p.add_argument("--every", type=float, default=0.2)
    p.add_argument("state")
    p.add_argument("id")
    for name in ("rss", "tree"):
        sub.add_parser(name).add_argument("state")
    p = sub.add_parser("left")
    p.add_argument("state")
    p.add_argument("--before")
    p.add_argument("--wait", type=float, default=0)
    sub.add_parser("supervisors").add_argument("prefix")
    a = ap.parse_args()
    return {"start": cmd_start, "watch": cmd_watch, "rss": cmd_rss, "tree": cmd_tree,
            "left": cmd_left, "supervisors": cmd_supervisors}[a.cmd](a)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("shells_probe.py: interrupted", file=sys.stderr)
        sys.exit(130)
