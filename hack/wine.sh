#!/bin/bash
# cshell's Windows end-to-end tests (hack/wine/e2e_windows_test.go), and
# the unit tests of internal/safefs, whose Windows side differs, run
# under wine 10 from Debian 13 in a root of their own: foreground runs,
# background shells (start, output, ps, wait, kill of the whole tree, the
# refused graceful signal, --timeout, a lost supervisor, --owner-pid,
# clean, --expose).
#
# usage (as root):  bash hack/wine.sh
#   LAB_DIR=dir   where the Debian 13 root with wine is kept (default
#                 /var/tmp/cshell-lab/trixie-wine; made with debootstrap
#                 on the first run, about 1.2 GB, then reused)
#
# The root gets its own mount namespace (unshare) with /proc mounted, so
# nothing stays mounted; the tests' binaries and wine's prefix are made
# anew each run and removed, and wineserver -k ends every process of the
# prefix at the end. Exit status: the tests'.
set -euo pipefail

die() { echo "hack/wine.sh: $*" >&2; exit 1; }
((EUID == 0)) || die "run me as root: I make a root with debootstrap and chroot into it"
for tool in go debootstrap unshare chroot; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install -y debootstrap util-linux; Go on PATH)"
done
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
LAB=${LAB_DIR:-/var/tmp/cshell-lab/trixie-wine}

if [ ! -e "$LAB/.cshell-lab-done" ]; then
	echo "# making a Debian 13 root with wine in $LAB (debootstrap; reused by later runs)"
	mkdir -p "$(dirname "$LAB")"
	rm -rf --one-file-system "$LAB" "$LAB.tmp"
	log=$(mktemp)
	debootstrap --variant=minbase --include=wine,wine64 trixie "$LAB.tmp" >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; rm -f "$log"; die "debootstrap of trixie with wine failed"; }
	rm -f "$log"
	chroot "$LAB.tmp" apt-get clean
	touch "$LAB.tmp/.cshell-lab-done"
	mv "$LAB.tmp" "$LAB"
fi

W=$(mktemp -d "$LAB/root/cshell-wine.XXXXXX")
in_root() { # a command in the root, with wine's environment
	unshare --mount --propagation private /bin/sh -c 'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' \
		sh "$LAB" "$LAB" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin WINEDEBUG=-all WINEPREFIX=/root/.wine-cshell "$@"
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	in_root wineserver -k >/dev/null 2>&1 || true
	rm -rf --one-file-system -- "$W" "$LAB/root/.wine-cshell"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "# building cshell.exe and the tests for windows/amd64"
(cd "$REPO" && GOOS=windows GOARCH=amd64 go build -o "$W/cshell.exe" ./cmd/cshell &&
	GOOS=windows GOARCH=amd64 go test -c -o "$W/wine.test.exe" ./hack/wine/ &&
	GOOS=windows GOARCH=amd64 go test -c -o "$W/safefs.test.exe" ./internal/safefs) || die "the windows build failed"
inside=/root/$(basename "$W")
echo "# $(in_root wine --version 2>/dev/null) | $(uname -r)"
# wine's processes keep the descriptors of the process that started them:
# the tests write to a file, not to a pipe something would wait on.
rc=0
# First the unit tests of what behaves differently on Windows (safefs:
# replacing a file another process holds open), then the end-to-end ones.
in_root /usr/bin/timeout 300 /bin/sh -c "cd $inside && wine safefs.test.exe -test.v -test.count=1 >$inside/unit.log 2>&1" || rc=$?
grep -v 'XDG_RUNTIME_DIR' "$W/unit.log" || true
in_root /usr/bin/timeout 600 /bin/sh -c "cd $inside && CSHELL_BIN='Z:${inside//\//\\}\\cshell.exe' wine wine.test.exe -test.v -test.count=1 >$inside/test.log 2>&1" || rc=$?
grep -v 'XDG_RUNTIME_DIR' "$W/test.log" || true
exit "$rc"
