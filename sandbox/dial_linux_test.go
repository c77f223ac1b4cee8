package sandbox

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestDialAddr(t *testing.T) {
	srv := echoServer(t, "")
	ap := netip.MustParseAddrPort(srv.Addr().String())
	c, err := dialAddr(context.Background(), ap)
	if err != nil {
		t.Fatal(err)
	}
	if c.RemoteAddr().String() != ap.String() {
		t.Errorf("connected to %v, want %v", c.RemoteAddr(), ap)
	}
	c.Close()

	closed := listener(t)
	gone := netip.MustParseAddrPort(closed.Addr().String())
	closed.Close()
	_, err = dialAddr(context.Background(), gone)
	var op *net.OpError
	if !errors.As(err, &op) || !errors.Is(err, unix.ECONNREFUSED) {
		t.Errorf("dial to a closed port: %v, want a refused *net.OpError", err)
	}

	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := dialAddr(ctx, ap); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dial past its deadline: %v", err)
	}
}

// TestDialAddrIPv6: an IPv6 destination (an --add-host, an AAAA answer)
// is dialed as one.
func TestDialAddrIPv6(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer l.Close()
	ap := netip.MustParseAddrPort(l.Addr().String())
	c, err := dialAddr(context.Background(), ap)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.RemoteAddr().String() != ap.String() {
		t.Errorf("connected to %v, want %v", c.RemoteAddr(), ap)
	}
}
