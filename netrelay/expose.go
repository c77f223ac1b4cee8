package netrelay

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// ErrBadExpose marks an --expose value that cannot be used.
var ErrBadExpose = errors.New("bad expose value")

// ParseExpose reads an --expose value: PORT (127.0.0.1:PORT), HOST:PORT,
// or [IPv6]:PORT. HOST is an IP address or localhost. The same port is
// used inside the shell.
func ParseExpose(s string) (netip.AddrPort, error) {
	bad := func(why string) (netip.AddrPort, error) {
		return netip.AddrPort{}, fmt.Errorf("%w %q: %s", ErrBadExpose, s, why)
	}
	s = strings.TrimSpace(s)
	host, port := "127.0.0.1", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		} else if strings.Contains(host, ":") {
			return bad("write an IPv6 address in brackets, as [::1]:5173")
		}
		if host == "" {
			return bad("the address before the colon is empty; write PORT or HOST:PORT")
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || port == "" || port[0] == '+' || port[0] == '-' {
		return bad("the port must be a number from 1 to 65535")
	}
	if n < 1 || n > 65535 {
		return bad("the port must be from 1 to 65535")
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || addr.Zone() != "" {
		return bad("the address must be an IP address such as 127.0.0.1, 0.0.0.0 or [::1], or localhost")
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(n)), nil
}

// Public reports whether an expose address reaches beyond this machine.
func Public(ap netip.AddrPort) bool { return !ap.Addr().IsLoopback() }

// Bind listens on an expose address; a port in use is refused with a
// sentence that names it.
func Bind(ap netip.AddrPort) (*net.TCPListener, error) {
	l, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(ap))
	if err != nil {
		if errors.Is(err, errAddrInUse) {
			return nil, fmt.Errorf("port %d is already in use on %s; stop what listens there or expose another port", ap.Port(), ap.Addr())
		}
		if errors.Is(err, errAddrNotAvail) {
			return nil, fmt.Errorf("cannot listen on %s: no network interface of this machine has the address %s; expose an address it has (ip address lists them) or 127.0.0.1", ap, ap.Addr())
		}
		if errors.Is(err, errAccess) {
			return nil, fmt.Errorf("cannot listen on %s: port %d needs privileges here; expose a port above 1023 (or lower net.ipv4.ip_unprivileged_port_start)", ap, ap.Port())
		}
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se.Err
		}
		return nil, fmt.Errorf("cannot listen on %s: %w", ap, err)
	}
	return l, nil
}
