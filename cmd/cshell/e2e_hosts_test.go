//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorNamesSwitchedOffUserNamespaces runs cshell in a user namespace
// whose user.max_user_namespaces is 0 (the limit is the namespace's own,
// so the host's stays as it is): doctor names the sysctl and the fix, and
// a run fails with the same sentence (exit 125) instead of libcontainer's.
func TestDoctorNamesSwitchedOffUserNamespaces(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	wd := t.TempDir()
	inside := func(args ...string) (string, string, int) {
		t.Helper()
		script := `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`
		cmd := exec.Command("unshare", append([]string{"--user", "--map-root-user", "sh", "-c", script, "sh", cshellBin}, args...)...)
		cmd.Dir = wd
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, errs, code := inside("--json", "doctor")
	var r struct {
		Restrictions []struct{ ID, Cause, Fix string }
		Reason       string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 {
		t.Fatalf("doctor --json: code %d, %v: %q %q", code, err, out, errs)
	}
	if len(r.Restrictions) == 0 || r.Restrictions[0].ID != "max-user-namespaces" ||
		!strings.Contains(r.Restrictions[0].Cause, "user.max_user_namespaces=0") || !strings.Contains(r.Restrictions[0].Fix, "sysctl -w user.max_user_namespaces=") {
		t.Errorf("doctor names %+v, want max-user-namespaces with its sysctl and fix", r.Restrictions)
	}
	if !strings.Contains(r.Reason, "user.max_user_namespaces=0") {
		t.Errorf("isolation reason %q does not say why", r.Reason)
	}
	out, _, _ = inside("doctor")
	if !strings.Contains(out, "FAIL user namespaces are switched off (sysctl user.max_user_namespaces=0)") || !strings.Contains(out, "fix: set it as root") {
		t.Errorf("doctor: %q", out)
	}
	if os.Geteuid() != 0 {
		// Root of that namespace is not root of the host: /run/cshell is
		// not its own, so a run stops before the container, for that.
		t.Log("the run part needs real root (a user namespace's root cannot use /run/cshell)")
		return
	}
	_, errs, code = inside("run", "--", "true")
	if code != 125 || !strings.Contains(errs, "user namespaces are switched off (sysctl user.max_user_namespaces=0); set it as root") ||
		strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("run: code %d, stderr %q; want 125 and doctor's sentence on one line", code, errs)
	}
}

// TestDoctorAppArmorProfile prints a profile for the binary's real path.
func TestDoctorAppArmorProfile(t *testing.T) {
	r := run(t, call{args: []string{"doctor", "--apparmor-profile"}})
	real, _ := filepath.EvalSymlinks(cshellBin)
	for _, w := range []string{"profile cshell " + real + " flags=(unconfined) {", "  userns,", "abi <abi/4.0>,", "apparmor_parser -r /etc/apparmor.d/cshell"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("profile lacks %q: %q", w, r.stdout)
		}
	}
	if r.code != 0 {
		t.Errorf("code %d: %q", r.code, r.stderr)
	}
}
