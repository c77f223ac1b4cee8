package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/console"
	"github.com/spf13/cobra"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

type runOptions struct {
	allowHosts   []string
	addHosts     []string
	credentials  []string
	expose       []string
	exposePublic bool
	ready        bool
	readyLog     string
	readyTimeout string
	background   bool
	name         string
	session      string
	ownerPid     string
	workdir      string
	rw, ro       []string
	hide         []string
	env          []string
	isolation    string
	timeout      string
	memory       string
	pids         int
	cpus         float64
	allowUserns  bool
}

func newRunCmd(g *globals) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] [--] COMMAND...",
		Short: "Run a shell command in a sandbox",
		Long: `Run COMMAND in a rootless container and exit with its exit code:
128+N when signal N ended it, 125 when cshell failed before the command
ran, 126 when the command is not executable, 127 when it was not found.

One word after -- is a shell command line, run with bash -c ('make &&
./check'); several words are a program and its arguments, passed exactly
as given, with no shell between (as docker, sudo and timeout pass them):
cshell run -- python3 -c 'print(1)' runs python3 with two arguments.

The host's filesystem is visible read-only; the working directory and each
--rw path are writable; /tmp is private; ~/.ssh, ~/.aws and other secrets
are hidden; the network is loopback only. The environment is an allowlist
(PATH, HOME, USER, LANG, LC_*, TZ and a few more; -e adds).

--isolation process runs the command in a process group instead, with no
namespaces: it sees and may write all you may, shares this machine's
network and sees every process. It refuses --hide, --ro and --allow-host,
which it cannot enforce.`,
		Example: `  cshell run -- npm test
  cshell run -- python3 -c 'import sys; print(sys.argv)' '$HOME'
  cshell run -e CI=1 -w ./app -- 'make -j4 && ./bin/check'
  cshell run --hide ~/.config/secret --ro ./vendor -- go build ./...
  cshell run --timeout 5m -- ./long-build.sh
  cshell run --allow-host registry.npmjs.org -- npm ci
  cshell run --credential GH_TOKEN@api.github.com -- gh api user
  cshell run -d --name web --expose 5173 --ready -- npm run dev
  cshell output web --wait 10`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("cshell run needs a command; write cshell run -- COMMAND")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runForeground(cmd, g, &o, args)
		},
	}
	cmd.Flags().SetInterspersed(false) // flags after the command belong to it
	f := cmd.Flags()
	addPolicyFlags(cmd, &o)
	f.StringVar(&o.timeout, "timeout", "", "kill timer (90s, 5m or plain seconds): TERM, then KILL 10s later")
	f.BoolVarP(&o.background, "background", "d", false, "background shell: answer at once with its id and log")
	f.StringVar(&o.name, "name", "", "label shown by ps; usable instead of the id")
	f.StringVar(&o.session, "session", "", "group shells (default $CSHELL_SESSION, else default)")
	f.StringVar(&o.ownerPid, "owner-pid", "", "end the shell when this process exits")
	f.StringArrayVar(&o.expose, "expose", nil, "relay a port of the shell to this machine: PORT or HOST:PORT (repeatable)")
	f.BoolVar(&o.exposePublic, "expose-public", false, "consent to an --expose address beyond loopback (0.0.0.0:PORT)")
	f.BoolVar(&o.ready, "ready", false, "with -d: answer once every exposed port accepts a connection inside the shell")
	f.StringVar(&o.readyLog, "ready-log", "", "with -d: answer once a line of output matches this regex")
	f.StringVar(&o.readyTimeout, "ready-timeout", "60s", "bound for --ready and --ready-log")
	return cmd
}

// addPolicyFlags adds the sandbox's policy flags, which run and serve share.
func addPolicyFlags(cmd *cobra.Command, o *runOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.workdir, "workdir", "w", "", "working directory, writable inside (default: current directory)")
	f.StringArrayVar(&o.rw, "rw", nil, "extra writable path (repeatable)")
	f.StringArrayVar(&o.ro, "ro", nil, "extra read-only path (repeatable)")
	f.StringArrayVar(&o.hide, "hide", nil, "path made unreadable (repeatable)")
	f.StringArrayVarP(&o.env, "env", "e", nil, "environment for the command, KEY=VALUE (repeatable)")
	f.StringVar(&o.isolation, "isolation", "auto", "auto|container|process: auto is a container on Linux, a process group elsewhere (process isolates nothing but the process group)")
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "host the shell may reach (through its proxy, or dialed directly): example.com, *.example.com, host:port (repeatable)")
	f.StringArrayVar(&o.credentials, "credential", nil, "NAME@HOST[,env=VAR|,file=PATH][,header=HEADER][,http]: the shell sees a placeholder in $NAME, and its proxy puts the value (from $NAME by default) in its place in requests to HOST, over HTTPS (,http: plain HTTP too) (repeatable)")
	f.StringArrayVar(&o.addHosts, "add-host", nil, "NAME:ADDRESS: the name resolves to the address for the shell (it must still be allowed; repeatable)")
	f.StringVar(&o.memory, "memory", "", "memory limit, binary units (512m, 2g): the shell is killed past it")
	f.IntVar(&o.pids, "pids", 0, "limit on the shell's tasks (processes and threads) at once")
	f.Float64Var(&o.cpus, "cpus", 0, "limit on CPU time, in CPUs (0.5: half of one); needs a cgroup (root)")
	f.BoolVar(&o.allowUserns, "allow-userns", false, "let the shell make user namespaces of its own (Chromium's sandbox, bubblewrap, rootless podman)")
	_ = cmd.RegisterFlagCompletionFunc("isolation", cobra.FixedCompletions([]string{"auto", "container", "process"}, cobra.ShellCompDirectiveNoFileComp))
}

// limits reads --memory, --pids and --cpus.
func (o *runOptions) limits(cmd *cobra.Command) (policy.Limits, error) {
	var l policy.Limits
	if cmd.Flags().Changed("memory") {
		n, err := policy.ParseSize(o.memory)
		if err != nil {
			return l, usageError("--memory %q: %v", o.memory, err)
		}
		l.Memory = n
	}
	if cmd.Flags().Changed("pids") {
		if err := policy.CheckPids(o.pids); err != nil {
			return l, usageError("--pids %d: give at least %d (the shell's init and its command)", o.pids, policy.MinPids)
		}
		l.Pids = o.pids
	}
	if cmd.Flags().Changed("cpus") {
		if err := policy.CheckCPUs(o.cpus, float64(runtime.NumCPU())); err != nil {
			return l, usageError("--cpus %v: give from %v to %d (this machine's CPUs)", o.cpus, policy.MinCPUs, runtime.NumCPU())
		}
		l.CPUs = o.cpus
	}
	return l, nil
}

func runForeground(cmd *cobra.Command, g *globals, o *runOptions, args []string) error {
	ro, err := o.runOptions(cmd, g)
	if err != nil {
		return err
	}
	timeout, err := parseDuration(o.timeout)
	if err != nil {
		return usageError("--timeout %q: %v", o.timeout, err)
	}
	ro.Command, ro.Timeout = args, timeout
	ro.Stdin, ro.Stdout = os.Stdin, g.stdout
	ro.Expose, ro.ExposePublic = o.expose, o.exposePublic
	ro.Session = o.session
	if o.background {
		return runBackground(g, o, ro)
	}
	if o.name != "" || o.ownerPid != "" || o.ready || o.readyLog != "" {
		return usageError("--name, --owner-pid, --ready and --ready-log are for background shells; add -d")
	}
	code, err := shells.Run(cmd.Context(), ro)
	if err != nil {
		if errors.Is(err, container.ErrSandbox) {
			return &exitError{code: exitCshell, err: err}
		}
		if c, _ := classify(err); c == exitUsage || errors.Is(err, shells.ErrRefused) {
			return err // 2 for bad input, 1 for a refusal (shells turned off, a port in use)
		}
		return &exitError{code: exitCshell, err: err}
	}
	return &exitError{code: code, silent: true}
}

// runOptions reads the policy flags that run, serve and spec share
// (addPolicyFlags) and the configuration into the options of a shell.
func (o *runOptions) runOptions(cmd *cobra.Command, g *globals) (shells.RunOptions, error) {
	iso, err := container.ParseIsolation(o.isolation)
	if err != nil {
		return shells.RunOptions{}, &exitError{code: exitUsage, err: err}
	}
	req, cfg, err := policyInputs(g, o)
	if err != nil {
		return shells.RunOptions{}, err
	}
	limits, err := o.limits(cmd)
	if err != nil {
		return shells.RunOptions{}, err
	}
	ro := shells.RunOptions{Request: plan.Request{Isolation: iso, FS: req, Env: o.env, Config: cfg, AllowHosts: o.allowHosts, AddHosts: o.addHosts, Credentials: o.credentials,
		StateDir: g.stateDirPath(), Limits: limits, AllowUserNamespaces: o.allowUserns}, Stderr: g.stderr, Log: g.log}
	if self, err := os.Executable(); err == nil {
		ro.PruneLater = shells.PruneDetached(self) // the caller does not wait for a walk of every cache
	}
	ro.ConfigFile, _ = g.configPath(req.Home)
	return ro, nil
}

// policyInputs gathers what the sandbox policy is made of: the path flags
// and the configuration (global file, then the working directory's
// project file).
func policyInputs(g *globals, o *runOptions) (policy.FilesystemRequest, *policy.Config, error) {
	var req policy.FilesystemRequest
	// The directory this process is in, as the kernel has it: $PWD may
	// name it through a link (cd into a planted one, say).
	cwd, err := syscall.Getwd()
	if err != nil {
		return req, nil, &exitError{code: exitCshell, err: fmt.Errorf("find the current directory: %w", err)}
	}
	home, passwd := homes()
	req = policy.FilesystemRequest{Home: home, PasswdHome: passwd, Cwd: cwd, Workdir: o.workdir, RW: o.rw, RO: o.ro, Hide: o.hide}
	projectDir := cwd
	if o.workdir != "" {
		if projectDir, err = policy.ExpandPath(o.workdir, home, cwd); err != nil {
			return req, nil, &exitError{code: exitUsage, err: err}
		}
		// Said of the working directory itself, before its project file
		// is looked for in it.
		if _, err := os.Stat(projectDir + "/."); errors.Is(err, fs.ErrPermission) {
			return req, nil, usageError("-w %s: this user may not enter it (permission denied); give a working directory you may use", o.workdir)
		}
	}
	cfg, err := loadConfig(g, home, projectDir)
	if err != nil {
		return req, nil, err
	}
	req.Config = cfg
	return req, cfg, nil
}

// homes are $HOME (the passwd database's home when it is unset) and the
// passwd database's home when it differs: secrets are hidden in both.
func homes() (string, string) {
	home := os.Getenv("HOME")
	passwd := ""
	if u, err := user.LookupId(strconv.Itoa(os.Geteuid())); err == nil {
		passwd = u.HomeDir
	}
	if home == "" {
		home = passwd
	}
	if passwd == home {
		passwd = ""
	}
	return home, passwd
}

// configPath is the global configuration file: --config, else the
// default place.
func (g *globals) configPath(home string) (string, bool) {
	if g.config != "" {
		return g.config, true
	}
	return policy.DefaultGlobalPath(home), false
}

// loadConfig reads the global file and the project file, printing a
// warning for each loosening line of the project file.
func loadConfig(g *globals, home, projectDir string) (*policy.Config, error) {
	path, explicit := g.configPath(home)
	cfg, warnings, err := policy.Load(path, explicit, projectDir)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "cshell: warning: %s\n", w)
	}
	return cfg, nil
}

// maxSeconds bounds durations given in seconds, well inside what a
// time.Duration holds (about 292 years).
const maxSeconds = 100 * 365 * 24 * 3600

// parseDuration reads 90s, 5m or plain seconds; empty means none.
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case math.IsNaN(n):
			return 0, errors.New("write a duration such as 90s, 5m or plain seconds")
		case n <= 0:
			return 0, errors.New("must be positive")
		case n > maxSeconds:
			return 0, errors.New("is too long; give at most 100 years")
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("write a duration such as 90s, 5m or plain seconds")
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	if d > maxSeconds*time.Second {
		return 0, errors.New("is too long; give at most 100 years")
	}
	return d, nil
}

// runBackground starts a background shell and prints the answer.
func runBackground(g *globals, o *runOptions, ro shells.RunOptions) error {
	var err error
	if ro.Ready, err = readyRequest(o); err != nil {
		return err
	}
	m, err := g.manager()
	if err != nil {
		return err
	}
	if o.ownerPid != "" {
		if ro.OwnerPid, err = strconv.Atoi(o.ownerPid); err != nil || ro.OwnerPid <= 0 {
			return usageError("--owner-pid %q: give the process id of a running process", o.ownerPid)
		}
	}
	ro.Name = o.name
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if ro.Ready != (plan.ReadyRequest{}) && isTerminal(g.stderr) {
		// The id before the wait: whatever happens next, the user knows
		// which shell it is.
		ro.Waiting = func(id string, r *plan.Ready) {
			fmt.Fprintf(g.stderr, "cshell: shell %s started; waiting up to %s until %s (Ctrl-C stops the shell)\n", id, r.Timeout, readyWhat(r))
		}
	}
	st, err := m.Start(ctx, ro)
	if err != nil {
		return err // classify: bad input 2, everything else 1
	}
	if ctx.Err() != nil && st.NotReady != nil {
		// Interrupted while it waited: nothing left running that the user
		// was not told of.
		id := st.Meta.ID
		r, err := m.Kill(context.Background(), id, syscall.SIGTERM, 2*time.Second)
		if err != nil || r.Err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("interrupted while waiting for shell %s to be ready, and it could not be stopped: %v; stop it with cshell kill %s", id, errors.Join(err, r.ErrOrNil()), id)}
		}
		return &exitError{code: 128 + int(syscall.SIGINT), err: fmt.Errorf("interrupted while waiting for shell %s to be ready; stopped it (%s)", id, r.Meta.StatusLine)}
	}
	if g.json {
		if err := g.printJSON(st.Answer()); err != nil {
			return err
		}
	} else {
		fmt.Fprint(g.stdout, st.Lines())
	}
	switch {
	case st.NotReady != nil:
		return &exitError{code: exitFailed, err: st.NotReady}
	case st.Meta.Finished():
		// Ended before the answer: run -d exits with its code, as a
		// foreground run would.
		return &exitError{code: st.Meta.ExitStatus(), silent: true}
	}
	return nil
}

// readyRequest reads --ready, --ready-log and --ready-timeout (the plan
// checks them against the rest).
func readyRequest(o *runOptions) (plan.ReadyRequest, error) {
	if !o.ready && o.readyLog == "" {
		return plan.ReadyRequest{}, nil
	}
	d, err := parseDuration(o.readyTimeout)
	if err != nil || d == 0 {
		return plan.ReadyRequest{}, usageError("--ready-timeout %q: write a duration such as 60s or plain seconds", o.readyTimeout)
	}
	return plan.ReadyRequest{Ports: o.ready, Log: o.readyLog, Timeout: d}, nil
}

// readyWhat says what a --ready wait waits for.
func readyWhat(r *plan.Ready) string {
	var what []string
	if len(r.Ports) > 0 {
		ports := make([]string, len(r.Ports))
		for i, p := range r.Ports {
			ports[i] = strconv.Itoa(p)
		}
		what = append(what, "port "+strings.Join(ports, ", ")+" accepts connections inside it")
	}
	if r.Log != "" {
		what = append(what, fmt.Sprintf("a line of its output matches %q", r.Log))
	}
	return strings.Join(what, " and ")
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := console.ConsoleFromFile(f)
	return err == nil
}
