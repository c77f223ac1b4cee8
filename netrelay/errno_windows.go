package netrelay

import "syscall"

// Windows' socket errors: WSAEADDRINUSE, WSAEADDRNOTAVAIL, WSAEACCES.
const (
	errAddrInUse    = syscall.Errno(10048)
	errAddrNotAvail = syscall.Errno(10049)
	errAccess       = syscall.Errno(10013)
)
