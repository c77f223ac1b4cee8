//go:build !windows

package control

import (
	"context"
	"io/fs"
	"net"

	"github.com/cshell/cshell/internal/safefs"
)

// listenChannel listens on a unix socket named name in d.
func listenChannel(d *safefs.Dir, name string) (net.Listener, error) {
	p, err := d.SocketPath(name)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		return nil, err
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the name is a /proc path; Listener.Close removes it beneath d
	}
	return l, nil
}

// dialChannel connects to the unix socket name in d; anything else there is no
// server.
func dialChannel(ctx context.Context, d *safefs.Dir, name string) (net.Conn, error) {
	st, err := d.Lstat(name)
	if err != nil || st.Mode&fs.ModeSocket == 0 {
		return nil, ErrNoServer
	}
	p, err := d.SocketPath(name)
	if err != nil {
		return nil, err
	}
	var dialer net.Dialer
	return dialer.DialContext(ctx, "unix", p)
}
