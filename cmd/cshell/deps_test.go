//go:build !e2e

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsPointOneWay holds the layering of ARCHITECTURE.md (a unit test:
// it needs the Go tool and the source, which e2e runs do not have):
// cmd -> shells -> container, netrelay, policy; container may use policy;
// netrelay and policy use no cshell package.
func TestImportsPointOneWay(t *testing.T) {
	const mod = "github.com/cshell/cshell/"
	allowed := map[string][]string{
		"shells":          {"sandbox", "container", "netrelay", "policy", "internal/safefs"},
		"sandbox":         {"container", "netrelay", "policy", "internal/safefs"},
		"container":       {"policy", "internal/safefs"},
		"netrelay":        {},
		"policy":          {"internal/safefs"},
		"internal/safefs": {},
	}
	for pkg, may := range allowed {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../../"+pkg)
			cmd.Env = append(cmd.Environ(), "GOOS="+goos, "CGO_ENABLED=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list %s (%s): %v", pkg, goos, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				name, ok := strings.CutPrefix(dep, mod)
				if !ok || name == pkg {
					continue
				}
				if !contains(may, name) {
					t.Errorf("%s imports %s on %s; allowed: %v", pkg, name, goos, may)
				}
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
