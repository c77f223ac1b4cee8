package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func ptr[T any](v T) *T { return &v }

// pos is where an error must point: line and a column range (lo == hi for
// an exact column).
type pos struct{ line, colLo, colHi int }

// parseTests drive TestParse and seed FuzzParse.
var parseTests = []struct {
	name  string
	input string
	want  *Config // for success
	// for failure: the position (zero: no position expected) and a part
	// of the message.
	pos     pos
	wantMsg string
}{
	{
		name:  "empty object",
		input: `{}`,
		want:  &Config{},
	},
	{
		name: "every setting, with comments and trailing commas",
		input: `// cshell configuration
{
  /* background shells */
  "shells": {
    "enabled": false, // off for now
    "maxConcurrent": 2,
    "notify": "note",
    "maxLogBytes": 1048576,
  },
  "network": {"allow": ["example.com", "*.github.com:443",],},
  "filesystem": {
    "allowWrite": ["~/work", "/srv/data"],
    "denyRead": ["~/secrets",],
  },
}
`,
		want: &Config{
			Shells: ShellsConfig{
				Enabled:       ptr(false),
				MaxConcurrent: ptr(2),
				Notify:        "note",
				MaxLogBytes:   ptr(int64(1048576)),
			},
			Network:    NetworkConfig{Allow: []string{"example.com", "*.github.com:443"}},
			Filesystem: FilesystemConfig{AllowWrite: []string{"~/work", "/srv/data"}, DenyRead: []string{"~/secrets"}},
		},
	},
	{
		name:  "enabled true",
		input: `{"shells": {"enabled": true}}`,
		want:  &Config{Shells: ShellsConfig{Enabled: ptr(true)}},
	},
	{
		name:  "reattachSeconds off",
		input: `{"shells": {"reattachSeconds": 0}}`,
		want:  &Config{Shells: ShellsConfig{ReattachSeconds: ptr(0)}},
	}, {
		name:  "notify none and minimum maxLogBytes",
		input: `{"shells": {"notify": "none", "maxLogBytes": 4096, "maxConcurrent": 1}}`,
		want:  &Config{Shells: ShellsConfig{Notify: "none", MaxLogBytes: ptr(int64(4096)), MaxConcurrent: ptr(1)}},
	},
	{
		name:  "notify wake",
		input: "{\"shells\": {\"notify\": \"wake\"}}\n",
		want:  &Config{Shells: ShellsConfig{Notify: "wake"}},
	},
	{
		name:  "empty lists",
		input: `{"network": {"allow": []}, "filesystem": {"allowWrite": [], "denyRead": []}}`,
		want: &Config{
			Network:    NetworkConfig{Allow: []string{}},
			Filesystem: FilesystemConfig{AllowWrite: []string{}, DenyRead: []string{}},
		},
	},
	{
		name:    "syntax error: missing comma at the end of line 2",
		input:   "{\n  \"shells\": {\"enabled\": true}\n  \"network\": {}\n}\n",
		pos:     pos{3, 3, 3},
		wantMsg: "after object value",
	},
	{
		name:    "syntax error: missing comma inside line 3",
		input:   "{\n \"shells\": {\n  \"enabled\": true \"notify\": \"note\"\n }\n}\n",
		pos:     pos{3, 19, 19},
		wantMsg: "after object value",
	},
	{
		name:    "syntax error: bad literal",
		input:   "{\n \"shells\": {\n  \"enabled\": tru\n }\n}",
		pos:     pos{3, 14, 14},
		wantMsg: "tru",
	},
	{
		name:    "syntax error: unclosed object",
		input:   "{\n \"shells\": {}\n",
		pos:     pos{3, 1, 1},
		wantMsg: "unexpected EOF",
	},
	{
		name:    "syntax error: two values",
		input:   "{}\n{}",
		pos:     pos{2, 1, 1},
		wantMsg: "after top-level value",
	},
	{
		// The decoder reports scalars' type errors just after the value:
		// column 20 is where "four" starts, 26 just past its end.
		name:    "wrong type: maxConcurrent string",
		input:   "{\n \"shells\": {\n  \"maxConcurrent\": \"four\"\n }\n}\n",
		pos:     pos{3, 20, 26},
		wantMsg: "shells.maxConcurrent must be int, not string",
	},
	{
		name:    "wrong type: enabled string",
		input:   "{\n \"shells\": {\n  \"enabled\": \"yes\"\n }\n}\n",
		pos:     pos{3, 14, 19},
		wantMsg: "shells.enabled must be bool, not string",
	},
	{
		name:    "wrong type: maxConcurrent fraction",
		input:   "{\n \"shells\": {\n  \"maxConcurrent\": 1.5\n }\n}\n",
		pos:     pos{3, 20, 23},
		wantMsg: "shells.maxConcurrent must be int",
	},
	{
		name:    "wrong type: allow object",
		input:   "{\n \"network\": {\n  \"allow\": {\n   \"a\": 1\n  }\n }\n}\n",
		pos:     pos{3, 12, 13},
		wantMsg: "network.allow must be []string, not object",
	},
	{
		name:    "wrong type: allow entry number",
		input:   "{\n \"network\": {\n  \"allow\": [\n   \"a.com\",\n   1\n  ]\n }\n}\n",
		pos:     pos{5, 4, 5},
		wantMsg: "must be string, not number",
	},
	{
		name:    "askSeconds out of range",
		input:   "{\n \"network\": {\n  \"askSeconds\": 601\n }\n}\n",
		pos:     pos{3, 17, 17},
		wantMsg: "network.askSeconds must be from 0 to 600, not 601",
	},
	{
		name:    "wrong type: top-level array",
		input:   "[]",
		pos:     pos{1, 1, 2},
		wantMsg: "must be a JSON object",
	},
	{
		name:    "unknown top-level key",
		input:   "{\n \"shells\": {},\n \"bogus\": 1\n}\n",
		pos:     pos{3, 2, 2},
		wantMsg: `unknown setting "bogus"`,
	},
	{
		name:    "unknown nested key",
		input:   "{\n \"shells\": {\n  \"enabled\": true,\n  \"loud\": 1\n }\n}\n",
		pos:     pos{4, 3, 3},
		wantMsg: `unknown setting "loud"`,
	},
	{
		name:    "invalid notify",
		input:   "{\n \"shells\": {\n  \"notify\": \"loud\"\n }\n}\n",
		pos:     pos{3, 13, 13},
		wantMsg: `shells.notify must be wake, note or none, not "loud"`,
	},
	{
		name:    "invalid notify after a comment",
		input:   "{\n // be quiet\n \"shells\": {\"notify\": \"LOUD\"}\n}\n",
		pos:     pos{3, 23, 23},
		wantMsg: `not "LOUD"`,
	},
	{
		name:    "maxConcurrent zero",
		input:   "{\n \"shells\": {\n  \"notify\": \"none\",\n  \"maxConcurrent\": 0\n }\n}\n",
		pos:     pos{4, 20, 20},
		wantMsg: "shells.maxConcurrent must be at least 1, not 0",
	},
	{
		name:    "maxConcurrent negative",
		input:   `{"shells": {"maxConcurrent": -3}}`,
		pos:     pos{1, 30, 30},
		wantMsg: "at least 1, not -3",
	},
	{
		name:    "reattachSeconds past its bound",
		input:   `{"shells": {"reattachSeconds": 3601}}`,
		pos:     pos{1, 32, 32},
		wantMsg: "shells.reattachSeconds must be from 0 to 3600, not 3601",
	},
	{
		name:    "maxLogBytes too small",
		input:   "{\n \"shells\": {\n  \"maxLogBytes\": 4095\n }\n}\n",
		pos:     pos{3, 18, 18},
		wantMsg: "shells.maxLogBytes must be at least 4096, not 4095",
	},
	{
		name:    "bad host pattern",
		input:   "{\n \"network\": {\n  \"allow\": [\"example.com\", \"http://x.org\"]\n }\n}\n",
		pos:     pos{3, 28, 28},
		wantMsg: `network.allow: host pattern "http://x.org"`,
	},
	{
		name:    "bad host port",
		input:   "{\"network\": {\"allow\": [\"example.com:99999\"]}}",
		pos:     pos{1, 24, 24},
		wantMsg: "port must be 1-65535",
	},
	{
		name:    "empty host",
		input:   "{\"network\": {\"allow\": [\"\"]}}",
		pos:     pos{1, 24, 24},
		wantMsg: "empty host pattern",
	},
	{
		name:    "empty filesystem path",
		input:   "{\n \"filesystem\": {\"denyRead\": [\"/x\", \"\"]}\n}",
		pos:     pos{2, 36, 36},
		wantMsg: "filesystem.denyRead entries must not be empty",
	},
	{
		name:    "empty file",
		input:   "",
		pos:     pos{},
		wantMsg: "the file is empty",
	},
	{
		name:    "blank file",
		input:   "\n  \n",
		pos:     pos{},
		wantMsg: "the file is empty",
	},
	{
		name:    "unknown key whose name is also a known key elsewhere",
		input:   "{\n \"shells\": {\"enabled\": true},\n \"network\": {\n  \"enabled\": true\n }\n}\n",
		pos:     pos{4, 3, 3},
		wantMsg: `unknown setting "enabled"`,
	},
	{
		name:    "key in the wrong case",
		input:   "{\n \"shells\": {\n  \"MAXCONCURRENT\": 3\n }\n}\n",
		pos:     pos{3, 3, 3},
		wantMsg: `"MAXCONCURRENT"`,
	},
	{
		name:    "invalid value under a key in the wrong case",
		input:   "{\n \"shells\": {\n  \"MaxConcurrent\": 0\n }\n}\n",
		pos:     pos{3, 3, 3},
		wantMsg: `unknown setting "MaxConcurrent"`,
	},
	{
		name:    "only a comment",
		input:   "// nothing yet\n",
		pos:     pos{2, 1, 1},
		wantMsg: "EOF",
	},
}

var posRE = regexp.MustCompile(`line (\d+), column (\d+)`)

func TestParse(t *testing.T) {
	const name = "/etc/cshell/config.json"
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			errorf, fatalf := t.Errorf, t.Fatalf
			c, err := Parse(name, []byte(tt.input))
			if tt.want != nil {
				if err != nil {
					fatalf("Parse: %v", err)
				}
				if !reflect.DeepEqual(c, tt.want) {
					fatalf("Parse =\n%s\nwant\n%s", dump(c), dump(tt.want))
				}
				return
			}
			if err == nil {
				fatalf("Parse succeeded with %s, want an error", dump(c))
				return
			}
			if c != nil {
				errorf("Parse returned config %s along with error", dump(c))
			}
			if !errors.Is(err, ErrConfig) {
				errorf("error %q does not wrap ErrConfig", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, name+": ") {
				errorf("error %q does not name the file %s", msg, name)
			}
			if !strings.Contains(msg, tt.wantMsg) {
				errorf("error %q does not contain %q", msg, tt.wantMsg)
			}
			m := posRE.FindStringSubmatch(msg)
			if tt.pos == (pos{}) {
				if m != nil {
					errorf("error %q has a position, want none", msg)
				}
				return
			}
			if m == nil {
				fatalf("error %q has no line and column", msg)
				return
			}
			line, _ := strconv.Atoi(m[1])
			col, _ := strconv.Atoi(m[2])
			if line != tt.pos.line || col < tt.pos.colLo || col > tt.pos.colHi {
				errorf("error %q: position line %d, column %d; want line %d, column %d-%d",
					msg, line, col, tt.pos.line, tt.pos.colLo, tt.pos.colHi)
			}
		})
	}
}

func dump(c *Config) string {
	b, err := json.Marshal(c)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name       string
		c          Config
		enabled    bool
		concurrent int
		notify     string
		logBytes   int64
	}{
		{"nothing set", Config{}, true, 4, "wake", 1 << 30},
		{
			"everything set",
			Config{Shells: ShellsConfig{Enabled: ptr(false), MaxConcurrent: ptr(7), Notify: "none", MaxLogBytes: ptr(int64(8192))}},
			false, 7, "none", 8192,
		},
		{"enabled explicitly true", Config{Shells: ShellsConfig{Enabled: ptr(true)}}, true, 4, "wake", 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.Enabled(); got != tt.enabled {
				t.Errorf("Enabled() = %v, want %v", got, tt.enabled)
			}
			if got := tt.c.MaxConcurrent(); got != tt.concurrent {
				t.Errorf("MaxConcurrent() = %d, want %d", got, tt.concurrent)
			}
			if got := tt.c.Notify(); got != tt.notify {
				t.Errorf("Notify() = %q, want %q", got, tt.notify)
			}
			if got := tt.c.MaxLogBytes(); got != tt.logBytes {
				t.Errorf("MaxLogBytes() = %d, want %d", got, tt.logBytes)
			}
		})
	}
}

// TestParseKeepsInput checks that Parse leaves the caller's bytes alone.
func TestParseKeepsInput(t *testing.T) {
	in := []byte("{\n // comment\n \"shells\": {\"enabled\": true,},\n}\n")
	orig := bytes.Clone(in)
	if _, err := Parse("f.json", in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, orig) {
		t.Errorf("Parse modified its input: %q became %q", orig, in)
	}
}

func TestDefaultGlobalPath(t *testing.T) {
	tests := []struct {
		name, xdg, home, want string
	}{
		{"XDG set", "/xdg", "/home/u", "/xdg/cshell/config.json"},
		{"XDG empty", "", "/home/u", "/home/u/.config/cshell/config.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			if got := DefaultGlobalPath(tt.home); got != tt.want {
				t.Errorf("DefaultGlobalPath(%q) = %q, want %q", tt.home, got, tt.want)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name      string
		global    string // "" means no file
		explicit  bool
		project   string // "" means no file
		noProject bool   // pass projectDir ""
		wantErr   string // the file the error names
		check     func(t *testing.T, c *Config, warnings []string)
	}{
		{
			name:     "no files, not explicit: defaults",
			explicit: false,
			check: func(t *testing.T, c *Config, w []string) {
				if c.Enabled() != true || c.MaxConcurrent() != DefaultMaxConcurrent || c.Notify() != DefaultNotify || c.MaxLogBytes() != DefaultMaxLogBytes {
					t.Errorf("got %s, want defaults", dump(c))
				}
				if len(c.Network.Allow) != 0 || len(c.Filesystem.AllowWrite) != 0 || len(c.Filesystem.DenyRead) != 0 {
					t.Errorf("got %s, want empty lists", dump(c))
				}
				if len(w) != 0 {
					t.Errorf("warnings %q", w)
				}
			},
		},
		{
			name:     "missing global, explicit: error",
			explicit: true,
			wantErr:  "global",
		},
		{
			name:     "global only",
			global:   `{"shells": {"maxConcurrent": 2}, "network": {"allow": ["*.example.com"]}}`,
			explicit: true,
			check: func(t *testing.T, c *Config, w []string) {
				if c.MaxConcurrent() != 2 || !reflect.DeepEqual(c.Network.Allow, []string{"*.example.com"}) {
					t.Errorf("got %s", dump(c))
				}
				if len(w) != 0 {
					t.Errorf("warnings %q", w)
				}
			},
		},
		{
			name:      "project dir not given: project file not read",
			global:    `{"shells": {"maxConcurrent": 2}}`,
			project:   `{"shells": {"maxConcurrent": 1}}`,
			noProject: true,
			check: func(t *testing.T, c *Config, w []string) {
				if c.MaxConcurrent() != 2 {
					t.Errorf("MaxConcurrent() = %d, want 2", c.MaxConcurrent())
				}
			},
		},
		{
			name:    "project only tightens",
			global:  `{"shells": {"maxConcurrent": 3, "notify": "note"}, "network": {"allow": ["*.example.com", "other.org"]}, "filesystem": {"denyRead": ["/g"]}}`,
			project: "// project\n{\n \"shells\": {\"maxConcurrent\": 8, \"notify\": \"none\",},\n \"network\": {\"allow\": [\"api.example.com\", \"evil.com\"]},\n \"filesystem\": {\"denyRead\": [\"/p\"]},\n}",
			check: func(t *testing.T, c *Config, w []string) {
				if c.MaxConcurrent() != 3 {
					t.Errorf("MaxConcurrent() = %d, want 3 (project 8 ignored)", c.MaxConcurrent())
				}
				if c.Notify() != "none" {
					t.Errorf("Notify() = %q, want none", c.Notify())
				}
				if !reflect.DeepEqual(c.Network.Allow, []string{"api.example.com"}) {
					t.Errorf("Allow = %q", c.Network.Allow)
				}
				if !reflect.DeepEqual(c.Filesystem.DenyRead, []string{"/g", "/p"}) {
					t.Errorf("DenyRead = %q", c.Filesystem.DenyRead)
				}
				if len(w) != 2 {
					t.Fatalf("warnings %q, want 2", w)
				}
				for _, s := range w {
					if !strings.Contains(s, ProjectFile) {
						t.Errorf("warning %q does not name %s", s, ProjectFile)
					}
				}
				if !strings.Contains(w[0], "maxConcurrent") || !strings.Contains(w[1], `"evil.com"`) {
					t.Errorf("warnings %q", w)
				}
			},
		},
		{
			name:    "project without global file",
			project: `{"shells": {"enabled": false, "maxConcurrent": 9}}`,
			check: func(t *testing.T, c *Config, w []string) {
				if c.Enabled() || c.MaxConcurrent() != DefaultMaxConcurrent {
					t.Errorf("got %s, want disabled with default maxConcurrent", dump(c))
				}
				if len(w) != 1 {
					t.Errorf("warnings %q, want 1", w)
				}
			},
		},
		{
			name:    "bad global file",
			global:  "{\n \"shells\": {\"notify\": \"loud\"}\n}",
			project: `{}`,
			wantErr: "global",
		},
		{
			name:    "bad project file",
			global:  `{}`,
			project: "{\n \"shells\": {\"maxConcurrent\": \"two\"}\n}",
			wantErr: "project",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			globalPath := filepath.Join(dir, "etc", "config.json")
			projectDir := filepath.Join(dir, "proj")
			if err := os.MkdirAll(projectDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.global != "" {
				writeFile(t, globalPath, tt.global)
			}
			if tt.project != "" {
				writeFile(t, filepath.Join(projectDir, ProjectFile), tt.project)
			}
			pd := projectDir
			if tt.noProject {
				pd = ""
			}
			c, w, err := Load(globalPath, tt.explicit, pd)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Load succeeded with %s, want an error", dump(c))
				}
				if !errors.Is(err, ErrConfig) {
					t.Errorf("error %q does not wrap ErrConfig", err)
				}
				file := globalPath
				if tt.wantErr == "project" {
					file = filepath.Join(projectDir, ProjectFile)
				}
				if !strings.Contains(err.Error(), file) {
					t.Errorf("error %q does not name %s", err, file)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c, w)
		})
	}
}

// TestLoadUnreadable checks that a path that cannot be read as a file is an
// error even when the global file is optional.
func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Load(dir, false, "") // a directory
	if err == nil || !errors.Is(err, ErrUnsafeFile) {
		t.Fatalf("Load(directory) = %v, want an ErrUnsafeFile error", err)
	}
	proj := t.TempDir()
	if err := os.Mkdir(filepath.Join(proj, ProjectFile), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = Load(filepath.Join(dir, "missing.json"), false, proj)
	if err == nil || !errors.Is(err, ErrUnsafeFile) {
		t.Fatalf("Load with a directory as project file = %v, want an ErrUnsafeFile error", err)
	}
}

// normalize makes empty lists nil, as they are after a JSON round trip
// (the fields are omitempty).
func normalize(c *Config) *Config {
	n := *c
	for _, l := range []*[]string{&n.Network.Allow, &n.Filesystem.AllowWrite, &n.Filesystem.DenyRead} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return &n
}

func validUTF8(c *Config) bool {
	for _, l := range [][]string{c.Network.Allow, c.Filesystem.AllowWrite, c.Filesystem.DenyRead, {c.Shells.Notify}} {
		for _, s := range l {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add([]byte(tt.input))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.json"
		in := bytes.Clone(data) // Parse writes to its input
		c, err := Parse(name, in)
		if err != nil {
			if c != nil {
				t.Fatalf("Parse returned both a config and %v", err)
			}
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %q does not wrap ErrConfig", err)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error %q does not name the file", err)
			}
			if m := posRE.FindStringSubmatch(err.Error()); m != nil {
				line, _ := strconv.Atoi(m[1])
				col, _ := strconv.Atoi(m[2])
				if line < 1 || line > bytes.Count(data, []byte("\n"))+1 || col < 1 || col > len(data)+1 {
					t.Fatalf("error %q: position outside the %d-byte input", err, len(data))
				}
			}
			return
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", c, err)
		}
		c2, err := Parse(name, bytes.Clone(out))
		if err != nil {
			t.Fatalf("re-parsing %s: %v", out, err)
		}
		out2, err := json.Marshal(c2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the config:\n%s\n%s", out, out2)
		}
		// Invalid UTF-8 becomes U+FFFD when marshalled, so only valid
		// strings can be compared as they are.
		if validUTF8(c) && !reflect.DeepEqual(normalize(c), normalize(c2)) {
			t.Fatalf("round trip changed the config:\n%+v\n%+v", c, c2)
		}
	})
}

func TestEnvPassLayering(t *testing.T) {
	global := &Config{Env: EnvConfig{Pass: []string{"FOO", "BAR_*"}}}
	c, warn := Layer(global, &Config{Env: EnvConfig{Pass: []string{"FOO", "GITHUB_TOKEN"}}}, ProjectFile)
	if !slices.Equal(c.Env.Pass, []string{"FOO"}) || len(warn) != 1 || !strings.Contains(warn[0], `env.pass entry "GITHUB_TOKEN"`) {
		t.Errorf("pass %v warnings %q", c.Env.Pass, warn)
	}
	if _, err := Parse("c.json", []byte(`{"env": {"pass": ["A*B"]}}`)); !errors.Is(err, ErrConfig) {
		t.Errorf("a * inside a pattern: %v", err)
	}
	for _, k := range []string{"BAR_X", "PATH", "LC_ALL", "FOO"} {
		if !EnvAllowed(k, global.Env.Pass) {
			t.Errorf("%s not passed", k)
		}
	}
	for _, k := range []string{"GITHUB_TOKEN", "SSH_AUTH_SOCK", "BAR", "LC"} {
		if EnvAllowed(k, global.Env.Pass) {
			t.Errorf("%s passed", k)
		}
	}
	for _, k := range []string{"", "A=B", "A\nB", "A B", "A\x01"} {
		if CheckEnvKey(k) == nil {
			t.Errorf("key %q accepted", k)
		}
	}
}

// Without a home (unset, or /: an arbitrary uid in a container) there is
// no global file, and nothing is read or made for one.
func TestNoGlobalFileWithoutAHome(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, home := range []string{"", "/", "//"} {
		if got := DefaultGlobalPath(home); got != "" {
			t.Errorf("home %q: %q, want none", home, got)
		}
	}
	if got := DefaultGlobalPath("/home/u"); got != filepath.Join("/home/u", ".config", "cshell", "config.json") {
		t.Errorf("home /home/u: %q", got)
	}
	c, warnings, err := Load("", false, "")
	if err != nil || c == nil || len(warnings) != 0 {
		t.Errorf("Load without a global file: %v %v %v", c, warnings, err)
	}
}
