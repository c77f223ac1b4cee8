package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cshell/cshell/broker"
)

// The bundle copies certificates only: a caller's file that holds a key
// beside its certificate gives the shell no key; and the authority comes
// last.
func TestTrustBundleCertificatesOnly(t *testing.T) {
	auth, err := broker.NewAuthority(broker.Scope{Domains: []string{"api.test"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := broker.NewAuthority(broker.Scope{Domains: []string{"x.test"}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "combined.pem")
	combined := string(other.PEM()) + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
	if err := os.WriteFile(file, []byte(combined), 0o600); err != nil {
		t.Fatal(err)
	}
	b := string(trustBundle([]string{"SSL_CERT_FILE=" + file, "AWS_CA_BUNDLE=/nonexistent"}, auth.PEM()))
	if strings.Contains(b, "PRIVATE KEY") {
		t.Error("the bundle holds a private key")
	}
	if !strings.Contains(b, strings.TrimSpace(string(other.PEM()))) || !strings.HasSuffix(b, string(auth.PEM())) {
		t.Errorf("bundle:\n%s", b)
	}
}
