//go:build unix

package netrelay

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// peekByte reads the first byte of c without consuming it (MSG_PEEK), so
// that c stays a plain TCP connection that splices.
func peekByte(c net.Conn) (byte, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var b [1]byte
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		return rerr != syscall.EAGAIN
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return b[0], nil
}
