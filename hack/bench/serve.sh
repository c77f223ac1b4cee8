#!/bin/bash
# What an agent host feels of `cshell serve`: an MCP `bash` call of `true`
# (request to answer, measured by the npm TypeScript SDK's client) next to
# a cold bubblewrap `true` and Anthropic's sandbox-runtime (srt) `true`,
# interleaved in one run, for root and for an unprivileged user.
#
# usage (as root):  bash hack/bench/serve.sh [ROUNDS]      ROUNDS >= 5, default 20
#   TEST_USER=name  the unprivileged user (default cshelltest, must exist)
#   CSHELL_BIN=path time this cshell binary instead of building the checkout
#   NPM_CACHE=dir   where srt and the SDK client are kept (default
#                   /var/tmp/cshell-bench-npm; installed from the npm
#                   registry on the first run)
#
# Prints per user: median, min, max (ms), runs failed, and the ratios of
# the medians. Two servers: "warm" keeps a sandbox made ahead (the
# default; its calls come 300 ms apart, untimed, as an agent's do) and
# "cold" has sandbox.warm false. Goal (issue 26): a warm MCP bash true <=
# GOAL (2.0) x bwrap's cold true. Exit status: 0 when every run succeeded and the goal is met, 1 on
# an error or a failed run, 2 when the goal is missed.
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOAL=2.0
TEST_USER=${TEST_USER:-cshelltest}
[ $# -le 1 ] || die "usage: bash hack/bench/serve.sh [ROUNDS]  (ROUNDS >= 5, default 20)"
parse_rounds 5 20 "${1:-}"
((EUID == 0)) || die "run me as root: I time root and switch to $TEST_USER (sudo bash $0 $ROUNDS)"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
for tool in go bwrap node setpriv "$PY"; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y bubblewrap nodejs; Go on PATH)"
done
id -u "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (useradd -m $TEST_USER, or set TEST_USER)"
BWRAP=$(command -v bwrap)

W=
R=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$W" ] && rm -rf --one-file-system -- "$W"
	[ -n "$R" ] && rm -rf --one-file-system -- "$R"
	drop_run_cshell
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

W=$(work_dir /var/tmp/cshell-serve-bench.XXXXXX) || exit 1
R=$(work_dir /tmp/cshell-serve-bench.XXXXXX) || exit 1
USER_TMP_ROOT=$R
build_cshell "$W"
npm_peers
install -m 644 "$HERE/serve_calls.mjs" "$W/"
SDK=$NPM_CACHE/node_modules/@modelcontextprotocol/sdk
echo "# cshell $(cshell_rev) | node $(node --version) | $("$BWRAP" --version) | srt 0.0.83 | kernel $(uname -r) | $(nproc) cpus | $ROUNDS rounds"

MISSED=0
bench() {
	local user=$1 uid gid dir rt out
	uid=$(id -u "$user")
	gid=$(id -g "$user")
	dir=$W/$user
	rt=$R/$user
	install -d -o "$uid" -g "$gid" -m 755 "$dir"
	install -d -o "$uid" -g "$gid" -m 700 "$rt" "$rt/tmp" "$rt/state" "$rt/state/warm" "$rt/state/cold"
	echo '{ "sandbox": { "warm": false } }' >"$rt/cold.json"
	chown "$uid:$gid" "$rt/cold.json"
	out=$(as_user "$user" "$dir" node "$W/serve_calls.mjs" "$ROUNDS" "$SDK" "$W/cshell" "$rt/state" "$BWRAP" "$SRT" "$rt/cold.json") ||
		die "$user: the client failed: $out"
	echo
	echo "# MCP bash true through cshell serve as $user (uid $uid), against cold peers"
	printf '%-6s %9s %9s %9s %7s\n' peer median min max failed
	awk -F'\t' '{ printf "%-6s %9.2f %9.2f %9.2f %7d\n", $1, $2, $3, $4, $5 }' <<<"$out"
	awk -F'\t' '$5 > 0 { bad = 1 } END { exit bad }' <<<"$out" || FAILED=1
	local v
	v=$(awk -F'\t' -v goal="$GOAL" -v user="$user" '
		{ m[$1] = $2 }
		END {
			x = m["warm"] / m["bwrap"]
			printf "%s: warm/bwrap %.2fx, cold/bwrap %.2fx, warm/srt %.2fx, warm/cold %.2fx -> %s", user, x, m["cold"] / m["bwrap"], m["warm"] / m["srt"], m["warm"] / m["cold"], (x <= goal ? "MET" : "NOT met")
		}' <<<"$out")
	echo "# $v"
	[[ $v != *"NOT met"* ]] || MISSED=1
}

bench root
bench "$TEST_USER"
echo
echo "# goal: an MCP bash call of true with the warm sandbox <= ${GOAL}x bubblewrap's cold true (medians, same run)"
((FAILED == 0)) || exit 1
((MISSED == 0)) || exit 2
exit 0
