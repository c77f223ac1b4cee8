package container

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
