package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/container"
)

// The tests start shells with the container's real PID 1 (pid1_linux.c:
// this test binary, run as "__pid1", as container_linux_test.go does)
// on this machine, without namespaces: it serves the socket factory on
// its fd 3, starts the command at "g" or "G" and tells of refused user
// namespaces on fd 4 as in a container, but the sockets it makes belong
// to this machine's network, so "inside" is this machine's loopback. The
// command is this test binary again, as a helper (helperVar).

// helperVar names the helper's part; its arguments follow the binary.
const helperVar = "CSHELL_SANDBOX_TEST_HELPER"

// resolverVar tells the helper where the shell's resolver listens.
const resolverVar = "CSHELL_SANDBOX_TEST_RESOLVER"

// redirectArg starts a test's shell as a container's init would: the
// egress's rules first, then PID 1 (the rest of the arguments).
const redirectArg = "__test-redirect"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == redirectArg {
		container.MaybePrestage()
		err := syscall.Exec(os.Args[0], append([]string{os.Args[0]}, os.Args[2:]...), os.Environ())
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if part := os.Getenv(helperVar); part != "" {
		os.Exit(helper(part, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper is what a shell runs in these tests; it writes what it saw on
// stdout, a line each.
func helper(part string, args []string) int {
	switch part {
	case "wait": // until killed
		time.Sleep(time.Hour)
	case "dial": // each HOST:PORT, as the command's first act
		for _, a := range args {
			c, err := net.DialTimeout("tcp", a, 10*time.Second)
			if err != nil {
				fmt.Printf("dial %s: %v\n", a, err)
				continue
			}
			c.Close()
			fmt.Printf("dial %s: ok\n", a)
		}
	case "where": // its directory, arguments and what stdin holds
		dir, err := os.Getwd()
		in, _ := io.ReadAll(os.Stdin)
		fmt.Printf("dir %s %v args %q stdin %q\n", dir, err, args, in)
		fmt.Fprintf(os.Stderr, "to stderr\n")
	case "unshare":
		fmt.Printf("unshare: %v\n", syscall.Unshare(syscall.CLONE_NEWUSER))
	case "gated-unshare": // GATE: once the file GATE exists
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(args[0]); err == nil {
				break
			}
		}
		fmt.Printf("unshare: %v\n", syscall.Unshare(syscall.CLONE_NEWUSER))
	case "egress": // NAME PORT [GATE]: resolve NAME by the shell's resolver, talk to it; then a refused address
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, os.Getenv(resolverVar))
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		addrs, err := r.LookupNetIP(ctx, "ip4", args[0])
		if err != nil || len(addrs) == 0 {
			fmt.Printf("resolve %s: %v %v\n", args[0], addrs, err)
			return 1
		}
		fmt.Printf("resolve %s: %v\n", args[0], addrs[0])
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0].String(), args[1]))
		if err != nil {
			fmt.Printf("dial %s: %v\n", args[0], err)
			return 1
		}
		fmt.Fprintf(c, "ping\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		fmt.Printf("reply %q %v\n", line, err)
		// The caller sees where it connected, not the egress.
		fmt.Printf("peer %v\n", c.RemoteAddr())
		// One connection is open: the second is past MaxConnections.
		fmt.Printf("second connection refused: %v\n", resetAtOnce(d.DialContext(ctx, "tcp", net.JoinHostPort(addrs[0].String(), args[1]))))
		c.Close()
		for _, a := range []string{"192.0.2.1:9", "198.19.255.254:80"} { // not allowed; never given out
			fmt.Printf("dial %s: %v\n", a, resetAtOnce(d.DialContext(ctx, "tcp", a)))
		}
		if u, err := net.Dial("udp", "192.0.2.1:9999"); err == nil {
			_, err = u.Write([]byte("x"))
			fmt.Printf("udp: %v\n", err)
			u.Close()
		}
		fmt.Printf("unshare: %v\n", syscall.Unshare(syscall.CLONE_NEWUSER))
		// Loopback's own connections are not tracked: 50 of them leave
		// the table as it was.
		if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
			for range 50 {
				if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
					c.Close()
				}
			}
			l.Close()
			n, err := os.ReadFile("/proc/sys/net/netfilter/nf_conntrack_count")
			fmt.Printf("tracked %s %v\n", strings.TrimSpace(string(n)), err)
		}
		if len(args) > 2 { // GATE: the test looks inside until it exists
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(args[2]); err == nil {
					break
				}
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "no helper part %q\n", part)
		return 2
	}
	return 0
}

// initRunner starts each shell as the real PID 1 running the helper:
// Start(o) with a fakeRunner{iso: container.Container, start: r.start}.
type initRunner struct {
	t    *testing.T
	args []string // the helper's arguments (its part is in Options.Env)
	out  syncBuffer
	// atStart, when set, puts the test between the factory and the init:
	// each request is recorded (requests) and passed on, and atStart runs
	// when the request to start the command ('g', 'G') arrives, before
	// the init gets it.
	atStart func(code byte)
	// noInit starts no process at all: a stubShell, and nothing serves
	// the factory.
	noInit bool

	mu       sync.Mutex
	requests []byte
	shell    *procShell
}

func (r *initRunner) start(s *container.Spec) (container.Shell, error) {
	t := r.t
	if r.noInit {
		return newStubShell(), nil
	}
	args := []string{"__pid1"}
	if s.AllowUserNamespaces {
		args = append(args, "--allow-userns")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--root")
	}
	if s.QuietWrites {
		args = append(args, "--quiet-writes")
	}
	if s.Held {
		args = append(args, "--held") // the command comes with Begin
	} else {
		args = append(append(args, "--", os.Args[0]), r.args...)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = s.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, &r.out, &r.out
	cmd.WaitDelay = 10 * time.Second
	var fd3 *os.File
	if s.Sockets != nil {
		fd3 = s.Sockets
		if r.atStart != nil {
			inner, err := r.interpose(s.Sockets)
			if err != nil {
				return nil, err
			}
			defer inner.Close() // the init has its own copy
			fd3 = inner
		}
	}
	if s.Events != nil {
		if fd3 == nil {
			devnull, err := os.Open(os.DevNull)
			if err != nil {
				return nil, err
			}
			defer devnull.Close()
			fd3 = devnull
		}
		cmd.ExtraFiles = []*os.File{fd3, s.Events}
	} else if fd3 != nil {
		cmd.ExtraFiles = []*os.File{fd3}
	}
	var redirect *os.File
	if s.Redirect {
		// As in a container: a network namespace of its own (in a user
		// namespace that maps this user to root), whose rules the first
		// process sets up (container.MaybePrestage) before it becomes
		// PID 1.
		parent, child, err := container.RulesPair()
		if err != nil {
			return nil, err
		}
		defer child.Close()
		redirect = parent
		for len(cmd.ExtraFiles) < 2 {
			devnull, err := os.Open(os.DevNull)
			if err != nil {
				return nil, err
			}
			defer devnull.Close()
			cmd.ExtraFiles = append(cmd.ExtraFiles, devnull)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, child)
		cmd.Args = append([]string{os.Args[0], redirectArg}, cmd.Args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
		}
	}
	sh, err := startProc(cmd, true)
	if err != nil {
		if redirect != nil {
			redirect.Close()
		}
		return nil, err
	}
	t.Cleanup(func() { sh.Close() })
	if redirect != nil {
		tracker, err := container.PrestageDone(redirect)
		if err != nil {
			sh.Close()
			return nil, err
		}
		if tracker != nil && s.Tracker != nil {
			s.Tracker(tracker)
		}
	}
	r.mu.Lock()
	r.shell = sh
	r.mu.Unlock()
	return sh, nil
}

// sawRequests is what the factory asked, in order.
func (r *initRunner) sawRequests() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.requests)
}

// interpose returns the end of a socketpair to hand to the init in place
// of sockets, and carries each request and its answer (its descriptors
// too) between the two until either side hangs up.
func (r *initRunner) interpose(sockets *os.File) (*os.File, error) {
	outer, err := unix.FcntlInt(sockets.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(outer)
		return nil, err
	}
	done := make(chan struct{})
	r.t.Cleanup(func() {
		// Unblocks the reads of a carrier whose sides are still up.
		_ = unix.Shutdown(outer, unix.SHUT_RDWR)
		_ = unix.Shutdown(pair[0], unix.SHUT_RDWR)
		<-done
		unix.Close(outer)
		unix.Close(pair[0])
	})
	go func() {
		defer close(done)
		defer unix.Shutdown(pair[0], unix.SHUT_RDWR) // the init hears the hang-up
		defer unix.Shutdown(outer, unix.SHUT_RDWR)   // the factory hears the init's end
		for {
			req := make([]byte, 2)
			oob := make([]byte, unix.CmsgSpace(3*4))
			n, oobn, _, _, err := unix.Recvmsg(outer, req, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_WAITALL)
			if n != 2 || err != nil {
				return
			}
			r.mu.Lock()
			r.requests = append(r.requests, req[0])
			r.mu.Unlock()
			if req[0] == 'g' || req[0] == 'G' {
				r.atStart(req[0])
			}
			var in []int
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for i := range msgs {
					if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
						in = append(in, got...)
					}
				}
			}
			var inRights []byte
			if len(in) > 0 {
				inRights = unix.UnixRights(in...)
			}
			err = unix.Sendmsg(pair[0], req, inRights, nil, 0)
			for _, fd := range in {
				unix.Close(fd)
			}
			if err != nil {
				return
			}
			if req[0] == 'c' { // the command: a length, then that many bytes
				head := make([]byte, 4)
				if n, _, err := unix.Recvfrom(outer, head, unix.MSG_WAITALL); n != 4 || err != nil {
					return
				}
				body := make([]byte, binary.NativeEndian.Uint32(head))
				if n, _, err := unix.Recvfrom(outer, body, unix.MSG_WAITALL); n != len(body) || err != nil {
					return
				}
				if _, err := unix.Write(pair[0], append(head, body...)); err != nil {
					return
				}
			}
			status := make([]byte, 1)
			oob = make([]byte, unix.CmsgSpace(64*4))
			n, oobn, _, _, err = unix.Recvmsg(pair[0], status, oob, unix.MSG_CMSG_CLOEXEC)
			if n != 1 || err != nil {
				return
			}
			var fds []int
			if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for i := range msgs {
					if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
						fds = append(fds, got...)
					}
				}
			}
			var rights []byte
			if len(fds) > 0 {
				rights = unix.UnixRights(fds...)
			}
			err = unix.Sendmsg(outer, status, rights, nil, 0)
			for _, fd := range fds {
				unix.Close(fd)
			}
			if err != nil {
				return
			}
		}
	}()
	return os.NewFile(uintptr(pair[1]), "interposed-sockets"), nil
}

// procShell is a shell that is one process of this machine (and, for
// the init, the command's process group below it).
type procShell struct {
	cmd   *exec.Cmd
	done  chan struct{}
	err   error
	mu    sync.Mutex
	calls []string
}

var _ container.Shell = (*procShell)(nil)

// startProc starts cmd from a thread of its own that waits for it and
// then ends: PID 1's parent-death signal follows the thread that started
// it, which must outlive it; and no_new_privs (nnp), which its syscall
// filter needs without CAP_SYS_ADMIN (runc sets it in a container),
// stays on that thread and its child.
func startProc(cmd *exec.Cmd, nnp bool) (*procShell, error) {
	p := &procShell{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if nnp {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				started <- err
				return
			}
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *procShell) record(call string) {
	p.mu.Lock()
	p.calls = append(p.calls, call)
	p.mu.Unlock()
}

func (p *procShell) count(call string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (p *procShell) Pid() int { return p.cmd.Process.Pid }

func (p *procShell) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill ends the process and its children's process groups (outside a
// PID namespace nothing else would end the init's command with it).
func (p *procShell) Kill() error {
	p.record("kill")
	select {
	case <-p.done:
		return nil
	default:
	}
	pid := p.Pid()
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil && c > 0 {
				_ = unix.Kill(-c, unix.SIGKILL)
				_ = unix.Kill(c, unix.SIGKILL)
			}
		}
	}
	return p.cmd.Process.Kill()
}

func (p *procShell) Wait() (container.Exit, error) {
	<-p.done
	ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return container.Exit{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}, nil
	}
	return container.Exit{Code: ws.ExitStatus()}, nil
}

func (p *procShell) Console() *os.File { return nil }

func (p *procShell) Close() error {
	p.record("close")
	_ = p.Kill()
	<-p.done
	return nil
}

// ended reports whether the process has ended (and was waited for).
func (p *procShell) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// resetAtOnce reports whether a connection the egress refuses was reset
// before a byte came: the kernel's rules took it to the egress, which
// reset it at once, so the connect (a non-blocking one that learns of the
// reset when it looks) or the first read fails with ECONNRESET.
func resetAtOnce(c net.Conn, err error) bool {
	if err == nil {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = c.Read(make([]byte, 1))
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		fmt.Printf("a refused connection: %v\n", err)
		return false
	}
	return true
}

// pid is the init's process id on this machine.
func (r *initRunner) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shell.cmd.Process.Pid
}
