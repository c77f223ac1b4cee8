//go:build unix

package netrelay

import "syscall"

const (
	errAddrInUse    = syscall.EADDRINUSE
	errAddrNotAvail = syscall.EADDRNOTAVAIL
	errAccess       = syscall.EACCES
)
