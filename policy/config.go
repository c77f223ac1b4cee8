package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/cshell/cshell/internal/safefs"
)

// ProjectFile is the name of the per-project configuration file, looked up
// in the shell's working directory. It may only tighten the global file.
const ProjectFile = ".cshell.json"

// Defaults applied where no file says otherwise.
const (
	DefaultMaxConcurrent = 4
	DefaultNotify        = "wake"
	DefaultMaxLogBytes   = int64(1) << 30
	// DefaultMaxConnections bounds the connections relayed at once to one
	// exposed port: a flood must not take the supervisor to its
	// descriptor limit (each costs two, and a pipe while it moves).
	DefaultMaxConnections = 1024
)

// notifyRank orders notify levels from quietest to loudest.
var notifyRank = map[string]int{"none": 0, "note": 1, "wake": 2}

// ErrConfig marks an invalid configuration file; callers treat it as bad input.
var ErrConfig = errors.New("invalid configuration")

// Config is cshell's configuration as written in a file. Pointer and nil
// fields mean "not set here", which matters when layering.
type Config struct {
	Shells     ShellsConfig     `json:"shells"`
	Network    NetworkConfig    `json:"network"`
	Filesystem FilesystemConfig `json:"filesystem"`
	Env        EnvConfig        `json:"env"`
	LimitsCfg  LimitsConfig     `json:"limits"`
	Sandbox    SandboxConfig    `json:"sandbox"`
	Caches     CachesConfig     `json:"caches"`

	// writeRoots, set by Layer when the project file lists allowWrite,
	// are the global file's allowWrite entries: every project entry must
	// still lie under one of them once symlinks are resolved.
	writeRoots []string
}

// ShellsConfig limits background shells.
type ShellsConfig struct {
	Enabled       *bool  `json:"enabled,omitempty"`
	MaxConcurrent *int   `json:"maxConcurrent,omitempty"`
	Notify        string `json:"notify,omitempty"`
	MaxLogBytes   *int64 `json:"maxLogBytes,omitempty"`
	// MaxConnections bounds the connections relayed at once per exposed port.
	MaxConnections *int `json:"maxConnections,omitempty"`
	// MaxForegroundCalls bounds the foreground tool calls an MCP server
	// runs at once; the others wait for a turn.
	MaxForegroundCalls *int `json:"maxForegroundCalls,omitempty"`
	// ReattachSeconds is how long an MCP server's background shells
	// outlive it (default 30, 0 to 3600).
	ReattachSeconds *int `json:"reattachSeconds,omitempty"`
}

// ReattachSeconds is how long an MCP server's background shells outlive
// it, for a new server of the same session to take them over (a host's
// reload); 0 ends them with it.
func (c *Config) ReattachSeconds() int {
	if c.Shells.ReattachSeconds == nil {
		return DefaultReattachSeconds
	}
	return *c.Shells.ReattachSeconds
}

// DefaultReattachSeconds is shells.reattachSeconds when none is set.
const DefaultReattachSeconds = 30

// MaxReattachSeconds bounds shells.reattachSeconds.
const MaxReattachSeconds = 3600

// DefaultMaxForegroundCalls is how many foreground calls an MCP server
// runs at once where the configuration does not say.
const DefaultMaxForegroundCalls = 16

// MaxForegroundCalls bounds the foreground calls an MCP server runs at once.
func (c *Config) MaxForegroundCalls() int {
	if c.Shells.MaxForegroundCalls == nil {
		return DefaultMaxForegroundCalls
	}
	return *c.Shells.MaxForegroundCalls
}

// NetworkConfig lists the hosts a shell may reach through the proxy, and
// the ones it may never reach (deny wins).
type NetworkConfig struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// AllowGrants lets `cshell allow` (and answers to prompts) widen the
	// shells of a session while they run; default true.
	AllowGrants *bool `json:"allowGrants,omitempty"`
	// AskSeconds is how long a refused request waits for a grant before
	// it fails; default 0 (at once).
	AskSeconds *int `json:"askSeconds,omitempty"`
	// AllowCloudMetadata lets shells reach cloud metadata endpoints that
	// they are allowed (--allow-host, network.allow); default false: never.
	AllowCloudMetadata *bool `json:"allowCloudMetadata,omitempty"`
	// Credentials are declared for every shell (--credential's syntax):
	// only the global file adds them; a project file lists the names it
	// keeps.
	Credentials []string `json:"credentials,omitempty"`
}

// CloudMetadata reports whether shells may reach cloud metadata endpoints
// they are allowed.
func (c *Config) CloudMetadata() bool {
	return c.Network.AllowCloudMetadata != nil && *c.Network.AllowCloudMetadata
}

// MaxAskSeconds bounds network.askSeconds.
const MaxAskSeconds = 600

// AllowGrants reports whether grants reach the shells (default true).
func (c *Config) AllowGrants() bool {
	return c.Network.AllowGrants == nil || *c.Network.AllowGrants
}

// AskSeconds is how long a refused request waits for a grant, in
// seconds (0: it fails at once).
func (c *Config) AskSeconds() int {
	if c.Network.AskSeconds == nil {
		return 0
	}
	return *c.Network.AskSeconds
}

// FilesystemConfig adds writable and hidden paths to every shell.
type FilesystemConfig struct {
	AllowWrite []string `json:"allowWrite,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
}

// EnvConfig names variables of cshell's own environment that reach every
// shell, beyond the built-in allowlist (see EnvAllowed).
type EnvConfig struct {
	Pass []string `json:"pass,omitempty"` // names; a trailing * matches a prefix
}

// CachesConfig rules the tools' caches that container shells keep per
// working directory (package cache).
type CachesConfig struct {
	Enabled  *bool `json:"enabled,omitempty"`  // default true
	MaxBytes *Size `json:"maxBytes,omitempty"` // all working directories together; default DefaultCacheBytes
}

// DefaultCacheBytes bounds the caches of every working directory together
// where the configuration does not.
const DefaultCacheBytes = 10 << 30

// CachesEnabled reports whether container shells get caches (default true).
func (c *Config) CachesEnabled() bool { return c.Caches.Enabled == nil || *c.Caches.Enabled }

// CacheMaxBytes bounds the caches of every working directory together.
func (c *Config) CacheMaxBytes() int64 {
	if c.Caches.MaxBytes == nil {
		return DefaultCacheBytes
	}
	return int64(*c.Caches.MaxBytes)
}

// SandboxConfig chooses what a container shell may do beyond the default.
type SandboxConfig struct {
	// AllowUserNamespaces lets shells make user namespaces of their own
	// (--allow-userns); default false.
	AllowUserNamespaces *bool `json:"allowUserNamespaces,omitempty"`
	// TellRefusedWrites tells writes the shell's view of the files
	// refuses (each open with write intent is handed to cshell, which
	// costs some microseconds); default true.
	TellRefusedWrites *bool `json:"tellRefusedWrites,omitempty"`
	// Warm lets cshell serve keep one sandbox made ahead for its next
	// foreground call; default true.
	Warm *bool `json:"warm,omitempty"`
}

// Warm reports whether cshell serve makes sandboxes ahead (default true).
func (c *Config) Warm() bool {
	return c.Sandbox.Warm == nil || *c.Sandbox.Warm
}

// TellRefusedWrites reports whether refused writes are told (default true).
func (c *Config) TellRefusedWrites() bool {
	return c.Sandbox.TellRefusedWrites == nil || *c.Sandbox.TellRefusedWrites
}

// AllowUserNamespaces reports whether the configuration lets shells make
// user namespaces.
func (c *Config) AllowUserNamespaces() bool {
	return c.Sandbox.AllowUserNamespaces != nil && *c.Sandbox.AllowUserNamespaces
}

// Enabled reports whether shells may run at all (default true).
func (c *Config) Enabled() bool { return c.Shells.Enabled == nil || *c.Shells.Enabled }

// MaxConcurrent is the number of background shells that may run at once.
func (c *Config) MaxConcurrent() int {
	if c.Shells.MaxConcurrent == nil {
		return DefaultMaxConcurrent
	}
	return *c.Shells.MaxConcurrent
}

// Notify is the completion-notice level: wake, note or none.
func (c *Config) Notify() string {
	if c.Shells.Notify == "" {
		return DefaultNotify
	}
	return c.Shells.Notify
}

// MaxLogBytes caps each shell's log.
func (c *Config) MaxLogBytes() int64 {
	if c.Shells.MaxLogBytes == nil {
		return DefaultMaxLogBytes
	}
	return *c.Shells.MaxLogBytes
}

// MaxConnections bounds the connections relayed at once to an exposed port.
func (c *Config) MaxConnections() int {
	if c.Shells.MaxConnections == nil {
		return DefaultMaxConnections
	}
	return *c.Shells.MaxConnections
}

// Parse reads a configuration written as JSON with comments. name is used
// in errors, which give the line and column of the problem. data is not
// modified.
func Parse(name string, data []byte) (*Config, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: %s: the file is empty; write {} for no settings", ErrConfig, name)
	}
	v, err := hujson.Parse(bytes.Clone(data)) // Standardize edits the buffer in place
	if err != nil {
		// hujson already says "line L, column C"; drop its package prefix.
		msg := strings.TrimPrefix(err.Error(), "hujson: ")
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, msg)
	}
	if err := checkKeys(v, schema, ""); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, err.at(data))
	}
	v.Standardize() // comments and trailing commas become spaces: offsets stay put
	var c Config
	if err := json.Unmarshal(v.Pack(), &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, describeJSONError(data, err))
	}
	if err := c.validate(); err != nil {
		if v := v.Find(err.path); v != nil {
			err.offset = v.StartOffset
		}
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, err.at(data))
	}
	return &c, nil
}

// schema lists the settings; nil marks a leaf. Keys match exactly, so a
// misspelt or wrongly cased key is an error rather than silently unused.
var schema = map[string]map[string]bool{
	"shells":     {"enabled": true, "maxConcurrent": true, "notify": true, "maxLogBytes": true, "maxConnections": true, "maxForegroundCalls": true, "reattachSeconds": true},
	"network":    {"allow": true, "deny": true, "allowGrants": true, "askSeconds": true, "allowCloudMetadata": true},
	"filesystem": {"allowWrite": true, "denyRead": true},
	"env":        {"pass": true},
	"limits":     {"memory": true, "pids": true, "cpus": true},
	"sandbox":    {"allowUserNamespaces": true, "tellRefusedWrites": true, "warm": true},
	"caches":     {"enabled": true, "maxBytes": true},
}

// checkKeys refuses keys that are not settings, at their position.
func checkKeys(v hujson.Value, schema map[string]map[string]bool, _ string) *fieldError {
	top, ok := v.Value.(*hujson.Object)
	if !ok {
		return &fieldError{offset: v.StartOffset, msg: "the configuration must be a JSON object"}
	}
	for _, m := range top.Members {
		key := memberName(m)
		leaves, known := schema[key]
		if !known {
			return &fieldError{offset: m.Name.StartOffset, msg: fmt.Sprintf("unknown setting %q (settings: shells, network, filesystem, env, limits, sandbox, caches)", key)}
		}
		obj, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return &fieldError{offset: m.Value.StartOffset, msg: fmt.Sprintf("%s must be an object", key)}
		}
		for _, leaf := range obj.Members {
			if name := memberName(leaf); !leaves[name] {
				return &fieldError{offset: leaf.Name.StartOffset, msg: fmt.Sprintf("unknown setting %q in %s", name, key)}
			}
		}
	}
	return nil
}

func memberName(m hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// fieldError is a problem at a place in the file: offset, when known, or
// the JSON pointer path of the value at fault.
type fieldError struct {
	offset int
	path   string
	msg    string
}

func (e *fieldError) at(data []byte) string {
	if e.offset < 0 {
		return e.msg
	}
	l, c := lineColumn(data, e.offset)
	return fmt.Sprintf("line %d, column %d: %s", l, c, e.msg)
}

func invalid(path, format string, a ...any) *fieldError {
	return &fieldError{offset: -1, path: path, msg: fmt.Sprintf(format, a...)}
}

func (c *Config) validate() *fieldError {
	if n := c.Shells.MaxConcurrent; n != nil && *n < 1 {
		return invalid("/shells/maxConcurrent", "shells.maxConcurrent must be at least 1, not %d", *n)
	}
	if n := c.Shells.Notify; n != "" {
		if _, ok := notifyRank[n]; !ok {
			return invalid("/shells/notify", "shells.notify must be wake, note or none, not %q", n)
		}
	}
	if n := c.Shells.ReattachSeconds; n != nil && (*n < 0 || *n > MaxReattachSeconds) {
		return invalid("/shells/reattachSeconds", "shells.reattachSeconds must be from 0 to %d, not %d", MaxReattachSeconds, *n)
	}
	if n := c.Shells.MaxForegroundCalls; n != nil && (*n < 1 || *n > 1024) {
		return invalid("/shells/maxForegroundCalls", "shells.maxForegroundCalls must be from 1 to 1024, not %d", *n)
	}
	if n := c.Shells.MaxConnections; n != nil && (*n < 1 || *n > 1<<20) {
		return invalid("/shells/maxConnections", "shells.maxConnections must be from 1 to %d, not %d", 1<<20, *n)
	}
	if n := c.Shells.MaxLogBytes; n != nil && *n < 4096 {
		return invalid("/shells/maxLogBytes", "shells.maxLogBytes must be at least 4096, not %d", *n)
	}
	for i, h := range c.Network.Allow {
		if _, err := ParseHostPattern(h); err != nil {
			return invalid(fmt.Sprintf("/network/allow/%d", i), "network.allow: %v", err)
		}
	}
	if n := c.Network.AskSeconds; n != nil && (*n < 0 || *n > MaxAskSeconds) {
		return invalid("/network/askSeconds", "network.askSeconds must be from 0 to %d, not %d", MaxAskSeconds, *n)
	}
	for i, h := range c.Network.Deny {
		if _, err := ParseHostPattern(h); err != nil {
			return invalid(fmt.Sprintf("/network/deny/%d", i), "network.deny: %v", err)
		}
	}
	for i, e := range c.Network.Credentials {
		if !strings.Contains(e, "@") && CheckEnvKey(e) == nil {
			continue // a name alone: what a project file keeps
		}
		if _, err := ParseCredential(e); err != nil {
			return invalid(fmt.Sprintf("/network/credentials/%d", i), "network.credentials: %v", err)
		}
	}
	if n := c.LimitsCfg.Pids; n != nil {
		if err := CheckPids(*n); err != nil {
			return invalid("/limits/pids", "limits.pids: %v", err)
		}
	}
	if x := c.LimitsCfg.CPUs; x != nil && !(*x >= MinCPUs && *x <= 1<<16) {
		return invalid("/limits/cpus", "limits.cpus must be at least %v, not %v", MinCPUs, *x)
	}
	for i, k := range c.Env.Pass {
		if err := CheckEnvPattern(k); err != nil {
			return invalid(fmt.Sprintf("/env/pass/%d", i), "env.pass: %v", err)
		}
	}
	for _, list := range []struct {
		name  string
		paths []string
	}{{"allowWrite", c.Filesystem.AllowWrite}, {"denyRead", c.Filesystem.DenyRead}} {
		for i, p := range list.paths {
			if p == "" {
				return invalid(fmt.Sprintf("/filesystem/%s/%d", list.name, i), "filesystem.%s entries must not be empty", list.name)
			}
		}
	}
	return nil
}

// describeJSONError turns a decoding error into a sentence with a position.
func describeJSONError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		l, c := lineColumn(data, int(syn.Offset))
		return fmt.Sprintf("line %d, column %d: %s", l, c, syn.Error())
	case errors.As(err, &typ):
		l, c := lineColumn(data, int(typ.Offset))
		field := typ.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("line %d, column %d: %s must be %s, not %s", l, c, field, typ.Type, typ.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func lineColumn(b []byte, n int) (line, column int) {
	if n > len(b) {
		n = len(b)
	}
	if n < 0 {
		n = 0
	}
	line = 1 + bytes.Count(b[:n], []byte("\n"))
	column = 1 + n - (bytes.LastIndexByte(b[:n], '\n') + 1)
	return line, column
}

// DefaultGlobalPath is where the global file lives when --config is not given:
// $XDG_CONFIG_HOME/cshell/config.json, else ~/.config/cshell/config.json;
// none ("") without a home (unset, or /).
func DefaultGlobalPath(home string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "cshell", "config.json")
	}
	if home == "" || filepath.Clean(home) == "/" {
		return "" // no home (an arbitrary uid in a container): no global file
	}
	return filepath.Join(home, ".config", "cshell", "config.json")
}

// Load reads the global file (missing is fine unless explicit) and the
// project file in projectDir, and layers them. Warnings name each loosening
// line of the project file that was ignored.
func Load(globalPath string, explicit bool, projectDir string) (*Config, []string, error) {
	var global *Config
	var err error
	if globalPath != "" {
		if global, err = readFile(globalPath, explicit); err != nil {
			return nil, nil, err
		}
	}
	if global == nil {
		global = &Config{}
	}
	if projectDir == "" {
		return global, nil, nil
	}
	proj, err := readFile(filepath.Join(projectDir, ProjectFile), false)
	if err != nil {
		return nil, nil, err
	}
	if proj == nil {
		return global, nil, nil
	}
	c, warnings := Layer(global, proj, filepath.Join(projectDir, ProjectFile))
	return c, warnings, nil
}

// MaxFileSize bounds a configuration file. A project's .cshell.json may
// have been written by a shell: it is read only when it is a regular file
// (never through a symlink, never a FIFO or a device) of at most this size.
const MaxFileSize = 1 << 20

// ErrUnsafeFile marks a configuration file that is not read: a link, a
// FIFO, a device, a directory, or larger than MaxFileSize. Callers treat
// it as a refusal (exit 1), not as bad input.
var ErrUnsafeFile = errors.New("configuration file not read")

func readFile(path string, mustExist bool) (*Config, error) {
	data, err := safefs.ReadRegular(path, MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		return nil, nil
	}
	switch {
	case errors.Is(err, safefs.ErrSymlink):
		return nil, fmt.Errorf("%w: %s is a symbolic link; cshell reads configuration only from a regular file (a shell may have planted it): remove it or replace it with the file", ErrUnsafeFile, path)
	case errors.Is(err, safefs.ErrNotRegular):
		return nil, fmt.Errorf("%w: %s is not a regular file (%w); remove it", ErrUnsafeFile, path, errors.Unwrap(errors.Unwrap(err)))
	case errors.Is(err, safefs.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s is larger than %d KiB, which no configuration needs; remove it or trim it", ErrUnsafeFile, path, MaxFileSize>>10)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%w: %s cannot be read: permission denied; make it readable to this user or remove it", ErrUnsafeFile, path)
	case err != nil:
		return nil, fmt.Errorf("%w: read %s: %w", ErrConfig, path, errors.Unwrap(err))
	}
	return Parse(path, data)
}
