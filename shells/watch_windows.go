package shells

import (
	"context"
	"errors"

	"golang.org/x/sys/windows"
)

// watchProcess closes the returned channel when pid exits. It waits on a
// handle to the process, taken once: a handle names that process and no
// later one, so a pid that Windows hands to a new process meanwhile is
// not mistaken for the owner. A process it may not open (someone else's)
// is polled instead.
func watchProcess(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	go func() {
		defer close(gone)
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			pollProcess(ctx, pid)
			return
		}
		if err != nil {
			return // no such process: it has ended
		}
		defer windows.CloseHandle(h)
		for ctx.Err() == nil {
			ev, err := windows.WaitForSingleObject(h, 250)
			if err != nil || ev != uint32(windows.WAIT_TIMEOUT) {
				return
			}
		}
	}()
	return gone
}
