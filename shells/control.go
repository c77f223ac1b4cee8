package shells

import (
	"net"
	"os"
	"path/filepath"
)

const controlName = "control.sock"

// listenControl listens on the shell's control socket.
func listenControl(dir string) (net.Listener, error) {
	path := filepath.Join(dir, controlName)
	_ = os.Remove(path)
	var l net.Listener
	err := withShortPath(dir, controlName, func(p string) error {
		var err error
		l, err = net.Listen("unix", p)
		return err
	})
	if err != nil {
		return nil, err
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the name may have been a /proc path
	}
	return l, nil
}

func closeControl(l net.Listener, dir string) {
	l.Close()
	_ = os.Remove(filepath.Join(dir, controlName))
}

// dialControl connects to a shell's control socket.
func dialControl(dir string) (net.Conn, error) {
	var c net.Conn
	err := withShortPath(dir, controlName, func(p string) error {
		var err error
		c, err = net.Dial("unix", p)
		return err
	})
	return c, err
}
