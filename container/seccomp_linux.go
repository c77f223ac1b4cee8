package container

// #include <linux/filter.h>
// #include "seccomp_linux.h"
import "C"

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// filterProgram is the syscall filter PID 1 installs (seccomp_linux.c) as
// built for these flags; linear: its pieces one after the other, as the
// source lists them, which is what the range table must answer alike.
func filterProgram(allowUserns, egress, quiet, root, tellWrites, linear bool) ([]unix.SockFilter, error) {
	b := func(v bool) C.int {
		if v {
			return 1
		}
		return 0
	}
	out := make([]unix.SockFilter, 2048)
	n := C.cshell_filter_program(b(allowUserns), b(egress), b(quiet), b(root), b(tellWrites), b(linear),
		(*C.struct_sock_filter)(unsafe.Pointer(&out[0])), C.int(len(out)))
	if n < 0 {
		return nil, errors.New("the syscall filter could not be built")
	}
	return out[:n], nil
}
