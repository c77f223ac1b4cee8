#!/usr/bin/env bash
# The whole test suite, as CI runs it, on a fresh Debian 12 machine:
#   hack/test.sh --setup-host      (as root)
# It installs the Debian packages the tests use (runc and crun run the
# bundles of cshell spec; Node.js and npm when
# missing), the npm MCP SDK client of the serve tests (npm ci, from
# cmd/cshell/testdata/mcpclient's lock file), a Debian 13 root with
# apparmor_parser and a Debian 12 root for the real-engine tests
# (debootstrap, kept in /var/tmp/cshell-lab between runs), and the
# cgroup-v2 lab (hack/lab/cgroup2.sh: qemu, a root kept there too),
# a Debian 13 root with wine for the Windows tests (hack/wine.sh, kept
# there too), creates the unprivileged user cshelltest when missing, then
# runs: gofmt, go vet for linux, darwin and windows, cross-builds, unit
# tests with -race, the end-to-end tests twice: as root, and as
# cshelltest (rootless), and the Windows end-to-end tests under wine.
set -euo pipefail

TEST_USER=${TEST_USER:-cshelltest}
cd "$(dirname "$0")/.."

if [ "${1:-}" != "--setup-host" ] && [ "${CI:-}" != "true" ]; then
	echo "hack/test.sh changes this machine (apt-get install, useradd $TEST_USER);" >&2
	echo "run it as root with --setup-host to agree, or in CI (CI=true)" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "hack/test.sh must run as root: it tests cshell as root and as $TEST_USER" >&2
	exit 2
fi

step() { printf '\n=== %s\n' "$*"; }

step "host set-up"
need=()
for pkg in procps python3 util-linux passwd gcc patch curl git iproute2 runc crun bubblewrap debootstrap containerd docker.io podman e2fsprogs; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# Node.js and npm run the npm MCP SDK client of the serve tests; this
# machine's image may have them from elsewhere (NodeSource), so Debian's
# are installed only when they are missing.
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# qemu boots the cgroup-v2 lab (hack/lab/cgroup2.sh); without its GUI and
# the rest it recommends.
if ! dpkg -s qemu-system-x86 >/dev/null 2>&1; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >/dev/null
fi
id "$TEST_USER" >/dev/null 2>&1 || useradd -m -s /bin/bash "$TEST_USER"
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin
go version

work=$(mktemp -d /var/tmp/cshell-test-XXXXXX)
chmod 755 "$work"
# cshell keeps a runtime directory per user (/run/cshell for root,
# $TMPDIR/cshell-UID otherwise: the shared rootfs skeleton and container
# state); the tests run it as root and as $TEST_USER, with TMPDIR unset and
# set to /var/tmp. Those this run creates go when it ends.
made=()
for d in /run/cshell "/tmp/cshell-$(id -u "$TEST_USER")" "/var/tmp/cshell-$(id -u "$TEST_USER")"; do
	[ -e "$d" ] || made+=("$d")
done
remote_ns=cshell-e2e-remote-$$
cleanup() {
	for pid in "${remote_pid:-}" "${cred_pid:-}"; do
		if [ -n "$pid" ]; then
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	ip netns del "$remote_ns" 2>/dev/null || true
	if [ -n "${remote_name:-}" ]; then
		# Written in place: /etc/hosts may be a mount of its own.
		hosts=$(grep -vF " $remote_name" /etc/hosts || true)
		printf '%s\n' "$hosts" >/etc/hosts
	fi
	rm -rf "$work"
	for d in "${made[@]}"; do
		rm -rf --one-file-system -- "$d"
	done
}
trap cleanup EXIT

step "the npm MCP SDK client of the serve tests (cmd/cshell/testdata/mcpclient)"
mkdir "$work/mcpclient"
cp cmd/cshell/testdata/mcpclient/{client.mjs,package.json,package-lock.json} "$work/mcpclient/"
(cd "$work/mcpclient" && npm ci --no-audit --no-fund --loglevel=error)
export CSHELL_MCP_CLIENT="$work/mcpclient/client.mjs"
node --version

# The shells' outbound connections go to a server in a namespace of this
# run's own, over a veth pair in the benchmark block 198.18.0.0/15: never
# anywhere else. The run takes a /24 of that block that no address or route
# on this machine already uses (another run, a benchmark), and removes it
# all when it ends.
net=
for x in $(seq $(($$ % 200 + 1)) 254) $(seq 1 $(($$ % 200))); do
	if ! ip -4 route show to match "198.18.$x.2" | grep -q "198\.18\.$x\." &&
		! ip -4 -br addr | grep -q " 198\.18\.$x\."; then
		net=198.18.$x
		break
	fi
done
[ -n "$net" ] || { echo "hack/test.sh: every 198.18.X.0/24 is in use on this machine; remove stale test namespaces (ip netns list)" >&2; exit 1; }
remote=$net.2
step "a remote host for the network tests (network namespace $remote_ns, $remote)"
ip netns add "$remote_ns"
ip link add "cse2e$$" type veth peer name eth0 netns "$remote_ns"
ip addr add "$net.1/24" dev "cse2e$$"
ip link set "cse2e$$" up
ip -n "$remote_ns" addr add "$remote/24" dev eth0
ip -n "$remote_ns" link set eth0 up
ip -n "$remote_ns" link set lo up
mkdir "$work/remote"
echo "hello from the remote" >"$work/remote/hello"
ip netns exec "$remote_ns" python3 -m http.server 8080 --bind "$remote" --directory "$work/remote" >"$work/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 100); do
	curl -fsS --noproxy '*' -o /dev/null "http://$remote:8080/hello" 2>/dev/null && break
	sleep 0.1
done
if ! curl -fsS --noproxy '*' "http://$remote:8080/hello"; then
	echo "hack/test.sh: the test server in $remote_ns did not answer on $remote:8080; its log:" >&2
	cat "$work/remote.log" >&2
	exit 1
fi
export CSHELL_TEST_REMOTE=$remote:8080
# The remote also has a name in this machine's /etc/hosts (removed at the
# end), for the test of names the host resolves itself.
remote_name=cshell-e2e-remote-$$.test
echo "$remote $remote_name" >>/etc/hosts
export CSHELL_TEST_REMOTE_NAME=$remote_name

# The credential tests' HTTPS server (a CA of its own, one secret, a git
# repository, an npm package) runs in the remote's namespace too: the
# test binary itself serves it (cmd/cshell/e2e_credentials_test.go).
go test -c -tags e2e -o "$work/e2e.test" ./cmd/cshell
mkdir -m 0755 "$work/cred"
ip netns exec "$remote_ns" env CSHELL_E2E_CRED_SERVE="$remote:8443" CSHELL_E2E_CRED_DIR="$work/cred" "$work/e2e.test" >"$work/cred.log" 2>&1 &
cred_pid=$!
for _ in $(seq 100); do
	[ -e "$work/cred/ready" ] && break
	sleep 0.1
done
if [ ! -e "$work/cred/ready" ]; then
	echo "hack/test.sh: the credential server in $remote_ns did not start; its log:" >&2
	cat "$work/cred.log" >&2
	exit 1
fi
export CSHELL_TEST_CRED_REMOTE=$remote:8443 CSHELL_TEST_CRED_DIR=$work/cred

step "gofmt, go vet (linux, darwin, windows), third_party/runc as released and patched"
bad=$(gofmt -l .)
if [ -n "$bad" ]; then
	echo "gofmt would change: $bad" >&2
	exit 1
fi
go vet ./...
go vet -tags e2e ./cmd/cshell
for target in darwin/amd64 darwin/arm64 windows/amd64; do
	GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
	GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build -o /dev/null ./cmd/cshell
	echo "$target: vet and build ok"
done
hack/update-runc.sh --check

step "man pages and completions (hack/gendocs.sh)"
hack/gendocs.sh "$work/docs" >/dev/null
for f in man/cshell.1 man/cshell-run.1 completions/cshell.bash completions/_cshell completions/cshell.fish; do
	[ -s "$work/docs/$f" ] || { echo "hack/gendocs.sh did not write $f" >&2; exit 1; }
done
echo "ok"

step "unit tests (-race)"
go test -race -count=1 ./... | tee "$work/unit.log"

step "a release (hack/release.sh, this machine's architecture): the Debian package the release test installs"
hack/release.sh "$work/dist"
if ! command -v aarch64-linux-gnu-gcc >/dev/null && [ "$(go env GOARCH)" = amd64 ]; then
	# Without the cross compiler, --arch all says so before it builds.
	if out=$(hack/release.sh --arch all "$work/none" 2>&1) || [ -e "$work/none" ] ||
		[[ "$out" != *"needs the C cross compiler aarch64-linux-gnu-gcc"* ]]; then
		echo "hack/release.sh --arch all without a cross compiler: $out" >&2
		exit 1
	fi
fi
chmod -R a+rX "$work/dist"
export CSHELL_DEB=$(ls "$work"/dist/cshell_*.deb)
export CSHELL_TEST_USER=$TEST_USER

# The CI recipe test runs docs/ci.md's commands; the unprivileged run
# cannot read this checkout, so it gets a copy.
cp -r docs "$work/docs-src"
chmod -R a+rX "$work/docs-src"
export CSHELL_DOCS_DIR="$work/docs-src"

# Debootstrap roots the tests use, kept in /var/tmp/cshell-lab between runs:
# Debian 13 with apparmor_parser (AppArmor 4, whose userns rule Debian 12's
# parser lacks) compiles the profile doctor prints; Debian 12 minbase with
# curl and python3 is the image of the real-engine tests (docker import).
# lab_root NAME SUITE PACKAGES: sets LAB to the root, made when missing.
lab_root() {
	LAB=/var/tmp/cshell-lab/$1
	[ -e "$LAB/.cshell-lab-done" ] && return 0
	step "a $2 root with $3 (debootstrap, kept in $LAB)"
	mkdir -p /var/tmp/cshell-lab
	rm -rf --one-file-system "$LAB" "$LAB.tmp"
	debootstrap --variant=minbase --include="$3" "$2" "$LAB.tmp" >"$work/debootstrap-$1.log" 2>&1 ||
		{ tail -20 "$work/debootstrap-$1.log" >&2; echo "hack/test.sh: debootstrap of $2 failed" >&2; exit 1; }
	chroot "$LAB.tmp" apt-get clean
	touch "$LAB.tmp/.cshell-lab-done"
	mv "$LAB.tmp" "$LAB"
}
lab_root trixie-apparmor trixie apparmor
export CSHELL_APPARMOR_ROOT=$LAB
lab_root bookworm-min bookworm curl,python3
export CSHELL_LAB_BOOKWORM=$LAB

step "end-to-end tests as root (cshell built with -race)"
go build -race -o "$work/cshell-race" ./cmd/cshell
export GORACE="atexit_sleep_ms=0 halt_on_error=1" # no 1 s pause at every exit; stop at the first race
CSHELL_BIN="$work/cshell-race" go test -tags e2e -count=1 -v ./cmd/cshell | tee "$work/root.log"

go build -o "$work/cshell" ./cmd/cshell
step "the cgroup-v2 lab: Debian 12's kernel under qemu, rootless limits through systemd's delegation"
LAB_DIR=/var/tmp/cshell-lab/cgroup2 bash hack/lab/cgroup2.sh "$work/cshell" | tee "$work/lab.log"

step "Windows under wine: background shells end to end (hack/wine.sh, Debian 13's wine 10)"
bash hack/wine.sh | tee "$work/wine.log"

step "end-to-end tests as $TEST_USER (rootless)"
su "$TEST_USER" -s /bin/sh -c "cd ~ && CSHELL_BIN='$work/cshell' CSHELL_MCP_CLIENT='$CSHELL_MCP_CLIENT' CSHELL_TEST_REMOTE='$CSHELL_TEST_REMOTE' CSHELL_TEST_REMOTE_NAME='$CSHELL_TEST_REMOTE_NAME' CSHELL_TEST_CRED_REMOTE='$CSHELL_TEST_CRED_REMOTE' CSHELL_TEST_CRED_DIR='$CSHELL_TEST_CRED_DIR' CSHELL_DOCS_DIR='$CSHELL_DOCS_DIR' CSHELL_DEB='$CSHELL_DEB' '$work/e2e.test' -test.count=1 -test.v" | tee "$work/rootless.log"

step "summary"
passed=$(cat "$work/root.log" "$work/rootless.log" | grep -c -- '--- PASS' || true)
failed=$(cat "$work/root.log" "$work/rootless.log" | grep -c -- '--- FAIL' || true)
skipped=$(cat "$work/root.log" "$work/rootless.log" | grep -c -- '--- SKIP' || true)
echo "unit packages: $(grep -c '^ok' "$work/unit.log" || true) ok"
echo "e2e (root and rootless, subtests included): $passed passed, $failed failed, $skipped skipped"
echo "cgroup-v2 lab: $(grep -c '^ok' "$work/lab.log" || true) checks passed"
echo "windows under wine: $(grep -c -- '--- PASS' "$work/wine.log" || true) passed, $(grep -c -- '--- FAIL' "$work/wine.log" || true) failed"
