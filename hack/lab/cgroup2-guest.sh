#!/bin/bash
# The checks of the cgroup-v2 lab, run at boot inside the guest as root
# (hack/lab/cgroup2.sh): every line starts with "LAB", "ok" or "FAIL";
# the last says LAB-RESULT: PASS or FAIL.
set -uo pipefail
cs=/lab/cshell
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }
# as_lab runs a command as the user lab, in its user manager's sight (its
# runtime dir and bus), in a scope of that manager, as a login would.
as_lab() {
	cd /home/lab || return
	runuser -u lab -- env HOME=/home/lab XDG_RUNTIME_DIR=/run/user/1000 \
		DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus \
		systemd-run --user --scope --quiet -- "$@"
}
mgr=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service

echo "LAB kernel $(uname -r), $(systemctl --version | head -1)"
echo "LAB /sys/fs/cgroup: $(stat -f -c %T /sys/fs/cgroup)"
for _ in $(seq 120); do
	[ -S /run/user/1000/bus ] && systemctl is-active -q user@1000.service && break
	sleep 1
done
echo "LAB user@1000.service: $(systemctl is-active user@1000.service); delegates: $(cat $mgr/cgroup.controllers 2>&1)"

doctor=$(as_lab $cs doctor 2>&1)
echo "$doctor" | grep -E 'cgroup|limits' | sed 's/^/LAB doctor: /'
if echo "$doctor" | grep -q 'delegates .*memory.*pids.* to you'; then ok "doctor names the delegation"; else fail "doctor: $doctor"; fi

# --memory: the scope's memory.max; the OOM killer ends the hog, told.
out=$(as_lab $cs run --memory 64m -- "cat /proc/self/cgroup; python3 -c 'b = bytearray(300 << 20)'; echo after \$?" 2>&1)
echo "$out" | sed 's/^/LAB memory: /'
if echo "$out" | grep -q 'memory limit (64 MiB) reached' && echo "$out" | grep -q 'after 137'; then
	ok "--memory 64m held by the cgroup (the hog killed, told, the shell went on)"
else
	fail "--memory 64m"
fi

# The scope while a shell runs: its unit, memory.max, pids.max, cpu.max.
id=$(as_lab $cs run -d --memory 96m --pids 50 --cpus 0.5 -- "sleep 60" 2>&1 | sed -n 's/^started shell \([^ ]*\).*/\1/p')
sleep 1
scope=$(find $mgr -maxdepth 3 -type d -name 'cshell-*.scope' | head -1)
echo "LAB background shell $id, scope ${scope#$mgr/}"
if [ -n "$scope" ] && [ "$(cat "$scope/memory.max")" = $((96 << 20)) ] && [ "$(cat "$scope/pids.max")" = 50 ] && [ "$(cat "$scope/cpu.max")" = "50000 100000" ]; then
	ok "a background shell's scope holds memory.max, pids.max and cpu.max"
else
	fail "the scope: $(cat "$scope"/memory.max "$scope"/pids.max "$scope"/cpu.max 2>&1 | tr '\n' ' ')"
fi
ps=$(as_lab $cs ps --json 2>&1)
if echo "$ps" | grep -q '"enforced_by": *"cgroup"'; then ok "ps says enforced_by cgroup"; else fail "ps: $ps"; fi
as_lab $cs kill "$id" >/dev/null 2>&1
sleep 2

# --pids: a process past 20 is refused by the cgroup (EAGAIN).
fork='import os, time, errno
n = 0
for i in range(40):
    try:
        if os.fork() == 0:
            time.sleep(3); os._exit(0)
        n += 1
    except OSError as e:
        print("forked", n, errno.errorcode[e.errno]); break
else:
    print("forked", n)'
out=$(as_lab $cs run --pids 20 -- python3 -c "$fork" 2>&1)
echo "$out" | sed 's/^/LAB pids: /'
if echo "$out" | grep -Eq '^forked 1[0-9] EAGAIN$'; then ok "--pids 20 held by the cgroup"; else fail "--pids 20"; fi

# --cpus: a busy loop for 3 s uses about half a CPU.
out=$(as_lab $cs run --cpus 0.5 -- 'timeout 3 sh -c "while :; do :; done"; cat /proc/self/stat >/dev/null; python3 -c "import os; t=os.times(); print(\"cpu\", t.children_user + t.children_system)"' 2>&1)
echo "$out" | sed 's/^/LAB cpus: /'
cpu=$(echo "$out" | sed -n 's/^cpu //p')
if [ -n "$cpu" ] && python3 -c "import sys; sys.exit(0 if 0.8 <= float('$cpu') <= 2.2 else 1)"; then
	ok "--cpus 0.5 held by the cgroup (3 s of a busy loop took ${cpu} s of CPU)"
else
	fail "--cpus 0.5: ${cpu:-no figure}"
fi

left=$(find $mgr -maxdepth 3 -type d -name 'cshell-*.scope')
if [ -z "$left" ]; then ok "no scope left behind"; else fail "scopes left: $left"; fi

# Root's shells on cgroup v2: their own cgroup.
out=$(cd /root && $cs run --memory 64m -- "python3 -c 'b = bytearray(300 << 20)'; echo after \$?" 2>&1)
if echo "$out" | grep -q 'memory limit (64 MiB) reached' && echo "$out" | grep -q 'after 137'; then ok "root: --memory 64m on cgroup v2"; else fail "root on cgroup v2: $out"; fi

if ((failed)); then echo "LAB-RESULT: FAIL"; else echo "LAB-RESULT: PASS"; fi
