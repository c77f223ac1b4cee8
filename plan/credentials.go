package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/policy"
)

// Credential is a secret the shell's proxy adds to its requests to Host,
// in Header, where the shell's placeholder stands. Value travels to the
// supervisor with the plan (over its pipe) and is never shown.
type Credential struct {
	Name   string             `json:"name"`
	Host   policy.HostPattern `json:"host"`
	Ports  []int              `json:"ports"` // where Host is held (policy.CredentialSpec.Ports)
	Header string             `json:"header"`
	Plain  bool               `json:"http,omitempty"`
	Source string             `json:"-"` // the caller's variable it came from, kept out of the shell too
	Value  string             `json:"-"` // gob carries it; JSON never
}

// maxCredentialFile bounds a credential read from a file.
const maxCredentialFile = 64 << 10

// credentials reads the declared credentials (--credential, then the
// configuration's network.credentials for names the flags did not give),
// each value from the caller's environment or file, and lets each host
// be reached. A shell that cannot have credentials (no proxy: a bundle,
// --isolation process) refuses the flag's, and goes without the
// configuration's, with a warning.
func (p *Plan) credentials(r Request, cfg *policy.Config, f Facts) error {
	type entry struct {
		spec   policy.CredentialSpec
		where  string
		global bool
	}
	var entries []entry
	for _, s := range r.Credentials {
		c, err := policy.ParseCredential(s)
		if err != nil {
			return usageErr("--credential: %w", err)
		}
		if slices.ContainsFunc(entries, func(e entry) bool { return e.spec.Name == c.Name }) {
			return usageErr("--credential %s is given twice; give each name once", c.Name)
		}
		entries = append(entries, entry{c, "--credential " + escape.Line(s), false})
	}
	for _, s := range cfg.Network.Credentials {
		if !strings.Contains(s, "@") {
			p.warn("network.credentials %q names no host and is left out; write NAME@HOST in the global configuration", escape.Line(s))
			p.credentialVars = append(p.credentialVars, policy.CredentialName(s))
			continue
		}
		c, err := policy.ParseCredential(s)
		if err != nil {
			return usageErr("network.credentials: %w", err)
		}
		if !slices.ContainsFunc(entries, func(e entry) bool { return e.spec.Name == c.Name }) {
			entries = append(entries, entry{c, "network.credentials " + escape.Line(s), true})
		}
	}
	var why string
	switch {
	case p.Purpose == Bundle:
		why = "a bundle has no proxy to add credentials"
	case !p.Namespaced:
		why = "credentials are added by a container shell's proxy, which --isolation process has none of"
	}
	for _, e := range entries {
		// Whatever becomes of it, its variables never pass with a value.
		p.credentialVars = append(p.credentialVars, e.spec.Name, e.spec.Env)
		if why == "" {
			continue
		}
		if !e.global {
			if p.Purpose == Bundle {
				return usageErr("%s: %s; leave credentials out of cshell spec", e.where, why)
			}
			return refusedErr("%s: %s; run in a container, or pass the value with -e knowing the command can read it", e.where, why)
		}
		p.warn("%s is not given to this shell: %s", e.where, why)
	}
	if why != "" {
		return nil
	}
	for _, e := range entries {
		for _, kv := range r.Env {
			k, _, _ := strings.Cut(kv, "=")
			if k == e.spec.Name || k == e.spec.Env {
				return usageErr("%s: %s is also given with --env, which would hand the shell the value; leave one out", e.where, k)
			}
		}
		v, err := credentialValue(e.spec, f.Environ, r.FS.Home)
		if err != nil && e.global {
			p.warn("%s is left out: %v", e.where, err)
			continue
		}
		if err != nil {
			return usageErr("%s: %w", e.where, err)
		}
		if e.spec.File != "" {
			// The file stays the host's: the shell must not read it.
			p.credentialFiles = append(p.credentialFiles, credentialPath(e.spec.File, r.FS.Home))
		}
		p.Network.Credentials = append(p.Network.Credentials, Credential{Name: e.spec.Name, Host: e.spec.Host, Ports: e.spec.Ports(),
			Header: e.spec.Header, Plain: e.spec.Plain, Source: e.spec.Env, Value: v})
		if !slices.ContainsFunc(p.Network.Allow, func(h policy.HostPattern) bool { return h.Covers(e.spec.Host) }) {
			p.Network.Allow = append(p.Network.Allow, e.spec.Host)
		}
	}
	return nil
}

// withoutCredentials drops from env what would hand the shell a
// credential's value: its name, the variable it came from, and any
// variable that holds the value itself.
func withoutCredentials(env []string, vars []string, creds []Credential) []string {
	return slices.DeleteFunc(env, func(kv string) bool {
		k, v, _ := strings.Cut(kv, "=")
		return slices.Contains(vars, k) || slices.ContainsFunc(creds, func(c Credential) bool {
			// A short value would match what it is part of by chance.
			return v == c.Value || len(c.Value) >= 8 && strings.Contains(v, c.Value)
		})
	})
}

// credentialPath is a file= path as read: ~/ in the home.
func credentialPath(path, home string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return path
}

// credentialValue reads a credential's value: the caller's variable, or
// its file (named by an absolute path or ~/, no symbolic link on the way,
// at most 64 KiB, one line's end trimmed). A value a header cannot carry
// is refused.
func credentialValue(c policy.CredentialSpec, environ []string, home string) (string, error) {
	var v string
	if c.Env != "" {
		var ok bool
		if v, ok = lookup(environ, c.Env); !ok || v == "" {
			return "", errors.New(c.Env + " is not set in cshell's environment; export it, or name a file with ,file=PATH")
		}
	} else {
		if strings.HasPrefix(c.File, "~/") && home == "" {
			return "", errors.New("file=" + escape.Line(c.File) + " names the home, which this user has none of; give an absolute path")
		}
		path := credentialPath(c.File, home)
		b, err := readNoLinks(path, maxCredentialFile)
		if err != nil {
			return "", err
		}
		b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
		if len(b) == 0 {
			return "", errors.New(escape.Line(path) + " is empty")
		}
		v = string(b)
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return "", errors.New("the value holds a line break or a NUL byte, which no header can carry")
	}
	return v, nil
}

// readNoLinks reads a regular file of at most max bytes, reached with no
// symbolic link in any component of its path (a shell could have made
// one in a folder it may write, to lead cshell to another secret).
func readNoLinks(path string, max int64) ([]byte, error) {
	root, err := safefs.Open("/")
	if err != nil {
		return nil, errors.New("cannot open /: " + errText(err))
	}
	defer root.Close()
	rel := strings.TrimPrefix(filepath.Clean(path), "/")
	b, err := root.ReadFile(rel, max)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.ENOTDIR) && linkOnTheWay(path):
		return nil, errors.New(escape.Line(path) + " is reached through a symbolic link; name the file by its real path")
	case errors.Is(err, safefs.ErrTooLarge):
		return nil, errors.New(escape.Line(path) + " holds more than 64 KiB; a credential file holds the secret alone")
	case errors.Is(err, safefs.ErrNotRegular):
		return nil, errors.New(escape.Line(path) + " is not a regular file")
	}
	return nil, errors.New("cannot read " + escape.Line(path) + ": " + errText(err))
}

// linkOnTheWay reports whether a component of path is a symbolic link.
func linkOnTheWay(path string) bool {
	for p := filepath.Clean(path); p != "/" && p != "."; p = filepath.Dir(p) {
		if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// errText is an error's cause without the path (the sentence names it).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
