package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// The shell's way out for programs that ignore the proxy variables: its
// own resolver on 127.0.0.53 (the container's /etc/resolv.conf names it),
// which answers allowed names with addresses of its own (fakeV4, fakeV6),
// and the egress, which makes the connects the syscall filter hands over:
// to one of those addresses as the name behind it, to any other address
// as that address, each by the same rules as the proxy.

// ResolverAddr is the shell's resolver, inside its namespace.
var ResolverAddr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.53"), 53)

// The resolver's addresses stand for names: 198.19.0.0/16 (a block kept
// for benchmark networks, RFC 2544, which no Internet host has) and a
// unique local IPv6 prefix (fd63:7368:656c:6c00::/64, "cshell").
var (
	fakeV4 = netip.MustParsePrefix("198.19.0.0/16")
	fakeV6 = netip.MustParsePrefix("fd63:7368:656c:6c00::/64")
)

// names maps the resolver's addresses to names and back; bounded (the
// oldest address is given again past the block's size).
type names struct {
	mu     sync.Mutex
	byName map[string]uint32
	byNum  map[uint32]string
	next   uint32
	known  map[string]nameSeen  // whether a name exists on this machine
	told   map[string]time.Time // names refused lately: recorded once a minute
}

type nameSeen struct {
	exists bool
	at     time.Time
}

const maxNames = 1<<16 - 2

func newNames() *names {
	return &names{byName: map[string]uint32{}, byNum: map[uint32]string{}, known: map[string]nameSeen{}, told: map[string]time.Time{}}
}

// addrs returns the name's two addresses, making them on first use.
func (n *names) addrs(name string) (v4, v6 netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	num, ok := n.byName[name]
	if !ok {
		n.next = n.next%maxNames + 1
		num = n.next
		if old, ok := n.byNum[num]; ok {
			delete(n.byName, old)
		}
		n.byName[name], n.byNum[num] = num, name
	}
	b4 := fakeV4.Addr().As4()
	b4[2], b4[3] = byte(num>>8), byte(num)
	b6 := fakeV6.Addr().As16()
	b6[14], b6[15] = byte(num>>8), byte(num)
	return netip.AddrFrom4(b4), netip.AddrFrom16(b6)
}

// name is the name behind one of the resolver's addresses; fake reports
// whether the address is in their blocks at all.
func (n *names) name(a netip.Addr) (name string, fake bool) {
	var num uint32
	switch {
	case fakeV4.Contains(a):
		b := a.As4()
		num = uint32(b[2])<<8 | uint32(b[3])
	case fakeV6.Contains(a):
		b := a.As16()
		if b[8]|b[9]|b[10]|b[11]|b[12]|b[13] != 0 {
			return "", true
		}
		num = uint32(b[14])<<8 | uint32(b[15])
	default:
		return "", false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byNum[num], true
}

// tell reports whether a refused name is to be recorded now: once a
// minute (a resolver library asks A and AAAA, and asks again).
func (n *names) tell(name string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t, ok := n.told[name]; ok && time.Since(t) < time.Minute {
		return false
	}
	if len(n.told) > 4096 {
		clear(n.told)
	}
	n.told[name] = time.Now()
	return true
}

// exists asks this machine whether name has an address, remembering the
// answer a while.
func (n *names) exists(ctx context.Context, name string, hosts map[string]netip.Addr) bool {
	if _, ok := hosts[name]; ok {
		return true
	}
	if a, err := netip.ParseAddr(name); err == nil && a.IsValid() {
		return true
	}
	n.mu.Lock()
	seen, ok := n.known[name]
	n.mu.Unlock()
	if ok && time.Since(seen.at) < 30*time.Second {
		return seen.exists
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	var dnsErr *net.DNSError
	exists := err == nil && len(addrs) > 0
	if err != nil && (!asDNSError(err, &dnsErr) || !dnsErr.IsNotFound) {
		return true // unknown for now: let the dial say
	}
	n.mu.Lock()
	if len(n.known) > 4096 {
		clear(n.known)
	}
	n.known[name] = nameSeen{exists: exists, at: time.Now()}
	n.mu.Unlock()
	return exists
}

func asDNSError(err error, target **net.DNSError) bool {
	e, ok := err.(*net.DNSError)
	if ok {
		*target = e
	}
	return ok
}

// prepareEgress starts the shell's resolver and its egress, before the
// command runs.
func (s *Sandbox) prepareEgress(ctx context.Context, p *Proxy, maxConns int) (*netrelay.Egress, error) {
	n := newNames()
	record := func(v policy.Violation) {
		if p.Record != nil {
			p.Record(v)
		}
	}
	dial := func(ctx context.Context, host string, port int) (net.Conn, error) {
		c, err := dialChecked(ctx, p.Rules, p.Hosts, host, port)
		var ref *netrelay.Refusal
		if errors.As(err, &ref) {
			record(policy.NewViolation(host, port, "connect", policy.Reason{Text: ref.Rule, Hint: ref.Hint, Allow: ref.Allow}))
		}
		return c, err
	}
	if p.broker != nil {
		dial = s.brokered(ctx, p.broker, dial)
	}
	eg := &netrelay.Egress{
		Factory: s.factory,
		Port:    container.EgressPort, SinkPort: container.SinkPort,
		Decide: func(ctx context.Context, dest netip.AddrPort) (string, bool) {
			a := dest.Addr().Unmap()
			host := a.String()
			if name, fake := n.name(a); fake {
				if name == "" {
					record(policy.NewViolation(host, int(dest.Port()), "connect", policy.Because("an address the shell's resolver did not give out")))
					return "", false
				}
				host = name
			}
			ok, why := p.decide(ctx, host, int(dest.Port()))
			if !ok {
				record(policy.NewViolation(host, int(dest.Port()), "connect", why))
			}
			return host, ok
		},
		Dial: dial,
		Max:  maxConns,
		OverMax: func(dest netip.AddrPort, open int) {
			host := dest.Addr().Unmap().String()
			if name, fake := n.name(dest.Addr().Unmap()); fake && name != "" {
				host = name
			}
			if n.tell(fmt.Sprintf("max %s:%d", host, dest.Port())) {
				record(policy.NewViolation(host, int(dest.Port()), "connect", policy.Reason{
					Text: fmt.Sprintf("the shell has %d connections open, as many as shells.maxConnections allows", open),
					Hint: "end some of them, or raise shells.maxConnections in the configuration"}))
			}
		},
		UDPRefused: func(from, to netip.AddrPort) {
			if s.tracker == nil {
				return
			}
			dest, ok := s.tracker.OriginalUDP(from, to)
			if !ok {
				return
			}
			a := dest.Addr().Unmap()
			host := a.String()
			if name, fake := n.name(a); fake && name != "" {
				host = name
			}
			if n.tell("udp " + netip.AddrPortFrom(a, dest.Port()).String()) {
				record(policy.NewViolation(host, int(dest.Port()), "UDP", policy.Because("shells send UDP only to their resolver (DNS)")))
			}
		},
	}
	if err := eg.Serve(ctx); err != nil {
		return nil, fmt.Errorf("start the shell's egress: %w", err)
	}
	res := &netrelay.Resolver{TTL: 30, Answer: func(ctx context.Context, name string, v6 bool) ([]netip.Addr, bool) {
		h, err := policy.NormalizeHost(name)
		if err != nil {
			return nil, false
		}
		if ok, why := p.Rules.AllowsName(h); !ok {
			// With grants awaited, a name resolves so that its connect
			// can wait for one: to an address of the resolver's own, with
			// no lookup on this machine (a name that is not allowed never
			// leaves the shell: DNS is a way out, and an oracle of the
			// host's names). Else it does not exist for the shell.
			if p.Rules.Asks() <= 0 || !p.Rules.Waitable(h, 0) {
				if n.tell(h) {
					record(policy.NewViolation(h, 0, "DNS", why))
				}
				return nil, false
			}
		} else if !n.exists(ctx, h, p.Hosts) {
			return nil, false
		}
		a4, a6 := n.addrs(h)
		if v6 {
			return []netip.Addr{a6}, true
		}
		return []netip.Addr{a4}, true
	}}
	udp, err := s.factory.ListenUDP(ResolverAddr)
	if err != nil {
		return nil, fmt.Errorf("start the shell's resolver: %w", err)
	}
	tcp, err := s.factory.Listen(ResolverAddr)
	if err != nil {
		udp.Close()
		return nil, fmt.Errorf("start the shell's resolver: %w", err)
	}
	s.relays.Add(2)
	go func() { defer s.relays.Done(); res.ServeUDP(ctx, udp) }()
	go func() { defer s.relays.Done(); res.ServeTCP(ctx, tcp) }()
	return eg, nil
}

// serveCalls answers the calls the filter hands over on listener until
// the sandbox closes (not when its relays stop: a shell that runs on must
// still have its calls answered): the connects go to the egress (which
// ends with the relays, ctx), a refused user namespace to refused, the
// opens with write intent to the judge of refused writes.
func (s *Sandbox) serveCalls(ctx context.Context, eg *netrelay.Egress, listener *os.File, fsys policy.Filesystem, refused func(policy.Violation)) {
	var told *writes
	if refused != nil {
		told = newWrites(fsys, refused)
	}
	done, end := context.WithCancel(context.Background())
	s.endCalls = end
	s.calls.Add(1)
	go func() {
		defer s.calls.Done()
		calls := container.Calls{
			Userns: func(call string) {
				if refused != nil {
					refused(usernsViolation(call))
				}
			},
		}
		if told != nil {
			calls.Open, calls.Refused = told.judge, told.refused
		}
		container.ServeCalls(listener, calls, done.Done())
	}()
}
