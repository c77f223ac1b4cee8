#!/bin/bash
# The cgroup-v2 lab: Debian 12's kernel booted under qemu (software
# emulation: no KVM is needed) with a debootstrap root, systemd and the
# unified cgroup hierarchy, and a user "lab" (uid 1000, lingering) whose
# systemd manager delegates memory, pids and cpu, as on Ubuntu, Fedora
# and Debian desktops and servers. cshell is copied in and checked there
# (hack/lab/cgroup2-guest.sh): rootless --memory, --pids and --cpus held
# by a scope of the user's manager (enforced_by cgroup), doctor saying
# so, nothing left behind; and root's shells on cgroup v2.
#
# usage (as root):  bash hack/lab/cgroup2.sh [CSHELL_BIN]
#   CSHELL_BIN  the cshell binary to check (default: build the checkout)
#   LAB_DIR     where the lab's root is kept between runs
#               (default /var/tmp/cshell-lab/cgroup2)
# Needs debootstrap, qemu-system-x86_64 (Debian's qemu-system-x86),
# mkfs.ext4 (e2fsprogs) and the Debian archive. Exits 0 when every check
# in the guest passed, 1 when one failed, 2 when the lab could not run.
# The console's output is printed; the image and work dir are removed.
set -euo pipefail
die() { echo "hack/lab/cgroup2.sh: $*" >&2; exit 2; }

((EUID == 0)) || die "run me as root (debootstrap and mkfs.ext4 -d keep the root's owners)"
for tool in debootstrap qemu-system-x86_64 mkfs.ext4; do
	command -v "$tool" >/dev/null || die "$tool not found: apt-get install -y debootstrap qemu-system-x86 e2fsprogs"
done
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
LAB_DIR=${LAB_DIR:-/var/tmp/cshell-lab/cgroup2}

W=$(mktemp -d /var/tmp/cshell-cgroup2.XXXXXX)
cleanup() { rm -rf --one-file-system -- "$W"; }
trap cleanup EXIT

if [ -n "${1:-}" ]; then
	install -m 755 "$1" "$W/cshell"
else
	(cd "$HERE/../.." && go build -o "$W/cshell" ./cmd/cshell) || die "go build failed"
fi

# The root, made once: a minimal Debian 12 with its kernel, systemd, the
# user's D-Bus, python3 and curl; the user lab, lingering (its manager
# starts at boot); a unit that runs the checks at boot and powers off.
if [ ! -e "$LAB_DIR/.cshell-lab-done" ]; then
	echo "=== the lab's root (debootstrap bookworm with its kernel, kept in $LAB_DIR)"
	rm -rf --one-file-system "$LAB_DIR.tmp"
	mkdir -p "$(dirname "$LAB_DIR")"
	debootstrap --variant=minbase \
		--include=systemd-sysv,dbus,dbus-user-session,libpam-systemd,linux-image-amd64,python3,curl,procps,iproute2,util-linux \
		bookworm "$LAB_DIR.tmp" >"$W/debootstrap.log" 2>&1 || { tail -20 "$W/debootstrap.log" >&2; die "debootstrap failed"; }
	R=$LAB_DIR.tmp
	chroot "$R" apt-get clean
	chroot "$R" useradd -m -u 1000 -s /bin/bash lab
	mkdir -p "$R/var/lib/systemd/linger" && touch "$R/var/lib/systemd/linger/lab"
	echo cshell-lab >"$R/etc/hostname"
	printf '/dev/vda / ext4 rw 0 1\n' >"$R/etc/fstab"
	cat >"$R/etc/systemd/system/cshell-lab.service" <<'UNIT'
[Unit]
Description=cshell's cgroup-v2 checks
After=multi-user.target user@1000.service
Wants=user@1000.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c '/lab/guest.sh >/dev/ttyS0 2>&1; systemctl poweroff --no-block'

[Install]
WantedBy=multi-user.target
UNIT
	chroot "$R" systemctl enable cshell-lab.service >/dev/null 2>&1 || die "cannot enable the lab's unit"
	chroot "$R" systemctl mask getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 || true
	touch "$R/.cshell-lab-done"
	mv "$R" "$LAB_DIR"
fi

echo "=== the image (the lab's root, cshell and the checks)"
mkdir -p "$LAB_DIR/lab"
install -m 755 "$W/cshell" "$LAB_DIR/lab/cshell"
install -m 755 "$HERE/cgroup2-guest.sh" "$LAB_DIR/lab/guest.sh"
mkfs.ext4 -q -F -L lab -d "$LAB_DIR" "$W/root.img" 3G || die "mkfs.ext4 -d failed"
rm -rf "$LAB_DIR/lab"
kernel=$(ls "$LAB_DIR"/boot/vmlinuz-* | tail -1)
initrd=$(ls "$LAB_DIR"/boot/initrd.img-* | tail -1)

echo "=== booting $(basename "$kernel") under qemu (TCG; a few minutes)"
start=$SECONDS
# No network device at all; the console on a file; 15 minutes at most.
timeout 900 qemu-system-x86_64 -machine q35 -cpu max -m 2048 -smp 2 \
	-display none -monitor none -no-reboot -nic none \
	-serial "file:$W/console.log" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "root=/dev/vda rw console=ttyS0 panic=-1 systemd.unified_cgroup_hierarchy=1 systemd.show_status=0 loglevel=3" \
	-drive "file=$W/root.img,format=raw,if=virtio" || echo "qemu ended with $? (124: the 15 minutes ran out)"
echo "=== the guest's console ($((SECONDS - start)) s)"
grep -a -E '^(LAB|ok|FAIL|---|  )' "$W/console.log" || tail -40 "$W/console.log"
if grep -aq '^LAB-RESULT: PASS' "$W/console.log"; then
	echo "hack/lab/cgroup2.sh: every check passed"
	exit 0
elif grep -aq '^LAB-RESULT: FAIL' "$W/console.log"; then
	echo "hack/lab/cgroup2.sh: a check failed" >&2
	exit 1
fi
tail -40 "$W/console.log" >&2
die "the guest gave no result"
