#!/bin/bash
# Throughput of one large download through a shell's allowlist proxy
# (HTTP CONNECT), against the same download straight over loopback, in the
# same run, as root and as an unprivileged user. Goal: >= 0.8x.
# Then one large HTTPS download from a host a credential is declared for
# (--credential: the shell's broker ends TLS, adds the value and speaks TLS
# again upstream) against the same download through the plain proxy's
# tunnel. Goal: >= 0.8x. Exits 1 when a goal is missed.
#
# usage (as root):  bash hack/bench/proxy.sh [ROUNDS]   (default 5; 1 GiB each)
#   TEST_USER=name  the unprivileged user (default cshelltest)
#   CSHELL_BIN=path time this cshell binary instead of building the checkout
set -euo pipefail
# shellcheck source=hack/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZE=$((1 << 30))
TEST_USER=${TEST_USER:-cshelltest}
[ $# -le 1 ] || die "usage: bash hack/bench/proxy.sh [ROUNDS]  (default 5)"
parse_rounds 1 5 "${1:-}"
((EUID == 0)) || die "run me as root: I switch to $TEST_USER"
id "$TEST_USER" >/dev/null 2>&1 || die "no user $TEST_USER (hack/test.sh --setup-host makes it)"
for tool in curl bc go setpriv; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y curl bc)"
done

W=$(work_dir /var/tmp/cshell-proxy.XXXXXX) || exit 1
USER_TMP_ROOT=$W
BLOB_PID= TLS_PID=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ -n "$BLOB_PID" ]; then kill "$BLOB_PID" 2>/dev/null || true; fi
	if [ -n "$TLS_PID" ]; then kill "$TLS_PID" 2>/dev/null || true; fi
	rm -rf --one-file-system -- "$W"
	drop_run_cshell
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build_cshell "$W"
(cd "$REPO" && go build -o "$W/blob" ./hack/bench/cmd/blob) || die "go build of hack/bench/cmd/blob failed"
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$W/blob" -addr "127.0.0.1:$PORT" & BLOB_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/1" && break; sleep 0.1; done
for user in root "$TEST_USER"; do
	mkdir -p "$W/$user/tmp" && chown -R "$user:" "$W/$user"
done

GET="curl -sS --noproxy \"\" -o /dev/null -w %{speed_download} http://127.0.0.1:$PORT/$SIZE"

echo "# 1 GiB download, Gbit/s, median of $ROUNDS interleaved rounds; same curl, same server (127.0.0.1:$PORT)"
printf '%-12s %10s %10s %8s\n' user direct proxied ratio
for user in root "$TEST_USER"; do
	direct=() proxied=()
	for _ in $(seq "$ROUNDS"); do
		direct+=("$(as_user "$user" "$W/$user" sh -c "$GET")")
		proxied+=("$(as_user "$user" "$W/$user" "$W/cshell" --state-dir "$W/$user/state" run \
			--allow-host "127.0.0.1:$PORT" -- "$GET -p -x http://127.0.0.1:3128")")
	done
	d=$(printf '%s\n' "${direct[@]}" | median)
	p=$(printf '%s\n' "${proxied[@]}" | median)
	printf '%-12s %10.2f %10.2f %7.2fx\n' "$user" "$(echo "$d*8/1000000000" | bc -l)" \
		"$(echo "$p*8/1000000000" | bc -l)" "$(echo "$p/$d" | bc -l)"
done
echo "# goal: proxied >= 0.8x direct"

# HTTPS: a credentialed host (the broker) against the plain tunnel.
TPORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$W/blob" -addr "127.0.0.1:$TPORT" -tls blob.test -ca "$W/blob-ca.pem" & TLS_PID=$!
for _ in $(seq 50); do curl -s -o /dev/null --cacert "$W/blob-ca.pem" --resolve "blob.test:$TPORT:127.0.0.1" "https://blob.test:$TPORT/1" && break; sleep 0.1; done
# shellcheck disable=SC2016 # $TOKEN is the shell's
TGET='curl -sS -o /dev/null -w %{speed_download} -H "Authorization: Bearer $TOKEN" https://blob.test:'$TPORT/$SIZE
NET=(--add-host blob.test:127.0.0.1)
missed=0
echo
echo "# 1 GiB HTTPS download, Gbit/s, median of $ROUNDS interleaved rounds; the plain proxy's tunnel against the credential broker"
printf '%-12s %10s %10s %8s\n' user tunnel broker ratio
for user in root "$TEST_USER"; do
	tunnel=() brokered=()
	for _ in $(seq "$ROUNDS"); do
		tunnel+=("$(as_user "$user" "$W/$user" env TOKEN=plain "$W/cshell" --state-dir "$W/$user/state" run \
			"${NET[@]}" --allow-host "blob.test:$TPORT" -e TOKEN -e "CURL_CA_BUNDLE=$W/blob-ca.pem" -- "$TGET")")
		brokered+=("$(as_user "$user" "$W/$user" env TOKEN=secret-value SSL_CERT_FILE="$W/blob-ca.pem" "$W/cshell" --state-dir "$W/$user/state" run \
			"${NET[@]}" --credential "TOKEN@blob.test:$TPORT" -- "$TGET")")
	done
	t=$(printf '%s\n' "${tunnel[@]}" | median)
	b=$(printf '%s\n' "${brokered[@]}" | median)
	ratio=$(echo "$b/$t" | bc -l)
	printf '%-12s %10.2f %10.2f %7.2fx\n' "$user" "$(echo "$t*8/1000000000" | bc -l)" \
		"$(echo "$b*8/1000000000" | bc -l)" "$ratio"
	if (($(echo "$ratio < 0.8" | bc -l))); then missed=1; fi
done
echo "# goal: broker >= 0.8x tunnel"
exit "$missed"
