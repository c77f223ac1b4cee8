package shells

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// DefaultGrace is how long a TERMed shell has before it is killed.
const DefaultGrace = 10 * time.Second

// maxCommand is the longest command line: bash -c gets it as one
// argument, and Linux caps one at 128 KiB (MAX_ARG_STRLEN) with room left
// for the rest.
const maxCommand = 128<<10 - 1

// MaxGrace bounds the grace period a kill may ask for.
const MaxGrace = 24 * time.Hour

// ErrUsage marks bad input: a flag value, a path, an environment entry.
var ErrUsage = errors.New("bad input")

// RunOptions is one foreground `cshell run`.
type RunOptions struct {
	Command   []string // joined with spaces into one shell command line
	Isolation container.Isolation
	FS        policy.FilesystemRequest
	Env       []string      // KEY=VALUE or KEY (take the value from our environment)
	Timeout   time.Duration // 0: none
	Grace     time.Duration // after the timeout's TERM; 0 means DefaultGrace
	Config    *policy.Config

	Stdin          *os.File
	Stdout, Stderr io.Writer
	Log            *slog.Logger

	// Exposed ports of the shell, and the state dir and session whose
	// background shells' exposed ports a foreground shell may reach.
	Expose       []string
	ExposePublic bool
	StateDir     string
	Session      string

	// AllowHosts may be reached through the shell's proxy, besides the
	// config's network.allow.
	AllowHosts []string
}

// Run runs a command in the foreground and returns its exit code (128+N
// for signal N). Signals cshell receives are passed on to the command; a
// terminal on stdin and stdout gives the command a terminal of its own.
func Run(ctx context.Context, o RunOptions) (int, error) {
	p, err := prepare(o, "cshell run -- COMMAND")
	if err != nil {
		return 0, err
	}
	env, fsys, rules := p.env, p.fsys, p.rules
	runner, err := container.New(o.Isolation)
	if err != nil {
		return 0, err
	}
	relay := runner.Isolation() == container.Container
	_, listeners, err := bindExposes(o.Expose, o.ExposePublic, relay)
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	// A container's init is a socket factory (fd 3 inside) when the shell
	// needs sockets inside: its exposed ports, its proxy, the session's
	// ports it may reach. Without, the command starts at once.
	var reach []netip.AddrPort
	if relay {
		reach = sessionExposes(o.StateDir, o.Session)
	}
	var factory *netrelay.Factory
	var sockets *os.File
	if relay && (len(listeners) > 0 || !rules.Empty() || len(reach) > 0) {
		parent, child, err := socketPair()
		if err != nil {
			return 0, err
		}
		defer child.Close()
		sockets = child
		factory = netrelay.NewFactory(parent)
		defer factory.Close()
	}
	terminal := isTerminal(o.Stdin) && isTerminal(o.Stdout)
	spec := &container.Spec{
		ID:       newID("run"),
		Command:  p.command,
		Env:      env,
		FS:       fsys,
		Stdin:    o.Stdin,
		Stdout:   o.Stdout,
		Stderr:   o.Stderr,
		Terminal: terminal,
		Sockets:  sockets,
	}

	// Catch signals before the shell exists, so that none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, append(forwarded, sigWinch)...)
	defer signal.Stop(sigs)

	sh, err := runner.Start(spec)
	if err != nil {
		return 0, err
	}
	defer sh.Close()
	if sockets != nil {
		sockets.Close() // the init has its own copy
	}
	relayCtx, stopRelay := context.WithCancel(ctx)
	var relays sync.WaitGroup
	defer func() { stopRelay(); relays.Wait() }()
	if factory != nil {
		ls := make([]net.Listener, len(listeners))
		ports := make([]int, len(listeners))
		for i, l := range listeners {
			ls[i], ports[i] = l, l.Addr().(*net.TCPAddr).Port
		}
		listeners = nil // Serve owns them now
		serveExposes(relayCtx, factory, ls, ports, &relays)
		reachSession(relayCtx, factory, o.StateDir, o.Session, reach, &relays)
		if !rules.Empty() {
			if err := startProxy(relayCtx, factory, rules, violationNote(o.Stderr), &relays); err != nil {
				_ = sh.Kill()
				return 0, fmt.Errorf("%w: %v", container.ErrSandbox, err)
			}
		}
		if err := factory.Start(); err != nil {
			_ = sh.Kill()
			return 0, fmt.Errorf("%w: %v", container.ErrSandbox, err)
		}
	}

	var term *terminalSession
	if c := sh.Console(); c != nil {
		if term, err = attachTerminal(c, o.Stdin, o.Stdout); err != nil {
			_ = sh.Kill()
			return 0, fmt.Errorf("%w: attach the terminal: %v", container.ErrSandbox, err)
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
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	grace := o.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	var killAt <-chan time.Time
	for {
		select {
		case <-done:
			if term != nil {
				term.finish()
			}
			if waitErr != nil {
				return 0, fmt.Errorf("wait for the command: %w", waitErr)
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
			o.Log.Info("timed out; sending TERM", "after", o.Timeout, "grace", grace)
			fmt.Fprintf(o.Stderr, "cshell: timed out after %s; stopping the command\n", o.Timeout)
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

// prepared is what every run checks and derives before anything starts.
type prepared struct {
	cfg     *policy.Config
	command string
	env     []string
	fsys    policy.Filesystem
	rules   *policy.Rules
	allow   []string // --allow-host and network.allow
}

// prepare checks a run's options: shells enabled, a command, the
// environment, the network rules and the filesystem view. usage is how
// to write the command, for the sentence when it is missing.
func prepare(o RunOptions, usage string) (*prepared, error) {
	p := &prepared{cfg: o.Config}
	if p.cfg == nil {
		p.cfg = &policy.Config{}
	}
	if !p.cfg.Enabled() {
		return nil, fmt.Errorf("%w: shells are turned off by configuration (shells.enabled=false); change the config file to run commands", ErrRefused)
	}
	p.command = strings.Join(o.Command, " ")
	switch {
	case strings.TrimSpace(p.command) == "":
		return nil, fmt.Errorf("%w: no command given; write %s", ErrUsage, usage)
	case strings.ContainsRune(p.command, 0):
		return nil, fmt.Errorf("%w: the command contains a NUL byte, which no program can receive; remove it", ErrUsage)
	case len(p.command) > maxCommand:
		return nil, fmt.Errorf("%w: the command is %d bytes, and the kernel passes at most %d KiB as one argument; write it to a script in the working directory and run that", ErrUsage, len(p.command), maxCommand>>10)
	}
	var err error
	if p.env, err = buildEnv(os.Environ(), o.Env); err != nil {
		return nil, err
	}
	if p.rules, p.allow, err = networkRules(o.AllowHosts, p.cfg); err != nil {
		return nil, err
	}
	o.FS.Config = p.cfg
	if o.StateDir != "" && relayed(o.Isolation) {
		// Made now if missing, so that it is hidden even from a shell
		// that outlives the start of the first background shell. One that
		// cannot be made holds no shells to hide.
		_ = os.MkdirAll(o.StateDir, 0o700)
		o.FS.Private = append(o.FS.Private, o.StateDir)
	}
	if p.fsys, err = policy.NewFilesystem(o.FS); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if o.Stderr != nil {
		for _, w := range p.fsys.Warnings {
			fmt.Fprintf(o.Stderr, "cshell: warning: %s\n", w)
		}
	}
	if relayed(o.Isolation) {
		p.env = sandboxEnv(p.env, o.Env)
		if !p.rules.Empty() {
			p.env = proxyEnv(p.env)
		}
	}
	return p, nil
}

// sandboxEnv fixes what the host's environment gets wrong inside a
// container: TMPDIR pointing at a host directory, which is read-only there
// (the container's own /tmp is private and writable), unless -e set it.
func sandboxEnv(env, extra []string) []string {
	for _, e := range extra {
		if k, _, _ := strings.Cut(e, "="); k == "TMPDIR" {
			return env
		}
	}
	return setEnv(env, "TMPDIR", "/tmp")
}

// buildEnv starts from our environment and applies the -e entries.
func buildEnv(base, extra []string) ([]string, error) {
	env := append([]string(nil), base...)
	for _, e := range extra {
		k, v, ok := strings.Cut(e, "=")
		if k == "" || strings.ContainsAny(k, "\x00") {
			return nil, fmt.Errorf("%w: --env %q: write KEY=VALUE", ErrUsage, e)
		}
		if !ok {
			v, ok = os.LookupEnv(k)
			if !ok {
				continue // docker's rule: an unset KEY is left out
			}
		}
		env = setEnv(env, k, v)
	}
	return env, nil
}

func setEnv(env []string, k, v string) []string {
	for i, e := range env {
		if strings.HasPrefix(e, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// newID makes a container id that no other run of this user shares.
func newID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", prefix, os.Getpid(), hex.EncodeToString(b))
}
