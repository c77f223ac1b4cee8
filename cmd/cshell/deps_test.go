//go:build !e2e

package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layers is the import rule of docs/architecture.md, for every package
// of the module: what each may import of cshell's own packages, directly
// or not. Imports point one way, from the command line down to the
// leaves; a package missing here fails the test, so a new one must say
// where it stands.
var layers = map[string][]string{
	"cmd/cshell":           {"mcpserver", "mcptasks", "shells", "plan", "control", "cache", "sandbox", "broker", "container", "netrelay", "policy", "internal/safefs", "internal/procstat", "internal/escape", "internal/kind"},
	"mcpserver":            {"mcptasks", "shells", "plan", "control", "cache", "sandbox", "broker", "container", "netrelay", "policy", "internal/safefs", "internal/procstat", "internal/escape", "internal/kind"},
	"shells":               {"plan", "control", "cache", "sandbox", "broker", "container", "netrelay", "policy", "internal/safefs", "internal/procstat", "internal/escape", "internal/kind"},
	"plan":                 {"cache", "sandbox", "broker", "container", "netrelay", "policy", "internal/safefs", "internal/procstat", "internal/escape", "internal/kind"},
	"control":              {"internal/safefs"},
	"sandbox":              {"broker", "container", "netrelay", "policy", "internal/safefs", "internal/procstat", "internal/kind"},
	"container":            {"policy", "internal/safefs", "internal/procstat", "internal/kind"},
	"cache":                {"policy", "internal/safefs", "internal/kind"},
	"mcptasks":             {},
	"netrelay":             {},
	"broker":               {},
	"policy":               {"internal/safefs", "internal/kind"},
	"internal/safefs":      {},
	"internal/procstat":    {},
	"internal/escape":      {},
	"internal/kind":        {},
	"hack/bench/cmd/blob":  {},
	"hack/bench/cmd/httpd": {},
	"hack/wine":            {}, // Windows end-to-end tests: they run cshell.exe, import no cshell package
}

// TestImportsPointOneWay holds the layering (a unit test: it needs the Go
// tool and the source, which e2e runs do not have), on every platform
// cshell builds for. Only cmd/cshell may import cobra.
func TestImportsPointOneWay(t *testing.T) {
	checkLayers(t, layers)
}

func checkLayers(t testing.TB, layers map[string][]string) {
	const mod = "github.com/cshell/cshell/"
	for _, goos := range []string{"linux", "darwin", "windows"} {
		list := exec.Command("go", "list", "-f", "{{.ImportPath}}", "../../...")
		list.Env = append(list.Environ(), "GOOS="+goos, "CGO_ENABLED=1")
		out, err := list.Output()
		if err != nil {
			t.Fatalf("go list (%s): %v", goos, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			name := strings.TrimPrefix(pkg, mod)
			may, known := layers[name]
			if !known {
				t.Errorf("package %s is not in the import rule (cmd/cshell/deps_test.go, docs/architecture.md)", name)
				continue
			}
			deps := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg)
			deps.Env = list.Env
			out, err := deps.Output()
			if err != nil {
				t.Fatalf("go list -deps %s (%s): %v", name, goos, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep == "github.com/spf13/cobra" && name != "cmd/cshell" {
					t.Errorf("%s imports cobra on %s; only cmd/cshell may", name, goos)
				}
				d, ok := strings.CutPrefix(dep, mod)
				if !ok || d == name {
					continue
				}
				if !slices.Contains(may, d) {
					t.Errorf("%s imports %s on %s; allowed: %v", name, d, goos, may)
				}
			}
		}
	}
}

// TestLayersCatchAViolation checks that the rule can fail: with policy
// allowed nothing, its import of internal/safefs is a violation.
func TestLayersCatchAViolation(t *testing.T) {
	strict := map[string][]string{}
	for k, v := range layers {
		strict[k] = v
	}
	strict["policy"] = nil
	rec := &recorder{TB: t}
	checkLayers(rec, strict)
	if !slices.ContainsFunc(rec.errors, func(e string) bool { return strings.Contains(e, "policy imports internal/safefs") }) {
		t.Errorf("a violation went unnoticed: %q", rec.errors)
	}
}

// recorder collects errors instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestPackagesSayWhatTheyAre: every package has a doc comment that starts
// with its name ("Package x …", or "Command x …" for a main).
func TestPackagesSayWhatTheyAre(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{.Doc}}", "../../...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("go list: %q", line)
		}
		name, path, doc := f[0], f[1], f[2]
		want := "Package " + name + " "
		if name == "main" {
			want = "Command " + path[strings.LastIndexByte(path, '/')+1:] + " "
		}
		if !strings.HasPrefix(doc, want) {
			t.Errorf("%s: its doc comment should start %q, not %q", path, want, doc)
		}
	}
}
