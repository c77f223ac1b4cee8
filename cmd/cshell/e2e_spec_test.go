//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// specProbe runs inside a bundle's container: what the policy must hold,
// each call made directly (ctypes), as an exploit would.
const specProbe = `import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def call(f, *a):
    r = f(*a)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
print("hostname", socket.gethostname())
print("links", sorted(os.listdir("/sys/class/net")))
print("unshare-user", call(libc.unshare, 0x10000000))
print("keyctl", call(libc.syscall, 250, 0, 0, 0, 0, 0))  # x86_64's keyctl
print("mount", call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None))
for p in ["/usr/cshell-spec-probe", "written"]:
    try:
        open(p, "w").close(); print("write", p, "ok")
    except OSError as e:
        print("write", p, errno.errorcode[e.errno])
try:
    open("secret").read(); print("secret read")
except OSError as e:
    print("secret", errno.errorcode[e.errno])
print("seccomp", [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0])
print("vsock", call(libc.socket, 40, 1, 0))
open("plant", "w").close()
print("chmod-setuid", call(libc.chmod, b"plant", 0o4755))
print("personality", call(libc.personality, 0x400000))
`

// TestSpecBundles writes a bundle with cshell spec and runs it with
// Debian's runc and crun, unchanged, as this user (root or not).
func TestSpecBundles(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe calls keyctl by its x86_64 number")
	}
	for _, rt := range []string{"runc", "crun"} {
		t.Run(rt, func(t *testing.T) {
			bin, err := exec.LookPath(rt)
			if err != nil {
				t.Fatalf("%s is needed (hack/test.sh installs it): %v", rt, err)
			}
			wd := t.TempDir()
			writeFile(t, filepath.Join(wd, "probe.py"), specProbe)
			writeFile(t, filepath.Join(wd, "secret"), "the secret")
			bundle := filepath.Join(t.TempDir(), "bundle")
			r := run(t, call{args: []string{"--json", "spec", "--bundle", bundle, "-w", wd, "--hide", filepath.Join(wd, "secret"), "--", "python3 probe.py"}, dir: wd})
			var ans struct{ Bundle, Config string }
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.Config != filepath.Join(bundle, "config.json") {
				t.Fatalf("spec: code %d out %q err %q", r.code, r.stdout, r.stderr)
			}
			state := t.TempDir()
			args := []string{bin, "--root", state, "run", "--bundle", bundle, "cshell-spec-" + rt}
			if rt == "crun" && hybridCgroups() {
				// crun 1.8 refuses a host with cgroup v1 and controllers on
				// the cgroup2 mount (hybrid, as here): it runs where that
				// mount is gone, in a mount namespace of its own (rootless:
				// with the capabilities of that namespace dropped again).
				t.Log("crun runs with /sys/fs/cgroup/unified out of its sight: crun 1.8.1 refuses this hybrid cgroup host")
				if os.Geteuid() == 0 {
					args = append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `umount /sys/fs/cgroup/unified && exec "$@"`, "sh"}, args...)
				} else {
					args = append([]string{"unshare", "--user", "--mount", "--map-current-user", "--keep-caps", "--propagation", "private", "sh", "-c",
						`mount -t tmpfs -o ro,size=4k none /sys/fs/cgroup/unified && exec setpriv --inh-caps=-all --ambient-caps=-all "$@"`, "sh"}, args...)
				}
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = wd
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s run: %v\n%s", rt, err, out)
			}
			got := string(out)
			for _, want := range []string{
				"hostname cshell", "links ['lo']", "unshare-user EPERM", "keyctl EPERM", "mount EPERM",
				"write /usr/cshell-spec-probe EROFS", "write written ok", "secret EACCES", "seccomp 2",
				"vsock EPERM", "chmod-setuid EPERM", "personality EPERM",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("%s: the bundle's shell lacks %q:\n%s", rt, want, got)
				}
			}
			if _, err := os.Stat(filepath.Join(wd, "written")); err != nil {
				t.Errorf("the working directory was not written: %v", err)
			}
		})
	}
}

func hybridCgroups() bool {
	b, err := os.ReadFile("/sys/fs/cgroup/unified/cgroup.controllers")
	return err == nil && strings.TrimSpace(string(b)) != ""
}

// TestSpecRefuses: what a bundle cannot hold is refused, not dropped.
func TestSpecRefuses(t *testing.T) {
	wd := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expose", "5173"}, "unknown flag: --expose"},
		{[]string{"--allow-host", "example.com"}, "need cshell's supervisor"},
		{[]string{"--isolation", "process"}, "no container to describe"},
	} {
		r := run(t, call{args: append(append([]string{"spec", "--bundle", filepath.Join(t.TempDir(), "b")}, c.args...), "--", "true"), dir: wd})
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("spec %v: code %d err %q, want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := run(t, call{args: []string{"spec", "--bundle", filepath.Join(wd, "b"), "--", "true"}, dir: wd})
	if r.code != 2 || !strings.Contains(r.stderr, "which the shell may write") {
		t.Errorf("a bundle in the working directory: code %d err %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "b")); err == nil {
		t.Error("the refused bundle was written")
	}
	full := t.TempDir()
	writeFile(t, filepath.Join(full, "x"), "")
	if r := run(t, call{args: []string{"spec", "--bundle", full, "--", "true"}, dir: wd}); r.code != 1 || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("a bundle into a full directory: code %d err %q", r.code, r.stderr)
	}
	if r := run(t, call{args: []string{"spec", "--", "true"}, dir: wd}); r.code != 2 || !strings.Contains(r.stderr, "needs --bundle") {
		t.Errorf("no --bundle: code %d err %q", r.code, r.stderr)
	}
}
