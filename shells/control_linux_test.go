package shells

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/control"
)

// fakeSupervisor serves a shell's control socket from this process, as
// its supervisor would: kills come to the test on kills.
type fakeSupervisor struct {
	kills chan *control.Kill
	ready map[int]bool
	info  control.Info
}

func serveControl(t *testing.T, m *Manager, id string, f *fakeSupervisor) {
	t.Helper()
	d, err := m.shellDir(id)
	if err != nil {
		t.Fatal(err)
	}
	l, err := control.Listen(d, controlName)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	srv := &control.Server{Kills: f.kills, Info: func() control.Info { return f.info },
		Probe: func(_ context.Context, port int) bool { return f.ready[port] }}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.Serve(l, done)
	}()
	t.Cleanup(func() {
		close(done)
		l.Close()
		wg.Wait()
		d.Close()
	})
}

func TestKillThroughTheControlSocket(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	f := &fakeSupervisor{kills: make(chan *control.Kill)}
	serveControl(t, m, "1", f)
	go func() {
		k := <-f.kills
		final := exited("1", 143)
		final.Status, final.Signal = StatusKilled, "TERM"
		if k.Signal != syscall.SIGTERM || k.Grace != 3*time.Second {
			final.Signal = "wrong request"
		}
		final.Escaped = []int{77, 78}
		k.Answer(final)
	}()
	r, err := m.Kill(context.Background(), "1", syscall.SIGTERM, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.AlreadyFinished || r.Meta.Status != StatusKilled || r.Meta.Signal != "TERM" || !strings.HasPrefix(r.Meta.StatusLine, "killed by TERM after ") {
		t.Errorf("Kill: %+v", r.Meta)
	}
	if got := r.Text(); got != "killed 1: cmd 1; also killed 2 process(es) that had left the shell's process group (pid 77, 78)" {
		t.Errorf("Text = %q", got)
	}
}

func TestKillAnsweredWithAnotherRecord(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	f := &fakeSupervisor{kills: make(chan *control.Kill)}
	serveControl(t, m, "1", f)
	go func() { (<-f.kills).Answer(exited("2", 0)) }()
	if _, err := m.Kill(context.Background(), "1", syscall.SIGTERM, 0); err == nil || !strings.Contains(err.Error(), "answered something else than its end") {
		t.Errorf("Kill: %v", err)
	}
}

func TestKillWhoseSupervisorHangsUp(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	f := &fakeSupervisor{kills: make(chan *control.Kill)}
	serveControl(t, m, "1", f)
	// It hangs up without an answer; the record still says running.
	go func() { (<-f.kills).Drop() }()
	if _, err := m.Kill(context.Background(), "1", syscall.SIGTERM, 0); err == nil || !strings.Contains(err.Error(), "did not confirm the stop") {
		t.Errorf("Kill: %v", err)
	}
	// It hangs up having recorded the end: that is the answer.
	go func() {
		k := <-f.kills
		endShell(t, m, "1")
		k.Drop()
	}()
	r, err := m.Kill(context.Background(), "1", syscall.SIGTERM, 0)
	if err != nil || r.Meta.Status != StatusExited || r.AlreadyFinished {
		t.Errorf("Kill: %+v, %v", r, err)
	}
}

// TestKillStopsWaitingWithTheContext cancels a kill once its client is
// reading the answer: a supervisor that has begun to answer (one byte)
// and then says nothing more. The client has read that byte (the
// socket's send queue is empty) before the cancel, so the cancel cannot
// land before the answer's read deadline is set.
func TestKillStopsWaitingWithTheContext(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	d, err := m.shellDir("1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := control.Listen(d, controlName)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		defer cancel() // whatever goes wrong, the kill stops waiting
		c, err := l.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		if _, err := bufio.NewReader(c).ReadBytes('\n'); err != nil { // the kill
			served <- err
			return
		}
		if _, err := c.Write([]byte("{")); err != nil {
			served <- err
			return
		}
		raw, err := c.(*net.UnixConn).SyscallConn()
		if err != nil {
			served <- err
			return
		}
		deadline := time.Now().Add(long)
		for queued := 1; queued > 0 && time.Now().Before(deadline); {
			raw.Control(func(fd uintptr) { queued, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
			if err != nil {
				served <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		served <- nil
		io.Copy(io.Discard, c) // until the client hangs up
	}()
	_, err = m.Kill(ctx, "1", syscall.SIGTERM, time.Hour)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "its supervisor goes on stopping it") {
		t.Errorf("Kill: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

func TestKillSession(t *testing.T) {
	m := testManager(t)
	for _, id := range []string{"1", "2", "3"} {
		meta := running(id)
		if id == "3" {
			meta.Session = "other"
		}
		writeRecord(t, m, meta, "")
	}
	writeRecord(t, m, exited("4", 0), "")
	f := &fakeSupervisor{kills: make(chan *control.Kill)}
	serveControl(t, m, "1", f) // shell 2 has no supervisor that answers
	go func() {
		k := <-f.kills
		final := exited("1", 137)
		final.Status, final.Signal = StatusKilled, "KILL"
		k.Answer(final)
	}()
	rs, err := m.KillSession(context.Background(), "default", syscall.SIGKILL, 0)
	if len(rs) != 2 {
		t.Fatalf("%d results: %v", len(rs), err)
	}
	byID := map[string]*KillResult{}
	for _, r := range rs {
		byID[r.Meta.ID] = r
	}
	if r := byID["1"]; r == nil || r.ErrOrNil() != nil || r.Meta.Status != StatusKilled {
		t.Errorf("shell 1: %+v", r)
	}
	if r := byID["2"]; r == nil || r.ErrOrNil() == nil || !strings.Contains(r.Err.Error(), "cannot stop shell 2") {
		t.Errorf("shell 2: %+v", r)
	}
	if err == nil || !strings.Contains(err.Error(), "cannot stop shell 2") {
		t.Errorf("the error names the failure: %v", err)
	}
	if rs, err := m.KillSession(context.Background(), "nobody", syscall.SIGTERM, 0); len(rs) != 0 || err != nil {
		t.Errorf("a session without shells: %v %v", rs, err)
	}
	if _, err := m.KillSession(context.Background(), "a/b", syscall.SIGTERM, 0); !errors.Is(err, ErrUsage) {
		t.Errorf("a bad session: %v", err)
	}
	var none *KillResult
	if none.ErrOrNil() != nil {
		t.Error("a nil result has an error")
	}
}

func TestWaitReadyOnPorts(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	serveControl(t, m, "1", &fakeSupervisor{ready: map[int]bool{8080: true}})
	if _, err := m.WaitReady(context.Background(), "1", ReadyOptions{Ports: []int{8080}, Timeout: time.Minute}); err != nil {
		t.Errorf("a port that accepts: %v", err)
	}
	_, err := m.WaitReady(context.Background(), "1", ReadyOptions{Ports: []int{8080, 9090}, Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "port(s) 8080, 9090 accept no connection") {
		t.Errorf("one port that does not: %v", err)
	}
}

func TestReaches(t *testing.T) {
	m := testManager(t)
	for _, id := range []string{"1", "2", "3"} {
		writeRecord(t, m, running(id), "")
		if err := m.markExposing(id); err != nil {
			t.Fatal(err)
		}
	}
	serveControl(t, m, "1", &fakeSupervisor{info: control.Info{Session: "s", Exposed: []control.Port{
		{Listen: "0.0.0.0:8080", Port: 8080}, {Listen: "127.0.0.1:8080", Port: 8080}, {Listen: "[::1]:9090", Port: 9090}, {Listen: "bogus", Port: 1}}}})
	serveControl(t, m, "2", &fakeSupervisor{info: control.Info{Session: "other", Exposed: []control.Port{{Listen: "127.0.0.1:7070", Port: 7070}}}})
	// Shell 3 answers nothing and runs (its supervisor is this process):
	// its mark stays. A mark that is no id is passed over.
	if err := m.dir.WriteFile(exposingName+"/x", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := m.reaches("s")
	var got []string
	for _, r := range rs {
		got = append(got, r.Host.String())
	}
	if strings.Join(got, " ") != "127.0.0.1:8080 [::1]:9090" {
		t.Fatalf("reaches: %v", got)
	}
	if !rs[0].Allowed() {
		t.Error("a running shell's port is not allowed")
	}
	if err := m.dir.Remove(exposingName + "/1"); err != nil {
		t.Fatal(err)
	}
	if rs[0].Allowed() {
		t.Error("a port stays allowed once its mark is gone")
	}
	if _, err := os.Lstat(filepath.Join(m.Dir(), exposingName, "3")); err != nil {
		t.Errorf("a running shell's mark was removed: %v", err)
	}
	if rs := m.reaches("nobody"); len(rs) != 0 {
		t.Errorf("another session reaches %v", rs)
	}
}
