package netrelay

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Refusal is a policy's no to one destination: Rule names what refused
// it, Hint what would lift it ("" when nothing would), Allow the host
// pattern a grant would need.
type Refusal struct{ Rule, Hint, Allow string }

func (r *Refusal) Error() string { return "refused: " + r.Rule }

// Proxy is the allowlist proxy a shell reaches inside its namespace. It
// speaks HTTP CONNECT, plain HTTP proxy requests and SOCKS5 (CONNECT, with
// names or addresses) on one port. Every destination goes through Dial,
// which applies the policy and answers a *Refusal to say no.
type Proxy struct {
	// Dial resolves, checks and connects to host:port on this machine.
	Dial func(ctx context.Context, host string, port int) (net.Conn, error)
	// Refused is told of each refusal (method: CONNECT, GET…, SOCKS5).
	Refused func(host string, port int, method string, why *Refusal)
	// MaxConns caps connections open at once (default 256); more are
	// closed on arrival.
	MaxConns int
	// HandshakeTimeout bounds reading a request's head (default 10 s).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a tunnel through which no byte moved for that
	// long (default 15 minutes).
	IdleTimeout time.Duration

	// Broker, when set, serves the connections to the hosts it holds
	// credentials for instead of a tunnel, and checks each plain request.
	Broker Broker

	splicer *Splicer // set by Serve
}

// Broker adds credentials on the way out (package broker): Holds says
// which host:port it serves, Serve carries a client's connection there
// (up: the connection the proxy dialed), Check looks at a plain request
// before it goes (an error: refused, with the sentence to answer).
type Broker interface {
	Holds(host string, port int) bool
	Serve(ctx context.Context, c, up net.Conn, host string, port int)
	Check(r *http.Request, host string, port int) error
}

// maxHeaderBytes bounds an HTTP request head.
const maxHeaderBytes = 32 << 10

// Serve runs the proxy on l until ctx ends; then it closes l and every
// connection it carries.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) {
	maxConns := p.MaxConns
	if maxConns <= 0 {
		maxConns = 256
	}
	timeout := p.HandshakeTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	httpConns := newChanListener(l.Addr())
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serveHTTP(ctx, w, r) }),
		ReadHeaderTimeout: timeout,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          nil,
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Serve(httpConns) }()

	idle := p.IdleTimeout
	if idle <= 0 {
		idle = 15 * time.Minute
	}
	sp, err := NewSplicer(idle)
	if err != nil { // out of descriptors: no proxy rather than a broken one
		l.Close()
		_ = srv.Close()
		httpConns.Close()
		wg.Wait()
		return
	}
	p.splicer = sp
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	slots := make(chan struct{}, maxConns)
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close() // over the cap: a hostile or runaway client
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			p.serveConn(ctx, c, httpConns, timeout)
		}()
	}
	l.Close()
	_ = srv.Close() // closes idle and active HTTP connections
	httpConns.Close()
	sp.Close() // ends every tunnel
	wg.Wait()
}

// serveConn tells SOCKS5 (first byte 5) from HTTP and serves the
// connection; HTTP ones go to the http.Server, which owns them from then.
func (p *Proxy) serveConn(ctx context.Context, c net.Conn, httpConns *chanListener, timeout time.Duration) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	first, err := peekByte(c)
	if err != nil {
		c.Close()
		return
	}
	if first != 5 {
		done := make(chan struct{})
		if !httpConns.give(&notifyConn{Conn: c, done: done}) {
			c.Close()
			return
		}
		<-done // hold the slot until the server is done with it
		return
	}
	p.serveSOCKS(ctx, c)
}

// serveHTTP answers one proxy request: CONNECT opens a tunnel, an
// absolute-form request is forwarded.
func (p *Proxy) serveHTTP(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		host, port, err := splitHostPort(r.Host, 443)
		if err != nil {
			http.Error(w, "cshell proxy: CONNECT needs host:port", http.StatusBadRequest)
			return
		}
		up, err := p.dial(ctx, host, port, r.Method)
		if err != nil {
			p.httpError(w, err, host, port)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "cshell proxy: cannot tunnel", http.StatusInternalServerError)
			return
		}
		c, brw, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		defer c.Close() // frees the connection's slot
		_ = c.SetDeadline(time.Time{})
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			c.Close()
			up.Close()
			return
		}
		// Bytes the client sent before our answer are already buffered.
		if n := brw.Reader.Buffered(); n > 0 && (p.Broker == nil || !p.Broker.Holds(host, port)) {
			b, _ := brw.Reader.Peek(n)
			if _, err := up.Write(b); err != nil {
				c.Close()
				up.Close()
				return
			}
		}
		if p.Broker != nil && p.Broker.Holds(host, port) {
			p.Broker.Serve(ctx, &bufferedConn{Conn: c, r: brw.Reader}, up, host, port)
			return
		}
		p.tunnel(unwrap(c), up)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		http.Error(w, "cshell proxy: send requests in absolute form (http://host/path), or CONNECT host:port", http.StatusBadRequest)
		return
	}
	def := 80
	if r.URL.Scheme == "https" {
		def = 443
	}
	host, port, err := splitHostPort(r.URL.Host, def)
	if err != nil {
		http.Error(w, "cshell proxy: bad host in the request", http.StatusBadRequest)
		return
	}
	if p.Broker != nil {
		if err := p.Broker.Check(r, host, port); err != nil {
			http.Error(w, "cshell proxy: refused: "+err.Error(), http.StatusForbidden)
			return
		}
	}
	// Decide (and resolve) before anything is sent upstream.
	up, err := p.dial(ctx, host, port, r.Method)
	if err != nil {
		p.httpError(w, err, host, port)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.Out.URL = r.URL; pr.Out.Host = r.Host },
		Transport: &http.Transport{
			DialContext:       oneConn(up),
			DisableKeepAlives: true,
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "cshell proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}

// oneConn hands out a connection already dialed (and checked), once.
func oneConn(c net.Conn) func(context.Context, string, string) (net.Conn, error) {
	var once sync.Once
	return func(context.Context, string, string) (net.Conn, error) {
		var got net.Conn
		once.Do(func() { got = c })
		if got == nil {
			return nil, errors.New("connection already used")
		}
		return got, nil
	}
}

func (p *Proxy) httpError(w http.ResponseWriter, err error, host string, port int) {
	var ref *Refusal
	if errors.As(err, &ref) {
		msg := fmt.Sprintf("cshell proxy: %s:%d is refused (%s)", host, port, ref.Rule)
		if ref.Hint != "" {
			msg += "; " + ref.Hint
		}
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	http.Error(w, fmt.Sprintf("cshell proxy: cannot reach %s:%d: %v", host, port, err), http.StatusBadGateway)
}

// dial asks the policy and records a refusal.
func (p *Proxy) dial(ctx context.Context, host string, port int, method string) (net.Conn, error) {
	c, err := p.Dial(ctx, host, port)
	var ref *Refusal
	if errors.As(err, &ref) && p.Refused != nil {
		p.Refused(host, port, method, ref)
	}
	return c, err
}

// tunnel carries bytes between a client and an upstream connection until
// the tunnel ends (the idle limit included), or the proxy does.
func (p *Proxy) tunnel(c, up net.Conn) {
	<-p.splicer.Carry(c, up)
}

// SOCKS5 reply codes (RFC 1928).
const (
	socksOK          = 0
	socksFailure     = 1
	socksNotAllowed  = 2
	socksUnreachable = 4
	socksRefused     = 5
	socksBadCommand  = 7
	socksBadAddress  = 8
)

// serveSOCKS speaks SOCKS5 without authentication, CONNECT only.
func (p *Proxy) serveSOCKS(ctx context.Context, c net.Conn) {
	r := bufio.NewReaderSize(c, 512)
	fail := func(code byte) {
		_, _ = c.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
		c.Close()
	}
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(r, hdr); err != nil || hdr[0] != 5 || hdr[1] == 0 {
		c.Close()
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		c.Close()
		return
	}
	if !strings.ContainsRune(string(methods), 0) {
		_, _ = c.Write([]byte{5, 0xff}) // no acceptable method
		c.Close()
		return
	}
	if _, err := c.Write([]byte{5, 0}); err != nil {
		c.Close()
		return
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(r, req); err != nil || req[0] != 5 {
		c.Close()
		return
	}
	if req[1] != 1 {
		fail(socksBadCommand)
		return
	}
	var host string
	switch req[3] {
	case 1, 4:
		n := 4
		if req[3] == 4 {
			n = 16
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			c.Close()
			return
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.Unmap().String()
	case 3:
		n, err := r.ReadByte()
		if err != nil || n == 0 {
			fail(socksBadAddress)
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			c.Close()
			return
		}
		host = string(b)
	default:
		fail(socksBadAddress)
		return
	}
	pb := make([]byte, 2)
	if _, err := io.ReadFull(r, pb); err != nil {
		c.Close()
		return
	}
	port := int(binary.BigEndian.Uint16(pb))
	if port == 0 {
		fail(socksBadAddress)
		return
	}
	up, err := p.dial(ctx, host, port, "SOCKS5")
	if err != nil {
		var ref *Refusal
		var op *net.OpError
		switch {
		case errors.As(err, &ref):
			fail(socksNotAllowed)
		case errors.As(err, &op) && strings.Contains(op.Err.Error(), "refused"):
			fail(socksRefused)
		case errors.As(err, new(*net.DNSError)):
			fail(socksUnreachable)
		default:
			fail(socksFailure)
		}
		return
	}
	if _, err := c.Write([]byte{5, socksOK, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		c.Close()
		up.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	if p.Broker != nil && p.Broker.Holds(host, port) {
		p.Broker.Serve(ctx, &bufferedConn{Conn: c, r: r}, up, host, port)
		return
	}
	if n := r.Buffered(); n > 0 { // early data after the request
		b, _ := r.Peek(n)
		if _, err := up.Write(b); err != nil {
			c.Close()
			up.Close()
			return
		}
	}
	p.tunnel(c, up)
}

// splitHostPort reads host[:port] with a default port.
func splitHostPort(hp string, def int) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hp)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port") {
			return "", 0, err
		}
		host, portStr = strings.Trim(hp, "[]"), strconv.Itoa(def)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("bad host:port %q", hp)
	}
	return host, port, nil
}

// chanListener is a net.Listener fed by the proxy's own accept loop: the
// HTTP connections, once told from SOCKS ones.
type chanListener struct {
	addr   net.Addr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *chanListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// notifyConn tells when the HTTP server is done with a connection.
type notifyConn struct {
	net.Conn
	done chan struct{}
	once sync.Once
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.done) })
	return err
}

// bufferedConn is a connection some of whose bytes a reader holds.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// unwrap returns the TCP connection under a notifyConn, so that tunnels
// splice.
func unwrap(c net.Conn) net.Conn {
	if n, ok := c.(*notifyConn); ok {
		return n.Conn
	}
	return c
}
