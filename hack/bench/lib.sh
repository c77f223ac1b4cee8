# shellcheck shell=bash
# Helpers the benchmark scripts share. Source it right after `set -euo
# pipefail`; set USER_TMP_ROOT (each user's TMPDIR is USER_TMP_ROOT/USER/tmp)
# before calling as_user.

# shellcheck disable=SC2034 # used by the scripts that source this
PY=/usr/bin/python3 # not a pyenv shim under /root: the test user runs it too
SAFE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)

# Whether root's cshell runtime dir was there before we ran (see drop_run_cshell).
RUN_CSHELL_EXISTED=1
[ -e /run/cshell ] || RUN_CSHELL_EXISTED=0

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# fail MESSAGE: a measurement is not valid; say so and go on (FAILED=1: the
# script exits 1 at the end).
FAILED=0
fail() {
	echo "$(basename "$0"): FAILED: $*" >&2
	FAILED=1
}

# kv KEY "k=v k=v ...": the value of KEY (nothing when it is missing).
kv() {
	tr ' ' '\n' <<<"$2" | awk -F= -v k="$1" '$1 == k { print $2 }'
}

# mib KIB: a size in KiB as MiB.
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# work_dir PATTERN: makes a new directory from a mktemp PATTERN, readable by
# every user (the test user runs from it), and prints its path, which holds
# only characters that need no quoting. Use it as W=$(work_dir ...) || exit 1.
work_dir() {
	local w
	w=$(mktemp -d "$1") || return 1
	chmod 755 "$w"
	if ! [[ "$w" =~ ^[A-Za-z0-9/._-]+$ ]]; then
		echo "$(basename "$0"): unexpected characters in $w" >&2
		return 1
	fi
	echo "$w"
}

# parse_rounds MIN DEFAULT [ARG]: set ROUNDS from ARG (a whole number >= MIN).
parse_rounds() {
	local min=$1 def=$2
	ROUNDS=${3:-$def}
	if ! [[ $ROUNDS =~ ^[0-9]+$ ]] || ((10#$ROUNDS < min)); then
		die "ROUNDS must be a whole number >= $min, not '$ROUNDS'"
	fi
	ROUNDS=$((10#$ROUNDS))
}

# build_cshell DIR: DIR/cshell from $CSHELL_BIN, else built (stripped) from the checkout.
build_cshell() {
	if [ -n "${CSHELL_BIN:-}" ]; then
		echo "# using CSHELL_BIN=$CSHELL_BIN (not building)" >&2
		install -m 755 "$CSHELL_BIN" "$1/cshell"
	else
		echo "# building cshell from $REPO into $1" >&2
		(cd "$REPO" && go build -trimpath -ldflags="-s -w" -o "$1/cshell" ./cmd/cshell) ||
			die "go build of cshell failed (CSHELL_BIN=path uses a prebuilt binary)"
	fi
}

# cshell_rev: what is measured, for a table's heading: "(CSHELL_BIN)", or the
# checkout's short commit ("+local-changes" when tracked files differ).
cshell_rev() {
	local rev=unknown
	if [ -n "${CSHELL_BIN:-}" ]; then
		echo "($CSHELL_BIN)"
		return
	fi
	if command -v git >/dev/null; then
		# read-only git: GIT_OPTIONAL_LOCKS=0 keeps status from refreshing the index
		rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
		if [ -n "$(GIT_OPTIONAL_LOCKS=0 git -C "$REPO" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
			rev="$rev+local-changes"
		fi
	fi
	echo "$rev"
}

# drop_run_cshell: root's cshell keeps its rootfs in /run/cshell; remove it
# if this run made it and no container is left there.
drop_run_cshell() {
	if ((RUN_CSHELL_EXISTED == 0)) && [ -d /run/cshell ] &&
		[ -z "$(ls -A /run/cshell/containers 2>/dev/null)" ]; then
		rm -rf --one-file-system -- /run/cshell
	fi
}

# as_user USER DIR CMD...: run CMD as USER in DIR with a clean environment.
as_user() {
	local user=$1 dir=$2 home
	shift 2
	home=$(getent passwd "$user" | cut -d: -f6)
	local -a run=(env -i -C "$dir" HOME="$home" USER="$user" LOGNAME="$user" SHELL=/bin/bash
		PATH="$SAFE_PATH" LANG=C.UTF-8 TMPDIR="$USER_TMP_ROOT/$user/tmp" "$@")
	if [ "$(id -u "$user")" = 0 ]; then
		"${run[@]}"
	else
		setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups "${run[@]}"
	fi
}

# NPM_CACHE is where the benchmarks keep the npm packages of their peers
# (srt, the MCP SDK client), made once and reused between runs.
NPM_CACHE=${NPM_CACHE:-/var/tmp/cshell-bench-npm}

# npm_peers: installs (once) Anthropic's sandbox-runtime (srt), which needs
# Debian's ripgrep and socat, and the npm MCP SDK client of the e2e tests
# into NPM_CACHE, readable by every user; SRT is its srt.
npm_peers() {
	local pkgs=(ripgrep socat) need=() p
	for p in "${pkgs[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
	done
	if ((${#need[@]})); then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
			die "apt-get install ${need[*]} failed (srt needs them)"
	fi
	command -v npm >/dev/null || die "npm not found (apt-get install -y npm)"
	if ! [ -x "$NPM_CACHE/node_modules/.bin/srt" ] || ! [ -d "$NPM_CACHE/node_modules/@modelcontextprotocol/sdk" ]; then
		install -d -m 755 "$NPM_CACHE"
		cp "$REPO/cmd/cshell/testdata/mcpclient/package.json" "$REPO/cmd/cshell/testdata/mcpclient/package-lock.json" "$NPM_CACHE/"
		(cd "$NPM_CACHE" && npm ci --no-audit --no-fund --loglevel=error >/dev/null &&
			npm install --no-audit --no-fund --loglevel=error --no-save @anthropic-ai/sandbox-runtime@0.0.83 >/dev/null) ||
			die "npm could not install the peers into $NPM_CACHE"
		chmod -R a+rX "$NPM_CACHE"
	fi
	SRT=$NPM_CACHE/node_modules/.bin/srt
}
