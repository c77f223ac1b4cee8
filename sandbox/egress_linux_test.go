package sandbox

import (
	"net/netip"
	"testing"
)

func TestNames(t *testing.T) {
	n := newNames()
	a4, a6 := n.addrs("api.test")
	if !fakeV4.Contains(a4) || !fakeV6.Contains(a6) {
		t.Fatalf("addresses %v %v outside their blocks", a4, a6)
	}
	if b4, b6 := n.addrs("api.test"); b4 != a4 || b6 != a6 {
		t.Errorf("a name got new addresses: %v %v", b4, b6)
	}
	for _, a := range []netip.Addr{a4, a6} {
		if name, fake := n.name(a); name != "api.test" || !fake {
			t.Errorf("name(%v) = %q, %v", a, name, fake)
		}
	}
	o4, _ := n.addrs("other.test")
	if o4 == a4 {
		t.Errorf("two names share %v", a4)
	}
	if name, fake := n.name(netip.MustParseAddr("198.19.200.200")); name != "" || !fake {
		t.Errorf("an address never given: %q %v", name, fake)
	}
	if _, fake := n.name(netip.MustParseAddr("198.18.0.2")); fake {
		t.Errorf("a real address taken for one of the resolver's")
	}
	// Past the block's size the oldest address is given again, and its
	// old name forgotten.
	for i := 0; i < maxNames; i++ {
		n.addrs("n" + string(rune('a'+i%26)) + netip.AddrFrom4([4]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}).String())
	}
	if len(n.byName) > maxNames || len(n.byNum) > maxNames {
		t.Errorf("unbounded: %d names", len(n.byName))
	}
	if name, _ := n.name(a4); name == "api.test" {
		t.Errorf("a reused address still names its old name")
	}
}
