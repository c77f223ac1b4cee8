//go:build !linux

package sandbox

import (
	"context"
	"net"
	"net/netip"
)

// dialAddr connects to ap on this machine.
func dialAddr(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", ap.String())
}
