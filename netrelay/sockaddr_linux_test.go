package netrelay

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseSockaddr(t *testing.T) {
	v4 := make([]byte, 16)
	binary.NativeEndian.PutUint16(v4, unix.AF_INET)
	binary.BigEndian.PutUint16(v4[2:], 8080)
	copy(v4[4:], []byte{198, 18, 0, 2})
	v6 := make([]byte, 28)
	binary.NativeEndian.PutUint16(v6, unix.AF_INET6)
	binary.BigEndian.PutUint16(v6[2:], 443)
	a := netip.MustParseAddr("fd00::7").As16()
	copy(v6[8:], a[:])
	unixAddr := make([]byte, 16)
	binary.NativeEndian.PutUint16(unixAddr, unix.AF_UNIX)
	for _, tc := range []struct {
		b    []byte
		want string
		ok   bool
	}{{v4, "198.18.0.2:8080", true}, {v6, "[fd00::7]:443", true}, {unixAddr, "", false}, {v6[:16], "", false}} {
		got, ok := parseSockaddr(tc.b)
		if ok != tc.ok || (ok && got.String() != tc.want) {
			t.Errorf("parseSockaddr(%x) = %v, %v", tc.b, got, ok)
		}
	}
}
