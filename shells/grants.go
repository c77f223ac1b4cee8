package shells

import (
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"time"

	"github.com/cshell/cshell/internal/kind"
	"github.com/cshell/cshell/policy"
)

// grantsName holds the session grants: the hosts users allowed while
// shells run (`cshell allow`, answers to prompts). Every shell of the
// session asks it at each new connection.
const grantsName = "grants.json"

// Bounds of the grants file: whoever writes the state dir is this user,
// but no reader trusts a size.
const (
	maxGrants     = 1000
	maxGrantsFile = 1 << 20
)

// Grant is one entry of grants.json.
type Grant struct {
	Session string `json:"session"`
	Pattern string `json:"pattern"`
	// Credential, when set, is a credential taken back from the shells of
	// the session (cshell allow --revoke-credential): not a host, Pattern
	// is empty and Deny true.
	Credential string     `json:"credential,omitempty"`
	Shell      string     `json:"shell,omitempty"` // only this shell (an "allow once" answer)
	Deny       bool       `json:"deny,omitempty"`  // a refusal answered to a prompt: the waiting request ends
	Added      time.Time  `json:"added"`
	Until      *time.Time `json:"until,omitempty"` // gone after this
}

type grantsFile struct {
	Grants []Grant `json:"grants"`
}

func (g Grant) live(now time.Time) bool { return g.Until == nil || now.Before(*g.Until) }

// readGrants reads the grants, expired ones left out; a missing or
// unreadable file is none.
func (m *Manager) readGrants() []Grant {
	b, err := m.dir.ReadFile(grantsName, maxGrantsFile)
	if err != nil {
		return nil
	}
	var f grantsFile
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	now := time.Now()
	return slices.DeleteFunc(f.Grants, func(g Grant) bool { return !g.live(now) })
}

// changeGrants rewrites the grants under the state dir's lock.
func (m *Manager) changeGrants(change func([]Grant) ([]Grant, error)) error {
	return m.withLock(func() error {
		gs, err := change(m.readGrants())
		if err != nil {
			return err
		}
		if len(gs) > maxGrants {
			return kind.Errorf(ErrRefused, "%d grants are kept at most; revoke some (cshell allow --revoke)", maxGrants)
		}
		b, err := json.MarshalIndent(grantsFile{Grants: gs}, "", "  ")
		if err != nil {
			return err
		}
		return m.dir.WriteAtomic(grantsName, append(b, '\n'), 0o600)
	})
}

// Allow grants host patterns (as --allow-host takes them) to the shells
// of a session, running and later ones; it returns the patterns as kept.
func (m *Manager) Allow(session string, patterns []string) ([]string, error) {
	if err := CheckSession(session); err != nil {
		return nil, err
	}
	norm, err := grantPatterns(patterns)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	return norm, m.changeGrants(func(gs []Grant) ([]Grant, error) {
		for _, p := range norm {
			if !slices.ContainsFunc(gs, func(g Grant) bool {
				return g.Session == session && g.Pattern == p && g.Credential == "" && g.Shell == "" && !g.Deny && g.Until == nil
			}) {
				gs = append(gs, Grant{Session: session, Pattern: p, Added: now})
			}
		}
		return gs, nil
	})
}

// ErrNotGranted means a revoke named a pattern the session was not granted.
var ErrNotGranted = errors.New("not granted")

// Revoke takes back grants of a session; connections already made stay.
func (m *Manager) Revoke(session string, patterns []string) error {
	if err := CheckSession(session); err != nil {
		return err
	}
	norm, err := grantPatterns(patterns)
	if err != nil {
		return err
	}
	return m.changeGrants(func(gs []Grant) ([]Grant, error) {
		for _, p := range norm {
			n := len(gs)
			gs = slices.DeleteFunc(gs, func(g Grant) bool { return g.Session == session && g.Pattern == p && g.Credential == "" && !g.Deny })
			if len(gs) == n {
				return nil, kind.Errorf(ErrNotGranted, "%s is not granted to session %s (cshell allow --list shows the grants)", p, session)
			}
		}
		return gs, nil
	})
}

// RevokeCredentials takes credentials (by name) back from every shell of
// a session, running and later ones, from their next request on, until
// RestoreCredentials gives them back.
func (m *Manager) RevokeCredentials(session string, names []string) error {
	if err := checkCredentialNames(session, names); err != nil {
		return err
	}
	now := time.Now().UTC()
	return m.changeGrants(func(gs []Grant) ([]Grant, error) {
		for _, n := range names {
			if !slices.ContainsFunc(gs, func(g Grant) bool { return g.Session == session && g.Credential == n }) {
				gs = append(gs, Grant{Session: session, Credential: n, Deny: true, Added: now})
			}
		}
		return gs, nil
	})
}

// RestoreCredentials ends revocations of a session.
func (m *Manager) RestoreCredentials(session string, names []string) error {
	if err := checkCredentialNames(session, names); err != nil {
		return err
	}
	return m.changeGrants(func(gs []Grant) ([]Grant, error) {
		for _, n := range names {
			k := len(gs)
			gs = slices.DeleteFunc(gs, func(g Grant) bool { return g.Session == session && g.Credential == n })
			if len(gs) == k {
				return nil, kind.Errorf(ErrNotGranted, "credential %s is not revoked in session %s (cshell allow --list shows what is)", n, session)
			}
		}
		return gs, nil
	})
}

func checkCredentialNames(session string, names []string) error {
	if err := CheckSession(session); err != nil {
		return err
	}
	if len(names) == 0 {
		return usageErr("no credential named; give its NAME, as --credential NAME@HOST declared it")
	}
	for _, n := range names {
		if err := policy.CheckEnvKey(n); err != nil {
			return usageErr("credential %q: %v", n, err)
		}
	}
	return nil
}

// Answer records a user's answer to a prompt about a held request of one
// shell: allow (for that shell, for a while: "allow once") or deny.
func (m *Manager) Answer(session, shell, pattern string, deny bool, lasting time.Duration) error {
	norm, err := grantPatterns([]string{pattern})
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	until := now.Add(lasting)
	return m.changeGrants(func(gs []Grant) ([]Grant, error) {
		return append(gs, Grant{Session: session, Shell: shell, Pattern: norm[0], Deny: deny, Added: now, Until: &until}), nil
	})
}

// Grants lists the live grants of a session ("" for every session).
func (m *Manager) Grants(session string) []Grant {
	gs := m.readGrants()
	if session != "" {
		gs = slices.DeleteFunc(gs, func(g Grant) bool { return g.Session != session })
	}
	return gs
}

func grantPatterns(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, usageErr("no host given; write a pattern such as registry.npmjs.org, *.github.com or 127.0.0.1:8080")
	}
	var out []string
	for _, s := range patterns {
		p, err := policy.ParseHostPattern(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		out = append(out, p.String())
	}
	return out, nil
}

// grantReader gives a shell the grants of its session at each decision,
// reading grants.json again only when it changed.
type grantReader struct {
	m       *Manager
	session string
	shell   string

	mu      sync.Mutex
	ident   [2]int64 // inode and size of the file read (a write makes a new inode)
	at      time.Time
	cache   []policy.Grant
	revoked []string // credentials taken back
}

// grantsFor returns the function a shell's rules ask (policy.Rules.WithGrants).
func (m *Manager) grantsFor(session, shell string) func() []policy.Grant {
	r := &grantReader{m: m, session: session, shell: shell}
	return r.grants
}

// revokedFor returns whether the session took a credential back from a
// shell (sandbox.Proxy.Revoked): read from the grants file whatever
// network.allowGrants says.
func (m *Manager) revokedFor(session, shell string) func(name string) bool {
	r := &grantReader{m: m, session: session, shell: shell}
	return func(name string) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.refresh()
		return slices.Contains(r.revoked, name)
	}
}

func (r *grantReader) grants() []policy.Grant {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh()
	return r.cache
}

// refresh reads grants.json again when it changed (or a second passed:
// grants that expire are judged again), into the session's host grants
// and revoked credentials. r.mu is held.
func (r *grantReader) refresh() {
	st, err := r.m.dir.Lstat(grantsName)
	if errors.Is(err, fs.ErrNotExist) {
		r.cache, r.revoked, r.ident = nil, nil, [2]int64{}
		return
	}
	if err != nil {
		return
	}
	ident := [2]int64{int64(st.Ino), st.Size}
	if ident == r.ident && time.Since(r.at) < time.Second {
		return
	}
	r.ident, r.at, r.cache, r.revoked = ident, time.Now(), nil, nil
	for _, g := range r.m.readGrants() {
		if g.Session != r.session || (g.Shell != "" && g.Shell != r.shell) {
			continue
		}
		if g.Credential != "" {
			r.revoked = append(r.revoked, g.Credential)
			continue
		}
		if p, err := policy.ParseHostPattern(g.Pattern); err == nil {
			r.cache = append(r.cache, policy.Grant{Pattern: p, Deny: g.Deny})
		}
	}
}
