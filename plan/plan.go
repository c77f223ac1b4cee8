package plan

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/kind"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/sandbox"
)

// Plan is one shell, decided: what runs, in which view of the files,
// with which environment, network and limits, and, for a background
// shell, how it is kept. It holds no descriptor a child would need
// besides the caches' lock (Release lets go of it); everything else
// survives a trip through JSON unchanged.
type Plan struct {
	Purpose   Purpose             `json:"purpose"`
	Command   string              `json:"command"`        // what runs, as shown: a shell command line
	Argv      []string            `json:"argv,omitempty"` // the program and its arguments as given; nil: Command with bash -c
	Env       []string            `json:"env"`
	FS        policy.Filesystem   `json:"fs"`
	Isolation container.Isolation `json:"isolation"` // as asked; the runner resolves auto
	// Namespaced: the shell gets namespaces of its own, so the policy,
	// the relays of its exposed ports and its proxy apply.
	Namespaced bool `json:"namespaced"`

	Timeout time.Duration `json:"timeout,omitempty"`
	Grace   time.Duration `json:"grace"`
	Session string        `json:"session"`

	Exposes []Expose `json:"exposes,omitempty"`
	Network Network  `json:"network"`

	Limits              policy.Limits `json:"limits"` // the tighter of the flags' and the configuration's, with EnforcedBy
	AllowUserNamespaces bool          `json:"allow_userns,omitempty"`
	QuietWrites         bool          `json:"quiet_writes,omitempty"` // sandbox.tellRefusedWrites false
	MaxConnections      int           `json:"max_connections"`        // a relay's connections at once

	// Background shells.
	Name          string        `json:"name,omitempty"`
	Description   string        `json:"description,omitempty"`
	OwnerPid      int           `json:"owner_pid,omitempty"`
	Reattach      time.Duration `json:"reattach,omitempty"` // with OwnerPid: the window for a new owner
	Ready         *Ready        `json:"ready,omitempty"`
	MaxLogBytes   int64         `json:"max_log_bytes,omitempty"`
	Notify        string        `json:"notify,omitempty"`
	MaxConcurrent int           `json:"max_concurrent,omitempty"`
	Caches        *Caches       `json:"caches,omitempty"`
	limitFrom     limitSentence // where MaxConcurrent came from, for the refusal
	BundleDir     string        `json:"bundle_dir,omitempty"`

	// Warnings are what the shell will do without, one sentence each,
	// for the caller to tell.
	Warnings []string `json:"-"`

	cache *cache.Project // held while the shell runs (Release)

	credentialVars  []string // variables that name or held a credential: never passed
	credentialFiles []string // files credentials were read from: hidden
}

// Network is what the shell may reach beyond its loopback.
type Network struct {
	Allow         []policy.HostPattern  `json:"allow,omitempty"` // --allow-host and network.allow
	Deny          []policy.HostPattern  `json:"deny,omitempty"`
	CloudMetadata bool                  `json:"cloud_metadata,omitempty"` // network.allowCloudMetadata
	ProxyPort     int                   `json:"proxy_port,omitempty"`     // 0: no proxy
	Grants        bool                  `json:"grants,omitempty"`         // the session's grants reach the shell
	Ask           time.Duration         `json:"ask,omitempty"`            // how long a refused request waits for a grant
	Hosts         map[string]netip.Addr `json:"hosts,omitempty"`          // --add-host
	// Credentials are added by the proxy to requests to their hosts
	// (--credential, network.credentials).
	Credentials []Credential `json:"credentials,omitempty"`
}

// Ready is when a background shell's start is answered.
type Ready struct {
	Ports   []int         `json:"ports,omitempty"` // inside the shell
	Log     string        `json:"log,omitempty"`   // an RE2 expression, checked
	Timeout time.Duration `json:"timeout"`
}

// Caches are the working directory's caches: kept within MaxBytes in
// Root once the shell ends.
type Caches struct {
	Root     string `json:"root"`
	MaxBytes int64  `json:"max_bytes"`
}

// limitSentence says where the concurrency limit came from.
type limitSentence struct{ where, file string }

// New checks a request against the configuration and this machine and
// makes its plan. Errors are sentences for the user, of kind ErrUsage
// (bad input) or ErrRefused (not allowed, not possible here).
func New(r Request, f Facts) (*Plan, error) {
	cfg := r.Config
	if cfg == nil {
		cfg = &policy.Config{}
	}
	if !cfg.Enabled() {
		return nil, refusedErr("shells are turned off by configuration (shells.enabled=false); change the config file to run commands")
	}
	p := &Plan{Purpose: cmp.Or(r.Purpose, Foreground), Isolation: r.Isolation, Timeout: r.Timeout, Grace: cmp.Or(r.Grace, DefaultGrace)}
	if p.Purpose == Bundle {
		if r.Isolation == container.Process {
			return nil, usageErr("--isolation process has no container to describe; leave --isolation out")
		}
		p.Isolation = container.Container // a bundle describes one, wherever it is written
	}
	p.Namespaced = Namespaced(p.Isolation, f.Namespaced)
	w := r.Words.Or()
	var err error
	if p.Command, p.Argv, err = commandOf(r.Command, p.usage()); err != nil {
		return nil, err
	}
	if err := p.session(r, f); err != nil {
		return nil, err
	}
	if err := p.background(r, f, w); err != nil {
		return nil, err
	}
	if err := p.isolation(r, cfg, f); err != nil {
		return nil, err
	}
	if err := p.exposes(r, w); err != nil {
		return nil, err
	}
	if err := p.network(r, cfg); err != nil {
		return nil, err
	}
	if err := p.credentials(r, cfg, f); err != nil {
		return nil, err
	}
	if p.Env, err = buildEnv(f.Environ, r.Env, cfg.Env.Pass, r.FS.Home); err != nil {
		return nil, err
	}
	// A credential's variable holds its placeholder, which the sandbox
	// sets: never the caller's value, even where env.pass would pass it
	// (under its name, or the name it came from), whatever the isolation.
	p.Env = withoutCredentials(p.Env, p.credentialVars, p.Network.Credentials)
	// A credential's file is hidden as --hide hides a path.
	r.FS.Hide = append(slices.Clone(r.FS.Hide), p.credentialFiles...)
	if err := p.filesystem(r, cfg, f); err != nil {
		p.Release()
		return nil, err
	}
	p.finishEnv(r, cfg, f)
	p.QuietWrites = !cfg.TellRefusedWrites()
	p.MaxConnections = cfg.MaxConnections()
	if p.Purpose == Background {
		p.MaxLogBytes, p.Notify, p.MaxConcurrent = cfg.MaxLogBytes(), cfg.Notify(), cfg.MaxConcurrent()
		p.limitFrom = limitSentence{where: fmt.Sprintf("%d by default", policy.DefaultMaxConcurrent), file: cmp.Or(r.ConfigFile, "the global configuration file")}
		if cfg.Shells.MaxConcurrent != nil {
			p.limitFrom.where = "set by the configuration"
		}
	}
	// Every shell that writes into the caches keeps them within the cap
	// when it ends: foreground, background and MCP calls alike.
	if p.cache != nil && p.Purpose != Bundle {
		p.Caches = &Caches{Root: p.cache.Root(), MaxBytes: cfg.CacheMaxBytes()}
	}
	if p.Purpose == Bundle {
		if err := p.bundle(r, cfg); err != nil {
			p.Release()
			return nil, err
		}
	}
	return p, nil
}

// Namespaced reports whether an isolation gives the shell namespaces of
// its own (a network among them, so that its ports are relayed):
// container does, process does not, auto does where it means a container
// (byDefault: container.DefaultIsNamespaced).
func Namespaced(iso container.Isolation, byDefault bool) bool {
	return iso == container.Container || iso == container.Auto && byDefault
}

// usage is how to write the command, for the sentence when it is missing.
func (p *Plan) usage() string {
	switch p.Purpose {
	case Background:
		return "cshell run -d -- COMMAND"
	case Bundle:
		return "cshell spec --bundle DIR -- COMMAND"
	}
	return "cshell run -- COMMAND"
}

// warn adds a warning.
func (p *Plan) warn(format string, a ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, a...))
}

// session fills in and checks the session.
func (p *Plan) session(r Request, f Facts) error {
	p.Session = cmp.Or(r.Session, policy.EnvValue(f.Environ, "CSHELL_SESSION"), "default")
	return CheckSession(p.Session)
}

// background checks what only a background shell has: its name, owner,
// description and readiness.
func (p *Plan) background(r Request, f Facts, w *Words) error {
	if p.Purpose != Background {
		return nil
	}
	if err := CheckName(r.Name, w.Name); err != nil {
		return err
	}
	if r.OwnerPid != 0 && (r.OwnerPid < 0 || f.Alive == nil || !f.Alive(r.OwnerPid)) {
		return usageErr("--owner-pid %d: no such process", r.OwnerPid)
	}
	if r.Reattach < 0 || r.Reattach > 0 && r.OwnerPid == 0 {
		return usageErr("a reattach window of %s needs an owner process to outlive", r.Reattach)
	}
	p.Name, p.OwnerPid, p.Description, p.Reattach = r.Name, r.OwnerPid, r.Description, r.Reattach
	return nil
}

// isolation checks what the isolation can enforce and settles the limits.
func (p *Plan) isolation(r Request, cfg *policy.Config, f Facts) error {
	if !p.Namespaced {
		if err := processRefusals(r); err != nil {
			return err
		}
		if len(cfg.Network.Allow) > 0 || len(cfg.Filesystem.DenyRead) > 0 || !cfg.Limits().Empty() {
			p.warn("--isolation process: the configuration's network.allow, filesystem.denyRead and limits do not apply (its shells share this machine's files, network and resources)")
		}
		return nil
	}
	var err error
	if p.Limits, err = p.effectiveLimits(r.Limits, cfg, f); err != nil {
		return err
	}
	p.AllowUserNamespaces = r.AllowUserNamespaces || cfg.AllowUserNamespaces()
	return nil
}

// filesystem makes the shell's view of the files: the request's paths,
// cshell's own state and configuration kept out of reach, the trust
// files and the caches.
func (p *Plan) filesystem(r Request, cfg *policy.Config, f Facts) error {
	req := r.FS
	req.Config = cfg
	req.Show = policy.TrustFiles(p.Env)
	if sock := policy.EnvValue(f.Environ, "SSH_AUTH_SOCK"); sock != "" && policy.EnvValue(p.Env, "SSH_AUTH_SOCK") == "" {
		// The caller's agent would sign with the user's keys for a shell
		// that can reach its socket; -e SSH_AUTH_SOCK gives it on purpose.
		req.Sockets = append(slices.Clip(req.Sockets), sock)
	}
	var store *cache.Store
	if p.Namespaced {
		// cshell's own: the state dir in use and the default one hidden
		// (made and recorded now if missing, so that no shell can make one
		// first and have later shells work in it), and the configuration
		// read-only (a shell must not loosen the policy of later shells).
		for _, dir := range stateDirs(r.StateDir, f.DefaultStateDir, r.FS.Home) {
			if f.StateDir != nil {
				if err := f.StateDir(dir); err != nil {
					return err
				}
			}
			req.Private = append(slices.Clip(req.Private), dir)
		}
		if r.ConfigFile != "" {
			req.Protect = append(slices.Clip(req.Protect), protectedConfig(r.ConfigFile, f.MakeDir))
		}
		if cfg.CachesEnabled() && f.OpenCaches != nil {
			s, err := f.OpenCaches(policy.EnvValue(p.Env, "HOME"))
			switch {
			case err != nil:
				p.warn("no caches for this shell: %v", err)
			case s != nil:
				// Hidden (and no working directory in it): it holds the
				// caches of every other working directory.
				req.Private = append(slices.Clip(req.Private), s.Path())
				defer s.Close()
				store = s
			}
		}
	}
	fsys, err := policy.NewFilesystem(req)
	if err != nil {
		if errors.Is(err, policy.ErrLinkedPath) {
			return refusedErr("%w", err)
		}
		return usageErr("%w", err)
	}
	if store != nil {
		proj, err := store.Use(fsys.Workdir)
		if err != nil {
			p.warn("no caches for this shell: %v", err)
		} else {
			p.cache = proj
			fsys.AddCaches(proj.Binds(policy.EnvValue(p.Env, "HOME"), p.Env))
		}
	}
	for _, w := range fsys.Warnings {
		p.warn("%s", w)
	}
	fsys.Warnings = nil
	p.FS = fsys
	return nil
}

// finishEnv sets what the sandbox fixes in the environment: TMPDIR, and
// the proxy variables when there is a proxy.
func (p *Plan) finishEnv(r Request, cfg *policy.Config, f Facts) {
	if !p.Namespaced {
		return
	}
	p.Network.Grants = cfg.AllowGrants() && r.StateDir != "" && p.Purpose != Bundle
	if (len(p.Network.Allow) > 0 || p.Network.Grants) && p.Purpose != Bundle {
		taken := slices.Clone(f.Reserved)
		for _, e := range p.Exposes {
			taken = append(taken, int(e.Port))
		}
		p.Network.ProxyPort = sandbox.PickProxyPort(taken)
	}
	keep := slices.ContainsFunc(r.Env, func(e string) bool { k, _, _ := strings.Cut(e, "="); return k == "TMPDIR" })
	p.Env = sandbox.Env(p.Env, keep, p.Network.ProxyPort)
}

// stateDirs are the state dirs no shell may see: the one in use and the
// default one.
func stateDirs(inUse, byDefault, home string) []string {
	var dirs []string
	for _, d := range []string{inUse, byDefault} {
		if d == "" || (home == "" && !filepath.IsAbs(d)) {
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
func protectedConfig(file string, mkdir func(string) error) string {
	dir := filepath.Dir(file)
	if filepath.Base(dir) == "cshell" && mkdir != nil {
		if err := mkdir(dir); err == nil {
			return dir
		}
	}
	return file
}

// Release lets go of what the plan holds for the shell: its caches'
// lock. A supervisor that inherited the lock holds it from then on.
func (p *Plan) Release() {
	if p.cache != nil {
		p.cache.Close()
		p.cache = nil
	}
}

// CacheLock is the descriptor that holds the caches in use (nil: none),
// for a child to inherit.
func (p *Plan) CacheLock() *os.File {
	if p.cache == nil {
		return nil
	}
	return p.cache.LockFile()
}

// CheckRunning refuses a start when running shells are at the limit.
func (p *Plan) CheckRunning(running int) error {
	if p.MaxConcurrent > 0 && running >= p.MaxConcurrent {
		return refusedErr("%d shells are running, the limit (shells.maxConcurrent, %s); stop one with cshell kill, or raise shells.maxConcurrent in %s",
			p.MaxConcurrent, p.limitFrom.where, p.limitFrom.file)
	}
	return nil
}

// AllowHosts are the allowed hosts as a user would write them.
func (p *Plan) AllowHosts() []string {
	out := make([]string, len(p.Network.Allow))
	for i, h := range p.Network.Allow {
		out[i] = h.String()
	}
	return out
}

func usageErr(format string, a ...any) error   { return kind.Errorf(ErrUsage, format, a...) }
func refusedErr(format string, a ...any) error { return kind.Errorf(ErrRefused, format, a...) }
