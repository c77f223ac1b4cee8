package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// fakeRunner is a container.Runner that records each Spec it is given
// and what the Spec's files were at that moment (Start closes its copies
// once the runner returns). It fails with err when set; else start, when
// set, makes the shell, and a stubShell does.
type fakeRunner struct {
	iso   container.Isolation
	err   error
	start func(*container.Spec) (container.Shell, error)
	// onStart, when set, sees the Spec first, whether Start fails or not.
	onStart func(*container.Spec)

	mu     sync.Mutex
	specs  []*container.Spec
	shells []container.Shell
	// Whether the Spec's files were open when Start got them.
	sockets, events bool
}

var _ container.Runner = (*fakeRunner)(nil)

func (r *fakeRunner) Isolation() container.Isolation { return r.iso }

func (r *fakeRunner) Start(s *container.Spec) (container.Shell, error) {
	r.mu.Lock()
	r.specs = append(r.specs, s)
	r.sockets = s.Sockets != nil && s.Sockets.Fd() != ^uintptr(0)
	r.events = s.Events != nil && s.Events.Fd() != ^uintptr(0)
	r.mu.Unlock()
	if r.onStart != nil {
		r.onStart(s)
	}
	if r.err != nil {
		return nil, r.err
	}
	var sh container.Shell = newStubShell()
	if r.start != nil {
		var err error
		if sh, err = r.start(s); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	r.shells = append(r.shells, sh)
	r.mu.Unlock()
	return sh, nil
}

// spec is the one Spec Start got.
func (r *fakeRunner) spec(t *testing.T) *container.Spec {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.specs) != 1 {
		t.Fatalf("the runner was started %d times, want once", len(r.specs))
	}
	return r.specs[0]
}

// stubShell is a shell with no process: it records the calls made to it,
// and its Wait returns once it was killed or closed.
type stubShell struct {
	mu    sync.Mutex
	calls []string
	ended chan struct{}
	once  sync.Once
	token string
}

var _ container.Shell = (*stubShell)(nil)

func newStubShell() *stubShell { return &stubShell{ended: make(chan struct{})} }

func (s *stubShell) record(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

// count is how many times call was made.
func (s *stubShell) count(call string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (s *stubShell) end() { s.once.Do(func() { close(s.ended) }) }

func (s *stubShell) Pid() int                   { return os.Getpid() }
func (s *stubShell) Signal(sig os.Signal) error { s.record("signal " + sig.String()); return nil }
func (s *stubShell) Kill() error                { s.record("kill"); s.end(); return nil }
func (s *stubShell) Console() *os.File          { return nil }
func (s *stubShell) Token() string              { return s.token }
func (s *stubShell) Close() error               { s.record("close"); s.end(); return nil }

func (s *stubShell) Wait() (container.Exit, error) {
	<-s.ended
	return container.Exit{Code: 137}, nil
}

// listener binds a free port on 127.0.0.1 of this machine.
func listener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// isClosed reports whether l was closed: Accept fails with net.ErrClosed
// at once then (an open listener with nothing dialing it would block, so
// it is asked with a deadline).
func isClosed(l net.Listener) bool {
	if d, ok := l.(interface{ SetDeadline(time.Time) error }); ok {
		_ = d.SetDeadline(time.Now().Add(50 * time.Millisecond))
	}
	c, err := l.Accept()
	if err == nil {
		c.Close()
	}
	return errors.Is(err, net.ErrClosed)
}

// port is the port of a listener's address.
func port(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after 20 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// violations collects what a Refused or Record func is told.
type violations struct {
	mu   sync.Mutex
	list []policy.Violation
}

func (v *violations) add(x policy.Violation) {
	v.mu.Lock()
	v.list = append(v.list, x)
	v.mu.Unlock()
}

func (v *violations) all() []policy.Violation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.list)
}

// find returns the first violation of method, if any.
func (v *violations) find(method string) (policy.Violation, bool) {
	for _, x := range v.all() {
		if x.Method == method {
			return x, true
		}
	}
	return policy.Violation{}, false
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// echoServer serves on 127.0.0.1 (or addr) of this machine: it answers
// each line with "echo LINE".
func echoServer(t *testing.T, addr string) net.Listener {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, "echo "+line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l
}

// talk sends a line on a new connection to addr and returns the answer
// (or the error that ended the exchange).
func talk(addr, line string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}
