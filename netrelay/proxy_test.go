package netrelay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testProxy runs a Proxy on loopback that allows only "allowed.test"
// (dialing the given upstream instead) and records refusals.
type testProxy struct {
	addr    string
	mu      sync.Mutex
	refused []string
}

func newTestProxy(t *testing.T, upstream string) *testProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &testProxy{addr: l.Addr().String()}
	p := &Proxy{
		Dial: func(ctx context.Context, host string, port int) (net.Conn, error) {
			if host != "allowed.test" {
				return nil, &Refusal{Rule: "not in the allow list"}
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", upstream)
		},
		Refused: func(host string, port int, method string, why *Refusal) {
			tp.mu.Lock()
			tp.refused = append(tp.refused, fmt.Sprintf("%s %s:%d %s", method, host, port, why.Rule))
			tp.mu.Unlock()
		},
		MaxConns:         8,
		HandshakeTimeout: 2 * time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Serve(ctx, l); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the proxy did not stop")
		}
	})
	return tp
}

func upstreamServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream saw %s %s host=%s\n", r.Method, r.URL.RequestURI(), r.Host)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func TestProxyHTTPAndConnect(t *testing.T) {
	tp := newTestProxy(t, upstreamServer(t))
	// Plain HTTP proxy request.
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET http://allowed.test/x?y=1 HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	if resp.StatusCode != 200 || string(body) != "upstream saw GET /x?y=1 host=allowed.test\n" {
		t.Errorf("GET: %d %q", resp.StatusCode, body)
	}
	// CONNECT, then HTTP through the tunnel.
	c, _ = net.Dial("tcp", tp.addr)
	fmt.Fprintf(c, "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err = http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	c.Close()
	if string(body) != "upstream saw GET /tunnel host=allowed.test\n" {
		t.Errorf("through the tunnel: %q", body)
	}
	// Refusals: 403 and a record.
	for _, req := range []string{
		"GET http://blocked.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n",
		"CONNECT blocked.test:443 HTTP/1.1\r\nHost: blocked.test:443\r\n\r\n",
	} {
		c, _ := net.Dial("tcp", tp.addr)
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: strings.Fields(req)[0]})
		c.Close()
		if err != nil || resp.StatusCode != 403 {
			t.Errorf("%q: %v %v", req, resp, err)
		}
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if strings.Join(tp.refused, "|") != "GET blocked.test:80 not in the allow list|CONNECT blocked.test:443 not in the allow list" {
		t.Errorf("refusals recorded: %q", tp.refused)
	}
}

func socksConnect(t *testing.T, addr string, atyp byte, dest []byte, port int) (net.Conn, byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{5, 1, 0})
	hello := make([]byte, 2)
	if _, err := io.ReadFull(c, hello); err != nil || hello[1] != 0 {
		t.Fatalf("greeting: %v %v", hello, err)
	}
	req := append([]byte{5, 1, 0, atyp}, dest...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	c.Write(req)
	reply := make([]byte, 10)
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatalf("reply: %v", err)
	}
	return c, reply[1]
}

func TestProxySOCKS5(t *testing.T) {
	tp := newTestProxy(t, upstreamServer(t))
	name := "allowed.test"
	c, code := socksConnect(t, tp.addr, 3, append([]byte{byte(len(name))}, name...), 80)
	if code != 0 {
		t.Fatalf("SOCKS5 CONNECT allowed.test: reply %d", code)
	}
	fmt.Fprintf(c, "GET /socks HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	if string(body) != "upstream saw GET /socks host=allowed.test\n" {
		t.Errorf("body %q", body)
	}
	a := netip.MustParseAddr("10.9.8.7").As4()
	c, code = socksConnect(t, tp.addr, 1, a[:], 80)
	c.Close()
	if code != socksNotAllowed {
		t.Errorf("refused address: reply %d, want %d", code, socksNotAllowed)
	}
}

// FuzzProxy sends arbitrary bytes as the start of a connection: the proxy
// answers or hangs up, and never crashes (a panic in its goroutines ends
// the test binary).
func FuzzProxy(f *testing.F) {
	for _, s := range []string{
		"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n",
		"CONNECT :0 HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0callowed.test\x00\x50",
		"\x05\x01\x00\x05\x01\x00\x03\x00\x00\x50",
		"\x05\x00",
		"\x05\xff",
		"\x05\x01\x00\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50",
		"\x05\x01\x00\x05\x01\x00\x09",
		"GET http://[::1 HTTP/1.1\r\n\r\n",
		// Tunnels that carry a request: the allowed path all the way to
		// the upstream and back (the half-close passes through).
		"CONNECT allowed.test:80 HTTP/1.1\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
		"\x05\x01\x00\x05\x01\x00\x03\x0callowed.test\x00\x50GET /socks HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	// One proxy and one upstream for every input, alive as long as the
	// fuzz target (an upstream tied to the first input's t would be gone
	// for every later one, and the allowed path fuzzed once).
	tp := newTestProxyNoCleanup(upstreamServer(f))
	var allowedAnswers atomic.Int64
	f.Cleanup(func() {
		// (When fuzzing, the inputs run in worker processes; the seeds'
		// run, as in CI, is where this counts.)
		if fz := flag.Lookup("test.fuzz"); fz != nil && fz.Value.String() != "" {
			return
		}
		if allowedAnswers.Load() == 0 {
			f.Errorf("no input reached the upstream through the allowed path")
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(data)
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		b, _ := io.ReadAll(c)
		if bytes.Contains(b, []byte("upstream saw")) {
			allowedAnswers.Add(1)
		}
	})
}

// newTestProxyNoCleanup is newTestProxy for a fuzz target's shared proxy.
func newTestProxyNoCleanup(upstream string) *testProxy {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	tp := &testProxy{addr: l.Addr().String()}
	p := &Proxy{Dial: func(ctx context.Context, host string, port int) (net.Conn, error) {
		if host != "allowed.test" {
			return nil, &Refusal{Rule: "not in the allow list"}
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", upstream)
	}, HandshakeTimeout: time.Second}
	go p.Serve(context.Background(), l)
	return tp
}

func TestProxyConnectionCap(t *testing.T) {
	tp := newTestProxy(t, upstreamServer(t)) // MaxConns 8
	var held []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.Dial("tcp", tp.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte{5}) // a SOCKS client that never finishes its greeting
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond)
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("a connection over the cap was served")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("a connection over the cap was left hanging instead of closed")
	}
	c.Close()
	// The stalled clients are dropped after the handshake timeout (2 s).
	for _, h := range held {
		h.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(h); err != nil {
			t.Errorf("a stalled client was not dropped: %v", err)
		}
		h.Close()
	}
}

func TestProxyClosesIdleTunnels(t *testing.T) {
	up := startServer(t, echoBack)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	p := &Proxy{
		Dial: func(ctx context.Context, host string, port int) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up.Addr().String())
		},
		IdleTimeout: time.Second, // ten times the pings' spacing: a slow machine does not close it early
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Serve(ctx, l)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT echo.test:7 HTTP/1.1\r\nHost: echo.test:7\r\n\r\n")
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	// Traffic keeps the tunnel open past the idle timeout...
	var t0 time.Time // the last traffic
	for i := 0; i < 15; i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprintf(c, "ping %d\n", i)
		if line, err := br.ReadString('\n'); err != nil || line != fmt.Sprintf("ping %d\n", i) {
			t.Fatalf("echo %d: %q %v", i, line, err)
		}
		t0 = time.Now()
	}
	// ... silence closes it.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("read data from an idle tunnel")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("an idle tunnel was not closed")
	}
	if el := time.Since(t0); el < 900*time.Millisecond {
		t.Errorf("closed after %s of silence, before the idle timeout (1s)", el)
	}
}
