//go:build e2e

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppArmorProfileParses compiles the profile doctor --apparmor-profile
// prints with Debian 13's apparmor_parser (4.1), in a debootstrap root
// that hack/test.sh keeps in /var/tmp and names in CSHELL_APPARMOR_ROOT:
// the profile is for AppArmor 4's userns rule, which this machine's
// kernel does not have, so it is compiled (-Q: not loaded). A profile cut
// short must fail there, or the parse proves nothing.
func TestAppArmorProfileParses(t *testing.T) {
	root := os.Getenv("CSHELL_APPARMOR_ROOT")
	if root == "" {
		t.Skip("CSHELL_APPARMOR_ROOT is not set: hack/test.sh makes a Debian 13 root with apparmor_parser and sets it")
	}
	if os.Geteuid() != 0 {
		t.Skip("the parser runs in a chroot, which needs root: the root run of the e2e tests parses the profile")
	}
	r := run(t, call{args: []string{"doctor", "--apparmor-profile"}})
	if r.code != 0 || !strings.Contains(r.stdout, "profile cshell "+cshellBin+" ") || !strings.Contains(r.stdout, "userns,") {
		t.Fatalf("doctor --apparmor-profile: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	parse := func(name, profile string) (string, error) {
		f := filepath.Join(root, "tmp", fmt.Sprintf("cshell-e2e-%d-%s", os.Getpid(), name))
		if err := os.WriteFile(f, []byte(profile), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f)
		out, err := exec.Command("chroot", root, "apparmor_parser", "-Q", "-K", "/tmp/"+filepath.Base(f)).CombinedOutput()
		return string(out), err
	}
	if out, err := parse("profile", r.stdout); err != nil {
		t.Errorf("apparmor_parser refused the profile: %v\n%s\n%s", err, out, r.stdout)
	}
	if _, err := parse("cut", strings.TrimSuffix(strings.TrimSpace(r.stdout), "}")); err == nil {
		t.Errorf("apparmor_parser took a profile cut short: the parse proves nothing")
	}
}
