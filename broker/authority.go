// Package broker adds credentials to a shell's requests on their way out,
// so that the secret never enters the shell: the shell holds a placeholder
// in its environment, and the broker, between the shell's proxy (or its
// egress) and the declared host, puts the real value where the
// placeholder stands in the declared header. For HTTPS it ends the
// shell's TLS with a certificate of a certificate authority made for that
// shell alone (Authority), whose key lives only in this process's memory,
// and speaks TLS of its own to the host, verified as any client would.
//
// It imports no cshell package: the policy's decisions come in as
// functions (Dial, Refused, Revoked).
package broker

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Authority is one shell's certificate authority: it signs a certificate
// for each host the broker terminates TLS of. Its key is made in memory,
// never written, and dies with the process that holds it. Its certificate
// is constrained to the names (and addresses) of the credentials' hosts,
// so that even its key, were it taken, would vouch for no other host.
// Safe for concurrent use.
type Authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	leafKey crypto.Signer // one key for every leaf: a leaf is only as good as the authority anyway
	pem     []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// maxLeaves bounds the certificates kept (hosts a wildcard admits are
// as many as a shell asks for).
const maxLeaves = 1024

// Scope is what an authority may vouch for: domains (a name and every
// name under it) and addresses.
type Scope struct {
	Domains []string
	Addrs   []netip.Addr
}

// NewAuthority makes an authority valid from an hour ago (clocks differ)
// for lifetime, limited to scope.
func NewAuthority(scope Scope, lifetime time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "cshell shell " + hex.EncodeToString(id), Organization: []string{"cshell credential broker"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(lifetime),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		PermittedDNSDomains:   scope.Domains,
	}
	for _, a := range scope.Addrs {
		bits := 32
		if a.Is6() {
			bits = 128
		}
		tmpl.PermittedIPRanges = append(tmpl.PermittedIPRanges, prefixNet(netip.PrefixFrom(a, bits)))
	}
	if len(scope.Domains) == 0 { // no name at all, rather than any
		tmpl.PermittedDNSDomains = []string{"invalid"} // RFC 2606: never a real name
	}
	if len(scope.Addrs) == 0 { // no address at all, rather than any
		tmpl.ExcludedIPRanges = []*net.IPNet{prefixNet(netip.MustParsePrefix("0.0.0.0/0")), prefixNet(netip.MustParsePrefix("::/0"))}
	}
	tmpl.PermittedDNSDomainsCritical = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("make the shell's certificate authority: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key, leafKey: leafKey, leaves: map[string]*tls.Certificate{},
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n.Add(n, big.NewInt(1))
}

// PEM is the authority's certificate, for the shell's trust store.
func (a *Authority) PEM() []byte { return a.pem }

// Certificate is the authority's certificate.
func (a *Authority) Certificate() *x509.Certificate { return a.cert }

// Leaf returns a certificate for host (a name or an address), made on
// first use.
func (a *Authority) Leaf(host string) (*tls.Certificate, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.leaves[host]; ok {
		return c, nil
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    a.cert.NotBefore,
		NotAfter:     a.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		tmpl.IPAddresses = []net.IP{ip.AsSlice()}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, a.leafKey.Public(), a.key)
	if err != nil {
		return nil, fmt.Errorf("make a certificate for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: a.leafKey, Leaf: leaf}
	if len(a.leaves) >= maxLeaves {
		clear(a.leaves)
	}
	a.leaves[host] = c
	return c, nil
}

// Placeholder makes a placeholder for a credential: random, so that it
// means nothing to any other shell or host, and plain enough for any
// tool that takes a token.
func Placeholder() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "cshell-placeholder-" + hex.EncodeToString(b), nil
}
