package container

// #include <stdlib.h>
// #include "cgwarm_linux.h"
import "C"

import (
	"syscall"
	"unsafe"
)

// The cgroup lock's head start: cgwarm_linux.c starts, from an ELF
// constructor (before the Go runtime, as nsexec and PID 1 do), the wait
// that the first move of a process between cgroups costs, so that a shell
// about to be started as root does not wait for it in full.
//
// Every move between cgroups (a write to cgroup.procs, cgroup v1 or v2)
// takes the kernel's global cgroup_threadgroup_rwsem for writing, and the
// first writer after an idle spell waits for an RCU grace period before it
// gets it: 6-16 ms on this project's machines, while the new container's
// init waits for its cgroups. A writer that comes within a grace period of
// the last one pays nothing. libcontainer moves the init into its cgroups
// only after cshell has started, built the shell's plan and spec and
// started the init, so the constructor, for root and for `cshell run` or
// a background shell's supervisor (the processes that start a shell at
// once), starts a thread that moves this process into the cgroup it is
// already in: that changes nothing but takes the lock, and the grace
// period runs while the Go runtime starts and cshell prepares. An error
// (a cgroup this process may not be moved into, a read-only cgroup
// filesystem) is ignored: nothing depends on the move. The thread takes
// no signal and ends with its write.
//
// The functions below reach the constructor's parts, for tests.

// startsShell reports whether args (the command line after the program)
// make the constructor start the wait.
func startsShell(args []string) bool {
	argv := make([]*C.char, 0, len(args)+1)
	argv = append(argv, C.CString("cshell"))
	for _, a := range args {
		argv = append(argv, C.CString(a))
	}
	defer func() {
		for _, a := range argv {
			C.free(unsafe.Pointer(a))
		}
	}()
	return C.cshell_cgwarm_wanted(C.int(len(argv)), &argv[0]) != 0
}

// procsFile picks, from /proc/self/cgroup's text, the cgroup.procs file
// of this process's cgroup, looking for files under root: on the unified
// hierarchy when /sys/fs/cgroup is one, else on the first cgroup v1
// hierarchy of a controller mounted under its name. "" when there is none.
func procsFile(data []byte, root string) string {
	cdata, croot := C.CString(string(data)), C.CString(root)
	defer C.free(unsafe.Pointer(cdata))
	defer C.free(unsafe.Pointer(croot))
	var out [C.CGWARM_PATH_MAX]C.char
	if C.cshell_cgwarm_procs(cdata, croot, &out[0], C.size_t(len(out))) != 0 {
		return ""
	}
	return C.GoString(&out[0])
}

// moveIntoCgroup moves this process into the cgroup whose cgroup.procs
// file procs is, as the constructor's thread does: only when the file
// lists this process already.
func moveIntoCgroup(procs string) error {
	cp := C.CString(procs)
	defer C.free(unsafe.Pointer(cp))
	if e := C.cshell_cgwarm_move(cp); e != 0 {
		return syscall.Errno(e)
	}
	return nil
}
