//go:build !linux

package shells

import (
	"context"
	"time"
)

// pollProcess returns once pid has ended or ctx is done, looking every
// 250 ms.
func pollProcess(ctx context.Context, pid int) {
	for ctx.Err() == nil && processAlive(pid, 0) {
		time.Sleep(250 * time.Millisecond)
	}
}
