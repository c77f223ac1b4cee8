// Package container starts one shell command in a sandbox and controls it.
//
// A Runner starts shells; each has two implementations behind it: on Linux
// a rootless container built with runc's libcontainer (own user, PID, mount,
// network, IPC and UTS namespaces), and a plain process group (macOS, and
// Linux when asked for) or a Windows job object. Runners and Processes are
// safe for concurrent use.
package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/cshell/cshell/policy"
)

// Isolation is the kind of sandbox a shell runs in.
type Isolation string

// The isolations a user may ask for.
const (
	Auto      Isolation = "auto"      // container on Linux, process group elsewhere
	Container Isolation = "container" // rootless libcontainer (Linux only)
	Process   Isolation = "process"   // a process group / job object, no namespaces
)

// ErrBadIsolation is returned for an isolation name that does not exist.
var ErrBadIsolation = errors.New("unknown isolation")

// ErrSandbox means the sandbox could not be set up; the command did not run.
var ErrSandbox = errors.New("the sandbox could not start")

// ParseIsolation checks an --isolation value.
func ParseIsolation(s string) (Isolation, error) {
	switch i := Isolation(strings.ToLower(s)); i {
	case Auto, Container, Process:
		return i, nil
	}
	return "", fmt.Errorf("%w %q: use auto, container or process", ErrBadIsolation, s)
}

// Spec describes one shell to start.
type Spec struct {
	ID      string // unique among running shells; letters, digits, '-', '_', '.'
	Command string // a shell command line, run with bash -c (sh -c without bash)
	// Argv, when set, is the program and its arguments, run as given (the
	// program found in the shell's PATH) with no shell between; Command
	// then only says what runs.
	Argv []string
	Env  []string
	FS   policy.Filesystem

	// Stdio of the command. With Terminal set, the command gets a new
	// terminal instead (Process.Console), except in the process runner,
	// which hands it the caller's terminal (Stdin must be that terminal).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Terminal       bool

	// Sockets, when set, is handed to the container's init as fd 3: its
	// socket factory (see netrelay.Factory). The process runner ignores it:
	// its shells share this machine's network.
	Sockets *os.File
	// Events, when set, is handed to the container's init as fd 4 (the
	// write end of a pipe): it writes a line there for each thing cshell
	// should hear of, now "userns unshare" or "userns clone" for the first
	// user namespace the filter refused.
	Events *os.File
	// Resolver names the shell's own resolver (127.0.0.53, served through
	// Sockets) in its /etc/resolv.conf.
	Resolver bool
	// Redirect sends, by the kernel, whatever the shell sends out of its
	// network namespace to listeners inside that the caller makes through
	// Sockets before the command starts: TCP to EgressPort, UDP to port 53
	// to the resolver, other UDP to SinkPort (see redirect_linux.go). The
	// process runner ignores it.
	Redirect bool
	// Tracker, with Redirect, gets a netlink socket (netfilter) of the
	// shell's namespace with which its connection tracking can be read
	// (where a datagram the sink got was going); it owns the file.
	Tracker func(*os.File)

	// Trust, when set, holds the certificates (PEM) the shell's TLS
	// clients are told to trust: a container shell reads it at TrustPath,
	// read-only. The process runner ignores it.
	Trust     []byte
	trustFile string // where the runner wrote Trust

	// Token marks the processes of a process-runner shell (TokenVar);
	// empty: the runner makes one. Containers need none.
	Token string

	// AllowUserNamespaces lets a container shell make user namespaces of
	// its own (the syscall filter without that rule), for programs that
	// sandbox themselves. The process runner has no filter at all.
	AllowUserNamespaces bool
	// QuietWrites keeps the filter from handing the shell's opens with
	// write intent over (config sandbox.tellRefusedWrites false): refused
	// writes are then not told, and writes cost nothing more.
	QuietWrites bool

	// MemoryKills, when set, hears of each process the kernel's OOM
	// killer ends in the shell's cgroup, where the cgroup holds
	// Limits.Memory (as root): whether or not the shell ends with it.
	MemoryKills func(OOMKill)

	// Held makes a container's init without its command (a warm
	// sandbox): it waits on Sockets, which must be set, until the factory
	// gives it the command, the working directory and the streams
	// (netrelay.Factory.Command, with Args). Command, Argv, the streams,
	// Terminal and FS.Start are then unused. The process runner refuses it.
	Held bool

	// Limits bound the shell, by its cgroup where cshell makes one (see
	// LimitsEnforcement); otherwise the runner applies what the kernel can
	// hold per shell (the processes of its user namespace) and leaves
	// memory to the caller's watchdog. The process runner refuses them.
	Limits policy.Limits
}

// standIn is a hidden path the container's init covers with a mode 0000
// stand-in (a file or a directory) before the root is assembled.
type standIn struct {
	Dest, Source string
	Dir          bool
}

// earlyBind is a bind the container's init makes: Source (a path of this
// machine, with no link on the way) at Dest in the root, with every mount
// under it; read-only all through, or writable as the source is (its top
// mount with no setuid or devices).
type earlyBind struct {
	Dest, Source string
	Writable     bool `json:",omitempty"`
}

// TrustPath is where a container shell finds Spec.Trust (its /run is its
// own).
const TrustPath = "/run/cshell/ca-certificates.crt"

// OOMKill is a process the kernel's OOM killer ended: its command name
// and its pid on this machine, when the kernel's log says them (it needs
// /dev/kmsg), else empty.
type OOMKill struct {
	Comm string
	Pid  int
}

// Enforcement of limits, as LimitsEnforcement tells it.
const (
	ByCgroup   = "cgroup"
	ByWatchdog = "watchdog"
)

// Token returns the shell's token (process runner), or "".
type tokened interface{ Token() string }

// ShellToken returns the token a shell's processes carry, or "" (a
// container's).
func ShellToken(sh Shell) string {
	if t, ok := sh.(tokened); ok {
		return t.Token()
	}
	return ""
}

// Exit is how a shell ended.
type Exit struct {
	Code   int            // the command's exit code, or 128+N for signal N
	Signal syscall.Signal // the signal that ended it, when known
	// Escaped are processes of the shell that had left its process group
	// (a daemon that called setsid, say) and were killed at its end. Only
	// the process runner has them: a container's PID namespace ends whole.
	Escaped []int
	// Limit names the bound that ended the shell: "memory" (the kernel's
	// OOM killer in its cgroup, or cshell's watchdog), "pids"; "" for none.
	Limit string
}

// TokenVar names the variable the process runner marks each shell's
// processes with (a random value per shell): without namespaces, it is
// how cshell finds, and proves it started, what left the process group.
const TokenVar = "CSHELL_SHELL"

// Runner starts shells.
type Runner interface {
	Start(s *Spec) (Shell, error)
	Isolation() Isolation
}

// Shell is one running shell.
type Shell interface {
	// Pid is the host pid of the shell's top process.
	Pid() int
	// Signal sends sig to the command's whole process group.
	Signal(sig os.Signal) error
	// Kill ends everything in the shell at once.
	Kill() error
	// Wait blocks until the command ends.
	Wait() (Exit, error)
	// Console is the new terminal's master side, or nil.
	Console() *os.File
	// Close releases what the shell held (the container's state and cgroups).
	Close() error
}

// New returns the runner for an isolation. Auto picks the container on Linux
// and the process runner elsewhere; it never falls back to weaker isolation.
func New(iso Isolation) (Runner, error) {
	switch iso {
	case Process:
		return processRunner{}, nil
	case Container:
		return newContainerRunner()
	case Auto:
		if containerSupported {
			return newContainerRunner()
		}
		return processRunner{}, nil
	}
	return nil, fmt.Errorf("%w %q: use auto, container or process", ErrBadIsolation, iso)
}

// args is what the shell runs: Argv as given, else its command line
// through bash -c (sh -c without bash).
func (s *Spec) args(lookPath func(string) (string, error)) []string {
	if len(s.Argv) > 0 {
		return s.Argv
	}
	return shellArgs(lookPath, s.Command)
}

// shellArgs is the command line that runs a shell command: bash -c when
// bash exists, else sh -c.
func shellArgs(lookPath func(string) (string, error), command string) []string {
	if p, err := lookPath("bash"); err == nil {
		return []string{p, "-c", command}
	}
	return []string{"/bin/sh", "-c", command}
}

// DefaultIsNamespaced reports whether Auto gives shells namespaces here.
func DefaultIsNamespaced() bool { return containerSupported }
