package sandbox

import (
	"bytes"
	"encoding/pem"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cshell/cshell/broker"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/policy"
)

// Credential is a secret the shell's proxy adds to its requests to Host:
// the shell sees a placeholder in the variable Name, and the proxy puts
// Value in its place in Header (see package broker).
type Credential struct {
	Name   string
	Host   policy.HostPattern
	Ports  []int // the ports Host is held on
	Header string
	Plain  bool // plain HTTP too
	Value  string
}

// TrustEnvSet are the variables that name the certificates a shell's
// TLS clients trust, pointed at the shell's own bundle when it has
// credentials: OpenSSL and Go (SSL_CERT_FILE), Node (NODE_EXTRA_CA_CERTS),
// npm and pnpm (npm_config_cafile, above a cafile of an npmrc, as
// Debian's /etc/npmrc has), curl, git, Python's requests and pip, cargo,
// Deno, the AWS tools.
var TrustEnvSet = []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "npm_config_cafile", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	"REQUESTS_CA_BUNDLE", "PIP_CERT", "CARGO_HTTP_CAINFO", "DENO_CERT", "AWS_CA_BUNDLE"}

// systemBundles are where distributions keep their trusted roots, as
// Go's crypto/x509 looks for them.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// maxBundle bounds one certificate file read into a shell's bundle.
const maxBundle = 8 << 20

// brokerFor makes the broker of a shell's credentials: an authority of
// its own limited to their hosts, a placeholder each, the variables that
// name them and the shell's trust bundle (this machine's roots, the
// caller's certificate files, and the authority). It returns the broker,
// the environment to start the shell with, and the bundle.
func brokerFor(p *Proxy, env []string) (*broker.Broker, []string, []byte, error) {
	var scope broker.Scope
	for _, c := range p.Credentials {
		if a, err := netip.ParseAddr(c.Host.Host); err == nil {
			scope.Addrs = append(scope.Addrs, a)
		} else if !slices.Contains(scope.Domains, c.Host.Host) {
			scope.Domains = append(scope.Domains, c.Host.Host)
		}
	}
	// A shell may run for long; the key dies with this process anyway.
	auth, err := broker.NewAuthority(scope, 397*24*time.Hour)
	if err != nil {
		return nil, nil, nil, err
	}
	b := &broker.Broker{Authority: auth, Dial: policyDialer(p), Revoked: p.Revoked,
		Refused: func(host string, port int, method, credential, why string) {
			if p.Record != nil {
				v := policy.NewViolation(host, port, method, policy.Because(why))
				v.Credential = credential
				p.Record(v)
			}
		}}
	for _, c := range p.Credentials {
		ph, err := broker.Placeholder()
		if err != nil {
			return nil, nil, nil, err
		}
		pattern, ports := c.Host, slices.Clone(c.Ports)
		if len(ports) == 0 {
			ports = []int{443}
		}
		b.Credentials = append(b.Credentials, broker.Credential{Name: c.Name, Placeholder: ph, Value: c.Value,
			Header: c.Header, Host: pattern.String(), Plain: c.Plain,
			Matches: func(host string, port int) bool { return slices.Contains(ports, port) && pattern.Matches(host, port) }})
		env = policy.SetEnv(env, c.Name, ph)
	}
	bundle := trustBundle(env, auth.PEM())
	for _, k := range TrustEnvSet {
		env = policy.SetEnv(env, k, container.TrustPath)
	}
	return b, env, bundle, nil
}

// trustBundle is this machine's roots and the certificates of the files
// the caller's trust variables name (each one a variable of TrustEnvSet
// would replace), then authority. Only certificates are copied: a file
// that holds a key too gives the shell none of it.
func trustBundle(env []string, authority []byte) []byte {
	var out bytes.Buffer
	var files []string
	for _, f := range systemBundles {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			files = append(files, f)
			break
		}
	}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		if (slices.Contains(TrustEnvSet, k) || slices.Contains(policy.TrustEnv, k) && k != "SSL_CERT_DIR") && strings.HasPrefix(v, "/") && !slices.Contains(files, v) {
			files = append(files, v)
		}
	}
	for _, f := range files {
		b, err := safefs.ReadRegular(f, maxBundle) // no link last, no FIFO
		if err != nil {
			continue
		}
		for {
			var block *pem.Block
			if block, b = pem.Decode(b); block == nil {
				break
			}
			if block.Type == "CERTIFICATE" {
				_ = pem.Encode(&out, &pem.Block{Type: block.Type, Bytes: block.Bytes})
			}
		}
	}
	out.WriteString("# cshell: the authority of this shell's credential broker\n")
	out.Write(authority)
	return out.Bytes()
}
