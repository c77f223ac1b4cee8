package netrelay

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Egress makes a shell's outbound TCP connections for programs that dial
// sockets themselves (no proxy variables). The shell's network namespace
// has no route out; a connect to an outside address is handed over by the
// syscall filter (container.ServeCalls), and Connect makes it: the
// caller's own socket is connected to the egress's listener on the
// shell's loopback, and the egress carries the bytes to the destination it
// dialed on this machine. So the shell only ever holds sockets of its own
// namespace, and a refused destination fails at once, before a byte
// moves.
//
// The limit that remains: the caller's getpeername names the egress
// (127.0.0.1 or ::1, its port), not the destination.
type Egress struct {
	// Factory makes the listeners inside (on 127.0.0.1 and ::1, ports the
	// kernel picks: nothing in the shell dials them by itself).
	Factory *Factory
	// Decide says whether dest may be reached and by which name (the name
	// behind an address of the shell's resolver, else the address); it
	// may wait (for a grant). It records its refusals itself.
	Decide func(ctx context.Context, dest netip.AddrPort) (host string, ok bool)
	// Dial connects to host:port on this machine.
	Dial func(ctx context.Context, host string, port int) (net.Conn, error)
	// DNS is where a UDP socket connected to port 53 is sent instead (the
	// shell's resolver). Any other UDP socket is connected to a sink on
	// the shell's loopback, which drops what it is sent and tells
	// UDPRefused of it (a connect alone sends nothing: resolver libraries
	// connect UDP sockets only to sort addresses).
	DNS        netip.AddrPort
	UDPRefused func(dest netip.AddrPort)
	// DialTimeout bounds a dial (default 30 s).
	DialTimeout time.Duration
	// Max bounds the connections it carries or makes at once
	// (shells.maxConnections; 0: no bound): one past it is refused
	// (ECONNREFUSED) and told to OverMax.
	Max     int
	OverMax func(dest netip.AddrPort, open int)

	ctx      context.Context
	mu       sync.Mutex
	flows    map[netip.AddrPort]*pending       // by the caller's own address
	udp      map[netip.AddrPort]netip.AddrPort // the sink's callers: own address -> destination
	port4    uint16
	v6Once   sync.Once
	port6    uint16 // 0: no ::1 listener (a namespace without IPv6)
	sinkOnce [2]sync.Once
	sinks    [2]netip.AddrPort // IPv4, IPv6
	splicer  *Splicer
	open     int // connections made or carried now (under mu)
}

// take counts a connection in, unless Max are open; done counts one out.
func (e *Egress) take() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.Max > 0 && e.open >= e.Max {
		return false
	}
	e.open++
	return true
}

func (e *Egress) done() {
	e.mu.Lock()
	e.open--
	e.mu.Unlock()
}

// pending is a connection on its way: the caller's socket connects to the
// egress, which then carries it to host:port (over up, when the dial came
// first).
type pending struct {
	host string
	port int
	up   net.Conn
	at   time.Time
}

// flowTimeout drops a flow whose connection never arrived.
const flowTimeout = 30 * time.Second

// Serve listens inside and carries each connection until ctx ends. The
// ::1 listener and the UDP sinks are made when first needed: each costs a
// request to the shell's init, and a shell's start waits for them.
func (e *Egress) Serve(ctx context.Context) error {
	if e.DialTimeout == 0 {
		e.DialTimeout = 30 * time.Second
	}
	e.ctx = ctx
	e.flows = map[netip.AddrPort]*pending{}
	e.udp = map[netip.AddrPort]netip.AddrPort{}
	l4, err := e.Factory.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0))
	if err != nil {
		return err
	}
	e.port4 = l4.Addr().(*net.TCPAddr).AddrPort().Port()
	if e.splicer, err = NewSplicer(15 * time.Minute); err != nil {
		l4.Close()
		return err
	}
	e.serveListener(l4)
	context.AfterFunc(ctx, func() {
		e.splicer.Close()
		e.mu.Lock()
		for k, f := range e.flows {
			if f.up != nil {
				f.up.Close()
			}
			delete(e.flows, k)
		}
		e.mu.Unlock()
	})
	return nil
}

func (e *Egress) serveListener(l net.Listener) {
	go acceptEach(e.ctx, l, func(c net.Conn) { e.carry(e.ctx, c) })
}

// v6Port is the ::1 listener's port, made on first use; 0 in a namespace
// without IPv6.
func (e *Egress) v6Port() uint16 {
	e.v6Once.Do(func() {
		if l6, err := e.Factory.Listen(netip.AddrPortFrom(netip.IPv6Loopback(), 0)); err == nil {
			e.port6 = l6.Addr().(*net.TCPAddr).AddrPort().Port()
			e.serveListener(l6)
		}
	})
	return e.port6
}

// sinkAddr is the UDP sink of a family, made on first use (invalid when
// it cannot be).
func (e *Egress) sinkAddr(v6 bool) netip.AddrPort {
	i, a := 0, netip.MustParseAddr("127.0.0.1")
	if v6 {
		i, a = 1, netip.IPv6Loopback()
	}
	e.sinkOnce[i].Do(func() {
		c, err := e.Factory.ListenUDP(netip.AddrPortFrom(a, 0))
		if err != nil {
			return
		}
		e.sinks[i] = c.LocalAddr().(*net.UDPAddr).AddrPort()
		go e.sink(e.ctx, c)
	})
	return e.sinks[i]
}

// sink drops the datagrams sent to it, telling of each caller's
// destination.
func (e *Egress) sink(ctx context.Context, c *net.UDPConn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	buf := make([]byte, 2048)
	for {
		_, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		e.mu.Lock()
		dest, ok := e.udp[from]
		e.mu.Unlock()
		if ok && e.UDPRefused != nil {
			e.UDPRefused(dest)
		}
	}
}

// carry joins a connection from inside with its destination.
func (e *Egress) carry(ctx context.Context, c net.Conn) {
	key := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	key = netip.AddrPortFrom(key.Addr().Unmap(), key.Port())
	e.mu.Lock()
	f := e.flows[key]
	delete(e.flows, key)
	e.mu.Unlock()
	if f == nil { // not one the egress connected: someone else's
		c.Close()
		return
	}
	defer e.done() // counted in by Connect
	up := f.up
	if up == nil {
		dctx, cancel := context.WithTimeout(ctx, e.DialTimeout)
		var err error
		up, err = e.Dial(dctx, f.host, f.port)
		cancel()
		if err != nil {
			reset(c) // a non-blocking caller learns it here
			return
		}
	}
	<-e.splicer.Carry(c, up)
}

// reset closes c with a reset rather than an orderly end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// Connect makes the connect of a caller's socket (a duplicate of it) to
// dest; it returns 0 or the errno the caller's connect fails with
// (EINPROGRESS for a non-blocking socket on its way).
func (e *Egress) Connect(ctx context.Context, sock *os.File, dest netip.AddrPort) int {
	defer sock.Close()
	fd := int(sock.Fd())
	dest = netip.AddrPortFrom(dest.Addr().Unmap(), dest.Port())
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return int(unix.ENOTSOCK)
	}
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return int(unix.ENOTSOCK)
	}
	switch typ {
	case unix.SOCK_DGRAM:
		if dest.Port() == 53 && e.DNS.IsValid() {
			return errnoOf(unix.Connect(fd, e.sockaddrFor(domain, e.DNS)))
		}
		return e.toSink(fd, domain, dest)
	case unix.SOCK_STREAM:
	default:
		return int(unix.ENETUNREACH) // no route for it either
	}
	host, ok := e.Decide(ctx, dest)
	if !ok {
		return int(unix.ECONNREFUSED)
	}
	if !e.take() {
		if e.OverMax != nil {
			e.OverMax(dest, e.Max)
		}
		return int(unix.ECONNREFUSED)
	}
	counted := true
	defer func() {
		if counted {
			e.done() // the flow never became a connection
		}
	}()
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return int(unix.EBADF)
	}
	f := &pending{host: host, port: int(dest.Port()), at: time.Now()}
	if fl&unix.O_NONBLOCK == 0 {
		// A blocking caller waits for the destination, and hears how it
		// went, as from its own connect.
		dctx, cancel := context.WithTimeout(ctx, e.DialTimeout)
		f.up, err = e.Dial(dctx, host, int(dest.Port()))
		cancel()
		if err != nil {
			return dialErrno(err)
		}
	}
	// The caller's socket gets a loopback address of its own first, so
	// that the egress knows it when it arrives.
	local, err := boundAddr(fd, domain, dest.Addr().Is4())
	if err != nil {
		if f.up != nil {
			f.up.Close()
		}
		return errnoOf(err)
	}
	e.mu.Lock()
	e.gc()
	e.flows[local] = f
	e.mu.Unlock()
	target := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), e.port4)
	if domain == unix.AF_INET6 && !local.Addr().Is4() {
		if p := e.v6Port(); p != 0 {
			target = netip.AddrPortFrom(netip.IPv6Loopback(), p)
		}
	}
	err = unix.Connect(fd, e.sockaddrFor(domain, target))
	if err != nil && err != unix.EINPROGRESS {
		e.mu.Lock()
		delete(e.flows, local)
		e.mu.Unlock()
		if f.up != nil {
			f.up.Close()
		}
		return errnoOf(err)
	}
	counted = false // carry counts it out, or gc when it never comes
	return errnoOf(err)
}

// toSink connects a UDP socket to the sink, remembering where it meant
// to send.
func (e *Egress) toSink(fd, domain int, dest netip.AddrPort) int {
	local, err := boundAddr(fd, domain, dest.Addr().Is4())
	if err != nil {
		return errnoOf(err)
	}
	target := e.sinkAddr(false)
	if domain == unix.AF_INET6 && !local.Addr().Is4() {
		if t := e.sinkAddr(true); t.IsValid() {
			target = t
		}
	}
	if !target.IsValid() {
		return int(unix.ENETUNREACH)
	}
	e.mu.Lock()
	if len(e.udp) > 4096 { // sockets long closed: forget them, stay bounded
		clear(e.udp)
	}
	e.udp[local] = dest
	e.mu.Unlock()
	return errnoOf(unix.Connect(fd, e.sockaddrFor(domain, target)))
}

// gc drops flows whose connection never came; call with e.mu held.
func (e *Egress) gc() {
	if len(e.flows) < 64 {
		return
	}
	for k, f := range e.flows {
		if time.Since(f.at) > flowTimeout {
			if f.up != nil {
				f.up.Close()
			}
			delete(e.flows, k)
			e.open--
		}
	}
}

// sockaddrFor is ap for a socket of domain: an IPv4 address is written
// IPv4-mapped for an IPv6 socket.
func (e *Egress) sockaddrFor(domain int, ap netip.AddrPort) unix.Sockaddr {
	if domain == unix.AF_INET6 {
		return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
}

// boundAddr returns the socket's own address, binding it to a loopback
// address first when it has none: of the destination's family (an IPv6
// socket bound for an IPv4 destination gets ::ffff:127.0.0.1, as the
// kernel would give it). IPv4-mapped addresses come unmapped.
func boundAddr(fd, domain int, v4 bool) (netip.AddrPort, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if ap := addrOf(sa); ap.Port() != 0 {
		if ap.Addr().IsUnspecified() { // bound to a port only
			ap = netip.AddrPortFrom(loopbackFor(domain, ap.Addr().Is4()), ap.Port())
		}
		return ap, nil
	}
	var bind unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if domain == unix.AF_INET6 {
		bind = &unix.SockaddrInet6{Addr: netip.IPv6Loopback().As16()}
		if v4 {
			bind = &unix.SockaddrInet6{Addr: netip.AddrFrom4([4]byte{127, 0, 0, 1}).As16()}
		}
		if err := unix.Bind(fd, bind); err != nil {
			// No IPv6 loopback, or a socket for IPv4-mapped addresses only.
			bind = &unix.SockaddrInet6{Addr: netip.AddrFrom4([4]byte{127, 0, 0, 1}).As16()}
			if err := unix.Bind(fd, bind); err != nil {
				return netip.AddrPort{}, err
			}
		}
	} else if err := unix.Bind(fd, bind); err != nil {
		return netip.AddrPort{}, err
	}
	if sa, err = unix.Getsockname(fd); err != nil {
		return netip.AddrPort{}, err
	}
	return addrOf(sa), nil
}

func loopbackFor(domain int, v4 bool) netip.Addr {
	if domain == unix.AF_INET6 && !v4 {
		return netip.IPv6Loopback()
	}
	return netip.MustParseAddr("127.0.0.1")
}

func addrOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

func errnoOf(err error) int {
	if err == nil {
		return 0
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return int(unix.EIO)
}

// dialErrno is the errno a caller's own connect would have failed with.
func dialErrno(err error) int {
	var en syscall.Errno
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		return int(unix.ECONNREFUSED)
	case errors.As(err, &en):
		return int(en)
	case errors.Is(err, context.DeadlineExceeded), os.IsTimeout(err):
		return int(unix.ETIMEDOUT)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return int(unix.EHOSTUNREACH)
	}
	return int(unix.ECONNREFUSED)
}
