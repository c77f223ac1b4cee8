package netrelay

import (
	"net/netip"
)

// Target is where Relay takes each connection it accepts: a new TCP socket
// from Socket, connected to the first of Addrs that accepts it.
type Target struct {
	// Socket returns a new unconnected, non-blocking TCP socket of the
	// family (unix.AF_INET or AF_INET6); Relay owns it from then on.
	Socket func(family int) (int, error)
	Addrs  []netip.AddrPort
	// Max bounds the connections relayed at once; one past it is reset
	// as soon as it is accepted. 0: no bound.
	Max int
}
