package policy

import (
	"fmt"
	"net/netip"
	"time"
)

// Rules decide which hosts a shell may reach through its proxy. The
// decision is made on the name the client asked for; deny wins over
// allow. Safe for concurrent use.
type Rules struct {
	allow, deny []HostPattern
}

// NewRules parses allow and deny lists (--allow-host, network.allow,
// network.deny).
func NewRules(allow, deny []string) (*Rules, error) {
	r := &Rules{}
	for _, s := range allow {
		p, err := ParseHostPattern(s)
		if err != nil {
			return nil, err
		}
		r.allow = append(r.allow, p)
	}
	for _, s := range deny {
		p, err := ParseHostPattern(s)
		if err != nil {
			return nil, err
		}
		r.deny = append(r.deny, p)
	}
	return r, nil
}

// Empty reports whether nothing is allowed: such a shell gets no proxy.
func (r *Rules) Empty() bool { return len(r.allow) == 0 }

// Decide says whether host:port may be reached, and names the rule that
// decided.
func (r *Rules) Decide(host string, port int) (bool, string) {
	h, err := NormalizeHost(host)
	if err != nil {
		return false, "not a valid host name"
	}
	for _, p := range r.deny {
		if p.Matches(h, port) {
			return false, "denied by network.deny " + p.String()
		}
	}
	for _, p := range r.allow {
		if p.Matches(h, port) {
			return true, "allowed by " + p.String()
		}
	}
	return false, "not in the allow list"
}

// CheckAddr says whether an address that host resolved to may be dialed.
// Addresses of this machine and its link (loopback, link-local,
// unspecified) are refused unless allowed as literals themselves, so that
// no name can lead to the host's own services or a cloud metadata
// endpoint (DNS rebinding).
func (r *Rules) CheckAddr(host string, a netip.Addr, port int) (bool, string) {
	a = a.Unmap()
	if !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() && !a.IsUnspecified() {
		return true, ""
	}
	if ok, _ := r.Decide(a.String(), port); ok {
		if h, err := NormalizeHost(host); err == nil && h == a.String() {
			return true, "" // the address itself was asked for and allowed
		}
		// A name leading to an allowed address: the address is allowed as
		// a literal, so the name may use it too.
		for _, p := range r.allow {
			if !p.Wildcard && p.Host == a.String() {
				return true, ""
			}
		}
	}
	return false, fmt.Sprintf("%s resolves to %s, an address of this machine or its link; allow %s itself to reach it", host, a, a)
}

// Violation is one refused request, a line of a shell's violations.log.
type Violation struct {
	Time   time.Time `json:"time"`
	Host   string    `json:"host"`
	Port   int       `json:"port"`
	Method string    `json:"method"` // CONNECT, GET…, SOCKS5, expose
	Rule   string    `json:"rule"`
	Hint   string    `json:"hint,omitempty"`
}

// NewViolation records a refusal with the hint that would lift it.
func NewViolation(host string, port int, method, rule string) Violation {
	v := Violation{Time: time.Now().UTC(), Host: host, Port: port, Method: method, Rule: rule}
	if h, err := NormalizeHost(host); err == nil {
		v.Hint = "allow it with --allow-host " + h
	}
	return v
}
