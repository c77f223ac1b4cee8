package netrelay

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// Resolver is the DNS server a shell's /etc/resolv.conf names, on its own
// loopback: it answers A and AAAA questions through Answer and nothing
// else, so that a name resolves inside the shell only when the shell may
// reach it. It speaks UDP and TCP (golang.org/x/net/dns/dnsmessage parses
// and builds the messages).
type Resolver struct {
	// Answer gives the addresses of name (lower case, no trailing dot)
	// for a question of type A (v4) or AAAA; found false answers that
	// the name does not exist.
	Answer func(ctx context.Context, name string, v6 bool) (addrs []netip.Addr, found bool)
	// TTL is the answers' time to live, in seconds.
	TTL uint32
}

// maxDNSMessage bounds a message over TCP (its length prefix says at most
// 64 KiB; nothing a resolver library asks needs more than a few hundred
// bytes).
const maxDNSMessage = 4096

// The resolver's bounds: whatever a shell sends, the work in flight is
// fixed. UDP questions wait in a queue of udpQueue for one of
// resolverWorkers (each answer may take a host lookup); past the queue a
// datagram is dropped, as a busy resolver drops them (the client asks
// again). TCP takes at most tcpConns connections at once.
const (
	resolverWorkers = 8
	udpQueue        = 64
	tcpConns        = 16
)

type udpQuestion struct {
	q    []byte
	from netip.AddrPort
}

// ServeUDP answers the questions that arrive on c until ctx ends.
func (r *Resolver) ServeUDP(ctx context.Context, c *net.UDPConn) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	queue := make(chan udpQuestion, udpQueue)
	defer close(queue)
	for range resolverWorkers {
		go func() {
			for u := range queue {
				if reply := r.reply(ctx, u.q, 512); reply != nil {
					_, _ = c.WriteToUDPAddrPort(reply, u.from)
				}
			}
		}()
	}
	buf := make([]byte, maxDNSMessage)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		select {
		case queue <- udpQuestion{q: append([]byte(nil), buf[:n]...), from: from}:
		default: // all busy and the queue full: dropped
		}
	}
}

// ServeTCP answers each connection's questions until ctx ends, at most
// tcpConns connections at once (one past them is closed at once).
func (r *Resolver) ServeTCP(ctx context.Context, l net.Listener) {
	slots := make(chan struct{}, tcpConns)
	acceptEach(ctx, l, func(c net.Conn) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			r.answerTCP(ctx, c)
		default:
			c.Close()
		}
	})
}

// answerTCP answers one connection's questions, each a 2-byte length and
// a message, until it ends or idles 10 s.
func (r *Resolver) answerTCP(ctx context.Context, c net.Conn) {
	defer c.Close()
	for {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(size[:]))
		if n > maxDNSMessage {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		reply := r.reply(ctx, q, 65535)
		if reply == nil {
			return
		}
		if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(reply)))); err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// reply answers one query; nil for what is not a query at all.
func (r *Resolver) reply(ctx context.Context, query []byte, max int) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	resp := dnsmessage.Header{ID: h.ID, Response: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired,
		RecursionAvailable: true, RCode: dnsmessage.RCodeSuccess}
	q, err := p.Question()
	if err != nil || h.OpCode != 0 {
		resp.RCode = dnsmessage.RCodeFormatError
		if h.OpCode != 0 {
			resp.RCode = dnsmessage.RCodeNotImplemented
		}
		return build(resp, nil, nil, max, r.TTL)
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	var addrs []netip.Addr
	found := true
	if q.Class == dnsmessage.ClassINET && (q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeAAAA) {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, found = r.Answer(actx, name, q.Type == dnsmessage.TypeAAAA)
		cancel()
	} else if q.Class == dnsmessage.ClassINET {
		// Another type: the name exists (or not) as for A, with no answer
		// of this type.
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var v4 []netip.Addr
		v4, found = r.Answer(actx, name, false)
		cancel()
		found = found || len(v4) > 0
		addrs = nil
	}
	if !found {
		resp.RCode = dnsmessage.RCodeNameError
	}
	return build(resp, &q, addrs, max, r.TTL)
}

func build(h dnsmessage.Header, q *dnsmessage.Question, addrs []netip.Addr, max int, ttl uint32) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if q != nil {
		if b.StartQuestions() != nil || b.Question(*q) != nil {
			return nil
		}
		if b.StartAnswers() != nil {
			return nil
		}
		for _, a := range addrs {
			rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: ttl}
			var err error
			if a.Is4() && q.Type == dnsmessage.TypeA {
				err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
			} else if a.Is6() && !a.Is4In6() && q.Type == dnsmessage.TypeAAAA {
				err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
			if err != nil {
				return nil
			}
		}
	}
	out, err := b.Finish()
	if err != nil || len(out) > max {
		return nil
	}
	return out
}
