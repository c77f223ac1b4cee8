//go:build unix

package container

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// processRunner runs the command in its own process group on the host,
// with no namespaces: the working directory and environment apply, the
// filesystem policy does not.
type processRunner struct{}

var _ Runner = processRunner{}

func (processRunner) Isolation() Isolation { return Process }

func (processRunner) Start(s *Spec) (Shell, error) {
	if s.Held {
		return nil, fmt.Errorf("%w: a process-group shell cannot be held", ErrSandbox)
	}
	argv := shellArgs(exec.LookPath, s.Command)
	if len(s.Argv) > 0 {
		// The program is found in the shell's PATH, not cshell's, and a
		// missing or unrunnable one ends as in a container (127, 126):
		// the shell looks it up as it would its own command and execs it,
		// arguments untouched.
		argv = append(shellArgs(exec.LookPath, `exec "$@"`), "sh")
		argv = append(argv, s.Argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.FS.Start
	token := s.Token
	if token == "" {
		token = newToken()
	}
	cmd.Env = append(slices.Clone(s.Env), TokenVar+"="+token)
	// A daemon that escaped may hold the output pipe: Wait returns anyway.
	cmd.WaitDelay = 2 * time.Second
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeath(cmd.SysProcAttr)
	tty := -1
	if f, ok := s.Stdin.(*os.File); ok && s.Terminal {
		// The command's group becomes the terminal's foreground group, so
		// that it may read and receives ^C; we take the terminal back after.
		tty = int(f.Fd())
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = tty
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return &group{cmd: cmd, tty: tty, token: token}, nil
}

// group is a command running in its own process group.
type group struct {
	cmd   *exec.Cmd
	tty   int
	token string
	once  sync.Once
}

func (g *group) Token() string { return g.token }

func (g *group) Pid() int          { return g.cmd.Process.Pid }
func (g *group) Console() *os.File { return nil }
func (g *group) Close() error      { return nil }

func (g *group) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("signal %v is not a unix signal", sig)
	}
	err := unix.Kill(-g.cmd.Process.Pid, s)
	if err == unix.ESRCH {
		return nil // the group is already gone
	}
	return err
}

func (g *group) Kill() error { return g.Signal(syscall.SIGKILL) }

// Wait waits for the command, then ends what it left: the rest of its
// process group, and processes that carry its token but left the group.
func (g *group) Wait() (Exit, error) {
	err := g.cmd.Wait()
	if g.tty >= 0 {
		g.once.Do(func() { reclaimTerminal(g.tty) })
	}
	// The group is found by token, not by its id: once the leader is
	// reaped, its id may be another's.
	escaped := Sweep(g.token, g.cmd.Process.Pid)
	st, ok := g.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return Exit{Escaped: escaped}, err
	}
	if st.Signaled() {
		return Exit{Code: 128 + int(st.Signal()), Signal: st.Signal(), Escaped: escaped}, nil
	}
	return Exit{Code: st.ExitStatus(), Escaped: escaped}, nil
}

// newToken makes a shell's token.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reclaimTerminal makes our own process group the terminal's foreground
// group again. SIGTTOU is ignored meanwhile, as shells do (tcsetpgrp(3)).
func reclaimTerminal(fd int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp())
}
