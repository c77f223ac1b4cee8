package shells

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/sandbox"
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
	// Command is one shell command line (one word, run with bash -c), or
	// a program and its arguments, run as given (several words).
	Command   []string
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
	// AddHosts are NAME:ADDRESS entries (--add-host): the name resolves
	// to the address for the shell's resolver, egress and proxy.
	AddHosts []string
	// Ask is how long a refused request waits for a grant when the
	// configuration sets no network.askSeconds (the MCP server, whose
	// client can ask its user, holds them a while).
	Ask time.Duration
	// Asking hears of each request of a foreground shell that starts to
	// wait for a grant (the MCP server asks its user then).
	Asking func(host string, port int)

	// ConfigFile is the global configuration file in use (it may not
	// exist): shells may read it but never change it.
	ConfigFile string

	// Words name what the sentences tell the user to type (nil: the
	// command line's flags).
	Words *Words

	// Limits bound the shell (--memory, --pids, --cpus), with the
	// configuration's limits; AllowUserNamespaces lets it make user
	// namespaces of its own (--allow-userns).
	Limits              policy.Limits
	AllowUserNamespaces bool
}

// Run runs a command in the foreground and returns its exit code (128+N
// for signal N). Signals cshell receives are passed on to the command; a
// terminal on stdin and stdout gives the command a terminal of its own.
func Run(ctx context.Context, o RunOptions) (int, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Session == "" {
		o.Session = DefaultSession()
	}
	if err := CheckSession(o.Session); err != nil {
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
	// The proxy keeps clear of the ports the shell's servers and its
	// session's listen on inside.
	var reach []sandbox.Reach
	taken := exposePorts(o.Expose)
	if m != nil {
		reach = m.reaches(o.Session)
		for _, r := range reach {
			taken = append(taken, int(r.Host.Port()))
		}
	}
	p, err := prepare(o, "cshell run -- COMMAND", taken)
	if err != nil {
		return 0, err
	}
	if p.cache != nil {
		defer pruneCaches(p.cache.Root(), p.cfg.CacheMaxBytes())
		defer p.done()
	}
	_, listeners, err := bindExposes(o.Expose, o.ExposePublic, relayed(o.Isolation), o.Words)
	if err != nil {
		return 0, err
	}
	// A terminal on stdin and stdout: the command gets one of its own.
	// Otherwise no stream of the caller's that is a terminal reaches the
	// command as itself (it could change the terminal's modes, or read
	// after the caller's shell took it back): a pipe stands between.
	terminal := isTerminal(o.Stdin) && isTerminal(o.Stdout)
	stdio := &piped{}
	stdin, stdout, stderr := io.Reader(o.Stdin), o.Stdout, o.Stderr
	if !terminal {
		if stdin, stdout, stderr, err = stdio.detach(o.Stdin, o.Stdout, o.Stderr); err != nil {
			closeAll(listeners)
			return 0, err
		}
	}
	defer stdio.close()
	so := sandbox.Options{
		ID: sandbox.NewID("run"), Isolation: o.Isolation, Command: p.command, Argv: p.argv, Env: p.env, FS: p.fsys,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Terminal: terminal,
		Exposes: exposesOf(listeners), MaxConnections: p.cfg.MaxConnections(), Reach: reach,
		Limits: p.limits, AllowUserNamespaces: p.userns, Refused: violationNote(o.Stderr), QuietWrites: !p.cfg.TellRefusedWrites(),
	}
	if m != nil {
		so.Refused = m.toldEvents("", o.Session, p.command, so.Refused)
	}
	if p.proxyPort != 0 {
		so.Proxy = &sandbox.Proxy{Port: p.proxyPort, Rules: p.rules, Record: violationNote(o.Stderr), Hosts: p.hosts}
		if p.grants && m != nil {
			tell := m.refusals("", o.Session, p.command)
			so.Proxy.Rules = p.rules.WithGrants(m.grantsFor(o.Session, ""), p.ask)
			so.Proxy.Record = recordAndTell(violationNote(o.Stderr), tell)
			so.Proxy.Asking = tell
			if o.Asking != nil {
				so.Proxy.Asking = func(host string, port int) { tell(host, port); o.Asking(host, port) }
			}
		}
	}

	// Catch signals before the shell exists, so that none is lost between.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, append(forwarded, sigWinch)...)
	defer signal.Stop(sigs)

	o.Log.Debug("starting the shell", "isolation", o.Isolation, "workdir", p.fsys.Workdir, "exposes", len(listeners), "reach", len(reach), "proxy", so.Proxy != nil)
	box, err := sandbox.Start(so)
	if err != nil {
		return 0, err
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
			stdio.finish()
			if waitErr != nil {
				return 0, fmt.Errorf("wait for the command: %w", waitErr)
			}
			o.Log.Debug("the shell ended", "code", exit.Code, "escaped", exit.Escaped, "limit", exit.Limit)
			if exit.Limit != "" {
				fmt.Fprintf(o.Stderr, "cshell: %s\n", limitLine(exit.Limit, p.limits, time.Since(started)))
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

// exposesOf pairs bound listeners with the ports they relay to (the same
// number inside as on the host).
func exposesOf(ls []*net.TCPListener) []sandbox.Expose {
	out := make([]sandbox.Expose, len(ls))
	for i, l := range ls {
		out[i] = sandbox.Expose{Listener: l, Port: l.Addr().(*net.TCPAddr).Port}
	}
	return out
}

func closeAll(ls []*net.TCPListener) {
	for _, l := range ls {
		l.Close()
	}
}

// prepared is what every run checks and derives before anything starts.
type prepared struct {
	cfg     *policy.Config
	command string   // what runs, as shown (ps, notices): a shell command line
	argv    []string // the program and its arguments as given; nil: run command with bash -c
	env     []string
	fsys    policy.Filesystem
	rules   *policy.Rules
	allow   []string // --allow-host and network.allow
	// proxyPort is where the proxy listens inside, when hosts are allowed
	// or may be granted.
	proxyPort int
	// grants: the session's grants reach the shell while it runs
	// (network.allowGrants, and a state dir to keep them in).
	grants bool
	hosts  map[string]netip.Addr // --add-host
	ask    time.Duration         // how long a refused request waits for a grant
	limits policy.Limits         // the flags' and the configuration's, the tighter, with EnforcedBy
	userns bool                  // the shell may make user namespaces
	// cache holds the working directory's caches in use while the shell
	// runs (nil: none); the caller closes it (done).
	cache *cache.Project
	store *cache.Store // while prepare runs
}

// done lets go of what prepare held for the shell: its caches.
func (p *prepared) done() {
	if p.cache != nil {
		p.cache.Close()
		p.cache = nil
	}
}

// warn tells of something the shell will do without.
func (p *prepared) warn(o RunOptions, format string, a ...any) {
	if o.Stderr != nil {
		fmt.Fprintf(o.Stderr, "cshell: warning: "+format+"\n", a...)
	}
}

// exposePorts are the ports inside a shell that its --expose values name
// (bad values are left for bindExposes to refuse).
func exposePorts(values []string) []int {
	var ports []int
	for _, v := range values {
		if ap, err := netrelay.ParseExpose(v); err == nil {
			ports = append(ports, int(ap.Port()))
		}
	}
	return ports
}

// prepare checks a run's options: shells enabled, a command, the
// environment, the network rules and the filesystem view. usage is how
// to write the command, for the sentence when it is missing.
func prepare(o RunOptions, usage string, taken []int) (*prepared, error) {
	p := &prepared{cfg: o.Config}
	if p.cfg == nil {
		p.cfg = &policy.Config{}
	}
	if !p.cfg.Enabled() {
		return nil, refusedErr("shells are turned off by configuration (shells.enabled=false); change the config file to run commands")
	}
	var err error
	if p.command, p.argv, err = commandOf(o.Command, usage); err != nil {
		return nil, err
	}
	if !relayed(o.Isolation) {
		if err := processRefusals(o); err != nil {
			return nil, err
		}
		if o.Stderr != nil && (len(p.cfg.Network.Allow) > 0 || len(p.cfg.Filesystem.DenyRead) > 0 || !p.cfg.Limits().Empty()) {
			fmt.Fprintln(o.Stderr, "cshell: warning: --isolation process: the configuration's network.allow, filesystem.denyRead and limits do not apply (its shells share this machine's files, network and resources)")
		}
	} else {
		var err error
		if p.limits, err = effectiveLimits(o, p.cfg); err != nil {
			return nil, err
		}
		p.userns = o.AllowUserNamespaces || p.cfg.AllowUserNamespaces()
	}
	if p.env, err = buildEnv(os.Environ(), o.Env, p.cfg.Env.Pass, o.FS.Home); err != nil {
		return nil, err
	}
	if p.rules, p.allow, err = networkRules(o.AllowHosts, p.cfg); err != nil {
		return nil, err
	}
	if p.hosts, err = ParseAddHosts(o.AddHosts); err != nil {
		return nil, err
	}
	p.ask = o.Ask
	if p.cfg.Network.AskSeconds != nil {
		p.ask = time.Duration(p.cfg.AskSeconds()) * time.Second
	}
	o.FS.Config = p.cfg
	o.FS.Show = policy.TrustFiles(p.env)
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" && envValue(p.env, "SSH_AUTH_SOCK") == "" {
		// The caller's agent would sign with the user's keys for a shell
		// that can reach its socket; -e SSH_AUTH_SOCK gives it on purpose.
		o.FS.Sockets = append(o.FS.Sockets, sock)
	}
	if relayed(o.Isolation) {
		// cshell's own: the state dir in use and the default one hidden
		// (made and recorded now if missing, so that no shell can make one
		// first and have later shells work in it), and the configuration
		// read-only (a shell must not loosen the policy of later shells).
		for _, dir := range cshellStateDirs(o) {
			d, err := openStateDir(dir)
			if err != nil {
				return nil, err
			}
			d.Close()
			o.FS.Private = append(o.FS.Private, dir)
		}
		if o.ConfigFile != "" {
			o.FS.Protect = append(o.FS.Protect, protectedConfig(o.ConfigFile))
		}
		if p.cfg.CachesEnabled() {
			if root := cache.Root(envValue(p.env, "HOME")); root != "" {
				store, err := cache.Open(root)
				if err != nil {
					p.warn(o, "no caches for this shell: %v", err)
				} else {
					// Hidden (and no working directory in it): it holds the
					// caches of every other working directory.
					o.FS.Private = append(o.FS.Private, store.Path())
					defer store.Close()
					p.store = store
				}
			}
		}
	}
	if p.fsys, err = policy.NewFilesystem(o.FS); err != nil {
		if errors.Is(err, policy.ErrLinkedPath) {
			return nil, refusedErr("%w", err)
		}
		return nil, usageErr("%w", err)
	}
	if p.store != nil {
		proj, err := p.store.Use(p.fsys.Workdir)
		if err != nil {
			p.warn(o, "no caches for this shell: %v", err)
		} else {
			p.cache = proj
			p.fsys.AddCaches(proj.Binds(envValue(p.env, "HOME"), p.env))
		}
		p.store = nil // closed when prepare returns
	}
	for _, w := range p.fsys.Warnings {
		p.warn(o, "%s", w)
	}
	if relayed(o.Isolation) {
		p.grants = p.cfg.AllowGrants() && o.StateDir != ""
		if !p.rules.Empty() || p.grants {
			p.proxyPort = sandbox.PickProxyPort(taken)
		}
		keep := slices.ContainsFunc(o.Env, func(e string) bool { k, _, _ := strings.Cut(e, "="); return k == "TMPDIR" })
		p.env = sandbox.Env(p.env, keep, p.proxyPort)
	}
	return p, nil
}

// buildEnv starts from the allowlisted part of our environment
// (policy.PassedEnv and config env.pass) and applies the -e entries:
// KEY=VALUE sets, KEY passes our value of KEY. HOME is the user's home
// even when our environment lacks it.
func buildEnv(base, extra, pass []string, home string) ([]string, error) {
	var env []string
	for _, e := range base {
		if k, _, ok := strings.Cut(e, "="); ok && policy.EnvAllowed(k, pass) {
			env = append(env, e)
		}
	}
	if home != "" && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "HOME=") }) {
		env = append(env, "HOME="+home)
	}
	for _, e := range extra {
		k, v, ok := strings.Cut(e, "=")
		if err := policy.CheckEnvKey(k); err != nil {
			return nil, usageErr("--env %q: %w; write KEY=VALUE, or KEY to pass this environment's value", sanitize(e), err)
		}
		if strings.ContainsRune(v, 0) {
			return nil, usageErr("--env %s: the value holds a NUL byte, which no program can receive", k)
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

// processRefusals refuses the policy flags a process-group shell cannot
// enforce: it has no namespaces, so it sees and may write all this user
// may, and shares this machine's network.
func processRefusals(o RunOptions) error {
	refuse := func(flag, why string) error {
		return refusedErr("--isolation process cannot enforce %s: %s; drop %s, or use --isolation container", flag, why, flag)
	}
	switch {
	case len(o.FS.Hide) > 0:
		return refuse("--hide", "its shells see every file this user may read")
	case len(o.FS.RO) > 0:
		return refuse("--ro", "its shells may write every file this user may write")
	case len(o.AllowHosts) > 0:
		return refuse("--allow-host", "its shells share this machine's network, with no proxy and nothing refused")
	case o.Limits.Memory > 0:
		return refuse("--memory", "it has no cgroup and no namespace to bound")
	case o.Limits.Pids > 0:
		return refuse("--pids", "it has no cgroup and no namespace to bound")
	case o.Limits.CPUs > 0:
		return refuse("--cpus", "it has no cgroup to bound")
	}
	return nil
}

// effectiveLimits are the flags' limits and the configuration's, the
// tighter of each; a flag above the configuration is lowered to it, with
// a warning. --cpus needs a cgroup: refused where cshell makes none.
func effectiveLimits(o RunOptions, cfg *policy.Config) (policy.Limits, error) {
	conf := cfg.Limits()
	l := o.Limits.Lower(conf)
	if o.Stderr != nil {
		for _, w := range []struct {
			flag      string
			asked, to float64
			show      func(float64) string
		}{
			{"--memory", float64(o.Limits.Memory), float64(conf.Memory), func(v float64) string { return policy.FormatSize(int64(v)) }},
			{"--pids", float64(o.Limits.Pids), float64(conf.Pids), func(v float64) string { return fmt.Sprint(int(v)) }},
			{"--cpus", o.Limits.CPUs, conf.CPUs, func(v float64) string { return fmt.Sprint(v) }},
		} {
			if w.asked > 0 && w.to > 0 && w.asked > w.to {
				fmt.Fprintf(o.Stderr, "cshell: warning: %s %s is above the configuration's limit (limits): %s applies\n", w.flag, w.show(w.asked), w.show(w.to))
			}
		}
	}
	if l.Empty() {
		return l, nil
	}
	if l.CPUs > 0 {
		if err := policy.CheckCPUs(l.CPUs, float64(runtime.NumCPU())); err != nil {
			return l, usageErr("%w", err)
		}
	}
	l.EnforcedBy = container.LimitsEnforcement()
	if l.CPUs > 0 && l.EnforcedBy != container.ByCgroup {
		return l, refusedErr("--cpus %v cannot be held here: it needs a cgroup, and cshell makes one only as root (this user's shells are bounded by cshell's watchdog, which can hold --memory and --pids but not CPU time); run as root, or drop --cpus", l.CPUs)
	}
	return l, nil
}

// cshellStateDirs are the state dirs no shell may see: the one in use and
// the default one.
func cshellStateDirs(o RunOptions) []string {
	var dirs []string
	for _, d := range []string{o.StateDir, DefaultStateDir(o.FS.Home)} {
		if d == "" || (o.FS.Home == "" && !filepath.IsAbs(d)) {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil && !slices.Contains(dirs, abs) {
			dirs = append(dirs, abs)
		}
	}
	return dirs
}

// protectedConfig is what keeps the configuration out of a shell's reach:
// its folder (made if missing, so that a shell cannot make the file), or
// the file itself when it lives elsewhere than cshell's own folder.
func protectedConfig(file string) string {
	dir := filepath.Dir(file)
	if filepath.Base(dir) == "cshell" {
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return dir
		}
	}
	return file
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

// envValue is key's value in env ("" when unset); the last entry wins.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
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
