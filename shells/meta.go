package shells

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cshell/cshell/control"
	"github.com/cshell/cshell/policy"
)

// Shell statuses, as meta.json and ps --json show them.
const (
	StatusStarting = "starting" // allocated; the supervisor is not up yet
	StatusRunning  = "running"
	StatusExited   = "exited"    // ended by itself
	StatusKilled   = "killed"    // stopped by kill, or its session ended
	StatusTimedOut = "timed_out" // stopped by --timeout
	StatusLost     = "lost"      // its supervisor died
)

// Exposed is one relayed port: the host address and the port inside, as
// the record and the supervisor's control socket tell it.
type Exposed = control.Port

// Meta is a shell's record, meta.json in its folder: everything ps --json
// shows, and the supervisor's identity. Written whole and atomically.
type Meta struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Session        string          `json:"session"`
	Command        string          `json:"command"`
	Description    string          `json:"description,omitempty"` // from the MCP bash tool
	Status         string          `json:"status"`
	StatusLine     string          `json:"status_line"`
	ExitCode       *int            `json:"exit_code"`
	Signal         string          `json:"signal"`
	Pid            int             `json:"pid"`
	PidTime        uint64          `json:"pid_start_time,omitempty"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        *time.Time      `json:"ended_at"`
	RuntimeSeconds float64         `json:"runtime_seconds"`
	Log            string          `json:"log"`
	Exposed        []Exposed       `json:"exposed"`
	AllowHosts     []string        `json:"allow_hosts"`
	Credentials    []CredentialUse `json:"credentials,omitempty"` // names and hosts, never values
	Workdir        string          `json:"workdir"`
	Isolation      string          `json:"isolation"`
	Timeout        float64         `json:"timeout_seconds,omitempty"`
	EndReason      string          `json:"end_reason,omitempty"`     // session, for killed (session ended)
	OwnerPid       int             `json:"owner_pid,omitempty"`      // the process whose end ends it (--owner-pid, an MCP server)
	OrphanedUntil  *time.Time      `json:"orphaned_until,omitempty"` // its MCP server ended: it ends then, unless a new one takes it over
	LogDropped     int64           `json:"log_dropped_bytes"`
	Limits         *policy.Limits  `json:"limits,omitempty"`
	LimitHit       string          `json:"limit_hit,omitempty"` // memory or pids: the bound that ended it
	AllowUserns    bool            `json:"allow_userns"`
	Escaped        []int           `json:"escaped_pids,omitempty"` // process runner: killed at the end, outside the group
	Token          string          `json:"token,omitempty"`        // process runner: what the shell's processes carry (container.TokenVar)
	Supervisor     int             `json:"supervisor_pid,omitempty"`
	SupervisorTime uint64          `json:"supervisor_start_time,omitempty"` // /proc start time, against pid reuse
}

// CredentialUse is a credential a shell's proxy adds: its name and the
// host pattern it may go to.
type CredentialUse struct {
	Name   string `json:"name"`
	Host   string `json:"host"`
	Header string `json:"header"`
}

// Finished reports whether the shell has ended, one way or another.
func (m *Meta) Finished() bool {
	return m.Status != StatusRunning && m.Status != StatusStarting
}

// fill computes the derived fields: runtime and the status line.
func (m *Meta) fill(now time.Time) {
	end := now
	if m.EndedAt != nil {
		end = *m.EndedAt
	}
	if !m.StartedAt.IsZero() {
		m.RuntimeSeconds = math.Round(end.Sub(m.StartedAt).Seconds()*10) / 10
	}
	rt := formatSeconds(m.RuntimeSeconds)
	switch m.Status {
	case StatusStarting:
		m.StatusLine = "starting"
	case StatusRunning:
		m.StatusLine = "running for " + rt
		if m.OrphanedUntil != nil {
			m.StatusLine = fmt.Sprintf("orphaned: its server ended; it ends in %s unless a new server of session %s takes it over",
				formatSeconds(math.Max(0, math.Round(m.OrphanedUntil.Sub(now).Seconds()))), m.Session)
		}
	case StatusExited:
		code := 0
		if m.ExitCode != nil {
			code = *m.ExitCode
		}
		m.StatusLine = fmt.Sprintf("exited with %d after %s", code, rt)
	case StatusKilled:
		if m.LimitHit != "" {
			var l policy.Limits
			if m.Limits != nil {
				l = *m.Limits
			}
			m.StatusLine = limitLine(m.LimitHit, l, time.Duration(m.RuntimeSeconds*float64(time.Second)))
		} else if m.EndReason == "session" {
			m.StatusLine = "killed (session ended)"
		} else {
			m.StatusLine = fmt.Sprintf("killed by %s after %s", orDefault(m.Signal, "KILL"), rt)
		}
	case StatusTimedOut:
		m.StatusLine = "timed out after " + formatSeconds(m.Timeout)
	case StatusLost:
		m.StatusLine = "lost (its supervisor died)"
	}
}

// limitLine tells which bound ended a shell: "killed: memory limit (64
// MiB) reached after 1.2s".
func limitLine(hit string, l policy.Limits, after time.Duration) string {
	what := "memory limit (" + policy.FormatSize(l.Memory) + ")"
	if hit == "pids" {
		what = fmt.Sprintf("process limit (%d)", l.Pids)
	}
	return fmt.Sprintf("killed: %s reached after %s", what, formatSeconds(math.Round(after.Seconds()*10)/10))
}

func formatSeconds(s float64) string {
	if s == math.Trunc(s) {
		return fmt.Sprintf("%.0fs", s)
	}
	return fmt.Sprintf("%.1fs", s)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// ErrCorrupt marks a meta.json that cannot be read.
var ErrCorrupt = errors.New("corrupt shell record")

// maxMeta bounds a record: cshell writes a few KiB (the command is at most
// 128 KiB); anything larger was not written by cshell.
const maxMeta = 1 << 20

// readMeta reads a shell's record. Its id is the folder's name, whatever
// the record says: a record is data, never a path.
func (m *Manager) readMeta(id string) (*Meta, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%w %s", ErrNotFound, id)
	}
	b, err := m.dir.ReadFile(shellFile(id, metaName), maxMeta)
	if err != nil {
		return nil, err
	}
	var meta Meta
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCorrupt, m.dir.Name(shellFile(id, metaName)), err)
	}
	if meta.ID != id {
		return nil, fmt.Errorf("%w %s: %w", ErrCorrupt, m.dir.Name(shellFile(id, metaName)), errors.New("its id is not its folder's"))
	}
	return &meta, nil
}

// writeMeta replaces a shell's meta.json atomically.
func (m *Manager) writeMeta(meta *Meta) error {
	meta.fill(time.Now())
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return m.dir.WriteAtomic(shellFile(meta.ID, metaName), append(b, '\n'), 0o600)
}
