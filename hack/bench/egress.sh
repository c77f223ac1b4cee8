#!/bin/bash
# A shell's way out, measured in one run, as root and as an unprivileged
# user: a 1 GiB download from a host in a network namespace this script
# makes (198.18.0.2, over a veth pair) four ways, and the cost a connect
# pays for being handed to cshell.
#
#   direct       curl on this machine, no sandbox
#   tinyproxy    curl on this machine through tinyproxy (Debian's), the peer
#   proxy        cshell run -- curl through the shell's proxy (HTTP CONNECT)
#   transparent  cshell run -- curl --noproxy '*' (the egress: the connection
#                sent to it by the namespace's rules, spliced by cshell)
#
# and connections per second (python, 500 connects, each closed at once: few enough that TIME_WAIT never runs out of ports;
# to the remote host each asks for one byte of HTTP and reads it first, so that the destination was reached):
#   loop-off     to a server on the shell's own loopback, in a shell whose
#                filter hands nothing over (no proxy: network.allowGrants
#                false, nothing allowed)
#   loop-on      the same with the egress on (the namespace's rules leave
#                loopback alone)
#   remote       to the remote host, each connection sent to the egress by
#                the namespace's rules and dialed by it
#   remote-host  the same from this machine, no sandbox
#
# usage (as root):  bash hack/bench/egress.sh [ROUNDS]   (default 5)
#   TEST_USER=name  the unprivileged user (default cshelltest)
#   CSHELL_BIN=path time this cshell binary instead of building the checkout
# Goals (same-run ratios): transparent and proxy at or above tinyproxy;
# loop-on at least 0.8x loop-off, remote at least 0.3x remote-host (exits
# 1 when a connect goal is missed).
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZE=$((1 << 30))
CONNS=500
TEST_USER=${TEST_USER:-cshelltest}
[ $# -le 1 ] || die "usage: bash hack/bench/egress.sh [ROUNDS]  (default 5)"
parse_rounds 5 5 "${1:-}"
((EUID == 0)) || die "run me as root: I make a network namespace and switch to $TEST_USER"
id "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (hack/test.sh --setup-host makes it)"
for tool in curl bc go setpriv ip; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y curl bc iproute2)"
done
if ! command -v tinyproxy >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy >/dev/null ||
		die "tinyproxy not found and not installed (apt-get install -y tinyproxy)"
	systemctl disable --now tinyproxy >/dev/null 2>&1 || true # the package starts one; ours runs below
fi

W=$(work_dir /var/tmp/cshell-egress.XXXXXX) || exit 1
USER_TMP_ROOT=$W
NS=cshell-egress-$$
VETH=csegr$$
PIDS=()
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	ip netns del "$NS" 2>/dev/null || true
	rm -rf --one-file-system -- "$W"
	drop_run_cshell
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build_cshell "$W"
(cd "$REPO" && go build -o "$W/blob" ./hack/bench/cmd/blob) || die "go build of hack/bench/cmd/blob failed"
ip netns add "$NS"
ip link add "$VETH" type veth peer name eth0 netns "$NS"
ip addr add 198.18.0.1/24 dev "$VETH"
ip link set "$VETH" up
ip -n "$NS" addr add 198.18.0.2/24 dev eth0
ip -n "$NS" link set eth0 up
ip -n "$NS" link set lo up
PORT=8099
ip netns exec "$NS" "$W/blob" -addr "198.18.0.2:$PORT" & PIDS+=($!)
cat >"$W/tinyproxy.conf" <<EOF
Port 8888
Listen 127.0.0.1
Timeout 600
MaxClients 100
LogLevel Critical
EOF
tinyproxy -d -c "$W/tinyproxy.conf" & PIDS+=($!)
for _ in $(seq 50); do
	curl -s --noproxy '*' -o /dev/null "http://198.18.0.2:$PORT/1" && curl -s -x http://127.0.0.1:8888 -o /dev/null "http://198.18.0.2:$PORT/1" && break
	sleep 0.1
done
for user in root "$TEST_USER"; do
	mkdir -p "$W/$user/tmp" "$W/$user/wd" && chown -R "$user:" "$W/$user"
done
echo '{"network": {"allowGrants": false}}' >"$W/nogrants.json"
chmod 644 "$W/nogrants.json"
cat >"$W/conns.py" <<'EOF'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if host == "serve":  # a server on the shell's own loopback, then the loop
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4096)
    host, port = "127.0.0.1", srv.getsockname()[1]
    ask = None
else:  # a remote server: each connection asks for one byte and gets it
    ask = b"GET /1 HTTP/1.0\r\n\r\n"
start = time.perf_counter()
for _ in range(n):
    s = socket.create_connection((host, port))
    if ask:
        s.sendall(ask)
        if not s.recv(1):
            sys.exit("a connection got no answer")
    s.close()
print(n / (time.perf_counter() - start))
EOF
chmod 644 "$W/conns.py"

URL="http://198.18.0.2:$PORT/$SIZE"
CURL="curl -sS -o /dev/null -w %{speed_download}"
CS() { # USER ARGS...: cshell as USER, in its own state dir
	local user=$1
	shift
	as_user "$user" "$W/$user/wd" "$W/cshell" --state-dir "$W/$user/state" "$@"
}
gbit() { echo "$1*8/1000000000" | bc -l; }

echo "# cshell $(cshell_rev); 1 GiB from 198.18.0.2 (a veth to a namespace of this run), Gbit/s; connects per second; median of $ROUNDS interleaved rounds"
printf '%-12s %9s %9s %9s %9s %8s %8s | %9s %9s %9s %9s %8s %8s\n' user direct tinyproxy proxy transp. prox/tp tr/tp loop-off loop-on remote remote-host on/off rm/host
for user in root "$TEST_USER"; do
	d=() tp=() px=() tr=() lo=() ln=() rm=() rh=()
	for _ in $(seq "$ROUNDS"); do
		d+=("$(as_user "$user" "$W/$user" sh -c "$CURL --noproxy '*' $URL")")
		tp+=("$(as_user "$user" "$W/$user" sh -c "$CURL -x http://127.0.0.1:8888 $URL")")
		px+=("$(CS "$user" run --allow-host "198.18.0.2:$PORT" -- "$CURL -p --noproxy '' -x \$HTTP_PROXY $URL")")
		tr+=("$(CS "$user" run --allow-host "198.18.0.2:$PORT" -- "$CURL --noproxy '*' $URL")")
		lo+=("$(CS "$user" --config "$W/nogrants.json" run -- "$PY $W/conns.py serve 0 $CONNS")")
		ln+=("$(CS "$user" run -- "$PY $W/conns.py serve 0 $CONNS")")
		rm+=("$(CS "$user" run --allow-host "198.18.0.2:$PORT" -- "$PY $W/conns.py 198.18.0.2 $PORT $CONNS")")
		rh+=("$(as_user "$user" "$W/$user" "$PY" "$W/conns.py" 198.18.0.2 "$PORT" "$CONNS")")
	done
	md=$(printf '%s\n' "${d[@]}" | median)
	mt=$(printf '%s\n' "${tp[@]}" | median)
	mp=$(printf '%s\n' "${px[@]}" | median)
	mr=$(printf '%s\n' "${tr[@]}" | median)
	mlo=$(printf '%s\n' "${lo[@]}" | median)
	mln=$(printf '%s\n' "${ln[@]}" | median)
	mrm=$(printf '%s\n' "${rm[@]}" | median)
	mrh=$(printf '%s\n' "${rh[@]}" | median)
	lr=$(echo "$mln/$mlo" | bc -l)
	rr=$(echo "$mrm/$mrh" | bc -l)
	printf '%-12s %9.2f %9.2f %9.2f %9.2f %7.2fx %7.2fx | %9.0f %9.0f %9.0f %9.0f %7.2fx %7.2fx\n' "$user" \
		"$(gbit "$md")" "$(gbit "$mt")" "$(gbit "$mp")" "$(gbit "$mr")" \
		"$(echo "$mp/$mt" | bc -l)" "$(echo "$mr/$mt" | bc -l)" \
		"$mlo" "$mln" "$mrm" "$mrh" "$lr" "$rr"
	if (($(echo "$lr < 0.8" | bc -l) || $(echo "$rr < 0.3" | bc -l))); then
		echo "# $user: the connect goals are missed (loop-on/loop-off >= 0.8x, remote/remote-host >= 0.3x)"
		FAILED=1
	fi
done
exit "${FAILED:-0}"
