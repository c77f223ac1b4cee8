package shells

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Logs writes the last n lines of a shell's log (all when n < 0) to w;
// with follow it goes on until the shell ends, writing whole lines only,
// and says so in a line of its own when bytes were rotated out (the log
// cap) before it could read them. It moves no read position. show, when
// set, turns what is written into what may be shown (see visible).
func (m *Manager) Logs(ctx context.Context, ref string, n int, follow bool, show func(string) string, w io.Writer) error {
	meta, err := m.Find(ref)
	if err != nil {
		return err
	}
	dir, err := m.shellDir(meta.ID)
	if err != nil {
		return err
	}
	defer dir.Close()
	v, err := openLogView(dir)
	if err != nil {
		return err
	}
	write := func(b []byte) error {
		if show != nil {
			b = []byte(show(string(b)))
		}
		_, err := w.Write(b)
		return err
	}
	pos := v.start
	if n >= 0 {
		pos = v.lastLines(n)
	} else if v.start > 0 {
		// The cap dropped the log's beginning: say so, and start at a line.
		pos = v.nextLine(v.start)
		if _, err := fmt.Fprintf(w, "[cshell: %d bytes were dropped by the log cap (shells.maxLogBytes) before this]\n", pos); err != nil {
			v.Close()
			return err
		}
	}
	for {
		upto := v.end
		if follow && !meta.Finished() {
			upto = v.lastNewline(pos, v.end) // a line still being written waits for its end
		}
		for pos < upto {
			b, err := v.read(pos, min(upto, pos+1<<20))
			if err == nil && len(b) == 0 {
				err = io.ErrUnexpectedEOF
			}
			if err == nil {
				err = write(b)
			}
			if err != nil {
				v.Close()
				return err
			}
			pos += int64(len(b))
		}
		v.Close()
		if !follow || meta.Finished() || ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pollEvery * 5):
		}
		if meta, err = m.Find(meta.ID); err != nil {
			return err
		}
		if v, err = openLogView(dir); err != nil {
			return err
		}
		if pos < v.start {
			// Rotated out before we could read it: say how much, and go on
			// at the next whole line, never joining two fragments.
			next := v.nextLine(v.start)
			if _, err := fmt.Fprintf(w, "[cshell: %d bytes were rotated out before they could be read (shells.maxLogBytes)]\n", next-pos); err != nil {
				v.Close()
				return err
			}
			pos = next
		}
	}
}
