package shells

import (
	"bufio"
	"encoding/json"
	"fmt"
	"syscall"
	"time"
)

// KillResult is what kill did to one shell.
type KillResult struct {
	Meta            *Meta
	AlreadyFinished bool
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

// KillSession stops every running shell of a session.
func (m *Manager) KillSession(session string, sig syscall.Signal, grace time.Duration) ([]*KillResult, error) {
	var out []*KillResult
	for _, meta := range m.List() {
		if meta.Session != session || meta.Finished() {
			continue
		}
		r, err := m.kill(meta, sig, grace)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (m *Manager) kill(meta *Meta, sig syscall.Signal, grace time.Duration) (*KillResult, error) {
	if meta.Finished() {
		return &KillResult{Meta: meta, AlreadyFinished: true}, nil
	}
	c, err := dialControl(m.shellDir(meta.ID))
	if err != nil {
		// The supervisor is gone or not yet listening: look again.
		time.Sleep(50 * time.Millisecond)
		if cur, err2 := m.Find(meta.ID); err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur, AlreadyFinished: cur.Status != StatusLost}, nil
		}
		return nil, fmt.Errorf("reach shell %s's supervisor: %v", meta.ID, err)
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(request{Signal: sig, Grace: grace}); err != nil {
		return nil, fmt.Errorf("ask shell %s's supervisor to stop it: %w", meta.ID, err)
	}
	// The supervisor answers once the shell is gone: after the grace
	// period at most, plus the time to record the end.
	_ = c.SetReadDeadline(time.Now().Add(grace + 30*time.Second))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		// The supervisor died while stopping it; the shell died with it.
		cur, err2 := m.Find(meta.ID)
		if err2 == nil && cur.Finished() {
			return &KillResult{Meta: cur}, nil
		}
		return nil, fmt.Errorf("shell %s's supervisor did not confirm the stop: %v", meta.ID, err)
	}
	var final Meta
	if err := json.Unmarshal(line, &final); err != nil {
		return nil, fmt.Errorf("shell %s's supervisor answered garbage: %v", meta.ID, err)
	}
	final.fill(time.Now())
	return &KillResult{Meta: &final}, nil
}
