package shells

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cshell/cshell/policy"
)

// StartOptions is one `cshell run -d`.
type StartOptions struct {
	RunOptions
	Name        string
	OwnerPid    int
	Description string
}

// Started is the answer to run -d: the shell's record, and its output
// when it ended before the answer.
type Started struct {
	Meta   *Meta
	Output string
}

// answerTimeout bounds the wait for the supervisor's word. The answer
// normally comes within earlyWindow plus the sandbox's start.
const answerTimeout = 10 * time.Second

// Start validates everything, allocates the shell and starts its
// supervisor; it returns once the supervisor says the shell runs, or ended.
func (m *Manager) Start(o StartOptions) (*Started, error) {
	if o.StateDir == "" {
		o.StateDir = m.path // its shells keep their grants here
	}
	p, err := prepare(o.RunOptions, "cshell run -d -- COMMAND", exposePorts(o.Expose))
	if err != nil {
		return nil, err
	}
	defer p.done() // the supervisor holds the caches in use from its start
	cfg, command, env, fsys, allow := p.cfg, p.command, p.env, p.fsys, p.allow
	if err := checkName(o.Name, wordsOr(o.Words).Name); err != nil {
		return nil, err
	}
	if o.OwnerPid != 0 && (o.OwnerPid < 0 || !processAlive(o.OwnerPid, 0)) {
		return nil, usageErr("--owner-pid %d: no such process", o.OwnerPid)
	}
	if o.Session == "" {
		o.Session = DefaultSession()
	}
	if err := CheckSession(o.Session); err != nil {
		return nil, err
	}
	grace := o.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	relay := relayed(o.Isolation)
	addrs, ls, err := bindExposes(o.Expose, o.ExposePublic, relay, o.Words)
	if err != nil {
		return nil, err
	}
	listeners, err := listenerFiles(ls)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range listeners {
			f.Close() // the supervisor has its own copies
		}
	}()
	exposes := make([]exposeSpec, len(addrs))
	exposed := make([]Exposed, len(addrs))
	for i, ap := range addrs {
		exposes[i] = exposeSpec{Listen: ap.String(), Port: int(ap.Port())}
		if relay {
			exposes[i].FD = firstListenerFD + i
		}
		exposed[i] = Exposed{Listen: ap.String(), Port: int(ap.Port())}
	}

	var meta *Meta
	err = m.withLock(func() error {
		running := 0
		for _, s := range m.List() {
			if s.Finished() {
				continue
			}
			running++
			if o.Name != "" && s.Name == o.Name {
				return refusedErr("a running shell (%s) is already named %q; pick another name or stop it", s.ID, o.Name)
			}
		}
		if limit := cfg.MaxConcurrent(); running >= limit {
			where := fmt.Sprintf("%d by default", policy.DefaultMaxConcurrent)
			if cfg.Shells.MaxConcurrent != nil {
				where = "set by the configuration"
			}
			return refusedErr("%d shells are running, the limit (shells.maxConcurrent, %s); stop one with cshell kill, or raise shells.maxConcurrent in %s", limit, where, configFileFor(o.ConfigFile))
		}
		id, err := m.nextID()
		if err != nil {
			return err
		}
		if err := m.dir.Mkdir(shellFile(id), 0o700); err != nil {
			return err
		}
		meta = &Meta{
			ID: id, Name: o.Name, Session: o.Session, Command: command, Description: o.Description, Status: StatusStarting,
			StartedAt: time.Now(), Log: m.logPath(id), Exposed: exposed,
			AllowHosts: append([]string{}, allow...), Workdir: fsys.Workdir,
			Isolation: string(o.Isolation), Timeout: o.Timeout.Seconds(), AllowUserns: p.userns,
		}
		if !p.limits.Empty() {
			l := p.limits
			meta.Limits = &l
		}
		for _, f := range []string{logName, violationsName} {
			if err := m.dir.WriteFile(shellFile(id, f), nil, 0o600); err != nil {
				return err
			}
		}
		if relay && len(exposed) > 0 {
			if err := m.markExposing(id); err != nil {
				return err
			}
		}
		return m.writeMeta(meta)
	})
	if err != nil {
		return nil, err
	}
	spec := supervisorSpec{
		Command: command, Argv: p.argv, Env: env, FS: fsys, Isolation: o.Isolation, Timeout: o.Timeout,
		Grace: grace, OwnerPid: o.OwnerPid, MaxLogBytes: cfg.MaxLogBytes(), MaxConnections: cfg.MaxConnections(), Notify: cfg.Notify(),
		Session: o.Session, Exposes: exposes, Allow: allow, Deny: cfg.Network.Deny, CloudMetadata: cfg.CloudMetadata(), ProxyPort: p.proxyPort,
		Grants: p.grants, AskSeconds: int(p.ask / time.Second), Hosts: p.hosts,
		Limits: p.limits, AllowUserns: p.userns, CacheMaxBytes: cfg.CacheMaxBytes(), QuietWrites: !cfg.TellRefusedWrites(),
	}
	files := listeners
	if p.cache != nil {
		spec.CacheLockFD = firstListenerFD + len(files)
		spec.CacheRoot = p.cache.Root()
		files = append(files[:len(files):len(files)], p.cache.LockFile())
	}
	if err := m.spawn(meta.ID, spec, files); err != nil {
		_ = m.dir.RemoveAll(shellFile(meta.ID))
		_ = m.dir.Remove(exposingName + "/" + meta.ID)
		return nil, err
	}
	meta, err = m.readMeta(meta.ID)
	if err != nil {
		return nil, err
	}
	st := &Started{Meta: meta}
	if meta.Finished() {
		st.Meta, st.Output = m.Ended(meta.ID)
	}
	return st, nil
}

// Ended returns a finished shell's record and its last output (64 KiB at
// most), the answer for a shell that ended before it was ready.
func (m *Manager) Ended(id string) (*Meta, string) {
	meta, err := m.Find(id)
	if err != nil {
		return nil, ""
	}
	out := ""
	if d, err := m.shellDir(meta.ID); err == nil {
		if v, err := openLogView(d); err == nil {
			b, _ := v.read(max(v.start, v.end-maxRead), v.end)
			v.Close()
			out = string(b)
		}
		d.Close()
	}
	return meta, out
}

// checkName refuses names that cannot be told from ids or from "all",
// that would not print as themselves, or that are long.
func checkName(name, flag string) error {
	if name == "" {
		return nil
	}
	if _, err := strconv.Atoi(name); err == nil || strings.ContainsAny(name, " /") || hasControl(name) ||
		strings.HasPrefix(name, "-") || name == "all" || len(name) > 64 || taskLike(name) {
		return usageErr("%s %q: a name has at most 64 characters, no spaces, slashes or control characters, does not start with -, and is neither a number, \"all\", nor shell-N or call-N (the MCP server's task ids)", flag, sanitize(name))
	}
	return nil
}

// CheckSession refuses session names with slashes, control characters or
// dots alone, and long ones: a session name travels into records, notices
// and messages.
func CheckSession(s string) error {
	if s == "" || strings.Contains(s, "/") || hasControl(s) || strings.Trim(s, ".") == "" || len(s) > 64 {
		return usageErr("session %q: a session name has 1 to 64 characters, none a slash or a control character, and is not only dots", sanitize(s))
	}
	return nil
}

// DefaultSession is $CSHELL_SESSION, else "default".
func DefaultSession() string {
	if s := os.Getenv("CSHELL_SESSION"); s != "" {
		return s
	}
	return "default"
}

// configFileFor names the global configuration file in a sentence.
func configFileFor(path string) string {
	if path == "" {
		return "the global configuration file"
	}
	return path
}

// taskLike reports whether name reads as an MCP task id (shell-N,
// call-N), which the MCP server takes for the task's shell.
func taskLike(name string) bool {
	for _, p := range []string{"shell-", "call-"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				return true
			}
		}
	}
	return false
}
