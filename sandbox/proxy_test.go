package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

func TestPickProxyPort(t *testing.T) {
	for _, c := range []struct {
		taken []int
		want  int
	}{
		{nil, ProxyPort},
		{[]int{80, 8080}, ProxyPort},
		{[]int{ProxyPort}, ProxyPort + 1},
		{[]int{ProxyPort + 1, ProxyPort, ProxyPort + 3}, ProxyPort + 2},
	} {
		if got := PickProxyPort(c.taken); got != c.want {
			t.Errorf("PickProxyPort(%v) = %d, want %d", c.taken, got, c.want)
		}
	}
}

var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

func TestEnv(t *testing.T) {
	count := func(env []string, k string) int {
		n := 0
		for _, e := range env {
			if strings.HasPrefix(e, k+"=") {
				n++
			}
		}
		return n
	}
	host := []string{"PATH=/bin", "TMPDIR=/host/tmp", "HTTPS_PROXY=http://corp:8080", "no_proxy=corp"}

	env := Env(append([]string(nil), host...), false, 0)
	if v := policy.EnvValue(env, "TMPDIR"); v != "/tmp" || count(env, "TMPDIR") != 1 {
		t.Errorf("TMPDIR %q (%d entries), want the container's /tmp once", v, count(env, "TMPDIR"))
	}
	if policy.EnvValue(env, "HTTPS_PROXY") != "http://corp:8080" || count(env, "HTTP_PROXY") != 0 || count(env, "NODE_USE_ENV_PROXY") != 0 {
		t.Errorf("without a proxy the proxy variables changed: %q", env)
	}

	env = Env(append([]string(nil), host...), true, 3130)
	if policy.EnvValue(env, "TMPDIR") != "/host/tmp" {
		t.Errorf("a kept TMPDIR changed: %q", env)
	}
	for _, k := range proxyVars {
		if v := policy.EnvValue(env, k); v != "http://127.0.0.1:3130" || count(env, k) != 1 {
			t.Errorf("%s = %q (%d entries), want the proxy once", k, v, count(env, k))
		}
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if v := policy.EnvValue(env, k); v != "localhost,127.0.0.1,::1" || count(env, k) != 1 {
			t.Errorf("%s = %q (%d entries): loopback must stay direct", k, v, count(env, k))
		}
	}
	if policy.EnvValue(env, "NODE_USE_ENV_PROXY") != "1" || policy.EnvValue(env, "PATH") != "/bin" {
		t.Errorf("env %q", env)
	}
}

func mustRules(t *testing.T, allow, deny []string) *policy.Rules {
	t.Helper()
	r, err := policy.NewRules(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustPattern(t *testing.T, s string) policy.HostPattern {
	t.Helper()
	p, err := policy.ParseHostPattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDecide: a refusal that a grant could lift tells Asking and waits
// for the grant; one that none could lift is not asked about.
func TestDecide(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	var grants []policy.Grant
	rules := mustRules(t, []string{"a.test"}, []string{"evil.test"}).WithGrants(func() []policy.Grant {
		mu.Lock()
		defer mu.Unlock()
		return grants
	}, 10*time.Second) // bounds only a failing case: the grant comes before the wait
	p := &Proxy{Rules: rules, Asking: func(host string, port int) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, fmt.Sprintf("%s:%d", host, port))
		// The user answers at once: b.test is granted, c.test refused.
		grants = append(grants, policy.Grant{Pattern: mustPattern(t, "b.test")}, policy.Grant{Pattern: mustPattern(t, "c.test"), Deny: true})
	}}
	ctx := context.Background()
	if ok, rule := p.decide(ctx, "a.test", 443); !ok || !strings.Contains(rule.Text, "a.test") {
		t.Errorf("a.test: %v %q", ok, rule)
	}
	if ok, rule := p.decide(ctx, "evil.test", 443); ok || !strings.Contains(rule.Text, "network.deny") {
		t.Errorf("evil.test: %v %q", ok, rule)
	}
	if ok, rule := p.decide(ctx, "b.test", 443); !ok || !strings.Contains(rule.Text, "granted") {
		t.Errorf("b.test after its grant: %v %q", ok, rule)
	}
	if ok, rule := p.decide(ctx, "c.test", 80); ok || !strings.Contains(rule.Text, "refused by the user") {
		t.Errorf("c.test after its refusal: %v %q", ok, rule)
	}
	mu.Lock()
	got := strings.Join(asked, " ")
	mu.Unlock()
	if got != "b.test:443" {
		t.Errorf("asked about %q, want b.test:443 alone (a.test is allowed, evil.test denied, c.test refused already)", got)
	}

	// Without grants nothing waits, nothing is asked.
	plain := &Proxy{Rules: mustRules(t, []string{"a.test"}, nil), Asking: func(string, int) { t.Errorf("asked without grants") }}
	if ok, _ := plain.decide(ctx, "b.test", 443); ok {
		t.Errorf("b.test allowed without a grant")
	}
}

// TestPolicyDialer decides on the name asked for, then dials.
func TestPolicyDialer(t *testing.T) {
	srv := echoServer(t, "")
	p := &Proxy{Rules: mustRules(t, []string{"127.0.0.1", "named.test"}, nil),
		Hosts: map[string]netip.Addr{"named.test": netip.MustParseAddr("127.0.0.1")}}
	dial := policyDialer(p)
	ctx := context.Background()
	for _, host := range []string{"127.0.0.1", "named.test", "NAMED.test."} {
		c, err := dial(ctx, host, port(srv))
		if err != nil {
			t.Errorf("dial %s: %v", host, err)
			continue
		}
		fmt.Fprintf(c, "hi\n")
		buf := make([]byte, 8)
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := c.Read(buf); string(buf[:n]) != "echo hi\n" {
			t.Errorf("dial %s: read %q %v", host, buf[:n], err)
		}
		c.Close()
	}
	_, err := dial(ctx, "other.test", port(srv))
	var ref *netrelay.Refusal
	if !errors.As(err, &ref) || ref.Rule != "not in the allow list" {
		t.Errorf("other.test: %v, want a refusal", err)
	}
}

func TestDialChecked(t *testing.T) {
	srv := echoServer(t, "")
	closed := listener(t)
	closedPort := port(closed)
	closed.Close()
	hosts := map[string]netip.Addr{"svc.test": netip.MustParseAddr("127.0.0.1")}
	ctx := context.Background()
	for _, c := range []struct {
		name         string
		allow, deny  []string
		host         string
		port         int
		ok           bool
		refusal      string // part of the refusal's rule; "" for another error
		otherFailure bool
	}{
		// --add-host names their address: this machine's own included.
		{"added host", []string{"svc.test"}, nil, "svc.test", port(srv), true, "", false},
		{"added host denied by address", []string{"svc.test"}, []string{"127.0.0.1"}, "svc.test", port(srv), false, "network.deny", false},
		{"allowed literal", []string{"127.0.0.1"}, nil, "127.0.0.1", port(srv), true, "", false},
		// An address of this machine is reached only when allowed as itself.
		{"own address not allowed", []string{"*.test"}, nil, "127.0.0.1", port(srv), false, "an address of this machine", false},
		{"denied address", []string{"127.0.0.1"}, []string{"127.0.0.1"}, "127.0.0.1", port(srv), false, "network.deny", false},
		{"nothing listens", []string{"127.0.0.1"}, nil, "127.0.0.1", closedPort, false, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := dialChecked(ctx, mustRules(t, c.allow, c.deny), hosts, c.host, c.port)
			if conn != nil {
				defer conn.Close()
			}
			var ref *netrelay.Refusal
			switch {
			case c.ok:
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				if got := conn.RemoteAddr().(*net.TCPAddr).Port; got != c.port {
					t.Errorf("connected to port %d, want %d", got, c.port)
				}
			case c.refusal != "":
				if !errors.As(err, &ref) || !strings.Contains(ref.Rule, c.refusal) {
					t.Errorf("err %v, want a refusal naming %q", err, c.refusal)
				}
			case c.otherFailure:
				if err == nil || errors.As(err, &ref) {
					t.Errorf("err %v, want a failure to connect, not a refusal", err)
				}
			}
		})
	}
}
