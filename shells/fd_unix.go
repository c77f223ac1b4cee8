//go:build unix

package shells

import "syscall"

// closeOnExec keeps an inherited descriptor from the programs this one
// starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// canWrite reports whether this user may make entries in the directory p.
func canWrite(p string) bool { return syscall.Access(p, 2) == nil } // W_OK
