//go:build e2e

package main

// Issue 22's attacks, each made from inside a shell the way an exploit
// makes it (system calls through ctypes, no program between), then checked
// on the host.

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// directCalls makes each call of its table directly and prints "name
// result" for each.
const directCalls = `python3 -c '
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
open("plant", "w").close()
calls = {
    "vsock": (41, 40, 1, 0),                 # socket(AF_VSOCK, SOCK_STREAM)
    "alg": (41, 38, 5, 0),                   # socket(AF_ALG, SOCK_SEQPACKET)
    "unix": (41, 1, 1, 0),
    "inet6": (41, 10, 1, 0),
    "netlink": (41, 16, 3, 0),
    "read_implies_exec": (135, 0x400000),    # personality
    "personality_query": (135, 0xffffffff),
    "migrate_pages": (256, 0, 0, 0, 0),
    "move_pages": (279, 0, 0, 0, 0, 0, 0),
    "mbind": (237, 0, 0, 0, 0, 0, 0),
    "set_mempolicy": (238, 0, 0, 0),
    "pidfd_getfd": (438, 0, 0, 0),
    "process_madvise": (440, 0, 0, 0, 0, 0),
    "openat2": (437, -100, 0, 0, 0),
    "future_call": (1000, 0),
    "chmod_setuid": (90, ctypes.c_char_p(b"plant"), 0o4755),
    "chmod_setgid": (90, ctypes.c_char_p(b"plant"), 0o2755),
    "chmod_plain": (90, ctypes.c_char_p(b"plant"), 0o755),
    "fchmodat_setuid": (268, -100, ctypes.c_char_p(b"plant"), 0o6755),
    "fchmodat2_setuid": (452, -100, ctypes.c_char_p(b"plant"), 0o4755, 0),
    "open_setuid": (2, ctypes.c_char_p(b"plant2"), os.O_CREAT | os.O_WRONLY, 0o4755),
    "openat_setuid": (257, -100, ctypes.c_char_p(b"plant3"), os.O_CREAT | os.O_WRONLY, 0o4755),
    "tmpfile_setuid": (257, -100, ctypes.c_char_p(b"."), 0o20000000 | 0o200000 | os.O_WRONLY, 0o4755),
    "creat_setuid": (85, ctypes.c_char_p(b"plant4"), 0o4755),
    "mknodat_setuid": (259, -100, ctypes.c_char_p(b"plant5"), 0o100000 | 0o4755, 0),
}
for name in sys.argv[1:]:
    nr, *args = calls[name]
    r = libc.syscall(nr, *args)
    e = ctypes.get_errno()
    print(name, "ok" if r >= 0 else errno.errorcode.get(e, e))
' `

func probeCalls(t *testing.T, wd string, names []string, flags ...string) map[string]string {
	t.Helper()
	args := append([]string{"run"}, flags...)
	r := run(t, call{args: append(args, "--", directCalls+strings.Join(names, " ")), dir: wd})
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			got[f[0]] = f[1]
		}
	}
	if len(got) != len(names) {
		t.Fatalf("probe: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	return got
}

// The filter is an allowlist modelled on Docker's default: socket
// families outside Docker's list (AF_VSOCK, a way to the hypervisor that
// no network namespace covers) get EAFNOSUPPORT; personas, NUMA and
// cross-process calls Docker refuses without capabilities get EPERM; a
// call the list does not know gets ENOSYS, as on an older kernel.
func TestFilterIsAnAllowlist(t *testing.T) {
	requireAMD64(t)
	want := map[string]string{
		"vsock": "EAFNOSUPPORT", "alg": "EAFNOSUPPORT", "unix": "ok", "inet6": "ok", "netlink": "ok",
		"read_implies_exec": "EPERM", "personality_query": "ok",
		"migrate_pages": "EPERM", "move_pages": "EPERM", "mbind": "EPERM", "set_mempolicy": "EPERM",
		"pidfd_getfd": "EPERM", "process_madvise": "EPERM", "openat2": "ENOSYS", "future_call": "ENOSYS",
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for _, flags := range [][]string{nil, {"--allow-host", "example.invalid"}, {"--allow-userns"}} {
		got := probeCalls(t, t.TempDir(), names, flags...)
		for n, w := range want {
			if got[n] != w {
				t.Errorf("%v %s: %s, want %s", flags, n, got[n], w)
			}
		}
	}
}

// No file a shell writes gains the setuid or setgid bit, however it asks
// (chmod, fchmodat, fchmodat2, open, openat, O_TMPFILE, creat, mknodat):
// a shell started by root writes as the host's root, and such a file would
// run as root for whoever may reach the working directory. Plain modes
// still work.
func TestNoSetuidPlants(t *testing.T) {
	requireAMD64(t)
	names := []string{"chmod_setuid", "chmod_setgid", "chmod_plain", "fchmodat_setuid", "fchmodat2_setuid", "open_setuid",
		"openat_setuid", "tmpfile_setuid", "creat_setuid", "mknodat_setuid"}
	for _, flags := range [][]string{nil, {"--allow-userns"}} {
		wd := t.TempDir()
		got := probeCalls(t, wd, names, flags...)
		for _, n := range names {
			want := "EPERM"
			if n == "chmod_plain" {
				want = "ok"
			}
			if got[n] != want {
				t.Errorf("%v %s: %s, want %s", flags, n, got[n], want)
			}
		}
		// And as a tool would: cp and chmod from coreutils.
		r := run(t, call{args: append(append([]string{"run"}, flags...), "--", "cp /bin/true ./rootsh && chmod 4755 ./rootsh; chmod u+s ./rootsh; install -m 6755 /bin/true ./rootsh2"), dir: wd})
		if !strings.Contains(r.stderr, "Operation not permitted") {
			t.Errorf("%v: chmod 4755 in a shell: %q", flags, r.stderr)
		}
		_ = filepath.WalkDir(wd, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				if info, err := d.Info(); err == nil && info.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
					t.Errorf("%v: %s is %v on the host", flags, p, info.Mode())
				}
			}
			return nil
		})
	}
}

// A file capability set by a user namespace of the shell's own counts on
// the host only when the shell was started by root (its namespace's root
// is the host's): there the shell sets no extended attribute at all.
// Started by another user, one may be set, but its root id is that user,
// and the host's root is not bound by it.
func TestNoFileCapabilitiesForTheHost(t *testing.T) {
	requireAMD64(t)
	wd := t.TempDir()
	setcap := `python3 -c '
import os, struct, errno
open("capped", "w").close()
# a VFS_CAP_REVISION_2 xattr: cap_dac_read_search and cap_sys_admin, effective
data = struct.pack("<IIIII", 0x02000001, (1 << 2) | (1 << 21), 0, 0, 0)
for name, value in (("security.capability", data), ("user.note", b"x")):
    try:
        os.setxattr("capped", name, value); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
'`
	r := run(t, call{args: []string{"run", "--allow-userns", "--", "unshare -Ur sh -c " + shellQuote(setcap)}, dir: wd})
	if os.Geteuid() == 0 {
		if r.stdout != "security.capability EPERM\nuser.note EPERM\n" {
			t.Errorf("root's shell with --allow-userns: %q %q", r.stdout, r.stderr)
		}
	} else if !strings.Contains(r.stdout, "user.note ok") {
		t.Errorf("a rootless shell with --allow-userns cannot set a user xattr: %q %q", r.stdout, r.stderr)
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(filepath.Join(wd, "capped"), "security.capability", buf)
	if err == nil {
		// Version 3 carries the root id that the capabilities count for.
		if n < 24 || binary.LittleEndian.Uint32(buf)>>24 != 3 || binary.LittleEndian.Uint32(buf[20:]) == 0 {
			t.Errorf("a file capability that counts for the host's root: % x", buf[:n])
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

var _ = fmt.Sprint
