//go:build unix

package shells

import "syscall"

// closeOnExec keeps an inherited descriptor from the programs this one
// starts.
func closeOnExec(fd int) { syscall.CloseOnExec(fd) }
