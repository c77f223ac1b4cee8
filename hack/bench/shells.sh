#!/bin/bash
# Background shells: start latency of `cshell run -d`, cost of `output` and
# `logs` against the log's size, and the memory of the supervisors.
#
# usage (as root):  bash hack/bench/shells.sh [ROUNDS]     ROUNDS >= 20, default 30
#   TEST_USER=name  also measure as this unprivileged user (rootless; must exist,
#                   e.g. cshelltest); default: root only
#   CSHELL_BIN=path measure this cshell binary instead of building the checkout
#
# What it does, per user (root, then TEST_USER), each part in a state dir of
# its own under the work dir /var/tmp/cshell-shells.XXXXXX (binary, config,
# probes, and per user a working directory, state dirs and TMPDIR, which
# holds a non-root user's cshell runtime directory; root's is /run/cshell),
# all owned by that user, from that working directory and with a clean
# environment; the config (--config) raises shells.maxConcurrent to
# max(60, ROUNDS+13) and shells.maxLogBytes to 2 GiB:
#   1. start latency, interleaved round-robin (hack/bench/abtime.py):
#        run_d   cshell run -d -- sleep 600   (answers `started shell N`; the
#                shells stay up, hence the raised limit, and are killed after)
#        run_fg  cshell run -- true           (the foreground, for reference)
#      goal: median of run_d <= 100 ms. Then the time of `kill all --grace 0`.
#   2. output cost against log size: a shell writes exactly 1 MiB, another
#      exactly 1 GiB (yes(1) lines of 128 bytes through head -c), each waited
#      for with `cshell wait`; the log sizes are checked (one file, no
#      rotation), and so is what the reads return. Then, interleaved:
#        out_1M/out_1G    cshell output ID --from-byte SIZE-65536
#        logs_1M/logs_1G  cshell logs ID -n 200
#      4 x ROUNDS rounds (a read takes milliseconds); goal: 1 GiB over 1 MiB
#      within noise, i.e. the median of the per-round ratios (each 1 GiB
#      sample over the same round's 1 MiB sample) <= 1.25x; the ratio of
#      the medians is shown too. The logs are removed right after.
#   3. supervisor memory (VmRSS of `cshell __supervise`, hack/bench/shells_probe.py):
#      a. one idle shell (`sleep 600`), 1 s after its start; goal <= 12 MiB.
#         The container's init (the shell's pid) is shown too, and the
#         supervisor's RssAnon (its own memory) apart from its RssFile (the
#         cshell binary's page cache, which every cshell process shares;
#         the supervisor drops the binary's pages once its shell runs, see
#         shells/memtrim_linux.go). VmHWM shows the peak of the start.
#      b. the supervisor of the 1 GiB shell of part 2, sampled every 0.2 s:
#         that shell sleeps 1 s first, so samples before its first byte are
#         "idle" (the last of them, once the start has settled, is the
#         reference); goal: the largest sample while writing <= idle + 4 MiB.
#      c. 50 shells (`sleep 600`) started at once (50 concurrent run -d):
#         wall time until all answered, mean/max/sum of supervisor RSS,
#         mean RssAnon and mean Pss (shared pages divided among the 50);
#         then `kill all --grace 0` and a check (waiting up to 5 s) that no
#         supervisor of that state dir and none of the processes that ran
#         under them is left. Zombies count as gone (the supervisors are
#         orphans, reaped by PID 1 or a subreaper, not by cshell); how many
#         were still unreaped is shown.
#   4. removes everything it made, also on ^C: shells are killed (kill all,
#      then any supervisor left by its pid), the work dir is removed, and
#      /run/cshell too when this run created it and nothing runs there.
#
# Prints abtime's tables as it goes and a summary table per user at the end.
# Exit status: 0 when every measurement was valid (whatever the goals say),
# 1 on a setup error, a failed run or a failed check.
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOAL_RUN_MS=100  # run -d median
GOAL_RATIO=1.25  # output / logs: 1 GiB over 1 MiB
GOAL_RSS_MIB=12  # idle supervisor
GOAL_FLAT_MIB=4  # supervisor while writing, over idle
MANY=50          # shells at once
SMALL=1048576    # 1 MiB
BIG=1073741824   # 1 GiB
READ=65536       # bytes one output read returns at most
READ_ROUNDS_X=4  # part 2 runs this many times ROUNDS rounds
WARMUP=3         # abtime's default
TEST_USER=${TEST_USER:-}

[ $# -le 1 ] || die "usage: bash hack/bench/shells.sh [ROUNDS]  (ROUNDS >= 20, default 30)"
parse_rounds 20 30 "${1:-}"
((EUID == 0)) || die "run me as root (sudo bash $0 $ROUNDS)"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
for tool in setpriv env getent install stat "$PY"; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
[ -n "${CSHELL_BIN:-}" ] || command -v go >/dev/null || die "go not found (put Go on PATH, or set CSHELL_BIN)"
USERS=(root)
if [ -n "$TEST_USER" ]; then
	id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (useradd -m $TEST_USER, or unset TEST_USER)"
	[ "$(id -u "$TEST_USER")" != 0 ] || die "TEST_USER must not be root"
	USERS+=("$TEST_USER")
fi

W=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$? s user pid i
	trap - EXIT INT TERM
	set +e
	if [ -n "$W" ] && [ -d "$W" ]; then
		if [ -x "$W/cshell" ]; then
			for s in "$W"/*/state-*; do
				[ -d "$s/shells" ] || continue
				user=$(stat -c %U "$s")
				as_user "$user" / "$W/cshell" --state-dir "$s" kill all --grace 0 >/dev/null 2>&1
			done
		fi
		# A start cut short (^C) may leave a supervisor that kill all missed:
		# stop it by its pid (TERM: it stops its shell and cleans up; KILL
		# after 2 s: its shell dies with it).
		if [ -f "$W/shells_probe.py" ]; then
			for i in TERM - - - - - - - - - KILL - - - -; do
				pid=$("$PY" "$W/shells_probe.py" supervisors "$W" 2>/dev/null)
				[ -n "$pid" ] || break
				# shellcheck disable=SC2086 # one pid a line
				[ "$i" = - ] || kill -"$i" $pid 2>/dev/null
				sleep 0.2
			done
		fi
		rm -rf --one-file-system -- "$W"
	fi
	drop_run_cshell
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

W=$(work_dir /var/tmp/cshell-shells.XXXXXX) || exit 1
USER_TMP_ROOT=$W

build_cshell "$W"
install -m 644 "$HERE/abtime.py" "$HERE/shells_probe.py" "$W/"
chmod 755 "$W/cshell"
MAXC=$((ROUNDS + WARMUP + 10 > 60 ? ROUNDS + WARMUP + 10 : 60))
CFG=$W/config.json
printf '{"shells": {"maxConcurrent": %d, "maxLogBytes": %d}}\n' "$MAXC" $((2 * BIG)) >"$CFG"
chmod 644 "$CFG"

rev=$(cshell_rev)
gov=
[ -n "${CSHELL_BIN:-}" ] || gov=" ($(go version | awk '{print $3}'))"
echo "# cshell $rev$gov | kernel $(uname -r) | $(nproc) cpus | $ROUNDS rounds | users: ${USERS[*]} | work dir $W"

declare -a SUMMARY=()


# tsv FILE LABEL COLUMN: one number of abtime's --tsv output.
tsv() {
	awk -F'\t' -v l="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == l { print $col[c] }' "$1"
}

# row METRIC VALUE [GOAL [VERDICT]]: a line of the summary table.
row() {
	SUMMARY+=("$(printf '%-44s %-52s %-18s %s' "$1" "$2" "${3:--}" "${4:-}")")
}

# verdict EXPR: MET when the awk expression holds.
verdict() {
	if awk "BEGIN { exit !($1) }"; then echo MET; else echo "NOT met"; fi
}

now_us() { echo "${EPOCHREALTIME/./}"; }

# running USER STATE: how many shells `cshell ps --json` lists as running.
running() {
	as_user "$1" / "$W/cshell" --state-dir "$2" --json ps |
		"$PY" -c 'import json, sys; print(sum(s["status"] == "running" for s in json.load(sys.stdin)))'
}

# kill_all USER STATE: kill all --grace 0; KILL_MS is the time it took.
KILL_MS=
kill_all() {
	local t0 t1
	t0=$(now_us)
	as_user "$1" / "$W/cshell" --state-dir "$2" kill all --grace 0 >/dev/null || fail "$1: kill all in $2 failed"
	t1=$(now_us)
	KILL_MS=$(((t1 - t0 + 500) / 1000))
}

# left STATE [BEFORE]: what is left of STATE's shells (shells_probe.py left),
# waiting up to 5 s for it to go; LEFT_OUT is the probe's answer, LEFT "N, M"
# (supervisors, other processes).
LEFT=
LEFT_OUT=
left() {
	local -a before=()
	[ $# -lt 2 ] || before=(--before "$2")
	LEFT_OUT=$("$PY" "$W/shells_probe.py" left "$1" "${before[@]}" --wait 5)
	LEFT="$(kv supervisors "$LEFT_OUT"), $(kv procs "$LEFT_OUT")"
	[ "$LEFT" = "0, 0" ] || fail "left after kill all in $1 (supervisors, processes): $LEFT"
}

# start_json USER DIR STATE COMMAND: run -d --json; echoes the new shell's id.
start_json() {
	local out
	out=$(as_user "$1" "$2" "$W/cshell" --state-dir "$3" --config "$CFG" --json run -d -- "$4") ||
		die "$1: cshell run -d -- $4 failed"
	"$PY" -c 'import json, sys; print(json.load(sys.stdin)["id"])' <<<"$out"
}

# check_reads USER STATE ID SIZE: what output --from-byte and logs -n 200 return.
check_reads() {
	local user=$1 state=$2 id=$3 size=$4 got
	got=$(as_user "$user" / "$W/cshell" --state-dir "$state" --json output "$id" --from-byte $((size - READ)) |
		"$PY" -c 'import json, sys; r = json.load(sys.stdin)
print(r["from_byte"], r["to_byte"], len(r["output"]), r["skipped_bytes"], r["dropped_bytes"], r["status"], r["exit_code"])')
	[ "$got" = "$((size - READ)) $size $READ 0 0 exited 0" ] ||
		fail "$user: output $id --from-byte $((size - READ)) of a $size-byte log: from to len skipped dropped status code = $got"
	got=$(as_user "$user" / "$W/cshell" --state-dir "$state" logs "$id" -n 200 | wc -lc | awk '{print $1, $2}')
	[ "$got" = "200 25600" ] || fail "$user: logs $id -n 200 gave '$got' lines and bytes, not '200 25600'"
}

bench() {
	local user=$1 uid gid dir wd rc t0 t1 out n
	uid=$(id -u "$user")
	gid=$(id -g "$user")
	dir=$W/$user
	wd=$dir/wd
	install -d -o "$uid" -g "$gid" -m 755 "$dir" "$wd"
	install -d -o "$uid" -g "$gid" -m 700 "$dir/tmp" "$dir/state-start" "$dir/state-logs" "$dir/state-idle" "$dir/state-many"
	local -a cs=("$W/cshell" --config "$CFG")
	row "[$user (uid $uid)]" ""

	# 1. start latency
	local s1=$dir/state-start
	echo
	rc=0
	as_user "$user" "$wd" "$PY" "$W/abtime.py" -n "$ROUNDS" -w "$WARMUP" --vs run_fg --tsv "$dir/start.tsv" \
		--title "1. start latency as $user (uid $uid), cwd $wd" \
		"run_d=${cs[*]} --state-dir $s1 run -d -- sleep 600" \
		"run_fg=${cs[*]} --state-dir $s1 run -- true" || rc=$?
	[ -s "$dir/start.tsv" ] || die "$user: the timer wrote no results (exit $rc)"
	((rc == 0)) || fail "$user: some timed start failed"
	n=$(running "$user" "$s1")
	[ "$n" = $((ROUNDS + WARMUP)) ] || fail "$user: $n shells run after $((ROUNDS + WARMUP)) run -d, not $((ROUNDS + WARMUP))"
	kill_all "$user" "$s1"
	left "$s1"
	local med lo hi fg ok
	med=$(tsv "$dir/start.tsv" run_d median_ms)
	lo=$(tsv "$dir/start.tsv" run_d min_ms)
	hi=$(tsv "$dir/start.tsv" run_d max_ms)
	fg=$(tsv "$dir/start.tsv" run_fg median_ms)
	ok=$(verdict "$med <= $GOAL_RUN_MS")
	[ "$(tsv "$dir/start.tsv" run_d fails)" = 0 ] || ok="INVALID (runs failed)"
	row "1. run -d -- sleep 600: median (min..max)" "$(printf '%.1f ms (%.1f..%.1f)' "$med" "$lo" "$hi")" "<= $GOAL_RUN_MS ms" "$ok"
	row "   run -- true (reference): median" "$(printf '%.1f ms' "$fg")"
	row "   kill all --grace 0 of $n shells" "$KILL_MS ms"

	# 2. output and logs against log size; 3b. the writer's supervisor
	local s2=$dir/state-logs line id_s id_b watch f size
	line=$(printf 'x%.0s' $(seq 127)) # + newline: 128-byte lines, 2^13 and 2^23 of them
	id_s=$(start_json "$user" "$wd" "$s2" "yes $line | head -c $SMALL")
	as_user "$user" / "$W/cshell" --state-dir "$s2" wait "$id_s" --timeout 60s || fail "$user: the 1 MiB shell did not end with 0"
	echo
	echo "## 2./3b. writing a 1 GiB log as $user (the supervisor's RSS sampled every 0.2 s)"
	t0=$(now_us)
	id_b=$(start_json "$user" "$wd" "$s2" "sleep 1; yes $line | head -c $BIG")
	watch=$("$PY" "$W/shells_probe.py" watch "$s2" "$id_b") || die "$user: watching shell $id_b failed"
	as_user "$user" / "$W/cshell" --state-dir "$s2" wait "$id_b" --timeout 300s || fail "$user: the 1 GiB shell did not end with 0"
	t1=$(now_us)
	echo "#  $watch (in $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.1f", d / 1e6 }') s with the 1 s sleep)"
	for f in "$id_s:$SMALL" "$id_b:$BIG"; do
		size=$(stat -c %s "$s2/shells/${f%%:*}/output.log")
		[ "$size" = "${f#*:}" ] || fail "$user: shell ${f%%:*}'s output.log holds $size bytes, not ${f#*:}"
		[ ! -e "$s2/shells/${f%%:*}/output.log.1" ] || fail "$user: shell ${f%%:*}'s log was rotated"
		check_reads "$user" "$s2" "${f%%:*}" "${f#*:}"
	done
	echo "#  log sizes: shell $id_s $(stat -c %s "$s2/shells/$id_s/output.log") bytes, shell $id_b $(stat -c %s "$s2/shells/$id_b/output.log") bytes"
	echo
	rc=0
	as_user "$user" "$wd" "$PY" "$W/abtime.py" -n $((READ_ROUNDS_X * ROUNDS)) -w "$WARMUP" --vs out_1M --vs logs_1M --tsv "$dir/logs.tsv" \
		--title "2. output / logs of a 1 MiB and a 1 GiB log as $user" \
		"out_1M=${cs[*]} --state-dir $s2 output $id_s --from-byte $((SMALL - READ))" \
		"out_1G=${cs[*]} --state-dir $s2 output $id_b --from-byte $((BIG - READ))" \
		"logs_1M=${cs[*]} --state-dir $s2 logs $id_s -n 200" \
		"logs_1G=${cs[*]} --state-dir $s2 logs $id_b -n 200" || rc=$?
	[ -s "$dir/logs.tsv" ] || die "$user: the timer wrote no results (exit $rc)"
	((rc == 0)) || fail "$user: some timed read failed"
	rm -rf --one-file-system -- "$s2"
	local what small big ratio pr
	for what in out logs; do
		small=$(tsv "$dir/logs.tsv" "${what}_1M" median_ms)
		big=$(tsv "$dir/logs.tsv" "${what}_1G" median_ms)
		ratio=$(tsv "$dir/logs.tsv" "${what}_1G" "/${what}_1M")
		pr=$(tsv "$dir/logs.tsv" "${what}_1G" "~${what}_1M")
		ok=$(verdict "$pr <= $GOAL_RATIO")
		if [ "$(tsv "$dir/logs.tsv" "${what}_1G" fails)$(tsv "$dir/logs.tsv" "${what}_1M" fails)" != 00 ]; then
			ok="INVALID (runs failed)"
		fi
		if [ "$what" = out ]; then
			row "2. output --from-byte SIZE-64KiB: 1G/1M" "$(printf '%.2fx per round (medians %.2f/%.2f ms = %.2fx)' "$pr" "$big" "$small" "$ratio")" "~1.0x (<= ${GOAL_RATIO}x)" "$ok"
		else
			row "   logs -n 200: 1G/1M" "$(printf '%.2fx per round (medians %.2f/%.2f ms = %.2fx)' "$pr" "$big" "$small" "$ratio")" "~1.0x (<= ${GOAL_RATIO}x)" "$ok"
		fi
	done

	# 3a. one idle shell
	local s3=$dir/state-idle rss sup
	start_json "$user" "$wd" "$s3" "sleep 600" >/dev/null
	sleep 1
	rss=$("$PY" "$W/shells_probe.py" rss "$s3") || die "$user: no RSS for the idle shell"
	sup=$(kv sup_max_kb "$rss")
	row "3. supervisor RSS, 1 idle shell (sleep 600)" "$(mib "$sup")" "<= $GOAL_RSS_MIB MiB" "$(verdict "$sup <= $GOAL_RSS_MIB * 1024")"
	row "   of it: anon / file (binary, shared)" "$(mib "$(kv anon_max_kb "$rss")") / $(mib "$(kv file_mean_kb "$rss")")"
	row "   its container init (pid 1) RSS" "$(mib "$(kv init_max_kb "$rss")")"
	kill_all "$user" "$s3"
	left "$s3"

	# 3b. the 1 GiB writer, from part 2
	local idle wr
	idle=$(kv idle_kb "$watch")
	wr=$(kv write_kb "$watch")
	row "   supervisor RSS writing 1 GiB: max" "$(printf '%s (idle %s, %+d KiB; %d+%d samples)' "$(mib "$wr")" "$(mib "$idle")" $((wr - idle)) "$(kv idle_n "$watch")" "$(kv write_n "$watch")")" "<= idle + $GOAL_FLAT_MIB MiB" "$(verdict "$wr - $idle <= $GOAL_FLAT_MIB * 1024")"
	row "   its VmHWM at the end" "$(mib "$(kv hwm_kb "$watch")")"

	# 3c. many shells at once
	local s4=$dir/state-many start
	echo
	echo "## 3c. $MANY shells at once as $user"
	start=$(as_user "$user" "$wd" "$PY" "$W/shells_probe.py" start -n "$MANY" -- "${cs[@]}" --state-dir "$s4" run -d -- sleep 600) ||
		die "$user: starting $MANY shells failed"
	echo "#  start: $start"
	[ "$(kv fails "$start")" = 0 ] || fail "$user: $(kv fails "$start") of $MANY concurrent run -d failed"
	n=$(running "$user" "$s4")
	[ "$n" = "$MANY" ] || fail "$user: $n shells run after $MANY concurrent run -d, not $MANY"
	sleep 1
	rss=$("$PY" "$W/shells_probe.py" rss "$s4") || die "$user: no RSS for the $MANY shells"
	echo "#  rss: $rss"
	"$PY" "$W/shells_probe.py" tree "$s4" >"$dir/tree"
	echo "#  $(wc -l <"$dir/tree") processes (supervisors and their shells)"
	kill_all "$user" "$s4"
	left "$s4" "$dir/tree"
	out=$LEFT_OUT
	echo "#  after kill all ($KILL_MS ms): $out; running per ps: $(running "$user" "$s4")"
	row "   $MANY shells at once: time until all started" "$(printf '%.0f ms (each: median %.0f, max %.0f)' "$(kv wall_ms "$start")" "$(kv median_ms "$start")" "$(kv max_ms "$start")")"
	row "   $MANY shells: supervisor RSS mean / max" "$(mib "$(kv sup_mean_kb "$rss")") / $(mib "$(kv sup_max_kb "$rss")")" "<= $GOAL_RSS_MIB MiB" "$(verdict "$(kv sup_max_kb "$rss") <= $GOAL_RSS_MIB * 1024")"
	row "   $MANY shells: sum supervisors / sum inits" "$(mib "$(kv sup_sum_kb "$rss")") / $(mib "$(kv init_sum_kb "$rss")")"
	row "   $MANY shells: supervisor anon / Pss mean" "$(mib "$(kv anon_mean_kb "$rss")") / $(mib "$(kv pss_mean_kb "$rss")")"
	row "   $MANY shells: kill all --grace 0" "$KILL_MS ms"
	row "   left after kill all (supervisors, procs)" "$LEFT" "0, 0" "$(verdict "\"$LEFT\" == \"0, 0\"")"
	row "     first look / all gone after / zombies" "$(kv first_supervisors "$out"), $(kv first_procs "$out") / $(kv gone_ms "$out") ms / $(kv zombies "$out")"
}

for u in "${USERS[@]}"; do
	bench "$u"
done

echo
echo "# summary ($ROUNDS rounds, $((READ_ROUNDS_X * ROUNDS)) for the reads; MiB = 1024 KiB of VmRSS)"
printf '%-44s %-52s %-18s %s\n' metric value goal verdict
for r in "${SUMMARY[@]}"; do
	echo "$r"
done
((FAILED == 0)) || echo "# some measurement failed (see above): the numbers are not all valid"
exit "$FAILED"
