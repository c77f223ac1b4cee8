// Package plan turns what a user asked for one shell (a Request) and what
// this machine is (Facts) into a Plan: every check made, every default
// filled in, every rule parsed once, and nothing started. A Plan is a
// plain value: the foreground run starts its sandbox from it, run -d hands
// the very same value (as JSON) to the shell's supervisor, and cshell spec
// writes a bundle from it. Plan.Options is the one place sandbox.Options
// are made. Warnings come back in the Plan, for the caller to tell.
//
// runc's specconv is the model: one conversion from what was asked to what
// runs, testable on any OS.
package plan

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/kind"
	"github.com/cshell/cshell/policy"
)

// Errors, as every layer of cshell marks them (package kind).
var (
	ErrUsage   = kind.Usage   // bad input: a flag value, a path, an environment entry
	ErrRefused = kind.Refused // what the policy does not allow, or a port in use
)

// DefaultGrace is how long a TERMed shell has before it is killed.
const DefaultGrace = 10 * time.Second

// Purpose is what the plan is for: a foreground run, a background shell,
// or an OCI bundle (which has no supervisor: no proxy, no exposes).
type Purpose string

const (
	Foreground Purpose = "foreground"
	Background Purpose = "background"
	Bundle     Purpose = "bundle"
)

// Request is one shell as the user asked for it: the flags of cshell run,
// or the arguments of the MCP server's bash tool with the server's flags.
type Request struct {
	Purpose Purpose
	// Command is one shell command line (one word, run with bash -c), or
	// a program and its arguments, run as given (several words).
	Command   []string
	Isolation container.Isolation
	FS        policy.FilesystemRequest
	Env       []string      // KEY=VALUE, or KEY to pass this environment's value
	Timeout   time.Duration // 0: none
	Grace     time.Duration // after a TERM of cshell's; 0: DefaultGrace
	Config    *policy.Config
	// ConfigFile is the global configuration file in use (it may not
	// exist): shells may read it but never change it.
	ConfigFile string
	// StateDir is the state dir in use ("" for none); Session groups
	// shells ("" for $CSHELL_SESSION, else "default").
	StateDir string
	Session  string

	Expose       []string // PORT or HOST:PORT
	ExposePublic bool     // consent to an address beyond loopback
	AllowHosts   []string // reached through the shell's proxy, besides network.allow
	AddHosts     []string // NAME:ADDRESS
	// Credentials are --credential entries: NAME@HOST[,env=VAR|,file=PATH][,header=HEADER].
	Credentials []string
	// Ask is how long a refused request waits for a grant when the
	// configuration sets no network.askSeconds.
	Ask time.Duration

	// Limits bound the shell (--memory, --pids, --cpus), with the
	// configuration's; AllowUserNamespaces lets it make user namespaces.
	Limits              policy.Limits
	AllowUserNamespaces bool

	// Background shells: a name, the process whose end ends the shell,
	// a description, and what "ready" means for the answer.
	Name        string
	OwnerPid    int
	Reattach    time.Duration // how long the shell outlives its owner, for another to take it over (Adopt)
	Description string
	Ready       ReadyRequest

	// BundleDir is where a Bundle plan's bundle goes.
	BundleDir string

	// Words name what the sentences tell the user to type (nil: the
	// command line's flags).
	Words *Words
}

// ReadyRequest says when a background shell's start is answered: once
// every exposed port accepts a connection inside it (Ports), and/or once
// a line of its output matches Log (an RE2 expression); Timeout bounds
// the wait (0: DefaultReadyTimeout).
type ReadyRequest struct {
	Ports   bool
	Log     string
	Timeout time.Duration
}

// DefaultReadyTimeout bounds a ready wait that names no bound.
const DefaultReadyTimeout = 60 * time.Second

// Facts are what a plan needs of this machine and this user. The caller
// gathers them; tests make them up. The functions may be nil: what they
// would do is then left out (no state dirs made, no caches).
type Facts struct {
	Environ     []string // cshell's own environment
	NumCPU      int
	Enforcement string // how limits are held here: container.LimitsEnforcement
	// NoCPUController: the cgroup that holds the limits has no CPU
	// controller (a systemd manager that delegates memory and pids only).
	NoCPUController bool
	Namespaced      bool // isolation auto gives a container (container.DefaultIsNamespaced)
	// DefaultStateDir is this user's default state dir, hidden from
	// every shell as the one in use is.
	DefaultStateDir string
	// Reserved are ports inside the shell that something else will
	// serve (its session's exposed ports, reached from a foreground
	// shell): the proxy keeps clear of them.
	Reserved []int

	// Alive reports whether a process runs (--owner-pid).
	Alive func(pid int) bool
	// StateDir makes a state dir, or checks the one there (it is hidden
	// from the shell, and must exist before any shell could make it).
	StateDir func(path string) error
	// MakeDir makes a folder cshell keeps out of a shell's reach: the
	// configuration's (so that no shell can make the file first).
	MakeDir func(path string) error
	// OpenCaches opens the store of caches for a home (nil store: none).
	OpenCaches func(home string) (*cache.Store, error)
}

// Words name, in cshell's sentences, what the user is told to type: the
// command line's flags and commands, or an MCP server's tool arguments.
// A nil *Words means the command line's.
type Words struct {
	Expose       string // the option that exposes a port
	ExposePublic string // its consent to a public address; "" when there is none
	Name         string // the option that names a shell
	ReadyLog     string // the option whose value is a ready expression
	// ReadFrom tells how to read a shell's output from a byte.
	ReadFrom func(id string, from int64) string
	// Show tells how to see what a shell printed.
	Show func(id string) string
	// Allow tells how a refused host is allowed in session (nil: the
	// hint the refusal was recorded with, which names --allow-host).
	Allow func(session, pattern string) string
}

// Or is w, or the command line's words when w is nil.
func (w *Words) Or() *Words {
	if w == nil {
		return CLIWords
	}
	return w
}

// CLIWords are the command line's.
var CLIWords = &Words{
	Expose: "--expose", ExposePublic: "--expose-public", Name: "--name", ReadyLog: "--ready-log",
	ReadFrom: func(id string, from int64) string { return fmt.Sprintf("cshell output %s --from-byte %d", id, from) },
	Show:     func(id string) string { return "cshell output " + id },
}

// Expose is one exposed port: the host address that listens and the port
// inside the shell it is relayed to (the same number).
type Expose struct {
	Listen netip.AddrPort `json:"listen"`
	Port   uint16         `json:"port"`
}
