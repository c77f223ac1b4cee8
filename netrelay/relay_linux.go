package netrelay

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	pipeSize   = 1 << 20 // what Go's own splicing asks for
	sparePipes = 16      // empty pipes kept for the next burst

	// connEvents is what the loop watches on a relayed socket, edge-triggered.
	connEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET
)

// HostTarget connects to addrs in this process's own network namespace.
func HostTarget(addrs ...netip.AddrPort) Target {
	return Target{Socket: hostSocket, Addrs: addrs}
}

func hostSocket(family int) (int, error) {
	return unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// Target connects to addrs inside the shell's network namespace, with
// sockets the shell's init makes.
func (f *Factory) Target(addrs ...netip.AddrPort) Target {
	return Target{Socket: f.socket, Addrs: addrs}
}

// Relay accepts on l and relays each connection to t, until ctx ends; then
// it closes l and every connection it carries, and returns. A connection
// that no address of t accepts (nothing listens there yet) is closed at
// once: the client sees EOF. A side that ends its writing is passed on as
// a half-close; an error on either side ends both.
//
// One goroutine does it all with epoll, and the bytes move by splice
// through pipes without entering the process: a relayed connection costs
// no goroutine, no buffer, and an idle one no pipe.
func Relay(ctx context.Context, l net.Listener, t Target) {
	r, err := newLoop(0)
	if err == nil {
		err = r.listen(l, t)
	}
	l.Close() // the loop has its own descriptor of the socket
	if err != nil {
		if r != nil {
			r.close()
		}
		return
	}
	stop := context.AfterFunc(ctx, r.stop)
	defer stop()
	r.run()
}

// Splicer carries pairs of connected sockets, each byte from one to the
// other, in one epoll loop like Relay's.
type Splicer struct{ r *relay }

// NewSplicer starts a splicer whose pairs end after idle without a byte
// moved (never when idle is 0).
func NewSplicer(idle time.Duration) (*Splicer, error) {
	r, err := newLoop(idle)
	if err != nil {
		return nil, err
	}
	go r.run()
	return &Splicer{r: r}, nil
}

// Carry moves bytes between a and b until both directions end, an error
// or the idle limit ends them, or the splicer closes; the returned
// channel closes then. a and b belong to the splicer from the call on.
func (s *Splicer) Carry(a, b net.Conn) <-chan struct{} {
	fa, errA := dupSocket(a)
	fb, errB := dupSocket(b)
	c := newRelayed(fa, fb)
	c.done = make(chan struct{})
	a.Close()
	b.Close()
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if errA != nil || errB != nil || r.stopping {
		for _, fd := range []int{c.front, c.back} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		close(c.done)
		return c.done
	}
	r.adopted = append(r.adopted, c)
	r.poke()
	return c.done
}

// Close ends every pair and the loop.
func (s *Splicer) Close() {
	s.r.stop()
	<-s.r.ended
}

// dupSocket returns a descriptor of its own of c's socket (a connection
// or a listener).
func dupSocket(c any) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, errors.New("relay: not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return fd, derr
}

type relay struct {
	ep, lfd, wake int      // epoll, the listening socket (-1: none), an eventfd
	epf           *os.File // ep, in the runtime's poller
	tick          int      // a timerfd: idle limits and connect deadlines
	ticking       bool     // tick is armed
	idle          time.Duration
	t             Target
	active        int              // relayed connections, against t.Max
	conns         map[int]*relayed // by both descriptors
	pipes         [][2]int         // spare empty pipes
	closing       []int            // sockets to close once the current batch of events is done
	ended         chan struct{}    // closed when the loop has closed everything

	spin spinner // how the loop waits right after work

	mu       sync.Mutex // guards what other goroutines hand in, and the eventfd
	adopted  []*relayed
	stopping bool
}

// relayed is one relayed connection.
type relayed struct {
	front, back int              // the accepted socket; the far one (-1 until made)
	addrs       []netip.AddrPort // still to try while connecting
	connecting  bool
	since       time.Time     // when the current connect began
	up, down    flow          // front to back, back to front
	last        time.Time     // when it last moved (with an idle limit)
	done        chan struct{} // closed when it ends (a carried pair)
	counted     bool          // accepted by Relay: counts against Target.Max
}

// flow is one direction of a connection.
type flow struct {
	pipe      [2]int // read and write end; -1 when it holds none
	held      int    // bytes in the pipe
	eof, shut bool   // the source ended; that was passed on
}

var noPipe = [2]int{-1, -1}

func newRelayed(front, back int) *relayed {
	c := &relayed{front: front, back: back}
	c.up.pipe, c.down.pipe = noPipe, noPipe
	return c
}

func newLoop(idle time.Duration) (*relay, error) {
	r := &relay{ep: -1, lfd: -1, wake: -1, tick: -1, idle: idle, conns: map[int]*relayed{}, ended: make(chan struct{})}
	var err error
	if r.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err == nil {
		if err = unix.SetNonblock(r.ep, true); err == nil {
			r.epf = os.NewFile(uintptr(r.ep), "relay-epoll") // non-blocking: polled
		}
	}
	if err == nil {
		r.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	}
	if err == nil {
		err = r.watch(r.wake, unix.EPOLLIN)
	}
	if err == nil {
		r.tick, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	}
	if err == nil {
		err = r.watch(r.tick, unix.EPOLLIN)
	}
	if err == nil && idle > 0 {
		err = r.arm(min(idle/4, 30*time.Second))
	}
	if err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// listen makes the loop accept on its own descriptor of l's socket and
// relay to t.
func (r *relay) listen(l net.Listener, t Target) error {
	fd, err := dupSocket(l)
	if err != nil {
		return err
	}
	r.lfd, r.t = fd, t
	if err := unix.SetNonblock(r.lfd, true); err != nil {
		return err
	}
	return r.watch(r.lfd, unix.EPOLLIN) // level-triggered: a burst is taken in turns
}

// poke wakes the loop; call with r.mu held.
func (r *relay) poke() {
	one := [8]byte{1}
	_, _ = unix.Write(r.wake, one[:])
}

// stop ends the loop: every connection closes, and so does the listener.
func (r *relay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopping {
		r.stopping = true
		r.poke()
	}
}

// connectTimeout bounds a connect to the target (as Factory.Dial's); a
// variable for the tests.
var connectTimeout = 10 * time.Second

// arm makes the timer tick every interval (0: stop).
func (r *relay) arm(every time.Duration) error {
	ts := unix.NsecToTimespec(int64(every))
	r.ticking = every > 0
	return unix.TimerfdSettime(r.tick, 0, &unix.ItimerSpec{Interval: ts, Value: ts}, nil)
}

// closeLater closes a socket once the current batch of events is handled,
// so that its number cannot be reused (by accept or dial) while an event of
// the batch may still name it.
func (r *relay) closeLater(fd int) { r.closing = append(r.closing, fd) }

func (r *relay) flushCloses() {
	for _, fd := range r.closing {
		unix.Close(fd) // closing also takes it out of the epoll set
	}
	r.closing = r.closing[:0]
}

func (r *relay) watch(fd int, events uint32) error {
	return unix.EpollCtl(r.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: events, Fd: int32(fd)})
}

// run handles events until stop, then closes everything. It never blocks
// in epoll_wait itself: the runtime's poller watches the epoll descriptor
// and wakes the loop when it has events, so that no thread sits in a
// system call (which would keep the runtime's monitor polling every few
// microseconds).
func (r *relay) run() {
	defer r.close()
	events := make([]unix.EpollEvent, 64)
	rc, err := r.epf.SyscallConn()
	if err != nil {
		return
	}
	busy := false // the last poll found events
	_ = rc.Read(func(uintptr) bool {
		for {
			n, err := epollPoll(r.ep, events)
			if n == 0 && err == nil && busy {
				n, err = r.spin.poll(r.ep, events)
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return true
			}
			if busy = n > 0; !busy {
				return false // wait for the poller
			}
			for _, ev := range events[:n] {
				switch fd := int(ev.Fd); fd {
				case r.wake:
					if r.woken() {
						return true
					}
				case r.lfd:
					r.accept()
				case r.tick:
					r.ticked()
				default:
					if c := r.conns[fd]; c != nil { // nil: ended earlier in this batch
						r.step(c, fd, ev.Events)
					}
				}
			}
			r.flushCloses()
		}
	})
}

// spinFor is how long the loop keeps polling for the next event right after
// it has moved bytes, before it goes to sleep in the runtime's poller. A
// relayed request and its answer are each a hop more than a direct one, and
// on a machine with few cores a hop through sleep and wake-up costs more
// than the request itself (keep-alive requests through the relay went from
// 0.55x to 0.95x of loopback with 50 µs here; hack/bench/relay.sh). The same
// trade as the kernel's busy polling (net.core.busy_read, socket(7)).
const spinFor = 50 * time.Microsecond

// spinner decides whether the loop polls on before it sleeps. A poll that
// ran out without an event (a peer slower than spinFor, such as a server
// that takes milliseconds to answer) makes the next ones be skipped, 1, 3,
// 7 ... up to 63 in a row, so that a loop whose waits are long spends next
// to nothing on them; one that catches an event starts over. On a single
// CPU there is nothing to wait for while spinning: it never spins.
type spinner struct {
	misses, skip int
}

var spinCPUs = runtime.NumCPU()

// poll polls ep until it has events or spinFor has passed; 0 events when
// it has not polled or nothing came.
func (s *spinner) poll(ep int, events []unix.EpollEvent) (int, error) {
	if spinCPUs < 2 {
		return 0, nil
	}
	if s.skip > 0 {
		s.skip--
		return 0, nil
	}
	deadline := time.Now().Add(spinFor)
	for time.Now().Before(deadline) {
		n, err := epollPoll(ep, events)
		if n > 0 || err != nil && err != unix.EINTR {
			s.misses = 0
			return n, err
		}
	}
	s.misses = min(s.misses+1, 6)
	s.skip = 1<<s.misses - 1
	return 0, nil
}

// woken takes in the pairs handed over; true when the loop must stop.
func (r *relay) woken() bool {
	var b [8]byte
	_, _ = unix.Read(r.wake, b[:])
	r.mu.Lock()
	adopted, stopping := r.adopted, r.stopping
	r.adopted = nil
	r.mu.Unlock()
	for _, c := range adopted {
		r.conns[c.front], r.conns[c.back] = c, c
		c.last = time.Now()
		if r.watch(c.front, connEvents) != nil || r.watch(c.back, connEvents) != nil {
			r.drop(c)
		}
	}
	return stopping
}

// ticked ends the pairs through which nothing moved for the idle limit,
// and gives up connects past their deadline (trying the next address).
func (r *relay) ticked() {
	var b [8]byte
	_, _ = unix.Read(r.tick, b[:])
	now := time.Now()
	connecting := false
	for fd, c := range r.conns {
		switch {
		case fd != c.front:
		case c.connecting && now.Sub(c.since) >= connectTimeout:
			r.redial(c)
			connecting = connecting || c.connecting
		case c.connecting:
			connecting = true
		case r.idle > 0 && now.Sub(c.last) >= r.idle:
			r.drop(c)
		}
	}
	if !connecting && r.idle == 0 {
		_ = r.arm(0)
	}
}

// accept takes up to a handful of waiting connections and starts to
// connect each to the target.
func (r *relay) accept() {
	for range 16 {
		fd, _, err := unix.Accept4(r.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch {
		case err == unix.EAGAIN:
			return
		case err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		case err != nil:
			// Out of descriptors or memory: the listener stays ready, so
			// let a moment pass rather than spin.
			time.Sleep(10 * time.Millisecond)
			return
		}
		if r.t.Max > 0 && r.active >= r.t.Max {
			// Over the bound: reset at once, so that a flood costs the
			// supervisor no descriptor and the client no wait.
			_ = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
			unix.Close(fd)
			continue
		}
		c := newRelayed(fd, -1)
		c.addrs = r.t.Addrs
		c.counted = true
		r.active++
		r.conns[fd] = c
		if !r.dial(c) || r.watch(fd, connEvents) != nil {
			r.drop(c)
		}
	}
}

// dial starts to connect c to the next address that takes a connect;
// false when none is left.
func (r *relay) dial(c *relayed) bool {
	for len(c.addrs) > 0 {
		ap := c.addrs[0]
		c.addrs = c.addrs[1:]
		fd, err := r.t.Socket(family(ap.Addr()))
		if err != nil {
			continue
		}
		if err := unix.Connect(fd, sockaddr(ap)); err != nil && err != unix.EINPROGRESS {
			unix.Close(fd)
			continue
		}
		// Connected or not yet: the first event on it tells.
		if err := r.watch(fd, connEvents); err != nil {
			unix.Close(fd)
			continue
		}
		c.back, c.connecting, c.since = fd, true, time.Now()
		r.conns[fd] = c
		if !r.ticking {
			_ = r.arm(time.Second)
		}
		return true
	}
	return false
}

// redial gives up c's current connect and starts the next, or ends c.
func (r *relay) redial(c *relayed) {
	delete(r.conns, c.back)
	r.closeLater(c.back)
	c.back = -1
	if !r.dial(c) {
		r.drop(c)
	}
}

// step moves what can move on c after an event on fd: what fd has to
// read, and what waited for fd to take more.
func (r *relay) step(c *relayed, fd int, events uint32) {
	const gone = unix.EPOLLERR | unix.EPOLLHUP
	both := false
	if c.connecting {
		switch {
		case fd != c.back:
			if events&gone != 0 { // the client gave up
				r.drop(c)
			}
			return // its bytes wait in its socket
		case events&gone != 0: // refused: try the next address
			r.redial(c)
			return
		case events&unix.EPOLLOUT == 0:
			return
		}
		c.connecting, both = false, true // the client may have written already
	}
	readable := both || events&(unix.EPOLLIN|unix.EPOLLRDHUP|gone) != 0
	writable := events&unix.EPOLLOUT != 0
	in, out := &c.up, &c.down // what fd sends, what it receives
	src, dst := c.front, c.back
	if fd == c.back {
		in, out = out, in
		src, dst = dst, src
	}
	var err error
	if readable {
		err = r.move(in, src, dst, out.shut)
	}
	if err == nil && (both || writable && out.held > 0) {
		err = r.move(out, dst, src, in.shut)
	}
	if events&gone != 0 {
		// fd is closed or reset: what it sent has been read to its end
		// above, and nothing more can reach it.
		r.end(out)
	}
	if err != nil || (c.up.shut && c.down.shut) {
		r.drop(c)
		return
	}
	if r.idle > 0 {
		c.last = time.Now()
	}
}

// move splices from src through f's pipe to dst until one of them would
// block. The source's end (or a failure to read it) is passed on as a
// half-close of dst, unless closing (the other direction has ended: the
// connection closes next); a destination that fails ends the direction.
// Only a lack of pipes is an error: the connection cannot go on.
func (r *relay) move(f *flow, src, dst int, closing bool) error {
	for {
		if f.held > 0 {
			n, err := splice(f.pipe[0], dst, f.held)
			if err == unix.EAGAIN {
				return nil
			}
			if err != nil { // reset or closed: the other way may go on
				r.end(f)
				return nil
			}
			f.held -= n
			continue
		}
		if f.eof {
			if !f.shut {
				f.shut = true
				if !closing { // when closing, the close sends the FIN
					_ = unix.Shutdown(dst, unix.SHUT_WR)
				}
			}
			r.release(f)
			return nil
		}
		if f.pipe[0] < 0 {
			if err := r.take(f); err != nil {
				return err
			}
		}
		n, err := splice(src, f.pipe[1], pipeSize)
		switch {
		case err == unix.EAGAIN:
			r.release(f) // an idle connection holds no pipe
			return nil
		case err != nil || n == 0:
			f.eof = true
		default:
			f.held += n
		}
	}
}

// end gives up a direction: bytes it holds are dropped.
func (r *relay) end(f *flow) {
	f.eof, f.shut = true, true
	if f.held > 0 {
		closePipe(f.pipe)
		f.pipe, f.held = noPipe, 0
	}
	r.release(f)
}

func closePipe(p [2]int) {
	unix.Close(p[0])
	unix.Close(p[1])
}

// take gives f an empty pipe.
func (r *relay) take(f *flow) error {
	if n := len(r.pipes); n > 0 {
		f.pipe = r.pipes[n-1]
		r.pipes = r.pipes[:n-1]
		return nil
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return err
	}
	_, _ = unix.FcntlInt(uintptr(p[0]), unix.F_SETPIPE_SZ, pipeSize) // best effort
	f.pipe = p
	return nil
}

// release takes f's pipe back if it is empty, keeping a few spare.
func (r *relay) release(f *flow) {
	if f.pipe[0] < 0 || f.held > 0 {
		return
	}
	if len(r.pipes) < sparePipes {
		r.pipes = append(r.pipes, f.pipe)
	} else {
		closePipe(f.pipe)
	}
	f.pipe = noPipe
}

// drop ends c: both sockets close, and its pipes go back or, holding bytes
// that will never be delivered, close.
func (r *relay) drop(c *relayed) {
	for _, fd := range []int{c.front, c.back} {
		if fd >= 0 {
			delete(r.conns, fd)
			r.closeLater(fd)
		}
	}
	c.front, c.back = -1, -1
	if c.counted {
		c.counted = false
		r.active--
	}
	if c.done != nil {
		close(c.done)
		c.done = nil
	}
	r.end(&c.up)
	r.end(&c.down)
}

// close ends every connection and closes the listener (the port is
// shut), then the loop's own descriptors.
func (r *relay) close() {
	for _, c := range r.conns {
		if c.front >= 0 || c.back >= 0 {
			r.drop(c)
		}
	}
	r.flushCloses()
	for _, p := range r.pipes {
		closePipe(p)
	}
	r.pipes = nil
	r.mu.Lock()
	r.stopping = true // no more pokes: the eventfd closes
	adopted := r.adopted
	r.adopted = nil
	for _, fd := range []int{r.lfd, r.wake, r.tick} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	r.lfd, r.wake, r.tick = -1, -1, -1
	r.mu.Unlock()
	for _, c := range adopted { // handed over as the loop ended
		r.drop(c)
	}
	r.flushCloses()
	if r.epf != nil {
		r.epf.Close()
	} else if r.ep >= 0 {
		unix.Close(r.ep)
	}
	r.ep, r.epf = -1, nil
	close(r.ended)
}

// splice moves up to n bytes from in to out without blocking. Every
// descriptor the loop splices is non-blocking, so the call never sleeps
// and is made raw: the runtime's monitor would otherwise take each one for
// a blocking call and hand the processor to another thread, often.
func splice(in, out, n int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(in), 0, uintptr(out), 0, uintptr(n),
		unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// epollPoll returns the events ready now (a timeout of 0: it never sleeps,
// and is made raw like splice).
func epollPoll(ep int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
