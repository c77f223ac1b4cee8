package shells

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Notice tells that a shell ended by itself; notices.jsonl holds one per
// line, oldest first.
type Notice struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Session        string    `json:"session"`
	Command        string    `json:"command"`
	Status         string    `json:"status"`
	StatusLine     string    `json:"status_line"`
	ExitCode       *int      `json:"exit_code"`
	RuntimeSeconds float64   `json:"runtime_seconds"`
	EndedAt        time.Time `json:"ended_at"`
	LastLines      []string  `json:"last_lines"`
	Level          string    `json:"level"` // wake or note
}

func (m *Manager) noticesPath() string { return filepath.Join(m.dir, "notices.jsonl") }

func (m *Manager) appendNotice(meta *Meta, level string) error {
	n := Notice{ID: meta.ID, Name: meta.Name, Session: meta.Session, Command: meta.Command,
		Status: meta.Status, StatusLine: meta.StatusLine, ExitCode: meta.ExitCode,
		RuntimeSeconds: meta.RuntimeSeconds, Level: level}
	if meta.EndedAt != nil {
		n.EndedAt = *meta.EndedAt
	}
	if v, err := openLogView(m.shellDir(meta.ID)); err == nil {
		b, _ := v.read(v.lastLines(10), v.end)
		v.Close()
		if s := strings.TrimRight(string(b), "\n"); s != "" {
			n.LastLines = strings.Split(s, "\n")
		}
	}
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	// One write with O_APPEND: concurrent supervisors do not interleave.
	f, err := os.OpenFile(m.noticesPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

// Events calls emit with each notice, oldest first; with follow it then
// waits for new ones until ctx ends.
func (m *Manager) Events(ctx context.Context, follow bool, emit func(Notice, []byte)) error {
	var off int64
	for {
		f, err := os.Open(m.noticesPath())
		if err == nil {
			if _, err := f.Seek(off, 0); err == nil {
				r := bufio.NewReader(f)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						break // a partial last line is read again next time
					}
					off += int64(len(line))
					var n Notice
					if json.Unmarshal(line, &n) == nil {
						emit(n, line[:len(line)-1])
					}
				}
			}
			f.Close()
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
}
