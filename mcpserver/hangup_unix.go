//go:build unix

package mcpserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchHangup calls hup once the client's end of in is gone (POLLHUP:
// the writer of a pipe closed it), even while the line reader is held
// back by a client that does not read; it gives up when done closes.
func watchHangup(in *os.File, done <-chan struct{}, hup func()) {
	fd := int(in.Fd())
	for {
		select {
		case <-done:
			return
		default:
		}
		p := []unix.PollFd{{Fd: int32(fd), Events: 0}} // only hangup and errors
		n, err := unix.Poll(p, 1000)
		if err == unix.EINTR || n == 0 {
			continue
		}
		if err != nil || p[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			hup()
			return
		}
	}
}
