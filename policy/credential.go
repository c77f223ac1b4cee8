package policy

import (
	"fmt"
	"net/textproto"
	"slices"
	"strings"
)

// CredentialSpec is one declared credential (--credential, config
// network.credentials): a secret the caller holds, the host pattern it
// may be sent to, and the header it goes in. The shell sees a placeholder
// in the variable Name; the shell's proxy puts the value in its place.
type CredentialSpec struct {
	Name   string      // the variable the shell sees
	Host   HostPattern // where the value may go
	Env    string      // the caller's variable that holds the value ("" with File)
	File   string      // or the file that holds it (as written: ~/ allowed)
	Header string      // canonical header name
	Plain  bool        // ,http: plain HTTP too, not only HTTPS
}

// DefaultCredentialHeader is where a credential goes unless header= says.
const DefaultCredentialHeader = "Authorization"

// credentialSyntax is how to write one, for sentences.
const credentialSyntax = "write NAME@HOST, with ,env=VAR or ,file=PATH for where its value is, ,header=HEADER for where it goes (default Authorization) and ,http to allow plain HTTP, such as GH_TOKEN@api.github.com"

// reservedCredentialNames are variables cshell sets in every shell itself.
var reservedCredentialNames = []string{"PATH", "HOME", "TMPDIR", "NODE_USE_ENV_PROXY", "NO_PROXY", "no_proxy",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// unfitHeaders are headers a credential may not go in: they frame the
// request or the proxy's own exchange.
var unfitHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Te", "Trailer",
	"Proxy-Authorization", "Proxy-Connection", "Keep-Alive"}

// ParseCredential reads NAME@HOST[,env=VAR][,file=PATH][,header=HEADER].
func ParseCredential(s string) (CredentialSpec, error) {
	var c CredentialSpec
	head, opts, _ := strings.Cut(s, ",")
	name, host, ok := strings.Cut(head, "@")
	if !ok || name == "" || host == "" {
		return c, fmt.Errorf("credential %q: %s", s, credentialSyntax)
	}
	if err := CheckEnvKey(name); err != nil {
		return c, fmt.Errorf("credential %q: %w", s, err)
	}
	if slices.Contains(reservedCredentialNames, name) || slices.Contains(TrustEnv, name) {
		return c, fmt.Errorf("credential %q: cshell sets %s in every shell itself; name the credential otherwise", s, name)
	}
	hp, err := ParseHostPattern(host)
	if err != nil {
		return c, fmt.Errorf("credential %q: %w", s, err)
	}
	c.Name, c.Host, c.Header = name, hp, DefaultCredentialHeader
	if opts != "" {
		for _, o := range strings.Split(opts, ",") {
			if o == "http" {
				c.Plain = true
				continue
			}
			k, v, ok := strings.Cut(o, "=")
			if !ok || v == "" {
				return c, fmt.Errorf("credential %q: option %q needs a value; %s", s, o, credentialSyntax)
			}
			switch k {
			case "env":
				if err := CheckEnvKey(v); err != nil {
					return c, fmt.Errorf("credential %q: env=%s: %w", s, v, err)
				}
				c.Env = v
			case "file":
				if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~/") {
					return c, fmt.Errorf("credential %q: file=%s: name the file by its absolute path (or ~/)", s, v)
				}
				c.File = v
			case "header":
				if !validToken(v) {
					return c, fmt.Errorf("credential %q: header %q is not a header name", s, v)
				}
				c.Header = textproto.CanonicalMIMEHeaderKey(v)
				if slices.Contains(unfitHeaders, c.Header) {
					return c, fmt.Errorf("credential %q: %s frames the request; a credential may not go in it", s, c.Header)
				}
			default:
				return c, fmt.Errorf("credential %q: unknown option %q; %s", s, k, credentialSyntax)
			}
		}
	}
	if c.Env != "" && c.File != "" {
		return c, fmt.Errorf("credential %q: give env= or file=, not both", s)
	}
	if c.File == "" && c.Env == "" {
		c.Env = name
	}
	return c, nil
}

// validToken reports whether s is an HTTP token (a header name).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// String writes the spec back as a user would (the value's source
// included, never the value).
func (c CredentialSpec) String() string {
	s := c.Name + "@" + c.Host.String()
	if c.File != "" {
		s += ",file=" + c.File
	} else if c.Env != c.Name {
		s += ",env=" + c.Env
	}
	if c.Header != DefaultCredentialHeader {
		s += ",header=" + c.Header
	}
	if c.Plain {
		s += ",http"
	}
	return s
}

// Ports are the ports a credential's host is held on: the pattern's own,
// else 443 (and 80 with Plain), so that other services of the host (ssh
// to a git host) pass as before and never get the value.
func (c CredentialSpec) Ports() []int {
	switch {
	case c.Host.Port != 0:
		return []int{c.Host.Port}
	case c.Plain:
		return []int{443, 80}
	}
	return []int{443}
}

// CredentialName is the NAME of a credential entry ("NAME" alone too, as
// a project file keeps one).
func CredentialName(entry string) string {
	head, _, _ := strings.Cut(entry, ",")
	name, _, _ := strings.Cut(head, "@")
	return strings.TrimSpace(name)
}
