//go:build !linux

package netrelay

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"
)

// HostTarget connects to addrs on this machine.
func HostTarget(addrs ...netip.AddrPort) Target { return Target{Addrs: addrs} }

// Target fails here: see Factory.
func (*Factory) Target(addrs ...netip.AddrPort) Target {
	return Target{Addrs: addrs, Socket: func(int) (int, error) { return -1, ErrNoFactory }}
}

// Relay accepts on l and relays each connection to t with Serve; only a
// host target reaches anything here.
func Relay(ctx context.Context, l net.Listener, t Target) {
	Serve(ctx, l, func(ctx context.Context) (net.Conn, error) {
		if t.Socket != nil {
			return nil, ErrNoFactory
		}
		err := error(ErrNoFactory)
		var d net.Dialer
		for _, ap := range t.Addrs {
			c, derr := d.DialContext(ctx, "tcp", ap.String())
			if derr == nil {
				return c, nil
			}
			err = derr
		}
		return nil, err
	})
}

// Splicer carries pairs of connections with Pipe here; the idle limit is
// not enforced (the proxy, its user, runs only on Linux).
type Splicer struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// NewSplicer returns a splicer; idle is ignored here.
func NewSplicer(time.Duration) (*Splicer, error) {
	return &Splicer{conns: map[net.Conn]struct{}{}}, nil
}

// Carry pipes a and b until both directions end or the splicer closes;
// the returned channel closes then.
func (s *Splicer) Carry(a, b net.Conn) <-chan struct{} {
	done := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		a.Close()
		b.Close()
		close(done)
		return done
	}
	s.conns[a], s.conns[b] = struct{}{}, struct{}{}
	s.mu.Unlock()
	go func() {
		Pipe(a, b)
		s.mu.Lock()
		delete(s.conns, a)
		delete(s.conns, b)
		s.mu.Unlock()
		close(done)
	}()
	return done
}

// Close ends every pair.
func (s *Splicer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
}
