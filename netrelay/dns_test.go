package netrelay

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// TestResolver asks the resolver over UDP and TCP, as Go's own resolver
// (an implementation nobody here wrote) does.
func TestResolver(t *testing.T) {
	r := &Resolver{TTL: 30, Answer: func(_ context.Context, name string, v6 bool) ([]netip.Addr, bool) {
		switch name {
		case "known.test":
			if v6 {
				return []netip.Addr{netip.MustParseAddr("fd00::7")}, true
			}
			return []netip.Addr{netip.MustParseAddr("198.19.0.7")}, true
		case "empty.test":
			return nil, true
		}
		return nil, false
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", udp.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	go r.ServeUDP(ctx, udp)
	go r.ServeTCP(ctx, tcp)
	for _, network := range []string{"udp", "tcp"} {
		res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, udp.LocalAddr().String())
		}}
		lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := res.LookupNetIP(lctx, "ip", "Known.Test.")
		lcancel()
		if err != nil || len(addrs) != 2 {
			t.Errorf("%s: known.test: %v %v", network, addrs, err)
		}
		lctx, lcancel = context.WithTimeout(ctx, 5*time.Second)
		_, err = res.LookupNetIP(lctx, "ip", "unknown.test")
		lcancel()
		if dnsErr, ok := err.(*net.DNSError); !ok || !dnsErr.IsNotFound {
			t.Errorf("%s: unknown.test: %v", network, err)
		}
	}
	// Another type: no answer, and the name exists (or not) as for A.
	for name, want := range map[string]dnsmessage.RCode{"known.test.": dnsmessage.RCodeSuccess, "unknown.test.": dnsmessage.RCodeNameError} {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
		_ = b.StartQuestions()
		_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeTXT, Class: dnsmessage.ClassINET})
		q, _ := b.Finish()
		var p dnsmessage.Parser
		h, err := p.Start(r.reply(ctx, q, 512))
		_ = p.SkipAllQuestions()
		answers, _ := p.AllAnswers()
		if err != nil || h.RCode != want || len(answers) != 0 || !h.Response {
			t.Errorf("TXT %s: %+v, %d answers, %v", name, h, len(answers), err)
		}
	}
	// What is not a query gets no answer; a bad opcode gets NOTIMP.
	if reply := r.reply(ctx, []byte{1, 2, 3}, 512); reply != nil {
		t.Errorf("garbage answered: %x", reply)
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 9, OpCode: 2})
	q, _ := b.Finish()
	var p dnsmessage.Parser
	if h, err := p.Start(r.reply(ctx, q, 512)); err != nil || h.RCode != dnsmessage.RCodeNotImplemented || h.ID != 9 {
		t.Errorf("opcode 2: %+v %v", h, err)
	}
}
