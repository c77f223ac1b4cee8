package netrelay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// batch is how many sockets one request to the factory brings: a new
// relayed connection usually takes a socket made ahead of time, with no
// round trip to the shell.
const batch = 16

// answerTimeout bounds the wait for the init's answer.
const answerTimeout = 2 * time.Second

var errNoAnswer = fmt.Errorf("the shell's init did not answer a request for sockets within %v (is the shell stopped?)", answerTimeout)

// Factory asks a shell's init (over a unix socket, fd 3 inside) for
// sockets made inside the shell's network namespace.
type Factory struct {
	mu   sync.Mutex
	sock *os.File
	pool map[byte][]int // kind ('4', '6': TCP; 'u', 'v': UDP) -> spare sockets
	late int            // requests given up on whose answer has not come
}

// NewFactory returns a factory talking over sock, one end of a socketpair
// whose other end is the init's fd 3.
func NewFactory(sock *os.File) *Factory {
	return &Factory{sock: sock, pool: map[byte][]int{}}
}

// socket returns a new unconnected TCP socket of family made inside.
func (f *Factory) socket(family int) (int, error) {
	if family == unix.AF_INET6 {
		return f.get('6', batch)
	}
	return f.get('4', batch)
}

// get returns a socket of a kind, asking for n at a time.
func (f *Factory) get(kind byte, n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sock == nil {
		return -1, net.ErrClosed
	}
	if len(f.pool[kind]) == 0 {
		fds, err := f.request(kind, n)
		if err != nil {
			return -1, err
		}
		f.pool[kind] = fds
	}
	p := f.pool[kind]
	fd := p[len(p)-1]
	f.pool[kind] = p[:len(p)-1]
	return fd, nil
}

// request asks for n sockets of a kind; call with f.mu held.
func (f *Factory) request(code byte, n int) ([]int, error) {
	fd := int(f.sock.Fd())
	// A stopped or frozen shell must not stall the relay loop for good:
	// a request waits so long, and its answer, when it comes, is dropped.
	for f.late > 0 {
		if !readable(fd, answerTimeout) {
			return nil, errNoAnswer
		}
		fds, _ := receive(fd, batch)
		for _, s := range fds {
			unix.Close(s)
		}
		f.late--
	}
	if _, err := unix.Write(fd, []byte{code, byte(n)}); err != nil {
		return nil, fmt.Errorf("ask the shell for sockets: %w", err)
	}
	if !readable(fd, answerTimeout) {
		f.late++
		return nil, errNoAnswer
	}
	return receive(fd, n)
}

// receive reads the init's answer to a request for up to n sockets.
func receive(fd, n int) ([]int, error) {
	status := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(n*4))
	_, oobn, _, _, err := unix.Recvmsg(fd, status, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("receive sockets from the shell: %w", err)
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if status[0] != 0 || len(fds) == 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		if status[0] != 0 {
			return nil, fmt.Errorf("the shell could not make sockets: %w", unix.Errno(status[0]))
		}
		return nil, errors.New("the shell's init sent no sockets")
	}
	return fds, nil
}

// readable waits until fd has something to read, for at most d.
func readable(fd int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left < 0 {
			return false
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue // the runtime's signals interrupt it
		}
		return err == nil && n > 0
	}
}

func family(a netip.Addr) int {
	if a.Is4() {
		return unix.AF_INET
	}
	return unix.AF_INET6
}

func sockaddr(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// Dial connects to ap inside the shell's namespace.
func (f *Factory) Dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	fd, err := f.socket(family(ap.Addr()))
	if err != nil {
		return nil, err
	}
	err = unix.Connect(fd, sockaddr(ap)) // the init makes sockets non-blocking
	inProgress := err == unix.EINPROGRESS
	if err != nil && !inProgress {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: os.NewSyscallError("connect", err)}
	}
	file := os.NewFile(uintptr(fd), "relay")
	c, err := net.FileConn(file) // a duplicate in the runtime's poller
	file.Close()
	if err != nil {
		return nil, err
	}
	if inProgress {
		if err := awaitConnect(ctx, c); err != nil {
			c.Close()
			return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
		}
	}
	return c, nil
}

// awaitConnect waits until a non-blocking connect has finished.
func awaitConnect(ctx context.Context, c net.Conn) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	_ = c.SetWriteDeadline(deadline)
	defer c.SetWriteDeadline(time.Time{})
	rc, err := c.(interface {
		SyscallConn() (syscall.RawConn, error)
	}).SyscallConn()
	if err != nil {
		return err
	}
	var soErr error
	werr := rc.Write(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, _ := unix.Poll(fds, 0); n == 0 {
			return false // not yet: wait for the poller
		}
		v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			soErr = err
		} else if v != 0 {
			soErr = unix.Errno(v)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return soErr
}

// Listen listens on ap inside the shell's namespace.
func (f *Factory) Listen(ap netip.AddrPort) (net.Listener, error) {
	fd, err := f.socket(family(ap.Addr()))
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Bind(fd, sockaddr(ap)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on %s inside the shell: %w", ap, err)
	}
	if err := unix.Listen(fd, 512); err != nil {
		unix.Close(fd)
		return nil, err
	}
	file := os.NewFile(uintptr(fd), "relay-listener")
	defer file.Close()
	return net.FileListener(file)
}

// ListenUDP binds a UDP socket on ap inside the shell's namespace.
func (f *Factory) ListenUDP(ap netip.AddrPort) (*net.UDPConn, error) {
	kind := byte('u')
	if !ap.Addr().Is4() {
		kind = 'v'
	}
	fd, err := f.get(kind, 1)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, sockaddr(ap)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on %s (UDP) inside the shell: %w", ap, err)
	}
	file := os.NewFile(uintptr(fd), "udp")
	defer file.Close()
	c, err := net.FilePacketConn(file)
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

// Start tells the init to start the command: the listeners the shell must
// find are in place. Until then the init only makes sockets.
func (f *Factory) Start() error {
	_, err := f.start('g')
	return err
}

// Command gives a held init (container.Spec.Held) its command: the
// working directory inside, the words to run, and the three streams,
// which it takes as its own 0, 1 and 2. Once, before Start or
// StartEgress.
func (f *Factory) Command(dir string, argv []string, stdin, stdout, stderr *os.File) error {
	var payload []byte
	for _, w := range append([]string{dir}, argv...) {
		if strings.IndexByte(w, 0) >= 0 {
			return fmt.Errorf("give the shell its command: a NUL byte in %q", w)
		}
		payload = append(append(payload, w...), 0)
	}
	if len(payload) > maxCommand {
		return fmt.Errorf("give the shell its command: %d bytes, more than the %d the init takes", len(payload), maxCommand)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sock == nil {
		return net.ErrClosed
	}
	if f.late > 0 {
		return fmt.Errorf("give the shell its command: %w", errNoAnswer) // its answers would be out of step
	}
	fd := int(f.sock.Fd())
	head := []byte{'c', 0, 0, 0, 0, 0}
	binary.NativeEndian.PutUint32(head[2:], uint32(len(payload)))
	rights := unix.UnixRights(int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd()))
	if err := unix.Sendmsg(fd, head[:2], rights, nil, 0); err != nil {
		return fmt.Errorf("give the shell its command: %w", err)
	}
	for _, b := range [][]byte{head[2:], payload} {
		for len(b) > 0 {
			n, err := unix.Write(fd, b)
			if err != nil {
				return fmt.Errorf("give the shell its command: %w", err)
			}
			b = b[n:]
		}
	}
	if !readable(fd, answerTimeout) {
		f.late++
		return fmt.Errorf("give the shell its command: %w", errNoAnswer)
	}
	status := make([]byte, 1)
	if n, err := unix.Read(fd, status); err != nil || n != 1 {
		return fmt.Errorf("give the shell its command: the shell's init did not answer (%v)", err)
	}
	if status[0] != 0 {
		return fmt.Errorf("give the shell its command: %w", unix.Errno(status[0]))
	}
	return nil
}

// maxCommand bounds a held init's command (pid1_linux.c's MAX_COMMAND).
const maxCommand = 8 << 20

// StartEgress starts the command as Start does, once the init has put
// the syscall filter on with the egress's calls (outbound connects, new
// user namespaces) handed over; it returns their listener, which cshell
// answers from then on (nil on a kernel without user notification: the
// filter refuses by itself, and nothing is handed over).
func (f *Factory) StartEgress() (*os.File, error) {
	return f.start('G')
}

func (f *Factory) start(code byte) (*os.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sock == nil {
		return nil, net.ErrClosed
	}
	fd := int(f.sock.Fd())
	if _, err := unix.Write(fd, []byte{code, 0}); err != nil {
		return nil, fmt.Errorf("start the command: %w", err)
	}
	if !readable(fd, answerTimeout) {
		return nil, fmt.Errorf("start the command: %w", errNoAnswer)
	}
	status := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, status, oob, unix.MSG_CMSG_CLOEXEC)
	var fds []int
	if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
		for i := range msgs {
			if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if err != nil || n != 1 || status[0] != 0 || len(fds) > 1 {
		for _, x := range fds {
			unix.Close(x)
		}
		if err == nil && n == 1 && status[0] != 0 {
			err = unix.Errno(status[0])
		}
		return nil, fmt.Errorf("start the command: the shell's init did not confirm (%v)", err)
	}
	if len(fds) == 0 {
		return nil, nil
	}
	return os.NewFile(uintptr(fds[0]), "seccomp-listener"), nil
}

// Close returns the spare sockets and hangs up on the init.
func (f *Factory) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fds := range f.pool {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	f.pool = map[byte][]int{}
	if f.sock == nil {
		return nil
	}
	err := f.sock.Close()
	f.sock = nil
	return err
}
