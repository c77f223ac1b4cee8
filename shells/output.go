package shells

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/cshell/cshell/policy"
)

// Limits of one output read.
const (
	maxRead    = 64 << 10 // bytes of output one read returns at most
	firstLines = 200      // lines the first read of a shell returns
	maxWait    = 60 * time.Second
	pollEvery  = 20 * time.Millisecond
)

// OutputOptions is one `cshell output`.
type OutputOptions struct {
	Wait     time.Duration  // block until new output or the end; at most maxWait
	Filter   *regexp.Regexp // keep matching lines only
	FromByte int64          // read from this absolute byte; -1: from the read position
}

// OutputResult is what one read returns; the JSON form is CLI.md's.
type OutputResult struct {
	ID           string             `json:"id"`
	Status       string             `json:"status"`
	StatusLine   string             `json:"status_line"`
	ExitCode     *int               `json:"exit_code"`
	Signal       string             `json:"signal"`
	Output       string             `json:"output"`
	FromByte     int64              `json:"from_byte"`
	ToByte       int64              `json:"to_byte"`
	SkippedBytes int64              `json:"skipped_bytes"` // left out by the 64 KiB cap
	DroppedBytes int64              `json:"dropped_bytes"` // asked for, but dropped by the log cap
	Violations   []policy.Violation `json:"violations"`

	// Notes are the human lines about skipped and dropped bytes.
	Notes []string `json:"-"`
}

// cursor is a shell's read position, private to this package.
type cursor struct {
	Byte       int64 `json:"byte"`
	Violations int64 `json:"violations"`
}

// Output returns the output written since the last read of this shell
// (the last 200 lines on the first read), newest 64 KiB at most.
func (m *Manager) Output(ctx context.Context, ref string, o OutputOptions) (*OutputResult, error) {
	meta, err := m.Find(ref)
	if err != nil {
		return nil, err
	}
	dir, err := m.shellDir(meta.ID)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var cur cursor
	first := true
	if b, err := dir.ReadFile(cursorName, 4096); err == nil && json.Unmarshal(b, &cur) == nil && cur.Byte >= 0 && cur.Violations >= 0 {
		first = false
	}
	explicit := o.FromByte >= 0

	v, err := openLogView(dir)
	if err != nil {
		return nil, fmt.Errorf("read shell %s's log: %w", meta.ID, err)
	}
	from := cur.Byte
	switch {
	case explicit:
		from = o.FromByte
	case first:
		from = v.lastLines(firstLines)
	}
	// Wait for output past from, or the end.
	if wait := min(o.Wait, maxWait); wait > 0 && v.end <= from && !meta.Finished() {
		deadline := time.Now().Add(wait)
		for v.end <= from && !meta.Finished() && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(pollEvery)
			if cur, err := m.Find(meta.ID); err == nil {
				meta = cur
			}
			v.Close()
			if v, err = openLogView(dir); err != nil {
				return nil, err
			}
		}
	}
	defer v.Close()

	r := &OutputResult{ID: meta.ID, Status: meta.Status, StatusLine: meta.StatusLine,
		ExitCode: meta.ExitCode, Signal: meta.Signal, Violations: []policy.Violation{}}
	if from < v.start {
		r.DroppedBytes = v.start - from
		r.Notes = append(r.Notes, fmt.Sprintf("[cshell: %d bytes before byte %d were dropped by the log cap (shells.maxLogBytes)]", r.DroppedBytes, v.start))
		from = v.start
	}
	from = min(from, v.end)
	to := v.end
	if explicit {
		// Paging forward from a byte: the oldest 64 KiB, then the next.
		if to-from > maxRead {
			to = alignForward(v, from+maxRead, from)
			r.SkippedBytes = v.end - to
			r.Notes = append(r.Notes, fmt.Sprintf("[cshell: %d more bytes follow; read them with cshell output %s --from-byte %d]", r.SkippedBytes, meta.ID, to))
		}
	}
	out, start, err := m.collect(v, from, to, o.Filter)
	if err != nil {
		return nil, err
	}
	if start > from {
		r.SkippedBytes += start - from
		r.Notes = append(r.Notes, fmt.Sprintf("[cshell: skipped %d bytes; read them with cshell output %s --from-byte %d]", start-from, meta.ID, from))
	}
	r.Output, r.FromByte, r.ToByte = string(out), from, to

	// New violations follow the output, at most maxRead bytes of them a
	// read; a line longer than that (none is written so long now) is
	// passed over rather than left to block every later one.
	if f, err := dir.OpenFile(violationsName, os.O_RDONLY, 0); err == nil {
		if _, err := f.Seek(cur.Violations, 0); err == nil {
			rd := bufio.NewReaderSize(f, maxRead)
			for budget := maxRead; ; {
				line, err := rd.ReadSlice('\n')
				long := 0
				for err == bufio.ErrBufferFull {
					long += len(line)
					line, err = rd.ReadSlice('\n')
				}
				if err != nil { // the end, or a line still being written
					break
				}
				if long > 0 {
					cur.Violations += int64(long + len(line))
					continue
				}
				if len(line) > budget {
					r.Notes = append(r.Notes, "[cshell: more violations follow; read again to see them]")
					break
				}
				budget -= len(line)
				cur.Violations += int64(len(line))
				var v policy.Violation
				if json.Unmarshal(line, &v) == nil {
					r.Violations = append(r.Violations, v)
				}
			}
		}
		f.Close()
	}
	if !explicit {
		cur.Byte = to
		b, _ := json.Marshal(cur)
		if err := dir.WriteAtomic(cursorName, b, 0o600); err != nil {
			return nil, fmt.Errorf("save the read position: %w", err)
		}
	}
	return r, nil
}

// collect returns the newest maxRead bytes of [from, to) (of the matching
// lines, with a filter) and the offset where the returned part starts.
func (m *Manager) collect(v *logView, from, to int64, filter *regexp.Regexp) ([]byte, int64, error) {
	if filter == nil {
		start := from
		if to-from > maxRead {
			start = alignForward(v, to-maxRead, to)
		}
		b, err := v.read(start, to)
		return b, start, err
	}
	// Filtered: scan the range in chunks, keep matching lines, and keep
	// only the newest maxRead bytes of them.
	type line struct {
		off  int64
		text []byte
	}
	var kept []line
	keptBytes, capped := 0, false
	pos, lineStart := from, from
	var carry []byte
	for pos < to {
		n := min(int64(1<<20), to-pos)
		chunk, err := v.read(pos, pos+n)
		if err != nil {
			return nil, from, err
		}
		pos += n
		data := append(carry, chunk...)
		carry = nil
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 && pos < to {
				carry = append([]byte{}, data...)
				break
			}
			end := len(data)
			if i >= 0 {
				end = i + 1
			}
			text := data[:end]
			if filter.Match(bytes.TrimSuffix(text, []byte("\n"))) {
				kept = append(kept, line{lineStart, append([]byte{}, text...)})
				keptBytes += len(text)
			}
			lineStart += int64(end)
			data = data[end:]
		}
		for keptBytes > maxRead && len(kept) > 1 {
			keptBytes -= len(kept[0].text)
			kept, capped = kept[1:], true
		}
	}
	var out []byte
	for _, l := range kept {
		out = append(out, l.text...)
	}
	if capped {
		return out, kept[0].off, nil // matching lines before it were cut
	}
	return out, from, nil
}

// alignForward moves off forward to the start of the next line, unless
// no line starts before limit (then off stays: a line longer than a read).
func alignForward(v *logView, off, limit int64) int64 {
	lo, hi := off, limit
	if hi < lo {
		lo, hi = hi, lo
	}
	b, _ := v.read(off-1, min(off-1+4096, hi))
	if len(b) > 0 && b[0] == '\n' {
		return off
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 && off-1+int64(i)+1 < hi {
		return off - 1 + int64(i) + 1
	}
	return off
}

// Text renders a result for people: the status line, the output, then
// notes and violations.
func (r *OutputResult) Text() string {
	var sb strings.Builder
	sb.WriteString(r.StatusLine + "\n")
	for _, n := range r.Notes {
		sb.WriteString(n + "\n")
	}
	sb.WriteString(r.Output)
	if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
		sb.WriteString("\n")
	}
	for _, v := range r.Violations {
		sb.WriteString("violation: " + describeViolation(v) + "\n")
	}
	return sb.String()
}
