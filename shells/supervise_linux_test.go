package shells

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// The tests here run a shell's supervisor in this process (supervise, as
// Supervise runs it in its own), so that what it does is measured and
// seen from the test: its answer, its record, its end.

// inProcess is a supervisor running in a goroutine of the test.
type inProcess struct {
	id     string
	answer answer
	code   chan int
}

// superviseHere plans o as Start does, allocates the shell and runs its
// supervisor in this process; change, when set, alters the plan first.
func superviseHere(t *testing.T, m *Manager, o RunOptions, change func(*plan.Plan)) *inProcess {
	t.Helper()
	o.Purpose, o.StateDir = plan.Background, m.Dir()
	p, err := plan.New(o.Request, hostFacts(o.FS.Home, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	meta, err := m.allocate(p)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(p)
	}
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return runSupervise(t, m, meta.ID, io.NopCloser(&b))
}

func runSupervise(t *testing.T, m *Manager, id string, planR io.ReadCloser) *inProcess {
	t.Helper()
	dir, err := os.Open(m.Dir())
	if err != nil {
		t.Fatal(err)
	}
	box := newAnswerBox()
	s := &inProcess{id: id, code: make(chan int, 1)}
	go func() {
		s.code <- supervise([]string{m.Dir(), id}, inherited{answer: box, stateDir: dir, plan: planR,
			file: func(int, string) *os.File { return nil }})
	}()
	s.answer = box.answer(t)
	t.Cleanup(func() {
		stopShell(m, id)
		select {
		case <-s.code:
		case <-time.After(long):
			t.Errorf("the supervisor of shell %s did not return", id)
		}
	})
	return s
}

// exit waits for the supervisor to return its exit code.
func (s *inProcess) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-s.code:
		s.code <- code // for the cleanup
		return code
	case <-time.After(long):
		t.Fatal("the supervisor did not return")
		return -1
	}
}

func TestSuperviseToTheEnd(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `echo working; sleep 0.5; echo done; exit 4`)
	o.Session = "here"
	s := superviseHere(t, m, o, nil)
	if s.answer.Status != "running" || s.answer.Error != "" {
		t.Fatalf("answer: %+v", s.answer)
	}
	meta, err := m.Find(s.id)
	if err != nil || meta.Status != StatusRunning || meta.Supervisor != os.Getpid() || meta.Pid <= 0 {
		t.Fatalf("running: %+v %v", meta, err)
	}
	// What the supervisor tells of the shell on its control socket.
	info, pid, err := m.askInfo(context.Background(), s.id)
	if err != nil || info.Session != "here" || len(info.Exposed) != 0 || pid != os.Getpid() {
		t.Errorf("info: %+v pid %d, %v", info, pid, err)
	}
	if code := s.exit(t); code != 0 {
		t.Errorf("supervise returned %d", code)
	}
	meta, _ = m.Find(s.id)
	if meta.Status != StatusExited || meta.ExitStatus() != 4 || meta.EndedAt == nil {
		t.Errorf("ended: %+v", meta)
	}
	if ns := events(t, m); len(ns) != 1 || ns[0].ID != s.id || strings.Join(ns[0].LastLines, ",") != "working,done" {
		t.Errorf("notices: %+v", ns)
	}
}

func TestSuperviseAnEarlyEnd(t *testing.T) {
	m := testManager(t)
	s := superviseHere(t, m, processOptions(t, `exit 9`), nil)
	if code := s.exit(t); code != 0 {
		t.Errorf("supervise returned %d", code)
	}
	meta, _ := m.Find(s.id)
	if meta.ExitStatus() != 9 {
		t.Errorf("ended: %+v", meta)
	}
	switch s.answer.Status {
	case "ended": // the usual answer: no notice, the answer tells
		if ns := events(t, m); len(ns) != 0 {
			t.Errorf("notices of an early end: %+v", ns)
		}
	case "running": // a loaded machine: the end came after the window
		t.Logf("the shell outlived the early window")
	default:
		t.Errorf("answer: %+v", s.answer)
	}
}

func TestSuperviseNotify(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `sleep 0.3`)
	o.Config = &policy.Config{Shells: policy.ShellsConfig{Notify: "none"}}
	s := superviseHere(t, m, o, nil)
	s.exit(t)
	if ns := events(t, m); len(ns) != 0 {
		t.Errorf("notify none, yet: %+v", ns)
	}
}

func TestSuperviseKills(t *testing.T) {
	m := testManager(t)
	s := superviseHere(t, m, processOptions(t, `trap "" TERM; echo trapped; while :; do sleep 0.1; done`), nil)
	logged(t, m, s.id, "trapped")
	r, err := m.Kill(context.Background(), s.id, syscall.SIGTERM, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Status != StatusKilled || r.Meta.Signal != "KILL" {
		t.Errorf("killed: %+v", r.Meta)
	}
	s.exit(t)
	// A KILL asked for ends it at once.
	s = superviseHere(t, m, processOptions(t, `exec sleep 300`), nil)
	if r, err := m.Kill(context.Background(), s.id, syscall.SIGKILL, time.Hour); err != nil || r.Meta.Signal != "KILL" || r.Meta.ExitStatus() != 137 {
		t.Errorf("KILL: %+v %v", r, err)
	}
	s.exit(t)
	if ns := events(t, m); len(ns) != 0 {
		t.Errorf("notices of kills: %+v", ns)
	}
}

func TestSuperviseTimeout(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `exec sleep 300`)
	o.Timeout = 200 * time.Millisecond
	s := superviseHere(t, m, o, nil)
	s.exit(t)
	meta, _ := m.Find(s.id)
	if meta.Status != StatusTimedOut || meta.Signal != "TERM" || meta.ExitStatus() != 143 {
		t.Errorf("timed out: %+v", meta)
	}
}

func TestSuperviseTheOwnersEnd(t *testing.T) {
	m := testManager(t)
	owner := sleeper(t)
	o := processOptions(t, `exec sleep 300`)
	o.OwnerPid = owner.Process.Pid
	s := superviseHere(t, m, o, nil)
	owner.Process.Kill()
	owner.Wait()
	s.exit(t)
	meta, _ := m.Find(s.id)
	if meta.Status != StatusKilled || meta.EndReason != "session" {
		t.Errorf("ended: %+v", meta)
	}
}

func TestSuperviseASignal(t *testing.T) {
	m := testManager(t)
	s := superviseHere(t, m, processOptions(t, `exec sleep 300`), nil)
	// The supervisor is this process: it takes the HUP (signal.Notify),
	// and stops its shell politely.
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.exit(t)
	meta, _ := m.Find(s.id)
	if meta.Status != StatusKilled || meta.Signal != "TERM" {
		t.Errorf("ended: %+v", meta)
	}
}

func TestSuperviseRotatesTheLog(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `for i in $(seq 1 2000); do echo "line $i"; done`)
	limit := int64(4096)
	o.Config = &policy.Config{Shells: policy.ShellsConfig{MaxLogBytes: &limit}}
	s := superviseHere(t, m, o, nil)
	s.exit(t)
	meta, _ := m.Find(s.id)
	if meta.LogDropped <= 0 || meta.Status != StatusExited {
		t.Errorf("ended: %+v", meta)
	}
	if got := logs(t, m, s.id, 1, false, nil); got != "line 2000\n" {
		t.Errorf("the last line: %q", got)
	}
}

func TestSuperviseProbes(t *testing.T) {
	m := testManager(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	s := superviseHere(t, m, processOptions(t, `exec sleep 300`), nil)
	// A process-group shell's ports are this machine's: the probe dials them.
	if _, err := m.WaitReady(context.Background(), s.id, ReadyOptions{Ports: []int{port}, Timeout: long}); err != nil {
		t.Errorf("a listening port: %v", err)
	}
	if m.probe(context.Background(), s.id, []int{port, freePort(t)}) {
		t.Error("a port nothing listens on is ready")
	}
}

func TestSuperviseAShellThatCannotStart(t *testing.T) {
	m := testManager(t)
	s := superviseHere(t, m, processOptions(t, `true`), func(p *plan.Plan) {
		p.FS.Start = filepath.Join(p.FS.Workdir, "missing") // gone before the start
	})
	if s.answer.Status != "failed" || s.answer.Error == "" {
		t.Errorf("answer: %+v", s.answer)
	}
	if code := s.exit(t); code != 1 {
		t.Errorf("supervise returned %d", code)
	}
	if _, err := m.Find(s.id); !errors.Is(err, ErrNotFound) {
		t.Errorf("the failed shell's folder: %v", err)
	}
}

func TestSuperviseABadPlan(t *testing.T) {
	m := testManager(t)
	meta, err := m.allocate(&plan.Plan{Session: "default"})
	if err != nil {
		t.Fatal(err)
	}
	s := runSupervise(t, m, meta.ID, io.NopCloser(strings.NewReader("not a plan")))
	if s.answer.Status != "failed" || !strings.Contains(s.answer.Error, "read the shell's plan") {
		t.Errorf("answer: %+v", s.answer)
	}
	if code := s.exit(t); code != 1 {
		t.Errorf("supervise returned %d", code)
	}
	// A shell nobody allocated.
	var b bytes.Buffer
	if err := (&plan.Plan{}).Encode(&b); err != nil {
		t.Fatal(err)
	}
	s = runSupervise(t, m, "42", io.NopCloser(&b))
	if s.answer.Status != "failed" || s.exit(t) != 1 {
		t.Errorf("no shell 42: %+v", s.answer)
	}
}
