package netrelay

import (
	"encoding/binary"
	"net/netip"
	"os"
	"sync"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Conntrack reads a shell's connection tracking through a netlink socket
// (netfilter) its container's init opened in its namespace: where a
// datagram the egress's sink got was first sent, before the rules
// translated it. One question at a time.
type Conntrack struct {
	mu  sync.Mutex
	f   *os.File
	seq uint32
}

// NewConntrack takes the socket; Close closes it.
func NewConntrack(f *os.File) *Conntrack { return &Conntrack{f: f} }

// Close closes the socket.
func (c *Conntrack) Close() error { return c.f.Close() }

// ctnetlink's numbers (linux/netfilter/nfnetlink_conntrack.h).
const (
	ctGet        = 1<<8 | 1 // NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_CT_GET
	ctTupleOrig  = 1
	ctTupleReply = 2
	ctTupleIP    = 1
	ctTupleProto = 2
	ctIPv4Src    = 1
	ctIPv4Dst    = 2
	ctIPv6Src    = 3
	ctIPv6Dst    = 4
	ctProtoNum   = 1
	ctProtoSrc   = 2
	ctProtoDst   = 3
)

// OriginalUDP is where a UDP datagram that arrived at to (inside) from
// from was first sent; false when the table has no such flow.
func (c *Conntrack) OriginalUDP(from, to netip.AddrPort) (netip.AddrPort, bool) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	to = netip.AddrPortFrom(to.Addr().Unmap(), to.Port())
	if from.Addr().Is4() != to.Addr().Is4() {
		return netip.AddrPort{}, false
	}
	family, src, dst := byte(unix.AF_INET), uint16(ctIPv4Src), uint16(ctIPv4Dst)
	if !from.Addr().Is4() {
		family, src, dst = unix.AF_INET6, ctIPv6Src, ctIPv6Dst
	}
	// The answer's direction: from the port inside back to the sender.
	ae := netlink.NewAttributeEncoder()
	ae.Nested(ctTupleReply, func(ae *netlink.AttributeEncoder) error {
		ae.Nested(ctTupleIP, func(ae *netlink.AttributeEncoder) error {
			ae.Bytes(src, to.Addr().AsSlice())
			ae.Bytes(dst, from.Addr().AsSlice())
			return nil
		})
		ae.Nested(ctTupleProto, func(ae *netlink.AttributeEncoder) error {
			ae.Uint8(ctProtoNum, unix.IPPROTO_UDP)
			ae.Bytes(ctProtoSrc, binary.BigEndian.AppendUint16(nil, to.Port()))
			ae.Bytes(ctProtoDst, binary.BigEndian.AppendUint16(nil, from.Port()))
			return nil
		})
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		return netip.AddrPort{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	msg := make([]byte, unix.NLMSG_HDRLEN+4, unix.NLMSG_HDRLEN+4+len(attrs))
	binary.NativeEndian.PutUint16(msg[4:], ctGet)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(msg[8:], c.seq)
	msg[16] = family // nfgenmsg: family, version 0, resource id 0
	msg = append(msg, attrs...)
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	fd := int(c.f.Fd())
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return netip.AddrPort{}, false
	}
	buf := make([]byte, 8192)
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(pfd, 1000); err != nil || n == 0 {
			return netip.AddrPort{}, false
		}
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return netip.AddrPort{}, false
		}
		for b := buf[:n]; len(b) >= unix.NLMSG_HDRLEN; {
			size := int(binary.NativeEndian.Uint32(b[0:]))
			if size < unix.NLMSG_HDRLEN || size > len(b) {
				break
			}
			typ, seq := binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint32(b[8:])
			body := b[unix.NLMSG_HDRLEN:size]
			b = b[min(len(b), (size+3)&^3):]
			if seq != c.seq {
				continue // an answer to an earlier question that timed out
			}
			if typ == unix.NLMSG_ERROR || typ == unix.NLMSG_DONE || len(body) < 4 {
				return netip.AddrPort{}, false
			}
			return origDest(body[4:], dst)
		}
	}
}

// origDest reads the first direction's destination out of a conntrack
// entry's attributes.
func origDest(b []byte, dstAttr uint16) (netip.AddrPort, bool) {
	var addr netip.Addr
	var port uint16
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return netip.AddrPort{}, false
	}
	for ad.Next() {
		if ad.Type() != ctTupleOrig {
			continue
		}
		ad.Nested(func(nd *netlink.AttributeDecoder) error {
			for nd.Next() {
				switch nd.Type() {
				case ctTupleIP:
					nd.Nested(func(id *netlink.AttributeDecoder) error {
						for id.Next() {
							if id.Type() == dstAttr {
								addr, _ = netip.AddrFromSlice(id.Bytes())
							}
						}
						return nil
					})
				case ctTupleProto:
					nd.Nested(func(pd *netlink.AttributeDecoder) error {
						for pd.Next() {
							if pd.Type() == ctProtoDst && len(pd.Bytes()) == 2 {
								port = binary.BigEndian.Uint16(pd.Bytes())
							}
						}
						return nil
					})
				}
			}
			return nil
		})
	}
	if ad.Err() != nil || !addr.IsValid() {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(addr.Unmap(), port), true
}
