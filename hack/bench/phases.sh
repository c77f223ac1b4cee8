#!/bin/bash
# Where the start-up time of `cshell run -- true` goes, phase by phase, for
# root and for an unprivileged user: a diagnosis to read next to start.sh,
# not a goal.
#
# usage (as root):  bash hack/bench/phases.sh [ROUNDS]      ROUNDS >= 3, default 10
#   TEST_USER=name  the unprivileged user (default cshelltest, must exist)
#   CSHELL_BIN=path use this cshell binary instead of building the checkout
#
# Each round records one `cshell run -- true` system-wide with perf's
# scheduler tracepoints and the sendfile syscall (perf from Debian's
# linux-perf; only tracepoints, so the cost of tracing is small but not
# zero: compare the phases with each other, not with start.sh). From the
# process events it prints the median of each phase (hack/bench/phases.py):
#   cli          cshell's exec until libcontainer execs `runc init`: Go start,
#                cshell's preparation, libcontainer.Create, sealing the binary
#     copy       of it: libcontainer copying the binary into a memfd
#                (none since cshell's patch of libcontainer skips it
#                rootless; root seals it with overlayfs instead)
#   parent       `runc init` exec until nsexec's first fork: what the parent
#                does before it sends the bootstrap data, mostly moving the
#                init into its cgroups (root; rootless has none on cgroup v1)
#   init         nsexec's first fork until PID 1's exec: namespaces, the
#                second Go start (runc:[2:INIT]), mounts, pivot_root
#   command      PID 1's exec until it exits: cshell's init runs bash -c true
#   end          PID 1's exit until cshell exits: wait, Destroy, exit
# Removes what it made on exit.
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TEST_USER=${TEST_USER:-cshelltest}
[ $# -le 1 ] || die "usage: bash hack/bench/phases.sh [ROUNDS]  (ROUNDS >= 3, default 10)"
parse_rounds 3 10 "${1:-}"
((EUID == 0)) || die "run me as root: perf records system-wide (sudo bash $0 $ROUNDS)"
for tool in go perf setpriv "$PY"; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y linux-perf; Go on PATH)"
done
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (useradd -m $TEST_USER, or set TEST_USER)"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)

W=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$W" ] && rm -rf --one-file-system -- "$W"
	drop_run_cshell
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

W=$(work_dir /var/tmp/cshell-phases.XXXXXX) || exit 1
USER_TMP_ROOT=$W
build_cshell "$W"
install -m 644 "$HERE/phases.py" "$W/"
perf record -q -o "$W/probe.data" -e sched:sched_process_exec -- /bin/true >/dev/null 2>&1 ||
	die "perf cannot record tracepoints here (is tracefs mounted? kernel.perf_event_paranoid?)"

for user in root "$TEST_USER"; do
	install -d -o "$user" -m 755 "$W/$user"
	install -d -o "$user" -m 700 "$W/$user/tmp"
	as_user "$user" "$W/$user" "$W/cshell" run -- true || die "$user: cshell run -- true fails"
	: >"$W/$user.txt"
	for i in $(seq "$ROUNDS"); do
		perf record -q -a -o "$W/$user.data" \
			-e sched:sched_process_exec,sched:sched_process_fork,sched:sched_process_exit \
			-e syscalls:sys_enter_sendfile64,syscalls:sys_exit_sendfile64 \
			-- bash -c "$(declare -f as_user); $(declare -p SAFE_PATH USER_TMP_ROOT); as_user $user $W/$user $W/cshell run -- true" \
			>/dev/null 2>&1 || die "$user: round $i: perf record or cshell failed"
		perf script -i "$W/$user.data" -F comm,pid,time,event 2>/dev/null |
			"$PY" "$W/phases.py" round >>"$W/$user.txt" || die "$user: round $i: phases.py could not read the events"
	done
	echo
	echo "## phases of cshell run -- true as $user, median of $ROUNDS rounds (ms, under perf)"
	"$PY" "$W/phases.py" summary <"$W/$user.txt"
done
