package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Credential is one secret a shell may have added to its requests.
type Credential struct {
	Name        string // the environment variable the shell sees
	Placeholder string // what the shell holds instead of Value
	Value       string
	// Header is the request header the value may go in (canonical form,
	// "Authorization" by default): the placeholder is replaced in that
	// header's values only, and inside basic credentials there
	// ("Authorization: Basic", base64 of user:password). Anywhere else it
	// goes on as it is: a header a server might echo back never carries
	// the secret.
	Header string
	// Host is the pattern as the user wrote it, for sentences; Matches
	// decides (the port too: the caller limits a pattern without one to
	// the ports of HTTPS, and of HTTP with Plain).
	Host    string
	Matches func(host string, port int) bool
	// Plain lets the value go over plain HTTP too; else only inside TLS
	// the broker verified.
	Plain bool
}

// Broker adds a shell's credentials to its requests to their hosts.
// Safe for concurrent use.
type Broker struct {
	Authority   *Authority
	Credentials []Credential
	// Dial connects to host:port (decided and checked by the caller's
	// policy).
	Dial func(ctx context.Context, host string, port int) (net.Conn, error)
	// RootCAs verify the hosts (nil: this machine's roots).
	RootCAs *x509.CertPool
	// Revoked reports whether a credential was taken back from the shell
	// (nil: none is).
	Revoked func(name string) bool
	// Refused is told of each request refused for a credential (method,
	// the credential's name, and the sentence), never with the value.
	Refused func(host string, port int, method, credential, why string)
	// HandshakeTimeout bounds the shell's TLS handshake and a request's
	// head (default 10 s); IdleTimeout a kept connection (default 90 s).
	HandshakeTimeout time.Duration
	IdleTimeout      time.Duration
}

// Holds reports whether a credential is declared for host:port: a
// connection there goes through Serve.
func (b *Broker) Holds(host string, port int) bool {
	for _, c := range b.Credentials {
		if c.Matches(host, port) {
			return true
		}
	}
	return false
}

// Check looks at a plain HTTP request the proxy forwards to host:port:
// one that carries a placeholder to a host not declared for it is refused
// (recorded, and the error says why); for a declared host the values go
// in. It returns the error to answer with, nil to forward r.
func (b *Broker) Check(r *http.Request, host string, port int) error {
	return b.rewrite(r, host, port, r.URL.Scheme == "https")
}

// elsewhere refuses a request that names another host than the one
// dialed when it carries any placeholder (the values may already be in:
// the request is not sent either way).
func (b *Broker) elsewhere(r *http.Request, host string, port int, th string, tp int) error {
	for _, c := range b.Credentials {
		if carries(r, c.Placeholder) || carries(r, c.Value) {
			return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s in a request for %s on a connection to %s", c.Name, net.JoinHostPort(th, strconv.Itoa(tp)), net.JoinHostPort(host, strconv.Itoa(port))))
		}
	}
	return nil
}

// errRefused is a request the broker will not send.
type errRefused struct{ why string }

func (e *errRefused) Error() string { return e.why }

// IsRefusal reports whether err is the broker's refusal of a request.
func IsRefusal(err error) bool { var r *errRefused; return errors.As(err, &r) }

// rewrite puts the values of the credentials declared for host:port in
// place of their placeholders (in their headers), and refuses a request
// that carries any other placeholder, one of a revoked credential, one in
// a form its header does not take, one that would echo the request
// (TRACE), and one over plain HTTP (secure false) the credential does not
// allow.
func (b *Broker) rewrite(r *http.Request, host string, port int, secure bool) error {
	for _, c := range b.Credentials {
		if !carries(r, c.Placeholder) {
			continue
		}
		switch {
		case !c.Matches(host, port):
			return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s to %s, which it may not be sent to (only %s)", c.Name, host, c.Host))
		case b.Revoked != nil && b.Revoked(c.Name):
			return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s was revoked (cshell allow --list shows it)", c.Name))
		case !secure && !c.Plain:
			return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s goes only over HTTPS; use https://, or declare it with ,http", c.Name))
		case strings.EqualFold(r.Method, "TRACE") || strings.EqualFold(r.Method, "TRACK") || strings.EqualFold(r.Method, http.MethodConnect):
			return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s is not sent with %s, which would echo it", c.Name, r.Method))
		}
		vals := r.Header.Values(c.Header)
		for i, v := range vals {
			nv, ok := replaceIn(v, c)
			if !ok {
				return b.refuse(r, host, port, c.Name, fmt.Sprintf("credential %s goes in %s only %s", c.Name, c.Header, forms(c.Header)))
			}
			vals[i] = nv
		}
	}
	return nil
}

// forms says how a header takes a credential, for the refusal.
func forms(header string) string {
	if header == "Authorization" {
		return "as the whole value, after Bearer or token, or as a basic password"
	}
	return "as the whole value"
}

func (b *Broker) refuse(r *http.Request, host string, port int, credential, why string) error {
	if b.Refused != nil {
		b.Refused(host, port, r.Method, credential, why)
	}
	return &errRefused{why: why}
}

// carries reports whether the placeholder appears in the request's
// target (escaped or not) or any header, basic credentials decoded.
func carries(r *http.Request, ph string) bool {
	target := r.URL.String() + " " + r.RequestURI + " " + r.Host + " " + r.URL.Path + " " + r.URL.User.String() + " " + unescape(r.URL.RawQuery) + " " + unescape(r.RequestURI)
	if strings.Contains(target, ph) {
		return true
	}
	for _, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, ph) {
				return true
			}
			if dec, ok := basic(v); ok && strings.Contains(dec, ph) {
				return true
			}
		}
	}
	return false
}

// unescape decodes each valid %XX of s and leaves the rest as it is (a
// bad escape elsewhere must not hide a placeholder); + is a space.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '+':
			b.WriteByte(' ')
		case s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// basic decodes "Basic BASE64" credentials (any space after the scheme,
// padded or not).
func basic(v string) (string, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 6 || !strings.EqualFold(v[:5], "basic") || (v[5] != ' ' && v[5] != '\t') {
		return "", false
	}
	rest := strings.TrimRight(strings.TrimSpace(v[6:]), "=")
	dec, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		if dec, err = base64.RawURLEncoding.DecodeString(rest); err != nil {
			return "", false
		}
	}
	return string(dec), true
}

// replaceIn puts c's value in place of its placeholder in one header
// value, in the forms a server reads as a secret and does not echo: the
// whole value; in Authorization also after Bearer or token, and as the
// password of basic credentials. A value that holds the placeholder in
// any other form is not fit (false); one without it stays as it is.
func replaceIn(v string, c Credential) (string, bool) {
	ph := c.Placeholder
	if !strings.Contains(v, ph) {
		dec, ok := basic(v)
		if !ok || !strings.Contains(dec, ph) {
			return v, true
		}
	}
	t := strings.TrimSpace(v)
	if t == ph {
		return c.Value, true
	}
	if c.Header != "Authorization" {
		return "", false
	}
	if scheme, rest, ok := strings.Cut(t, " "); ok && strings.TrimSpace(rest) == ph && (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) {
		return scheme + " " + c.Value, true
	}
	if dec, ok := basic(t); ok {
		user, pass, ok := strings.Cut(dec, ":")
		if ok && pass == ph && !strings.Contains(user, ph) {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+c.Value)), true
		}
	}
	return "", false
}

// Serve carries one connection of the shell to host:port, a host it
// Holds: TLS (told by its first byte) is ended with a certificate of the
// Authority and each request goes on in TLS of the broker's own, verified
// for host; plain HTTP goes on plain. up, when not nil, is a connection
// to host:port already made (the caller's decision), used for the first
// request. Serve returns when the shell's connection ends or ctx does.
func (b *Broker) Serve(ctx context.Context, c net.Conn, up net.Conn, host string, port int) {
	defer c.Close()
	stopClose := context.AfterFunc(ctx, func() { c.Close() }) // a handshake that waits ends with ctx
	defer stopClose()
	timeout := b.HandshakeTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	idle := b.IdleTimeout
	if idle <= 0 {
		idle = 90 * time.Second
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		if up != nil {
			up.Close()
		}
		return
	}
	var conn net.Conn = &peeked{Conn: c, r: br}
	secure := first[0] == 0x16 // a TLS handshake record
	if secure {
		cert, err := b.Authority.Leaf(host)
		if err != nil {
			if up != nil {
				up.Close()
			}
			return
		}
		t := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
		if err := t.HandshakeContext(ctx); err != nil {
			if up != nil {
				up.Close()
			}
			return
		}
		conn = t
	}
	_ = c.SetReadDeadline(time.Time{})

	var mu sync.Mutex // up: the first dial takes it, or the end closes it
	takeUp := func() net.Conn {
		mu.Lock()
		defer mu.Unlock()
		got := up
		up = nil
		return got
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		if got := takeUp(); got != nil {
			return readAhead(got), nil
		}
		c, err := b.Dial(ctx, host, port)
		if err != nil {
			return nil, err
		}
		return readAhead(c), nil
	}
	tr := &http.Transport{
		DialContext:           dial,
		TLSClientConfig:       &tls.Config{ServerName: host, RootCAs: b.RootCAs, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     false,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       idle,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: 0, // a slow answer is the host's to give
		DisableCompression:    true,
		Proxy:                 nil,
	}
	defer tr.CloseIdleConnections()
	defer func() {
		if got := takeUp(); got != nil {
			got.Close()
		}
	}()
	scheme := "http"
	if secure {
		scheme = "https"
	}
	authority := net.JoinHostPort(host, strconv.Itoa(port))
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = scheme, authority
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1, // streams (server-sent events, progress) pass as they come
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			http.Error(w, fmt.Sprintf("cshell proxy: cannot reach %s: %s", authority, upstreamError(err)), http.StatusBadGateway)
		},
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A request that names another host or port than the one
			// dialed (its Host, or an absolute target) carries no
			// credential: a front end that routes by Host would take it
			// there, and another credential's host could be dialed.
			th, tp := target(r, host, port)
			err := b.rewrite(r, host, port, secure)
			if err == nil && (th != host || tp != port) {
				err = b.elsewhere(r, host, port, th, tp)
			}
			if err != nil {
				http.Error(w, "cshell proxy: refused: "+err.Error(), http.StatusForbidden)
				return
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: timeout,
		IdleTimeout:       idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	l := newOneListener(conn)
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	_ = srv.Serve(l) // returns once the connection ended, or ctx did
	_ = srv.Close()
}

// target is the host and port a request names: its absolute target or
// its Host, the connection's port when it names none.
func target(r *http.Request, host string, port int) (string, int) {
	hp := r.Host
	if r.URL.Host != "" {
		hp = r.URL.Host
	}
	if hp == "" {
		return host, port
	}
	h, ps, err := net.SplitHostPort(hp)
	if err != nil {
		h, ps = strings.Trim(hp, "[]"), ""
	}
	p := port
	if ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return hp, 0
		}
		p = n
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if strings.EqualFold(h, strings.TrimSuffix(host, ".")) {
		h = host
	}
	return h, p
}

// upstreamError says why the host could not be reached, in words that
// hold no request data.
func upstreamError(err error) string {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn):
		return "its certificate is not trusted here (" + strings.TrimPrefix(err.Error(), "tls: ") + ")"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err.Error()
	}
	return err.Error()
}

// readAhead reads the host's side in large reads: TLS asks for one
// record (16 KiB at most) at a time, and a download would cost a read,
// and a wake-up, for each.
func readAhead(c net.Conn) net.Conn { return &peeked{Conn: c, r: bufio.NewReaderSize(c, 64<<10)} }

// peeked is a connection whose first bytes were read into r.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

// oneListener hands out one connection, then waits until it is closed.
type oneListener struct {
	mu     sync.Mutex
	c      net.Conn
	closed chan struct{}
	once   sync.Once
	addr   net.Addr
}

func newOneListener(c net.Conn) *oneListener {
	l := &oneListener{closed: make(chan struct{}), addr: c.LocalAddr()}
	l.c = &closeNotify{Conn: c, l: l}
	return l
}

func (l *oneListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.c
	l.c = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *oneListener) Close() error { l.done(); return nil }

func (l *oneListener) Addr() net.Addr { return l.addr }

func (l *oneListener) done() { l.once.Do(func() { close(l.closed) }) }

type closeNotify struct {
	net.Conn
	l *oneListener
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.l.done()
	return err
}
