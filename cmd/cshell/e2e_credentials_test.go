//go:build e2e

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// credServer is an HTTPS server (a CA of its own) that knows one secret:
// a request authenticated by it (bearer, token or basic credentials) is
// answered, any other gets 401. It serves a git repository (git
// http-backend) and an npm package's metadata too, and counts the
// requests it authenticated (GET /cshell-authed, unauthenticated). In CI
// it runs in a network namespace of hack/test.sh's own (the remote host,
// CSHELL_TEST_CRED_REMOTE), the test binary itself serving it
// (serveCredentials); elsewhere each test starts one on 127.0.0.1.
type credServer struct {
	name, secret string
	addr         string // where the name resolves for the shell
	port         int
	caFile       string
	authed       atomic.Int64
}

const credName = "api.cred.test"

func newCredServer(t *testing.T) *credServer {
	t.Helper()
	if remote := os.Getenv("CSHELL_TEST_CRED_REMOTE"); remote != "" {
		dir := os.Getenv("CSHELL_TEST_CRED_DIR")
		secret, err := os.ReadFile(filepath.Join(dir, "secret"))
		if err != nil {
			t.Fatalf("the remote credential server's secret: %v", err)
		}
		host, port, _ := net.SplitHostPort(remote)
		p, _ := strconv.Atoi(port)
		t.Logf("the credential server in the remote host's namespace, %s", remote)
		return &credServer{name: credName, secret: string(secret), addr: host, port: p, caFile: filepath.Join(dir, "ca.pem")}
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, srv, err := startCredServer(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return s
}

// startCredServer serves the credential server on l, with its CA's
// certificate in dir/ca.pem, its secret in dir/secret and its repository
// in dir/repos.
func startCredServer(dir string, l net.Listener) (*credServer, *http.Server, error) {
	b := make([]byte, 12)
	rand.Read(b)
	addr := l.Addr().(*net.TCPAddr)
	s := &credServer{name: credName, secret: "cshell-e2e-secret-" + hex.EncodeToString(b), addr: addr.IP.String(), port: addr.Port, caFile: filepath.Join(dir, "ca.pem")}
	cert, caPEM, err := testCertificate(credName)
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(s.caFile, caPEM, 0o644); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(s.secret), 0o644); err != nil {
		return nil, nil, err
	}
	repos := filepath.Join(dir, "repos")
	if err := makeRepo(repos, filepath.Join(dir, "work")); err != nil {
		return nil, nil, err
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, nil, err
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"}, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cshell-authed" {
				fmt.Fprint(w, s.authed.Load())
				return
			}
			if !s.ok(r.Header.Get("Authorization")) {
				w.Header().Set("WWW-Authenticate", `Basic realm="cshell e2e"`)
				http.Error(w, "unauthenticated", http.StatusUnauthorized)
				return
			}
			s.authed.Add(1)
			switch {
			case strings.HasPrefix(r.URL.Path, "/repo.git/"):
				backend.ServeHTTP(w, r)
			case r.URL.Path == "/cshell-cred-pkg":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"name":"cshell-cred-pkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"cshell-cred-pkg","version":"1.0.0","dist":{"tarball":"https://%s:%d/cshell-cred-pkg/-/cshell-cred-pkg-1.0.0.tgz","shasum":"0000000000000000000000000000000000000000"}}}}`, credName, s.port)
			default:
				fmt.Fprint(w, "authenticated")
			}
		})}
	go srv.ServeTLS(l, "", "")
	return s, srv, nil
}

// serveCredentials is the test binary as the remote credential server
// (hack/test.sh starts it in the remote host's namespace): it serves on
// addr until killed, with its files in dir and a file "ready" once it
// listens.
func serveCredentials(addr, dir string) int {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, _, err := startCredServer(dir, l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	select {}
}

// testCertificate makes a CA and a certificate for name it signed; it
// returns the certificate and the CA's, in PEM.
func testCertificate(name string) (tls.Certificate, []byte, error) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cshell e2e credential CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

// makeRepo makes a bare repository repos/repo.git of one commit.
func makeRepo(repos, work string) error {
	git := func(dir string, args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=cshell e2e", "-c", "user.email=e2e@cshell.test", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
		return nil
	}
	for _, d := range []string{repos, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := git(work, "init", "-q"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("credential test repo\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "README"}, {"commit", "-q", "-m", "first"}} {
		if err := git(work, args...); err != nil {
			return err
		}
	}
	return git(repos, "clone", "-q", "--bare", work, "repo.git")
}

// authedCount asks the server how many requests it authenticated.
func (s *credServer) authedCount(t *testing.T) int64 {
	t.Helper()
	pool := x509.NewCertPool()
	ca, _ := os.ReadFile(s.caFile)
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: credName},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(s.addr, strconv.Itoa(s.port)))
		}}}
	resp, err := c.Get(s.url("/cshell-authed"))
	if err != nil {
		t.Fatalf("ask the credential server: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatalf("the credential server's count: %q", b)
	}
	return n
}

func (s *credServer) ok(auth string) bool {
	scheme, rest, _ := strings.Cut(auth, " ")
	switch strings.ToLower(scheme) {
	case "bearer", "token":
		return rest == s.secret
	case "basic":
		dec, err := base64.StdEncoding.DecodeString(rest)
		_, pass, _ := strings.Cut(string(dec), ":")
		return err == nil && pass == s.secret
	}
	return false
}

func (s *credServer) url(path string) string {
	return fmt.Sprintf("https://%s:%d%s", s.name, s.port, path)
}

// addHost is the --add-host that leads the server's name to it.
func (s *credServer) addHost() string { return s.name + ":" + s.addr }

// noSecret fails the test when text holds the secret.
func noSecret(t *testing.T, where, text, secret string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("the secret appears in %s: %q", where, text)
	}
}

// Tools reach a credentialed HTTPS host authenticated with a value the
// shell never holds: curl through the proxy and directly (the egress),
// Node's fetch, git over HTTPS (basic credentials in the URL) and npm
// (a token in .npmrc). Without the credential the same host answers 401.
// Inside, the variable holds a placeholder, and neither the environment
// of any process, the trust bundle nor anything cshell prints holds the
// value.
func TestCredentialsReachAuthenticated(t *testing.T) {
	requireLinux(t)
	srv := newCredServer(t)
	// The caller holds the secret; cshell (this machine's side) trusts the
	// server's CA as Go programs do (SSL_CERT_FILE).
	t.Setenv("CSHELL_E2E_TOKEN", srv.secret)
	t.Setenv("SSL_CERT_FILE", srv.caFile)
	flags := []string{"--credential", fmt.Sprintf("TOKEN@%s:%d,env=CSHELL_E2E_TOKEN", srv.name, srv.port), "--add-host", srv.addHost()}
	wd := projectDir(t, map[string]string{
		".npmrc": fmt.Sprintf("registry=https://%s:%d/\n//%s:%d/:_authToken=${TOKEN}\n", srv.name, srv.port, srv.name, srv.port),
	})
	cases := []struct{ name, script, want string }{
		{"curl through the proxy", `curl -sS -H "Authorization: Bearer $TOKEN" ` + srv.url("/whoami"), "authenticated"},
		{"curl direct", `curl -sS --noproxy '*' -H "Authorization: token $TOKEN" ` + srv.url("/whoami"), "authenticated"},
		{"node fetch", `node -e "fetch('` + srv.url("/whoami") + `', {headers: {authorization: 'Bearer ' + process.env.TOKEN}}).then(r => r.text()).then(t => console.log(t), e => { console.log('failed', e.cause && e.cause.code); process.exit(3) })"`, "authenticated"},
		{"git clone", `git clone -q "https://x-access-token:$TOKEN@` + fmt.Sprintf("%s:%d", srv.name, srv.port) + `/repo.git" /tmp/c && cat /tmp/c/README`, "credential test repo"},
		{"npm view", "npm view cshell-cred-pkg version", "1.0.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := srv.authedCount(t)
			r := run(t, call{args: append(append([]string{"run"}, flags...), "--", c.script), dir: wd, env: toolEnv()})
			if r.code != 0 || strings.TrimSpace(r.stdout) != c.want {
				t.Errorf("code %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, c.want)
			}
			if srv.authedCount(t) == before {
				t.Errorf("the server saw no authenticated request")
			}
			noSecret(t, "stdout", r.stdout, srv.secret)
			noSecret(t, "stderr", r.stderr, srv.secret)
		})
	}

	// What the shell holds: a placeholder, no secret anywhere it can read.
	r := run(t, call{args: append(append([]string{"run"}, flags...), "--",
		`echo "TOKEN=$TOKEN"; cat /proc/[0-9]*/environ | tr '\0' '\n'; cat /run/cshell/ca-certificates.crt`),
		dir: wd})
	if r.code != 0 || !strings.Contains(r.stdout, "TOKEN=cshell-placeholder-") || !strings.Contains(r.stdout, "BEGIN CERTIFICATE") {
		t.Errorf("inside: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	noSecret(t, "the shell's view", r.stdout, srv.secret)
	if strings.Contains(r.stdout, "PRIVATE KEY") {
		t.Errorf("a private key is readable in the shell")
	}
	// No file the shell can read where cshell puts its own (its /tmp,
	// /run, /etc) holds the value: searched for by its random half.
	half := srv.secret[len(srv.secret)-12:]
	r = run(t, call{args: append(append([]string{"run"}, flags...), "--", "bash", "-c", `grep -rIls -e "$1" /tmp /run /etc 2>/dev/null; echo end`, "probe", half), dir: wd})
	if r.stdout != "end\n" {
		t.Errorf("files inside hold the value: %q (stderr %q)", r.stdout, r.stderr)
	}

	// The same request without the credential: the host refuses it, so
	// the cases above did authenticate through cshell.
	r = run(t, call{args: []string{"run", "--allow-host", fmt.Sprintf("%s:%d", srv.name, srv.port), "--add-host", srv.addHost(), "--",
		`curl -sS -H "Authorization: Bearer $TOKEN" ` + srv.url("/whoami")}, dir: wd, env: []string{"TOKEN=wrong", "CURL_CA_BUNDLE=" + srv.caFile}})
	if strings.TrimSpace(r.stdout) != "unauthenticated" {
		t.Errorf("without the credential: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A placeholder sent to any other host, allowed or not, is refused by
// the proxy and recorded, and the other host never hears of it: in a
// header, in basic credentials, in the URL.
func TestCredentialRefusedElsewhere(t *testing.T) {
	requireLinux(t)
	srv := newCredServer(t)
	var hits atomic.Int64
	other := httpGreeterCounting(t, &hits)
	t.Setenv("CSHELL_E2E_TOKEN", srv.secret)
	otherURL := fmt.Sprintf("other.cred.test:%d", other)
	flags := []string{"--credential", fmt.Sprintf("TOKEN@%s,env=CSHELL_E2E_TOKEN", srv.name), "--add-host", srv.addHost(),
		"--add-host", "other.cred.test:127.0.0.1", "--allow-host", otherURL}
	for _, script := range []string{
		`curl -sS -H "Authorization: Bearer $TOKEN" http://` + otherURL + `/`,
		`curl -sS -H "X-Anything: $TOKEN" http://` + otherURL + `/`,
		`curl -sS "http://user:$TOKEN@` + otherURL + `/"`,
		`curl -sS "http://` + otherURL + `/?t=$TOKEN"`,
	} {
		r := run(t, call{args: append(append([]string{"run"}, flags...), "--", script), dir: t.TempDir()})
		if !strings.Contains(r.stdout, "refused: credential TOKEN to other.cred.test") {
			t.Errorf("%s: stdout %q, stderr %q; want the proxy's refusal", script, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "refused GET other.cred.test:") || !strings.Contains(r.stderr, "credential TOKEN to other.cred.test") {
			t.Errorf("%s: stderr %q; want the refusal told", script, r.stderr)
		}
		noSecret(t, "stderr", r.stderr, srv.secret)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other host was sent %d request(s) carrying the placeholder", n)
	}
	// A request there without the placeholder goes through.
	r := run(t, call{args: append(append([]string{"run"}, flags...), "--", `curl -sS http://`+otherURL+`/`), dir: t.TempDir()})
	if strings.TrimSpace(r.stdout) != "hello" || hits.Load() != 1 {
		t.Errorf("a plain request: stdout %q, stderr %q, hits %d", r.stdout, r.stderr, hits.Load())
	}
}

// Plain HTTP gets the value only when the declaration says ,http: through
// the proxy and directly. Without it the request is refused, and the
// server never sees it.
func TestCredentialPlainHTTP(t *testing.T) {
	requireLinux(t)
	b := make([]byte, 12)
	rand.Read(b)
	secret := "cshell-e2e-secret-" + hex.EncodeToString(b)
	var seen atomic.Int64
	port := httpGreeterHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(w, "unauthenticated", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "authenticated")
	}))
	t.Setenv("CSHELL_E2E_TOKEN", secret)
	hp := fmt.Sprintf("plain.cred.test:%d", port)
	get := `curl -sS -H "Authorization: Bearer $TOKEN" http://` + hp + `/`
	for _, script := range []string{get, strings.Replace(get, "curl ", "curl --noproxy '*' ", 1)} {
		r := run(t, call{args: []string{"run", "--credential", "TOKEN@" + hp + ",env=CSHELL_E2E_TOKEN,http", "--add-host", "plain.cred.test:127.0.0.1", "--", script}, dir: t.TempDir()})
		if strings.TrimSpace(r.stdout) != "authenticated" {
			t.Errorf("%s with ,http: code %d, stdout %q, stderr %q", script, r.code, r.stdout, r.stderr)
		}
		noSecret(t, "stderr", r.stderr, secret)
	}
	before := seen.Load()
	r := run(t, call{args: []string{"run", "--credential", "TOKEN@" + hp + ",env=CSHELL_E2E_TOKEN", "--add-host", "plain.cred.test:127.0.0.1", "--", get}, dir: t.TempDir()})
	if !strings.Contains(r.stdout, "credential TOKEN goes only over HTTPS") || seen.Load() != before {
		t.Errorf("without ,http: stdout %q, stderr %q, server saw %d", r.stdout, r.stderr, seen.Load()-before)
	}
}

// httpGreeterCounting is httpGreeter on 127.0.0.1 that counts requests.
func httpGreeterCounting(t *testing.T, hits *atomic.Int64) int {
	t.Helper()
	return httpGreeterHandler(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		io.WriteString(w, "hello")
	}))
}

// A background shell's credential: named (never valued) by ps --json and
// meta.json, read from a file, taken back while the shell runs
// (allow --revoke-credential: its next request is refused and recorded)
// and given back (--restore-credential). Nothing in the state dir holds
// the value.
func TestCredentialBackgroundRevoke(t *testing.T) {
	requireLinux(t)
	srv := newCredServer(t)
	t.Setenv("SSL_CERT_FILE", srv.caFile)
	secretFile := filepath.Join(t.TempDir(), "token")
	writeFile(t, secretFile, srv.secret+"\n")
	os.Chmod(secretFile, 0o600)
	e := newBG(t)
	poll := `while :; do curl -s -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $TOKEN" ` + srv.url("/whoami") + `; sleep 0.2; done`
	id := e.start(poll, "--credential", fmt.Sprintf("TOKEN@%s:%d,file=%s", srv.name, srv.port, secretFile), "--add-host", srv.addHost())
	waitOutput := func(want string, after int) int {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			b, _ := os.ReadFile(filepath.Join(e.state, "shells", id, "output.log"))
			if i := strings.Index(string(b[min(after, len(b)):]), want); i >= 0 {
				return after + i + len(want)
			}
			time.Sleep(100 * time.Millisecond)
		}
		b, _ := os.ReadFile(filepath.Join(e.state, "shells", id, "output.log"))
		t.Fatalf("no %q after byte %d of the output: %q", want, after, b)
		return 0
	}
	at := waitOutput("200\n", 0)

	var list []map[string]any
	if err := json.Unmarshal([]byte(e.cs("ps", "--json").stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("ps --json: %v %v", err, list)
	}
	creds, _ := json.Marshal(list[0]["credentials"])
	if want := fmt.Sprintf(`[{"header":"Authorization","host":"api.cred.test:%d","name":"TOKEN"}]`, srv.port); string(creds) != want {
		t.Errorf("ps --json credentials: %s, want %s", creds, want)
	}

	if r := e.cs("allow", "--revoke-credential", "TOKEN"); r.code != 0 || !strings.Contains(r.stdout, "revoked credential TOKEN") {
		t.Fatalf("revoke: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	at = waitOutput("403\n", at)
	if r := e.cs("allow", "--list"); !strings.Contains(r.stdout, "revoked credential TOKEN") {
		t.Errorf("allow --list: %q", r.stdout)
	}
	if r := e.cs("allow", "--restore-credential", "TOKEN"); r.code != 0 {
		t.Fatalf("restore: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	waitOutput("200\n", at)
	if r := e.cs("allow", "--restore-credential", "TOKEN"); r.code != 1 || !strings.Contains(r.stderr, "not revoked") {
		t.Errorf("a second restore: code %d, stderr %q; want exit 1 and a sentence", r.code, r.stderr)
	}
	vb, _ := os.ReadFile(filepath.Join(e.state, "shells", id, "violations.log"))
	if !strings.Contains(string(vb), "credential TOKEN was revoked") || !strings.Contains(string(vb), `"credential":"TOKEN"`) {
		t.Errorf("violations.log: %q", vb)
	}
	// A credential's refusal asks for no grant: the host may be reached.
	if ev := e.cs("events", "--json").stdout; strings.Contains(ev, credName) {
		t.Errorf("events tell of the credential's refusal as a refused host: %q", ev)
	}
	e.cs("kill", id, "--grace", "0")
	e.waitEnd(id)
	// Nothing cshell wrote holds the value.
	filepath.WalkDir(e.state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			noSecret(t, p, string(b), srv.secret)
		}
		return nil
	})
	noSecret(t, "cshell output", e.cs("output", id).stdout, srv.secret)
}

// Bad declarations are refused with a sentence and exit 2, before
// anything runs.
func TestCredentialBadInput(t *testing.T) {
	requireLinux(t)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink("/etc/hostname", link)
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--credential", "TOKEN"}, nil, "write NAME@HOST"},
		{[]string{"--credential", "TOKEN@api.test"}, []string{"TOKEN="}, "TOKEN is not set in cshell's environment"},
		{[]string{"--credential", "TOKEN@api.test,file=" + link}, nil, "is reached through a symbolic link"},
		{[]string{"--credential", "TOKEN@api.test,header=Host"}, []string{"TOKEN=x"}, "frames the request"},
		{[]string{"--credential", "PATH@api.test"}, nil, "cshell sets PATH"},
		{[]string{"--credential", "TOKEN@api.test", "-e", "TOKEN"}, []string{"TOKEN=x"}, "also given with --env"},
		{[]string{"--isolation", "process", "--credential", "TOKEN@api.test"}, []string{"TOKEN=x"}, "--isolation process"},
	} {
		r := run(t, call{args: append(append([]string{"run"}, c.args...), "--", "echo ran"), dir: t.TempDir(), env: c.env})
		wantCode := 2
		if c.args[0] == "--isolation" {
			wantCode = 1
		}
		if r.code != wantCode || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout, "ran") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want exit %d and one sentence with %q", c.args, r.code, r.stdout, r.stderr, wantCode, c.want)
		}
	}
}

// cshell serve takes the same flag: every call's shell gets the
// credential (warm sandboxes too, each with a placeholder of its own),
// background shells as well, and no result carries the value.
func TestServeCredentials(t *testing.T) {
	requireLinux(t)
	srv := newCredServer(t)
	t.Setenv("CSHELL_E2E_TOKEN", srv.secret)
	t.Setenv("SSL_CERT_FILE", srv.caFile)
	c := startServe(t, "", "--credential", fmt.Sprintf("TOKEN@%s:%d,env=CSHELL_E2E_TOKEN", srv.name, srv.port), "--add-host", srv.addHost())
	get := `curl -sS -H "Authorization: Bearer $TOKEN" ` + srv.url("/whoami") + `; echo; echo "$TOKEN"`
	var placeholders []string
	for i := 0; i < 3; i++ { // the first cold or warm, the next ones warm
		text, isErr := c.call("bash", map[string]any{"command": get})
		if isErr || !strings.Contains(text, "authenticated") || strings.Contains(text, "unauthenticated") {
			t.Fatalf("call %d: %q", i, text)
		}
		noSecret(t, "a bash result", text, srv.secret)
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "cshell-placeholder-") {
				placeholders = append(placeholders, l)
			}
		}
		time.Sleep(300 * time.Millisecond) // the next warm sandbox is made
	}
	if len(placeholders) != 3 || placeholders[0] == placeholders[1] || placeholders[1] == placeholders[2] {
		t.Errorf("placeholders %q: want one of its own in each call", placeholders)
	}
	text, isErr := c.call("bash", map[string]any{"command": get + "; sleep 30", "run_in_background": true})
	if isErr {
		t.Fatalf("background: %q", text)
	}
	noSecret(t, "the background answer", text, srv.secret)
	deadline := time.Now().Add(15 * time.Second)
	var out string
	for time.Now().Before(deadline) {
		logs, _ := filepath.Glob(filepath.Join(c.state, "shells", "*", "output.log"))
		if len(logs) == 1 {
			b, _ := os.ReadFile(logs[0])
			if out = string(b); strings.Contains(out, "cshell-placeholder-") {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(out, "authenticated\n") {
		t.Errorf("background output %q", out)
	}
	noSecret(t, "the background log", out, srv.secret)
}
