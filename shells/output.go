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

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// Limits of one output read: what it returns, and what it costs.
const (
	maxRead    = 64 << 10 // bytes of output one read returns at most
	firstLines = 200      // lines the first read of a shell returns
	maxWait    = 60 * time.Second
	pollEvery  = 20 * time.Millisecond
	// A filtered read looks at most maxScan bytes of the log (the next
	// read goes on from there), and judges a line on its first maxLine
	// bytes, which is all it keeps of it.
	maxScan = 64 << 20
	maxLine = maxRead - 512
)

// OutputOptions is one `cshell output`.
type OutputOptions struct {
	Wait     time.Duration  // block until new output or the end; at most maxWait
	Filter   *regexp.Regexp // keep matching lines only
	FromByte int64          // read from this absolute byte; -1: from the read position
	Color    bool           // Text keeps colour codes (for a terminal that asked)
	Plain    bool           // Text leaves out the terminal's control sequences (for a model)
	Words    *plan.Words    // how the notes tell to read on; nil: the command line's
}

// OutputResult is what one read returns; the JSON form is docs/cli.md's.
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
	raw   string   // the output as written; Output is it with invalid UTF-8 made visible
	color bool
	plain bool
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
	words := o.Words.Or()

	v, err := openLogView(dir)
	if err != nil {
		return nil, fmt.Errorf("read shell %s's log: %w", meta.ID, err)
	}
	from := cur.Byte
	switch {
	case explicit:
		from = o.FromByte
	case first:
		from = v.lastLinesWithin(firstLines, 2*maxRead)
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
		ExitCode: meta.ExitCode, Signal: meta.Signal, Violations: []policy.Violation{}, color: o.Color, plain: o.Plain}
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
			r.Notes = append(r.Notes, fmt.Sprintf("[cshell: %d more bytes follow; read them with %s]", r.SkippedBytes, words.ReadFrom(meta.ID, to)))
		}
	}
	c, err := m.collect(v, from, to, o.Filter)
	if err != nil {
		return nil, err
	}
	if c.start > from {
		r.SkippedBytes += c.start - from
		r.Notes = append(r.Notes, fmt.Sprintf("[cshell: skipped %d bytes; read them with %s]", c.start-from, words.ReadFrom(meta.ID, from)))
	}
	for _, l := range c.cut {
		r.Notes = append(r.Notes, fmt.Sprintf("[cshell: a matching line of %d bytes at byte %d is cut to its first %d; read it with %s]", l.size, l.off, maxLine, words.ReadFrom(meta.ID, l.off)))
	}
	if c.scanned < to {
		r.SkippedBytes += to - c.scanned
		r.Notes = append(r.Notes, fmt.Sprintf("[cshell: the filter looked at %d MiB of the log, up to byte %d; read again for the rest]", maxScan>>20, c.scanned))
		to = c.scanned
	}
	r.raw, r.FromByte, r.ToByte = string(c.out), from, to
	r.Output = escape.ValidUTF8(r.raw)

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
					r.Violations = append(r.Violations, inWords(v, o.Words, meta.Session))
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

// collected is what one read takes from the log.
type collected struct {
	out     []byte
	start   int64     // where out begins (matching lines before it were cut by the cap)
	scanned int64     // where the scan stopped: the end asked for, or the scan's bound
	cut     []cutSpan // matching lines kept only in part
}

type cutSpan struct{ off, size int64 }

// collect returns the newest maxRead bytes of [from, to) (of the matching
// lines, with a filter). Its cost is bounded too: memory by maxRead (plus
// a chunk), time by maxScan bytes looked at.
func (m *Manager) collect(v *logView, from, to int64, filter *regexp.Regexp) (collected, error) {
	if filter == nil {
		start := from
		if to-from > maxRead {
			start = alignForward(v, to-maxRead, to)
		}
		b, err := v.read(start, to)
		return collected{out: b, start: start, scanned: to}, err
	}
	type line struct {
		off  int64
		text []byte
	}
	var kept []line
	var cuts []cutSpan
	keptBytes, capped := 0, false
	stop := min(to, from+maxScan)
	pos := from
	// The line being read: its start, its first maxLine bytes, its length,
	// and whether it was judged already (a long line is, at maxLine).
	cur, curLen, judged := from, int64(0), false
	var buf []byte
	finish := func() {
		if !judged && filter.Match(bytes.TrimSuffix(buf, []byte("\n"))) {
			text := append([]byte{}, buf...)
			if curLen > int64(maxLine) {
				cuts = append(cuts, cutSpan{cur, curLen})
				text = append(text, '\n') // its cut end
			}
			kept = append(kept, line{cur, text})
			keptBytes += len(text)
			for keptBytes > maxRead && len(kept) > 1 {
				keptBytes -= len(kept[0].text)
				kept, capped = kept[1:], true
			}
		}
		judged = true
	}
	for pos < stop {
		chunk, err := v.read(pos, min(pos+1<<20, stop))
		if err != nil {
			return collected{}, err
		}
		if len(chunk) == 0 {
			break
		}
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			seg := chunk
			if i >= 0 {
				seg = chunk[:i+1]
			}
			if room := maxLine - len(buf); room > 0 {
				buf = append(buf, seg[:min(len(seg), room)]...)
			}
			curLen += int64(len(seg))
			pos += int64(len(seg))
			chunk = chunk[len(seg):]
			if curLen > int64(maxLine) && !judged {
				finish() // judged on its first maxLine bytes
			}
			if i >= 0 {
				finish()
				cur, curLen, judged, buf = pos, 0, false, buf[:0]
			}
		}
	}
	if curLen > 0 && pos >= to {
		finish() // the last line, not ended yet
	}
	var out []byte
	for _, l := range kept {
		out = append(out, l.text...)
	}
	c := collected{out: out, start: from, scanned: pos}
	if capped {
		c.start = kept[0].off // matching lines before it were cut
	}
	for _, cs := range cuts {
		if cs.off >= c.start {
			c.cut = append(c.cut, cs)
		}
	}
	return c, nil
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

// Text renders a result for people and agents: the status line, cshell's
// notes, the output made visible (see visible), then the violations. Only
// cshell's own lines start with "[cshell".
func (r *OutputResult) Text() string {
	var sb strings.Builder
	sb.WriteString(r.StatusLine + "\n")
	for _, n := range r.Notes {
		sb.WriteString(n + "\n")
	}
	raw := r.raw
	if r.plain {
		raw = escape.Strip(raw)
	}
	out := escape.Output(raw, r.color && !r.plain)
	sb.WriteString(out)
	if out != "" && !strings.HasSuffix(out, "\n") {
		sb.WriteString("\n")
	}
	for _, v := range r.Violations {
		sb.WriteString("violation: " + describeViolation(v) + "\n")
	}
	return sb.String()
}
