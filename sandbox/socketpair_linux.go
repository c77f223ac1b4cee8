package sandbox

import (
	"os"
	"syscall"
)

// socketPair returns two connected unix stream sockets, close-on-exec.
func socketPair() (*os.File, *os.File, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	return os.NewFile(uintptr(fds[0]), "sockets-parent"), os.NewFile(uintptr(fds[1]), "sockets-child"), nil
}
