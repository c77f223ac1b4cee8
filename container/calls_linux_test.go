package container

import (
	"encoding/binary"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParseSockaddr(t *testing.T) {
	v4 := make([]byte, 16)
	binary.NativeEndian.PutUint16(v4, unix.AF_INET)
	binary.BigEndian.PutUint16(v4[2:], 8080)
	copy(v4[4:], []byte{198, 18, 0, 2})
	v6 := make([]byte, 28)
	binary.NativeEndian.PutUint16(v6, unix.AF_INET6)
	binary.BigEndian.PutUint16(v6[2:], 443)
	a := netip.MustParseAddr("fd00::7").As16()
	copy(v6[8:], a[:])
	unixAddr := make([]byte, 16)
	binary.NativeEndian.PutUint16(unixAddr, unix.AF_UNIX)
	for _, tc := range []struct {
		b    []byte
		want string
		ok   bool
	}{{v4, "198.18.0.2:8080", true}, {v6, "[fd00::7]:443", true}, {unixAddr, "", false}, {v6[:16], "", false}} {
		got, ok := parseSockaddr(tc.b)
		if ok != tc.ok || (ok && got.String() != tc.want) {
			t.Errorf("parseSockaddr(%x) = %v, %v", tc.b, got, ok)
		}
	}
	for addr, want := range map[string]bool{"127.0.0.1": true, "127.9.9.9": true, "::1": true, "::ffff:127.0.0.1": true,
		"0.0.0.0": true, "::": true, "198.18.0.2": false, "fd00::7": false} {
		if got := stays(netip.MustParseAddr(addr)); got != want {
			t.Errorf("stays(%s) = %v", addr, got)
		}
	}
}

// TestRefusedCall: the calls the filter hands over to be refused are
// judged from their registers as the filter judged them, and the path
// they name is read from the caller's memory.
func TestRefusedCall(t *testing.T) {
	path := []byte("./rootsh\x00")
	ptr := uint64(uintptr(unsafe.Pointer(&path[0])))
	pid := uint32(os.Getpid())
	for _, c := range []struct {
		name    string
		nr      int
		args    [6]uint64
		refused bool
		want    RefusedCall
	}{
		{"fchmodat setuid", unix.SYS_FCHMODAT, [6]uint64{uint64(0xffffff9c), ptr, 0o4755}, true,
			RefusedCall{Call: "fchmodat", Path: "./rootsh", Mode: 0o4755}},
		{"fchmod setgid", unix.SYS_FCHMOD, [6]uint64{3, 0o2755}, true,
			RefusedCall{Call: "fchmod", Path: "fd 3", Mode: 0o2755}},
		{"fchmodat plain", unix.SYS_FCHMODAT, [6]uint64{uint64(0xffffff9c), ptr, 0o755}, false, RefusedCall{}},
		// The filter reads the low 32 bits: so does the judge.
		{"mode above 32 bits", unix.SYS_FCHMODAT, [6]uint64{uint64(0xffffff9c), ptr, 1<<32 | 0o755}, false, RefusedCall{}},
		{"openat creating setuid", unix.SYS_OPENAT, [6]uint64{uint64(0xffffff9c), ptr, unix.O_CREAT | unix.O_WRONLY, 0o4755}, true,
			RefusedCall{Call: "openat", Path: "./rootsh", Mode: 0o4755}},
		{"openat O_TMPFILE setuid", unix.SYS_OPENAT, [6]uint64{uint64(0xffffff9c), ptr, unix.O_TMPFILE | unix.O_WRONLY, 0o4755}, true,
			RefusedCall{Call: "openat", Path: "./rootsh", Mode: 0o4755}},
		// Without O_CREAT the mode is ignored by the kernel: the open goes on.
		{"openat writing, mode ignored", unix.SYS_OPENAT, [6]uint64{uint64(0xffffff9c), ptr, unix.O_WRONLY, 0o4755}, false, RefusedCall{}},
		{"mknodat setuid", unix.SYS_MKNODAT, [6]uint64{uint64(0xffffff9c), ptr, unix.S_IFREG | 0o4755}, true,
			RefusedCall{Call: "mknodat", Path: "./rootsh", Mode: 0o4755}},
		{"setxattr", unix.SYS_SETXATTR, [6]uint64{ptr}, true, RefusedCall{Call: "setxattr", Path: "./rootsh", Xattr: true}},
		{"fsetxattr", unix.SYS_FSETXATTR, [6]uint64{5}, true, RefusedCall{Call: "fsetxattr", Path: "fd 5", Xattr: true}},
		{"connect", unix.SYS_CONNECT, [6]uint64{3, ptr, 16}, false, RefusedCall{}},
	} {
		got, ok := refusedCall(notif{pid: pid, nr: int32(c.nr), args: c.args})
		if ok != c.refused {
			t.Errorf("%s: refused %v, want %v", c.name, ok, c.refused)
			continue
		}
		if ok {
			c.want.Pid = int(pid)
			if got != c.want {
				t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
			}
		}
	}
	runtime.KeepAlive(path)
}
