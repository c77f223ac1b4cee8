package container

import (
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The egress by the kernel (Spec.Redirect): the shell's network namespace
// gets a route out that leads to its own loopback, and a table of nftables
// rules sends everything that would leave there instead: every TCP
// connection to the egress's listener (EgressPort, on 127.0.0.1 and ::1),
// which learns where it was going from the connection itself
// (SO_ORIGINAL_DST); every IPv4 datagram to port 53 to the shell's
// resolver; every other datagram to a sink (SinkPort). Nothing else
// leaves loopback (dropped: the sender hears EPERM). Connections inside
// loopback are left alone, and untracked, so they cost what they cost
// without cshell and fill no table. The rules are made by the container's
// init, which alone holds CAP_NET_ADMIN over the namespace (the shell's
// processes hold no capability), before the command exists.
const (
	EgressPort = 1 // TCP
	SinkPort   = 1 // UDP
)

// ResolverIP is the address of the shell's resolver (port 53, UDP and TCP).
var ResolverIP = net.IPv4(127, 0, 0, 53).To4()

// redirect brings loopback up, routes everything to it, and installs the
// table (see above).
func redirect(ns int) error {
	h := &netlink.Handle{} // this thread's namespace
	opts := []nftables.ConnOption{}
	if ns >= 0 {
		var err error
		if h, err = netlink.NewHandleAt(netns.NsHandle(ns), unix.NETLINK_ROUTE); err != nil {
			return fmt.Errorf("netlink in the shell's network namespace: %w", err)
		}
		defer h.Close()
		opts = append(opts, nftables.WithNetNSFd(ns))
	}
	// Loopback is the first device of every network namespace (the
	// kernel's LOOPBACK_IFINDEX): no need to look it up.
	lo := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("bring loopback up: %w", err)
	}
	_, all4, _ := net.ParseCIDR("0.0.0.0/0")
	if err := h.RouteAdd(&netlink.Route{LinkIndex: lo.Attrs().Index, Dst: all4, Src: net.IPv4(127, 0, 0, 1).To4()}); err != nil {
		return fmt.Errorf("route to loopback: %w", err)
	}
	_, all6, _ := net.ParseCIDR("::/0")
	v6 := h.RouteAdd(&netlink.Route{LinkIndex: lo.Attrs().Index, Dst: all6, Src: net.IPv6loopback}) == nil
	c, err := nftables.New(append(opts, nftables.AsLasting())...)
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	defer c.CloseLasting()
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: "cshell"})
	chain := func(name string, typ nftables.ChainType, prio *nftables.ChainPriority) *nftables.Chain {
		return c.AddChain(&nftables.Chain{Name: name, Table: t, Type: typ, Hooknum: nftables.ChainHookOutput, Priority: prio})
	}
	rule := func(ch *nftables.Chain, parts ...[]expr.Any) {
		var e []expr.Any
		for _, p := range parts {
			e = append(e, p...)
		}
		c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: e})
	}
	do := func(e ...expr.Any) []expr.Any { return e }

	// Untracked: loopback's own traffic, but for the answers of the
	// egress, the sink and the resolver (their connections were
	// translated: the answers are translated back).
	raw := chain("raw", nftables.ChainTypeFilter, nftables.ChainPriorityRaw)
	for _, fam := range families(v6) {
		rule(raw, fam.loopback(expr.CmpOpEq), l4(unix.IPPROTO_TCP), port(0, expr.CmpOpNeq, EgressPort), do(&expr.Notrack{}))
		rule(raw, fam.loopback(expr.CmpOpEq), l4(unix.IPPROTO_UDP), port(0, expr.CmpOpNeq, SinkPort), port(0, expr.CmpOpNeq, 53), do(&expr.Notrack{}))
	}
	nat := chain("nat", nftables.ChainTypeNAT, nftables.ChainPriorityNATDest)
	for _, fam := range families(v6) {
		rule(nat, fam.loopback(expr.CmpOpEq), do(&expr.Verdict{Kind: expr.VerdictReturn}))
	}
	rule(nat, nfproto(unix.NFPROTO_IPV4), l4(unix.IPPROTO_UDP), port(2, expr.CmpOpEq, 53), do(
		&expr.Immediate{Register: 1, Data: ResolverIP},
		&expr.Immediate{Register: 2, Data: binaryutil.BigEndian.PutUint16(53)},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1, RegProtoMin: 2, Specified: true}))
	rule(nat, l4(unix.IPPROTO_UDP), redir(SinkPort))
	rule(nat, l4(unix.IPPROTO_TCP), redir(EgressPort))
	// After the translation: whatever still leaves loopback goes nowhere.
	filter := chain("filter", nftables.ChainTypeFilter, nftables.ChainPriorityFilter)
	for _, fam := range families(true) {
		rule(filter, fam.loopback(expr.CmpOpNeq), do(&expr.Verdict{Kind: expr.VerdictDrop}))
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	return nil
}

// family matches packets of one IP version to or not to loopback.
type family struct {
	proto  byte
	offset uint32 // of the destination address in the network header
	mask   []byte
	value  []byte
}

var (
	ipv4 = family{unix.NFPROTO_IPV4, 16, []byte{255, 0, 0, 0}, []byte{127, 0, 0, 0}}
	ipv6 = family{unix.NFPROTO_IPV6, 24, nil, net.IPv6loopback}
)

func families(v6 bool) []family {
	if v6 {
		return []family{ipv4, ipv6}
	}
	return []family{ipv4}
}

func (f family) loopback(op expr.CmpOp) []expr.Any {
	e := append(nfproto(f.proto), &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: f.offset, Len: uint32(len(f.value))})
	if f.mask != nil {
		e = append(e, &expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: uint32(len(f.mask)), Mask: f.mask, Xor: make([]byte, len(f.mask))})
	}
	return append(e, &expr.Cmp{Op: op, Register: 1, Data: f.value})
}

// nfproto and l4 match the packet's IP version and transport (the meta
// expression; both leave register 1 holding it).
func nfproto(p byte) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}}}
}

func l4(p byte) []expr.Any {
	return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1}, &expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{p}}}
}

// redir sends the packet to this port of the namespace's own loopback.
func redir(p uint16) []expr.Any {
	return []expr.Any{&expr.Immediate{Register: 1, Data: binaryutil.BigEndian.PutUint16(p)},
		&expr.Redir{RegisterProtoMin: 1, Flags: unix.NF_NAT_RANGE_PROTO_SPECIFIED}}
}

// port compares the transport header's source (offset 0) or destination
// (2) port.
func port(offset uint32, op expr.CmpOp, p uint16) []expr.Any {
	return []expr.Any{&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: offset, Len: 2},
		&expr.Cmp{Op: op, Register: 1, Data: binaryutil.BigEndian.PutUint16(p)}}
}
