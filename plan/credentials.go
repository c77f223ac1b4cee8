package plan

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/policy"
)

// Credential is a secret the shell's proxy adds to its requests to Host,
// in Header, where the shell's placeholder stands. Value travels to the
// supervisor with the plan (over its pipe) and is never shown.
type Credential struct {
	Name   string             `json:"name"`
	Host   policy.HostPattern `json:"host"`
	Header string             `json:"header"`
	Value  string             `json:"-"` // gob carries it; JSON never
}

// maxCredentialFile bounds a credential read from a file.
const maxCredentialFile = 64 << 10

// credentials reads the declared credentials (--credential, then the
// configuration's network.credentials for names the flags did not give),
// each value from the caller's environment or file, and lets each host
// be reached.
func (p *Plan) credentials(r Request, cfg *policy.Config, f Facts) error {
	type entry struct {
		spec  policy.CredentialSpec
		where string
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
		entries = append(entries, entry{c, "--credential " + escape.Line(s)})
	}
	for _, s := range cfg.Network.Credentials {
		if !strings.Contains(s, "@") {
			return usageErr("network.credentials %q names no host; write NAME@HOST in the global configuration", escape.Line(s))
		}
		c, err := policy.ParseCredential(s)
		if err != nil {
			return usageErr("network.credentials: %w", err)
		}
		if !slices.ContainsFunc(entries, func(e entry) bool { return e.spec.Name == c.Name }) {
			entries = append(entries, entry{c, "network.credentials " + escape.Line(s)})
		}
	}
	if len(entries) == 0 {
		return nil
	}
	if p.Purpose == Bundle {
		return usageErr("%s: a bundle has no proxy to add credentials; leave credentials out of cshell spec", entries[0].where)
	}
	if !p.Namespaced {
		return refusedErr("%s: credentials are added by a container shell's proxy, which --isolation process has none of; run in a container, or pass the value with -e knowing the command can read it", entries[0].where)
	}
	for _, e := range entries {
		if slices.ContainsFunc(r.Env, func(kv string) bool { k, _, _ := strings.Cut(kv, "="); return k == e.spec.Name }) {
			return usageErr("%s: %s is also given with --env, which would hand the shell its value; leave one out", e.where, e.spec.Name)
		}
		v, err := credentialValue(e.spec, f.Environ, r.FS.Home)
		if err != nil {
			return usageErr("%s: %w", e.where, err)
		}
		p.Network.Credentials = append(p.Network.Credentials, Credential{Name: e.spec.Name, Host: e.spec.Host, Header: e.spec.Header, Value: v})
		if !slices.ContainsFunc(p.Network.Allow, func(h policy.HostPattern) bool { return h.Covers(e.spec.Host) }) {
			p.Network.Allow = append(p.Network.Allow, e.spec.Host)
		}
	}
	return nil
}

// credentialValue reads a credential's value: the caller's variable, or
// its file (its last component no symbolic link, at most 64 KiB, one
// line's end trimmed). A value a header cannot carry is refused.
func credentialValue(c policy.CredentialSpec, environ []string, home string) (string, error) {
	var v string
	if c.Env != "" {
		var ok bool
		if v, ok = lookup(environ, c.Env); !ok || v == "" {
			return "", errors.New(c.Env + " is not set in cshell's environment; export it, or name a file with ,file=PATH")
		}
	} else {
		path := c.File
		if rest, ok := strings.CutPrefix(path, "~/"); ok && home != "" {
			path = filepath.Join(home, rest)
		}
		lst, err := os.Lstat(path)
		if err != nil {
			return "", errors.New("cannot read " + escape.Line(path) + ": " + errText(err))
		}
		if lst.Mode()&os.ModeSymlink != 0 {
			return "", errors.New(escape.Line(path) + " is a symbolic link; name the file it leads to")
		}
		if !lst.Mode().IsRegular() {
			return "", errors.New(escape.Line(path) + " is not a regular file")
		}
		file, err := os.Open(path)
		if err != nil {
			return "", errors.New("cannot read " + escape.Line(path) + ": " + errText(err))
		}
		defer file.Close()
		if st, err := file.Stat(); err != nil || !os.SameFile(st, lst) {
			return "", errors.New(escape.Line(path) + " changed while it was read; try again")
		}
		b, err := io.ReadAll(io.LimitReader(file, maxCredentialFile+1))
		if err != nil {
			return "", errors.New("cannot read " + escape.Line(path) + ": " + errText(err))
		}
		if len(b) > maxCredentialFile {
			return "", errors.New(escape.Line(path) + " holds more than 64 KiB; a credential file holds the secret alone")
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

// errText is an error's cause without the path (the sentence names it).
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
