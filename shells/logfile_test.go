package shells

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeLines writes n numbered lines of 16 bytes through a capped writer.
func writeLines(t *testing.T, dir string, limit int64, n int) *logWriter {
	t.Helper()
	w, err := openLogWriter(testDir(t, dir), limit)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := fmt.Fprintf(w, "line %010d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func TestLogWriterRotatesAndKeepsOffsets(t *testing.T) {
	dir := t.TempDir()
	var trimmed int64
	w := writeLines(t, dir, 1<<10, 0)
	w.onTrim = func(d int64) { trimmed = d }
	for i := 0; i < 1000; i++ { // 16,000 bytes through a 1 KiB cap
		fmt.Fprintf(w, "line %010d\n", i)
	}
	w.Close()
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		total += info.Size()
	}
	if total > 2<<10+64 {
		t.Errorf("folder holds %d bytes; the cap is 1 KiB", total)
	}
	v, err := openLogView(testDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.end != 16000 {
		t.Errorf("end %d, want 16000", v.end)
	}
	if v.start != trimmed || v.start <= 0 || v.end-v.start > 2<<10 {
		t.Errorf("start %d (trimmed %d), end %d", v.start, trimmed, v.end)
	}
	// Every kept line sits at its absolute offset: line i at 16*i.
	for off := (v.start + 15) / 16 * 16; off < v.end; off += 16 {
		b, err := v.read(off, off+16)
		if err != nil || string(b) != fmt.Sprintf("line %010d\n", off/16) {
			t.Fatalf("at %d: %q %v", off, b, err)
		}
	}
	if b, _ := v.read(0, 16); len(b) != 0 {
		t.Errorf("dropped bytes read back: %q", b)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		content string
		n       int
		want    string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\nc\n", 5, "a\nb\nc\n"},
		{"", 3, ""},
		{"\n\n\n", 1, "\n"},
		{"only", 1, "only"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, logName), []byte(tc.content), 0o600)
		v, err := openLogView(testDir(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := v.read(v.lastLines(tc.n), v.end)
		v.Close()
		if string(b) != tc.want {
			t.Errorf("last %d of %q = %q, want %q", tc.n, tc.content, b, tc.want)
		}
	}
	// Across chunk boundaries: lines longer than nothing, a 300 KB log.
	dir := t.TempDir()
	w := writeLines(t, dir, 1<<30, 20000)
	w.Close()
	v, _ := openLogView(testDir(t, dir))
	defer v.Close()
	b, _ := v.read(v.lastLines(200), v.end)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 200 || lines[0] != "line 0000019800" {
		t.Errorf("%d lines from %q", len(lines), lines[0])
	}
}

func TestCollect(t *testing.T) {
	dir := t.TempDir()
	w := writeLines(t, dir, 1<<30, 10000) // 160,000 bytes
	w.Close()
	v, _ := openLogView(testDir(t, dir))
	defer v.Close()
	m := &Manager{}

	c, err := m.collect(v, 0, v.end, nil)
	if err != nil || len(c.out) != maxRead || c.start != v.end-maxRead || c.start%16 != 0 {
		t.Errorf("unfiltered: %d bytes from %d (%v)", len(c.out), c.start, err)
	}
	c, _ = m.collect(v, 100*16, 110*16, nil)
	if c.start != 1600 || !bytes.HasPrefix(c.out, []byte("line 0000000100\n")) || len(c.out) != 160 {
		t.Errorf("small range: %q from %d", c.out, c.start)
	}
	re := regexp.MustCompile(`7$`)
	c, _ = m.collect(v, 0, v.end, re)
	if c.start != 0 || bytes.Count(c.out, []byte("\n")) != 1000 || c.scanned != v.end {
		t.Errorf("filtered: %d lines from %d", bytes.Count(c.out, []byte("\n")), c.start)
	}
	// A filter keeping more than the cap keeps the newest matches.
	c, _ = m.collect(v, 0, v.end, regexp.MustCompile(`line`))
	if len(c.out) > maxRead || c.start == 0 || !bytes.HasSuffix(c.out, []byte("line 0000009999\n")) || c.start%16 != 0 {
		t.Errorf("filtered over the cap: %d bytes from %d", len(c.out), c.start)
	}
}

// TestCollectLongLines filters a log of very long lines: what comes back
// and what is held stay within the cap; a long matching line is cut and
// said so; a line without its end yet is judged too.
func TestCollectLongLines(t *testing.T) {
	dir := t.TempDir()
	w, err := openLogWriter(testDir(t, dir), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte("m"), 3<<20))
	w.Write([]byte("\nshort match\n"))
	w.Write(bytes.Repeat([]byte("n"), 3<<20))
	w.Close()
	v, _ := openLogView(testDir(t, dir))
	defer v.Close()
	m := &Manager{}
	for _, tc := range []struct {
		re   string
		cuts int
		want string
	}{
		{"m", 1, "short match\n"},
		{"^n", 1, ""},
		{"short", 0, "short match\n"},
	} {
		c, err := m.collect(v, 0, v.end, regexp.MustCompile(tc.re))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.out) > maxRead || len(c.cut) != tc.cuts || !bytes.Contains(c.out, []byte(tc.want)) || c.scanned != v.end {
			t.Errorf("%s: %d bytes, %d cut, scanned to %d of %d", tc.re, len(c.out), len(c.cut), c.scanned, v.end)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]string{"TERM": "TERM", "sigterm": "TERM", "SIGINT": "INT", "15": "TERM", "9": "KILL", "hup": "HUP", "1": "HUP"} {
		sig, err := ParseSignal(in)
		if err != nil || signalName(sig) != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %s", in, sig, err, want)
		}
	}
	for _, in := range []string{"", "BOGUS", "SIGSTOP", "0", "-1", "10"} {
		if _, err := ParseSignal(in); err == nil {
			t.Errorf("ParseSignal(%q) accepted", in)
		}
	}
}

func TestNextIDNeverReuses(t *testing.T) {
	m, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		var id string
		m.withLock(func() error { id, err = m.nextID(); return err })
		if seen[id] {
			t.Fatalf("id %s handed out twice", id)
		}
		seen[id] = true
		m.dir.Mkdir(shellFile(id), 0o700)
	}
	// A lost counter does not bring old ids back while their folders exist.
	os.Remove(filepath.Join(m.Dir(), "next-id"))
	var id string
	m.withLock(func() error { id, err = m.nextID(); return err })
	if seen[id] {
		t.Errorf("id %s reused after the counter was lost", id)
	}
}

func TestStatusLines(t *testing.T) {
	code0, code3 := 0, 3
	for _, tc := range []struct {
		m    Meta
		want string
	}{
		{Meta{Status: StatusExited, ExitCode: &code3}, "exited with 3 after 2.5s"},
		{Meta{Status: StatusExited, ExitCode: &code0}, "exited with 0 after 2.5s"},
		{Meta{Status: StatusKilled, Signal: "TERM"}, "killed by TERM after 2.5s"},
		{Meta{Status: StatusKilled, EndReason: "session"}, "killed (session ended)"},
		{Meta{Status: StatusTimedOut, Timeout: 30}, "timed out after 30s"},
		{Meta{Status: StatusLost}, "lost (its supervisor died)"},
	} {
		m := tc.m
		m.StartedAt = mustTime("2026-01-01T00:00:00Z")
		end := mustTime("2026-01-01T00:00:02.5Z")
		m.EndedAt = &end
		m.fill(end)
		if m.StatusLine != tc.want {
			t.Errorf("%s: %q, want %q", m.Status, m.StatusLine, tc.want)
		}
	}
}
