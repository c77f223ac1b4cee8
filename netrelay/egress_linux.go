package netrelay

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Egress makes a shell's outbound TCP connections for programs that dial
// sockets themselves (no proxy variables). The shell's network namespace
// sends every connection that would leave it to the egress's listener on
// its own loopback (Port, on 127.0.0.1 and ::1; the kernel's nftables
// rules, made by the container's init); the egress reads where each was
// going from the connection itself (SO_ORIGINAL_DST), decides, dials the
// destination on this machine and carries the bytes. So the shell only
// ever holds sockets of its own namespace, and no connect is looked at
// but those that leave it: a connection inside loopback costs what it
// costs without cshell. A refused or unreachable destination is reset
// before a byte moves; the caller's connect itself has succeeded by then.
type Egress struct {
	// Factory makes the listeners inside.
	Factory *Factory
	// Port is the TCP port the rules send connections to, SinkPort the
	// UDP port they send datagrams to (but DNS's, which go to the
	// resolver).
	Port, SinkPort uint16
	// Decide says whether dest may be reached and by which name (the name
	// behind an address of the shell's resolver, else the address); it
	// may wait (for a grant). It records its refusals itself.
	Decide func(ctx context.Context, dest netip.AddrPort) (host string, ok bool)
	// Dial connects to host:port on this machine.
	Dial func(ctx context.Context, host string, port int) (net.Conn, error)
	// UDPRefused hears of each datagram the sink is sent: from is its
	// sender inside, to the sink's own address. The sink drops them.
	UDPRefused func(from, to netip.AddrPort)
	// DialTimeout bounds a dial (default 30 s).
	DialTimeout time.Duration
	// Max bounds the connections it carries or makes at once
	// (shells.maxConnections; 0: no bound): one past it is reset and told
	// to OverMax.
	Max     int
	OverMax func(dest netip.AddrPort, open int)

	ctx     context.Context
	mu      sync.Mutex
	splicer *Splicer
	open    int // connections made or carried now (under mu)
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

// Serve listens inside and carries each connection until ctx ends. The
// IPv4 listener must be made; the IPv6 ones and the sinks are made when
// the namespace has them.
func (e *Egress) Serve(ctx context.Context) error {
	if e.DialTimeout == 0 {
		e.DialTimeout = 30 * time.Second
	}
	e.ctx = ctx
	var err error
	if e.splicer, err = NewSplicer(15 * time.Minute); err != nil {
		return err
	}
	l4, err := e.Factory.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), e.Port))
	if err != nil {
		e.splicer.Close()
		return err
	}
	go acceptEach(ctx, l4, func(c net.Conn) { e.carry(ctx, c) })
	if l6, err := e.Factory.Listen(netip.AddrPortFrom(netip.IPv6Loopback(), e.Port)); err == nil {
		go acceptEach(ctx, l6, func(c net.Conn) { e.carry(ctx, c) })
	}
	for _, a := range []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()} {
		if c, err := e.Factory.ListenUDP(netip.AddrPortFrom(a, e.SinkPort)); err == nil {
			go e.sink(ctx, c)
		}
	}
	context.AfterFunc(ctx, func() { e.splicer.Close() })
	return nil
}

// sink drops the datagrams sent to it, telling of each.
func (e *Egress) sink(ctx context.Context, c *net.UDPConn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	to := c.LocalAddr().(*net.UDPAddr).AddrPort()
	buf := make([]byte, 2048)
	for {
		_, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if e.UDPRefused != nil {
			e.UDPRefused(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), to)
		}
	}
}

// carry takes one connection from inside to where it was going.
func (e *Egress) carry(ctx context.Context, c net.Conn) {
	dest, err := originalDest(c)
	if err != nil { // not sent here by the rules: someone inside dialed the port
		reset(c)
		return
	}
	host, ok := e.Decide(ctx, dest)
	if !ok {
		reset(c)
		return
	}
	if !e.take() {
		if e.OverMax != nil {
			e.OverMax(dest, e.Max)
		}
		reset(c)
		return
	}
	defer e.done()
	dctx, cancel := context.WithTimeout(ctx, e.DialTimeout)
	up, err := e.Dial(dctx, host, int(dest.Port()))
	cancel()
	if err != nil {
		reset(c)
		return
	}
	<-e.splicer.Carry(c, up)
}

// originalDest is where a connection the rules redirected was going.
func originalDest(c net.Conn) (netip.AddrPort, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return netip.AddrPort{}, errors.New("not TCP")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var dest netip.AddrPort
	var gerr error
	err = rc.Control(func(fd uintptr) {
		var buf [28]byte // a sockaddr_in6 is the longest
		size := uint32(len(buf))
		level := unix.SOL_IP
		if local, ok := c.LocalAddr().(*net.TCPAddr); ok && local.IP.To4() == nil {
			level = unix.SOL_IPV6 // IP6T_SO_ORIGINAL_DST has SO_ORIGINAL_DST's number
		}
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, uintptr(level), unix.SO_ORIGINAL_DST,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
		if e != 0 {
			gerr = e
			return
		}
		var ok bool
		if dest, ok = parseSockaddr(buf[:size]); !ok {
			gerr = errors.New("no address")
		}
	})
	if err == nil {
		err = gerr
	}
	return dest, err
}

// parseSockaddr reads a sockaddr_in or sockaddr_in6 (the family in the
// host's byte order, the port in the network's); IPv4-mapped addresses
// come unmapped.
func parseSockaddr(b []byte) (netip.AddrPort, bool) {
	if len(b) < 4 {
		return netip.AddrPort{}, false
	}
	family := binary.NativeEndian.Uint16(b[0:2])
	port := binary.BigEndian.Uint16(b[2:4])
	switch {
	case family == unix.AF_INET && len(b) >= 8:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port), true
	case family == unix.AF_INET6 && len(b) >= 24:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), port), true
	}
	return netip.AddrPort{}, false
}

// reset closes c with a reset rather than an orderly end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}
