package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// ProxyPort is where a shell finds its allowlist proxy, on 127.0.0.1 of
// its own network namespace (so it collides with nothing on the host),
// unless one of the ports the shell's servers or its session's listen on
// inside takes it (see PickProxyPort).
const ProxyPort = 3128

// PickProxyPort is ProxyPort, or the first port after it that taken does
// not hold.
func PickProxyPort(taken []int) int {
	p := ProxyPort
	for slices.Contains(taken, p) {
		p++
	}
	return p
}

// Env fixes what the host's environment gets wrong inside a container
// and points every common client at the proxy (proxyPort 0: none):
// TMPDIR is the container's own /tmp unless the caller set it (keep),
// the proxy variables name 127.0.0.1:proxyPort, and loopback stays direct.
func Env(env []string, keepTMPDIR bool, proxyPort int) []string {
	if !keepTMPDIR {
		env = policy.SetEnv(env, "TMPDIR", "/tmp")
	}
	if proxyPort == 0 {
		return env
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", proxyPort)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = policy.SetEnv(env, k, url)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		env = policy.SetEnv(env, k, "localhost,127.0.0.1,::1")
	}
	// Node.js (22.21 and later, 24) takes the variables only when asked.
	return policy.SetEnv(env, "NODE_USE_ENV_PROXY", "1")
}

// serveProxy listens on the proxy's port inside the shell and serves it
// until the relays stop.
func (s *Sandbox) serveProxy(ctx context.Context, p *Proxy) error {
	l, err := s.factory.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p.Port)))
	if err != nil {
		return fmt.Errorf("start the shell's proxy on port %d: %w", p.Port, err)
	}
	proxy := &netrelay.Proxy{
		Dial: policyDialer(p),
		Refused: func(host string, port int, method string, why *netrelay.Refusal) {
			if p.Record != nil {
				p.Record(policy.NewViolation(host, port, method, policy.Reason{Text: why.Rule, Hint: why.Hint, Allow: why.Allow}))
			}
		},
	}
	if p.broker != nil {
		proxy.Broker = p.broker
	}
	s.relays.Add(1)
	go func() {
		defer s.relays.Done()
		proxy.Serve(ctx, l)
	}()
	return nil
}

// decide decides on host:port; a refusal that a grant could lift waits
// for one up to the rules' Asks, once Asking has heard of it.
func (p *Proxy) decide(ctx context.Context, host string, port int) (bool, policy.Reason) {
	ok, rule := p.Rules.Decide(host, port)
	if ok || p.Rules.Asks() <= 0 || !p.Rules.Waitable(host, port) {
		return ok, rule
	}
	if p.Asking != nil {
		p.Asking(host, port)
	}
	return p.Rules.Await(ctx, host, port)
}

// policyDialer decides on the name the client asked for, then resolves
// it here (or takes it from Hosts) and dials the first address the rules
// accept.
func policyDialer(p *Proxy) func(context.Context, string, int) (net.Conn, error) {
	return func(ctx context.Context, host string, port int) (net.Conn, error) {
		if ok, why := p.decide(ctx, host, port); !ok {
			return nil, refusal(why)
		}
		return dialChecked(ctx, p.Rules, p.Hosts, host, port)
	}
}

// dialChecked resolves host here (or takes it from hosts, --add-host) and
// dials the first address the rules accept: the second half of the
// proxy's dial, once the name was decided.
func dialChecked(ctx context.Context, rules *policy.Rules, hosts map[string]netip.Addr, host string, port int) (net.Conn, error) {
	h, _ := policy.NormalizeHost(host)
	var addrs []netip.Addr
	if a, ok := hosts[h]; ok {
		// The user named the address (--add-host): it may be this
		// machine's own; only network.deny still refuses it.
		if denied, why := rules.DeniesAddr(h, a, port); denied {
			return nil, refusal(why)
		}
		return dialAddr(ctx, netip.AddrPortFrom(a, uint16(port)))
	}
	if a, err := netip.ParseAddr(h); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if addrs, err = net.DefaultResolver.LookupNetIP(rctx, "ip", h); err != nil {
			return nil, err
		}
	}
	var lastErr error
	var refused *policy.Reason
	for _, a := range addrs {
		if ok, why := rules.CheckAddr(h, a, port); !ok {
			refused = &why
			continue
		}
		c, err := dialAddr(ctx, netip.AddrPortFrom(a.Unmap(), uint16(port)))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	if lastErr == nil && refused != nil {
		return nil, refusal(*refused)
	}
	if lastErr == nil {
		lastErr = &net.DNSError{Err: "no address", Name: h, IsNotFound: true}
	}
	return nil, lastErr
}

// refusal is a policy's reason as the proxy and the egress carry it.
func refusal(why policy.Reason) *netrelay.Refusal {
	return &netrelay.Refusal{Rule: why.Text, Hint: why.Hint, Allow: why.Allow}
}
