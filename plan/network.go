package plan

import (
	"net/netip"
	"strings"
	"time"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// exposes checks the exposed ports (each address once) and the consent a
// public one needs, and the readiness that waits for them. Binding them
// is the caller's: a plan starts nothing.
func (p *Plan) exposes(r Request, w *Words) error {
	seen := map[netip.AddrPort]bool{}
	for _, v := range r.Expose {
		ap, err := netrelay.ParseExpose(v)
		if err != nil {
			return usageErr("%s: %w", w.Expose, err)
		}
		if netrelay.Public(ap) && !r.ExposePublic {
			if w.ExposePublic == "" {
				return refusedErr("%s %s listens beyond this machine, which needs consent given on the command line; expose 127.0.0.1:%d", w.Expose, ap, ap.Port())
			}
			return refusedErr("%s %s listens beyond this machine; add %s to consent, or expose 127.0.0.1:%d", w.Expose, ap, w.ExposePublic, ap.Port())
		}
		if !seen[ap] {
			seen[ap] = true
			p.Exposes = append(p.Exposes, Expose{Listen: ap, Port: ap.Port()})
		}
	}
	return p.ready(r.Ready, w)
}

// ready checks what a background shell's answer waits for.
func (p *Plan) ready(r ReadyRequest, w *Words) error {
	if !r.Ports && r.Log == "" {
		return nil
	}
	if p.Purpose != Background {
		return usageErr("waiting until a shell is ready is for background shells")
	}
	rd := &Ready{Log: r.Log, Timeout: r.Timeout}
	if rd.Timeout <= 0 {
		rd.Timeout = DefaultReadyTimeout
	}
	if r.Ports {
		if len(p.Exposes) == 0 {
			return usageErr("%s waits for exposed ports; add %s PORT, or use %s REGEX", readyWord(w), w.Expose, w.ReadyLog)
		}
		for _, e := range p.Exposes {
			rd.Ports = append(rd.Ports, int(e.Port))
		}
	}
	if r.Log != "" {
		if _, err := CompileRegexp(w.ReadyLog, r.Log); err != nil {
			return err
		}
	}
	p.Ready = rd
	return nil
}

// readyWord is the option that waits for ports, as the words have it.
func readyWord(w *Words) string {
	if strings.HasPrefix(w.Expose, "--") {
		return "--ready"
	}
	return "ready"
}

// network parses the allowlist (--allow-host and network.allow), the
// denials and the names given addresses, once.
func (p *Plan) network(r Request, cfg *policy.Config) error {
	n := &p.Network
	for _, h := range r.AllowHosts {
		hp, err := policy.ParseHostPattern(h)
		if err != nil {
			return usageErr("--allow-host: %w", err)
		}
		n.Allow = append(n.Allow, hp)
	}
	for _, list := range []struct {
		into   *[]policy.HostPattern
		values []string
	}{{&n.Allow, cfg.Network.Allow}, {&n.Deny, cfg.Network.Deny}} {
		for _, h := range list.values {
			hp, err := policy.ParseHostPattern(h)
			if err != nil {
				return usageErr("%w", err)
			}
			*list.into = append(*list.into, hp)
		}
	}
	n.CloudMetadata = cfg.CloudMetadata()
	n.Ask = r.Ask
	if cfg.Network.AskSeconds != nil {
		n.Ask = time.Duration(cfg.AskSeconds()) * time.Second
	}
	var err error
	n.Hosts, err = ParseAddHosts(r.AddHosts)
	return err
}

// Rules are the network rules the shell's proxy, resolver and egress
// decide by (grants are the caller's to add: they live in the state dir).
func (n Network) Rules() *policy.Rules {
	return policy.RulesOf(n.Allow, n.Deny).WithCloudMetadata(n.CloudMetadata)
}

// ParseAddHosts reads --add-host entries: NAME:ADDRESS, the address an
// IPv4 or IPv6 one (brackets allowed).
func ParseAddHosts(entries []string) (map[string]netip.Addr, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	hosts := map[string]netip.Addr{}
	for _, e := range entries {
		name, addr, ok := strings.Cut(e, ":")
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
		h, herr := policy.NormalizeHost(name)
		_, isAddr := netip.ParseAddr(h)
		if !ok || err != nil || herr != nil || h == "" || isAddr == nil {
			return nil, usageErr("--add-host %q: write NAME:ADDRESS, such as api.test:198.18.0.2 or api.test:[fd00::2]", escape.Line(e))
		}
		hosts[h] = a.Unmap()
	}
	return hosts, nil
}
