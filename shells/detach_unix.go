//go:build unix

package shells

import "syscall"

// detachedAttr puts a child in a session of its own: no terminal, no
// process group of the caller's, so that it outlives the caller quietly.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
