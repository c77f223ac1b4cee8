package shells

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/policy"
)

// Notice tells that a shell ended by itself, or (Event "refused") that a
// shell was refused a host; notices.jsonl holds one per line, oldest
// first.
type Notice struct {
	Event          string    `json:"event,omitempty"` // "refused" or "limit"; empty for an end
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Session        string    `json:"session"`
	Command        string    `json:"command"`
	Status         string    `json:"status"`
	StatusLine     string    `json:"status_line"`
	ExitCode       *int      `json:"exit_code"`
	Signal         string    `json:"signal,omitempty"` // the signal that ended it, if one did
	RuntimeSeconds float64   `json:"runtime_seconds"`
	EndedAt        time.Time `json:"ended_at"`
	LastLines      []string  `json:"last_lines"`
	Level          string    `json:"level"` // wake or note
	// A refusal: the host and port asked for, and when.
	Host string    `json:"host,omitempty"`
	Port int       `json:"port,omitempty"`
	Time time.Time `json:"time,omitzero"`
	// A limit that acted while the shell ran on: which, and what it did.
	Limit  string `json:"limit,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Refused reports whether the notice is a refusal, not an end.
func (n Notice) Refused() bool { return n.Event == eventRefused }

// LimitHit reports whether the notice tells of a limit that acted (a
// process the memory limit ended), not of an end.
func (n Notice) LimitHit() bool { return n.Event == eventLimit }

// WriteRefused reports whether the notice tells of a write the shell's
// view of the files refused.
func (n Notice) WriteRefused() bool { return n.Event == eventWrite }

// Told reports whether the notice tells of something that happened while
// a shell ran on (a limit that acted, a refused write): not an end, not a
// refused host.
func (n Notice) Told() bool { return n.LimitHit() || n.WriteRefused() }

const (
	eventRefused = "refused"
	eventLimit   = "limit"
	eventWrite   = "write"
)

// toldEvents returns what records a shell's violations (record) and tells
// each that happened while the shell ran on (a limit that acted: event
// "limit"; a refused write: event "write") as an event of notices.jsonl
// (id "" for a foreground shell), at most 100 a shell.
func (m *Manager) toldEvents(id, session, command string, record func(policy.Violation)) func(policy.Violation) {
	var mu sync.Mutex
	told := 0
	return func(v policy.Violation) {
		record(v)
		event := eventLimit
		switch v.Method {
		case "memory":
		case "write", "privilege":
			event = eventWrite
		default:
			return
		}
		mu.Lock()
		told++
		n := told
		mu.Unlock()
		if n > 100 {
			return
		}
		ev := limitEvent{Event: event, ID: id, Session: session, Command: cutLine(command, noticeLineMax), Detail: v.Rule, Time: v.Time}
		if event == eventLimit {
			ev.Limit = v.Method
		} else if v.Hint != "" {
			ev.Detail += "; " + v.Hint
		}
		b, err := json.Marshal(ev)
		if err == nil {
			_ = m.appendNoticeLine(b)
		}
	}
}

// limitEvent is a limit's line of notices.jsonl.
type limitEvent struct {
	Event   string    `json:"event"`
	ID      string    `json:"id"`
	Session string    `json:"session"`
	Command string    `json:"command"`
	Limit   string    `json:"limit,omitempty"`
	Detail  string    `json:"detail"`
	Time    time.Time `json:"time"`
}

// refusedEvery is how often one shell's refusal of one host and port is
// told again: a client retrying in a loop must not fill notices.jsonl.
const refusedEvery = time.Minute

// refusals returns what tells of a shell's refusals (id "" for a
// foreground shell), each host and port at most once a refusedEvery.
func (m *Manager) refusals(id, session, command string) func(host string, port int) {
	var mu sync.Mutex
	last := map[string]time.Time{}
	return func(host string, port int) {
		key := fmt.Sprintf("%s:%d", host, port)
		mu.Lock()
		if t, ok := last[key]; ok && time.Since(t) < refusedEvery {
			mu.Unlock()
			return
		}
		if len(last) > 4096 { // a shell that tries every host: forget, stay bounded
			clear(last)
		}
		last[key] = time.Now()
		mu.Unlock()
		b, err := json.Marshal(refusedEvent{Event: eventRefused, ID: id, Session: session, Command: cutLine(command, noticeLineMax),
			Host: printableHost(host), Port: port, Time: time.Now().UTC()})
		if err == nil {
			_ = m.appendNoticeLine(b)
		}
	}
}

// refusedEvent is a refusal's line of notices.jsonl: the fields of a
// Notice that a refusal has (id empty for a foreground shell).
type refusedEvent struct {
	Event   string    `json:"event"`
	ID      string    `json:"id"`
	Session string    `json:"session"`
	Command string    `json:"command"`
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Time    time.Time `json:"time"`
}

// printableHost bounds what a shell asked for before it is written down.
func printableHost(h string) string {
	if len(h) > 255 {
		h = h[:255]
	}
	return escape.Line(h)
}

// Bounds of a notice: whatever the shell printed, a notice stays small
// (under about 4 KiB), and so do notices.jsonl and every message made of
// one.
const (
	noticeLines    = 10       // last lines of output a notice carries
	noticeLineMax  = 300      // bytes of each; a longer line keeps its end
	noticeScan     = 16 << 10 // bytes of the log's end read to find them
	maxNoticesFile = 1 << 20  // notices.jsonl rotates past this
	maxNoticeLine  = 64 << 10 // longer lines in notices.jsonl were not written by cshell
)

// noticeFor makes the notice of a shell's end, from its record and the
// end of its log.
func (m *Manager) noticeFor(meta *Meta, level string) Notice {
	n := Notice{ID: meta.ID, Name: meta.Name, Session: meta.Session, Command: cutLine(meta.Command, noticeLineMax),
		Status: meta.Status, StatusLine: meta.StatusLine, ExitCode: meta.ExitCode, Signal: meta.Signal,
		RuntimeSeconds: meta.RuntimeSeconds, Level: level}
	if meta.EndedAt != nil {
		n.EndedAt = *meta.EndedAt
	}
	if d, err := m.shellDir(meta.ID); err == nil {
		if v, err := openLogView(d); err == nil {
			n.LastLines = v.tailLines(noticeLines, noticeScan)
			v.Close()
		}
		d.Close()
	}
	for i, l := range n.LastLines {
		n.LastLines[i] = cutLine(l, noticeLineMax)
	}
	return n
}

// EndNotice returns the notice of a finished shell's end, however it
// ended (whether or not one was sent), with its record.
func (m *Manager) EndNotice(ref string) (Notice, *Meta, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return Notice{}, nil, err
	}
	if !meta.Finished() {
		return Notice{}, meta, fmt.Errorf("shell %s is still %s", meta.ID, meta.StatusLine)
	}
	return m.noticeFor(meta, ""), meta, nil
}

func (m *Manager) appendNotice(meta *Meta, level string) error {
	b, err := json.Marshal(m.noticeFor(meta, level))
	if err != nil {
		return err
	}
	return m.appendNoticeLine(b)
}

// appendNoticeLine appends one line to notices.jsonl, rotating it past
// maxNoticesFile.
func (m *Manager) appendNoticeLine(b []byte) error {
	return m.withLock(func() error {
		if st, err := m.dir.Lstat(noticesName); err == nil && st.Size+int64(len(b))+1 > maxNoticesFile {
			if err := m.dir.Rename(noticesName, oldNoticesName); err != nil {
				return err
			}
		}
		// One write with O_APPEND, under the lock: notices never interleave.
		f, err := m.dir.OpenFile(noticesName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Write(append(b, '\n'))
		return err
	})
}

// cutMark starts a line of which only the end is kept.
const cutMark = "[…] "

// cutLine keeps the last max bytes of a long line (whole UTF-8 runes),
// after cutMark.
func cutLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return cutMark + strings.TrimPrefix(s[cut:], cutMark)
}

// tailLines returns the last n lines of the log, reading at most scan
// bytes of its end: a longer last line comes back as its end.
func (v *logView) tailLines(n int, scan int64) []string {
	from := max(v.start, v.end-scan)
	b, err := v.read(from, v.end)
	if err != nil || len(b) == 0 {
		return nil
	}
	s := strings.TrimRight(string(b), "\n")
	lines := strings.Split(s, "\n")
	if from > v.start && len(lines) > 1 {
		lines = lines[1:] // the first may have begun before from
	} else if from > v.start {
		lines[0] = cutMark + lines[0] // one line longer than scan
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}

// Events calls emit with each notice, oldest first; with follow it then
// waits for new ones until ctx ends.
func (m *Manager) Events(ctx context.Context, follow bool, emit func(Notice, []byte)) error {
	// What was rotated out first, then the current file, followed by its
	// identity: when it is rotated, the rest of it is read from its new
	// name before the new file.
	if st, err := m.dir.Lstat(oldNoticesName); err == nil && st.Mode.IsRegular() {
		m.readNotices(oldNoticesName, 0, emit)
	}
	var off int64
	var ident uint64
	for {
		st, err := m.dir.Lstat(noticesName)
		if err == nil && st.Mode.IsRegular() {
			if ident != 0 && st.Ino != ident {
				if old, err := m.dir.Lstat(oldNoticesName); err == nil && old.Ino == ident {
					m.readNotices(oldNoticesName, off, emit)
				}
				off = 0
			}
			ident = st.Ino
			if st.Size < off { // replaced where inodes tell nothing
				off = 0
			}
			off = m.readNotices(noticesName, off, emit)
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

// readNotices emits the whole lines of a notices file from off and
// returns the offset after the last one.
func (m *Manager) readNotices(name string, off int64, emit func(Notice, []byte)) int64 {
	f, err := m.dir.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return off
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return off
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return off
	}
	r := bufio.NewReaderSize(f, maxNoticeLine)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Not cshell's: pass over it once it ends.
			long := int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long += int64(len(line))
			}
			if err != nil {
				return off
			}
			off += long
			continue
		}
		if err != nil {
			return off // a partial last line is read again next time
		}
		off += int64(len(line))
		var n Notice
		if json.Unmarshal(line, &n) == nil && (validID(n.ID) || (n.Refused() || n.Told()) && n.ID == "") {
			emit(n, append([]byte(nil), line[:len(line)-1]...))
		}
	}
}
