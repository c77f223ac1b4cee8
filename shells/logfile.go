package shells

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/cshell/cshell/internal/safefs"
)

// A shell's log is two files: output.log, the newest part, and
// output.log.1, the part before it. When output.log reaches the cap it
// becomes output.log.1 (dropping the older one), so the folder never holds
// more than twice the cap. Offsets are absolute: log-base holds the offset
// of output.log's first byte since the shell started.
// logWriter appends a shell's output, rotating at the cap. Only the
// supervisor writes; not safe for concurrent use.
type logWriter struct {
	dir    *safefs.Dir // the shell's folder
	cap    int64
	f      *os.File
	size   int64 // bytes in output.log
	base   int64 // absolute offset of output.log's first byte
	onTrim func(dropped int64)
}

func openLogWriter(dir *safefs.Dir, limit int64) (*logWriter, error) {
	f, err := dir.OpenFile(logName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logWriter{dir: dir, cap: limit, f: f, size: st.Size(), onTrim: func(int64) {}}, nil
}

func (w *logWriter) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if w.size >= w.cap {
			if err := w.rotate(); err != nil {
				return total, err
			}
		}
		n := int64(len(p))
		if room := w.cap - w.size; n > room {
			n = room
		}
		k, err := w.f.Write(p[:n])
		w.size += int64(k)
		total += k
		p = p[k:]
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// rotate turns output.log into output.log.1 under the log lock, so that a
// reader sees the files and the base change together.
func (w *logWriter) rotate() error {
	unlock, err := lockIn(w.dir, logLockName, "the shell's log")
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.dir.Rename(logName, oldLogName); err != nil {
		return err
	}
	f, err := w.dir.OpenFile(logName, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w.f.Close()
	w.f = f
	w.base += w.size
	w.size = 0
	if err := w.dir.WriteAtomic(logBaseName, []byte(strconv.FormatInt(w.base, 10)+"\n"), 0o600); err != nil {
		return err
	}
	w.onTrim(w.base - w.cap) // output.log.1 holds exactly cap bytes
	return nil
}

func (w *logWriter) Close() error { return w.f.Close() }

// logView is a consistent snapshot of a shell's log for reading: the
// oldest byte still kept (start) to the end as of opening.
type logView struct {
	start, end int64
	segs       []segment
}

type segment struct {
	f    *os.File
	abs  int64 // absolute offset of the file's first byte
	size int64
}

func openLogView(dir *safefs.Dir) (*logView, error) {
	unlock, err := lockIn(dir, logLockName, "the shell's log")
	if err != nil {
		return nil, err
	}
	defer unlock()
	var base int64
	if b, err := dir.ReadFile(logBaseName, 64); err == nil {
		base, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		base = max(base, 0)
	}
	v := &logView{start: base, end: base}
	if base > 0 {
		if f, size, err := openSegment(dir, oldLogName); err == nil {
			v.segs = append(v.segs, segment{f: f, abs: base - size, size: size})
			v.start = base - size
		}
	}
	f, size, err := openSegment(dir, logName)
	if errors.Is(err, fs.ErrNotExist) {
		return v, nil
	}
	if err != nil {
		v.Close()
		return nil, err
	}
	v.segs = append(v.segs, segment{f: f, abs: base, size: size})
	v.end = base + size
	return v, nil
}

// openSegment opens one of the log's files for reading; it must be a
// regular file.
func openSegment(dir *safefs.Dir, name string) (*os.File, int64, error) {
	f, err := dir.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", dir.Name(name), safefs.ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// ReadAt reads absolute offsets; bytes outside [start, end) read as EOF.
func (v *logView) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for _, s := range v.segs {
		if len(p) == 0 {
			break
		}
		if off+int64(n) < s.abs || off+int64(n) >= s.abs+s.size {
			continue
		}
		rel := off + int64(n) - s.abs
		want := min(int64(len(p)), s.size-rel)
		k, err := s.f.ReadAt(p[:want], rel)
		n += k
		p = p[k:]
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

// read returns bytes [from, to).
func (v *logView) read(from, to int64) ([]byte, error) {
	if to <= from {
		return nil, nil
	}
	b := make([]byte, to-from)
	n, err := v.ReadAt(b, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	return b[:n], nil
}

// lastLinesWithin is lastLines, looking back at most scan bytes: where
// the last n lines start, or end-scan if they start before.
func (v *logView) lastLinesWithin(n int, scan int64) int64 {
	w := *v
	w.start = max(v.start, v.end-scan)
	return w.lastLines(n)
}

// lastLines finds where the last n lines start, reading backwards in
// chunks: the cost follows the size of those lines, not of the log.
func (v *logView) lastLines(n int) int64 {
	if n <= 0 {
		return v.end
	}
	pos := v.end
	// A final newline ends the last line; it does not start a new one.
	if last, _ := v.read(v.end-1, v.end); len(last) == 1 && last[0] == '\n' {
		pos--
	}
	seen := 0
	buf := make([]byte, 64<<10)
	for pos > v.start {
		lo := max(v.start, pos-int64(len(buf)))
		chunk := buf[:pos-lo]
		k, _ := v.ReadAt(chunk, lo)
		chunk = chunk[:k]
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] == '\n' {
				seen++
				if seen == n {
					return lo + int64(i) + 1
				}
			}
		}
		pos = lo
	}
	return v.start
}

func (v *logView) Close() {
	for _, s := range v.segs {
		s.f.Close()
	}
}

// lastNewline returns the offset just past the last newline in [from, to),
// or from when there is none (or to, when that line is longer than a read
// can hold back: it is then written in pieces).
func (v *logView) lastNewline(from, to int64) int64 {
	buf := make([]byte, 64<<10)
	for hi := to; hi > from; {
		lo := max(from, hi-int64(len(buf)))
		k, _ := v.ReadAt(buf[:hi-lo], lo)
		if i := bytes.LastIndexByte(buf[:k], '\n'); i >= 0 {
			return lo + int64(i) + 1
		}
		hi = lo
		if to-hi > 1<<20 {
			return to
		}
	}
	return from
}

// nextLine returns the start of the first whole line at or after off:
// off itself when a line ends just before it.
func (v *logView) nextLine(off int64) int64 {
	if off <= v.start && off == 0 {
		return off
	}
	if b, _ := v.read(off-1, off); len(b) == 1 && b[0] == '\n' {
		return off
	}
	buf := make([]byte, 64<<10)
	for pos := off; pos < v.end; {
		k, _ := v.ReadAt(buf[:min(int64(len(buf)), v.end-pos)], pos)
		if k == 0 {
			break
		}
		if i := bytes.IndexByte(buf[:k], '\n'); i >= 0 {
			return pos + int64(i) + 1
		}
		pos += int64(k)
	}
	return v.end
}
