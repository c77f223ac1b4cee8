package policy

import (
	"reflect"
	"strings"
	"testing"
)

func TestLayer(t *testing.T) {
	const projectName = "/src/proj/.cshell.json"
	tests := []struct {
		name    string
		global  Config
		project Config
		check   func(errorf func(string, ...any), c *Config)
		// warnings: one substring per expected warning, in order.
		warnings []string
	}{
		{
			name: "nothing set: defaults",
			check: func(errorf func(string, ...any), c *Config) {
				if !c.Enabled() || c.MaxConcurrent() != 4 || c.Notify() != "wake" || c.MaxLogBytes() != 1<<30 {
					errorf("got %s, want defaults", dump(c))
				}
			},
		},
		{
			name:    "network grants: on by default, a project turns them off, never on",
			project: Config{Network: NetworkConfig{AllowGrants: ptr(false), AskSeconds: ptr(5)}},
			// askSeconds 5 over the global default 0 loosens: ignored.
			warnings: []string{"network.askSeconds=5"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.AllowGrants() || c.AskSeconds() != 0 {
					errorf("AllowGrants %v, AskSeconds %d", c.AllowGrants(), c.AskSeconds())
				}
			},
		},
		{
			name:     "network grants off globally stay off",
			global:   Config{Network: NetworkConfig{AllowGrants: ptr(false), AskSeconds: ptr(30)}},
			project:  Config{Network: NetworkConfig{AllowGrants: ptr(true), AskSeconds: ptr(10)}},
			warnings: []string{"network.allowGrants=true"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.AllowGrants() || c.AskSeconds() != 10 {
					errorf("AllowGrants %v, AskSeconds %d", c.AllowGrants(), c.AskSeconds())
				}
			},
		},
		{
			name:    "project disables",
			project: Config{Shells: ShellsConfig{Enabled: ptr(false)}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Enabled() {
					errorf("Enabled() = true, want false")
				}
			},
		},
		{
			name:    "project enables when global enables",
			global:  Config{Shells: ShellsConfig{Enabled: ptr(true)}},
			project: Config{Shells: ShellsConfig{Enabled: ptr(true)}},
			check: func(errorf func(string, ...any), c *Config) {
				if !c.Enabled() {
					errorf("Enabled() = false, want true")
				}
			},
		},
		{
			name:     "project cannot enable over global disable",
			global:   Config{Shells: ShellsConfig{Enabled: ptr(false)}},
			project:  Config{Shells: ShellsConfig{Enabled: ptr(true)}},
			warnings: []string{"shells.enabled=true"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Enabled() {
					errorf("Enabled() = true, want false")
				}
			},
		},
		{
			name:    "maxConcurrent lower",
			global:  Config{Shells: ShellsConfig{MaxConcurrent: ptr(3)}},
			project: Config{Shells: ShellsConfig{MaxConcurrent: ptr(1)}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxConcurrent() != 1 {
					errorf("MaxConcurrent() = %d, want 1", c.MaxConcurrent())
				}
			},
		},
		{
			name:    "maxConcurrent equal",
			global:  Config{Shells: ShellsConfig{MaxConcurrent: ptr(3)}},
			project: Config{Shells: ShellsConfig{MaxConcurrent: ptr(3)}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxConcurrent() != 3 {
					errorf("MaxConcurrent() = %d, want 3", c.MaxConcurrent())
				}
			},
		},
		{
			name:     "maxConcurrent higher",
			global:   Config{Shells: ShellsConfig{MaxConcurrent: ptr(3)}},
			project:  Config{Shells: ShellsConfig{MaxConcurrent: ptr(10)}},
			warnings: []string{"shells.maxConcurrent=10 (global: 3)"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxConcurrent() != 3 {
					errorf("MaxConcurrent() = %d, want 3", c.MaxConcurrent())
				}
			},
		},
		{
			name:     "maxConcurrent higher than the default",
			project:  Config{Shells: ShellsConfig{MaxConcurrent: ptr(5)}},
			warnings: []string{"shells.maxConcurrent=5 (global: 4)"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxConcurrent() != 4 {
					errorf("MaxConcurrent() = %d, want 4", c.MaxConcurrent())
				}
			},
		},
		{
			name:    "maxLogBytes lower",
			project: Config{Shells: ShellsConfig{MaxLogBytes: ptr(int64(1 << 20))}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxLogBytes() != 1<<20 {
					errorf("MaxLogBytes() = %d, want %d", c.MaxLogBytes(), 1<<20)
				}
			},
		},
		{
			name:    "maxLogBytes equal",
			global:  Config{Shells: ShellsConfig{MaxLogBytes: ptr(int64(8192))}},
			project: Config{Shells: ShellsConfig{MaxLogBytes: ptr(int64(8192))}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxLogBytes() != 8192 {
					errorf("MaxLogBytes() = %d, want 8192", c.MaxLogBytes())
				}
			},
		},
		{
			name:     "maxLogBytes higher",
			global:   Config{Shells: ShellsConfig{MaxLogBytes: ptr(int64(8192))}},
			project:  Config{Shells: ShellsConfig{MaxLogBytes: ptr(int64(8193))}},
			warnings: []string{"shells.maxLogBytes=8193 (global: 8192)"},
			check: func(errorf func(string, ...any), c *Config) {
				if c.MaxLogBytes() != 8192 {
					errorf("MaxLogBytes() = %d, want 8192", c.MaxLogBytes())
				}
			},
		},
		{
			name:    "notify quieter: note under wake",
			project: Config{Shells: ShellsConfig{Notify: "note"}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Notify() != "note" {
					errorf("Notify() = %q, want note", c.Notify())
				}
			},
		},
		{
			name:    "notify quieter: none under note",
			global:  Config{Shells: ShellsConfig{Notify: "note"}},
			project: Config{Shells: ShellsConfig{Notify: "none"}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Notify() != "none" {
					errorf("Notify() = %q, want none", c.Notify())
				}
			},
		},
		{
			name:     "notify louder: wake over note",
			global:   Config{Shells: ShellsConfig{Notify: "note"}},
			project:  Config{Shells: ShellsConfig{Notify: "wake"}},
			warnings: []string{`shells.notify="wake" (global: "note")`},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Notify() != "note" {
					errorf("Notify() = %q, want note", c.Notify())
				}
			},
		},
		{
			name:     "notify louder: note over none",
			global:   Config{Shells: ShellsConfig{Notify: "none"}},
			project:  Config{Shells: ShellsConfig{Notify: "note"}},
			warnings: []string{`shells.notify="note" (global: "none")`},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Notify() != "none" {
					errorf("Notify() = %q, want none", c.Notify())
				}
			},
		},
		{
			name:    "reattachSeconds lowered by the project",
			project: Config{Shells: ShellsConfig{ReattachSeconds: ptr(5)}},
			check: func(errorf func(string, ...any), c *Config) {
				if c.ReattachSeconds() != 5 {
					errorf("ReattachSeconds() = %d, want 5", c.ReattachSeconds())
				}
			},
		},
		{
			name:     "reattachSeconds raised by the project: ignored",
			global:   Config{Shells: ShellsConfig{ReattachSeconds: ptr(10)}},
			project:  Config{Shells: ShellsConfig{ReattachSeconds: ptr(60)}},
			warnings: []string{`shells.reattachSeconds=60 (global: 10)`},
			check: func(errorf func(string, ...any), c *Config) {
				if c.ReattachSeconds() != 10 {
					errorf("ReattachSeconds() = %d, want 10", c.ReattachSeconds())
				}
			},
		},
		{
			name:   "network: project not set keeps global",
			global: Config{Network: NetworkConfig{Allow: []string{"a.com", "b.com"}}},
			check: func(errorf func(string, ...any), c *Config) {
				if !reflect.DeepEqual(c.Network.Allow, []string{"a.com", "b.com"}) {
					errorf("Allow = %q", c.Network.Allow)
				}
			},
		},
		{
			name:    "network: subset kept",
			global:  Config{Network: NetworkConfig{Allow: []string{"a.com", "b.com", "c.com:443"}}},
			project: Config{Network: NetworkConfig{Allow: []string{"c.com:443", "a.com"}}},
			check: func(errorf func(string, ...any), c *Config) {
				if !reflect.DeepEqual(c.Network.Allow, []string{"c.com:443", "a.com"}) {
					errorf("Allow = %q", c.Network.Allow)
				}
			},
		},
		{
			name:    "network: empty project list allows nothing",
			global:  Config{Network: NetworkConfig{Allow: []string{"a.com"}}},
			project: Config{Network: NetworkConfig{Allow: []string{}}},
			check: func(errorf func(string, ...any), c *Config) {
				if len(c.Network.Allow) != 0 {
					errorf("Allow = %q, want empty", c.Network.Allow)
				}
			},
		},
		{
			name:   "network: wildcard coverage",
			global: Config{Network: NetworkConfig{Allow: []string{"*.example.com", "pinned.org:443"}}},
			project: Config{Network: NetworkConfig{Allow: []string{
				"api.example.com", "*.a.example.com", "example.com", "evil.com",
				"API.Example.com:8443", "pinned.org:443", "pinned.org", "pinned.org:80",
			}}},
			warnings: []string{`"example.com"`, `"evil.com"`, `"pinned.org"`, `"pinned.org:80"`},
			check: func(errorf func(string, ...any), c *Config) {
				want := []string{"api.example.com", "*.a.example.com", "API.Example.com:8443", "pinned.org:443"}
				if !reflect.DeepEqual(c.Network.Allow, want) {
					errorf("Allow = %q, want %q", c.Network.Allow, want)
				}
			},
		},
		{
			name:     "network: nothing allowed globally",
			project:  Config{Network: NetworkConfig{Allow: []string{"a.com"}}},
			warnings: []string{`network.allow entry "a.com" (not allowed globally)`},
			check: func(errorf func(string, ...any), c *Config) {
				if len(c.Network.Allow) != 0 {
					errorf("Allow = %q, want empty", c.Network.Allow)
				}
			},
		},
		{
			name:    "network: same wildcard in both files",
			global:  Config{Network: NetworkConfig{Allow: []string{"*.example.com"}}},
			project: Config{Network: NetworkConfig{Allow: []string{"*.example.com"}}},
			check: func(errorf func(string, ...any), c *Config) {
				if !reflect.DeepEqual(c.Network.Allow, []string{"*.example.com"}) {
					errorf("Allow = %q, want [*.example.com]", c.Network.Allow)
				}
			},
		},
		{
			name:    "allowWrite: inside global kept",
			global:  Config{Filesystem: FilesystemConfig{AllowWrite: []string{"~/work/", "/srv"}}},
			project: Config{Filesystem: FilesystemConfig{AllowWrite: []string{"~/work", "~/work/proj", "/srv/./data/"}}},
			check: func(errorf func(string, ...any), c *Config) {
				want := []string{"~/work", "~/work/proj", "/srv/./data/"}
				if !reflect.DeepEqual(c.Filesystem.AllowWrite, want) {
					errorf("AllowWrite = %q, want %q", c.Filesystem.AllowWrite, want)
				}
			},
		},
		{
			name:   "allowWrite: outside global dropped",
			global: Config{Filesystem: FilesystemConfig{AllowWrite: []string{"~/work", "/srv/data"}}},
			project: Config{Filesystem: FilesystemConfig{AllowWrite: []string{
				"~/workshop", "~/work/../.ssh", "/srv", "/etc", "~/work/x",
			}}},
			warnings: []string{`"~/workshop"`, `"~/work/../.ssh"`, `"/srv"`, `"/etc"`},
			check: func(errorf func(string, ...any), c *Config) {
				if !reflect.DeepEqual(c.Filesystem.AllowWrite, []string{"~/work/x"}) {
					errorf("AllowWrite = %q, want [~/work/x]", c.Filesystem.AllowWrite)
				}
			},
		},
		{
			name:    "allowWrite: root allows everything",
			global:  Config{Filesystem: FilesystemConfig{AllowWrite: []string{"/"}}},
			project: Config{Filesystem: FilesystemConfig{AllowWrite: []string{"/anything/at/all"}}},
			check: func(errorf func(string, ...any), c *Config) {
				if !reflect.DeepEqual(c.Filesystem.AllowWrite, []string{"/anything/at/all"}) {
					errorf("AllowWrite = %q", c.Filesystem.AllowWrite)
				}
			},
		},
		{
			name:    "allowWrite: empty project list removes the global ones",
			global:  Config{Filesystem: FilesystemConfig{AllowWrite: []string{"~/work"}}},
			project: Config{Filesystem: FilesystemConfig{AllowWrite: []string{}}},
			check: func(errorf func(string, ...any), c *Config) {
				if len(c.Filesystem.AllowWrite) != 0 {
					errorf("AllowWrite = %q, want empty", c.Filesystem.AllowWrite)
				}
			},
		},
		{
			name:    "denyRead unioned",
			global:  Config{Filesystem: FilesystemConfig{DenyRead: []string{"~/a", "~/b"}}},
			project: Config{Filesystem: FilesystemConfig{DenyRead: []string{"~/b", "~/c", "~/c"}}},
			check: func(errorf func(string, ...any), c *Config) {
				want := []string{"~/a", "~/b", "~/c"}
				if !reflect.DeepEqual(c.Filesystem.DenyRead, want) {
					errorf("DenyRead = %q, want %q", c.Filesystem.DenyRead, want)
				}
			},
		},
		{
			name: "everything loosened at once",
			global: Config{
				Shells:     ShellsConfig{Enabled: ptr(false), MaxConcurrent: ptr(2), Notify: "none", MaxLogBytes: ptr(int64(4096))},
				Network:    NetworkConfig{Allow: []string{"a.com"}},
				Filesystem: FilesystemConfig{AllowWrite: []string{"/w"}},
			},
			project: Config{
				Shells:     ShellsConfig{Enabled: ptr(true), MaxConcurrent: ptr(3), Notify: "wake", MaxLogBytes: ptr(int64(8192))},
				Network:    NetworkConfig{Allow: []string{"b.com"}},
				Filesystem: FilesystemConfig{AllowWrite: []string{"/x"}},
			},
			warnings: []string{"shells.enabled", "shells.maxConcurrent", "shells.maxLogBytes", "shells.notify", `"b.com"`, `"/x"`},
			check: func(errorf func(string, ...any), c *Config) {
				if c.Enabled() || c.MaxConcurrent() != 2 || c.Notify() != "none" || c.MaxLogBytes() != 4096 ||
					len(c.Network.Allow) != 0 || len(c.Filesystem.AllowWrite) != 0 {
					errorf("got %s, want the global settings with empty lists", dump(c))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errorf := t.Errorf
			global, project := tt.global, tt.project
			before := dump(&global)
			c, warnings := Layer(&global, &project, projectName)
			if after := dump(&global); after != before {
				errorf("Layer changed the global config from %s to %s", before, after)
			}
			tt.check(errorf, c)
			if len(warnings) != len(tt.warnings) {
				errorf("warnings = %q, want %d matching %q", warnings, len(tt.warnings), tt.warnings)
				return
			}
			for i, w := range warnings {
				if !strings.Contains(w, tt.warnings[i]) {
					errorf("warning %d = %q, want it to mention %q", i, w, tt.warnings[i])
				}
				if !strings.HasPrefix(w, projectName+": ") {
					errorf("warning %q does not start with the project file name", w)
				}
			}
		})
	}
}

// TestLayerDoesNotAlias checks that appending to the layered lists leaves
// the global config alone.
func TestLayerDoesNotAlias(t *testing.T) {
	global := &Config{
		Network:    NetworkConfig{Allow: make([]string, 1, 10)},
		Filesystem: FilesystemConfig{AllowWrite: make([]string, 1, 10), DenyRead: make([]string, 1, 10)},
	}
	global.Network.Allow[0] = "a.com"
	global.Filesystem.AllowWrite[0] = "/w"
	global.Filesystem.DenyRead[0] = "/d"
	project := &Config{Filesystem: FilesystemConfig{DenyRead: []string{"/p"}}}
	c, _ := Layer(global, project, ProjectFile)
	c.Network.Allow = append(c.Network.Allow, "x")
	c.Filesystem.AllowWrite = append(c.Filesystem.AllowWrite, "x")
	c.Filesystem.DenyRead[0] = "changed"
	if got := global.Network.Allow[:2][1]; got != "" {
		t.Errorf("appending to the layered Allow wrote %q into the global array", got)
	}
	if got := global.Filesystem.AllowWrite[:2][1]; got != "" {
		t.Errorf("appending to the layered AllowWrite wrote %q into the global array", got)
	}
	if got := global.Filesystem.DenyRead[:2][1]; got != "" {
		t.Errorf("layering wrote %q into the global DenyRead array", got)
	}
	if global.Filesystem.DenyRead[0] != "/d" {
		t.Errorf("global DenyRead changed to %q", global.Filesystem.DenyRead)
	}
}
