//go:build !linux && !windows

package shells

import "context"

// watchProcess closes the returned channel when pid exits (polled).
func watchProcess(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		pollProcess(ctx, pid)
	}()
	return gone
}
