package policy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Rules decide which hosts a shell may reach through its proxy. The
// decision is made on the name the client asked for; deny wins over
// allow, and over every grant. Safe for concurrent use.
type Rules struct {
	allow, deny []HostPattern
	// grants, asked at every decision, are what users allowed (or
	// refused, answering a prompt) while the shell runs.
	grants func() []Grant
	ask    time.Duration // how long a refused request waits for a grant
	// metadata lets cloud metadata endpoints be decided as any host
	// (network.allowCloudMetadata); otherwise they are refused.
	metadata bool
}

// WithCloudMetadata returns a copy of r that decides cloud metadata
// endpoints as any other host (network.allowCloudMetadata).
func (r *Rules) WithCloudMetadata(allow bool) *Rules {
	c := *r
	c.metadata = allow
	return &c
}

// Grant is a host a user allowed while shells run (`cshell allow`, or
// an answer to a prompt), or refused answering a prompt (Deny): a
// refused request that waits for a grant ends at once.
type Grant struct {
	Pattern HostPattern
	Deny    bool
}

// WithGrants returns a copy of r that also asks grants at each decision,
// and that lets a request the rules refuse wait up to ask for a grant
// (Await).
func (r *Rules) WithGrants(grants func() []Grant, ask time.Duration) *Rules {
	c := *r
	c.grants, c.ask = grants, ask
	return &c
}

// Asks reports how long a refused request may wait for a grant.
func (r *Rules) Asks() time.Duration { return r.ask }

// Await waits up to Asks for host:port to be granted, asking the grants
// every interval; it gives up at once on a deny (the configuration's, or a
// user's answer) and when ctx ends.
func (r *Rules) Await(ctx context.Context, host string, port int) (bool, Reason) {
	deadline := time.Now().Add(r.ask)
	for {
		ok, rule := r.Decide(host, port)
		if ok || !r.Waitable(host, port) || !time.Now().Before(deadline) {
			return ok, rule
		}
		select {
		case <-ctx.Done():
			return false, rule
		case <-time.After(awaitEvery):
		}
	}
}

// awaitEvery is how often a waiting request asks the grants again.
const awaitEvery = 100 * time.Millisecond

// Waitable reports whether a refusal may yet become a grant: grants are
// asked, and nothing denies host:port.
func (r *Rules) Waitable(host string, port int) bool {
	h, err := NormalizeHost(host)
	if err != nil || r.grants == nil || !r.metadata && IsMetadata(h) {
		return false
	}
	for _, p := range r.deny {
		if p.Matches(h, port) {
			return false
		}
	}
	for _, g := range r.liveGrants() {
		if g.Deny && g.Pattern.Matches(h, port) {
			return false
		}
	}
	return true
}

func (r *Rules) liveGrants() []Grant {
	if r.grants == nil {
		return nil
	}
	return r.grants()
}

// RulesOf makes rules of parsed allow and deny lists.
func RulesOf(allow, deny []HostPattern) *Rules {
	return &Rules{allow: slices.Clone(allow), deny: slices.Clone(deny)}
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

// Empty reports whether nothing is allowed, nor ever can be (no grants
// are asked): such a shell gets no proxy.
func (r *Rules) Empty() bool { return len(r.allow) == 0 && r.grants == nil }

// Reason is why the rules decided as they did: a sentence that names the
// rule (Text), and for a refusal what would lift it (Hint; "" when no
// flag would: a cloud metadata endpoint, a name that is none, an address
// a name leads to, which Text names).
type Reason struct {
	Text  string
	Hint  string
	Allow string // the host pattern a grant or --allow-host would need ("" when none would do)
}

func (r Reason) String() string { return r.Text }

// Because is a reason with no hint.
func Because(text string) Reason { return Reason{Text: text} }

// denyHint is the hint of a refusal by network.deny.
const denyHint = "the configuration's network.deny refuses it, and --allow-host cannot lift a deny"

// denied is a refusal by network.deny; notAllowed one that --allow-host
// would lift, naming the host as allowed (an address with the port).
func denied(text string) Reason { return Reason{Text: text, Hint: denyHint} }

func notAllowed(h string, port int, text string) Reason {
	if a, err := netip.ParseAddr(h); err == nil {
		h = netip.AddrPortFrom(a, uint16(port)).String()
	}
	return Reason{Text: text, Hint: "allow it with --allow-host " + h, Allow: h}
}

// Decide says whether host:port may be reached, and why.
func (r *Rules) Decide(host string, port int) (bool, Reason) {
	h, err := NormalizeHost(host)
	if err != nil {
		return false, Because("not a valid host name")
	}
	if !r.metadata && IsMetadata(h) {
		return false, Because(MetadataRule)
	}
	for _, p := range r.deny {
		if p.Matches(h, port) {
			return false, denied("denied by network.deny " + p.String())
		}
	}
	for _, p := range r.allow {
		if p.Matches(h, port) {
			return true, Because("allowed by " + p.String())
		}
	}
	grants := r.liveGrants()
	for _, g := range grants {
		if g.Deny && g.Pattern.Matches(h, port) {
			return false, notAllowed(h, port, "refused by the user ("+g.Pattern.String()+")")
		}
	}
	for _, g := range grants {
		if !g.Deny && g.Pattern.Matches(h, port) {
			return true, Because("granted " + g.Pattern.String())
		}
	}
	return false, notAllowed(h, port, "not in the allow list")
}

// AllowsName says whether host may be reached on some port: the shell's
// resolver answers only such names. A deny of every port refuses it.
func (r *Rules) AllowsName(host string) (bool, Reason) {
	h, err := NormalizeHost(host)
	if err != nil {
		return false, Because("not a valid host name")
	}
	if !r.metadata && IsMetadata(h) {
		return false, Because(MetadataRule)
	}
	for _, p := range r.deny {
		if p.Port == 0 && p.Matches(h, 0) {
			return false, denied("denied by network.deny " + p.String())
		}
	}
	for _, p := range r.allow {
		if p.Matches(h, p.Port) {
			return true, Because("allowed by " + p.String())
		}
	}
	for _, g := range r.liveGrants() {
		if !g.Deny && g.Pattern.Matches(h, g.Pattern.Port) {
			return true, Because("granted " + g.Pattern.String())
		}
	}
	return false, notAllowed(h, 0, "not in the allow list")
}

// CheckAddr says whether an address that host resolved to may be dialed.
// An address denied is refused; so are addresses of this machine and its
// link (see ownAddr) unless allowed as literals themselves, so that no name
// can lead to the host's own services or a cloud metadata endpoint (DNS
// rebinding).
func (r *Rules) CheckAddr(host string, a netip.Addr, port int) (bool, Reason) {
	a = a.Unmap()
	if denied, why := r.DeniesAddr(host, a, port); denied {
		return false, why
	}
	if !r.metadata && IsMetadataAddr(a) {
		return false, Because(host + " resolves to " + a.String() + ", " + MetadataRule)
	}
	if !ownAddr(a) {
		return true, Reason{}
	}
	if ok, _ := r.Decide(a.String(), port); ok {
		if h, err := NormalizeHost(host); err == nil && h == a.String() {
			return true, Reason{} // the address itself was asked for and allowed
		}
		// A name leading to an allowed address: the address is allowed as
		// a literal, so the name may use it too.
		for _, p := range r.allow {
			if !p.Wildcard && p.Host == a.String() {
				return true, Reason{}
			}
		}
		for _, g := range r.liveGrants() {
			if !g.Deny && !g.Pattern.Wildcard && g.Pattern.Host == a.String() {
				return true, Reason{}
			}
		}
	}
	return false, Because(fmt.Sprintf("%s resolves to %s, an address of this machine or its link; allow %s itself to reach it", host, a, a))
}

// DeniesAddr reports whether network.deny refuses an address, whatever
// name (host) leads there.
func (r *Rules) DeniesAddr(host string, a netip.Addr, port int) (bool, Reason) {
	a = a.Unmap()
	for _, p := range r.deny {
		if p.Matches(a.String(), port) {
			return true, denied(fmt.Sprintf("%s resolves to %s, denied by network.deny %s", host, a, p))
		}
	}
	return false, Reason{}
}

// ownAddr reports whether a leads to this machine or its link: loopback,
// link-local, 0.0.0.0/8 (which Linux takes as this machine), or an address
// of one of its interfaces (a server bound to 0.0.0.0 answers there).
func ownAddr(a netip.Addr) bool {
	if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() ||
		a.Is4() && a.As4()[0] == 0 {
		return true
	}
	return slices.Contains(interfaceAddrs(), a)
}

// interfaceAddrs lists the addresses of this machine's interfaces (a
// variable for tests).
var interfaceAddrs = cachedInterfaceAddrs

// The interfaces' addresses, asked of the kernel (a netlink dump, some
// hundred microseconds) at most once a second: every connection a shell
// makes is checked against them.
var ifaces struct {
	mu    sync.Mutex
	at    time.Time
	addrs []netip.Addr
}

func cachedInterfaceAddrs() []netip.Addr {
	ifaces.mu.Lock()
	defer ifaces.mu.Unlock()
	if time.Since(ifaces.at) < time.Second {
		return ifaces.addrs
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ifaces.addrs
	}
	var out []netip.Addr
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, a.Unmap())
			}
		}
	}
	ifaces.addrs, ifaces.at = out, time.Now()
	return out
}

// Violation is one refused request, a line of a shell's violations.log.
type Violation struct {
	Time   time.Time `json:"time"`
	Host   string    `json:"host"`
	Port   int       `json:"port"`
	Method string    `json:"method"` // CONNECT, GET…, SOCKS5, connect, UDP, DNS, unshare, clone, write, privilege, memory
	Rule   string    `json:"rule"`
	Hint   string    `json:"hint,omitempty"`
	Allow  string    `json:"allow,omitempty"` // the pattern that would allow it, for a hint in the reader's words
	// Credential names the credential a request was refused for (the host
	// itself may be reached: no grant lifts it).
	Credential string `json:"credential,omitempty"`
}

// NewViolation records a refusal, with the hint its reason gives.
func NewViolation(host string, port int, method string, why Reason) Violation {
	return Violation{Time: time.Now().UTC(), Host: printable(host, maxHostLen), Port: port, Method: method,
		Rule: printable(why.Text, 2*maxHostLen), Hint: printable(why.Hint, 2*maxHostLen), Allow: printable(why.Allow, maxHostLen+6)}
}

// maxHostLen bounds a recorded host: a DNS name has at most 253
// characters, and a hostile client must not fill the log with one request.
const maxHostLen = 255

// Printable cuts s to max bytes and replaces control characters, as
// recorded violations are written.
func Printable(s string, max int) string { return printable(s, max) }

// printable cuts s to max bytes and replaces control characters, so that a
// recorded name cannot disturb a terminal or the log's lines.
func printable(s string, max int) string {
	cut := len(s) > max
	if cut {
		s = s[:max]
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if cut {
		s += "..."
	}
	return s
}
