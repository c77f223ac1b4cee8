package shells

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/sandbox"
)

// SuperviseArg is the hidden first argument that makes the binary a
// shell's supervisor: cshell __supervise STATE_DIR ID (the path is for
// messages; the state dir itself is inherited as a descriptor).
const SuperviseArg = "__supervise"

// The supervisor's inherited descriptors.
const (
	answerFD        = 3 // its one word to run -d (it writes)
	stateDirFD      = 4 // the state dir, as run -d opened and checked it
	specFD          = 5 // its spec (it reads to EOF): never on disk, as it holds the environment
	firstListenerFD = 6 // the bound --expose listeners, in order
)

// maxSpec bounds the spec a supervisor reads.
const maxSpec = 8 << 20

// earlyWindow is how long the supervisor watches a new shell before it
// answers "running": a command that ends within it (a typo, a missing
// program) is answered with its end instead.
const earlyWindow = 30 * time.Millisecond

// settleTime is how long a running supervisor waits, after its answer and
// after each request, before it lets go of the pages its start touched.
const settleTime = 250 * time.Millisecond

// Bounds of the control socket: a client has this long to send its
// request, and the supervisor this long to write an answer.
const (
	requestTimeout = 5 * time.Second
	replyTimeout   = 2 * time.Second
	maxRequest     = 64 << 10
)

// supervisorSpec is what run -d hands to its supervisor.
type supervisorSpec struct {
	Command        string                `json:"command"`
	Argv           []string              `json:"argv,omitempty"`
	Env            []string              `json:"env"`
	FS             policy.Filesystem     `json:"fs"`
	Isolation      container.Isolation   `json:"isolation"`
	Timeout        time.Duration         `json:"timeout"`
	Grace          time.Duration         `json:"grace"`
	OwnerPid       int                   `json:"owner_pid"`
	MaxLogBytes    int64                 `json:"max_log_bytes"`
	MaxConnections int                   `json:"max_connections"`
	Notify         string                `json:"notify"`
	Session        string                `json:"session"`
	Exposes        []exposeSpec          `json:"exposes"`
	Allow          []string              `json:"allow"` // hosts for the proxy; none (and no grants): no proxy
	Deny           []string              `json:"deny"`
	CloudMetadata  bool                  `json:"cloud_metadata,omitempty"` // network.allowCloudMetadata
	ProxyPort      int                   `json:"proxy_port"`
	Grants         bool                  `json:"grants"`          // the session's grants reach the shell
	AskSeconds     int                   `json:"ask_seconds"`     // how long a refused request waits for a grant
	Hosts          map[string]netip.Addr `json:"hosts,omitempty"` // --add-host
	Limits         policy.Limits         `json:"limits"`
	AllowUserns    bool                  `json:"allow_userns"`
	QuietWrites    bool                  `json:"quiet_writes,omitempty"` // sandbox.tellRefusedWrites false
	// CacheLockFD holds the working directory's caches in use while the
	// shell runs (0: no caches); at its end the caches in CacheRoot are
	// kept within CacheMaxBytes.
	CacheLockFD   int    `json:"cache_lock_fd,omitempty"`
	CacheRoot     string `json:"cache_root,omitempty"`
	CacheMaxBytes int64  `json:"cache_max_bytes,omitempty"`
}

// answer is the supervisor's one word to run -d, on fd 3.
type answer struct {
	Status string `json:"status"` // running, ended, or failed
	Error  string `json:"error,omitempty"`
}

// request arrives on the control socket: a kill (Signal set), a probe of
// ports inside the shell (Probe set), or a question about the shell (Info).
type request struct {
	Signal syscall.Signal `json:"signal,omitempty"`
	Grace  time.Duration  `json:"grace,omitempty"`
	Probe  []int          `json:"probe,omitempty"`
	Info   bool           `json:"info,omitempty"`
}

// probeReply says which probed ports accept connections, in order.
type probeReply struct {
	Ready []bool `json:"ready"`
}

// infoReply is what the supervisor itself set up: the session and the
// host addresses it listens on. Others take these from here, never from a
// record.
type infoReply struct {
	Session string    `json:"session"`
	Exposed []Exposed `json:"exposed"`
}

// Supervise is the supervisor's main: it runs one shell to its end and
// returns the process exit code. args are STATE_DIR ID.
func Supervise(args []string) int {
	answerFile := os.NewFile(answerFD, "answer")
	say := func(a answer) {
		if answerFile != nil {
			_ = json.NewEncoder(answerFile).Encode(a)
			answerFile.Close()
			answerFile = nil
		}
	}
	if len(args) != 2 || !validID(args[1]) {
		say(answer{Status: "failed", Error: "supervisor: want STATE_DIR ID"})
		return 2
	}
	m, err := openInherited(os.NewFile(stateDirFD, "state dir"), args[0], nil)
	if err != nil {
		say(answer{Status: "failed", Error: err.Error()})
		return 1
	}
	logf := openSupervisorLog(m, args[1])
	defer logf.Close()
	m.log = slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("role", "supervisor", "shell", args[1])
	s := &supervisor{m: m, id: args[1], say: say}
	if err := s.run(); err != nil {
		m.log.Error("the shell did not start", "err", err)
		say(answer{Status: "failed", Error: err.Error()})
		_ = m.dir.RemoveAll(shellFile(s.id))
		return 1
	}
	return 0
}

// maxSupervisorLog bounds a supervisor's log: it says what happened, not
// what the shell printed.
const maxSupervisorLog = 256 << 10

// cappedFile writes until it holds max bytes, then drops the rest.
type cappedFile struct {
	f    *os.File
	left int64
}

func (c *cappedFile) Write(p []byte) (int, error) {
	if c.f == nil || c.left <= 0 {
		return len(p), nil
	}
	n := int64(len(p))
	if n > c.left {
		n = c.left
	}
	c.left -= n
	_, _ = c.f.Write(p[:n])
	return len(p), nil
}

func (c *cappedFile) Close() error {
	if c.f == nil {
		return nil
	}
	return c.f.Close()
}

// openSupervisorLog opens the shell's private supervisor.log; without
// one the supervisor logs nowhere.
func openSupervisorLog(m *Manager, id string) *cappedFile {
	f, err := m.dir.OpenFile(shellFile(id, supervisorLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return &cappedFile{}
	}
	left := int64(maxSupervisorLog)
	if st, err := f.Stat(); err == nil {
		left -= st.Size()
	}
	return &cappedFile{f: f, left: left}
}

type supervisor struct {
	m    *Manager
	id   string
	dir  *safefs.Dir // the shell's folder
	say  func(answer)
	spec supervisorSpec
	meta *Meta
	box  *sandbox.Sandbox
	sh   container.Shell

	mu sync.Mutex // guards meta against the log's trim callback
}

// readSpec reads the spec run -d writes on fd 5.
func readSpec() (supervisorSpec, error) {
	var spec supervisorSpec
	f := os.NewFile(specFD, "spec")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpec))
	if err == nil {
		err = json.Unmarshal(b, &spec)
	}
	if err != nil {
		return spec, fmt.Errorf("read the shell's spec: %w", err)
	}
	return spec, nil
}

func (s *supervisor) run() error {
	var err error
	if s.spec, err = readSpec(); err != nil {
		return err
	}
	if s.spec.CacheLockFD > 0 {
		// Held open until the supervisor exits; the container's init must
		// not inherit it.
		closeOnExec(s.spec.CacheLockFD)
		defer pruneCaches(s.spec.CacheRoot, s.spec.CacheMaxBytes)
	}
	if s.dir, err = s.m.shellDir(s.id); err != nil {
		return err
	}
	defer s.dir.Close()
	if s.meta, err = s.m.readMeta(s.id); err != nil {
		return err
	}
	logw, err := openLogWriter(s.dir, s.spec.MaxLogBytes)
	if err != nil {
		return fmt.Errorf("open the log: %w", err)
	}
	logw.onTrim = func(dropped int64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.meta.LogDropped = dropped
		_ = s.m.writeMeta(s.meta)
	}
	ctl, err := listenControl(s.dir)
	if err != nil {
		return fmt.Errorf("listen on the control socket: %w", err)
	}
	defer closeControl(ctl, s.dir)

	// Signals to the supervisor itself stop the shell politely.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	// Inherited listeners, bound by run -d: the sandbox owns them.
	var exposes []sandbox.Expose
	for _, e := range s.spec.Exposes {
		if e.FD == 0 {
			continue
		}
		f := os.NewFile(uintptr(e.FD), "expose-"+e.Listen)
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, x := range exposes {
				x.Listener.Close()
			}
			return fmt.Errorf("take over the listener on %s: %w", e.Listen, err)
		}
		exposes = append(exposes, sandbox.Expose{Listener: l, Port: e.Port})
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	so := sandbox.Options{
		ID:        sandbox.NewID("sh" + s.id), // sh3-PID-RANDOM: the pid lets a later run collect it
		Isolation: s.spec.Isolation, Command: s.spec.Command, Argv: s.spec.Argv, Env: s.spec.Env, FS: s.spec.FS,
		Stdin: devnull, Stdout: pw, Stderr: pw,
		Exposes: exposes, MaxConnections: s.spec.MaxConnections, Probes: true,
		Limits: s.spec.Limits, AllowUserNamespaces: s.spec.AllowUserns, QuietWrites: s.spec.QuietWrites,
		Refused: s.m.toldEvents(s.id, s.spec.Session, s.spec.Command, violationLog(s.dir)),
	}
	if s.spec.ProxyPort != 0 {
		rules, err := policy.NewRules(s.spec.Allow, s.spec.Deny)
		if err != nil {
			return err
		}
		rules = rules.WithCloudMetadata(s.spec.CloudMetadata)
		so.Proxy = &sandbox.Proxy{Port: s.spec.ProxyPort, Rules: rules, Record: violationLog(s.dir), Hosts: s.spec.Hosts}
		if s.spec.Grants {
			tell := s.m.refusals(s.id, s.spec.Session, s.spec.Command)
			so.Proxy.Rules = rules.WithGrants(s.m.grantsFor(s.spec.Session, s.id), time.Duration(s.spec.AskSeconds)*time.Second)
			so.Proxy.Record = recordAndTell(violationLog(s.dir), tell)
			so.Proxy.Asking = tell
		}
	}
	s.m.log.Info("starting", "isolation", s.spec.Isolation, "exposes", len(exposes), "proxy", so.Proxy != nil, "timeout", s.spec.Timeout)
	s.box, err = sandbox.Start(so)
	pw.Close()
	if err != nil {
		pr.Close()
		logw.Close()
		return err
	}
	defer s.box.Close()
	s.sh = s.box.Shell()
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(logw, pr)
		close(copied)
	}()

	s.mu.Lock()
	s.meta.Status = StatusRunning
	s.meta.Isolation = string(s.box.Isolation()) // what auto chose
	s.meta.Pid = s.sh.Pid()
	s.meta.Token = container.ShellToken(s.sh)
	s.meta.PidTime = processStartTime(s.meta.Pid)
	s.meta.Supervisor = os.Getpid()
	s.meta.SupervisorTime = processStartTime(os.Getpid())
	err = s.m.writeMeta(s.meta)
	s.mu.Unlock()
	if err != nil {
		_ = s.sh.Kill()
		return fmt.Errorf("record the shell: %w", err)
	}
	s.m.log.Info("running", "pid", s.meta.Pid, "isolation", s.meta.Isolation)

	exited := make(chan container.Exit, 1)
	go func() {
		ex, _ := s.sh.Wait()
		exited <- ex
	}()
	kills := make(chan killRequest)
	touched := make(chan struct{}, 1)
	done := make(chan struct{})
	defer close(done)
	go s.acceptControl(ctl, kills, touched, done)

	var (
		early     = time.After(earlyWindow)
		answered  = false
		timeout   <-chan time.Time
		graceEnd  <-chan time.Time
		ownerGone <-chan struct{}
		reason    string // kill, timeout, session
		killSig   syscall.Signal
		killed    bool             // KILL followed the signal asked for
		killers   []net.Conn       // clients waiting for the end
		settled   <-chan time.Time // no request for a moment: see dropStartupCode
	)
	if s.spec.Timeout > 0 {
		timeout = time.After(s.spec.Timeout)
	}
	if s.spec.OwnerPid > 0 {
		ownerGone = watchProcess(context.Background(), s.spec.OwnerPid)
	}
	stop := func(why string, sig syscall.Signal, grace time.Duration) {
		if reason == "" {
			reason, killSig = why, sig
		}
		_ = s.sh.Signal(sig)
		if sig == syscall.SIGKILL || grace <= 0 {
			_ = s.sh.Kill()
			killed = true
			return
		}
		if graceEnd == nil {
			graceEnd = time.After(grace)
		}
	}
	for {
		select {
		case <-early:
			answered = true
			s.say(answer{Status: "running"})
			settled = time.After(settleTime)
		case <-settled:
			settled = nil
			dropStartupCode()
		case <-touched:
			if answered {
				settled = time.After(settleTime) // readiness probes touch code too
			}
		case ex := <-exited:
			if killed && (ex.Signal == syscall.SIGKILL || ex.Code == 128+int(syscall.SIGKILL)) {
				killSig = syscall.SIGKILL // the signal asked for did not end it
			}
			// The mark goes first: a foreground shell of the session must
			// not reach what binds the port once it is free.
			_ = s.m.dir.Remove(exposingName + "/" + s.id)
			s.box.StopRelays() // the ports close with the shell
			s.finish(ex, reason, killSig, !answered, logw, pr, copied, killers)
			if !answered {
				s.say(answer{Status: "ended"})
			}
			return nil
		case k := <-kills:
			if hungUp(k.c) {
				s.m.log.Info("a kill whose client hung up was dropped", "signal", k.sig)
				k.c.Close() // nobody waits for this kill any more: drop it
				continue
			}
			s.m.log.Info("kill", "signal", k.sig, "grace", k.grace)
			killers = append(killers, k.c)
			stop("kill", k.sig, k.grace)
		case <-timeout:
			s.m.log.Info("timed out", "after", s.spec.Timeout)
			stop("timeout", syscall.SIGTERM, s.spec.Grace)
		case <-ownerGone:
			ownerGone = nil
			s.m.log.Info("the session's owner ended", "pid", s.spec.OwnerPid)
			stop("session", syscall.SIGTERM, s.spec.Grace)
		case <-sigs:
			stop("kill", syscall.SIGTERM, s.spec.Grace)
		case <-graceEnd:
			s.m.log.Info("the grace period ended: KILL")
			_ = s.sh.Kill()
			killed = true
		}
	}
}

// killRequest is a kill asked for on the control socket; its client
// waits on c for the end.
type killRequest struct {
	c     net.Conn
	sig   syscall.Signal
	grace time.Duration
}

// acceptControl serves the control socket until the listener closes or
// the main loop is done: every connection in a goroutine of its own,
// under deadlines, so that no client (one that sends nothing, say) can
// hold up the timer, a kill or the end. Kills go to the main loop.
func (s *supervisor) acceptControl(l net.Listener, kills chan<- killRequest, touched chan<- struct{}, done <-chan struct{}) {
	// A descriptor in reserve: out of descriptors, it makes room for one
	// control connection (a kill), whatever else holds the rest.
	reserve, _ := os.Open(os.DevNull)
	defer func() {
		if reserve != nil {
			reserve.Close()
		}
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if reserve != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
				reserve.Close()
				reserve = nil
				continue
			}
			// Out of descriptors (EMFILE) or another passing error: wait
			// a moment rather than spin; the listener keeps its queue.
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if reserve == nil {
			reserve, _ = os.Open(os.DevNull)
		}
		go s.serveControl(c, kills, touched, done)
	}
}

func (s *supervisor) serveControl(c net.Conn, kills chan<- killRequest, touched chan<- struct{}, done <-chan struct{}) {
	_ = c.SetReadDeadline(time.Now().Add(requestTimeout))
	var req request
	if err := json.NewDecoder(io.LimitReader(c, maxRequest)).Decode(&req); err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	select {
	case touched <- struct{}{}:
	default:
	}
	switch {
	case req.Signal > 0:
		select {
		case kills <- killRequest{c: c, sig: req.Signal, grace: req.Grace}:
		case <-done:
			c.Close()
		}
	case len(req.Probe) > 0:
		s.answerProbe(c, req.Probe)
	case req.Info:
		defer c.Close()
		r := infoReply{Session: s.spec.Session, Exposed: []Exposed{}}
		for _, e := range s.spec.Exposes {
			r.Exposed = append(r.Exposed, Exposed{Listen: e.Listen, Port: e.Port})
		}
		_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
		_ = json.NewEncoder(c).Encode(r)
	default:
		c.Close()
	}
}

// hungUp reports whether the client at c has gone.
func hungUp(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now())
	var b [1]byte
	_, err := c.Read(b[:])
	_ = c.SetReadDeadline(time.Time{})
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// answerProbe tells which ports accept connections inside the shell.
func (s *supervisor) answerProbe(c net.Conn, ports []int) {
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := probeReply{Ready: make([]bool, len(ports))}
	for i, p := range ports {
		r.Ready[i] = s.box.Probe(ctx, p)
	}
	_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
	_ = json.NewEncoder(c).Encode(r)
}

// finish records the end once every byte of output is in the log, sends
// the completion notice, and answers everyone waiting on a kill.
func (s *supervisor) finish(ex container.Exit, reason string, sig syscall.Signal, early bool, logw *logWriter, pr *os.File, copied chan struct{}, killers []net.Conn) {
	// Output ends when the last writer closes the pipe; a daemon that
	// escaped a process-group shell may hold it open, so wait a little.
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		pr.Close()
		<-copied
	}
	pr.Close()
	logw.Close()

	s.mu.Lock()
	now := time.Now()
	m := s.meta
	code := ex.Code
	m.ExitCode, m.EndedAt, m.Escaped = &code, &now, ex.Escaped
	if ex.Limit != "" {
		reason, sig = "limit", syscall.SIGKILL // the bound ended it, whatever else was under way
	}
	switch reason {
	case "limit":
		m.Status, m.Signal, m.LimitHit = StatusKilled, "KILL", ex.Limit
	case "kill":
		m.Status, m.Signal = StatusKilled, signalName(sig)
	case "session":
		m.Status, m.Signal, m.EndReason = StatusKilled, signalName(sig), "session"
	case "timeout":
		m.Status, m.Signal = StatusTimedOut, signalName(sig)
	default:
		m.Status = StatusExited
		if ex.Signal != 0 {
			m.Signal = signalName(ex.Signal)
		}
	}
	// A shell that ended by itself sends a notice, unless run -d already
	// answered with its end or notices are off. The notice goes first, so
	// that whoever sees the end in meta.json finds its notice too.
	if (reason == "" || reason == "timeout" || reason == "limit") && !early && s.spec.Notify != "none" {
		m.fill(now)
		if err := s.m.appendNotice(m, s.spec.Notify); err != nil {
			s.m.log.Error("the completion notice was not written", "err", err)
		}
	}
	if err := s.m.writeMeta(m); err != nil {
		s.m.log.Error("the end was not recorded", "err", err)
	}
	s.m.log.Info("ended", "status", m.Status, "code", code, "signal", m.Signal, "escaped", m.Escaped)
	s.mu.Unlock()
	_ = s.m.dir.Remove(exposingName + "/" + s.id)
	b, _ := json.Marshal(m)
	for _, c := range killers {
		_ = c.SetWriteDeadline(time.Now().Add(replyTimeout))
		_, _ = c.Write(append(b, '\n'))
		c.Close()
	}
}

// signalName is TERM for SIGTERM.
func signalName(s syscall.Signal) string {
	for name, v := range signalNames {
		if v == s {
			return name
		}
	}
	return fmt.Sprint(int(s))
}
