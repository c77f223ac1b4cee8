package policy

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestRulesDecide(t *testing.T) {
	r, err := NewRules([]string{"example.test", "*.example.test", "api.other.test:443", "127.0.0.1"},
		[]string{"secret.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		port int
		ok   bool
		rule string
	}{
		{"example.test", 80, true, "allowed by example.test"},
		{"EXAMPLE.test.", 443, true, "allowed by example.test"},
		{"a.b.example.test", 443, true, "allowed by *.example.test"},
		{"secret.example.test", 443, false, "denied by network.deny secret.example.test"},
		{"api.other.test", 443, true, "allowed by api.other.test:443"},
		{"api.other.test", 80, false, "not in the allow list"},
		{"example.test.evil.org", 443, false, "not in the allow list"},
		{"127.0.0.1", 8080, true, "allowed by 127.0.0.1"},
		{"127.0.0.2", 8080, false, "not in the allow list"},
		{"bad host", 80, false, "not a valid host name"},
	} {
		ok, rule := r.Decide(tc.host, tc.port)
		if ok != tc.ok || rule.Text != tc.rule {
			t.Errorf("Decide(%q, %d) = %v %q, want %v %q", tc.host, tc.port, ok, rule, tc.ok, tc.rule)
		}
	}
	if (&Rules{}).Empty() != true || r.Empty() {
		t.Error("Empty")
	}
}

func TestRulesCheckAddr(t *testing.T) {
	r, _ := NewRules([]string{"*.example.test", "localhost", "127.0.0.1:9000"}, nil)
	for _, tc := range []struct {
		host string
		addr string
		port int
		ok   bool
	}{
		{"www.example.test", "93.184.216.34", 443, true},
		{"www.example.test", "127.0.0.1", 443, false},      // rebinding to the host
		{"www.example.test", "169.254.169.254", 80, false}, // cloud metadata
		{"www.example.test", "::1", 443, false},
		{"www.example.test", "fe80::1", 443, false},
		{"www.example.test", "0.0.0.0", 443, false},
		{"localhost", "127.0.0.1", 80, false},  // a name, not the literal
		{"localhost", "127.0.0.1", 9000, true}, // the literal is allowed on 9000
		{"127.0.0.1", "127.0.0.1", 9000, true},
		{"www.example.test", "10.1.2.3", 443, true},
	} {
		ok, rule := r.CheckAddr(tc.host, netip.MustParseAddr(tc.addr), tc.port)
		if ok != tc.ok {
			t.Errorf("CheckAddr(%q, %s, %d) = %v (%s), want %v", tc.host, tc.addr, tc.port, ok, rule, tc.ok)
		}
		if !ok && tc.addr != "169.254.169.254" && !strings.Contains(rule.Text, "allow "+tc.addr+" itself") {
			t.Errorf("rule %q gives no hint", rule)
		}
	}
}

// A cloud metadata endpoint is refused whatever allows it, by name or by
// address, unless network.allowCloudMetadata lets the allow list decide;
// its refusal suggests nothing.
func TestCloudMetadataRefused(t *testing.T) {
	r, _ := NewRules([]string{"169.254.169.254", "metadata.google.internal", "100.100.100.200:80", "*.example.test"}, nil)
	r = r.WithGrants(func() []Grant { return []Grant{{Pattern: HostPattern{Host: "fd00:ec2::254"}}} }, time.Minute)
	for _, host := range []string{"169.254.169.254", "metadata.google.internal", "METADATA.GOOGLE.INTERNAL.", "100.100.100.200", "fd00:ec2::254"} {
		if ok, rule := r.Decide(host, 80); ok || rule.Text != MetadataRule {
			t.Errorf("Decide(%s) = %v, %q", host, ok, rule)
		}
		if ok, _ := r.AllowsName(host); ok {
			t.Errorf("AllowsName(%s)", host)
		}
		if r.Waitable(host, 80) {
			t.Errorf("Waitable(%s): no grant may open it", host)
		}
		if _, why := r.Decide(host, 80); why.Hint != "" {
			t.Errorf("a metadata refusal suggests %q", why.Hint)
		}
	}
	if ok, _ := r.CheckAddr("x.example.test", netip.MustParseAddr("100.100.100.200"), 80); ok {
		t.Error("a name resolving to a metadata address was let through")
	}
	m := r.WithCloudMetadata(true)
	if ok, _ := m.Decide("169.254.169.254", 80); !ok {
		t.Error("with network.allowCloudMetadata the allow list decides")
	}
	if ok, _ := m.Decide("metadata.goog", 80); ok {
		t.Error("with network.allowCloudMetadata, an endpoint not allowed stays refused")
	}
}

func FuzzRules(f *testing.F) {
	for _, s := range []string{"example.test", "*.example.test", "a.b.example.test", "EXAMPLE.TEST.", "127.0.0.1", "[::1]", "xn--bcher-kva.example", "bücher.example", "*.", ""} {
		f.Add(s, s, 443)
	}
	f.Fuzz(func(t *testing.T, pattern, host string, port int) {
		r, err := NewRules([]string{pattern}, nil)
		if err != nil {
			return
		}
		ok, _ := r.Decide(host, port)
		// Deny of the same pattern always wins.
		d, _ := NewRules([]string{pattern}, []string{pattern})
		if ok2, _ := d.Decide(host, port); ok2 {
			t.Fatalf("deny %q did not beat allow for %q", pattern, host)
		}
		// Normalising the host first changes nothing.
		if h, err := NormalizeHost(host); err == nil {
			if again, _ := r.Decide(h, port); again != ok {
				t.Fatalf("Decide(%q) = %v but Decide(%q) = %v", host, ok, h, again)
			}
		}
	})
}

// TestCheckAddrOwnAndDenied checks the addresses a name may not lead to:
// 0.0.0.0/8, this machine's interface addresses, and denied addresses.
func TestCheckAddrOwnAndDenied(t *testing.T) {
	old := interfaceAddrs
	interfaceAddrs = func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("192.0.2.2")} }
	defer func() { interfaceAddrs = old }()
	r, err := NewRules([]string{"ok.test", "192.0.2.3"}, []string{"198.51.100.7"})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"203.0.113.9": true, "0.0.0.1": false, "0.255.0.1": false, "192.0.2.2": false,
		"198.51.100.7": false, "::ffff:198.51.100.7": false, "127.0.0.2": false,
	} {
		if ok, why := r.CheckAddr("ok.test", netip.MustParseAddr(addr), 443); ok != want {
			t.Errorf("ok.test -> %s: %v (%s), want %v", addr, ok, why, want)
		}
	}
}

// TestViolationHints checks that a refusal's hint names what would lift
// it, or nothing when --allow-host cannot: it comes from the decision,
// not from the sentence.
func TestViolationHints(t *testing.T) {
	r, err := NewRules([]string{"ok.test"}, []string{"bad.test"})
	if err != nil {
		t.Fatal(err)
	}
	granted := r.WithGrants(func() []Grant { return []Grant{{Pattern: HostPattern{Host: "no.test"}, Deny: true}} }, 0)
	decided := func(ok bool, why Reason) Reason { return why }
	for _, tt := range []struct {
		name string
		why  Reason
		hint string
	}{
		{"a name", decided(r.Decide("example.com", 8080)), "allow it with --allow-host example.com"},
		{"an address", decided(r.Decide("127.0.0.1", 8080)), "allow it with --allow-host 127.0.0.1:8080"},
		{"an IPv6 address", decided(r.Decide("::1", 8080)), "allow it with --allow-host [::1]:8080"},
		{"a name for the resolver", decided(r.AllowsName("example.com")), "allow it with --allow-host example.com"},
		{"refused by the user", decided(granted.Decide("no.test", 443)), "allow it with --allow-host no.test"},
		{"a deny", decided(r.Decide("bad.test", 443)), denyHint},
		{"a deny by address", decided(r.DeniesAddr("x.test", netip.MustParseAddr("203.0.113.1"), 443)), ""},
		{"a name leading here", decided(r.CheckAddr("ok.test", netip.MustParseAddr("127.0.0.1"), 8080)), ""},
		{"metadata", decided(r.Decide("169.254.169.254", 80)), ""},
		{"no name", decided(r.Decide("bad host", 80)), ""},
	} {
		if tt.why.Hint != tt.hint {
			t.Errorf("%s (%s): hint %q, want %q", tt.name, tt.why.Text, tt.why.Hint, tt.hint)
		}
		if v := NewViolation("h", 1, "CONNECT", tt.why); v.Rule != tt.why.Text || v.Hint != tt.hint {
			t.Errorf("%s: recorded as %+v", tt.name, v)
		}
	}
	if _, why := (&Rules{deny: []HostPattern{{Host: "203.0.113.1"}}}).DeniesAddr("x.test", netip.MustParseAddr("203.0.113.1"), 443); why.Hint != denyHint {
		t.Errorf("a deny by address: hint %q", why.Hint)
	}
	v := NewViolation(strings.Repeat("a.", 20000)+"com\x00\x1b[2J", 443, "CONNECT", Because("not in the allow list"))
	if len(v.Host) > maxHostLen+3 || strings.ContainsAny(v.Host, "\x00\x1b") {
		t.Errorf("a hostile host is recorded as %d bytes: %.80q", len(v.Host), v.Host)
	}
}
