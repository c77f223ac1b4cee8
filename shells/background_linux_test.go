package shells

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// The tests here start background shells as cshell run -d does: through
// a supervisor, the test binary itself (TestMain), with process
// isolation, so that they need neither root nor namespaces.

// long bounds the waits for what a loaded machine may take a while to do.
const long = 2 * time.Minute

// start starts a background shell and kills it at the test's end if it
// still runs.
func start(t *testing.T, m *Manager, o RunOptions) *Started {
	t.Helper()
	st, err := m.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopShell(m, st.Meta.ID) })
	return st
}

func stopShell(m *Manager, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	if meta, err := m.Find(id); err == nil && !meta.Finished() {
		_, _ = m.Kill(ctx, id, syscall.SIGKILL, 0)
	}
}

// waitEnd waits for a shell's end.
func waitEnd(t *testing.T, m *Manager, id string) *Meta {
	t.Helper()
	meta, err := m.Wait(context.Background(), id, long)
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// logged waits until a shell's log holds a line matching re.
func logged(t *testing.T, m *Manager, id, re string) {
	t.Helper()
	if _, err := m.WaitReady(context.Background(), id, ReadyOptions{Log: regexp.MustCompile(re), Timeout: long}); err != nil {
		t.Fatal(err)
	}
}

func TestStartRunsToItsEnd(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `echo "hello $SHELLS_TEST_MARK"; sleep 1; echo bye; exit 3`)
	o.Name, o.Description, o.Session = "greeter", "says hello", "bg"
	st := start(t, m, o)
	if st.Meta.Status != StatusRunning || st.Meta.Pid <= 0 || st.Meta.Supervisor <= 0 || st.Meta.Token == "" || !st.Direct || st.Waited {
		t.Fatalf("started: %+v", st)
	}
	if text := st.Lines(); !strings.HasPrefix(text, fmt.Sprintf("started shell %s (pid %d)\nname: greeter\nlog: %s\n", st.Meta.ID, st.Meta.Pid, m.logPath(st.Meta.ID))) {
		t.Errorf("Lines: %q", text)
	}
	meta := waitEnd(t, m, "greeter")
	if meta.Status != StatusExited || meta.ExitStatus() != 3 || meta.Session != "bg" || meta.Description != "says hello" || meta.Isolation != "process" {
		t.Errorf("ended: %+v", meta)
	}
	r := output(t, m, meta.ID, OutputOptions{FromByte: -1})
	if r.Output != "hello "+testMark+"\nbye\n" || r.Status != StatusExited || *r.ExitCode != 3 {
		t.Errorf("output: %+v", r)
	}
	// It ended by itself after the answer: a notice tells of it.
	var ns []Notice
	for _, n := range events(t, m) {
		if n.ID == meta.ID {
			ns = append(ns, n)
		}
	}
	if len(ns) != 1 || ns[0].Level != policy.DefaultNotify || ns[0].Name != "greeter" || strings.Join(ns[0].LastLines, "|") != "hello "+testMark+"|bye" {
		t.Errorf("notices: %+v", ns)
	}
	b, err := os.ReadFile(filepath.Join(m.Dir(), "shells", meta.ID, supervisorLog))
	if err != nil || !strings.Contains(string(b), "msg=running") || !strings.Contains(string(b), "msg=ended") || !strings.Contains(string(b), "role=supervisor") {
		t.Errorf("supervisor.log: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(m.Dir(), "shells", meta.ID, controlName)); !os.IsNotExist(err) {
		t.Errorf("the control socket outlived its supervisor: %v", err)
	}
}

func TestStartAnswersAnEarlyEnd(t *testing.T) {
	m := testManager(t)
	st := start(t, m, processOptions(t, `echo "no such thing" >&2; exit 7`))
	if !st.Meta.Finished() {
		// Slower than the supervisor's early window: it ends soon anyway.
		if meta := waitEnd(t, m, st.Meta.ID); meta.ExitStatus() != 7 {
			t.Errorf("ended: %+v", meta)
		}
		t.Logf("the shell outlived the early window; its answer was %q", st.Meta.Status)
		return
	}
	if st.Meta.ExitStatus() != 7 || st.Output != "no such thing\n" {
		t.Errorf("an early end: %+v, output %q", st.Meta, st.Output)
	}
	want := fmt.Sprintf("shell %s exited with 7 after ", st.Meta.ID)
	if text := st.Lines(); !strings.HasPrefix(text, want) || !strings.HasSuffix(text, "no such thing\n") {
		t.Errorf("Lines: %q", text)
	}
	if a := st.Answer(); a.Output == nil || *a.Output != "no such thing\n" || a.ExitCode == nil || *a.ExitCode != 7 {
		t.Errorf("Answer: %+v", a)
	}
	// Told in the answer, so no notice.
	if ns := events(t, m); len(ns) != 0 {
		t.Errorf("notices of an early end: %+v", ns)
	}
}

func TestStartWaitsForALogLine(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `echo booting; sleep 0.5; echo "READY on 8080"; exec sleep 300`)
	o.Ready = plan.ReadyRequest{Log: `READY on \d+`}
	var waiting string
	o.Waiting = func(id string, r *plan.Ready) { waiting = id + " " + r.Log }
	st := start(t, m, o)
	if !st.Waited || st.NotReady != nil || st.ReadyAfter <= 0 || st.Meta.Finished() {
		t.Fatalf("started: %+v", st)
	}
	if waiting != st.Meta.ID+` READY on \d+` {
		t.Errorf("Waiting heard %q", waiting)
	}
	if !strings.Contains(st.Lines(), "ready after ") || st.Answer().ReadySeconds == nil {
		t.Errorf("Lines %q, Answer %+v", st.Lines(), st.Answer())
	}
	r, err := m.Kill(context.Background(), st.Meta.ID, syscall.SIGTERM, long)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Status != StatusKilled || r.Meta.Signal != "TERM" || r.Meta.ExitStatus() != 143 || r.AlreadyFinished {
		t.Errorf("killed: %+v", r.Meta)
	}
	if r.Text() != fmt.Sprintf("killed %s: %s", st.Meta.ID, o.Command[0]) {
		t.Errorf("Text: %q", r.Text())
	}
	// Stopped by a kill: no notice.
	if ns := events(t, m); len(ns) != 0 {
		t.Errorf("notices of a kill: %+v", ns)
	}
	again, err := m.Kill(context.Background(), st.Meta.ID, syscall.SIGTERM, 0)
	if err != nil || !again.AlreadyFinished {
		t.Errorf("killed again: %+v %v", again, err)
	}
}

func TestStartGivesUpWaiting(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `exec sleep 300`)
	o.Ready = plan.ReadyRequest{Log: "never", Timeout: 300 * time.Millisecond}
	st := start(t, m, o)
	if !st.Waited || !errors.Is(st.NotReady, ErrNotReady) || st.Meta.Finished() {
		t.Fatalf("started: %+v", st)
	}
	if strings.Contains(st.Lines(), "ready after") || st.Answer().ReadySeconds != nil {
		t.Errorf("not ready, yet: %q", st.Lines())
	}
	// It runs on.
	if meta, _ := m.Find(st.Meta.ID); meta.Status != StatusRunning {
		t.Errorf("after the wait: %s", meta.Status)
	}
}

func TestStartEndsBeforeItIsReady(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `echo "config missing"; sleep 0.5; exit 2`)
	o.Ready = plan.ReadyRequest{Log: "listening", Timeout: long}
	st := start(t, m, o)
	if !st.Meta.Finished() || st.Meta.ExitStatus() != 2 || st.NotReady != nil || st.Output != "config missing\n" {
		t.Fatalf("started: %+v", st)
	}
	if text := st.Lines(); !strings.Contains(text, "exited with 2 after") || !strings.Contains(text, "before it was ready\n") {
		t.Errorf("Lines: %q", text)
	}
}

// freePort finds a port on 127.0.0.1 nothing listens on (for now).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestStartWaitsForAPort(t *testing.T) {
	m := testManager(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(freePort(t))
	o := processOptions(t, exe, serveArg, port) // a program and its arguments, run as given
	o.Expose = []string{"127.0.0.1:" + port}
	o.Ready = plan.ReadyRequest{Ports: true, Timeout: long}
	st := start(t, m, o)
	if !st.Waited || st.NotReady != nil || st.Meta.Finished() || !st.Direct {
		t.Fatalf("started: %+v (%v)", st, st.NotReady)
	}
	if !strings.Contains(st.Lines(), "exposed: 127.0.0.1:"+port+" -> "+port+" (no relay") || !st.Answer().ExposedDirectly {
		t.Errorf("Lines %q", st.Lines())
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("the shell's server: %v", err)
	}
	c.Close()
	if r := output(t, m, st.Meta.ID, OutputOptions{FromByte: 0}); r.Output != "serving "+port+"\n" {
		t.Errorf("output %q", r.Output)
	}
	// A process-group shell has no network of its own: nothing is marked
	// for foreground shells to reach.
	if names, _ := os.ReadDir(filepath.Join(m.Dir(), exposingName)); len(names) != 0 {
		t.Errorf("exposing marks: %v", names)
	}
	// The port in use refuses a second shell before anything runs.
	if _, err := m.Start(context.Background(), o); !errors.Is(err, ErrRefused) {
		t.Errorf("a port in use: %v", err)
	}
	if n := len(m.List()); n != 1 {
		t.Errorf("%d shells recorded", n)
	}
}

func TestKillAfterTheGrace(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `trap "" TERM; echo trapped; while :; do sleep 0.1; done`)
	o.Ready = plan.ReadyRequest{Log: "trapped", Timeout: long}
	st := start(t, m, o)
	if st.NotReady != nil {
		t.Fatal(st.NotReady)
	}
	r, err := m.Kill(context.Background(), st.Meta.ID, syscall.SIGTERM, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Status != StatusKilled || r.Meta.Signal != "KILL" || r.Meta.ExitStatus() != 137 {
		t.Errorf("killed: %+v", r.Meta)
	}
	b, _ := os.ReadFile(filepath.Join(m.Dir(), "shells", st.Meta.ID, supervisorLog))
	if !strings.Contains(string(b), "the grace period ended: KILL") {
		t.Errorf("supervisor.log: %s", b)
	}
}

func TestTimeout(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `trap "" TERM; echo started; while :; do sleep 0.1; done`)
	o.Timeout, o.Grace = 500*time.Millisecond, 200*time.Millisecond
	st := start(t, m, o)
	meta := waitEnd(t, m, st.Meta.ID)
	if meta.Status != StatusTimedOut || meta.Signal != "KILL" || meta.StatusLine != "timed out after 0.5s" || meta.Timeout != 0.5 {
		t.Errorf("ended: %+v", meta)
	}
	// A timeout is told, as an end by itself is.
	if ns := events(t, m); len(ns) != 1 || ns[0].Status != StatusTimedOut || ns[0].LastLines[0] != "started" {
		t.Errorf("notices: %+v", ns)
	}
}

func TestTheOwnersEndEndsTheShell(t *testing.T) {
	m := testManager(t)
	owner := sleeper(t)
	o := processOptions(t, `exec sleep 300`)
	o.OwnerPid = owner.Process.Pid
	st := start(t, m, o)
	owner.Process.Kill()
	owner.Wait()
	meta := waitEnd(t, m, st.Meta.ID)
	if meta.Status != StatusKilled || meta.EndReason != "session" || meta.StatusLine != "killed (session ended)" || meta.Signal != "TERM" {
		t.Errorf("ended: %+v", meta)
	}
	// An owner that is gone already refuses the start.
	if _, err := m.Start(context.Background(), o); !errors.Is(err, ErrUsage) {
		t.Errorf("a gone owner: %v", err)
	}
}

func TestASignalToTheSupervisorStopsTheShell(t *testing.T) {
	m := testManager(t)
	st := start(t, m, processOptions(t, `exec sleep 300`))
	if err := syscall.Kill(st.Meta.Supervisor, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	meta := waitEnd(t, m, st.Meta.ID)
	if meta.Status != StatusKilled || meta.Signal != "TERM" {
		t.Errorf("ended: %+v", meta)
	}
}

func TestALostSupervisor(t *testing.T) {
	m := testManager(t)
	st := start(t, m, processOptions(t, `exec sleep 300`))
	if err := syscall.Kill(st.Meta.Supervisor, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var meta *Meta
	eventually(t, long, "lost", func() bool {
		var err error
		meta, err = m.Find(st.Meta.ID)
		return err == nil && meta.Status == StatusLost
	})
	if meta.StatusLine != "lost (its supervisor died)" || meta.ExitStatus() != 1 {
		t.Errorf("lost: %+v", meta)
	}
	// Its command died with it (a parent-death signal), or was swept.
	eventually(t, long, "gone", func() bool { return !processAlive(st.Meta.Pid, st.Meta.PidTime) })
	// Nothing answers a kill any more, and nothing needs to.
	r, err := m.Kill(context.Background(), st.Meta.ID, syscall.SIGTERM, 0)
	if err != nil || !r.AlreadyFinished || r.Meta.Status != StatusLost {
		t.Errorf("Kill: %+v %v", r, err)
	}
}

func TestLogCapThroughTheSupervisor(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `for i in $(seq 1 3000); do echo "line $i"; done`)
	limit := int64(4096)
	o.Config = &policy.Config{Shells: policy.ShellsConfig{MaxLogBytes: &limit}}
	st := start(t, m, o)
	meta := waitEnd(t, m, st.Meta.ID)
	total := int64(0)
	for i := 1; i <= 3000; i++ {
		total += int64(len(fmt.Sprintf("line %d\n", i)))
	}
	if meta.LogDropped <= 0 || meta.LogDropped > total-limit {
		t.Errorf("log_dropped_bytes %d of %d", meta.LogDropped, total)
	}
	for _, f := range []string{logName, oldLogName} {
		if st, err := os.Stat(filepath.Join(m.Dir(), "shells", meta.ID, f)); err != nil || st.Size() > limit {
			t.Errorf("%s: %v %v", f, st, err)
		}
	}
	r := output(t, m, meta.ID, OutputOptions{FromByte: 0})
	if r.DroppedBytes <= 0 || r.ToByte != total || !strings.HasSuffix(r.Output, "line 3000\n") {
		t.Errorf("from byte 0: dropped %d, to %d of %d", r.DroppedBytes, r.ToByte, total)
	}
	got := logs(t, m, meta.ID, -1, false, nil)
	if !strings.HasPrefix(got, "[cshell: ") || !strings.Contains(got, "bytes were dropped by the log cap") || !strings.HasSuffix(got, "line 3000\n") {
		t.Errorf("logs: %.100q", got)
	}
	// Every line after the note is whole.
	for _, l := range lines(got)[1:] {
		if !regexp.MustCompile(`^line \d+$`).MatchString(l) {
			t.Errorf("a broken line %q", l)
			break
		}
	}
}

func TestKillSessionStopsItsShells(t *testing.T) {
	m := testManager(t)
	var ids []string
	for _, session := range []string{"work", "work", "keep"} {
		o := processOptions(t, `exec sleep 300`)
		o.Session = session
		ids = append(ids, start(t, m, o).Meta.ID)
	}
	rs, err := m.KillSession(context.Background(), "work", syscall.SIGTERM, long)
	if err != nil || len(rs) != 2 {
		t.Fatalf("KillSession: %v %v", rs, err)
	}
	for _, r := range rs {
		if r.Meta.Status != StatusKilled || r.Meta.Session != "work" {
			t.Errorf("killed: %+v", r.Meta)
		}
	}
	if meta, _ := m.Find(ids[2]); meta.Status != StatusRunning {
		t.Errorf("the other session's shell: %s", meta.Status)
	}
}

func TestStartRefuses(t *testing.T) {
	m := testManager(t)
	o := processOptions(t, `exec sleep 300`)
	o.Name = "web"
	start(t, m, o)
	if _, err := m.Start(context.Background(), o); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already named") {
		t.Errorf("a name in use: %v", err)
	}
	bad := processOptions(t)
	if _, err := m.Start(context.Background(), bad); !errors.Is(err, ErrUsage) {
		t.Errorf("no command: %v", err)
	}
	off := false
	bad = processOptions(t, "true")
	bad.Config = &policy.Config{Shells: policy.ShellsConfig{Enabled: &off}}
	if _, err := m.Start(context.Background(), bad); !errors.Is(err, ErrRefused) {
		t.Errorf("shells turned off: %v", err)
	}
	if n := len(m.List()); n != 1 {
		t.Errorf("%d shells recorded", n)
	}
}

func TestStartCancelled(t *testing.T) {
	m := testManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Start(ctx, processOptions(t, `exec sleep 300`))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing was left running") {
		t.Errorf("a cancelled start: %v", err)
	}
	if n := len(m.List()); n != 0 {
		t.Errorf("%d shells recorded", n)
	}
}

// A shell with a reattach window outlives its owner for that long,
// listed as orphaned; a new owner takes it over (its output read on),
// and one that nobody takes over ends as its session's.
func TestAShellOutlivesItsOwnerForANewOne(t *testing.T) {
	m := testManager(t)
	owner := sleeper(t)
	o := processOptions(t, `echo one; while sleep 0.05; do [ -e next ] && { echo two; rm next; }; done`)
	o.OwnerPid, o.Reattach, o.Session = owner.Process.Pid, 30*time.Second, "reload"
	st := start(t, m, o)
	logged(t, m, st.Meta.ID, "^one$")
	if r, err := m.Output(context.Background(), st.Meta.ID, OutputOptions{FromByte: -1}); err != nil || r.Output != "one\n" {
		t.Fatalf("first read: %+v %v", r, err)
	}
	owner.Process.Kill()
	owner.Wait()
	eventually(t, long, "orphaned", func() bool {
		meta, err := m.Find(st.Meta.ID)
		return err == nil && meta.OrphanedUntil != nil
	})
	meta, _ := m.Find(st.Meta.ID)
	if meta.Status != StatusRunning || !strings.HasPrefix(meta.StatusLine, "orphaned: its server ended; it ends in ") ||
		!strings.HasSuffix(meta.StatusLine, " unless a new server of session reload takes it over") {
		t.Errorf("orphaned: %s %q", meta.Status, meta.StatusLine)
	}
	if took := m.Adopt(context.Background(), "other"); len(took) != 0 {
		t.Errorf("another session took %d shells over", len(took))
	}
	took := m.Adopt(context.Background(), "reload")
	if len(took) != 1 || took[0].ID != st.Meta.ID || took[0].OrphanedUntil != nil || took[0].OwnerPid != os.Getpid() || took[0].StatusLine == meta.StatusLine {
		t.Fatalf("taken over: %+v", took)
	}
	if err := os.WriteFile(filepath.Join(o.FS.Cwd, "next"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logged(t, m, st.Meta.ID, "^two$")
	if r, err := m.Output(context.Background(), st.Meta.ID, OutputOptions{FromByte: -1}); err != nil || r.Output != "two\n" {
		t.Errorf("read on from the old cursor: %+v %v", r, err)
	}

	// No new owner within the window: the session ended.
	owner2 := sleeper(t)
	o2 := processOptions(t, `exec sleep 300`)
	o2.OwnerPid, o2.Reattach, o2.Session = owner2.Process.Pid, time.Second, "gone"
	st2 := start(t, m, o2)
	owner2.Process.Kill()
	owner2.Wait()
	if meta := waitEnd(t, m, st2.Meta.ID); meta.StatusLine != "killed (session ended)" || meta.OrphanedUntil != nil {
		t.Errorf("no new owner: %+v", meta)
	}
	// A shell started without a window has no owner to replace.
	o3 := processOptions(t, `exec sleep 300`)
	o3.OwnerPid, o3.Session = sleeper(t).Process.Pid, "fixed"
	st3 := start(t, m, o3)
	if took := m.Adopt(context.Background(), "fixed"); len(took) != 0 {
		t.Errorf("a shell without a window was taken over: %+v", took)
	}
	if meta, _ := m.Find(st3.Meta.ID); meta.OwnerPid != o3.OwnerPid {
		t.Errorf("its owner changed: %+v", meta)
	}
}
