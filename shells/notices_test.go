package shells

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cshell/cshell/policy"
)

// events reads every notice once.
func events(t *testing.T, m *Manager) []Notice {
	t.Helper()
	var out []Notice
	if err := m.Events(context.Background(), false, func(n Notice, line []byte) {
		var again Notice
		if err := json.Unmarshal(line, &again); err != nil || again.ID != n.ID || again.Event != n.Event {
			t.Errorf("the raw line %q is not the notice %+v", line, n)
		}
		out = append(out, n)
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNoticeOfAnEnd(t *testing.T) {
	m := testManager(t)
	var log strings.Builder
	for i := 1; i <= 15; i++ {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	log.WriteString(strings.Repeat("x", 400) + "\n") // cut to its end
	meta := exited("3", 2)
	meta.Name, meta.Command = "build", strings.Repeat("c", 500)
	writeRecord(t, m, meta, log.String())
	if err := m.appendNotice(meta, "wake"); err != nil {
		t.Fatal(err)
	}
	got := events(t, m)
	if len(got) != 1 {
		t.Fatalf("%d notices", len(got))
	}
	n := got[0]
	if n.ID != "3" || n.Name != "build" || *n.ExitCode != 2 || n.Level != "wake" || n.Status != StatusExited ||
		n.StatusLine != "exited with 2 after 2s" || n.Refused() || n.Told() || n.EndedAt.IsZero() {
		t.Errorf("notice: %+v", n)
	}
	if !strings.HasPrefix(n.Command, cutMark) || len(n.Command) != len(cutMark)+noticeLineMax {
		t.Errorf("the command is not cut to its end: %d bytes", len(n.Command))
	}
	if len(n.LastLines) != noticeLines || n.LastLines[0] != "line 7" || n.LastLines[8] != "line 15" ||
		n.LastLines[9] != cutMark+strings.Repeat("x", noticeLineMax) {
		t.Errorf("last lines: %q", n.LastLines)
	}

	// EndNotice tells the same, for a finished shell only.
	n2, rec, err := m.EndNotice("build")
	if err != nil || rec.ID != "3" || n2.Level != "" || len(n2.LastLines) != noticeLines {
		t.Errorf("EndNotice: %+v %v %v", n2, rec, err)
	}
	writeRecord(t, m, running("4"), "")
	if _, rec, err := m.EndNotice("4"); err == nil || rec == nil || !strings.Contains(err.Error(), "still running") {
		t.Errorf("EndNotice of a running shell: %v %v", rec, err)
	}
	if _, _, err := m.EndNotice("9"); err == nil {
		t.Error("EndNotice of no shell")
	}
}

func TestTailLines(t *testing.T) {
	for _, tc := range []struct {
		log  string
		n    int
		scan int64
		want []string
	}{
		{"", 3, 100, nil},
		{"\n", 3, 100, nil},
		{"a\nb\nc\n", 2, 100, []string{"b", "c"}},
		{"a\nb\nc", 5, 100, []string{"a", "b", "c"}},
		{"first\nsecond\nthird\n", 5, 10, []string{"third"}},            // the first line read may have begun before
		{"0123456789abcdef", 5, 4, []string{cutMark + "cdef"}},          // one line longer than the scan
		{"aaaaaaaaaaaaaaaaaaaa\n", 5, 8, []string{cutMark + "aaaaaaa"}}, // its newline is in the scan
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, logName), []byte(tc.log), 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := openLogView(testDir(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		got := v.tailLines(tc.n, tc.scan)
		v.Close()
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("tailLines(%q, %d, %d) = %q, want %q", tc.log, tc.n, tc.scan, got, tc.want)
		}
	}
}

func TestCutLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789", 4, cutMark + "6789"},
		{"ééé", 3, cutMark + "é"},                    // never half a rune: 3 bytes start mid-rune
		{"aé", 2, cutMark + "é"},                     // cut on a rune's start
		{"ab" + cutMark + "xyz", 9, cutMark + "xyz"}, // never two marks
	} {
		if got := cutLine(tc.in, tc.max); got != tc.want {
			t.Errorf("cutLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestNoticesRotate(t *testing.T) {
	m := testManager(t)
	// An old notice, then a file grown to the bound.
	old := exited("1", 0)
	writeRecord(t, m, old, "")
	if err := m.appendNotice(old, "note"); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(m.Dir(), noticesName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	filler := `{"id":"2","status":"exited"}` + "\n"
	st, _ := f.Stat()
	for size := st.Size(); size+int64(len(filler)) < maxNoticesFile-100; size += int64(len(filler)) {
		f.WriteString(filler)
	}
	f.Close()
	newer := exited("5", 0)
	writeRecord(t, m, newer, "")
	if err := m.appendNotice(newer, "note"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(m.Dir(), oldNoticesName)); err != nil || st.Size() > maxNoticesFile {
		t.Fatalf("notices.jsonl.1: %v %v", st, err)
	}
	if st, _ := os.Stat(filepath.Join(m.Dir(), noticesName)); st.Size() > 4096 {
		t.Errorf("notices.jsonl after the rotation: %d bytes", st.Size())
	}
	got := events(t, m)
	if len(got) < 3 || got[0].ID != "1" || got[1].ID != "2" || got[len(got)-1].ID != "5" {
		t.Errorf("events across the rotation: %d, first %+v, last %+v", len(got), got[0], got[len(got)-1])
	}
}

func TestReadNoticesPassesOverWhatCshellDidNotWrite(t *testing.T) {
	m := testManager(t)
	content := strings.Join([]string{
		`{"id":"1","status":"exited"}`,
		`not json`,
		`{"id":"../1","status":"exited"}`, // no id cshell gives
		`{"id":"","status":"exited"}`,     // an end needs an id
		`{"event":"refused","id":"","host":"h.example","port":443}`, // a foreground shell's refusal
		`{"event":"limit","id":"","limit":"memory"}`,
		`{"event":"write","id":"2"}`,
		`{"id":"` + strings.Repeat("9", maxNoticeLine) + `"}`, // longer than any line cshell writes
		`{"id":"3","status":"exited"}`,
		`{"id":"4","status":"exi`, // still being written
	}, "\n")
	if err := m.dir.WriteFile(noticesName, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range events(t, m) {
		ids = append(ids, n.ID+"/"+n.Event)
	}
	if want := "[1/ /refused /limit 2/write 3/]"; fmt.Sprint(ids) != want {
		t.Errorf("read %v, want %s", ids, want)
	}
	// The partial line is read once it ends.
	off := m.readNotices(noticesName, 0, func(Notice, []byte) {})
	if off != int64(strings.LastIndex(content, "\n")+1) {
		t.Errorf("offset %d stops before the partial line at %d", off, strings.LastIndex(content, "\n")+1)
	}
	if got := m.readNotices("missing", 7, func(Notice, []byte) {}); got != 7 {
		t.Errorf("a missing file moves the offset to %d", got)
	}
}

func TestEventsFollow(t *testing.T) {
	m := testManager(t)
	first := exited("1", 0)
	writeRecord(t, m, first, "")
	if err := m.appendNotice(first, "note"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 10)
	done := make(chan error)
	go func() {
		done <- m.Events(ctx, true, func(n Notice, _ []byte) { seen <- n.ID })
	}()
	next := func() string {
		t.Helper()
		select {
		case id := <-seen:
			return id
		case <-time.After(30 * time.Second):
			t.Fatal("no notice came")
			return ""
		}
	}
	if id := next(); id != "1" {
		t.Errorf("first: %s", id)
	}
	second := exited("2", 0)
	writeRecord(t, m, second, "")
	if err := m.appendNotice(second, "note"); err != nil {
		t.Fatal(err)
	}
	if id := next(); id != "2" {
		t.Errorf("second: %s", id)
	}
	// Rotated under the reader: what was appended before the rotation
	// and after it both come, once each.
	third := exited("3", 0)
	writeRecord(t, m, third, "")
	if err := m.withLock(func() error {
		f, err := m.dir.OpenFile(noticesName, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		f.WriteString(`{"id":"3","status":"exited"}` + "\n")
		f.Close()
		return m.dir.Rename(noticesName, oldNoticesName)
	}); err != nil {
		t.Fatal(err)
	}
	fourth := exited("4", 0)
	writeRecord(t, m, fourth, "")
	if err := m.appendNotice(fourth, "note"); err != nil {
		t.Fatal(err)
	}
	if a, b := next(), next(); a != "3" || b != "4" {
		t.Errorf("across a rotation: %s then %s", a, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Events: %v", err)
	}
	select {
	case id := <-seen:
		t.Errorf("notice %s told twice", id)
	default:
	}
}

func TestToldEvents(t *testing.T) {
	m := testManager(t)
	var mu sync.Mutex
	var recorded []policy.Violation
	tell := m.toldEvents("6", "s1", "make all", func(v policy.Violation) {
		mu.Lock()
		recorded = append(recorded, v)
		mu.Unlock()
	})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tell(policy.Violation{Time: at, Method: "memory", Rule: "killed cc1 (pid 9): the memory limit"})
	tell(policy.Violation{Time: at, Method: "write", Rule: "/etc/passwd is read-only", Hint: "add --rw /etc"})
	tell(policy.Violation{Time: at, Host: "x.example", Port: 443, Method: "CONNECT", Rule: "not allowed"}) // recorded, not told
	got := events(t, m)
	if len(recorded) != 3 || len(got) != 2 {
		t.Fatalf("recorded %d, told %d", len(recorded), len(got))
	}
	if n := got[0]; !n.LimitHit() || !n.Told() || n.Limit != "memory" || n.ID != "6" || n.Session != "s1" || n.Command != "make all" || !n.Time.Equal(at) {
		t.Errorf("the limit's event: %+v", n)
	}
	if n := got[1]; !n.WriteRefused() || n.Limit != "" || n.Detail != "/etc/passwd is read-only; add --rw /etc" {
		t.Errorf("the write's event: %+v", n)
	}
	// At most 100 a shell are told; all are recorded.
	for i := 0; i < 150; i++ {
		tell(policy.Violation{Time: at, Method: "write", Rule: "r"})
	}
	if n := len(events(t, m)); n != 100 {
		t.Errorf("%d events told, want 100", n)
	}
	if len(recorded) != 153 {
		t.Errorf("%d recorded", len(recorded))
	}
}

func TestRefusalsToldOnceAMinute(t *testing.T) {
	m := testManager(t)
	tell := m.refusals("", "s1", "curl x")
	tell("a.example", 443)
	tell("a.example", 443) // again within the minute: not told
	tell("a.example", 80)
	tell(strings.Repeat("h", 300)+"\x1b", 443)
	got := events(t, m)
	if len(got) != 3 {
		t.Fatalf("%d refusals told, want 3: %+v", len(got), got)
	}
	if n := got[0]; !n.Refused() || n.ID != "" || n.Host != "a.example" || n.Port != 443 || n.Session != "s1" || n.Time.IsZero() {
		t.Errorf("refusal: %+v", n)
	}
	if h := got[2].Host; len(h) != 255 || strings.ContainsRune(h, 0x1b) {
		t.Errorf("a long host is kept as %d bytes: %q", len(h), h)
	}
}
