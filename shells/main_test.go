package shells

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// markVar carries testMark into every supervisor and shell these tests
// start (supervisors inherit it, shells get it with -e), so that TestMain
// finds what they left running by a mark they made, never by a name.
const markVar = "SHELLS_TEST_MARK"

var testMark = fmt.Sprintf("shells-test-%d", os.Getpid())

// serveArg makes the test binary a small TCP server for readiness tests:
// shells.test __testserve PORT listens on 127.0.0.1:PORT, says so on
// stdout, and accepts connections until it is killed.
const serveArg = "__testserve"

// TestMain lets the test binary be a background shell's supervisor (the
// package starts one by running os.Executable() with SuperviseArg first),
// a server inside a shell, and doctor's probe child; after the tests, it fails the run when a
// process they started still runs.
func TestMain(m *testing.M) {
	container.MaybeInit() // cshell doctor's probe children (Doctor), as cshell's main does
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case SuperviseArg:
			os.Exit(Supervise(os.Args[2:]))
		case serveArg:
			os.Exit(serve(os.Args[2:]))
		}
	}
	os.Setenv(markVar, testMark)
	code := m.Run()
	if left := leftBehind(30 * time.Second); len(left) > 0 {
		fmt.Printf("--- FAIL: TestMain: processes the tests started still run (now killed): %v\n", left)
		code = 1
	}
	os.Exit(code)
}

func serve(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "want PORT")
		return 2
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", args[0]))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("serving %s\n", args[0])
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		c.Close()
	}
}

// testPaths are a home and a working directory for a shell, with links
// resolved (the policy refuses links a shell could have planted).
func testPaths(t *testing.T) (home, work string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, work = filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return home, work
}

// testManager opens a fresh state dir.
func testManager(t *testing.T) *Manager {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(filepath.Join(dir, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		forgetTrust(m.Dir())
	})
	return m
}

// forgetTrust removes the runtime dir's record of a state dir that a test
// made (where there is a runtime dir).
func forgetTrust(abs string) {
	if rt, err := container.RuntimeDir(); err == nil {
		sum := sha256.Sum256([]byte(abs))
		os.Remove(filepath.Join(rt, trustRecords, hex.EncodeToString(sum[:16])))
	}
}

// processOptions runs words (one: a shell command line) as a process-group
// shell: no namespaces, no privileges needed.
func processOptions(t *testing.T, words ...string) RunOptions {
	t.Helper()
	home, work := testPaths(t)
	return RunOptions{Request: plan.Request{
		Command:   words,
		Isolation: container.Process,
		FS:        policy.FilesystemRequest{Home: home, Cwd: work},
		Env:       []string{markVar},
	}}
}

// writeRecord writes a shell's folder as a supervisor would leave it: its
// record and its log.
func writeRecord(t *testing.T, m *Manager, meta *Meta, log string) {
	t.Helper()
	if err := m.dir.Mkdir(shellFile(meta.ID), 0o700); err != nil {
		t.Fatal(err)
	}
	if meta.StartedAt.IsZero() {
		meta.StartedAt = time.Now().Add(-time.Minute)
	}
	if err := m.writeMeta(meta); err != nil {
		t.Fatal(err)
	}
	if err := m.dir.WriteFile(shellFile(meta.ID, logName), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
}

// exited is the record of a shell that ended with code.
func exited(id string, code int) *Meta {
	end := time.Now()
	m := &Meta{ID: id, Command: "cmd " + id, Session: "default", Status: StatusExited, ExitCode: &code,
		StartedAt: end.Add(-2 * time.Second), EndedAt: &end, Isolation: string(container.Process)}
	m.fill(end)
	return m
}

// running is the record of a shell whose supervisor is this test process,
// which is alive: nothing marks it lost.
func running(id string) *Meta {
	m := &Meta{ID: id, Command: "cmd " + id, Session: "default", Status: StatusRunning, StartedAt: time.Now(),
		Supervisor: os.Getpid(), SupervisorTime: processStartTime(os.Getpid()), Isolation: string(container.Process)}
	m.fill(time.Now())
	return m
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
