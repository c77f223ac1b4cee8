package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

func TestPlanCredentials(t *testing.T) {
	r, f := base(t)
	f.Environ = append(f.Environ, "GH_TOKEN=ghp_real", "NPM_TOKEN=npm_real")
	file := filepath.Join(r.FS.Home, "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Credentials = []string{"GH_TOKEN@api.github.com", "KEY@*.example.com:443,file=~/token,header=x-api-key"}
	r.Config = &policy.Config{Env: policy.EnvConfig{Pass: []string{"GH_TOKEN", "NPM_TOKEN"}},
		Network: policy.NetworkConfig{Credentials: []string{"NPM_TOKEN@registry.npmjs.org", "GH_TOKEN@evil.example"}}}
	p := mustPlan(t, r, f)
	got := p.Network.Credentials
	if len(got) != 3 || got[0].Name != "GH_TOKEN" || got[0].Value != "ghp_real" || got[0].Host.String() != "api.github.com" || got[0].Header != "Authorization" ||
		got[1].Value != "from-file" || got[1].Header != "X-Api-Key" || got[1].Host.String() != "*.example.com:443" ||
		got[2].Name != "NPM_TOKEN" || got[2].Value != "npm_real" {
		t.Fatalf("credentials %+v (the flag's GH_TOKEN wins over the configuration's)", got)
	}
	for _, e := range p.Env {
		if strings.Contains(e, "_real") || strings.HasPrefix(e, "GH_TOKEN=") || strings.HasPrefix(e, "NPM_TOKEN=") {
			t.Errorf("the environment holds %q: env.pass must not pass a credential's value", e)
		}
	}
	if got := p.AllowHosts(); !strings.Contains(strings.Join(got, " "), "api.github.com") || !strings.Contains(strings.Join(got, " "), "registry.npmjs.org") {
		t.Errorf("allow %v: a credential's host is reachable", got)
	}
	if p.Network.ProxyPort == 0 {
		t.Error("no proxy")
	}
	// The value travels to the supervisor (gob), never in JSON.
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&buf)
	if err != nil || back.Network.Credentials[0].Value != "ghp_real" {
		t.Fatalf("decode: %v %+v", err, back)
	}
	j, _ := json.Marshal(p)
	if strings.Contains(string(j), "_real") || strings.Contains(string(j), "from-file") {
		t.Errorf("JSON of the plan holds a value: %s", j)
	}
	o := p.Options(Wiring{})
	if o.Proxy == nil || len(o.Proxy.Credentials) != 3 || o.Proxy.Credentials[1].Value != "from-file" {
		t.Errorf("options %+v", o.Proxy)
	}
}

func TestPlanCredentialRefusals(t *testing.T) {
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/etc/hostname", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		creds  []string
		env    []string
		iso    container.Isolation
		cfg    []string
		kind   error
		phrase string
	}{
		{creds: []string{"T@api.test"}, kind: ErrUsage, phrase: "T is not set"},
		{creds: []string{"T@api.test", "T@other.test"}, env: []string{"T=1"}, kind: ErrUsage, phrase: "given twice"},
		{creds: []string{"T@api.test,file=" + link}, kind: ErrUsage, phrase: "symbolic link"},
		{creds: []string{"T@api.test,file=/nonexistent/x"}, kind: ErrUsage, phrase: "cannot read /nonexistent/x: no such file"},
		{creds: []string{"T@api.test"}, env: []string{"T=a\nb"}, kind: ErrUsage, phrase: "line break"},
		{creds: []string{"T@api.test"}, env: []string{"T=1"}, iso: container.Process, kind: ErrRefused, phrase: "--isolation process"},
	} {
		r, f := base(t)
		r.Credentials = c.creds
		f.Environ = append(f.Environ, c.env...)
		if c.iso != "" {
			r.Isolation = c.iso
		}
		r.Config = &policy.Config{Network: policy.NetworkConfig{Credentials: c.cfg}}
		_, err := New(r, f)
		if err == nil || !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.phrase) {
			t.Errorf("%v %v: %v; want %v with %q", c.creds, c.cfg, err, c.kind, c.phrase)
		}
	}
	r, f := base(t)
	r.Purpose, r.BundleDir = Bundle, t.TempDir()
	r.Credentials = []string{"T@api.test"}
	f.Environ = append(f.Environ, "T=1")
	if _, err := New(r, f); err == nil || !strings.Contains(err.Error(), "bundle has no proxy") {
		t.Errorf("bundle: %v", err)
	}
}

// The variable a credential's value came from (env=) stays out of the
// shell too, whatever env.pass says, and so does any variable holding the
// value; -e of it is refused. A configuration's credential a shell cannot
// have is left out with a warning; the flag's is refused.
func TestPlanCredentialSources(t *testing.T) {
	r, f := base(t)
	f.Environ = append(f.Environ, "GITHUB_TOKEN=ghp_real", "COPY=ghp_real")
	r.Credentials = []string{"GH@api.github.com,env=GITHUB_TOKEN"}
	r.Config = &policy.Config{Env: policy.EnvConfig{Pass: []string{"GITHUB_*", "COPY"}}}
	p := mustPlan(t, r, f)
	for _, e := range p.Env {
		if strings.Contains(e, "ghp_real") {
			t.Errorf("the environment holds %q", e)
		}
	}
	if c := p.Network.Credentials[0]; c.Value != "ghp_real" || c.Ports[0] != 443 || len(c.Ports) != 1 {
		t.Errorf("credential %+v", c)
	}
	r.Env = []string{"GITHUB_TOKEN"}
	if _, err := New(r, f); err == nil || !strings.Contains(err.Error(), "GITHUB_TOKEN is also given with --env") {
		t.Errorf("-e of the source: %v", err)
	}

	r, f = base(t)
	f.Environ = append(f.Environ, "T=1")
	r.Isolation = container.Process
	r.Config = &policy.Config{Network: policy.NetworkConfig{Credentials: []string{"T@api.test"}}}
	p = mustPlan(t, r, f)
	if len(p.Network.Credentials) != 0 || len(p.Warnings) == 0 || !strings.Contains(strings.Join(p.Warnings, "\n"), "network.credentials T@api.test is not given to this shell") {
		t.Errorf("process isolation with a configured credential: %+v, warnings %q", p.Network.Credentials, p.Warnings)
	}
}

// A credential's file is hidden from the shell; a configured credential
// whose value is missing, or that names no host, is left out with a
// warning (the flag's is refused); a short value does not strip
// variables that merely contain it.
func TestPlanCredentialFilesAndWarnings(t *testing.T) {
	r, f := base(t)
	file := filepath.Join(r.FS.Home, "gh-token")
	if err := os.WriteFile(file, []byte("x1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.Environ = append(f.Environ, "SHLVL=1x1", "K=1")
	r.Credentials = []string{"GH@api.github.com,file=~/gh-token"}
	r.Config = &policy.Config{Env: policy.EnvConfig{Pass: []string{"SHLVL", "K"}},
		Network: policy.NetworkConfig{Credentials: []string{"UNSET@api.test", "ALONE"}}}
	p := mustPlan(t, r, f)
	if !slices.Contains(p.FS.Hide, file) {
		t.Errorf("hidden %v: the credential's file must be", p.FS.Hide)
	}
	w := strings.Join(p.Warnings, "\n")
	if !strings.Contains(w, "network.credentials UNSET@api.test is left out: UNSET is not set") || !strings.Contains(w, `"ALONE" names no host`) {
		t.Errorf("warnings %q", p.Warnings)
	}
	if policy.EnvValue(p.Env, "SHLVL") != "1x1" || policy.EnvValue(p.Env, "K") != "1" {
		t.Errorf("env %q: a variable holding a short value's text was dropped", p.Env)
	}
	if len(p.Network.Credentials) != 1 {
		t.Errorf("credentials %+v", p.Network.Credentials)
	}
}
