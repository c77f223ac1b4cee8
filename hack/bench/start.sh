#!/bin/bash
# Start latency of `cshell run -- true` next to runc, bubblewrap, Anthropic's
# sandbox-runtime (srt) and a bare /bin/true, and of `cshell run -d -- true`,
# for root and for an unprivileged user.
#
# usage (as root):  bash hack/bench/start.sh [ROUNDS]      ROUNDS >= 20, default 30
#   TEST_USER=name  the unprivileged user (default cshelltest, must exist)
#   CSHELL_BIN=path time this cshell binary instead of building the checkout
#
# What it does:
#   1. builds cshell from this checkout into /var/tmp/cshell-bench.XXXXXX (the
#      "work dir": binary, helpers and one working directory per user)
#   2. per user, as that user (so the uid map is theirs), an OCI bundle for
#      runc that mirrors cshell's sandbox (hack/bench/mkbundle.py): rootless
#      runc spec + network and cgroup namespaces, read-only root, tmpfs /tmp
#      and /run, every top-level host directory bound read-only, /bin /lib
#      /lib64 /sbin recreated as the host's symlinks into usr, the working
#      directory bound read-write. Bundles, runc state and the test user's
#      cshell runtime directory go to /tmp/cshell-bench.XXXXXX, which (like
#      /run/cshell or /run/user/UID) is not visible inside either sandbox.
#   3. per user, from the user's working directory and with a clean
#      environment, times these interleaved round-robin (hack/bench/abtime.py):
#        cshell  cshell run -- true
#        runc    runc --root STATE run -b BUNDLE ID          (the bundle runs /bin/true)
#        runc-libct  the same with runc built from the libcontainer version cshell
#                uses (go.mod; go install, kept in /var/tmp/cshell-bench-runc-VERSION)
#        bwrap   bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
#                      --unshare-all --die-with-parent /bin/true
#        srt     srt true        (npm @anthropic-ai/sandbox-runtime 0.0.83, kept
#                                 in NPM_CACHE, /var/tmp/cshell-bench-npm)
#        run-d   cshell run -d -- true                       (a background start's answer)
#        true    /bin/true                                   (the floor: fork+exec+wait)
#      cshell's number includes what it always does: its own PID 1 (the cshell
#      binary again, bind-mounted at /.cshell/cshell) running `bash -c true`.
#      and prints one table per user: median, min, max (ms), median over the
#      median of runc and of bwrap, the median per-round ratio to each, fails.
#   4. prints, per user, whether cshell's median is <= GOAL (1.0) x runc's
#      and run -d's <= DGOAL (0.5) x cshell run's (issue 26's goals).
#   5. removes everything it made (trap on exit, also on ^C); NPM_CACHE stays.
#
# Compare ratios from one run; absolute milliseconds drift with the machine.
# Exit status: 0 when every timed run succeeded and the goals are met, 1 on a
# setup error or when some timed run failed, 2 when a goal is missed.
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOAL=1.0
DGOAL=0.5
TEST_USER=${TEST_USER:-cshelltest}

[ $# -le 1 ] || die "usage: bash hack/bench/start.sh [ROUNDS]  (ROUNDS >= 20, default 30)"
parse_rounds 20 30 "${1:-}"
((EUID == 0)) || die "run me as root: I time root and switch to $TEST_USER (sudo bash $0 $ROUNDS)"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
for tool in go runc bwrap setpriv env getent install "$PY"; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y runc bubblewrap; Go on PATH)"
done
RUNC=$(command -v runc)
BWRAP=$(command -v bwrap)
# A second runc: built from the libcontainer cshell itself uses (go.mod),
# so that the two differ in what they do, not in the library's age (the
# distribution's runc may predate libcontainer's procfs hardening). Kept
# in /var/tmp between runs; the module proxy serves it.
LIBCT=$(awk '$1 == "github.com/opencontainers/runc" { print $2 }' "$HERE/../../go.mod")
RUNC_LIBCT=/var/tmp/cshell-bench-runc-$LIBCT/runc
if [ ! -x "$RUNC_LIBCT" ]; then
	GOBIN=${RUNC_LIBCT%/runc} go install "github.com/opencontainers/runc@$LIBCT" ||
		die "go install github.com/opencontainers/runc@$LIBCT failed (the module proxy is needed once)"
fi
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (useradd -m $TEST_USER, or set TEST_USER)"
[ "$(id -u "$TEST_USER")" != 0 ] || die "TEST_USER must not be root"

W=
R=

# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$? user d id
	trap - EXIT INT TERM
	set +e
	# runc run removes its container when it ends; after an interrupt one may be left.
	for d in "${R:-/nonexistent}"/*/runc; do
		[ -d "$d" ] || continue
		user=$(stat -c %U "$d")
		for id in $(as_user "$user" / "$RUNC" --root "$d" list -q 2>/dev/null); do
			as_user "$user" / "$RUNC" --root "$d" delete -f "$id" >/dev/null 2>&1
		done
	done
	[ -n "$W" ] && rm -rf --one-file-system -- "$W"
	[ -n "$R" ] && rm -rf --one-file-system -- "$R"
	drop_run_cshell
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

W=$(work_dir /var/tmp/cshell-bench.XXXXXX) || exit 1
R=$(work_dir /tmp/cshell-bench.XXXXXX) || exit 1
USER_TMP_ROOT=$R

build_cshell "$W"
npm_peers
install -m 644 "$HERE/abtime.py" "$HERE/mkbundle.py" "$W/"
chmod 755 "$W/cshell"

rev=$(cshell_rev)
echo "# cshell $rev ($(go version | awk '{print $3}')) | runc $("$RUNC" --version | awk 'NR==1{print $3}')" \
	"| $("$BWRAP" --version) | kernel $(uname -r) | $(nproc) cpus | $ROUNDS rounds"

declare -a VERDICTS=()

# bench USER: bundle, smoke test and timed group for one user.
bench() {
	local user=$1 uid gid dir rt id
	uid=$(id -u "$user")
	gid=$(id -g "$user")
	dir=$W/$user # working directory: cshell binds it read-write, so does the bundle
	rt=$R/$user
	install -d -o "$uid" -g "$gid" -m 755 "$dir"
	install -d -o "$uid" -g "$gid" -m 700 "$rt" "$rt/tmp"
	as_user "$user" "$dir" "$PY" "$W/mkbundle.py" "$rt/bundle" --rw "$dir" -- /bin/true >/dev/null ||
		die "$user: making the runc bundle failed"
	id=csb-$uid-$$

	local -a labels=(cshell runc runc-libct bwrap srt run-d true)
	local -A cmd=(
		[cshell]="$W/cshell run -- true"
		[runc]="$RUNC --root $rt/runc run -b $rt/bundle $id"
		[runc-libct]="$RUNC_LIBCT --root $rt/runc-libct run -b $rt/bundle $id-l"
		[bwrap]="$BWRAP --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent /bin/true"
		[srt]="$SRT true"
		[run-d]="$W/cshell --state-dir $rt/state run -d -- true"
		[true]="/bin/true"
	)
	local label out
	local -a argv specs=()
	for label in "${labels[@]}"; do
		read -ra argv <<<"${cmd[$label]}"
		if ! out=$(as_user "$user" "$dir" "${argv[@]}" </dev/null 2>&1); then
			printf '%s\n' "$out" >&2
			die "$user: $label does not work: ${cmd[$label]}"
		fi
		specs+=("$label=${cmd[$label]}")
	done

	echo
	local rc=0
	as_user "$user" "$dir" "$PY" "$W/abtime.py" -n "$ROUNDS" --vs runc --vs runc-libct --vs bwrap --vs srt --vs cshell --tsv "$rt/result.tsv" \
		--title "start+exit latency as $user (uid $uid), cwd $dir" "${specs[@]}" || rc=$?
	((rc == 0)) || FAILED=1
	[ -s "$rt/result.tsv" ] || die "$user: the timer wrote no results (exit $rc)"

	VERDICTS+=("$(awk -F'\t' -v user="$user" -v libct="$LIBCT" -v goal="$GOAL" -v dgoal="$DGOAL" '
		$1 == "cshell" { c = $2; cf = $NF }
		$1 == "runc"   { r = $2; rf = $NF }
		$1 == "runc-libct" { l = $2 }
		$1 == "run-d"  { d = $2; df = $NF }
		END {
			x = c / r; y = d / c
			printf "%s: cshell %.2f ms / runc %.2f ms = %.2fx -> %s (runc %s: %.2f ms, %.2fx); run -d %.2f ms / cshell run %.2f ms = %.2fx -> %s%s",
				user, c, r, x, (x <= goal ? "MET" : "NOT met"), libct, l, c / l, d, c, y, (y <= dgoal ? "MET" : "NOT met"),
				(cf + rf + df > 0 ? sprintf(" [%d cshell / %d runc / %d run-d runs failed: not valid]", cf, rf, df) : "")
		}' "$rt/result.tsv")")
}

bench root
bench "$TEST_USER"

echo
echo "# goals: cshell run <= ${GOAL}x runc; run -d <= ${DGOAL}x cshell run (medians)"
MISSED=0
for v in "${VERDICTS[@]}"; do
	echo "#   $v"
	[[ $v != *"NOT met"* ]] || MISSED=1
done
((FAILED == 0)) || exit 1
((MISSED == 0)) || exit 2
exit 0
