package shells

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// watchProcess closes the returned channel when pid exits. A pidfd tells
// at once; where pidfds are missing, it polls.
func watchProcess(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	go func() {
		defer close(gone)
		if err != nil {
			pollProcess(ctx, pid)
			return
		}
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for ctx.Err() == nil {
			n, err := unix.Poll(fds, 1000)
			if n > 0 || (err != nil && err != unix.EINTR) {
				return
			}
		}
	}()
	return gone
}

func pollProcess(ctx context.Context, pid int) {
	for ctx.Err() == nil && unix.Kill(pid, 0) != unix.ESRCH {
		time.Sleep(250 * time.Millisecond)
	}
}
