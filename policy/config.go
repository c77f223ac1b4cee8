package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// ProjectFile is the name of the per-project configuration file, looked up
// in the shell's working directory. It may only tighten the global file.
const ProjectFile = ".cshell.json"

// Defaults applied where no file says otherwise.
const (
	DefaultMaxConcurrent = 4
	DefaultNotify        = "wake"
	DefaultMaxLogBytes   = int64(1) << 30
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
}

// ShellsConfig limits background shells.
type ShellsConfig struct {
	Enabled       *bool  `json:"enabled,omitempty"`
	MaxConcurrent *int   `json:"maxConcurrent,omitempty"`
	Notify        string `json:"notify,omitempty"`
	MaxLogBytes   *int64 `json:"maxLogBytes,omitempty"`
}

// NetworkConfig lists the hosts a shell may reach through the proxy.
type NetworkConfig struct {
	Allow []string `json:"allow,omitempty"`
}

// FilesystemConfig adds writable and hidden paths to every shell.
type FilesystemConfig struct {
	AllowWrite []string `json:"allowWrite,omitempty"`
	DenyRead   []string `json:"denyRead,omitempty"`
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

// Parse reads a configuration written as JSON with comments. name is used
// in errors, which give the line and column of the problem.
func Parse(name string, data []byte) (*Config, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		// hujson already says "line L, column C"; drop its package prefix.
		msg := strings.TrimPrefix(err.Error(), "hujson: ")
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, msg)
	}
	v.Standardize() // comments and trailing commas become spaces: offsets stay put
	std := v.Pack()
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, describeJSONError(data, err))
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrConfig, name, locate(data, err))
	}
	return &c, nil
}

// fieldError names the JSON key whose value is wrong, so that the error can
// be placed at that key's line.
type fieldError struct {
	key string
	msg string
}

func (e *fieldError) Error() string { return e.msg }

func (c *Config) validate() error {
	if n := c.Shells.MaxConcurrent; n != nil && *n < 1 {
		return &fieldError{"maxConcurrent", fmt.Sprintf("shells.maxConcurrent must be at least 1, not %d", *n)}
	}
	if n := c.Shells.Notify; n != "" {
		if _, ok := notifyRank[n]; !ok {
			return &fieldError{"notify", fmt.Sprintf("shells.notify must be wake, note or none, not %q", n)}
		}
	}
	if n := c.Shells.MaxLogBytes; n != nil && *n < 4096 {
		return &fieldError{"maxLogBytes", fmt.Sprintf("shells.maxLogBytes must be at least 4096, not %d", *n)}
	}
	for _, h := range c.Network.Allow {
		if _, err := ParseHostPattern(h); err != nil {
			return &fieldError{"allow", "network.allow: " + err.Error()}
		}
	}
	for _, list := range [][]string{c.Filesystem.AllowWrite, c.Filesystem.DenyRead} {
		for _, p := range list {
			if p == "" {
				return &fieldError{"filesystem", "filesystem paths must not be empty"}
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
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if key, ok := strings.CutPrefix(msg, "unknown field "); ok {
		key = strings.Trim(key, `"`)
		return locate(data, &fieldError{key, "unknown setting " + strconvQuote(key)})
	}
	if errors.Is(err, io.EOF) {
		return "the file is empty; write {} for no settings"
	}
	return msg
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// locate prefixes err with the position of its key in data, when known.
func locate(data []byte, err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		if i := bytes.Index(data, []byte(`"`+fe.key+`"`)); i >= 0 {
			l, c := lineColumn(data, i)
			return fmt.Sprintf("line %d, column %d: %s", l, c, fe.msg)
		}
	}
	return err.Error()
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
// $XDG_CONFIG_HOME/cshell/config.json, else ~/.config/cshell/config.json.
func DefaultGlobalPath(home string) string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "cshell", "config.json")
	}
	return filepath.Join(home, ".config", "cshell", "config.json")
}

// Load reads the global file (missing is fine unless explicit) and the
// project file in projectDir, and layers them. Warnings name each loosening
// line of the project file that was ignored.
func Load(globalPath string, explicit bool, projectDir string) (*Config, []string, error) {
	global, err := readFile(globalPath, explicit)
	if err != nil {
		return nil, nil, err
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

func readFile(path string, mustExist bool) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrConfig, path, errors.Unwrap(err))
	}
	return Parse(path, data)
}
