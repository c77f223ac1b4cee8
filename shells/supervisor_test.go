package shells

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestCappedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &cappedFile{f: f, left: 10}
	for _, s := range []string{"12345", "67890abc", "def"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("Write(%q) = %d, %v: it must take everything", s, n, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "1234567890" {
		t.Errorf("kept %q", b)
	}
	// Without a file it writes nowhere, and says nothing.
	none := &cappedFile{}
	if n, err := none.Write([]byte("x")); n != 1 || err != nil || none.Close() != nil {
		t.Errorf("no file: %d %v", n, err)
	}
}

func TestSupervisorLogIsCapped(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	path := filepath.Join(m.Dir(), "shells", "1", supervisorLog)
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), maxSupervisorLog-4), 0o600); err != nil {
		t.Fatal(err)
	}
	c := openSupervisorLog(m, "1")
	c.Write([]byte("abcdefgh"))
	c.Close()
	if st, _ := os.Stat(path); st.Size() != maxSupervisorLog {
		t.Errorf("supervisor.log holds %d bytes, want %d", st.Size(), maxSupervisorLog)
	}
	// A shell without a folder: a log that writes nowhere.
	if c := openSupervisorLog(m, "9"); c.f != nil {
		t.Error("a log was opened for no shell")
	}
}

func TestSignalName(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGKILL: "KILL", syscall.SIGINT: "INT",
		syscall.SIGHUP: "HUP", syscall.Signal(10): "10"} {
		if got := signalName(sig); got != want {
			t.Errorf("signalName(%d) = %q, want %q", sig, got, want)
		}
	}
}

// answerBox is a supervisor's answer pipe, as a test reads it.
type answerBox struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed chan struct{}
}

func newAnswerBox() *answerBox { return &answerBox{closed: make(chan struct{})} }

func (a *answerBox) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.Write(p)
}

func (a *answerBox) Close() error { close(a.closed); return nil }

// answer is what the supervisor said, once it closed the pipe.
func (a *answerBox) answer(t *testing.T) answer {
	t.Helper()
	<-a.closed
	a.mu.Lock()
	defer a.mu.Unlock()
	var ans answer
	if err := json.Unmarshal(a.buf.Bytes(), &ans); err != nil {
		t.Fatalf("the answer %q: %v", a.buf.String(), err)
	}
	return ans
}

func TestSuperviseRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"/state"}, {"/state", "0"}, {"/state", "../1"}, {"/state", "1", "x"}} {
		box := newAnswerBox()
		if code := supervise(args, inherited{answer: box}); code != 2 {
			t.Errorf("supervise(%q) = %d, want 2", args, code)
		}
		if a := box.answer(t); a.Status != "failed" || !strings.Contains(a.Error, "want STATE_DIR ID") {
			t.Errorf("supervise(%q) answered %+v", args, a)
		}
	}
}

func TestSuperviseWithoutAStateDir(t *testing.T) {
	// A regular file where the state dir's descriptor should be.
	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	box := newAnswerBox()
	if code := supervise([]string{"/state", "1"}, inherited{answer: box, stateDir: f, plan: io.NopCloser(strings.NewReader(""))}); code != 1 {
		t.Errorf("supervise = %d, want 1", code)
	}
	if a := box.answer(t); a.Status != "failed" || a.Error == "" {
		t.Errorf("answered %+v", a)
	}
}

// TestSuperviseArgKnownToTheConstructor: container/cgwarm_linux.c starts
// the cgroup lock's wait for a process whose first argument is this.
func TestSuperviseArgKnownToTheConstructor(t *testing.T) {
	if SuperviseArg != "__supervise" {
		t.Errorf("SuperviseArg = %q: change container/cgwarm_linux.c (cshell_cgwarm_wanted) with it", SuperviseArg)
	}
}
