package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// HostPattern is one entry of an allowlist: an exact host ("example.com"),
// every subdomain of a domain ("*.example.com"), either with an optional
// port ("host:443"). Port 0 means any port.
type HostPattern struct {
	Host     string // lower case, without the "*." of a wildcard
	Wildcard bool
	Port     int
}

// ParseHostPattern checks and parses an allowlist entry.
func ParseHostPattern(s string) (HostPattern, error) {
	var p HostPattern
	host := strings.ToLower(strings.TrimSpace(s))
	if host == "" {
		return p, fmt.Errorf("empty host pattern")
	}
	if h, port, ok := strings.Cut(host, ":"); ok {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return p, fmt.Errorf("host pattern %q: port must be 1-65535", s)
		}
		host, p.Port = h, n
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, p.Wildcard = rest, true
	}
	if host == "" || strings.ContainsAny(host, "*/ @") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") || strings.Contains(host, "..") {
		return p, fmt.Errorf("host pattern %q: write a host name such as example.com or *.example.com", s)
	}
	p.Host = host
	return p, nil
}

// Matches reports whether a connection to host:port is admitted.
func (p HostPattern) Matches(host string, port int) bool {
	if p.Port != 0 && p.Port != port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if p.Wildcard {
		return strings.HasSuffix(host, "."+p.Host)
	}
	return host == p.Host
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
