package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a TLS server that echoes what authenticated it.
func upstream(t *testing.T) (*httptest.Server, *x509.CertPool, int) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%s key=%s agent=%s path=%s", r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("User-Agent"), r.URL.Path)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return srv, pool, p
}

type refusal struct{ host, method, why string }

func newBroker(t *testing.T, roots *x509.CertPool, creds ...Credential) (*Broker, *[]refusal, *sync.Mutex) {
	t.Helper()
	auth, err := NewAuthority(Scope{Domains: []string{"example.com"}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []refusal
	for i := range creds {
		if creds[i].Header == "" {
			creds[i].Header = "Authorization"
		}
	}
	b := &Broker{Authority: auth, Credentials: creds, RootCAs: roots,
		Dial: func(ctx context.Context, host string, port int) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		},
		Refused: func(host string, port int, method, _, why string) {
			mu.Lock()
			got = append(got, refusal{host, method, why})
			mu.Unlock()
		}}
	return b, &got, &mu
}

func exact(name string) func(string, int) bool {
	return func(h string, _ int) bool { return h == name }
}

// client speaks to the broker through an in-memory connection, as the
// shell's program would through the proxy, trusting only the authority.
func client(t *testing.T, b *Broker, host string, port int) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(b.Authority.Certificate())
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			a, z := net.Pipe()
			go b.Serve(context.Background(), z, nil, host, port)
			return a, nil
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: host},
	}}
}

func get(t *testing.T, c *http.Client, u string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestServeReplacesInDeclaredHeaderOnly(t *testing.T) {
	_, roots, port := upstream(t)
	const ph, secret = "cshell-placeholder-aa", "s3cret-value"
	b, refused, mu := newBroker(t, roots, Credential{Name: "TOKEN", Placeholder: ph, Value: secret, Host: "api.example.com", Matches: exact("api.example.com")})
	// The upstream's certificate is for 127.0.0.1 and example.com names:
	// httptest's is for example.com, so the broker dials 127.0.0.1 and
	// verifies the name it was asked for.
	c := client(t, b, "example.com", port)
	b.Credentials[0].Matches = exact("example.com")
	u := fmt.Sprintf("https://example.com:%d/path", port)

	code, body := get(t, c, u, map[string]string{"Authorization": "Bearer " + ph, "User-Agent": "x " + ph})
	if code != 200 || !strings.Contains(body, "auth=Bearer "+secret) {
		t.Fatalf("bearer: %d %q", code, body)
	}
	if !strings.Contains(body, "agent=x "+ph) {
		t.Errorf("the placeholder in another header was replaced: %q", body)
	}
	// Basic credentials: user:placeholder, as git sends them.
	code, body = get(t, c, u, map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+ph))})
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+secret))
	if code != 200 || !strings.Contains(body, "auth="+want) {
		t.Fatalf("basic: %d %q", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*refused) != 0 {
		t.Errorf("refusals: %v", *refused)
	}
}

func TestServeCustomHeader(t *testing.T) {
	_, roots, port := upstream(t)
	const ph, secret = "cshell-placeholder-bb", "key-value"
	b, _, _ := newBroker(t, roots, Credential{Name: "KEY", Placeholder: ph, Value: secret, Header: "X-Api-Key", Host: "example.com", Matches: exact("example.com")})
	c := client(t, b, "example.com", port)
	code, body := get(t, c, fmt.Sprintf("https://example.com:%d/", port), map[string]string{"X-Api-Key": ph, "Authorization": "Bearer " + ph})
	if code != 200 || !strings.Contains(body, "key="+secret) || !strings.Contains(body, "auth=Bearer "+ph) {
		t.Fatalf("%d %q", code, body)
	}
}

func TestRefusesPlaceholderElsewhereAndRevoked(t *testing.T) {
	_, roots, port := upstream(t)
	const ph = "cshell-placeholder-cc"
	b, refused, mu := newBroker(t, roots,
		Credential{Name: "TOKEN", Placeholder: ph, Value: "v", Host: "api.example.com", Matches: exact("api.example.com")},
		Credential{Name: "OTHER", Placeholder: "cshell-placeholder-dd", Value: "w", Host: "example.com", Matches: exact("example.com")})
	c := client(t, b, "example.com", port)
	u := fmt.Sprintf("https://example.com:%d/", port)
	// TOKEN's placeholder to example.com, in a header or in the path.
	for _, tc := range []struct {
		path string
		hdr  map[string]string
	}{{"", map[string]string{"Authorization": "Bearer " + ph}}, {ph, nil}} {
		code, body := get(t, c, u+tc.path, tc.hdr)
		if code != http.StatusForbidden || !strings.Contains(body, "credential TOKEN to example.com") || strings.Contains(body, "auth=") {
			t.Errorf("placeholder to another host: %d %q", code, body)
		}
	}
	revoked := false
	b.Revoked = func(name string) bool { return revoked && name == "OTHER" }
	if code, body := get(t, c, u, map[string]string{"Authorization": "Bearer cshell-placeholder-dd"}); code != 200 || !strings.Contains(body, "auth=Bearer w") {
		t.Fatalf("before revoking: %d %q", code, body)
	}
	revoked = true
	if code, body := get(t, c, u, map[string]string{"Authorization": "Bearer cshell-placeholder-dd"}); code != 403 || !strings.Contains(body, "revoked") {
		t.Errorf("after revoking: %d %q", code, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*refused) != 3 || (*refused)[0].method != "GET" || (*refused)[0].host != "example.com" {
		t.Errorf("refusals recorded: %+v", *refused)
	}
	for _, r := range *refused {
		if strings.Contains(r.why, "v") && strings.Contains(r.why, "=v") {
			t.Errorf("a refusal holds the value: %q", r.why)
		}
	}
}

// A plain HTTP request the proxy forwards is checked the same way.
func TestCheckPlainRequest(t *testing.T) {
	const ph = "cshell-placeholder-ee"
	b, _, _ := newBroker(t, nil, Credential{Name: "TOKEN", Placeholder: ph, Value: "real", Header: "Authorization", Host: "api.test", Matches: exact("api.test")})
	plain := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "api.test", Path: "/"}, Header: http.Header{"Authorization": {"token " + ph}}, Host: "api.test"}
	if err := b.Check(plain, "api.test", 80); err == nil || !strings.Contains(err.Error(), "only over HTTPS") {
		t.Fatalf("plain HTTP without ,http: %v", err)
	}
	b.Credentials[0].Plain = true
	r := &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "evil.test", Path: "/"}, Header: http.Header{"Authorization": {"token " + ph}}, Host: "evil.test"}
	if err := b.Check(r, "evil.test", 80); err == nil || !IsRefusal(err) {
		t.Fatalf("to another host: %v", err)
	}
	r.URL.Host, r.Host = "api.test", "api.test"
	if err := b.Check(r, "api.test", 80); err != nil || r.Header.Get("Authorization") != "token real" {
		t.Fatalf("to its host: %v %q", err, r.Header.Get("Authorization"))
	}
}

// A leaf the authority makes verifies for its host, and the authority's
// name constraints keep it from vouching for any other.
func TestAuthorityScope(t *testing.T) {
	a, err := NewAuthority(Scope{Domains: []string{"api.test"}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(a.Certificate())
	for _, tc := range []struct {
		host string
		ok   bool
	}{{"api.test", true}, {"v2.api.test", true}, {"evil.test", false}, {"127.0.0.1", false}} {
		leaf, err := a.Leaf(tc.host)
		if err != nil {
			t.Fatal(err)
		}
		_, err = leaf.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.host})
		if (err == nil) != tc.ok {
			t.Errorf("%s: verify err %v, want ok=%v", tc.host, err, tc.ok)
		}
	}
}

// Plain HTTP through Serve (the egress's case): replaced, sent plain.
func TestServePlain(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "auth=%s", r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	const ph = "cshell-placeholder-ff"
	b, _, _ := newBroker(t, nil, Credential{Name: "T", Placeholder: ph, Value: "real", Header: "Authorization", Host: "api.test", Matches: exact("api.test"), Plain: true})
	a, z := net.Pipe()
	done := make(chan struct{})
	go func() { b.Serve(context.Background(), z, nil, "api.test", p); close(done) }()
	fmt.Fprintf(a, "GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", ph)
	resp, err := http.ReadResponse(bufio.NewReader(a), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "auth=Bearer real" {
		t.Errorf("body %q", body)
	}
	a.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its connection ended")
	}
}

// An authority for addresses alone vouches for no name.
func TestAuthorityScopeAddressesOnly(t *testing.T) {
	a, err := NewAuthority(Scope{Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(a.Certificate())
	for host, ok := range map[string]bool{"127.0.0.1": true, "127.0.0.2": false, "evil.test": false} {
		leaf, err := a.Leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		_, err = leaf.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
		if (err == nil) != ok {
			t.Errorf("%s: verify err %v, want ok=%v", host, err, ok)
		}
	}
}

// What a hostile shell might try on the declared host itself: the value
// where the server might echo it (a basic user name, an odd scheme, part
// of a value), a method that echoes the request, a Host of another site
// behind the same front end. Each is refused before anything is sent.
func TestServeRefusesEchoingForms(t *testing.T) {
	_, roots, port := upstream(t)
	const ph, secret = "cshell-placeholder-99", "the-real-secret"
	b, refused, mu := newBroker(t, roots, Credential{Name: "TOKEN", Placeholder: ph, Value: secret, Host: "example.com", Matches: exact("example.com")})
	c := client(t, b, "example.com", port)
	u := fmt.Sprintf("https://example.com:%d/", port)
	for _, tc := range []struct {
		method string
		hdr    map[string]string
		want   string
	}{
		{"GET", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(ph+":x"))}, "basic password"},
		{"GET", map[string]string{"Authorization": "Foo " + ph}, "basic password"},
		{"GET", map[string]string{"Authorization": "Bearer x" + ph}, "basic password"},
		{"TRACE", map[string]string{"Authorization": "Bearer " + ph}, "TRACE"},
		{"GET", map[string]string{"Authorization": "Bearer " + ph, "Host": "attacker.example"}, "credential TOKEN in a request for attacker.example"},
		{"trace", map[string]string{"Authorization": "Bearer " + ph}, "trace"},
	} {
		req, _ := http.NewRequest(tc.method, u, nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		if h := tc.hdr["Host"]; h != "" {
			req.Host = h
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%v: %v", tc.hdr, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), secret) {
			t.Errorf("%s %v: %d %q; want 403 with %q", tc.method, tc.hdr, resp.StatusCode, body, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(*refused) != 6 {
		t.Errorf("refusals recorded: %d, want 6", len(*refused))
	}
}

// One credential's value never goes to another credential's host: a
// connection to A's host with a request that names B's host (Host) and
// carries B's placeholder is refused.
func TestServeOtherCredentialsHost(t *testing.T) {
	_, roots, port := upstream(t)
	b, _, _ := newBroker(t, roots,
		Credential{Name: "A", Placeholder: "cshell-placeholder-a1", Value: "value-a", Host: "example.com", Matches: exact("example.com")},
		Credential{Name: "B", Placeholder: "cshell-placeholder-b1", Value: "value-b", Host: "api.example.com", Matches: exact("api.example.com")})
	c := client(t, b, "example.com", port)
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://example.com:%d/", port), nil)
	req.Host = fmt.Sprintf("api.example.com:%d", port)
	req.Header.Set("Authorization", "Bearer cshell-placeholder-b1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "value-b") {
		t.Errorf("%d %q: want 403", resp.StatusCode, body)
	}
}
