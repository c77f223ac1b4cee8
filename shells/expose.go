package shells

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
)

// exposeSpec is one exposed port as the supervisor receives it.
type exposeSpec struct {
	Listen string `json:"listen"` // host address, e.g. 127.0.0.1:5173
	Port   int    `json:"port"`   // the port inside the shell
	FD     int    `json:"fd"`     // the bound listener, inherited; 0 when not relayed
}

// bindExposes checks the --expose values and binds the host listeners, so
// that a port in use refuses the start before anything runs. For shells
// without a network namespace of their own the ports are only checked
// (and the listeners closed): their servers bind the host's ports.
func bindExposes(values []string, public, relay bool) ([]netip.AddrPort, []*net.TCPListener, error) {
	var addrs []netip.AddrPort
	var ls []*net.TCPListener
	fail := func(err error) ([]netip.AddrPort, []*net.TCPListener, error) {
		for _, l := range ls {
			l.Close()
		}
		return nil, nil, err
	}
	seen := map[netip.AddrPort]bool{}
	for _, v := range values {
		ap, err := netrelay.ParseExpose(v)
		if err != nil {
			return fail(fmt.Errorf("%w: --expose: %v", ErrUsage, err))
		}
		if netrelay.Public(ap) && !public {
			return fail(fmt.Errorf("%w: --expose %s listens beyond this machine; add --expose-public to consent, or expose 127.0.0.1:%d", ErrRefused, ap, ap.Port()))
		}
		if seen[ap] {
			continue
		}
		seen[ap] = true
		l, err := netrelay.Bind(ap)
		if err != nil {
			return fail(fmt.Errorf("%w: %v", ErrRefused, err))
		}
		addrs = append(addrs, ap)
		if relay {
			ls = append(ls, l)
		} else {
			l.Close()
		}
	}
	return addrs, ls, nil
}

// listenerFiles duplicates listeners as files a child can inherit, and
// closes the listeners.
func listenerFiles(ls []*net.TCPListener) ([]*os.File, error) {
	var files []*os.File
	var err error
	for _, l := range ls {
		var f *os.File
		if err == nil {
			f, err = l.File()
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

// serveExposes relays each listener to its port inside the shell until ctx
// ends; wait for the returned group before relying on the ports being shut.
func serveExposes(ctx context.Context, f *netrelay.Factory, ls []net.Listener, ports []int, max int, wg *sync.WaitGroup) {
	for i, l := range ls {
		port := ports[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 127.0.0.1 first, then ::1, for servers that bind localhost as IPv6 only.
			t := f.Target(
				netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)),
				netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port)))
			t.Max = max
			netrelay.Relay(ctx, l, t)
		}()
	}
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

// exposing is one shell's exposed host address, as its supervisor said.
type exposing struct {
	id   string
	pid  int    // the supervisor, as the kernel named it
	time uint64 // its start time, against pid reuse
	host netip.AddrPort
}

// sessionExposes returns the host addresses that the running background
// shells of a session expose. Each comes from the shell's supervisor
// itself, over its checked control socket: a record's fields say nothing
// here (a forged record could name any address of this machine).
func (m *Manager) sessionExposes(session string) []exposing {
	names, err := m.dir.Names(exposingName)
	if err != nil || len(names) == 0 {
		return nil
	}
	if session == "" {
		session = DefaultSession()
	}
	var out []exposing
	seen := map[uint16]bool{}
	for _, id := range names {
		if !validID(id) {
			continue
		}
		info, pid, err := m.askInfo(id)
		if err != nil {
			if meta, err := m.readMeta(id); err == nil && m.refresh(meta).Finished() {
				_ = m.dir.Remove(exposingName + "/" + id) // stale
			}
			continue
		}
		if info.Session != session {
			continue
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
			out = append(out, exposing{id: id, pid: pid, time: processStartTime(pid), host: host})
		}
	}
	return out
}

// askInfo asks a shell's supervisor what it set up.
func (m *Manager) askInfo(id string) (infoReply, int, error) {
	var r infoReply
	c, pid, err := m.dialControl(id)
	if err != nil {
		return r, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if err := json.NewEncoder(c).Encode(request{Info: true}); err != nil {
		return r, 0, err
	}
	if err := json.NewDecoder(io.LimitReader(c, maxRequest)).Decode(&r); err != nil {
		return r, 0, err
	}
	return r, pid, nil
}

// reachSession makes the given host addresses reachable at 127.0.0.1:PORT
// inside a foreground shell: a listener inside its namespace relays to each.
func (m *Manager) reachSession(ctx context.Context, f *netrelay.Factory, hosts []exposing, max int, wg *sync.WaitGroup) {
	for _, host := range hosts {
		inner, err := f.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), host.host.Port()))
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := m.stillExposed(netrelay.HostTarget(host.host), host)
			t.Max = max
			netrelay.Relay(ctx, inner, t)
		}()
	}
}

// errNotExposed ends a connection to a port that no running shell of the
// session exposes any more.
var errNotExposed = errors.New("no running shell of the session exposes the port")

// stillExposed lets t connect only while the shell that exposes the
// address runs: its mark is in the exposing index and its supervisor
// lives. Once it has ended, whatever else binds the port on this machine
// must stay out of reach. (A supervisor takes its mark away before it
// closes its listeners; one that died leaves its mark, not its process.)
func (m *Manager) stillExposed(t netrelay.Target, e exposing) netrelay.Target {
	socket := t.Socket
	t.Socket = func(family int) (int, error) {
		if socket == nil {
			return -1, errNotExposed
		}
		if _, err := m.dir.Lstat(exposingName + "/" + e.id); err != nil {
			return -1, errNotExposed
		}
		if e.pid > 0 && !processAlive(e.pid, e.time) {
			return -1, errNotExposed
		}
		return socket(family)
	}
	return t
}

// Relayed reports whether an isolation gives the shell a network of its
// own, so that its ports must be relayed (otherwise they are reachable
// directly).
func Relayed(iso container.Isolation) bool { return relayed(iso) }

func relayed(iso container.Isolation) bool {
	switch iso {
	case container.Container:
		return true
	case container.Auto:
		return container.DefaultIsNamespaced()
	}
	return false
}

// dialInside connects to a port of the shell: 127.0.0.1 first, then ::1,
// for servers that bind localhost as IPv6 only.
func dialInside(ctx context.Context, f *netrelay.Factory, port int) (net.Conn, error) {
	c, err := f.Dial(ctx, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	if err == nil {
		return c, nil
	}
	if c6, err6 := f.Dial(ctx, netip.AddrPortFrom(netip.IPv6Loopback(), uint16(port))); err6 == nil {
		return c6, nil
	}
	return nil, err
}

// probePort reports whether a port of the shell accepts connections.
func probePort(ctx context.Context, f *netrelay.Factory, port int) bool {
	var c net.Conn
	var err error
	if f == nil { // no namespace: the server is on this machine's loopback
		c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			c, err = net.Dial("tcp", fmt.Sprintf("[::1]:%d", port))
		}
	} else {
		c, err = dialInside(ctx, f, port)
	}
	if err != nil {
		return false
	}
	c.Close()
	return true
}
