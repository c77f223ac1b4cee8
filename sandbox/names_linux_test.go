package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestNamesTell: a refused name is told once a minute; the memory of
// told names stays bounded.
func TestNamesTell(t *testing.T) {
	n := newNames()
	if !n.tell("a.test") {
		t.Errorf("a first refusal not told")
	}
	if n.tell("a.test") {
		t.Errorf("a refusal told twice within a minute")
	}
	if !n.tell("b.test") {
		t.Errorf("another name's first refusal not told")
	}
	n.told["a.test"] = time.Now().Add(-2 * time.Minute)
	if !n.tell("a.test") {
		t.Errorf("a refusal a minute later not told")
	}
	for i := range 5000 {
		n.tell(fmt.Sprint("n", i, ".test"))
	}
	if len(n.told) > 4097 {
		t.Errorf("%d told names remembered", len(n.told))
	}
}

// TestNamesExists: the names the user gave an address and addresses
// exist without a lookup; an answer is remembered a while.
func TestNamesExists(t *testing.T) {
	n := newNames()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a lookup would fail: every answer below must come without one
	hosts := map[string]netip.Addr{"added.test": netip.MustParseAddr("10.0.0.1")}
	for _, name := range []string{"added.test", "192.0.2.1", "2001:db8::1"} {
		if !n.exists(ctx, name, hosts) {
			t.Errorf("%s does not exist", name)
		}
	}
	n.known["gone.test"] = nameSeen{exists: false, at: time.Now()}
	n.known["here.test"] = nameSeen{exists: true, at: time.Now()}
	if n.exists(ctx, "gone.test", nil) || !n.exists(ctx, "here.test", nil) {
		t.Errorf("remembered answers not taken")
	}
	// An answer too old is asked again; a failed lookup that is not
	// "no such name" lets the dial say.
	n.known["gone.test"] = nameSeen{exists: false, at: time.Now().Add(-time.Minute)}
	if !n.exists(ctx, "gone.test", nil) {
		t.Errorf("a lookup that could not be made counted as no such name")
	}
}

// An address in the IPv6 block that the resolver never makes (its middle
// bytes set) is the resolver's, and names nothing.
func TestNamesNameOutsideItsShape(t *testing.T) {
	n := newNames()
	n.addrs("a.test")
	b := fakeV6.Addr().As16()
	b[10], b[15] = 1, 1
	if name, fake := n.name(netip.AddrFrom16(b)); name != "" || !fake {
		t.Errorf("name(%v) = %q, %v", netip.AddrFrom16(b), name, fake)
	}
}

func TestAsDNSError(t *testing.T) {
	var target *net.DNSError
	e := &net.DNSError{Name: "x.test", IsNotFound: true}
	if !asDNSError(e, &target) || target != e {
		t.Errorf("a *net.DNSError not taken")
	}
	target = nil
	if asDNSError(errors.New("other"), &target) || target != nil {
		t.Errorf("another error taken for a DNS error")
	}
}
