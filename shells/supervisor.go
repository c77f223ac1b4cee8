package shells

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/control"
	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/sandbox"
)

// SuperviseArg is the hidden first argument that makes the binary a
// shell's supervisor: cshell __supervise STATE_DIR ID (the path is for
// messages; the state dir itself is inherited as a descriptor).
// container/cgwarm_linux.c knows it too: a supervisor starts its shell at
// once, so its cgroup lock's wait is started before the Go runtime.
const SuperviseArg = "__supervise"

// earlyWindow is how long the supervisor watches a new shell before it
// answers "running": a command that ends within it (a typo, a missing
// program) is answered with its end instead.
const earlyWindow = 30 * time.Millisecond

// settleTime is how long a running supervisor waits, after its answer and
// after each request, before it lets go of the pages its start touched.
const settleTime = 250 * time.Millisecond

// answer is the supervisor's one word to run -d, on fd 3.
type answer struct {
	Status string `json:"status"` // running, ended, or failed
	Error  string `json:"error,omitempty"`
}

// inherited is what run -d hands its supervisor: the answer's pipe, the
// state dir, the plan, and the files after them (the exposed ports'
// listeners, the caches' lock), the i-th as file(i).
type inherited struct {
	answer   io.WriteCloser
	stateDir *os.File
	plan     io.ReadCloser
	file     func(i int, name string) *os.File
}

// Supervise is the supervisor's main: it runs one shell to its end and
// returns the process exit code. args are STATE_DIR ID, and on Windows the
// inherited handles (inheritedFiles).
func Supervise(args []string) int {
	in, rest := inheritedFiles(args)
	return supervise(rest, in)
}

func supervise(args []string, in inherited) int {
	say := func(a answer) {
		if in.answer != nil {
			_ = json.NewEncoder(in.answer).Encode(a)
			in.answer.Close()
			in.answer = nil
		}
	}
	if len(args) != 2 || !validID(args[1]) || in.plan == nil {
		say(answer{Status: "failed", Error: "supervisor: want STATE_DIR ID"})
		return 2
	}
	var m *Manager
	var err error
	if in.stateDir != nil {
		m, err = openInherited(in.stateDir, args[0], nil)
	} else {
		m, err = Open(args[0], nil) // Windows: no child inherits a directory
	}
	if err != nil {
		say(answer{Status: "failed", Error: err.Error()})
		return 1
	}
	logf := openSupervisorLog(m, args[1])
	defer logf.Close()
	m.log = slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("role", "supervisor", "shell", args[1])
	s := &supervisor{m: m, id: args[1], say: say}
	if err := s.run(in); err != nil {
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
	n := min(int64(len(p)), c.left)
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

// supervisor owns one shell from its start to its recorded end.
type supervisor struct {
	m    *Manager
	id   string
	dir  *safefs.Dir // the shell's folder
	say  func(answer)
	plan *plan.Plan
	meta *Meta
	box  *sandbox.Sandbox
	sh   container.Shell

	mu sync.Mutex // guards meta against the log's trim callback

	// The output: the log's writer, the pipe it copies from, and the
	// copy's end.
	logw   *logWriter
	pr     *os.File
	copied chan struct{}
}

// run starts the shell, tells run -d, and keeps the shell to its end.
func (s *supervisor) run(in inherited) error {
	var err error
	s.plan, err = plan.Decode(in.plan)
	in.plan.Close()
	if err != nil {
		return err
	}
	listeners, err := s.takeFiles(in.file)
	if err != nil {
		return err
	}
	if c := s.plan.Caches; c != nil {
		defer pruneCaches(c.Root, c.MaxBytes)
	}
	if s.dir, err = s.m.shellDir(s.id); err != nil {
		closeAll(listeners)
		return err
	}
	defer s.dir.Close()
	if s.meta, err = s.m.readMeta(s.id); err != nil {
		closeAll(listeners)
		return err
	}
	ctl, err := control.Listen(s.dir, controlName)
	if err != nil {
		closeAll(listeners)
		return fmt.Errorf("listen on the control socket: %w", err)
	}
	defer ctl.Close()
	// Signals to the supervisor itself stop the shell politely.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)

	if err := s.start(listeners); err != nil {
		return err
	}
	defer s.box.Close()
	if err := s.recordRunning(); err != nil {
		_ = s.sh.Kill()
		return err
	}
	l := &lifetime{s: s, kills: make(chan *control.Kill), touched: make(chan struct{}, 1), sigs: sigs, adopts: make(chan adoption), ended: make(chan struct{})}
	done := make(chan struct{})
	defer close(done)
	srv := &control.Server{Kills: l.kills, Probe: s.box.Probe, Info: s.info, Touched: l.touch, Adopt: l.adopt}
	go srv.Serve(ctl, done)
	l.run()
	return nil
}

// takeFiles takes over what run -d bound: the exposed ports' listeners
// (the sandbox owns them from its start) and the caches' lock, held open
// until the supervisor exits (the container's init must not inherit it).
func (s *supervisor) takeFiles(file func(int, string) *os.File) ([]net.Listener, error) {
	var ls []net.Listener
	n := 0
	if s.plan.Namespaced {
		for _, e := range s.plan.Exposes {
			f := file(n, "expose-"+e.Listen.String())
			n++
			l, err := net.FileListener(f)
			f.Close()
			if err != nil {
				closeAll(ls)
				return nil, fmt.Errorf("take over the listener on %s: %w", e.Listen, err)
			}
			ls = append(ls, l)
		}
	}
	if s.plan.Caches != nil {
		closeOnExec(int(file(n, "caches lock").Fd()))
	}
	return ls, nil
}

// start starts the sandbox, its output copied to the log.
func (s *supervisor) start(listeners []net.Listener) error {
	logw, err := openLogWriter(s.dir, s.plan.MaxLogBytes)
	if err != nil {
		closeAll(listeners)
		return fmt.Errorf("open the log: %w", err)
	}
	logw.onTrim = func(dropped int64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.meta.LogDropped = dropped
		_ = s.m.writeMeta(s.meta)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		logw.Close()
		closeAll(listeners)
		return err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		logw.Close()
		pr.Close()
		pw.Close()
		closeAll(listeners)
		return err
	}
	defer devnull.Close()
	p := s.plan
	w := plan.Wiring{
		ID:    sandbox.NewID("sh" + s.id), // sh3-PID-RANDOM: the pid lets a later run collect it
		Stdin: devnull, Stdout: pw, Stderr: pw, Listeners: listeners, Probes: true,
		Refused: s.m.toldEvents(s.id, p.Session, p.Command, violationLog(s.dir)),
		Record:  violationLog(s.dir),
	}
	if len(p.Network.Credentials) > 0 {
		w.Revoked = s.m.revokedFor(p.Session, s.id)
	}
	if p.Network.Grants {
		tell := s.m.refusals(s.id, p.Session, p.Command)
		w.Grants = s.m.grantsFor(p.Session, s.id)
		w.Record = recordAndTell(violationLog(s.dir), tell)
		w.Asking = tell
	}
	o := p.Options(w)
	s.m.log.Info("starting", "isolation", p.Isolation, "exposes", len(listeners), "proxy", o.Proxy != nil, "timeout", p.Timeout)
	s.box, err = startSandbox(p, o)
	pw.Close()
	if err != nil {
		pr.Close()
		logw.Close()
		return err
	}
	s.sh = s.box.Shell()
	s.logw, s.pr, s.copied = logw, pr, make(chan struct{})
	go func() {
		_, _ = io.Copy(logw, pr)
		close(s.copied)
	}()
	return nil
}

// setOrphaned records until when the shell waits for a new owner.
func (s *supervisor) setOrphaned(until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	until = until.UTC().Round(time.Second)
	s.meta.OrphanedUntil = &until
	s.writeOwner()
}

// setOwner records the shell's new owner.
func (s *supervisor) setOwner(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta.OrphanedUntil, s.meta.OwnerPid = nil, pid
	s.writeOwner()
}

func (s *supervisor) writeOwner() {
	if err := s.m.writeMeta(s.meta); err != nil {
		s.m.log.Error("the owner's change was not recorded", "err", err)
	}
}

// recordRunning records the started shell: what auto chose, its pids.
func (s *supervisor) recordRunning() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta.Status = StatusRunning
	s.meta.Isolation = string(s.box.Isolation())
	s.meta.Pid = s.sh.Pid()
	s.meta.Token = container.ShellToken(s.sh)
	s.meta.PidTime = processStartTime(s.meta.Pid)
	s.meta.Supervisor = os.Getpid()
	s.meta.SupervisorTime = processStartTime(os.Getpid())
	if err := s.m.writeMeta(s.meta); err != nil {
		return fmt.Errorf("record the shell: %w", err)
	}
	s.m.log.Info("running", "pid", s.meta.Pid, "isolation", s.meta.Isolation)
	return nil
}

// info is what the supervisor tells of the shell on its control socket.
func (s *supervisor) info() control.Info {
	r := control.Info{Session: s.plan.Session}
	if s.plan.Namespaced {
		for _, e := range s.plan.Exposes {
			r.Exposed = append(r.Exposed, control.Port{Listen: e.Listen.String(), Port: int(e.Port)})
		}
	}
	return r
}

// endReason is why a shell ended: by itself, or what stopped it.
type endReason int

const (
	byItself  endReason = iota
	byKill              // cshell kill, kill_shell, or a signal to the supervisor
	byTimeout           // --timeout
	bySession           // its owner (--owner-pid) ended
	byLimit             // a limit's bound
)

// lifetime is a running shell's main loop: its answer to run -d, its
// timers, the kills asked for, and its end.
type lifetime struct {
	s       *supervisor
	kills   chan *control.Kill
	touched chan struct{}
	sigs    <-chan os.Signal
	adopts  chan adoption
	ended   chan struct{} // closed when the loop is done

	answered bool
	reason   endReason
	sig      syscall.Signal   // the signal that stopped it
	killed   bool             // KILL followed the signal asked for
	killers  []*control.Kill  // clients waiting for the end
	graceEnd <-chan time.Time // the stop's grace runs out
}

// adoption is a new owner asked for, and where its answer goes.
type adoption struct {
	pid    int
	answer chan error
}

// adopt makes pid the shell's owner (control.Server.Adopt): only a shell
// that was started with an owner and a reattach window takes another.
func (l *lifetime) adopt(pid int) error {
	if l.s.plan.OwnerPid <= 0 || l.s.plan.Reattach <= 0 {
		return fmt.Errorf("shell %s has no owner to replace (it was not started with a reattach window)", l.s.id)
	}
	if !processAlive(pid, 0) {
		return fmt.Errorf("process %d does not run", pid)
	}
	a := adoption{pid: pid, answer: make(chan error, 1)}
	select {
	case l.adopts <- a:
		return <-a.answer
	case <-l.ended:
		return fmt.Errorf("shell %s has ended", l.s.id)
	}
}

// touch says a request came: the pages it touched settle again.
func (l *lifetime) touch() {
	select {
	case l.touched <- struct{}{}:
	default:
	}
}

func (l *lifetime) run() {
	s, p := l.s, l.s.plan
	exited := make(chan container.Exit, 1)
	go func() {
		ex, _ := s.sh.Wait()
		exited <- ex
	}()
	early := time.After(earlyWindow)
	var timeout, settled <-chan time.Time // settled: no request for a moment (see dropStartupCode)
	if p.Timeout > 0 {
		timeout = time.After(p.Timeout)
	}
	defer close(l.ended)
	var ownerGone <-chan struct{}
	var orphaned <-chan time.Time // the reattach window runs out
	stopWatch := func() {}
	watch := func(pid int) {
		stopWatch()
		ctx, cancel := context.WithCancel(context.Background())
		ownerGone, stopWatch = watchProcess(ctx, pid), cancel
	}
	defer func() { stopWatch() }()
	if p.OwnerPid > 0 {
		watch(p.OwnerPid)
	}
	for {
		select {
		case <-early:
			l.answered = true
			s.say(answer{Status: "running"})
			settled = time.After(settleTime)
		case <-settled:
			settled = nil
			dropStartupCode()
		case <-l.touched:
			if l.answered {
				settled = time.After(settleTime) // readiness probes touch code too
			}
		case ex := <-exited:
			l.end(ex)
			return
		case k := <-l.kills:
			if k.HungUp() {
				s.m.log.Info("a kill whose client hung up was dropped", "signal", k.Signal)
				k.Drop() // nobody waits for this kill any more
				continue
			}
			s.m.log.Info("kill", "signal", k.Signal, "grace", k.Grace)
			l.killers = append(l.killers, k)
			l.stop(byKill, k.Signal, k.Grace)
		case <-timeout:
			s.m.log.Info("timed out", "after", p.Timeout)
			l.stop(byTimeout, syscall.SIGTERM, p.Grace)
		case <-ownerGone:
			ownerGone = nil
			if p.Reattach > 0 && l.reason == byItself {
				s.m.log.Info("the session's owner ended; waiting for another", "within", p.Reattach)
				orphaned = time.After(p.Reattach)
				s.setOrphaned(time.Now().Add(p.Reattach))
				continue
			}
			s.m.log.Info("the session's owner ended")
			l.stop(bySession, syscall.SIGTERM, p.Grace)
		case <-orphaned:
			orphaned = nil
			s.m.log.Info("no new owner came: the session ended")
			l.stop(bySession, syscall.SIGTERM, p.Grace)
		case a := <-l.adopts:
			if l.reason != byItself {
				a.answer <- fmt.Errorf("shell %s is being stopped", s.id)
				continue
			}
			watch(a.pid)
			orphaned = nil
			s.setOwner(a.pid)
			s.m.log.Info("a new owner took the shell over", "pid", a.pid)
			a.answer <- nil
		case <-l.sigs:
			l.stop(byKill, syscall.SIGTERM, p.Grace)
		case <-l.graceEnd:
			s.m.log.Info("the grace period ended: KILL")
			_ = s.sh.Kill()
			l.killed = true
		}
	}
}

// stop sends sig to the shell, and KILL once grace runs out; the first
// stop names the reason.
func (l *lifetime) stop(why endReason, sig syscall.Signal, grace time.Duration) {
	if l.reason == byItself {
		l.reason, l.sig = why, sig
	}
	_ = l.s.sh.Signal(sig)
	if sig == syscall.SIGKILL || grace <= 0 {
		_ = l.s.sh.Kill()
		l.killed = true
		return
	}
	if l.graceEnd == nil {
		l.graceEnd = time.After(grace)
	}
}

// end closes the exposed ports, records the end and answers everyone.
func (l *lifetime) end(ex container.Exit) {
	s := l.s
	if l.killed && (ex.Signal == syscall.SIGKILL || ex.Code == 128+int(syscall.SIGKILL)) {
		l.sig = syscall.SIGKILL // the signal asked for did not end it
	}
	if ex.Limit != "" {
		l.reason, l.sig = byLimit, syscall.SIGKILL // the bound ended it, whatever else was under way
	}
	// The mark goes first: a foreground shell of the session must not
	// reach what binds the port once it is free.
	_ = s.m.dir.Remove(exposingName + "/" + s.id)
	s.box.StopRelays() // the ports close with the shell
	s.finish(ex, l.reason, l.sig, !l.answered)
	for _, k := range l.killers {
		k.Answer(s.meta)
	}
	if !l.answered {
		s.say(answer{Status: "ended"})
	}
}

// finish records the end once every byte of output is in the log, and
// sends the completion notice. early: run -d is answered with the end.
func (s *supervisor) finish(ex container.Exit, reason endReason, sig syscall.Signal, early bool) {
	// Output ends when the last writer closes the pipe; a daemon that
	// escaped a process-group shell may hold it open, so wait a little.
	select {
	case <-s.copied:
	case <-time.After(2 * time.Second):
		s.pr.Close()
		<-s.copied
	}
	s.pr.Close()
	s.logw.Close()

	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	m := s.meta
	code := ex.Code
	m.ExitCode, m.EndedAt, m.Escaped, m.OrphanedUntil = &code, &now, ex.Escaped, nil
	switch reason {
	case byLimit:
		m.Status, m.Signal, m.LimitHit = StatusKilled, "KILL", ex.Limit
	case byKill:
		m.Status, m.Signal = StatusKilled, signalName(sig)
	case bySession:
		m.Status, m.Signal, m.EndReason = StatusKilled, signalName(sig), "session"
	case byTimeout:
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
	if (reason == byItself || reason == byTimeout || reason == byLimit) && !early && s.plan.Notify != "none" {
		m.fill(now)
		if err := s.m.appendNotice(m, s.plan.Notify); err != nil {
			s.m.log.Error("the completion notice was not written", "err", err)
		}
	}
	if err := s.m.writeMeta(m); err != nil {
		s.m.log.Error("the end was not recorded", "err", err)
	}
	s.m.log.Info("ended", "status", m.Status, "code", code, "signal", m.Signal, "escaped", m.Escaped)
	_ = s.m.dir.Remove(exposingName + "/" + s.id)
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
