//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleasePackage installs the release's Debian package (hack/test.sh
// builds it with hack/release.sh and names it in CSHELL_DEB) and runs
// cshell from where it installed: as root with apt-get install, and then
// as the unprivileged test user; in the unprivileged run, which may not
// install, from the package's contents unpacked with dpkg-deb.
func TestReleasePackage(t *testing.T) {
	deb := os.Getenv("CSHELL_DEB")
	if deb == "" {
		t.Skip("CSHELL_DEB is not set: hack/test.sh builds the package with hack/release.sh")
	}
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	contents := sh("dpkg-deb", "--contents", deb)
	for _, f := range []string{"./usr/bin/cshell", "./usr/share/man/man1/cshell.1.gz", "./usr/share/man/man1/cshell-run.1.gz",
		"./usr/share/bash-completion/completions/cshell", "./usr/share/zsh/vendor-completions/_cshell",
		"./usr/share/fish/vendor_completions.d/cshell.fish", "./usr/share/doc/cshell/cli.md"} {
		if !strings.Contains(contents, f) {
			t.Errorf("the package lacks %s:\n%s", f, contents)
		}
	}
	bin := "/usr/bin/cshell"
	if os.Geteuid() == 0 {
		if exec.Command("dpkg", "-s", "cshell").Run() == nil {
			t.Fatal("a cshell package is installed on this machine already; remove it (apt-get remove cshell) for the test to install its own")
		}
		sh("apt-get", "install", "-y", "-qq", deb)
		t.Cleanup(func() { sh("apt-get", "remove", "-y", "-qq", "cshell") })
	} else {
		root := t.TempDir()
		sh("dpkg-deb", "-x", deb, root)
		bin = filepath.Join(root, "usr", "bin", "cshell")
	}
	if v := sh(bin, "--version"); !strings.HasPrefix(v, "cshell version ") || strings.Contains(v, "version dev ") {
		t.Errorf("--version of the package's binary: %q, want the release version", v)
	}
	if os.Geteuid() == 0 && os.Getenv("CSHELL_TEST_USER") == "" {
		t.Log("CSHELL_TEST_USER is not set: the installed binary runs as root only")
	}
	if out := sh(bin, "run", "--", "echo from-the-package; touch /usr/x 2>/dev/null || echo read-only"); !strings.Contains(out, "from-the-package\n") || !strings.HasSuffix(out, "read-only\n") {
		t.Errorf("run from %s: %q", bin, out)
	}
	if user := os.Getenv("CSHELL_TEST_USER"); os.Geteuid() == 0 && user != "" {
		if out := sh("su", user, "-s", "/bin/sh", "-c", "cd ~ && "+bin+" run -- 'echo rootless-from-the-package'"); !strings.Contains(out, "rootless-from-the-package") {
			t.Errorf("run as cshelltest from %s: %q", bin, out)
		}
	}
}
