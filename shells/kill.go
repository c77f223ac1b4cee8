package shells

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/cshell/cshell/internal/escape"
)

// KillResult is what kill did to one shell.
type KillResult struct {
	Meta            *Meta
	AlreadyFinished bool
	Err             error // this shell could not be stopped (KillSession)
}

// Text is the line kill prints for a shell it stopped.
func (r *KillResult) Text() string {
	s := fmt.Sprintf("killed %s: %s", r.Meta.ID, escape.Line(r.Meta.Command))
	if n := len(r.Meta.Escaped); n > 0 {
		s += fmt.Sprintf("; also killed %d process(es) that had left the shell's process group (pid %s)", n, joinInts(r.Meta.Escaped))
	}
	return s
}

// Kill sends sig to the shell's process group, and after grace kills
// everything left; it returns once the shell is gone, or when ctx ends
// (the supervisor still stops the shell).
func (m *Manager) Kill(ctx context.Context, ref string, sig syscall.Signal, grace time.Duration) (*KillResult, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return nil, err
	}
	return m.kill(ctx, meta, sig, grace)
}

// KillSession stops every running shell of a session, all at once: one
// that cannot be reached does not keep the others running. Each result
// says what happened to its shell; the error names every failure.
func (m *Manager) KillSession(ctx context.Context, session string, sig syscall.Signal, grace time.Duration) ([]*KillResult, error) {
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	var targets []*Meta
	for _, meta := range m.List() {
		if meta.Session == session && !meta.Finished() {
			targets = append(targets, meta)
		}
	}
	out := make([]*KillResult, len(targets))
	done := make(chan int)
	for i, meta := range targets {
		go func() {
			r, err := m.kill(ctx, meta, sig, grace)
			if err != nil {
				r = &KillResult{Meta: meta, Err: err}
			}
			out[i] = r
			done <- i
		}()
	}
	for range targets {
		<-done
	}
	var errs []error
	for _, r := range out {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return out, errors.Join(errs...)
}

// confirmWait is how long past its grace a kill waits for the supervisor
// to confirm the end: the time to record it.
const confirmWait = 30 * time.Second

func (m *Manager) kill(ctx context.Context, meta *Meta, sig syscall.Signal, grace time.Duration) (*KillResult, error) {
	if !GracefulStop {
		sig, grace = syscall.Signal(9), 0 // the job object ends the tree at once
	}
	if meta.Finished() {
		return &KillResult{Meta: meta, AlreadyFinished: true}, nil
	}
	c, err := m.dialControl(ctx, meta.ID)
	if err != nil {
		// The supervisor is gone or not yet listening: look again.
		time.Sleep(50 * time.Millisecond)
		if cur, err2 := m.Find(meta.ID); err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur, AlreadyFinished: cur.Status != StatusLost}, nil
		}
		return nil, fmt.Errorf("cannot stop shell %s: %w", meta.ID, err)
	}
	defer c.Close()
	// The supervisor answers once the shell is gone: after the grace
	// period at most, plus the time to record the end.
	var final Meta
	if err := c.Kill(ctx, sig, grace, confirmWait, &final); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("stopped waiting for shell %s to end (%w); its supervisor goes on stopping it", meta.ID, ctx.Err())
		}
		// The supervisor died while stopping it; the shell died with it.
		cur, err2 := m.Find(meta.ID)
		if err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur}, nil
		}
		return nil, fmt.Errorf("shell %s's supervisor did not confirm the stop: %w", meta.ID, err)
	}
	if final.ID != meta.ID {
		return nil, fmt.Errorf("shell %s's supervisor answered something else than its end", meta.ID)
	}
	final.fill(time.Now())
	return &KillResult{Meta: &final}, nil
}

// ErrOrNil is r's error; nil for a nil result.
func (r *KillResult) ErrOrNil() error {
	if r == nil {
		return nil
	}
	return r.Err
}
