//go:build !linux && !windows

package shells

import (
	"context"
	"time"
)

// watchProcess closes the returned channel when pid exits (polled).
func watchProcess(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for ctx.Err() == nil && processAlive(pid, 0) {
			time.Sleep(250 * time.Millisecond)
		}
	}()
	return gone
}
