//go:build e2e

package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tlsServer serves "hello over tls" on 127.0.0.1 with a certificate for
// name signed by a CA of its own, whose certificate it writes to a file
// in a folder of this machine's /tmp (which a shell has its own of). It
// returns the port and the CA file.
func tlsServer(t *testing.T, name string) (int, string) {
	t.Helper()
	return tlsServerWith(t, name, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello over tls") }))
}

// tlsServerWith is tlsServer with a handler of the caller's.
func tlsServerWith(t *testing.T, name string, h http.Handler) (int, string) {
	t.Helper()
	cert, caPEM, err := testCertificate(name)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "cshell-e2e-trust-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A client that refuses the certificate ends the handshake, which the
	// server would log (OpenSSL's alert reads as "bad record MAC" to Go).
	srv := &http.Server{ErrorLog: log.New(io.Discard, "", 0), Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(l, "", "")
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port, caFile
}

// The caller's TLS trust reaches the shell: the certificate variables
// pass, and the files they name are readable inside even where the shell
// has its own /tmp. Node's fetch, curl and python each trust the test's
// own CA through them; without them each refuses the server.
func TestCallerTrustSettings(t *testing.T) {
	requireLinux(t)
	const name = "cshell-tls.test"
	port, caFile := tlsServer(t, name)
	url := fmt.Sprintf("https://%s:%d/", name, port)
	net := []string{"--allow-host", fmt.Sprintf("%s:%d", name, port), "--add-host", name + ":127.0.0.1"}
	clients := []struct {
		name, variable, script string
	}{
		{"node fetch", "NODE_EXTRA_CA_CERTS", `node -e "fetch('` + url + `').then(r => r.text()).then(t => console.log(t), e => { console.log('failed', e.cause && e.cause.code); process.exit(3) })"`},
		{"curl", "CURL_CA_BUNDLE", "curl -sS --noproxy '*' " + url + " && echo"},
		{"python", "SSL_CERT_FILE", `python3 -c "import urllib.request; print(urllib.request.urlopen('` + url + `', timeout=10).read().decode())"`},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			// The test's own environment may name the machine's trust
			// (NODE_EXTRA_CA_CERTS and friends); each run sets its own.
			clear := []string{"NODE_EXTRA_CA_CERTS=", "CURL_CA_BUNDLE=", "SSL_CERT_FILE=", "SSL_CERT_DIR=", "REQUESTS_CA_BUNDLE="}
			r := run(t, call{args: append(append([]string{"run"}, net...), "--", c.script), dir: t.TempDir(),
				env: append(clear, c.variable+"="+caFile)})
			if r.code != 0 || strings.TrimSpace(r.stdout) != "hello over tls" {
				t.Errorf("with %s=%s: code %d, stdout %q, stderr %q", c.variable, caFile, r.code, r.stdout, r.stderr)
			}
			r = run(t, call{args: append(append([]string{"run"}, net...), "--", c.script), dir: t.TempDir(), env: clear})
			if r.code == 0 || strings.Contains(r.stdout, "hello over tls") {
				t.Errorf("without %s the server's unknown CA was trusted: code %d, stdout %q", c.variable, r.code, r.stdout)
			}
		})
	}

	// A hidden certificate stays hidden, with a warning.
	r := run(t, call{args: append(append([]string{"run", "--hide", caFile}, net...), "--", clients[0].script), dir: t.TempDir(),
		env: []string{"NODE_EXTRA_CA_CERTS=" + caFile}})
	if r.code == 0 || !strings.Contains(r.stderr, caFile+" is hidden") {
		t.Errorf("a hidden CA file: code %d, stdout %q, stderr %q; want a failure and a warning naming it", r.code, r.stdout, r.stderr)
	}
}

// A name this machine resolves itself (its /etc/hosts, here) that the
// shell may reach is reached by the name: the shell's own /etc/hosts sends
// every name to its resolver, which decides on the name asked for, and the
// egress dials it. Before, the shell read the host's /etc/hosts, got the
// address, and the egress refused the bare address.
func TestEgressResolvesAsTheHostDoes(t *testing.T) {
	_, hp := remote(t)
	name := os.Getenv("CSHELL_TEST_REMOTE_NAME")
	if name == "" {
		t.Skip("CSHELL_TEST_REMOTE_NAME is not set: hack/test.sh names the remote host in /etc/hosts")
	}
	port := strings.Split(hp, ":")[1]
	url := "http://" + name + ":" + port + "/hello"
	noProxy := "env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy -u NODE_USE_ENV_PROXY "
	script := strings.Join([]string{
		"curl -sS --noproxy '*' " + url,
		noProxy + `node -e "fetch('` + url + `').then(r => r.text()).then(t => process.stdout.write(t))"`,
		noProxy + `python3 -c "import urllib.request; print(urllib.request.urlopen('` + url + `', timeout=10).read().decode(), end='')"`,
	}, "; ")
	r := run(t, call{args: []string{"run", "--allow-host", name + ":" + port, "--", script}, dir: t.TempDir()})
	want := strings.Repeat("hello from the remote\n", 3)
	if r.code != 0 || r.stdout != want {
		t.Errorf("by a name in this machine's /etc/hosts: code %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// Not allowed, the name does not exist for the shell, though the
	// host's /etc/hosts knows it.
	r = run(t, call{args: []string{"run", "--allow-host", "example.invalid", "--", "getent hosts " + name + " || echo unknown"}, dir: t.TempDir()})
	if strings.TrimSpace(r.stdout) != "unknown" {
		t.Errorf("a name that is not allowed resolved: %q (stderr %q)", r.stdout, r.stderr)
	}
}
