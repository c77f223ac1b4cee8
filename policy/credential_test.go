package policy

import (
	"strings"
	"testing"
)

func TestParseCredential(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "GH_TOKEN@api.github.com", want: "GH_TOKEN@api.github.com"},
		{in: "T@*.example.com:8443,env=OTHER", want: "T@*.example.com:8443,env=OTHER"},
		{in: "T@example.com,file=~/x,header=x-api-key", want: "T@example.com,file=~/x,header=X-Api-Key"},
		{in: "T@example.com,env=T", want: "T@example.com"},
		{in: "T", err: "write NAME@HOST"},
		{in: "@example.com", err: "write NAME@HOST"},
		{in: "T=X@example.com", err: "credential"},
		{in: "T@https://example.com", err: "is a URL"},
		{in: "T@example.com,env=A,file=/b", err: "not both"},
		{in: "T@example.com,file=rel/x", err: "absolute path"},
		{in: "T@example.com,http", want: "T@example.com,http"},
		{in: "T@example.com,header=Content-Length", err: "frames the request"},
		{in: "T@example.com,header=bad header", err: "not a header name"},
		{in: "T@example.com,bogus=1", err: "unknown option"},
		{in: "T@example.com,env=", err: "needs a value"},
		{in: "HTTPS_PROXY@example.com", err: "cshell sets HTTPS_PROXY"},
		{in: "SSL_CERT_FILE@example.com", err: "cshell sets SSL_CERT_FILE"},
	} {
		got, err := ParseCredential(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("%q: %v %q, want %q", c.in, err, got.String(), c.want)
		}
	}
}

func TestLayerCredentials(t *testing.T) {
	global := &Config{Network: NetworkConfig{Credentials: []string{"A@a.test", "B@b.test,env=BB"}}}
	project := &Config{Network: NetworkConfig{Credentials: []string{"B", "C@evil.test", "A@other.test"}}}
	out, warn := Layer(global, project, ".cshell.json")
	if len(out.Network.Credentials) != 1 || out.Network.Credentials[0] != "B@b.test,env=BB" {
		t.Errorf("kept %v", out.Network.Credentials)
	}
	if len(warn) != 2 || !strings.Contains(warn[0], "C@evil.test") || !strings.Contains(warn[1], "A@other.test") {
		t.Errorf("warnings %q", warn)
	}
	out, _ = Layer(global, &Config{}, ".cshell.json")
	if len(out.Network.Credentials) != 2 {
		t.Errorf("no project entry keeps all: %v", out.Network.Credentials)
	}
}
