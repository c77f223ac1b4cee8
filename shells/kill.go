package shells

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// KillResult is what kill did to one shell.
type KillResult struct {
	Meta            *Meta
	AlreadyFinished bool
	Err             error // this shell could not be stopped (KillSession)
}

// Text is the line kill prints for a shell it stopped.
func (r *KillResult) Text() string {
	s := fmt.Sprintf("killed %s: %s", r.Meta.ID, sanitize(r.Meta.Command))
	if n := len(r.Meta.Escaped); n > 0 {
		s += fmt.Sprintf("; also killed %d process(es) that had left the shell's process group (pid %s)", n, joinInts(r.Meta.Escaped))
	}
	return s
}

// Kill sends sig to the shell's process group, and after grace kills
// everything left; it returns once the shell is gone.
func (m *Manager) Kill(ref string, sig syscall.Signal, grace time.Duration) (*KillResult, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return nil, err
	}
	return m.kill(meta, sig, grace)
}

// KillSession stops every running shell of a session, all at once: one
// that cannot be reached does not keep the others running. Each result
// says what happened to its shell; the error names every failure.
func (m *Manager) KillSession(session string, sig syscall.Signal, grace time.Duration) ([]*KillResult, error) {
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
			r, err := m.kill(meta, sig, grace)
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

func (m *Manager) kill(meta *Meta, sig syscall.Signal, grace time.Duration) (*KillResult, error) {
	if meta.Finished() {
		return &KillResult{Meta: meta, AlreadyFinished: true}, nil
	}
	c, _, err := m.dialControl(meta.ID)
	if err != nil {
		// The supervisor is gone or not yet listening: look again.
		time.Sleep(50 * time.Millisecond)
		if cur, err2 := m.Find(meta.ID); err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur, AlreadyFinished: cur.Status != StatusLost}, nil
		}
		return nil, fmt.Errorf("cannot stop shell %s: %w", meta.ID, err)
	}
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	if err := json.NewEncoder(c).Encode(request{Signal: sig, Grace: grace}); err != nil {
		return nil, fmt.Errorf("ask shell %s's supervisor to stop it: %w", meta.ID, err)
	}
	// The supervisor answers once the shell is gone: after the grace
	// period at most, plus the time to record the end.
	_ = c.SetReadDeadline(time.Now().Add(grace + 30*time.Second))
	line, err := bufio.NewReader(io.LimitReader(c, maxMeta)).ReadBytes('\n')
	if err != nil {
		// The supervisor died while stopping it; the shell died with it.
		cur, err2 := m.Find(meta.ID)
		if err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur}, nil
		}
		return nil, fmt.Errorf("shell %s's supervisor did not confirm the stop: %w", meta.ID, err)
	}
	var final Meta
	if err := json.Unmarshal(line, &final); err != nil || final.ID != meta.ID {
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
