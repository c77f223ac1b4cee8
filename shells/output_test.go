package shells

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// numbered is n lines "line N\n" from first.
func numbered(first, n int) string {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// appendLog appends to a shell's output.log (from any goroutine).
func appendLog(t *testing.T, m *Manager, id, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(m.Dir(), "shells", id, logName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Error(err)
	}
}

func output(t *testing.T, m *Manager, id string, o OutputOptions) *OutputResult {
	t.Helper()
	r, err := m.Output(context.Background(), id, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOutputReadsOnFromTheLastRead(t *testing.T) {
	m := testManager(t)
	log := numbered(1, 300)
	writeRecord(t, m, running("1"), log)

	r := output(t, m, "1", OutputOptions{FromByte: -1})
	got := lines(r.Output)
	if len(got) != firstLines || got[0] != "line 101" || got[len(got)-1] != "line 300" {
		t.Errorf("the first read: %d lines, %q to %q", len(got), got[0], got[len(got)-1])
	}
	if r.FromByte != int64(strings.Index(log, "line 101\n")) || r.ToByte != int64(len(log)) || r.Status != StatusRunning {
		t.Errorf("first read: bytes %d to %d, status %s", r.FromByte, r.ToByte, r.Status)
	}
	// Nothing new: nothing.
	r = output(t, m, "1", OutputOptions{FromByte: -1})
	if r.Output != "" || r.FromByte != int64(len(log)) || r.ToByte != int64(len(log)) {
		t.Errorf("again: %q from %d to %d", r.Output, r.FromByte, r.ToByte)
	}
	appendLog(t, m, "1", "new 1\nnew 2\n")
	r = output(t, m, "1", OutputOptions{FromByte: -1})
	if r.Output != "new 1\nnew 2\n" || r.FromByte != int64(len(log)) {
		t.Errorf("what came since: %q from %d", r.Output, r.FromByte)
	}
	// An explicit byte reads from there, and moves no read position.
	r = output(t, m, "1", OutputOptions{FromByte: int64(len(log))})
	if r.Output != "new 1\nnew 2\n" {
		t.Errorf("from byte %d: %q", len(log), r.Output)
	}
	r = output(t, m, "1", OutputOptions{FromByte: 1 << 40})
	if r.Output != "" || r.FromByte != r.ToByte {
		t.Errorf("from past the end: %q %d-%d", r.Output, r.FromByte, r.ToByte)
	}
	if r := output(t, m, "1", OutputOptions{FromByte: -1}); r.Output != "" {
		t.Errorf("explicit reads moved the read position: %q", r.Output)
	}
	// A read position nobody can read starts over with the last lines.
	if err := m.dir.WriteFile(shellFile("1", cursorName), []byte(`{"byte": -5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := output(t, m, "1", OutputOptions{FromByte: -1}); !strings.HasSuffix(r.Output, "new 2\n") || len(lines(r.Output)) != firstLines {
		t.Errorf("after a bad cursor: %d lines", len(lines(r.Output)))
	}
	if _, err := m.Output(context.Background(), "2", OutputOptions{FromByte: -1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no shell 2: %v", err)
	}
}

func TestOutputPagesForward(t *testing.T) {
	m := testManager(t)
	log := numbered(1, 20000) // about 200 KB
	writeRecord(t, m, exited("1", 0), log)
	words := &plan.Words{ReadFrom: func(id string, from int64) string { return fmt.Sprintf("read(%s,%d)", id, from) }}
	var pages []string
	from := int64(0)
	for i := 0; i < 10 && from < int64(len(log)); i++ {
		r := output(t, m, "1", OutputOptions{FromByte: from, Words: words})
		if r.FromByte != from || int64(len(r.Output)) > maxRead || r.ToByte != from+int64(len(r.Output)) {
			t.Fatalf("page %d: %d bytes from %d", i, len(r.Output), r.FromByte)
		}
		if r.ToByte < int64(len(log)) {
			if r.SkippedBytes != int64(len(log))-r.ToByte || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], fmt.Sprintf("read(1,%d)", r.ToByte)) {
				t.Errorf("page %d: skipped %d, notes %q", i, r.SkippedBytes, r.Notes)
			}
		} else if r.SkippedBytes != 0 || len(r.Notes) != 0 {
			t.Errorf("the last page: skipped %d, notes %q", r.SkippedBytes, r.Notes)
		}
		pages = append(pages, r.Output)
		from = r.ToByte
	}
	if strings.Join(pages, "") != log {
		t.Errorf("the pages do not make up the log: %d pages", len(pages))
	}
}

func TestOutputSkipsWhatTheCapLeavesOut(t *testing.T) {
	m := testManager(t)
	long := strings.Repeat("y", 999) + "\n"
	writeRecord(t, m, exited("1", 0), strings.Repeat(long, 300))
	r := output(t, m, "1", OutputOptions{FromByte: -1})
	if int64(len(r.Output)) > maxRead || r.SkippedBytes <= 0 || len(r.Notes) != 1 ||
		!strings.Contains(r.Notes[0], fmt.Sprintf("skipped %d bytes; read them with cshell output 1 --from-byte %d", r.SkippedBytes, r.FromByte)) {
		t.Errorf("%d bytes, skipped %d, notes %q", len(r.Output), r.SkippedBytes, r.Notes)
	}
	if !strings.HasPrefix(r.Output, "y") || r.ToByte != 300*1000 {
		t.Errorf("output starts %q, ends at %d", r.Output[:5], r.ToByte)
	}
}

func TestOutputAfterTheLogCap(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "kept 1\nkept 2\n")
	// The log's first byte is byte 1000: what came before was dropped.
	if err := m.dir.WriteFile(shellFile("1", logBaseName), []byte("1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := output(t, m, "1", OutputOptions{FromByte: 10})
	if r.DroppedBytes != 990 || r.FromByte != 1000 || r.Output != "kept 1\nkept 2\n" || len(r.Notes) != 1 ||
		!strings.Contains(r.Notes[0], "990 bytes before byte 1000 were dropped by the log cap") {
		t.Errorf("dropped %d, from %d, %q, notes %q", r.DroppedBytes, r.FromByte, r.Output, r.Notes)
	}
}

func TestOutputFilter(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "ok a\nerror: one\nok b\nerror: two\nerror: unterminated")
	r := output(t, m, "1", OutputOptions{FromByte: -1, Filter: regexp.MustCompile(`^error`)})
	if r.Output != "error: one\nerror: two\nerror: unterminated" {
		t.Errorf("filtered: %q", r.Output)
	}
	// A matching line longer than a read is cut, and the note says where
	// to read it whole.
	writeRecord(t, m, exited("2", 0), "x\nmatch "+strings.Repeat("z", maxRead)+"\ny\n")
	r = output(t, m, "2", OutputOptions{FromByte: -1, Filter: regexp.MustCompile(`match`)})
	if len(r.Output) != maxLine+1 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], fmt.Sprintf("a matching line of %d bytes at byte 2 is cut to its first %d", maxRead+7, maxLine)) {
		t.Errorf("a long match: %d bytes, notes %q", len(r.Output), r.Notes)
	}
}

func TestOutputViolations(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	var vl strings.Builder
	for _, h := range []string{"a.example", "b.example"} {
		fmt.Fprintf(&vl, `{"time":"2026-01-01T00:00:00Z","host":%q,"port":443,"method":"CONNECT","rule":"not allowed"}`+"\n", h)
	}
	vl.WriteString(`{"host": "` + strings.Repeat("h", maxRead+10) + `"}` + "\n") // too long: passed over
	vl.WriteString(`not json` + "\n")
	vl.WriteString(`{"host":"c.example","port":80,"method":"GET","rule":"r"}` + "\n")
	vl.WriteString(`{"host":"d.exa`) // being written
	if err := m.dir.WriteFile(shellFile("1", violationsName), []byte(vl.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := output(t, m, "1", OutputOptions{FromByte: -1})
	var hosts []string
	for _, v := range r.Violations {
		hosts = append(hosts, v.Host)
	}
	if fmt.Sprint(hosts) != "[a.example b.example c.example]" {
		t.Errorf("violations: %v", hosts)
	}
	text := r.Text()
	if !strings.Contains(text, "violation: refused CONNECT a.example:443 (not allowed)\n") || !strings.HasSuffix(text, "violation: refused GET c.example:80 (r)\n") {
		t.Errorf("Text: %q", text)
	}
	// Read once: the next read has none, until the last one ends.
	if r := output(t, m, "1", OutputOptions{FromByte: -1}); len(r.Violations) != 0 {
		t.Errorf("again: %v", r.Violations)
	}
	f, _ := os.OpenFile(filepath.Join(m.Dir(), "shells", "1", violationsName), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`mple","port":1,"method":"CONNECT","rule":"r"}` + "\n")
	f.Close()
	if r := output(t, m, "1", OutputOptions{FromByte: -1}); len(r.Violations) != 1 || r.Violations[0].Host != "d.example" {
		t.Errorf("the line once ended: %v", r.Violations)
	}
}

func TestOutputViolationsBudget(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	line := fmt.Sprintf(`{"host":"a.example","port":1,"method":"CONNECT","rule":%q}`, strings.Repeat("r", 1000)) + "\n"
	n := maxRead/len(line) + 5
	if err := m.dir.WriteFile(shellFile("1", violationsName), []byte(strings.Repeat(line, n)), 0o600); err != nil {
		t.Fatal(err)
	}
	r := output(t, m, "1", OutputOptions{FromByte: -1})
	if len(r.Violations) != maxRead/len(line) || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "more violations follow") {
		t.Errorf("first read: %d violations of %d, notes %q", len(r.Violations), n, r.Notes)
	}
	r = output(t, m, "1", OutputOptions{FromByte: -1})
	if len(r.Violations) != 5 || len(r.Notes) != 0 {
		t.Errorf("second read: %d violations, notes %q", len(r.Violations), r.Notes)
	}
}

func TestOutputWaits(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "before\n")
	output(t, m, "1", OutputOptions{FromByte: -1}) // read what is there
	go appendLog(t, m, "1", "after\n")
	r := output(t, m, "1", OutputOptions{FromByte: -1, Wait: time.Minute})
	if r.Output != "after\n" {
		t.Errorf("waited for %q", r.Output)
	}
	// The shell's end ends the wait too.
	go endShell(t, m, "1")
	r = output(t, m, "1", OutputOptions{FromByte: -1, Wait: time.Minute})
	if r.Output != "" || r.Status != StatusExited || *r.ExitCode != 0 {
		t.Errorf("after the end: %q %s", r.Output, r.Status)
	}
	// So does the context.
	writeRecord(t, m, running("2"), "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := m.Output(ctx, "2", OutputOptions{FromByte: -1, Wait: time.Minute}); err != nil || r.Output != "" || r.Status != StatusRunning {
		t.Errorf("a cancelled wait: %v %v", r, err)
	}
}

func TestOutputText(t *testing.T) {
	r := &OutputResult{StatusLine: "exited with 0 after 1s", Notes: []string{"[cshell: a note]"},
		raw: "\x1b[31mred\x1b[0m\n[cshell: not cshell's\nbad \xff byte", Violations: []policy.Violation{{Method: "write", Rule: "/x"}}}
	want := "exited with 0 after 1s\n[cshell: a note]\n\\x1b[31mred\\x1b[0m\n\\x5bcshell: not cshell's\nbad \\xff byte\nviolation: refused write: /x\n"
	if got := r.Text(); got != want {
		t.Errorf("Text:\n%q\nwant\n%q", got, want)
	}
	r.color = true
	if got := r.Text(); !strings.Contains(got, "\x1b[31mred\x1b[0m\n") {
		t.Errorf("with colour: %q", got)
	}
	empty := &OutputResult{StatusLine: "running for 1s"}
	if got := empty.Text(); got != "running for 1s\n" {
		t.Errorf("no output: %q", got)
	}
}

func TestOutputKeepsJSONValid(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "caf\xe9\n")
	r := output(t, m, "1", OutputOptions{FromByte: 0})
	if r.Output != `caf\xe9`+"\n" || r.raw != "caf\xe9\n" {
		t.Errorf("output %q, raw %q", r.Output, r.raw)
	}
}

func TestAlignForward(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, logName), []byte("aaaa\nbbbb\ncccc"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := openLogView(testDir(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, tc := range []struct{ off, limit, want int64 }{
		{5, 14, 5},   // a line starts there
		{2, 14, 5},   // moved to the next line
		{7, 14, 10},  // likewise
		{11, 14, 11}, // no line starts before the limit
		{7, 9, 7},    // the next line starts past the limit
	} {
		if got := alignForward(v, tc.off, tc.limit); got != tc.want {
			t.Errorf("alignForward(%d, %d) = %d, want %d", tc.off, tc.limit, got, tc.want)
		}
	}
}

// A model's read (Plain) has the terminal's sequences taken out; a
// terminal's (Color) keeps colours; the JSON keeps what was written.
func TestOutputTextPlain(t *testing.T) {
	r := &OutputResult{StatusLine: "running", raw: "\x1b[31mred\x1b[0m \x1b]0;title\x07\x07bell\n"}
	if got := r.Text(); got != "running\n\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07\\x07bell\n" {
		t.Errorf("plain text %q", got)
	}
	r.plain = true
	if got := r.Text(); got != "running\nred \\x07bell\n" {
		t.Errorf("for a model %q", got)
	}
}
