package shells

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/kind"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/sandbox"
)

// DefaultGrace is how long a TERMed shell has before it is killed.
const DefaultGrace = plan.DefaultGrace

// MaxGrace bounds the grace period a kill may ask for.
const MaxGrace = 24 * time.Hour

// ErrUsage marks bad input: a flag value, a path, an environment entry.
var ErrUsage = kind.Usage

// RunOptions is one shell to run: what the user asked for (plan.Request),
// and where its streams and its news go.
type RunOptions struct {
	plan.Request

	Stdin          *os.File
	Stdout, Stderr io.Writer // Stderr also hears the plan's warnings
	Log            *slog.Logger

	// Asking hears of each request of a foreground shell that starts to
	// wait for a grant (the MCP server asks its user then).
	Asking func(host string, port int)
	// Waiting hears that a background shell started and that its start
	// now waits until it is ready.
	Waiting func(id string, r *plan.Ready)
	// Shown is the command as events name a foreground shell's (""; the
	// command that runs): the MCP server runs a model's command line
	// inside a line of its own.
	Shown string
	// Warm, when set, may hold a sandbox made ahead for this run (see
	// Warm); the run takes it when its plan makes the same sandbox, and
	// asks for the next one once it ended.
	Warm *Warm
	// PruneLater, when set, keeps the caches within their cap in a process
	// of its own once the run ended (PruneDetached), so that the caller
	// does not wait for a walk of every cache; nil: this process does it.
	PruneLater func(root string, max int64)
}

// Run runs a command in the foreground and returns its exit code (128+N
// for signal N). Signals cshell receives are passed on to the command; a
// terminal on stdin and stdout gives the command a terminal of its own.
func Run(ctx context.Context, o RunOptions) (int, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Purpose = plan.Foreground
	o.Session = cmp.Or(o.Session, DefaultSession())
	if err := plan.CheckSession(o.Session); err != nil {
		return 0, err
	}
	// The state dir is opened (made, checked) first: the shell must not
	// see it, and the session's exposed ports are its supervisors' to tell.
	var m *Manager
	if o.StateDir != "" && relayed(o.Isolation) {
		var err error
		if m, err = Open(o.StateDir, o.Log); err != nil {
			return 0, err
		}
		defer m.Close()
	}
	var reach []sandbox.Reach
	var reserved []int // the proxy keeps clear of the ports the session's servers listen on inside
	if m != nil {
		reach = m.reaches(o.Session)
		for _, r := range reach {
			reserved = append(reserved, int(r.Host.Port()))
		}
	}
	p, err := plan.New(o.Request, hostFacts(o.FS.Home, reserved))
	if err != nil {
		return 0, err
	}
	defer p.Release()
	if p.Caches != nil {
		prune := pruneCaches
		if o.PruneLater != nil {
			prune = o.PruneLater
		}
		defer prune(p.Caches.Root, p.Caches.MaxBytes)
	}
	warn(o.Stderr, p.Warnings)
	listeners, err := bindExposes(p)
	if err != nil {
		return 0, err
	}
	// A terminal on stdin and stdout: the command gets one of its own.
	// Otherwise no stream of the caller's that is a terminal reaches the
	// command as itself (it could change the terminal's modes, or read
	// after the caller's shell took it back): a pipe stands between.
	terminal := isTerminal(o.Stdin) && isTerminal(o.Stdout)
	stdio := &piped{}
	defer stdio.close()
	stdin, stdout, stderr := io.Reader(o.Stdin), o.Stdout, o.Stderr
	notes := o.Stderr // where what the shell was refused is told
	if !terminal {
		if stdin, stdout, stderr, err = stdio.detach(o.Stdin, o.Stdout, o.Stderr); err != nil {
			closeAll(listeners)
			return 0, err
		}
		if stdout, stderr, notes, err = stdio.ordered(stdout, stderr); err != nil {
			closeAll(listeners)
			return 0, err
		}
	}
	w := plan.Wiring{
		ID: sandbox.NewID("run"), Stdin: stdin, Stdout: stdout, Stderr: stderr, Terminal: terminal,
		Listeners: listeners, Reach: reach, Refused: violationNote(notes, o.Words, p.Session), Record: violationNote(notes, o.Words, p.Session),
	}
	if m != nil {
		w.Refused = m.toldEvents("", p.Session, cmp.Or(o.Shown, p.Command), w.Refused)
		if len(p.Network.Credentials) > 0 {
			w.Revoked = m.revokedFor(p.Session, "")
		}
		if p.Network.Grants {
			tell := m.refusals("", p.Session, cmp.Or(o.Shown, p.Command))
			w.Grants = m.grantsFor(p.Session, "")
			w.Record = recordAndTell(violationNote(notes, o.Words, p.Session), tell)
			w.Asking = tell
			if o.Asking != nil {
				w.Asking = func(host string, port int) { tell(host, port); o.Asking(host, port) }
			}
		}
	}
	so := p.Options(w)

	// Catch signals before the shell exists, so that none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, append(forwarded, sigWinch)...)
	defer signal.Stop(sigs)

	o.Log.Debug("starting the shell", "isolation", p.Isolation, "workdir", p.FS.Workdir, "exposes", len(listeners), "reach", len(reach), "proxy", so.Proxy != nil)
	var box *sandbox.Sandbox
	if o.Warm != nil {
		defer o.Warm.Prepare(o) // the next run's, once this one ended
		if !terminal && len(listeners) == 0 && p.Namespaced {
			if wb := o.Warm.take(p.SandboxKey(), reach); wb != nil {
				defer wb.release()
				switch err := wb.begin(p, w, stdio); {
				case err == nil:
					box = wb.box
				case errors.Is(err, sandbox.ErrNotStarted):
					// Nothing ran (a bind changed since it was made, say):
					// the cold start makes the sandbox anew.
					o.Log.Debug("the warm sandbox cannot take the command; starting cold", "err", err)
				default:
					return 0, err // the command may have started: never run it twice
				}
			}
		}
	}
	if box == nil {
		if box, err = startSandbox(p, so); err != nil {
			return 0, err
		}
	}
	started := time.Now()
	defer box.Close()
	stdio.started()
	sh := box.Shell()
	o.Log.Debug("the shell runs", "pid", sh.Pid(), "isolation", box.Isolation())

	var term *terminalSession
	if c := sh.Console(); c != nil {
		if term, err = attachTerminal(c, o.Stdin, o.Stdout); err != nil {
			_ = sh.Kill()
			return 0, fmt.Errorf("%w: attach the terminal: %w", container.ErrSandbox, err)
		}
		defer term.restore()
	}

	done := make(chan struct{})
	var exit container.Exit
	var waitErr error
	go func() {
		exit, waitErr = sh.Wait()
		close(done)
	}()

	var timeout <-chan time.Time
	if p.Timeout > 0 {
		t := time.NewTimer(p.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	grace := p.Grace
	var killAt <-chan time.Time
	for {
		select {
		case <-done:
			if term != nil {
				term.finish()
			}
			stdio.finish()
			if waitErr != nil {
				return 0, fmt.Errorf("wait for the command: %w", waitErr)
			}
			o.Log.Debug("the shell ended", "code", exit.Code, "escaped", exit.Escaped, "limit", exit.Limit)
			if exit.Limit != "" {
				fmt.Fprintf(o.Stderr, "cshell: %s\n", limitLine(exit.Limit, p.Limits, time.Since(started)))
				return 128 + int(syscall.SIGKILL), nil
			}
			return exit.Code, nil
		case sig := <-sigs:
			if sig == sigWinch {
				if term != nil {
					term.resize()
				}
				continue
			}
			_ = sh.Signal(sig)
		case <-timeout:
			o.Log.Info("timed out; sending TERM", "after", p.Timeout, "grace", grace)
			fmt.Fprintf(notes, "cshell: timed out after %s; stopping the command\n", p.Timeout)
			_ = sh.Signal(syscall.SIGTERM)
			t := time.NewTimer(grace)
			defer t.Stop()
			killAt = t.C
		case <-killAt:
			_ = sh.Kill()
		case <-ctx.Done():
			_ = sh.Kill()
		}
	}
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}

// warn tells of what a shell will do without.
func warn(w io.Writer, warnings []string) {
	if w == nil {
		return
	}
	for _, s := range warnings {
		fmt.Fprintf(w, "cshell: warning: %s\n", s)
	}
}

// hostFacts are this machine's and this user's, for a plan: reserved are
// ports inside the shell that its session's servers take.
func hostFacts(home string, reserved []int) plan.Facts {
	return plan.Facts{
		Environ: os.Environ(), NumCPU: runtime.NumCPU(),
		Enforcement: container.LimitsEnforcement(), NoCPUController: !container.CPUsHeld(),
		Namespaced:      container.DefaultIsNamespaced(),
		DefaultStateDir: DefaultStateDir(home), Reserved: reserved,
		Alive: func(pid int) bool { return processAlive(pid, 0) },
		StateDir: func(dir string) error {
			d, _, err := openStateDir(dir)
			if err == nil {
				d.Close()
			}
			return err
		},
		MakeDir: func(dir string) error { return os.MkdirAll(dir, 0o700) },
		OpenCaches: func(home string) (*cache.Store, error) {
			root := cache.Root(home)
			if root == "" {
				return nil, nil
			}
			return cache.Open(root)
		},
	}
}

// startSandbox starts a planned shell with the runner its isolation asks
// for; on an error nothing is left (the listeners are closed).
func startSandbox(p *plan.Plan, o sandbox.Options) (*sandbox.Sandbox, error) {
	runner, err := container.New(p.Isolation)
	if err != nil {
		for _, e := range o.Exposes {
			e.Listener.Close()
		}
		return nil, err
	}
	return sandbox.Start(runner, o)
}

// PruneArg makes cshell the detached process that keeps the caches within
// their cap (PruneDetached): cshell __prune-caches ROOT MAX.
const PruneArg = "__prune-caches"

// PruneDetached starts, when one is due, the prune of the caches in root
// (cache.Store.PruneDue) in a process of its own: self run with PruneArg,
// in a session of its own, with no standard stream, not waited for (as
// git gc --auto detaches). A walk of every cache takes seconds on a cold
// page cache, and a foreground run would wait that long for its exit.
func PruneDetached(self string) func(root string, max int64) {
	return func(root string, max int64) {
		if root == "" || max <= 0 {
			return
		}
		store, err := cache.Open(root)
		if err != nil {
			return
		}
		due := store.PruneDue()
		store.Close()
		if !due {
			return
		}
		cmd := exec.Command(self, PruneArg, root, strconv.FormatInt(max, 10))
		cmd.Dir = "/"
		cmd.SysProcAttr = detachedAttr()
		if cmd.Start() == nil {
			_ = cmd.Process.Release()
		}
	}
}

// PruneCaches is the detached prune's main: ROOT MAX.
func PruneCaches(args []string) int {
	if len(args) != 2 {
		return 2
	}
	max, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		return 2
	}
	pruneCaches(args[0], max)
	return 0
}

// pruneCaches keeps the caches in root within max bytes (cache.MaybePrune:
// it looks at most every ten minutes), once a shell using them ended.
func pruneCaches(root string, max int64) {
	if root == "" {
		return
	}
	if store, err := cache.Open(root); err == nil {
		store.MaybePrune(max)
		store.Close()
	}
}
