package shells

import (
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/sandbox"
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
func bindExposes(values []string, public, relay bool, words *Words) ([]netip.AddrPort, []*net.TCPListener, error) {
	words = wordsOr(words)
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
			return fail(usageErr("%s: %w", words.Expose, err))
		}
		if netrelay.Public(ap) && !public {
			if words.ExposePublic == "" {
				return fail(refusedErr("%s %s listens beyond this machine, which needs consent given on the command line; expose 127.0.0.1:%d", words.Expose, ap, ap.Port()))
			}
			return fail(refusedErr("%s %s listens beyond this machine; add %s to consent, or expose 127.0.0.1:%d", words.Expose, ap, words.ExposePublic, ap.Port()))
		}
		if seen[ap] {
			continue
		}
		seen[ap] = true
		l, err := netrelay.Bind(ap)
		if err != nil {
			return fail(refusedErr("%v", err))
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
