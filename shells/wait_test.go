package shells

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 4), "")
	meta, err := m.Wait(context.Background(), "1", 0)
	if err != nil || meta.ExitStatus() != 4 {
		t.Errorf("a finished shell: %v %v", meta, err)
	}
	writeRecord(t, m, running("2"), "")
	meta, err = m.Wait(context.Background(), "2", 30*time.Millisecond)
	if !errors.Is(err, ErrWaitTimeout) || meta.Status != StatusRunning || !strings.HasPrefix(err.Error(), "shell 2 is still running for ") {
		t.Errorf("a timeout: %v %v", meta, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Wait(ctx, "2", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v", err)
	}
	go endShell(t, m, "2")
	meta, err = m.Wait(context.Background(), "2", 0)
	if err != nil || meta.Status != StatusExited {
		t.Errorf("waited for the end: %v %v", meta, err)
	}
	if _, err := m.Wait(context.Background(), "3", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("no shell 3: %v", err)
	}
}
