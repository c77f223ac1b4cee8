package shells

import (
	"context"
	"fmt"
	"time"

	"github.com/cshell/cshell/internal/kind"
)

// ErrWaitTimeout means wait's timeout passed before the shell ended.
var ErrWaitTimeout = fmt.Errorf("timed out")

// Wait blocks until the shell ends (or timeout, if > 0, passes) and
// returns its record.
func (m *Manager) Wait(ctx context.Context, ref string, timeout time.Duration) (*Meta, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return nil, err
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(pollEvery * 2)
	defer tick.Stop()
	for !meta.Finished() {
		select {
		case <-ctx.Done():
			return meta, ctx.Err()
		case <-deadline:
			return meta, kind.Errorf(ErrWaitTimeout, "shell %s is still %s", meta.ID, meta.StatusLine)
		case <-tick.C:
		}
		if meta, err = m.Find(meta.ID); err != nil {
			return nil, err
		}
	}
	return meta, nil
}

// ExitStatus is the code wait exits with: the command's, 128+N for signal N.
func (meta *Meta) ExitStatus() int {
	if meta.ExitCode != nil {
		return *meta.ExitCode
	}
	return 1 // lost: the code is unknown
}
