package netrelay

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startRelay relays a new loopback listener to addrs until the test ends;
// it returns the listener's address and a func that stops the relay and
// waits until it has returned.
func startRelay(t *testing.T, addrs ...netip.AddrPort) (string, func()) {
	t.Helper()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Relay(ctx, front, HostTarget(addrs...))
		close(done)
	}()
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Relay did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return front.Addr().String(), stop
}

func addrPort(t *testing.T, l net.Listener) netip.AddrPort {
	t.Helper()
	return netip.MustParseAddrPort(l.Addr().String())
}

// closedPort is a loopback port where nothing listens.
func closedPort(t *testing.T) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := addrPort(t, l)
	l.Close()
	return ap
}

func TestRelayHalfCloseAndLargeTransfer(t *testing.T) {
	backend := startServer(t, readAllThenReply)
	front, stop := startRelay(t, addrPort(t, backend))
	echoTransfers(t, front)
	stop()
	if c, err := net.DialTimeout("tcp", front, time.Second); err == nil {
		c.Close()
		t.Error("the listener is still open after Relay returned")
	}
}

func TestRelayTriesTheNextAddress(t *testing.T) {
	backend := startServer(t, readAllThenReply)
	front, _ := startRelay(t, closedPort(t), addrPort(t, backend))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if got, err := io.ReadAll(c); string(got) != "ping" {
		t.Errorf("got %q (%v) through the second address, want ping", got, err)
	}
}

func TestRelayUnreachableClosesClient(t *testing.T) {
	front, _ := startRelay(t, closedPort(t))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectEnd(t, c)
}

func TestRelayBackendResetEndsClient(t *testing.T) {
	backend := startServer(t, func(c net.Conn) {
		c.(*net.TCPConn).SetLinger(0) // close with a reset
		c.Close()
	})
	front, _ := startRelay(t, addrPort(t, backend))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectEnd(t, c)
}

func TestRelayClosesActiveConnections(t *testing.T) {
	hold := startServer(t, func(c net.Conn) { io.Copy(io.Discard, c); c.Close() })
	front, stop := startRelay(t, addrPort(t, hold))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x"))
	time.Sleep(50 * time.Millisecond)
	stop() // the shell ended: its connections end too
	expectEnd(t, c)
}

func TestRelayManyShortConnections(t *testing.T) {
	backend := startServer(t, readAllThenReply)
	front, _ := startRelay(t, addrPort(t, backend))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 25 {
				c, err := net.Dial("tcp", front)
				if err != nil {
					t.Error(err)
					return
				}
				msg := []byte{byte(i), byte(j)}
				c.Write(msg)
				c.(*net.TCPConn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				got, err := io.ReadAll(c)
				c.Close()
				if !bytes.Equal(got, msg) {
					t.Errorf("connection %d/%d: got %v (%v), want %v", i, j, got, err, msg)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestRelayIdleConnectionsHoldNoPipes: an idle connection costs its two
// sockets and nothing more, and an ended one nothing at all.
func TestRelayIdleConnectionsHoldNoPipes(t *testing.T) {
	countFDs := func() int { return openFDs(t, "") }
	// The echo copies through a buffer: Go's own splicing would hold a
	// pipe per connection here and spoil the count.
	echo := startServer(t, func(c net.Conn) {
		io.Copy(struct{ io.Writer }{c}, struct{ io.Reader }{c})
		c.Close()
	})
	front, _ := startRelay(t, addrPort(t, echo))
	time.Sleep(50 * time.Millisecond)
	before := countFDs()
	const n = 50
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", front)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("ping"))
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Per connection: the client's socket, the accepted one, the relay's
	// far one and the server's; the relay's spare pipes come on top.
	limit := before + 4*n + 2*sparePipes + 4
	if got := countFDs(); got > limit {
		t.Errorf("%d descriptors with %d idle connections (%d before): pipes are held", got, n, before)
	}
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	for countFDs() > before+2*sparePipes && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := countFDs(); got > before+2*sparePipes {
		t.Errorf("%d descriptors after every connection ended, %d before", got, before)
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestSplicerCarriesAndCloses(t *testing.T) {
	sp, err := NewSplicer(0)
	if err != nil {
		t.Fatal(err)
	}
	client, a := tcpPair(t) // client <-> a ==splicer== b <-> server
	b, server := tcpPair(t)
	done := sp.Carry(a, b)
	data := make([]byte, 4<<20)
	rand.Read(data)
	go func() {
		client.Write(data)
		client.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(server) // ends with the client's half-close
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("server got %d bytes (%v), want the %d sent", len(got), err, len(data))
	}
	server.Write([]byte("back"))
	buf := make([]byte, 4)
	client.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadFull(client, buf); err != nil || string(buf) != "back" {
		t.Fatalf("client got %q (%v), want back", buf, err)
	}
	select {
	case <-done:
		t.Fatal("the pair ended while one direction was still open")
	default:
	}
	sp.Close()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not end the pair")
	}
	expectEnd(t, client)
	// A pair handed over after Close ends at once.
	c2, a2 := tcpPair(t)
	b2, _ := tcpPair(t)
	select {
	case <-sp.Carry(a2, b2):
	case <-time.After(3 * time.Second):
		t.Fatal("a pair carried after Close did not end")
	}
	expectEnd(t, c2)
}

// relaySockets counts this process's open sockets, to see which
// connections the relay still holds (spare pipes are not counted).
func relaySockets(t *testing.T) int { return openFDs(t, "socket:") }

// waitSockets waits until at most want sockets are open.
func waitSockets(t *testing.T, want int, why string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for relaySockets(t) > want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := relaySockets(t); got > want {
		t.Errorf("%s: %d sockets open, want at most %d", why, got, want)
	}
}

// A server that answers early and closes with unread data sends a reset;
// its answer must still reach a client that is still uploading.
func TestRelayDeliversAnswerBeforeReset(t *testing.T) {
	server := startServer(t, func(c net.Conn) {
		c.Read(make([]byte, 1024))
		c.Write([]byte("413 too large\n"))
		c.Close() // unread upload left: the kernel resets
	})
	front, _ := startRelay(t, addrPort(t, server))
	chunk := make([]byte, 64<<10)
	for i := range 50 {
		c, err := net.Dial("tcp", front)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 14)
		_, err = io.ReadFull(c, buf)
		c.Close()
		if string(buf) != "413 too large\n" {
			t.Fatalf("attempt %d: the client got %q (%v), not the server's answer", i, buf, err)
		}
	}
}

// A client that half-closes and then resets ends its connection at once,
// even while the server stays silent.
func TestRelayNoticesResetAfterHalfClose(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	server := startServer(t, func(c net.Conn) { <-hold; c.Close() })
	front, _ := startRelay(t, addrPort(t, server))
	time.Sleep(50 * time.Millisecond)
	before := relaySockets(t)
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("req"))
	c.(*net.TCPConn).CloseWrite()
	time.Sleep(100 * time.Millisecond)
	c.(*net.TCPConn).SetLinger(0)
	c.Close() // a reset
	// The server's end stays open (it holds the connection): +1.
	waitSockets(t, before+1, "after the client's reset")
}

// A client that resets while the target has not yet accepted its connect
// ends the attempt at once.
// stuckTarget is a listener that never accepts and whose queue is full:
// connects to it stay pending.
func stuckTarget(t *testing.T) netip.AddrPort {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	stuck := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(sa.(*unix.SockaddrInet4).Port))
	for range 2 { // fill the queue
		if c, err := net.DialTimeout("tcp", stuck.String(), 200*time.Millisecond); err == nil {
			t.Cleanup(func() { c.Close() })
		}
	}
	return stuck
}

func TestRelayClientGoneWhileConnecting(t *testing.T) {
	stuck := stuckTarget(t)
	front, _ := startRelay(t, stuck)
	time.Sleep(50 * time.Millisecond)
	before := relaySockets(t)
	for range 5 {
		c, err := net.Dial("tcp", front)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	waitSockets(t, before, "after the clients reset during the connect")
}

// A connect that the target never answers is given up: the client sees
// the end rather than waiting for the kernel's retries.
func TestRelayConnectTimesOut(t *testing.T) {
	saved := connectTimeout
	t.Cleanup(func() { connectTimeout = saved }) // after the relay's own cleanup stops it
	connectTimeout = 300 * time.Millisecond
	front, _ := startRelay(t, stuckTarget(t))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectEnd(t, c) // the timer ticks every second: within 3 s
}

// TestSpinnerBacksOff: a poll that runs out without an event makes the
// next ones be skipped, more of them each time; one that finds an event
// starts over.
func TestSpinnerBacksOff(t *testing.T) {
	if spinCPUs < 2 {
		t.Skip("the spinner never spins on a single CPU")
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ep)
	ev, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ev)
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, ev, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(ev)}); err != nil {
		t.Fatal(err)
	}
	events := make([]unix.EpollEvent, 4)
	var s spinner
	// spins reports how many of k polls in a row spun: each spin that
	// runs out counts a miss (a clock would also count a skipped poll
	// that the scheduler happened to preempt).
	spins := func(k int) int {
		n := 0
		for range k {
			before := s.misses
			if got, err := s.poll(ep, events); got != 0 || err != nil {
				t.Fatalf("poll of an empty set: %d events, %v", got, err)
			}
			if s.misses != before {
				n++
			}
		}
		return n
	}
	// Misses: spin, skip 1, spin, skip 3, spin, skip 7.
	if n := spins(1 + 1 + 1 + 3 + 1 + 7); n != 3 {
		t.Errorf("%d of 14 polls spun, want 3 (after misses 1, 3, 7 are skipped)", n)
	}
	if s.misses != 3 {
		t.Errorf("misses %d, want 3", s.misses)
	}
	// At most 63 are skipped in a row.
	for range 500 {
		s.poll(ep, events)
	}
	if s.skip > 63 {
		t.Errorf("skip %d, want at most 63", s.skip)
	}
	// An event that comes while it spins is returned and resets the count.
	s = spinner{}
	go func() {
		time.Sleep(spinFor / 5)
		one := [8]byte{1}
		unix.Write(ev, one[:])
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		n, err := s.poll(ep, events)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the event never came")
		}
	}
	if s.misses != 0 || s.skip != 0 {
		t.Errorf("after an event: misses %d skip %d, want 0 0", s.misses, s.skip)
	}
}

// TestRelaySleepsWhenIdle: after a burst of requests the loop spins a
// moment and then sleeps; it does not burn a CPU while nothing moves.
func TestRelaySleepsWhenIdle(t *testing.T) {
	backend := startServer(t, echoBack)
	front, _ := startRelay(t, addrPort(t, backend))
	c, err := net.Dial("tcp", front)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := make([]byte, 1)
	for range 200 { // a keep-alive ping-pong through the relay
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
	}
	cpu := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	time.Sleep(50 * time.Millisecond)
	before := cpu()
	const idle = 500 * time.Millisecond
	time.Sleep(idle)
	if used := cpu() - before; used > idle/5 {
		t.Errorf("the process used %s of CPU in %s with the connection idle", used, idle)
	}
}

// TestRelayBoundsConnections holds Max connections open: the next ones
// are reset at once, and once one ends another is taken.
func TestRelayBoundsConnections(t *testing.T) {
	echo := startServer(t, func(c net.Conn) {
		io.Copy(struct{ io.Writer }{c}, struct{ io.Reader }{c})
		c.Close()
	})
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	target := HostTarget(addrPort(t, echo))
	target.Max = 5
	go func() { Relay(ctx, front, target); close(done) }()
	defer func() { cancel(); <-done }()
	ping := func(c net.Conn) error {
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		_, err := io.ReadFull(c, make([]byte, 4))
		return err
	}
	var held []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", front.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if err := ping(c); err != nil {
			t.Fatalf("a connection within the bound: %v", err)
		}
		held = append(held, c)
	}
	// Past the bound: reset at once, during the dial (the reset can come
	// before the connect returns) or at the first exchange.
	t0 := time.Now()
	over, err := net.Dial("tcp", front.Addr().String())
	if err == nil {
		err = ping(over)
		defer over.Close()
	}
	if err == nil || time.Since(t0) > time.Second {
		t.Errorf("a connection past the bound: %v after %v, want a reset at once", err, time.Since(t0))
	}
	held[0].Close()
	time.Sleep(100 * time.Millisecond)
	again, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := ping(again); err != nil {
		t.Errorf("a connection after one ended: %v", err)
	}
	for _, c := range append(held[1:], again) {
		c.Close()
	}
}
