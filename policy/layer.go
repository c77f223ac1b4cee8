package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Layer applies the project file on top of the global one. The project may
// only tighten: turn shells off, lower maxConcurrent and maxLogBytes, quiet
// notify, allow fewer hosts, write fewer extra paths, hide more. Each line
// that would loosen is ignored and named in the returned warnings.
func Layer(global, project *Config, projectName string) (*Config, []string) {
	out := *global
	out.Network.Allow = slices.Clone(global.Network.Allow)
	out.Network.Deny = slices.Clone(global.Network.Deny)
	out.Network.Credentials = slices.Clone(global.Network.Credentials)
	out.Filesystem.AllowWrite = slices.Clone(global.Filesystem.AllowWrite)
	out.Filesystem.DenyRead = slices.Clone(global.Filesystem.DenyRead)
	out.Env.Pass = slices.Clone(global.Env.Pass)
	var warn []string
	ignore := func(format string, a ...any) {
		warn = append(warn, fmt.Sprintf("%s: ignored %s: a project file may only tighten the global configuration", projectName, fmt.Sprintf(format, a...)))
	}

	if e := project.Shells.Enabled; e != nil {
		if *e && !global.Enabled() {
			ignore("shells.enabled=true")
		} else {
			out.Shells.Enabled = e
		}
	}
	if n := project.Shells.MaxConcurrent; n != nil {
		if *n > global.MaxConcurrent() {
			ignore("shells.maxConcurrent=%d (global: %d)", *n, global.MaxConcurrent())
		} else {
			out.Shells.MaxConcurrent = n
		}
	}
	if n := project.Shells.MaxLogBytes; n != nil {
		if *n > global.MaxLogBytes() {
			ignore("shells.maxLogBytes=%d (global: %d)", *n, global.MaxLogBytes())
		} else {
			out.Shells.MaxLogBytes = n
		}
	}
	if n := project.Shells.MaxConnections; n != nil {
		if *n > global.MaxConnections() {
			ignore("shells.maxConnections=%d (global: %d)", *n, global.MaxConnections())
		} else {
			out.Shells.MaxConnections = n
		}
	}
	if n := project.Shells.ReattachSeconds; n != nil {
		if *n > global.ReattachSeconds() {
			ignore("shells.reattachSeconds=%d (global: %d)", *n, global.ReattachSeconds())
		} else {
			out.Shells.ReattachSeconds = n
		}
	}
	if n := project.Shells.MaxForegroundCalls; n != nil {
		if *n > global.MaxForegroundCalls() {
			ignore("shells.maxForegroundCalls=%d (global: %d)", *n, global.MaxForegroundCalls())
		} else {
			out.Shells.MaxForegroundCalls = n
		}
	}
	if n := project.Shells.Notify; n != "" {
		if notifyRank[n] > notifyRank[global.Notify()] {
			ignore("shells.notify=%q (global: %q)", n, global.Notify())
		} else {
			out.Shells.Notify = n
		}
	}
	if project.Network.Allow != nil {
		var kept []string
		for _, h := range project.Network.Allow {
			if hostAllowedBy(h, global.Network.Allow) {
				kept = append(kept, h)
			} else {
				ignore("network.allow entry %q (not allowed globally)", h)
			}
		}
		out.Network.Allow = kept
	}
	if project.Network.Credentials != nil {
		// A project keeps global credentials by name (a .cshell.json a
		// shell wrote must not send the caller's secrets anywhere new).
		var kept []string
		for _, e := range project.Network.Credentials {
			name := CredentialName(e)
			i := slices.IndexFunc(global.Network.Credentials, func(g string) bool { return CredentialName(g) == name })
			if i < 0 || (e != name && e != global.Network.Credentials[i]) {
				ignore("network.credentials entry %q (a project file keeps global credentials by name, and adds none)", e)
				continue
			}
			kept = append(kept, global.Network.Credentials[i])
		}
		out.Network.Credentials = kept
	}
	if g := project.Network.AllowGrants; g != nil {
		if *g && !global.AllowGrants() {
			ignore("network.allowGrants=true")
		} else {
			out.Network.AllowGrants = g
		}
	}
	if m := project.Network.AllowCloudMetadata; m != nil {
		if *m && !global.CloudMetadata() {
			ignore("network.allowCloudMetadata=true")
		} else {
			out.Network.AllowCloudMetadata = m
		}
	}
	if n := project.Network.AskSeconds; n != nil {
		if *n > global.AskSeconds() {
			ignore("network.askSeconds=%d (global: %d)", *n, global.AskSeconds())
		} else {
			out.Network.AskSeconds = n
		}
	}
	if project.Filesystem.AllowWrite != nil {
		var kept []string
		for _, p := range project.Filesystem.AllowWrite {
			if pathUnderAny(p, global.Filesystem.AllowWrite) {
				kept = append(kept, p)
			} else {
				ignore("filesystem.allowWrite entry %q (not writable globally)", p)
			}
		}
		out.Filesystem.AllowWrite = kept
		out.writeRoots = append([]string{}, global.Filesystem.AllowWrite...)
	}
	if project.Env.Pass != nil {
		// Passing a variable loosens: a project may keep only what the
		// global file passes (a .cshell.json written by a shell must not
		// reach the caller's tokens).
		var kept []string
		for _, k := range project.Env.Pass {
			if slices.Contains(global.Env.Pass, k) {
				kept = append(kept, k)
			} else {
				ignore("env.pass entry %q (not passed globally)", k)
			}
		}
		out.Env.Pass = kept
	}
	// Limits: a project may lower each bound (or set one where the global
	// file has none), never raise it.
	if m := project.LimitsCfg.Memory; m != nil {
		if g := global.LimitsCfg.Memory; g != nil && *m > *g {
			ignore("limits.memory=%s (global: %s)", FormatSize(int64(*m)), FormatSize(int64(*g)))
		} else {
			out.LimitsCfg.Memory = m
		}
	}
	if n := project.LimitsCfg.Pids; n != nil {
		if g := global.LimitsCfg.Pids; g != nil && *n > *g {
			ignore("limits.pids=%d (global: %d)", *n, *g)
		} else {
			out.LimitsCfg.Pids = n
		}
	}
	if x := project.LimitsCfg.CPUs; x != nil {
		if g := global.LimitsCfg.CPUs; g != nil && *x > *g {
			ignore("limits.cpus=%v (global: %v)", *x, *g)
		} else {
			out.LimitsCfg.CPUs = x
		}
	}
	if w := project.Sandbox.TellRefusedWrites; w != nil {
		out.Sandbox.TellRefusedWrites = w // telling loosens nothing either way
	}
	if w := project.Sandbox.Warm; w != nil {
		out.Sandbox.Warm = w // each call's sandbox is fresh either way
	}
	if a := project.Sandbox.AllowUserNamespaces; a != nil {
		if *a && !global.AllowUserNamespaces() {
			ignore("sandbox.allowUserNamespaces=true")
		} else {
			out.Sandbox.AllowUserNamespaces = a
		}
	}
	if e := project.Caches.Enabled; e != nil {
		if *e && !global.CachesEnabled() {
			ignore("caches.enabled=true")
		} else {
			out.Caches.Enabled = e
		}
	}
	if n := project.Caches.MaxBytes; n != nil {
		if int64(*n) > global.CacheMaxBytes() {
			ignore("caches.maxBytes=%s (global: %s)", FormatSize(int64(*n)), FormatSize(global.CacheMaxBytes()))
		} else {
			out.Caches.MaxBytes = n
		}
	}
	for _, h := range project.Network.Deny { // denying more only tightens
		if !slices.Contains(out.Network.Deny, h) {
			out.Network.Deny = append(out.Network.Deny, h)
		}
	}
	for _, p := range project.Filesystem.DenyRead {
		if !slices.Contains(out.Filesystem.DenyRead, p) {
			out.Filesystem.DenyRead = append(out.Filesystem.DenyRead, p)
		}
	}
	return &out, warn
}

// hostAllowedBy reports whether every host the pattern p admits is also
// admitted by one of the patterns in list.
func hostAllowedBy(p string, list []string) bool {
	hp, err := ParseHostPattern(p)
	if err != nil {
		return false
	}
	for _, g := range list {
		gp, err := ParseHostPattern(g)
		if err == nil && gp.Covers(hp) {
			return true
		}
	}
	return false
}

// pathUnderAny reports whether p equals or lies beneath one of the roots.
// Paths are compared as written (after cleaning), before ~ expansion, so
// that the same spelling in both files matches.
func pathUnderAny(p string, roots []string) bool {
	p = filepath.Clean(p)
	for _, r := range roots {
		r = filepath.Clean(r)
		if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}
