#!/usr/bin/env python3
"""Phases of one `cshell run -- true` from `perf script -F comm,pid,time,event`.

usage: phases.py round    < perf script output   (prints one line: name=ms ...)
       phases.py summary  < lines of `round`     (prints the median of each)

See hack/bench/phases.sh for what each phase is.
"""
import re
import statistics
import sys

PHASES = ("cli", "copy", "parent", "init", "command", "end", "total")
LINE = re.compile(r"\s*(.*?)\s+(\d+)\s+(\d+\.\d+):\s+(\S+)")


def events(lines):
    for line in lines:
        m = LINE.match(line)
        if m:
            comm, pid, t, ev = m.groups()
            yield float(t) * 1000, comm, int(pid), ev.rstrip(":").split(":")[-1]


def first(evs, pred, what):
    for e in evs:
        if pred(e):
            return e
    sys.exit(f"phases.py: no {what} in the events")


def round_():
    evs = list(events(sys.stdin))
    cli = first(evs, lambda e: e[3] == "sched_process_exec" and e[1] == "cshell", "exec of cshell")
    t0, pid = cli[0], cli[2]
    init = first(evs, lambda e: e[0] > t0 and e[3] == "sched_process_exec" and e[2] != pid
                 and e[1] not in ("cshell", "bash", "true"), "exec of runc init")
    fork = first(evs, lambda e: e[0] > init[0] and e[1].startswith("runc:[0") and e[3] == "sched_process_fork",
                 "fork of nsexec")
    pid1 = first(evs, lambda e: e[0] > fork[0] and e[3] == "sched_process_exec" and e[1] == "cshell",
                 "exec of PID 1")
    pid1_end = first(evs, lambda e: e[0] > pid1[0] and e[3] == "sched_process_exit" and e[2] == pid1[2],
                     "exit of PID 1")
    end = [e for e in evs if e[3] == "sched_process_exit" and e[2] == pid]
    if not end:
        sys.exit("phases.py: no exit of cshell in the events")
    copy = 0.0
    enter = [e for e in evs if e[2] == pid and e[3] == "sys_enter_sendfile64" and t0 < e[0] < init[0]]
    leave = [e for e in evs if e[2] == pid and e[3] == "sys_exit_sendfile64" and t0 < e[0] < init[0]]
    if enter and leave:
        copy = leave[-1][0] - enter[0][0]
    out = dict(cli=init[0] - t0, copy=copy, parent=fork[0] - init[0], init=pid1[0] - fork[0],
               command=pid1_end[0] - pid1[0], end=end[-1][0] - pid1_end[0], total=end[-1][0] - t0)
    print(" ".join(f"{k}={out[k]:.2f}" for k in PHASES))


def summary():
    vals = {k: [] for k in PHASES}
    for line in sys.stdin:
        for word in line.split():
            k, _, v = word.partition("=")
            if k in vals:
                vals[k].append(float(v))
    if not vals["total"]:
        sys.exit("phases.py: no rounds")
    total = statistics.median(vals["total"])
    for k in PHASES:
        med = statistics.median(vals[k])
        name = "  of it: copy" if k == "copy" else k
        print(f"{name:14s} {med:7.2f}  {100 * med / total:5.1f}%")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("round", "summary"):
        sys.exit(__doc__)
    round_() if sys.argv[1] == "round" else summary()
