#!/bin/bash
# Port relay (`cshell run --expose`): throughput, connection rate and memory,
# against plain loopback and the rootless port forwarders people use instead.
#
# usage (as root):  ALLOW_TUN_CHMOD=1 bash hack/bench/relay.sh [ROUNDS]   ROUNDS >= 1, default 3
#   TEST_USER=name    the unprivileged user of the rootless rows (default cshelltest;
#                     needs /etc/subuid and /etc/subgid entries for the peers)
#   ALLOW_TUN_CHMOD=1 /dev/net/tun is 0600 on some hosts, and the tap-based peers
#                     (rootlesskit, pasta) cannot open it as TEST_USER: chmod it
#                     0666 (the usual distro default) for the run, restore the mode
#                     on exit. Without it those rows are skipped. (As the anchors'
#                     02-portfwd.sh does; cshell itself needs no tun device.)
#   PEERS="..."       peer rows, from rlk-builtin rlk-slirp4netns pasta
#                     (default "rlk-builtin pasta")
#   IPERF_S=3 WRK_S=2 seconds per iperf3 run (plus 1 omitted) and per wrk run
#   PORT_BASE=23400   host ports used: PORT_BASE+1..+9 (iperf3) and +81..+89 (http)
#   CSHELL_BIN=path   measure this cshell binary instead of building the checkout
#
# 1. One table, medians over ROUNDS interleaved rounds (every round measures
#    each row once, the order rotating; hack/bench/relay_bench.py), each value
#    also as the median of its per-round ratios to the loopback row:
#      loopback      iperf3 -s and the HTTP server (hack/bench/cmd/httpd, answers
#                    "ok\n") on the host's 127.0.0.1: the reference
#      cshell(root), cshell(user)
#                    cshell run -d --expose P1 --expose P2 --ready --
#                      'iperf3 -s -p P1 & httpd :P2 & wait'
#                    as root and as TEST_USER; the client hits 127.0.0.1:P1/P2
#      rlk-builtin(user)      rootlesskit --net=slirp4netns --mtu=65520
#                             --port-driver=builtin -p 127.0.0.1:H:PORT/tcp
#      rlk-slirp4netns(user)  the same with --port-driver=slirp4netns
#      pasta(user)            pasta --config-net -t 127.0.0.1/H:PORT (spliced)
#                    (each as its project documents it; the servers inside
#                    listen on 5201 and 8080)
#    Columns: iperf3 1-stream throughput (-t IPERF_S -O 1), new-connection
#    req/s (wrk -H 'Connection: close', -c1 -t1 and -c16 -t2), keep-alive
#    req/s (wrk -c1 -t1), from the host to 127.0.0.1.
#    Goals, for the rootless row cshell(user): throughput >= 0.75x, new
#    connections >= 0.6x (c1 and c16 each), keep-alive >= 0.7x of loopback.
# 2. Relay memory, as root and as TEST_USER: one shell exposing the HTTP port
#    (`run -d --expose P --ready -- httpd :P`); 500 idle TCP connections from
#    the host to it (hack/bench/relay_conns.py, which checks that all 500 are
#    established inside the shell); VmRSS of its `cshell __supervise` process
#    (supervisor_pid in meta.json) before, with the 500 open, and after they
#    are closed; its RssAnon (its own memory, without the page cache of the
#    binary), open fds and threads alongside.
# 3. Removes everything, also on ^C: shells killed (kill all, then any
#    supervisor left by its pid), the peers' and the loopback servers' process
#    groups stopped by pid (their user+network namespaces go with them), the
#    /dev/net/tun mode restored, the work dir /var/tmp/cshell-relay.XXXXXX
#    removed, and /run/cshell too when this run created it and nothing runs
#    there. Ends with a check that nothing of this run is left.
#
# Exit status: 0 when every measurement was valid (whatever the goals say),
# 1 on a setup error or a failed measurement.
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOAL_TPUT=0.75 # throughput, ratio to loopback
GOAL_NEW=0.6   # new connections
GOAL_KEEP=0.7  # keep-alive
CONNS=500      # idle connections for the memory probe
TEST_USER=${TEST_USER:-cshelltest}
PEERS=${PEERS:-rlk-builtin pasta}
IPERF_S=${IPERF_S:-3}
WRK_S=${WRK_S:-2}
PORT_BASE=${PORT_BASE:-23400}

[ $# -le 1 ] || die "usage: bash hack/bench/relay.sh [ROUNDS]  (default 3)"
parse_rounds 1 3 "${1:-}"
for v in IPERF_S WRK_S PORT_BASE; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]] || ((10#${!v} < 1)); then
		die "$v must be a whole number >= 1, not '${!v}'"
	fi
done
((10#$PORT_BASE + 89 <= 65535)) || die "PORT_BASE is too high"
((EUID == 0)) || die "run me as root (sudo bash $0 $ROUNDS)"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
for tool in iperf3 wrk setpriv setsid env getent install stat ss curl pgrep "$PY"; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y iperf3 wrk util-linux iproute2 curl procps python3)"
done
command -v go >/dev/null || die "go not found (needed to build the HTTP server$([ -n "${CSHELL_BIN:-}" ] || echo " and cshell"))"
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (useradd -m $TEST_USER, or set TEST_USER)"
TU_UID=$(id -u "$TEST_USER")
TU_GID=$(id -g "$TEST_USER")
((TU_UID != 0)) || die "TEST_USER must not be root"
for p in $PEERS; do
	case $p in
	rlk-builtin | rlk-slirp4netns)
		if ! command -v rootlesskit >/dev/null || ! command -v slirp4netns >/dev/null; then
			die "peer $p needs rootlesskit and slirp4netns (apt-get install -y rootlesskit slirp4netns uidmap)"
		fi
		;;
	pasta) command -v pasta >/dev/null || die "peer pasta needs pasta (apt-get install -y passt)" ;;
	*) die "unknown peer '$p' in PEERS (rlk-builtin, rlk-slirp4netns, pasta)" ;;
	esac
done

W=
TUN_ORIG=             # /dev/net/tun's mode before we changed it
declare -a GROUPS_=() # "pgid:starttime" of every process group we started

# starttime PID: field 22 of /proc/PID/stat (clock ticks after boot), or nothing.
starttime() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	awk '{ print $20 }' <<<"$s"
}

# shellcheck disable=SC2317 # called from the EXIT trap
# pstate PID: its state letter (R, S, Z...), or nothing when it is gone.
pstate() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	echo "${s%% *}"
}

# spawn LOG CMD...: start CMD in a session (and process group) of its own,
# output to LOG; record the group. setsid does not fork here (a background
# job of a script is no group leader), so $! is the group's leader.
spawn() {
	local log=$1 pid
	shift
	setsid "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	GROUPS_+=("$pid:$(starttime "$pid")")
	sleep 0.05
	if [ -d "/proc/$pid" ] && [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" != "$pid" ]; then
		die "setsid forked: cannot track $*"
	fi
}

# members PGID START: pids in process group PGID, if it is still ours (its
# leader runs with the recorded start time, or all members started after it).
members() {
	local pg=$1 st=$2 p s
	local -a ps_=()
	mapfile -t ps_ < <(pgrep -g "$pg" 2>/dev/null || true)
	[ ${#ps_[@]} -gt 0 ] || return 0
	for p in "${ps_[@]}"; do
		s=$(starttime "$p")
		[ -z "$s" ] || [ -z "$st" ] || ((s >= st)) || return 0
	done
	printf '%s\n' "${ps_[@]}"
}

# stop_groups: TERM the server holders (each stops its two servers), then
# every group we started; KILL what is left after 3 s.
stop_groups() {
	local g sig i left f pid
	for f in "$W"/run/*.pid; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		rm -f "$f"
		if [[ $pid =~ ^[0-9]+$ ]] && ((pid > 1)) &&
			tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q ' relay-holder'; then
			kill -TERM "$pid" 2>/dev/null || true
		fi
	done
	for sig in TERM KILL; do
		left=0
		for g in "${GROUPS_[@]}"; do
			[ -n "$(members "${g%%:*}" "${g#*:}")" ] || continue
			kill "-$sig" -- "-${g%%:*}" 2>/dev/null || true
			left=1
		done
		((left)) || return 0
		for i in $(seq 30); do
			left=0
			for g in "${GROUPS_[@]}"; do
				[ -z "$(members "${g%%:*}" "${g#*:}")" ] || left=1
			done
			((left)) || return 0
			[ "$sig" = KILL ] || [ "$i" -lt 30 ] || echo "# some servers ignored TERM: KILL" >&2
			sleep 0.1
		done
	done
}

# shellcheck disable=SC2317 # called from the EXIT trap
# supervisors STATE: "pid" of each supervisor recorded in STATE that still runs.
supervisors() {
	local m pid
	for m in "$1"/shells/*/meta.json; do
		[ -f "$m" ] || continue
		pid=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("supervisor_pid") or "")' "$m" 2>/dev/null) || continue
		[ -n "$pid" ] || continue
		tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "__supervise $1 " && echo "$pid"
	done
	return 0
}

# shellcheck disable=SC2317 # called from the EXIT trap
# ours: processes left of this run (a command line naming the work dir, or
# a member of one of our groups), one "pid cmdline" a line.
ours() {
	local p g
	{
		for p in $(pgrep -f -- "$W/" || true); do
			[ "$p" != $$ ] && [ "$p" != "$BASHPID" ] && echo "$p"
		done
		for g in "${GROUPS_[@]}"; do members "${g%%:*}" "${g#*:}"; done
	} | sort -un | while read -r p; do
		[ -r "/proc/$p/cmdline" ] || continue
		case $(cat "/proc/$p/comm" 2>/dev/null) in pgrep | sort | relay.sh) continue ;; esac
		# gone, or a zombie not yet reaped (a supervisor's parent is init)
		case $(pstate "$p") in '' | Z) continue ;; esac
		echo "$p $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-120)"
	done
}

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$? s user pid left
	trap - EXIT INT TERM
	set +e
	if [ -n "$W" ] && [ -d "$W" ]; then
		for s in "$W"/*/state-*; do
			[ -d "$s/shells" ] || continue
			user=$(stat -c %U "$s")
			as_user "$user" / "$W/cshell" --state-dir "$s" kill all --grace 0 >/dev/null 2>&1
			# a start cut short (^C) may leave a supervisor that kill all missed:
			# stop it by its pid; its shell ends with it
			for pid in $(supervisors "$s"); do kill -KILL "$pid" 2>/dev/null; done
		done
	fi
	stop_groups
	if [ -n "$TUN_ORIG" ]; then
		# only when it is still what we made it (someone else may have changed it since)
		if [ "$(stat -c %a /dev/net/tun)" = 666 ]; then
			chmod "$TUN_ORIG" /dev/net/tun && echo "# restored /dev/net/tun to mode $TUN_ORIG" >&2
		else
			echo "# /dev/net/tun is mode $(stat -c %a /dev/net/tun) now, not 666: left alone" >&2
		fi
	fi
	if [ -n "$W" ] && [ -d "$W" ]; then
		for _ in $(seq 20); do # up to 2 s for the last ones to exit
			left=$(ours)
			[ -n "$left" ] || break
			sleep 0.1
		done
		if [ -n "$left" ]; then
			echo "relay.sh: left running after clean-up (killing):" >&2
			echo "$left" >&2
			while read -r pid _; do kill -KILL "$pid" 2>/dev/null; done <<<"$left"
			((rc != 0)) || rc=1
		else
			echo "# clean-up: nothing of this run is left running" >&2
		fi
		rm -rf --one-file-system -- "$W"
	fi
	drop_run_cshell
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

W=$(work_dir /var/tmp/cshell-relay.XXXXXX) || exit 1
USER_TMP_ROOT=$W

build_cshell "$W"
(cd "$REPO" && go build -trimpath -o "$W/httpd" ./hack/bench/cmd/httpd) || die "go build of hack/bench/cmd/httpd failed"
chmod 755 "$W/cshell" "$W/httpd"
CFG=$W/config.json
printf '{"shells": {"maxConcurrent": 8}}\n' >"$CFG"
chmod 644 "$CFG"
for u in root "$TEST_USER"; do
	install -d -o "$(id -u "$u")" -g "$(id -g "$u")" -m 755 "$W/$u" "$W/$u/wd"
	install -d -o "$(id -u "$u")" -g "$(id -g "$u")" -m 700 "$W/$u/tmp" "$W/$u/state-bench" "$W/$u/state-mem"
done
install -d -m 755 "$W/log"
install -d -o "$TU_UID" -g "$TU_GID" -m 755 "$W/run"

rev=$(cshell_rev)
vers="iperf3 $(iperf3 --version | head -1 | awk '{print $2}') | wrk $({ wrk -v 2>&1 || true; } | head -1 | awk '{print $2}')"
command -v rootlesskit >/dev/null && vers+=" | rootlesskit $(rootlesskit --version | awk '{print $3}')"
command -v slirp4netns >/dev/null && vers+=" | slirp4netns $(slirp4netns --version | head -1 | awk '{print $3}')"
command -v pasta >/dev/null && vers+=" | passt $(dpkg-query -W -f '${Version}' passt 2>/dev/null || echo '?')"
echo "# cshell $rev ($(go version | awk '{print $3}')) | kernel $(uname -r) | $(nproc) cpus | $ROUNDS rounds | user $TEST_USER (uid $TU_UID) | $vers | work dir $W"

# --- ports: +1.. iperf3, +81.. http; one pair per row
port() { echo $((10#$PORT_BASE + $1)); }
for i in $(seq 1 9) $(seq 81 89); do
	p=$(port "$i")
	[ -z "$(ss -Htln "sport = :$p")" ] || die "port $p is in use on this machine (set PORT_BASE to move the ports)"
done


# servers NAME IPERF_PORT HTTP_PORT [BIND]: the command line of a holder
# that brings lo up (inside a namespace), runs iperf3 -s and the HTTP
# server, writes its own host pid to $W/run/NAME.pid, and stops exactly its
# two children on TERM.
servers() {
	local name=$1 ip=$2 hp=$3 bind=${4:-} b=
	[ -z "$bind" ] || b=" -B $bind"
	# shellcheck disable=SC2016 # expanded by the holder's bash
	printf '%s' 'read -r hp _ </proc/self/stat; '"[ -n \"$bind\" ] || ip link set lo up 2>/dev/null; " \
		"iperf3 -s -p $ip$b >/dev/null 2>&1 & a=\$!; $W/httpd $bind:$hp >/dev/null 2>&1 & b=\$!; " \
		'trap '\''kill $a $b 2>/dev/null; wait; exit 0'\'' TERM INT HUP; ' \
		"echo \"\$hp\" >$W/run/$name.pid; wait"
}

# --- loopback reference: servers on the host's 127.0.0.1
PATHS=("loopback=127.0.0.1:$(port 1),127.0.0.1:$(port 81)")
spawn "$W/log/loopback.log" bash -c "$(servers loopback "$(port 1)" "$(port 81)" 127.0.0.1)" relay-holder

# --- cshell, as root and as the test user
# The shell inherits our environment, and TMPDIR (the rootless user's
# runtime dir for cshell lives under it) names a directory that is read-only
# inside the shell: iperf3 -s makes its buffer file in $TMPDIR and fails
# every test ("unable to create a new stream"). Hence -e TMPDIR=/tmp, the
# shell's private writable /tmp.
start_shell() { # USER STATE IPERF_PORT HTTP_PORT
	as_user "$1" "$W/$1/wd" "$W/cshell" --state-dir "$2" --config "$CFG" run -d -e TMPDIR=/tmp \
		--expose "$3" --expose "$4" --ready --ready-timeout 20s -- "iperf3 -s -p $3 & $W/httpd :$4 & wait"
}
for u in root "$TEST_USER"; do
	if [ "$u" = root ]; then n=2 l="cshell(root)"; else n=3 l="cshell(user)"; fi
	out=$(start_shell "$u" "$W/$u/state-bench" "$(port $n)" "$(port $((80 + n)))" 2>&1) ||
		die "$u: cshell run -d --expose $(port $n) --expose $(port $((80 + n))) --ready failed: $out"
	echo "# $l: $(head -1 <<<"$out")"
	PATHS+=("$l=127.0.0.1:$(port $n),127.0.0.1:$(port $((80 + n)))")
done

# --- peers (rootless, as the test user), as the anchors set them up
can_tun() { as_user "$TEST_USER" / test -r /dev/net/tun -a -w /dev/net/tun; }
if [ -n "$PEERS" ] && ! can_tun; then
	echo "# /dev/net/tun is $(stat -c '%a %U:%G' /dev/net/tun): $TEST_USER cannot open it (slirp4netns, pasta need it)"
	if [ "${ALLOW_TUN_CHMOD:-0}" = 1 ]; then
		TUN_ORIG=$(stat -c %a /dev/net/tun)
		chmod 0666 /dev/net/tun
		echo "# temporarily chmod 0666 /dev/net/tun (mode $TUN_ORIG restored on exit)"
	fi
fi
if [ -n "$PEERS" ] && ! can_tun; then
	echo "# SKIPPED peers ($PEERS): /dev/net/tun not usable by $TEST_USER (set ALLOW_TUN_CHMOD=1)"
	PEERS=
fi
n=3
for p in $PEERS; do
	n=$((n + 1))
	hi=$(port $n)
	hh=$(port $((80 + n)))
	inner=$(servers "$p" 5201 8080)
	case $p in
	rlk-builtin | rlk-slirp4netns)
		spawn "$W/log/$p.log" setpriv --reuid="$TU_UID" --regid="$TU_GID" --init-groups \
			env -i -C "$W/$TEST_USER/wd" HOME="$(getent passwd "$TEST_USER" | cut -d: -f6)" PATH="$SAFE_PATH" TMPDIR="$W/$TEST_USER/tmp" \
			rootlesskit --state-dir="$W/$TEST_USER/tmp/$p" --net=slirp4netns --mtu=65520 --disable-host-loopback \
			--port-driver="${p#rlk-}" -p "127.0.0.1:$hi:5201/tcp" -p "127.0.0.1:$hh:8080/tcp" \
			bash -c "$inner" relay-holder
		;;
	pasta)
		spawn "$W/log/$p.log" setpriv --reuid="$TU_UID" --regid="$TU_GID" --init-groups \
			env -i -C "$W/$TEST_USER/wd" HOME="$(getent passwd "$TEST_USER" | cut -d: -f6)" PATH="$SAFE_PATH" TMPDIR="$W/$TEST_USER/tmp" \
			pasta -q -f --config-net -T none -U none -u none -t "127.0.0.1/$hi:5201" -t "127.0.0.1/$hh:8080" \
			-- bash -c "$inner" relay-holder
		;;
	esac
	PATHS+=("$p(user)=127.0.0.1:$hi,127.0.0.1:$hh")
done

# --- every row answers HTTP
for p in "${PATHS[@]}"; do
	hp=${p#*,}
	ok=0
	for _ in $(seq 100); do
		if [ "$(curl -s -m 1 "http://$hp/" 2>/dev/null)" = ok ]; then
			ok=1
			break
		fi
		sleep 0.1
	done
	((ok)) || { tail -n 5 "$W"/log/*.log >&2; die "${p%%=*} does not answer on http://$hp/"; }
done
sleep 0.5 # iperf3 -s started beside the HTTP server

# --- 1. the table
echo
rc=0
"$PY" "$HERE/relay_bench.py" -r "$ROUNDS" -t "$IPERF_S" -d "$WRK_S" --tsv "$W/bench.tsv" \
	--title "host -> server, 127.0.0.1" "${PATHS[@]}" || rc=$?
[ -s "$W/bench.tsv" ] || die "the measurement wrote no results (exit $rc)"

# val LABEL METRIC COLUMN: one number of the TSV.
val() {
	awk -F'\t' -v l="$1" -v m="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == l && $2 == m { print $col[c] }' "$W/bench.tsv"
}
while IFS=$'\t' read -r l m _ _ _ _ ns nf; do
	[ "$l" != label ] || continue
	((nf == 0)) || fail "$l $m: $nf of $((ns + nf)) samples failed"
done <"$W/bench.tsv"

echo
peers_of() { # METRIC: the peers' ratios, for comparison
	local p s=""
	for p in $PEERS; do s+=", $p $(printf '%.2fx' "$(val "$p(user)" "$1" ratio)")"; done
	echo "${s#, }"
}
goal() { # TITLE METRIC GOAL
	local r rr verdict ctx
	r=$(val "cshell(user)" "$2" ratio)
	rr=$(val "cshell(root)" "$2" ratio)
	if [ "$r" = nan ] || [ -z "$r" ]; then
		verdict=INVALID
	elif awk "BEGIN { exit !($r >= $3) }"; then
		verdict=MET
	else
		verdict="NOT met"
	fi
	ctx="root $(printf '%.2fx' "$rr")"
	[ -z "$PEERS" ] || ctx+="; $(peers_of "$2")"
	printf 'goal rootless cshell %-22s >= %.2fx: %5.2fx  %-7s (%s)\n' "$1" "$3" "$r" "$verdict" "$ctx"
}
goal "throughput" tput "$GOAL_TPUT"
goal "new conns (c1)" new1 "$GOAL_NEW"
goal "new conns (c16)" new16 "$GOAL_NEW"
goal "keep-alive (c1)" keep "$GOAL_KEEP"

# the table's shells and servers are not needed any more
for u in root "$TEST_USER"; do
	as_user "$u" / "$W/cshell" --state-dir "$W/$u/state-bench" kill all --grace 0 >/dev/null ||
		fail "$u: kill all failed"
done
stop_groups

# --- 2. relay memory
echo
echo "## relay memory: VmRSS of the shell's supervisor (cshell __supervise), $CONNS idle connections to one exposed port"
printf '%-14s %10s %22s %10s %18s %8s %11s\n' user before "with $CONNS open" after "per conn" hwm "fds (b/o/a)"
for u in root "$TEST_USER"; do
	hp=$(port 89)
	s=$W/$u/state-mem
	out=$(as_user "$u" "$W/$u/wd" "$W/cshell" --state-dir "$s" --config "$CFG" run -d -e TMPDIR=/tmp \
		--expose "$hp" --ready --ready-timeout 20s -- "exec $W/httpd :$hp" 2>&1) ||
		{ fail "$u: cshell run -d --expose $hp --ready failed: $out"; continue; }
	meta=$(echo "$s"/shells/*/meta.json)
	read -r sup shpid < <("$PY" -c 'import json, sys; m = json.load(open(sys.argv[1])); print(m["supervisor_pid"], m["pid"])' "$meta")
	sleep 1
	if r=$("$PY" "$HERE/relay_conns.py" --supervisor "$sup" --shell-pid "$shpid" --port "$hp" -n "$CONNS"); then
		:
	else
		fail "$u: the $CONNS-connection probe failed: $r"
	fi
	if [ -n "$r" ]; then
		b=$(kv rss_before "$r")
		o=$(kv rss_open "$r")
		a=$(kv rss_after "$r")
		printf '%-14s %10s %22s %10s %18s %8s %11s\n' "$u" "$(mib "$b")" "$(mib "$o") (+$(mib $((o - b))))" "$(mib "$a")" \
			"$(awk -v d=$((o - b)) -v n="$CONNS" 'BEGIN { printf "%.1f KiB", d / n }')" "$(mib "$(kv hwm "$r")")" \
			"$(kv fds_before "$r")/$(kv fds_open "$r")/$(kv fds_after "$r")"
		ab=$(kv anon_before "$r")
		ao=$(kv anon_open "$r")
		echo "#   $u: its own memory (RssAnon; the rest is the binary's shared page cache) $(mib "$ab") / $(mib "$ao") / $(mib "$(kv anon_after "$r")"), $(awk -v d=$((ao - ab)) -v n="$CONNS" 'BEGIN { printf "%.1f KiB", d / n }') per connection"
		echo "#   $u: $(kv inside_open "$r") of $CONNS established inside the shell after $(kv open_ms "$r") ms, $(kv hung_up "$r") hung up by the relay; threads $(kv thr_before "$r")/$(kv thr_open "$r")/$(kv thr_after "$r"); $(kv inside_after "$r") left inside after closing"
	fi
	as_user "$u" / "$W/cshell" --state-dir "$s" kill all --grace 0 >/dev/null || fail "$u: kill all failed"
done

exit "$FAILED"
