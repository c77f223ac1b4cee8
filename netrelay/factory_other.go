//go:build !linux

package netrelay

import (
	"context"
	"net"
	"net/netip"
	"os"
)

// Factory is unavailable here: shells have no network namespace of their
// own, so their servers are reachable directly.
type Factory struct{}

// NewFactory returns a factory whose every call fails with ErrNoFactory.
func NewFactory(*os.File) *Factory { return &Factory{} }

// Dial fails: see Factory.
func (*Factory) Dial(context.Context, netip.AddrPort) (net.Conn, error) { return nil, ErrNoFactory }

// Listen fails: see Factory.
func (*Factory) Listen(netip.AddrPort) (net.Listener, error) { return nil, ErrNoFactory }

// ListenUDP fails: see Factory.
func (*Factory) ListenUDP(netip.AddrPort) (*net.UDPConn, error) { return nil, ErrNoFactory }

// Command fails: see Factory.
func (*Factory) Command(string, []string, *os.File, *os.File, *os.File) error { return ErrNoFactory }

// Start fails: see Factory.
func (*Factory) Start() error { return ErrNoFactory }

// StartEgress fails: see Factory.
func (*Factory) StartEgress() (*os.File, error) { return nil, ErrNoFactory }

// Close does nothing.
func (*Factory) Close() error { return nil }

// Conntrack is unavailable here: see Factory.
type Conntrack struct{}

// NewConntrack closes f: see Factory.
func NewConntrack(f *os.File) *Conntrack {
	f.Close()
	return &Conntrack{}
}

// Close does nothing: see Factory.
func (*Conntrack) Close() error { return nil }
