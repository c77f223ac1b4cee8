package shells

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cshell/cshell/plan"
)

// ReadyOptions says what "ready" means for a shell.
type ReadyOptions struct {
	Ports   []int          // accept a connection inside the shell; nil: none
	Log     *regexp.Regexp // a line of output matches; nil: none
	Timeout time.Duration
	Words   *plan.Words // nil: the command line's
}

// ErrNotReady means the timeout passed first; the shell keeps running.
var ErrNotReady = errors.New("not ready")

// ErrEnded means the shell ended before it was ready.
var ErrEnded = errors.New("ended before it was ready")

// readyError is a sentence for the user that still matches its sentinel.
type readyError struct {
	msg  string
	kind error
}

func (e *readyError) Error() string { return e.msg }
func (e *readyError) Unwrap() error { return e.kind }

// WaitReady blocks until the shell's ports accept connections inside it
// and/or a line of its output matches, the timeout passes (ErrNotReady,
// naming what was not ready), or the shell ends (ErrEnded).
func (m *Manager) WaitReady(ctx context.Context, ref string, o ReadyOptions) (*Meta, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(o.Timeout)
	portsReady := len(o.Ports) == 0
	logReady := o.Log == nil
	var logPos int64
	var carry []byte
	for {
		if !logReady {
			logReady, logPos, carry = m.scanLog(meta.ID, o.Log, logPos, carry)
		}
		if !portsReady {
			portsReady = m.probe(ctx, meta.ID, o.Ports)
		}
		if portsReady && logReady {
			return meta, nil
		}
		if meta.Finished() {
			return meta, &readyError{fmt.Sprintf("shell %s %s before it was ready", meta.ID, meta.StatusLine), ErrEnded}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			var what []string
			if !portsReady {
				what = append(what, fmt.Sprintf("port(s) %s accept no connection inside the shell", joinInts(o.Ports)))
			}
			if !logReady {
				what = append(what, fmt.Sprintf("no line of output matches %q", o.Log.String()))
			}
			return meta, &readyError{fmt.Sprintf("shell %s is not ready after %s: %s; it keeps running (%s shows why)",
				meta.ID, o.Timeout, strings.Join(what, ", and "), o.Words.Or().Show(meta.ID)), ErrNotReady}
		}
		time.Sleep(50 * time.Millisecond)
		if meta, err = m.Find(meta.ID); err != nil {
			return nil, err
		}
	}
}

// scanLog looks for a matching line in output written since pos.
func (m *Manager) scanLog(id string, re *regexp.Regexp, pos int64, carry []byte) (bool, int64, []byte) {
	dir, err := m.shellDir(id)
	if err != nil {
		return false, pos, carry
	}
	defer dir.Close()
	v, err := openLogView(dir)
	if err != nil {
		return false, pos, carry
	}
	defer v.Close()
	pos = max(pos, v.start)
	for pos < v.end {
		b, err := v.read(pos, min(v.end, pos+1<<20))
		if err != nil || len(b) == 0 {
			break
		}
		pos += int64(len(b))
		data := append(carry, b...)
		for {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			if re.Match(data[:i]) {
				return true, pos, nil
			}
			data = data[i+1:]
		}
		carry = append([]byte{}, data...)
		if len(carry) > 1<<20 { // a line that never ends: judge what we have
			if re.Match(carry) {
				return true, pos, nil
			}
			carry = carry[len(carry)-4096:]
		}
	}
	return false, pos, carry
}

// probe asks the supervisor whether the ports accept connections.
func (m *Manager) probe(ctx context.Context, id string, ports []int) bool {
	c, err := m.dialControl(ctx, id)
	if err != nil {
		return false
	}
	defer c.Close()
	ready, err := c.Probe(ctx, ports)
	return err == nil && !slices.Contains(ready, false)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
