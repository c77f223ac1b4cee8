package shells

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// proxyPort is where a shell finds its allowlist proxy, on 127.0.0.1 of
// its own network namespace (so it collides with nothing on the host),
// unless the shell's own exposed ports or its session's take it: then the
// next free port from there (pickProxyPort).
const proxyPort = 3128

// pickProxyPort is proxyPort, or the first port after it that is not
// taken by a port the shell's servers or its session's listen on inside.
func pickProxyPort(taken []int) int {
	p := proxyPort
	for slices.Contains(taken, p) {
		p++
	}
	return p
}

// networkRules builds a shell's rules from --allow-host and the config.
func networkRules(allowHosts []string, cfg *policy.Config) (*policy.Rules, []string, error) {
	for _, h := range allowHosts {
		if _, err := policy.ParseHostPattern(h); err != nil {
			return nil, nil, fmt.Errorf("%w: --allow-host: %v", ErrUsage, err)
		}
	}
	allow := append(append([]string{}, allowHosts...), cfg.Network.Allow...)
	rules, err := policy.NewRules(allow, cfg.Network.Deny)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return rules, allow, nil
}

// proxyEnv points every common client at the proxy; loopback stays direct.
func proxyEnv(env []string, port int) []string {
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = setEnv(env, k, url)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		env = setEnv(env, k, "localhost,127.0.0.1,::1")
	}
	return env
}

// startProxy listens on the proxy port inside the shell and serves it
// until ctx ends. Refusals go to record.
func startProxy(ctx context.Context, f *netrelay.Factory, port int, rules *policy.Rules, record func(policy.Violation), wg *sync.WaitGroup) error {
	l, err := f.Listen(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	if err != nil {
		return fmt.Errorf("start the shell's proxy: %w", err)
	}
	p := &netrelay.Proxy{
		Dial: policyDialer(rules),
		Refused: func(host string, port int, method, rule string) {
			record(policy.NewViolation(host, port, method, rule))
		},
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.Serve(ctx, l)
	}()
	return nil
}

// policyDialer decides on the name the client asked for, then resolves
// it here and dials the first address the rules accept.
func policyDialer(rules *policy.Rules) func(context.Context, string, int) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, host string, port int) (net.Conn, error) {
		if ok, rule := rules.Decide(host, port); !ok {
			return nil, &netrelay.Refusal{Rule: rule}
		}
		h, _ := policy.NormalizeHost(host)
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(h); err == nil {
			addrs = []netip.Addr{a}
		} else {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", h); err != nil {
				return nil, err
			}
		}
		var lastErr error
		refusal := ""
		for _, a := range addrs {
			if ok, why := rules.CheckAddr(h, a, port); !ok {
				refusal = why
				continue
			}
			c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		if lastErr == nil && refusal != "" {
			return nil, &netrelay.Refusal{Rule: refusal}
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("%s has no address", h)
		}
		return nil, lastErr
	}
}

// maxViolationsLog bounds a shell's violations.log: a command refused in a
// loop must not fill the disk.
const maxViolationsLog = 1 << 20

// violationLog appends violations to a shell's violations.log, until it
// holds maxViolationsLog bytes; a last line says that later ones are lost.
func violationLog(dir *safefs.Dir) func(policy.Violation) {
	var mu sync.Mutex
	full := false
	return func(v policy.Violation) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if full {
			return
		}
		f, err := dir.OpenFile(violationsName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Size()+int64(len(b))+1 > maxViolationsLog {
			full = true
			b, _ = json.Marshal(policy.Violation{Time: v.Time,
				Rule: fmt.Sprintf("violations.log is full (%d MiB): later refusals are not recorded", maxViolationsLog>>20)})
		}
		_, _ = f.Write(append(b, '\n'))
	}
}

// violationNote tells a foreground user of each refusal, on stderr.
func violationNote(w io.Writer) func(policy.Violation) {
	var mu sync.Mutex
	return func(v policy.Violation) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "cshell: %s\n", describeViolation(v))
	}
}

// describeViolation is the human line for a refusal.
func describeViolation(v policy.Violation) string {
	if v.Host == "" { // a note of the log itself
		return v.Rule
	}
	s := fmt.Sprintf("refused %s %s:%d (%s)", v.Method, v.Host, v.Port, v.Rule)
	if v.Hint != "" {
		s += "; " + v.Hint
	}
	return s
}
