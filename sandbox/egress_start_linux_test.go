package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStartEgress starts a shell with the proxy, so with its resolver and
// its egress (the namespace's rules send what would leave it to the
// egress; the start step "G": PID 1 puts the syscall filter on and hands
// its listener over). The command, a program that ignores the proxy
// variables, resolves an allowed name by the shell's resolver and talks
// to it through the egress, and sees the name's address as its peer; an
// address not allowed, one the resolver never gave out, a second
// connection past MaxConnections (each reset before a byte moves), a UDP
// datagram (recorded with where it was sent) and a new user namespace
// are refused and recorded. The proxy
// carries CONNECT to the allowed name and refuses another.
func TestStartEgress(t *testing.T) {
	up := echoServer(t, "")
	// The command asks an outside address for names: the rules send
	// port 53 to the shell's resolver.
	resolver := ResolverAddr
	var recorded, refused violations
	rules := mustRules(t, []string{"allowed.test"}, nil)
	p := &Proxy{Port: freePort(t), Rules: rules, Record: recorded.add,
		Hosts: map[string]netip.Addr{"allowed.test": netip.MustParseAddr("127.0.0.1")}}
	gate := filepath.Join(t.TempDir(), "go")
	s, ir := startInit(t, "egress", Options{ID: "t", Env: []string{resolverVar + "=192.0.2.53:53"},
		Proxy: p, MaxConnections: 1, Refused: refused.add}, "allowed.test", fmt.Sprint(port(up)), gate)
	eventually(t, "the command's connects", func() bool { return strings.Contains(ir.out.String(), "tracked ") })
	out := ir.out.String()
	if m := regexp.MustCompile(`tracked (\d+) <nil>`).FindStringSubmatch(out); m == nil || len(m[1]) > 1 {
		t.Errorf("after 50 loopback connections the namespace tracks more than 9 flows, or cannot tell:\n%s", out)
	}
	m := regexp.MustCompile(`resolve allowed.test: (\S+)`).FindStringSubmatch(out)
	var addr netip.Addr
	if m != nil {
		addr, _ = netip.ParseAddr(m[1])
	}
	for _, want := range []string{
		`reply "echo ping\n" <nil>`,
		"peer " + addr.String() + ":" + fmt.Sprint(port(up)),
		"second connection refused: true",
		"dial 192.0.2.1:9: true",
		"dial 198.19.255.254:80: true",
		"unshare: operation not permitted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the command's output lacks %q:\n%s", want, out)
		}
	}
	if !fakeV4.Contains(addr) {
		t.Errorf("allowed.test resolved to %v, not one of the resolver's own addresses", addr)
	}

	eventually(t, "the refusals recorded", func() bool {
		_, udp := recorded.find("UDP")
		return len(recorded.all()) >= 4 && udp
	})
	byKey := map[string]string{}
	for _, v := range recorded.all() {
		byKey[fmt.Sprintf("%s %s:%d", v.Method, v.Host, v.Port)] = v.Rule
	}
	for key, rule := range map[string]string{
		"connect 192.0.2.1:9":                          "not in the allow list",
		"connect 198.19.255.254:80":                    "did not give out",
		"connect allowed.test:" + fmt.Sprint(port(up)): "maxConnections",
		"UDP 192.0.2.1:9999":                           "UDP only to their resolver",
	} {
		if !strings.Contains(byKey[key], rule) {
			t.Errorf("recorded %q for %s, want %q; all: %v", byKey[key], key, rule, byKey)
		}
	}
	// With the egress, cshell answers the filter's user-namespace calls:
	// Refused hears of them, not the proxy's record.
	eventually(t, "the refused user namespace told", func() bool { _, ok := refused.find("unshare"); return ok })
	if _, ok := recorded.find("unshare"); ok {
		t.Errorf("the proxy's record heard of a user namespace")
	}

	// The resolver answers allowed names with its own addresses, refuses
	// the rest, and records a refused name once a minute.
	// What follows looks inside the shell's namespace (its factory), while
	// the command waits.
	inside := func(ctx context.Context, a netip.AddrPort) (net.Conn, error) { return s.factory.Dial(ctx, a) }
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return inside(ctx, resolver) // a stream: DNS over TCP
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if a6, err := res.LookupNetIP(ctx, "ip6", "allowed.test"); err != nil || len(a6) != 1 || !fakeV6.Contains(a6[0]) {
		t.Errorf("AAAA allowed.test: %v %v", a6, err)
	}
	if a4, err := res.LookupNetIP(ctx, "ip4", "allowed.test"); err != nil || len(a4) != 1 || a4[0] != addr {
		t.Errorf("A allowed.test again: %v %v, want %v", a4, err, addr)
	}
	for range 2 {
		if a, err := res.LookupNetIP(ctx, "ip4", "denied.test"); err == nil {
			t.Errorf("denied.test resolved: %v", a)
		}
	}
	n := 0
	for _, v := range recorded.all() {
		if v.Method == "DNS" && v.Host == "denied.test" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("a refused name was recorded %d times, want once", n)
	}

	// The proxy inside: CONNECT to the allowed name is carried, another
	// name is refused and recorded.
	proxyAddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p.Port))
	if got := connectThrough(t, inside, proxyAddr, fmt.Sprintf("allowed.test:%d", port(up)), "hello"); got != "echo hello\n" {
		t.Errorf("CONNECT allowed.test: %q", got)
	}
	if got := connectThrough(t, inside, proxyAddr, "denied.test:443", ""); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("CONNECT denied.test: %q", got)
	}
	if v, ok := recorded.find("CONNECT"); !ok || v.Host != "denied.test" || v.Port != 443 {
		t.Errorf("the proxy's refusal: %+v", recorded.all())
	}

	s.StopRelays()
	for _, a := range []netip.AddrPort{proxyAddr, resolver} {
		if c, err := inside(context.Background(), a); err == nil {
			c.Close()
			t.Errorf("%v still listens inside after StopRelays", a)
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Shell().Wait(); err != nil {
		t.Fatal(err)
	}
}

// connectThrough opens a tunnel through the proxy at proxyAddr to dest
// and sends a line through it, returning the answer; with no line, the
// proxy's status line.
func connectThrough(t *testing.T, dial func(context.Context, netip.AddrPort) (net.Conn, error), proxyAddr netip.AddrPort, dest, line string) string {
	t.Helper()
	c, err := dial(context.Background(), proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", dest, dest)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || line == "" {
		return fmt.Sprintf("HTTP/1.1 %d", resp.StatusCode)
	}
	fmt.Fprintf(c, "%s\n", line)
	got, _ := br.ReadString('\n')
	return got
}

// A shell given the proxy but no Refused still answers the filter's
// calls: the user namespace is refused, nothing is told.
func TestStartEgressWithoutRefused(t *testing.T) {
	useResolverPort(t)
	var recorded violations
	s, ir := startInit(t, "unshare", Options{ID: "t",
		Proxy: &Proxy{Port: freePort(t), Rules: mustRules(t, []string{"allowed.test"}, nil), Record: recorded.add}})
	if _, err := s.Shell().Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ir.out.String(), "unshare: operation not permitted") {
		t.Errorf("the command's unshare: %q", ir.out.String())
	}
	if len(recorded.all()) != 0 {
		t.Errorf("recorded %v", recorded.all())
	}
}

// TestStopRelaysLeavesCallsAnswered: once the relays stop (the proxy, the
// egress), a shell that runs on still has the calls its filter hands over
// answered as before, not failed with ENOSYS.
func TestStopRelaysLeavesCallsAnswered(t *testing.T) {
	useResolverPort(t)
	gate := filepath.Join(t.TempDir(), "go")
	var refused violations
	p := &Proxy{Port: freePort(t), Rules: mustRules(t, []string{"example.com"}, nil)}
	s, ir := startInit(t, "gated-unshare", Options{ID: "t", Proxy: p, Refused: refused.add}, gate)
	s.StopRelays()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Shell().Wait(); err != nil {
		t.Fatal(err)
	}
	if out := ir.out.String(); !strings.Contains(out, "unshare: operation not permitted") {
		t.Errorf("a handed-over call after StopRelays: %q, want it refused as before (EPERM)", out)
	}
	eventually(t, "the refusal told", func() bool { _, ok := refused.find("unshare"); return ok })
}
