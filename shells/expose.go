package shells

import (
	"context"
	"net"
	"net/netip"
	"os"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/control"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/sandbox"
)

// bindExposes binds the plan's exposed ports on this machine, so that a
// port in use refuses the start before anything runs. A shell without a
// network namespace of its own binds them itself: they are only checked
// (and closed again).
func bindExposes(p *plan.Plan) ([]net.Listener, error) {
	var ls []net.Listener
	for _, e := range p.Exposes {
		l, err := netrelay.Bind(e.Listen)
		if err != nil {
			closeAll(ls)
			return nil, refusedErr("%v", err)
		}
		if !p.Namespaced {
			l.Close()
			continue
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// listenerFiles duplicates listeners as files a child can inherit, and
// closes the listeners.
func listenerFiles(ls []net.Listener) ([]*os.File, error) {
	var files []*os.File
	var err error
	for _, l := range ls {
		var f *os.File
		if err == nil {
			f, err = l.(*net.TCPListener).File()
		}
		l.Close()
		if f != nil {
			files = append(files, f)
		}
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	return files, nil
}

// markExposing adds a shell to the exposing index: one empty file per
// shell id, so that a foreground run asks only those supervisors. Made
// new (anything planted under that name is removed first, never followed).
func (m *Manager) markExposing(id string) error {
	name := exposingName + "/" + id
	_ = m.dir.Remove(name)
	f, err := m.dir.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// reaches returns the host addresses that the running background shells
// of a session expose, for a foreground shell to reach. Each comes from
// the shell's supervisor itself, over its checked control socket: a
// record's fields say nothing here (a forged record could name any address
// of this machine). Each stays reachable only while that shell runs: its
// mark is in the exposing index and its supervisor lives. Once it has
// ended, whatever else binds the port on this machine must stay out of
// reach. (A supervisor takes its mark away before it closes its
// listeners; one that died leaves its mark, not its process.)
func (m *Manager) reaches(session string) []sandbox.Reach {
	names, err := m.dir.Names(exposingName)
	if err != nil || len(names) == 0 {
		return nil
	}
	var out []sandbox.Reach
	seen := map[uint16]bool{}
	for _, id := range names {
		if !validID(id) {
			continue
		}
		info, pid, err := m.askInfo(context.Background(), id)
		if err != nil {
			if meta, err := m.readMeta(id); err == nil && m.refresh(meta).Finished() {
				_ = m.dir.Remove(exposingName + "/" + id) // stale
			}
			continue
		}
		if info.Session != session {
			continue
		}
		start := processStartTime(pid)
		allowed := func() bool {
			if _, err := m.dir.Lstat(exposingName + "/" + id); err != nil {
				return false
			}
			return pid <= 0 || processAlive(pid, start)
		}
		for _, x := range info.Exposed {
			host, err := netip.ParseAddrPort(x.Listen)
			if err != nil || seen[host.Port()] {
				continue
			}
			seen[host.Port()] = true
			if host.Addr().IsUnspecified() {
				host = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), host.Port())
			}
			out = append(out, sandbox.Reach{Host: host, Allowed: allowed})
		}
	}
	return out
}

// askInfo asks a shell's supervisor what it set up, and its pid.
func (m *Manager) askInfo(ctx context.Context, id string) (control.Info, int, error) {
	c, err := m.dialControl(ctx, id)
	if err != nil {
		return control.Info{}, 0, err
	}
	defer c.Close()
	info, err := c.Info(ctx)
	return info, c.Pid(), err
}

// relayed reports whether an isolation gives the shell a network of its
// own, so that a foreground run reaches its session's ports (decided
// before its plan is made, with the plan's rule).
func relayed(iso container.Isolation) bool {
	return plan.Namespaced(iso, container.DefaultIsNamespaced())
}
