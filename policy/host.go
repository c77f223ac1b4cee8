package policy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// HostPattern is one entry of an allowlist: an exact host ("example.com"),
// every subdomain of a domain ("*.example.com"), or an IP address as
// written ("127.0.0.1", "[::1]"), each with an optional port ("host:443").
// Port 0 means any port.
type HostPattern struct {
	Host     string // normalised (NormalizeHost), without the "*." of a wildcard
	Wildcard bool
	Port     int
}

// NormalizeHost puts a host name in the form rules compare: lower case,
// no trailing dot, international names in their ASCII (IDNA) form, IP
// addresses in their canonical spelling without brackets.
func NormalizeHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.TrimSpace(h), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("host %q: zoned addresses are not supported", h)
		}
		return a.Unmap().String(), nil
	}
	if h == "" || strings.ContainsAny(h, "*/ @:[]") || strings.HasPrefix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("host %q is not a host name", h)
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return "", fmt.Errorf("host %q is not a valid name: %w", h, err)
	}
	return strings.ToLower(a), nil
}

// ParseHostPattern checks and parses an allowlist entry.
func ParseHostPattern(s string) (HostPattern, error) {
	var p HostPattern
	host := strings.TrimSpace(s)
	if host == "" {
		return p, fmt.Errorf("empty host pattern")
	}
	if scheme, rest, ok := strings.Cut(host, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, ".:/[") {
		name, _, _ := strings.Cut(rest, "/")
		return p, fmt.Errorf("host pattern %q is a URL; give the host alone, such as %s", s, name)
	}
	if ap, err := netip.ParseAddrPort(host); err == nil { // 10.0.0.1:22, [::1]:443
		if ap.Port() == 0 {
			return p, fmt.Errorf("host pattern %q: port must be 1-65535", s)
		}
		return HostPattern{Host: ap.Addr().Unmap().String(), Port: int(ap.Port())}, nil
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil && !strings.Contains(host, "]:") {
		h, err := NormalizeHost(host) // ::1, [::1], 10.0.0.1
		if err != nil {
			return p, fmt.Errorf("host pattern %q: %w", s, err)
		}
		return HostPattern{Host: h}, nil
	}
	if h, port, ok := strings.Cut(host, ":"); ok {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return p, fmt.Errorf("host pattern %q: port must be 1-65535", s)
		}
		host, p.Port = h, n
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, p.Wildcard = rest, true
	}
	if host == "" || strings.HasSuffix(host, ".") && strings.HasSuffix(host, "..") {
		return p, fmt.Errorf("host pattern %q: write a host name such as example.com or *.example.com", s)
	}
	h, err := NormalizeHost(host)
	if err != nil || strings.ContainsAny(host, "*") {
		return p, fmt.Errorf("host pattern %q: write a host name such as example.com or *.example.com", s)
	}
	if p.Wildcard {
		if _, err := netip.ParseAddr(h); err == nil {
			return p, fmt.Errorf("host pattern %q: a wildcard applies to names, not addresses", s)
		}
	}
	p.Host = h
	return p, nil
}

// Matches reports whether a connection to host:port is admitted. host is
// normalised first; an unparsable host matches nothing.
func (p HostPattern) Matches(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	h, err := NormalizeHost(host)
	if err != nil {
		return false
	}
	if p.Wildcard {
		return strings.HasSuffix(h, "."+p.Host)
	}
	return h == p.Host
}

// Covers reports whether every host:port admitted by q is admitted by p.
func (p HostPattern) Covers(q HostPattern) bool {
	if p.Port != 0 && p.Port != q.Port {
		return false
	}
	if !p.Wildcard {
		return !q.Wildcard && q.Host == p.Host
	}
	return (q.Wildcard && q.Host == p.Host) || strings.HasSuffix(q.Host, "."+p.Host)
}

// String writes the pattern as a user would.
func (p HostPattern) String() string {
	h := p.Host
	if p.Wildcard {
		h = "*." + h
	}
	if p.Port != 0 {
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		return h + ":" + strconv.Itoa(p.Port)
	}
	return h
}
