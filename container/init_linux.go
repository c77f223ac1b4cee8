package container

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/opencontainers/runc/libcontainer"
	_ "github.com/opencontainers/runc/libcontainer/nsenter" // the C half of container start-up
	"golang.org/x/sys/unix"
)

// MaybeInit turns this process into one of the container's helpers when
// the arguments say so, and never returns then: "init" is libcontainer's
// own start-up inside the new namespaces; "__pid1" is the container's PID 1.
// main calls it before anything else.
func MaybeInit() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case "init":
		libcontainer.Init()
	case pid1Arg:
		os.Exit(pid1(os.Args[2:]))
	}
}

// pid1 is the container's init: it starts the command in its own process
// group, passes every signal it gets on to that group, reaps every orphan,
// and returns the command's status (128+N for signal N). When it returns,
// the kernel ends whatever else is left in the PID namespace.
func pid1(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "cshell init: no command")
		return 125
	}
	// libcontainer's parent-death signal does not survive its clones into
	// the new namespaces, so the init sets its own: when the thread that
	// started the container ends, the kernel kills PID 1 and with it the
	// whole PID namespace.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "cshell init: set the parent-death signal: %v\n", err)
		return 125
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs)

	attr := &syscall.SysProcAttr{Setpgid: true}
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		// A terminal: the command's group becomes its foreground group.
		attr.Foreground = true
		attr.Ctty = 0
	}
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   attr,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cshell: cannot run %s: %v\n", argv[0], err)
		return 127
	}
	// Reap in a blocking wait: a child's end is seen at once, without a
	// round trip through the runtime's signal handling.
	done := make(chan int, 1)
	go func() { done <- reapUntil(pid) }()
	for {
		select {
		case code := <-done:
			return code
		case sig := <-sigs:
			switch s := sig.(syscall.Signal); s {
			case unix.SIGCHLD, unix.SIGURG, unix.SIGTTOU, unix.SIGTTIN, unix.SIGPIPE:
				// Children are reaped below; SIGURG is the Go runtime's own;
				// the others concern only the init.
			default:
				_ = unix.Kill(-pid, s)
			}
		}
	}
}

// reapUntil reaps every child, orphans included, until the command has
// ended, and returns its status (128+N for signal N).
func reapUntil(cmdPid int) int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 125 // no children left at all: cannot happen before the command ends
		}
		if pid != cmdPid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
