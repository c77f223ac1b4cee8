package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// freePort is a port nothing listens on, on 127.0.0.1 of this machine.
func freePort(t *testing.T) int {
	t.Helper()
	l := listener(t)
	p := port(l)
	l.Close()
	return p
}

// refuses reports whether a TCP connect to addr is refused: nothing
// listens there (any more).
func refuses(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
	}
	return errors.Is(err, unix.ECONNREFUSED)
}

// useResolverPort moves the shell's resolver (ResolverAddr) to a port of
// 127.0.0.53 that a test may bind, for the test's length: port 53 is
// root's, and these shells share this machine's network.
func useResolverPort(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.53:0")))
	if err != nil {
		t.Fatal(err)
	}
	a := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.53"), c.LocalAddr().(*net.UDPAddr).AddrPort().Port())
	c.Close()
	old := ResolverAddr
	ResolverAddr = a
	t.Cleanup(func() { ResolverAddr = old })
	return a
}

// resolverOf asks the shell's resolver at a.
func resolverOf(a netip.AddrPort) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, a.String())
	}}
}

// dupFile keeps a descriptor of f for the test, whatever closes f.
func dupFile(t *testing.T, f *os.File) int {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// hungUp reports whether the other end of a socket or pipe is closed,
// without waiting.
func hungUp(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(p, 0); err != nil || n == 0 {
		return false
	}
	if p[0].Revents&unix.POLLHUP != 0 {
		return true
	}
	b := make([]byte, 1)
	n, _ := unix.Read(fd, b)
	return n == 0
}

// TestStartMakesOnlyWhatIsNeeded: a container gets a socket factory when
// something needs sockets inside, an events pipe when a refused user
// namespace is to be told and nothing else tells it, its resolver with
// the proxy. When the runner fails, nothing is left: the listeners are
// closed and the factory hung up on.
func TestStartMakesOnlyWhatIsNeeded(t *testing.T) {
	rules := mustRules(t, []string{"example.com"}, nil)
	refused := func(policy.Violation) {}
	for _, c := range []struct {
		name                      string
		o                         Options
		sockets, events, resolver bool
	}{
		{"nothing", Options{}, false, false, false},
		{"expose", Options{Exposes: []Expose{{Port: 80}}}, true, false, false},
		{"reach", Options{Reach: []Reach{{Host: netip.MustParseAddrPort("127.0.0.1:9")}}}, true, false, false},
		{"proxy", Options{Proxy: &Proxy{Port: 3128, Rules: rules}}, true, false, true},
		{"probes", Options{Probes: true}, true, false, false},
		{"refused", Options{Refused: refused}, false, true, false},
		{"refused but allowed", Options{Refused: refused, AllowUserNamespaces: true}, false, false, false},
		{"refused with the egress", Options{Refused: refused, Proxy: &Proxy{Port: 3128, Rules: rules}}, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var exposed net.Listener
			if len(c.o.Exposes) > 0 {
				exposed = listener(t)
				c.o.Exposes[0].Listener = exposed
			}
			boom := errors.New("boom")
			sockets, events := -1, -1
			r := &fakeRunner{iso: container.Container, err: boom, onStart: func(s *container.Spec) {
				if s.Sockets != nil {
					sockets = dupFile(t, s.Sockets)
				}
				if s.Events != nil {
					events = dupFile(t, s.Events)
				}
			}}
			s, err := Start(r, c.o)
			if !errors.Is(err, boom) || s != nil {
				t.Fatalf("Start = %v, %v; want the runner's error", s, err)
			}
			spec := r.spec(t)
			if r.sockets != c.sockets || r.events != c.events || spec.Resolver != c.resolver {
				t.Errorf("sockets %v, events %v, resolver %v; want %v %v %v", r.sockets, r.events, spec.Resolver, c.sockets, c.events, c.resolver)
			}
			// Start's copies are closed, and the factory's end: the init
			// would see the hang-up.
			if spec.Sockets != nil && spec.Sockets.Fd() != ^uintptr(0) {
				t.Errorf("the init's end of the factory is still open here")
			}
			if spec.Events != nil && spec.Events.Fd() != ^uintptr(0) {
				t.Errorf("the events pipe's write end is still open here")
			}
			if sockets >= 0 && !hungUp(sockets) {
				t.Errorf("the factory did not hang up on the init")
			}
			if events >= 0 {
				// The reader stays until every writer is gone: this
				// test's copy is the last.
				unix.Close(events)
			}
			if exposed != nil && !isClosed(exposed) {
				t.Errorf("an exposed port's listener is still open")
			}
		})
	}
}

// TestStartReleasesTheCommandLast puts the test between the factory and
// PID 1: when the start step arrives, every listener inside exists and
// serves, and the step is the last request before the command runs; the
// command's first act reaches them.
func TestStartReleasesTheCommandLast(t *testing.T) {
	for _, withProxy := range []bool{false, true} {
		t.Run(fmt.Sprintf("proxy=%v", withProxy), func(t *testing.T) {
			reachHost := echoServer(t, "127.0.0.2:0")
			reachInside := fmt.Sprintf("127.0.0.1:%d", port(reachHost))
			inside := echoServer(t, "")
			exposed := listener(t)
			o := Options{ID: "t", Env: []string{helperVar + "=dial"},
				Exposes: []Expose{{Listener: exposed, Port: port(inside)}},
				Reach:   []Reach{{Host: netip.MustParseAddrPort(reachHost.Addr().String())}}}
			dials := []string{reachInside}
			want := byte('g')
			var resolver netip.AddrPort
			if withProxy {
				resolver = useResolverPort(t)
				pp := freePort(t)
				o.Proxy = &Proxy{Port: pp, Rules: mustRules(t, []string{"allowed.test"}, nil),
					Hosts: map[string]netip.Addr{"allowed.test": netip.MustParseAddr("192.0.2.7")}}
				dials = append(dials, fmt.Sprintf("127.0.0.1:%d", pp))
				want = 'G'
			}
			var once sync.Once
			ir := &initRunner{t: t, args: dials}
			ir.atStart = func(code byte) {
				once.Do(func() {
					if code != want {
						t.Errorf("start step %q, want %q", code, want)
					}
					// Dials only: the factory waits for the step's answer
					// a bounded time (answerTimeout).
					dial := func(a string) (net.Conn, error) { return net.Dial("tcp", a) }
					if withProxy { // the shell has a network namespace of its own
						dial = func(a string) (net.Conn, error) { return dialIn(ir.pid(), a) }
					}
					for _, a := range dials {
						if c, err := dial(a); err != nil {
							t.Errorf("at the start step nothing listens on %s: %v", a, err)
						} else {
							c.Close()
						}
					}
					if withProxy {
						res := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
							return dialIn(ir.pid(), resolver.String()) // a stream: DNS over TCP
						}}
						addrs, err := res.LookupNetIP(context.Background(), "ip4", "allowed.test")
						if err != nil || len(addrs) != 1 || !fakeV4.Contains(addrs[0]) {
							t.Errorf("at the start step the resolver answers %v, %v", addrs, err)
						}
					}
				})
			}
			r := &fakeRunner{iso: container.Container, start: ir.start}
			s, err := Start(r, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Shell().Wait(); err != nil {
				t.Fatal(err)
			}
			for _, a := range dials {
				if !strings.Contains(ir.out.String(), "dial "+a+": ok") {
					t.Errorf("the command did not reach %s: %q", a, ir.out.String())
				}
			}
			req := ir.sawRequests()
			if i := strings.IndexByte(req, want); i != len(req)-1 || strings.Count(req, string(want)) != 1 {
				t.Errorf("requests %q: the start step must come once, last", req)
			}
			if !r.sockets {
				t.Errorf("no factory")
			}
		})
	}
}

// startInit starts a container shell with PID 1 running the helper part.
func startInit(t *testing.T, part string, o Options, args ...string) (*Sandbox, *initRunner) {
	t.Helper()
	ir := &initRunner{t: t, args: args}
	o.Env = append(o.Env, helperVar+"="+part)
	s, err := Start(&fakeRunner{iso: container.Container, start: ir.start}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ir
}

// TestStartRelaysExposedPorts: each exposed port's connections reach the
// port inside, as many at once as MaxConnections; StopRelays shuts the
// ports and their connections and leaves the shell; Close ends it.
func TestStartRelaysExposedPorts(t *testing.T) {
	inside := echoServer(t, "")
	exposed := listener(t)
	addr := exposed.Addr().String()
	s, ir := startInit(t, "wait", Options{ID: "t", MaxConnections: 1,
		Exposes: []Expose{{Listener: exposed, Port: port(inside)}}})
	c1, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	fmt.Fprintf(c1, "one\n")
	buf := make([]byte, 64)
	if n, err := c1.Read(buf); string(buf[:n]) != "echo one\n" {
		t.Fatalf("through the exposed port: %q %v", buf[:n], err)
	}
	if got, err := talk(addr, "two"); err == nil {
		t.Errorf("a connection past MaxConnections was carried: %q", got)
	}
	s.StopRelays()
	if n, err := c1.Read(buf); err == nil {
		t.Errorf("a relayed connection outlived StopRelays: %q", buf[:n])
	}
	if !refuses(addr) {
		t.Errorf("the exposed port still accepts after StopRelays")
	}
	if ir.shell.ended() || ir.shell.count("close") != 0 {
		t.Errorf("StopRelays ended the shell")
	}
	s.StopRelays()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if !ir.shell.ended() || ir.shell.count("close") != 1 {
		t.Errorf("after Close the shell runs (closed %d times)", ir.shell.count("close"))
	}
}

// TestStartReach: a reached address answers on 127.0.0.1:PORT inside
// while Allowed says so; a port the shell's side already holds is left
// to it.
func TestStartReach(t *testing.T) {
	host := echoServer(t, "127.0.0.2:0")
	taken := echoServer(t, "127.0.0.2:0")
	// The shell's own server on the second port: the reach gives way.
	echoServer(t, fmt.Sprintf("127.0.0.1:%d", port(taken)))
	var mu sync.Mutex
	allowed := true
	s, _ := startInit(t, "wait", Options{ID: "t", Reach: []Reach{
		{Host: netip.MustParseAddrPort(host.Addr().String()), Allowed: func() bool { mu.Lock(); defer mu.Unlock(); return allowed }},
		{Host: netip.MustParseAddrPort(taken.Addr().String())},
	}})
	inside := fmt.Sprintf("127.0.0.1:%d", port(host))
	if got, err := talk(inside, "a"); got != "echo a\n" {
		t.Errorf("reached while allowed: %q %v", got, err)
	}
	mu.Lock()
	allowed = false
	mu.Unlock()
	if got, err := talk(inside, "b"); err == nil {
		t.Errorf("reached once no longer allowed: %q", got)
	}
	s.StopRelays()
	if !refuses(inside) {
		t.Errorf("the reached port still listens inside after StopRelays")
	}
	// The port the shell held was never the reach's: it serves on.
	if got, err := talk(fmt.Sprintf("127.0.0.1:%d", port(taken)), "c"); got != "echo c\n" {
		t.Errorf("the shell's own port: %q %v", got, err)
	}
}

func TestReachTarget(t *testing.T) {
	host := netip.MustParseAddrPort("127.0.0.2:8080")
	allowed := true
	tg := reachTarget(Reach{Host: host, Allowed: func() bool { return allowed }})
	if len(tg.Addrs) != 1 || tg.Addrs[0] != host {
		t.Errorf("target %v, want %v", tg.Addrs, host)
	}
	fd, err := tg.Socket(unix.AF_INET)
	if err != nil {
		t.Fatalf("socket while allowed: %v", err)
	}
	unix.Close(fd)
	allowed = false
	if fd, err := tg.Socket(unix.AF_INET); !errors.Is(err, ErrNotExposed) || fd != -1 {
		t.Errorf("socket once not allowed: %d, %v", fd, err)
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	// No Allowed: always.
	fd, err = reachTarget(Reach{Host: host}).Socket(unix.AF_INET6)
	if err != nil {
		t.Fatalf("socket without Allowed: %v", err)
	}
	unix.Close(fd)
}

// TestProbeContainer: Probe reaches inside through the factory; a
// container without one has no way in.
func TestProbeContainer(t *testing.T) {
	ctx := context.Background()
	s, _ := startInit(t, "wait", Options{ID: "t", Probes: true})
	l := listener(t)
	if !s.Probe(ctx, port(l)) {
		t.Errorf("Probe of a listening port: false")
	}
	if s.Probe(ctx, freePort(t)) {
		t.Errorf("Probe of a closed port: true")
	}
	if s.Probe(ctx, 0) || s.Probe(ctx, 65536) {
		t.Errorf("Probe of a port out of range: true")
	}
	if l6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		defer l6.Close()
		if !s.Probe(ctx, port(l6)) {
			t.Errorf("Probe of a port listening on ::1 only: false")
		}
	}

	bare, err := Start(&fakeRunner{iso: container.Container}, Options{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if bare.Probe(ctx, port(l)) {
		t.Errorf("a container without a factory probed a port")
	}
}

// TestStartUndoesOnError: whatever fails once the shell runs, the start
// ends with ErrSandbox, the shell is closed once, and every listener,
// outside and inside, is closed.
func TestStartUndoesOnError(t *testing.T) {
	for _, c := range []struct {
		name  string
		proxy bool
		spoil func(t *testing.T, ir *initRunner, o *Options) // makes the start fail
		want  string
	}{
		{"no init answers", false, func(t *testing.T, ir *initRunner, o *Options) { ir.noInit = true }, "start the command"},
		// Ports taken inside the shell's namespace: by the reached port's
		// listener there, made before the proxy and the resolver.
		{"proxy port taken", true, func(t *testing.T, ir *initRunner, o *Options) { o.Proxy.Port = int(o.Reach[0].Host.Port()) }, "start the shell's proxy"},
		{"resolver port taken", true, func(t *testing.T, ir *initRunner, o *Options) {
			ResolverAddr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), o.Reach[0].Host.Port())
		}, "start the shell's resolver"},
		{"init ends at the start step", false, killAtStart, "start the command"},
		{"init ends at the egress's start step", true, killAtStart, "start the command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reachHost := echoServer(t, "127.0.0.2:0")
			reachInside := fmt.Sprintf("127.0.0.1:%d", port(reachHost))
			exposed := listener(t)
			o := Options{ID: "t", Env: []string{helperVar + "=wait"},
				Exposes: []Expose{{Listener: exposed, Port: 80}},
				Reach:   []Reach{{Host: netip.MustParseAddrPort(reachHost.Addr().String())}}}
			if c.proxy {
				useResolverPort(t)
				o.Proxy = &Proxy{Port: freePort(t), Rules: mustRules(t, []string{"example.com"}, nil)}
			}
			ir := &initRunner{t: t}
			c.spoil(t, ir, &o)
			r := &fakeRunner{iso: container.Container, start: ir.start}
			s, err := Start(r, o)
			if err == nil {
				s.Close()
				t.Fatal("Start succeeded")
			}
			if s != nil || !errors.Is(err, container.ErrSandbox) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Start = %v, %v; want ErrSandbox: %s", s, err, c.want)
			}
			// An init that is gone is seen gone, not waited for as if it
			// were slow: only it held its end of the socketpair.
			if strings.Contains(err.Error(), "did not answer") {
				t.Errorf("Start = %v: the init's end was still held here", err)
			}
			var closes int
			switch sh := r.shells[0].(type) {
			case *procShell:
				closes = sh.count("close")
				if !sh.ended() {
					t.Errorf("the init runs on")
				}
			case *stubShell:
				closes = sh.count("close")
			}
			if closes != 1 {
				t.Errorf("the shell was closed %d times, want once", closes)
			}
			if !isClosed(exposed) || !refuses(exposed.Addr().String()) {
				t.Errorf("the exposed port is still open")
			}
			if !refuses(reachInside) {
				t.Errorf("the reached port still listens inside")
			}
			if o.Proxy != nil && c.name != "proxy port taken" && !refuses(fmt.Sprintf("127.0.0.1:%d", o.Proxy.Port)) {
				t.Errorf("the proxy still listens inside")
			}
		})
	}
}

// killAtStart ends the init as the start step comes: it never answers.
func killAtStart(t *testing.T, ir *initRunner, o *Options) {
	ir.atStart = func(byte) {
		ir.mu.Lock()
		sh := ir.shell
		ir.mu.Unlock()
		_ = sh.Kill()
		<-sh.done
	}
}

// listenerAt holds 127.0.0.1:port for the test.
func listenerAt(t *testing.T, p int) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// TestCloseContainerOnce: Close and StopRelays from many goroutines
// close the shell and the factory once.
func TestCloseContainerOnce(t *testing.T) {
	exposed := listener(t)
	s, ir := startInit(t, "wait", Options{ID: "t", Exposes: []Expose{{Listener: exposed, Port: 80}}, Probes: true})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 1 {
				s.StopRelays()
				return
			}
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := ir.shell.count("close"); n != 1 {
		t.Errorf("the shell was closed %d times", n)
	}
	if s.Probe(context.Background(), port(listener(t))) {
		t.Errorf("Probe through a closed factory: true")
	}
	if !refuses(exposed.Addr().String()) {
		t.Errorf("the exposed port is still open")
	}
}

// TestStartTellsRefusedUserns: PID 1 tells of the first user namespace
// it refused on the events pipe, and the sandbox passes it on.
func TestStartTellsRefusedUserns(t *testing.T) {
	var told violations
	s, ir := startInit(t, "unshare", Options{ID: "t", Refused: told.add})
	if _, err := s.Shell().Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ir.out.String(), "unshare: operation not permitted") {
		t.Errorf("the command's unshare: %q", ir.out.String())
	}
	eventually(t, "the refusal told", func() bool { _, ok := told.find("unshare"); return ok })
}

// helperShell starts the helper as a plain process of this machine.
func helperShell(t *testing.T, part string) func(*container.Spec) (container.Shell, error) {
	return func(*container.Spec) (container.Shell, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = []string{helperVar + "=" + part}
		sh, err := startProc(cmd, false)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { sh.Close() })
		return sh, nil
	}
}

// TestStartWatchdog: the watchdog holds a container's memory and process
// bounds where the limits say it does, and names the bound it ended the
// shell for; elsewhere the shell is the runner's own.
func TestStartWatchdog(t *testing.T) {
	for _, c := range []struct {
		name    string
		limits  policy.Limits
		watched bool
		hit     string
	}{
		{"memory", policy.Limits{Memory: 1, EnforcedBy: container.ByWatchdog}, true, "memory"},
		{"pids", policy.Limits{Pids: 1, EnforcedBy: container.ByWatchdog}, true, "pids"},
		{"within bounds", policy.Limits{Memory: 1 << 40, Pids: 1 << 20, EnforcedBy: container.ByWatchdog}, true, ""},
		{"by the cgroup", policy.Limits{Memory: 1, Pids: 1, EnforcedBy: container.ByCgroup}, false, ""},
		{"cpus only", policy.Limits{CPUs: 1, EnforcedBy: container.ByWatchdog}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &fakeRunner{iso: container.Container, start: helperShell(t, "wait")}
			s, err := Start(r, Options{ID: "t", Limits: c.limits})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sh := r.shells[0].(*procShell)
			if _, ok := s.Shell().(*watched); ok != c.watched {
				t.Fatalf("watched %v, want %v", ok, c.watched)
			}
			if c.hit != "" {
				ex, err := s.Shell().Wait()
				if err != nil || ex.Limit != c.hit || ex.Code != 128+int(unix.SIGKILL) {
					t.Errorf("Wait = %+v, %v; want killed for %s", ex, err, c.hit)
				}
				return
			}
			if sh.ended() {
				t.Errorf("a shell within its bounds ended")
			}
			s.Close()
			if s.dog != nil {
				select {
				case <-s.dog.done:
				default:
					t.Errorf("the watchdog runs on after Close")
				}
			}
			if ex, _ := s.Shell().Wait(); ex.Limit != "" {
				t.Errorf("a shell closed by its owner ended for %q", ex.Limit)
			}
		})
	}
}

// A watched shell's end names the watchdog's bound, unless the runner
// named one already; its token passes through.
func TestWatchedShell(t *testing.T) {
	for _, c := range []struct {
		runner, dog, want string
	}{
		{"", "memory", "memory"},
		{"pids", "memory", "pids"},
		{"", "", ""},
	} {
		sh := &limitShell{stubShell: newStubShell(), limit: c.runner}
		sh.token = "tok"
		dog := newStoppedWatchdog(c.dog)
		w := &watched{Shell: sh, dog: dog}
		sh.end()
		ex, err := w.Wait()
		if err != nil || ex.Limit != c.want {
			t.Errorf("runner %q, watchdog %q: Wait = %+v, %v; want limit %q", c.runner, c.dog, ex, err, c.want)
		}
		if container.ShellToken(w) != "tok" {
			t.Errorf("token %q, want the runner's", container.ShellToken(w))
		}
	}
}

// limitShell ends naming a limit of the runner's own.
type limitShell struct {
	*stubShell
	limit string
}

func (s *limitShell) Wait() (container.Exit, error) {
	ex, err := s.stubShell.Wait()
	ex.Limit = s.limit
	return ex, err
}

// newStoppedWatchdog is a watchdog that is done, having hit hit.
func newStoppedWatchdog(hit string) *watchdog {
	w := &watchdog{hit: hit, stop: make(chan struct{}), done: make(chan struct{})}
	close(w.done)
	return w
}

// dialIn connects to addr in the network namespace of process pid, from a
// thread that enters it for the call (root only: the namespace's owner
// may not enter it from an unprivileged user namespace).
func dialIn(pid int, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends in the other namespace
		ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("enter the shell's network namespace (root only): %w", err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
