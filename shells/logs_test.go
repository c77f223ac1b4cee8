package shells

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func logs(t *testing.T, m *Manager, ref string, n int, follow bool, show func(string) string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Logs(context.Background(), ref, n, follow, show, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// endShell records a shell's end, as its supervisor would.
func endShell(t *testing.T, m *Manager, id string) {
	meta, err := m.readMeta(id)
	if err != nil {
		t.Error(err)
		return
	}
	code, now := 0, time.Now()
	meta.Status, meta.ExitCode, meta.EndedAt = StatusExited, &code, &now
	if err := m.writeMeta(meta); err != nil {
		t.Error(err)
	}
}

func TestLogsLastLines(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "a\nb\nc\n")
	for n, want := range map[int]string{0: "", 2: "b\nc\n", 10: "a\nb\nc\n", -1: "a\nb\nc\n"} {
		if got := logs(t, m, "1", n, false, nil); got != want {
			t.Errorf("Logs(%d) = %q, want %q", n, got, want)
		}
	}
	if got := logs(t, m, "1", -1, false, strings.ToUpper); got != "A\nB\nC\n" {
		t.Errorf("shown: %q", got)
	}
	if err := m.Logs(context.Background(), "2", -1, false, nil, &bytes.Buffer{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("no shell 2: %v", err)
	}
}

func TestLogsSaysWhatTheCapDropped(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "tial\nkept\n")
	if err := m.dir.WriteFile(shellFile("1", logBaseName), []byte("1000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "[cshell: 1005 bytes were dropped by the log cap (shells.maxLogBytes) before this]\nkept\n"
	if got := logs(t, m, "1", -1, false, nil); got != want {
		t.Errorf("Logs = %q, want %q", got, want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestLogsWriteError(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "a\n")
	if err := m.Logs(context.Background(), "1", -1, false, nil, failingWriter{}); err == nil {
		t.Error("a failing writer went unnoticed")
	}
	if err := m.dir.WriteFile(shellFile("1", logBaseName), []byte("5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Logs(context.Background(), "1", -1, false, nil, failingWriter{}); err == nil {
		t.Error("a failing writer went unnoticed for the dropped note")
	}
}

// TestLogsFollowWritesWholeLines follows a running shell: a line still
// being written waits for its end, and the shell's end ends the follow.
func TestLogsFollowWritesWholeLines(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "a\nhal")
	var chunks []string
	var once sync.Once
	show := func(s string) string {
		chunks = append(chunks, s)
		once.Do(func() {
			go func() {
				appendLog(t, m, "1", "f\nlast\n")
				endShell(t, m, "1")
			}()
		})
		return s
	}
	got := logs(t, m, "1", -1, true, show)
	if got != "a\nhalf\nlast\n" || chunks[0] != "a\n" {
		t.Errorf("followed %q in chunks %q", got, chunks)
	}
}

func TestLogsFollowAcrossRotations(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	d, err := m.shellDir("1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w, err := openLogWriter(d, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fmt.Fprintf(w, "first\n")
	var once sync.Once
	show := func(s string) string {
		once.Do(func() {
			// Three caps' worth while the reader waits: what it had not
			// read yet is rotated out.
			for i := 0; i < 12; i++ {
				fmt.Fprintf(w, "line %09d\n", i) // 15 bytes
			}
			endShell(t, m, "1")
		})
		return s
	}
	got := logs(t, m, "1", -1, true, show)
	if !strings.HasPrefix(got, "first\n[cshell: ") || !strings.Contains(got, " bytes were rotated out before they could be read (shells.maxLogBytes)]\n") ||
		!strings.HasSuffix(got, "line 000000011\n") {
		t.Errorf("followed %q", got)
	}
	// No line is joined from two pieces: every line after the note is whole.
	for _, l := range lines(got)[2:] {
		if len(l) != 14 || !strings.HasPrefix(l, "line ") {
			t.Errorf("a broken line %q in %q", l, got)
		}
	}
}

func TestLogsFollowEndsWithTheContext(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	err := m.Logs(ctx, "1", -1, true, func(s string) string { cancel(); return s }, &buf)
	if err != nil || buf.String() != "a\n" {
		t.Errorf("Logs: %q, %v", buf.String(), err)
	}
}
