package shells

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detachedAttr starts a child without a console and in a process group
// of its own, so that it outlives the caller quietly.
func detachedAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP}
}
