package sandbox

import (
	"context"
	"net"

	"github.com/cshell/cshell/broker"
)

// brokered wraps the egress's dial: a connection to a host a credential
// is declared for is carried by the broker, through a socket pair (the
// egress relays its end as any other connection).
func (s *Sandbox) brokered(ctx context.Context, b *broker.Broker, dial func(context.Context, string, int) (net.Conn, error)) func(context.Context, string, int) (net.Conn, error) {
	return func(ctx2 context.Context, host string, port int) (net.Conn, error) {
		up, err := dial(ctx2, host, port)
		if err != nil || !b.Holds(host, port) {
			return up, err
		}
		near, far, err := connPair()
		if err != nil {
			up.Close()
			return nil, err
		}
		s.brokerMu.Lock()
		defer s.brokerMu.Unlock()
		if s.brokerClosed {
			near.Close()
			far.Close()
			up.Close()
			return nil, net.ErrClosed
		}
		s.brokerConns.Add(1)
		go func() {
			defer s.brokerConns.Done()
			b.Serve(ctx, far, up, host, port) // ends with ctx (the relays') at the latest
		}()
		return near, nil
	}
}

// connPair returns two connected unix stream sockets as connections.
func connPair() (net.Conn, net.Conn, error) {
	a, b, err := socketPair()
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	defer b.Close()
	ca, err := net.FileConn(a)
	if err != nil {
		return nil, nil, err
	}
	cb, err := net.FileConn(b)
	if err != nil {
		ca.Close()
		return nil, nil, err
	}
	return ca, cb, nil
}
