//go:build !linux

package netrelay

import (
	"context"
	"net"
	"net/netip"
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
