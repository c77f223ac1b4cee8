package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^bg-run-(\d+)-([0-9a-f]{12})$`)
	a, b := NewID("bg-run"), NewID("bg-run")
	for _, id := range []string{a, b} {
		m := re.FindStringSubmatch(id)
		if m == nil {
			t.Fatalf("id %q is not PREFIX-PID-RANDOM", id)
		}
		if pid, _ := strconv.Atoi(m[1]); pid != os.Getpid() {
			t.Errorf("id %q names pid %d, not its owner %d", id, pid, os.Getpid())
		}
	}
	if a == b {
		t.Errorf("two ids alike: %q", a)
	}
}

func TestMemoryViolation(t *testing.T) {
	for _, c := range []struct {
		limit int64
		kill  container.OOMKill
		rule  string
	}{
		{64 << 20, container.OOMKill{Comm: "python3", Pid: 4242}, "memory limit (64 MiB) reached: python3 (pid 4242) killed"},
		{1536 << 20, container.OOMKill{Comm: "node"}, "memory limit (1.5 GiB) reached: node killed"},
		{64 << 20, container.OOMKill{Pid: 7}, "memory limit (64 MiB) reached: a process killed"},
		{64 << 20, container.OOMKill{}, "memory limit (64 MiB) reached: a process killed"},
		{4 << 20, container.OOMKill{Comm: "evil\x1b[2J", Pid: 1}, "memory limit (4 MiB) reached: evil?[2J (pid 1) killed"},
	} {
		v := MemoryViolation(c.limit, c.kill)
		if v.Method != "memory" || v.Rule != c.rule {
			t.Errorf("MemoryViolation(%d, %+v) = %q %q, want memory %q", c.limit, c.kill, v.Method, v.Rule, c.rule)
		}
		if v.Time.IsZero() || v.Time.Location().String() != "UTC" {
			t.Errorf("time %v, want now in UTC", v.Time)
		}
	}
}

func TestUsernsViolation(t *testing.T) {
	for _, call := range []string{"unshare", "clone"} {
		v := usernsViolation(call)
		if v.Method != call || !strings.Contains(v.Hint, "--allow-userns") || v.Rule == "" || v.Time.IsZero() {
			t.Errorf("usernsViolation(%q) = %+v", call, v)
		}
	}
}

// TestReadEvents feeds the init's events pipe: only the two calls of a
// refused user namespace are told, each time; readEvents ends, closing its
// end, when the writer closes.
func TestReadEvents(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var got violations
	done := make(chan struct{})
	go func() { defer close(done); readEvents(r, got.add) }()
	fmt.Fprint(w, "userns unshare\nuserns bogus\nhello\nuserns clone\nuserns  unshare\n\nuserns unshare\n")
	w.Close()
	<-done
	var calls []string
	for _, v := range got.all() {
		calls = append(calls, v.Method)
	}
	if strings.Join(calls, " ") != "unshare clone unshare" {
		t.Errorf("told %q, want unshare clone unshare", calls)
	}
	if err := r.Close(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("readEvents left its end open: %v", err)
	}
}

// processOptions asks for everything a container would get around it.
func processOptions(t *testing.T, exposed net.Listener, refused func(policy.Violation)) Options {
	rules, err := policy.NewRules([]string{"example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		ID: "t-1", Command: "echo hi", Argv: []string{"echo", "hi"}, Env: []string{"A=1"},
		FS:          policy.Filesystem{Workdir: "/w"},
		Stdin:       strings.NewReader(""),
		Exposes:     []Expose{{Listener: exposed, Port: 8080}},
		Reach:       []Reach{{Host: netip.MustParseAddrPort("127.0.0.1:9")}},
		Proxy:       &Proxy{Port: ProxyPort, Rules: rules},
		Probes:      true,
		Limits:      policy.Limits{Memory: 64 << 20, Pids: 10, EnforcedBy: container.ByWatchdog},
		QuietWrites: true, AllowUserNamespaces: true, Terminal: true,
		Refused: refused,
	}
}

// A shell without namespaces gets nothing around it: no factory, no
// events, no resolver, no watchdog; its exposed ports' listeners close.
func TestStartProcessIsolation(t *testing.T) {
	exposed := listener(t)
	var told violations
	r := &fakeRunner{iso: container.Process}
	o := processOptions(t, exposed, told.add)
	s, err := Start(r, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := r.spec(t)
	if r.sockets || r.events || spec.Resolver {
		t.Errorf("a process shell got sockets %v, events %v, resolver %v", r.sockets, r.events, spec.Resolver)
	}
	if spec.ID != o.ID || spec.Command != o.Command || strings.Join(spec.Argv, " ") != "echo hi" ||
		strings.Join(spec.Env, " ") != "A=1" || spec.FS.Workdir != "/w" || spec.Stdin != o.Stdin ||
		!spec.Terminal || !spec.QuietWrites || !spec.AllowUserNamespaces || spec.Limits != o.Limits {
		t.Errorf("the spec does not carry the options: %+v", spec)
	}
	if !isClosed(exposed) {
		t.Errorf("an exposed port's listener is still open")
	}
	if s.Isolation() != container.Process {
		t.Errorf("isolation %q", s.Isolation())
	}
	if s.Shell() != r.shells[0] {
		t.Errorf("the shell is wrapped (%T): a process shell has no watchdog", s.Shell())
	}
	// The memory limit's kills are told, whatever the isolation.
	if spec.MemoryKills == nil {
		t.Fatal("no MemoryKills with Refused and a memory limit")
	}
	spec.MemoryKills(container.OOMKill{Comm: "cc1", Pid: 5})
	if v, ok := told.find("memory"); !ok || !strings.Contains(v.Rule, "cc1 (pid 5)") {
		t.Errorf("a memory kill was told as %+v", told.all())
	}
}

func TestStartRunnerFails(t *testing.T) {
	exposed := listener(t)
	boom := errors.New("boom")
	r := &fakeRunner{iso: container.Process, err: boom}
	s, err := Start(r, Options{ID: "t", Exposes: []Expose{{Listener: exposed, Port: 80}}})
	if !errors.Is(err, boom) || s != nil {
		t.Fatalf("Start = %v, %v; want the runner's error", s, err)
	}
	if !isClosed(exposed) {
		t.Errorf("a listener is left open after a failed start")
	}
}

func TestNoMemoryKillsWithoutLimitOrListener(t *testing.T) {
	for _, o := range []Options{
		{Refused: func(policy.Violation) {}},
		{Limits: policy.Limits{Memory: 64 << 20}},
	} {
		r := &fakeRunner{iso: container.Process}
		s, err := Start(r, o)
		if err != nil {
			t.Fatal(err)
		}
		if r.spec(t).MemoryKills != nil {
			t.Errorf("MemoryKills set for %+v", o)
		}
		s.Close()
	}
}

// Close and StopRelays, however often and from however many goroutines,
// close the shell once.
func TestCloseOnceConcurrently(t *testing.T) {
	r := &fakeRunner{iso: container.Process}
	s, err := Start(r, Options{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	sh := r.shells[0].(*stubShell)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				s.StopRelays()
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	s.StopRelays()
	if err := s.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if n := sh.count("close"); n != 1 {
		t.Errorf("the shell was closed %d times", n)
	}
	if _, err := s.Shell().Wait(); err != nil {
		t.Errorf("Wait after Close: %v", err)
	}
}

// A process shell's ports are this machine's: Probe dials its loopback,
// IPv4 first, then IPv6.
func TestProbeProcessShell(t *testing.T) {
	s, err := Start(&fakeRunner{iso: container.Process}, Options{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	l := listener(t)
	if !s.Probe(ctx, port(l)) {
		t.Errorf("Probe of a listening port: false")
	}
	closed := listener(t)
	p := port(closed)
	closed.Close()
	if s.Probe(ctx, p) {
		t.Errorf("Probe of a closed port: true")
	}
	for _, bad := range []int{0, -1, 65536} {
		if s.Probe(ctx, bad) {
			t.Errorf("Probe(%d): true", bad)
		}
	}
	if l6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		defer l6.Close()
		if !s.Probe(ctx, port(l6)) {
			t.Errorf("Probe of a port listening on ::1 only: false")
		}
	} else {
		t.Logf("no IPv6 loopback here (%v): its probe is not tried", err)
	}
}
