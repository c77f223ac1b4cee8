package shells

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"time"

	"github.com/cshell/cshell/internal/safefs"
)

// listenControl listens on the control socket of a shell's folder.
func listenControl(d *safefs.Dir) (net.Listener, error) {
	_ = d.Remove(controlName)
	p, err := d.SocketPath(controlName)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		return nil, err
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the name is a /proc path; closeControl removes it
	}
	return l, nil
}

func closeControl(l net.Listener, d *safefs.Dir) {
	l.Close()
	_ = d.Remove(controlName)
}

// errNoSupervisor means nothing answers on a shell's control socket.
var errNoSupervisor = errors.New("its supervisor does not answer")

// dialControl connects to a shell's supervisor. Only a socket is dialled,
// and the peer must be a supervisor: a process of this user in cshell's
// own PID namespace, which no process of a container shell is (a shell
// can bind a socket wherever it can write, the host can connect to it).
// It returns the connection and the supervisor's pid.
func (m *Manager) dialControl(id string) (net.Conn, int, error) {
	d, err := m.shellDir(id)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	st, err := d.Lstat(controlName)
	if err != nil || st.Mode&fs.ModeSocket == 0 {
		return nil, 0, fmt.Errorf("shell %s: %w", id, errNoSupervisor)
	}
	p, err := d.SocketPath(controlName)
	if err != nil {
		return nil, 0, err
	}
	c, err := net.DialTimeout("unix", p, 2*time.Second)
	if err != nil {
		return nil, 0, fmt.Errorf("shell %s: %w (%w)", id, errNoSupervisor, err)
	}
	pid, err := supervisorPeer(c)
	if err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("shell %s's control socket is not its supervisor's (%w); nothing was sent to it", id, err)
	}
	return c, pid, nil
}
