// Package sandbox starts one shell in its sandbox with everything around
// it, in one order and with one owner: the runner (container or process
// group), the socket factory on the container init's fd 3, the relays of
// the shell's exposed ports, the reach of its session's ports (foreground
// shells), the allowlist proxy inside, the factory's start step that lets
// the command run, and the teardown of all of it. Foreground runs,
// background supervisors and the MCP server start every shell here.
//
// A Sandbox is safe for concurrent use.
package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cshell/cshell/broker"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// Options is one shell to start.
type Options struct {
	ID      string   // unique among running shells: see NewID
	Command string   // a shell command line, run with bash -c
	Argv    []string // the program and its arguments, run as given; Command then only says what runs
	Env     []string
	FS      policy.Filesystem

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Terminal       bool // a terminal of its own (Shell().Console())

	// Exposes are host listeners, bound by the caller (so that a port in
	// use refused the start before anything ran), each relayed to its
	// port inside. The sandbox owns them from Start on.
	Exposes []Expose
	// MaxConnections bounds the connections each relay carries at once
	// (0: no bound).
	MaxConnections int
	// Reach are host addresses a foreground shell reaches at
	// 127.0.0.1:PORT inside (its session's exposed ports).
	Reach []Reach
	// Proxy, when set, listens inside the shell for the allowed hosts;
	// the same rules hold the shell's egress (egress_linux.go), for
	// programs that dial sockets themselves, and its resolver.
	Proxy *Proxy
	// Probes gives a container's init a socket factory even when nothing
	// above needs one, so that Probe reaches inside (background shells).
	Probes bool

	// Limits bound the shell: by its cgroup where cshell makes one, else
	// by the kernel's per-namespace process limit and a watchdog of the
	// sandbox's (container.LimitsEnforcement). Exit.Limit names the bound
	// that ended it.
	Limits policy.Limits
	// AllowUserNamespaces lets the shell make user namespaces of its own.
	AllowUserNamespaces bool
	// QuietWrites: refused writes are not told (container.Spec).
	QuietWrites bool
	// Held starts a container shell without its command (a warm sandbox):
	// everything around it is made, and the command waits for Begin, which
	// gives it the command, its directory and its streams. Command, Argv,
	// the streams and Terminal are then unused.
	Held bool

	// Refused hears of what the syscall filter refused that a flag would
	// allow (the first user namespace), and of each process the memory
	// limit's OOM killer ended (Method "memory"), to record or to tell.
	Refused func(policy.Violation)
}

// Expose is one exposed port: the host's listener and the port inside.
type Expose struct {
	Listener net.Listener
	Port     int
}

// Reach is one host address a shell reaches. Allowed, asked at every
// connection, says whether it still may (the shell that exposes it runs).
type Reach struct {
	Host    netip.AddrPort
	Allowed func() bool
}

// Proxy is the allowlist proxy inside a shell: on 127.0.0.1:Port, deciding
// by Rules, telling Record of each refusal, and Asking of each request
// that waits for a grant (Rules.Asks) as it starts to wait.
type Proxy struct {
	Port   int
	Rules  *policy.Rules
	Record func(policy.Violation)
	Asking func(host string, port int)
	// Hosts are names given their address (--add-host), for the proxy,
	// the shell's resolver and its egress alike.
	Hosts map[string]netip.Addr
	// Credentials are added to the shell's requests to their hosts by a
	// broker between the proxy (and the egress) and those hosts; the
	// shell holds placeholders (see brokerFor).
	Credentials []Credential
	// Revoked reports whether a credential was taken back from the shell
	// (cshell allow --revoke-credential); nil: none is.
	Revoked func(name string) bool

	broker *broker.Broker // made at Start, when there are Credentials
}

// Sandbox is one started shell and what serves it.
type Sandbox struct {
	sh      container.Shell
	dog     *watchdog // nil unless it holds a bound
	iso     container.Isolation
	factory *netrelay.Factory   // nil without a network namespace
	tracker *netrelay.Conntrack // the namespace's connection tracking (egress)

	stop    context.CancelFunc
	relays  sync.WaitGroup
	stopped sync.Once
	closed  sync.Once

	// The calls the filter hands over are answered until Close.
	endCalls context.CancelFunc
	calls    sync.WaitGroup

	// The broker's connections from the egress, served until Close.
	brokerMu     sync.Mutex
	brokerClosed bool
	brokerConns  sync.WaitGroup

	// begin lets the command run: the factory's start step, and the
	// answering of the calls the filter hands over. Start calls it, or
	// Begin for a held shell.
	begin    func() error
	begun    sync.Once
	held     bool
	binds    interface{ Unchanged() bool } // the runner's shell, when it can tell
	startDog func()                        // starts the watchdog, where one holds the limits
}

// Unchanged reports whether what a held shell's binds were made of is
// still there as it was (container.Shell's Unchanged, when the runner's
// shell has one): a warm sandbox whose folder was replaced since is not
// the sandbox a cold start would make.
func (s *Sandbox) Unchanged() bool {
	return s.binds == nil || s.binds.Unchanged()
}

// ErrNotExposed ends a relayed connection to a reached address that is no
// longer allowed.
var ErrNotExposed = errors.New("no running shell of the session exposes the port")

// Start starts the shell with runner (container.New gives the one for an
// isolation) and everything around it; the command runs once every
// listener inside (the proxy, the reached ports) exists. On an error
// nothing is left: the shell is killed, the listeners closed.
func Start(runner container.Runner, o Options) (*Sandbox, error) {
	closeListeners := func() {
		for _, e := range o.Exposes {
			e.Listener.Close()
		}
	}
	var err error
	s := &Sandbox{iso: runner.Isolation(), held: o.Held}
	inside := s.iso == container.Container
	if o.Held && (!inside || o.Terminal) {
		closeListeners()
		return nil, fmt.Errorf("%w: only a container shell without a terminal can be held", container.ErrSandbox)
	}
	if !inside {
		// Its servers bind this machine's ports themselves: nothing to
		// relay, reach or proxy.
		closeListeners()
		o.Exposes, o.Reach, o.Proxy = nil, nil, nil
	}
	var sockets, events *os.File
	// With the egress, cshell itself answers the calls the filter hands
	// over; else PID 1 does, and tells of a refused user namespace on its
	// events pipe.
	egress := inside && o.Proxy != nil
	if inside && o.Refused != nil && !o.AllowUserNamespaces && !egress {
		r, w, err := os.Pipe()
		if err != nil {
			closeListeners()
			return nil, fmt.Errorf("%w: %w", container.ErrSandbox, err)
		}
		events = w                  // closed right after the start: the init has its own copy
		go readEvents(r, o.Refused) // ends when the init closes its end
	}
	if inside && (len(o.Exposes) > 0 || len(o.Reach) > 0 || o.Proxy != nil || o.Probes || o.Held) {
		parent, child, err := socketPair()
		if err != nil {
			closeListeners()
			if events != nil {
				events.Close()
			}
			return nil, fmt.Errorf("%w: %w", container.ErrSandbox, err)
		}
		sockets = child // closed right after the start: the init has its own copy
		s.factory = netrelay.NewFactory(parent)
	}
	env := o.Env
	var trust []byte
	if inside && o.Proxy != nil && len(o.Proxy.Credentials) > 0 {
		p := *o.Proxy // the caller's stays as it was (a warm sandbox's options are compared)
		o.Proxy = &p
		if p.broker, env, trust, err = brokerFor(o.Proxy, env); err != nil {
			closeListeners()
			if s.factory != nil {
				s.factory.Close()
			}
			if sockets != nil {
				sockets.Close()
			}
			if events != nil {
				events.Close()
			}
			return nil, fmt.Errorf("%w: %w", container.ErrSandbox, err)
		}
	}
	spec := &container.Spec{
		ID: o.ID, Command: o.Command, Argv: o.Argv, Env: env, FS: o.FS, Trust: trust,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Terminal: o.Terminal,
		Sockets: sockets, Events: events, Limits: o.Limits, AllowUserNamespaces: o.AllowUserNamespaces, QuietWrites: o.QuietWrites,
		Resolver: egress, Redirect: egress, Held: o.Held,
	}
	if o.Held {
		spec.Stdin, spec.Stdout, spec.Stderr = nil, nil, nil
	}
	if egress {
		spec.Tracker = func(f *os.File) { s.tracker = netrelay.NewConntrack(f) }
	}
	if o.Refused != nil && o.Limits.Memory > 0 {
		spec.MemoryKills = func(k container.OOMKill) { o.Refused(MemoryViolation(o.Limits.Memory, k)) }
	}
	s.sh, err = runner.Start(spec)
	if b, ok := s.sh.(interface{ Unchanged() bool }); ok {
		s.binds = b
	}
	// Only the init holds its ends now: one that dies before it answers
	// is seen gone at once, not after the factory's wait.
	for _, f := range []*os.File{sockets, events} {
		if f != nil {
			f.Close()
		}
	}
	if err != nil {
		closeListeners()
		if s.factory != nil {
			s.factory.Close()
		}
		return nil, err
	}
	if inside && o.Limits.EnforcedBy == container.ByWatchdog && (o.Limits.Memory > 0 || o.Limits.Pids > 0) {
		w := &watched{Shell: s.sh}
		s.sh = w
		s.startDog = func() {
			s.dog = startWatchdog(w.Shell, o.Limits)
			w.dog = s.dog
		}
		if !o.Held { // a held shell runs nothing to watch until Begin
			s.startDog()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	if s.factory == nil {
		return s, nil
	}
	fail := func(err error) (*Sandbox, error) {
		s.Close()
		return nil, fmt.Errorf("%w: %w", container.ErrSandbox, err)
	}
	for _, e := range o.Exposes {
		t := s.factory.Target(
			netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(e.Port)),
			netip.AddrPortFrom(netip.IPv6Loopback(), uint16(e.Port))) // servers that bind localhost as IPv6 only
		t.Max = o.MaxConnections
		s.relay(ctx, e.Listener, t)
	}
	for _, r := range o.Reach {
		inner, err := s.factory.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), r.Host.Port()))
		if err != nil {
			continue // the shell binds that port itself: its own wins
		}
		t := reachTarget(r)
		t.Max = o.MaxConnections
		s.relay(ctx, inner, t)
	}
	if o.Proxy == nil {
		s.begin = s.factory.Start
	} else {
		if err := s.serveProxy(ctx, o.Proxy); err != nil {
			return fail(err)
		}
		eg, err := s.prepareEgress(ctx, o.Proxy, o.MaxConnections)
		if err != nil {
			return fail(err)
		}
		s.begin = func() error {
			listener, err := s.factory.StartEgress()
			if err != nil {
				return err
			}
			if listener != nil { // nil: a kernel without user notification
				s.serveCalls(ctx, eg, listener, o.FS, o.Refused)
			}
			return nil
		}
	}
	if o.Held {
		return s, nil
	}
	if err := s.begin(); err != nil {
		return fail(err)
	}
	return s, nil
}

// ErrBegun refuses a second Begin, or a Begin of a shell that was not
// held.
var ErrBegun = errors.New("the shell was not held, or has its command already")

// ErrNotStarted marks a Begin that failed before the start step was
// sent: the command did not run, and may be started elsewhere. Any other
// Begin error may come after the command started.
var ErrNotStarted = errors.New("the command did not start")

// Begin gives a held shell (Options.Held) its command and lets it run:
// command runs with bash -c, or argv as given; dir is the working
// directory inside, looked up with no symbolic link on the way; the
// streams become the command's 0, 1 and 2 (the caller may close its
// copies when Begin returns). On an error the shell is closed.
func (s *Sandbox) Begin(command string, argv []string, dir string, stdin, stdout, stderr *os.File) error {
	err := ErrBegun
	s.begun.Do(func() {
		if !s.held {
			return
		}
		if err = s.factory.Command(dir, container.Args(command, argv), stdin, stdout, stderr); err != nil {
			s.Close()
			err = fmt.Errorf("%w: %w: %w", container.ErrSandbox, ErrNotStarted, err)
			return
		}
		if s.startDog != nil {
			s.startDog()
		}
		if err = s.begin(); err != nil {
			s.Close()
			err = fmt.Errorf("%w: %w", container.ErrSandbox, err)
		}
	})
	return err
}

func (s *Sandbox) relay(ctx context.Context, l net.Listener, t netrelay.Target) {
	s.relays.Add(1)
	go func() {
		defer s.relays.Done()
		netrelay.Relay(ctx, l, t)
	}()
}

// readEvents passes on what the init tells, a line each, until it ends.
func readEvents(r *os.File, refused func(policy.Violation)) {
	defer r.Close()
	sc := bufio.NewScanner(io.LimitReader(r, 1<<20))
	for sc.Scan() {
		if call, ok := strings.CutPrefix(sc.Text(), "userns "); ok && (call == "unshare" || call == "clone") {
			refused(usernsViolation(call))
		}
	}
}

// usernsViolation is the record of a refused new user namespace.
func usernsViolation(call string) policy.Violation {
	return policy.Violation{Time: time.Now().UTC(), Method: call,
		Rule: "shells make no user namespaces of their own",
		Hint: "start the shell with --allow-userns to let it (Chromium's sandbox, bubblewrap, rootless podman)"}
}

// reachTarget connects to a reached address while it is allowed.
func reachTarget(r Reach) netrelay.Target {
	t := netrelay.HostTarget(r.Host)
	socket := t.Socket
	t.Socket = func(family int) (int, error) {
		if socket == nil || (r.Allowed != nil && !r.Allowed()) {
			return -1, ErrNotExposed
		}
		return socket(family)
	}
	return t
}

// Shell is the started shell: its pid, signals, the wait for its end.
func (s *Sandbox) Shell() container.Shell { return s.sh }

// Isolation is what the runner gave the shell (what auto chose).
func (s *Sandbox) Isolation() container.Isolation { return s.iso }

// Probe reports whether a port of the shell accepts connections: inside
// its namespace, 127.0.0.1 first, then ::1 (a container started without
// Probes has no way in: false); on this machine's loopback for a shell
// without a namespace.
func (s *Sandbox) Probe(ctx context.Context, port int) bool {
	if port <= 0 || port > 65535 || (s.factory == nil && s.iso == container.Container) {
		return false
	}
	if s.factory == nil {
		for _, a := range []string{"127.0.0.1", "::1"} {
			var d net.Dialer
			if c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(a, fmt.Sprint(port))); err == nil {
				c.Close()
				return true
			}
		}
		return false
	}
	for _, a := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()} {
		if c, err := s.factory.Dial(ctx, netip.AddrPortFrom(a, uint16(port))); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// StopRelays closes every listener the sandbox serves (the exposed ports
// shut; inside, the reached ports, the proxy, the resolver and the
// egress), ends their connections and waits for it. The shell runs on,
// its calls answered, with no way out.
func (s *Sandbox) StopRelays() {
	s.stopped.Do(func() {
		if s.stop != nil {
			s.stop()
		}
		s.relays.Wait()
	})
}

// Close stops the relays, kills the shell if it still runs, and releases
// what it held (the container's state and cgroups, the factory).
func (s *Sandbox) Close() error {
	var err error
	s.closed.Do(func() {
		s.StopRelays()
		if s.tracker != nil {
			s.tracker.Close() // its users, the egress's sinks, ended with the relays
		}
		if s.endCalls != nil {
			s.endCalls()
			s.calls.Wait()
		}
		s.brokerMu.Lock()
		s.brokerClosed = true
		s.brokerMu.Unlock()
		s.brokerConns.Wait()
		if s.factory != nil {
			s.factory.Close()
		}
		err = s.sh.Close()
		if s.dog != nil {
			s.dog.Stop()
		}
	})
	return err
}

// watched is a shell under the watchdog: its end names the bound the
// watchdog ended it for.
type watched struct {
	container.Shell
	dog *watchdog
}

func (w *watched) Wait() (container.Exit, error) {
	ex, err := w.Shell.Wait()
	if w.dog == nil { // a held shell that never began
		return ex, err
	}
	if hit := w.dog.Hit(); hit != "" && ex.Limit == "" {
		ex.Limit = hit
	}
	return ex, err
}

// Token passes the process runner's token through (ShellToken).
func (w *watched) Token() string { return container.ShellToken(w.Shell) }

// NewID makes a container id that no other shell of this user shares:
// PREFIX-PID-RANDOM, the pid of the process that owns it, so that a later
// start can collect the state of one whose owner died.
func NewID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", prefix, os.Getpid(), hex.EncodeToString(b))
}

// MemoryViolation is the record of a process the memory limit's OOM killer
// ended: "memory limit (64 MiB) reached: python3 (pid 4242) killed".
func MemoryViolation(limit int64, k container.OOMKill) policy.Violation {
	who := "a process"
	switch {
	case k.Comm != "" && k.Pid > 0:
		who = fmt.Sprintf("%s (pid %d)", k.Comm, k.Pid)
	case k.Comm != "":
		who = k.Comm
	}
	return policy.Violation{Time: time.Now().UTC(), Method: "memory",
		Rule: policy.Printable(fmt.Sprintf("memory limit (%s) reached: %s killed", policy.FormatSize(limit), who), 512)}
}
