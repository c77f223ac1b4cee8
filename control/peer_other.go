//go:build !linux

package control

import "net"

// supervisorPeer trusts the peer: off Linux there are no container shells
// that could serve a socket in the state dir.
func supervisorPeer(net.Conn) (int, error) { return 0, nil }
