#!/usr/bin/env python3
"""Time whole commands against each other, interleaved.

usage: abtime.py [-n ROUNDS] [-w WARMUP] [--vs LABEL]... [--tsv FILE] [--title TEXT]
                 LABEL=COMMAND ...

Each round starts every command once, one after the other; the command that
goes first moves on by one each round, so no command always runs right
after the same neighbour, and slow drift of a busy machine reaches all of
them alike. WARMUP untimed rounds come first.

One sample = wall time (CLOCK_MONOTONIC) from posix_spawn to waitpid of the
command, with stdin and stdout on /dev/null and stderr in a scratch file
(truncated each run; the first failure of each command is quoted). COMMAND is split into
words like a shell does (shlex) but no shell runs it; its program is looked
up in PATH once, before timing.

Printed per command: median, min and max in ms; for every --vs LABEL the
ratio of the two medians ("/LABEL") and the median of the per-round ratios
("~LABEL", each sample over the same round's sample of LABEL); and how many
runs exited non-zero. --tsv writes the same numbers tab-separated, one line
per command, for scripts. Exit status 3 when any timed run failed.
"""
import argparse
import gc
import os
import shlex
import shutil
import statistics
import sys
import tempfile
import time


def parse_args():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].replace("usage: ", "", 1),
                                 description="Interleaved whole-command timer; see the module docstring.")
    ap.add_argument("-n", type=int, default=30, help="timed rounds")
    ap.add_argument("-w", type=int, default=3, help="untimed warm-up rounds")
    ap.add_argument("--vs", action="append", default=[], help="label to compare against (repeatable)")
    ap.add_argument("--tsv", help="also write the results here, tab-separated")
    ap.add_argument("--title", default="")
    ap.add_argument("commands", nargs="+", metavar="LABEL=COMMAND")
    a = ap.parse_args()
    if a.n < 1 or a.w < 0:
        ap.error("-n must be >= 1 and -w >= 0")
    jobs = []
    for item in a.commands:
        label, eq, cmd = item.partition("=")
        argv = shlex.split(cmd)
        if not eq or not label or not argv:
            ap.error(f"{item!r}: write LABEL=COMMAND")
        if label in (l for l, _, _ in jobs):
            ap.error(f"label {label!r} used twice")
        prog = shutil.which(argv[0])
        if prog is None:
            ap.error(f"{label}: {argv[0]!r} not found in PATH")
        jobs.append((label, os.path.abspath(prog), argv))
    for v in a.vs:
        if v not in (l for l, _, _ in jobs):
            ap.error(f"--vs {v!r}: no such label")
    return a, jobs


def main():
    a, jobs = parse_args()
    null = os.open(os.devnull, os.O_RDWR)
    scratch = tempfile.NamedTemporaryFile(prefix="abtime-", suffix=".err")
    actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
               (os.POSIX_SPAWN_OPEN, 2, scratch.name, os.O_WRONLY | os.O_TRUNC, 0)]
    env = dict(os.environ)

    def once(prog, argv):
        start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        pid = os.posix_spawn(prog, argv, env, file_actions=actions)
        try:
            _, status = os.waitpid(pid, 0)
        except KeyboardInterrupt:  # ^C reached the command too: reap it, then stop
            os.waitpid(pid, 0)
            raise
        took = time.clock_gettime_ns(time.CLOCK_MONOTONIC) - start
        return took / 1e6, os.waitstatus_to_exitcode(status)

    samples = {label: [] for label, _, _ in jobs}
    failed = {label: 0 for label, _, _ in jobs}
    why = {}  # label -> first failure: round, exit code, end of its stderr
    gc.disable()
    for rnd in range(a.w + a.n):
        k = rnd % len(jobs)
        for label, prog, argv in jobs[k:] + jobs[:k]:
            ms, rc = once(prog, argv)
            if rc != 0 and label not in why:
                with open(scratch.name, errors="replace") as f:
                    tail = " | ".join(f.read().strip().splitlines()[-3:])
                when = f"warm-up {rnd + 1}" if rnd < a.w else f"round {rnd - a.w + 1}"
                why[label] = f"{when}, exit {rc}: {tail or '(no stderr)'}"
            if rnd < a.w:
                continue
            samples[label].append(ms)
            if rc != 0:
                failed[label] += 1
    gc.enable()

    med = {label: statistics.median(v) for label, v in samples.items()}
    rows = []
    for label, _, _ in jobs:
        v = samples[label]
        row = [label, med[label], min(v), max(v)]
        for ref in a.vs:
            row.append(med[label] / med[ref])
        for ref in a.vs:
            row.append(statistics.median(x / y for x, y in zip(v, samples[ref])))
        row.append(failed[label])
        rows.append(row)

    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if a.title:
        print(f"## {a.title}")
    print(f"#  uid {os.getuid()}, {a.n} rounds + {a.w} warm-up, {stamp}")
    head = ["label", "median_ms", "min_ms", "max_ms"] + ["/" + r for r in a.vs] + ["~" + r for r in a.vs] + ["fails"]
    width = max(8, *(len(l) for l, _, _ in jobs))
    print(f"{head[0]:<{width}}" + "".join(f" {h:>9}" for h in head[1:]))
    for row in rows:
        line = f"{row[0]:<{width}}"
        line += "".join(f" {x:>9.2f}" for x in row[1:4])
        line += "".join(f" {x:>9.2f}" for x in row[4:-1])
        line += f" {row[-1]:>9d}"
        print(line)
    print("#  /X: median over median of X; ~X: median of per-round ratios to X")
    for label, _, argv in jobs:
        print(f"#  {label}: {shlex.join(argv)}")
    for label, text in why.items():
        print(f"#  FAILED {label}, first in {text}")
    sys.stdout.flush()

    if a.tsv:
        with open(a.tsv, "w") as f:
            f.write("\t".join(head) + "\n")
            for row in rows:
                f.write("\t".join([row[0]] + [f"{x:.4f}" for x in row[1:-1]] + [str(row[-1])]) + "\n")
    return 3 if any(failed.values()) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("abtime.py: interrupted", file=sys.stderr)
        sys.exit(130)
