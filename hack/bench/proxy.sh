#!/bin/bash
# Throughput of one large download through a shell's allowlist proxy
# (HTTP CONNECT), against the same download straight over loopback, in the
# same run, as root and as an unprivileged user. Goal: >= 0.8x.
#
# usage (as root):  bash hack/bench/proxy.sh [ROUNDS]   (default 5; 1 GiB each)
#   TEST_USER=name  the unprivileged user (default cshelltest)
set -euo pipefail
ROUNDS=${1:-5}
SIZE=$((1 << 30))
TEST_USER=${TEST_USER:-cshelltest}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "proxy.sh: run as root (it switches to $TEST_USER)" >&2; exit 2; }
id "$TEST_USER" >/dev/null 2>&1 || { echo "proxy.sh: no user $TEST_USER (hack/test.sh --setup-host makes it)" >&2; exit 2; }
command -v curl >/dev/null || { echo "proxy.sh: needs curl" >&2; exit 2; }

W=$(mktemp -d /var/tmp/cshell-proxy.XXXXXX)
chmod 755 "$W"
BLOB_PID=
cleanup() {
	if [ -n "$BLOB_PID" ]; then kill "$BLOB_PID" 2>/dev/null || true; fi
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

(cd "$REPO" && go build -trimpath -ldflags="-s -w" -o "$W/cshell" ./cmd/cshell && go build -o "$W/blob" ./hack/bench/cmd/blob)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$W/blob" -addr "127.0.0.1:$PORT" & BLOB_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/1" && break; sleep 0.1; done

# run_as USER CMD: the command as that user, in a directory it owns.
# shellcheck disable=SC2016 # the inner sh expands "$0" and "$@"
run_as() {
	local user=$1; shift
	if [ "$user" = root ]; then (cd "$W" && "$@"); else
		setpriv --reuid "$user" --regid "$user" --init-groups env -i PATH=/usr/bin:/bin HOME="$W/home-$user" \
			XDG_RUNTIME_DIR= TMPDIR=/var/tmp sh -c 'cd "$0" && exec "$@"' "$W/home-$user" "$@"
	fi
}
mkdir -p "$W/home-$TEST_USER" && chown "$TEST_USER:" "$W/home-$TEST_USER"

GET="curl -sS --noproxy \"\" -o /dev/null -w %{speed_download} http://127.0.0.1:$PORT/$SIZE"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "# 1 GiB download, Gbit/s, median of $ROUNDS interleaved rounds; same curl, same server (127.0.0.1:$PORT)"
printf '%-12s %10s %10s %8s\n' user direct proxied ratio
for user in root "$TEST_USER"; do
	direct=() proxied=()
	for _ in $(seq "$ROUNDS"); do
		direct+=("$(run_as "$user" sh -c "$GET")")
		proxied+=("$(run_as "$user" "$W/cshell" --state-dir "$W/state-$user" run --allow-host "127.0.0.1:$PORT" -- \
			"$GET -p -x http://127.0.0.1:3128")")
	done
	d=$(printf '%s\n' "${direct[@]}" | median)
	p=$(printf '%s\n' "${proxied[@]}" | median)
	printf '%-12s %10.2f %10.2f %7.2fx\n' "$user" "$(echo "$d*8/1000000000" | bc -l)" "$(echo "$p*8/1000000000" | bc -l)" "$(echo "$p/$d" | bc -l)"
done
echo "# goal: proxied >= 0.8x direct"
